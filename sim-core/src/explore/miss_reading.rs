//! Why a missed target misses, read from the points it judges: which way the predictions lean, and what the
//! model's own step says bounds the points it misses most (requests queueing past the KV pool, the weight
//! reads, compute, the link, the engine's overhead). A reading, not a fit: it names where to look.

use crate::dataset::schema::{Metric, PointSet};
use crate::report::ReportRow;
use serde::{Deserialize, Serialize};

/// The quantity a target judges: a metric over the judged points, or over the open-loop runs kept up with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetQuantity {
    Throughput,
    Ttft,
    Tpot,
    OpenLoopThroughput,
    OpenLoopTtft,
}

impl TargetQuantity {
    /// The quantity a protocol target reads (`None` for the modes' order and ratios, which carry their own notes).
    pub fn of_target(metric: Metric, points: Option<PointSet>) -> Option<TargetQuantity> {
        match (metric, points) {
            (Metric::Throughput, None) => Some(TargetQuantity::Throughput),
            (Metric::Ttft, None) => Some(TargetQuantity::Ttft),
            (Metric::Tpot, None) => Some(TargetQuantity::Tpot),
            (Metric::Throughput, Some(PointSet::OpenLoopKeptUp)) => Some(TargetQuantity::OpenLoopThroughput),
            (Metric::Ttft, Some(PointSet::OpenLoopKeptUp)) => Some(TargetQuantity::OpenLoopTtft),
            _ => None,
        }
    }

    fn word(self) -> &'static str {
        match self {
            TargetQuantity::Throughput | TargetQuantity::OpenLoopThroughput => "throughput",
            TargetQuantity::Ttft => "TTFT",
            TargetQuantity::OpenLoopTtft => "median TTFT",
            TargetQuantity::Tpot => "TPOT",
        }
    }

    /// (predicted, measured) at a row, where the row states this quantity.
    fn pair(self, r: &ReportRow) -> Option<(f64, f64)> {
        let pair = match self {
            TargetQuantity::Throughput | TargetQuantity::OpenLoopThroughput => {
                Some((r.predicted_tok_s, r.measured_tok_s))
            }
            TargetQuantity::Ttft => r.measured_ttft_s.map(|m| (r.predicted_ttft_s, m)),
            TargetQuantity::Tpot => r.measured_tpot_s.map(|m| (r.predicted_tpot_s, m)),
            TargetQuantity::OpenLoopTtft => r.predicted_median_ttft_s.zip(r.measured_median_ttft_s),
        };
        pair.filter(|(p, m)| p.is_finite() && m.is_finite() && *m > 0.0)
    }
}

/// Which way one quantity's predictions lean over the points a target judges, and what bounds the worse half.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissReading {
    pub quantity: TargetQuantity,
    pub points: usize,
    /// Points predicted below the measured value (the rest are above or equal).
    pub predicted_below: usize,
    /// The bottleneck the model names at each of the worse half of the points (largest errors first), counted.
    pub worst_bound_by: Vec<(String, usize)>,
}

impl MissReading {
    /// The reading of `quantity` over `rows` (`None` where no row states it).
    pub fn of<'r>(rows: impl Iterator<Item = &'r ReportRow>, quantity: TargetQuantity) -> Option<MissReading> {
        let mut judged: Vec<(f64, bool, &str)> = rows
            .filter_map(|r| {
                let (p, m) = quantity.pair(r)?;
                Some(((p - m).abs() / m, p < m, r.bottleneck.as_str()))
            })
            .collect();
        if judged.is_empty() {
            return None;
        }
        let predicted_below = judged.iter().filter(|j| j.1).count();
        judged.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut worst_bound_by: Vec<(String, usize)> = Vec::new();
        for (_, _, bound) in judged.iter().take(judged.len().div_ceil(2)) {
            match worst_bound_by.iter_mut().find(|(b, _)| b == bound) {
                Some((_, n)) => *n += 1,
                None => worst_bound_by.push((bound.to_string(), 1)),
            }
        }
        worst_bound_by.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Some(MissReading { quantity, points: judged.len(), predicted_below, worst_bound_by })
    }

    /// The reading in words: "predicted below the measured TTFT at 6 of 8 points; the 4 it misses most are bound
    /// by the KV pool (requests queue) at 3, compute at 1" (a single bound is named without its count).
    pub fn sentence(&self) -> String {
        let worst: usize = self.worst_bound_by.iter().map(|(_, n)| n).sum();
        let bounds: Vec<String> =
            self.worst_bound_by.iter().map(|(b, n)| format!("{} at {n}", bound_words(b))).collect();
        let lean = if self.predicted_below * 2 >= self.points {
            format!(
                "predicted below the measured {} at {} of {} points",
                self.quantity.word(),
                self.predicted_below,
                self.points
            )
        } else {
            format!(
                "predicted above the measured {} at {} of {} points",
                self.quantity.word(),
                self.points - self.predicted_below,
                self.points
            )
        };
        let bounds = match self.worst_bound_by.as_slice() {
            [(only, _)] if worst == 1 => format!("the point it misses most is bound by {}", bound_words(only)),
            [(only, _)] => format!("the {worst} it misses most are all bound by {}", bound_words(only)),
            _ => format!("the {worst} it misses most are bound by {}", bounds.join(", ")),
        };
        format!("{lean}; {bounds}")
    }
}

/// Which way each quantity's predictions lean over the judged rows (throughput and the stated latencies) and over
/// the open-loop runs kept up with: what a missed target's note says. Only the report prints them: a build that
/// only predicts (the page, `prechecked`) leaves them out.
#[cfg(not(feature = "prechecked"))]
pub fn readings(judged: &[ReportRow], kept_up: &[ReportRow]) -> Vec<MissReading> {
    [TargetQuantity::Throughput, TargetQuantity::Ttft, TargetQuantity::Tpot]
        .into_iter()
        .filter_map(|q| MissReading::of(judged.iter(), q))
        .chain(
            [TargetQuantity::OpenLoopThroughput, TargetQuantity::OpenLoopTtft]
                .into_iter()
                .filter_map(|q| MissReading::of(kept_up.iter(), q)),
        )
        .collect()
}

#[cfg(feature = "prechecked")]
pub fn readings(_: &[ReportRow], _: &[ReportRow]) -> Vec<MissReading> {
    Vec::new()
}

/// A bottleneck's name (`model::Bottleneck`, as report rows carry it) as a reader says it.
fn bound_words(b: &str) -> &str {
    match b {
        "kv_capacity" => "the KV pool (requests queue)",
        "hbm_bandwidth" => "memory reads",
        "slow_path_bandwidth" => "the CPU-memory path",
        "compute" => "compute",
        "link" => "the link",
        "engine_overhead" | "overhead" => "engine overhead",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(predicted_ttft: f64, measured_ttft: f64, bottleneck: &str) -> ReportRow {
        ReportRow {
            dataset: "d".into(),
            scenario: "s".into(),
            model: "m".into(),
            mode: crate::dataset::schema::Mode::Single,
            isl: 1024,
            osl: 128,
            concurrency: 8,
            measured_tok_s: 100.0,
            predicted_tok_s: 100.0,
            ape: 0.0,
            predicted_ttft_s: predicted_ttft,
            predicted_tpot_s: 0.02,
            predicted_preemptions_per_request: 0.0,
            measured_ttft_s: Some(measured_ttft),
            measured_tpot_s: None,
            open_loop_kept_up: None,
            measured_median_ttft_s: None,
            predicted_median_ttft_s: None,
            role: crate::report::PointRole::Predicted,
            flags: Vec::new(),
            bottleneck: bottleneck.into(),
            source: String::new(),
            quote: String::new(),
        }
    }

    /// Three of four TTFTs predicted low, the two largest misses where the KV pool is full: the reading says so.
    #[test]
    fn a_reading_names_the_lean_and_the_bound_of_the_worst_half() {
        let rows = [
            row(1.0, 4.0, "kv_capacity"),
            row(2.0, 6.0, "kv_capacity"),
            row(0.9, 1.0, "compute"),
            row(1.2, 1.0, "compute"),
        ];
        let r = MissReading::of(rows.iter(), TargetQuantity::Ttft).expect("stated");
        assert_eq!((r.points, r.predicted_below), (4, 3));
        assert_eq!(r.worst_bound_by, vec![("kv_capacity".to_string(), 2)]);
        assert_eq!(
            r.sentence(),
            "predicted below the measured TTFT at 3 of 4 points; the 2 it misses most are all bound by the KV pool \
             (requests queue)"
        );
        assert!(MissReading::of(rows.iter(), TargetQuantity::Tpot).is_none(), "no row states a TPOT");
    }
}

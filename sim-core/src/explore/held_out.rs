//! Held-out evidence and the intervals it gives: every point the accuracy protocol predicted without fitting on
//! it, as the ratio of the measured value to the predicted one, with what makes it close to a question (machine,
//! engine profile, model class, mode, metric); the interval of a stated coverage that the closest of those points
//! give; and how many held-out points fell inside the interval that would have been printed for them.
//!
//! ```text
//! held-out ratios r = measured / predicted of the closest pool, sorted r(1) <= ... <= r(n)
//! coverage c:  k = floor((n + 1)(1 - c) / 2)      interval = [r(k), r(n + 1 - k)]   (none while k = 0)
//! a number x predicted  ─►  the measured one lies in [x r(k), x r(n + 1 - k)]; a cost (1 / throughput) in
//!                           [cost / r(n + 1 - k), cost / r(k)]
//! ```
//! The interval is split conformal: for a new point exchangeable with the pool it holds with probability
//! (n + 1 - 2k) / (n + 1) >= c, so an 80% interval needs at least 9 points. It is signed (asymmetric where the
//! errors are), and a fitted point never enters it: the fitted question's errors are in-sample.
//!
//! Pools, closest first; each admits only points of the band's mode and metric (and latency statistic), and the
//! first with enough points gives the band:
//! ```text
//! pair from one on the dataset the profile was fitted on (a pair mode on that machine)
//! leave one out:  machine + engine + model class  ─►  machine + engine  ─►  machine  ─►  model class  ─►  any
//! ```
//! The protocol has no question that leaves one model or workload out of a dataset, so on the machine a
//! profile was fitted on a one-machine number takes the leave-one-dataset-out errors of that machine.

use super::protocol::Question;
use super::target::LatencyStatistic;
use crate::Mode;
use serde::{Deserialize, Serialize};

/// What a band is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BandMetric {
    /// Output tokens per second.
    Throughput,
    Ttft,
    Tpot,
}

impl BandMetric {
    pub const ALL: [BandMetric; 3] = [BandMetric::Throughput, BandMetric::Ttft, BandMetric::Tpot];

    pub fn name(self) -> &'static str {
        match self {
            BandMetric::Throughput => "tok/s",
            BandMetric::Ttft => "TTFT",
            BandMetric::Tpot => "TPOT",
        }
    }
}

/// The statistic of the requests' latencies a source states: the mean (closed-loop sweeps) or the median
/// (`vllm bench serve`'s open loop). Throughput is a mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stated {
    Mean,
    Median,
}

impl Stated {
    /// The stated statistic a target's statistic reads; `None` for a tail percentile no source states.
    pub fn of(s: LatencyStatistic) -> Option<Stated> {
        match s {
            LatencyStatistic::Mean => Some(Stated::Mean),
            LatencyStatistic::P50 => Some(Stated::Median),
            LatencyStatistic::P90 | LatencyStatistic::P99 => None,
        }
    }
}

/// Whether a model routes its tokens to experts (as `ep2` reads it): the model class bands are matched on.
pub fn is_moe(m: &crate::spec::ModelSpec) -> bool {
    m.routed_experts >= 2.0 && m.routed_expert_bytes > 0.0
}

/// One held-out point of one metric: a prediction the fit behind it never saw. The page bakes every one of them
/// with its fits, so it carries only what a band is chosen and built by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldOutPoint {
    /// `PairFromOne` or `LeaveOneOut`.
    pub question: Question,
    pub dataset: String,
    pub hardware: String,
    /// The engine profile the scenario names.
    pub engine: String,
    /// Whether the model routes its tokens to experts (the model class).
    pub moe: bool,
    pub mode: Mode,
    pub metric: BandMetric,
    pub stated: Stated,
    pub measured: f64,
    pub predicted: f64,
}

impl HeldOutPoint {
    /// measured / predicted: the factor the prediction was off by.
    pub fn ratio(&self) -> f64 {
        self.measured / self.predicted
    }

    /// Whether the point can enter an interval: a positive measured value and a prediction that is a number
    /// (a prediction of nothing is off by an infinite factor, and counts as such).
    pub fn usable(&self) -> bool {
        self.measured.is_finite() && self.measured > 0.0 && self.predicted.is_finite() && self.predicted >= 0.0
    }
}

/// What a band is asked for: the scenario's machine, engine profile and model class, the dataset its profile
/// was fitted on when that dataset measured this machine, and the mode, metric and statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct BandCase {
    pub same_machine_dataset: Option<String>,
    pub hardware: String,
    pub engine: String,
    pub moe: bool,
    pub mode: Mode,
    pub metric: BandMetric,
    /// `None`: a tail percentile, which no source states.
    pub stated: Option<Stated>,
}

/// A relative band on one predicted number: the interval of measured / predicted that held-out points give,
/// at a stated coverage, and its evidence; or no interval, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// (low, high) of measured / predicted (`(0.88, 1.20)`: the measured value 12% under to 20% over the
    /// prediction); `None`: no measured evidence.
    pub interval: Option<(f64, f64)>,
    /// The share of held-out points the interval is built to hold (0.8).
    pub coverage: f64,
    /// Where the interval comes from (`leave one out on dgx-spark, vllm-generic, MoE: 24 held-out tp2 points`),
    /// or `no measured evidence: ...` and why.
    pub evidence: String,
}

impl Band {
    /// `-12/+20%` (`±15%` when symmetric), or `no evidence`.
    pub fn short(&self) -> String {
        match self.interval {
            Some((lo, hi)) => {
                let (down, up) = (format!("{:.0}", (1.0 - lo) * 100.0), format!("{:.0}", (hi - 1.0) * 100.0));
                // A symmetric interval reads as one number.
                if down == up {
                    format!("±{up}%")
                } else {
                    format!("{:+.0}/{:+.0}%", (lo - 1.0) * 100.0, (hi - 1.0) * 100.0)
                }
            }
            None => "no evidence".to_string(),
        }
    }

    /// The band in a sentence: `-12/+20% at 80% coverage, from <evidence>`, or `no measured evidence: why`.
    pub fn describe(&self) -> String {
        match self.interval {
            Some(_) => format!("{} at {:.0}% coverage, from {}", self.short(), self.coverage * 100.0, self.evidence),
            None => self.evidence.clone(),
        }
    }

    /// The interval of a value `x` predicted: where the measured one lies; `(x, x)` without evidence.
    pub fn around(&self, x: f64) -> (f64, f64) {
        self.interval.map_or((x, x), |(lo, hi)| (x * lo, x * hi))
    }

    /// The interval of a value that goes as 1 / the banded one (a cost per token against tok/s): the band
    /// inverted, so -36% tok/s is +56% cost.
    pub fn inverted(&self, cost: f64) -> Option<(f64, f64)> {
        self.interval.map(|(lo, hi)| (cost / hi, cost / lo))
    }

    /// Whether `a` and `b` (each with its band) could be the same number: their intervals overlap. A value
    /// without evidence is its prediction alone, so two of them overlap only where they are equal.
    pub fn overlap(a: f64, band_a: &Band, b: f64, band_b: &Band) -> bool {
        let ((lo_a, hi_a), (lo_b, hi_b)) = (band_a.around(a), band_b.around(b));
        lo_a <= hi_b && lo_b <= hi_a
    }
}

/// The fewest points an interval of coverage `c` can be built from: k >= 1.
pub fn points_needed(c: f64) -> usize {
    (1..10_000).find(|&n| order_index(n, c) >= 1).unwrap_or(usize::MAX)
}

/// k = floor((n + 1)(1 - c) / 2): how many points each side leaves out.
fn order_index(n: usize, c: f64) -> usize {
    // The tiny slack keeps exact products (10 x 0.1) from rounding down.
    (((n + 1) as f64) * (1.0 - c) / 2.0 + 1e-9).floor().max(0.0) as usize
}

/// The split-conformal interval of `ratios` at coverage `c`: `None` with fewer than `points_needed(c)`.
pub fn interval(ratios: &[f64], c: f64) -> Option<(f64, f64)> {
    let mut r: Vec<f64> = ratios.iter().copied().filter(|x| !x.is_nan()).collect();
    let n = r.len();
    let k = order_index(n, c);
    if k == 0 || !(c > 0.0 && c < 1.0) {
        return None;
    }
    crate::stats::sort_by(&mut r, f64::total_cmp);
    Some((r[k - 1], r[n - k]))
}

/// One pool of the search: the question its points come from, what it admits, and how it reads.
struct Pool<'a> {
    question: Question,
    label: String,
    admits: Box<dyn Fn(&HeldOutPoint) -> bool + 'a>,
}

fn class(moe: bool) -> &'static str {
    if moe {
        "MoE"
    } else {
        "dense"
    }
}

/// The pools of `case`, closest first (the module's diagram).
fn pools(case: &BandCase) -> Vec<Pool<'_>> {
    let mut out: Vec<Pool> = Vec::new();
    if let Some(d) = case.same_machine_dataset.as_deref().filter(|_| case.mode.machines() == 2) {
        out.push(Pool {
            question: Question::PairFromOne,
            label: format!("pair from one on {d} (this machine)"),
            admits: Box::new(move |p| p.dataset == d),
        });
    }
    let (h, e, moe) = (case.hardware.as_str(), case.engine.as_str(), case.moe);
    fn loo<'a>(label: String, admits: Box<dyn Fn(&HeldOutPoint) -> bool + 'a>) -> Pool<'a> {
        Pool { question: Question::LeaveOneOut, label: format!("leave one dataset out, {label}"), admits }
    }
    out.push(loo(
        format!("on {h} with {e}, {} models", class(moe)),
        Box::new(move |p| p.hardware == h && p.engine == e && p.moe == moe),
    ));
    out.push(loo(format!("on {h} with {e}"), Box::new(move |p| p.hardware == h && p.engine == e)));
    out.push(loo(format!("on {h}"), Box::new(move |p| p.hardware == h)));
    out.push(loo(format!("{} models on any machine", class(moe)), Box::new(move |p| p.moe == moe)));
    out.push(loo("any machine".to_string(), Box::new(|_| true)));
    out
}

/// The band of `case` at coverage `c` from `points`, leaving out the point at `skip` (the coverage check asks
/// each point's band without the point itself).
pub fn band(points: &[HeldOutPoint], case: &BandCase, c: f64, skip: Option<usize>) -> Band {
    let what = format!("{} {}", case.mode.name(), case.metric.name());
    let Some(stated) = case.stated else {
        return Band {
            interval: None,
            coverage: c,
            evidence: format!("no measured evidence: no source states this percentile of {what}"),
        };
    };
    let of_case = |i: usize, p: &HeldOutPoint| {
        Some(i) != skip && p.usable() && p.mode == case.mode && p.metric == case.metric && p.stated == stated
    };
    let needed = points_needed(c);
    let mut largest = 0;
    for pool in pools(case) {
        let ratios: Vec<f64> = points
            .iter()
            .enumerate()
            .filter(|(i, p)| of_case(*i, p) && p.question == pool.question && (pool.admits)(p))
            .map(|(_, p)| p.ratio())
            .collect();
        largest = largest.max(ratios.len());
        if let Some(iv) = interval(&ratios, c) {
            return Band {
                interval: Some(iv),
                coverage: c,
                evidence: format!("{}: {} held-out {what} points", pool.label, ratios.len()),
            };
        }
    }
    let evidence = match largest {
        0 => format!("no measured evidence: no held-out point of {what}"),
        n => format!(
            "no measured evidence: {n} held-out point{} of {what}, fewer than the {needed} an interval of {:.0}% \
             coverage needs",
            if n == 1 { "" } else { "s" },
            c * 100.0
        ),
    };
    Band { interval: None, coverage: c, evidence }
}

/// How the held-out points of one question and metric fared against the bands that would have been printed
/// for them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageRow {
    /// `pair from one`, `leave one out`, or `leave one out, machine unmeasured` (each point's band as if no
    /// dataset had measured its machine).
    pub question: String,
    pub metric: BandMetric,
    /// Points with a band, and those inside it.
    pub points: usize,
    pub inside: usize,
    /// Points for which no band would have been printed (no measured evidence).
    pub without_band: usize,
    pub coverage: f64,
    /// The least share inside that the coverage must reach (`None` where no target is set).
    pub share_min: Option<f64>,
}

impl CoverageRow {
    /// The share of points with a band that fell inside it (`None` without such points).
    pub fn share(&self) -> Option<f64> {
        (self.points > 0).then(|| self.inside as f64 / self.points as f64)
    }

    /// Whether the share meets the target (`None` without a target or without points).
    pub fn met(&self) -> Option<bool> {
        Some(self.share()? >= self.share_min?)
    }
}

/// The three checks of every held-out point: its question's band as printed, and for a point left out with its
/// dataset, the band its machine would get were it unmeasured. `case_of` gives a point's band case as `plan`
/// asks it.
pub fn coverage(
    points: &[HeldOutPoint],
    case_of: &dyn Fn(&HeldOutPoint) -> BandCase,
    c: f64,
    share_min: Option<f64>,
) -> Vec<CoverageRow> {
    let mut rows: Vec<CoverageRow> = Vec::new();
    let mut count = |question: &str, metric: BandMetric, b: &Band, ratio: f64| {
        let i = match rows.iter().position(|r| r.question == question && r.metric == metric) {
            Some(i) => i,
            None => {
                rows.push(CoverageRow {
                    question: question.to_string(),
                    metric,
                    points: 0,
                    inside: 0,
                    without_band: 0,
                    coverage: c,
                    share_min,
                });
                rows.len() - 1
            }
        };
        let row = &mut rows[i];
        match b.interval {
            Some((lo, hi)) => {
                row.points += 1;
                row.inside += usize::from(lo <= ratio && ratio <= hi);
            }
            None => row.without_band += 1,
        }
    };
    for (i, p) in points.iter().enumerate().filter(|(_, p)| p.usable()) {
        let case = case_of(p);
        let printed = band(points, &case, c, Some(i));
        let question = if p.question == Question::PairFromOne { "pair from one" } else { "leave one out" };
        count(question, p.metric, &printed, p.ratio());
        if p.question == Question::LeaveOneOut {
            // As if no dataset had measured the machine: its points are out of the evidence, no profile of it.
            let others: Vec<HeldOutPoint> = points.iter().filter(|q| q.hardware != p.hardware).cloned().collect();
            let unmeasured = BandCase { same_machine_dataset: None, ..case };
            let b = band(&others, &unmeasured, c, None);
            count("leave one out, machine unmeasured", p.metric, &b, p.ratio());
        }
    }
    let order =
        |q: &str| ["pair from one", "leave one out", "leave one out, machine unmeasured"].iter().position(|x| *x == q);
    crate::stats::sort_by(&mut rows, |a, b| order(&a.question).cmp(&order(&b.question)).then(a.metric.cmp(&b.metric)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(question: Question, hardware: &str, mode: Mode, ratio: f64) -> HeldOutPoint {
        HeldOutPoint {
            question,
            dataset: format!("{hardware}-data"),
            hardware: hardware.into(),
            engine: "e".into(),
            moe: true,
            mode,
            metric: BandMetric::Throughput,
            stated: Stated::Mean,
            measured: 100.0 * ratio,
            predicted: 100.0,
        }
    }

    fn case(same: Option<&str>, hardware: &str, mode: Mode) -> BandCase {
        BandCase {
            same_machine_dataset: same.map(String::from),
            hardware: hardware.into(),
            engine: "e".into(),
            moe: true,
            mode,
            metric: BandMetric::Throughput,
            stated: Some(Stated::Mean),
        }
    }

    #[test]
    fn an_80_percent_interval_needs_nine_points_and_leaves_out_k_each_side() {
        assert_eq!(points_needed(0.8), 9);
        assert_eq!(points_needed(0.5), 3);
        let r: Vec<f64> = (1..=9).map(f64::from).collect();
        assert_eq!(interval(&r, 0.8), Some((1.0, 9.0)));
        assert_eq!(interval(&r[..8], 0.8), None);
        // 19 points: one more left out each side.
        let r: Vec<f64> = (1..=19).map(f64::from).collect();
        assert_eq!(interval(&r, 0.8), Some((2.0, 18.0)));
        assert_eq!(interval(&r, 0.0), None);
    }

    #[test]
    fn the_interval_is_signed_and_the_cost_interval_is_it_inverted() {
        let ratios = [0.6, 0.64, 0.7, 0.8, 0.9, 0.95, 1.0, 1.02, 1.05];
        let b = Band { interval: interval(&ratios, 0.8), coverage: 0.8, evidence: String::new() };
        assert_eq!(b.short(), "-40/+5%");
        assert!(b.describe().starts_with("-40/+5% at 80% coverage, from "));
        let symmetric = Band { interval: Some((0.85, 1.15)), coverage: 0.8, evidence: String::new() };
        assert_eq!(symmetric.short(), "±15%");
        let (lo, hi) = b.inverted(1.0).expect("an interval");
        assert!((lo - 1.0 / 1.05).abs() < 1e-12 && (hi - 1.0 / 0.6).abs() < 1e-12);
        let none = Band { interval: None, coverage: 0.8, evidence: String::new() };
        assert_eq!((none.short(), none.inverted(1.0)), ("no evidence".to_string(), None));
    }

    #[test]
    fn intervals_that_overlap_are_too_close_and_a_bare_prediction_is_a_point() {
        let b = |lo: f64, hi: f64| Band { interval: Some((lo, hi)), coverage: 0.8, evidence: String::new() };
        let none = Band { interval: None, coverage: 0.8, evidence: String::new() };
        assert!(Band::overlap(2.1, &b(0.9, 1.1), 2.0, &b(0.95, 1.05)));
        assert!(!Band::overlap(3.0, &b(0.9, 1.1), 2.0, &b(0.9, 1.1)));
        // Asymmetric: 3.0 running 40% under reaches 1.8, under 2.0's top.
        assert!(Band::overlap(3.0, &b(0.6, 1.0), 2.0, &b(0.9, 1.0)));
        assert!(Band::overlap(2.0, &none, 2.1, &b(0.9, 1.1)));
        assert!(!Band::overlap(2.0, &none, 2.1, &none));
    }

    #[test]
    fn the_closest_pool_with_enough_points_gives_the_band() {
        let mut pts: Vec<HeldOutPoint> =
            (0..9).map(|i| point(Question::PairFromOne, "m", Mode::Tp2, 1.0 + f64::from(i) / 100.0)).collect();
        pts.extend((0..12).map(|i| point(Question::LeaveOneOut, "m", Mode::Tp2, 0.5 + f64::from(i) / 100.0)));
        pts.extend((0..12).map(|i| point(Question::LeaveOneOut, "x", Mode::Pp2, 2.0 + f64::from(i) / 100.0)));
        // The profile's own machine, a pair mode: pair from one.
        let b = band(&pts, &case(Some("m-data"), "m", Mode::Tp2), 0.8, None);
        assert_eq!(b.interval, Some((1.0, 1.08)));
        assert!(b.evidence.starts_with("pair from one on m-data"), "{}", b.evidence);
        // Leaving one of them out leaves eight: the machine's twelve leave-one-out points instead (k = 1).
        let b = band(&pts, &case(Some("m-data"), "m", Mode::Tp2), 0.8, Some(0));
        assert_eq!(b.interval, Some((0.5, 0.61)));
        // Another machine's TP2: the same mode on any machine; its PP2: only the other machine's PP2.
        let b = band(&pts, &case(None, "y", Mode::Tp2), 0.8, None);
        assert!(b.evidence.starts_with("leave one dataset out, MoE models on any machine"), "{}", b.evidence);
        let b = band(&pts, &case(None, "y", Mode::Pp2), 0.8, None);
        assert_eq!(b.interval, Some((2.0, 2.11)));
        // No held-out point of the mode: no measured evidence, never another mode's number.
        let b = band(&pts, &case(None, "m", Mode::Ep2), 0.8, None);
        assert_eq!(b.interval, None);
        assert_eq!(b.evidence, "no measured evidence: no held-out point of ep2 tok/s");
        // Too few: how many, and how many the coverage needs (the nine pair-from-one points are not this case's).
        pts.truncate(11);
        let b = band(&pts, &case(None, "m", Mode::Tp2), 0.8, None);
        assert_eq!(b.interval, None);
        assert_eq!(
            b.evidence,
            "no measured evidence: 2 held-out points of tp2 tok/s, fewer than the 9 an interval of 80% coverage needs"
        );
        let tail = BandCase { stated: None, ..case(None, "m", Mode::Tp2) };
        assert!(band(&pts, &tail, 0.8, None).evidence.contains("no source states this percentile"));
    }

    #[test]
    fn coverage_counts_each_point_against_the_band_printed_without_it() {
        // Nine pair points spread evenly and one far out: the far one falls outside the band of the others.
        let mut pts: Vec<HeldOutPoint> =
            (0..9).map(|i| point(Question::PairFromOne, "m", Mode::Tp2, 1.0 + f64::from(i) / 100.0)).collect();
        pts.push(point(Question::PairFromOne, "m", Mode::Tp2, 3.0));
        let rows = coverage(&pts, &|_| case(Some("m-data"), "m", Mode::Tp2), 0.8, Some(0.75));
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        // Each inner point sees the other eight and the far one, [lowest other, 3.0]: inside, but for the lowest,
        // which lies under the others; the far one sees [1.00, 1.08]: outside.
        assert_eq!((r.points, r.inside, r.without_band), (10, 8, 0));
        assert_eq!(r.met(), Some(true));
        pts.truncate(9);
        let rows = coverage(&pts, &|_| case(Some("m-data"), "m", Mode::Tp2), 0.8, Some(0.75));
        // Eight left: no band, so no share to judge.
        assert_eq!((rows[0].points, rows[0].without_band, rows[0].met()), (0, 9, None));
    }
}

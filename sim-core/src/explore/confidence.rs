//! Confidence bands: how far a predicted number may be off, taken from the error the accuracy protocol and the
//! stated latencies measured on the case closest to the scenario asked about, never from a constant.
//!
//! ```text
//! the scenario's engine profile was fitted on points of this machine (dataset D)?
//!   yes ─► tok/s: one machine ← D's `fitted` median APE, a pair ← D's `pair_from_one` median APE
//!          latency ← D's stated-latency median APE (when D states latencies)
//!   no  ─► tok/s ← the median over datasets of `leave_one_out` (the error a team without measurements meets)
//!          latency ← the median over the datasets that state latencies
//! ```
//! A band is the median absolute percentage error as a fraction: half the predictions of that closest case
//! landed within it. Where the closest case has no number (a dataset without pair points, or without stated
//! latencies) the band falls back to the wider case and its provenance says so.

use super::protocol::{ProtocolRow, Question};
use super::Workspace;
use crate::dataset::schema::{DEFAULT_ENGINE, REPORT_DATASET};
use crate::fit::FitSet;
use crate::report::GroupStats;
use crate::scenario::Scenario;
use crate::stats::ErrorStats;
use crate::Mode;
use serde::{Deserialize, Serialize};

/// What bands are taken from: rows of the accuracy protocol and the per-dataset errors of stated latencies
/// (`report::Report::ttft_by_dataset`, `tpot_by_dataset`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    pub protocol: Vec<ProtocolRow>,
    pub ttft_by_dataset: Vec<GroupStats>,
    pub tpot_by_dataset: Vec<GroupStats>,
}

/// How close the measured data come to a scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Closest {
    /// The scenario's engine profile was fitted on points of `dataset`, some measured on the scenario's machine.
    SameHardware { dataset: String },
    /// No fit of the profile saw this machine: its predictions are the protocol's leave-one-out kind.
    Elsewhere,
}

/// A relative error band on one predicted number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// The median absolute percentage error of the closest case, as a fraction (0.182 for 18.2%); `None`
    /// when no measurement gives one.
    pub fraction: Option<f64>,
    /// Where the number comes from: `leave-one-out median over 4 datasets: 18.2%`.
    pub provenance: String,
}

impl Band {
    /// `±18%`, or `±?` without a measured error.
    pub fn short(&self) -> String {
        self.fraction.map_or("±?".to_string(), |f| format!("±{:.0}%", f * 100.0))
    }

    /// Whether `a` and `b` (each with its band) could be the same number: their intervals overlap. Without a
    /// band on either, no overlap can be claimed.
    pub fn overlap(a: f64, band_a: &Band, b: f64, band_b: &Band) -> bool {
        match (band_a.fraction, band_b.fraction) {
            (Some(fa), Some(fb)) => {
                let (lo_a, hi_a) = (a * (1.0 - fa), a * (1.0 + fa));
                let (lo_b, hi_b) = (b * (1.0 - fb), b * (1.0 + fb));
                lo_a <= hi_b && lo_b <= hi_a
            }
            _ => false,
        }
    }
}

/// Every band a goodput answer carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bands {
    pub closest: Closest,
    /// Output tok/s of one machine, and of any two-machine mode.
    pub single_tok_s: Band,
    pub pair_tok_s: Band,
    /// Mean TTFT and mean TPOT.
    pub ttft: Band,
    pub tpot: Band,
}

impl Bands {
    /// The bands of a scenario whose closest case is `closest`, from `evidence`.
    pub fn of(evidence: &Evidence, closest: &Closest) -> Bands {
        let loo = || leave_one_out(&evidence.protocol);
        let (single_tok_s, pair_tok_s) = match closest {
            Closest::SameHardware { dataset } => {
                let own = |q: Question, what: &str| {
                    row_median(&evidence.protocol, dataset, q).map_or_else(
                        || fallback(loo(), &format!("{dataset} has no {what} error")),
                        |(m, n)| Band {
                            fraction: Some(m / 100.0),
                            provenance: format!("{what} on {dataset} (this machine): {m:.1}% median over {n} points"),
                        },
                    )
                };
                (own(Question::Fitted, "fitted"), own(Question::PairFromOne, "pair-from-one"))
            }
            Closest::Elsewhere => (loo(), loo()),
        };
        Bands {
            closest: closest.clone(),
            single_tok_s,
            pair_tok_s,
            ttft: latency(&evidence.ttft_by_dataset, closest, "TTFT"),
            tpot: latency(&evidence.tpot_by_dataset, closest, "TPOT"),
        }
    }

    /// Bands without evidence: every fraction unknown.
    pub fn unknown() -> Bands {
        let none = || Band { fraction: None, provenance: "no measured error".into() };
        Bands { closest: Closest::Elsewhere, single_tok_s: none(), pair_tok_s: none(), ttft: none(), tpot: none() }
    }

    /// The band of a mode's output tok/s.
    pub fn tok_s(&self, mode: Mode) -> &Band {
        if mode.machines() == 1 {
            &self.single_tok_s
        } else {
            &self.pair_tok_s
        }
    }
}

impl Workspace {
    /// The case of the accuracy protocol closest to `s`: whether its engine profile (or the fitted profile it
    /// is `based_on`) was fitted on points measured on `s`'s machine.
    pub fn closest_case(&self, s: &Scenario) -> Closest {
        self.closest_case_of(&s.engine, &s.hardware.id)
    }

    /// `closest_case` of a scenario predicting with engine profile `engine` on the machine `hardware`.
    pub fn closest_case_of(&self, engine: &str, hardware: &str) -> Closest {
        let mut id = engine;
        let mut seen: Vec<&str> = Vec::new();
        // The profile whose fit the coefficients come from; `None` inside: the calibration dataset's own fit,
        // which a dataset without engine files predicts with.
        let fitted: Option<Option<&crate::dataset::schema::EngineFile>> = loop {
            match self.dataset.engines.get(id) {
                Some(e) if e.fitted_on.is_some() => break Some(Some(e)),
                Some(e) => match e.based_on.as_deref() {
                    Some(parent) if !seen.contains(&parent) => {
                        seen.push(id);
                        id = parent;
                    }
                    _ => break None,
                },
                None if id == DEFAULT_ENGINE => break Some(None),
                None => break None,
            }
        };
        let Some(file) = fitted else { return Closest::Elsewhere };
        let dataset = file.and_then(|e| e.fitted_on.as_ref()).map_or(REPORT_DATASET.to_string(), |f| f.dataset.clone());
        let admits = |p: &crate::dataset::MeasuredPoint| match file {
            Some(e) => super::engine::fitted_on(e, p),
            None => p.dataset == REPORT_DATASET,
        };
        let on_this_machine = self
            .points()
            .iter()
            .filter(|p| admits(p))
            .any(|p| self.scenarios.get(&p.scenario).is_some_and(|m| m.hardware.id == hardware));
        if on_this_machine {
            Closest::SameHardware { dataset }
        } else {
            Closest::Elsewhere
        }
    }

    /// What the bands of `closest` need: the protocol rows it reads (each a fit: only those are run) and the
    /// stated-latency errors of the report.
    pub fn evidence(&self, closest: &Closest) -> Evidence {
        let mut protocol = match closest {
            Closest::SameHardware { dataset } => {
                self.protocol_where(&|d, q| d == dataset && q != Question::LeaveOneOut)
            }
            Closest::Elsewhere => Vec::new(),
        };
        // Leave-one-out is the fallback of a row without an error, and the answer for another machine.
        if protocol.len() < 2 || protocol.iter().any(|r| r.error.is_none()) {
            protocol.extend(self.protocol_where(&|_, q| q == Question::LeaveOneOut));
        }
        let report = self.accuracy(FitSet::All);
        Evidence {
            protocol,
            ttft_by_dataset: report.ttft_by_dataset.clone(),
            tpot_by_dataset: report.tpot_by_dataset.clone(),
        }
    }

    /// The bands of a scenario: its closest case, and that case's measured errors.
    pub fn bands(&self, s: &Scenario) -> Bands {
        let closest = self.closest_case(s);
        if let Some((_, b)) = self.baked_bands.get().and_then(|all| all.iter().find(|(c, _)| *c == closest)) {
            return b.clone();
        }
        Bands::of(&self.evidence(&closest), &closest)
    }

    /// The bands of every case a scenario of this dataset can be closest to (every engine profile on every
    /// machine): what the page bakes at build time (`fitted_state_json`), since each case runs fits of the
    /// accuracy protocol.
    pub fn bands_of_every_case(&self) -> Vec<(Closest, Bands)> {
        let mut engines: Vec<&str> = self.dataset.engines.keys().map(String::as_str).collect();
        engines.push(DEFAULT_ENGINE);
        let mut cases: Vec<Closest> = Vec::new();
        for h in self.dataset.hardware.keys() {
            for e in &engines {
                let c = self.closest_case_of(e, h);
                if !cases.contains(&c) {
                    cases.push(c);
                }
            }
        }
        cases.into_iter().map(|c| (c.clone(), Bands::of(&self.evidence(&c), &c))).collect()
    }
}

/// A dataset's median APE for a question and the points judged (`None` when the row has no error).
fn row_median(rows: &[ProtocolRow], dataset: &str, q: Question) -> Option<(f64, usize)> {
    rows.iter().find(|r| r.dataset == dataset && r.question == q).and_then(|r| r.error).map(|e| (e.median_ape, e.n))
}

/// The median over datasets of their leave-one-out median APE.
fn leave_one_out(rows: &[ProtocolRow]) -> Band {
    let medians: Vec<f64> = rows
        .iter()
        .filter(|r| r.question == Question::LeaveOneOut)
        .filter_map(|r| r.error.map(|e| e.median_ape))
        .collect();
    match ErrorStats::of(&medians) {
        Some(s) => Band {
            fraction: Some(s.median_ape / 100.0),
            provenance: format!("leave-one-out median over {} datasets: {:.1}%", s.n, s.median_ape),
        },
        None => Band { fraction: None, provenance: "no leave-one-out error measured".into() },
    }
}

/// `band` with the reason the closer case gave none in front of its provenance.
fn fallback(band: Band, why: &str) -> Band {
    Band { provenance: format!("{why}; {}", band.provenance), ..band }
}

/// The band of a latency from its per-dataset errors: the closest dataset's when it states latencies, else the
/// median over the datasets that do. On the profile's own dataset the points are the fit's (`fitted`); on
/// another they are predictions (`predicted`): each case takes its own kind first.
fn latency(groups: &[GroupStats], closest: &Closest, what: &str) -> Band {
    if let Closest::SameHardware { dataset } = closest {
        if let Some(e) = groups.iter().find(|g| &g.group == dataset).and_then(|g| g.fitted.or(g.predicted)) {
            return Band {
                fraction: Some(e.median_ape / 100.0),
                provenance: format!(
                    "stated {what} on {dataset} (this machine): {:.1}% median over {} points",
                    e.median_ape, e.n
                ),
            };
        }
    }
    let medians: Vec<f64> = groups.iter().filter_map(|g| g.predicted.or(g.fitted)).map(|e| e.median_ape).collect();
    let band = match ErrorStats::of(&medians) {
        Some(s) => Band {
            fraction: Some(s.median_ape / 100.0),
            provenance: format!("stated {what}, median over {} datasets that state it: {:.1}%", s.n, s.median_ape),
        },
        None => Band { fraction: None, provenance: format!("no dataset states a {what}") },
    };
    match closest {
        Closest::SameHardware { dataset } => fallback(band, &format!("{dataset} states no {what}")),
        Closest::Elsewhere => band,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(dataset: &str, question: Question, median: Option<f64>) -> ProtocolRow {
        ProtocolRow {
            dataset: dataset.into(),
            question,
            fitted_points: 10,
            error: median.map(|m| ErrorStats { n: 7, median_ape: m, p90_ape: 2.0 * m }),
            worst_ape: None,
            missing: None,
            target: None,
            met: None,
            ttft: None,
            tpot: None,
            open_loop: None,
            mode_order: None,
            checks: Vec::new(),
        }
    }

    fn group(dataset: &str, fitted: Option<f64>, predicted: Option<f64>) -> GroupStats {
        let stats = |m: Option<f64>| m.map(|m| ErrorStats { n: 3, median_ape: m, p90_ape: m });
        GroupStats { group: dataset.into(), fitted: stats(fitted), predicted: stats(predicted) }
    }

    fn evidence() -> Evidence {
        Evidence {
            protocol: vec![
                row("a", Question::Fitted, Some(6.9)),
                row("a", Question::PairFromOne, Some(9.0)),
                row("a", Question::LeaveOneOut, Some(31.1)),
                row("b", Question::Fitted, Some(8.8)),
                row("b", Question::PairFromOne, None),
                row("b", Question::LeaveOneOut, Some(27.3)),
                row("c", Question::LeaveOneOut, Some(12.9)),
                row("d", Question::LeaveOneOut, Some(18.2)),
            ],
            ttft_by_dataset: vec![group("b", None, Some(64.0)), group("d", None, Some(50.5))],
            tpot_by_dataset: vec![group("b", Some(35.5), Some(41.3)), group("d", None, Some(16.4))],
        }
    }

    #[test]
    fn a_profile_fitted_on_this_machine_takes_its_datasets_fitted_and_pair_errors() {
        let b = Bands::of(&evidence(), &Closest::SameHardware { dataset: "a".into() });
        assert!((b.single_tok_s.fraction.unwrap() - 0.069).abs() < 1e-12);
        assert!((b.pair_tok_s.fraction.unwrap() - 0.09).abs() < 1e-12);
        assert_eq!(b.pair_tok_s.provenance, "pair-from-one on a (this machine): 9.0% median over 7 points");
        assert_eq!(b.tok_s(Mode::Dp2), &b.pair_tok_s);
        assert_eq!(b.tok_s(Mode::Single), &b.single_tok_s);
        // `a` states no latency: the median over the datasets that do, and the reason.
        assert!((b.ttft.fraction.unwrap() - 0.5725).abs() < 1e-12);
        assert_eq!(b.ttft.provenance, "a states no TTFT; stated TTFT, median over 2 datasets that state it: 57.2%");
    }

    #[test]
    fn another_machine_takes_the_leave_one_out_median_over_the_datasets() {
        let b = Bands::of(&evidence(), &Closest::Elsewhere);
        // Medians 31.1, 27.3, 12.9, 18.2: their median is (18.2 + 27.3) / 2.
        assert!((b.pair_tok_s.fraction.unwrap() - 0.2275).abs() < 1e-12);
        assert_eq!(b.single_tok_s, b.pair_tok_s);
        assert_eq!(b.pair_tok_s.provenance, "leave-one-out median over 4 datasets: 22.8%");
        // Each dataset's latency error is its predictions' where it has them.
        assert!((b.tpot.fraction.unwrap() - (41.3 + 16.4) / 200.0).abs() < 1e-12);
    }

    #[test]
    fn a_missing_pair_error_falls_back_to_leave_one_out_and_says_why() {
        let b = Bands::of(&evidence(), &Closest::SameHardware { dataset: "b".into() });
        assert!((b.single_tok_s.fraction.unwrap() - 0.088).abs() < 1e-12);
        assert!((b.pair_tok_s.fraction.unwrap() - 0.2275).abs() < 1e-12);
        assert!(b.pair_tok_s.provenance.starts_with("b has no pair-from-one error; leave-one-out"));
        // `b` states latencies: its own, the fit's points first.
        assert!((b.tpot.fraction.unwrap() - 0.355).abs() < 1e-12);
        assert!((b.ttft.fraction.unwrap() - 0.64).abs() < 1e-12);
    }

    #[test]
    fn the_band_moves_with_the_measured_error() {
        let mut e = evidence();
        let before = Bands::of(&e, &Closest::SameHardware { dataset: "a".into() });
        e.protocol[1] = row("a", Question::PairFromOne, Some(25.0));
        let after = Bands::of(&e, &Closest::SameHardware { dataset: "a".into() });
        assert!((before.pair_tok_s.fraction.unwrap() - 0.09).abs() < 1e-12);
        assert!((after.pair_tok_s.fraction.unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(after.single_tok_s, before.single_tok_s);
    }

    #[test]
    fn overlapping_bands_are_too_close_and_unknown_bands_never_are() {
        let band = |f: f64| Band { fraction: Some(f), provenance: String::new() };
        assert!(Band::overlap(2.1, &band(0.15), 2.0, &band(0.25)));
        assert!(!Band::overlap(3.0, &band(0.1), 2.0, &band(0.1)));
        let unknown = Band { fraction: None, provenance: String::new() };
        assert!(!Band::overlap(2.1, &unknown, 2.0, &band(0.25)));
        assert_eq!(band(0.182).short(), "±18%");
        assert_eq!(unknown.short(), "±?");
    }
}

//! Confidence bands: how far a predicted number may be off, as an interval of stated coverage taken from the
//! errors of held-out points only (pair from one, leave one dataset out) closest to the scenario asked about,
//! per mode and metric; "no measured evidence" where none is close enough (`held_out` says how a band is built).
//!
//! ```text
//! scenario ─► closest case (the dataset its profile was fitted on, when that dataset measured this machine)
//!          ─► per mode: tok/s, TTFT and TPOT (mean, p50, p90, p99) ─► held_out::band of the closest pool
//! ```

pub use super::held_out::Band;
use super::held_out::{self, is_moe, BandCase, BandMetric, CoverageRow, HeldOutPoint, Stated};
use super::protocol::Question;
use super::target::LatencyStatistic;
use super::Workspace;
use crate::dataset::schema::{DEFAULT_ENGINE, REPORT_DATASET};
use crate::scenario::Scenario;
use crate::Diagnostic;
use crate::Mode;
use serde::{Deserialize, Serialize};

/// The coverage a band is stated at unless the accuracy file (`band_coverage`) says otherwise.
pub const DEFAULT_COVERAGE: f64 = 0.8;

/// How close the measured data come to a scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Closest {
    /// The scenario's engine profile was fitted on points of `dataset`, some measured on the scenario's machine.
    SameHardware { dataset: String },
    /// No fit of the profile saw this machine: its predictions are the protocol's leave-one-out kind.
    Elsewhere,
}

/// One mode's bands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeBands {
    pub mode: Mode,
    pub tok_s: Band,
    /// TTFT and TPOT for each statistic of `LatencyStatistic::ALL`, in that order.
    pub ttft: Vec<Band>,
    pub tpot: Vec<Band>,
}

/// Every band a goodput answer carries: per mode, its output tok/s (and what follows from it: per GPU, per user,
/// cost inverted) and its latencies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bands {
    pub closest: Closest,
    /// The share of held-out points each interval is built to hold.
    pub coverage: f64,
    /// In `Mode::EVERY` order.
    pub modes: Vec<ModeBands>,
}

impl Bands {
    fn none(&self, what: &str) -> Band {
        Band { interval: None, coverage: self.coverage, evidence: format!("no measured evidence: {what}") }
    }

    /// The band of a mode's output tok/s.
    pub fn tok_s(&self, mode: Mode) -> Band {
        self.modes.iter().find(|m| m.mode == mode).map_or_else(|| self.none("no band computed"), |m| m.tok_s.clone())
    }

    /// The band of a mode's TTFT at `statistic`.
    pub fn ttft(&self, mode: Mode, statistic: LatencyStatistic) -> Band {
        self.latency(mode, statistic, |m| &m.ttft)
    }

    /// The band of a mode's TPOT at `statistic`.
    pub fn tpot(&self, mode: Mode, statistic: LatencyStatistic) -> Band {
        self.latency(mode, statistic, |m| &m.tpot)
    }

    fn latency(&self, mode: Mode, statistic: LatencyStatistic, of: fn(&ModeBands) -> &Vec<Band>) -> Band {
        let i = LatencyStatistic::ALL.iter().position(|s| *s == statistic).unwrap_or(0);
        self.modes
            .iter()
            .find(|m| m.mode == mode)
            .and_then(|m| of(m).get(i).cloned())
            .unwrap_or_else(|| self.none("no band computed"))
    }
}

/// What a scenario's bands are asked of: its closest case, machine, engine profile and model class.
struct Asked<'a> {
    closest: &'a Closest,
    hardware: &'a str,
    engine: &'a str,
    moe: bool,
}

impl Asked<'_> {
    fn case(&self, mode: Mode, metric: BandMetric, stated: Option<Stated>) -> BandCase {
        BandCase {
            same_machine_dataset: match self.closest {
                Closest::SameHardware { dataset } => Some(dataset.clone()),
                Closest::Elsewhere => None,
            },
            hardware: self.hardware.to_string(),
            engine: self.engine.to_string(),
            moe: self.moe,
            mode,
            metric,
            stated,
        }
    }

    fn bands(&self, points: &[HeldOutPoint], coverage: f64) -> Bands {
        let band = |mode, metric, stated| held_out::band(points, &self.case(mode, metric, stated), coverage, None);
        let modes = Mode::EVERY
            .into_iter()
            .map(|mode| {
                let latency = |metric| {
                    LatencyStatistic::ALL.into_iter().map(|s| band(mode, metric, Stated::of(s))).collect::<Vec<_>>()
                };
                ModeBands {
                    mode,
                    tok_s: band(mode, BandMetric::Throughput, Some(Stated::Mean)),
                    ttft: latency(BandMetric::Ttft),
                    tpot: latency(BandMetric::Tpot),
                }
            })
            .collect();
        Bands { closest: self.closest.clone(), coverage, modes }
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

    /// The coverage bands are stated at: `data/accuracy.json`'s `band_coverage`, else `DEFAULT_COVERAGE`.
    pub fn band_coverage(&self) -> f64 {
        self.dataset.accuracy.as_ref().and_then(|a| a.band_coverage.as_ref()).map_or(DEFAULT_COVERAGE, |b| b.coverage)
    }

    /// Every held-out point of the protocol rows `wanted` admits (each row a fit, run once per workspace), or
    /// the points baked with the page's fits.
    fn held_out_where(&self, wanted: &dyn Fn(&str, Question) -> bool) -> Vec<HeldOutPoint> {
        if let Some(baked) = self.baked_evidence.get() {
            return baked.iter().filter(|p| wanted(&p.dataset, p.question)).cloned().collect();
        }
        self.protocol_where(&|d, q| q != Question::Fitted && wanted(d, q))
            .into_iter()
            .flat_map(|r| r.held_out)
            .collect()
    }

    /// Every held-out point of the protocol (every pair-from-one and leave-one-out row): what the page bakes.
    pub fn held_out(&self) -> Vec<HeldOutPoint> {
        self.held_out_where(&|_, _| true)
    }

    /// The bands of a scenario at the workspace's coverage: its closest case, and per mode the held-out errors
    /// of the closest evidence. Runs the leave-one-out rows, and the pair-from-one row of the dataset the
    /// profile was fitted on when that dataset measured this machine.
    pub fn bands(&self, s: &Scenario) -> Bands {
        self.bands_at(s, self.band_coverage())
    }

    /// `bands` at coverage `c` (in (0, 1)).
    pub fn bands_at(&self, s: &Scenario, c: f64) -> Bands {
        let closest = self.closest_case(s);
        let own = match &closest {
            Closest::SameHardware { dataset } => Some(dataset.clone()),
            Closest::Elsewhere => None,
        };
        let points = self.held_out_where(&|d, q| q == Question::LeaveOneOut || own.as_deref().is_some_and(|o| o == d));
        let asked = Asked { closest: &closest, hardware: &s.hardware.id, engine: &s.engine, moe: is_moe(&s.model) };
        asked.bands(&points, c)
    }

    /// How many held-out points fell inside the band `plan` would have printed for them, per question and
    /// metric (each point's band built without the point itself), against `data/accuracy.json`'s
    /// `band_coverage` target. Runs every pair-from-one and leave-one-out row.
    pub fn coverage_check(&self) -> Vec<CoverageRow> {
        let points = self.held_out();
        let share_min =
            self.dataset.accuracy.as_ref().and_then(|a| a.band_coverage.as_ref()).map(|b| b.held_out_share_min);
        let case_of = |p: &HeldOutPoint| {
            let closest = self.closest_case_of(&p.engine, &p.hardware);
            let asked = Asked { closest: &closest, hardware: &p.hardware, engine: &p.engine, moe: p.moe };
            asked.case(p.mode, p.metric, Some(p.stated))
        };
        held_out::coverage(&points, &case_of, self.band_coverage(), share_min)
    }
    /// An error per question and metric whose held-out points fall inside their bands less often than
    /// `data/accuracy.json`'s `band_coverage` asks (none without that target).
    pub fn coverage_diagnostics(&self) -> Vec<Diagnostic> {
        if self.dataset.accuracy.as_ref().and_then(|a| a.band_coverage.as_ref()).is_none() {
            return Vec::new();
        }
        self.coverage_check()
            .iter()
            .filter(|r| r.met() == Some(false))
            .map(|r| {
                let d = Diagnostic::error(
                    "accuracy.json",
                    "/band_coverage/held_out_share_min",
                    format!(
                        "{} {}: {} of {} held-out points ({:.1}%) fell inside their {:.0}% bands, under the {:.0}% \
                         the target asks",
                        r.question,
                        r.metric.name(),
                        r.inside,
                        r.points,
                        r.share().unwrap_or(0.0) * 100.0,
                        r.coverage * 100.0,
                        r.share_min.unwrap_or(0.0) * 100.0
                    ),
                )
                .with_hint(
                    "the bands are narrower than the errors they stand for: `sim-core report` lists the coverage",
                );
                self.dataset.locate(d)
            })
            .collect()
    }

    /// Each question and metric's coverage as `validate` summarises it: `pair from one tok/s 83.3% (25 of 30)`.
    pub fn coverage_summary(&self) -> Vec<String> {
        self.coverage_check()
            .iter()
            .filter_map(|r| {
                r.share().map(|s| {
                    format!("{} {} {:.1}% ({} of {})", r.question, r.metric.name(), s * 100.0, r.inside, r.points)
                })
            })
            .collect()
    }
}

//! The accuracy protocol: for every dataset, how well the model fits it, predicts its pair from its one-machine
//! points, and predicts it from the other datasets alone; and how the headline errors move when each assumed
//! value is halved and doubled. Every fit here starts from the same priors; nothing is tuned to a dataset.
//!
//! ```text
//! fitted          fit on the dataset's unflagged points     → error on those same points
//! pair_from_one   fit on its one-machine points             → error on its two-machine points
//! leave_one_out   fit on every other dataset's points       → error on all of its points
//! ```
//! Points across four machines (`tp4`, `pp4`, `dp4`) are never fitted on: only their dataset's leave-one-out
//! judges them, each predicted by its mode like any other point.
//! Within a dataset, `fitted` and `pair_from_one` fit each engine build (the scenarios that name one engine
//! profile) apart, as its profile is fitted; `leave_one_out` fits one profile on all other datasets. Every
//! build keeps what its profile states rather than fits (admission policy, memory shares: `EngineSettings`),
//! in the fit and in the prediction: leave-one-out shares only the fitted coefficients across builds, as a
//! user without measurements who names their engine would.

use super::held_out::{is_moe, BandMetric, HeldOutPoint, Stated};
use super::miss_reading::{MissReading, TargetQuantity};
pub use super::mode_checks::{ModeOrders, ModeRatios};
use super::Workspace;
use crate::dataset::schema::{Metric, ModelFile, PointSet, ProtocolTarget, Quantity, DEFAULT_ENGINE, REPORT_DATASET};
use crate::dataset::{Dataset, MeasuredPoint};
use crate::fit::fit_across_engines;
use crate::fit::FitSet;
use crate::model::{Coefficients, EngineSettings};
use crate::report::{build_for, enforced_targets, AccuracySummary, PointRole};
use crate::scenario::{apply_override, Scenario};
use crate::stats::ErrorStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Each case of the protocol (dataset, question) with its row once computed: what a workspace keeps.
pub(super) type ProtocolRows = OnceLock<Vec<((String, Question), OnceLock<ProtocolRow>)>>;

/// The prior pull of the protocol's fits: the same weak pull the report's own fit uses.
const PRIOR_WEIGHT: f64 = 1e-3;

/// Which question a protocol row answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// Fit on the dataset's points, error on the same points.
    Fitted,
    /// Fit on the dataset's one-machine points, error on its two-machine points.
    PairFromOne,
    /// Fit on every other dataset, error on this one's points.
    LeaveOneOut,
}

impl Question {
    /// In the order of `dataset::schema::PROTOCOL_QUESTIONS` (a test checks the names agree).
    pub const ALL: [Question; 3] = [Question::Fitted, Question::PairFromOne, Question::LeaveOneOut];

    pub fn name(self) -> &'static str {
        match self {
            Question::Fitted => "fitted",
            Question::PairFromOne => "pair_from_one",
            Question::LeaveOneOut => "leave_one_out",
        }
    }
}

/// One row of the protocol: a dataset, a question, and the error it gives (or why there is none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolRow {
    pub dataset: String,
    pub question: Question,
    /// Points the fit used.
    pub fitted_points: usize,
    /// Error on the points the question asks about (`None` when there are none: `missing` says why).
    pub error: Option<ErrorStats>,
    /// The largest error of a point the question judges: nothing left unseen behind a median.
    pub worst_ape: Option<f64>,
    pub missing: Option<String>,
    /// The frozen target of `data/accuracy.json` for this row's throughput error, if any: (median, p90) maxima and
    /// where it was set.
    pub target: Option<Target>,
    /// Whether the error meets the target (`None` without a target or without an error).
    pub met: Option<bool>,
    /// The same fits' errors on the latencies the judged points state (TTFT and TPOT, each against the statistic
    /// its source gives), on the points the question judges; `None` where no judged point states one.
    pub ttft: Option<ErrorStats>,
    pub tpot: Option<ErrorStats>,
    /// The same fits' errors on the dataset's runs sent at a rate that the machine kept up with, each predicted
    /// as an open loop (`None` without such runs).
    pub open_loop: Option<OpenLoopErrors>,
    /// Of the judged setups measured in two modes or more (one scenario, workload and concurrency), how many the
    /// model ranks in the measured order (`None` without such setups).
    pub mode_order: Option<ModeOrders>,
    /// Of the judged setups measured on one machine and in another mode, the other mode's throughput over one
    /// machine's, measured against predicted (`None` without such setups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_ratios: Option<ModeRatios>,
    /// Every other frozen target for this dataset and question (a latency, a subset of points, the modes'
    /// order), each with what the model gives.
    pub checks: Vec<TargetCheck>,
    /// Which way each judged quantity's predictions lean and what bounds the worst of them: what a missed
    /// target's note says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readings: Vec<MissReading>,
    /// The points this row predicted without fitting on them, one per metric each states (empty for `fitted`):
    /// the evidence of the bands (`held_out`). Kept out of the report's JSON, which carries every point already.
    #[serde(skip)]
    pub held_out: Vec<HeldOutPoint>,
}

impl ProtocolRow {
    /// A row without an error: `why` says what the question lacks (its fit used `fitted_points`).
    pub fn missing(dataset: &str, question: Question, fitted_points: usize, why: String) -> ProtocolRow {
        ProtocolRow {
            dataset: dataset.into(),
            question,
            fitted_points,
            error: None,
            worst_ape: None,
            missing: Some(why),
            target: None,
            met: None,
            ttft: None,
            tpot: None,
            open_loop: None,
            mode_order: None,
            mode_ratios: None,
            checks: Vec::new(),
            readings: Vec::new(),
            held_out: Vec::new(),
        }
    }

    /// The reading of one quantity over this row's judged points, in words (`None` where none states it).
    pub fn reading(&self, quantity: TargetQuantity) -> Option<String> {
        self.readings.iter().find(|r| r.quantity == quantity).map(MissReading::sentence)
    }

    /// The note the report prints beside the headline throughput: why it is missing, or why a missed target
    /// misses.
    pub fn note(&self) -> Option<String> {
        match self.met {
            Some(false) => self.reading(TargetQuantity::Throughput),
            _ => self.missing.clone(),
        }
    }
}

/// Errors on open-loop runs the machine kept up with: output throughput, and the median TTFT where stated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopErrors {
    pub throughput: ErrorStats,
    pub worst_throughput_ape: f64,
    pub median_ttft: Option<ErrorStats>,
    pub worst_median_ttft_ape: Option<f64>,
}

/// A frozen target other than the throughput median and p90, with the model's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetCheck {
    pub metric: Metric,
    pub points: Option<PointSet>,
    pub target: Target,
    /// The errors on the points the target reads (`None` when it reads none, or for a pass/fail target).
    pub error: Option<ErrorStats>,
    pub worst_ape: Option<f64>,
    /// `None` when the target could not be judged: `missing` says why.
    pub met: Option<bool>,
    pub missing: Option<String>,
    /// Where the target is missed, which way its points' predictions lean and what bounds the worst of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<String>,
}

impl TargetCheck {
    /// The note the report prints beside the check: what it reads where it has no error, or why a missed target
    /// misses.
    pub fn note(&self) -> Option<String> {
        match (self.met, &self.reading) {
            (Some(false), Some(reading)) => Some(reading.clone()),
            _ => self.missing.clone(),
        }
    }
}

/// A target as the protocol row shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub median_ape_max: Option<f64>,
    pub p90_ape_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_ape_max: Option<f64>,
    pub source: String,
}

impl Target {
    fn of(t: &ProtocolTarget) -> Self {
        Target {
            median_ape_max: t.median_ape_max,
            p90_ape_max: t.p90_ape_max,
            worst_ape_max: t.worst_ape_max,
            source: t.source.clone(),
        }
    }

    /// Whether errors with this median, p90 and worst point meet every bound the target sets.
    fn met_by(&self, e: &ErrorStats, worst: Option<f64>) -> bool {
        self.median_ape_max.is_none_or(|m| e.median_ape <= m)
            && self.p90_ape_max.is_none_or(|m| e.p90_ape <= m)
            && self.worst_ape_max.is_none_or(|m| worst.is_some_and(|w| w <= m))
    }
}

/// How the headline errors move when one assumed value is scaled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SensitivityRow {
    /// What is scaled: an override key and where (`link.call_latency_s (all scenarios)`).
    pub parameter: String,
    /// Its value as used, in SI units (for a per-model field: that model's).
    pub value: f64,
    /// The scale factors tried, in order (1 is the value as used).
    pub scales: Vec<f64>,
    /// Fitted median APE on the calibration dataset at each scale.
    pub fitted_median: Vec<f64>,
    /// Pair-from-one predictive median APE on the calibration dataset at each scale.
    pub predictive_median: Vec<f64>,
}

/// The scales of the sensitivity table: halved, as used, doubled.
pub const SENSITIVITY_SCALES: [f64; 3] = [0.5, 1.0, 2.0];

/// One assumed value the sensitivity table varies.
#[derive(Debug, Clone)]
pub struct Assumption {
    pub label: String,
    /// Scales the value in a copy of the scenarios and of the base coefficients.
    apply: Change,
}

#[derive(Debug, Clone)]
enum Change {
    /// An override key, on the scenarios of one model (or all when `None`).
    Override { key: &'static str, model: Option<String> },
    /// A coefficient the fit starts from and does not free.
    Coefficient(fn(&mut Coefficients) -> &mut f64),
    /// An `assumed` field of a model card no override key reaches (attention geometry, a drafter's KV): the
    /// card is scaled and its scenarios are resolved again, so whatever the field feeds follows.
    CardField { model: String, field: String },
}

/// The step's token budget the calibration dataset's engines run with, to be scaled: the profile's own, or where
/// it states none vLLM's default on the GB300's 252 GB GPU (`VLLM_LARGE_GPU_LIMITS`: a default of 0 scaled would
/// stay the default).
fn chunk_on_calibration_gpus(k: &mut Coefficients) -> &mut f64 {
    if k.prefill_chunk_tokens <= 0.0 {
        k.prefill_chunk_tokens = crate::model::VLLM_LARGE_GPU_LIMITS.tokens_per_step;
    }
    &mut k.prefill_chunk_tokens
}

impl Workspace {
    /// The datasets with published points, sorted (the calibration dataset among them).
    pub fn datasets(&self) -> Vec<String> {
        let mut d: Vec<String> = self.points().iter().map(|p| p.dataset.clone()).collect();
        crate::stats::sort(&mut d);
        d.dedup();
        d
    }

    /// Every dataset through the three questions of the protocol.
    pub fn protocol(&self) -> Vec<ProtocolRow> {
        self.protocol_where(&|_, _| true)
    }

    /// Every case of the protocol, in its order: each dataset with published points, through each question.
    pub fn protocol_cases(&self) -> Vec<(String, Question)> {
        self.datasets().into_iter().flat_map(|d| Question::ALL.map(|q| (d.clone(), q))).collect()
    }

    /// The rows of the protocol `wanted` admits (dataset, question), in the order of `protocol`: each row is its
    /// own fit, run at most once per workspace (a row asked again, or from another thread while it runs, is the
    /// same row), so a question that needs a few rows (a confidence band) pays for those only, and callers that
    /// run the cases on several threads (the CLI) fill the rows everyone else reads.
    pub fn protocol_where(&self, wanted: &dyn Fn(&str, Question) -> bool) -> Vec<ProtocolRow> {
        let rows = self
            .protocol_rows
            .get_or_init(|| self.protocol_cases().into_iter().map(|case| (case, OnceLock::new())).collect());
        rows.iter()
            .filter(|((d, q), _)| wanted(d, *q))
            .map(|((d, q), row)| row.get_or_init(|| self.protocol_case(d, *q)).clone())
            .collect()
    }

    /// One case of the protocol: its fit, its errors, and its targets judged.
    fn protocol_case(&self, d: &str, q: Question) -> ProtocolRow {
        let settings = self.scenario_engine_settings();
        let targets = self.dataset.accuracy.as_ref().map(|a| a.protocol.as_slice()).unwrap_or_default();
        let mut row = protocol_row(&self.scenarios, &settings, self.points(), &Coefficients::default(), d, q);
        let applies = |t: &&ProtocolTarget| t.question == q.name() && (t.dataset == d || t.dataset == "*");
        // The throughput target over all judged points: a dataset's own wins over one for every dataset.
        let headline = |t: &&ProtocolTarget| t.metric == Metric::Throughput && t.points.is_none();
        let t = targets.iter().filter(applies).filter(headline).max_by_key(|t| t.dataset == d);
        if let Some(t) = t {
            let target = Target::of(t);
            row.met = row.error.map(|e| target.met_by(&e, row.worst_ape));
            row.target = Some(target);
        }
        // Every other target, one check each, again a dataset's own over one for every dataset.
        let mut others: Vec<&ProtocolTarget> = targets.iter().filter(applies).filter(|t| !headline(t)).collect();
        others.sort_by_key(|t| t.dataset == "*");
        for t in others {
            let duplicate = row.checks.iter().any(|c| c.metric == t.metric && c.points == t.points);
            let check = target_check(&row, t);
            // A target for every dataset reads only the datasets whose sources state its metric.
            let unstated = t.dataset == "*" && check.error.is_none() && t.metric != Metric::ModeOrder;
            if !duplicate && !unstated {
                row.checks.push(check);
            }
        }
        row
    }

    /// What `validate`'s model check enforces, each target with its result, and how many of the protocol's
    /// targets the model misses (`sim-core report` prints them; `validate` does not enforce them). `None` without
    /// `accuracy.json` or with errors in the data.
    pub fn accuracy_summary(&self) -> Option<AccuracySummary> {
        if !self.is_valid() || self.dataset.accuracy.is_none() {
            return None;
        }
        let rows = self.protocol();
        let mut enforced = enforced_targets(&self.dataset, self.accuracy(FitSet::All), self.accuracy(FitSet::Single));
        if let Some(acc) = &self.dataset.accuracy {
            enforced.extend(super::held_out_gate::held_out_gate_targets(acc, &rows));
        }
        // Every target judged: the throughput one of each row, and each of its other checks.
        let judged: Vec<(String, Option<bool>)> = rows
            .iter()
            .filter(|r| r.target.is_some())
            .map(|r| (format!("{} {}", r.dataset, r.question.name()), r.met))
            .chain(rows.iter().flat_map(|r| {
                r.checks
                    .iter()
                    .map(move |c| (format!("{} {} {}", r.dataset, r.question.name(), c.metric.name()), c.met))
            }))
            .collect();
        let protocol_missed =
            judged.iter().filter(|(_, met)| *met == Some(false)).map(|(what, _)| what.clone()).collect();
        let band_target = self.dataset.accuracy.as_ref().and_then(|a| a.band_coverage.as_ref());
        Some(AccuracySummary {
            enforced,
            protocol_targets: judged.len(),
            protocol_missed,
            band_coverage: self.coverage_summary(),
            band_target: band_target.map(|b| (b.coverage, b.held_out_share_min)),
        })
    }

    /// Each scenario's engine settings, by scenario id.
    fn scenario_engine_settings(&self) -> BTreeMap<String, EngineSettings> {
        self.scenarios.iter().map(|(id, s)| (id.clone(), self.engine_settings(&s.engine))).collect()
    }

    /// The assumed values the sensitivity table varies: the link's per-call latency (PD's KV hand-off; TP's calls
    /// pay NCCL's modelled latency, `model::nccl`), the reserves and the
    /// prefill chunk the engine is assumed to use, the row tile of the MoE kernel its profile assumes, and every
    /// model-card field whose basis is `assumed` (of the models the calibration dataset measured).
    pub fn assumptions(&self) -> Vec<Assumption> {
        let mut out = vec![
            Assumption {
                label: "link.call_latency_s (PD's hand-off, every scenario)".into(),
                apply: Change::Override { key: "link.call_latency_s", model: None },
            },
            Assumption {
                label: "hbm_reserve_fraction (coefficient)".into(),
                apply: Change::Coefficient(|k| &mut k.hbm_reserve_fraction),
            },
            Assumption {
                label: "runtime_reserve_fraction (coefficient)".into(),
                apply: Change::Coefficient(|k| &mut k.runtime_reserve_fraction),
            },
            Assumption {
                label: "prefill_chunk_tokens (coefficient)".into(),
                apply: Change::Coefficient(chunk_on_calibration_gpus),
            },
            Assumption {
                label: format!(
                    "MoE kernel row tile ({}: {})",
                    DEFAULT_ENGINE,
                    self.engine_settings(DEFAULT_ENGINE).applied_to(&Coefficients::default()).moe_kernel.name()
                ),
                apply: Change::Coefficient(|k| &mut k.moe_tile_scale),
            },
        ];
        // Only the models of the calibration dataset move its headline errors.
        let calibrated: std::collections::BTreeSet<String> =
            self.points().iter().filter(|p| p.dataset == REPORT_DATASET).map(|p| p.model.clone()).collect();
        for (id, m) in self.dataset.models.iter().filter(|(id, _)| calibrated.contains(*id)) {
            let Ok(arch) = serde_json::to_value(&m.architecture) else { continue };
            let Some(fields) = arch.as_object() else { continue };
            for (field, q) in fields {
                let assumed = q.get("basis").and_then(|b| b.as_str()) == Some("assumed");
                if !assumed {
                    continue;
                }
                let key = crate::scenario::OVERRIDES.iter().find(|o| o.key == format!("model.{field}"));
                out.push(match key {
                    Some(o) => Assumption {
                        label: format!("{} ({id}, assumed)", o.key),
                        apply: Change::Override { key: o.key, model: Some(id.clone()) },
                    },
                    None => Assumption {
                        label: format!("model.{field} ({id}, assumed, card)"),
                        apply: Change::CardField { model: id.clone(), field: field.clone() },
                    },
                });
            }
        }
        out
    }

    /// How the calibration dataset's fitted and predictive medians move when each assumption is halved and
    /// doubled (two fits per scale: a few seconds for the shipped data in a release build). The unscaled fits
    /// are the same for every row: made once.
    pub fn sensitivity(&self, assumptions: &[Assumption]) -> Vec<SensitivityRow> {
        let points = self.calibration_points();
        let settings = self.scenario_engine_settings();
        let mut unchanged = None;
        assumptions
            .iter()
            .map(|a| {
                let mut row = SensitivityRow {
                    parameter: a.label.clone(),
                    value: f64::NAN,
                    scales: SENSITIVITY_SCALES.to_vec(),
                    fitted_median: Vec::new(),
                    predictive_median: Vec::new(),
                };
                for scale in SENSITIVITY_SCALES {
                    let (scenarios, base, value) = a.scaled(&self.dataset, &self.scenarios, scale);
                    let (f, p) = if scale == 1.0 {
                        row.value = value;
                        // Unscaled, the headline is the protocol's own two rows (kept by the workspace).
                        *unchanged.get_or_insert_with(|| {
                            let rows = self.protocol_where(&|d, q| d == REPORT_DATASET && q != Question::LeaveOneOut);
                            let median =
                                |q: Question| rows.iter().find(|r| r.question == q).map_or(f64::NAN, median_ape);
                            (median(Question::Fitted), median(Question::PairFromOne))
                        })
                    } else {
                        headline(&scenarios, &settings, &points, &base, REPORT_DATASET)
                    };
                    row.fitted_median.push(f);
                    row.predictive_median.push(p);
                }
                row
            })
            .collect()
    }
}

impl Assumption {
    /// Copies of the scenarios and the base coefficients with the value scaled, and the unscaled value.
    fn scaled(
        &self,
        dataset: &Dataset,
        scenarios: &BTreeMap<String, Scenario>,
        scale: f64,
    ) -> (BTreeMap<String, Scenario>, Coefficients, f64) {
        let mut scenarios = scenarios.clone();
        let mut base = Coefficients::default();
        let mut value = f64::NAN;
        match &self.apply {
            Change::Override { key, model } => {
                for s in scenarios.values_mut().filter(|s| model.as_ref().is_none_or(|m| &s.model.id == m)) {
                    let current = super::settings::read_override(s, key);
                    value = current;
                    // An override that cannot take the scaled value (acceptance at or above 1) keeps it.
                    let _ = apply_override(s, key, current * scale);
                }
            }
            Change::Coefficient(field) => {
                value = *field(&mut base);
                *field(&mut base) = value * scale;
            }
            Change::CardField { model, field } => {
                let mut scaled = dataset.clone();
                if let Some(card) = scaled.models.get_mut(model) {
                    value = scale_card_field(card, field, scale).unwrap_or(f64::NAN);
                }
                // Only this model's scenarios are resolved anew; the others stay as they are.
                let (resolved, _) = crate::report::sweep_scenarios(&scaled);
                for (id, s) in resolved.into_iter().filter(|(_, s)| &s.model.id == model) {
                    scenarios.insert(id, s);
                }
            }
        }
        (scenarios, base, value)
    }
}

/// Scales the value of the architecture field `field` of `card`; returns its value before, in SI units (`None`
/// when the card has no such quantity).
fn scale_card_field(card: &mut ModelFile, field: &str, scale: f64) -> Option<f64> {
    let mut arch = serde_json::to_value(&card.architecture).ok()?;
    let q = arch.get_mut(field)?;
    let before: Quantity = serde_json::from_value(q.clone()).ok()?;
    q["value"] = serde_json::json!(before.value * scale);
    card.architecture = serde_json::from_value(arch).ok()?;
    before.si()
}

/// Fitted median (all unflagged points) and pair-from-one predictive median (fit on one-machine points) of
/// one dataset; NaN where a question has no points.
fn headline(
    scenarios: &BTreeMap<String, Scenario>,
    settings: &BTreeMap<String, EngineSettings>,
    points: &[MeasuredPoint],
    base: &Coefficients,
    dataset: &str,
) -> (f64, f64) {
    let fitted = protocol_row(scenarios, settings, points, base, dataset, Question::Fitted);
    let pair = protocol_row(scenarios, settings, points, base, dataset, Question::PairFromOne);
    (median_ape(&fitted), median_ape(&pair))
}

/// A row's median error, NaN where it has none.
fn median_ape(r: &ProtocolRow) -> f64 {
    r.error.map_or(f64::NAN, |e| e.median_ape)
}

/// Which points a fit sees, or which it is judged on.
type PointFilter<'a> = Box<dyn Fn(&MeasuredPoint) -> bool + 'a>;

/// One protocol question for one dataset. A model with no one-machine point cannot be predicted from one
/// machine: its pair points are left out of `pair_from_one` (the report lists them per model).
fn protocol_row(
    scenarios: &BTreeMap<String, Scenario>,
    settings: &BTreeMap<String, EngineSettings>,
    points: &[MeasuredPoint],
    base: &Coefficients,
    dataset: &str,
    q: Question,
) -> ProtocolRow {
    let ours = |p: &MeasuredPoint| p.dataset == dataset && !p.is_flagged() && scenarios.contains_key(&p.scenario);
    // Points across four machines, and runs of an engine no profile models, are predicted, never fitted on:
    // every question holds them out (their own dataset's leave-one-out judges them), so a coefficient is never
    // bent to the crossing or the engine it is judged on.
    let fittable = MeasuredPoint::fittable;
    let with_single: std::collections::BTreeSet<&str> =
        points.iter().filter(|p| ours(p) && p.mode.machines() == 1).map(|p| p.scenario.as_str()).collect();
    let (fit_on, judge): (PointFilter, PointFilter) = match q {
        Question::Fitted => (Box::new(move |p: &MeasuredPoint| ours(p) && fittable(p)), Box::new(ours)),
        Question::PairFromOne => (
            Box::new(move |p: &MeasuredPoint| ours(p) && p.mode.machines() == 1),
            Box::new(move |p: &MeasuredPoint| {
                ours(p) && p.mode.machines() == 2 && with_single.contains(p.scenario.as_str())
            }),
        ),
        Question::LeaveOneOut => (
            Box::new(move |p: &MeasuredPoint| {
                p.dataset != dataset && !p.is_flagged() && scenarios.contains_key(&p.scenario) && fittable(p)
            }),
            Box::new(ours),
        ),
    };
    let train: Vec<MeasuredPoint> = points.iter().filter(|p| fit_on(p)).cloned().collect();
    let judged: Vec<MeasuredPoint> = points.iter().filter(|p| judge(p)).cloned().collect();
    // Runs sent at a rate are never fitted (flagged); the fitted and left-out questions predict them as open
    // loops beside the rest, for the open-loop targets.
    let open_loop: Vec<MeasuredPoint> = points
        .iter()
        .filter(|p| {
            q != Question::PairFromOne
                && p.dataset == dataset
                && p.open_loop.is_some()
                && scenarios.contains_key(&p.scenario)
        })
        .cloned()
        .collect();
    let missing = if judged.is_empty() {
        Some(match q {
            Question::PairFromOne => "no two-machine point of a setup that also has one-machine points".to_string(),
            _ => "no unflagged point".to_string(),
        })
    } else if train.is_empty() {
        Some("nothing to fit on".to_string())
    } else {
        None
    };
    if let Some(why) = missing {
        return ProtocolRow::missing(dataset, q, train.len(), why);
    }
    // Within a dataset, each engine build (the scenarios naming one engine profile) is fitted on its own, as
    // its profile is; leave-one-out fits one profile on everything else, as a user without measurements would.
    let groups: Vec<String> = if q == Question::LeaveOneOut {
        vec![String::new()]
    } else {
        let mut g: Vec<String> =
            train.iter().filter_map(|p| scenarios.get(&p.scenario)).map(|s| s.engine.clone()).collect();
        crate::stats::sort(&mut g);
        g.dedup();
        g
    };
    let engine_of = |p: &MeasuredPoint| scenarios.get(&p.scenario).map(|s| s.engine.as_str()).unwrap_or("");
    let (mut n, mut apes, mut ttft, mut tpot) = (0, Vec::new(), Vec::new(), Vec::new());
    let mut orders = ModeOrders::default();
    let mut held_out = Vec::new();
    let mut judged_all: Vec<crate::report::ReportRow> = Vec::new();
    let mut kept_up_all: Vec<crate::report::ReportRow> = Vec::new();
    for g in &groups {
        let in_group = |p: &MeasuredPoint| g.is_empty() || engine_of(p) == g;
        let train_g: Vec<MeasuredPoint> = train.iter().filter(|p| in_group(p)).cloned().collect();
        let judged_g: Vec<MeasuredPoint> = judged.iter().chain(&open_loop).filter(|p| in_group(p)).cloned().collect();
        if train_g.is_empty() || judged_g.is_empty() {
            continue;
        }
        let cal = fit_across_engines(base, scenarios, &train_g, PRIOR_WEIGHT, settings);
        n += cal.points_used;
        // Each judged scenario predicts with the fitted coefficients under its own build's settings.
        let own: BTreeMap<String, Coefficients> = judged_g
            .iter()
            .filter_map(|p| {
                EngineSettings::of_scenario(settings, &p.scenario, &cal.coefficients).map(|k| (p.scenario.clone(), k))
            })
            .collect();
        let report = build_for(scenarios, &judged_g, cal, &|p| q == Question::Fitted && fit_on(p), &own);
        let role = if q == Question::Fitted { PointRole::Fitted } else { PointRole::Predicted };
        let judged_rows = || report.rows.iter().filter(|r| r.role == role);
        apes.extend(judged_rows().map(|r| r.ape));
        ttft.extend(judged_rows().filter_map(|r| r.ttft_ape()));
        tpot.extend(judged_rows().filter_map(|r| r.tpot_ape()));
        orders.add(judged_rows());
        judged_all.extend(judged_rows().cloned());
        let kept_up = || report.rows.iter().filter(|r| r.open_loop_kept_up == Some(true));
        kept_up_all.extend(kept_up().cloned());
        if q != Question::Fitted {
            held_out.extend(held_out_points(scenarios, q, judged_rows(), kept_up()));
        }
    }
    let error = ErrorStats::of(&apes);
    let open_tok: Vec<f64> = kept_up_all.iter().map(|r| r.ape).collect();
    let open_ttft: Vec<f64> = kept_up_all.iter().filter_map(|r| r.median_ttft_ape()).collect();
    let readings = super::miss_reading::readings(&judged_all, &kept_up_all);
    ProtocolRow {
        dataset: dataset.into(),
        question: q,
        fitted_points: n,
        worst_ape: apes.iter().copied().reduce(f64::max),
        missing: error.is_none().then(|| "no engine build has both points to fit and points to judge".to_string()),
        error,
        target: None,
        met: None,
        ttft: ErrorStats::of(&ttft),
        tpot: ErrorStats::of(&tpot),
        mode_order: (orders.setups > 0).then_some(orders),
        mode_ratios: ModeRatios::of(&judged_all),
        open_loop: ErrorStats::of(&open_tok).map(|throughput| OpenLoopErrors {
            throughput,
            worst_throughput_ape: open_tok.iter().copied().fold(0.0, f64::max),
            median_ttft: ErrorStats::of(&open_ttft),
            worst_median_ttft_ape: open_ttft.iter().copied().reduce(f64::max),
        }),
        checks: Vec::new(),
        readings,
        held_out,
    }
}

/// The held-out points of a question's judged rows (throughput, and the mean TTFT and TPOT a source states) and
/// of its open-loop runs the machine kept up with (the median TTFT a source states).
fn held_out_points<'a>(
    scenarios: &'a BTreeMap<String, Scenario>,
    q: Question,
    judged: impl Iterator<Item = &'a crate::report::ReportRow> + 'a,
    kept_up: impl Iterator<Item = &'a crate::report::ReportRow> + 'a,
) -> impl Iterator<Item = HeldOutPoint> + 'a {
    let point =
        move |r: &crate::report::ReportRow, metric: BandMetric, stated: Stated, measured: f64, predicted: f64| {
            let s = scenarios.get(&r.scenario)?;
            Some(HeldOutPoint {
                question: q,
                dataset: r.dataset.clone(),
                hardware: s.hardware.id.clone(),
                engine: s.engine.clone(),
                moe: is_moe(&s.model),
                mode: r.mode,
                metric,
                stated,
                measured,
                predicted,
            })
        };
    let closed = judged.flat_map(move |r| {
        [
            point(r, BandMetric::Throughput, Stated::Mean, r.measured_tok_s, r.predicted_tok_s),
            r.measured_ttft_s.and_then(|m| point(r, BandMetric::Ttft, Stated::Mean, m, r.predicted_ttft_s)),
            r.measured_tpot_s.and_then(|m| point(r, BandMetric::Tpot, Stated::Mean, m, r.predicted_tpot_s)),
        ]
    });
    let open = kept_up.filter_map(move |r| match (r.measured_median_ttft_s, r.predicted_median_ttft_s) {
        (Some(m), Some(p)) => point(r, BandMetric::Ttft, Stated::Median, m, p),
        _ => None,
    });
    closed.flatten().chain(open)
}

/// A frozen target other than the headline throughput one, judged on what the row's fits gave.
fn target_check(row: &ProtocolRow, t: &ProtocolTarget) -> TargetCheck {
    let target = Target::of(t);
    let none_kept_up = || Some("no open-loop run the machine kept up with".to_string());
    let (error, missing) = match (t.metric, t.points) {
        (Metric::Throughput, Some(PointSet::OpenLoopKeptUp)) => match row.open_loop {
            Some(o) => (Some(o.throughput), None),
            None => (None, none_kept_up()),
        },
        (Metric::Ttft, Some(PointSet::OpenLoopKeptUp)) => match row.open_loop.and_then(|o| o.median_ttft) {
            Some(e) => (Some(e), None),
            None => (None, none_kept_up()),
        },
        (_, Some(PointSet::OpenLoopKeptUp)) => {
            (None, Some(format!("no {} is compared on open-loop runs", t.metric.name())))
        }
        (Metric::ModeOrder, None) => match &row.mode_order {
            Some(o) if o.misranked.is_empty() => (None, Some(format!("all {} setups ranked as measured", o.setups))),
            Some(o) => (
                None,
                Some(format!("{} of {} setups misranked: {}", o.misranked.len(), o.setups, o.misranked.join("; "))),
            ),
            None => (None, Some("no judged setup measured in two modes".to_string())),
        },
        (Metric::ModeRatio, None) => match &row.mode_ratios {
            Some(m) => (ErrorStats::of(&m.apes), Some(m.ratios.join("; "))),
            None => (None, Some("no judged setup measured on one machine and in another mode".to_string())),
        },
        (Metric::Throughput, None) => (row.error, row.missing.clone()),
        (Metric::Ttft, None) => (row.ttft, row.ttft.is_none().then(|| "no judged point states a TTFT".to_string())),
        (Metric::Tpot, None) => (row.tpot, row.tpot.is_none().then(|| "no judged point states a TPOT".to_string())),
    };
    // A latency over every judged point keeps no worst point: a target bounding it is not met unproven.
    let worst_ape = match (t.metric, t.points) {
        (Metric::Throughput, None) => row.worst_ape,
        (Metric::Throughput, Some(_)) => row.open_loop.map(|o| o.worst_throughput_ape),
        (Metric::Ttft, Some(_)) => row.open_loop.and_then(|o| o.worst_median_ttft_ape),
        (Metric::ModeRatio, None) => row.mode_ratios.as_ref().and_then(|m| m.apes.iter().copied().reduce(f64::max)),
        _ => None,
    };
    // A pass/fail target: met when every judged setup ranks its modes as measured.
    let met = match t.metric {
        Metric::ModeOrder => row.mode_order.as_ref().map(|o| o.misranked.is_empty()),
        _ => error.map(|e| target.met_by(&e, worst_ape)),
    };
    // Only the report prints why (`readings`): a build that only predicts says nothing more.
    let reading = match (met, TargetQuantity::of_target(t.metric, t.points)) {
        (Some(false), Some(q)) if !cfg!(feature = "prechecked") => row.reading(q),
        _ => None,
    };
    TargetCheck { metric: t.metric, points: t.points, met, target, error, worst_ape, missing, reading }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sensitivity row of the step's token budget scales what the GB300 engines run with (vLLM's 8192 on a
    /// 252 GB GPU), not the 0 that stands for "the engine's default" (scaled, it would stay the default).
    #[test]
    fn the_chunk_sensitivity_scales_the_budget_the_engines_run_with() {
        let mut k = Coefficients::default();
        assert_eq!(*chunk_on_calibration_gpus(&mut k), 8192.0);
        *chunk_on_calibration_gpus(&mut k) *= 0.5;
        assert_eq!(k.prefill_chunk_tokens, 4096.0);
        let mut stated = Coefficients { prefill_chunk_tokens: 2048.0, ..Coefficients::default() };
        assert_eq!(*chunk_on_calibration_gpus(&mut stated), 2048.0);
    }

    #[test]
    fn question_names_match_the_schema() {
        let names: Vec<&str> = Question::ALL.iter().map(|q| q.name()).collect();
        assert_eq!(names, crate::dataset::schema::PROTOCOL_QUESTIONS);
    }
}

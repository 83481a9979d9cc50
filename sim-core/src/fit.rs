//! Calibration: fits the few free coefficients to published points with Nelder-Mead on log error.
//!
//! Free: HBM and slow-path efficiency, compute efficiency, step, per-sequence and draft-pass overheads (shared
//! by every model on the hardware), the TP per-call latency scale (only when pair points are fitted), and one
//! draft acceptance per model that has fitted points (a team's runs that measured it keep the measurement:
//! `calibrate_team`). Flagged points (dips, other checkpoints, capped or rate-limited runs) never enter.

use crate::dataset::MeasuredPoint;
use crate::model::{predict, Coefficients, EngineSettings};
use crate::scenario::Scenario;
use crate::Mode;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which points the fit may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FitSet {
    /// Every unflagged point of every mode.
    All,
    /// Only single-station points (plus the hardware and fabric measurements the specs hold); pair points
    /// are then predictions.
    Single,
}

impl FitSet {
    pub fn includes(self, p: &MeasuredPoint) -> bool {
        !p.is_flagged() && (self == FitSet::All || p.mode == Mode::Single)
    }

    pub fn describe(self) -> &'static str {
        match self {
            FitSet::All => "all unflagged published points",
            FitSet::Single => "unflagged single-station points only",
        }
    }
}

/// The fitted coefficients and how the fit went.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Calibration {
    pub set: FitSet,
    pub coefficients: Coefficients,
    pub points_used: usize,
    /// Root-mean-square log error over the fitted points.
    pub rms_log_error: f64,
    pub evaluations: usize,
}

impl Calibration {
    pub fn set_description(&self) -> &'static str {
        self.set.describe()
    }
}

const N_GLOBAL: usize = 8;
/// Evaluations of the step loop that polish the steady-state optimum.
const POLISH_EVALUATIONS: usize = 300;

/// Search rounds after the first, each from the last optimum, while a round lowers the objective by more than
/// `ROUND_GAIN` of it (the fit converges in two or three on the report's data).
const MAX_EXTRA_ROUNDS: usize = 4;
const ROUND_GAIN: f64 = 1e-3;

/// Index of the compute efficiency among the shared coordinates.
const COMPUTE: usize = 2;
/// Index of the TP latency scale among the shared coordinates.
const TP_SCALE: usize = 6;
/// Indices of the per-sequence costs of every model and of models that draft.
const PER_SEQ: usize = 4;
const SPEC_PER_SEQ: usize = 5;
/// Index of the per-layer cost among the shared coordinates.
const PER_LAYER: usize = 7;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn logit(y: f64) -> f64 {
    let y = y.clamp(1e-6, 1.0 - 1e-6);
    (y / (1.0 - y)).ln()
}

/// The physically plausible range of each shared engine coefficient, and why. The fit searches the wider range
/// of what is physically possible (an efficiency in (0, 1], an overhead from a microsecond to a second); a value
/// it leaves outside the plausible range (or at its edge) means a cost the physics lacks, and `implausible` says so
/// in every report (the range is never widened to hide it).
pub struct Plausible {
    pub name: &'static str,
    pub low: f64,
    pub high: f64,
    /// Searched on a log scale (overheads spanning decades) rather than linearly.
    pub log: bool,
    pub why: &'static str,
}

impl Plausible {
    /// The interval the fit searches: what is physically possible, wider than what is plausible.
    fn search(&self) -> (f64, f64) {
        if self.log {
            (self.low / 100.0, self.high * 100.0)
        } else {
            (0.05, 1.0)
        }
    }
}

pub const PLAUSIBLE: [Plausible; N_GLOBAL] = [
    Plausible {
        name: "hbm_efficiency",
        low: 0.5,
        high: 0.95,
        log: false,
        why: "streaming kernels reach 0.85-0.93 of the HBM spec peak (STREAM-style copies on H100/H200, reported \
              elsewhere); above 0.95 the bytes a step reads are overcounted",
    },
    Plausible {
        name: "slow_efficiency",
        low: 0.5,
        high: 0.95,
        log: false,
        why: "GH200 C2C copies reach 363-381 GB/s of a 400-450 GB/s path and STREAM 323-348 GB/s of 396 GB/s \
              LPDDR5x (DOMAIN.md 3): 0.8-0.9",
    },
    Plausible {
        name: "compute_efficiency",
        low: 0.3,
        high: 0.9,
        log: false,
        why: "dense GEMMs in serving engines reach 0.3-0.9 of the spec tensor peak; \
              below it a compute cost is missing",
    },
    Plausible {
        name: "step_overhead_s",
        low: 1e-4,
        high: 10e-3,
        log: true,
        why: "a step's scheduling, input preparation, launches and sampling: 0.1-10 ms in vLLM (V1 moved the \
              scheduler off the GPU's critical path to keep it to a few ms)",
    },
    Plausible {
        name: "per_seq_overhead_s",
        low: 1e-6,
        high: 100e-6,
        log: true,
        why: "per running request per step (block table, sampling, detokenisation): microseconds to tens of \
              microseconds of CPU work in vLLM",
    },
    Plausible {
        name: "spec_per_seq_overhead_s",
        low: 1e-6,
        high: 5e-3,
        log: true,
        why: "speculative decoding's per-request bookkeeping per step: vllm#15029 finds data processing around the \
              MTP model dominating large-batch steps; vllm-ascend#16638 measures MTP steps at 120-150 ms against \
              48-59 ms without, at 12-16 requests (about 5 ms per request)",
    },
    Plausible {
        name: "tp_latency_scale",
        low: 0.5,
        high: 4.0,
        log: true,
        why: "the link's per-call latency inside a step, within a factor of two either way of NCCL's measured \
              small-message latency, up to 4x for synchronisation stalls",
    },
    Plausible {
        name: "per_layer_overhead_s",
        low: 2e-6,
        high: 300e-6,
        log: true,
        why: "a decoder layer's ten to twenty kernels, each with a launch, ramp-up and drain of about a \
              microsecond inside a CUDA graph and tens of microseconds of eager PyTorch dispatch",
    },
];

impl Plausible {
    fn decode(&self, x: f64) -> f64 {
        let (lo, hi) = self.search();
        if self.log {
            (lo.ln() + (hi.ln() - lo.ln()) * sigmoid(x)).exp()
        } else {
            lo + (hi - lo) * sigmoid(x)
        }
    }

    fn encode(&self, v: f64) -> f64 {
        let (lo, hi) = self.search();
        if self.log {
            logit((v.max(1e-12).ln() - lo.ln()) / (hi.ln() - lo.ln()))
        } else {
            logit((v - lo) / (hi - lo))
        }
    }

    /// Where `v` sits in the plausible range: 0 at the low edge, 1 at the high edge (outside: below 0 or
    /// above 1).
    pub fn position(&self, v: f64) -> f64 {
        if self.log {
            (v.max(1e-12).ln() - self.low.ln()) / (self.high.ln() - self.low.ln())
        } else {
            (v - self.low) / (self.high - self.low)
        }
    }
}

/// A fitted coefficient outside (or at the edge of) its plausible range: a cost the physics lacks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implausible {
    pub name: &'static str,
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// `below` or `above` the plausible range, or inside it `at the low edge of` or `at the high edge of` it
    /// (within 2% of the range).
    pub side: &'static str,
    pub why: &'static str,
}

/// The shared coefficients of `k` that lie outside their plausible range or within 2% of its edge.
pub fn implausible(k: &Coefficients) -> Vec<Implausible> {
    PLAUSIBLE
        .iter()
        .zip(global_values(k))
        // A held value is not fitted: nothing presses it against an edge.
        .filter(|(p, _)| !k.held_at_prior.iter().any(|h| h == p.name))
        .filter_map(|(p, v)| {
            let pos = p.position(v);
            // Outside the range, or inside it within 2% of an edge (a fit pressing on the edge is the same sign).
            let side = if pos < 0.0 {
                "below"
            } else if pos <= 0.02 {
                "at the low edge of"
            } else if pos > 1.0 {
                "above"
            } else if pos >= 0.98 {
                "at the high edge of"
            } else {
                return None;
            };
            Some(Implausible { name: p.name, value: v, low: p.low, high: p.high, side, why: p.why })
        })
        .collect()
}

fn global_values(k: &Coefficients) -> [f64; N_GLOBAL] {
    [
        k.hbm_efficiency,
        k.slow_efficiency,
        k.compute_efficiency,
        k.step_overhead_s,
        k.per_seq_overhead_s,
        k.spec_per_seq_overhead_s,
        k.tp_latency_scale,
        k.per_layer_overhead_s,
    ]
}

/// Maps unconstrained search coordinates to coefficients inside their plausible ranges.
fn decode(x: &[f64], base: &Coefficients, models: &[String], spilling: &[String]) -> Coefficients {
    let mut k = base.clone();
    let v: Vec<f64> = PLAUSIBLE.iter().zip(x).map(|(p, x)| p.decode(*x)).collect();
    k.hbm_efficiency = v[0];
    k.slow_efficiency = v[1];
    k.compute_efficiency = v[2];
    k.step_overhead_s = v[3];
    k.per_seq_overhead_s = v[4];
    k.spec_per_seq_overhead_s = v[5];
    k.tp_latency_scale = v[6];
    k.per_layer_overhead_s = v[7];
    for (i, m) in models.iter().enumerate() {
        k.acceptance.insert(m.clone(), 0.3 + 0.65 * sigmoid(x[N_GLOBAL + i]));
    }
    for (i, m) in spilling.iter().enumerate() {
        k.spilled_routing_share.insert(m.clone(), 0.001 + 1.999 * sigmoid(x[N_GLOBAL + models.len() + i]));
    }
    k
}

fn encode(k: &Coefficients, models: &[String], spilling: &[String], priors: &BTreeMap<String, f64>) -> Vec<f64> {
    let mut x: Vec<f64> = PLAUSIBLE.iter().zip(global_values(k)).map(|(p, v)| p.encode(v)).collect();
    for m in models {
        let a = k.acceptance.get(m).or(priors.get(m)).copied().unwrap_or(0.7);
        x.push(logit((a - 0.3) / 0.65));
    }
    for m in spilling {
        let s = k.spilled_routing_share.get(m).copied().unwrap_or(1.0);
        x.push(logit((s - 0.001) / 1.999));
    }
    x
}

/// Cauchy loss on log error (scale 0.3, about 35%): points the physics cannot explain (a collapse the text
/// attributes to the KV cache running out, a baseline from older software) pull the fit less than a square would.
pub fn robust_loss(log_err: f64) -> f64 {
    (1.0 + (log_err / 0.3).powi(2)).ln()
}

/// Log error of one prediction; a zero prediction for a measured point costs as much as being 1000x off.
pub fn log_error(predicted: f64, measured: f64) -> f64 {
    if predicted > 0.0 && predicted.is_finite() {
        (predicted / measured).ln()
    } else {
        (1e-3_f64).ln()
    }
}

/// Fits the coefficients on the points `set` admits. `scenarios` maps scenario id to its scenario (points name
/// theirs).
pub fn fit(scenarios: &BTreeMap<String, Scenario>, points: &[MeasuredPoint], set: FitSet) -> Calibration {
    fit_from(&Coefficients::default(), scenarios, points, set, REPORT_PRIOR_WEIGHT)
}

/// The prior pull of the report's own fit (`fit`).
pub const REPORT_PRIOR_WEIGHT: f64 = 1e-3;

/// Fits starting from (and regularised toward) `base`: a team calibrating on its own sweep starts from the
/// coefficients the published data gave.
/// `prior_weight` pulls each free coordinate toward `base`; a small sweep needs a stronger pull than the report.
pub fn fit_from(
    base: &Coefficients,
    scenarios: &BTreeMap<String, Scenario>,
    points: &[MeasuredPoint],
    set: FitSet,
    prior_weight: f64,
) -> Calibration {
    fit_fixing(base, scenarios, points, set, prior_weight, &|_, _| None, None)
}

/// How the points of one scenario (by id) are predicted from the fitted coefficients `k`: `None` takes `k`
/// itself. Only the protocol's fits across engine builds lay anything over `k`, so a team's calibration (in
/// the browser too) carries none of that code.
type ScenarioCoefficients<'a> = &'a dyn Fn(&str, &Coefficients) -> Option<Coefficients>;

/// `fit_from` over points of several engine builds: each scenario's points are predicted with the fitted
/// coefficients under its own build's `EngineSettings` (keyed by scenario id; a scenario without an entry
/// takes `base`'s), so one fit shares what the builds have in common (efficiencies, overheads) and never
/// what each states for itself (admission, memory shares). Calibration's coefficients carry `base`'s settings.
pub fn fit_across_engines(
    base: &Coefficients,
    scenarios: &BTreeMap<String, Scenario>,
    points: &[MeasuredPoint],
    prior_weight: f64,
    settings: &BTreeMap<String, EngineSettings>,
) -> Calibration {
    let own = |scenario: &str, k: &Coefficients| EngineSettings::of_scenario(settings, scenario, k);
    fit_fixing(base, scenarios, points, FitSet::All, prior_weight, &own, None)
}

/// `fit_from`, or a team's calibration (`team`: the models whose draft acceptance it measured, held at `base`'s
/// value instead of fitted: a measured acceptance is not a free coefficient; see `calibrate_team`).
fn fit_fixing(
    base: &Coefficients,
    scenarios: &BTreeMap<String, Scenario>,
    points: &[MeasuredPoint],
    set: FitSet,
    prior_weight: f64,
    own: ScenarioCoefficients,
    team: Option<&[String]>,
) -> Calibration {
    let fixed_acceptance = team.unwrap_or_default();
    let used: Vec<&MeasuredPoint> =
        points.iter().filter(|p| set.includes(p) && scenarios.contains_key(&p.scenario)).collect();
    let mut models: Vec<String> = used.iter().map(|p| p.model.clone()).collect();
    crate::stats::sort(&mut models);
    models.dedup();
    models.retain(|m| !fixed_acceptance.contains(m));
    let priors: BTreeMap<String, f64> =
        crate::stats::map_of(scenarios.values().map(|s| (s.model.id.clone(), s.model.draft_acceptance)));
    let base = base.clone();
    // Models whose fitted points include an engine that spills weights to CPU memory.
    let mut spilling: Vec<String> = used
        .iter()
        .filter(|p| {
            let s = &scenarios[&p.scenario];
            let tp = if p.mode == Mode::Tp2 { 2.0 } else { 1.0 } * s.hardware.gpus.max(1.0);
            let k = own(&p.scenario, &base);
            crate::model::bandwidth::place(&s.model, &s.hardware, tp, k.as_ref().unwrap_or(&base)).spilled_bytes() > 0.0
        })
        .map(|p| p.model.clone())
        .collect();
    spilling.dedup();
    let has_pair = used.iter().any(|p| p.mode == Mode::Tp2);
    // The per-sequence cost of every model and the extra one of models that draft are told apart only by
    // points of both kinds: where every fitted model drafts (the GB300 report: MTP or EAGLE3 on all five), the
    // two are one sum, and the plain cost stays at its prior while the drafting one carries the sum (vLLM's
    // own profiles put large-batch speculative steps' extra time in the drafter's bookkeeping: vllm#15029).
    let drafts = |p: &&MeasuredPoint| scenarios[&p.scenario].model.draft_tokens > 0.0;
    let has_plain = used.iter().any(|p| !drafts(p));
    let has_drafting = used.iter().any(drafts);
    // A per-layer cost is told apart from the per-step one only by models of different depths: where every
    // fitted model has the same layer count (one model's sweep), the two are one sum per step, and the
    // per-layer cost stays at its prior while the step's carries the rest.
    let depth = |p: &&MeasuredPoint| scenarios[&p.scenario].model.layers;
    let has_depths = used.first().is_some_and(|first| used.iter().any(|p| depth(p) != depth(first)));
    // Where every fitted point's engine runs its GEMMs at its machine's kernel table (`gemm_from_kernel_table`,
    // `spec::GemmCurves`), the measured curve is the compute efficiency: the scalar stays at 1 (the curve as
    // measured) rather than absorbing other costs.
    let measured_gemms = !used.is_empty()
        && used.iter().all(|p| {
            let kp = own(&p.scenario, &base);
            kp.as_ref().unwrap_or(&base).gemms_at_table_curve(&scenarios[&p.scenario].hardware)
        });
    let hold = |x: &mut [f64]| {
        if measured_gemms {
            x[COMPUTE] = 0.0;
        }
        if !has_pair {
            // No pair point can inform the TP latency scale: keep the link's own latency.
            x[TP_SCALE] = PLAUSIBLE[TP_SCALE].encode(1.0);
        }
        if !has_plain {
            x[PER_SEQ] = PLAUSIBLE[PER_SEQ].encode(base.per_seq_overhead_s);
        }
        if !has_drafting {
            x[SPEC_PER_SEQ] = PLAUSIBLE[SPEC_PER_SEQ].encode(base.spec_per_seq_overhead_s);
        }
        if !has_depths {
            x[PER_LAYER] = PLAUSIBLE[PER_LAYER].encode(base.per_layer_overhead_s);
        }
    };
    // Fewer than two points per free coordinate cannot pin them all: pull as hard as a team's small sweep does.
    let free = N_GLOBAL + models.len() + spilling.len();
    let prior_weight = if used.len() < 2 * free { prior_weight.max(TEAM_PRIOR_WEIGHT) } else { prior_weight };
    // The objective on a model of output tok/s: the step loop itself, or its closed-form steady state.
    let objective_on = |x: &[f64], model: &dyn Fn(&Scenario, &Coefficients, &MeasuredPoint) -> f64| -> f64 {
        let mut x = x.to_vec();
        hold(&mut x);
        let k = decode(&x, &base, &models, &spilling);
        let sum: f64 = used
            .iter()
            .map(|p| {
                let kp = own(&p.scenario, &k);
                robust_loss(log_error(model(&scenarios[&p.scenario], kp.as_ref().unwrap_or(&k), p), p.output_tok_s))
            })
            .sum();
        // A weak pull toward the priors keeps coefficients the points cannot see from drifting.
        let reg: f64 =
            x.iter().zip(encode(&base, &models, &spilling, &priors)).map(|(a, b)| (a - b).powi(2)).sum::<f64>()
                * prior_weight;
        sum / used.len().max(1) as f64 + reg
    };
    let stepped = |s: &Scenario, k: &Coefficients, p: &MeasuredPoint| {
        predict(s, k, p.mode, p.isl, p.osl, p.concurrency).output_tok_s
    };
    let steady = |s: &Scenario, k: &Coefficients, p: &MeasuredPoint| match s.load {
        crate::dataset::schema::ScenarioLoad::ClosedLoop => {
            crate::model::steady::output_tok_s(s, k, p.mode, p.isl, p.osl, p.concurrency)
        }
        // A batch is one run of the step loop, not a steady state: the closed form would search on prefill
        // the batch window never sees, and on no queue where one batch of prompts waits for the pool.
        crate::dataset::schema::ScenarioLoad::Batch | crate::dataset::schema::ScenarioLoad::AllAtOnce => {
            stepped(s, k, p)
        }
    };
    let x0 = encode(&base, &models, &spilling, &priors);
    // Search on the closed-form steady state (microseconds a point; it tracks the step loop within a few
    // percent wherever the KV pool does not bind; batch runs have no steady state and use the loop), then
    // polish on the step loop, which is what predicts.
    // One round: a wide search and a restart on the steady state (a restart escapes the simplex collapsing
    // early, a known Nelder-Mead weakness), then the polish on the loop.
    let round = |from: &[f64], step: f64| {
        let (b1, e1) = nelder_mead(&|x| objective_on(x, &steady), from, step, 1500);
        let (b2, e2) = nelder_mead(&|x| objective_on(x, &steady), &b1, 0.25, 1000);
        let (b3, e3) = nelder_mead(&|x| objective_on(x, &stepped), &b2, 0.05, POLISH_EVALUATIONS);
        (b3, e1 + e2 + e3)
    };
    // A team's few points far from the published setup leave basins far apart, and which one a search from the
    // published optimum falls into moves with the published fit (the vLLM samples against GLM-5.2's scenario:
    // 9% or 68% median error on successive refits): a team's fit searches from several starts (`team_starts`).
    let starts = if team.is_some() {
        let mut starts = team_starts(&x0, encode(&Coefficients::default(), &models, &spilling, &priors));
        // Where experts spill to CPU memory, the share of routing that reaches them sets how a sweep scales with
        // concurrency, and its two ends are two basins: the defaults start at uniform routing, so one more start
        // sits at the low end (`LOW_SPILL_START`; the vLLM samples against GLM-5.2's scenario: 68% from the
        // other starts, 9% from this one).
        if !spilling.is_empty() {
            let low = Coefficients {
                spilled_routing_share: spilling.iter().map(|m| (m.clone(), LOW_SPILL_START)).collect(),
                ..Coefficients::default()
            };
            starts.push((encode(&low, &models, &spilling, &priors), 0.5));
        }
        starts
    } else {
        vec![(x0.clone(), 0.5)]
    };
    let (mut best, mut f_best, mut evals) =
        lowest_of_starts(&starts, &|from, step| round(from, step), &|x| objective_on(x, &stepped));
    for _ in 0..MAX_EXTRA_ROUNDS {
        let (b, e) = round(&best, 0.25);
        let f = objective_on(&b, &stepped);
        evals += e + 1;
        if f < f_best - ROUND_GAIN * f_best.abs() {
            best = b;
            f_best = f;
        } else {
            break;
        }
    }
    hold(&mut best);
    let mut k = decode(&best, &base, &models, &spilling);
    k.held_at_prior = [
        (measured_gemms, "compute_efficiency"),
        (!has_plain, "per_seq_overhead_s"),
        (!has_drafting, "spec_per_seq_overhead_s"),
        (!has_depths, "per_layer_overhead_s"),
    ]
    .into_iter()
    .filter(|(held, _)| *held)
    .map(|(_, name)| name.to_string())
    .collect();
    // A held coefficient keeps its prior to the bit: through the search's coordinates it comes back a unit in the
    // last place off (20 us as 19.999999999999998 us), a number no one stated.
    for (p, prior) in PLAUSIBLE.iter().zip(global_values(&base)) {
        if k.held_at_prior.iter().any(|h| h == p.name) {
            let _ = k.set_named(p.name, prior);
        }
    }
    // The kernel table's curve is the whole GEMM efficiency (`Coefficients::gemms_at_table_curve`): no step reads
    // the scalar, which the profile states as 1, the curve as measured.
    if measured_gemms {
        k.compute_efficiency = 1.0;
    }
    let rms = (used
        .iter()
        .map(|p| {
            let kp = own(&p.scenario, &k);
            log_error(
                predict(&scenarios[&p.scenario], kp.as_ref().unwrap_or(&k), p.mode, p.isl, p.osl, p.concurrency)
                    .output_tok_s,
                p.output_tok_s,
            )
            .powi(2)
        })
        .sum::<f64>()
        / used.len().max(1) as f64)
        .sqrt();
    Calibration { set, coefficients: k, points_used: used.len(), rms_log_error: rms, evaluations: evals }
}

/// How a scenario's coefficients were calibrated on a team's own single-machine measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamCalibration {
    pub coefficients: Coefficients,
    /// The measured points the fit used.
    pub points: Vec<MeasuredPoint>,
    /// Error of the calibrated model on those points.
    pub stats: crate::stats::ErrorStats,
    /// The draft acceptance the points measured (vLLM's spec-decode counters), used instead of a fitted one.
    pub measured_acceptance: Option<crate::dataset::MeasuredAcceptance>,
    /// Evaluations of the objective the fit took (all its starts and rounds).
    pub evaluations: usize,
}

/// A team's sweep is small: the fit is pulled harder toward the published calibration than the report's own.
pub const TEAM_PRIOR_WEIGHT: f64 = 0.05;

/// Calibrates on a team's measured points (what `sim-core calibrate` and the planner page both run): every
/// unflagged single-machine point is taken as the scenario's model, whatever id it was recorded under, and the
/// free coefficients are fitted from `base` on those points alone.
pub fn calibrate_team(
    base: &Coefficients,
    s: &Scenario,
    measured: &[MeasuredPoint],
) -> Result<TeamCalibration, String> {
    let points: Vec<MeasuredPoint> = measured
        .iter()
        .filter(|p| p.mode == Mode::Single && !p.is_flagged())
        .cloned()
        .map(|mut p| {
            p.model = s.model.id.clone();
            p.scenario = s.id.clone();
            p
        })
        .collect();
    if points.is_empty() {
        return Err("no unflagged single-machine points in the measurements".into());
    }
    let scenarios = BTreeMap::from([(s.id.clone(), s.clone())]);
    // When the runs carry vLLM's speculative decoding counters, the draft acceptance is measured,
    // not a coefficient: it is set to the pooled measurement (converted from acceptance length to the
    // model's per-token probability, `dataset::measured_acceptance`) and left out of the free coordinates, so
    // the other coefficients cannot trade against it. Without counters it is fitted as before.
    let measured_acceptance = crate::dataset::measured_acceptance(&points);
    let mut base = base.clone();
    let mut fixed = Vec::new();
    if let Some(m) = measured_acceptance {
        base.acceptance.insert(s.model.id.clone(), m.per_token);
        fixed.push(s.model.id.clone());
    } else if s.model.draft_tokens <= 0.0 {
        // A model that drafts nothing has no acceptance for the points to inform: it is no free coordinate.
        fixed.push(s.model.id.clone());
    }
    let fit = fit_fixing(&base, &scenarios, &points, FitSet::Single, TEAM_PRIOR_WEIGHT, &|_, _| None, Some(&fixed));
    let (coefficients, evaluations) = (fit.coefficients, fit.evaluations);
    let apes: Vec<f64> = points
        .iter()
        .map(|p| {
            crate::stats::ape(
                predict(s, &coefficients, p.mode, p.isl, p.osl, p.concurrency).output_tok_s,
                p.output_tok_s,
            )
        })
        .collect();
    let stats = crate::stats::ErrorStats::of(&apes).ok_or("no points to measure the fit on")?;
    Ok(TeamCalibration { coefficients, points, stats, measured_acceptance, evaluations })
}

/// The spilled-routing share a team's fit also starts from: a tenth of uniform routing, near the low end of its
/// search range (0.001 to 2), where the hot experts stay in HBM.
const LOW_SPILL_START: f64 = 0.1;

/// Where a team's calibration searches from (a point and its simplex size): the published optimum `x0`, as the
/// report's fit always did, with the usual simplex and one three times as wide, and `defaults`, the engine's
/// default coefficients with the model cards' acceptances, where the report's own fit starts (fixed in code, so
/// this start does not move as the published fit does; left out where it is `x0`). Every start has the same
/// objective and priors. Each costs one round (`fit_fixing`): three rounds and at most four more from the best.
fn team_starts(x0: &[f64], defaults: Vec<f64>) -> Vec<(Vec<f64>, f64)> {
    let mut starts = vec![(x0.to_vec(), 0.5), (x0.to_vec(), 1.5)];
    if defaults != x0 {
        starts.push((defaults, 0.5));
    }
    starts
}

/// A search from a start and a simplex size: the point it found and the evaluations it took.
type Search<'a> = &'a dyn Fn(&[f64], f64) -> (Vec<f64>, usize);

/// Runs `search` from each start (a point and its simplex size) in order and keeps the result of lowest `loss`
/// (the earlier on a tie, so the answer is the same on every run); returns it, its loss and the evaluations
/// used (one of `loss` per start on top of the searches').
fn lowest_of_starts(
    starts: &[(Vec<f64>, f64)],
    search: Search,
    loss: &dyn Fn(&[f64]) -> f64,
) -> (Vec<f64>, f64, usize) {
    let mut best: Option<(Vec<f64>, f64)> = None;
    let mut evals = 0;
    for (from, step) in starts {
        let (x, e) = search(from, *step);
        let f = loss(&x);
        evals += e + 1;
        // NaN never wins: a start whose loss is not a number is passed over.
        if best.as_ref().is_none_or(|(_, b)| f < *b || b.is_nan()) {
            best = Some((x, f));
        }
    }
    let (x, f) = best.unwrap_or_default();
    (x, f, evals)
}

/// Minimises `f` from `x0` with the Nelder-Mead simplex method; returns the best point and evaluations used.
pub fn nelder_mead(f: &dyn Fn(&[f64]) -> f64, x0: &[f64], step: f64, max_evals: usize) -> (Vec<f64>, usize) {
    let n = x0.len();
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    simplex.push((x0.to_vec(), f(x0)));
    for i in 0..n {
        let mut x = x0.to_vec();
        x[i] += step;
        let v = f(&x);
        simplex.push((x, v));
    }
    let mut evals = n + 1;
    let nan_last =
        |a: &(Vec<f64>, f64), b: &(Vec<f64>, f64)| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Greater);
    while evals < max_evals {
        crate::stats::sort_by(&mut simplex, nan_last);
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if (worst - best).abs() < 1e-10 * (1.0 + best.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n).map(|j| simplex[..n].iter().map(|s| s.0[j]).sum::<f64>() / n as f64).collect();
        let along =
            |t: f64| -> Vec<f64> { (0..n).map(|j| centroid[j] + t * (simplex[n].0[j] - centroid[j])).collect() };
        let xr = along(-1.0);
        let fr = f(&xr);
        evals += 1;
        if fr < simplex[0].1 {
            let xe = along(-2.0);
            let fe = f(&xe);
            evals += 1;
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let xc = if fr < worst { along(-0.5) } else { along(0.5) };
            let fc = f(&xc);
            evals += 1;
            if fc < worst.min(fr) {
                simplex[n] = (xc, fc);
            } else {
                let x_best = simplex[0].0.clone();
                for s in simplex.iter_mut().skip(1) {
                    s.0 = (0..n).map(|j| x_best[j] + 0.5 * (s.0[j] - x_best[j])).collect();
                    s.1 = f(&s.0);
                }
                evals += n;
            }
        }
    }
    crate::stats::sort_by(&mut simplex, nan_last);
    (simplex[0].0.clone(), evals)
}

#[cfg(test)]
mod tests {
    use super::{implausible, lowest_of_starts, nelder_mead, team_starts, PLAUSIBLE};
    use crate::model::{Coefficients, ENGINE_COEFFICIENTS, ENGINE_SETTINGS};

    /// A value is called below or above its range only when it is outside it; inside but within 2% of an edge
    /// it is called at that edge (the GB300 fit's HBM efficiency of 0.941 was once reported "above [0.5, 0.95]").
    #[test]
    fn a_coefficient_is_placed_against_its_range_as_it_lies() {
        let sides = |hbm: f64, compute: f64| -> Vec<(&str, &str)> {
            let k = Coefficients { hbm_efficiency: hbm, compute_efficiency: compute, ..Coefficients::default() };
            implausible(&k).iter().map(|c| (c.name, c.side)).collect()
        };
        assert_eq!(sides(0.8, 0.5), vec![]);
        assert_eq!(sides(0.941, 0.5), vec![("hbm_efficiency", "at the high edge of")]);
        assert_eq!(sides(0.96, 0.5), vec![("hbm_efficiency", "above")]);
        assert_eq!(sides(0.8, 0.301), vec![("compute_efficiency", "at the low edge of")]);
        assert_eq!(sides(0.8, 0.138), vec![("compute_efficiency", "below")]);
    }

    /// Every engine coefficient is either fitted (it has a plausible range) or a setting a profile states
    /// (`EngineSettings`), never both and never neither: a fit across engine builds shares exactly the first.
    #[test]
    fn every_engine_coefficient_is_fitted_or_a_setting() {
        for name in ENGINE_COEFFICIENTS {
            let fitted = PLAUSIBLE.iter().any(|p| p.name == name);
            let setting = ENGINE_SETTINGS.contains(&name);
            assert!(fitted != setting, "{name}: fitted {fitted}, setting {setting}");
        }
        assert_eq!(PLAUSIBLE.len() + ENGINE_SETTINGS.len(), ENGINE_COEFFICIENTS.len());
    }

    #[test]
    fn finds_the_minimum_of_a_bowl() {
        let f = |x: &[f64]| (x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2);
        let (x, _) = nelder_mead(&f, &[0.0, 0.0], 0.5, 2000);
        assert!((x[0] - 1.0).abs() < 1e-3 && (x[1] + 2.0).abs() < 1e-3, "{x:?}");
    }

    /// Two basins: a shallow well where the published optimum sits and a deeper one four times as far away as a
    /// wide simplex reaches, where the defaults sit (the shape of a team's calibration on the vLLM samples against
    /// GLM-5.2). Searching only from the published optimum, with either simplex, keeps the shallow well; the
    /// team's starts keep the deeper one.
    #[test]
    fn a_team_fit_keeps_the_deeper_of_two_basins() {
        let well =
            |x: &[f64], at: (f64, f64), depth: f64| depth * (-((x[0] - at.0).powi(2) + (x[1] - at.1).powi(2))).exp();
        let f = |x: &[f64]| -well(x, (0.0, 0.0), 1.0) - well(x, (6.0, 6.0), 2.0) + 1e-3 * (x[0].powi(2) + x[1].powi(2));
        let search = |from: &[f64], step: f64| nelder_mead(&f, from, step, 2000);
        let (x0, defaults) = (vec![0.3, -0.2], vec![5.0, 5.5]);
        let in_deep_well = |x: &[f64]| (x[0] - 6.0).abs() < 0.1 && (x[1] - 6.0).abs() < 0.1;
        let published_only = [(x0.clone(), 0.5), (x0.clone(), 1.5)];
        let (x, _, _) = lowest_of_starts(&published_only, &search, &f);
        assert!(!in_deep_well(&x), "the case has two basins: the published start alone stays in the shallow one");
        let starts = team_starts(&x0, defaults);
        assert_eq!(starts.len(), 3);
        let (x, loss, evals) = lowest_of_starts(&starts, &search, &f);
        assert!(in_deep_well(&x) && (loss - f(&x)).abs() < 1e-12, "{x:?} {loss}");
        // The same answer on every run, and the evaluations stay bounded: three searches and one loss each.
        assert_eq!(lowest_of_starts(&starts, &search, &f), (x, loss, evals));
        assert!(evals <= 3 * (2000 + 3), "{evals}");
        // A start at the published optimum is searched once, not twice.
        assert_eq!(team_starts(&x0, x0.clone()).len(), 2);
    }
}

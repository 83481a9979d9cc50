//! Goodput at a latency target: how many users (concurrent clients of the closed loop) one machine serves within
//! a TTFT and TPOT target, how many two serve and in which mode, with every number's confidence band and, given
//! prices, what a million output tokens costs each way.
//!
//! ```text
//! users grid 1 2 3 4 6 8 12 16 24 32 48 64 ... max      per mode (plan's machinery: model::modes::Sweep)
//!            ✓ ✓ ✓ ✓ ✓ ✗ ✓  ✗  ✗ ...                    a point meets the target when every set limit holds
//!                        └── users at target: the largest grid load that meets it (here 12)
//! ```
//! Taking the largest meeting load, not the first miss, makes a looser target never serve fewer users: every
//! load meeting a target also meets a looser one. A target on the mean reads the closed loop's mean TTFT and TPOT;
//! one on a percentile reads that percentile over the requests of the benchmark at the load
//! (`target_percentiles`).

use super::confidence::{Band, Bands};
use super::cost::{cost_at, Cost, CostInputs};
use super::target_percentiles;
use super::users::{self, Users};
use super::verdict::{verdict, GoodputVerdict};
use super::{ScenarioRun, Workspace};
use crate::model::bandwidth::place;
use crate::model::modes::Sweep;
use crate::model::Prediction;
use crate::Mode;
use serde::Serialize;

/// The highest load the search tries unless the query says otherwise.
pub const MAX_USERS: u32 = 1024;

/// Which statistic of the per-request latencies a target holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LatencyStatistic {
    Mean,
    P50,
    P90,
    P99,
}

impl LatencyStatistic {
    pub const ALL: [LatencyStatistic; 4] =
        [LatencyStatistic::Mean, LatencyStatistic::P50, LatencyStatistic::P90, LatencyStatistic::P99];

    pub fn name(self) -> &'static str {
        match self {
            LatencyStatistic::Mean => "mean",
            LatencyStatistic::P50 => "p50",
            LatencyStatistic::P90 => "p90",
            LatencyStatistic::P99 => "p99",
        }
    }

    pub fn from_name(name: &str) -> Option<LatencyStatistic> {
        LatencyStatistic::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// A latency target: each limit that is set must hold at a load for that load to count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyTarget {
    /// Time to first token, seconds.
    pub ttft_s: Option<f64>,
    /// Time per output token once decoding, seconds.
    pub tpot_s: Option<f64>,
    pub statistic: LatencyStatistic,
}

/// Which limit of a target a prediction passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Ttft,
    Tpot,
}

/// Why a goodput question has no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GoodputError {
    #[error("a latency target needs a TTFT or a TPOT limit")]
    NoLimit,
    #[error("the {what} limit must be a positive number of seconds, got {value}")]
    BadLimit { what: &'static str, value: f64 },
    #[error("the highest load to search and the load asked must be at least 1 user")]
    NoLoad,
    #[error("{0}")]
    Users(String),
    #[error("{0}")]
    Cost(String),
}

/// The goodput question on a scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoodputQuery {
    pub target: LatencyTarget,
    /// The highest load tried (the grid stops at or below it).
    pub max_users: u32,
    /// Prices and power, when the answer should say what a million tokens costs.
    pub cost: Option<CostInputs>,
    /// Which kind of user the users count (`users::Users`): closed-loop streams unless a think time or a rate
    /// per user is given.
    pub users: Users,
    /// The load the team asks about, users: each mode's latencies, whether it meets the target, and the cost
    /// there (`ModeGoodput::at_asked`).
    pub asked_users: Option<u32>,
}

/// A mode at the load the query asks about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtAsked {
    pub users: u32,
    pub meets: bool,
    pub output_tok_s: f64,
    pub ttft_s: f64,
    pub tpot_s: f64,
    /// What stops the mode at this load, when it misses.
    pub miss: Option<Miss>,
    /// Cost at the throughput these users make, when the query gave prices.
    pub cost: Option<Cost>,
}

/// A mode at the highest load that meets the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtTarget {
    /// Users served: concurrent clients of the closed loop.
    pub users: u32,
    /// The grid's top load met the target: more users may fit than the search tried.
    pub at_grid_top: bool,
    pub output_tok_s: f64,
    pub tok_s_per_gpu: f64,
    /// Throughput over the users: what each user's share of the machines' output is.
    pub tok_s_per_user: f64,
    /// 1 / TPOT: the rate a user reads tokens at while an answer streams (the interactivity dashboards show).
    pub interactivity_tok_s: f64,
    pub ttft_s: f64,
    pub tpot_s: f64,
    pub bottleneck: String,
}

/// Why a mode serves no more users (or none): a limit passed, or nothing to serve with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Miss {
    /// The load the miss is seen at.
    pub users: u32,
    /// The limit that binds (the one passed by the largest factor); `None` when the mode does not fit or
    /// produces nothing.
    pub limit: Option<Limit>,
    pub predicted_s: f64,
    pub target_s: f64,
    /// Predicted over target (`2.4` for 2.4x over).
    pub over: f64,
    /// In words: `TTFT 2.4 s at one user against a 1.0 s target: 2.4x over`.
    pub text: String,
}

/// One mode's answer at the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeGoodput {
    pub mode: Mode,
    pub machines: u32,
    pub gpus: f64,
    /// Whether the model fits the mode's memory (one machine's for single, PD and two copies; the pair's for
    /// TP2).
    pub fits: bool,
    /// The highest grid load meeting the target; `None` when no load does.
    pub at_target: Option<AtTarget>,
    /// What stops the mode: at one user when no load meets the target, else at the first grid load above
    /// `at_target` that misses (`None` when the grid's top still meets it).
    pub miss: Option<Miss>,
    /// Users served if the predicted latencies were off by their band: (higher latencies, lower latencies);
    /// `None` without latency bands.
    pub users_within_bands: Option<(u32, u32)>,
    /// The band of `at_target`'s tok/s (and of what follows from it: per GPU, per user, cost).
    pub tok_s_band: Band,
    /// Cost at the target's throughput, when the query gave prices.
    pub cost: Option<Cost>,
    /// The mode at the asked load (`GoodputQuery::asked_users`).
    pub at_asked: Option<AtAsked>,
}

impl ModeGoodput {
    pub fn users(&self) -> u32 {
        self.at_target.as_ref().map_or(0, |a| a.users)
    }

    pub fn tok_s(&self) -> f64 {
        self.at_target.as_ref().map_or(0.0, |a| a.output_tok_s)
    }

    /// The users served as read: `1024+` where the search's top load still meets the target.
    pub fn users_text(&self) -> String {
        match &self.at_target {
            Some(a) if a.at_grid_top => format!("{}+", a.users),
            _ => self.users().to_string(),
        }
    }
}

/// One workload's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadGoodput {
    pub isl: u32,
    pub osl: u32,
    /// In `Mode::ALL` order.
    pub modes: Vec<ModeGoodput>,
    pub verdict: GoodputVerdict,
}

impl WorkloadGoodput {
    pub fn get(&self, mode: Mode) -> Option<&ModeGoodput> {
        self.modes.iter().find(|m| m.mode == mode)
    }
}

/// The goodput answer for every workload of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoodputAnswer {
    pub scenario: String,
    pub model: String,
    pub hardware: String,
    pub engine: String,
    pub target: LatencyTarget,
    /// The loads tried, in order.
    pub users_grid: Vec<u32>,
    pub bands: Bands,
    pub cost_inputs: Option<CostInputs>,
    /// Which kind of user the users count, and the load asked (the query's).
    pub users: Users,
    pub asked_users: Option<u32>,
    pub workloads: Vec<WorkloadGoodput>,
}

impl LatencyTarget {
    /// A target on the means.
    pub fn mean(ttft_s: Option<f64>, tpot_s: Option<f64>) -> LatencyTarget {
        LatencyTarget { ttft_s, tpot_s, statistic: LatencyStatistic::Mean }
    }

    /// Whether the model can answer for this target.
    pub fn check(&self) -> Result<(), GoodputError> {
        if self.ttft_s.is_none() && self.tpot_s.is_none() {
            return Err(GoodputError::NoLimit);
        }
        for (what, v) in [("TTFT", self.ttft_s), ("TPOT", self.tpot_s)] {
            if let Some(value) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
                return Err(GoodputError::BadLimit { what, value });
            }
        }
        Ok(())
    }

    /// The limits set, each with the prediction's value: (limit, predicted, target).
    fn limits(&self, p: &Prediction) -> Vec<(Limit, f64, f64)> {
        let mut out = Vec::new();
        if let Some(t) = self.ttft_s {
            out.push((Limit::Ttft, p.ttft_s, t));
        }
        if let Some(t) = self.tpot_s {
            out.push((Limit::Tpot, p.tpot_s, t));
        }
        out
    }

    /// Whether a prediction meets the target with its latencies scaled by `scale` (TTFT's, TPOT's): 1 for the
    /// prediction as it is, `1 + band` to ask whether it still meets it if the latencies were that much higher.
    pub fn meets(&self, p: &Prediction, scale: (f64, f64)) -> bool {
        p.output_tok_s > 0.0
            && self.limits(p).iter().all(|&(l, predicted, target)| {
                let s = if l == Limit::Ttft { scale.0 } else { scale.1 };
                predicted.is_finite() && predicted * s <= target
            })
    }
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::Ttft => "TTFT",
            Limit::Tpot => "TPOT",
        }
    }
}

/// The users grid: 1, 2, 3, 4, 6, 8, 12, 16, ... (each power of two and one and a half times it) up to `max`.
pub fn users_grid(max: u32) -> Vec<u32> {
    let mut out = vec![1];
    let mut p: u32 = 2;
    while p <= max {
        out.push(p);
        if let Some(h) = (p / 2).checked_mul(3).filter(|h| *h <= max) {
            out.push(h);
        }
        let Some(next) = p.checked_mul(2) else { break };
        p = next;
    }
    out
}

/// The index of the largest grid load whose prediction meets the target (latencies scaled by `scale`).
pub fn highest_meeting(points: &[Prediction], target: &LatencyTarget, scale: (f64, f64)) -> Option<usize> {
    points.iter().rposition(|p| target.meets(p, scale))
}

impl Workspace {
    /// The goodput answer for `run`, each number with the band of its closest measured case.
    pub fn goodput(&self, run: &ScenarioRun, q: &GoodputQuery) -> Result<GoodputAnswer, GoodputError> {
        check(q)?;
        let mut answer = run.goodput(q, &self.bands(&run.scenario))?;
        // A publication that measured this very setup outranks the model where the two disagree.
        let plan = self.plan_of(run);
        for w in &mut answer.workloads {
            let measured = plan.contradicted().filter(|p| (p.isl, p.osl) == (w.isl, w.osl));
            if let Some(p) = measured {
                super::verdict::weigh_measurement(&mut w.verdict, p);
            }
        }
        Ok(answer)
    }
}

impl ScenarioRun {
    /// The goodput answer with the bands given (`Workspace::goodput` takes them from the accuracy protocol).
    pub fn goodput(&self, q: &GoodputQuery, bands: &Bands) -> Result<GoodputAnswer, GoodputError> {
        check(q)?;
        let s = &self.scenario;
        let k = &self.coefficients;
        let grid = users_grid(q.max_users);
        let per_machine = s.hardware.gpus.max(1.0);
        let fits_one = place(&s.model, &s.hardware, per_machine, k);
        let fits_two = place(&s.model, &s.hardware, 2.0 * per_machine, k);
        let fits_four = place(&s.model, &s.hardware, 4.0 * per_machine, k);
        let fits_data_expert = crate::model::modes::mode_placement(s, k, Mode::Dpep2);
        let mut workloads = Vec::new();
        for w in &s.workloads {
            let mut sweep = Sweep::new(s, k, w.isl, w.osl);
            let modes: Vec<ModeGoodput> = crate::plan::plan_modes(s)
                .into_iter()
                .map(|mode| {
                    // An engine spanning machines holds the weights over all of them; PD and copies hold them
                    // on each machine.
                    let placement = match mode {
                        Mode::Tp2 | Mode::Pp2 | Mode::Ep2 => &fits_two,
                        Mode::Tp4 | Mode::Pp4 => &fits_four,
                        Mode::Dpep2 => &fits_data_expert,
                        Mode::Single | Mode::Pd | Mode::Dp2 | Mode::Dp4 => &fits_one,
                    };
                    let gpus = f64::from(mode.machines()) * per_machine;
                    let lengths = (w.isl, w.osl);
                    let points: Vec<Prediction> = match (placement.fits, q.users) {
                        (false, _) => Vec::new(),
                        (true, Users::Streams) => {
                            let mut points: Vec<Prediction> = grid.iter().map(|&c| sweep.predict(mode, c)).collect();
                            target_percentiles::apply(s, k, mode, lengths, q.target.statistic, &mut points);
                            points
                        }
                        (true, kind) => users::grid_points(s, k, mode, lengths, &grid, kind, &q.target),
                    };
                    let mut m = mode_goodput(mode, gpus, &points, &q.target, bands);
                    m.fits = placement.fits;
                    if !placement.fits {
                        let text = format!(
                            "does not fit: {:.0} GB of memory missing per machine",
                            placement.missing_bytes / 1e9
                        );
                        m.miss = Some(Miss {
                            users: 1,
                            limit: None,
                            predicted_s: f64::NAN,
                            target_s: f64::NAN,
                            over: f64::INFINITY,
                            text,
                        });
                    }
                    m.cost = match (&q.cost, &m.at_target) {
                        (Some(c), Some(a)) => cost_at(c, mode.machines(), a.output_tok_s),
                        _ => None,
                    };
                    m.at_asked = q.asked_users.filter(|_| placement.fits).map(|n| {
                        let mut p = if q.users.is_streams() {
                            let mut one = [sweep.predict(mode, n)];
                            target_percentiles::apply(s, k, mode, lengths, q.target.statistic, &mut one);
                            one[0].clone()
                        } else {
                            users::predict_users(s, k, mode, lengths, n, q.users, q.target.statistic)
                        };
                        p.concurrency = n;
                        at_asked(&p, mode, &q.target, q.cost.as_ref())
                    });
                    m
                })
                .collect();
            let verdict = verdict(&modes);
            workloads.push(WorkloadGoodput { isl: w.isl, osl: w.osl, modes, verdict });
        }
        Ok(GoodputAnswer {
            scenario: s.id.clone(),
            model: s.model.id.clone(),
            hardware: s.hardware.id.clone(),
            engine: self.engine.clone(),
            target: q.target,
            users_grid: grid,
            bands: bands.clone(),
            cost_inputs: q.cost.clone(),
            users: q.users,
            asked_users: q.asked_users,
            workloads,
        })
    }
}

/// A mode at the asked load: its latencies against the target and the cost of what these users make it produce.
fn at_asked(p: &Prediction, mode: Mode, target: &LatencyTarget, cost: Option<&CostInputs>) -> AtAsked {
    let meets = target.meets(p, (1.0, 1.0));
    AtAsked {
        users: p.concurrency,
        meets,
        output_tok_s: p.output_tok_s,
        ttft_s: p.ttft_s,
        tpot_s: p.tpot_s,
        miss: (!meets).then(|| miss_at(p, target)),
        cost: cost.and_then(|c| cost_at(c, mode.machines(), p.output_tok_s)),
    }
}

/// Refuses a question the model cannot answer, before any prediction or fit runs.
fn check(q: &GoodputQuery) -> Result<(), GoodputError> {
    q.target.check()?;
    if q.max_users == 0 || q.asked_users == Some(0) {
        return Err(GoodputError::NoLoad);
    }
    q.users.check().map_err(GoodputError::Users)?;
    if let Some(c) = &q.cost {
        c.check().map_err(GoodputError::Cost)?;
    }
    Ok(())
}

/// One mode's answer from its predictions on the grid (empty when it does not fit; `cost` and `fits` are the
/// caller's).
pub fn mode_goodput(
    mode: Mode,
    gpus: f64,
    points: &[Prediction],
    target: &LatencyTarget,
    bands: &Bands,
) -> ModeGoodput {
    let found = highest_meeting(points, target, (1.0, 1.0));
    let at_target = found.map(|i| {
        let p = &points[i];
        let users = p.concurrency.max(1);
        AtTarget {
            users,
            at_grid_top: i + 1 == points.len(),
            output_tok_s: p.output_tok_s,
            tok_s_per_gpu: p.output_tok_s / gpus,
            tok_s_per_user: p.output_tok_s / f64::from(users),
            interactivity_tok_s: if p.tpot_s > 0.0 { 1.0 / p.tpot_s } else { f64::NAN },
            ttft_s: p.ttft_s,
            tpot_s: p.tpot_s,
            bottleneck: p.bottleneck.name().to_string(),
        }
    });
    // What stops it: at one user when nothing meets the target, else the first load above that misses.
    let miss = match found {
        None => points.first().map(|p| miss_at(p, target)),
        Some(i) => points[i + 1..].iter().find(|p| !target.meets(p, (1.0, 1.0))).map(|p| miss_at(p, target)),
    };
    // The latencies at either edge of their bands (measured / predicted): the high edge serves fewer users.
    let (ttft, tpot) = (bands.ttft(mode, target.statistic), bands.tpot(mode, target.statistic));
    let users_within_bands = match (ttft.interval, tpot.interval) {
        (Some(t), Some(p)) => {
            let users = |scale: (f64, f64)| highest_meeting(points, target, scale).map_or(0, |i| points[i].concurrency);
            Some((users((t.1, p.1)), users((t.0, p.0))))
        }
        _ => None,
    };
    ModeGoodput {
        mode,
        machines: mode.machines(),
        gpus,
        fits: !points.is_empty(),
        at_target,
        miss,
        users_within_bands,
        tok_s_band: bands.tok_s(mode),
        cost: None,
        at_asked: None,
    }
}

/// The limit a prediction passes by the largest factor, in words.
fn miss_at(p: &Prediction, target: &LatencyTarget) -> Miss {
    let users = p.concurrency.max(1);
    let at = if users == 1 { "one user".to_string() } else { format!("{users} users") };
    if p.output_tok_s <= 0.0 {
        return Miss {
            users,
            limit: None,
            predicted_s: f64::NAN,
            target_s: f64::NAN,
            over: f64::INFINITY,
            text: format!("produces no tokens at {at} (bound: {})", p.bottleneck.name()),
        };
    }
    let worst = target
        .limits(p)
        .into_iter()
        .map(|(l, predicted, t)| (l, predicted, t, if predicted.is_finite() { predicted / t } else { f64::INFINITY }))
        .fold(None::<(Limit, f64, f64, f64)>, |acc, x| match acc {
            Some(a) if a.3 >= x.3 => Some(a),
            _ => Some(x),
        });
    let Some((limit, predicted, t, over)) = worst else {
        return Miss {
            users,
            limit: None,
            predicted_s: f64::NAN,
            target_s: f64::NAN,
            over: f64::NAN,
            text: "no limit set".into(),
        };
    };
    Miss {
        users,
        limit: Some(limit),
        predicted_s: predicted,
        target_s: t,
        over,
        text: format!(
            "{} {} at {at} against a {} target: {over:.1}x over",
            limit.name(),
            seconds(limit, predicted),
            seconds(limit, t)
        ),
    }
}

/// A latency as users read it: TTFT in seconds, TPOT in milliseconds.
pub fn seconds(limit: Limit, s: f64) -> String {
    match limit {
        Limit::Ttft => format!("{s:.2} s"),
        Limit::Tpot => format!("{:.1} ms", s * 1e3),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::explore::confidence::Closest;
    use crate::model::Bottleneck;
    use proptest::prelude::*;

    /// A prediction of `mode` at `users` with the given tok/s, TTFT and TPOT.
    pub(crate) fn point(mode: Mode, users: u32, tok_s: f64, ttft_s: f64, tpot_s: f64) -> Prediction {
        Prediction {
            mode,
            isl: 1024,
            osl: 128,
            concurrency: users,
            output_tok_s: tok_s,
            ttft_s,
            tpot_s,
            step_s: tpot_s,
            resident_seqs: f64::from(users),
            max_resident_seqs: 256.0,
            bottleneck: Bottleneck::HbmBandwidth,
            tokens_per_step: 1.0,
            preemptions_per_request: 0.0,
            kv_utilization: 0.0,
            queue_s: 0.0,
        }
    }

    /// A mode on the grid to 64 whose TTFT and TPOT grow with load from `(ttft, tpot)` at one user.
    pub(crate) fn curve(mode: Mode, tok_per_user: f64, ttft: f64, tpot: f64) -> Vec<Prediction> {
        users_grid(64)
            .into_iter()
            .map(|u| {
                let n = f64::from(u);
                point(mode, u, tok_per_user * n / (1.0 + 0.02 * n), ttft * (1.0 + 0.1 * n), tpot * (1.0 + 0.02 * n))
            })
            .collect()
    }

    pub(crate) fn band(f: f64) -> Band {
        Band { interval: Some((1.0 - f, 1.0 + f)), coverage: 0.8, evidence: format!("test {f}") }
    }

    /// Symmetric bands: one machine's tok/s ±10%, a pair's ±`pair`, TTFT ±50% and TPOT ±20%.
    pub(crate) fn bands(pair: f64) -> Bands {
        let modes = Mode::ALL
            .into_iter()
            .map(|mode| crate::explore::confidence::ModeBands {
                mode,
                tok_s: band(if mode.machines() == 1 { 0.1 } else { pair }),
                ttft: vec![band(0.5); 4],
                tpot: vec![band(0.2); 4],
            })
            .collect();
        Bands { closest: Closest::Elsewhere, coverage: 0.8, modes }
    }

    pub(crate) fn modes(curves: &[Vec<Prediction>], target: &LatencyTarget, b: &Bands) -> Vec<ModeGoodput> {
        curves.iter().map(|c| mode_goodput(c[0].mode, 8.0 * f64::from(c[0].mode.machines()), c, target, b)).collect()
    }

    #[test]
    fn the_users_grid_steps_by_powers_of_two_and_their_halfway_points() {
        assert_eq!(users_grid(64), [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]);
        assert_eq!(users_grid(1), [1]);
        assert_eq!(users_grid(5), [1, 2, 3, 4]);
        let g = users_grid(MAX_USERS);
        assert_eq!((g.len(), g.last()), (20, Some(&1024)));
        assert!(users_grid(u32::MAX).windows(2).all(|w| w[0] < w[1]), "no overflow at the top");
    }

    #[test]
    fn the_search_takes_the_largest_load_that_meets_the_target_even_past_a_miss() {
        // A dip in latency at 4 users (a regime change): 2 misses, 3 and 4 meet.
        let points = [
            point(Mode::Pd, 1, 10.0, 0.5, 0.01),
            point(Mode::Pd, 2, 20.0, 1.5, 0.01),
            point(Mode::Pd, 3, 30.0, 0.9, 0.01),
            point(Mode::Pd, 4, 40.0, 0.8, 0.01),
            point(Mode::Pd, 6, 50.0, 3.0, 0.01),
        ];
        let target = LatencyTarget::mean(Some(1.0), None);
        let m = mode_goodput(Mode::Pd, 16.0, &points, &target, &bands(0.1));
        let a = m.at_target.as_ref().expect("meets at some load");
        assert_eq!((a.users, a.at_grid_top), (4, false));
        assert_eq!((a.output_tok_s, a.tok_s_per_gpu, a.tok_s_per_user), (40.0, 2.5, 10.0));
        let miss = m.miss.expect("what stops it");
        assert_eq!((miss.users, miss.limit), (6, Some(Limit::Ttft)));
        assert_eq!(miss.text, "TTFT 3.00 s at 6 users against a 1.00 s target: 3.0x over");
        // With the TTFT band (50%) the load served spans what the latencies' error allows.
        assert_eq!(m.users_within_bands, Some((1, 4)));
    }

    #[test]
    fn a_mode_that_misses_at_one_user_says_which_limit_binds_and_by_how_much() {
        let points = [point(Mode::Single, 1, 30.0, 2.4, 0.030), point(Mode::Single, 2, 50.0, 2.6, 0.035)];
        let target = LatencyTarget::mean(Some(1.0), Some(0.050));
        let m = mode_goodput(Mode::Single, 8.0, &points, &target, &bands(0.1));
        assert!(m.at_target.is_none());
        assert_eq!(m.users(), 0);
        let miss = m.miss.expect("a reason");
        assert_eq!(miss.text, "TTFT 2.40 s at one user against a 1.00 s target: 2.4x over");
        assert!((miss.over - 2.4).abs() < 1e-12);
        // TPOT binds when it is the limit passed by more.
        let tight = LatencyTarget::mean(Some(3.0), Some(0.010));
        let miss = mode_goodput(Mode::Single, 8.0, &points, &tight, &bands(0.1)).miss.expect("a reason");
        assert_eq!(miss.text, "TPOT 30.0 ms at one user against a 10.0 ms target: 3.0x over");
    }

    #[test]
    fn a_target_needs_a_positive_limit_and_names_its_statistic() {
        for statistic in LatencyStatistic::ALL {
            assert_eq!(LatencyTarget { ttft_s: Some(1.0), tpot_s: None, statistic }.check(), Ok(()));
        }
        assert_eq!(LatencyTarget::mean(None, None).check(), Err(GoodputError::NoLimit));
        assert!(matches!(LatencyTarget::mean(Some(-1.0), None).check(), Err(GoodputError::BadLimit { .. })));
        assert_eq!(LatencyStatistic::from_name("p90"), Some(LatencyStatistic::P90));
    }

    /// The 8x H100 server under the spec roofline: no fit to wait for.
    fn h100_roofline_run() -> ScenarioRun {
        let files = [
            ("sources.json", include_str!("../../../data/sources.json")),
            ("hardware/h100-sxm.json", include_str!("../../../data/hardware/h100-sxm.json")),
            ("models/minimax-m3.json", include_str!("../../../data/models/minimax-m3.json")),
            ("engines/roofline.json", include_str!("../../../data/engines/roofline.json")),
        ];
        let files: Vec<crate::dataset::SourceText> = files
            .into_iter()
            .map(|(path, text)| crate::dataset::SourceText { path: path.into(), text: text.into() })
            .collect();
        let ws = Workspace::load(&files, None);
        let text = include_str!("../../../data/scenarios/plan-minimax-m3-h100-sxm.json");
        let run = ws.scenario_from_text("plan.json", text, crate::fit::FitSet::All).expect("scenario resolves");
        ws.with_engine(run, "roofline").expect("the roofline profile")
    }

    /// A target on a higher percentile serves no more users than one on a lower (every request's latency counts
    /// toward each, so p99 >= p90 >= p50 at every load), and the users it serves meet it at the statistic named.
    #[test]
    fn a_higher_percentile_target_serves_no_more_users() {
        let run = h100_roofline_run();
        let answer = |statistic| {
            let q = GoodputQuery {
                target: LatencyTarget { ttft_s: Some(1.0), tpot_s: Some(0.03), statistic },
                max_users: 128,
                cost: None,
                users: Users::Streams,
                asked_users: None,
            };
            run.goodput(&q, &bands(0.2)).expect("an answer")
        };
        let (p50, p90, p99) =
            (answer(LatencyStatistic::P50), answer(LatencyStatistic::P90), answer(LatencyStatistic::P99));
        let mut served = 0;
        for ((a, b), c) in p50.workloads.iter().zip(&p90.workloads).zip(&p99.workloads) {
            for ((m50, m90), m99) in a.modes.iter().zip(&b.modes).zip(&c.modes) {
                assert!(m50.users() >= m90.users() && m90.users() >= m99.users(), "{:?}", m50.mode);
                for at in [&m50.at_target, &m90.at_target, &m99.at_target].into_iter().flatten() {
                    assert!(at.ttft_s <= 1.0 && at.tpot_s <= 0.03, "{at:?}");
                }
                served += m99.users();
            }
        }
        assert!(served > 0, "some mode serves users at p99");
        // The percentiles are the benchmark's, not the closed loop's means renamed: somewhere p99 reads higher.
        let mean = answer(LatencyStatistic::Mean);
        let ttft = |a: &GoodputAnswer| -> Vec<f64> {
            a.workloads
                .iter()
                .flat_map(|w| w.modes.iter().filter_map(|m| m.at_target.as_ref().map(|t| t.ttft_s)))
                .collect()
        };
        assert!(ttft(&p99).iter().zip(ttft(&mean)).any(|(a, b)| (a - b).abs() > 1e-6), "{:?}", ttft(&p99));
    }

    #[test]
    fn a_shipped_scenario_answers_every_mode_with_costs_and_a_looser_target_serves_no_fewer() {
        let run = h100_roofline_run();
        let q = |ttft: f64, tpot: f64| GoodputQuery {
            target: LatencyTarget::mean(Some(ttft), Some(tpot)),
            max_users: 256,
            cost: Some(super::super::cost::CostInputs::with_defaults(300_000.0, 10_200.0)),
            users: Users::Streams,
            asked_users: None,
        };
        let tight = run.goodput(&q(1.0, 0.03), &bands(0.2)).expect("an answer");
        let loose = run.goodput(&q(4.0, 0.08), &bands(0.2)).expect("an answer");
        assert_eq!(tight.workloads.len(), 2);
        for (t, l) in tight.workloads.iter().zip(&loose.workloads) {
            assert_eq!(t.modes.len(), Mode::ALL.len());
            for (a, b) in t.modes.iter().zip(&l.modes) {
                assert!(b.users() >= a.users(), "{:?}: {} then {}", a.mode, a.users(), b.users());
                if let Some(at) = &a.at_target {
                    assert!(at.ttft_s <= 1.0 && at.tpot_s <= 0.03, "{at:?}");
                    assert!((at.tok_s_per_gpu * a.gpus - at.output_tok_s).abs() < 1e-9);
                    assert!(a.cost.as_ref().is_some_and(|c| c.usd_per_million_tokens > 0.0));
                } else {
                    assert!(a.miss.is_some() && a.cost.is_none(), "{a:?}");
                }
            }
            if let Some(best) = t.verdict.best_pair {
                assert!(t.get(best).is_some_and(|m| m.users() > 0));
            }
        }
    }

    proptest! {
        /// Every load meeting a target meets a looser one, so the users served never fall as a target loosens.
        #[test]
        fn a_looser_target_never_serves_fewer_users(
            latencies in proptest::collection::vec((0.01f64..10.0, 0.001f64..0.2), 1..20),
            ttft in proptest::option::of(0.05f64..8.0),
            tpot in proptest::option::of(0.002f64..0.15),
            loosen in (1.0f64..4.0, 1.0f64..4.0),
            drop_ttft in any::<bool>(),
            drop_tpot in any::<bool>(),
        ) {
            let points: Vec<Prediction> = latencies
                .iter()
                .enumerate()
                .map(|(i, &(a, b))| point(Mode::Tp2, i as u32 + 1, 10.0 * (i + 1) as f64, a, b))
                .collect();
            prop_assume!(ttft.is_some() || tpot.is_some());
            let tight = LatencyTarget::mean(ttft, tpot);
            // Looser: every limit raised, or dropped altogether.
            let loose = LatencyTarget::mean(
                ttft.map(|t| t * loosen.0).filter(|_| !drop_ttft),
                tpot.map(|t| t * loosen.1).filter(|_| !drop_tpot),
            );
            let users = |t: &LatencyTarget| mode_goodput(Mode::Tp2, 16.0, &points, t, &bands(0.1)).users();
            prop_assert!(users(&loose) >= users(&tight));
        }
    }
}

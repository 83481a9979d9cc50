//! The interactivity frontier: throughput per GPU against what one user sees (output tokens/s per user, time
//! to first token, or end-to-end latency), one curve per mode, the Pareto frontier marked, and the throughput
//! per GPU at a chosen tok/s per user, interpolated along the curves.
//!
//! ```text
//!  tok/s per GPU                 per GPU  = output tok/s / (machines of the mode x GPUs per machine)
//!    │ ●─●─●                     per user = output tok/s / concurrency   (closed loop: OSL / end-to-end)
//!    │      ●─●   frontier: no   end-to-end = concurrency x OSL / output tok/s (Little's law), unless measured
//!    │         ●  other point has more per GPU at as much per user (or as little latency)
//!    └──────────────► tok/s per user
//! ```
//!
//! A pair (TP2, PD, two copies) counts both machines' GPUs, so one machine and two compare per GPU. Measured
//! points go through the same normalisation; their TTFT and TPOT are those the source states (none when it
//! states none), and their end-to-end latency is the stated one or Little's law.

use super::sweep::SweepQuery;
use super::{ScenarioRun, Workspace};
use crate::fit::FitSet;
use crate::model::{predict, Prediction};
use crate::Mode;
use serde::Serialize;

/// What the x axis shows. Interactivity is better when higher; the latencies when lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum XAxis {
    /// Output tokens per second per user.
    Interactivity,
    /// Time to first token, seconds.
    Ttft,
    /// End-to-end latency of a request, seconds.
    E2e,
}

impl XAxis {
    pub const ALL: [XAxis; 3] = [XAxis::Interactivity, XAxis::Ttft, XAxis::E2e];

    /// The key in a share link.
    pub fn name(self) -> &'static str {
        match self {
            XAxis::Interactivity => "interactivity",
            XAxis::Ttft => "ttft",
            XAxis::E2e => "e2e",
        }
    }

    /// The axis title.
    pub fn label(self) -> &'static str {
        match self {
            XAxis::Interactivity => "output tokens/s per user",
            XAxis::Ttft => "time to first token, s",
            XAxis::E2e => "end-to-end latency, s",
        }
    }

    pub fn parse(s: &str) -> Option<XAxis> {
        XAxis::ALL.into_iter().find(|a| a.name() == s)
    }

    /// Whether a smaller x is better (a latency).
    pub fn lower_is_better(self) -> bool {
        self != XAxis::Interactivity
    }
}

/// One predicted or measured point, normalised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontierPoint {
    pub mode: Mode,
    pub concurrency: u32,
    /// Output tokens/s of the whole mode (one machine or the pair).
    pub output_tok_s: f64,
    /// GPUs the mode uses: machines x GPUs per machine.
    pub gpus: f64,
    pub tok_s_per_gpu: f64,
    pub tok_s_per_user: f64,
    /// Time to first token, seconds (predicted, or stated by the source).
    pub ttft_s: Option<f64>,
    /// Time per output token, seconds (predicted, or stated by the source).
    pub tpot_s: Option<f64>,
    /// Inter-token latency the source states, seconds (measured points only).
    pub itl_s: Option<f64>,
    /// End-to-end latency of a request, seconds.
    pub e2e_s: f64,
    /// True when the end-to-end latency is the source's; false when it follows from Little's law.
    pub e2e_stated: bool,
    /// Flagged points (dips, capped runs) are shown but never on the frontier.
    pub flagged: bool,
    /// On the Pareto frontier of its set (the predicted curves together, or the measured points) on the
    /// answer's x axis.
    pub on_frontier: bool,
    /// Where a measured point comes from (empty for predictions).
    pub source: String,
    pub quote: String,
    /// Preemptions per request and the share of the KV cache in use, when the model predicts them.
    pub preemptions_per_request: Option<f64>,
    pub kv_utilization: Option<f64>,
}

impl FrontierPoint {
    /// The point's x on `axis`; `None` when it has no such value (a measured point without a stated TTFT).
    pub fn x(&self, axis: XAxis) -> Option<f64> {
        let x = match axis {
            XAxis::Interactivity => Some(self.tok_s_per_user),
            XAxis::Ttft => self.ttft_s,
            XAxis::E2e => Some(self.e2e_s),
        };
        x.filter(|v| v.is_finite() && *v > 0.0)
    }
}

/// One mode's predicted points, in concurrency order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontierCurve {
    pub mode: Mode,
    pub points: Vec<FrontierPoint>,
}

/// Throughput per GPU at a chosen tok/s per user: the best mode there, read off its curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    pub tok_s_per_user: f64,
    pub mode: Mode,
    pub tok_s_per_gpu: f64,
    /// False only when a predicted point sits exactly at the chosen value.
    pub interpolated: bool,
    /// The concurrencies of the points it lies between (equal when not interpolated).
    pub between: (u32, u32),
}

/// The frontier question's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontierAnswer {
    pub title: String,
    pub engine: String,
    pub axis: XAxis,
    pub isl: u32,
    pub osl: u32,
    /// GPUs in one machine of the scenario.
    pub gpus_per_machine: f64,
    pub curves: Vec<FrontierCurve>,
    pub measured: Vec<FrontierPoint>,
    /// The tok/s per user the headline is read at (the chosen one, or `default_target` of the curves).
    pub target: f64,
    /// `None` when no curve reaches the target.
    pub headline: Option<Headline>,
    /// Measured points left off this axis because the source states no such value.
    pub measured_without_x: usize,
}

impl FrontierAnswer {
    /// Every predicted point, curve after curve.
    pub fn predicted(&self) -> impl Iterator<Item = &FrontierPoint> {
        self.curves.iter().flat_map(|c| c.points.iter())
    }
}

/// Marks the Pareto frontier of `(x, y)` points: a point is on it when no other point is at least as good on
/// both axes and better on one (y higher is better; x higher, or lower when `lower_x_better`). Points whose
/// `eligible` is false (flagged, or without an x) are never on it and never dominate.
pub fn pareto(points: &[(f64, f64)], eligible: &[bool], lower_x_better: bool) -> Vec<bool> {
    let better_x = |a: f64, b: f64| if lower_x_better { a <= b } else { a >= b };
    (0..points.len())
        .map(|i| {
            let (xi, yi) = points[i];
            eligible[i]
                && !(0..points.len()).any(|j| {
                    let (xj, yj) = points[j];
                    j != i && eligible[j] && better_x(xj, xi) && yj >= yi && (xj != xi || yj != yi)
                })
        })
        .collect()
}

/// y at `x0` along a polyline of `(x, y)` points (any order): exact when a point sits at `x0`, else linear
/// between the two neighbours that bracket it; `None` outside the points' range. Returns (y, interpolated,
/// index of the left and right neighbours in the input).
pub fn interpolate(points: &[(f64, f64)], x0: f64) -> Option<(f64, bool, usize, usize)> {
    if let Some(i) = points.iter().position(|p| p.0 == x0) {
        return Some((points[i].1, false, i, i));
    }
    let mut order: Vec<usize> = (0..points.len()).filter(|&i| points[i].0.is_finite()).collect();
    crate::stats::sort_by(&mut order, |&a, &b| points[a].0.total_cmp(&points[b].0));
    order.windows(2).find_map(|w| {
        let ((x1, y1), (x2, y2)) = (points[w[0]], points[w[1]]);
        (x1 < x0 && x0 < x2).then(|| (y1 + (y2 - y1) * (x0 - x1) / (x2 - x1), true, w[0], w[1]))
    })
}

/// The best throughput per GPU at `target` tok/s per user over the curves, or `None` when none reaches it.
pub fn headline(curves: &[FrontierCurve], target: f64) -> Option<Headline> {
    curves
        .iter()
        .filter_map(|c| {
            let xy: Vec<(f64, f64)> = c.points.iter().map(|p| (p.tok_s_per_user, p.tok_s_per_gpu)).collect();
            let (y, interpolated, a, b) = interpolate(&xy, target)?;
            let (ca, cb) = (c.points[a].concurrency, c.points[b].concurrency);
            Some(Headline {
                tok_s_per_user: target,
                mode: c.mode,
                tok_s_per_gpu: y,
                interpolated,
                between: (ca.min(cb), ca.max(cb)),
            })
        })
        .max_by(|a, b| a.tok_s_per_gpu.total_cmp(&b.tok_s_per_gpu))
}

/// A round tok/s per user in the middle of the curves' range (geometric mean of its ends, to one significant
/// digit of 1, 2 or 5): where the headline is read when the reader has chosen none.
pub fn default_target(curves: &[FrontierCurve]) -> f64 {
    let xs = curves.iter().flat_map(|c| c.points.iter().map(|p| p.tok_s_per_user)).filter(|x| *x > 0.0);
    let (lo, hi) = xs.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if !(lo.is_finite() && hi > 0.0) {
        return 0.0;
    }
    let mid = (lo * hi).sqrt();
    let decade = 10f64.powf(mid.log10().floor());
    let step =
        [1.0, 2.0, 5.0, 10.0].into_iter().min_by(|a, b| (a * decade - mid).abs().total_cmp(&(b * decade - mid).abs()));
    step.unwrap_or(1.0) * decade
}

/// A point of `mode` at `concurrency` clients producing `output_tok_s` on `gpus` GPUs, normalised: per GPU, per
/// user, and the end-to-end latency by Little's law (each client receives `osl` tokens per request).
pub fn normalised(mode: Mode, concurrency: u32, osl: u32, output_tok_s: f64, gpus: f64) -> FrontierPoint {
    let c = f64::from(concurrency.max(1));
    FrontierPoint {
        mode,
        concurrency,
        output_tok_s,
        gpus,
        tok_s_per_gpu: output_tok_s / gpus,
        tok_s_per_user: output_tok_s / c,
        ttft_s: None,
        tpot_s: None,
        itl_s: None,
        e2e_s: c * f64::from(osl) / output_tok_s,
        e2e_stated: false,
        flagged: false,
        on_frontier: false,
        source: String::new(),
        quote: String::new(),
        preemptions_per_request: None,
        kv_utilization: None,
    }
}

/// A predicted point normalised for `gpus` GPUs, with its predicted TTFT and TPOT.
pub fn predicted_point(p: &Prediction, gpus: f64) -> FrontierPoint {
    FrontierPoint {
        ttft_s: Some(p.ttft_s).filter(|v| v.is_finite()),
        tpot_s: Some(p.tpot_s).filter(|v| v.is_finite()),
        preemptions_per_request: Some(p.preemptions_per_request).filter(|v| v.is_finite()),
        kv_utilization: Some(p.kv_utilization).filter(|v| v.is_finite()),
        ..normalised(p.mode, p.concurrency, p.osl, p.output_tok_s, gpus)
    }
}

/// Marks the frontier of a set of points on `axis`.
fn mark(points: &mut [&mut FrontierPoint], axis: XAxis) {
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.x(axis).unwrap_or(f64::NAN), p.tok_s_per_gpu)).collect();
    let ok: Vec<bool> = points.iter().map(|p| !p.flagged && p.x(axis).is_some() && p.tok_s_per_gpu > 0.0).collect();
    for (p, on) in points.iter_mut().zip(pareto(&xy, &ok, axis.lower_is_better())) {
        p.on_frontier = on;
    }
}

impl Workspace {
    /// The frontier of one scenario and workload (with what-if settings): the sweep's curves and published
    /// points normalised per GPU and per user, frontiers marked on `axis`, and the headline at `target` tok/s
    /// per user (`None`: `default_target`).
    pub fn frontier(&self, q: &SweepQuery, axis: XAxis, target: Option<f64>) -> Result<FrontierAnswer, String> {
        let sweep = self.sweep(q)?;
        let scenario = self.scenarios.get(q.model).ok_or_else(|| format!("unknown model `{}`", q.model))?;
        let per_machine = scenario.hardware.gpus.max(1.0);
        let gpus = |m: Mode| f64::from(m.machines()) * per_machine;
        let curves: Vec<FrontierCurve> = sweep
            .curves
            .iter()
            .map(|c| FrontierCurve {
                mode: c.mode,
                points: c.points.iter().map(|p| predicted_point(p, gpus(p.mode))).collect(),
            })
            .collect();
        let mut measured: Vec<FrontierPoint> = self
            .points()
            .iter()
            .filter(|p| p.scenario == q.model && p.isl == q.isl && p.osl == q.osl && p.output_tok_s > 0.0)
            .map(|p| {
                let l = &p.latency;
                let ms = |v: Option<f64>| v.map(|x| x / 1e3);
                let base = normalised(p.mode, p.concurrency, p.osl, p.output_tok_s, gpus(p.mode));
                FrontierPoint {
                    ttft_s: ms(l.ttft_ms),
                    tpot_s: ms(l.tpot_ms),
                    itl_s: ms(l.itl_ms),
                    e2e_s: ms(l.e2el_ms).unwrap_or(base.e2e_s),
                    e2e_stated: l.e2el_ms.is_some(),
                    flagged: p.is_flagged(),
                    source: p.source.clone(),
                    quote: p.quote.clone(),
                    ..base
                }
            })
            .collect();
        crate::stats::sort_by_key(&mut measured, |p| (p.mode, p.concurrency));
        let title = format!("{} - per GPU against {}, ISL {} / OSL {}", q.model, axis.label(), q.isl, q.osl);
        Ok(answer(title, sweep.engine, (q.isl, q.osl), per_machine, curves, measured, axis, target))
    }
}

/// The latencies of one published point, as its source states them, beside the model's at the same
/// concurrency (seconds; `None` where neither gives one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointLatencies {
    pub mode: Mode,
    pub concurrency: u32,
    pub measured_ttft_s: Option<f64>,
    pub measured_tpot_s: Option<f64>,
    pub measured_itl_s: Option<f64>,
    pub predicted_ttft_s: Option<f64>,
    pub predicted_tpot_s: Option<f64>,
}

impl Workspace {
    /// Every published point of a sweep question with its stated and predicted TTFT and TPOT (the throughput
    /// view's table and CSV), by mode then concurrency as `SweepAnswer::points`.
    pub fn point_latencies(&self, q: &SweepQuery) -> Result<Vec<PointLatencies>, String> {
        let run = self.report_run_with_engine(q.model, q.settings, FitSet::All, q.engine)?;
        let ms = |v: Option<f64>| v.map(|x| x / 1e3);
        let fin = |v: f64| Some(v).filter(|x| x.is_finite());
        let mut out: Vec<PointLatencies> = self
            .points()
            .iter()
            .filter(|p| p.scenario == q.model && p.isl == q.isl && p.osl == q.osl)
            .map(|p| {
                let pr = predict(&run.scenario, &run.coefficients, p.mode, q.isl, q.osl, p.concurrency);
                PointLatencies {
                    mode: p.mode,
                    concurrency: p.concurrency,
                    measured_ttft_s: ms(p.latency.ttft_ms),
                    measured_tpot_s: ms(p.latency.tpot_ms),
                    measured_itl_s: ms(p.latency.itl_ms),
                    predicted_ttft_s: fin(pr.ttft_s),
                    predicted_tpot_s: fin(pr.tpot_s),
                }
            })
            .collect();
        crate::stats::sort_by_key(&mut out, |l| (l.mode, l.concurrency));
        Ok(out)
    }
}

impl ScenarioRun {
    /// The frontier of any scenario (the planner's model on the planner's hardware): every mode over the
    /// scenario's first workload and its concurrency range, predicted only.
    pub fn frontier(&self, axis: XAxis, target: Option<f64>) -> FrontierAnswer {
        let plan = self.plan();
        let s = &self.scenario;
        let per_machine = s.hardware.gpus.max(1.0);
        let curves = Mode::ALL
            .iter()
            .map(|&mode| FrontierCurve {
                mode,
                points: plan
                    .rows
                    .iter()
                    .map(|r| r.get(mode))
                    .filter(|p| p.mode == mode && p.output_tok_s.is_finite() && p.output_tok_s > 0.0)
                    .map(|p| predicted_point(p, f64::from(mode.machines()) * per_machine))
                    .collect(),
            })
            .filter(|c| !c.points.is_empty())
            .collect();
        let (isl, osl) = plan.rows.first().map(|r| (r.isl, r.osl)).unwrap_or((0, 0));
        let title =
            format!("{} on {} - per GPU against {}, ISL {isl} / OSL {osl}", s.model.id, s.hardware.name, axis.label());
        answer(title, self.engine.clone(), (isl, osl), per_machine, curves, Vec::new(), axis, target)
    }
}

/// Marks both frontiers, reads the headline and assembles the answer.
#[allow(clippy::too_many_arguments)]
fn answer(
    title: String,
    engine: String,
    (isl, osl): (u32, u32),
    gpus_per_machine: f64,
    mut curves: Vec<FrontierCurve>,
    mut measured: Vec<FrontierPoint>,
    axis: XAxis,
    target: Option<f64>,
) -> FrontierAnswer {
    mark(&mut curves.iter_mut().flat_map(|c| c.points.iter_mut()).collect::<Vec<_>>(), axis);
    mark(&mut measured.iter_mut().collect::<Vec<_>>(), axis);
    let target = target.filter(|t| t.is_finite() && *t > 0.0).unwrap_or_else(|| default_target(&curves));
    let measured_without_x = measured.iter().filter(|p| p.x(axis).is_none()).count();
    FrontierAnswer {
        title,
        engine,
        axis,
        isl,
        osl,
        gpus_per_machine,
        headline: headline(&curves, target),
        curves,
        measured,
        target,
        measured_without_x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(mode: Mode, c: u32, per_user: f64, per_gpu: f64) -> FrontierPoint {
        FrontierPoint { tok_s_per_user: per_user, tok_s_per_gpu: per_gpu, ..normalised(mode, c, 100, 1.0, 1.0) }
    }

    #[test]
    fn pareto_keeps_only_undominated_points() {
        // (per user, per GPU): the third is beaten by the second on both axes; the fourth ties the first on x
        // with less y; the fifth is best on y but not eligible (flagged).
        let xy = [(100.0, 50.0), (50.0, 200.0), (40.0, 150.0), (100.0, 40.0), (10.0, 900.0)];
        let ok = [true, true, true, true, false];
        assert_eq!(pareto(&xy, &ok, false), vec![true, true, false, false, false]);
        // On a latency axis lower x is better: (40, 150) and (50, 200) trade latency for throughput and both stay;
        // (100, 50) is now beaten by (50, 200).
        assert_eq!(pareto(&xy, &ok, true), vec![false, true, true, false, false]);
        // Identical points do not knock each other out.
        assert_eq!(pareto(&[(1.0, 1.0), (1.0, 1.0)], &[true, true], false), vec![true, true]);
    }

    #[test]
    fn interpolation_is_linear_between_neighbours_and_exact_on_points() {
        let xy = [(80.0, 10.0), (20.0, 100.0), (40.0, 60.0)];
        assert_eq!(interpolate(&xy, 40.0), Some((60.0, false, 2, 2)));
        let (y, interp, a, b) = interpolate(&xy, 30.0).unwrap();
        assert!((y - 80.0).abs() < 1e-12 && interp && (a, b) == (1, 2));
        let (y, ..) = interpolate(&xy, 60.0).unwrap();
        assert!((y - 35.0).abs() < 1e-12);
        assert_eq!(interpolate(&xy, 10.0), None);
        assert_eq!(interpolate(&xy, 81.0), None);
    }

    #[test]
    fn headline_takes_the_best_mode_at_the_target() {
        let a = FrontierCurve {
            mode: Mode::Single,
            points: vec![pt(Mode::Single, 1, 100.0, 100.0), pt(Mode::Single, 8, 20.0, 160.0)],
        };
        let b = FrontierCurve {
            mode: Mode::Tp2,
            points: vec![pt(Mode::Tp2, 1, 120.0, 60.0), pt(Mode::Tp2, 16, 30.0, 300.0)],
        };
        let h = headline(&[a.clone(), b], 60.0).unwrap();
        // single: 100 + (160-100)*(60-100)/(20-100) = 130; tp2: 60 + 240*(60-120)/(30-120) = 220.
        assert_eq!((h.mode, h.between, h.interpolated), (Mode::Tp2, (1, 16), true));
        assert!((h.tok_s_per_gpu - 220.0).abs() < 1e-9);
        assert!(headline(&[a], 500.0).is_none());
    }

    #[test]
    fn default_target_is_a_round_number_inside_the_range() {
        let c = FrontierCurve {
            mode: Mode::Single,
            points: vec![pt(Mode::Single, 1, 4.0, 1.0), pt(Mode::Single, 2, 100.0, 1.0)],
        };
        // sqrt(400) = 20.
        assert_eq!(default_target(&[c]), 20.0);
        assert_eq!(default_target(&[]), 0.0);
    }

    #[test]
    fn a_pair_counts_every_gpu_of_both_machines() {
        // PD on two machines of 4 GPUs: 800 tok/s is 100 per GPU; 10 users get 80 tok/s each.
        let f = normalised(Mode::Pd, 10, 500, 800.0, f64::from(Mode::Pd.machines()) * 4.0);
        assert_eq!((f.gpus, f.tok_s_per_gpu, f.tok_s_per_user), (8.0, 100.0, 80.0));
        // Little's law: 10 users x 500 tokens / 800 tok/s.
        assert!((f.e2e_s - 6.25).abs() < 1e-12);
        let one = normalised(Mode::Single, 10, 500, 800.0, f64::from(Mode::Single.machines()) * 4.0);
        assert_eq!(one.tok_s_per_gpu, 200.0);
    }
}

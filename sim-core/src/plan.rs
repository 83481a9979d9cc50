//! The planner: for one model, workload and machine, what one machine gives, what two give as TP2 and as
//! PD, which to run and why; and, where the scenario names four-machine modes, what four give over two.

use crate::dataset::schema::DpRouter;
use crate::model::bandwidth::{place, Placement};
use crate::model::modes::Sweep;
use crate::model::{Coefficients, Prediction};
use crate::scenario::Scenario;
use crate::Mode;
use serde::{Deserialize, Serialize};

/// One concurrency level of a plan: every mode side by side, as data (one prediction per mode, in
/// `Mode::ALL` order), so a new mode is one more entry rather than one more field for every consumer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanRow {
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    pub modes: Vec<Prediction>,
    pub best: Mode,
    /// Best mode's throughput over one machine's.
    #[serde(deserialize_with = "crate::non_finite::null_as_nan")]
    pub gain: f64,
}

impl PlanRow {
    /// The prediction of one mode (every row has one per mode of `Mode::ALL`).
    pub fn get(&self, mode: Mode) -> &Prediction {
        self.modes.iter().find(|p| p.mode == mode).unwrap_or(&self.modes[0])
    }

    /// A mode's throughput over one machine's at this concurrency (NaN when one machine produces nothing).
    pub fn gain_of(&self, mode: Mode) -> f64 {
        let one = self.get(Mode::Single).output_tok_s;
        if one > 0.0 {
            self.get(mode).output_tok_s / one
        } else {
            f64::NAN
        }
    }
}

/// Where the weights live, per GPU, for one machine and for TP2.
#[derive(Debug, Clone, Serialize)]
pub struct PlanPlacement {
    pub mode: Mode,
    pub placement: Placement,
}

/// One mode a published sweep measured at a plan's workload and concurrency, and what the plan predicts there.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredMode {
    pub mode: Mode,
    pub measured_tok_s: f64,
    pub predicted_tok_s: f64,
}

/// What a published sweep of the plan's own setup measured at one of its rows, mode against mode, and whether
/// the model ranks those modes alike: where they disagree a reader sees the measurement beside the model's
/// verdict, not only the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct PublishedVerdict {
    /// The dataset (publication) the points belong to, and the scenario (setup) they measured.
    pub dataset: String,
    pub scenario: String,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    /// Every mode measured there (unflagged points), fastest measured first.
    pub modes: Vec<MeasuredMode>,
    /// The fastest measured mode, and the mode the model puts first among the same modes.
    pub best_measured: Mode,
    pub best_predicted: Mode,
    /// Whether the measurement bears the model's pick out: the same mode, or one the measurement puts within
    /// the planner's own margin (`MIN_GAIN`, 5%) of its winner, which a rerun could reorder.
    pub agrees: bool,
}

impl PublishedVerdict {
    /// The verdict from `measured` (mode, tok/s) at a plan row: `None` unless two modes or more were measured.
    pub fn at(dataset: &str, scenario: &str, row: &PlanRow, measured: &[(Mode, f64)]) -> Option<PublishedVerdict> {
        let modes = measured
            .iter()
            .map(|&(mode, tok)| MeasuredMode { mode, measured_tok_s: tok, predicted_tok_s: row.get(mode).output_tok_s })
            .collect();
        PublishedVerdict::new((dataset, scenario), (row.isl, row.osl, row.concurrency), modes)
    }

    /// The verdict over `modes` a (dataset, scenario) measured at one (ISL, OSL, concurrency): `None` unless
    /// there are two or more.
    pub fn new(
        (dataset, scenario): (&str, &str),
        (isl, osl, concurrency): (u32, u32, u32),
        mut modes: Vec<MeasuredMode>,
    ) -> Option<Self> {
        if modes.len() < 2 {
            return None;
        }
        crate::stats::sort_by(&mut modes, |a, b| b.measured_tok_s.total_cmp(&a.measured_tok_s));
        let mut best_predicted = modes[0].mode;
        let mut top = f64::MIN;
        for m in &modes {
            if m.predicted_tok_s > top {
                (top, best_predicted) = (m.predicted_tok_s, m.mode);
            }
        }
        let mut v = PublishedVerdict {
            dataset: dataset.to_string(),
            scenario: scenario.to_string(),
            isl,
            osl,
            concurrency,
            best_measured: modes[0].mode,
            best_predicted,
            agrees: false,
            modes,
        };
        v.agrees = v.measured_margin() < MIN_GAIN;
        Some(v)
    }

    /// How much faster the measured winner ran than the mode the model puts first (1 when they are the same).
    pub fn measured_margin(&self) -> f64 {
        let measured = |mode: Mode| self.modes.iter().find(|m| m.mode == mode).map_or(0.0, |m| m.measured_tok_s);
        let picked = measured(self.best_predicted);
        if picked > 0.0 {
            measured(self.best_measured) / picked
        } else {
            f64::INFINITY
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub scenario: String,
    pub model: String,
    pub hardware: String,
    /// The engine profile the predictions use and how it was obtained (filled in by `explore::ScenarioRun`).
    pub engine: String,
    /// How TP across the machines costs an all-reduce (`link_cost`): a measured sweep, or the physics.
    pub link: String,
    pub recommended_mode: Mode,
    pub reason: String,
    pub placements: Vec<PlanPlacement>,
    pub rows: Vec<PlanRow>,
    /// What four machines buy over the best pair, where the scenario names four-machine modes (`plan
    /// --machines 4`); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub four_machines: Option<FourMachineVerdict>,
    /// Where a published sweep measured this very setup in two modes or more, what it measured against what
    /// the plan predicts (filled in by `explore::Workspace::plan_of`; empty for a setup nobody measured).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<PublishedVerdict>,
}

/// The best four-machine mode at the top of the concurrency range against one machine and the best pair.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FourMachineVerdict {
    pub best: Mode,
    pub best_pair: Mode,
    /// Output tok/s at the top concurrency summed over the workloads: the best four-machine mode, the best
    /// pair, one machine.
    pub tok_s: f64,
    pub pair_tok_s: f64,
    pub single_tok_s: f64,
    /// Whether machines three and four add at least the planner's margin (`MIN_GAIN`) over the best pair.
    pub worth_it: bool,
    pub reason: String,
}

impl Plan {
    /// The mode to run, or `None` when no mode produces a token anywhere in the range (nothing fits, or the
    /// numbers give nothing): `recommended_mode` then holds `single` only as a placeholder and `reason` says why.
    pub fn recommendation(&self) -> Option<Mode> {
        let any = self.rows.iter().any(|r| r.modes.iter().any(|p| p.output_tok_s > 0.0));
        any.then_some(self.recommended_mode)
    }

    /// Where a publication measured this setup at the highest load it measured and put another two-machine
    /// mode first than the model does, by more than the planner's margin: that measurement. A person then runs
    /// what was measured, or calls the two too close to call; the model alone does not decide it.
    pub fn contradicted(&self) -> Option<&PublishedVerdict> {
        let top = self.published.iter().map(|v| v.concurrency).max()?;
        self.published
            .iter()
            .filter(|v| v.concurrency == top && !v.agrees && v.best_measured.machines() == 2)
            .max_by(|a, b| a.measured_margin().total_cmp(&b.measured_margin()))
    }

    /// The mode to run: what a publication of this very setup measured first where it contradicts the model
    /// (`contradicted`), else the model's `recommendation`.
    pub fn mode_to_run(&self) -> Option<Mode> {
        self.contradicted().map(|v| v.best_measured).or_else(|| self.recommendation())
    }
}

impl PublishedVerdict {
    /// The measurement against the model's pick in words: `measured at 64 clients (kubis-dgx-spark): dp2 567.9
    /// > tp2 471.8 tok/s, dp2 ahead by 20%; the model puts tp2 first: too close to call`.
    pub fn contradiction_text(&self) -> String {
        let measured: Vec<String> =
            self.modes.iter().map(|m| format!("{} {:.1}", m.mode.name(), m.measured_tok_s)).collect();
        format!(
            "measured at {} clients ({}): {} tok/s, {} ahead by {:.0}%; the model puts {} first: too close to call",
            self.concurrency,
            self.dataset,
            measured.join(" > "),
            self.best_measured.name(),
            (self.measured_margin() - 1.0) * 100.0,
            self.best_predicted.name()
        )
    }
}

/// A second machine must beat one machine by this share to be recommended over it.
const MIN_GAIN: f64 = 1.05;

/// Every mode side by side at one workload and concurrency.
pub fn row(s: &Scenario, k: &Coefficients, isl: u32, osl: u32, concurrency: u32) -> PlanRow {
    row_of(&mut Sweep::new(s, k, isl, osl), isl, osl, concurrency)
}

/// The modes a plan's rows answer: one machine's and the pair's (`Mode::ALL`), then the four-machine modes the
/// scenario names.
pub fn plan_modes(s: &Scenario) -> Vec<Mode> {
    let four = Mode::FOUR_MACHINES.into_iter().filter(|m| s.modes.contains(m));
    Mode::ALL.into_iter().chain(four).collect()
}

/// `row` from a sweep that keeps its single-machine answers (two copies at `c` are one machine at `c / 2`).
fn row_of(sweep: &mut Sweep, isl: u32, osl: u32, concurrency: u32) -> PlanRow {
    let modes: Vec<Prediction> = plan_modes(sweep.scenario()).iter().map(|&m| sweep.predict(m, concurrency)).collect();
    // The first mode with the most throughput (ties keep the earlier, simpler mode).
    let best = modes
        .iter()
        .fold((f64::MIN, Mode::Single), |acc, p| if p.output_tok_s > acc.0 { (p.output_tok_s, p.mode) } else { acc })
        .1;
    let best_tok = modes.iter().map(|p| p.output_tok_s).fold(0.0, f64::max);
    let single = modes[0].output_tok_s;
    let gain = if single > 0.0 { best_tok / single } else { f64::INFINITY };
    PlanRow { isl, osl, concurrency, modes, best, gain }
}

/// Builds the plan over every workload and concurrency of the scenario.
pub fn plan(s: &Scenario, k: &Coefficients) -> Plan {
    let mut rows = Vec::new();
    for w in &s.workloads {
        let mut sweep = Sweep::new(s, k, w.isl, w.osl);
        for &c in &s.concurrency {
            rows.push(row_of(&mut sweep, w.isl, w.osl, c));
        }
    }
    let gpus = s.hardware.gpus.max(1.0);
    let one = place(&s.model, &s.hardware, gpus, k);
    let two = place(&s.model, &s.hardware, 2.0 * gpus, k);
    // Decide at the top of the concurrency range, where a second machine is bought to serve load.
    let top = s.concurrency.iter().copied().max().unwrap_or(1);
    let at_top: Vec<&PlanRow> = rows.iter().filter(|r| r.concurrency == top).collect();
    let total = |m: Mode| at_top.iter().map(|r| r.get(m).output_tok_s).sum::<f64>();
    let single_t = total(Mode::Single);
    // The best two-machine mode (ties keep the earlier in `Mode::ALL`).
    let (pair_best, pair_t) = Mode::ALL
        .into_iter()
        .filter(|m| m.machines() == 2)
        .map(|m| (m, total(m)))
        .fold((Mode::Tp2, f64::MIN), |acc, x| if x.1 > acc.1 { x } else { acc });
    let (recommended_mode, reason) = match at_top.first() {
        None => (Mode::Single, "no workload or concurrency to plan for".to_string()),
        Some(r) => {
            let single = r.get(Mode::Single);
            if single.output_tok_s <= 0.0 && pair_t > 0.0 {
                let why = if one.fits {
                    format!("one machine produces nothing (bound: {})", single.bottleneck.name())
                } else {
                    format!("the model does not fit one machine ({:.0} GB of memory missing)", one.missing_bytes / 1e9)
                };
                (
                    pair_best,
                    format!(
                        "{why}; the pair as {} gives {:.0} tok/s at {top} streams ({})",
                        pair_best.name(),
                        pair_t,
                        pair_ratios(r)
                    ),
                )
            } else if pair_t <= 0.0 && single_t <= 0.0 {
                let reason = if !one.fits && !two.fits {
                    format!(
                        "nothing fits: one machine lacks {:.0} GB of memory for this model and the pair (TP2) still lacks {:.0} GB per machine",
                        one.missing_bytes / 1e9,
                        two.missing_bytes / 1e9
                    )
                } else {
                    format!(
                        "no mode produces tokens (bound: {}): check the hardware and model numbers",
                        single.bottleneck.name()
                    )
                };
                (Mode::Single, reason)
            } else if pair_t < single_t * MIN_GAIN {
                (
                    Mode::Single,
                    format!(
                        "a second machine adds less than {:.0}% at {top} streams (bound on one machine: {}; {})",
                        (MIN_GAIN - 1.0) * 100.0,
                        single.bottleneck.name(),
                        pair_ratios(r)
                    ),
                )
            } else {
                (pair_best, explain(r, one.spilled_bytes(), pair_best, s.router))
            }
        }
    };
    let four_machines =
        at_top.first().and_then(|r| four_machine_verdict(r, &total, (pair_best, pair_t), single_t, top));
    Plan {
        scenario: s.id.clone(),
        model: s.model.id.clone(),
        hardware: s.hardware.id.clone(),
        engine: s.engine.clone(),
        link: link_cost(&s.hardware),
        recommended_mode,
        reason,
        four_machines,
        placements: {
            let mut p = vec![
                PlanPlacement { mode: Mode::Single, placement: one },
                PlanPlacement { mode: Mode::Tp2, placement: two },
            ];
            if at_top.first().is_some_and(|r| r.modes.iter().any(|p| p.mode.machines() == 4)) {
                p.push(PlanPlacement { mode: Mode::Tp4, placement: place(&s.model, &s.hardware, 4.0 * gpus, k) });
            }
            p
        },
        rows,
        published: Vec::new(),
    }
}

/// What four machines buy over the best pair at the top concurrency (`row`, one workload's, names the modes;
/// `total` sums a mode over the workloads), or `None` when the plan has no four-machine mode.
fn four_machine_verdict(
    row: &PlanRow,
    total: &dyn Fn(Mode) -> f64,
    (pair_best, pair_t): (Mode, f64),
    single_t: f64,
    top: u32,
) -> Option<FourMachineVerdict> {
    let (best, tok_s) = row.modes.iter().filter(|p| p.mode.machines() == 4).map(|p| (p.mode, total(p.mode))).fold(
        None,
        |acc: Option<(Mode, f64)>, x| match acc {
            Some(a) if a.1 >= x.1 => Some(a),
            _ => Some(x),
        },
    )?;
    let worth_it = tok_s >= pair_t.max(0.0) * MIN_GAIN && tok_s > 0.0;
    let ratio = |a: f64, b: f64| if b > 0.0 { format!("{:.2}x", a / b) } else { "n/a".to_string() };
    let fours: Vec<String> = row
        .modes
        .iter()
        .filter(|p| p.mode.machines() == 4)
        .map(|p| format!("{} {}", p.mode.name(), ratio(total(p.mode), single_t)))
        .collect();
    let reason = if tok_s <= 0.0 {
        format!("no four-machine mode produces a token at {top} streams")
    } else if worth_it {
        format!(
            "{} gives {:.0} tok/s at {top} streams: {} the best pair ({} {:.0} tok/s) and {} one machine; over one \
             machine: {}",
            best.name(),
            tok_s,
            ratio(tok_s, pair_t),
            pair_best.name(),
            pair_t,
            ratio(tok_s, single_t),
            fours.join(", ")
        )
    } else {
        format!(
            "machines three and four add less than {:.0}% over the best pair ({} {:.0} tok/s) at {top} streams; \
             over one machine: {}",
            (MIN_GAIN - 1.0) * 100.0,
            pair_best.name(),
            pair_t,
            fours.join(", ")
        )
    };
    Some(FourMachineVerdict {
        best,
        best_pair: pair_best,
        tok_s,
        pair_tok_s: pair_t,
        single_tok_s: single_t,
        worth_it,
        reason,
    })
}

/// How TP across the machines costs one all-reduce over `hw`'s link, in words: the hardware file's measured
/// sweep where it gives one, else the physics (NCCL's cost for two machines of `hw` on the link's transport, by
/// the protocol it runs at each size).
pub fn link_cost(hw: &crate::spec::HardwareSpec) -> String {
    let link = &hw.link;
    let p = link.all_reduce.points();
    match (p.first(), p.last()) {
        (Some(&(small, _)), Some(&(large, _))) => format!(
            "TP across machines pays the measured all-reduce times ({} sizes, {:.0} KB to {:.0} KB; link.all_reduce_times)",
            p.len(),
            small / 1e3,
            large / 1e3
        ),
        _ => {
            let cost = crate::model::fabric::tp_all_reduce(hw, 2.0).0;
            format!(
                "TP across machines pays NCCL's cost by protocol ({}): {:.1} us per small all-reduce, {:.1} us per \
                 1 MB ({:.0} Gb/s x {}, no measured all-reduce sweep), and {:.0} us of control per step",
                link.transport.name(),
                cost.small_message_latency_s() * 1e6,
                cost.seconds(1e6) * 1e6,
                link.line_rate_bytes_per_sec_per_rail * 8.0 / 1e9,
                link.rails,
                link.round_trip_s * 1e6
            )
        }
    }
}

/// Every two-machine mode's throughput over one machine's at a row, best first: `tp2 2.10x, dp2 1.95x, pd 1.40x`.
pub fn pair_ratios(row: &PlanRow) -> String {
    let mut pairs: Vec<(Mode, f64)> =
        row.modes.iter().filter(|p| p.mode.machines() == 2).map(|p| (p.mode, row.gain_of(p.mode))).collect();
    crate::stats::sort_by(&mut pairs, |a, b| b.1.total_cmp(&a.1));
    pairs
        .iter()
        .map(
            |(m, g)| {
                if g.is_finite() {
                    format!("{} {g:.2}x", m.name())
                } else {
                    format!("{} (one machine: none)", m.name())
                }
            },
        )
        .collect::<Vec<_>>()
        .join(", ")
}

/// A one-line reason for a recommendation, from the predicted numbers: why the mode wins and every pair
/// mode's ratio over one machine, so the margin is visible.
/// `spilled_bytes` is what one machine spills to the slow path (0 when the model fits in GPU memory); `router`
/// is how the scenario's router spreads clients over two copies.
pub fn explain(row: &PlanRow, spilled_bytes: f64, better: Mode, router: DpRouter) -> String {
    let bound = |m: Mode| row.get(m).bottleneck.name();
    let why = match (better, spilled_bytes > 0.0) {
        (Mode::Tp2, true) => format!(
            "one machine spills {:.0} GB to the slow path (bound: {}); TP2 halves the weights per GPU",
            spilled_bytes / 1e9,
            bound(Mode::Single)
        ),
        (Mode::Tp2, false) => {
            format!("the model fits one machine, but TP2 (bound: {}) wins at this load", bound(Mode::Tp2))
        }
        (Mode::Pp2, spills) => format!(
            "{}PP2 wins: each machine holds half of the layers and the pipeline keeps both busy at this load \
             (bound: {})",
            if spills { format!("one machine spills {:.0} GB; ", spilled_bytes / 1e9) } else { String::new() },
            bound(Mode::Pp2)
        ),
        (Mode::Ep2, spills) => format!(
            "{}EP2 wins: the experts are split across the machines (bound: {})",
            if spills { format!("one machine spills {:.0} GB; ", spilled_bytes / 1e9) } else { String::new() },
            bound(Mode::Ep2)
        ),
        (Mode::Dpep2, spills) => format!(
            "{}DP+EP wins: each machine serves its own requests and both split the experts (bound: {})",
            if spills { format!("one machine spills {:.0} GB; ", spilled_bytes / 1e9) } else { String::new() },
            bound(Mode::Dpep2)
        ),
        (Mode::Pd, spills) => format!(
            "{}PD wins: decode never pauses for prefill (bound: {})",
            if spills {
                format!("one machine spills {:.0} GB, yet ", spilled_bytes / 1e9)
            } else {
                "the model fits one machine; ".into()
            },
            bound(Mode::Pd)
        ),
        (Mode::Dp2, spills) => format!(
            "{}two independent copies win: {} and nothing crosses the link (bound: {})",
            if spills {
                format!("one machine spills {:.0} GB, yet ", spilled_bytes / 1e9)
            } else {
                "the model fits one machine; ".into()
            },
            match router {
                DpRouter::Balanced => "each serves half of the clients",
                DpRouter::Random => "each serves the clients a random router sends it",
            },
            bound(Mode::Dp2)
        ),
        (Mode::Tp4, spills) => format!(
            "{}TP4 wins: every weight split over the four machines (bound: {})",
            if spills { format!("one machine spills {:.0} GB; ", spilled_bytes / 1e9) } else { String::new() },
            bound(Mode::Tp4)
        ),
        (Mode::Pp4, spills) => format!(
            "{}PP4 wins: each machine holds a quarter of the layers and the pipeline keeps the four busy (bound: {})",
            if spills { format!("one machine spills {:.0} GB; ", spilled_bytes / 1e9) } else { String::new() },
            bound(Mode::Pp4)
        ),
        (Mode::Dp4, _) => {
            format!("four independent copies win: nothing crosses the links (bound: {})", bound(Mode::Dp4))
        }
        (Mode::Single, _) => format!("one machine is enough (bound: {})", bound(Mode::Single)),
    };
    format!("{why}; over one machine: {}", pair_ratios(row))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Bottleneck;

    fn row(predicted: &[(Mode, f64)]) -> PlanRow {
        let modes = Mode::ALL
            .iter()
            .map(|&mode| Prediction {
                mode,
                isl: 1024,
                osl: 128,
                concurrency: 64,
                output_tok_s: predicted.iter().find(|(m, _)| *m == mode).map_or(0.0, |p| p.1),
                ttft_s: 0.0,
                tpot_s: 0.0,
                step_s: 0.0,
                resident_seqs: 0.0,
                max_resident_seqs: 0.0,
                bottleneck: Bottleneck::HbmBandwidth,
                tokens_per_step: 1.0,
                preemptions_per_request: 0.0,
                kv_utilization: 0.0,
                queue_s: 0.0,
            })
            .collect();
        PlanRow { isl: 1024, osl: 128, concurrency: 64, modes, best: Mode::Single, gain: 1.0 }
    }

    #[test]
    fn a_published_verdict_ranks_the_measured_modes_and_says_where_the_model_disagrees() {
        // The model's own best mode (PD here) was not measured: the model is judged among the measured modes.
        let r = row(&[(Mode::Single, 350.0), (Mode::Tp2, 630.0), (Mode::Dp2, 460.0), (Mode::Pd, 700.0)]);
        let v = PublishedVerdict::at("d", "s", &r, &[(Mode::Single, 356.0), (Mode::Tp2, 478.0), (Mode::Dp2, 508.0)])
            .expect("three modes measured");
        let order: Vec<Mode> = v.modes.iter().map(|m| m.mode).collect();
        assert_eq!(order, vec![Mode::Dp2, Mode::Tp2, Mode::Single], "fastest measured first");
        assert_eq!((v.best_measured, v.best_predicted), (Mode::Dp2, Mode::Tp2));
        assert!(!v.agrees);
        assert_eq!(v.modes[0].predicted_tok_s, 460.0, "each measured mode carries the plan's prediction");
        assert!((v.measured_margin() - 508.0 / 478.0).abs() < 1e-12);
        let same = PublishedVerdict::at("d", "s", &r, &[(Mode::Single, 356.0), (Mode::Tp2, 478.0)]).expect("two modes");
        assert!(same.agrees);
        // The model's pick measured within 5% of the winner: a tie a rerun could reorder, not a disagreement.
        let tie = PublishedVerdict::at("d", "s", &r, &[(Mode::Tp2, 478.0), (Mode::Dp2, 490.0)]).expect("two modes");
        assert_eq!((tie.best_measured, tie.best_predicted), (Mode::Dp2, Mode::Tp2));
        assert!(tie.agrees);
        assert!(PublishedVerdict::at("d", "s", &r, &[(Mode::Tp2, 478.0)]).is_none(), "one mode is no comparison");
    }
}

//! The planner: for one model, workload and machine, what one machine gives, what two give as TP2 and as
//! PD, which to run and why.

use crate::model::bandwidth::{place, Placement};
use crate::model::{predict, Coefficients, Prediction};
use crate::scenario::Scenario;
use crate::Mode;
use serde::Serialize;

/// One concurrency level of a plan: every mode side by side, as data (one prediction per mode, in
/// `Mode::ALL` order), so a new mode is one more entry rather than one more field for every consumer.
#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    pub modes: Vec<Prediction>,
    pub best: Mode,
    /// Best mode's throughput over one machine's.
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

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub scenario: String,
    pub model: String,
    pub hardware: String,
    pub recommended_mode: Mode,
    pub reason: String,
    pub placements: Vec<PlanPlacement>,
    pub rows: Vec<PlanRow>,
}

/// A second machine must beat one machine by this share to be recommended over it.
const MIN_GAIN: f64 = 1.05;

/// Every mode side by side at one workload and concurrency.
pub fn row(s: &Scenario, k: &Coefficients, isl: u32, osl: u32, concurrency: u32) -> PlanRow {
    let modes: Vec<Prediction> = Mode::ALL.iter().map(|&m| predict(s, k, m, isl, osl, concurrency)).collect();
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
        for &c in &s.concurrency {
            rows.push(row(s, k, w.isl, w.osl, c));
        }
    }
    let gpus = s.hardware.gpus.max(1.0);
    let one = place(&s.model, &s.hardware, gpus, k);
    let two = place(&s.model, &s.hardware, 2.0 * gpus, k);
    // Decide at the top of the concurrency range, where a second machine is bought to serve load.
    let top = s.concurrency.iter().copied().max().unwrap_or(1);
    let at_top: Vec<&PlanRow> = rows.iter().filter(|r| r.concurrency == top).collect();
    let total = |m: Mode| at_top.iter().map(|r| r.get(m).output_tok_s).sum::<f64>();
    let (single_t, tp2_t, pd_t) = (total(Mode::Single), total(Mode::Tp2), total(Mode::Pd));
    let (recommended_mode, reason) = match at_top.first() {
        None => (Mode::Single, "no workload or concurrency to plan for".to_string()),
        Some(r) => {
            let pair_best = if tp2_t >= pd_t { Mode::Tp2 } else { Mode::Pd };
            let pair_t = tp2_t.max(pd_t);
            let single = r.get(Mode::Single);
            if single.output_tok_s <= 0.0 && pair_t > 0.0 {
                (pair_best, format!("the model does not fit one machine (bound: {}); the pair as {} gives {:.0} tok/s at {top} streams", single.bottleneck.name(), pair_best.name(), pair_t))
            } else if pair_t <= 0.0 && single_t <= 0.0 {
                let reason = if single.bottleneck == crate::model::Bottleneck::DoesNotFit {
                    "the model fits neither one machine nor the pair: more memory is needed".to_string()
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
                        "a second machine adds less than {:.0}% at {top} streams (bound on one machine: {})",
                        (MIN_GAIN - 1.0) * 100.0,
                        single.bottleneck.name()
                    ),
                )
            } else {
                (pair_best, explain(r, one.spilled_bytes(), pair_best))
            }
        }
    };
    Plan {
        scenario: s.id.clone(),
        model: s.model.id.clone(),
        hardware: s.hardware.id.clone(),
        recommended_mode,
        reason,
        placements: vec![
            PlanPlacement { mode: Mode::Single, placement: one },
            PlanPlacement { mode: Mode::Tp2, placement: two },
        ],
        rows,
    }
}

/// A one-line reason for a recommendation, from the predicted numbers.
/// `spilled_bytes` is what one machine spills to the slow path (0 when the model fits in GPU memory).
pub fn explain(row: &PlanRow, spilled_bytes: f64, better: Mode) -> String {
    let (single, tp2, pd) = (row.get(Mode::Single), row.get(Mode::Tp2), row.get(Mode::Pd));
    let gain =
        |p: &Prediction| if single.output_tok_s > 0.0 { p.output_tok_s / single.output_tok_s } else { f64::INFINITY };
    match (better, spilled_bytes > 0.0) {
        (Mode::Tp2, true) => format!(
            "one machine spills {:.0} GB to the slow path (bound: {}); TP2 halves the weights per GPU and gives {:.1}x, PD keeps the spill on both and gives {:.1}x",
            spilled_bytes / 1e9,
            single.bottleneck.name(),
            gain(tp2),
            gain(pd)
        ),
        (Mode::Tp2, false) => format!(
            "the model fits one machine, but TP2 ({:.1}x, bound: {}) beats PD ({:.1}x, bound: {}) at this load",
            gain(tp2),
            tp2.bottleneck.name(),
            gain(pd),
            pd.bottleneck.name()
        ),
        (_, true) => format!(
            "one machine spills {:.0} GB, yet PD ({:.1}x, bound: {}) beats TP2 ({:.1}x, bound: {}) at this load",
            spilled_bytes / 1e9,
            gain(pd),
            pd.bottleneck.name(),
            gain(tp2),
            tp2.bottleneck.name()
        ),
        (_, false) => format!(
            "the model fits one machine: two full copies with PD give {:.1}x (decode never pauses for prefill; bound: {}), TP2 gives {:.1}x (bound: {})",
            gain(pd),
            pd.bottleneck.name(),
            gain(tp2),
            tp2.bottleneck.name()
        ),
    }
}

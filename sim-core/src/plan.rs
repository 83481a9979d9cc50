//! The planner: for one model, workload and machine, what one machine gives, what two give as TP2 and as
//! PD, which to run and why.

use crate::model::bandwidth::{place, Placement};
use crate::model::{predict, Coefficients, Prediction};
use crate::report::explain;
use crate::scenario::Scenario;
use crate::Mode;
use serde::Serialize;

/// One concurrency level of a plan: the three modes side by side.
#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    pub single: Prediction,
    pub tp2: Prediction,
    pub pd: Prediction,
    pub best: Mode,
    /// Best mode's throughput over one machine's.
    pub gain: f64,
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

/// The three modes side by side at one workload and concurrency.
pub fn row(s: &Scenario, k: &Coefficients, isl: u32, osl: u32, concurrency: u32) -> PlanRow {
    let single = predict(s, k, Mode::Single, isl, osl, concurrency);
    let tp2 = predict(s, k, Mode::Tp2, isl, osl, concurrency);
    let pd = predict(s, k, Mode::Pd, isl, osl, concurrency);
    let best = [(&single, Mode::Single), (&tp2, Mode::Tp2), (&pd, Mode::Pd)]
        .into_iter()
        .fold((f64::MIN, Mode::Single), |acc, (p, m)| if p.output_tok_s > acc.0 { (p.output_tok_s, m) } else { acc })
        .1;
    let best_tok = [single.output_tok_s, tp2.output_tok_s, pd.output_tok_s].into_iter().fold(0.0, f64::max);
    let gain = if single.output_tok_s > 0.0 { best_tok / single.output_tok_s } else { f64::INFINITY };
    PlanRow { isl, osl, concurrency, single, tp2, pd, best, gain }
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
    let total = |f: fn(&PlanRow) -> f64| at_top.iter().map(|r| f(r)).sum::<f64>();
    let (single_t, tp2_t, pd_t) =
        (total(|r| r.single.output_tok_s), total(|r| r.tp2.output_tok_s), total(|r| r.pd.output_tok_s));
    let (recommended_mode, reason) = match at_top.first() {
        None => (Mode::Single, "no workload or concurrency to plan for".to_string()),
        Some(r) => {
            let pair_best = if tp2_t >= pd_t { Mode::Tp2 } else { Mode::Pd };
            let pair_t = tp2_t.max(pd_t);
            if r.single.output_tok_s <= 0.0 && pair_t > 0.0 {
                (pair_best, format!("the model does not fit one machine (bound: {}); the pair as {} gives {:.0} tok/s at {top} streams", r.single.bottleneck.name(), pair_best.name(), pair_t))
            } else if pair_t <= 0.0 && single_t <= 0.0 {
                let reason = if r.single.bottleneck == crate::model::Bottleneck::DoesNotFit {
                    "the model fits neither one machine nor the pair: more memory is needed".to_string()
                } else {
                    format!(
                        "no mode produces tokens (bound: {}): check the hardware and model numbers",
                        r.single.bottleneck.name()
                    )
                };
                (Mode::Single, reason)
            } else if pair_t < single_t * MIN_GAIN {
                (
                    Mode::Single,
                    format!(
                        "a second machine adds less than {:.0}% at {top} streams (bound on one machine: {})",
                        (MIN_GAIN - 1.0) * 100.0,
                        r.single.bottleneck.name()
                    ),
                )
            } else {
                (
                    pair_best,
                    explain(&r.single, &r.tp2, &r.pd, one.spilled_bytes() > 0.0, one.spilled_bytes(), pair_best),
                )
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

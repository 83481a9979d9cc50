//! The transfer check: on a GPU without its own kernel table, whose GEMM curves are carried over from another
//! GPU's table by the ridge-relative rule, the model's prefill rate against the saturated prefill rates a source
//! measured there. The `roofline` profile predicts (the carried-over curves and kernel costs, no fitted
//! efficiency or overhead), so the check judges the transfer, not a fit; the engine's per-step costs are a few
//! milliseconds against a step of thousands of prompt tokens.
//!
//! ```text
//!   a point stating a prefill rate, its level's prompts filling at least one step (concurrency x isl >= chunk)
//!   the level's prompts, in order, cut into steps of the engine's token budget --> Engine::step each --> seconds
//!   predicted rate = prompt tokens / the steps' seconds          error = predicted / measured - 1
//! ```
//! The decodes that finished prompts run beside later chunks are left out: a token each against a step of
//! thousands.

use super::step_check::CHECK_ENGINE;
use super::{FitSet, Workspace};
use crate::model::batching::StepLoad;
use crate::model::modes::mode_engine;
use crate::spec::CurveSource;
use crate::Mode;
use serde::Serialize;

/// One measured prefill rate against the model's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransferCheckRow {
    pub scenario: String,
    pub isl: u32,
    pub concurrency: u32,
    /// The engine's token budget per step the prompts are cut into.
    pub chunk_tokens: f64,
    pub measured_tok_s: f64,
    pub predicted_tok_s: f64,
}

impl TransferCheckRow {
    /// Predicted over measured, less one.
    pub fn error(&self) -> f64 {
        self.predicted_tok_s / self.measured_tok_s - 1.0
    }
}

/// One GPU's check: its carried-over table, every saturated prefill rate measured on it, and the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransferCheck {
    /// The machine's hardware id, and the table its curves come from with the GPU that table measured.
    pub hardware: String,
    pub table: String,
    pub table_gpu: String,
    pub rows: Vec<TransferCheckRow>,
    pub median_ape: f64,
    pub max_ape: f64,
    /// `data/accuracy.json`'s `transfer_check.ape_max`, and whether every row is within it.
    pub target_ape: Option<f64>,
    pub met: Option<bool>,
}

impl Workspace {
    /// The transfer check of every machine whose curves are carried over and that has saturated prefill rates,
    /// by hardware id.
    pub fn transfer_checks(&self) -> Vec<TransferCheck> {
        let target = self.dataset.accuracy.as_ref().and_then(|a| a.transfer_check.as_ref()).map(|t| t.ape_max);
        let mut by_hardware: Vec<(String, String, String, Vec<TransferCheckRow>)> = Vec::new();
        for p in self.points() {
            let (Some(measured), Some(s)) = (p.prefill_tok_s, self.scenarios.get(&p.scenario)) else { continue };
            let CurveSource::Transferred { table, gpu } = &s.hardware.gemm.source else { continue };
            let Some(row) = self.transfer_row(s, p.isl, p.concurrency, measured) else { continue };
            match by_hardware.iter_mut().find(|(hw, ..)| *hw == s.hardware.id) {
                Some((.., rows)) => rows.push(row),
                None => by_hardware.push((s.hardware.id.clone(), table.clone(), gpu.clone(), vec![row])),
            }
        }
        by_hardware
            .into_iter()
            .map(|(hardware, table, table_gpu, rows)| {
                let apes: Vec<f64> = rows.iter().map(|r| r.error().abs() * 100.0).collect();
                let median_ape = crate::stats::ErrorStats::of(&apes).map_or(f64::NAN, |e| e.median_ape);
                let max_ape = apes.iter().copied().fold(0.0, f64::max);
                TransferCheck {
                    hardware,
                    table,
                    table_gpu,
                    median_ape,
                    max_ape,
                    target_ape: target,
                    met: target.map(|x| !rows.is_empty() && max_ape <= x),
                    rows,
                }
            })
            .collect()
    }

    /// The roofline profile's prefill rate for `concurrency` prompts of `isl` tokens on `s`'s machine, cut into
    /// the steps of the scenario's own engine; `None` where the prompts do not fill one step (the rate is then
    /// the request path's, not the machine's) or the profile does not resolve.
    fn transfer_row(
        &self,
        s: &crate::scenario::Scenario,
        isl: u32,
        concurrency: u32,
        measured: f64,
    ) -> Option<TransferCheckRow> {
        let (own, _) = self.coefficients_for(s, FitSet::All).ok()?;
        let chunk = own.batch_limits(&s.hardware).tokens_per_step;
        let tokens = f64::from(concurrency) * f64::from(isl);
        if tokens < chunk || chunk < 1.0 {
            return None;
        }
        let roofline = crate::scenario::Scenario { engine: CHECK_ENGINE.to_string(), ..s.clone() };
        let (k, _) = self.scenario_coefficients(&roofline).ok()?;
        let engine = mode_engine(&roofline, &k, Mode::Single);
        let seconds = prefill_steps(f64::from(isl), f64::from(concurrency), chunk)
            .iter()
            .map(|pieces| {
                let mut load = StepLoad::default();
                for &(offset, n) in pieces {
                    load.add_prefill(&roofline.model, 1.0, offset, n);
                }
                engine.step(&load).total_s
            })
            .sum::<f64>();
        (seconds > 0.0).then(|| TransferCheckRow {
            scenario: s.id.clone(),
            isl,
            concurrency,
            chunk_tokens: chunk,
            measured_tok_s: measured,
            predicted_tok_s: tokens / seconds,
        })
    }
}

/// `count` prompts of `isl` tokens, in order, cut into steps of at most `chunk` tokens: each step's pieces as
/// (tokens of its prompt already computed, tokens in this step), as a chunked-prefill scheduler fills its budget.
fn prefill_steps(isl: f64, count: f64, chunk: f64) -> Vec<Vec<(f64, f64)>> {
    let mut steps = vec![Vec::new()];
    let mut room = chunk;
    for _ in 0..count as u64 {
        let mut done = 0.0;
        while done < isl {
            if room <= 0.0 {
                steps.push(Vec::new());
                room = chunk;
            }
            let n = (isl - done).min(room);
            if let Some(step) = steps.last_mut() {
                step.push((done, n));
            }
            done += n;
            room -= n;
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten prompts of 1,024 tokens under a budget of 8,192 make a full step of eight and a step of two; a prompt of
    /// 10,000 tokens runs as a chunk of 8,192 and one of the remaining 1,808 after it.
    #[test]
    fn prompts_fill_the_budget_in_order_and_split_across_steps() {
        let steps = prefill_steps(1024.0, 10.0, 8192.0);
        assert_eq!(steps.len(), 2);
        assert_eq!((steps[0].len(), steps[1].len()), (8, 2));
        assert_eq!(steps[1][0], (0.0, 1024.0));
        assert_eq!(prefill_steps(10_000.0, 1.0, 8192.0), vec![vec![(0.0, 8192.0)], vec![(8192.0, 1808.0)]]);
    }
}

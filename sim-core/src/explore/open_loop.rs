//! Open-loop questions of a scenario (`OpenLoopQuery`): `vllm bench serve`'s rate sweep, each rate one open-loop
//! point per workload and mode, with its latency percentiles.

use super::ScenarioRun;
use crate::model::open_loop::{predict_open_loop, OpenLoopPrediction, OpenLoopRefusal};
use crate::model::serving::OpenLoad;
use crate::Mode;

/// A rate sweep: the rates offered, and the rest of the load every rate shares (its `rate` is replaced).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoopQuery {
    pub modes: Vec<Mode>,
    pub rates: Vec<f64>,
    pub load: OpenLoad,
}

impl ScenarioRun {
    /// Every workload of the scenario, each mode, each rate, in that order; the first point refused ends the
    /// sweep with its reason.
    pub fn open_loop(&self, q: &OpenLoopQuery) -> Result<Vec<OpenLoopPrediction>, OpenLoopRefusal> {
        let s = &self.scenario;
        // A bad load is refused before any point runs (a sweep's rates share everything else).
        for &rate in &q.rates {
            OpenLoad { rate, ..q.load }.check()?;
        }
        let mut out = Vec::new();
        for w in &s.workloads {
            for &m in &q.modes {
                for &rate in &q.rates {
                    out.push(predict_open_loop(s, &self.coefficients, m, w.isl, w.osl, &OpenLoad { rate, ..q.load })?);
                }
            }
        }
        Ok(out)
    }
}

//! Engine profiles: what the serving software achieves (efficiencies, overheads, reserves, chunking), kept
//! apart from the hardware's physics and the model's geometry. A profile is data (`data/engines/`): fitted on a
//! dataset's points (the engine build those points were measured with) or given as values with their basis.
//! Every prediction names the profile it uses.

use super::Workspace;
use crate::dataset::schema::{EngineFile, DEFAULT_ENGINE, REPORT_DATASET};
use crate::dataset::MeasuredPoint;
use crate::fit::{fit_from, FitSet};
use crate::model::Coefficients;
use serde::Serialize;
use std::sync::Arc;

/// The prior pull of an engine fit: the same weak pull the report's own fit uses.
const PRIOR_WEIGHT: f64 = 1e-3;

/// An engine profile ready to predict with.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct EngineProfile {
    pub id: String,
    pub name: String,
    /// How the coefficients were obtained, in words: `fitted on 55 points of gb300-report (every mode)`.
    pub obtained: String,
    pub coefficients: Coefficients,
}

/// Whether an engine file's fit admits a point (its dataset, and its modes and scenarios when it names them).
pub fn fitted_on(e: &EngineFile, p: &MeasuredPoint) -> bool {
    e.fitted_on.as_ref().is_some_and(|f| {
        f.dataset == p.dataset
            && f.modes.as_ref().is_none_or(|m| m.contains(&p.mode))
            && f.scenarios.as_ref().is_none_or(|s| s.contains(&p.scenario))
    })
}

impl Workspace {
    /// Every engine profile of the dataset, fitted, in id order (a profile that cannot be built is an error
    /// message in its place).
    pub fn engines(&self) -> Vec<Result<Arc<EngineProfile>, String>> {
        self.dataset.engines.keys().map(|id| self.engine(id)).collect()
    }

    /// The same scenario predicted with another engine profile (the roofline, another build's fit); a
    /// scenario's own `calibration` belongs to its engine and is dropped.
    pub fn with_engine(&self, mut run: super::ScenarioRun, engine: &str) -> Result<super::ScenarioRun, String> {
        run.scenario.engine = engine.to_string();
        let (coefficients, how) = self.coefficients_for(&run.scenario, FitSet::All)?;
        run.coefficients = coefficients;
        run.engine = how;
        Ok(run)
    }

    /// The engine profile `id`, fitted on first use. The default profile of a dataset without engine files is
    /// the fit on the calibration dataset, so older datasets keep working.
    pub fn engine(&self, id: &str) -> Result<Arc<EngineProfile>, String> {
        if let Some(e) = self.engine_cache.lock().ok().and_then(|c| c.get(id).cloned()) {
            return Ok(e);
        }
        let profile = Arc::new(self.build_engine(id)?);
        if let Ok(mut c) = self.engine_cache.lock() {
            c.insert(id.to_string(), profile.clone());
        }
        Ok(profile)
    }

    fn build_engine(&self, id: &str) -> Result<EngineProfile, String> {
        let Some(e) = self.dataset.engines.get(id) else {
            if id == DEFAULT_ENGINE {
                let cal = self.calibration(FitSet::All);
                return Ok(EngineProfile {
                    id: id.into(),
                    name: "fitted on the calibration dataset".into(),
                    obtained: format!("fitted on {} points of {REPORT_DATASET}", cal.points_used),
                    coefficients: cal.coefficients.clone(),
                });
            }
            let known: Vec<&str> = self.dataset.engines.keys().map(String::as_str).collect();
            return Err(format!("unknown engine profile `{id}` (known: {})", known.join(", ")));
        };
        if e.based_on.is_some() && e.fitted_on.is_some() {
            return Err(format!("engine `{id}`: `based_on` and `fitted_on` exclude each other"));
        }
        let (mut base, inherited) = match &e.based_on {
            Some(parent) => {
                // Follow the chain first: a cycle would otherwise recurse without end.
                let mut seen = vec![id];
                let mut next = Some(parent.as_str());
                while let Some(p) = next {
                    if seen.contains(&p) {
                        return Err(format!(
                            "engine `{id}`: `based_on` runs in a circle ({} -> {p})",
                            seen.join(" -> ")
                        ));
                    }
                    seen.push(p);
                    next = self.dataset.engines.get(p).and_then(|f| f.based_on.as_deref());
                }
                let p = self.engine(parent).map_err(|m| format!("engine `{id}`: based_on: {m}"))?;
                (p.coefficients.clone(), format!("{parent}'s coefficients ({})", p.obtained))
            }
            None => (Coefficients::default(), String::new()),
        };
        let mut given = Vec::new();
        if let Some(a) = &e.admission {
            base.admission = a.policy;
            given.push(format!("admission {} ({})", a.policy.name(), a.basis.label()));
        }
        for (name, q) in &e.coefficients {
            let v = q.si().ok_or_else(|| format!("engine `{id}`: `{name}` has an unknown unit `{}`", q.unit))?;
            base.set_named(name, v).map_err(|m| format!("engine `{id}`: {m}"))?;
            given.push(name.clone());
        }
        let given = if given.is_empty() { String::new() } else { format!("; given: {}", given.join(", ")) };
        let Some(f) = &e.fitted_on else {
            let obtained =
                if inherited.is_empty() { format!("not fitted{given}") } else { format!("{inherited}{given}") };
            return Ok(EngineProfile { id: id.into(), name: e.name.clone(), obtained, coefficients: base });
        };
        let modes = f.modes.as_ref().map_or("every mode".to_string(), |m| {
            m.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ") + " points"
        });
        // The default profile fitted on every calibration point is the report's own fit: reuse it.
        let coefficients =
            if f.dataset == REPORT_DATASET && f.modes.is_none() && f.scenarios.is_none() && e.coefficients.is_empty() {
                self.calibration(FitSet::All).clone()
            } else {
                let points: Vec<MeasuredPoint> = self.points().iter().filter(|p| fitted_on(e, p)).cloned().collect();
                if points.is_empty() {
                    return Err(format!("engine `{id}` is fitted on `{}`, which has no such points", f.dataset));
                }
                fit_from(&base, &self.scenarios, &points, FitSet::All, PRIOR_WEIGHT)
            };
        Ok(EngineProfile {
            id: id.into(),
            name: e.name.clone(),
            obtained: format!("fitted on {} points of {} ({modes}){given}", coefficients.points_used, f.dataset),
            coefficients: coefficients.coefficients,
        })
    }
}

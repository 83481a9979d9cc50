//! Engine profiles: what the serving software achieves (efficiencies, overheads, reserves, chunking), kept
//! apart from the hardware's physics and the model's geometry. A profile is data (`data/engines/`): fitted on a
//! dataset's points (the engine build those points were measured with) or given as values with their basis.
//! Every prediction names the profile it uses. A profile whose efficiencies come from microbenchmarks (the
//! roofline) takes them from the scenario's machine here, in `scenario_coefficients`, the one place a profile
//! meets a machine.

use super::Workspace;
use crate::dataset::schema::{EngineFile, HardwareFile, Quantity, DEFAULT_ENGINE, REPORT_DATASET};
use crate::dataset::MeasuredPoint;
use crate::fit::{fit_from, FitSet};
use crate::model::{Coefficients, EngineSettings};
use crate::scenario::Scenario;
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

/// The basis of a quantity in words: its basis and what backs it (the reference, derivation, reason or quote).
fn provenance(q: &Quantity) -> String {
    let backing = q
        .reference
        .as_deref()
        .or(q.derivation.as_deref())
        .or(q.reason.as_deref())
        .or(q.fitted_on.as_deref())
        .or(q.from.as_ref().map(|f| f.quote.as_str()));
    match backing {
        Some(b) => format!("{}: {b}", q.basis.label()),
        None => q.basis.label().to_string(),
    }
}

/// Sets a practical roofline's efficiencies from a machine's microbenchmarks (`hw`, the scenario's hardware
/// file; `None` for a machine the dataset has no file of): `hbm_efficiency` = achieved / `gpu_memory_bandwidth`,
/// `slow_efficiency` = achieved / `slow_path_bandwidth`, `compute_efficiency` = the dense GEMM fraction. An
/// efficiency without a microbenchmark keeps the profile's value (the roofline's 1, the spec). Returns each
/// efficiency's basis in words, naming the benchmark.
pub fn practical_efficiencies(k: &mut Coefficients, hw: Option<&HardwareFile>, machine: &str) -> Vec<String> {
    let mb = hw.and_then(|h| h.microbenchmarks.as_ref());
    // (efficiency, its value in the profile, microbenchmark field, the figure, the spec it divides: none for a
    // fraction)
    type Figure<'a> = (&'static str, f64, &'static str, Option<&'a Quantity>, Option<&'a Quantity>);
    let figures: [Figure; 3] = [
        (
            "hbm_efficiency",
            k.hbm_efficiency,
            "hbm_bandwidth",
            mb.and_then(|m| m.hbm_bandwidth.as_ref()),
            hw.map(|h| &h.gpu_memory_bandwidth),
        ),
        (
            "slow_efficiency",
            k.slow_efficiency,
            "slow_path_bandwidth",
            mb.and_then(|m| m.slow_path_bandwidth.as_ref()),
            hw.map(|h| &h.slow_path_bandwidth),
        ),
        (
            "compute_efficiency",
            k.compute_efficiency,
            "dense_gemm_fraction",
            mb.and_then(|m| m.dense_gemm_fraction.as_ref()),
            None,
        ),
    ];
    let mut bases = Vec::new();
    for (name, current, field, figure, spec) in figures {
        let Some(q) = figure else {
            bases.push(format!(
                "{name} {current:.3} as the profile gives it (no `{field}` microbenchmark for {machine})"
            ));
            continue;
        };
        let (value, how) = match spec {
            Some(spec) => (
                q.si().zip(spec.si()).map(|(a, s)| a / s),
                format!("{} {} of {} {} on {machine}", q.value, q.unit, spec.value, spec.unit),
            ),
            None => (q.si(), format!("dense GEMM fraction on {machine}")),
        };
        match value.map(|v| (v, k.set_named(name, v))) {
            Some((v, Ok(()))) => bases.push(format!("{name} {v:.3} (derived: {how}; {})", provenance(q))),
            _ => bases.push(format!(
                "{name} {current:.3} as the profile gives it (the `{field}` microbenchmark of {machine} is not a \
                 usable number: run `sim-core validate`)"
            )),
        }
    }
    bases
}

/// A fitted efficiency above what a public microbenchmark reached on a machine the profile was fitted on: no
/// engine streams or multiplies faster than a kernel built to do only that, so the points ask for fewer bytes
/// or FLOPs than the model charges (a cost counted that the machine does not pay, or one missing elsewhere).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AboveMeasured {
    pub name: &'static str,
    pub value: f64,
    /// What the microbenchmark reached, as the same share of the spec.
    pub ceiling: f64,
    pub machine: String,
    /// The microbenchmark's figure, the spec it divides and its source, in words.
    pub how: String,
}

impl Workspace {
    /// The coefficients of profile `id` that a fit left outside their plausible range or at its edge
    /// (`fit::implausible`); empty for a profile that is not fitted (given, or another's coefficients) and for an
    /// unknown id. The profile of a dataset without engine files is the fit on the calibration dataset.
    pub fn outside_plausible_range(&self, id: &str) -> Vec<crate::fit::Implausible> {
        let Ok(profile) = self.engine(id) else { return Vec::new() };
        match self.dataset.engines.get(id) {
            Some(e) if e.fitted_on.is_none() => Vec::new(),
            _ => crate::fit::implausible(&profile.coefficients),
        }
    }

    /// The efficiencies of profile `id` above what a public microbenchmark reached on a machine its fit saw
    /// (the hardware files' `microbenchmarks` of the fitted points' machines); empty for a profile that is not
    /// fitted, for one fitted on machines without microbenchmarks, and for an unknown id. The profile of a
    /// dataset without engine files is the fit on the calibration dataset.
    pub fn above_measured(&self, id: &str) -> Vec<AboveMeasured> {
        let Ok(profile) = self.engine(id) else { return Vec::new() };
        let fitted: Vec<MeasuredPoint> = match self.dataset.engines.get(id) {
            Some(e) if e.fitted_on.is_some() => self.points().iter().filter(|p| fitted_on(e, p)).cloned().collect(),
            Some(_) => return Vec::new(),
            None => self.points().iter().filter(|p| p.dataset == REPORT_DATASET).cloned().collect(),
        };
        let mut machines: Vec<&str> =
            fitted.iter().filter_map(|p| self.scenarios.get(&p.scenario)).map(|s| s.hardware.id.as_str()).collect();
        crate::stats::sort(&mut machines);
        machines.dedup();
        machines.into_iter().flat_map(|machine| self.above_microbenchmarks(&profile.coefficients, machine)).collect()
    }

    /// The efficiencies of `k` above what a public microbenchmark reached on `machine` (its hardware file's
    /// `microbenchmarks`): a fit that streams faster than the machine was measured to is a cost the physics
    /// lacks standing in for it. Empty for a machine without microbenchmarks or without a hardware file.
    pub fn above_microbenchmarks(&self, k: &Coefficients, machine: &str) -> Vec<AboveMeasured> {
        // The roofline's own arithmetic, on efficiencies no microbenchmark sets: what stays NaN is unmeasured.
        let mut measured = Coefficients {
            hbm_efficiency: f64::NAN,
            slow_efficiency: f64::NAN,
            compute_efficiency: f64::NAN,
            ..Coefficients::default()
        };
        let bases = practical_efficiencies(&mut measured, self.dataset.hardware.get(machine), machine);
        let mut out = Vec::new();
        for (name, ceiling, value) in [
            ("hbm_efficiency", measured.hbm_efficiency, k.hbm_efficiency),
            ("slow_efficiency", measured.slow_efficiency, k.slow_efficiency),
            ("compute_efficiency", measured.compute_efficiency, k.compute_efficiency),
        ] {
            if ceiling.is_finite() && value > ceiling {
                let how = bases.iter().find(|b| b.starts_with(name)).cloned().unwrap_or_default();
                out.push(AboveMeasured { name, value, ceiling, machine: machine.to_string(), how });
            }
        }
        out
    }

    /// The coefficients a scenario predicts with and how they were obtained, in words: its engine profile and,
    /// for a profile whose efficiencies come from microbenchmarks (the roofline), those of the scenario's
    /// machine (its hardware file by id; an inline machine the dataset has no file of keeps the profile's values).
    pub fn scenario_coefficients(&self, s: &Scenario) -> Result<(Coefficients, String), String> {
        let e = self.engine(&s.engine)?;
        let mut k = e.coefficients.clone();
        let mut how = format!("engine profile `{}` ({}): {}", e.id, e.name, e.obtained);
        if self.dataset.engines.get(&s.engine).is_some_and(|f| f.efficiencies_from_microbenchmarks) {
            let hw = self.dataset.hardware.get(&s.hardware.id).filter(|h| h.name == s.hardware.name);
            let mut bases = practical_efficiencies(&mut k, hw, &s.hardware.id);
            // A kernel table measured the GEMMs' share of the peak: the curve is the compute efficiency, and a
            // dense GEMM microbenchmark would count it twice.
            if k.gemms_at_table_curve(&s.hardware) {
                k.compute_efficiency = 1.0;
                bases.retain(|b| !b.starts_with("compute_efficiency"));
                bases.push(format!(
                    "compute_efficiency 1 (each GEMM at the share of the tensor peak its intensity reaches: {})",
                    s.hardware.gemm.source.describe()
                ));
            }
            how = format!("{how}; on this machine: {}", bases.join("; "));
        }
        Ok((k, how))
    }

    /// What engine build `engine` states for itself rather than fits: its profile's admission policy and given
    /// settings (memory shares, chunk, block size, sequence cap), inherited along `based_on` (the nearest
    /// profile's word wins). Empty for an id the dataset has no file of; a `based_on` cycle stops where it
    /// closes (`engine` reports it).
    pub fn engine_settings(&self, engine: &str) -> EngineSettings {
        let mut chain: Vec<&EngineFile> = Vec::new();
        let mut next = Some(engine);
        while let Some(f) = next.and_then(|id| self.dataset.engines.get(id)) {
            if chain.iter().any(|c| c.id == f.id) {
                break;
            }
            chain.push(f);
            next = f.based_on.as_deref();
        }
        let mut settings = EngineSettings::default();
        for f in chain.iter().rev() {
            let given = f.coefficients.iter().filter_map(|(name, q)| q.si().map(|v| (name.clone(), v)));
            settings.state(f.admission.as_ref().map(|a| a.policy), f.moe_kernel.as_ref().map(|m| m.kernel), given);
        }
        settings
    }

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
        if e.efficiencies_from_microbenchmarks && e.fitted_on.is_some() {
            return Err(format!(
                "engine `{id}`: `efficiencies_from_microbenchmarks` and `fitted_on` exclude each other"
            ));
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
        if let Some(m) = &e.moe_kernel {
            base.moe_kernel = m.kernel;
            given.push(format!("MoE kernel {} ({})", m.kernel.name(), m.basis.label()));
        }
        for (name, q) in &e.coefficients {
            let v = q.si().ok_or_else(|| format!("engine `{id}`: `{name}` has an unknown unit `{}`", q.unit))?;
            base.set_named(name, v).map_err(|m| format!("engine `{id}`: {m}"))?;
            given.push(name.clone());
        }
        let mut given = if given.is_empty() { String::new() } else { format!("; given: {}", given.join(", ")) };
        if e.efficiencies_from_microbenchmarks {
            given.push_str(
                "; efficiencies from each machine's public microbenchmarks (its hardware file's `microbenchmarks`: \
                 achieved / spec) where it has them, else as given",
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::SourceText;
    use crate::Mode;

    /// The files a plan on the 8x H100 server needs; `strip` drops the hardware file's microbenchmarks (the spec
    /// roofline).
    fn h100_workspace(strip: bool) -> Workspace {
        let mut hardware: serde_json::Value =
            serde_json::from_str(include_str!("../../../data/hardware/h100-sxm.json")).expect("hardware json");
        if strip {
            hardware.as_object_mut().expect("object").remove("microbenchmarks");
        }
        let files = [
            ("sources.json", include_str!("../../../data/sources.json").to_string()),
            ("hardware/h100-sxm.json", hardware.to_string()),
            ("models/minimax-m3.json", include_str!("../../../data/models/minimax-m3.json").to_string()),
            ("engines/roofline.json", include_str!("../../../data/engines/roofline.json").to_string()),
        ];
        let files: Vec<SourceText> =
            files.into_iter().map(|(path, text)| SourceText { path: path.into(), text }).collect();
        Workspace::load(&files, None)
    }

    #[test]
    fn the_practical_roofline_predicts_at_most_the_spec_roofline_and_names_its_benchmarks() {
        let scenario = include_str!("../../../data/scenarios/plan-minimax-m3-h100-sxm.json");
        let run = |strip: bool| {
            let ws = h100_workspace(strip);
            let run = ws.scenario_from_text("plan.json", scenario, FitSet::All).expect("scenario resolves");
            ws.with_engine(run, "roofline").expect("the roofline profile")
        };
        let (practical, spec) = (run(false), run(true));
        let k = &practical.coefficients;
        assert!((k.hbm_efficiency - 3.18 / 3.35).abs() < 1e-9, "{}", k.hbm_efficiency);
        assert!((k.slow_efficiency - 51.0 / 54.0).abs() < 1e-9, "{}", k.slow_efficiency);
        assert!((k.compute_efficiency - 0.698).abs() < 1e-12, "{}", k.compute_efficiency);
        for name in ["BabelStream", "nvbandwidth", "cuBLASLt", "AI-benchmarking-guide"] {
            assert!(practical.engine.contains(name), "the basis names {name}: {}", practical.engine);
        }
        let s = &spec.coefficients;
        assert_eq!((s.hbm_efficiency, s.slow_efficiency, s.compute_efficiency), (1.0, 1.0, 1.0));
        assert!(spec.engine.contains("no `hbm_bandwidth` microbenchmark"), "{}", spec.engine);
        let modes = [Mode::Single, Mode::Tp2, Mode::Pd];
        let conc = [1, 4, 16, 64, 256];
        let (p, q) = (practical.predict(&modes, &conc), spec.predict(&modes, &conc));
        assert_eq!(p.len(), q.len());
        for (a, b) in p.iter().zip(&q) {
            assert!(
                a.output_tok_s <= b.output_tok_s * (1.0 + 1e-9),
                "{:?} {}/{} at {}: practical {} above spec {}",
                a.mode,
                a.isl,
                a.osl,
                a.concurrency,
                a.output_tok_s,
                b.output_tok_s
            );
        }
        assert!(p.iter().zip(&q).any(|(a, b)| a.output_tok_s < b.output_tok_s * 0.99), "the benchmarks lower it");
    }

    /// With the GPU's kernel table in the dataset, the roofline's GEMMs run at the table's measured curve: its
    /// compute efficiency is 1 (not the dense GEMM fraction on top), and its basis names the table.
    #[test]
    fn the_roofline_runs_its_gemms_at_the_kernel_table_where_the_gpu_has_one() {
        let mut files: Vec<SourceText> = [
            ("sources.json", include_str!("../../../data/sources.json")),
            ("hardware/h100-sxm.json", include_str!("../../../data/hardware/h100-sxm.json")),
            ("models/minimax-m3.json", include_str!("../../../data/models/minimax-m3.json")),
            ("engines/roofline.json", include_str!("../../../data/engines/roofline.json")),
        ]
        .into_iter()
        .map(|(path, text)| SourceText { path: path.into(), text: text.into() })
        .collect();
        let scenario = include_str!("../../../data/scenarios/plan-minimax-m3-h100-sxm.json");
        let roofline = |files: &[SourceText]| {
            let ws = Workspace::load(files, None);
            let run = ws.scenario_from_text("plan.json", scenario, FitSet::All).expect("scenario resolves");
            let run = ws.with_engine(run, "roofline").expect("the roofline profile");
            let tok_s = run.predict(&[Mode::Single], &[256])[0].output_tok_s;
            (run, tok_s)
        };
        let (without, spec_tok_s) = roofline(&files);
        files.push(SourceText {
            path: "kernels/h100-sxm.json".into(),
            text: include_str!("../../../data/kernels/h100-sxm.json").into(),
        });
        let (with, table_tok_s) = roofline(&files);
        assert!((without.coefficients.compute_efficiency - 0.698).abs() < 1e-12);
        assert_eq!(with.coefficients.compute_efficiency, 1.0);
        assert!(with.engine.contains("kernel table `h100-sxm`, measured on this GPU"), "{}", with.engine);
        // The table's curve reaches less than cuBLASLt's best large GEMM at the ridge: never faster.
        assert!(table_tok_s <= spec_tok_s * 1.02, "{table_tok_s} against {spec_tok_s}");
    }

    #[test]
    fn engine_settings_follow_based_on_and_leave_fitted_coefficients_alone() {
        // A build that states only its admission inherits its parent's memory shares; an efficiency its
        // parent gives is where a fit starts, not a setting.
        let parent = r#"{"schema_version": 2, "kind": "engine", "id": "parent", "name": "p",
            "moe_kernel": {"kernel": "triton_fused_moe", "basis": "assumed", "reference": "r"},
            "coefficients": {
              "hbm_reserve_fraction": {"value": 0.2, "unit": "1", "basis": "assumed", "reason": "r"},
              "max_num_seqs": {"value": 64, "unit": "1", "basis": "assumed", "reason": "r"},
              "hbm_efficiency": {"value": 0.5, "unit": "1", "basis": "assumed", "reason": "r"}}}"#;
        let child = r#"{"schema_version": 2, "kind": "engine", "id": "child", "name": "c", "based_on": "parent",
            "admission": {"policy": "guaranteed_no_evict", "basis": "assumed", "reference": "r"},
            "coefficients": {
              "max_num_seqs": {"value": 128, "unit": "1", "basis": "assumed", "reason": "r"}}}"#;
        let files = [
            ("sources.json", include_str!("../../../data/sources.json").to_string()),
            ("engines/parent.json", parent.to_string()),
            ("engines/child.json", child.to_string()),
        ];
        let files: Vec<SourceText> =
            files.into_iter().map(|(path, text)| SourceText { path: path.into(), text }).collect();
        let ws = Workspace::load(&files, None);
        let fitted = Coefficients { hbm_efficiency: 0.9, compute_efficiency: 0.6, ..Default::default() };
        let k = ws.engine_settings("child").applied_to(&fitted);
        assert_eq!(k.admission, crate::model::Admission::GuaranteedNoEvict);
        assert_eq!(k.moe_kernel, crate::model::MoeKernel::TritonFusedMoe, "the parent's kernel, inherited");
        assert_eq!((k.hbm_reserve_fraction, k.max_num_seqs), (0.2, 128.0), "inherited, and the child's own wins");
        assert_eq!((k.hbm_efficiency, k.compute_efficiency), (0.9, 0.6), "fitted values stay the fit's");
        let p = ws.engine_settings("parent").applied_to(&fitted);
        assert_eq!((p.admission, p.max_num_seqs), (crate::model::Admission::PreemptNewest, 64.0));
        assert!(ws.engine_settings("no-such-engine").is_empty());
    }

    #[test]
    fn an_efficiency_without_a_microbenchmark_keeps_the_profile_value_and_says_so() {
        let mut k =
            Coefficients { hbm_efficiency: 1.0, slow_efficiency: 1.0, compute_efficiency: 1.0, ..Default::default() };
        let bases = practical_efficiencies(&mut k, None, "inline-box");
        assert_eq!((k.hbm_efficiency, k.slow_efficiency, k.compute_efficiency), (1.0, 1.0, 1.0));
        assert_eq!(bases.len(), 3);
        assert!(bases.iter().all(|b| b.contains("as the profile gives it") && b.contains("inline-box")), "{bases:?}");
    }
}

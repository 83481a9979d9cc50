//! The query layer: one `Workspace` loaded from source texts, and a typed answer to every question the CLI and
//! the page ask (sweep, claims, gain, fabric, plan, accuracy, calibrate). Both edges only render these
//! answers; neither does model arithmetic of its own, so they cannot disagree.
//!
//! ```text
//! texts ──► Workspace::load ──► dataset + diagnostics + report scenarios + (lazily) fits
//!                │
//!                ├── sweep / gain (a report model, a workload, what-if settings)
//!                ├── claims, fabric, accuracy (FitSet::All or ::Single), model_check
//!                └── scenario_from_text / plan_scenario ──► ScenarioRun ──► predict, plan, calibrate
//! ```

pub mod claims;
pub mod confidence;
pub mod context;
pub mod cost;
pub mod engine;
pub mod fabric;
pub mod frontier;
pub mod held_out;
pub mod held_out_gate;
pub mod memory_share;
pub mod miss_reading;
pub mod mode_checks;
pub mod open_loop;
#[cfg(not(feature = "prechecked"))]
pub mod own_kernels;
pub mod plan_request;
pub mod profile_choice;
pub mod protocol;
pub mod server_settings;
pub mod serving_commands;
pub mod settings;
pub mod step_check;
pub mod stored_fits;
pub mod sweep;
pub mod target;
pub mod target_percentiles;
pub mod transfer_check;
pub mod users;
pub mod verdict;
pub mod workloads;

pub use claims::{ClaimCheck, ClaimMarker, ClaimRow, ClaimVerdict, OperandValue};
pub use engine::{AboveMeasured, EngineProfile};
pub use fabric::FabricAnswer;
pub use frontier::{FrontierAnswer, FrontierCurve, FrontierPoint, Headline, PointLatencies, XAxis};
pub use open_loop::OpenLoopQuery;
pub use protocol::{ProtocolRow, Question, SensitivityRow};
pub use settings::{Knob, Setting};
pub use sweep::{Curve, ErrorBand, GainAnswer, PointRow, StatedKind, StatedRow, SweepAnswer, SweepQuery};
pub use target::{GoodputAnswer, GoodputError, GoodputQuery, LatencyStatistic, LatencyTarget};

use crate::dataset::schema::{ModelRef, ScenarioFile, SweepFile, Workload, DEFAULT_ENGINE, REPORT_DATASET};
use crate::dataset::validate::Seeds;
use crate::dataset::{self, Dataset, MeasuredPoint, SourceText};
use crate::describe::ModelDescription;
use crate::diagnostic::{self, Diagnostic};
use crate::fit::{self, Calibration, FitSet, TeamCalibration};
use crate::model::{predict, Coefficients, Prediction};
use crate::plan::Plan;
use crate::report::{self, Report};
use crate::scenario::{self, HardwareSpec, Scenario};
use crate::Mode;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Concurrency levels of every explorer curve: 1, 2, 4, ..., 256 (the report's sweep).
pub const CONCURRENCY: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// A loaded dataset with everything derived from it that more than one question needs. Fits are computed on
/// first use and kept (a fit takes tens of milliseconds; the page asks for the same one on every redraw).
#[derive(Debug, Default)]
pub struct Workspace {
    pub dataset: Dataset,
    /// Everything the loader and the meaning checks found, sorted (errors and warnings).
    pub diagnostics: Vec<Diagnostic>,
    /// The scenarios published points are measured under, keyed by scenario id: the report's (named after
    /// their models) and those other datasets' sweeps name.
    pub scenarios: BTreeMap<String, Scenario>,
    /// Every published point, flattened once at load (every sweep answer filters them).
    points: Vec<MeasuredPoint>,
    fit_all: OnceLock<Calibration>,
    fit_single: OnceLock<Calibration>,
    report_all: OnceLock<Report>,
    report_single: OnceLock<Report>,
    engine_cache: std::sync::Mutex<BTreeMap<String, std::sync::Arc<EngineProfile>>>,
    /// The protocol's held-out points computed when the page was built (`held_out`), adopted with the fits:
    /// every band is built from them.
    pub(crate) baked_evidence: OnceLock<Vec<held_out::HeldOutPoint>>,
    /// The accuracy protocol's rows, each computed once (`protocol_where`).
    protocol_rows: protocol::ProtocolRows,
}

/// A scenario ready to predict: resolved specs and the coefficients it predicts with.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    /// The file as written (absent for the planner's assembled scenarios).
    pub file: Option<ScenarioFile>,
    pub scenario: Scenario,
    pub coefficients: Coefficients,
    /// Which engine profile the coefficients come from and how it was obtained.
    pub engine: String,
}

/// A calibration of a team's own sweep and the scenario file that carries it (what `sim-core calibrate` prints).
#[derive(Debug, Clone)]
pub struct CalibratedScenario {
    pub calibration: TeamCalibration,
    pub file: ScenarioFile,
    /// Fitted efficiencies above what a microbenchmark reached on the scenario's machine (as `engines` lists
    /// them for a profile).
    pub above_measured: Vec<AboveMeasured>,
}

/// Fits computed once for a dataset (see `Workspace::fitted_state_json`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct FittedState {
    fingerprint: u64,
    all: Calibration,
    engines: Vec<EngineProfile>,
    /// The protocol's held-out points, the evidence of every band (absent from states baked before bands were).
    #[serde(default)]
    evidence: Vec<held_out::HeldOutPoint>,
}

/// Where the planner's model comes from.
#[derive(Debug, Clone)]
// Built once per planner query and moved into the scenario: the size of a description costs nothing here.
#[allow(clippy::large_enum_variant)]
pub enum ModelChoice {
    /// The model of a report scenario, by model id.
    Report(String),
    /// A few numbers describing a model.
    Described(ModelDescription),
    /// A Hugging Face `config.json`, the bits per weight its routed experts (or all its layers) are served at,
    /// and optionally the other layers' bits (`ModelDescription::dense_bits_per_weight`).
    HfConfig { text: String, bits_per_weight: f64, dense_bits_per_weight: Option<f64> },
}

/// The planner's question: a hardware preset with its fields changed, a model, one workload, the concurrency
/// range.
#[derive(Debug, Clone)]
pub struct PlanQuery {
    pub hardware: String,
    /// The engine profile (`None`: the one measured on the hardware, see `scenario::default_engine`).
    pub engine: Option<String>,
    pub settings: Vec<Setting>,
    pub model: ModelChoice,
    pub workload: Workload,
    pub concurrency: Vec<u32>,
    /// Machines the plan may use (one of `plan_request::PLAN_MACHINES`): 2 answers one machine against the
    /// pair's modes, 4 adds the four-machine modes.
    pub machines: u32,
}

impl Workspace {
    /// Loads texts, checks their meaning (quotes against the seeds when given) and resolves the report
    /// scenarios. Never fails: problems are in `diagnostics`, and `is_valid` says whether to go on.
    pub fn load(files: &[SourceText], seeds: Option<&Seeds>) -> Workspace {
        let (dataset, mut diagnostics) = dataset::load(files);
        // Texts checked when the binary was built need no second check (and the page carries no checker).
        #[cfg(not(feature = "prechecked"))]
        {
            diagnostics.extend(crate::dataset::validate::check(&dataset, seeds));
            diagnostics.extend(crate::model::plausibility::check(&dataset));
        }
        #[cfg(feature = "prechecked")]
        let _ = seeds;
        let (scenarios, errs) = report::sweep_scenarios(&dataset);
        // A scenario that does not resolve is reported only when the files themselves are sound, so the root
        // cause stands out rather than its echo.
        if !diagnostics.iter().any(Diagnostic::is_error) {
            diagnostics.extend(errs);
        }
        diagnostic::sort(&mut diagnostics);
        let points = dataset.points();
        Workspace { dataset, diagnostics, scenarios, points, ..Workspace::default() }
    }

    /// A fingerprint of the dataset's texts (FNV-1a over paths and contents in path order): which data a
    /// `FittedState` was computed from.
    pub fn fingerprint(files: &[SourceText]) -> u64 {
        let mut sorted: Vec<&SourceText> = files.iter().collect();
        crate::stats::sort_by(&mut sorted, |a, b| a.path.cmp(&b.path));
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for f in sorted {
            for b in f.path.bytes().chain([0u8]).chain(f.text.bytes()).chain([0u8]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }

    /// The fits this workspace computes on its own data (the fit over every point and every engine profile), as
    /// JSON: the page bakes them at build time (`app/build.rs`) instead of fitting at start-up.
    pub fn fitted_state_json(&self, files: &[SourceText]) -> String {
        let engines: Vec<EngineProfile> =
            self.engines().into_iter().filter_map(Result::ok).map(|p| (*p).clone()).collect();
        let state = FittedState {
            fingerprint: Self::fingerprint(files),
            all: self.calibration(FitSet::All).clone(),
            engines,
            evidence: self.held_out(),
        };
        serde_json::to_string(&state).unwrap_or_default()
    }

    /// Adopts fits computed by `fitted_state_json` on exactly these files; returns whether it did (a different
    /// dataset, or text that does not parse, leaves the workspace to fit on demand as usual).
    pub fn adopt_fitted_state(&self, files: &[SourceText], json: &str) -> bool {
        // Through a parsed value, as the dataset's files are read: one copy of the deserializing code of the
        // coefficients in the page's bundle instead of a second one for reading from text.
        let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else { return false };
        let Ok(state) = FittedState::deserialize(&value) else { return false };
        if state.fingerprint != Self::fingerprint(files) {
            return false;
        }
        let _ = self.fit_all.set(state.all);
        if !state.evidence.is_empty() {
            let _ = self.baked_evidence.set(state.evidence);
        }
        if let Ok(mut cache) = self.engine_cache.lock() {
            for e in state.engines {
                cache.insert(e.id.clone(), std::sync::Arc::new(e));
            }
        }
        true
    }

    /// The errors among the diagnostics.
    pub fn errors(&self) -> Vec<Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error()).cloned().collect()
    }

    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Every published point, in file order.
    pub fn points(&self) -> &[MeasuredPoint] {
        &self.points
    }

    /// The planner's answer for `run`, with what the published sweeps of that very scenario measured beside
    /// it (`Plan::published`): at each row where two modes or more were measured, the modes ranked by the
    /// measurement against the plan's predictions. The CLI's `plan` asks this.
    pub fn plan_of(&self, run: &ScenarioRun) -> Plan {
        let mut plan = run.plan();
        for row in &plan.rows {
            let at_row = |p: &&MeasuredPoint| {
                p.scenario == run.scenario.id
                    && !p.is_flagged()
                    && (p.isl, p.osl, p.concurrency) == (row.isl, row.osl, row.concurrency)
            };
            let mut datasets: Vec<&str> = self.points.iter().filter(at_row).map(|p| p.dataset.as_str()).collect();
            crate::stats::sort(&mut datasets);
            datasets.dedup();
            for d in datasets {
                let measured: Vec<(Mode, f64)> = self
                    .points
                    .iter()
                    .filter(|p| at_row(p) && p.dataset == d)
                    .map(|p| (p.mode, p.output_tok_s))
                    .collect();
                plan.published.extend(crate::plan::PublishedVerdict::at(d, &run.scenario.id, row, &measured));
            }
        }
        plan
    }

    /// The points the engine coefficients are fitted on: the calibration dataset's (the GB300 report's).
    pub fn calibration_points(&self) -> Vec<MeasuredPoint> {
        self.points.iter().filter(|p| p.dataset == REPORT_DATASET).cloned().collect()
    }

    /// Ids of the scenarios with published points (the report's are named after their models), sorted.
    pub fn models(&self) -> Vec<String> {
        self.scenarios.keys().cloned().collect()
    }

    /// Every hardware file resolved to SI: the planner's presets, keyed by id.
    pub fn hardware(&self) -> BTreeMap<String, HardwareSpec> {
        self.dataset
            .hardware
            .iter()
            .map(|(id, h)| {
                let mut spec = scenario::hardware_spec(h);
                crate::kernel_curves::attach(&self.dataset, &mut spec);
                (id.clone(), spec)
            })
            .collect()
    }

    /// The fit over a set of points (computed once).
    pub fn calibration(&self, set: FitSet) -> &Calibration {
        let cell = match set {
            FitSet::All => &self.fit_all,
            FitSet::Single => &self.fit_single,
        };
        // The report's points were measured with one engine build: fit under what its profile states for itself
        // (its MoE kernel), as its predictions run; without a profile file, the defaults.
        cell.get_or_init(|| {
            let base = self.engine_settings(DEFAULT_ENGINE).applied_to(&Coefficients::default());
            fit::fit_from(&base, &self.scenarios, &self.calibration_points(), set, fit::REPORT_PRIOR_WEIGHT)
        })
    }

    /// The coefficients fitted on every unflagged point: what predictions use unless a scenario is calibrated.
    pub fn coefficients(&self) -> &Coefficients {
        &self.calibration(FitSet::All).coefficients
    }

    /// Every published point next to its prediction with error statistics, for a fit over `set`.
    pub fn accuracy(&self, set: FitSet) -> &Report {
        let cell = match set {
            FitSet::All => &self.report_all,
            FitSet::Single => &self.report_single,
        };
        cell.get_or_init(|| {
            if set == FitSet::Single {
                return report::build_with(&self.scenarios, &self.points, self.calibration(set).clone());
            }
            // Every scenario predicts with its engine profile; a point is fitted when its engine's fit used it.
            let engines: BTreeMap<String, Coefficients> = self
                .scenarios
                .iter()
                .filter_map(|(id, s)| self.coefficients_for(s, set).ok().map(|(k, _)| (id.clone(), k)))
                .collect();
            let fitted = |p: &MeasuredPoint| {
                let engine = self.scenarios.get(&p.scenario).map(|s| s.engine.as_str()).unwrap_or(DEFAULT_ENGINE);
                match self.dataset.engines.get(engine) {
                    Some(e) => engine::fitted_on(e, p),
                    // Without engine files the default engine is the calibration dataset's fit.
                    None => p.dataset == REPORT_DATASET,
                }
            };
            report::build_for(&self.scenarios, &self.points, self.calibration(set).clone(), &fitted, &engines)
        })
    }

    /// Models with points but no unflagged single-station point: their pair cannot be predicted from one station.
    pub fn models_without_single(&self) -> Vec<String> {
        let points = &self.points;
        self.scenarios
            .keys()
            .filter(|m| points.iter().any(|p| &p.scenario == *m))
            .filter(|m| !points.iter().any(|p| &p.scenario == *m && p.mode == Mode::Single && !p.is_flagged()))
            .cloned()
            .collect()
    }

    /// The accuracy targets of `data/accuracy.json`, checked against both fits and the fabric predictions.
    pub fn model_check(&self) -> Vec<Diagnostic> {
        if !self.is_valid() {
            return Vec::new();
        }
        let mut out =
            report::model_check_with(&self.dataset, self.accuracy(FitSet::All), self.accuracy(FitSet::Single));
        if let Some(acc) = &self.dataset.accuracy {
            out.extend(
                held_out_gate::gate_diagnostics(acc, &self.protocol()).into_iter().map(|d| self.dataset.locate(d)),
            );
        }
        out
    }

    /// The coefficients a scenario predicts with and, in words, where they come from: its engine profile, or
    /// with `FitSet::Single` the calibration dataset's fit on single-station points (the predictive report).
    pub fn coefficients_for(&self, s: &Scenario, set: FitSet) -> Result<(Coefficients, String), String> {
        let (mut k, mut how) = if set == FitSet::Single {
            let cal = self.calibration(FitSet::Single);
            (
                cal.coefficients.clone(),
                format!("fitted on {} single-station points of {REPORT_DATASET}", cal.points_used),
            )
        } else {
            self.scenario_coefficients(s)?
        };
        // The team's own server settings win over what the profile states (`server`).
        if !s.server.is_default() {
            server_settings::apply(&s.server, &mut k, &s.engine)?;
            how = format!("{how}; server settings: {}", s.server.vllm_args().join(" "));
        }
        Ok((k, how))
    }

    /// A measured scenario (a report model's is named after it) and its coefficients (fitted over `set`) with
    /// settings applied (the explorer's what-if).
    pub fn report_run(&self, scenario: &str, settings: &[Setting], set: FitSet) -> Result<ScenarioRun, String> {
        self.report_run_with_engine(scenario, settings, set, None)
    }

    /// `report_run` predicting with the engine profile `engine` instead of the scenario's own (`None`: its
    /// own). The profile is chosen before the settings apply, so a what-if value still moves its coefficients;
    /// with `FitSet::Single` the single-station fit is used whatever the profile.
    pub fn report_run_with_engine(
        &self,
        scenario: &str,
        settings: &[Setting],
        set: FitSet,
        engine: Option<&str>,
    ) -> Result<ScenarioRun, String> {
        let mut scenario =
            self.scenarios.get(scenario).cloned().ok_or_else(|| format!("unknown scenario `{scenario}`"))?;
        if let Some(e) = engine {
            scenario.engine = e.to_string();
        }
        let (mut coefficients, engine) = self.coefficients_for(&scenario, set)?;
        settings::apply(&mut scenario, &mut coefficients, settings)?;
        Ok(ScenarioRun { file: None, scenario, coefficients, engine })
    }

    /// A scenario file's text resolved against this dataset, predicting with the fit over `set` and the file's
    /// own calibration on top when it has one. `name` is how diagnostics name the file.
    pub fn scenario_from_text(&self, name: &str, text: &str, set: FitSet) -> Result<ScenarioRun, Vec<Diagnostic>> {
        let (one, mut diags) = dataset::load(&[SourceText { path: name.to_string(), text: text.to_string() }]);
        let Some(file) = one.scenarios.values().next().cloned() else {
            if diags.is_empty() {
                diags.push(
                    Diagnostic::error(name, "/kind", "not a scenario file")
                        .with_hint("a scenario has \"kind\": \"scenario\""),
                );
            }
            return Err(diags);
        };
        // The file is not one of the dataset's: its own text locates what `resolve` finds.
        let scenario = scenario::resolve(&self.dataset, name, &file)
            .map_err(|errs| errs.into_iter().map(|d| one.locate(d)).collect::<Vec<_>>())?;
        let (mut coefficients, mut engine) =
            self.coefficients_for(&scenario, set).map_err(|e| vec![Diagnostic::error(name, "/engine", e)])?;
        if let Some(cal) = &file.calibration {
            coefficients.apply_calibration_map(&model_id(&file), cal);
            engine = format!("{engine}, calibrated by the scenario's own `calibration`");
        }
        Ok(ScenarioRun { file: Some(file), scenario, coefficients, engine })
    }

    /// The planner's scenario: preset plus settings, the chosen model, one workload, the concurrency range,
    /// every mode. An error is a message for a person (unknown preset, a broken config.json).
    pub fn plan_scenario(&self, q: &PlanQuery) -> Result<ScenarioRun, String> {
        plan_request::check_machines(q.machines)?;
        let hardware = self
            .dataset
            .hardware
            .get(&q.hardware)
            .map(scenario::hardware_spec)
            .ok_or_else(|| format!("unknown hardware `{}`", q.hardware))?;
        let model = match &q.model {
            ModelChoice::Report(id) => {
                self.scenarios.get(id).map(|s| s.model.clone()).ok_or_else(|| format!("unknown model `{id}`"))?
            }
            ModelChoice::Described(d) => d.to_spec()?,
            ModelChoice::HfConfig { text, bits_per_weight, dense_bits_per_weight } => {
                if text.trim().is_empty() {
                    return Err("paste a Hugging Face config.json into the box".into());
                }
                let mut d = ModelDescription::from_hf_config("pasted-config", text, *bits_per_weight)?;
                d.dense_bits_per_weight = *dense_bits_per_weight;
                d.to_spec()?
            }
        };
        let mut scenario = Scenario {
            id: format!("plan-{}-{}", model.id, hardware.id),
            engine: q
                .engine
                .clone()
                .unwrap_or_else(|| crate::scenario::default_engine(&self.dataset, Some(hardware.id.as_str()))),
            hardware,
            model,
            workloads: vec![q.workload],
            concurrency: q.concurrency.clone(),
            modes: Mode::up_to(q.machines),
            load: crate::dataset::schema::ScenarioLoad::ClosedLoop,
            router: crate::dataset::schema::DpRouter::Balanced,
            server: Default::default(),
        };
        let (mut coefficients, engine) = self.coefficients_for(&scenario, FitSet::All)?;
        settings::apply(&mut scenario, &mut coefficients, &q.settings)?;
        Ok(ScenarioRun { file: None, scenario, coefficients, engine })
    }

    /// Calibrates a scenario on a team's own sweep (an importer's output, or a sweep file's points) and writes
    /// the scenario file that carries the calibration. `from` names the measurements in the description.
    pub fn calibrate(
        &self,
        run: &ScenarioRun,
        measured: &[MeasuredPoint],
        from: &str,
    ) -> Result<CalibratedScenario, String> {
        let calibration = fit::calibrate_team(&run.coefficients, &run.scenario, measured)?;
        let mut file = run.file.clone().unwrap_or_else(|| ScenarioFile {
            schema_version: crate::dataset::schema::SCHEMA_VERSION,
            kind: "scenario".into(),
            id: run.scenario.id.clone(),
            description: None,
            hardware: crate::dataset::schema::Reference::Id(run.scenario.hardware.id.clone()),
            model: ModelRef::Id(run.scenario.model.id.clone()),
            workloads: run.scenario.workloads.clone(),
            concurrency: run.scenario.concurrency.clone(),
            modes: run.scenario.modes.clone(),
            overrides: BTreeMap::new(),
            calibration: None,
            engine: Some(run.scenario.engine.clone()),
            load: run.scenario.load,
            router: run.scenario.router,
        });
        let mut map = calibration.coefficients.calibration_map(&run.scenario.model);
        if run.scenario.model.draft_tokens <= 0.0 {
            // Nothing was fitted for a model that drafts nothing (`fit::calibrate_team`): no value to carry.
            map.remove("acceptance");
        }
        file.calibration = Some(map);
        file.id = format!("{}-calibrated", file.id);
        let stats = calibration.stats;
        let acceptance = calibration.measured_acceptance.map_or(String::new(), |m| {
            format!(
                " Draft acceptance {:.3} per token measured, not fitted ({:.2} tokens per step with {:.1} draft tokens, over {} runs).",
                m.per_token, m.tokens_per_step, m.draft_length, m.points
            )
        });
        // The scenario's own description, closed as a sentence, then the calibration's.
        let mut before = file.description.clone().unwrap_or_default().trim_end().to_string();
        if !before.is_empty() && !before.ends_with(['.', '!', '?']) {
            before.push('.');
        }
        file.description = Some(
            format!(
                "{before} Calibrated on {} single-machine points from {from}: median error {:.1}%, 90th \
                 percentile {:.1}%.{acceptance}",
                calibration.points.len(),
                stats.median_ape,
                stats.p90_ape
            )
            .trim()
            .to_string(),
        );
        let above_measured = self.above_microbenchmarks(&calibration.coefficients, &run.scenario.hardware.id);
        Ok(CalibratedScenario { calibration, file, above_measured })
    }

    /// Calibrates on an importer's sweep directly (the page's pasted results, `sim-core calibrate` on files).
    pub fn calibrate_sweep(
        &self,
        run: &ScenarioRun,
        sweep: &SweepFile,
        from: &str,
    ) -> Result<CalibratedScenario, String> {
        self.calibrate(run, &dataset::sweep_points(from, sweep), from)
    }
}

impl ScenarioRun {
    /// A predicted sweep: every workload of the scenario, each mode, each concurrency, in that order.
    pub fn predict(&self, modes: &[Mode], concurrency: &[u32]) -> Vec<Prediction> {
        let s = &self.scenario;
        let mut out = Vec::new();
        for w in &s.workloads {
            for &m in modes {
                for &c in concurrency {
                    out.push(predict(s, &self.coefficients, m, w.isl, w.osl, c));
                }
            }
        }
        out
    }

    /// The planner's answer for this scenario: every mode across its concurrency range, the recommendation.
    pub fn plan(&self) -> Plan {
        let mut plan = crate::plan::plan(&self.scenario, &self.coefficients);
        plan.engine = self.engine.clone();
        plan
    }

    /// How a calibrated scenario's fit matched (its description), when the file carries a calibration.
    pub fn calibration_note(&self) -> Option<String> {
        let f = self.file.as_ref()?;
        f.calibration.as_ref().map(|_| f.description.clone().unwrap_or_default())
    }
}

/// The model id a scenario file's per-model coefficients are keyed by.
pub fn model_id(sc: &ScenarioFile) -> String {
    match &sc.model {
        ModelRef::Id(id) => id.clone(),
        ModelRef::Inline(m) => m.id.clone(),
        ModelRef::Described { describe } => describe.id.clone(),
    }
}

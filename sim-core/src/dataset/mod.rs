//! Loading datasets: text in, typed files plus diagnostics out. No IO here; callers hand in the file texts.

#[cfg(feature = "schema")]
pub mod json_schema;
pub mod schema;
pub mod validate;

use crate::diagnostic::Diagnostic;
use crate::position::PositionIndex;
use schema::*;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;

/// One file of a dataset: its path relative to the dataset root (with `/` separators) and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceText {
    pub path: String,
    pub text: String,
}

/// A measured throughput point, flattened out of the sweep files.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MeasuredPoint {
    /// The dataset (publication) the point belongs to.
    pub dataset: String,
    /// The scenario that describes its setup.
    pub scenario: String,
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    pub output_tok_s: f64,
    pub flags: Vec<Flag>,
    pub source: String,
    pub quote: String,
    pub note: Option<String>,
    pub file: String,
    pub pointer: String,
    /// Latencies stated next to the point (empty when the source gives none).
    #[serde(skip_serializing_if = "PointLatency::is_empty")]
    pub latency: PointLatency,
    /// Speculative decoding counters of the run, when an imported benchmark result carries them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_decode: Option<SpecDecode>,
    /// How the run sent its requests when it sent them at a finite rate and its sweep states the arrivals
    /// (`conditions.open_loop`): what an open-loop prediction of the point needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopRun>,
    /// The serving engine the sweep names (`conditions.engine`), empty where it names none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub engine: String,
    /// The prefill rate the source states for the level (`PointRecord::prefill_tok_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_tok_s: Option<f64>,
}

/// One open-loop run as measured: the offered and achieved request rates, the prompts sent, the arrival
/// process and the length spread.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OpenLoopRun {
    /// Requests per second offered.
    pub rate: f64,
    /// Requests per second completed, where the source states it.
    pub achieved_rate: Option<f64>,
    pub num_prompts: Option<u32>,
    pub burstiness: f64,
    pub random_range_ratio: Option<f64>,
    /// Requests could stop before their drawn output length (`--ignore-eos` off).
    pub may_stop_early: bool,
}

impl OpenLoopRun {
    /// Share of the offered rate a run must complete to count as kept up: past it the queue grows through the
    /// run and what it measures depends on how long it ran.
    pub const KEPT_UP: f64 = 0.95;

    /// Whether the machine kept up with the offered rate (unknown achieved rate: not known to have).
    pub fn kept_up(&self) -> bool {
        self.achieved_rate.is_some_and(|a| a >= Self::KEPT_UP * self.rate)
    }
}

impl MeasuredPoint {
    /// Points that must not steer a fit or count in the error statistics.
    pub fn is_flagged(&self) -> bool {
        !self.flags.is_empty()
    }

    /// Whether a fit may read the point: measured on at most two machines (four-machine points are only ever
    /// predicted) by an engine the dataset's profiles model (`MODELLED_ENGINES`: a run of another engine, such
    /// as SGLang, is predicted with the generic vLLM profile and judged, never fitted on, for its engine's costs
    /// are not those coefficients').
    pub fn fittable(&self) -> bool {
        let engine = self.engine.to_ascii_lowercase();
        self.mode.machines() <= 2 && (engine.is_empty() || MODELLED_ENGINES.iter().any(|e| engine.contains(e)))
    }

    /// Whether this is the point a claim's key names.
    pub fn is(&self, k: &PointKey) -> bool {
        self.model == k.model
            && self.mode == k.mode
            && self.isl == k.isl
            && self.osl == k.osl
            && f64::from(self.concurrency) == k.concurrency
    }
}

/// The serving engines the dataset's engine profiles model, as sweeps name them (lower case): vLLM's builds and
/// NVIDIA NIM's TensorRT-LLM (`nim-trtllm`).
pub const MODELLED_ENGINES: [&str; 3] = ["vllm", "nim", "tensorrt"];

/// Every point of one sweep file, in file order (what `Dataset::points` lists, and what an importer's sweep
/// gives before it is part of a dataset).
pub fn sweep_points(path: &str, sweep: &SweepFile) -> Vec<MeasuredPoint> {
    let mut out = Vec::new();
    for (si, s) in sweep.series.iter().enumerate() {
        for (pi, p) in s.points.iter().enumerate() {
            out.push(MeasuredPoint {
                dataset: sweep.dataset.clone().unwrap_or_else(|| REPORT_DATASET.to_string()),
                scenario: sweep.scenario.clone().unwrap_or_else(|| sweep.model.clone()),
                model: sweep.model.clone(),
                mode: s.mode,
                isl: s.isl,
                osl: s.osl,
                concurrency: p.concurrency as u32,
                output_tok_s: p.output_tok_s,
                flags: p.flags.clone(),
                source: p.from.source.clone(),
                quote: p.from.quote.clone(),
                note: p.note.clone(),
                file: path.to_string(),
                pointer: format!("/series/{si}/points/{pi}"),
                latency: p.latency(),
                spec_decode: p.spec_decode.clone(),
                open_loop: open_loop_run(sweep, p),
                engine: sweep.conditions.as_ref().map(|c| c.engine.clone()).unwrap_or_default(),
                prefill_tok_s: p.prefill_tok_s,
            });
        }
    }
    out
}

/// The open-loop run of a point sent at a finite rate whose sweep states its arrivals.
fn open_loop_run(sweep: &SweepFile, p: &schema::PointRecord) -> Option<OpenLoopRun> {
    let rate = p.request_rate.and_then(schema::RequestRate::per_second)?;
    let o = sweep.conditions.as_ref()?.open_loop.as_ref()?;
    Some(OpenLoopRun {
        rate,
        achieved_rate: p.achieved_request_rate,
        num_prompts: p.num_prompts,
        burstiness: o.burstiness,
        random_range_ratio: o.random_range_ratio,
        may_stop_early: o.may_stop_early,
    })
}

/// Draft acceptance measured over a set of points (vLLM's speculative decoding counters), in the model's terms.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MeasuredAcceptance {
    /// Per-draft-token acceptance p (`SpecDecode::per_token_acceptance`).
    pub per_token: f64,
    /// Mean tokens per step, bonus token included (vLLM's acceptance length).
    pub tokens_per_step: f64,
    /// Draft tokens per draft (k) the runs used.
    pub draft_length: f64,
    /// Points that carried the counters.
    pub points: usize,
}

/// The draft acceptance the points measured, pooled: with every point's counters, one acceptance length
/// `1 + sum(accepted) / sum(drafts)` and draft length `sum(draft tokens) / sum(drafts)` (each step weighs the
/// same, as in vLLM's own total); otherwise the median of the points' stated lengths and draft lengths. `None`
/// when no point carries spec-decode data that converts (`SpecDecode::per_token_acceptance`).
pub fn measured_acceptance(points: &[MeasuredPoint]) -> Option<MeasuredAcceptance> {
    let sd: Vec<&SpecDecode> = points.iter().filter_map(|p| p.spec_decode.as_ref()).collect();
    let counted: Vec<(f64, f64, f64)> = sd
        .iter()
        .filter_map(|s| match (s.num_drafts, s.draft_tokens, s.accepted_tokens) {
            (Some(n), Some(t), Some(a)) if n > 0 => Some((n as f64, t as f64, a as f64)),
            _ => None,
        })
        .collect();
    let (tokens_per_step, draft_length) = if !counted.is_empty() && counted.len() == sd.len() {
        let n: f64 = counted.iter().map(|c| c.0).sum();
        (1.0 + counted.iter().map(|c| c.2).sum::<f64>() / n, counted.iter().map(|c| c.1).sum::<f64>() / n)
    } else {
        let pairs: Vec<(f64, f64)> =
            sd.iter().filter_map(|s| Some((s.tokens_per_step()?, s.draft_length()?))).collect();
        {
            let finite =
                |f: fn(&(f64, f64)) -> f64| -> Vec<f64> { pairs.iter().map(f).filter(|x| x.is_finite()).collect() };
            (crate::stats::median(&mut finite(|p| p.0))?, crate::stats::median(&mut finite(|p| p.1))?)
        }
    };
    let per_token = schema::per_token_acceptance(tokens_per_step, draft_length)?;
    Some(MeasuredAcceptance { per_token, tokens_per_step, draft_length, points: sd.len() })
}

/// Everything loaded from a dataset directory. Files that failed to parse are absent; their problems are in
/// the diagnostics returned next to it.
#[derive(Debug, Default, Clone)]
pub struct Dataset {
    pub sources: Vec<Source>,
    pub hardware: BTreeMap<String, HardwareFile>,
    pub fabrics: BTreeMap<String, FabricFile>,
    pub models: BTreeMap<String, ModelFile>,
    /// Sweep files keyed by their path.
    pub sweeps: BTreeMap<String, SweepFile>,
    /// Claims with the path of the file they came from.
    pub claims: Vec<(String, Claim)>,
    pub scenarios: BTreeMap<String, ScenarioFile>,
    /// Engine profiles keyed by id.
    pub engines: BTreeMap<String, EngineFile>,
    /// Measured kernel tables keyed by id (`data/kernels/`).
    pub kernels: BTreeMap<String, KernelsFile>,
    pub accuracy: Option<AccuracyFile>,
    /// Every parsed file's JSON, for pointer operands and locating diagnostics.
    pub raw: BTreeMap<String, Value>,
    texts: BTreeMap<String, String>,
    /// Files that failed to load; checks that depend on them stay quiet so the root cause stands out.
    pub failed: std::collections::BTreeSet<String>,
    /// Files that are in the dataset by id, for reference checks: id -> path.
    pub paths: BTreeMap<(String, String), String>,
}

impl Dataset {
    /// Every published point, in file order.
    pub fn points(&self) -> Vec<MeasuredPoint> {
        self.sweeps.iter().flat_map(|(path, sweep)| sweep_points(path, sweep)).collect()
    }

    /// Fills in line and column of a diagnostic from the file's text.
    pub fn locate(&self, mut d: Diagnostic) -> Diagnostic {
        if d.line.is_none() {
            if let Some(text) = self.texts.get(&d.file) {
                if let Some((l, c)) = PositionIndex::build(text).locate(&d.pointer) {
                    d = d.at(l, c);
                }
            }
        }
        d
    }

    /// The number at `pointer` inside the parsed file `file`.
    pub fn number_at(&self, file: &str, pointer: &str) -> Option<f64> {
        self.raw.get(file)?.pointer(pointer)?.as_f64()
    }

    /// The latencies stated next to a point (`MeasuredPoint::file` and `::pointer`), when the source gives any.
    pub fn latency(&self, file: &str, pointer: &str) -> Option<PointLatency> {
        let mut parts = pointer.strip_prefix("/series/")?.split('/');
        let si: usize = parts.next()?.parse().ok()?;
        let pi: usize = match (parts.next(), parts.next(), parts.next()) {
            (Some("points"), Some(i), None) => i.parse().ok()?,
            _ => return None,
        };
        let l = self.sweeps.get(file)?.series.get(si)?.points.get(pi)?.latency();
        (!l.is_empty()).then_some(l)
    }

    pub fn text(&self, file: &str) -> Option<&str> {
        self.texts.get(file).map(String::as_str)
    }

    /// Every loaded file as it was read, by path.
    pub fn source_texts(&self) -> impl Iterator<Item = SourceText> + '_ {
        self.texts.iter().map(|(path, text)| SourceText { path: path.clone(), text: text.clone() })
    }
}

/// Parses every file. Returns what could be loaded and every problem met on the way (syntax, schema).
pub fn load(files: &[SourceText]) -> (Dataset, Vec<Diagnostic>) {
    let mut ds = Dataset::default();
    let mut diags = Vec::new();
    for f in files {
        let before = diags.len();
        load_one(&mut ds, f, &mut diags);
        if diags[before..].iter().any(Diagnostic::is_error) {
            ds.failed.insert(f.path.clone());
        }
    }
    (ds, diags)
}

fn load_one(ds: &mut Dataset, f: &SourceText, diags: &mut Vec<Diagnostic>) {
    let file = f.path.as_str();
    if f.text.trim().is_empty() {
        diags.push(
            Diagnostic::error(file, "", "file is empty")
                .with_hint("every dataset file is one JSON object with \"schema_version\" and \"kind\""),
        );
        return;
    }
    let value: Value = match serde_json::from_str(&f.text) {
        Ok(v) => v,
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            diags.push(
                Diagnostic::error(file, "", format!("invalid JSON: {msg}"))
                    .at(e.line().max(1), e.column().max(1))
                    .with_hint("fix the syntax at this position; the file was not loaded"),
            );
            return;
        }
    };
    ds.texts.insert(file.to_string(), f.text.clone());
    let located = |d: Diagnostic| -> Diagnostic {
        match PositionIndex::build(&f.text).locate(&d.pointer) {
            Some((l, c)) => d.at(l, c),
            None => d,
        }
    };
    let Some(obj) = value.as_object() else {
        diags.push(located(
            Diagnostic::error(file, "", "expected a JSON object at the top level")
                .with_hint("wrap the content in { \"schema_version\": 1, \"kind\": ..., ... }"),
        ));
        return;
    };
    match obj.get("schema_version").and_then(Value::as_u64) {
        Some(v) if (u64::from(MIN_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION)).contains(&v) => {}
        Some(v) => {
            diags.push(located(
                Diagnostic::error(file, "/schema_version", format!("unsupported schema_version {v}"))
                    .with_hint(format!("this build reads schema_version {MIN_SCHEMA_VERSION} to {SCHEMA_VERSION}")),
            ));
            return;
        }
        None => {
            diags.push(located(
                Diagnostic::error(file, "/schema_version", "missing or non-integer field `schema_version`")
                    .with_hint(format!("add \"schema_version\": {SCHEMA_VERSION}")),
            ));
            return;
        }
    }
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
    // `$schema` names the file's JSON Schema for editors and other tools (`data/schema/<kind>.json`); it is
    // no field of the Rust types, so it is checked here and taken off before typing.
    if let Some(s) = obj.get("$schema") {
        let names_kind = s.as_str().is_some_and(|s| s.rsplit(['/', '\\']).next() == Some(&format!("{kind}.json")));
        if !names_kind && !kind.is_empty() {
            diags.push(located(
                Diagnostic::error(file, "/$schema", format!("`$schema` must name the {kind} schema, found {s}"))
                    .with_hint(format!("write \"$schema\": \"../schema/{kind}.json\" (relative to this file)")),
            ));
            return;
        }
    }
    let mut value = value;
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
    }
    let mut errs = Vec::new();
    match kind.as_str() {
        "sources" => {
            if let Some(x) = typed::<SourcesFile>(file, &value, &mut errs) {
                ds.sources.extend(x.sources);
            }
        }
        "hardware" => {
            if let Some(x) = typed::<HardwareFile>(file, &value, &mut errs) {
                register(ds, diags, "hardware", &x.id, file);
                ds.hardware.insert(x.id.clone(), x);
            }
        }
        "fabric" => {
            elements::<NcclRow>(file, &value, "/nccl", &mut errs);
            elements::<RdmaRow>(file, &value, "/rdma", &mut errs);
            if errs.is_empty() {
                if let Some(x) = typed::<FabricFile>(file, &value, &mut errs) {
                    register(ds, diags, "fabric", &x.id, file);
                    ds.sources.extend(x.sources.iter().cloned());
                    ds.fabrics.insert(x.id.clone(), x);
                }
            }
        }
        "model" => {
            if let Some(x) = typed::<ModelFile>(file, &value, &mut errs) {
                register(ds, diags, "model", &x.id, file);
                ds.models.insert(x.id.clone(), x);
            }
        }
        "sweep" => {
            if let Some(series) = value.get("series").and_then(Value::as_array) {
                for i in 0..series.len() {
                    elements::<PointRecord>(file, &value, &format!("/series/{i}/points"), &mut errs);
                }
            }
            if errs.is_empty() {
                if let Some(x) = typed::<SweepFile>(file, &value, &mut errs) {
                    ds.sources.extend(x.sources.iter().cloned());
                    ds.sweeps.insert(file.to_string(), x);
                }
            }
        }
        "claims" => {
            elements::<Claim>(file, &value, "/claims", &mut errs);
            if errs.is_empty() {
                if let Some(x) = typed::<ClaimsFile>(file, &value, &mut errs) {
                    ds.claims.extend(x.claims.into_iter().map(|c| (file.to_string(), c)));
                }
            }
        }
        "scenario" => {
            if let Some(x) = typed::<ScenarioFile>(file, &value, &mut errs) {
                register(ds, diags, "scenario", &x.id, file);
                ds.scenarios.insert(x.id.clone(), x);
            }
        }
        "accuracy" => {
            if let Some(x) = typed::<AccuracyFile>(file, &value, &mut errs) {
                errs.extend(x.check(file));
                ds.accuracy = Some(x);
            }
        }
        "engine" => {
            if let Some(x) = typed::<EngineFile>(file, &value, &mut errs) {
                register(ds, diags, "engine", &x.id, file);
                ds.engines.insert(x.id.clone(), x);
            }
        }
        "kernels" => {
            if let Some(x) = typed::<KernelsFile>(file, &value, &mut errs) {
                register(ds, diags, "kernels", &x.id, file);
                ds.kernels.insert(x.id.clone(), x);
            }
        }
        other => errs.push(Diagnostic::error(file, "/kind", format!("unknown kind `{other}`")).with_hint(
            "expected one of: sources, hardware, fabric, model, sweep, claims, scenario, accuracy, engine, \
                 kernels",
        )),
    }
    diags.extend(errs.into_iter().map(located));
    ds.raw.insert(file.to_string(), value);
}

fn register(ds: &mut Dataset, diags: &mut Vec<Diagnostic>, kind: &str, id: &str, file: &str) {
    let key = (kind.to_string(), id.to_string());
    if let Some(prev) = ds.paths.get(&key) {
        diags.push(
            Diagnostic::error(file, "/id", format!("duplicate {kind} id `{id}`, also defined in {prev}"))
                .with_hint("ids must be unique within a kind"),
        );
    } else {
        ds.paths.insert(key, file.to_string());
    }
}

/// Deserializes `value` as `T`, turning a failure into a diagnostic at the failing field's pointer.
pub fn typed<T: DeserializeOwned>(file: &str, value: &Value, errs: &mut Vec<Diagnostic>) -> Option<T> {
    typed_at(file, value, "", errs)
}

fn typed_at<T: DeserializeOwned>(file: &str, value: &Value, base: &str, errs: &mut Vec<Diagnostic>) -> Option<T> {
    #[cfg(not(feature = "prechecked"))]
    let typed = serde_path_to_error::deserialize::<_, T>(value)
        .map_err(|e| (format!("{base}{}", path_to_pointer(e.path())), e.inner().to_string()));
    // Path tracking instantiates a wrapper of every deserializer for every type: bundle bytes for texts whose
    // errors were already reported with their paths when the binary was built.
    #[cfg(feature = "prechecked")]
    let typed = T::deserialize(value).map_err(|e| (base.to_string(), e.to_string()));
    match typed {
        Ok(x) => Some(x),
        Err((pointer, inner)) => {
            errs.push(
                Diagnostic::error(file, pointer, format!("schema: {inner}"))
                    .with_hint("see docs/data.md for the fields this kind of file takes"),
            );
            None
        }
    }
}

/// Checks each element of the array at `pointer` separately, so one file reports every bad element.
fn elements<T: DeserializeOwned>(file: &str, value: &Value, pointer: &str, errs: &mut Vec<Diagnostic>) {
    if let Some(items) = value.pointer(pointer).and_then(Value::as_array) {
        for (i, item) in items.iter().enumerate() {
            let _ = typed_at::<T>(file, item, &format!("{pointer}/{i}"), errs);
        }
    }
}

#[cfg(not(feature = "prechecked"))]
fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out.push_str(&format!("/{}", crate::position::escape_segment(key))),
            Segment::Enum { variant } => out.push_str(&format!("/{}", crate::position::escape_segment(variant))),
            Segment::Unknown => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::schema::SpecDecode;
    use super::{measured_acceptance, MeasuredPoint};
    use crate::Mode;

    /// Tokens per step with k drafts at per-token acceptance p: 1 + p + ... + p^k (what `model::batching` uses).
    fn length(p: f64, k: i32) -> f64 {
        (0..=k).map(|i| p.powi(i)).sum()
    }

    fn point(sd: Option<SpecDecode>) -> MeasuredPoint {
        MeasuredPoint {
            dataset: "d".into(),
            scenario: "s".into(),
            model: "m".into(),
            mode: crate::Mode::Single,
            isl: 1,
            osl: 1,
            concurrency: 1,
            output_tok_s: 1.0,
            flags: Vec::new(),
            source: "x".into(),
            quote: "x".into(),
            note: None,
            file: "f".into(),
            pointer: "/p".into(),
            latency: Default::default(),
            spec_decode: sd,
            open_loop: None,
            engine: String::new(),
            prefill_tok_s: None,
        }
    }

    fn counters(drafts: u64, accepted: u64) -> SpecDecode {
        SpecDecode {
            acceptance_rate: None,
            acceptance_length: None,
            num_drafts: Some(drafts),
            draft_tokens: Some(3 * drafts),
            accepted_tokens: Some(accepted),
            per_position_acceptance_rates: Vec::new(),
        }
    }

    /// A fit reads points of one or two machines measured by an engine a profile models; a four-machine point,
    /// or a run of another engine (SGLang), is predicted and judged only.
    #[test]
    fn only_points_a_profile_models_are_fittable() {
        let with = |mode: Mode, engine: &str| MeasuredPoint { mode, engine: engine.into(), ..point(None) };
        assert!(with(Mode::Single, "").fittable());
        assert!(with(Mode::Tp2, "vLLM").fittable());
        assert!(with(Mode::Single, "NVIDIA NIM").fittable());
        assert!(!with(Mode::Tp4, "vLLM").fittable());
        assert!(!with(Mode::Tp2, "SGLang").fittable());
    }

    #[test]
    fn runs_pool_their_counters_step_by_step() {
        // 100 steps gaining 2 tokens each and 300 gaining 3: 1 + (100 + 600) / 400 = 2.75 tokens per step.
        let m = measured_acceptance(&[point(Some(counters(100, 100))), point(None), point(Some(counters(300, 600)))])
            .expect("measured");
        assert_eq!((m.tokens_per_step, m.draft_length, m.points), (2.75, 3.0, 2));
        assert!((length(m.per_token, 3) - 2.75).abs() < 1e-9);
        // Without counters, the median of the stated lengths (here with the draft length from the positions).
        let stated = |l: f64| SpecDecode {
            acceptance_length: Some(l),
            per_position_acceptance_rates: vec![0.8, 0.6, 0.4],
            ..counters(1, 1)
        };
        let no_counts = |l| SpecDecode { num_drafts: None, draft_tokens: None, accepted_tokens: None, ..stated(l) };
        let m = measured_acceptance(&[
            point(Some(no_counts(2.0))),
            point(Some(no_counts(2.5))),
            point(Some(no_counts(2.9))),
        ])
        .expect("measured");
        assert_eq!((m.tokens_per_step, m.draft_length), (2.5, 3.0));
        assert_eq!(measured_acceptance(&[point(None)]), None);
    }
}

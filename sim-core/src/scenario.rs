//! Resolves a scenario (ids, inline objects, overrides) into plain SI specs the model computes with.

use crate::dataset::schema::*;
use crate::dataset::Dataset;
use crate::diagnostic::Diagnostic;
use crate::server::ServerSettings;
use crate::spec::{MLA_NOPE_HEAD_DIM, MLA_V_HEAD_DIM};
use crate::units::{parse_unit, Dimension};
use serde::Serialize;

pub use crate::spec::{AllReduceCurve, AttentionSpec, HardwareSpec, HostPin, LinkParams, ModelSpec};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub id: String,
    /// The engine profile the scenario predicts with (`data/engines/`).
    pub engine: String,
    pub hardware: HardwareSpec,
    pub model: ModelSpec,
    pub workloads: Vec<Workload>,
    pub concurrency: Vec<u32>,
    pub modes: Vec<Mode>,
    /// How the clients send requests: a closed loop, or synchronized batches (`ScenarioLoad`).
    pub load: ScenarioLoad,
    /// How two copies' router spreads requests (`DpRouter`).
    pub router: DpRouter,
    /// The serving engine's settings the scenario states (`server.*` overrides), laid over its profile.
    pub server: ServerSettings,
}

impl Scenario {
    /// How the output lengths of the workload `isl`/`osl` spread (`Workload::output_lengths`): fixed for a
    /// workload the scenario does not list (the explorer's own lengths).
    pub fn output_lengths(&self, isl: u32, osl: u32) -> OutputLengths {
        self.workloads.iter().find(|w| w.isl == isl && w.osl == osl).map_or(OutputLengths::Fixed, |w| w.output_lengths)
    }
}

fn si(q: &Quantity) -> f64 {
    q.si().unwrap_or(f64::NAN)
}

pub fn hardware_spec(h: &HardwareFile) -> HardwareSpec {
    let link = &h.link;
    HardwareSpec {
        id: h.id.clone(),
        name: h.name.clone(),
        gpus: si(&h.gpus),
        gpu_memory_bytes: si(&h.gpu_memory),
        hbm_bytes_per_sec: si(&h.gpu_memory_bandwidth),
        cpu_memory_bytes: si(&h.cpu_memory),
        slow_path_bytes_per_sec: si(&h.slow_path_bandwidth),
        flops_fp4: si(&h.compute_fp4),
        flops_fp8: si(&h.compute_fp8),
        // Without a stated BF16 rate, half the FP8 rate (see `HardwareFile::compute_bf16`).
        flops_bf16: h.compute_bf16.as_ref().map(si).unwrap_or_else(|| si(&h.compute_fp8) / 2.0),
        intra_bytes_per_sec: h.intra_machine_bandwidth.as_ref().map(si).unwrap_or(f64::INFINITY),
        intra_call_latency_s: h.intra_machine_call_latency.as_ref().map(si),
        intra_fabric: h.intra_machine_fabric.unwrap_or_default(),
        sparse_attention_head_tile: h.sparse_attention_head_tile.as_ref().map(si).unwrap_or(0.0),
        // The dataset's kernel tables are laid on by `kernel_curves::attach` (a hardware file alone has none).
        gemm: Default::default(),
        link: LinkParams {
            rails: si(&link.rails),
            line_rate_bytes_per_sec_per_rail: si(&link.line_rate_per_rail),
            payload_efficiency: si(&link.payload_efficiency) / 100.0,
            call_latency_s: si(&link.collective_call_latency),
            all_reduce: AllReduceCurve::new(link.all_reduce_times.iter().map(|r| (r.size_bytes, si(&r.time)))),
            transport: link.transport.kind,
            round_trip_s: si(&link.transport.round_trip),
        },
    }
}

pub fn model_spec(m: &ModelFile) -> ModelSpec {
    let a = &m.architecture;
    ModelSpec {
        id: m.id.clone(),
        name: m.name.clone(),
        weight_bytes: si(&a.weight_bytes),
        routed_expert_bytes: si(&a.routed_expert_bytes),
        active_params: si(&a.active_params),
        // Validation refuses a prefill figure above the active one; a dataset loaded without the checks (the
        // page's prechecked bundle) still gets a share in [0, 1].
        prefill_active_share: match a.prefill_active_params.as_ref() {
            Some(p) if si(&a.active_params) > 0.0 => (si(p) / si(&a.active_params)).clamp(0.0, 1.0),
            _ => 1.0,
        },
        layers: si(&a.layers),
        hidden_size: si(&a.hidden_size),
        routed_experts: si(&a.routed_experts),
        experts_per_token: si(&a.experts_per_token),
        compute_bits: si(&a.compute_bits),
        dense_compute_bits: a.dense_compute_bits.as_ref().map(si).unwrap_or_else(|| si(&a.compute_bits)),
        // Absent: 0, which `ModelSpec::expert_storage_bits` reads as the compute width's storage (so an
        // override of `compute_bits` carries the experts' stored width with it).
        routed_expert_bits: a.routed_expert_bits.as_ref().map(si).filter(|b| *b > 0.0).unwrap_or(0.0),
        kv_bytes_per_token: si(&a.kv_bytes_per_token),
        kv_split_under_tp: a.attention == "gqa",
        kv_heads: a.kv_heads.as_ref().map_or(0.0, si).max(0.0),
        pinned_cpu_bytes: a.pinned_cpu_bytes.as_ref().map(si).unwrap_or(0.0),
        pinned_read_bytes_per_token: a.pinned_read_bytes_per_token.as_ref().map(si).unwrap_or(0.0),
        input_embedding_bytes: a.input_embedding_bytes.as_ref().map(si).unwrap_or(0.0),
        draft_tokens: si(&a.draft_tokens),
        draft_passes: a.draft_passes.as_ref().map_or(0.0, si).max(0.0),
        draft_pass_layers: a.draft_pass_layers.as_ref().map_or(0.0, si).max(0.0),
        draft_acceptance: si(&a.draft_acceptance) / 100.0,
        draft_pass_bytes: si(&a.draft_pass_bytes),
        draft_expert_bytes: a.draft_routed_expert_bytes.as_ref().map(si).unwrap_or(0.0),
        attention: attention_spec(a),
        host_pin: Default::default(),
    }
}

/// The engine profile a scenario on `hardware` uses when it names none: the profile measured on that machine
/// (`default_for` lists it), else the one marked `*` for every other machine, else `DEFAULT_ENGINE`. A fit of
/// one engine build on one machine is never silently the engine of another machine when a profile says so.
pub fn default_engine(ds: &Dataset, hardware: Option<&str>) -> String {
    let claims =
        |want: &str| ds.engines.values().find(|e| e.default_for.iter().any(|h| h == want)).map(|e| e.id.clone());
    hardware.and_then(claims).or_else(|| claims("*")).unwrap_or_else(|| DEFAULT_ENGINE.to_string())
}

/// Attention geometry from a card: head dimensions where the card gives them, else the `4 x hidden` shortcut.
fn attention_spec(a: &crate::dataset::schema::Architecture) -> AttentionSpec {
    let opt = |q: &Option<Quantity>| q.as_ref().map(si);
    let layers = si(&a.layers);
    let hidden = si(&a.hidden_size);
    let mut spec = AttentionSpec::dense(layers, hidden);
    if let Some(heads) = opt(&a.attention_heads) {
        // MLA in decode with absorbed weights: QK over the latent plus rope part, AV over the latent.
        if let (Some(lora), Some(rope)) = (opt(&a.kv_lora_rank), opt(&a.rope_head_dim)) {
            spec.flops_per_position_layer = 2.0 * heads * (2.0 * lora + rope);
            spec.prefill_flops_per_position_layer = 2.0 * heads * (MLA_NOPE_HEAD_DIM + rope + MLA_V_HEAD_DIM);
        } else if let Some(dim) = opt(&a.head_dim) {
            spec.flops_per_position_layer = 4.0 * heads * dim;
            spec.prefill_flops_per_position_layer = 4.0 * heads * dim;
        }
    }
    if let (Some(window), Some(n)) = (opt(&a.sliding_window), opt(&a.sliding_window_layers)) {
        spec.window = window;
        spec.window_layers = n.min(layers - 1.0).max(0.0);
        spec.full_layers = layers - spec.window_layers;
    }
    if let (Some(n), Some(state)) = (opt(&a.linear_attention_layers), opt(&a.linear_state_bytes)) {
        spec.linear_layers = n.min(spec.full_layers - 1.0).max(0.0);
        spec.linear_state_bytes = state;
        spec.full_layers -= spec.linear_layers;
    }
    // The window layers' own geometry relative to a full layer's (`AttentionSpec::window_kv_scale`), once the
    // full layers are counted (`kv_bytes_per_token` is theirs).
    if let Some(bytes) = opt(&a.window_kv_bytes_per_token).filter(|_| spec.window_layers > 0.0) {
        let full_kv_per_layer = si(&a.kv_bytes_per_token) / spec.full_layers.max(1.0);
        if full_kv_per_layer > 0.0 {
            spec.window_kv_scale = bytes / spec.window_layers / full_kv_per_layer;
        }
    }
    if let (Some(dim), Some(full_dim)) = (opt(&a.window_head_dim), opt(&a.head_dim)) {
        if full_dim > 0.0 && spec.window_layers > 0.0 {
            spec.window_flops_scale = dim / full_dim;
        }
    }
    if let (Some(window), Some(bytes)) = (opt(&a.local_window), opt(&a.local_window_kv_bytes_per_token)) {
        spec.local_window = window.max(0.0);
        spec.local_kv_bytes = bytes.max(0.0);
    }
    if si(&a.draft_tokens) > 0.0 {
        spec.draft_layers = opt(&a.draft_attention_layers).unwrap_or(0.0).max(0.0);
        spec.draft_own_kv_bytes = opt(&a.draft_kv_bytes_per_token).unwrap_or(0.0).max(0.0);
    }
    if let Some(top_k) = opt(&a.sparse_top_k) {
        spec.top_k = top_k;
        if let (Some(heads), Some(_), Some(_)) = (opt(&a.attention_heads), opt(&a.kv_lora_rank), opt(&a.rope_head_dim))
        {
            spec.run_as_sparse_mla(heads);
        }
        let heads = opt(&a.indexer_heads).unwrap_or(0.0);
        let dim = opt(&a.indexer_head_dim).unwrap_or(0.0);
        spec.indexer_flops_per_position_layer = 2.0 * heads * dim;
        // FP8 indexer keys: one byte per dimension.
        spec.indexer_bytes_per_position_layer = dim;
    }
    spec
}

/// Which spec an override key sets a field of.
#[derive(Clone, Copy)]
pub enum OverrideField {
    Hardware(fn(&mut HardwareSpec) -> &mut f64),
    Model(fn(&mut ModelSpec) -> &mut f64),
    /// A serving engine setting (`server::SERVER_SETTINGS`), laid over the engine profile's coefficients.
    Server(fn(&mut ServerSettings) -> &mut f64),
}

/// A field a scenario's `overrides` (or the browser's what-if and planner controls) may set.
pub struct OverrideKey {
    pub key: &'static str,
    /// SI unit of the value.
    pub unit: &'static str,
    field: OverrideField,
}

impl OverrideKey {
    /// The spec field this key sets.
    pub fn field(&self) -> OverrideField {
        self.field
    }
}

const fn hw(key: &'static str, unit: &'static str, f: fn(&mut HardwareSpec) -> &mut f64) -> OverrideKey {
    OverrideKey { key, unit, field: OverrideField::Hardware(f) }
}

const fn server(key: &'static str, unit: &'static str, f: fn(&mut ServerSettings) -> &mut f64) -> OverrideKey {
    OverrideKey { key, unit, field: OverrideField::Server(f) }
}

const fn model(key: &'static str, unit: &'static str, f: fn(&mut ModelSpec) -> &mut f64) -> OverrideKey {
    OverrideKey { key, unit, field: OverrideField::Model(f) }
}

/// Every overridable field, in one table so the key list and the setter cannot drift apart.
pub const OVERRIDES: &[OverrideKey] = &[
    hw("hardware.gpus", "count", |h| &mut h.gpus),
    hw("hardware.gpu_memory_bytes", "B", |h| &mut h.gpu_memory_bytes),
    hw("hardware.hbm_bytes_per_sec", "B/s", |h| &mut h.hbm_bytes_per_sec),
    hw("hardware.cpu_memory_bytes", "B", |h| &mut h.cpu_memory_bytes),
    hw("hardware.slow_path_bytes_per_sec", "B/s", |h| &mut h.slow_path_bytes_per_sec),
    hw("hardware.flops_fp4", "FLOP/s", |h| &mut h.flops_fp4),
    hw("hardware.flops_fp8", "FLOP/s", |h| &mut h.flops_fp8),
    hw("hardware.flops_bf16", "FLOP/s", |h| &mut h.flops_bf16),
    hw("hardware.intra_bytes_per_sec", "B/s", |h| &mut h.intra_bytes_per_sec),
    hw("hardware.sparse_attention_head_tile", "count", |h| &mut h.sparse_attention_head_tile),
    hw("link.rails", "count", |h| &mut h.link.rails),
    hw("link.line_rate_bytes_per_sec_per_rail", "B/s", |h| &mut h.link.line_rate_bytes_per_sec_per_rail),
    hw("link.payload_efficiency", "fraction", |h| &mut h.link.payload_efficiency),
    hw("link.call_latency_s", "s", |h| &mut h.link.call_latency_s),
    hw("link.round_trip_s", "s", |h| &mut h.link.round_trip_s),
    model("model.weight_bytes", "B", |m| &mut m.weight_bytes),
    model("model.routed_expert_bytes", "B", |m| &mut m.routed_expert_bytes),
    model("model.active_params", "count", |m| &mut m.active_params),
    model("model.kv_bytes_per_token", "B", |m| &mut m.kv_bytes_per_token),
    model("model.draft_tokens", "count", |m| &mut m.draft_tokens),
    model("model.draft_acceptance", "fraction", |m| &mut m.draft_acceptance),
    model("model.pinned_cpu_bytes", "B", |m| &mut m.pinned_cpu_bytes),
    model("model.pinned_read_bytes_per_token", "B", |m| &mut m.pinned_read_bytes_per_token),
    model("model.layers", "count", |m| &mut m.layers),
    model("model.hidden_size", "count", |m| &mut m.hidden_size),
    model("model.routed_experts", "count", |m| &mut m.routed_experts),
    model("model.experts_per_token", "count", |m| &mut m.experts_per_token),
    model("model.compute_bits", "count", |m| &mut m.compute_bits),
    model("model.dense_compute_bits", "count", |m| &mut m.dense_compute_bits),
    model("model.draft_pass_bytes", "B", |m| &mut m.draft_pass_bytes),
    model("model.draft_pass_layers", "count", |m| &mut m.draft_pass_layers),
    // Weights pinned to host memory per GPU (`spec::HostPin`): vLLM's `--cpu-offload-gb` in bytes, whole layers,
    // or routed experts per MoE layer. They add up.
    model("placement.pin_to_host_bytes", "B", |m| &mut m.host_pin.bytes),
    model("placement.pin_to_host_layers", "count", |m| &mut m.host_pin.layers),
    model("placement.pin_to_host_experts", "count", |m| &mut m.host_pin.experts),
    // The serving engine's settings by vLLM's names (`server::SERVER_SETTINGS`); 0 leaves the profile's.
    server("server.gpu_memory_utilization", "fraction", |s| &mut s.gpu_memory_utilization),
    server("server.max_num_seqs", "count", |s| &mut s.max_num_seqs),
    server("server.max_num_batched_tokens", "count", |s| &mut s.max_num_batched_tokens),
    server("server.block_size", "count", |s| &mut s.block_size),
];

impl OverrideKey {
    /// The dimension a quantity given for this key must have (a fraction is given in percent).
    pub fn dimension(&self) -> Dimension {
        match self.unit {
            "B" => Dimension::Bytes,
            "B/s" => Dimension::BytesPerSec,
            "s" => Dimension::Seconds,
            "FLOP/s" => Dimension::FlopsPerSec,
            "fraction" => Dimension::Percent,
            _ => Dimension::Count,
        }
    }

    /// The SI value of an override as a scenario file gives it: a bare number is already SI; a quantity must
    /// have this key's dimension (a fraction's quantity is in percent).
    pub fn si_value(&self, v: &OverrideValue) -> Result<f64, String> {
        let Some(q) = v.quantity() else { return Ok(v.si()) };
        let want = self.dimension();
        match parse_unit(&q.unit) {
            Some((dim, factor)) if dim == want => {
                Ok(if want == Dimension::Percent { q.value / 100.0 } else { q.value * factor })
            }
            Some(_) => Err(format!("override `{}` needs {}, not `{}`", self.key, want.name(), q.unit)),
            None => Err(format!("override `{}`: unknown unit `{}` (expected {})", self.key, q.unit, want.name())),
        }
    }
}

/// The table entry of an override key, or an error listing the known keys.
pub fn override_key(key: &str) -> Result<&'static OverrideKey, String> {
    OVERRIDES.iter().find(|o| o.key == key).ok_or_else(|| {
        let known: Vec<_> = OVERRIDES.iter().map(|o| o.key).collect();
        format!("unknown override `{key}`; known keys: {}", known.join(", "))
    })
}

fn check_override(key: &str, value: f64) -> Result<&'static OverrideKey, String> {
    if !value.is_finite() || value < 0.0 {
        return Err(format!("override `{key}` must be a finite non-negative number, got {value}"));
    }
    if key == "model.draft_acceptance" && value >= 1.0 {
        return Err("model.draft_acceptance must be below 1".into());
    }
    let entry = override_key(key)?;
    if let OverrideField::Server(_) = entry.field {
        crate::server::check(key, value)?;
    }
    Ok(entry)
}

/// Sets one field by its override key (SI value). Values must be finite and non-negative; acceptance below 1.
pub fn apply_override(s: &mut Scenario, key: &str, value: f64) -> Result<(), String> {
    let entry = check_override(key, value)?;
    if key == "placement.pin_to_host_experts" && value > 0.0 && s.model.routed_experts <= 0.0 {
        return Err(format!("`{key}` pins routed experts, and model `{}` has none", s.model.id));
    }
    match entry.field {
        OverrideField::Hardware(f) => *f(&mut s.hardware) = value,
        OverrideField::Model(f) => *f(&mut s.model) = value,
        OverrideField::Server(f) => *f(&mut s.server) = value,
    }
    Ok(())
}

/// Sets one hardware or link field by its override key; a model key is an error (there is no model here).
pub fn apply_hardware_override(h: &mut HardwareSpec, key: &str, value: f64) -> Result<(), String> {
    match check_override(key, value)?.field {
        OverrideField::Hardware(f) => *f(h) = value,
        OverrideField::Model(_) => return Err(format!("`{key}` sets a model field, not a hardware one")),
        OverrideField::Server(_) => return Err(format!("`{key}` sets a serving engine setting, not a hardware field")),
    }
    Ok(())
}

/// Resolves references against the dataset and applies overrides.
pub fn resolve(ds: &Dataset, file: &str, sc: &ScenarioFile) -> Result<Scenario, Vec<Diagnostic>> {
    let mut errs = Vec::new();
    let hardware = match &sc.hardware {
        Reference::Id(id) => ds.hardware.get(id).map(hardware_spec),
        Reference::Inline(h) => Some(hardware_spec(h)),
    }
    .map(|mut h| {
        crate::kernel_curves::attach(ds, &mut h);
        h
    });
    let model = match &sc.model {
        ModelRef::Id(id) => ds.models.get(id).map(model_spec),
        ModelRef::Inline(m) => Some(model_spec(m)),
        ModelRef::Described { describe } => match describe.to_spec() {
            Ok(m) => Some(m),
            Err(e) => {
                errs.push(
                    Diagnostic::error(file, "/model/describe", e)
                        .with_hint("see sim-core/src/describe.rs for the fields"),
                );
                return Err(errs);
            }
        },
    };
    if let (None, Reference::Id(id)) = (&hardware, &sc.hardware) {
        errs.push(unknown_id(file, "/hardware", "hardware", id, ds.hardware.keys(), "hardware/"));
    }
    if let (None, ModelRef::Id(id)) = (&model, &sc.model) {
        errs.push(unknown_id(file, "/model", "model", id, ds.models.keys(), "models/"));
    }
    errs.extend(check_load(file, sc));
    let (Some(hardware), Some(model)) = (hardware, model) else { return Err(located(ds, errs)) };
    let mut s = Scenario {
        id: sc.id.clone(),
        engine: sc.engine.clone().unwrap_or_else(|| {
            default_engine(
                ds,
                match &sc.hardware {
                    Reference::Id(id) => Some(id.as_str()),
                    Reference::Inline(_) => None,
                },
            )
        }),
        hardware,
        model,
        workloads: sc.workloads.clone(),
        load: sc.load,
        router: sc.router,
        server: ServerSettings::default(),
        concurrency: sc.concurrency.clone(),
        modes: sc.modes.clone(),
    };
    for (key, value) in &sc.overrides {
        let si = override_key(key).and_then(|o| o.si_value(value));
        if let Err(e) = si.and_then(|v| apply_override(&mut s, key, v)) {
            errs.push(Diagnostic::error(file, format!("/overrides/{}", crate::position::escape_segment(key)), e));
        }
    }
    let nan = [s.hardware.gpu_memory_bytes, s.hardware.hbm_bytes_per_sec, s.model.weight_bytes, s.model.active_params]
        .iter()
        .any(|x| !x.is_finite());
    if nan {
        errs.push(
            Diagnostic::error(file, "", "hardware or model has a quantity with an unknown unit")
                .with_hint("run `sim-core validate` on the dataset"),
        );
    }
    if errs.is_empty() {
        Ok(s)
    } else {
        Err(located(ds, errs))
    }
}

/// The most clients a scenario (or `predict --concurrency`) may ask for.
pub const MAX_CONCURRENCY: u32 = 4096;

/// What a scenario asks the model to run, checked before anything is predicted: at least one workload, every
/// workload at least one token in and one out, every concurrency in `1..=MAX_CONCURRENCY`. A scenario file the
/// dataset does not hold (`sim-core plan my-scenario.json`) meets no other check, and the model would otherwise
/// predict a throughput for zero clients or for requests of no tokens.
pub fn check_load(file: &str, sc: &ScenarioFile) -> Vec<Diagnostic> {
    let mut errs = Vec::new();
    if sc.workloads.is_empty() {
        errs.push(
            Diagnostic::error(file, "/workloads", "the scenario lists no workloads")
                .with_hint("add at least one {\"isl\": ..., \"osl\": ...}"),
        );
    }
    for (i, w) in sc.workloads.iter().enumerate() {
        for (field, tokens) in [("isl", w.isl), ("osl", w.osl)] {
            if tokens == 0 {
                errs.push(
                    Diagnostic::error(file, format!("/workloads/{i}/{field}"), format!("`{field}` is 0 tokens"))
                        .with_hint("isl (tokens in) and osl (tokens out) count tokens per request: at least 1"),
                );
            }
        }
    }
    if sc.concurrency.is_empty() {
        errs.push(
            Diagnostic::error(file, "/concurrency", "the scenario lists no concurrency levels")
                .with_hint(format!("add the client counts to predict, each in 1..={MAX_CONCURRENCY}")),
        );
    }
    for (i, c) in sc.concurrency.iter().enumerate() {
        if *c == 0 || *c > MAX_CONCURRENCY {
            errs.push(
                Diagnostic::error(
                    file,
                    format!("/concurrency/{i}"),
                    format!("concurrency {c} is outside 1..={MAX_CONCURRENCY}"),
                )
                .with_hint("concurrency counts the clients that keep one request each in flight"),
            );
        }
    }
    errs
}

/// Line and column where the file is one of the dataset's (a pointer alone is hard to find); a scenario read
/// from elsewhere is located by its caller, which has its text.
fn located(ds: &Dataset, errs: Vec<Diagnostic>) -> Vec<Diagnostic> {
    errs.into_iter().map(|d| ds.locate(d)).collect()
}

/// An id a dataset does not hold: which id, where, the ids it does hold, and the closest of them when one is
/// near enough to be a typo.
fn unknown_id<'a>(
    file: &str,
    pointer: &str,
    what: &str,
    id: &str,
    known: impl Iterator<Item = &'a String>,
    folder: &str,
) -> Diagnostic {
    let known: Vec<&str> = known.map(String::as_str).collect();
    let guess = closest(id, &known).map_or(String::new(), |k| format!("did you mean `{k}`? "));
    let list = if known.is_empty() { "none".to_string() } else { known.join(", ") };
    Diagnostic::error(file, pointer, format!("unknown {what} id `{id}`"))
        .with_hint(format!("{guess}known {what} ids (the dataset's {folder} files): {list}"))
}

/// The known id nearest `id` by edit distance, when at most a third of its length (and at least 2) apart.
fn closest<'a>(id: &str, known: &[&'a str]) -> Option<&'a str> {
    let limit = (id.chars().count() / 3).max(2);
    known.iter().map(|k| (edit_distance(id, k), *k)).filter(|(d, _)| *d <= limit).min().map(|(_, k)| k)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

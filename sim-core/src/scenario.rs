//! Resolves a scenario (ids, inline objects, overrides) into plain SI specs the model computes with.

use crate::dataset::schema::*;
use crate::dataset::Dataset;
use crate::diagnostic::Diagnostic;
use serde::Serialize;

/// One machine, in SI units (bytes, bytes/s, FLOP/s, seconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HardwareSpec {
    pub id: String,
    pub name: String,
    /// GPUs per machine serving one engine together (tensor parallel inside the box).
    pub gpus: f64,
    pub gpu_memory_bytes: f64,
    pub hbm_bytes_per_sec: f64,
    pub cpu_memory_bytes: f64,
    pub slow_path_bytes_per_sec: f64,
    pub flops_fp4: f64,
    pub flops_fp8: f64,
    /// GPU-to-GPU bandwidth inside one machine (all-reduce bus bandwidth), when `gpus` > 1.
    pub intra_bytes_per_sec: f64,
    /// Cost of one all-reduce call between the GPUs of one machine, seconds.
    pub intra_call_latency_s: f64,
    pub link: LinkParams,
}

/// Assumed cost of one all-reduce call inside a machine when the hardware file gives none: NVLink or PCIe
/// collectives without a network hop (NCCL's base latency, ~6.6-14 us, reported elsewhere: src/graph/tuning.cc).
pub const DEFAULT_INTRA_CALL_LATENCY_S: f64 = 10e-6;

/// The machine-to-machine link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkParams {
    pub rails: f64,
    pub line_rate_bytes_per_sec_per_rail: f64,
    /// Fraction of line rate carrying payload (0..1).
    pub payload_efficiency: f64,
    pub call_latency_s: f64,
}

impl LinkParams {
    /// One-way payload bandwidth over all rails: the ceiling every transfer and collective sits under.
    pub fn payload_bytes_per_sec(&self) -> f64 {
        self.rails * self.line_rate_bytes_per_sec_per_rail * self.payload_efficiency
    }
}

/// A model in SI units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSpec {
    pub id: String,
    pub name: String,
    pub weight_bytes: f64,
    pub routed_expert_bytes: f64,
    pub active_params: f64,
    pub layers: f64,
    pub hidden_size: f64,
    pub routed_experts: f64,
    pub experts_per_token: f64,
    pub compute_bits: f64,
    pub kv_bytes_per_token: f64,
    /// GQA splits KV across tensor-parallel ranks; MLA replicates it.
    pub kv_split_under_tp: bool,
    pub pinned_cpu_bytes: f64,
    pub pinned_read_bytes_per_token: f64,
    pub draft_tokens: f64,
    /// Per-token draft acceptance, 0..1 (prior; the fit may replace it).
    pub draft_acceptance: f64,
    pub draft_pass_bytes: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub id: String,
    pub hardware: HardwareSpec,
    pub model: ModelSpec,
    pub workloads: Vec<Workload>,
    pub concurrency: Vec<u32>,
    pub modes: Vec<Mode>,
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
        intra_bytes_per_sec: h.intra_machine_bandwidth.as_ref().map(si).unwrap_or(f64::INFINITY),
        intra_call_latency_s: h.intra_machine_call_latency.as_ref().map(si).unwrap_or(DEFAULT_INTRA_CALL_LATENCY_S),
        link: LinkParams {
            rails: si(&link.rails),
            line_rate_bytes_per_sec_per_rail: si(&link.line_rate_per_rail),
            payload_efficiency: si(&link.payload_efficiency) / 100.0,
            call_latency_s: si(&link.collective_call_latency),
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
        layers: si(&a.layers),
        hidden_size: si(&a.hidden_size),
        routed_experts: si(&a.routed_experts),
        experts_per_token: si(&a.experts_per_token),
        compute_bits: si(&a.compute_bits),
        kv_bytes_per_token: si(&a.kv_bytes_per_token),
        kv_split_under_tp: a.attention == "gqa",
        pinned_cpu_bytes: a.pinned_cpu_bytes.as_ref().map(si).unwrap_or(0.0),
        pinned_read_bytes_per_token: a.pinned_read_bytes_per_token.as_ref().map(si).unwrap_or(0.0),
        draft_tokens: si(&a.draft_tokens),
        draft_acceptance: si(&a.draft_acceptance) / 100.0,
        draft_pass_bytes: si(&a.draft_pass_bytes),
    }
}

/// A field a scenario's `overrides` (or the browser's what-if controls) may set.
pub struct OverrideKey {
    pub key: &'static str,
    /// SI unit of the value.
    pub unit: &'static str,
    field: fn(&mut Scenario) -> &mut f64,
}

/// Every overridable field, in one table so the key list and the setter cannot drift apart.
pub const OVERRIDES: &[OverrideKey] = &[
    OverrideKey { key: "hardware.gpus", unit: "count", field: |s| &mut s.hardware.gpus },
    OverrideKey { key: "hardware.gpu_memory_bytes", unit: "B", field: |s| &mut s.hardware.gpu_memory_bytes },
    OverrideKey { key: "hardware.hbm_bytes_per_sec", unit: "B/s", field: |s| &mut s.hardware.hbm_bytes_per_sec },
    OverrideKey { key: "hardware.cpu_memory_bytes", unit: "B", field: |s| &mut s.hardware.cpu_memory_bytes },
    OverrideKey {
        key: "hardware.slow_path_bytes_per_sec",
        unit: "B/s",
        field: |s| &mut s.hardware.slow_path_bytes_per_sec,
    },
    OverrideKey { key: "hardware.flops_fp4", unit: "FLOP/s", field: |s| &mut s.hardware.flops_fp4 },
    OverrideKey { key: "hardware.flops_fp8", unit: "FLOP/s", field: |s| &mut s.hardware.flops_fp8 },
    OverrideKey { key: "hardware.intra_bytes_per_sec", unit: "B/s", field: |s| &mut s.hardware.intra_bytes_per_sec },
    OverrideKey { key: "hardware.intra_call_latency_s", unit: "s", field: |s| &mut s.hardware.intra_call_latency_s },
    OverrideKey { key: "link.rails", unit: "count", field: |s| &mut s.hardware.link.rails },
    OverrideKey {
        key: "link.line_rate_bytes_per_sec_per_rail",
        unit: "B/s",
        field: |s| &mut s.hardware.link.line_rate_bytes_per_sec_per_rail,
    },
    OverrideKey {
        key: "link.payload_efficiency",
        unit: "fraction",
        field: |s| &mut s.hardware.link.payload_efficiency,
    },
    OverrideKey { key: "link.call_latency_s", unit: "s", field: |s| &mut s.hardware.link.call_latency_s },
    OverrideKey { key: "model.weight_bytes", unit: "B", field: |s| &mut s.model.weight_bytes },
    OverrideKey { key: "model.routed_expert_bytes", unit: "B", field: |s| &mut s.model.routed_expert_bytes },
    OverrideKey { key: "model.active_params", unit: "count", field: |s| &mut s.model.active_params },
    OverrideKey { key: "model.kv_bytes_per_token", unit: "B", field: |s| &mut s.model.kv_bytes_per_token },
    OverrideKey { key: "model.draft_tokens", unit: "count", field: |s| &mut s.model.draft_tokens },
    OverrideKey { key: "model.draft_acceptance", unit: "fraction", field: |s| &mut s.model.draft_acceptance },
    OverrideKey { key: "model.pinned_cpu_bytes", unit: "B", field: |s| &mut s.model.pinned_cpu_bytes },
];

/// Sets one field by its override key. Values must be finite and non-negative; acceptance below 1.
pub fn apply_override(s: &mut Scenario, key: &str, value: f64) -> Result<(), String> {
    if !value.is_finite() || value < 0.0 {
        return Err(format!("override `{key}` must be a finite non-negative number, got {value}"));
    }
    if key == "model.draft_acceptance" && value >= 1.0 {
        return Err("model.draft_acceptance must be below 1".into());
    }
    let Some(o) = OVERRIDES.iter().find(|o| o.key == key) else {
        let known: Vec<_> = OVERRIDES.iter().map(|o| o.key).collect();
        return Err(format!("unknown override `{key}`; known keys: {}", known.join(", ")));
    };
    *(o.field)(s) = value;
    Ok(())
}

/// Resolves references against the dataset and applies overrides.
pub fn resolve(ds: &Dataset, file: &str, sc: &ScenarioFile) -> Result<Scenario, Vec<Diagnostic>> {
    let mut errs = Vec::new();
    let hardware = match &sc.hardware {
        Reference::Id(id) => ds.hardware.get(id).map(hardware_spec),
        Reference::Inline(h) => Some(hardware_spec(h)),
    };
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
    if hardware.is_none() {
        errs.push(
            Diagnostic::error(file, "/hardware", "unknown hardware id").with_hint("use an id from data/hardware/"),
        );
    }
    if model.is_none() && errs.is_empty() {
        errs.push(Diagnostic::error(file, "/model", "unknown model id").with_hint("use an id from data/models/"));
    }
    let (Some(hardware), Some(model)) = (hardware, model) else { return Err(errs) };
    let mut s = Scenario {
        id: sc.id.clone(),
        hardware,
        model,
        workloads: sc.workloads.clone(),
        concurrency: sc.concurrency.clone(),
        modes: sc.modes.clone(),
    };
    for (key, value) in &sc.overrides {
        if let Err(e) = apply_override(&mut s, key, *value) {
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
        Err(errs)
    }
}

//! Plain SI specifications of a machine, its link and a model: what the physics computes with (no dataset types,
//! no references), so `describe`, `scenario` and `model` can all use them without depending on each other.

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
    /// Dense BF16 tensor FLOP/s (models computing at 16 bits).
    pub flops_bf16: f64,
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
    /// Bytes of the input embedding table, resident with the dense weights but gathered, not streamed.
    pub input_embedding_bytes: f64,
    pub draft_tokens: f64,
    /// Per-token draft acceptance, 0..1 (prior; the fit may replace it).
    pub draft_acceptance: f64,
    pub draft_pass_bytes: f64,
}

//! The bandwidth cliff: where weights and KV cache live, and how long one step's reads take.
//!
//! ```text
//!   GPU HBM (fast, e.g. 7.1 TB/s)          CPU memory (slow path, e.g. 396 GB/s over NVLink-C2C)
//!   [ dense + shared weights ]             [ spilled routed experts ][ pinned tables (Engram) ]
//!   [ routed experts that fit ]
//!   [ KV pool ][ runtime reserve ]
//! ```
//! Placement per GPU: dense weights first, then routed experts until HBM minus the reserve is full; the rest
//! of the experts spill to CPU memory. Under tensor parallelism each GPU holds 1/tp of every weight; MLA KV
//! is replicated on every rank, GQA KV is split. Reads of the two tiers are serialised (layers run in order),
//! so a step pays HBM time plus slow-path time, not the max of the two.

use super::Coefficients;
use crate::spec::{HardwareSpec, ModelSpec};
use serde::Serialize;

/// Where one GPU's share of the model sits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    /// GPUs one engine spans (tensor-parallel degree).
    pub tp: f64,
    pub weight_bytes_per_gpu: f64,
    pub dense_bytes_hbm: f64,
    pub expert_bytes_hbm: f64,
    pub expert_bytes_spilled: f64,
    /// Non-expert bytes spilled (only when experts alone cannot absorb the overflow).
    pub dense_bytes_spilled: f64,
    pub pinned_cpu_bytes: f64,
    pub kv_pool_bytes: f64,
    pub kv_bytes_per_token: f64,
    /// False when the model does not fit in GPU plus CPU memory at all.
    pub fits: bool,
    /// Memory one machine lacks for the model to fit (CPU memory for the spill and pinned tables, or GPU
    /// memory for a KV pool); 0 when it fits.
    pub missing_bytes: f64,
}

impl Placement {
    pub fn spilled_bytes(&self) -> f64 {
        self.expert_bytes_spilled + self.dense_bytes_spilled
    }

    /// Tokens of KV cache the pool holds per GPU (`None` for a model without a KV cache).
    pub fn kv_pool_tokens(&self) -> Option<f64> {
        (self.kv_bytes_per_token > 0.0).then(|| self.kv_pool_bytes / self.kv_bytes_per_token)
    }

    pub fn hbm_weight_bytes(&self) -> f64 {
        self.dense_bytes_hbm + self.expert_bytes_hbm
    }
}

/// Places the model on one GPU of an engine spanning `tp` GPUs.
pub fn place(model: &ModelSpec, hw: &HardwareSpec, tp: f64, k: &Coefficients) -> Placement {
    let tp = tp.max(1.0);
    let weights = model.weight_bytes / tp;
    let experts = model.routed_expert_bytes.min(model.weight_bytes) / tp;
    let dense = weights - experts;
    let budget = hw.gpu_memory_bytes * (1.0 - k.hbm_reserve_fraction).max(0.0);
    let overflow = (weights - budget).max(0.0);
    let expert_spill = overflow.min(experts);
    let dense_spill = overflow - expert_spill;
    let hbm_weights = weights - overflow;
    let kv_room = hw.gpu_memory_bytes * (1.0 - k.runtime_reserve_fraction) - hbm_weights;
    let kv_pool = kv_room.max(0.0);
    let kv_per_token = if model.kv_split_under_tp { model.kv_bytes_per_token / tp } else { model.kv_bytes_per_token };
    // CPU memory of one machine holds the spilled share of every GPU in it plus the pinned tables.
    let gpus_per_machine = hw.gpus.max(1.0);
    let cpu_needed = overflow * gpus_per_machine + model.pinned_cpu_bytes;
    Placement {
        tp,
        weight_bytes_per_gpu: weights,
        dense_bytes_hbm: dense - dense_spill,
        expert_bytes_hbm: experts - expert_spill,
        expert_bytes_spilled: expert_spill,
        dense_bytes_spilled: dense_spill,
        pinned_cpu_bytes: model.pinned_cpu_bytes,
        kv_pool_bytes: kv_pool,
        kv_bytes_per_token: kv_per_token,
        fits: cpu_needed <= hw.cpu_memory_bytes && kv_pool > 0.0,
        missing_bytes: (cpu_needed - hw.cpu_memory_bytes).max(0.0) + (-kv_room).max(0.0),
    }
}

/// Expected share of routed experts a step with `tokens` tokens touches: 1 - (1 - s*k/E)^T, where s = 1 is
/// uniform routing and s < 1 means the experts in question receive less than their share of tokens.
pub fn expert_touch_fraction(model: &ModelSpec, tokens: f64, routing_share: f64) -> f64 {
    if model.routed_experts <= 0.0 || model.experts_per_token <= 0.0 {
        return 1.0;
    }
    let per_token = (routing_share * model.experts_per_token / model.routed_experts).clamp(0.0, 1.0);
    1.0 - (1.0 - per_token).powf(tokens.max(0.0))
}

/// Bytes one step reads from each tier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReads {
    pub hbm_bytes: f64,
    pub slow_bytes: f64,
}

/// Weight, KV and pinned-table bytes a step with `tokens` tokens reads; `kv_read_bytes` is what its decoding
/// sequences' attention reads on this GPU. `spilled_routing_share` is how much routing the spilled experts get
/// relative to uniform (1.0); routing mass is conserved, so the experts left in HBM get the rest.
pub fn step_reads(
    model: &ModelSpec,
    p: &Placement,
    tokens: f64,
    kv_read_bytes: f64,
    spilled_routing_share: f64,
) -> StepReads {
    let experts = p.expert_bytes_hbm + p.expert_bytes_spilled;
    let spilled_share = if experts > 0.0 { p.expert_bytes_spilled / experts } else { 0.0 };
    let s = spilled_routing_share.max(0.0);
    // Shares of routing: s * f to the spilled fraction f, 1 - s * f to the rest (1 - f).
    let hbm_share =
        if spilled_share < 1.0 { ((1.0 - s * spilled_share) / (1.0 - spilled_share)).max(0.0) } else { 1.0 };
    let touched = expert_touch_fraction(model, tokens, hbm_share);
    let touched_spilled = expert_touch_fraction(model, tokens, s);
    // The input embedding sits with the dense weights but a step gathers one row per token, not the table.
    let streamed_dense = (p.dense_bytes_hbm - model.input_embedding_bytes / p.tp).max(0.0);
    StepReads {
        hbm_bytes: streamed_dense + p.expert_bytes_hbm * touched + kv_read_bytes,
        slow_bytes: p.dense_bytes_spilled
            + p.expert_bytes_spilled * touched_spilled
            + tokens * model.pinned_read_bytes_per_token / p.tp,
    }
}

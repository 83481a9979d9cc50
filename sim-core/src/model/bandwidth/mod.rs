//! The bandwidth cliff: where weights and KV cache live, and how long one step's reads take.
//!
//! ```text
//!   GPU HBM (fast, e.g. 7.1 TB/s)          CPU memory (slow path, e.g. 396 GB/s over NVLink-C2C)
//!   [ dense + shared weights ]             [ spilled routed experts ][ pinned tables (Engram) ]
//!   [ routed experts that fit ]
//!   [ KV pool ][ runtime reserve ]
//! ```
//! Placement per GPU: weights the deployment pins to host memory go there first (`HostPin`, like vLLM's
//! `--cpu-offload-gb`); the rest stays in HBM when it fits the engine's memory share, and otherwise dense
//! weights first, then routed experts until HBM minus the reserve is full, the rest of the experts spilling to
//! CPU memory (`offloaded_bytes`). The KV pool is what the engine's memory share leaves of
//! HBM after the resident weights, so pinning never shrinks it. Under tensor parallelism each GPU holds 1/tp
//! of every weight; MLA KV is replicated on every rank, GQA KV is split by heads down to one head per rank
//! (`ModelSpec::kv_split`). Reads of the two tiers are serialised
//! (layers run in order), so a step pays HBM time plus slow-path time, not the max of the two.

use super::{Coefficients, MoeKernel};
use crate::spec::{HardwareSpec, ModelSpec};
use serde::Serialize;

mod reads;
#[cfg(test)]
mod tests;

pub use reads::{
    expert_touch_fraction, host_compute_shares, moe_padding_tokens, step_reads, ExpertSplit, ExpertTouch, StepReader,
    StepReads,
};

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
    /// Non-expert bytes the deployment pinned to host memory (`ModelSpec::host_pin`); read every step.
    #[serde(skip_serializing_if = "is_zero")]
    pub dense_bytes_pinned: f64,
    /// Routed-expert bytes pinned to host memory; read at the touched share of uniform routing.
    #[serde(skip_serializing_if = "is_zero")]
    pub expert_bytes_pinned: f64,
    pub pinned_cpu_bytes: f64,
    pub kv_pool_bytes: f64,
    pub kv_bytes_per_token: f64,
    /// False when the model does not fit in GPU plus CPU memory at all.
    pub fits: bool,
    /// Memory one machine lacks for the model to fit (CPU memory for the spill and pinned tables, or GPU
    /// memory for a KV pool); 0 when it fits.
    pub missing_bytes: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Placement {
    /// Weight bytes that did not fit in HBM (the pin excluded: it is the deployment's choice, not overflow).
    pub fn spilled_bytes(&self) -> f64 {
        self.expert_bytes_spilled + self.dense_bytes_spilled
    }

    /// Weight bytes pinned to host memory by the deployment.
    pub fn pinned_bytes(&self) -> f64 {
        self.dense_bytes_pinned + self.expert_bytes_pinned
    }

    /// Every weight byte of this GPU that lives in CPU memory: spilled plus pinned.
    pub fn host_weight_bytes(&self) -> f64 {
        self.spilled_bytes() + self.pinned_bytes()
    }

    /// Tokens of KV cache the pool holds per GPU (`None` for a model without a KV cache).
    pub fn kv_pool_tokens(&self) -> Option<f64> {
        (self.kv_bytes_per_token > 0.0).then(|| self.kv_pool_bytes / self.kv_bytes_per_token)
    }

    pub fn hbm_weight_bytes(&self) -> f64 {
        self.dense_bytes_hbm + self.expert_bytes_hbm
    }

    /// Routed-expert bytes of this GPU wherever they live (HBM, spilled, pinned).
    pub fn expert_bytes(&self) -> f64 {
        self.expert_bytes_hbm + self.expert_bytes_spilled + self.expert_bytes_pinned
    }
}

/// Per-GPU (dense, routed-expert) bytes a host pin moves to CPU memory, given the GPU's dense and expert bytes.
/// Layers and bytes pin a share of every layer (the input embedding stays: vLLM offloads decoder layers);
/// experts pin that many of every MoE layer's routed experts among the layers not already pinned.
pub fn pinned_bytes(model: &ModelSpec, tp: f64, dense: f64, experts: f64) -> (f64, f64) {
    let pin = &model.host_pin;
    if pin.is_none() {
        return (0.0, 0.0);
    }
    let layered_dense = (dense - model.input_embedding_bytes / tp).max(0.0);
    let layered = layered_dense + experts;
    let share_of = |x: f64, of: f64| if of > 0.0 && x.is_finite() { (x / of).max(0.0) } else { 0.0 };
    let layer_share = (share_of(pin.layers, model.layers) + share_of(pin.bytes, layered)).min(1.0);
    let expert_share = share_of(pin.experts, model.routed_experts).min(1.0);
    let experts_pinned = layer_share + (1.0 - layer_share) * expert_share;
    (layer_share * layered_dense, experts_pinned * experts)
}

/// GPU memory the engine gives weights and KV together, bytes: vLLM and SGLang a share of all of it
/// (`gpu_memory_utilization`: all but `runtime_reserve_fraction`, which activations and the runtime take);
/// TensorRT-LLM all of it, its KV pool being a share of what the weights leave free
/// (`Coefficients::kv_free_memory_fraction`). Whether weights must be offloaded and how much KV room they leave
/// are both asked of this one share.
pub fn engine_memory_share(gpu_memory_bytes: f64, k: &Coefficients) -> f64 {
    if k.kv_free_memory_fraction > 0.0 {
        gpu_memory_bytes
    } else {
        gpu_memory_bytes * (1.0 - k.runtime_reserve_fraction).max(0.0)
    }
}

/// Weight bytes of one GPU a deployment offloads to CPU memory beyond what it pins (`weights` is all of the GPU's
/// weights, `pinned` the pin's share of them). Serving engines load every weight into GPU memory unless told to
/// offload (vLLM's `--cpu-offload-gb`, off by default; SGLang's `--cpu-offload-gb`; TensorRT-LLM has none): a
/// deployment offloads only when the weights do not fit the engine's share of memory (`gpu_memory_utilization`,
/// or all of it where the KV pool is a share of what the weights leave free), and then enough to leave
/// `hbm_reserve_fraction` of memory free of weights, counting what it pins (the GB300 report's one-station
/// GLM-5.2: 215 of 433 GB offloaded, 34 of 252 GB left). Weights that fit run from HBM with whatever KV pool
/// they leave, as published runs do (GPT-OSS-120B on one H100 80GB, GPUStack). Whether a deployment must
/// offload is the whole model's question, not the rest after a pin's: so a larger pin never shrinks the pool.
pub fn offloaded_bytes(weights: f64, pinned: f64, gpu_memory_bytes: f64, k: &Coefficients) -> f64 {
    let share = engine_memory_share(gpu_memory_bytes, k);
    if weights <= share {
        return 0.0;
    }
    // Never fewer bytes than the share forces out, even where a profile reserves less than its runtime takes.
    let budget = (gpu_memory_bytes * (1.0 - k.hbm_reserve_fraction).max(0.0)).min(share);
    (weights - pinned - budget).max(0.0)
}

/// Places the model on one GPU of an engine spanning `tp` GPUs.
pub fn place(model: &ModelSpec, hw: &HardwareSpec, tp: f64, k: &Coefficients) -> Placement {
    place_split(model, hw, tp, tp, k)
}

/// Places the model on one GPU whose dense layers and attention are split over `tp` GPUs and whose routed
/// experts are split over `expert_ranks` (at least `tp`): vLLM's DP+EP holds a data-parallel rank's dense weights
/// on each machine and shards the experts over the GPUs of every rank.
pub fn place_split(model: &ModelSpec, hw: &HardwareSpec, tp: f64, expert_ranks: f64, k: &Coefficients) -> Placement {
    let tp = tp.max(1.0);
    let all_experts = model.routed_expert_bytes.min(model.weight_bytes);
    let experts = all_experts / expert_ranks.max(tp);
    let dense = (model.weight_bytes - all_experts) / tp;
    let weights = dense + experts;
    // The pin leaves first; the rest fills HBM up to the budget as before (with no pin, exactly as before).
    let (pin_dense, pin_experts) = pinned_bytes(model, tp, dense, experts);
    let pinned = pin_dense + pin_experts;
    let rest = weights - pinned;
    let rest_experts = experts - pin_experts;
    let overflow = offloaded_bytes(weights, pinned, hw.gpu_memory_bytes, k);
    let expert_spill = overflow.min(rest_experts);
    let dense_spill = overflow - expert_spill;
    let hbm_weights = rest - overflow;
    // KV gets what the weights leave of the engine's share, or under TensorRT-LLM's rule a fraction of what the
    // weights and the runtime's own buffers leave (`kv_free_memory_fraction`).
    let kv_room = if k.kv_free_memory_fraction > 0.0 {
        let runtime = hw.gpu_memory_bytes * k.runtime_reserve_fraction.clamp(0.0, 1.0);
        k.kv_free_memory_fraction * (hw.gpu_memory_bytes - runtime - hbm_weights)
    } else {
        engine_memory_share(hw.gpu_memory_bytes, k) - hbm_weights
    };
    let kv_pool = kv_room.max(0.0);
    let kv_per_token = model.kv_bytes_per_token / model.kv_split(tp);
    // CPU memory of one machine holds the spilled share of every GPU in it plus the pinned tables.
    let gpus_per_machine = hw.gpus.max(1.0);
    let cpu_needed = (overflow + pinned) * gpus_per_machine + model.pinned_cpu_bytes;
    Placement {
        tp,
        weight_bytes_per_gpu: weights,
        dense_bytes_hbm: dense - pin_dense - dense_spill,
        expert_bytes_hbm: rest_experts - expert_spill,
        expert_bytes_spilled: expert_spill,
        dense_bytes_spilled: dense_spill,
        dense_bytes_pinned: pin_dense,
        expert_bytes_pinned: pin_experts,
        pinned_cpu_bytes: model.pinned_cpu_bytes,
        kv_pool_bytes: kv_pool,
        kv_bytes_per_token: kv_per_token,
        fits: cpu_needed <= hw.cpu_memory_bytes && kv_pool > 0.0,
        missing_bytes: (cpu_needed - hw.cpu_memory_bytes).max(0.0) + (-kv_room).max(0.0),
    }
}

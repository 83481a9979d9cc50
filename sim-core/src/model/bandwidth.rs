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
//! of every weight; MLA KV is replicated on every rank, GQA KV is split. Reads of the two tiers are serialised
//! (layers run in order), so a step pays HBM time plus slow-path time, not the max of the two.

use super::{Coefficients, MoeKernel};
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
    let tp = tp.max(1.0);
    let weights = model.weight_bytes / tp;
    let experts = model.routed_expert_bytes.min(model.weight_bytes) / tp;
    let dense = weights - experts;
    // The pin leaves first; the rest fills HBM up to the budget as before (with no pin, exactly as before).
    let (pin_dense, pin_experts) = pinned_bytes(model, tp, dense, experts);
    let pinned = pin_dense + pin_experts;
    let rest = weights - pinned;
    let rest_experts = experts - pin_experts;
    let overflow = offloaded_bytes(weights, pinned, hw.gpu_memory_bytes, k);
    let expert_spill = overflow.min(rest_experts);
    let dense_spill = overflow - expert_spill;
    let hbm_weights = rest - overflow;
    // KV gets what the weights leave of the engine's share, or under TensorRT-LLM's rule a fraction of it.
    let kv_room = engine_memory_share(hw.gpu_memory_bytes, k) - hbm_weights;
    let kv_room = if k.kv_free_memory_fraction > 0.0 { k.kv_free_memory_fraction * kv_room } else { kv_room };
    let kv_pool = kv_room.max(0.0);
    let kv_per_token = if model.kv_split_under_tp { model.kv_bytes_per_token / tp } else { model.kv_bytes_per_token };
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

/// Expected share of routed experts a step with `tokens` tokens touches: 1 - (1 - s*k/E)^T, where s = 1 is
/// uniform routing and s < 1 means the experts in question receive less than their share of tokens.
pub fn expert_touch_fraction(model: &ModelSpec, tokens: f64, routing_share: f64) -> f64 {
    ExpertTouch::new(model, routing_share).fraction(tokens)
}

/// `expert_touch_fraction` for one routing share, its logarithm taken once: 1 - (1 - p)^T is 1 - exp(T ln(1 - p)),
/// a product and an `exp` per step where `powf` cost twice as much (the serving loop asks every step). `exp` and
/// `ln`, not `exp_m1` and `ln_1p`: the page already carries those two, and the others added 1.5 KB to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExpertTouch {
    /// ln(1 - s*k/E), the log-probability that a token misses a given expert; `None` when the model routes no
    /// experts (every expert it has, none, is touched).
    ln_miss: Option<f64>,
}

impl ExpertTouch {
    pub fn new(model: &ModelSpec, routing_share: f64) -> Self {
        if model.routed_experts <= 0.0 || model.experts_per_token <= 0.0 {
            return ExpertTouch { ln_miss: None };
        }
        let per_token = (routing_share * model.experts_per_token / model.routed_experts).clamp(0.0, 1.0);
        ExpertTouch { ln_miss: Some((1.0 - per_token).ln()) }
    }

    /// The share of experts `tokens` tokens touch.
    pub fn fraction(&self, tokens: f64) -> f64 {
        let Some(ln_miss) = self.ln_miss else { return 1.0 };
        let tokens = tokens.max(0.0);
        // No token touches nothing, even where every token touches every expert (ln_miss = -inf).
        if tokens == 0.0 {
            return 0.0;
        }
        1.0 - (tokens * ln_miss).exp()
    }
}

/// Routed-expert multiplies a step of `tokens` tokens spends on padding, in tokens' worth (a token multiplies by
/// `experts_per_token` experts): `kernel` computes each touched expert's rows in whole tiles of
/// `MoeKernel::tile_rows`, so a layer runs `max(rows + touched x tile / 2, touched x tile)` rows for its
/// `rows = tokens x k`, where touched = E x `expert_touch_fraction` (uniform routing). An expert with fewer tokens
/// than a tile pays the whole tile; one with many pays half a tile on average for its last, partial one.
/// `tile_scale` scales the kernel's tile (1: as its source sizes it; the sensitivity table halves and doubles it).
/// `touched_uniform` gives that touch fraction, asked only when the kernel pads (the serving loop's from the
/// step's reads, `StepReads::touched_uniform`, or its engine's `StepReader::uniform_touch`).
pub fn moe_padding_tokens(
    model: &ModelSpec,
    kernel: MoeKernel,
    tile_scale: f64,
    tokens: f64,
    touched_uniform: impl FnOnce() -> f64,
) -> f64 {
    let (e, k) = (model.routed_experts, model.experts_per_token);
    if kernel == MoeKernel::Unpadded || e <= 0.0 || k <= 0.0 || tokens <= 0.0 || model.routed_expert_bytes <= 0.0 {
        return 0.0;
    }
    let rows = tokens * k;
    let tile = kernel.tile_rows(tokens, rows / e) * tile_scale.max(0.0);
    let touched = e * touched_uniform();
    let padded = (rows + touched * tile / 2.0).max(touched * tile);
    (padded - rows).max(0.0) / k
}

/// Shares of a step's weight multiplies whose weights live in CPU memory: (routed-expert, dense). A routed
/// share follows the routing `step_reads` gives the spilled and pinned experts, so mass is conserved.
pub fn host_compute_shares(p: &Placement, spilled_routing_share: f64) -> (f64, f64) {
    let experts = p.expert_bytes();
    let routed = if experts > 0.0 {
        (spilled_routing_share.max(0.0) * p.expert_bytes_spilled + p.expert_bytes_pinned) / experts
    } else {
        0.0
    };
    let dense = p.dense_bytes_hbm + p.dense_bytes_spilled + p.dense_bytes_pinned;
    let dense_host = if dense > 0.0 { (p.dense_bytes_spilled + p.dense_bytes_pinned) / dense } else { 0.0 };
    (routed.clamp(0.0, 1.0), dense_host.clamp(0.0, 1.0))
}

/// Bytes one step reads from each tier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReads {
    pub hbm_bytes: f64,
    pub slow_bytes: f64,
    /// The share of experts uniform routing touches, when the reads already computed it (the MoE kernel's
    /// padding asks for it: `moe_padding_tokens`).
    pub touched_uniform: Option<f64>,
}

/// Weight, KV and pinned-table bytes a step with `tokens` tokens reads; `kv_read_bytes` is what its decoding
/// sequences' attention reads on this GPU. `spilled_routing_share` is how much routing the spilled experts get
/// relative to uniform (1.0); experts pinned by the deployment get uniform routing (the pin says how many, not
/// which); routing mass is conserved, so the experts left in HBM get the rest.
pub fn step_reads(
    model: &ModelSpec,
    p: &Placement,
    tokens: f64,
    kv_read_bytes: f64,
    spilled_routing_share: f64,
) -> StepReads {
    StepReader::new(model, p, spilled_routing_share).reads(tokens, kv_read_bytes)
}

/// `step_reads` for one placement and routing share, with what does not depend on the step computed once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReader {
    /// The dense bytes a step streams from HBM (all but the input embedding's table, of which it gathers rows).
    streamed_dense: f64,
    expert_bytes_hbm: f64,
    expert_bytes_spilled: f64,
    dense_bytes_spilled: f64,
    /// Pinned tables' bytes a token reads, and the ranks they are split over.
    pinned_read_bytes_per_token: f64,
    tp: f64,
    /// The pinned dense and expert bytes, where the deployment pins any.
    pinned: Option<(f64, f64)>,
    /// Touches of the experts in HBM, of the spilled ones, and under uniform routing, and which of the shares
    /// are the same (the same touches, computed once).
    hbm: ExpertTouch,
    spilled: ExpertTouch,
    uniform: ExpertTouch,
    spilled_as_hbm: bool,
    spilled_uniform: bool,
    hbm_uniform: bool,
}

impl StepReader {
    pub fn new(model: &ModelSpec, p: &Placement, spilled_routing_share: f64) -> Self {
        let experts = p.expert_bytes();
        let spilled_share = if experts > 0.0 { p.expert_bytes_spilled / experts } else { 0.0 };
        let pinned_share = if experts > 0.0 { p.expert_bytes_pinned / experts } else { 0.0 };
        let s = spilled_routing_share.max(0.0);
        // Shares of routing: s * f to the spilled fraction f, g to the pinned fraction g (uniform), the rest
        // (1 - s * f - g) to the experts in HBM (1 - f - g). Without a pin, g = 0 and this is exactly 1 - s * f
        // over 1 - f.
        let hbm_fraction = 1.0 - spilled_share - pinned_share;
        let hbm_share =
            if hbm_fraction > 0.0 { ((1.0 - s * spilled_share - pinned_share) / hbm_fraction).max(0.0) } else { 1.0 };
        let pinned = p.dense_bytes_pinned > 0.0 || p.expert_bytes_pinned > 0.0;
        StepReader {
            // The input embedding sits with the dense weights but a step gathers one row per token, not the table.
            streamed_dense: (p.dense_bytes_hbm - model.input_embedding_bytes / p.tp).max(0.0),
            expert_bytes_hbm: p.expert_bytes_hbm,
            expert_bytes_spilled: p.expert_bytes_spilled,
            dense_bytes_spilled: p.dense_bytes_spilled,
            pinned_read_bytes_per_token: model.pinned_read_bytes_per_token,
            tp: p.tp,
            pinned: pinned.then_some((p.dense_bytes_pinned, p.expert_bytes_pinned)),
            hbm: ExpertTouch::new(model, hbm_share),
            spilled: ExpertTouch::new(model, s),
            uniform: ExpertTouch::new(model, 1.0),
            spilled_as_hbm: s == hbm_share,
            spilled_uniform: s == 1.0,
            hbm_uniform: hbm_share == 1.0,
        }
    }

    /// The bytes a step with `tokens` tokens reads, `kv_read_bytes` of them KV.
    pub fn reads(&self, tokens: f64, kv_read_bytes: f64) -> StepReads {
        let touched = self.hbm.fraction(tokens);
        // Under uniform routing both shares are 1: the same touches, so reuse them (an `exp` per step saved).
        let touched_spilled = if self.spilled_as_hbm { touched } else { self.spilled.fraction(tokens) };
        let mut slow_bytes = self.dense_bytes_spilled
            + self.expert_bytes_spilled * touched_spilled
            + tokens * self.pinned_read_bytes_per_token / self.tp;
        if let Some((dense_pinned, experts_pinned)) = self.pinned {
            let touched_uniform = if self.spilled_uniform { touched_spilled } else { self.uniform.fraction(tokens) };
            slow_bytes += dense_pinned + experts_pinned * touched_uniform;
        }
        let touched_uniform =
            if self.hbm_uniform { Some(touched) } else { self.spilled_uniform.then_some(touched_spilled) };
        StepReads {
            hbm_bytes: self.streamed_dense + self.expert_bytes_hbm * touched + kv_read_bytes,
            slow_bytes,
            touched_uniform,
        }
    }

    /// The share of experts uniform routing touches in a step of `tokens` tokens.
    pub fn uniform_touch(&self, tokens: f64) -> f64 {
        self.uniform.fraction(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{AttentionSpec, HostPin};

    /// A 100 GB MoE model (80 GB of routed experts over 64 experts, top-4; 1 GB input embedding, 40 layers) on a
    /// GPU with `hbm` GB.
    fn case(hbm: f64) -> (ModelSpec, HardwareSpec) {
        let model = ModelSpec {
            id: "m".into(),
            name: "m".into(),
            weight_bytes: 100e9,
            routed_expert_bytes: 80e9,
            active_params: 10e9,
            prefill_active_share: 1.0,
            layers: 40.0,
            hidden_size: 4096.0,
            routed_experts: 64.0,
            experts_per_token: 4.0,
            compute_bits: 8.0,
            dense_compute_bits: 8.0,
            // None given: the experts store at their compute width.
            routed_expert_bits: 0.0,
            kv_bytes_per_token: 100e3,
            kv_split_under_tp: true,
            pinned_cpu_bytes: 0.0,
            pinned_read_bytes_per_token: 0.0,
            input_embedding_bytes: 1e9,
            draft_tokens: 0.0,
            draft_passes: 0.0,
            draft_pass_layers: 0.0,
            draft_acceptance: 0.0,
            draft_pass_bytes: 0.0,
            draft_expert_bytes: 0.0,
            attention: AttentionSpec::dense(40.0, 4096.0),
            host_pin: HostPin::default(),
        };
        let hw = HardwareSpec::one_gpu_for_tests(hbm * 1e9, 4e12);
        (model, hw)
    }

    fn pinned(mut m: ModelSpec, pin: HostPin) -> ModelSpec {
        m.host_pin = pin;
        m
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }

    /// One GPU's engine for `m` on `hw`, without links and drafts.
    fn lone_engine<'a>(
        m: &'a ModelSpec,
        hw: &'a HardwareSpec,
        k: &'a Coefficients,
    ) -> crate::model::batching::Engine<'a> {
        crate::model::batching::Engine {
            model: m,
            hw,
            k,
            placement: place(m, hw, 1.0, k),
            allreduce_bytes_per_sec: f64::INFINITY,
            allreduce_latency_s: 0.0,
            allreduce_measured: None,
            acceptance: 0.0,
            spilled_routing_share: 1.0,
            attention_padding: 1.0,
            limits: k.batch_limits(hw),
        }
    }

    #[test]
    fn sparse_mla_heads_pad_to_the_gpus_tile_and_attention_runs_at_its_kernels_rate() {
        use crate::model::batching::{StepLoad, ATTENTION_KERNEL_EFFICIENCY};
        let (mut m, hw) = case(200.0);
        // No sparse-MLA heads, or no tile: nothing is padded.
        assert_eq!(m.attention_head_padding(128.0, 2.0), 1.0);
        m.attention.sparse_mla_heads = 64.0;
        assert_eq!(m.attention_head_padding(0.0, 2.0), 1.0);
        // 64 heads on one Blackwell GPU compute as 128; split over two ranks, 32 each compute as 128; on Hopper
        // (64) one GPU is whole and two ranks compute 64 each; 256 heads on one GPU fill two tiles exactly.
        assert_eq!(m.attention_head_padding(128.0, 1.0), 2.0);
        assert_eq!(m.attention_head_padding(128.0, 2.0), 4.0);
        assert_eq!(m.attention_head_padding(64.0, 1.0), 1.0);
        assert_eq!(m.attention_head_padding(64.0, 2.0), 2.0);
        m.attention.sparse_mla_heads = 256.0;
        assert_eq!(m.attention_head_padding(128.0, 1.0), 1.0);
        // A step's attention FLOPs take the kernels' share of the BF16 peak times the padding, apart from the
        // GEMM efficiency: 1 PFLOP of attention on a 1 PFLOPS GPU padded twice takes 2 / 0.65 s.
        let k = Coefficients::default();
        let mut e = lone_engine(&m, &hw, &k);
        e.attention_padding = 2.0;
        let load = StepLoad { attention_flops: 1e15, ..StepLoad::default() };
        let t = e.step(&load).compute_s;
        assert!(close(t, 2.0 / ATTENTION_KERNEL_EFFICIENCY), "{t}");
    }

    #[test]
    fn every_tensor_parallel_rank_scores_with_the_whole_sparse_indexer() {
        use crate::model::batching::{StepLoad, ATTENTION_KERNEL_EFFICIENCY};
        let (mut m, hw) = case(200.0);
        m.attention.top_k = 2048.0;
        m.attention.indexer_flops_per_position_layer = 2.0 * 64.0 * 128.0;
        let k = Coefficients::default();
        // 32 sequences decoding at 8k context: the indexer scores all 8,192 positions of every layer.
        let mut load = StepLoad::default();
        load.add_decodes(&m, 32.0, 8192.0, 1.0);
        let indexer = 32.0 * 2.0 * 64.0 * 128.0 * m.attention.full_layers * 8192.0;
        assert!(close(load.indexer_flops, indexer), "{load:?}");
        assert!(load.attention_flops > load.indexer_flops);
        // Only the attention FLOPs, no weights: compare one rank with two, and two padded ranks.
        let attention_only = StepLoad { attention_flops: load.attention_flops, indexer_flops: indexer, ..load };
        let mut e = lone_engine(&m, &hw, &k);
        let rate = hw.flops_bf16 * ATTENTION_KERNEL_EFFICIENCY;
        let one = e.step(&StepLoad { decode_seqs: 0.0, ..attention_only }).compute_s;
        assert!(close(one, load.attention_flops / rate), "{one}");
        e.placement.tp = 2.0;
        let two = e.step(&StepLoad { decode_seqs: 0.0, ..attention_only }).compute_s;
        assert!(close(two, (load.attention_flops - indexer) / (2.0 * rate) + indexer / rate), "{two}");
        // Head padding stretches the attention kernels, not the indexer's.
        e.attention_padding = 4.0;
        let padded = e.step(&StepLoad { decode_seqs: 0.0, ..attention_only }).compute_s;
        assert!(close(padded, (load.attention_flops - indexer) * 2.0 / rate + indexer / rate), "{padded}");
        // Prefill: the chunk's indexer share at its mean context.
        let mut chunk = StepLoad::default();
        chunk.add_prefill(&m, 1.0, 0.0, 8192.0);
        assert!(close(chunk.indexer_flops, 8192.0 * 2.0 * 64.0 * 128.0 * m.attention.full_layers * 4096.0));
    }

    #[test]
    fn an_nvfp4_checkpoint_multiplies_its_dense_layers_at_their_own_rate() {
        use crate::model::batching::StepLoad;
        // 80 GB of FP4 experts (4.5 stored bits): 142.2B routed parameters, 4 of 64 per token = 8.9B of the 10B
        // active; the other 1.1B multiply at FP8 in the mixed checkpoint.
        let (mut m, mut hw) = case(200.0);
        m.compute_bits = 4.0;
        m.dense_compute_bits = 4.0;
        hw.flops_fp4 = 8e15;
        hw.flops_fp8 = 2e15;
        let routed = 80e9 * 8.0 / 4.5 * 4.0 / 64.0;
        assert!(close(m.routed_active_params(), routed), "{}", m.routed_active_params());
        let k = Coefficients::default();
        let compute = |m: &ModelSpec| {
            lone_engine(m, &hw, &k).step(&StepLoad { prefill_tokens: 4096.0, ..StepLoad::default() }).compute_s
        };
        let all_fp4 = compute(&m);
        assert!(close(all_fp4, 2.0 * 10e9 * 4096.0 / 8e15 / k.compute_efficiency), "{all_fp4}");
        m.dense_compute_bits = 8.0;
        let mixed = compute(&m);
        let want = 2.0 * 4096.0 * (routed / 8e15 + (10e9 - routed) / 2e15) / k.compute_efficiency;
        assert!(close(mixed, want), "{mixed} against {want}");
        assert!(mixed > all_fp4);
    }

    #[test]
    fn every_layer_pays_its_fixed_cost_once_a_step_whatever_the_batch() {
        use crate::model::batching::StepLoad;
        // 40 layers at 25 us: 1 ms a step on top of the step's own cost, the same at 1 and at 64 sequences; a
        // model twice as deep pays twice; an empty step pays nothing.
        let (mut m, hw) = case(200.0);
        let k = Coefficients { per_layer_overhead_s: 25e-6, ..Coefficients::default() };
        let none = Coefficients { per_layer_overhead_s: 0.0, ..k.clone() };
        let overhead = |m: &ModelSpec, k: &Coefficients, seqs: f64| {
            lone_engine(m, &hw, k).step(&StepLoad { decode_seqs: seqs, ..StepLoad::default() }).overhead_s
        };
        for seqs in [1.0, 64.0] {
            assert!(close(overhead(&m, &k, seqs) - overhead(&m, &none, seqs), 40.0 * 25e-6), "{seqs}");
        }
        assert_eq!(overhead(&m, &k, 0.0), 0.0);
        m.layers = 80.0;
        assert!(close(overhead(&m, &k, 1.0) - overhead(&m, &none, 1.0), 80.0 * 25e-6));
    }

    #[test]
    fn a_prompt_token_multiplies_only_the_prefill_share_of_the_active_parameters() {
        use crate::model::batching::StepLoad;
        // DeepSeek-V4.1-Flash's shape: 8B of 16B active per prefill token. Prefill compute halves, decode
        // compute stays, and the bytes a step reads do not move.
        let (mut m, hw) = case(200.0);
        let k = Coefficients::default();
        let prefill = StepLoad { prefill_tokens: 4096.0, ..StepLoad::default() };
        let decode = StepLoad { decode_seqs: 64.0, ..StepLoad::default() };
        let run = |m: &ModelSpec, load: &StepLoad| lone_engine(m, &hw, &k).step(load);
        let (whole_prefill, whole_decode) = (run(&m, &prefill), run(&m, &decode));
        m.prefill_active_share = 0.5;
        let (half_prefill, half_decode) = (run(&m, &prefill), run(&m, &decode));
        assert!(close(half_prefill.compute_s, 0.5 * whole_prefill.compute_s), "{half_prefill:?}");
        assert_eq!(half_prefill.hbm_s, whole_prefill.hbm_s);
        assert_eq!(half_decode, whole_decode);
    }

    #[test]
    fn a_drafters_attention_layer_reads_its_kv_at_each_sequences_context_every_pass() {
        use crate::model::batching::StepLoad;
        // An MTP layer of the main layers' geometry (2,500 B per position per layer), three draft tokens, 64
        // sequences: each pass reads the layer's KV of every position, so going from 1 to 8,192 positions adds
        // 3 x 64 x 2,500 B x 8,191 to the draft passes' reads; the pool holds 41 layers' KV per position.
        let (mut m, hw) = case(200.0);
        m.draft_tokens = 3.0;
        let k = Coefficients::default();
        let draft_s = |m: &ModelSpec, ctx: f64| {
            let mut load = StepLoad::default();
            load.add_decodes(m, 64.0, ctx, 4.0);
            lone_engine(m, &hw, &k).step(&load).overhead_s
        };
        let without = draft_s(&m, 8192.0) - draft_s(&m, 1.0);
        m.attention.draft_layers = 1.0;
        let with = draft_s(&m, 8192.0) - draft_s(&m, 1.0);
        let want = 3.0 * 64.0 * 2500.0 * 8191.0 / (k.hbm_efficiency * hw.hbm_bytes_per_sec);
        assert!(close(with - without, want), "{} against {want}", with - without);
        assert!(close(m.kv_bytes_held(100.0), 41.0 * 2500.0 * 100.0));
        // An EAGLE3 head's own dense attention of the same bytes per position reads and holds the same.
        m.attention.draft_layers = 0.0;
        m.attention.draft_own_kv_bytes = 2500.0;
        let own = draft_s(&m, 8192.0) - draft_s(&m, 1.0);
        assert!(close(own - without, want), "{} against {want}", own - without);
        assert!(close(m.kv_bytes_held(100.0), 41.0 * 2500.0 * 100.0));
    }

    #[test]
    fn a_block_drafter_pays_one_pass_for_its_whole_block() {
        use crate::model::batching::StepLoad;
        // Five drafted tokens: an MTP drafter runs five passes (`draft_passes` 0: one per token), a block drafter
        // (DSpark) one; what the step verifies is the same six tokens per sequence either way.
        let (mut m, hw) = case(200.0);
        let k = Coefficients::default();
        m.draft_tokens = 5.0;
        m.draft_pass_bytes = 2e9;
        let step = |m: &ModelSpec| {
            let mut load = StepLoad::default();
            load.add_decodes(m, 8.0, 1000.0, 6.0);
            lone_engine(m, &hw, &k).step(&load)
        };
        // A pass of a one-layer drafter: its reads and its layer's fixed cost.
        let pass = 2e9 / (k.hbm_efficiency * hw.hbm_bytes_per_sec) + k.per_layer_overhead_s;
        m.draft_passes = 0.0;
        let five = step(&m);
        m.draft_passes = 1.0;
        let one = step(&m);
        assert!(close(five.overhead_s - one.overhead_s, 4.0 * pass), "{five:?} {one:?}");
        assert_eq!((one.hbm_s, one.compute_s), (five.hbm_s, five.compute_s));
        // Fewer drafted tokens than the card's passes (an override): never more passes than tokens.
        m.draft_passes = 3.0;
        m.draft_tokens = 2.0;
        assert_eq!(m.draft_passes_per_step(), 2.0);
    }

    #[test]
    fn a_draft_pass_pays_the_per_layer_cost_of_each_of_its_layers() {
        use crate::model::batching::StepLoad;
        // No cost of its own: a draft pass's fixed cost is the engine's per-layer cost times the drafter's
        // layers, so a profile fitted on models that never draft still prices a drafter.
        let (mut m, hw) = case(200.0);
        let k = Coefficients { per_layer_overhead_s: 30e-6, ..Coefficients::default() };
        m.draft_tokens = 3.0;
        m.draft_pass_bytes = 1e9;
        let step = |m: &ModelSpec, k: &Coefficients| {
            let mut load = StepLoad::default();
            load.add_decodes(m, 16.0, 1000.0, 4.0);
            lone_engine(m, &hw, k).step(&load)
        };
        // Absent: one layer (an EAGLE3 head), or the drafter's attention layers (an MTP module's).
        assert_eq!(m.draft_pass_layer_count(), 1.0);
        m.attention.draft_layers = 2.0;
        assert_eq!(m.draft_pass_layer_count(), 2.0);
        m.attention.draft_layers = 0.0;
        let one = step(&m, &k);
        m.draft_pass_layers = 3.0;
        let three = step(&m, &k);
        // Three passes a step, two more layers each: 6 x 30 us.
        assert!(close(three.overhead_s - one.overhead_s, 6.0 * 30e-6), "{one:?} {three:?}");
        // Without a per-layer cost a draft pass is its reads alone.
        let free = Coefficients { per_layer_overhead_s: 0.0, ..k.clone() };
        let a = step(&m, &free);
        m.draft_tokens = 0.0;
        let plain = step(&m, &free);
        let reads = 3.0 * 1e9 / (free.hbm_efficiency * hw.hbm_bytes_per_sec);
        assert!(close(a.overhead_s - plain.overhead_s - 16.0 * free.spec_per_seq_overhead_s, reads), "{a:?} {plain:?}");
    }

    #[test]
    fn routed_parameters_come_from_the_experts_stored_width() {
        // 80 GB of experts, top-4 of 64: at 8 stored bits 80B parameters, 5B routed per token; stored as MXFP4
        // (4.25 bits) the same bytes hold 150.6B parameters, 9.4B per token, though they multiply at FP8.
        let (mut m, _) = case(200.0);
        assert!(close(m.routed_active_params(), 5e9));
        m.routed_expert_bits = 4.25;
        assert!(close(m.routed_active_params(), 80e9 * 8.0 / 4.25 * 4.0 / 64.0));
        // Never more than every active parameter; no stored width given: the compute width's (4.5 at 4 bits).
        m.routed_expert_bits = 1.0;
        assert_eq!(m.routed_active_params(), m.active_params);
        m.routed_expert_bits = 0.0;
        m.compute_bits = 4.0;
        assert!(close(m.routed_active_params(), 80e9 * 8.0 / 4.5 * 4.0 / 64.0));
    }

    #[test]
    fn weights_in_cpu_memory_keep_their_multiplies_off_the_hbm_roofline() {
        use crate::model::batching::StepLoad;
        let k = Coefficients::default();
        let step = |hbm: f64, load: &StepLoad| {
            let (m, hw) = case(hbm);
            lone_engine(&m, &hw, &k).step(load)
        };
        for tokens in [1.0, 64.0, 2048.0, 16384.0] {
            let load = StepLoad { prefill_tokens: tokens, ..StepLoad::default() };
            let mut last = 0.0;
            // Less HBM spills more experts: a step never gets faster, and never beats the per-step roofline.
            for hbm in [200.0, 110.0, 90.0, 70.0, 50.0] {
                let t = step(hbm, &load);
                let floor = (t.hbm_s + t.slow_s).max(t.compute_s) + t.overhead_s;
                assert!(t.total_s >= floor * (1.0 - 1e-12), "{tokens} tokens on {hbm} GB: {t:?}");
                assert!(t.total_s >= last * (1.0 - 1e-12), "{tokens} tokens on {hbm} GB: {} < {last}", t.total_s);
                last = t.total_s;
            }
        }
        // A compute-bound prefill with a few of its experts in CPU memory (100 GB of weights on 100 GB of HBM
        // offload 13.5 GB): their multiplies wait for the slow path's stream instead of hiding under the HBM
        // reads.
        let load = StepLoad { prefill_tokens: 16384.0, ..StepLoad::default() };
        let t = step(100.0, &load);
        assert!(t.compute_s > t.hbm_s + t.slow_s, "{t:?}");
        assert!(t.total_s > t.compute_s + t.overhead_s, "{t:?}");
    }

    #[test]
    fn weights_that_fit_the_memory_share_are_never_offloaded() {
        // 100 GB of weights; the report's profile keeps 8/252 for the runtime and, when it must offload, 34/252
        // free of weights. On 105 GB the weights fit the share (101.7 GB): nothing is offloaded and the pool
        // is what they leave, though that is less than an offloading deployment would keep.
        let k = Coefficients::default();
        let (m, hw) = case(105.0);
        let p = place(&m, &hw, 1.0, &k);
        assert_eq!(p.spilled_bytes(), 0.0, "{p:?}");
        assert!(close(p.kv_pool_bytes, 105e9 * (1.0 - 8.0 / 252.0) - 100e9), "{p:?}");
        assert!(p.fits);
        // On 100 GB they do not fit the share (96.8 GB): the deployment offloads down to 218/252 of memory.
        let (m, hw) = case(100.0);
        let p = place(&m, &hw, 1.0, &k);
        assert!(close(p.spilled_bytes(), 100e9 - 100e9 * 218.0 / 252.0), "{p:?}");
        assert!(close(p.kv_pool_bytes, 100e9 * 26.0 / 252.0), "{p:?}");
        // A profile that reserves less than its runtime takes still offloads at least what the share forces out.
        let lean =
            Coefficients { hbm_reserve_fraction: 0.01, runtime_reserve_fraction: 0.1, ..Coefficients::default() };
        assert!(close(offloaded_bytes(100e9, 0.0, 100e9, &lean), 10e9));
        // A deployment that must offload counts its pin: a pin below the reserve's need changes nothing, a
        // larger one offloads only itself.
        let k0 = Coefficients::default();
        let need = 100e9 - 100e9 * 218.0 / 252.0;
        assert!(close(offloaded_bytes(100e9, 5e9, 100e9, &k0) + 5e9, need));
        assert_eq!(offloaded_bytes(100e9, need + 1e9, 100e9, &k0), 0.0);
        // Where the pool is a share of what the weights leave (TensorRT-LLM), every byte of memory is the share.
        let trt = Coefficients { kv_free_memory_fraction: 0.9, ..Coefficients::default() };
        assert_eq!(offloaded_bytes(99e9, 0.0, 100e9, &trt), 0.0);
    }

    #[test]
    fn a_byte_pin_frees_hbm_for_the_kv_pool() {
        let (m, hw) = case(200.0);
        let k = Coefficients::default();
        let base = place(&m, &hw, 1.0, &k);
        assert_eq!((base.pinned_bytes(), base.spilled_bytes()), (0.0, 0.0));
        let pm = pinned(m, HostPin { bytes: 20e9, ..HostPin::default() });
        let p = place(&pm, &hw, 1.0, &k);
        assert!(close(p.pinned_bytes(), 20e9), "{p:?}");
        assert!(close(base.hbm_weight_bytes() - p.hbm_weight_bytes(), 20e9));
        assert!(close(p.kv_pool_bytes - base.kv_pool_bytes, 20e9));
        assert_eq!(p.spilled_bytes(), 0.0);
        // Whole layers in order: the slice keeps the layers' dense-to-expert ratio (99 GB of layers, 80 of experts).
        assert!(close(p.expert_bytes_pinned, 20e9 * 80.0 / 99.0), "{}", p.expert_bytes_pinned);
        assert!(p.fits);
        // The pinned bytes are read over the slow path; a one-token step touches 4 of 64 experts there.
        let r = step_reads(&pm, &p, 1.0, 0.0, 1.0);
        assert!(close(r.slow_bytes, p.dense_bytes_pinned + p.expert_bytes_pinned * 4.0 / 64.0), "{r:?}");
    }

    #[test]
    fn a_share_of_free_memory_sizes_the_pool_from_what_the_weights_leave() {
        // 100 GB of weights on 200 GB: vLLM's rule gives weights and KV 90% of all memory (80 GB of KV);
        // TensorRT-LLM's gives KV 90% of the 100 GB the weights leave (90 GB).
        let (m, hw) = case(200.0);
        let vllm = Coefficients { runtime_reserve_fraction: 0.1, ..Coefficients::default() };
        let trt = Coefficients { kv_free_memory_fraction: 0.9, ..vllm.clone() };
        let (a, b) = (place(&m, &hw, 1.0, &vllm), place(&m, &hw, 1.0, &trt));
        assert!(close(a.hbm_weight_bytes(), b.hbm_weight_bytes()));
        assert!(close(a.kv_pool_bytes, 0.9 * 200e9 - a.hbm_weight_bytes()), "{a:?}");
        assert!(close(b.kv_pool_bytes, 0.9 * (200e9 - b.hbm_weight_bytes())), "{b:?}");
        assert!(b.kv_pool_bytes > a.kv_pool_bytes);
        // The share is of free memory: above 1 is refused, by name.
        let err = Coefficients::default().set_named("kv_free_memory_fraction", 1.5).unwrap_err();
        assert!(err.contains("kv_free_memory_fraction") && err.contains("from 0 to 1,"), "{err}");
    }

    #[test]
    fn a_pin_smaller_than_the_spill_changes_nothing_but_which_bytes_are_where() {
        // 100 GB on 80 GB of HBM spills; a 5 GB pin is inside the overflow, so HBM weights and the pool stay.
        let (m, hw) = case(80.0);
        let k = Coefficients::default();
        let base = place(&m, &hw, 1.0, &k);
        assert!(base.spilled_bytes() > 5e9);
        let p = place(&pinned(m, HostPin { bytes: 5e9, ..HostPin::default() }), &hw, 1.0, &k);
        assert!(close(p.hbm_weight_bytes(), base.hbm_weight_bytes()));
        assert!(close(p.kv_pool_bytes, base.kv_pool_bytes));
        assert!(close(p.host_weight_bytes(), base.host_weight_bytes()));
    }

    #[test]
    fn experts_and_layers_pin_what_they_name() {
        let (m, hw) = case(200.0);
        let k = Coefficients::default();
        let p = place(&pinned(m.clone(), HostPin { experts: 16.0, ..HostPin::default() }), &hw, 1.0, &k);
        assert!(close(p.expert_bytes_pinned, 80e9 / 4.0) && p.dense_bytes_pinned == 0.0, "{p:?}");
        let p = place(&pinned(m.clone(), HostPin { layers: 10.0, ..HostPin::default() }), &hw, 1.0, &k);
        assert!(close(p.expert_bytes_pinned, 20e9) && close(p.dense_bytes_pinned, 19e9 / 4.0), "{p:?}");
        // Every layer: all but the input embedding; more than every layer is still every layer.
        let p = place(&pinned(m.clone(), HostPin { layers: 99.0, experts: 5.0, ..HostPin::default() }), &hw, 1.0, &k);
        assert!(close(p.hbm_weight_bytes(), 1e9) && close(p.pinned_bytes(), 99e9), "{p:?}");
        // Under TP2 each GPU pins its half of the same layers.
        let p2 = place(&pinned(m, HostPin { layers: 10.0, ..HostPin::default() }), &hw, 2.0, &k);
        assert!(close(p2.pinned_bytes(), (20e9 + 19e9 / 4.0) / 2.0), "{p2:?}");
    }

    #[test]
    fn pinned_experts_keep_routing_mass() {
        // Uniform routing everywhere: pinning experts moves reads to the slow path without adding any.
        let (m, hw) = case(200.0);
        let k = Coefficients::default();
        let base = place(&m, &hw, 1.0, &k);
        let pm = pinned(m.clone(), HostPin { experts: 24.0, ..HostPin::default() });
        let p = place(&pm, &hw, 1.0, &k);
        for tokens in [1.0, 8.0, 64.0] {
            let a = step_reads(&m, &base, tokens, 0.0, 1.0);
            let b = step_reads(&pm, &p, tokens, 0.0, 1.0);
            assert!(close(a.hbm_bytes + a.slow_bytes, b.hbm_bytes + b.slow_bytes), "{tokens}: {a:?} {b:?}");
            assert!(b.slow_bytes > 0.0 && a.slow_bytes == 0.0);
        }
    }

    #[test]
    fn a_pin_on_a_full_host_does_not_fit() {
        let (m, mut hw) = case(200.0);
        hw.cpu_memory_bytes = 10e9;
        let p = place(&pinned(m, HostPin { bytes: 30e9, ..HostPin::default() }), &hw, 1.0, &Coefficients::default());
        assert!(!p.fits && close(p.missing_bytes, 20e9), "{p:?}");
    }

    #[test]
    fn each_moe_kernel_sizes_its_tile_as_its_source_does() {
        use MoeKernel::*;
        // vLLM's Triton default config: by the tokens in the batch.
        let triton: Vec<f64> =
            [1.0, 32.0, 33.0, 96.0, 97.0, 512.0, 513.0].map(|t| TritonFusedMoe.tile_rows(t, 0.0)).into();
        assert_eq!(triton, [16.0, 16.0, 32.0, 32.0, 64.0, 64.0, 128.0]);
        // Marlin: the first of 8, 16, 32, 48 with tokens per expert below 0.9 of it, else 64.
        let marlin: Vec<f64> = [0.5, 7.1, 7.3, 14.5, 28.7, 43.1, 43.3].map(|n| Marlin.tile_rows(0.0, n)).into();
        assert_eq!(marlin, [8.0, 8.0, 16.0, 32.0, 32.0, 48.0, 64.0]);
        // TRT-LLM-gen: the integer tokens per expert up to a power of two, within 8-64.
        let trtllm: Vec<f64> = [0.3, 8.0, 9.0, 16.9, 33.0, 500.0].map(|n| FlashinferTrtllmGen.tile_rows(0.0, n)).into();
        assert_eq!(trtllm, [8.0, 8.0, 16.0, 16.0, 64.0, 64.0]);
        assert_eq!([63.0, 64.0].map(|t| FlashinferCutlassSm12x.tile_rows(t, 0.0)), [64.0, 128.0]);
        assert_eq!([1.0, 1e5].map(|t| VllmCutlassSm100.tile_rows(t, t)), [128.0, 128.0]);
        assert_eq!(Unpadded.tile_rows(1.0, 1.0), 0.0);
    }

    #[test]
    fn a_touched_expert_pays_a_whole_tile_and_a_dense_model_pays_none() {
        // 64 experts, top-4: one decoding token touches 4 experts, each padded to a 16-row tile.
        let (m, hw) = case(200.0);
        assert_eq!(moe_padding_tokens(&m, MoeKernel::Unpadded, 1.0, 1.0, || expert_touch_fraction(&m, 1.0, 1.0)), 0.0);
        assert!(close(
            moe_padding_tokens(&m, MoeKernel::TritonFusedMoe, 1.0, 1.0, || expert_touch_fraction(&m, 1.0, 1.0)),
            (4.0 * 16.0 - 4.0) / 4.0
        ));
        // Many tokens per expert: half a tile per touched expert on average (8192 tokens: 512 per expert).
        let many =
            moe_padding_tokens(&m, MoeKernel::TritonFusedMoe, 1.0, 8192.0, || expert_touch_fraction(&m, 8192.0, 1.0));
        assert!(close(many, 64.0 * 128.0 / 2.0 / 4.0), "{many}");
        // A model without routed experts has nothing to pad.
        let mut dense = m.clone();
        dense.routed_experts = 0.0;
        assert_eq!(
            moe_padding_tokens(&dense, MoeKernel::VllmCutlassSm100, 1.0, 64.0, || expert_touch_fraction(
                &dense, 64.0, 1.0
            )),
            0.0
        );
        // In a step, the padding is routed multiplies: compute grows, the bytes read do not.
        use crate::model::batching::StepLoad;
        let unpadded = Coefficients::default();
        let padded = Coefficients { moe_kernel: MoeKernel::VllmCutlassSm100, ..Coefficients::default() };
        let load = StepLoad { decode_seqs: 16.0, ..StepLoad::default() };
        let (a, b) = (lone_engine(&m, &hw, &unpadded).step(&load), lone_engine(&m, &hw, &padded).step(&load));
        assert_eq!(a.hbm_s, b.hbm_s);
        let e = lone_engine(&m, &hw, &padded);
        let (routed_s, _) = e.weight_seconds_per_token();
        let extra = routed_s
            * moe_padding_tokens(&m, MoeKernel::VllmCutlassSm100, 1.0, 16.0, || expert_touch_fraction(&m, 16.0, 1.0))
            / padded.compute_efficiency;
        assert!(extra > 0.0 && close(b.compute_s - a.compute_s, extra), "{a:?} {b:?}");
    }
}

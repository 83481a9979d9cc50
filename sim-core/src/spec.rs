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
    /// Query heads a sparse-MLA attention kernel computes together on this GPU: a rank's heads are padded up to
    /// a multiple of it (`ModelSpec::attention_head_padding`). 0: no padding.
    pub sparse_attention_head_tile: f64,
    pub link: LinkParams,
}

#[cfg(test)]
impl HardwareSpec {
    /// A one-GPU machine for unit tests: `gpu_memory_bytes` of HBM at `hbm_bytes_per_sec`, 1 TB of CPU memory
    /// behind a 54 GB/s slow path, one 50 GB/s link.
    pub(crate) fn one_gpu_for_tests(gpu_memory_bytes: f64, hbm_bytes_per_sec: f64) -> Self {
        HardwareSpec {
            id: "h".into(),
            name: "h".into(),
            gpus: 1.0,
            gpu_memory_bytes,
            hbm_bytes_per_sec,
            cpu_memory_bytes: 1e12,
            slow_path_bytes_per_sec: 54e9,
            flops_fp4: 2e15,
            flops_fp8: 2e15,
            flops_bf16: 1e15,
            intra_bytes_per_sec: f64::INFINITY,
            intra_call_latency_s: 10e-6,
            sparse_attention_head_tile: 0.0,
            link: LinkParams {
                rails: 1.0,
                line_rate_bytes_per_sec_per_rail: 50e9,
                payload_efficiency: 0.98,
                call_latency_s: 35e-6,
                all_reduce: AllReduceCurve::default(),
            },
        }
    }
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
    /// Measured time of one all-reduce across the link against its message size; empty where none is
    /// published, and the physics (call latency + bytes over the payload bandwidth) stands in.
    #[serde(skip_serializing_if = "AllReduceCurve::is_empty")]
    pub all_reduce: AllReduceCurve,
}

/// A measured all-reduce sweep between two machines: (message bytes, seconds per call), sizes strictly
/// increasing (validation refuses anything else in a dataset file; `new` keeps only such points).
///
/// Why a table and not latency + bytes / bandwidth: where NCCL cannot use GPUDirect RDMA (GB10) it stages every
/// message through host buffers, and time then grows with size in steps no line rate and call latency describe
/// (two DGX Sparks: 64 KB at 0.5 GB/s, 16 MB at 3-5 GB/s of a 25 GB/s link).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AllReduceCurve(Vec<(f64, f64)>);

impl AllReduceCurve {
    /// The curve through `points` (bytes, seconds), keeping only finite positive points whose size is above the
    /// previous kept one.
    pub fn new(points: impl IntoIterator<Item = (f64, f64)>) -> Self {
        let mut kept: Vec<(f64, f64)> = Vec::new();
        for (b, t) in points {
            let ok = b.is_finite() && t.is_finite() && b > 0.0 && t > 0.0;
            if ok && kept.last().is_none_or(|&(last, _)| b > last) {
                kept.push((b, t));
            }
        }
        AllReduceCurve(kept)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The measured points, (bytes, seconds).
    pub fn points(&self) -> &[(f64, f64)] {
        &self.0
    }

    /// The smallest measured call's time: what every call costs at least (the call's fixed cost).
    pub fn floor_s(&self) -> f64 {
        self.0.first().map_or(0.0, |&(_, t)| t)
    }

    /// Seconds for one all-reduce of `bytes`: linear between measured sizes, the smallest size's time below it
    /// (a smaller call is not measured faster), and beyond the largest size that size's time plus the rest at
    /// its bandwidth (the sweep's last algorithm bandwidth). 0 for an empty curve.
    pub fn seconds(&self, bytes: f64) -> f64 {
        let p = &self.0;
        let Some(&(b0, t0)) = p.first() else { return 0.0 };
        if bytes <= b0 {
            return t0;
        }
        let i = p.partition_point(|&(b, _)| b < bytes);
        if i == p.len() {
            let (bl, tl) = p[p.len() - 1];
            return tl + (bytes - bl) * tl / bl;
        }
        let ((ba, ta), (bb, tb)) = (p[i - 1], p[i]);
        ta + (tb - ta) * (bytes - ba) / (bb - ba)
    }
}

impl LinkParams {
    /// One-way payload bandwidth over all rails: the ceiling every transfer and collective sits under.
    pub fn payload_bytes_per_sec(&self) -> f64 {
        self.rails * self.line_rate_bytes_per_sec_per_rail * self.payload_efficiency
    }
}

/// MLA's per-head key (non-rotary part) and value dimensions in prefill, where the card does not say (assumed:
/// DeepSeek-V3's config.json, `qk_nope_head_dim` 128 and `v_head_dim` 128, which later MLA models kept).
pub const MLA_NOPE_HEAD_DIM: f64 = 128.0;
pub const MLA_V_HEAD_DIM: f64 = 128.0;

/// A model in SI units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSpec {
    pub id: String,
    pub name: String,
    pub weight_bytes: f64,
    pub routed_expert_bytes: f64,
    pub active_params: f64,
    /// Share of `active_params` a prompt token multiplies by (1 unless the model publishes fewer parameters per
    /// prefill token than per decode token).
    pub prefill_active_share: f64,
    pub layers: f64,
    pub hidden_size: f64,
    pub routed_experts: f64,
    pub experts_per_token: f64,
    /// Precision of the routed experts' multiplies (a 4-bit format computes at FP4, 8 bits at FP8, wider at BF16).
    pub compute_bits: f64,
    /// Precision of every other linear layer (attention projections, shared experts, dense layers, LM head):
    /// an NVFP4 checkpoint quantises only its routed experts.
    pub dense_compute_bits: f64,
    /// Stored bits per routed-expert parameter (block scales included): `routed_expert_bytes` over it is the
    /// experts' parameter count. MXFP4 experts multiplied at FP8 (GPT-OSS) store 4.25, not 8. 0: not given,
    /// the storage of `compute_bits` (`expert_storage_bits`, the one place that default is decided).
    pub routed_expert_bits: f64,
    pub kv_bytes_per_token: f64,
    /// GQA splits KV across tensor-parallel ranks; MLA replicates it.
    pub kv_split_under_tp: bool,
    pub pinned_cpu_bytes: f64,
    pub pinned_read_bytes_per_token: f64,
    /// Bytes of the input embedding table, resident with the dense weights but gathered, not streamed.
    pub input_embedding_bytes: f64,
    pub draft_tokens: f64,
    /// Drafter passes per step where the drafter proposes its block in fewer passes than it drafts tokens
    /// (DeepSeek V4.1 Flash's DSpark: 1); 0: one pass per drafted token, as MTP and EAGLE3 run
    /// (`draft_passes_per_step`), so an override of `draft_tokens` keeps such a drafter's passes with it.
    pub draft_passes: f64,
    /// Decoder layers one draft pass runs, each paying the engine's fixed per-layer cost; 0: the drafter's
    /// attention layers where it has any, else one (`draft_pass_layer_count`).
    pub draft_pass_layers: f64,
    /// Per-token draft acceptance, 0..1 (prior; the fit may replace it).
    pub draft_acceptance: f64,
    pub draft_pass_bytes: f64,
    /// Routed-expert bytes of the draft's own MoE layer (an MTP layer), read with the same distinct-expert
    /// formula as the main pass at the draft's token count; 0 for a dense drafter (EAGLE3) or none.
    pub draft_expert_bytes: f64,
    /// How attention reads KV and spends FLOPs per cached position (per architecture).
    pub attention: AttentionSpec,
    /// Weights the deployment pins to host memory (a scenario's `placement.*` overrides); none by default.
    #[serde(skip_serializing_if = "HostPin::is_none")]
    pub host_pin: HostPin,
}

/// Weights a deployment pins to CPU (host) memory whether or not they would fit in HBM, like vLLM's
/// `--cpu-offload-gb`: they are read over the slow path every step, and the HBM they free goes to the KV pool
/// (within the engine's memory share). The three ways to say how much add up; each is per GPU of the engine.
///
/// ```text
///   bytes:   whole layers in order, as vLLM offloads them (a slice of every layer kind, embedding excluded)
///   layers:  that many whole layers (their dense and routed-expert weights)
///   experts: that many routed experts of every MoE layer not already pinned (uniform routing: the pin says
///            how many, not which)
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HostPin {
    /// Bytes per GPU (vLLM's `--cpu-offload-gb`, in bytes).
    pub bytes: f64,
    /// Whole layers.
    pub layers: f64,
    /// Routed experts per MoE layer.
    pub experts: f64,
}

impl HostPin {
    pub fn is_none(&self) -> bool {
        self.bytes == 0.0 && self.layers == 0.0 && self.experts == 0.0
    }
}

/// The measures of a decoding sequence's context that every per-position cost is linear in (`AttentionSpec`'s
/// `*_of` functions), summed over sequences: a step's decode load is those functions of the sum, computed once,
/// rather than their sum over every sequence (the serving loop's per-cohort cost).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ContextMeasures {
    /// Sequences summed (each costs the constant terms once).
    pub seqs: f64,
    /// Cached positions.
    pub ctx: f64,
    /// Positions a full layer reads (the top-k under sparse attention), a window layer's, and the local window's.
    pub full: f64,
    pub window: f64,
    pub local: f64,
}

impl ContextMeasures {
    /// Adds `count` sequences measuring `x` each.
    #[inline(always)]
    pub fn add(&mut self, count: f64, x: &ContextMeasures) {
        self.seqs += count * x.seqs;
        self.ctx += count * x.ctx;
        self.full += count * x.full;
        self.window += count * x.window;
        self.local += count * x.local;
    }

    /// This line's value at the measures `x`: the sum of each coefficient times its measure.
    #[inline(always)]
    pub fn of(&self, x: &ContextMeasures) -> f64 {
        self.seqs * x.seqs + self.ctx * x.ctx + self.full * x.full + self.window * x.window + self.local * x.local
    }

    /// This line with every coefficient times `k`.
    pub fn scaled(&self, k: f64) -> ContextMeasures {
        ContextMeasures {
            seqs: self.seqs * k,
            ctx: self.ctx * k,
            full: self.full * k,
            window: self.window * k,
            local: self.local * k,
        }
    }
}

/// Attention geometry summed into what one query token costs per cached position, per layer kind.
///
/// ```text
///   full layers:    attend to every position (or to the top-k of them under sparse attention)
///   window layers:  attend to the last `window` positions
///   sparse indexer: scores every position on full layers, then attention reads only the top-k
///   linear layers:  keep a recurrent state of fixed size per sequence (Kimi Delta Attention, Gated
///                   DeltaNet), read and written every step; no KV that grows
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttentionSpec {
    /// Layers attending to the whole context (or its top-k).
    pub full_layers: f64,
    /// Layers with a sliding window.
    pub window_layers: f64,
    /// A window layer's KV bytes and attention FLOPs per position over a full layer's: 1 where every layer has
    /// the same geometry (GPT-OSS, MiniMax-M3's dense layers); Gemma 4's sliding layers keep 8 KV heads of 256
    /// where its full (global) layers keep 2 of 512 (KV 2, FLOPs 0.5: the queries' head dimension halves).
    pub window_kv_scale: f64,
    pub window_flops_scale: f64,
    /// Sliding window, tokens (infinite when no layer has one).
    pub window: f64,
    /// Positions sparse attention reads per query on full layers (infinite for dense attention).
    pub top_k: f64,
    /// Attention FLOPs per query token per attended position per layer (QK and AV) while decoding.
    pub flops_per_position_layer: f64,
    /// The same in prefill: MLA prefills in its uncompressed form (per-head keys and values), which costs
    /// fewer FLOPs per position than the absorbed form decode uses; sparse MLA prefills in the absorbed form.
    pub prefill_flops_per_position_layer: f64,
    /// Query heads of a sparse-MLA attention (DeepSeek Sparse Attention over an MLA latent), which a kernel runs
    /// in its absorbed multi-query form with the heads of each rank padded to the GPU's head tile; 0 for any
    /// other attention.
    pub sparse_mla_heads: f64,
    /// Sparse indexer FLOPs and key bytes per query token per position per full layer (0 without one).
    pub indexer_flops_per_position_layer: f64,
    pub indexer_bytes_per_position_layer: f64,
    /// Linear-attention layers and the recurrent state each keeps per sequence, bytes (whole model, before a
    /// tensor-parallel split).
    pub linear_layers: f64,
    pub linear_state_bytes: f64,
    /// Attention layers of a full layer's geometry the drafter runs once per draft pass (an MTP module: one),
    /// each keeping its own KV of every position beside the main layers'; 0 without such a drafter.
    pub draft_layers: f64,
    /// KV bytes per position of a drafter with its own dense attention over the whole context (an EAGLE3 head),
    /// held in the pool and read by every draft pass; its attention FLOPs per position are taken as these bytes
    /// (MHA in BF16: 4 x heads x head_dim of each). 0 without such a drafter.
    pub draft_own_kv_bytes: f64,
    /// Positions every full layer also keeps uncompressed beside its compressed or sparse global KV (DeepSeek
    /// V4's local window), and their bytes per position over all those layers: each query reads and attends to
    /// them on top of its global positions. `local_kv_bytes` 0: none.
    pub local_window: f64,
    pub local_kv_bytes: f64,
}

impl AttentionSpec {
    /// The shortcut used when a card gives no head geometry: `4 x hidden` FLOPs per position per layer, every
    /// layer full.
    pub fn dense(layers: f64, hidden: f64) -> Self {
        AttentionSpec {
            full_layers: layers,
            window_layers: 0.0,
            window_kv_scale: 1.0,
            window_flops_scale: 1.0,
            window: f64::INFINITY,
            top_k: f64::INFINITY,
            flops_per_position_layer: 4.0 * hidden,
            prefill_flops_per_position_layer: 4.0 * hidden,
            sparse_mla_heads: 0.0,
            indexer_flops_per_position_layer: 0.0,
            indexer_bytes_per_position_layer: 0.0,
            linear_layers: 0.0,
            linear_state_bytes: 0.0,
            draft_layers: 0.0,
            draft_own_kv_bytes: 0.0,
            local_window: 0.0,
            local_kv_bytes: 0.0,
        }
    }

    /// Marks this attention as sparse MLA with `heads` query heads, which vLLM's FlashMLA sparse backend runs in
    /// the absorbed multi-query form (576/512 per head for a 512 + 64 latent) in prefill as in decode ("the
    /// kernels want to use MQA 576/512 approach for both prefill and decode",
    /// vllm/v1/attention/backends/mla/flashmla_sparse.py, reported elsewhere), padding each rank's heads.
    pub fn run_as_sparse_mla(&mut self, heads: f64) {
        self.prefill_flops_per_position_layer = self.flops_per_position_layer;
        self.sparse_mla_heads = heads;
    }

    /// Positions of the local window a query at context `ctx` reads (0 without one).
    fn local_positions(&self, ctx: f64) -> f64 {
        if self.local_kv_bytes > 0.0 {
            ctx.min(self.local_window).max(0.0)
        } else {
            0.0
        }
    }

    /// Recurrent state one sequence keeps in the linear-attention layers, bytes.
    pub fn state_bytes(&self) -> f64 {
        self.linear_layers * self.linear_state_bytes
    }

    /// Positions one query attends to on each layer kind at context `ctx`: (full or top-k, window).
    fn positions(&self, ctx: f64) -> (f64, f64) {
        (ctx.min(self.top_k), ctx.min(self.window))
    }

    /// What every per-position cost of a decoding sequence at context `ctx` is linear in (`ContextMeasures`).
    #[inline(always)]
    pub fn context_measures(&self, ctx: f64) -> ContextMeasures {
        let (full, window) = self.positions(ctx);
        ContextMeasures { seqs: 1.0, ctx, full, window, local: self.local_positions(ctx) }
    }

    /// How `context_measures` grows per token of context from `ctx` on, and the context up to which it grows
    /// so (the next of the top-k, the window and the local window above `ctx`; infinite past them all): every
    /// measure is the context capped at a breakpoint, so between breakpoints `context_measures(ctx + t)` is
    /// `context_measures(ctx)` plus `t` times the rate. The serving loop steps decoding sequences on these lines
    /// without measuring each.
    pub fn context_measures_rate(&self, ctx: f64) -> (ContextMeasures, f64) {
        let below = |cap: f64| if ctx < cap { (1.0, cap) } else { (0.0, f64::INFINITY) };
        let (full, full_until) = below(self.top_k);
        let (window, window_until) = below(self.window);
        let (local, local_until) =
            if self.local_kv_bytes > 0.0 { below(self.local_window) } else { (0.0, f64::INFINITY) };
        let rate = ContextMeasures { seqs: 0.0, ctx: 1.0, full, window, local };
        (rate, full_until.min(window_until).min(local_until))
    }

    /// KV bytes one decoding sequence reads per step at context `ctx` (the verified draft tokens share the
    /// read), given the KV bytes per position of one layer; the linear layers' state is `decode_state_bytes`.
    pub fn decode_kv_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.decode_kv_bytes_of(kv_per_layer, &self.context_measures(ctx))
    }

    /// `decode_kv_bytes` of the sequences `x` sums.
    pub fn decode_kv_bytes_of(&self, kv_per_layer: f64, x: &ContextMeasures) -> f64 {
        kv_per_layer * (self.full_layers * x.full + self.window_layers * self.window_kv_scale * x.window)
            + self.indexer_bytes_per_position_layer * self.full_layers * x.ctx
            + self.local_kv_bytes * x.local
    }

    /// KV bytes one sequence's draft pass reads at context `ctx`: the drafter's own layers attend like a full
    /// layer (the top-k positions, the indexer's keys of all of them).
    pub fn draft_pass_kv_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.draft_pass_kv_bytes_of(kv_per_layer, &self.context_measures(ctx))
    }

    /// `draft_pass_kv_bytes` of the sequences `x` sums.
    pub fn draft_pass_kv_bytes_of(&self, kv_per_layer: f64, x: &ContextMeasures) -> f64 {
        self.draft_layers * (kv_per_layer * x.full + self.indexer_bytes_per_position_layer * x.ctx)
            + self.draft_own_kv_bytes * x.ctx
    }

    /// Attention FLOPs of one sequence's draft pass at context `ctx` (one query token per drafter layer).
    pub fn draft_pass_flops(&self, ctx: f64) -> f64 {
        self.draft_pass_flops_of(&self.context_measures(ctx))
    }

    /// `draft_pass_flops` of the sequences `x` sums.
    pub fn draft_pass_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.draft_layers * (self.flops_per_position_layer * x.full + self.indexer_flops_per_position_layer * x.ctx)
            + self.draft_own_kv_bytes * x.ctx
    }

    /// Bytes of linear-layer state one decoding sequence moves in a step that verifies `per_seq` tokens: the
    /// running state read once, and the state after each verified token written to a slot of its own (vLLM's
    /// recurrent kernel, `fused_recurrent_gated_delta_rule_fwd_kernel` in
    /// vllm/model_executor/layers/fla/ops/fused_recurrent.py, shared by gated DeltaNet and KDA: "keep the
    /// states for multi-query tokens", one store per token; so a step without drafts reads it and writes it back).
    pub fn decode_state_bytes(&self, per_seq: f64) -> f64 {
        (1.0 + per_seq.max(1.0)) * self.state_bytes()
    }

    /// Attention FLOPs of one query token at context `ctx`. A linear layer's FP32 state of E elements costs about
    /// 4E FLOPs per token (decay, the delta rule's outer-product update, the read-out): one FLOP per state byte.
    pub fn query_flops(&self, ctx: f64) -> f64 {
        self.query_flops_of(&self.context_measures(ctx))
    }

    /// `query_flops` of one query token of each of the sequences `x` sums.
    pub fn query_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.flops_per_position_layer
            * (self.full_layers * (x.full + x.local) + self.window_layers * self.window_flops_scale * x.window)
            + self.indexer_query_flops_of(x)
            + x.seqs * self.state_bytes()
    }

    /// The sparse indexer's share of `query_flops` at context `ctx`: it scores every cached position of every full
    /// layer with all of its heads.
    pub fn indexer_query_flops(&self, ctx: f64) -> f64 {
        self.indexer_flops_per_position_layer * self.full_layers * ctx
    }

    /// `indexer_query_flops` of the sequences `x` sums.
    pub fn indexer_query_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.indexer_query_flops(x.ctx)
    }

    /// The sparse indexer's share of `prefill_flops` (the chunk's mean context, as there).
    pub fn indexer_prefill_flops(&self, offset: f64, n: f64) -> f64 {
        n * self.indexer_query_flops(offset + n / 2.0)
    }

    /// The sparse indexer's share of `draft_pass_flops`.
    pub fn indexer_draft_pass_flops(&self, ctx: f64) -> f64 {
        self.draft_layers * self.indexer_flops_per_position_layer * ctx
    }

    /// `indexer_draft_pass_flops` of the sequences `x` sums.
    pub fn indexer_draft_pass_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.indexer_draft_pass_flops(x.ctx)
    }

    /// Attention FLOPs of a prefill chunk of `n` tokens following `offset` computed ones (causal: the i-th token
    /// attends to offset + i positions; sums by the chunk's mean context, exact below the caps).
    pub fn prefill_flops(&self, offset: f64, n: f64) -> f64 {
        let ctx = offset + n / 2.0;
        let (full, win) = self.positions(ctx);
        let local = self.local_positions(ctx);
        n * (self.prefill_flops_per_position_layer
            * (self.full_layers * (full + local) + self.window_layers * self.window_flops_scale * win)
            + self.indexer_query_flops(ctx)
            + self.state_bytes())
    }

    /// KV bytes one sequence holds at context `ctx` (window layers keep only their window). A sparse indexer's
    /// keys are cached beside the latent for every position of every full layer (the indexer scores them all
    /// each step, `decode_kv_bytes`), so they take pool space too: what a step reads per position is what the
    /// pool holds per position.
    /// A sequence with any context also holds its linear layers' state.
    pub fn kv_storage_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.kv_position_bytes(kv_per_layer, ctx) + self.held_state_bytes(ctx)
    }

    /// The part of `kv_storage_bytes` that grows with the context: every layer's KV but the linear layers' state,
    /// the drafter's attention layers included (the engine allocates their cache from the same pool).
    pub fn kv_position_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.kv_position_line(kv_per_layer).of(&self.context_measures(ctx))
    }

    /// `kv_position_bytes` as bytes per unit of each of a context's measures (`ContextMeasures::of`): full layers
    /// and the drafter's hold every position (not only the top-k they read), window layers their window.
    pub fn kv_position_line(&self, kv_per_layer: f64) -> ContextMeasures {
        let full = self.full_layers + self.draft_layers;
        ContextMeasures {
            seqs: 0.0,
            ctx: kv_per_layer * full + self.indexer_bytes_per_position_layer * full + self.draft_own_kv_bytes,
            full: 0.0,
            window: kv_per_layer * self.window_layers * self.window_kv_scale,
            local: self.local_kv_bytes,
        }
    }

    /// The linear layers' state a sequence at context `ctx` holds: all of it from its first position.
    pub fn held_state_bytes(&self, ctx: f64) -> f64 {
        if ctx > 0.0 {
            self.state_bytes()
        } else {
            0.0
        }
    }
}

/// Stored bits per parameter of a weight format of `bits`: a 4-bit format carries block scales (NVFP4 one FP8
/// scale per 16 values: 4.5 bits; MXFP4's one per 32 would be 4.25), wider formats their own width.
pub fn stored_bits_per_param(bits: f64) -> f64 {
    if bits <= 4.0 {
        4.5
    } else {
        bits
    }
}

impl ModelSpec {
    /// How many times the attention FLOPs a rank of a `tp`-way engine computes exceed its heads' share: a
    /// sparse-MLA kernel computes whole tiles of `head_tile` query heads, padding a rank's heads up to the next
    /// multiple (vLLM's FlashMLA sparse backend pads 32 or 64 heads to 128 on Blackwell). 1 without padding.
    pub fn attention_head_padding(&self, head_tile: f64, tp: f64) -> f64 {
        let heads = self.attention.sparse_mla_heads / tp.max(1.0);
        if heads > 0.0 && head_tile > 0.0 {
            (heads / head_tile).ceil() * head_tile / heads
        } else {
            1.0
        }
    }

    /// Stored bits per routed-expert parameter: the card's `routed_expert_bits`, or when it gives none the
    /// storage of its compute width (`stored_bits_per_param`).
    pub fn expert_storage_bits(&self) -> f64 {
        if self.routed_expert_bits > 0.0 {
            self.routed_expert_bits
        } else {
            stored_bits_per_param(self.compute_bits)
        }
    }

    /// Parameters of the routed experts one token multiplies by: `experts_per_token` of `routed_experts`, from
    /// the routed-expert bytes at the experts' stored width `routed_expert_bits` (at most every active
    /// parameter).
    pub fn routed_active_params(&self) -> f64 {
        if self.routed_experts <= 0.0 || self.routed_expert_bytes <= 0.0 {
            return 0.0;
        }
        let params = self.routed_expert_bytes * 8.0 / self.expert_storage_bits();
        (params * self.experts_per_token / self.routed_experts).min(self.active_params).max(0.0)
    }

    /// Recurrent-state slots one sequence holds in each linear-attention layer: its running state and, when the
    /// model drafts, one per draft token for the states after the verified tokens (vLLM's `MambaManager`
    /// allocates `num_speculative_blocks` extra state blocks per request, "for speculative decoding (MTP/EAGLE)
    /// with linear attention", and `MambaBase.get_kv_cache_spec` sets them to `num_speculative_tokens`:
    /// vllm/v1/core/single_type_kv_cache_manager.py, vllm/model_executor/layers/mamba/abstract.py).
    pub fn state_slots(&self) -> f64 {
        1.0 + self.draft_tokens.max(0.0)
    }

    /// Linear-layer state one sequence holds in the KV pool (whole model, before a tensor-parallel split): every
    /// slot of `state_slots`. A PD hand-off ships only the running one (`kv_bytes_held`).
    pub fn pool_state_bytes(&self) -> f64 {
        self.state_slots() * self.attention.state_bytes()
    }

    /// Drafter passes one step runs: `draft_passes` where the card gives a block drafter's, else one per
    /// drafted token; never more passes than drafted tokens.
    pub fn draft_passes_per_step(&self) -> f64 {
        let tokens = self.draft_tokens.max(0.0);
        if self.draft_passes > 0.0 {
            self.draft_passes.min(tokens)
        } else {
            tokens
        }
    }

    /// Decoder layers one draft pass runs: `draft_pass_layers` where given, else the drafter's attention layers
    /// (an MTP module's), else one (an EAGLE3 head is one decoder layer).
    pub fn draft_pass_layer_count(&self) -> f64 {
        if self.draft_pass_layers > 0.0 {
            self.draft_pass_layers
        } else {
            self.attention.draft_layers.max(1.0)
        }
    }

    /// KV bytes per position of one layer: `kv_bytes_per_token` counts the full-attention layers (window layers
    /// hold at most their window on top).
    pub fn kv_per_layer(&self) -> f64 {
        self.kv_bytes_per_token / self.attention.full_layers.max(1.0)
    }

    /// KV bytes one sequence holds (on all ranks together) at context `ctx`: what the pool keeps for it and what
    /// a PD hand-off ships.
    pub fn kv_bytes_held(&self, ctx: f64) -> f64 {
        self.attention.kv_storage_bytes(self.kv_per_layer(), ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::{AllReduceCurve, AttentionSpec, ContextMeasures};
    use proptest::prelude::*;

    /// Any attention geometry: full and window layers, a window, a top-k and a sparse indexer (or none), and
    /// linear-attention layers with their state (or none).
    fn any_attention() -> impl Strategy<Value = AttentionSpec> {
        (
            (1.0..100.0f64, 0.0..60.0f64, 64.0..8192.0f64, prop::option::of(256.0..4096.0f64), 0.0..256.0f64),
            prop::option::of((1.0..40.0f64, 1e3..4e6f64)),
            0.0..3.0f64,
            (0.25..4.0f64, 0.25..2.0f64),
        )
            .prop_map(
                |((full, window_layers, window, top_k, indexer_dim), linear, draft, (kv_scale, flops_scale))| {
                    AttentionSpec {
                        full_layers: full.round(),
                        window_layers: window_layers.round(),
                        window_kv_scale: kv_scale,
                        window_flops_scale: flops_scale,
                        window,
                        top_k: top_k.unwrap_or(f64::INFINITY),
                        flops_per_position_layer: 1.0,
                        prefill_flops_per_position_layer: 1.0,
                        sparse_mla_heads: 0.0,
                        indexer_flops_per_position_layer: 0.0,
                        indexer_bytes_per_position_layer: if top_k.is_some() { indexer_dim } else { 0.0 },
                        linear_layers: linear.map_or(0.0, |(n, _)| n.round()),
                        linear_state_bytes: linear.map_or(0.0, |(_, b)| b),
                        draft_layers: draft.floor(),
                        draft_own_kv_bytes: if draft >= 2.0 { 1e3 * draft } else { 0.0 },
                        local_window: window,
                        local_kv_bytes: if draft < 1.0 { 1e4 * draft } else { 0.0 },
                    }
                },
            )
    }

    proptest! {
        /// A decode step reads only positions the cache holds: a sequence's KV reads never exceed its stored KV
        /// (a sparse indexer's keys are read for every position, so the pool must hold them for every position);
        /// without drafts a linear layer's state is read once and written back once.
        #[test]
        fn a_step_reads_no_more_kv_than_the_pool_holds(a in any_attention(), per_layer in 1.0..2e5f64, ctx in 1.0..2e5f64) {
            let read = a.decode_kv_bytes(per_layer, ctx);
            let held = a.kv_storage_bytes(per_layer, ctx);
            prop_assert!(read <= (held - a.state_bytes()) * (1.0 + 1e-12), "reads {read} B of a sequence holding {held} B");
            prop_assert_eq!(a.decode_state_bytes(1.0), 2.0 * a.state_bytes());
        }

        /// The drafter's layers hold their KV in the pool: a decode step and all its draft passes read no more
        /// positions per layer than the pool keeps, and a drafter's layers add exactly their KV to a sequence.
        #[test]
        fn draft_passes_read_only_what_the_drafter_holds(a in any_attention(), per_layer in 1.0..2e5f64, ctx in 1.0..2e5f64) {
            let mut without = a.clone();
            without.draft_layers = 0.0;
            without.draft_own_kv_bytes = 0.0;
            let drafter_holds = a.kv_storage_bytes(per_layer, ctx) - without.kv_storage_bytes(per_layer, ctx);
            let per_position = a.draft_layers * (per_layer + a.indexer_bytes_per_position_layer) + a.draft_own_kv_bytes;
            prop_assert!((drafter_holds - per_position * ctx).abs() <= 1e-9 * drafter_holds.max(1.0));
            prop_assert!(a.draft_pass_kv_bytes(per_layer, ctx) <= drafter_holds * (1.0 + 1e-12) + 1e-9);
            prop_assert_eq!(without.draft_pass_kv_bytes(per_layer, ctx), 0.0);
            prop_assert_eq!(without.draft_pass_flops(ctx), 0.0);
        }

        /// Every decode cost is linear in a context's measures: the `_of` functions of sequences' summed measures
        /// equal the sum of each sequence's cost (what lets the serving loop sum a step's decodes as measures and
        /// compute their cost once), and the KV a sequence holds is its line at its measures.
        #[test]
        fn decode_costs_of_summed_measures_are_the_sum_of_each_sequences(
            a in any_attention(),
            indexer_flops in prop::option::of(1.0..64.0f64),
            per_layer in 1.0..2e5f64,
            seqs in prop::collection::vec((0.25..64.0f64, 0.0..2e5f64), 1..40),
        ) {
            let mut a = a;
            a.indexer_flops_per_position_layer = if a.top_k.is_finite() { indexer_flops.unwrap_or(0.0) } else { 0.0 };
            let mut sum = ContextMeasures::default();
            let mut each = [0.0f64; 7];
            for &(count, ctx) in &seqs {
                sum.add(count, &a.context_measures(ctx));
                for (e, v) in each.iter_mut().zip([
                    a.decode_kv_bytes(per_layer, ctx),
                    a.query_flops(ctx),
                    a.indexer_query_flops(ctx),
                    a.draft_pass_kv_bytes(per_layer, ctx),
                    a.draft_pass_flops(ctx),
                    a.indexer_draft_pass_flops(ctx),
                    1.0,
                ]) {
                    *e += count * v;
                }
            }
            let summed = [
                a.decode_kv_bytes_of(per_layer, &sum),
                a.query_flops_of(&sum),
                a.indexer_query_flops_of(&sum),
                a.draft_pass_kv_bytes_of(per_layer, &sum),
                a.draft_pass_flops_of(&sum),
                a.indexer_draft_pass_flops_of(&sum),
                sum.seqs,
            ];
            for (k, (x, y)) in summed.iter().zip(each).enumerate() {
                prop_assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "cost {k}: summed {x}, each {y}");
            }
            let line = a.kv_position_line(per_layer);
            for &(_, ctx) in &seqs {
                let x = a.context_measures(ctx);
                let explicit = per_layer * ((a.full_layers + a.draft_layers) * ctx + a.window_layers * a.window_kv_scale * x.window)
                    + a.indexer_bytes_per_position_layer * (a.full_layers + a.draft_layers) * ctx
                    + a.draft_own_kv_bytes * ctx
                    + a.local_kv_bytes * x.local;
                let held = line.of(&x);
                prop_assert!((held - explicit).abs() <= 1e-12 * explicit.max(1.0), "held {held}, explicit {explicit}");
                prop_assert_eq!(held, a.kv_position_bytes(per_layer, ctx));
            }
        }

        /// Up to the breakpoint `context_measures_rate` names, a context's measures grow by its rate per token
        /// (the serving loop's lockstep steps decoding sequences on that line), and past it the rate changes.
        #[test]
        fn context_measures_grow_at_their_rate_up_to_the_next_breakpoint(
            a in any_attention(),
            ctx in 0.0..2e4f64,
            share in 0.0..=1.0f64,
            past in 1.0..100.0f64,
        ) {
            let (rate, until) = a.context_measures_rate(ctx);
            prop_assert!(until > ctx);
            let t = if until.is_finite() { share * (until - ctx) } else { share * 1e5 };
            let mut on_line = a.context_measures(ctx);
            on_line.add(t, &rate);
            let there = a.context_measures(ctx + t);
            for (x, y) in [(on_line.seqs, there.seqs), (on_line.ctx, there.ctx), (on_line.full, there.full),
                (on_line.window, there.window), (on_line.local, there.local)] {
                prop_assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{on_line:?} vs {there:?} at {ctx} + {t}");
            }
            if until.is_finite() {
                let (after, _) = a.context_measures_rate(until + past);
                prop_assert!(after != rate, "the rate past {until} is still {rate:?}");
            }
        }

        /// A linear layer's state does not grow with the context: past the first position, what a sequence holds
        /// grows only by the other layers' KV, and a model of linear layers alone would hold a constant.
        #[test]
        fn linear_state_is_a_constant_per_sequence(a in any_attention(), per_layer in 1.0..2e5f64, ctx in 1.0..2e5f64) {
            let mut only_linear = a.clone();
            only_linear.full_layers = 0.0;
            only_linear.window_layers = 0.0;
            only_linear.draft_layers = 0.0;
            only_linear.draft_own_kv_bytes = 0.0;
            only_linear.local_kv_bytes = 0.0;
            only_linear.indexer_bytes_per_position_layer = 0.0;
            let (short, long) = (only_linear.kv_storage_bytes(per_layer, 1.0), only_linear.kv_storage_bytes(per_layer, ctx));
            prop_assert!((short - long).abs() <= 1e-9 * short.max(1.0) && short == a.state_bytes(), "{short} vs {long}");
        }
    }

    #[test]
    fn a_local_window_is_read_and_held_beside_the_compressed_kv() {
        // DeepSeek V4.1 Flash's shape: 40 layers of 22 B compressed KV per position (top-1,024) and the last 128
        // positions uncompressed at 40,960 B over all layers. Past 128 positions the window is a constant.
        let mut a = AttentionSpec::dense(40.0, 5120.0);
        a.top_k = 1024.0;
        let (global_read, global_held) = (a.decode_kv_bytes(22.0, 8192.0), a.kv_storage_bytes(22.0, 8192.0));
        a.local_window = 128.0;
        a.local_kv_bytes = 40960.0;
        assert_eq!(a.decode_kv_bytes(22.0, 8192.0) - global_read, 40960.0 * 128.0);
        assert_eq!(a.kv_storage_bytes(22.0, 8192.0) - global_held, 40960.0 * 128.0);
        assert_eq!(a.kv_storage_bytes(22.0, 64.0), (22.0 * 40.0 + 40960.0) * 64.0);
        // Its attention: every full layer attends to the window's positions too.
        let with = a.query_flops(8192.0);
        a.local_kv_bytes = 0.0;
        assert_eq!(with - a.query_flops(8192.0), a.flops_per_position_layer * 40.0 * 128.0);
    }

    #[test]
    fn sparse_indexer_keys_take_pool_space() {
        let mut a = AttentionSpec::dense(78.0, 6144.0);
        let latent = a.kv_storage_bytes(1152.0, 9216.0);
        a.top_k = 2048.0;
        a.indexer_bytes_per_position_layer = 128.0;
        assert_eq!(a.kv_storage_bytes(1152.0, 9216.0) - latent, 128.0 * 78.0 * 9216.0);
    }

    #[test]
    fn a_measured_all_reduce_is_linear_between_sizes_floored_below_and_at_its_last_bandwidth_beyond() {
        let c = AllReduceCurve::new([(8192.0, 41e-6), (65536.0, 116e-6), (1048576.0, 2100e-6)]);
        assert_eq!(c.floor_s(), 41e-6);
        // Below the smallest size: the smallest call's time, never less.
        assert_eq!(c.seconds(100.0), 41e-6);
        assert_eq!(c.seconds(8192.0), 41e-6);
        // Between two sizes: on the straight line joining them.
        let mid = c.seconds((65536.0 + 1048576.0) / 2.0);
        assert!((mid - (116e-6 + 2100e-6) / 2.0).abs() < 1e-12, "{mid}");
        assert_eq!(c.seconds(65536.0), 116e-6);
        // Beyond the largest: its time, plus the rest at its bandwidth (2 MB at 1 MB's rate takes twice as long).
        assert!((c.seconds(2.0 * 1048576.0) - 2.0 * 2100e-6).abs() < 1e-12);
        // Points out of order, repeated or not positive are dropped; an empty curve costs nothing.
        let odd = AllReduceCurve::new([(8192.0, 41e-6), (4096.0, 1e-6), (8192.0, 5e-6), (0.0, 1.0), (f64::NAN, 1.0)]);
        assert_eq!(odd.points(), &[(8192.0, 41e-6)]);
        assert_eq!(AllReduceCurve::default().seconds(1e6), 0.0);
    }
}

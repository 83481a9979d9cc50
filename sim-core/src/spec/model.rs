//! A model in SI units: its weights, experts, KV and drafter, and the few derived quantities every mode asks.

use super::attention::AttentionSpec;
use serde::Serialize;

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
    /// GQA splits KV across tensor-parallel ranks (by heads, up to `kv_heads`); MLA replicates it.
    pub kv_split_under_tp: bool,
    /// KV heads of the layers `kv_bytes_per_token` counts (config.json `num_key_value_heads`; Gemma 4's global
    /// layers' `num_global_key_value_heads`). 0: not given, and KV splits over every rank (`kv_split`).
    pub kv_heads: f64,
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
    /// A dense BF16 model for unit tests: `weight_bytes` of weights, `active_params` multiplied per token,
    /// `layers` of `hidden_size` with dense attention and `kv_bytes_per_token` of KV, nothing drafted or pinned.
    #[cfg(test)]
    pub(crate) fn dense_for_tests(
        weight_bytes: f64,
        active_params: f64,
        layers: f64,
        hidden_size: f64,
        kv_bytes_per_token: f64,
    ) -> Self {
        ModelSpec {
            id: "m".into(),
            name: "m".into(),
            weight_bytes,
            routed_expert_bytes: 0.0,
            active_params,
            prefill_active_share: 1.0,
            layers,
            hidden_size,
            routed_experts: 0.0,
            experts_per_token: 0.0,
            compute_bits: 16.0,
            dense_compute_bits: 16.0,
            routed_expert_bits: 0.0,
            kv_bytes_per_token,
            kv_split_under_tp: true,
            kv_heads: 0.0,
            pinned_cpu_bytes: 0.0,
            pinned_read_bytes_per_token: 0.0,
            input_embedding_bytes: 0.0,
            draft_tokens: 0.0,
            draft_passes: 0.0,
            draft_pass_layers: 0.0,
            draft_acceptance: 0.0,
            draft_pass_bytes: 0.0,
            draft_expert_bytes: 0.0,
            attention: AttentionSpec::dense(layers, hidden_size),
            host_pin: HostPin::default(),
        }
    }

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

    /// The ranks of a `tp`-way engine one sequence's KV positions are divided over. vLLM's `QKVParallelLinear`
    /// splits the KV heads across ranks while there are at least as many heads as ranks; past that each rank
    /// keeps one whole head, replicated `tp / kv_heads` times (vllm/model_executor/layers/linear.py: "the KV
    /// heads are replicated" when `tp_size >= total_num_kv_heads`, `num_kv_head_replicas = tp_size //
    /// total_num_kv_heads`), so per rank it is `kv / min(tp, kv_heads)`: never less than one head's share. MLA's
    /// latent has no heads to split: 1. The split follows the full layers' heads (those `kv_bytes_per_token`
    /// counts); window layers with more heads (Gemma 4's sliding layers, 8 against 2) would split further past
    /// that count, which this leaves out: they are held as if split like the full layers (a smaller pool's worth,
    /// only at a tensor-parallel degree above the full layers' heads).
    pub fn kv_split(&self, tp: f64) -> f64 {
        let tp = tp.max(1.0);
        match (self.kv_split_under_tp, self.kv_heads > 0.0) {
            (false, _) => 1.0,
            (true, true) => tp.min(self.kv_heads),
            (true, false) => tp,
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

//! Model cards: a model's architecture facts, each with its basis, and the configuration the report ran.

use super::{From, Mode, Quantity};
use serde::{Deserialize, Serialize};

/// A model card: architecture facts (each with its basis) and the configuration the report ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    pub schema_version: u32,
    pub kind: String,
    pub id: String,
    pub name: String,
    pub architecture: Architecture,
    #[serde(default)]
    pub report_config: Option<ReportConfig>,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Architecture {
    /// Bytes of the weights as the engine loads them.
    pub weight_bytes: Quantity,
    /// Bytes of routed-expert weights (the part that can spill and is read sparsely).
    pub routed_expert_bytes: Quantity,
    /// Parameters used per token (for compute).
    pub active_params: Quantity,
    /// Parameters a prompt (prefill) token uses, where the model publishes fewer than a decode token's
    /// (DeepSeek-V4.1-Flash's causal encoder-decoder: 8B against 16B). Absent: `active_params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_active_params: Option<Quantity>,
    pub layers: Quantity,
    pub hidden_size: Quantity,
    pub routed_experts: Quantity,
    pub experts_per_token: Quantity,
    /// Bits per weight for compute: 4 for NVFP4, 8 for FP8. In a mixed-precision checkpoint this is the routed
    /// experts' precision (what "NVFP4" names), and `dense_compute_bits` the rest's.
    pub compute_bits: Quantity,
    /// Bits at which the linear layers outside the routed experts (attention projections, shared experts, dense
    /// layers, LM head) multiply. NVFP4 checkpoints quantise the routed experts only and leave these at the
    /// source's precision (nvidia/DeepSeek-R1-FP4's card; llm-compressor's DeepSeek V4 Flash recipe keeps the
    /// attention projections FP8-block). Absent: `compute_bits` (every layer at one precision).
    #[serde(default)]
    pub dense_compute_bits: Option<Quantity>,
    /// Stored bits per routed-expert parameter, block scales included (MXFP4 4.25: four bits plus an 8-bit scale
    /// per 32; NVFP4 4.5: an FP8 scale per 16), where the experts are stored in another format than they
    /// multiply in: it turns `routed_expert_bytes` into the parameters a token multiplies by. Absent: the width
    /// of `compute_bits` (4.5 for a 4-bit format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routed_expert_bits: Option<Quantity>,
    pub kv_bytes_per_token: Quantity,
    /// `mla` (KV replicated under tensor parallel) or `gqa` (KV split across ranks).
    pub attention: String,
    /// Vocabulary size (config.json `vocab_size`): the LM head is vocabulary x hidden parameters of
    /// `active_params`. The step multiplies it at every token (docs/notes.md: the LM head only where logits are
    /// computed is measured and not yet adopted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab_size: Option<Quantity>,
    /// KV heads of the layers `kv_bytes_per_token` counts (config.json `num_key_value_heads`): under `gqa` a
    /// tensor-parallel rank holds `1 / min(tp, kv_heads)` of the KV (vLLM replicates a head once ranks outnumber
    /// them). Absent: split over every rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_heads: Option<Quantity>,
    /// Query heads (config.json `num_attention_heads`); with `kv_lora_rank` and `rope_head_dim` (MLA's latent)
    /// or else `head_dim` it gives attention FLOPs per cached position. Absent: `4 x hidden` per layer.
    #[serde(default)]
    pub attention_heads: Option<Quantity>,
    /// Per-head dimension (`head_dim`): of GQA attention, or under `mla` of one KV every head shares without a
    /// latent (DeepSeek-V4.1-Flash's 512-wide KV).
    #[serde(default)]
    pub head_dim: Option<Quantity>,
    /// MLA latent and rotary dimensions (`kv_lora_rank`, `qk_rope_head_dim`).
    #[serde(default)]
    pub kv_lora_rank: Option<Quantity>,
    #[serde(default)]
    pub rope_head_dim: Option<Quantity>,
    /// Sliding window (tokens) and how many layers use it (`sliding_window`, `layer_types`); the other layers
    /// attend to the whole context and are the ones `kv_bytes_per_token` counts.
    #[serde(default)]
    pub sliding_window: Option<Quantity>,
    #[serde(default)]
    pub sliding_window_layers: Option<Quantity>,
    /// The window layers' own geometry where it differs from the full layers' (Gemma 4: sliding layers of 8 KV
    /// heads x 256, global layers of 2 x 512): their KV bytes per position over all window layers, and their
    /// head dimension (attention FLOPs per position). Absent: the full layers' (`kv_bytes_per_token` per layer,
    /// `head_dim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_kv_bytes_per_token: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_head_dim: Option<Quantity>,
    /// Sparse attention (DeepSeek's DSA): positions read per query (`index_topk`) after an indexer with
    /// `indexer_heads` x `indexer_head_dim` (FP8 keys) scores every position.
    #[serde(default)]
    pub sparse_top_k: Option<Quantity>,
    #[serde(default)]
    pub indexer_heads: Option<Quantity>,
    #[serde(default)]
    pub indexer_head_dim: Option<Quantity>,
    /// Positions every full-attention layer also keeps uncompressed beside its compressed or sparse global KV
    /// (DeepSeek V4's local sliding window), with `local_window_kv_bytes_per_token`, their bytes per position
    /// over all those layers: each query reads and attends to them on top of its global positions, and the pool
    /// holds them. Both or neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_window: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_window_kv_bytes_per_token: Option<Quantity>,
    /// Linear-attention layers (Kimi Delta Attention, Gated DeltaNet): each keeps a recurrent state of
    /// `linear_state_bytes` per sequence (and a slot more per draft token of a drafting model), read once and
    /// written after each verified token every step, where other layers keep a KV cache that grows;
    /// `kv_bytes_per_token` counts the other (full-attention) layers only.
    #[serde(default)]
    pub linear_attention_layers: Option<Quantity>,
    #[serde(default)]
    pub linear_state_bytes: Option<Quantity>,
    /// Routed-expert bytes of the draft's MoE layer (MTP), read at the distinct-expert rate of the draft's own
    /// token count; `draft_pass_bytes` is then the rest of a draft pass (attention, shared expert, LM head).
    #[serde(default)]
    pub draft_routed_expert_bytes: Option<Quantity>,
    /// Attention layers with a full layer's geometry the drafter runs once per draft pass, each keeping its own
    /// KV of every position (an MTP module: `num_nextn_predict_layers`, one). A draft pass then reads that
    /// layer's KV at each sequence's context, and the pool holds it. Absent: 0 (no drafter, or one whose
    /// attention is its own and small, as EAGLE3's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_attention_layers: Option<Quantity>,
    /// Drafter passes per step, where the drafter proposes its block in fewer passes than it drafts tokens
    /// (DeepSeek V4.1 Flash's DSpark: one). At most `draft_tokens`; absent: `draft_tokens` (one pass per
    /// drafted token, as MTP and EAGLE3 run). `draft_pass_bytes` is then one such pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_passes: Option<Quantity>,
    /// KV bytes per position of a drafter with its own dense attention over the whole context (an EAGLE3
    /// head): held in the pool beside the model's KV and read by every draft pass. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_kv_bytes_per_token: Option<Quantity>,
    /// Decoder layers one draft pass runs, each paying the engine's fixed cost per layer
    /// (`per_layer_overhead_s`) as the main pass's layers do (DeepSeek V4.1 Flash's DSpark: three stages).
    /// Absent: `draft_attention_layers` where it is above 0, else one (an MTP module or an EAGLE3 head is one
    /// decoder layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_pass_layers: Option<Quantity>,
    /// Tables the engine pins in CPU memory (DeepSeek's Engram), read sparsely per token.
    #[serde(default)]
    pub pinned_cpu_bytes: Option<Quantity>,
    #[serde(default)]
    pub pinned_read_bytes_per_token: Option<Quantity>,
    /// Bytes of the input embedding table: held with the dense weights, but a step gathers one row per token
    /// instead of streaming it (absent: counted as read every step, like the other dense weights).
    #[serde(default)]
    pub input_embedding_bytes: Option<Quantity>,
    /// Draft tokens per step of speculative decoding (0 = none).
    pub draft_tokens: Quantity,
    /// Per-token acceptance of the draft, before calibration.
    pub draft_acceptance: Quantity,
    /// Bytes one draft forward pass reads (MTP head or EAGLE3 layer plus LM head).
    pub draft_pass_bytes: Quantity,
    /// Expert weights the report says were offloaded to CPU memory on one station (published where known).
    #[serde(default)]
    pub published_offload_bytes: Option<Quantity>,
    /// The longest sequence the model takes, prompt and output together, tokens (config.json
    /// `max_position_embeddings`): what vLLM's `--max-model-len` defaults to and may not exceed. The planner
    /// refuses a workload longer than it. Absent: unstated (the planner checks only `--max-model-len`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<Quantity>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportConfig {
    pub cluster_mode: Mode,
    pub software: String,
    pub speculative: String,
    pub cpu_memory_use: String,
    pub from: From,
}

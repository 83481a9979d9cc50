//! Describing any model with a handful of numbers (or a Hugging Face `config.json`) instead of a full card.
//!
//! Parameter counts from a config follow the standard transformer layout: attention (GQA or MLA), a dense MLP
//! in the first layers, routed plus shared experts in the rest, and the embedding and LM head. Every number a
//! description derives is labelled as derived from the config in the planner's output.

use crate::spec::ModelSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A model in the few numbers the simulator needs. Missing optional fields take the defaults shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ModelDescription {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    pub total_params: f64,
    pub active_params: f64,
    pub layers: f64,
    pub hidden_size: f64,
    /// Vocabulary size: the LM head (vocabulary x hidden, part of `active_params`) multiplies only the
    /// positions the engine samples. Absent: every token multiplies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab_size: Option<f64>,
    /// `gqa` (needs kv_heads and head_dim) or `mla` (needs kv_lora_rank and rope_dim).
    pub attention: String,
    #[serde(default)]
    pub kv_heads: Option<f64>,
    #[serde(default)]
    pub head_dim: Option<f64>,
    #[serde(default)]
    pub kv_lora_rank: Option<f64>,
    #[serde(default)]
    pub rope_dim: Option<f64>,
    /// Bytes per KV element (2 for BF16, 1 for FP8). Default 2.
    #[serde(default = "two")]
    pub kv_bytes_per_element: f64,
    /// Routed experts per MoE layer (0 for a dense model) and experts used per token.
    #[serde(default)]
    pub routed_experts: f64,
    #[serde(default)]
    pub experts_per_token: f64,
    /// Parameters in all routed experts together; default: total minus active plus the active experts' share.
    #[serde(default)]
    pub routed_expert_params: Option<f64>,
    /// Bits per weight as loaded: 4.5 for NVFP4 (with scales), 8 for FP8, 16 for BF16. With
    /// `dense_bits_per_weight`, the routed experts' width.
    pub bits_per_weight: f64,
    /// Bits per weight of every layer outside the routed experts (attention projections, shared experts, dense
    /// layers, LM head), which NVFP4 checkpoints leave at FP8 or BF16; absent: `bits_per_weight`. It sets those
    /// layers' bytes and the tensor rate they multiply at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense_bits_per_weight: Option<f64>,
    /// Tokens drafted per step by speculative decoding. Default 0: one token a step, as engines run without a
    /// speculative config (a config.json's MTP layers make the model able to draft, not the engine do it).
    #[serde(default)]
    pub draft_tokens: f64,
    /// Attention layers of the model's own geometry the drafter runs per draft pass, each with its own KV (MTP
    /// modules: config.json's `num_nextn_predict_layers`); used only with `draft_tokens`. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_attention_layers: Option<f64>,
    /// Per-token draft acceptance, 0..1. Default 0.7.
    #[serde(default = "seventy")]
    pub draft_acceptance: f64,
    /// Query heads (attention FLOPs per position); absent: the `4 x hidden` shortcut.
    #[serde(default)]
    pub attention_heads: Option<f64>,
    /// Sliding window (tokens) and the number of layers using it.
    #[serde(default)]
    pub sliding_window: Option<f64>,
    #[serde(default)]
    pub sliding_window_layers: Option<f64>,
    /// The sliding-window layers' KV heads and head dimension where they differ from the full layers'
    /// (`kv_heads`, `head_dim`): Gemma 4's sliding layers keep 8 KV heads of 256, its global layers 2 of 512.
    /// Absent: the full layers' geometry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_kv_heads: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_head_dim: Option<f64>,
    /// Sparse attention: positions read per query, and the indexer's heads and head dimension.
    #[serde(default)]
    pub sparse_top_k: Option<f64>,
    #[serde(default)]
    pub indexer_heads: Option<f64>,
    #[serde(default)]
    pub indexer_head_dim: Option<f64>,
    /// Linear-attention layers (Kimi Delta Attention, Gated DeltaNet) among `layers`: no KV that grows, a fixed
    /// state per sequence read and written every step (`linear_state_bytes` each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear_attention_layers: Option<f64>,
    /// Recurrent state one linear-attention layer keeps per sequence, bytes (whole model, before a
    /// tensor-parallel split): heads x key dim x value dim x bytes per element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear_state_bytes: Option<f64>,
}

/// The tensor precision weights of `bits` per weight compute at: 4-bit formats (with their scales) at FP4,
/// 8-bit at FP8, wider at BF16.
fn compute_bits_of(bits: f64) -> f64 {
    if bits <= 5.0 {
        4.0
    } else if bits <= 8.0 {
        8.0
    } else {
        16.0
    }
}

/// The KV cache element types a description can be given by name, as vLLM's `--kv-cache-dtype` names them, and
/// their bytes per element: `auto` is the model's activation type, BF16 for every config `from_hf_config` reads
/// (also for FP8 checkpoints, whose activations are BF16); `fp8` is one byte.
pub const KV_CACHE_DTYPES: [(&str, f64); 4] = [("auto", 2.0), ("bf16", 2.0), ("fp16", 2.0), ("fp8", 1.0)];

/// Bytes per KV element of a vLLM `--kv-cache-dtype` (`KV_CACHE_DTYPES`); `None` for a name it does not list.
pub fn kv_cache_dtype_bytes(dtype: &str) -> Option<f64> {
    KV_CACHE_DTYPES.iter().find(|(name, _)| *name == dtype).map(|&(_, bytes)| bytes)
}

fn two() -> f64 {
    2.0
}

fn seventy() -> f64 {
    0.7
}

impl ModelDescription {
    /// Converts to the simulator's spec, checking that the numbers make sense.
    pub fn to_spec(&self) -> Result<ModelSpec, String> {
        let pos = |name: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(x)
            } else {
                Err(format!("`{name}` must be a positive number, got {x}"))
            }
        };
        pos("total_params", self.total_params)?;
        pos("active_params", self.active_params)?;
        pos("layers", self.layers)?;
        pos("hidden_size", self.hidden_size)?;
        pos("bits_per_weight", self.bits_per_weight)?;
        let dense_bits = match self.dense_bits_per_weight {
            Some(b) => pos("dense_bits_per_weight", b)?,
            None => self.bits_per_weight,
        };
        pos("kv_bytes_per_element", self.kv_bytes_per_element)?;
        if self.active_params > self.total_params {
            return Err("`active_params` exceeds `total_params`".into());
        }
        if !(self.draft_tokens.is_finite() && self.draft_tokens >= 0.0) {
            return Err(format!("`draft_tokens` must be a count of zero or more, got {}", self.draft_tokens));
        }
        if let Some(n) = self.draft_attention_layers.filter(|n| !(n.is_finite() && *n >= 0.0)) {
            return Err(format!("`draft_attention_layers` must be a count of zero or more, got {n}"));
        }
        if !(0.0..1.0).contains(&self.draft_acceptance) {
            return Err(format!("`draft_acceptance` must be in [0, 1), got {}", self.draft_acceptance));
        }
        if self.experts_per_token > self.routed_experts {
            return Err("`experts_per_token` exceeds `routed_experts`".into());
        }
        let window_layers = match (self.sliding_window, self.sliding_window_layers) {
            (Some(w), Some(n)) if w > 0.0 && n > 0.0 => {
                if n >= self.layers {
                    return Err("`sliding_window_layers` must leave at least one full-attention layer".into());
                }
                n
            }
            _ => 0.0,
        };
        let linear_layers = match (self.linear_attention_layers, self.linear_state_bytes) {
            (Some(n), Some(state)) if n > 0.0 => {
                pos("linear_state_bytes", state)?;
                if !n.is_finite() || n + window_layers >= self.layers {
                    return Err("`linear_attention_layers` must leave at least one full-attention layer".into());
                }
                n
            }
            (Some(n), None) if n > 0.0 => {
                return Err(
                    "`linear_attention_layers` needs `linear_state_bytes` (each layer's state per sequence)".into()
                )
            }
            _ => 0.0,
        };
        let full_layers = self.layers - window_layers - linear_layers;
        let mut attention = crate::spec::AttentionSpec::dense(self.layers, self.hidden_size);
        let kv_per_token = match self.attention.as_str() {
            "gqa" => {
                let (Some(h), Some(d)) = (self.kv_heads, self.head_dim) else {
                    return Err("gqa attention needs `kv_heads` and `head_dim`".into());
                };
                if let Some(q) = self.attention_heads {
                    attention.flops_per_position_layer = 4.0 * q * d;
                    attention.prefill_flops_per_position_layer = 4.0 * q * d;
                }
                if window_layers > 0.0 {
                    let wh = match self.window_kv_heads {
                        Some(x) => pos("window_kv_heads", x)?,
                        None => h,
                    };
                    let wd = match self.window_head_dim {
                        Some(x) => pos("window_head_dim", x)?,
                        None => d,
                    };
                    if h > 0.0 && d > 0.0 {
                        attention.window_kv_scale = wh * wd / (h * d);
                        attention.window_flops_scale = wd / d;
                    }
                }
                2.0 * full_layers * h * d * self.kv_bytes_per_element
            }
            "mla" => {
                let (Some(r), Some(p)) = (self.kv_lora_rank, self.rope_dim) else {
                    return Err("mla attention needs `kv_lora_rank` and `rope_dim`".into());
                };
                if let Some(q) = self.attention_heads {
                    attention.flops_per_position_layer = 2.0 * q * (2.0 * r + p);
                    attention.prefill_flops_per_position_layer =
                        2.0 * q * (crate::spec::MLA_NOPE_HEAD_DIM + p + crate::spec::MLA_V_HEAD_DIM);
                }
                full_layers * (r + p) * self.kv_bytes_per_element
            }
            other => return Err(format!("unknown attention `{other}`; use gqa or mla")),
        };
        if window_layers > 0.0 {
            attention.window = self.sliding_window.unwrap_or(f64::INFINITY);
            attention.window_layers = window_layers;
        }
        if linear_layers > 0.0 {
            attention.linear_layers = linear_layers;
            attention.linear_state_bytes = self.linear_state_bytes.unwrap_or(0.0);
        }
        attention.full_layers = full_layers;
        if self.draft_tokens > 0.0 {
            attention.draft_layers = self.draft_attention_layers.unwrap_or(0.0).max(0.0);
        }
        if let Some(k) = self.sparse_top_k.filter(|k| *k > 0.0) {
            attention.top_k = k;
            if let (true, Some(q)) = (self.attention == "mla", self.attention_heads) {
                attention.run_as_sparse_mla(q);
            }
            let dim = self.indexer_head_dim.unwrap_or(0.0);
            attention.indexer_flops_per_position_layer = 2.0 * self.indexer_heads.unwrap_or(0.0) * dim;
            attention.indexer_bytes_per_position_layer = dim;
        }
        let bytes = self.bits_per_weight / 8.0;
        let experts = if self.routed_experts > 0.0 {
            // Without a given expert count, the inactive parameters are all routed experts, plus the active
            // experts' share of them (k of E).
            self.routed_expert_params.unwrap_or_else(|| {
                let inactive = self.total_params - self.active_params;
                inactive / (1.0 - self.experts_per_token / self.routed_experts).max(1e-6)
            })
        } else {
            0.0
        };
        let experts = experts.min(self.total_params);
        let dense_bytes = dense_bits / 8.0;
        // One draft pass reads about one layer's active weights plus the LM head.
        let per_layer_active =
            (self.active_params - 2.0 * self.hidden_size * 150_000.0).max(self.active_params * 0.5) / self.layers;
        Ok(ModelSpec {
            id: self.id.clone(),
            name: self.name.clone().unwrap_or_else(|| self.id.clone()),
            weight_bytes: experts * bytes + (self.total_params - experts) * dense_bytes,
            routed_expert_bytes: experts * bytes,
            active_params: self.active_params,
            prefill_active_share: 1.0,
            layers: self.layers,
            hidden_size: self.hidden_size,
            lm_head_params: self.vocab_size.map_or(0.0, |v| v * self.hidden_size).max(0.0),
            routed_experts: self.routed_experts,
            experts_per_token: self.experts_per_token,
            compute_bits: compute_bits_of(self.bits_per_weight),
            dense_compute_bits: compute_bits_of(dense_bits),
            routed_expert_bits: self.bits_per_weight,
            kv_bytes_per_token: kv_per_token,
            kv_split_under_tp: self.attention == "gqa",
            kv_heads: if self.attention == "gqa" { self.kv_heads.unwrap_or(0.0) } else { 0.0 },
            pinned_cpu_bytes: 0.0,
            pinned_read_bytes_per_token: 0.0,
            // A dozen numbers do not say whether the embedding is tied to the LM head: count it as read.
            input_embedding_bytes: 0.0,
            draft_tokens: self.draft_tokens,
            draft_passes: 0.0,
            // The drafter's attention layers (an MTP module's), else one.
            draft_pass_layers: 0.0,
            draft_acceptance: self.draft_acceptance,
            draft_pass_bytes: if self.draft_tokens > 0.0 {
                (per_layer_active + self.hidden_size * 150_000.0) * bytes
            } else {
                0.0
            },
            draft_expert_bytes: 0.0,
            attention,
            host_pin: Default::default(),
        })
    }

    /// Reads the fields the simulator needs from a Hugging Face style `config.json`.
    pub fn from_hf_config(id: &str, text: &str, bits_per_weight: f64) -> Result<ModelDescription, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("config.json is not valid JSON: {e}"))?;
        // Multimodal configs nest the language model's config.
        let c = v.get("text_config").filter(|t| t.is_object()).unwrap_or(&v);
        let num = |keys: &[&str]| keys.iter().find_map(|k| c.get(*k).and_then(Value::as_f64));
        let need =
            |keys: &[&str]| num(keys).ok_or_else(|| format!("config.json has none of the fields {}", keys.join(", ")));
        let layers = need(&["num_hidden_layers", "n_layer", "num_layers"])?;
        let hidden = need(&["hidden_size", "d_model", "n_embd"])?;
        let heads = need(&["num_attention_heads", "n_head"])?;
        let kv_heads = num(&["num_key_value_heads"]).unwrap_or(heads);
        let head_dim = num(&["head_dim"]).unwrap_or(hidden / heads);
        // Global (full-attention) layers of their own geometry beside sliding ones (Gemma 4:
        // `num_global_key_value_heads`, `global_head_dim`, which Transformers' Gemma4TextConfig defaults to 512,
        // and `attention_k_eq_v`, one projection for K and V on those layers; vLLM still caches K and V apart).
        let is_gemma4 = c.get("model_type").and_then(Value::as_str).is_some_and(|t| t.starts_with("gemma4"));
        let global_kv_heads = num(&["num_global_key_value_heads"]);
        let global_head_dim = num(&["global_head_dim"]).or(if is_gemma4 { Some(512.0) } else { None });
        let k_eq_v = c.get("attention_k_eq_v").and_then(Value::as_bool).unwrap_or(false);
        let vocab = num(&["vocab_size"]).unwrap_or(150_000.0);
        let kv_lora = num(&["kv_lora_rank"]);
        let rope = num(&["qk_rope_head_dim"]);
        let experts = num(&["n_routed_experts", "num_experts", "num_local_experts"]).unwrap_or(0.0);
        let top_k = num(&["num_experts_per_tok", "num_experts_per_token", "moe_top_k", "top_k", "top_k_experts"])
            .unwrap_or(0.0);
        let shared = num(&["n_shared_experts", "num_shared_experts"]).unwrap_or(0.0);
        let ffn = num(&["intermediate_size", "ffn_hidden_size"]).unwrap_or(4.0 * hidden);
        let moe_ffn = num(&["moe_intermediate_size", "expert_intermediate_size"]).unwrap_or(ffn);
        // Dense MLP layers: the first `first_k_dense_replace`, or the zeros of a per-layer `moe_layer_freq` list
        // (MiniMax-M3), at `dense_intermediate_size` where the config gives the dense width apart.
        let dense_layers = if experts > 0.0 {
            num(&["first_k_dense_replace"]).or_else(|| zeros_of(c, "moe_layer_freq")).unwrap_or(0.0)
        } else {
            layers
        };
        let moe_layers = layers - dense_layers;
        let ffn = num(&["dense_intermediate_size"]).unwrap_or(ffn);
        let sparse = block_sparse_of(c, layers);
        let linear = linear_layers_of(c, layers, hidden);
        let (attention, attn_params) = match (kv_lora, rope) {
            (Some(r), Some(p)) => {
                let q_lora = num(&["q_lora_rank"]).unwrap_or(hidden);
                let nope = num(&["qk_nope_head_dim"]).unwrap_or(128.0);
                let v_dim = num(&["v_head_dim"]).unwrap_or(128.0);
                let params = hidden * q_lora
                    + q_lora * heads * (nope + p)
                    + hidden * (r + p)
                    + r * heads * (nope + v_dim)
                    + heads * v_dim * hidden;
                ("mla", params)
            }
            _ => {
                // A gated output (Qwen3-Next's `attn_output_gate`) doubles the query projection.
                let gate = if c.get("attn_output_gate").and_then(Value::as_bool).unwrap_or(false) { 1.0 } else { 0.0 };
                ("gqa", hidden * heads * head_dim * (2.0 + gate) + 2.0 * hidden * kv_heads * head_dim)
            }
        };
        let expert = 3.0 * hidden * moe_ffn;
        let dense_mlp = 3.0 * hidden * ffn;
        let embed = vocab
            * hidden
            * if c.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(false) { 1.0 } else { 2.0 };
        // Shared experts of their own width (Qwen3-Next's `shared_expert_intermediate_size`, MiniMax's
        // `shared_intermediate_size`; one unless counted) or `shared` of the routed width.
        let shared_mlp = match num(&["shared_expert_intermediate_size", "shared_intermediate_size"]) {
            Some(w) if w > 0.0 => shared.max(1.0) * 3.0 * hidden * w,
            // Gemma 4's MoE layers run a dense MLP of `intermediate_size` beside the routed experts (Transformers'
            // converter for the 26B-A4B: "intermediate_size=2112,  # Shared expert FFW").
            _ if is_gemma4 && experts > 0.0 => 3.0 * hidden * ffn,
            _ => shared * expert,
        };
        let routed = moe_layers * experts * expert;
        let draft = num(&["num_nextn_predict_layers"]).unwrap_or(0.0);
        // Sliding-window layers: `layer_types` lists them (GPT-OSS, Gemma); without it, a `sliding_window`
        // alone does not say how many layers use it, so none are counted.
        let mut window = num(&["sliding_window"]).filter(|w| *w > 0.0);
        let mut window_layers = c
            .get("layer_types")
            .and_then(Value::as_array)
            .map(|types| types.iter().filter(|t| t.as_str().is_some_and(|t| t.contains("sliding"))).count() as f64);
        // Full layers of their own geometry (Gemma 4): `kv_heads` and `head_dim` describe them, and the window
        // layers keep the config's `num_key_value_heads` and `head_dim` (`window_kv_heads`, `window_head_dim`).
        let sliding = window_layers.filter(|n| *n > 0.0 && window.is_some()).unwrap_or(0.0);
        let split = attention == "gqa" && sliding > 0.0 && (global_kv_heads.is_some() || global_head_dim.is_some());
        let (full_kv_heads, full_head_dim) = if split {
            (global_kv_heads.unwrap_or(kv_heads), global_head_dim.unwrap_or(head_dim))
        } else {
            (kv_heads, head_dim)
        };
        // Linear layers carry their own projections instead of the full layers' attention; full layers of their
        // own geometry theirs (one projection for K and V under `attention_k_eq_v`).
        let attention_layers = layers - linear.layers;
        let attn_mixers = if split {
            let full_attn = 2.0 * hidden * heads * full_head_dim
                + if k_eq_v { 1.0 } else { 2.0 } * hidden * full_kv_heads * full_head_dim;
            sliding * attn_params + (attention_layers - sliding).max(0.0) * full_attn
        } else {
            attention_layers * attn_params
        };
        let mixers = attn_mixers + linear.layers * linear.params_per_layer(hidden);
        let total = embed + mixers + dense_layers * dense_mlp + moe_layers * shared_mlp + routed;
        let active = vocab * hidden + mixers + dense_layers * dense_mlp + moe_layers * (top_k * expert + shared_mlp);
        // Block-sparse attention with some dense layers (MiniMax-M3): the dense layers read every position, so they
        // are window layers whose window is the whole context.
        if sparse.dense_layers > 0.0 && window.is_none() {
            window = Some(num(&["max_position_embeddings"]).unwrap_or(1_048_576.0));
            window_layers = Some(sparse.dense_layers);
        }
        Ok(ModelDescription {
            id: id.to_string(),
            name: c.get("_name_or_path").and_then(Value::as_str).map(str::to_string),
            total_params: total,
            active_params: active,
            layers,
            hidden_size: hidden,
            vocab_size: Some(vocab),
            attention: attention.to_string(),
            kv_heads: (attention == "gqa").then_some(full_kv_heads),
            head_dim: (attention == "gqa").then_some(full_head_dim),
            kv_lora_rank: kv_lora.filter(|_| attention == "mla"),
            rope_dim: rope.filter(|_| attention == "mla"),
            kv_bytes_per_element: 2.0,
            routed_experts: experts,
            experts_per_token: top_k,
            routed_expert_params: (experts > 0.0).then_some(routed),
            bits_per_weight,
            dense_bits_per_weight: None,
            // MTP layers in a config say the model can draft, not that the engine does: vLLM runs a drafter only
            // when its speculative config names one (`--speculative-config '{"method": "mtp",
            // "num_speculative_tokens": 1}'`, docs.vllm.ai features/speculative_decoding/mtp), so a described
            // model decodes plainly until a caller sets `draft_tokens` (`describe-model --draft-tokens`).
            draft_tokens: 0.0,
            // Each MTP module is a decoder layer with the model's attention and its own KV cache: recorded, so a
            // caller who turns drafting on drafts with them.
            draft_attention_layers: (draft > 0.0).then_some(draft),
            draft_acceptance: 0.7,
            attention_heads: Some(heads),
            sliding_window: window.filter(|_| window_layers.unwrap_or(0.0) > 0.0),
            sliding_window_layers: window_layers.filter(|n| *n > 0.0 && window.is_some()),
            window_kv_heads: split.then_some(kv_heads),
            window_head_dim: split.then_some(head_dim),
            sparse_top_k: num(&["index_topk"]).or(sparse.top_k),
            indexer_heads: num(&["index_n_heads"]).or(sparse.index_heads),
            indexer_head_dim: num(&["index_head_dim"]).or(sparse.index_dim),
            linear_attention_layers: (linear.layers > 0.0).then_some(linear.layers),
            linear_state_bytes: (linear.layers > 0.0).then_some(linear.state_bytes),
        })
    }
}

/// How many entries of the per-layer list `key` are 0.
fn zeros_of(c: &Value, key: &str) -> Option<f64> {
    let list = c.get(key)?.as_array()?;
    Some(list.iter().filter(|v| v.as_f64() == Some(0.0)).count() as f64)
}

/// Block-sparse attention as MiniMax-M3's `sparse_attention_config` states it: attention reads the top
/// `sparse_topk_blocks` blocks of `sparse_block_size` positions, chosen by an index branch of
/// `sparse_num_index_heads` x `sparse_index_dim`, on the layers `sparse_attention_freq` marks 1 (the others dense).
#[derive(Default)]
struct BlockSparse {
    top_k: Option<f64>,
    index_heads: Option<f64>,
    index_dim: Option<f64>,
    dense_layers: f64,
}

fn block_sparse_of(c: &Value, layers: f64) -> BlockSparse {
    let Some(cfg) = c.get("sparse_attention_config").filter(|v| v.is_object()) else { return BlockSparse::default() };
    if cfg.get("use_sparse_attention").and_then(Value::as_bool) == Some(false) {
        return BlockSparse::default();
    }
    let field = |k: &str| cfg.get(k).and_then(Value::as_f64);
    let (Some(blocks), Some(size)) = (field("sparse_topk_blocks"), field("sparse_block_size")) else {
        return BlockSparse::default();
    };
    BlockSparse {
        top_k: Some(blocks * size),
        index_heads: field("sparse_num_index_heads"),
        index_dim: field("sparse_index_dim"),
        dense_layers: zeros_of(cfg, "sparse_attention_freq").unwrap_or(0.0).min(layers - 1.0),
    }
}

/// The linear-attention layers a config declares and their geometry.
struct LinearLayers {
    layers: f64,
    /// Recurrent state per layer and sequence, bytes.
    state_bytes: f64,
    /// Widths of the projections: queries and keys (heads x key dim), values (heads x value dim).
    qk_width: f64,
    v_width: f64,
    /// Extra per-layer projections beside q, k, v and the output, per unit of hidden size.
    gate_width: f64,
}

impl LinearLayers {
    const NONE: LinearLayers =
        LinearLayers { layers: 0.0, state_bytes: 0.0, qk_width: 0.0, v_width: 0.0, gate_width: 0.0 };

    /// Parameters of one linear layer: q and k, v and the output projection, and its gates.
    fn params_per_layer(&self, hidden: f64) -> f64 {
        hidden * (2.0 * self.qk_width + 2.0 * self.v_width + self.gate_width)
    }
}

/// Reads linear-attention layers from a config, in the two layouts vLLM serves:
/// - Kimi Delta Attention (`kimi_linear`, GLM-5.3-Flash's `glm5_next`): `linear_attn_config` with `num_heads`,
///   `head_dim` and the layer list `kda_layers` (else `layer_types` entries naming linear attention). The state
///   is `num_heads x head_dim x head_dim` in FP32: vLLM sizes it `(num_heads / tp, head_dim, head_dim)`
///   (`MambaStateShapeCalculator.kda_state_shape`) and keeps it in float32 (`kda_state_dtype`). The gates add
///   an output gate as wide as the values plus two low-rank gates and a per-head beta (`KimiDeltaAttention`).
/// - Gated DeltaNet (`qwen3_next`): `linear_num_value_heads`, `linear_key_head_dim`, `linear_value_head_dim`,
///   `linear_num_key_heads`, and `layer_types` (else every layer but each `full_attention_interval`-th). The
///   state is `value heads x value dim x key dim` at the model's dtype, BF16 (vLLM's `gated_delta_net_state_shape`,
///   and `_mamba_state_dtype` with the default `mamba_ssm_cache_dtype = auto`), or at the config's
///   `mamba_ssm_dtype` when it names float32 (Qwen3.5). The gate `z` is as wide as the values, and `a`, `b` one
///   per value head.
///
/// The short-convolution state (kernel - 1 positions of q, k and v, a few percent of the recurrent state) is
/// left out, as in the shipped cards.
fn linear_layers_of(c: &Value, layers: f64, hidden: f64) -> LinearLayers {
    let typed_linear = c
        .get("layer_types")
        .and_then(Value::as_array)
        .map(|types| types.iter().filter(|t| t.as_str().is_some_and(|t| t.contains("linear"))).count() as f64);
    let field = |obj: &Value, k: &str| obj.get(k).and_then(Value::as_f64);
    if let Some(kda) = c.get("linear_attn_config").filter(|v| v.is_object()) {
        let (Some(heads), Some(dim)) = (field(kda, "num_heads"), field(kda, "head_dim")) else {
            return LinearLayers::NONE;
        };
        let count = |k: &str| kda.get(k).and_then(Value::as_array).map(|l| l.len() as f64);
        // Some releases list only the full-attention layers (the rest are KDA).
        let listed = count("kda_layers").or_else(|| count("full_attn_layers").map(|full| layers - full));
        let n = listed.or(typed_linear).unwrap_or(0.0).min(layers - 1.0).max(0.0);
        let width = heads * dim;
        return LinearLayers {
            layers: n,
            state_bytes: heads * dim * dim * 4.0,
            qk_width: width,
            v_width: width,
            // f_a/f_b and g_a/g_b (hidden -> head_dim -> width, counted per unit of hidden), and b (one per head).
            gate_width: 2.0 * dim + heads + 2.0 * dim * width / hidden.max(1.0),
        };
    }
    let (Some(v_heads), Some(k_dim), Some(v_dim)) =
        (field(c, "linear_num_value_heads"), field(c, "linear_key_head_dim"), field(c, "linear_value_head_dim"))
    else {
        return LinearLayers::NONE;
    };
    let k_heads = field(c, "linear_num_key_heads").unwrap_or(v_heads);
    let n = typed_linear
        .or_else(|| field(c, "full_attention_interval").filter(|i| *i >= 1.0).map(|i| layers - (layers / i).floor()))
        .unwrap_or(0.0)
        .min(layers - 1.0)
        .max(0.0);
    // `mamba_ssm_dtype` (Qwen3.5) names the state's dtype; absent, the model's.
    let state_element = match c.get("mamba_ssm_dtype").and_then(Value::as_str) {
        Some("float32") => 4.0,
        _ => 2.0,
    };
    LinearLayers {
        layers: n,
        state_bytes: v_heads * v_dim * k_dim * state_element,
        qk_width: k_heads * k_dim,
        v_width: v_heads * v_dim,
        gate_width: v_heads * v_dim + 2.0 * v_heads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DeepSeek-V3-shaped config: 671B total, ~37B active, MLA.
    const V3: &str = r#"{"num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128,
        "num_key_value_heads": 128, "vocab_size": 129280, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
        "q_lora_rank": 1536, "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 256,
        "num_experts_per_tok": 8, "n_shared_experts": 1, "intermediate_size": 18432,
        "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "num_nextn_predict_layers": 1}"#;

    #[test]
    fn counts_deepseek_v3_within_a_few_percent() {
        let d = ModelDescription::from_hf_config("v3", V3, 8.0).expect("parse");
        assert!((d.total_params / 671e9 - 1.0).abs() < 0.03, "total {}", d.total_params);
        assert!((d.active_params / 37e9 - 1.0).abs() < 0.06, "active {}", d.active_params);
        let s = d.to_spec().expect("spec");
        assert_eq!(s.kv_bytes_per_token, 61.0 * 576.0 * 2.0);
        assert!(!s.kv_split_under_tp);
        // Its MTP module is recorded but drafts nothing until asked (vLLM's default: no speculative config).
        assert_eq!((s.draft_tokens, s.attention.draft_layers), (0.0, 0.0));
        assert_eq!(d.draft_attention_layers, Some(1.0));
        assert_eq!(s.kv_bytes_held(10.0), 61.0 * 576.0 * 2.0 * 10.0);
        // Turned on, it drafts one token and is one more MLA layer with its own KV.
        let drafting = ModelDescription { draft_tokens: 1.0, ..d.clone() }.to_spec().expect("spec");
        assert_eq!((drafting.draft_tokens, drafting.attention.draft_layers), (1.0, 1.0));
        assert_eq!(drafting.kv_bytes_held(10.0), 62.0 * 576.0 * 2.0 * 10.0);
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = ModelDescription { draft_tokens: bad, ..d.clone() }.to_spec().expect_err("refused");
            assert!(e.contains("draft_tokens"), "{e}");
            let e = ModelDescription { draft_attention_layers: Some(bad), ..d.clone() }.to_spec().expect_err("refused");
            assert!(e.contains("draft_attention_layers"), "{e}");
        }
    }

    #[test]
    fn an_nvfp4_description_keeps_its_other_layers_at_their_own_width() {
        let mut d = ModelDescription::from_hf_config("v3", V3, 4.5).expect("parse");
        let all_fp4 = d.to_spec().expect("spec");
        assert_eq!((all_fp4.compute_bits, all_fp4.dense_compute_bits), (4.0, 4.0));
        d.dense_bits_per_weight = Some(8.0);
        let mixed = d.to_spec().expect("spec");
        assert_eq!((mixed.compute_bits, mixed.dense_compute_bits), (4.0, 8.0));
        assert_eq!(mixed.routed_expert_bytes, all_fp4.routed_expert_bytes);
        let dense_params = d.total_params - all_fp4.routed_expert_bytes * 8.0 / 4.5;
        let grown = mixed.weight_bytes - all_fp4.weight_bytes;
        assert!((grown - dense_params * (8.0 - 4.5) / 8.0).abs() < 1e-3 * grown, "{grown}");
        // The routed experts' share of the active parameters is the same either way (37B active, ~24B routed).
        assert!((mixed.routed_active_params() - all_fp4.routed_active_params()).abs() < 1.0);
        assert!(mixed.routed_active_params() > 0.5 * d.active_params && mixed.routed_active_params() < d.active_params);
        d.dense_bits_per_weight = Some(-1.0);
        assert!(d.to_spec().is_err());
    }

    /// Qwen3-Coder-Next's config.json (huggingface.co/Qwen/Qwen3-Coder-Next; Qwen3-Next-80B-A3B's geometry): 48
    /// layers, every fourth full attention, the rest Gated DeltaNet; 79,674,391,296 parameters, of which
    /// 3,874,929,408 are active with the input embedding (its safetensors headers, as counted in a public test).
    const QWEN3_NEXT: &str = r#"{"model_type": "qwen3_next", "hidden_size": 2048, "num_hidden_layers": 48,
        "vocab_size": 151936, "head_dim": 256, "num_attention_heads": 16, "num_key_value_heads": 2,
        "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
        "linear_num_value_heads": 32, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
        "full_attention_interval": 4, "attn_output_gate": true, "tie_word_embeddings": false}"#;

    /// Kimi-Linear-48B-A3B's config.json (huggingface.co/moonshotai/Kimi-Linear-48B-A3B-Instruct): 27 layers, 20
    /// KDA and 7 MLA (NoPE), 256 experts top-8 plus one shared.
    const KIMI_LINEAR: &str = r#"{"model_type": "kimi_linear", "vocab_size": 163840, "hidden_size": 2304,
        "intermediate_size": 9216, "num_hidden_layers": 27, "num_attention_heads": 32, "num_key_value_heads": 32,
        "tie_word_embeddings": false, "first_k_dense_replace": 1, "moe_intermediate_size": 1024,
        "num_experts": 256, "num_experts_per_token": 8, "num_shared_experts": 1, "q_lora_rank": null,
        "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "mla_use_nope": true, "num_nextn_predict_layers": 0,
        "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27], "head_dim": 128,
            "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
            "num_heads": 32, "short_conv_kernel_size": 4}}"#;

    #[test]
    fn reads_gated_deltanet_layers_and_their_state() {
        let d = ModelDescription::from_hf_config("qwen3-next", QWEN3_NEXT, 16.0).expect("parse");
        assert_eq!(d.linear_attention_layers, Some(36.0));
        // 32 value heads x 128 x 128 at BF16 per layer.
        assert_eq!(d.linear_state_bytes, Some(32.0 * 128.0 * 128.0 * 2.0));
        assert!((d.total_params / 79_674_391_296.0 - 1.0).abs() < 0.01, "total {}", d.total_params);
        // Active here leaves the input embedding out (gathered, not multiplied); the published count has it.
        let active = d.active_params + 151936.0 * 2048.0;
        assert!((active / 3_874_929_408.0 - 1.0).abs() < 0.02, "active {active}");
        let s = d.to_spec().expect("spec");
        // Only the 12 full-attention layers hold KV that grows: 2 x 2 heads x 256 x 2 B each.
        assert_eq!(s.kv_bytes_per_token, 12.0 * 2.0 * 2.0 * 256.0 * 2.0);
        assert_eq!((s.attention.full_layers, s.attention.linear_layers), (12.0, 36.0));
        assert_eq!(s.attention.state_bytes(), 36.0 * 32.0 * 128.0 * 128.0 * 2.0);
        let f32_state =
            QWEN3_NEXT.replace("\"attn_output_gate\"", "\"mamba_ssm_dtype\": \"float32\", \"attn_output_gate\"");
        let d32 = ModelDescription::from_hf_config("qwen3.5-like", &f32_state, 16.0).expect("parse");
        assert_eq!(d32.linear_state_bytes, Some(32.0 * 128.0 * 128.0 * 4.0));
    }

    #[test]
    fn reads_kimi_delta_attention_layers_and_their_state() {
        let d = ModelDescription::from_hf_config("kimi-linear", KIMI_LINEAR, 16.0).expect("parse");
        assert_eq!(d.linear_attention_layers, Some(20.0));
        // 32 heads x 128 x 128 in FP32, as vLLM keeps a KDA state.
        assert_eq!(d.linear_state_bytes, Some(2.0 * 1024.0 * 1024.0));
        assert_eq!(d.experts_per_token, 8.0);
        // Published: 48B total, 3B active (the model's name and card).
        assert!((d.total_params / 48e9 - 1.0).abs() < 0.05, "total {}", d.total_params);
        assert!(d.active_params > 2.0e9 && d.active_params < 3.5e9, "active {}", d.active_params);
        let s = d.to_spec().expect("spec");
        assert_eq!(s.kv_bytes_per_token, 7.0 * (512.0 + 64.0) * 2.0);
        assert_eq!((s.attention.full_layers, s.attention.linear_layers), (7.0, 20.0));
        // A release that lists only the full-attention layers says the same.
        let only_full = KIMI_LINEAR
            .replace("\"kda_layers\": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],", "");
        let d2 = ModelDescription::from_hf_config("kimi-linear", &only_full, 16.0).expect("parse");
        assert_eq!(d2.linear_attention_layers, Some(20.0));
    }

    /// MiniMax-M3's text config as a public port's test quotes it (lablup/mlxcel `test_m3_config_parsing`; the
    /// card `data/models/minimax-m3.json` cites it): block-sparse attention on layers 3-59, dense on 0-2, three
    /// dense MLPs, 128 experts top-4 plus a shared one.
    const MINIMAX_M3: &str = r#"{"text_config": {"hidden_size": 6144, "intermediate_size": 3072,
        "num_hidden_layers": 60, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
        "vocab_size": 200064, "tie_word_embeddings": false, "dense_intermediate_size": 12288,
        "shared_intermediate_size": 3072, "num_local_experts": 128, "num_experts_per_tok": 4, "n_shared_experts": 1,
        "moe_layer_freq": [0,0,0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],
        "sparse_attention_config": {"use_sparse_attention": true, "sparse_index_dim": 128,
            "sparse_num_index_heads": 4, "sparse_topk_blocks": 16, "sparse_block_size": 128,
            "sparse_attention_freq": [0,0,0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}}}"#;

    #[test]
    fn reads_block_sparse_attention_and_per_layer_moe_as_the_minimax_m3_card_derives_them() {
        let d = ModelDescription::from_hf_config("minimax-m3", MINIMAX_M3, 4.5).expect("parse");
        // The card's derivations: 57 MoE layers x 128 experts x 3 x 6,144 x 3,072, and ~428B in all.
        assert_eq!(d.routed_expert_params, Some(57.0 * 128.0 * 3.0 * 6144.0 * 3072.0));
        assert!((d.total_params / 428e9 - 1.0).abs() < 0.01, "total {}", d.total_params);
        assert_eq!((d.sparse_top_k, d.indexer_heads, d.indexer_head_dim), (Some(2048.0), Some(4.0), Some(128.0)));
        // The three dense-attention layers read every position: window layers as long as the context.
        assert_eq!((d.sliding_window, d.sliding_window_layers), (Some(1_048_576.0), Some(3.0)));
        let s = d.to_spec().expect("spec");
        assert_eq!(s.kv_bytes_per_token, 116_736.0);
        assert_eq!((s.attention.full_layers, s.attention.window_layers), (57.0, 3.0));
        // At 8k context the sparse layers read their top 2,048 positions, the dense ones all 8,192.
        let per_layer = s.kv_per_layer();
        let read = s.attention.decode_kv_bytes(per_layer, 8192.0);
        assert_eq!(read, per_layer * (57.0 * 2048.0 + 3.0 * 8192.0) + 128.0 * 57.0 * 8192.0);
    }

    /// Gemma 4 26B-A4B's text config as Transformers' converter writes it (huggingface/transformers
    /// src/transformers/models/gemma4/convert_gemma4_weights.py, `_VARIANT_GEMMA_4_26B_A4B`), with the
    /// Gemma4TextConfig defaults it leaves unset (head_dim 256, vocab_size 262,144; global_head_dim 512 left out,
    /// as the config class supplies it).
    const GEMMA_4_26B_A4B: &str = r#"{"model_type": "gemma4", "text_config": {"model_type": "gemma4_text",
        "num_hidden_layers": 30, "hidden_size": 2816, "num_attention_heads": 16, "num_key_value_heads": 8,
        "num_global_key_value_heads": 2, "head_dim": 256, "sliding_window": 1024, "attention_k_eq_v": true,
        "layer_types": ["sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
            "sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
            "sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
            "sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention",
            "sliding_attention","sliding_attention","sliding_attention","sliding_attention","sliding_attention","full_attention"],
        "num_experts": 128, "top_k_experts": 8, "moe_intermediate_size": 704, "intermediate_size": 2112,
        "vocab_size": 262144, "tie_word_embeddings": true, "max_position_embeddings": 262144}}"#;

    #[test]
    fn reads_gemma_4_global_layers_apart_from_its_sliding_ones() {
        let d = ModelDescription::from_hf_config("gemma-4-26b-a4b", GEMMA_4_26B_A4B, 8.0).expect("parse");
        // The full (global) layers: 2 KV heads of 512; the 25 sliding layers: 8 of 256 over their last 1,024.
        assert_eq!((d.kv_heads, d.head_dim), (Some(2.0), Some(512.0)));
        assert_eq!((d.window_kv_heads, d.window_head_dim), (Some(8.0), Some(256.0)));
        assert_eq!((d.sliding_window, d.sliding_window_layers), (Some(1024.0), Some(25.0)));
        // kubis.ai states 25.2B total and 3.8B active for this model (external-sweeps.md S1b).
        assert!((d.total_params / 25.2e9 - 1.0).abs() < 0.01, "total {}", d.total_params);
        assert!((d.active_params / 3.8e9 - 1.0).abs() < 0.01, "active {}", d.active_params);
        let mut d = d;
        d.kv_bytes_per_element = 1.0; // FP8 KV, as the kubis.ai runs
        let s = d.to_spec().expect("spec");
        assert_eq!(s.kv_bytes_per_token, 5.0 * 2.0 * 2.0 * 512.0);
        assert_eq!((s.attention.window_kv_scale, s.attention.window_flops_scale), (2.0, 0.5));
        // At 1,152 positions: the global layers read all of them, the sliding ones their window.
        let read = s.attention.decode_kv_bytes(s.kv_per_layer(), 1152.0);
        assert_eq!(read, 5.0 * 2048.0 * 1152.0 + 25.0 * 4096.0 * 1024.0);
        assert_eq!(s.attention.kv_storage_bytes(s.kv_per_layer(), 1152.0), read);
    }

    #[test]
    fn linear_layers_need_their_state_and_a_full_layer_left() {
        let mut d = ModelDescription::from_hf_config("kimi-linear", KIMI_LINEAR, 16.0).expect("parse");
        d.linear_state_bytes = None;
        assert!(d.to_spec().unwrap_err().contains("linear_state_bytes"));
        d.linear_state_bytes = Some(1e6);
        d.linear_attention_layers = Some(27.0);
        assert!(d.to_spec().unwrap_err().contains("full-attention layer"));
        d.linear_state_bytes = Some(-1.0);
        d.linear_attention_layers = Some(20.0);
        assert!(d.to_spec().is_err());
    }

    #[test]
    fn rejects_nonsense() {
        assert!(ModelDescription::from_hf_config("x", "{}", 4.5).is_err());
        assert!(ModelDescription::from_hf_config("x", "not json", 4.5).is_err());
        let mut d = ModelDescription::from_hf_config("v3", V3, 8.0).expect("parse");
        d.active_params = d.total_params * 2.0;
        assert!(d.to_spec().is_err());
    }
}

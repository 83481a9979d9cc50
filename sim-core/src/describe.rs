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
    #[serde(default)]
    pub draft_tokens: f64,
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
    /// Sparse attention: positions read per query, and the indexer's heads and head dimension.
    #[serde(default)]
    pub sparse_top_k: Option<f64>,
    #[serde(default)]
    pub indexer_heads: Option<f64>,
    #[serde(default)]
    pub indexer_head_dim: Option<f64>,
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
        let full_layers = self.layers - window_layers;
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
            attention.full_layers = full_layers;
        }
        if let Some(k) = self.sparse_top_k.filter(|k| *k > 0.0) {
            attention.top_k = k;
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
            layers: self.layers,
            hidden_size: self.hidden_size,
            routed_experts: self.routed_experts,
            experts_per_token: self.experts_per_token,
            compute_bits: compute_bits_of(self.bits_per_weight),
            dense_compute_bits: compute_bits_of(dense_bits),
            kv_bytes_per_token: kv_per_token,
            kv_split_under_tp: self.attention == "gqa",
            pinned_cpu_bytes: 0.0,
            pinned_read_bytes_per_token: 0.0,
            // A dozen numbers do not say whether the embedding is tied to the LM head: count it as read.
            input_embedding_bytes: 0.0,
            draft_tokens: self.draft_tokens,
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
        let vocab = num(&["vocab_size"]).unwrap_or(150_000.0);
        let kv_lora = num(&["kv_lora_rank"]);
        let rope = num(&["qk_rope_head_dim"]);
        let experts = num(&["n_routed_experts", "num_experts", "num_local_experts"]).unwrap_or(0.0);
        let top_k = num(&["num_experts_per_tok", "moe_top_k", "top_k"]).unwrap_or(0.0);
        let shared = num(&["n_shared_experts", "num_shared_experts"]).unwrap_or(0.0);
        let ffn = num(&["intermediate_size", "ffn_hidden_size"]).unwrap_or(4.0 * hidden);
        let moe_ffn = num(&["moe_intermediate_size", "expert_intermediate_size"]).unwrap_or(ffn);
        let dense_layers = if experts > 0.0 { num(&["first_k_dense_replace"]).unwrap_or(0.0) } else { layers };
        let moe_layers = layers - dense_layers;
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
            _ => ("gqa", hidden * heads * head_dim * 2.0 + 2.0 * hidden * kv_heads * head_dim),
        };
        let expert = 3.0 * hidden * moe_ffn;
        let dense_mlp = 3.0 * hidden * ffn;
        let embed = vocab
            * hidden
            * if c.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(false) { 1.0 } else { 2.0 };
        let routed = moe_layers * experts * expert;
        let total = embed + layers * attn_params + dense_layers * dense_mlp + moe_layers * shared * expert + routed;
        let active =
            vocab * hidden + layers * attn_params + dense_layers * dense_mlp + moe_layers * (top_k + shared) * expert;
        let draft = num(&["num_nextn_predict_layers"]).unwrap_or(0.0);
        // Sliding-window layers: `layer_types` lists them (GPT-OSS, Gemma); without it, a `sliding_window`
        // alone does not say how many layers use it, so none are counted.
        let window = num(&["sliding_window"]).filter(|w| *w > 0.0);
        let window_layers = c
            .get("layer_types")
            .and_then(Value::as_array)
            .map(|types| types.iter().filter(|t| t.as_str().is_some_and(|t| t.contains("sliding"))).count() as f64);
        Ok(ModelDescription {
            id: id.to_string(),
            name: c.get("_name_or_path").and_then(Value::as_str).map(str::to_string),
            total_params: total,
            active_params: active,
            layers,
            hidden_size: hidden,
            attention: attention.to_string(),
            kv_heads: (attention == "gqa").then_some(kv_heads),
            head_dim: (attention == "gqa").then_some(head_dim),
            kv_lora_rank: kv_lora.filter(|_| attention == "mla"),
            rope_dim: rope.filter(|_| attention == "mla"),
            kv_bytes_per_element: 2.0,
            routed_experts: experts,
            experts_per_token: top_k,
            routed_expert_params: (experts > 0.0).then_some(routed),
            bits_per_weight,
            dense_bits_per_weight: None,
            // A config with MTP layers drafts one token per layer unless the engine is told otherwise.
            draft_tokens: draft,
            draft_acceptance: 0.7,
            attention_heads: Some(heads),
            sliding_window: window.filter(|_| window_layers.unwrap_or(0.0) > 0.0),
            sliding_window_layers: window_layers.filter(|n| *n > 0.0 && window.is_some()),
            sparse_top_k: num(&["index_topk"]),
            indexer_heads: num(&["index_n_heads"]),
            indexer_head_dim: num(&["index_head_dim"]),
        })
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

    #[test]
    fn rejects_nonsense() {
        assert!(ModelDescription::from_hf_config("x", "{}", 4.5).is_err());
        assert!(ModelDescription::from_hf_config("x", "not json", 4.5).is_err());
        let mut d = ModelDescription::from_hf_config("v3", V3, 8.0).expect("parse");
        d.active_params = d.total_params * 2.0;
        assert!(d.to_spec().is_err());
    }
}

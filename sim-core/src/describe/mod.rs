//! Describing any model with a handful of numbers (or a Hugging Face `config.json`) instead of a full card.
//!
//! Parameter counts from a config follow the standard transformer layout: attention (GQA or MLA), a dense MLP
//! in the first layers, routed plus shared experts in the rest, and the embedding and LM head. Every number a
//! description derives is labelled as derived from the config in the planner's output.

mod hf_config;
mod quantization;
#[cfg(test)]
mod tests;

pub use quantization::Quantization;

use crate::spec::ModelSpec;
use serde::{Deserialize, Serialize};

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
    /// Vocabulary size: the LM head is vocabulary x hidden parameters, part of `active_params`; it sizes an MTP
    /// drafter's LM head per draft pass. Absent: 150,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab_size: Option<f64>,
    /// Parameters of an input embedding table apart from the LM head (vocabulary x hidden where the config does
    /// not tie them), stored at the dense layers' width: resident, but a step gathers its rows instead of
    /// streaming it. Absent: none apart (tied, or not known), and every dense byte is streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_embedding_params: Option<f64>,
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
    /// MLA's per-head key (non-rotary part) and value dimensions, which prefill's uncompressed attention
    /// multiplies (config.json `qk_nope_head_dim`, `v_head_dim`). Absent: DeepSeek-V3's 128 and 128.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qk_nope_head_dim: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_head_dim: Option<f64>,
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
    /// One MTP module's parameters (config.json's `num_nextn_predict_layers` modules, counted by
    /// `draft_attention_layers`): its routed experts, and the rest (attention, shared experts or dense MLP, the
    /// projection joining the embedding to the hidden state) apart from the embedding and LM head it shares
    /// with the model. Resident and read by each draft pass only when the model drafts. Absent: a draft pass is
    /// priced as one average layer plus the LM head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtp_routed_expert_params: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtp_dense_params: Option<f64>,
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
                    let nope = self.qk_nope_head_dim.unwrap_or(crate::spec::MLA_NOPE_HEAD_DIM);
                    let v = self.v_head_dim.unwrap_or(crate::spec::MLA_V_HEAD_DIM);
                    attention.prefill_flops_per_position_layer = 2.0 * q * (nope + p + v);
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
        let drafter = self.drafter(bytes, dense_bytes);
        Ok(ModelSpec {
            id: self.id.clone(),
            name: self.name.clone().unwrap_or_else(|| self.id.clone()),
            weight_bytes: experts * bytes + (self.total_params - experts) * dense_bytes + drafter.resident_bytes,
            routed_expert_bytes: experts * bytes,
            active_params: self.active_params,
            prefill_active_share: 1.0,
            layers: self.layers,
            hidden_size: self.hidden_size,
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
            input_embedding_bytes: self.input_embedding_params.map_or(0.0, |p| p.max(0.0) * dense_bytes),
            draft_tokens: self.draft_tokens,
            draft_passes: 0.0,
            // The drafter's attention layers (an MTP module's), else one.
            draft_pass_layers: 0.0,
            draft_acceptance: self.draft_acceptance,
            draft_pass_bytes: drafter.pass_bytes,
            draft_expert_bytes: drafter.expert_bytes,
            attention,
            host_pin: Default::default(),
        })
    }
}

/// What drafting adds to a described model's spec (`ModelDescription::drafter`).
struct Drafter {
    /// Weights resident only because the model drafts (the MTP modules).
    resident_bytes: f64,
    /// Bytes one draft pass reads besides its routed experts, and the routed-expert bytes of its MoE layer
    /// (read at the distinct-expert rate of the pass's tokens).
    pass_bytes: f64,
    expert_bytes: f64,
}

impl ModelDescription {
    /// The drafter's weights when the model drafts. With MTP modules described (`mtp_dense_params`), vLLM loads
    /// them beside the model only under a speculative config and each draft pass runs one module: its dense
    /// weights and the LM head it shares with the model (the head's logits are read again each pass; vLLM's
    /// MTP proposer shares the target's embedding and head, so they are not resident twice), plus its routed
    /// experts by the distinct-expert formula. Without them, one average layer's active weights and the LM head.
    fn drafter(&self, bytes: f64, dense_bytes: f64) -> Drafter {
        if self.draft_tokens <= 0.0 {
            return Drafter { resident_bytes: 0.0, pass_bytes: 0.0, expert_bytes: 0.0 };
        }
        let lm_head = self.hidden_size * self.vocab_size.unwrap_or(150_000.0);
        match self.mtp_dense_params {
            Some(dense) => {
                let routed = self.mtp_routed_expert_params.unwrap_or(0.0).max(0.0);
                let modules = self.draft_attention_layers.unwrap_or(1.0).max(1.0);
                Drafter {
                    resident_bytes: modules * (dense.max(0.0) * dense_bytes + routed * bytes),
                    pass_bytes: (dense.max(0.0) + lm_head) * dense_bytes,
                    expert_bytes: routed * bytes,
                }
            }
            None => {
                let per_layer_active = (self.active_params - 2.0 * lm_head).max(self.active_params * 0.5) / self.layers;
                Drafter { resident_bytes: 0.0, pass_bytes: (per_layer_active + lm_head) * bytes, expert_bytes: 0.0 }
            }
        }
    }
}

//! Reading a Hugging Face `config.json` into a `ModelDescription`: the transformer layout (attention, dense and
//! MoE MLPs, embeddings), sliding windows, block-sparse and linear attention, MTP modules and quantisation.

use super::quantization::{quantization_of, refuse_non_decoder};
use super::ModelDescription;
use serde_json::Value;

impl ModelDescription {
    /// Reads the fields the simulator needs from a Hugging Face style `config.json`, every weight at
    /// `bits_per_weight` whatever the config's `quantization_config` says (`--bits`).
    pub fn from_hf_config(id: &str, text: &str, bits_per_weight: f64) -> Result<ModelDescription, String> {
        Self::from_hf_config_with(id, text, Some(bits_per_weight))
    }

    /// `from_hf_config` with the weights' bits from the config's `quantization_config` (`Quantization`) unless
    /// `bits_per_weight` overrides them; a config without one is a 16-bit checkpoint. A config that is not a
    /// decoder's is refused, naming the field that says so.
    pub fn from_hf_config_with(id: &str, text: &str, bits_per_weight: Option<f64>) -> Result<ModelDescription, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("config.json is not valid JSON: {e}"))?;
        refuse_non_decoder(&v)?;
        let quantization = match bits_per_weight {
            Some(_) => None,
            None => quantization_of(&v)?,
        };
        let bits_per_weight = bits_per_weight.or(quantization.map(|q| q.bits)).unwrap_or(16.0);
        let dense_bits_per_weight = quantization.and_then(|q| q.dense_bits);
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
        let family = Family::of(&v, c);
        let vocab = num(&["vocab_size"]).or(family.vocab).unwrap_or(150_000.0);
        // Tied where the config (or its outer multimodal config) says so, else the family's class default.
        let tied =
            [c, &v].iter().find_map(|x| x.get("tie_word_embeddings").and_then(Value::as_bool)).unwrap_or(family.tied);
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
                let nope = num(&["qk_nope_head_dim"]).unwrap_or(crate::spec::MLA_NOPE_HEAD_DIM);
                let v_dim = num(&["v_head_dim"]).unwrap_or(crate::spec::MLA_V_HEAD_DIM);
                // Queries through a low-rank `q_lora_rank` (q_a_proj, q_b_proj), or with `q_lora_rank: null`
                // (DeepSeek-V2-Lite, Kimi-Linear) one direct q_proj of hidden x heads x qk_head_dim.
                let q_proj = match num(&["q_lora_rank"]) {
                    Some(q_lora) => hidden * q_lora + q_lora * heads * (nope + p),
                    None => hidden * heads * (nope + p),
                };
                let params = q_proj + hidden * (r + p) + r * heads * (nope + v_dim) + heads * v_dim * hidden;
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
        let embed = vocab * hidden * if tied { 1.0 } else { 2.0 };
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
        // Sliding-window layers: `layer_types` lists them (GPT-OSS, Gemma 4); Gemma 2 and 3 configs often give only
        // `sliding_window`, their classes placing the window layers (`Family::window_layers`); any other
        // `sliding_window` alone does not say how many layers use it, so none are counted.
        let mut window = num(&["sliding_window"]).or(family.window).filter(|w| *w > 0.0);
        let mut window_layers = c
            .get("layer_types")
            .and_then(Value::as_array)
            .map(|types| types.iter().filter(|t| t.as_str().is_some_and(|t| t.contains("sliding"))).count() as f64)
            .or_else(|| family.window_layers(layers, num(&["sliding_window_pattern"])));
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
            input_embedding_params: (!tied).then_some(vocab * hidden),
            attention: attention.to_string(),
            kv_heads: (attention == "gqa").then_some(full_kv_heads),
            head_dim: (attention == "gqa").then_some(full_head_dim),
            kv_lora_rank: kv_lora.filter(|_| attention == "mla"),
            rope_dim: rope.filter(|_| attention == "mla"),
            qk_nope_head_dim: num(&["qk_nope_head_dim"]).filter(|_| attention == "mla"),
            v_head_dim: num(&["v_head_dim"]).filter(|_| attention == "mla"),
            kv_bytes_per_element: 2.0,
            routed_experts: experts,
            experts_per_token: top_k,
            routed_expert_params: (experts > 0.0).then_some(routed),
            bits_per_weight,
            dense_bits_per_weight,
            // MTP layers in a config say the model can draft, not that the engine does: vLLM runs a drafter only
            // when its speculative config names one (`--speculative-config '{"method": "mtp",
            // "num_speculative_tokens": 1}'`, docs.vllm.ai features/speculative_decoding/mtp), so a described
            // model decodes plainly until a caller sets `draft_tokens` (`describe-model --draft-tokens`).
            draft_tokens: 0.0,
            // Each MTP module is a decoder layer with the model's attention and its own KV cache: recorded, so a
            // caller who turns drafting on drafts with them.
            draft_attention_layers: (draft > 0.0).then_some(draft),
            // An MTP module is one decoder layer of the model's own kind (DeepSeek-V3's layer 61: MLA and an MoE
            // layer of every routed expert and the shared one) plus `eh_proj`, joining the embedding and the hidden
            // state (2 x hidden x hidden); its embedding and head are the model's.
            mtp_routed_expert_params: (draft > 0.0 && experts > 0.0).then_some(experts * expert),
            mtp_dense_params: (draft > 0.0).then(|| {
                let mlp = if experts > 0.0 { shared_mlp } else { dense_mlp };
                attn_params + mlp + 2.0 * hidden * hidden
            }),
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

/// What a config family's Transformers class supplies when its config.json leaves a field out: the vocabulary,
/// whether the LM head is tied to the embedding, the sliding window, and which layers slide.
/// - Gemma 2 (`Gemma2Config`): vocab_size 256,000, tied, sliding_window 4,096, every other layer sliding
///   (`layer_types`: sliding where `(i + 1) % 2`, i.e. layers 0, 2, 4, ...).
/// - Gemma 3 (`Gemma3TextConfig`): vocab_size 262,208, tied, sliding_window 4,096, every
///   `sliding_window_pattern`-th layer (6 by default) global and the rest sliding (`(i + 1) % pattern`).
/// - Gemma 4 (`Gemma4TextConfig`): vocab_size 262,144, tied; its configs list `layer_types`.
struct Family {
    vocab: Option<f64>,
    tied: bool,
    window: Option<f64>,
    /// Every n-th layer attends globally, the rest slide (0: the family does not place window layers).
    global_every: f64,
}

impl Family {
    fn of(outer: &Value, c: &Value) -> Family {
        let types = [c, outer].map(|x| x.get("model_type").and_then(Value::as_str).unwrap_or(""));
        let is = |prefix: &str| types.iter().any(|t| t.starts_with(prefix));
        if is("gemma4") {
            Family { vocab: Some(262_144.0), tied: true, window: None, global_every: 0.0 }
        } else if is("gemma3") {
            Family { vocab: Some(262_208.0), tied: true, window: Some(4096.0), global_every: 6.0 }
        } else if is("gemma2") {
            Family { vocab: Some(256_000.0), tied: true, window: Some(4096.0), global_every: 2.0 }
        } else {
            Family { vocab: None, tied: false, window: None, global_every: 0.0 }
        }
    }

    /// Sliding layers of `layers` where the config lists none: all but every `pattern`-th (the config's
    /// `sliding_window_pattern`, else the family's), counting from the first.
    fn window_layers(&self, layers: f64, pattern: Option<f64>) -> Option<f64> {
        let every =
            if self.global_every > 0.0 { pattern.filter(|p| *p >= 1.0).unwrap_or(self.global_every) } else { 0.0 };
        (every > 0.0).then(|| layers - (layers / every).floor())
    }
}

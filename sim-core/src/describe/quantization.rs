//! The weight format a checkpoint's `quantization_config` states, and whether a config is a decoder at all.
//!
//! Bits per weight include the block scales a format stores beside its values, as the cards count them:
//! ```text
//!   fp8 (quant_method fp8, modelopt FP8)              8      (one scale per 128 x 128 block: negligible)
//!   NVFP4 (modelopt quant_algo NVFP4, or a 4-bit      4.5    (an FP8 scale per 16 values)
//!     float group of 16 in compressed-tensors)
//!   MXFP4 (quant_method mxfp4, GPT-OSS)               4.25   (an 8-bit scale per 32)
//!   integer groups (AWQ, GPTQ, compressed-tensors     bits + 16 / group_size (a 16-bit scale per group)
//!     int4/int8 with group_size)
//! ```
//! A format that leaves the attention out (GPT-OSS's `modules_to_not_convert`, modelopt's `exclude_modules`,
//! compressed-tensors' `ignore` naming attention layers) keeps the other layers at the checkpoint's 16 bits:
//! `dense_bits` 16. The LM head alone left out (every format leaves it) changes nothing the description counts.

use serde_json::Value;

/// Bits per stored weight a `quantization_config` gives the weights it quantises, and the other layers' bits
/// where it leaves attention at 16 (`None`: every layer at `bits`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantization {
    pub bits: f64,
    pub dense_bits: Option<f64>,
}

/// The quantisation `config.json` states (`quantization_config`, or a modelopt `quantization` block), `None`
/// where it states none (the checkpoint's own 16 bits). A method it cannot read is refused by name, so a
/// caller passes `--bits` rather than getting a 16-bit answer for a quantised checkpoint.
pub fn quantization_of(v: &Value) -> Result<Option<Quantization>, String> {
    let Some(q) = ["quantization_config", "quantization"].iter().find_map(|k| v.get(*k).filter(|q| q.is_object()))
    else {
        return Ok(None);
    };
    let s = |k: &str| q.get(k).and_then(Value::as_str).map(str::to_ascii_lowercase);
    let n = |x: &Value, k: &str| x.get(k).and_then(Value::as_f64);
    let dense_bits = leaves_attention_out(q).then_some(16.0);
    let method = s("quant_method").unwrap_or_default();
    let bits = match (method.as_str(), s("quant_algo").as_deref()) {
        (_, Some("nvfp4")) => 4.5,
        (_, Some("fp8")) | ("fp8", _) => 8.0,
        ("mxfp4", _) => 4.25,
        ("awq" | "gptq", _) => {
            let bits = n(q, "bits")
                .or_else(|| n(q, "w_bit"))
                .ok_or_else(|| format!("`quantization_config` ({method}) gives no `bits`; pass --bits"))?;
            bits + group_scale_bits(n(q, "group_size").or_else(|| n(q, "q_group_size")))
        }
        ("compressed-tensors", _) => compressed_tensors_bits(q)?,
        (other, algo) => {
            return Err(format!(
                "`quantization_config` names quant_method `{other}`{} that describe cannot read (it reads fp8, \
                 compressed-tensors, modelopt NVFP4/FP8, mxfp4, awq, gptq); pass --bits",
                algo.map(|a| format!(" (quant_algo `{a}`)")).unwrap_or_default()
            ))
        }
    };
    Ok(Some(Quantization { bits, dense_bits }))
}

/// A 16-bit scale per group of `group_size` weights, in bits per weight (none without groups: per-channel or
/// per-tensor scales are negligible).
fn group_scale_bits(group_size: Option<f64>) -> f64 {
    match group_size {
        Some(g) if g > 0.0 => 16.0 / g,
        _ => 0.0,
    }
}

/// compressed-tensors: the widest weights of its `config_groups` (`weights.num_bits`, `weights.type`,
/// `weights.group_size`): a 4-bit float group of 16 is NVFP4 (an FP8 scale per 16: 4.5), an integer group
/// adds its 16-bit scale.
fn compressed_tensors_bits(q: &Value) -> Result<f64, String> {
    let groups = q.get("config_groups").and_then(Value::as_object).into_iter().flatten();
    let bits = groups
        .filter_map(|(_, g)| g.get("weights").filter(|w| w.is_object()))
        .filter_map(|w| {
            let bits = w.get("num_bits").and_then(Value::as_f64)?;
            let float = w.get("type").and_then(Value::as_str) == Some("float");
            let group = w.get("group_size").and_then(Value::as_f64);
            Some(if float && bits <= 4.0 { bits + 8.0 / group.unwrap_or(16.0) } else { bits + group_scale_bits(group) })
        })
        .fold(None, |acc: Option<f64>, b| Some(acc.map_or(b, |a| a.max(b))));
    bits.ok_or_else(|| {
        "`quantization_config` (compressed-tensors) has no config_groups weights num_bits; pass --bits".into()
    })
}

/// Whether the format's list of unquantised modules names attention layers.
fn leaves_attention_out(q: &Value) -> bool {
    ["modules_to_not_convert", "exclude_modules", "ignore"].iter().any(|k| {
        q.get(*k).and_then(Value::as_array).is_some_and(|l| {
            l.iter().filter_map(Value::as_str).any(|m| m.contains("self_attn") || m.contains("attention"))
        })
    })
}

/// Model types of encoder-only, encoder-decoder and vision or audio models: configs the simulator of a decoder's
/// serving cannot describe.
const NOT_DECODERS: &[&str] = &[
    "albert",
    "bart",
    "beit",
    "bert",
    "camembert",
    "clip",
    "clip_vision_model",
    "convnext",
    "deberta",
    "deberta-v2",
    "deit",
    "detr",
    "dinov2",
    "distilbert",
    "electra",
    "hubert",
    "layoutlm",
    "mpnet",
    "mt5",
    "resnet",
    "roberta",
    "sam",
    "segformer",
    "siglip",
    "siglip_vision_model",
    "swin",
    "t5",
    "vit",
    "wav2vec2",
    "whisper",
    "xlm-roberta",
];

/// Heads of `architectures` entries that are not a decoder's (a causal LM ends `ForCausalLM`, `LMHeadModel` or,
/// multimodal, `ForConditionalGeneration`).
const ENCODER_HEADS: &[&str] = &[
    "ForMaskedLM",
    "ForSequenceClassification",
    "ForTokenClassification",
    "ForQuestionAnswering",
    "ForImageClassification",
    "ForPreTraining",
    "ForMultipleChoice",
    "ForNextSentencePrediction",
    "ForSemanticSegmentation",
    "ForObjectDetection",
    "ForAudioClassification",
    "ForCTC",
    "ForMaskedImageModeling",
];

/// Refuses a config that is not a decoder's, naming the field that says so: `is_encoder_decoder` or `is_decoder`
/// stated, a `model_type` of an encoder or vision model, or `architectures` naming only encoder heads.
pub fn refuse_non_decoder(v: &Value) -> Result<(), String> {
    let hint = "describe reads decoder-only language models (a `...ForCausalLM` config.json, or a multimodal one \
                with a `text_config`)";
    if v.get("is_encoder_decoder").and_then(Value::as_bool) == Some(true) {
        return Err(format!("`is_encoder_decoder` is true: an encoder-decoder model; {hint}"));
    }
    let text = v.get("text_config").filter(|t| t.is_object());
    if text.is_none() && v.get("is_decoder").and_then(Value::as_bool) == Some(false) {
        return Err(format!("`is_decoder` is false; {hint}"));
    }
    if let Some(t) = v.get("model_type").and_then(Value::as_str).filter(|t| NOT_DECODERS.contains(t)) {
        return Err(format!("`model_type` is `{t}`, an encoder or vision model; {hint}"));
    }
    let archs: Vec<&str> =
        v.get("architectures").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    // A bare `...Model` is not judged: some decoders name only their base class (THUDM's `ChatGLMModel`).
    let encoder = |a: &&str| ENCODER_HEADS.iter().any(|h| a.ends_with(h));
    if !archs.is_empty() && text.is_none() && archs.iter().all(encoder) {
        return Err(format!("`architectures` names {}, not a causal language model; {hint}", archs.join(", ")));
    }
    Ok(())
}

//! Descriptions from public configs (DeepSeek-V3, Qwen3-Next, Kimi-Linear, MiniMax-M3, Gemma 2/3/4, quantised
//! checkpoints) against their published counts, and the refusals.

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

/// Gemma-3-27B-IT's config.json (huggingface.co/google/gemma-3-27b-it) as published: a multimodal config whose
/// text_config gives `sliding_window` but neither the layer pattern, the vocabulary nor the tying, which
/// Gemma3TextConfig supplies (every 6th layer global, vocab_size 262,208, tied embeddings).
const GEMMA_3_27B: &str = r#"{"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "model_type": "gemma3_text",
        "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
        "query_pre_attn_scalar": 168, "sliding_window": 1024},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152}}"#;

#[test]
fn reads_gemma_3_windows_from_its_pattern_and_its_class_defaults() {
    let d = ModelDescription::from_hf_config("gemma-3-27b", GEMMA_3_27B, 16.0).expect("parse");
    // 62 layers, every 6th global: 10 global, 52 sliding over 1,024 positions.
    assert_eq!((d.sliding_window, d.sliding_window_layers), (Some(1024.0), Some(52.0)));
    assert_eq!(d.vocab_size, Some(262_208.0));
    let s = d.to_spec().expect("spec");
    assert_eq!((s.attention.full_layers, s.attention.window_layers), (10.0, 52.0));
    // At 8k: 1.11 GB of KV a sequence (every layer global would be 4.16 GB).
    let held = s.kv_bytes_held(8192.0);
    let want = 2.0 * 16.0 * 128.0 * 2.0 * (10.0 * 8192.0 + 52.0 * 1024.0);
    assert_eq!(held, want);
    assert!((held / 1e9 - 1.11).abs() < 0.01, "{held}");
    // Tied: one 262,208 x 5,376 table; Google states 27B for the family's largest (the text model ~27.0B).
    assert!((d.total_params / 27.0e9 - 1.0).abs() < 0.03, "total {}", d.total_params);
    // A config that names its own pattern keeps it.
    let every_4th =
        GEMMA_3_27B.replace("\"sliding_window\": 1024", "\"sliding_window\": 1024, \"sliding_window_pattern\": 4");
    let d4 = ModelDescription::from_hf_config("g", &every_4th, 16.0).expect("parse");
    assert_eq!(d4.sliding_window_layers, Some(62.0 - 15.0));
}

/// Gemma-2-9B's config.json (huggingface.co/google/gemma-2-9b): layers alternate sliding and global without a
/// `layer_types` list (Gemma2Config: sliding on even layers).
const GEMMA_2_9B: &str = r#"{"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "head_dim": 256,
    "hidden_size": 3584, "intermediate_size": 14336, "num_attention_heads": 16, "num_hidden_layers": 42,
    "num_key_value_heads": 8, "sliding_window": 4096, "vocab_size": 256000}"#;

#[test]
fn gemma_2_alternates_sliding_and_global_layers() {
    let d = ModelDescription::from_hf_config("gemma-2-9b", GEMMA_2_9B, 16.0).expect("parse");
    assert_eq!((d.sliding_window, d.sliding_window_layers), (Some(4096.0), Some(21.0)));
    // Tied by the class default: 9.24B parameters (Google's model card: 9B; the safetensors 9,241,705,984).
    assert!((d.total_params / 9.24e9 - 1.0).abs() < 0.02, "total {}", d.total_params);
}

/// Llama-3-8B's config.json (huggingface.co/meta-llama/Meta-Llama-3-8B): untied embeddings.
const LLAMA_3_8B: &str = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "tie_word_embeddings": false, "vocab_size": 128256, "torch_dtype": "bfloat16"}"#;

#[test]
fn an_untied_input_embedding_is_resident_but_gathered() {
    let d = ModelDescription::from_hf_config("llama-3-8b", LLAMA_3_8B, 16.0).expect("parse");
    let s = d.to_spec().expect("spec");
    // vocab x hidden x 2 bytes: 1.05 GB the step gathers rows of instead of streaming.
    assert_eq!(s.input_embedding_bytes, 128256.0 * 4096.0 * 2.0);
    assert!((d.total_params / 8.03e9 - 1.0).abs() < 0.01, "total {}", d.total_params);
    // At 8 bits the table is stored at the dense layers' width.
    let s8 = ModelDescription::from_hf_config("llama-3-8b", LLAMA_3_8B, 8.0).and_then(|d| d.to_spec()).expect("spec");
    assert_eq!(s8.input_embedding_bytes, 128256.0 * 4096.0);
    // Tied: the table is the LM head, streamed every step; none apart.
    let tied = LLAMA_3_8B.replace("\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true");
    let t = ModelDescription::from_hf_config("t", &tied, 16.0).and_then(|d| d.to_spec()).expect("spec");
    assert_eq!(t.input_embedding_bytes, 0.0);
}

#[test]
fn mla_without_a_query_lora_projects_queries_directly_and_prefills_at_its_own_head_dims() {
    // Kimi-Linear (q_lora_rank null): its 7 MLA layers' q_proj is 2,304 x 32 x 192, not 2,304 x 2,304 plus
    // 2,304 x 32 x 192.
    let d = ModelDescription::from_hf_config("kimi-linear", KIMI_LINEAR, 16.0).expect("parse");
    let with_lora = KIMI_LINEAR.replace("\"q_lora_rank\": null", "\"q_lora_rank\": 2304");
    let l = ModelDescription::from_hf_config("k", &with_lora, 16.0).expect("parse");
    assert_eq!(l.total_params - d.total_params, 7.0 * 2304.0 * 2304.0);
    // Prefill attention at the config's head dims: 192 + 64 + 192 per head, not 128 + 64 + 128.
    let wide =
        V3.replace("\"qk_nope_head_dim\": 128, \"v_head_dim\": 128", "\"qk_nope_head_dim\": 192, \"v_head_dim\": 192");
    let s = ModelDescription::from_hf_config("w", &wide, 8.0).and_then(|d| d.to_spec()).expect("spec");
    assert_eq!(s.attention.prefill_flops_per_position_layer, 2.0 * 128.0 * (192.0 + 64.0 + 192.0));
    let s = ModelDescription::from_hf_config("v3", V3, 8.0).and_then(|d| d.to_spec()).expect("spec");
    assert_eq!(s.attention.prefill_flops_per_position_layer, 2.0 * 128.0 * (128.0 + 64.0 + 128.0));
}

#[test]
fn an_mtp_drafter_on_an_moe_model_reads_its_experts_and_is_resident() {
    // DeepSeek-V3 at 8 bits drafting one token: its MTP module (MLA, 256 routed experts of 3 x 7,168 x 2,048 and
    // a shared one, eh_proj) is ~11.6 GB more in HBM; a pass at 64 sequences touches 87% of its experts: ~11 GB
    // with the 129,280-row LM head, where a dense pass was priced at 1.6 GB.
    let d = ModelDescription::from_hf_config("v3", V3, 8.0).expect("parse");
    let plain = d.to_spec().expect("spec");
    let s = ModelDescription { draft_tokens: 1.0, ..d.clone() }.to_spec().expect("spec");
    let module = s.weight_bytes - plain.weight_bytes;
    assert!((module / 1e9 - 11.6).abs() < 0.2, "{module}");
    assert_eq!(s.draft_expert_bytes, 256.0 * 3.0 * 7168.0 * 2048.0);
    let touched = 1.0 - (1.0 - 8.0f64 / 256.0).powi(64);
    let pass = s.draft_pass_bytes + s.draft_expert_bytes * touched;
    assert!((pass / 1e9 - 11.0).abs() < 0.5, "{pass}");
    assert!(s.draft_pass_bytes > 129280.0 * 7168.0, "the LM head at the config's vocabulary");
    // A dense model without MTP layers keeps the average-layer estimate, at its own vocabulary.
    let l = ModelDescription::from_hf_config("llama", LLAMA_3_8B, 16.0).expect("parse");
    let ls = ModelDescription { draft_tokens: 2.0, ..l }.to_spec().expect("spec");
    assert_eq!(ls.draft_expert_bytes, 0.0);
    assert!(ls.draft_pass_bytes > 128256.0 * 4096.0 * 2.0);
}

/// `config` with `quantization_config` set to `q` (a JSON object).
fn quantized(config: &str, q: &str) -> String {
    format!("{{\"quantization_config\": {q}, {}", config.trim_start().trim_start_matches('{'))
}

#[test]
fn reads_the_weight_format_a_quantization_config_states() {
    let bits = |q: &str| {
        let d = ModelDescription::from_hf_config_with("m", &quantized(V3, q), None).expect("parse");
        (d.bits_per_weight, d.dense_bits_per_weight)
    };
    // DeepSeek-V3's own FP8 block checkpoint.
    assert_eq!(bits(r#"{"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}"#), (8.0, None));
    // compressed-tensors: FP8 per channel, NVFP4 (float 4-bit groups of 16), and W4A16 integer groups of 128.
    let ct = |w: &str| {
        format!(
            r#"{{"quant_method": "compressed-tensors", "config_groups": {{"group_0": {{"targets": ["Linear"], "weights": {w}}}}}, "ignore": ["lm_head"]}}"#
        )
    };
    assert_eq!(bits(&ct(r#"{"num_bits": 8, "type": "float", "strategy": "channel"}"#)), (8.0, None));
    assert_eq!(bits(&ct(r#"{"num_bits": 4, "type": "float", "group_size": 16}"#)), (4.5, None));
    assert_eq!(bits(&ct(r#"{"num_bits": 4, "type": "int", "group_size": 128}"#)), (4.125, None));
    // modelopt NVFP4 with attention excluded: the other layers stay at 16 bits.
    assert_eq!(
        bits(
            r#"{"quant_method": "modelopt", "quant_algo": "NVFP4", "exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}"#
        ),
        (4.5, Some(16.0))
    );
    // GPT-OSS's MXFP4 experts beside BF16 attention, router, embedding and head.
    assert_eq!(
        bits(
            r#"{"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}"#
        ),
        (4.25, Some(16.0))
    );
    assert_eq!(bits(r#"{"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true}"#), (4.125, None));
    assert_eq!(bits(r#"{"quant_method": "gptq", "bits": 8, "group_size": -1}"#), (8.0, None));
    // No quantization_config: a 16-bit checkpoint; --bits overrides whatever the config says.
    assert_eq!(ModelDescription::from_hf_config_with("m", V3, None).expect("parse").bits_per_weight, 16.0);
    let typed =
        ModelDescription::from_hf_config("m", &quantized(V3, r#"{"quant_method": "fp8"}"#), 4.5).expect("parse");
    assert_eq!((typed.bits_per_weight, typed.dense_bits_per_weight), (4.5, None));
    // A method it cannot read is refused by name, with the way out.
    let e = ModelDescription::from_hf_config_with("m", &quantized(V3, r#"{"quant_method": "hqq"}"#), None).unwrap_err();
    assert!(e.contains("quant_method `hqq`") && e.contains("--bits"), "{e}");
}

#[test]
fn refuses_encoder_and_vision_configs_by_the_field_that_says_so() {
    // bert-base-uncased and google/vit-base-patch16-224 as published (the fields that matter).
    let bert = r#"{"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 768,
        "num_attention_heads": 12, "num_hidden_layers": 12, "intermediate_size": 3072, "vocab_size": 30522}"#;
    let e = ModelDescription::from_hf_config("bert", bert, 16.0).unwrap_err();
    assert!(e.contains("`model_type` is `bert`") && e.contains("decoder"), "{e}");
    let vit = r#"{"architectures": ["ViTForImageClassification"], "model_type": "vit", "hidden_size": 768,
        "num_attention_heads": 12, "num_hidden_layers": 12, "image_size": 224, "patch_size": 16}"#;
    assert!(ModelDescription::from_hf_config("vit", vit, 16.0).unwrap_err().contains("`model_type` is `vit`"));
    // An unknown model type is judged by its heads; an encoder-decoder by its flag.
    let heads = bert.replace("\"model_type\": \"bert\"", "\"model_type\": \"my_encoder\"");
    let e = ModelDescription::from_hf_config("x", &heads, 16.0).unwrap_err();
    assert!(e.contains("`architectures` names BertForMaskedLM"), "{e}");
    let t5 = r#"{"architectures": ["T5ForConditionalGeneration"], "is_encoder_decoder": true, "d_model": 512,
        "num_heads": 8, "num_layers": 6}"#;
    assert!(ModelDescription::from_hf_config("t5", t5, 16.0).unwrap_err().contains("`is_encoder_decoder`"));
    // Decoders pass: causal LMs and multimodal configs with a language model inside.
    assert!(ModelDescription::from_hf_config("llama", LLAMA_3_8B, 16.0).is_ok());
    assert!(ModelDescription::from_hf_config("gemma-3", GEMMA_3_27B, 16.0).is_ok());
}

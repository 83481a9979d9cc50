//! Model cards: every architecture quantity with its unit and basis; consistency is `model::plausibility`'s.

use super::Checker;
use crate::dataset::schema::Quantity;
use crate::units::Dimension;

impl Checker<'_> {
    pub(super) fn models(&mut self) {
        for m in self.ds.models.values() {
            let file = self.path("model", &m.id);
            let a = &m.architecture;
            use Dimension::*;
            let fields: [(&str, &Quantity, Dimension, bool); 13] = [
                ("weight_bytes", &a.weight_bytes, Bytes, false),
                ("routed_expert_bytes", &a.routed_expert_bytes, Bytes, true),
                ("active_params", &a.active_params, Count, false),
                ("layers", &a.layers, Count, false),
                ("hidden_size", &a.hidden_size, Count, false),
                ("routed_experts", &a.routed_experts, Count, true),
                ("experts_per_token", &a.experts_per_token, Count, true),
                ("compute_bits", &a.compute_bits, Count, false),
                ("kv_bytes_per_token", &a.kv_bytes_per_token, Bytes, false),
                ("draft_tokens", &a.draft_tokens, Count, true),
                ("draft_acceptance", &a.draft_acceptance, Percent, true),
                ("draft_pass_bytes", &a.draft_pass_bytes, Bytes, true),
                ("weight_bytes", &a.weight_bytes, Bytes, false),
            ];
            for (name, q, dim, zero) in fields.into_iter().take(12) {
                self.quantity(&file, &format!("/architecture/{name}"), q, dim, zero);
            }
            for (name, q) in [
                ("pinned_cpu_bytes", &a.pinned_cpu_bytes),
                ("pinned_read_bytes_per_token", &a.pinned_read_bytes_per_token),
                ("published_offload_bytes", &a.published_offload_bytes),
                ("input_embedding_bytes", &a.input_embedding_bytes),
                ("draft_routed_expert_bytes", &a.draft_routed_expert_bytes),
                ("draft_kv_bytes_per_token", &a.draft_kv_bytes_per_token),
                ("local_window_kv_bytes_per_token", &a.local_window_kv_bytes_per_token),
                ("window_kv_bytes_per_token", &a.window_kv_bytes_per_token),
                ("linear_state_bytes", &a.linear_state_bytes),
            ] {
                if let Some(q) = q {
                    self.quantity(&file, &format!("/architecture/{name}"), q, Bytes, true);
                }
            }
            for (name, q) in [
                ("attention_heads", &a.attention_heads),
                ("kv_heads", &a.kv_heads),
                ("vocab_size", &a.vocab_size),
                ("head_dim", &a.head_dim),
                ("kv_lora_rank", &a.kv_lora_rank),
                ("sliding_window", &a.sliding_window),
                ("sliding_window_layers", &a.sliding_window_layers),
                ("window_head_dim", &a.window_head_dim),
                ("sparse_top_k", &a.sparse_top_k),
                ("indexer_heads", &a.indexer_heads),
                ("indexer_head_dim", &a.indexer_head_dim),
                ("dense_compute_bits", &a.dense_compute_bits),
                ("prefill_active_params", &a.prefill_active_params),
                ("routed_expert_bits", &a.routed_expert_bits),
                ("local_window", &a.local_window),
                ("draft_passes", &a.draft_passes),
                ("draft_pass_layers", &a.draft_pass_layers),
            ] {
                if let Some(q) = q {
                    self.quantity(&file, &format!("/architecture/{name}"), q, Count, false);
                }
            }
            // NoPE MLA has no rotary part; a model may have no linear-attention layer.
            for (name, q) in [
                ("rope_head_dim", &a.rope_head_dim),
                ("linear_attention_layers", &a.linear_attention_layers),
                ("draft_attention_layers", &a.draft_attention_layers),
            ] {
                if let Some(q) = q {
                    self.quantity(&file, &format!("/architecture/{name}"), q, Count, true);
                }
            }
            if !matches!(a.attention.as_str(), "mla" | "gqa") {
                self.err(
                    &file,
                    "/architecture/attention".into(),
                    format!("unknown attention kind `{}`", a.attention),
                    "use `mla` or `gqa`",
                );
            }
            if let Some(rc) = &m.report_config {
                self.from(&file, "/report_config", &rc.from, None);
            }
        }
    }
}

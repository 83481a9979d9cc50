//! The memory-bound kernels of a decoder layer whose bytes grow with a step's tokens (its norms, rotary
//! embedding, MLP activation, KV cache write and MoE weighted sum), and what they cost on a GPU whose kernel
//! table measured such kernels.
//!
//! Per token and layer, on one tensor-parallel rank, with activations in BF16 (b = 2 bytes) as vLLM's fused
//! kernels move them (`fused_add_rms_norm`, `rotary_embedding`, `silu_and_mul`, `reshape_and_cache`,
//! `moe_sum` in vllm/csrc):
//! ```text
//!   two residual adds with RMS norm   4 h b each      reads the hidden state and the residual, writes both
//!   rotary embedding                  2 (q b + K)     reads and writes the queries and the new keys
//!   KV cache write                    2 (K + V)       reads the new keys and values, writes them to the cache
//!   MLP activation and multiply       3 I b           reads the gate and up halves, writes their product
//!   MoE weighted sum (routed experts) (k + 1) h b     reads each token's k expert outputs, writes one
//! ```
//! `h`: hidden size, whole on every rank (the all-reduce hands each rank the whole hidden state); `q`: the query
//! width (the attention's FLOPs per position over 4), `K + V`: the layer's KV bytes per token, both split across
//! the ranks as the heads are; `I`: the MLP width one token multiplies (every expert it is routed to), derived
//! from the layer's active parameters less its attention projections, `3 h I` for a gated MLP; `k`: experts
//! per token. The weight GEMMs' own activation bytes are in their roofline (`GemmShape`), not here.

use crate::spec::{KernelCosts, ModelSpec};

/// Bytes of one activation element: vLLM keeps activations in BF16 whatever the weights' precision.
const ACTIVATION_BYTES: f64 = 2.0;

/// The bytes per token each of a layer's token-proportional memory-bound kernels moves on one rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerElementwise {
    per_token_bytes: [f64; 6],
}

impl LayerElementwise {
    /// The layer's kernels for `m` on a rank of `tp` that holds `kv_split`'s share of the KV heads.
    pub fn new(m: &ModelSpec, tp: f64, kv_split: f64) -> LayerElementwise {
        let (h, b, tp) = (m.hidden_size, ACTIVATION_BYTES, tp.max(1.0));
        let layers = m.layers.max(1.0);
        let query_width = m.attention.flops_per_position_layer / 4.0;
        let kv = m.kv_per_layer();
        // The attention projections: queries and output at the query width, keys and values at the KV's width
        // (its bytes per token in BF16 elements, halved for K and V).
        let kv_width = kv / (2.0 * b);
        let attention_params = h * (2.0 * query_width + 2.0 * kv_width);
        let mlp_width = ((m.active_params / layers - attention_params) / (3.0 * h)).max(0.0);
        let moe_sum = if m.routed_experts > 0.0 { (m.experts_per_token + 1.0) * h * b } else { 0.0 };
        LayerElementwise {
            per_token_bytes: [
                4.0 * h * b,
                4.0 * h * b,
                2.0 * query_width * b / tp + kv / kv_split.max(1.0),
                2.0 * kv / kv_split.max(1.0),
                3.0 * mlp_width * b / tp,
                moe_sum,
            ],
        }
    }

    /// Bytes one token moves through the layer's kernels on this rank.
    pub fn bytes_per_token(&self) -> f64 {
        self.per_token_bytes.iter().sum()
    }

    /// Seconds the layer's kernels take over `tokens` beyond the fixed time `c.layer_fixed_s` already charges
    /// each of them: each moves its bytes at the share of the memory bandwidth `bandwidth` the table's
    /// elementwise kernels reached at that size (in L2 at a few megabytes, near the HBM's rate beyond).
    pub fn seconds(&self, c: &KernelCosts, tokens: f64, bandwidth: f64) -> f64 {
        if !(tokens > 0.0 && bandwidth > 0.0) {
            return 0.0;
        }
        self.per_token_bytes
            .iter()
            .filter(|b| **b > 0.0)
            .map(|b| {
                let bytes = b * tokens;
                let share = c.elementwise_share(bytes).unwrap_or(1.0).max(1e-3);
                (bytes / (share * bandwidth) - c.small_kernel_s).max(0.0)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::LayerKernels;

    /// The kernel table's stack (Qwen3-8B's shape: hidden 4096, 32 query and 8 KV heads of 128, MLP 12288,
    /// vocabulary 151936), its active parameters counted as `describe` counts them (the LM head included).
    fn stack() -> ModelSpec {
        let layer_params = 4096.0 * (4096.0 + 2.0 * 1024.0) + 4096.0 * 4096.0 + 3.0 * 12288.0 * 4096.0;
        let active = 36.0 * layer_params + 151936.0 * 4096.0;
        ModelSpec { kv_heads: 8.0, ..ModelSpec::dense_for_tests(16e9, active, 36.0, 4096.0, 36.0 * 2.0 * 1024.0 * 2.0) }
    }

    fn costs() -> KernelCosts {
        KernelCosts {
            stream_fixed_s: 5e-6,
            stream_share: 0.95,
            layer_kernels: LayerKernels { decode: 12.0, prefill: 10.0, mixed: 17.0 },
            small_kernel_s: 2e-6,
            elementwise: vec![(1e4, 0.003), (1e7, 1.2), (1e9, 0.7)],
            prefill_attention: Vec::new(),
            decode_attention: Vec::new(),
        }
    }

    /// The stack's layer moves, per token: two add-and-norms (4 x 4096 x 2 B each), rotary embedding over 4096
    /// query and 1024 key columns (read and write), the KV write (2 x 4 KiB) and SiLU-and-multiply over 12288
    /// (3 x 12288 x 2 B): 135,168 B. The width derived from the parameters counts the LM head's share in: within 10%.
    #[test]
    fn a_layer_moves_what_its_fused_kernels_read_and_write_per_token() {
        let exact = 2.0 * 4.0 * 4096.0 * 2.0 + 2.0 * (4096.0 + 1024.0) * 2.0 + 2.0 * 8192.0 + 3.0 * 12288.0 * 2.0;
        let e = LayerElementwise::new(&stack(), 1.0, 1.0);
        assert!((e.bytes_per_token() / exact - 1.0).abs() < 0.10, "{} against {exact}", e.bytes_per_token());
        // Tensor parallelism splits everything but the norms, which every rank runs on the whole hidden state.
        let split = LayerElementwise::new(&stack(), 2.0, 2.0);
        let norms = 2.0 * 4.0 * 4096.0 * 2.0;
        assert!(((split.bytes_per_token() - norms) * 2.0 - (e.bytes_per_token() - norms)).abs() < 1e-6);
        // An MoE layer adds the weighted sum of each token's experts.
        let moe = ModelSpec { routed_experts: 128.0, experts_per_token: 8.0, ..stack() };
        let with_sum = LayerElementwise::new(&moe, 1.0, 1.0).bytes_per_token() - e.bytes_per_token();
        assert!((with_sum - 9.0 * 4096.0 * 2.0).abs() < 1e-6);
    }

    /// A few tokens' kernels are their launches (already charged); thousands stream at the table's share.
    #[test]
    fn only_bytes_beyond_a_kernels_fixed_time_cost_more() {
        let (e, c, bw) = (LayerElementwise::new(&stack(), 1.0, 1.0), costs(), 3.35e12);
        assert_eq!(e.seconds(&c, 0.0, bw), 0.0);
        assert_eq!(e.seconds(&c, 1.0, bw), 0.0);
        let long = e.seconds(&c, 16384.0, bw);
        let streamed = e.bytes_per_token() * 16384.0 / (0.7 * bw);
        assert!(long > 0.8 * streamed && long <= streamed, "{long} against {streamed}");
        assert!(e.seconds(&c, 32768.0, bw) > long);
    }
}

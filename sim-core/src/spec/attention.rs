//! Attention geometry per layer kind and the per-position costs of a sequence's context (KV bytes read and
//! held, attention FLOPs), linear in a few measures of the context so a step sums its sequences once.

use serde::Serialize;

/// The measures of a decoding sequence's context that every per-position cost is linear in (`AttentionSpec`'s
/// `*_of` functions), summed over sequences: a step's decode load is those functions of the sum, computed once,
/// rather than their sum over every sequence (the serving loop's per-cohort cost).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ContextMeasures {
    /// Sequences summed (each costs the constant terms once).
    pub seqs: f64,
    /// Cached positions.
    pub ctx: f64,
    /// Positions a full layer reads (the top-k under sparse attention), a window layer's, and the local window's.
    pub full: f64,
    pub window: f64,
    pub local: f64,
}

impl ContextMeasures {
    /// Adds `count` sequences measuring `x` each.
    #[inline(always)]
    pub fn add(&mut self, count: f64, x: &ContextMeasures) {
        self.seqs += count * x.seqs;
        self.ctx += count * x.ctx;
        self.full += count * x.full;
        self.window += count * x.window;
        self.local += count * x.local;
    }

    /// This line's value at the measures `x`: the sum of each coefficient times its measure.
    #[inline(always)]
    pub fn of(&self, x: &ContextMeasures) -> f64 {
        self.seqs * x.seqs + self.ctx * x.ctx + self.full * x.full + self.window * x.window + self.local * x.local
    }

    /// This line with every coefficient times `k`.
    pub fn scaled(&self, k: f64) -> ContextMeasures {
        ContextMeasures {
            seqs: self.seqs * k,
            ctx: self.ctx * k,
            full: self.full * k,
            window: self.window * k,
            local: self.local * k,
        }
    }
}

/// Attention geometry summed into what one query token costs per cached position, per layer kind.
///
/// ```text
///   full layers:    attend to every position (or to the top-k of them under sparse attention)
///   window layers:  attend to the last `window` positions
///   sparse indexer: scores every position on full layers, then attention reads only the top-k
///   linear layers:  keep a recurrent state of fixed size per sequence (Kimi Delta Attention, Gated
///                   DeltaNet), read and written every step; no KV that grows
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttentionSpec {
    /// Layers attending to the whole context (or its top-k).
    pub full_layers: f64,
    /// Layers with a sliding window.
    pub window_layers: f64,
    /// A window layer's KV bytes and attention FLOPs per position over a full layer's: 1 where every layer has
    /// the same geometry (GPT-OSS, MiniMax-M3's dense layers); Gemma 4's sliding layers keep 8 KV heads of 256
    /// where its full (global) layers keep 2 of 512 (KV 2, FLOPs 0.5: the queries' head dimension halves).
    pub window_kv_scale: f64,
    pub window_flops_scale: f64,
    /// Sliding window, tokens (infinite when no layer has one).
    pub window: f64,
    /// Positions sparse attention reads per query on full layers (infinite for dense attention).
    pub top_k: f64,
    /// Attention FLOPs per query token per attended position per layer (QK and AV) while decoding.
    pub flops_per_position_layer: f64,
    /// The same in prefill: MLA prefills in its uncompressed form (per-head keys and values), which costs
    /// fewer FLOPs per position than the absorbed form decode uses; sparse MLA prefills in the absorbed form.
    pub prefill_flops_per_position_layer: f64,
    /// Query heads of a sparse-MLA attention (DeepSeek Sparse Attention over an MLA latent), which a kernel runs
    /// in its absorbed multi-query form with the heads of each rank padded to the GPU's head tile; 0 for any
    /// other attention.
    pub sparse_mla_heads: f64,
    /// Sparse indexer FLOPs and key bytes per query token per position per full layer (0 without one).
    pub indexer_flops_per_position_layer: f64,
    pub indexer_bytes_per_position_layer: f64,
    /// Linear-attention layers and the recurrent state each keeps per sequence, bytes (whole model, before a
    /// tensor-parallel split).
    pub linear_layers: f64,
    pub linear_state_bytes: f64,
    /// Attention layers of a full layer's geometry the drafter runs once per draft pass (an MTP module: one),
    /// each keeping its own KV of every position beside the main layers'; 0 without such a drafter.
    pub draft_layers: f64,
    /// KV bytes per position of a drafter with its own dense attention over the whole context (an EAGLE3 head),
    /// held in the pool and read by every draft pass; its attention FLOPs per position are taken as these bytes
    /// (MHA in BF16: 4 x heads x head_dim of each). 0 without such a drafter.
    pub draft_own_kv_bytes: f64,
    /// Positions every full layer also keeps uncompressed beside its compressed or sparse global KV (DeepSeek
    /// V4's local window), and their bytes per position over all those layers: each query reads and attends to
    /// them on top of its global positions. `local_kv_bytes` 0: none.
    pub local_window: f64,
    pub local_kv_bytes: f64,
}

impl AttentionSpec {
    /// The shortcut used when a card gives no head geometry: `4 x hidden` FLOPs per position per layer, every
    /// layer full.
    pub fn dense(layers: f64, hidden: f64) -> Self {
        AttentionSpec {
            full_layers: layers,
            window_layers: 0.0,
            window_kv_scale: 1.0,
            window_flops_scale: 1.0,
            window: f64::INFINITY,
            top_k: f64::INFINITY,
            flops_per_position_layer: 4.0 * hidden,
            prefill_flops_per_position_layer: 4.0 * hidden,
            sparse_mla_heads: 0.0,
            indexer_flops_per_position_layer: 0.0,
            indexer_bytes_per_position_layer: 0.0,
            linear_layers: 0.0,
            linear_state_bytes: 0.0,
            draft_layers: 0.0,
            draft_own_kv_bytes: 0.0,
            local_window: 0.0,
            local_kv_bytes: 0.0,
        }
    }

    /// Marks this attention as sparse MLA with `heads` query heads, which vLLM's FlashMLA sparse backend runs in
    /// the absorbed multi-query form (576/512 per head for a 512 + 64 latent) in prefill as in decode ("the
    /// kernels want to use MQA 576/512 approach for both prefill and decode",
    /// vllm/v1/attention/backends/mla/flashmla_sparse.py, reported elsewhere), padding each rank's heads.
    pub fn run_as_sparse_mla(&mut self, heads: f64) {
        self.prefill_flops_per_position_layer = self.flops_per_position_layer;
        self.sparse_mla_heads = heads;
    }

    /// Positions of the local window a query at context `ctx` reads (0 without one).
    fn local_positions(&self, ctx: f64) -> f64 {
        if self.local_kv_bytes > 0.0 {
            ctx.min(self.local_window).max(0.0)
        } else {
            0.0
        }
    }

    /// Recurrent state one sequence keeps in the linear-attention layers, bytes.
    pub fn state_bytes(&self) -> f64 {
        self.linear_layers * self.linear_state_bytes
    }

    /// Positions one query attends to on each layer kind at context `ctx`: (full or top-k, window).
    fn positions(&self, ctx: f64) -> (f64, f64) {
        (ctx.min(self.top_k), ctx.min(self.window))
    }

    /// What every per-position cost of a decoding sequence at context `ctx` is linear in (`ContextMeasures`).
    #[inline(always)]
    pub fn context_measures(&self, ctx: f64) -> ContextMeasures {
        let (full, window) = self.positions(ctx);
        ContextMeasures { seqs: 1.0, ctx, full, window, local: self.local_positions(ctx) }
    }

    /// How `context_measures` grows per token of context from `ctx` on, and the context up to which it grows
    /// so (the next of the top-k, the window and the local window above `ctx`; infinite past them all): every
    /// measure is the context capped at a breakpoint, so between breakpoints `context_measures(ctx + t)` is
    /// `context_measures(ctx)` plus `t` times the rate. The serving loop steps decoding sequences on these lines
    /// without measuring each.
    pub fn context_measures_rate(&self, ctx: f64) -> (ContextMeasures, f64) {
        let below = |cap: f64| if ctx < cap { (1.0, cap) } else { (0.0, f64::INFINITY) };
        let (full, full_until) = below(self.top_k);
        let (window, window_until) = below(self.window);
        let (local, local_until) =
            if self.local_kv_bytes > 0.0 { below(self.local_window) } else { (0.0, f64::INFINITY) };
        let rate = ContextMeasures { seqs: 0.0, ctx: 1.0, full, window, local };
        (rate, full_until.min(window_until).min(local_until))
    }

    /// KV bytes one decoding sequence reads per step at context `ctx` (the verified draft tokens share the
    /// read), given the KV bytes per position of one layer; the linear layers' state is `decode_state_bytes`.
    pub fn decode_kv_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.decode_kv_bytes_of(kv_per_layer, &self.context_measures(ctx))
    }

    /// `decode_kv_bytes` of the sequences `x` sums.
    pub fn decode_kv_bytes_of(&self, kv_per_layer: f64, x: &ContextMeasures) -> f64 {
        kv_per_layer * (self.full_layers * x.full + self.window_layers * self.window_kv_scale * x.window)
            + self.indexer_bytes_per_position_layer * self.full_layers * x.ctx
            + self.local_kv_bytes * x.local
    }

    /// KV bytes one sequence's draft pass reads at context `ctx`: the drafter's own layers attend like a full
    /// layer (the top-k positions, the indexer's keys of all of them).
    pub fn draft_pass_kv_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.draft_pass_kv_bytes_of(kv_per_layer, &self.context_measures(ctx))
    }

    /// `draft_pass_kv_bytes` of the sequences `x` sums.
    pub fn draft_pass_kv_bytes_of(&self, kv_per_layer: f64, x: &ContextMeasures) -> f64 {
        self.draft_layers * (kv_per_layer * x.full + self.indexer_bytes_per_position_layer * x.ctx)
            + self.draft_own_kv_bytes * x.ctx
    }

    /// Attention FLOPs of one sequence's draft pass at context `ctx` (one query token per drafter layer).
    pub fn draft_pass_flops(&self, ctx: f64) -> f64 {
        self.draft_pass_flops_of(&self.context_measures(ctx))
    }

    /// `draft_pass_flops` of the sequences `x` sums.
    pub fn draft_pass_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.draft_layers * (self.flops_per_position_layer * x.full + self.indexer_flops_per_position_layer * x.ctx)
            + self.draft_own_kv_bytes * x.ctx
    }

    /// Bytes of linear-layer state one decoding sequence moves in a step that verifies `per_seq` tokens: the
    /// running state read once, and the state after each verified token written to a slot of its own (vLLM's
    /// recurrent kernel, `fused_recurrent_gated_delta_rule_fwd_kernel` in
    /// vllm/model_executor/layers/fla/ops/fused_recurrent.py, shared by gated DeltaNet and KDA: "keep the
    /// states for multi-query tokens", one store per token; so a step without drafts reads it and writes it back).
    pub fn decode_state_bytes(&self, per_seq: f64) -> f64 {
        (1.0 + per_seq.max(1.0)) * self.state_bytes()
    }

    /// Attention FLOPs of one query token at context `ctx`. A linear layer's FP32 state of E elements costs about
    /// 4E FLOPs per token (decay, the delta rule's outer-product update, the read-out): one FLOP per state byte.
    pub fn query_flops(&self, ctx: f64) -> f64 {
        self.query_flops_of(&self.context_measures(ctx))
    }

    /// `query_flops` of one query token of each of the sequences `x` sums.
    pub fn query_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.flops_per_position_layer
            * (self.full_layers * (x.full + x.local) + self.window_layers * self.window_flops_scale * x.window)
            + self.indexer_query_flops_of(x)
            + x.seqs * self.state_bytes()
    }

    /// The sparse indexer's share of `query_flops` at context `ctx`: it scores every cached position of every full
    /// layer with all of its heads.
    pub fn indexer_query_flops(&self, ctx: f64) -> f64 {
        self.indexer_flops_per_position_layer * self.full_layers * ctx
    }

    /// `indexer_query_flops` of the sequences `x` sums.
    pub fn indexer_query_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.indexer_query_flops(x.ctx)
    }

    /// The sparse indexer's share of `prefill_flops` (the chunk's mean context, as there).
    pub fn indexer_prefill_flops(&self, offset: f64, n: f64) -> f64 {
        n * self.indexer_query_flops(offset + n / 2.0)
    }

    /// The sparse indexer's share of `draft_pass_flops`.
    pub fn indexer_draft_pass_flops(&self, ctx: f64) -> f64 {
        self.draft_layers * self.indexer_flops_per_position_layer * ctx
    }

    /// `indexer_draft_pass_flops` of the sequences `x` sums.
    pub fn indexer_draft_pass_flops_of(&self, x: &ContextMeasures) -> f64 {
        self.indexer_draft_pass_flops(x.ctx)
    }

    /// Attention FLOPs of a prefill chunk of `n` tokens following `offset` computed ones (causal: the i-th token
    /// attends to offset + i positions; sums by the chunk's mean context, exact below the caps).
    pub fn prefill_flops(&self, offset: f64, n: f64) -> f64 {
        let ctx = offset + n / 2.0;
        let (full, win) = self.positions(ctx);
        let local = self.local_positions(ctx);
        n * (self.prefill_flops_per_position_layer
            * (self.full_layers * (full + local) + self.window_layers * self.window_flops_scale * win)
            + self.indexer_query_flops(ctx)
            + self.state_bytes())
    }

    /// KV bytes one sequence holds at context `ctx` (window layers keep only their window). A sparse indexer's
    /// keys are cached beside the latent for every position of every full layer (the indexer scores them all
    /// each step, `decode_kv_bytes`), so they take pool space too: what a step reads per position is what the
    /// pool holds per position.
    /// A sequence with any context also holds its linear layers' state.
    pub fn kv_storage_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.kv_position_bytes(kv_per_layer, ctx) + self.held_state_bytes(ctx)
    }

    /// The part of `kv_storage_bytes` that grows with the context: every layer's KV but the linear layers' state,
    /// the drafter's attention layers included (the engine allocates their cache from the same pool).
    pub fn kv_position_bytes(&self, kv_per_layer: f64, ctx: f64) -> f64 {
        self.kv_position_line(kv_per_layer).of(&self.context_measures(ctx))
    }

    /// `kv_position_bytes` as bytes per unit of each of a context's measures (`ContextMeasures::of`): full layers
    /// and the drafter's hold every position (not only the top-k they read), window layers their window.
    pub fn kv_position_line(&self, kv_per_layer: f64) -> ContextMeasures {
        let full = self.full_layers + self.draft_layers;
        ContextMeasures {
            seqs: 0.0,
            ctx: kv_per_layer * full + self.indexer_bytes_per_position_layer * full + self.draft_own_kv_bytes,
            full: 0.0,
            window: kv_per_layer * self.window_layers * self.window_kv_scale,
            local: self.local_kv_bytes,
        }
    }

    /// The linear layers' state a sequence at context `ctx` holds: all of it from its first position.
    pub fn held_state_bytes(&self, ctx: f64) -> f64 {
        if ctx > 0.0 {
            self.state_bytes()
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{AttentionSpec, ContextMeasures};
    use proptest::prelude::*;

    /// Any attention geometry: full and window layers, a window, a top-k and a sparse indexer (or none), and
    /// linear-attention layers with their state (or none).
    fn any_attention() -> impl Strategy<Value = AttentionSpec> {
        (
            (1.0..100.0f64, 0.0..60.0f64, 64.0..8192.0f64, prop::option::of(256.0..4096.0f64), 0.0..256.0f64),
            prop::option::of((1.0..40.0f64, 1e3..4e6f64)),
            0.0..3.0f64,
            (0.25..4.0f64, 0.25..2.0f64),
        )
            .prop_map(
                |((full, window_layers, window, top_k, indexer_dim), linear, draft, (kv_scale, flops_scale))| {
                    AttentionSpec {
                        full_layers: full.round(),
                        window_layers: window_layers.round(),
                        window_kv_scale: kv_scale,
                        window_flops_scale: flops_scale,
                        window,
                        top_k: top_k.unwrap_or(f64::INFINITY),
                        flops_per_position_layer: 1.0,
                        prefill_flops_per_position_layer: 1.0,
                        sparse_mla_heads: 0.0,
                        indexer_flops_per_position_layer: 0.0,
                        indexer_bytes_per_position_layer: if top_k.is_some() { indexer_dim } else { 0.0 },
                        linear_layers: linear.map_or(0.0, |(n, _)| n.round()),
                        linear_state_bytes: linear.map_or(0.0, |(_, b)| b),
                        draft_layers: draft.floor(),
                        draft_own_kv_bytes: if draft >= 2.0 { 1e3 * draft } else { 0.0 },
                        local_window: window,
                        local_kv_bytes: if draft < 1.0 { 1e4 * draft } else { 0.0 },
                    }
                },
            )
    }

    proptest! {
        /// A decode step reads only positions the cache holds: a sequence's KV reads never exceed its stored KV
        /// (a sparse indexer's keys are read for every position, so the pool must hold them for every position);
        /// without drafts a linear layer's state is read once and written back once.
        #[test]
        fn a_step_reads_no_more_kv_than_the_pool_holds(a in any_attention(), per_layer in 1.0..2e5f64, ctx in 1.0..2e5f64) {
            let read = a.decode_kv_bytes(per_layer, ctx);
            let held = a.kv_storage_bytes(per_layer, ctx);
            prop_assert!(read <= (held - a.state_bytes()) * (1.0 + 1e-12), "reads {read} B of a sequence holding {held} B");
            prop_assert_eq!(a.decode_state_bytes(1.0), 2.0 * a.state_bytes());
        }

        /// The drafter's layers hold their KV in the pool: a decode step and all its draft passes read no more
        /// positions per layer than the pool keeps, and a drafter's layers add exactly their KV to a sequence.
        #[test]
        fn draft_passes_read_only_what_the_drafter_holds(a in any_attention(), per_layer in 1.0..2e5f64, ctx in 1.0..2e5f64) {
            let mut without = a.clone();
            without.draft_layers = 0.0;
            without.draft_own_kv_bytes = 0.0;
            let drafter_holds = a.kv_storage_bytes(per_layer, ctx) - without.kv_storage_bytes(per_layer, ctx);
            let per_position = a.draft_layers * (per_layer + a.indexer_bytes_per_position_layer) + a.draft_own_kv_bytes;
            prop_assert!((drafter_holds - per_position * ctx).abs() <= 1e-9 * drafter_holds.max(1.0));
            prop_assert!(a.draft_pass_kv_bytes(per_layer, ctx) <= drafter_holds * (1.0 + 1e-12) + 1e-9);
            prop_assert_eq!(without.draft_pass_kv_bytes(per_layer, ctx), 0.0);
            prop_assert_eq!(without.draft_pass_flops(ctx), 0.0);
        }

        /// Every decode cost is linear in a context's measures: the `_of` functions of sequences' summed measures
        /// equal the sum of each sequence's cost (what lets the serving loop sum a step's decodes as measures and
        /// compute their cost once), and the KV a sequence holds is its line at its measures.
        #[test]
        fn decode_costs_of_summed_measures_are_the_sum_of_each_sequences(
            a in any_attention(),
            indexer_flops in prop::option::of(1.0..64.0f64),
            per_layer in 1.0..2e5f64,
            seqs in prop::collection::vec((0.25..64.0f64, 0.0..2e5f64), 1..40),
        ) {
            let mut a = a;
            a.indexer_flops_per_position_layer = if a.top_k.is_finite() { indexer_flops.unwrap_or(0.0) } else { 0.0 };
            let mut sum = ContextMeasures::default();
            let mut each = [0.0f64; 7];
            for &(count, ctx) in &seqs {
                sum.add(count, &a.context_measures(ctx));
                for (e, v) in each.iter_mut().zip([
                    a.decode_kv_bytes(per_layer, ctx),
                    a.query_flops(ctx),
                    a.indexer_query_flops(ctx),
                    a.draft_pass_kv_bytes(per_layer, ctx),
                    a.draft_pass_flops(ctx),
                    a.indexer_draft_pass_flops(ctx),
                    1.0,
                ]) {
                    *e += count * v;
                }
            }
            let summed = [
                a.decode_kv_bytes_of(per_layer, &sum),
                a.query_flops_of(&sum),
                a.indexer_query_flops_of(&sum),
                a.draft_pass_kv_bytes_of(per_layer, &sum),
                a.draft_pass_flops_of(&sum),
                a.indexer_draft_pass_flops_of(&sum),
                sum.seqs,
            ];
            for (k, (x, y)) in summed.iter().zip(each).enumerate() {
                prop_assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "cost {k}: summed {x}, each {y}");
            }
            let line = a.kv_position_line(per_layer);
            for &(_, ctx) in &seqs {
                let x = a.context_measures(ctx);
                let explicit = per_layer * ((a.full_layers + a.draft_layers) * ctx + a.window_layers * a.window_kv_scale * x.window)
                    + a.indexer_bytes_per_position_layer * (a.full_layers + a.draft_layers) * ctx
                    + a.draft_own_kv_bytes * ctx
                    + a.local_kv_bytes * x.local;
                let held = line.of(&x);
                prop_assert!((held - explicit).abs() <= 1e-12 * explicit.max(1.0), "held {held}, explicit {explicit}");
                prop_assert_eq!(held, a.kv_position_bytes(per_layer, ctx));
            }
        }

        /// Up to the breakpoint `context_measures_rate` names, a context's measures grow by its rate per token
        /// (the serving loop's lockstep steps decoding sequences on that line), and past it the rate changes.
        #[test]
        fn context_measures_grow_at_their_rate_up_to_the_next_breakpoint(
            a in any_attention(),
            ctx in 0.0..2e4f64,
            share in 0.0..=1.0f64,
            past in 1.0..100.0f64,
        ) {
            let (rate, until) = a.context_measures_rate(ctx);
            prop_assert!(until > ctx);
            let t = if until.is_finite() { share * (until - ctx) } else { share * 1e5 };
            let mut on_line = a.context_measures(ctx);
            on_line.add(t, &rate);
            let there = a.context_measures(ctx + t);
            for (x, y) in [(on_line.seqs, there.seqs), (on_line.ctx, there.ctx), (on_line.full, there.full),
                (on_line.window, there.window), (on_line.local, there.local)] {
                prop_assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{on_line:?} vs {there:?} at {ctx} + {t}");
            }
            if until.is_finite() {
                let (after, _) = a.context_measures_rate(until + past);
                prop_assert!(after != rate, "the rate past {until} is still {rate:?}");
            }
        }

        /// A linear layer's state does not grow with the context: past the first position, what a sequence holds
        /// grows only by the other layers' KV, and a model of linear layers alone would hold a constant.
        #[test]
        fn linear_state_is_a_constant_per_sequence(a in any_attention(), per_layer in 1.0..2e5f64, ctx in 1.0..2e5f64) {
            let mut only_linear = a.clone();
            only_linear.full_layers = 0.0;
            only_linear.window_layers = 0.0;
            only_linear.draft_layers = 0.0;
            only_linear.draft_own_kv_bytes = 0.0;
            only_linear.local_kv_bytes = 0.0;
            only_linear.indexer_bytes_per_position_layer = 0.0;
            let (short, long) = (only_linear.kv_storage_bytes(per_layer, 1.0), only_linear.kv_storage_bytes(per_layer, ctx));
            prop_assert!((short - long).abs() <= 1e-9 * short.max(1.0) && short == a.state_bytes(), "{short} vs {long}");
        }
    }

    #[test]
    fn a_local_window_is_read_and_held_beside_the_compressed_kv() {
        // DeepSeek V4.1 Flash's shape: 40 layers of 22 B compressed KV per position (top-1,024) and the last 128
        // positions uncompressed at 40,960 B over all layers. Past 128 positions the window is a constant.
        let mut a = AttentionSpec::dense(40.0, 5120.0);
        a.top_k = 1024.0;
        let (global_read, global_held) = (a.decode_kv_bytes(22.0, 8192.0), a.kv_storage_bytes(22.0, 8192.0));
        a.local_window = 128.0;
        a.local_kv_bytes = 40960.0;
        assert_eq!(a.decode_kv_bytes(22.0, 8192.0) - global_read, 40960.0 * 128.0);
        assert_eq!(a.kv_storage_bytes(22.0, 8192.0) - global_held, 40960.0 * 128.0);
        assert_eq!(a.kv_storage_bytes(22.0, 64.0), (22.0 * 40.0 + 40960.0) * 64.0);
        // Its attention: every full layer attends to the window's positions too.
        let with = a.query_flops(8192.0);
        a.local_kv_bytes = 0.0;
        assert_eq!(with - a.query_flops(8192.0), a.flops_per_position_layer * 40.0 * 128.0);
    }

    #[test]
    fn sparse_indexer_keys_take_pool_space() {
        let mut a = AttentionSpec::dense(78.0, 6144.0);
        let latent = a.kv_storage_bytes(1152.0, 9216.0);
        a.top_k = 2048.0;
        a.indexer_bytes_per_position_layer = 128.0;
        assert_eq!(a.kv_storage_bytes(1152.0, 9216.0) - latent, 128.0 * 78.0 * 9216.0);
    }
}

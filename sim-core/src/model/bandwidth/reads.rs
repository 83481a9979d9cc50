//! What one step reads from each memory tier: the routed experts its tokens touch (uniform or skewed routing),
//! the MoE kernel's padding, and the share of the multiplies whose weights sit in CPU memory.

use super::{MoeKernel, Placement};
use crate::spec::ModelSpec;

/// Expected share of routed experts a step with `tokens` tokens touches: 1 - (1 - s*k/E)^T, where s = 1 is
/// uniform routing and s < 1 means the experts in question receive less than their share of tokens.
pub fn expert_touch_fraction(model: &ModelSpec, tokens: f64, routing_share: f64) -> f64 {
    ExpertTouch::new(model, routing_share).fraction(tokens)
}

/// `expert_touch_fraction` for one routing share, its logarithm taken once: 1 - (1 - p)^T is 1 - exp(T ln(1 - p)),
/// a product and an `exp` per step where `powf` cost twice as much (the serving loop asks every step). `exp` and
/// `ln`, not `exp_m1` and `ln_1p`: the page already carries those two, and the others added 1.5 KB to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExpertTouch {
    /// ln(1 - s*k/E), the log-probability that a token misses a given expert; `None` when the model routes no
    /// experts (every expert it has, none, is touched).
    ln_miss: Option<f64>,
}

impl ExpertTouch {
    pub fn new(model: &ModelSpec, routing_share: f64) -> Self {
        if model.routed_experts <= 0.0 || model.experts_per_token <= 0.0 {
            return ExpertTouch { ln_miss: None };
        }
        let per_token = (routing_share * model.experts_per_token / model.routed_experts).clamp(0.0, 1.0);
        ExpertTouch { ln_miss: Some((1.0 - per_token).ln()) }
    }

    /// The share of experts `tokens` tokens touch.
    pub fn fraction(&self, tokens: f64) -> f64 {
        let Some(ln_miss) = self.ln_miss else { return 1.0 };
        let tokens = tokens.max(0.0);
        // No token touches nothing, even where every token touches every expert (ln_miss = -inf).
        if tokens == 0.0 {
            return 0.0;
        }
        1.0 - (tokens * ln_miss).exp()
    }
}

/// Routed-expert multiplies a step of `tokens` tokens spends on padding, in tokens' worth (a token multiplies by
/// `experts_per_token` experts): `kernel` computes each touched expert's rows in whole tiles of
/// `MoeKernel::tile_rows`, so a layer runs `max(rows + touched x tile / 2, touched x tile)` rows for its
/// `rows = tokens x k`, where touched = E x `expert_touch_fraction` (uniform routing). An expert with fewer tokens
/// than a tile pays the whole tile; one with many pays half a tile on average for its last, partial one.
/// `tile_scale` scales the kernel's tile (1: as its source sizes it; the sensitivity table halves and doubles it).
/// `touched_uniform` gives that touch fraction, asked only when the kernel pads (the serving loop's from the
/// step's reads, `StepReads::touched_uniform`, or its engine's `StepReader::uniform_touch`).
pub fn moe_padding_tokens(
    model: &ModelSpec,
    kernel: MoeKernel,
    tile_scale: f64,
    tokens: f64,
    touched_uniform: impl FnOnce() -> f64,
) -> f64 {
    let (e, k) = (model.routed_experts, model.experts_per_token);
    if kernel == MoeKernel::Unpadded || e <= 0.0 || k <= 0.0 || tokens <= 0.0 || model.routed_expert_bytes <= 0.0 {
        return 0.0;
    }
    let rows = tokens * k;
    let tile = kernel.tile_rows(tokens, rows / e) * tile_scale.max(0.0);
    let touched = e * touched_uniform();
    let padded = (rows + touched * tile / 2.0).max(touched * tile);
    (padded - rows).max(0.0) / k
}

/// Shares of a step's weight multiplies whose weights live in CPU memory: (routed-expert, dense). A routed
/// share follows the routing `step_reads` gives the spilled and pinned experts, so mass is conserved.
pub fn host_compute_shares(p: &Placement, spilled_routing_share: f64) -> (f64, f64) {
    let experts = p.expert_bytes();
    let routed = if experts > 0.0 {
        (spilled_routing_share.max(0.0) * p.expert_bytes_spilled + p.expert_bytes_pinned) / experts
    } else {
        0.0
    };
    let dense = p.dense_bytes_hbm + p.dense_bytes_spilled + p.dense_bytes_pinned;
    let dense_host = if dense > 0.0 { (p.dense_bytes_spilled + p.dense_bytes_pinned) / dense } else { 0.0 };
    (routed.clamp(0.0, 1.0), dense_host.clamp(0.0, 1.0))
}

/// Bytes one step reads from each tier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReads {
    pub hbm_bytes: f64,
    pub slow_bytes: f64,
    /// The share of experts uniform routing touches, when the reads already computed it (the MoE kernel's
    /// padding asks for it: `moe_padding_tokens`).
    pub touched_uniform: Option<f64>,
}

/// Weight, KV and pinned-table bytes a step with `tokens` tokens reads; `kv_read_bytes` is what its decoding
/// sequences' attention reads on this GPU. `spilled_routing_share` is how much routing the spilled experts get
/// relative to uniform (1.0); experts pinned by the deployment get uniform routing (the pin says how many, not
/// which); routing mass is conserved, so the experts left in HBM get the rest.
pub fn step_reads(
    model: &ModelSpec,
    p: &Placement,
    tokens: f64,
    kv_read_bytes: f64,
    spilled_routing_share: f64,
) -> StepReads {
    StepReader::new(model, p, spilled_routing_share).reads(tokens, kv_read_bytes)
}

/// `step_reads` for one placement and routing share, with what does not depend on the step computed once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReader {
    /// The dense bytes a step streams from HBM (all but the input embedding's table, of which it gathers rows).
    streamed_dense: f64,
    expert_bytes_hbm: f64,
    expert_bytes_spilled: f64,
    dense_bytes_spilled: f64,
    /// Pinned tables' bytes a token reads, and the ranks they are split over.
    pinned_read_bytes_per_token: f64,
    tp: f64,
    /// The pinned dense and expert bytes, where the deployment pins any.
    pinned: Option<(f64, f64)>,
    /// Touches of the experts in HBM, of the spilled ones, and under uniform routing, and which of the shares
    /// are the same (the same touches, computed once).
    hbm: ExpertTouch,
    spilled: ExpertTouch,
    uniform: ExpertTouch,
    spilled_as_hbm: bool,
    spilled_uniform: bool,
    hbm_uniform: bool,
}

impl StepReader {
    pub fn new(model: &ModelSpec, p: &Placement, spilled_routing_share: f64) -> Self {
        let experts = p.expert_bytes();
        let spilled_share = if experts > 0.0 { p.expert_bytes_spilled / experts } else { 0.0 };
        let pinned_share = if experts > 0.0 { p.expert_bytes_pinned / experts } else { 0.0 };
        let s = spilled_routing_share.max(0.0);
        // Shares of routing: s * f to the spilled fraction f, g to the pinned fraction g (uniform), the rest
        // (1 - s * f - g) to the experts in HBM (1 - f - g). Without a pin, g = 0 and this is exactly 1 - s * f
        // over 1 - f.
        let hbm_fraction = 1.0 - spilled_share - pinned_share;
        let hbm_share =
            if hbm_fraction > 0.0 { ((1.0 - s * spilled_share - pinned_share) / hbm_fraction).max(0.0) } else { 1.0 };
        let pinned = p.dense_bytes_pinned > 0.0 || p.expert_bytes_pinned > 0.0;
        StepReader {
            // The input embedding sits with the dense weights but a step gathers one row per token, not the table.
            streamed_dense: (p.dense_bytes_hbm - model.input_embedding_bytes / p.tp).max(0.0),
            expert_bytes_hbm: p.expert_bytes_hbm,
            expert_bytes_spilled: p.expert_bytes_spilled,
            dense_bytes_spilled: p.dense_bytes_spilled,
            pinned_read_bytes_per_token: model.pinned_read_bytes_per_token,
            tp: p.tp,
            pinned: pinned.then_some((p.dense_bytes_pinned, p.expert_bytes_pinned)),
            hbm: ExpertTouch::new(model, hbm_share),
            spilled: ExpertTouch::new(model, s),
            uniform: ExpertTouch::new(model, 1.0),
            spilled_as_hbm: s == hbm_share,
            spilled_uniform: s == 1.0,
            hbm_uniform: hbm_share == 1.0,
        }
    }

    /// The bytes a step with `tokens` tokens reads, `kv_read_bytes` of them KV.
    pub fn reads(&self, tokens: f64, kv_read_bytes: f64) -> StepReads {
        let touched = self.hbm.fraction(tokens);
        // Under uniform routing both shares are 1: the same touches, so reuse them (an `exp` per step saved).
        let touched_spilled = if self.spilled_as_hbm { touched } else { self.spilled.fraction(tokens) };
        let mut slow_bytes = self.dense_bytes_spilled
            + self.expert_bytes_spilled * touched_spilled
            + tokens * self.pinned_read_bytes_per_token / self.tp;
        if let Some((dense_pinned, experts_pinned)) = self.pinned {
            let touched_uniform = if self.spilled_uniform { touched_spilled } else { self.uniform.fraction(tokens) };
            slow_bytes += dense_pinned + experts_pinned * touched_uniform;
        }
        let touched_uniform =
            if self.hbm_uniform { Some(touched) } else { self.spilled_uniform.then_some(touched_spilled) };
        StepReads {
            hbm_bytes: self.streamed_dense + self.expert_bytes_hbm * touched + kv_read_bytes,
            slow_bytes,
            touched_uniform,
        }
    }

    /// The share of experts uniform routing touches in a step of `tokens` tokens.
    pub fn uniform_touch(&self, tokens: f64) -> f64 {
        self.uniform.fraction(tokens)
    }
}

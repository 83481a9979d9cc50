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
    /// The routed experts' layout over the ranks (`ExpertSplit`): sliced by tensor parallelism, or whole
    /// experts split across expert-parallel ranks, whose busiest rank every layer waits for.
    split: ExpertSplit,
    /// Tokens an MoE layer routes per token of this engine's step: the data-parallel ranks whose tokens it
    /// gathers (vLLM's DP+EP), 1 otherwise.
    moe_tokens: f64,
}

/// How a step's routed experts lie over the engine's ranks.
///
/// Under tensor parallelism every rank holds a slice of every expert and reads its slice of each touched one:
/// the ranks read alike. Under expert parallelism (vLLM's `--enable-expert-parallel`) each of `r` ranks holds
/// `E / r` whole experts, and a step reads on each rank only its own touched ones; the layer's all-reduce waits
/// for the rank that touched the most. Given `N` experts touched of `E`, a rank's count is hypergeometric (mean
/// `N / r`, variance `N (1/r)(1 - 1/r)(E - N)/(E - 1)`); the busiest of `r` such counts, whose sum is fixed at
/// `N`, lies about `sd x sqrt(r / (r - 1)) x e_r` above the mean, `e_r` the expected largest of `r` independent
/// standard normals (normal approximation, derived). One token touching 8 of 128 experts on two ranks: the
/// busiest reads ~5.1 where tensor parallelism reads the equivalent of 4 on each; at thousands of tokens every
/// expert is touched and the ranks read alike. The experts' multiplies are taken as even (their rows, `T x k`,
/// spread more evenly than the distinct experts do).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ExpertSplit {
    /// Every rank holds a slice of every expert.
    #[default]
    Sliced,
    /// `ranks` ranks hold whole experts, `experts` of them in all.
    Whole { ranks: f64, experts: f64 },
}

/// The expected largest of `r` independent standard normals for r = 2, 4, 8, 16, 32, 64 (Tippett 1925; H. L.
/// Harter, "Expected values of normal order statistics", Biometrika 48, 1961, Table 1: 0.5642, 1.0294, 1.4236,
/// 1.7660, 2.0697, 2.3419), linear in log2 r between them (reported elsewhere).
const EXPECTED_MAX_OF_NORMALS: [f64; 6] = [0.5642, 1.0294, 1.4236, 1.7660, 2.0697, 2.3419];

impl ExpertSplit {
    /// What the busiest rank reads of the routed experts, over what an even split reads, when a step touches
    /// `fraction` of the experts (1 for a sliced layout).
    pub fn busiest_rank_factor(&self, fraction: f64) -> f64 {
        let ExpertSplit::Whole { ranks, experts } = *self else { return 1.0 };
        let touched = experts * fraction.clamp(0.0, 1.0);
        if ranks < 2.0 || experts < 2.0 || touched <= 0.0 {
            return 1.0;
        }
        let variance = touched * (1.0 / ranks) * (1.0 - 1.0 / ranks) * (experts - touched) / (experts - 1.0);
        let at = (ranks.log2() - 1.0).clamp(0.0, (EXPECTED_MAX_OF_NORMALS.len() - 1) as f64);
        let (i, w) = (at.floor() as usize, at.fract());
        let next = EXPECTED_MAX_OF_NORMALS[(i + 1).min(EXPECTED_MAX_OF_NORMALS.len() - 1)];
        let e_r = EXPECTED_MAX_OF_NORMALS[i] * (1.0 - w) + next * w;
        let busiest = touched / ranks + variance.max(0.0).sqrt() * (ranks / (ranks - 1.0)).sqrt() * e_r;
        // A rank holds E / r experts and touches no more than the step does.
        let most = touched.min(experts / ranks);
        busiest.min(most) * ranks / touched
    }
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
            split: ExpertSplit::Sliced,
            moe_tokens: 1.0,
        }
    }

    /// This reader with the routed experts laid over the ranks as `split` says.
    pub fn with_split(self, split: ExpertSplit) -> Self {
        StepReader { split, ..self }
    }

    /// This reader with each MoE layer routing `ranks` data-parallel ranks' tokens per token of the step.
    pub fn with_moe_tokens(self, ranks: f64) -> Self {
        StepReader { moe_tokens: ranks.max(1.0), ..self }
    }

    /// The bytes a step with `tokens` tokens reads, `kv_read_bytes` of them KV.
    pub fn reads(&self, tokens: f64, kv_read_bytes: f64) -> StepReads {
        let routed = tokens * self.moe_tokens;
        let touched = self.hbm.fraction(routed);
        // Under uniform routing both shares are 1: the same touches, so reuse them (an `exp` per step saved).
        let touched_spilled = if self.spilled_as_hbm { touched } else { self.spilled.fraction(routed) };
        // Whole experts split across ranks: the busiest rank's share of the touched experts sets the reads.
        let (busy_hbm, busy_spilled) = match self.split {
            ExpertSplit::Sliced => (1.0, 1.0),
            split => (split.busiest_rank_factor(touched), split.busiest_rank_factor(touched_spilled)),
        };
        let mut slow_bytes = self.dense_bytes_spilled
            + self.expert_bytes_spilled * touched_spilled * busy_spilled
            + tokens * self.pinned_read_bytes_per_token / self.tp;
        if let Some((dense_pinned, experts_pinned)) = self.pinned {
            let touched_uniform = if self.spilled_uniform { touched_spilled } else { self.uniform.fraction(routed) };
            slow_bytes += dense_pinned + experts_pinned * touched_uniform;
        }
        let touched_uniform =
            if self.hbm_uniform { Some(touched) } else { self.spilled_uniform.then_some(touched_spilled) };
        StepReads {
            hbm_bytes: self.streamed_dense + self.expert_bytes_hbm * touched * busy_hbm + kv_read_bytes,
            slow_bytes,
            touched_uniform,
        }
    }

    /// The share of experts uniform routing touches in a step of `tokens` tokens of this engine (each MoE layer
    /// routing every data-parallel rank's tokens under DP+EP).
    pub fn uniform_touch(&self, tokens: f64) -> f64 {
        self.uniform.fraction(tokens * self.moe_tokens)
    }
}

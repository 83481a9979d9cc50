//! The closed loop's steady state in closed form: a fast approximation of `serving` the fit searches with.
//!
//! A colocated engine in steady state with n resident sequences accepts `a` tokens per sequence per step, so
//! requests finish at n*a/OSL per step and each brings ISL prefill tokens, packed into steps of at most C
//! tokens; beyond n* = C * OSL / (ISL * a) decoders the prompts queue. PD solves Little's law
//! c = n_d + X(n_d) * (R_p + t_x) for the decoding sequences n_d, capped by the prefill machine's rate.
//! Clients past the KV pool wait (no preemption): this is where it departs from `serving`, which the tests
//! check (`steady_state_tracks_the_step_loop`). Nothing outside `fit` answers a question with it: the fit
//! searches on it (microseconds a point) and polishes the result on `serving`.
use super::batching::{Engine, StepLoad, StepTime};
use super::Coefficients;
use crate::scenario::Scenario;
use crate::Mode;

/// One step with `seqs` decodes over `kv_tokens` of context in all and a `prefill` chunk around `prefill_ctx`.
fn st(e: &Engine, seqs: f64, prefill: f64, kv_tokens: f64, prefill_ctx: f64) -> StepTime {
    let m = e.model;
    let mut l = StepLoad::default();
    if seqs > 0.0 {
        l.add_decodes(m, seqs, kv_tokens / seqs.max(1.0), m.draft_tokens + 1.0);
    }
    if prefill > 0.0 {
        l.add_prefill(m, 1.0, (prefill_ctx - prefill / 2.0).max(0.0), prefill);
    }
    e.step(&l)
}

/// Time to prefill one prompt alone, chunk by chunk.
fn prefill_alone_s(e: &Engine, isl: f64) -> f64 {
    let chunk = e.limits.tokens_per_step.max(1.0);
    let full = (isl / chunk).floor();
    let rest = isl - full * chunk;
    let mut t = 0.0;
    if full > 0.0 {
        t += full * st(e, 0.0, chunk, 0.0, isl / 2.0).total_s;
    }
    if rest > 0.0 {
        t += st(e, 0.0, rest, 0.0, isl / 2.0).total_s;
    }
    t
}
/// Output tok/s of a colocated engine with `c` closed-loop clients sending ISL/OSL requests.
fn colocated(e: &Engine, c: f64, isl: f64, osl: f64) -> f64 {
    let n = c.min(e.max_resident(isl, osl)).max(0.0);
    if n < 1.0 || !e.placement.fits {
        return 0.0;
    }
    let a = e.tokens_per_step();
    let chunk = e.limits.tokens_per_step.max(1.0);
    // Beyond n* = C * OSL / (ISL * a) decoders, prompts arrive faster than C tokens per step can prefill them:
    // the extra clients wait in the prefill queue instead of decoding.
    let n = n.min((chunk * osl / (isl * a)).max(1.0));
    let kv_tokens = n * (isl + osl / 2.0);
    // Prefill tokens needed per step in steady state, packed into steps of at most C tokens: below one
    // prompt piece per step, a share q of steps carries a piece; up to C, every step carries the demand.
    let prefill_per_step = isl * n * a / osl;
    let piece = chunk.min(isl);
    let mean_step = if prefill_per_step <= piece {
        let q = prefill_per_step / piece;
        st(e, n, 0.0, kv_tokens, 0.0).total_s * (1.0 - q) + st(e, n, piece, kv_tokens, isl / 2.0).total_s * q
    } else {
        st(e, n, prefill_per_step, kv_tokens, isl / 2.0).total_s
    };
    n * a / mean_step
}

/// PD's output tok/s: decode rate from Little's law, capped by the prefill machine's batched prompt rate.
fn pd(s: &Scenario, k: &Coefficients, fi: f64, fo: f64, c: f64) -> f64 {
    let pre = super::modes::engine(s, k, 1.0);
    let dec = super::modes::engine(s, k, 1.0);
    let a = dec.tokens_per_step();
    let max_res = dec.max_resident(fi, fo);
    if !dec.placement.fits || max_res < 1.0 {
        return 0.0;
    }
    // Prefill side: one prompt alone, and the batched rate when prompts queue (full chunks back to back).
    let r_p = prefill_alone_s(&pre, fi);
    let chunk = pre.limits.tokens_per_step.max(1.0);
    // A prompt longer than the chunk is prefilled chunk by chunk, each attending to the chunks before it: over
    // the prompt the chunks sit around its middle (context fi / 2), as `prefill_alone_s` has them.
    let full_chunk_s = st(&pre, 0.0, chunk, 0.0, fi / 2.0).total_s;
    let prefill_rate = (chunk / fi) / full_chunk_s;
    let t_x = super::modes::handoff_s(s, fi);
    let decode_rate = |n: f64| {
        let n_eff = n.max(1.0);
        let t = st(&dec, n_eff, 0.0, n_eff * (fi + fo / 2.0), 0.0).total_s;
        n * a / (fo * t)
    };
    let cap = c.min(max_res);
    // Bisection on the number of decoding sequences n: c = n + X(n) * (R_p + t_x).
    let (mut lo, mut hi) = (0.0_f64, cap);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mid + decode_rate(mid) * (r_p + t_x) > c {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    decode_rate(0.5 * (lo + hi)).min(prefill_rate) * fo
}

/// Output tok/s of one mode in the steady-state approximation.
pub fn output_tok_s(s: &Scenario, k: &Coefficients, mode: Mode, isl: u32, osl: u32, concurrency: u32) -> f64 {
    let (fi, fo, c) = (f64::from(isl.max(1)), f64::from(osl.max(1)), f64::from(concurrency.max(1)));
    match mode {
        Mode::Ep2 | Mode::Dpep2 if super::modes::ep2_refusal(s).is_some() => 0.0,
        Mode::Single | Mode::Tp2 | Mode::Ep2 | Mode::Pp2 | Mode::Tp4 | Mode::Pp4 => {
            colocated(&super::modes::mode_engine(s, k, mode), c, fi, fo)
        }
        Mode::Pd => pd(s, k, fi, fo, c),
        Mode::Dp2 | Mode::Dp4 | Mode::Dpep2 => {
            // Balanced copies (or DP+EP's ranks, each on the engine of one rank): `c mod n` of them serve one
            // client more than the others.
            let n = mode.machines();
            let (q, r) = (concurrency.max(1) / n, concurrency.max(1) % n);
            let rank = (mode == Mode::Dpep2).then(|| super::modes::mode_engine(s, k, mode));
            let at = |m: u32| match (&rank, m) {
                (_, 0) => 0.0,
                (Some(e), m) => colocated(e, f64::from(m), fi, fo),
                (None, m) => output_tok_s(s, k, Mode::Single, isl, osl, m),
            };
            f64::from(r) * at(q + 1) + f64::from(n - r) * at(q)
        }
    }
}

//! The cluster modes: one machine (`single`), one engine tensor-parallel over two machines (`tp2`), prefill
//! on one machine with decode on the other (`pd`), and two independent copies behind a router (`dp2`).
//!
//! ```text
//!   single:  [machine A: prefill + decode]
//!   tp2:     [A: half of every weight] <== 2 all-reduces per layer per step ==> [B: other half]
//!   pd:      [A: prefill only] --KV cache, one way over the link--> [B: decode only, never pauses]
//!   dp2:     router --ceil(c/2) clients--> [A: a whole copy]   --floor(c/2) clients--> [B: a whole copy]
//! ```
//! DP2 assumes the router balances clients evenly (a round-robin or least-load router; a random "shuffle"
//! router is uneven at small c, which the model does not capture) and nothing crosses the link.
//! PD in a closed loop: each client's request spends R_p in prefill, t_x in transfer and R_d = OSL * t_dec / a
//! decoding. With n_d sequences decoding, the decode rate is X = n_d * a / (OSL * t_dec(n_d)) and Little's law
//! gives c = n_d + X * (R_p + t_x); the root in n_d is unique because X grows with n_d. The prefill machine
//! caps X at its batched prompt rate.

use super::bandwidth::place;
use super::batching::{colocated, Engine};
use super::{Bottleneck, Coefficients, Prediction};
use crate::scenario::Scenario;
use crate::Mode;

/// Measured share of the link's payload limit that a two-way all-reduce reaches (derived: 92.242 GB/s
/// peak busbw over 98.04 GB/s on the GB300 pair); used for any link, as the pattern's efficiency.
pub const ALLREDUCE_LINK_EFFICIENCY: f64 = 92.242 / 98.04;

/// Builds the engine a mode runs on one machine (or, for TP2, spanning both).
pub fn engine<'a>(s: &'a Scenario, k: &'a Coefficients, span_machines: f64) -> Engine<'a> {
    let hw = &s.hardware;
    let gpus = hw.gpus.max(1.0);
    let tp = gpus * span_machines;
    let placement = place(&s.model, hw, tp, k);
    let (bw, lat) = if span_machines > 1.0 {
        // The slowest hop decides: the link between machines.
        (hw.link.payload_bytes_per_sec() * ALLREDUCE_LINK_EFFICIENCY, hw.link.call_latency_s)
    } else if gpus > 1.0 {
        (hw.intra_bytes_per_sec, hw.intra_call_latency_s)
    } else {
        (f64::INFINITY, 0.0)
    };
    Engine {
        model: &s.model,
        hw,
        k,
        placement,
        allreduce_bytes_per_sec: bw,
        allreduce_latency_s: lat,
        acceptance: k.acceptance_for(&s.model),
        spilled_routing_share: k.spilled_routing_share_for(&s.model),
    }
}

/// Predicts output throughput and latencies for one mode, workload and concurrency.
pub fn predict(s: &Scenario, k: &Coefficients, mode: Mode, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    let (fi, fo, c) = (f64::from(isl.max(1)), f64::from(osl.max(1)), f64::from(concurrency.max(1)));
    match mode {
        Mode::Single | Mode::Tp2 => {
            let e = engine(s, k, if mode == Mode::Tp2 { 2.0 } else { 1.0 });
            let r = colocated(&e, c, fi, fo);
            let a = e.tokens_per_step();
            Prediction {
                mode,
                isl,
                osl,
                concurrency,
                output_tok_s: r.output_tok_s,
                ttft_s: r.ttft_s,
                tpot_s: r.mean_step_s / a,
                step_s: r.mean_step_s,
                resident_seqs: r.resident,
                max_resident_seqs: r.max_resident,
                bottleneck: r.bottleneck,
                tokens_per_step: a,
            }
        }
        Mode::Pd => pd(s, k, isl, osl, concurrency),
        Mode::Dp2 => two_copies(s, k, isl, osl, concurrency),
    }
}

/// Two copies of the single-machine engine, each serving half of the clients (the larger half when odd).
fn two_copies(s: &Scenario, k: &Coefficients, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    let c = concurrency.max(1);
    let (big, small) = (c.div_ceil(2), c / 2);
    let a = predict(s, k, Mode::Single, isl, osl, big);
    let b = if small > 0 { Some(predict(s, k, Mode::Single, isl, osl, small)) } else { None };
    let (n_a, n_b) = (f64::from(big), f64::from(small));
    // Latencies are what an average client sees: weighted by the clients each copy serves.
    let mean = |x: f64, y: Option<f64>| match y {
        Some(y) => (x * n_a + y * n_b) / (n_a + n_b),
        None => x,
    };
    Prediction {
        mode: Mode::Dp2,
        isl,
        osl,
        concurrency,
        output_tok_s: a.output_tok_s + b.as_ref().map_or(0.0, |b| b.output_tok_s),
        ttft_s: mean(a.ttft_s, b.as_ref().map(|b| b.ttft_s)),
        tpot_s: mean(a.tpot_s, b.as_ref().map(|b| b.tpot_s)),
        step_s: mean(a.step_s, b.as_ref().map(|b| b.step_s)),
        resident_seqs: a.resident_seqs + b.as_ref().map_or(0.0, |b| b.resident_seqs),
        max_resident_seqs: 2.0 * a.max_resident_seqs,
        // The busier copy sets the pace.
        bottleneck: a.bottleneck,
        tokens_per_step: a.tokens_per_step,
    }
}

fn pd(s: &Scenario, k: &Coefficients, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    let (fi, fo, c) = (f64::from(isl.max(1)), f64::from(osl.max(1)), f64::from(concurrency.max(1)));
    let pre = engine(s, k, 1.0);
    let dec = engine(s, k, 1.0);
    let a = dec.tokens_per_step();
    let max_res = dec.max_resident(fi, fo);
    let fail = |b: Bottleneck| Prediction {
        mode: Mode::Pd,
        isl,
        osl,
        concurrency,
        output_tok_s: 0.0,
        ttft_s: f64::INFINITY,
        tpot_s: f64::INFINITY,
        step_s: f64::INFINITY,
        resident_seqs: 0.0,
        max_resident_seqs: max_res,
        bottleneck: b,
        tokens_per_step: a,
    };
    if !dec.placement.fits {
        return fail(Bottleneck::DoesNotFit);
    }
    if max_res < 1.0 {
        return fail(Bottleneck::KvCapacity);
    }
    // Prefill side: one prompt alone, and the batched rate when prompts queue (full chunks back to back).
    let r_p = pre.prefill_alone_s(fi);
    let chunk = k.prefill_chunk_tokens.max(1.0);
    let full_chunk_s = pre.step(0.0, chunk, 0.0, fi.min(chunk) / 2.0).total_s;
    let prefill_rate = (chunk / fi) / full_chunk_s;
    // KV hand-off: one way over the link, after the decode side reserved room for it.
    let t_x =
        fi * s.model.kv_bytes_per_token / s.hardware.link.payload_bytes_per_sec() + s.hardware.link.call_latency_s;
    let decode_rate = |n: f64| {
        let n_eff = n.max(1.0);
        let t = dec.step(n_eff, 0.0, n_eff * (fi + fo / 2.0), 0.0).total_s;
        (n * a / (fo * t), t)
    };
    let cap = c.min(max_res);
    // Bisection on the number of decoding sequences n: c = n + X(n) * (R_p + t_x).
    let (mut lo, mut hi) = (0.0_f64, cap);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        let (x, _) = decode_rate(mid);
        if mid + x * (r_p + t_x) > c {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let n = 0.5 * (lo + hi);
    let (x_dec, t_dec) = decode_rate(n);
    let (x, bottleneck) = if x_dec > prefill_rate {
        (prefill_rate, Bottleneck::PrefillRate)
    } else if c > max_res && n >= cap - 1e-6 {
        (x_dec, Bottleneck::KvCapacity)
    } else {
        (x_dec, dec.step(n.max(1.0), 0.0, n.max(1.0) * (fi + fo / 2.0), 0.0).bottleneck())
    };
    let _ = t_x;
    Prediction {
        mode: Mode::Pd,
        isl,
        osl,
        concurrency,
        output_tok_s: x * fo,
        ttft_s: r_p + t_x,
        tpot_s: t_dec / a,
        step_s: t_dec,
        resident_seqs: n,
        max_resident_seqs: max_res,
        bottleneck,
        tokens_per_step: a,
    }
}

//! One engine step as a roofline with overheads, and a colocated engine under closed-loop concurrency.
//!
//! Step time (seconds), for T tokens in the step (decode tokens x (draft + 1) plus any prefill chunk):
//! ```text
//!   t_mem     = hbm_bytes / (eta_hbm * B_hbm) + slow_bytes / (eta_slow * B_slow)     (serialised tiers)
//!   t_compute = (2 * active_params * T + attention FLOPs) / tp / (eta_c * peak FLOPs)
//!   t_comm    = (2 * layers + 2 + 4 * draft) * alpha * scale + 2 * layers * T * hidden * 2 B / all-reduce bw  (TP)
//!   t_draft   = draft_tokens * (draft_pass_bytes / tp / (eta_hbm * B_hbm) + draft overhead)
//!   t_step    = max(t_mem, t_compute) + t_comm + t_draft + step overhead + per-sequence overhead x seqs
//! ```
//! A colocated engine (one station, or TP2) in steady state with n resident sequences accepts `a` tokens per
//! sequence per step, so requests finish at n*a/OSL per step and each brings ISL prefill tokens. Prefill
//! arrives in chunks of at most C tokens: a fraction q of steps carries a chunk. Throughput is n*a/E[t_step].

use super::bandwidth::{step_reads, Placement};
use super::{Bottleneck, Coefficients};
use crate::spec::{HardwareSpec, ModelSpec};

/// Everything one engine needs to time its steps.
#[derive(Debug, Clone)]
pub struct Engine<'a> {
    pub model: &'a ModelSpec,
    pub hw: &'a HardwareSpec,
    pub k: &'a Coefficients,
    pub placement: Placement,
    /// All-reduce bandwidth between the ranks, bytes/s (infinite when tp = 1).
    pub allreduce_bytes_per_sec: f64,
    /// Per-call latency of one all-reduce, seconds (0 when tp = 1).
    pub allreduce_latency_s: f64,
    pub acceptance: f64,
    /// Routing share of the spilled experts relative to uniform (1.0 = uniform).
    pub spilled_routing_share: f64,
}

/// The parts of one step's time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTime {
    pub total_s: f64,
    pub hbm_s: f64,
    pub slow_s: f64,
    pub compute_s: f64,
    pub comm_s: f64,
    pub overhead_s: f64,
}

impl StepTime {
    pub fn bottleneck(&self) -> Bottleneck {
        let parts = [
            (self.hbm_s, Bottleneck::HbmBandwidth),
            (self.slow_s, Bottleneck::SlowPathBandwidth),
            (self.compute_s, Bottleneck::Compute),
            (self.comm_s, Bottleneck::Link),
            (self.overhead_s, Bottleneck::Overhead),
        ];
        parts.iter().fold((f64::MIN, Bottleneck::Overhead), |best, &(t, b)| if t > best.0 { (t, b) } else { best }).1
    }
}

impl Engine<'_> {
    /// Tokens accepted per sequence per step: (1 - p^(k+1)) / (1 - p) for k draft tokens.
    pub fn tokens_per_step(&self) -> f64 {
        let k = self.model.draft_tokens.max(0.0);
        let p = self.acceptance.clamp(0.0, 0.999);
        if k == 0.0 {
            1.0
        } else {
            (1.0 - p.powf(k + 1.0)) / (1.0 - p)
        }
    }

    /// The dense tensor rate of the model's compute precision: FP4 (NVFP4, MXFP4), FP8, or BF16 above 8 bits.
    fn flops(&self) -> f64 {
        if self.model.compute_bits <= 4.0 {
            self.hw.flops_fp4
        } else if self.model.compute_bits <= 8.0 {
            self.hw.flops_fp8
        } else {
            self.hw.flops_bf16
        }
    }

    /// Time of one step with `seqs` decoding sequences, `prefill` prompt tokens, and `kv_tokens` of context.
    pub fn step(&self, seqs: f64, prefill: f64, kv_tokens: f64, prefill_ctx: f64) -> StepTime {
        let m = self.model;
        let k = self.k;
        let tp = self.placement.tp;
        let per_seq = if seqs > 0.0 { m.draft_tokens + 1.0 } else { 0.0 };
        let tokens = seqs * per_seq + prefill;
        let reads = step_reads(m, &self.placement, tokens, kv_tokens, self.spilled_routing_share);
        let hbm_s = reads.hbm_bytes / (k.hbm_efficiency * self.hw.hbm_bytes_per_sec);
        let slow_s = reads.slow_bytes / (k.slow_efficiency * self.hw.slow_path_bytes_per_sec);
        // Attention: ~4 * layers * hidden FLOPs per token per context position (QK^T and AV).
        let attn =
            4.0 * m.layers * m.hidden_size * (seqs * per_seq * kv_tokens / seqs.max(1.0) + prefill * prefill_ctx);
        let compute_s = (2.0 * m.active_params * tokens + attn) / tp / (k.compute_efficiency * self.flops());
        let comm_s = if tp > 1.0 {
            // Per forward pass: two all-reduces per layer, one for the vocabulary-parallel embedding and one
            // gather of the LM head's logits; each draft pass is one more layer with its own embedding and head.
            let main_calls = 2.0 * m.layers + 2.0;
            let draft_calls = if seqs > 0.0 { m.draft_tokens * 4.0 } else { 0.0 };
            (main_calls + draft_calls) * self.allreduce_latency_s * k.tp_latency_scale
                + 2.0 * m.layers * tokens * m.hidden_size * 2.0 / self.allreduce_bytes_per_sec
        } else {
            0.0
        };
        let draft_s = if seqs > 0.0 {
            m.draft_tokens
                * (m.draft_pass_bytes / tp / (k.hbm_efficiency * self.hw.hbm_bytes_per_sec) + k.draft_pass_overhead_s)
        } else {
            0.0
        };
        let overhead_s = k.step_overhead_s + k.per_seq_overhead_s * seqs + draft_s;
        let total_s = (hbm_s + slow_s).max(compute_s) + comm_s + overhead_s;
        StepTime { total_s, hbm_s, slow_s, compute_s, comm_s, overhead_s }
    }

    /// Most sequences of `isl + osl` tokens the KV pool holds at once.
    pub fn max_resident(&self, isl: f64, osl: f64) -> f64 {
        (self.placement.kv_pool_bytes / (self.placement.kv_bytes_per_token * (isl + osl))).floor()
    }

    /// Time to prefill one prompt alone (chunk by chunk), seconds.
    pub fn prefill_alone_s(&self, isl: f64) -> f64 {
        let chunk = self.k.prefill_chunk_tokens.max(1.0);
        let full = (isl / chunk).floor();
        let rest = isl - full * chunk;
        let mut t = 0.0;
        if full > 0.0 {
            t += full * self.step(0.0, chunk, 0.0, isl / 2.0).total_s;
        }
        if rest > 0.0 {
            t += self.step(0.0, rest, 0.0, isl / 2.0).total_s;
        }
        t
    }
}

/// Result of a colocated closed-loop sweep point.
#[derive(Debug, Clone, Copy)]
pub struct Colocated {
    pub output_tok_s: f64,
    pub mean_step_s: f64,
    pub resident: f64,
    pub max_resident: f64,
    pub ttft_s: f64,
    pub bottleneck: Bottleneck,
}

/// Steady state of a colocated engine with `c` closed-loop clients sending ISL/OSL requests.
pub fn colocated(e: &Engine, c: f64, isl: f64, osl: f64) -> Colocated {
    let max_res = e.max_resident(isl, osl);
    let n = c.min(max_res).max(0.0);
    if n < 1.0 || !e.placement.fits {
        let b = if e.placement.fits { Bottleneck::KvCapacity } else { Bottleneck::DoesNotFit };
        return Colocated {
            output_tok_s: 0.0,
            mean_step_s: f64::INFINITY,
            resident: 0.0,
            max_resident: max_res,
            ttft_s: f64::INFINITY,
            bottleneck: b,
        };
    }
    let a = e.tokens_per_step();
    let chunk = e.k.prefill_chunk_tokens.max(1.0);
    // Beyond n* = C * OSL / (ISL * a) decoders, prompts arrive faster than C tokens per step can prefill them:
    // the extra clients wait in the prefill queue instead of decoding.
    let prefill_cap = chunk * osl / (isl * a);
    let prefill_bound = n > prefill_cap;
    let n = n.min(prefill_cap.max(1.0));
    let kv_tokens = n * (isl + osl / 2.0);
    // Prefill tokens needed per step in steady state, packed into steps of at most C tokens: below one
    // prompt piece per step, a share q of steps carries a piece; up to C, every step carries the demand.
    let prefill_per_step = isl * n * a / osl;
    let plain = e.step(n, 0.0, kv_tokens, 0.0);
    let piece = chunk.min(isl);
    let (mean_step, with_chunk) = if prefill_per_step <= piece {
        let q = prefill_per_step / piece;
        let chunked = e.step(n, piece, kv_tokens, isl / 2.0);
        (plain.total_s * (1.0 - q) + chunked.total_s * q, chunked)
    } else {
        let s = e.step(n, prefill_per_step, kv_tokens, isl / 2.0);
        (s.total_s, s)
    };
    let output_per_step = n * a;
    let output = output_per_step / mean_step;
    // TTFT: the prompt's own chunks, each sharing a step with the decodes.
    let ttft = (isl / chunk).ceil() * with_chunk.total_s;
    let mut bottleneck = if prefill_bound {
        Bottleneck::PrefillRate
    } else if prefill_per_step > 0.5 * chunk {
        with_chunk.bottleneck()
    } else {
        plain.bottleneck()
    };
    if c > max_res {
        bottleneck = Bottleneck::KvCapacity;
    }
    Colocated {
        output_tok_s: output,
        mean_step_s: mean_step,
        resident: n,
        max_resident: max_res,
        ttft_s: ttft,
        bottleneck,
    }
}

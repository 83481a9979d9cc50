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
//! Every mode runs the step-level closed loop of `serving`; PD runs one prefill engine and one decode engine
//! joined by the link (KV cache of ISL tokens per request, one way).

use super::bandwidth::place;
use super::batching::Engine;
use super::serving::{colocated, colocated_batch, disaggregated, disaggregated_batch, Measured};
use super::{Coefficients, Prediction};
use crate::dataset::schema::ScenarioLoad;
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

/// A prediction from a measured closed-loop run.
fn prediction(mode: Mode, isl: u32, osl: u32, concurrency: u32, r: &Measured, a: f64) -> Prediction {
    Prediction {
        mode,
        isl,
        osl,
        concurrency,
        output_tok_s: r.output_tok_s,
        ttft_s: r.ttft_s,
        tpot_s: r.tpot_s,
        step_s: r.mean_step_s,
        resident_seqs: r.resident,
        max_resident_seqs: r.max_resident,
        bottleneck: r.bottleneck,
        tokens_per_step: a,
        preemptions_per_request: r.preemptions_per_request,
        kv_utilization: r.kv_utilization,
        queue_s: r.queue_s,
    }
}

/// PD's KV hand-off of one request with an `isl`-token prompt: one way over the link.
pub fn handoff_s(s: &Scenario, isl: f64) -> f64 {
    isl * s.model.kv_bytes_per_token / s.hardware.link.payload_bytes_per_sec() + s.hardware.link.call_latency_s
}

/// Predicts output throughput and latencies for one mode, workload and concurrency.
pub fn predict(s: &Scenario, k: &Coefficients, mode: Mode, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    let (fi, fo, c) = (f64::from(isl.max(1)), f64::from(osl.max(1)), f64::from(concurrency.max(1)));
    match mode {
        Mode::Single | Mode::Tp2 => {
            let e = engine(s, k, if mode == Mode::Tp2 { 2.0 } else { 1.0 });
            let r = match s.load {
                ScenarioLoad::ClosedLoop => colocated(&e, c, fi, fo),
                ScenarioLoad::Batch => colocated_batch(&e, c, fi, fo),
            };
            prediction(mode, isl, osl, concurrency, &r, e.tokens_per_step())
        }
        Mode::Pd => {
            let pre = engine(s, k, 1.0);
            let dec = engine(s, k, 1.0);
            let r = match s.load {
                ScenarioLoad::ClosedLoop => disaggregated(&pre, &dec, handoff_s(s, fi), c, fi, fo),
                ScenarioLoad::Batch => disaggregated_batch(&pre, &dec, handoff_s(s, fi), c, fi, fo),
            };
            prediction(mode, isl, osl, concurrency, &r, dec.tokens_per_step())
        }
        Mode::Dp2 => two_copies(s, k, isl, osl, concurrency),
    }
}

/// Two copies of the single-machine engine, each serving half of the clients (the larger half when odd).
fn two_copies(s: &Scenario, k: &Coefficients, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    two_copies_of(isl, osl, concurrency, |c| predict(s, k, Mode::Single, isl, osl, c))
}

/// `two_copies` with the single-machine answers from `single` (a memo when a sweep already has them).
fn two_copies_of(isl: u32, osl: u32, concurrency: u32, mut single: impl FnMut(u32) -> Prediction) -> Prediction {
    let c = concurrency.max(1);
    let (big, small) = (c.div_ceil(2), c / 2);
    let a = single(big);
    // An even count splits into two equal halves: the second copy's answer is the first's.
    let b = match small {
        0 => None,
        n if n == big => Some(a.clone()),
        n => Some(single(n)),
    };
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
        preemptions_per_request: mean(a.preemptions_per_request, b.as_ref().map(|b| b.preemptions_per_request)),
        kv_utilization: mean(a.kv_utilization, b.as_ref().map(|b| b.kv_utilization)),
        queue_s: mean(a.queue_s, b.as_ref().map(|b| b.queue_s)),
    }
}

/// Predictions of one scenario and workload at many concurrencies and modes, each single-machine answer computed
/// once: two copies at `c` clients are one machine at `c / 2`, which a sweep over powers of two already has
/// (the explorer's curves and the planner's rows ask for both).
pub struct Sweep<'a> {
    s: &'a Scenario,
    k: &'a Coefficients,
    isl: u32,
    osl: u32,
    single: Vec<(u32, Prediction)>,
}

impl<'a> Sweep<'a> {
    pub fn new(s: &'a Scenario, k: &'a Coefficients, isl: u32, osl: u32) -> Self {
        Sweep { s, k, isl, osl, single: Vec::new() }
    }

    /// The same answer as `predict(s, k, mode, isl, osl, concurrency)`.
    pub fn predict(&mut self, mode: Mode, concurrency: u32) -> Prediction {
        match mode {
            Mode::Single => self.single(concurrency),
            Mode::Dp2 => {
                let (isl, osl) = (self.isl, self.osl);
                two_copies_of(isl, osl, concurrency, |c| self.single(c))
            }
            _ => predict(self.s, self.k, mode, self.isl, self.osl, concurrency),
        }
    }

    fn single(&mut self, concurrency: u32) -> Prediction {
        if let Some((_, p)) = self.single.iter().find(|(c, _)| *c == concurrency) {
            return p.clone();
        }
        let p = predict(self.s, self.k, Mode::Single, self.isl, self.osl, concurrency);
        self.single.push((concurrency, p.clone()));
        p
    }
}

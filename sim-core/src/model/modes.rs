//! The cluster modes: one machine (`single`), one engine tensor-parallel over two machines (`tp2`), pipeline
//! parallel (`pp2`), tensor parallel with the experts split across the machines (`ep2`), prefill on one machine
//! with decode on the other (`pd`), and two independent copies behind a router (`dp2`).
//!
//! ```text
//!   single:  [machine A: prefill + decode]
//!   tp2:     [A: half of every weight] <== 2 all-reduces per layer per step ==> [B: other half]
//!   pp2:     [A: first half of the layers] --activations, once per micro-batch--> [B: second half]
//!   ep2:     [A: half of attention, half of the experts] <== 2 all-reduces per layer per step (DP = 1) ==> [B]
//!   pd:      [A: prefill only] --KV cache, one way over the link--> [B: decode only, never pauses]
//!   dp2:     router --ceil(c/2) clients--> [A: a whole copy]   --floor(c/2) clients--> [B: a whole copy]
//! ```
//! Every engine spanning both machines (tp2, pp2, ep2) pays the driver's one-way control message per step on the
//! link's transport (`batching::Span`). A dense model has no experts to split: `ep2` refuses it
//! (`ep2_refusal`).
//! DP2's router is the scenario's: balanced (half of the clients each: round-robin or least-load) or random (a
//! "shuffle" router: binomial splits, averaged; `two_copies_of`); nothing crosses the link.
//! Every mode runs the step-level closed loop of `serving`; PD runs one prefill engine and one decode engine
//! joined by the link (KV cache of ISL tokens per request, one way).

use super::bandwidth::place;
use super::batching::{Engine, Span};
use super::serving::{colocated_batch, colocated_memo, disaggregated_memo, disaggregated_run, LoopMemo, Measured, Run};
use super::{Coefficients, Prediction};
use crate::dataset::schema::{DpRouter, ScenarioLoad};
use crate::scenario::Scenario;
use crate::Mode;

pub use super::fabric::ALLREDUCE_LINK_EFFICIENCY;

/// How one engine is laid over the machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One machine.
    One,
    /// Tensor parallel over every machine of the span.
    Tensor,
    /// Tensor parallel attention, routed experts split across both machines (expert parallel).
    Expert,
    /// An equal share of the layers on each machine of the span (pipeline parallel), tensor parallel inside each.
    Pipeline,
}

impl Layout {
    /// The layout a colocated mode runs (`None` for PD and copies, which run one-machine engines).
    pub fn of(mode: Mode) -> Option<Layout> {
        match mode {
            Mode::Single => Some(Layout::One),
            Mode::Tp2 | Mode::Tp4 => Some(Layout::Tensor),
            Mode::Ep2 => Some(Layout::Expert),
            Mode::Pp2 | Mode::Pp4 => Some(Layout::Pipeline),
            Mode::Pd | Mode::Dp2 | Mode::Dp4 => None,
        }
    }
}

/// The engine a colocated mode runs: its layout over as many machines as the mode uses (one machine's engine
/// for the modes that run one-machine engines).
pub fn mode_engine<'a>(s: &'a Scenario, k: &'a Coefficients, mode: Mode) -> Engine<'a> {
    match Layout::of(mode) {
        Some(layout) => laid_engine(s, k, layout, f64::from(mode.machines())),
        None => laid_engine(s, k, Layout::One, 1.0),
    }
}

/// Why `ep2` cannot run `s`'s model, if it cannot: expert parallelism splits routed experts, a dense model has
/// none.
pub fn ep2_refusal(s: &Scenario) -> Option<String> {
    (s.model.routed_experts < 2.0 || s.model.routed_expert_bytes <= 0.0).then(|| {
        format!("{} is dense: expert parallel splits routed experts across the machines, and it has none", s.model.id)
    })
}

/// Builds the engine a mode runs on one machine (or, for tensor parallel, spanning `span_machines`).
pub fn engine<'a>(s: &'a Scenario, k: &'a Coefficients, span_machines: f64) -> Engine<'a> {
    if span_machines > 1.0 {
        laid_engine(s, k, Layout::Tensor, span_machines)
    } else {
        laid_engine(s, k, Layout::One, 1.0)
    }
}

/// Builds the engine of `layout` over `span_machines` machines (one for `Layout::One`): a pipeline stage holds
/// its machine's share of the layers, so per GPU it holds and reads that share of the weights and computes it as
/// a split as wide does; its collectives stay inside its machine. Four machines are joined as two are, each
/// by its own link at the same rate (through a switch: a store-and-forward hop of a few hundred nanoseconds,
/// below NCCL's per-hop latency, is not charged).
pub fn laid_engine<'a>(s: &'a Scenario, k: &'a Coefficients, layout: Layout, span_machines: f64) -> Engine<'a> {
    let hw = &s.hardware;
    let gpus = hw.gpus.max(1.0);
    let machines = if layout == Layout::One { 1.0 } else { span_machines.max(1.0).round() };
    let tp = gpus * machines;
    let mut placement = place(&s.model, hw, tp, k);
    if layout == Layout::Pipeline {
        // Each stage holds its share of the layers' KV, split by heads over its own machine's GPUs.
        placement.kv_bytes_per_token = s.model.kv_bytes_per_token / (machines * s.model.kv_split(gpus));
    }
    let attention_padding = s.model.attention_head_padding(
        hw.sparse_attention_head_tile,
        if layout == Layout::Pipeline { gpus } else { placement.tp },
    );
    let collective_machines = if layout == Layout::Pipeline { 1.0 } else { machines };
    let (allreduce, measured) = super::fabric::tp_all_reduce(hw, collective_machines);
    let link = &hw.link;
    let span = Span {
        // The scheduler's output reaches the remote worker one way; the driver waits only for the output rank's
        // answer (`Span::control_s`).
        control_s: if machines > 1.0 { link.round_trip_s / 2.0 } else { 0.0 },
        // Expert parallelism with one data-parallel rank: whole experts over every rank of the engine.
        expert_ranks: if layout == Layout::Expert { tp } else { 1.0 },
        pipeline_stages: if layout == Layout::Pipeline { machines } else { 1.0 },
        // The tensors' metadata goes one way over the CPU group; each tensor by an NCCL send across the link.
        stage_metadata_s: link.round_trip_s / 2.0,
        stage_send: (layout == Layout::Pipeline).then(|| super::fabric::communicator(hw, machines)),
        stage_hop_bytes_per_sec: link.payload_bytes_per_sec(),
    };
    Engine {
        model: &s.model,
        hw,
        k,
        placement,
        allreduce,
        allreduce_measured: measured,
        acceptance: k.acceptance_for(&s.model),
        spilled_routing_share: k.spilled_routing_share_for(&s.model),
        attention_padding,
        limits: k.batch_limits(hw),
        span,
    }
}

/// A prediction from a measured closed-loop run.
/// One engine's (or PD pair's) loop as a prediction. A request reaches the engine `request_overhead_s` after it
/// is sent (its first token reaches the client that much after the engine sampled it, the two halves of one
/// constant): TTFT gains it; a run sent all at once lasts that much longer for its client; a closed loop's clients
/// spend it outside the engine each request, which takes the place of as much of their queueing and, past the
/// queue, lengthens their TTFT and their cycle. A batch's rate is measured from its first first token, which the
/// constant only moves.
fn prediction(
    k: &Coefficients,
    load: ScenarioLoad,
    (mode, isl, osl, concurrency): (Mode, u32, u32, u32),
    r: &Measured,
    a: f64,
) -> Prediction {
    let o = k.request_overhead_s;
    let tokens = f64::from(concurrency.max(1)) * f64::from(osl.max(1));
    let stretched = |extra: f64| {
        if r.output_tok_s > 0.0 {
            let span = tokens / r.output_tok_s;
            r.output_tok_s * span / (span + extra)
        } else {
            r.output_tok_s
        }
    };
    // What the client waits beyond the engine's own answer: in a closed loop the time outside the engine takes
    // the place of as much queueing.
    let beyond = match load {
        ScenarioLoad::ClosedLoop => (o - r.queue_s).max(0.0),
        ScenarioLoad::AllAtOnce | ScenarioLoad::Batch => o,
    };
    let output_tok_s = match load {
        ScenarioLoad::AllAtOnce | ScenarioLoad::ClosedLoop => stretched(beyond),
        ScenarioLoad::Batch => r.output_tok_s,
    };
    Prediction {
        mode,
        isl,
        osl,
        concurrency,
        output_tok_s,
        ttft_s: r.ttft_s + beyond,
        tpot_s: r.tpot_s,
        step_s: r.mean_step_s,
        resident_seqs: r.resident,
        max_resident_seqs: r.max_resident,
        bottleneck: r.bottleneck,
        tokens_per_step: a,
        preemptions_per_request: r.preemptions_per_request,
        kv_utilization: r.kv_utilization,
        queue_s: if load == ScenarioLoad::ClosedLoop { (r.queue_s - o).max(0.0) } else { r.queue_s },
    }
}

/// PD's KV hand-off of one request with an `isl`-token prompt: one way over the link, every byte the prompt's KV
/// holds (window layers only their window, a sparse indexer's keys too).
pub fn handoff_s(s: &Scenario, isl: f64) -> f64 {
    s.model.kv_bytes_held(isl) / s.hardware.link.payload_bytes_per_sec() + s.hardware.link.call_latency_s
}

/// Predicts output throughput and latencies for one mode, workload and concurrency.
pub fn predict(s: &Scenario, k: &Coefficients, mode: Mode, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    predict_memo(s, k, mode, isl, osl, concurrency, &mut LoopMemo::default())
}

/// `predict` with the closed-loop runs of this scenario, coefficients, mode and workload kept in `memo` (fresh
/// for each of them: `Sweep` keeps one per mode).
fn predict_memo(
    s: &Scenario,
    k: &Coefficients,
    mode: Mode,
    isl: u32,
    osl: u32,
    concurrency: u32,
    memo: &mut LoopMemo,
) -> Prediction {
    let (fi, fo, c) = (f64::from(isl.max(1)), f64::from(osl.max(1)), f64::from(concurrency.max(1)));
    let lengths = s.output_lengths(isl, osl);
    if mode == Mode::Ep2 && ep2_refusal(s).is_some() {
        return refused(mode, isl, osl, concurrency);
    }
    match mode {
        Mode::Single | Mode::Tp2 | Mode::Ep2 | Mode::Pp2 | Mode::Tp4 | Mode::Pp4 => {
            let e = mode_engine(s, k, mode);
            let r = match s.load {
                ScenarioLoad::ClosedLoop => colocated_memo(&e, c, fi, fo, memo),
                ScenarioLoad::Batch => colocated_batch(&e, c, fi, fo, Run::Batch, lengths),
                ScenarioLoad::AllAtOnce => colocated_batch(&e, c, fi, fo, Run::AllAtOnce, lengths),
            };
            prediction(k, s.load, (mode, isl, osl, concurrency), &r, e.tokens_per_step())
        }
        Mode::Pd => {
            let pre = engine(s, k, 1.0);
            let dec = engine(s, k, 1.0);
            let r = match s.load {
                ScenarioLoad::ClosedLoop => disaggregated_memo(&pre, &dec, handoff_s(s, fi), c, fi, fo, memo),
                ScenarioLoad::Batch => disaggregated_run(&pre, &dec, handoff_s(s, fi), c, fi, fo, Run::Batch, lengths),
                ScenarioLoad::AllAtOnce => {
                    disaggregated_run(&pre, &dec, handoff_s(s, fi), c, fi, fo, Run::AllAtOnce, lengths)
                }
            };
            prediction(k, s.load, (mode, isl, osl, concurrency), &r, dec.tokens_per_step())
        }
        Mode::Dp2 => two_copies(s, k, isl, osl, concurrency),
        Mode::Dp4 => copies_of(4, s.router, s.load, concurrency, |c| predict(s, k, Mode::Single, isl, osl, c)),
    }
}

/// A mode that cannot run the scenario's model (`ep2_refusal`): no throughput, its reason in the bottleneck.
fn refused(mode: Mode, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    Prediction {
        mode,
        isl,
        osl,
        concurrency,
        output_tok_s: 0.0,
        ttft_s: f64::INFINITY,
        tpot_s: f64::INFINITY,
        step_s: f64::INFINITY,
        resident_seqs: 0.0,
        max_resident_seqs: 0.0,
        bottleneck: super::Bottleneck::NoExperts,
        tokens_per_step: 1.0,
        preemptions_per_request: 0.0,
        kv_utilization: 0.0,
        queue_s: 0.0,
    }
}

/// Two copies of the single-machine engine behind the scenario's router.
fn two_copies(s: &Scenario, k: &Coefficients, isl: u32, osl: u32, concurrency: u32) -> Prediction {
    two_copies_of(s.router, s.load, concurrency, |c| predict(s, k, Mode::Single, isl, osl, c))
}

/// Probability mass a random router's splits may leave out: the rarest, most lopsided splits of a large `c`.
const RANDOM_SPLIT_TAIL: f64 = 1e-3;

/// `two_copies` with the single-machine answers from `single` (a memo when a sweep already has them).
///
/// A balanced router gives each copy half of the clients. A random one (`DpRouter::Random`) sends each request
/// to a copy with even odds, so the busier copy serves `m >= c/2` clients with binomial probability; the answer
/// is the expectation over those splits. Under a steady closed loop the two copies' rates add. Under batches
/// the window runs to the busier copy's last finish, so the `c` requests' decode tokens take as long as its
/// `m` do: `c * tg(m) / m` (what made kubis.ai's two shuffled Sparks at 2 and 4 clients slower than two
/// halves).
fn two_copies_of(
    router: DpRouter,
    load: ScenarioLoad,
    concurrency: u32,
    mut single: impl FnMut(u32) -> Prediction,
) -> Prediction {
    let c = concurrency.max(1);
    if router == DpRouter::Balanced {
        return split_between(c, c.div_ceil(2), load, &mut single);
    }
    let splits: Vec<(f64, Prediction)> =
        busier_copy_odds(c).into_iter().map(|(m, p)| (p, split_between(c, m, load, &mut single))).collect();
    // The likeliest split names the bottleneck; the rest is the expectation over splits.
    let likeliest = splits.iter().reduce(|a, b| if b.0 > a.0 { b } else { a }).map(|(_, q)| q.clone());
    let expect = |field: fn(&Prediction) -> f64| splits.iter().map(|(p, q)| p * field(q)).sum::<f64>();
    Prediction {
        output_tok_s: expect(|q| q.output_tok_s),
        ttft_s: expect(|q| q.ttft_s),
        tpot_s: expect(|q| q.tpot_s),
        step_s: expect(|q| q.step_s),
        resident_seqs: expect(|q| q.resident_seqs),
        preemptions_per_request: expect(|q| q.preemptions_per_request),
        kv_utilization: expect(|q| q.kv_utilization),
        queue_s: expect(|q| q.queue_s),
        // `busier_copy_odds` always has a split: the most even one.
        ..likeliest.unwrap_or_else(|| split_between(c, c.div_ceil(2), load, &mut single))
    }
}

/// The busier copy's client count `m` (from `ceil(c/2)` to `c`) under a random router, with its probability
/// (`Binomial(c, 1/2)` folded at the middle), most even first; the lopsided tail past `1 - RANDOM_SPLIT_TAIL`
/// of the mass is left out and the rest renormalised.
pub fn busier_copy_odds(c: u32) -> Vec<(u32, f64)> {
    let c = c.max(1);
    let n = f64::from(c);
    // ln C(c, k) - c ln 2, built up from k = 0 so no factorial overflows.
    let mut ln_p = -n * std::f64::consts::LN_2;
    let mut pmf = Vec::with_capacity(c as usize + 1);
    for k in 0..=c {
        pmf.push(ln_p.exp());
        ln_p += (f64::from(c - k)).ln() - (f64::from(k) + 1.0).ln();
    }
    let mut odds: Vec<(u32, f64)> = Vec::new();
    let mut mass = 0.0;
    for m in c.div_ceil(2)..=c {
        let p = if 2 * m == c { pmf[m as usize] } else { pmf[m as usize] + pmf[(c - m) as usize] };
        odds.push((m, p));
        mass += p;
        if mass >= 1.0 - RANDOM_SPLIT_TAIL {
            break;
        }
    }
    let total: f64 = odds.iter().map(|(_, p)| p).sum();
    odds.iter().map(|&(m, p)| (m, p / total)).collect()
}

/// Two copies with `busy` of the `c` clients on one and the rest on the other.
fn split_between(c: u32, busy: u32, load: ScenarioLoad, single: &mut impl FnMut(u32) -> Prediction) -> Prediction {
    let a = single(busy);
    let small = c - busy;
    // An even split's second copy answers as the first.
    let b = match small {
        0 => None,
        n if n == busy => Some(a.clone()),
        n => Some(single(n)),
    };
    let (n_a, n_b) = (f64::from(busy), f64::from(small));
    // Latencies are what an average client sees: weighted by the clients each copy serves.
    let mean = |x: f64, y: Option<f64>| match y {
        Some(y) => (x * n_a + y * n_b) / (n_a + n_b),
        None => x,
    };
    let output_tok_s = match load {
        // Both copies decode the whole time: their rates add.
        ScenarioLoad::ClosedLoop => a.output_tok_s + b.as_ref().map_or(0.0, |b| b.output_tok_s),
        // One window to the busier copy's last finish (the smaller batch ends first): all `c` requests' tokens
        // over the time the busier copy's `busy` take, from the first first token (a batch) or from the send.
        ScenarioLoad::Batch | ScenarioLoad::AllAtOnce => a.output_tok_s * f64::from(c) / n_a,
    };
    Prediction {
        mode: Mode::Dp2,
        isl: a.isl,
        osl: a.osl,
        concurrency: c,
        output_tok_s,
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

/// `copies` independent one-machine engines behind the scenario's router (more than two: `two_copies_of` keeps
/// its own exact split of the pair), with the single-machine answers from `single`.
///
/// A balanced router gives each copy `floor(c / n)` or `ceil(c / n)` clients. A random one sends each request to
/// a copy with odds `1 / n`, so one copy's clients `m` are `Binomial(c, 1/n)`. Under a steady closed loop the
/// copies' rates add, so by linearity the expected rate is `n E[rate(m)]`, and a client's expected latency is
/// `n E[m latency(m)] / c`, each exact without the joint split. Under batches the window runs to the busiest
/// copy's last finish: the expectation over the busiest copy's count (`busiest_copy_odds`) of
/// `c * tok_s(m_max) / m_max`.
fn copies_of(
    copies: u32,
    router: DpRouter,
    load: ScenarioLoad,
    concurrency: u32,
    mut single: impl FnMut(u32) -> Prediction,
) -> Prediction {
    let c = concurrency.max(1);
    let n = copies.max(1);
    let mode = if n == 4 { Mode::Dp4 } else { Mode::Dp2 };
    // Each copy's client count with its weight: a balanced router's exact counts (a count per copy), a random
    // router's binomial odds times the copies (the expected number of copies at that count).
    let counts: Vec<(u32, f64)> = match router {
        DpRouter::Balanced => {
            let (q, r) = (c / n, c % n);
            [(q + 1, f64::from(r)), (q, f64::from(n - r))].into_iter().filter(|&(m, w)| m > 0 && w > 0.0).collect()
        }
        DpRouter::Random => binomial_odds(c, 1.0 / f64::from(n))
            .into_iter()
            .filter(|&(m, _)| m > 0)
            .map(|(m, p)| (m, p * f64::from(n)))
            .collect(),
    };
    let answers: Vec<(u32, f64, Prediction)> = counts.into_iter().map(|(m, w)| (m, w, single(m))).collect();
    let cf = f64::from(c);
    // What an average client sees: each copy's answer weighted by the clients it serves.
    let per_client =
        |field: fn(&Prediction) -> f64| answers.iter().map(|(m, w, p)| w * f64::from(*m) * field(p)).sum::<f64>() / cf;
    let summed = |field: fn(&Prediction) -> f64| answers.iter().map(|(_, w, p)| w * field(p)).sum::<f64>();
    // The busiest copy sets a batch's window and names the bottleneck.
    let busiest: Vec<(u32, f64)> = match router {
        DpRouter::Balanced => vec![(c.div_ceil(n), 1.0)],
        DpRouter::Random => busiest_copy_odds(c, n),
    };
    let output_tok_s = match load {
        ScenarioLoad::ClosedLoop => summed(|p| p.output_tok_s),
        ScenarioLoad::Batch | ScenarioLoad::AllAtOnce => busiest
            .iter()
            .map(|&(m, p)| {
                let a =
                    answers.iter().find(|(k, _, _)| *k == m).map(|(_, _, q)| q.clone()).unwrap_or_else(|| single(m));
                p * a.output_tok_s * cf / f64::from(m)
            })
            .sum(),
    };
    let pace = single(c.div_ceil(n));
    Prediction {
        mode,
        concurrency: c,
        output_tok_s,
        ttft_s: per_client(|p| p.ttft_s),
        tpot_s: per_client(|p| p.tpot_s),
        step_s: per_client(|p| p.step_s),
        resident_seqs: summed(|p| p.resident_seqs),
        max_resident_seqs: f64::from(n) * pace.max_resident_seqs,
        preemptions_per_request: per_client(|p| p.preemptions_per_request),
        kv_utilization: per_client(|p| p.kv_utilization),
        queue_s: per_client(|p| p.queue_s),
        ..pace
    }
}

/// `Binomial(c, p)`'s probabilities, every count from 0 to `c` (built up in logs so no factorial overflows).
fn binomial_odds(c: u32, p: f64) -> Vec<(u32, f64)> {
    let (n, q) = (f64::from(c), 1.0 - p);
    let mut ln = n * q.ln();
    let mut out = Vec::with_capacity(c as usize + 1);
    for k in 0..=c {
        out.push((k, ln.exp()));
        ln += (n - f64::from(k)).ln() - (f64::from(k) + 1.0).ln() + p.ln() - q.ln();
    }
    out
}

/// The busiest of `copies` copies' client count under a random router (`c` requests, each to a copy with odds
/// `1 / copies`), with its probability, from the most even count up; the tail past `1 - RANDOM_SPLIT_TAIL` is
/// left out and the rest renormalised. `P(max <= t)` is computed exactly, copy by copy: the `j`-th copy of the
/// remaining `n - j` takes `Binomial(left, 1 / (n - j))` of the requests left.
pub fn busiest_copy_odds(c: u32, copies: u32) -> Vec<(u32, f64)> {
    let (c, n) = (c.max(1), copies.max(1));
    let at_most = |t: u32| -> f64 {
        // ways[r]: probability that the copies so far hold c - r requests, none above t.
        let mut ways = vec![0.0; c as usize + 1];
        ways[c as usize] = 1.0;
        for j in 0..n {
            let share = 1.0 / f64::from(n - j);
            let mut next = vec![0.0; c as usize + 1];
            for (left, &w) in ways.iter().enumerate() {
                if w == 0.0 {
                    continue;
                }
                let left = left as u32;
                if j + 1 == n {
                    // The last copy takes what is left.
                    if left <= t {
                        next[0] += w;
                    }
                    continue;
                }
                // Binomial(left, share) up to t, built term by term in logs.
                let (l, q) = (f64::from(left), 1.0 - share);
                let mut ln = l * q.ln();
                for a in 0..=left.min(t) {
                    next[(left - a) as usize] += w * ln.exp();
                    ln += (l - f64::from(a)).ln() - (f64::from(a) + 1.0).ln() + share.ln() - q.ln();
                }
            }
            ways = next;
        }
        ways[0]
    };
    let mut odds = Vec::new();
    let mut below = 0.0;
    for t in c.div_ceil(n)..=c {
        let cdf = at_most(t);
        odds.push((t, (cdf - below).max(0.0)));
        below = cdf;
        if cdf >= 1.0 - RANDOM_SPLIT_TAIL {
            break;
        }
    }
    let total: f64 = odds.iter().map(|(_, p)| p).sum();
    odds.into_iter().filter(|(_, p)| *p > 0.0).map(|(m, p)| (m, p / total)).collect()
}

/// Predictions of one scenario and workload at many concurrencies and modes, each single-machine answer computed
/// once: two copies at `c` clients are one machine at `c / 2`, which a sweep over powers of two already has
/// (the explorer's curves and the planner's rows ask for both). Each mode's closed-loop runs are kept too:
/// past saturation every client count runs the same loop (`serving::LoopMemo`), so a sweep to 256 clients
/// runs its saturated points once.
pub struct Sweep<'a> {
    s: &'a Scenario,
    k: &'a Coefficients,
    isl: u32,
    osl: u32,
    single: Vec<(u32, Prediction)>,
    /// One memo per colocated or PD mode (single, tp2, pd, pp2, ep2, tp4, pp4).
    loops: [LoopMemo; 7],
}

impl<'a> Sweep<'a> {
    pub fn new(s: &'a Scenario, k: &'a Coefficients, isl: u32, osl: u32) -> Self {
        Sweep { s, k, isl, osl, single: Vec::new(), loops: Default::default() }
    }

    /// The scenario the sweep answers.
    pub fn scenario(&self) -> &'a Scenario {
        self.s
    }

    /// The same answer as `predict(s, k, mode, isl, osl, concurrency)`.
    pub fn predict(&mut self, mode: Mode, concurrency: u32) -> Prediction {
        match mode {
            Mode::Single => self.single(concurrency),
            Mode::Dp2 => {
                let (router, load) = (self.s.router, self.s.load);
                two_copies_of(router, load, concurrency, |c| self.single(c))
            }
            Mode::Tp2 => predict_memo(self.s, self.k, mode, self.isl, self.osl, concurrency, &mut self.loops[1]),
            Mode::Pd => predict_memo(self.s, self.k, mode, self.isl, self.osl, concurrency, &mut self.loops[2]),
            Mode::Pp2 => predict_memo(self.s, self.k, mode, self.isl, self.osl, concurrency, &mut self.loops[3]),
            Mode::Ep2 => predict_memo(self.s, self.k, mode, self.isl, self.osl, concurrency, &mut self.loops[4]),
            Mode::Tp4 => predict_memo(self.s, self.k, mode, self.isl, self.osl, concurrency, &mut self.loops[5]),
            Mode::Pp4 => predict_memo(self.s, self.k, mode, self.isl, self.osl, concurrency, &mut self.loops[6]),
            Mode::Dp4 => {
                let (router, load) = (self.s.router, self.s.load);
                copies_of(4, router, load, concurrency, |c| self.single(c))
            }
        }
    }

    /// Closed-loop runs answered from the memos so far (a deterministic count: the tests check it).
    pub fn loops_reused(&self) -> usize {
        self.loops.iter().map(|m| m.reused).sum()
    }

    fn single(&mut self, concurrency: u32) -> Prediction {
        if let Some((_, p)) = self.single.iter().find(|(c, _)| *c == concurrency) {
            return p.clone();
        }
        let p = predict_memo(self.s, self.k, Mode::Single, self.isl, self.osl, concurrency, &mut self.loops[0]);
        self.single.push((concurrency, p.clone()));
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Bottleneck;

    fn glm_5_2() -> Scenario {
        let files: Vec<crate::dataset::SourceText> = [
            ("sources.json", include_str!("../../../data/sources.json")),
            ("hardware/gb300-station.json", include_str!("../../../data/hardware/gb300-station.json")),
            ("models/glm-5.2.json", include_str!("../../../data/models/glm-5.2.json")),
            ("scenarios/glm-5.2.json", include_str!("../../../data/scenarios/glm-5.2.json")),
        ]
        .into_iter()
        .map(|(path, text)| crate::dataset::SourceText { path: path.into(), text: text.into() })
        .collect();
        let (ds, _) = crate::dataset::load(&files);
        crate::scenario::resolve(&ds, "scenarios/glm-5.2.json", &ds.scenarios["glm-5.2"]).expect("resolves")
    }

    /// A pipeline stage holds the KV of its own layers only: an MLA model, whose latent tensor parallelism
    /// replicates, holds about twice the requests under PP2 as under TP2 (vLLM allocates each stage's cache for
    /// the layers it runs), and reads half the KV per rank.
    #[test]
    fn a_pipeline_stage_holds_only_its_own_layers_kv() {
        let s = glm_5_2();
        let k = Coefficients::default();
        let (tp, pp) = (laid_engine(&s, &k, Layout::Tensor, 2.0), laid_engine(&s, &k, Layout::Pipeline, 2.0));
        assert_eq!(tp.placement.kv_pool_bytes, pp.placement.kv_pool_bytes);
        let (held_tp, held_pp) = (tp.max_resident(512.0, 512.0), pp.max_resident(512.0, 512.0));
        assert!((held_pp / held_tp - 2.0).abs() < 0.02, "pp2 {held_pp} against tp2 {held_tp}");
        assert!((tp.kv_bytes_at(1024.0) / pp.kv_bytes_at(1024.0) - 2.0).abs() < 1e-9);
        assert!((tp.placement.kv_bytes_per_token / pp.placement.kv_bytes_per_token - 2.0).abs() < 1e-9);
    }

    /// vLLM runs its all-to-all kernels only with more than one data-parallel rank: `ep2` as its command runs it
    /// (TP=2, --enable-expert-parallel, DP=1) all-reduces every layer as `tp2` does, and differs only in which
    /// experts each rank reads: whole experts, the busiest rank's share at small batches.
    #[test]
    fn expert_parallel_with_one_data_parallel_rank_all_reduces_as_tensor_parallel() {
        let s = glm_5_2();
        let k = Coefficients::default();
        let (tp, ep) = (laid_engine(&s, &k, Layout::Tensor, 2.0), laid_engine(&s, &k, Layout::Expert, 2.0));
        for seqs in [1.0, 8.0, 256.0] {
            let mut load = crate::model::batching::StepLoad::default();
            load.add_decodes(&s.model, seqs, 1024.0, 1.0);
            let (t, e) = (tp.step(&load), ep.step(&load));
            assert_eq!(t.comm_s, e.comm_s, "{seqs} sequences: the same collectives");
            assert!(e.hbm_s >= t.hbm_s, "{seqs}: the busiest rank reads no less than an even slice");
        }
        // One token touches a few experts: the busiest rank reads more of them than half.
        let mut one = crate::model::batching::StepLoad::default();
        one.add_decodes(&s.model, 1.0, 1024.0, 1.0);
        assert!(ep.step(&one).hbm_s > tp.step(&one).hbm_s * 1.01);
    }

    /// The driver waits only for its output rank's answer (vLLM's Ray and multiprocessing executors): an engine
    /// across the machines pays its scheduler output one way per step, not a round trip; one machine pays none.
    #[test]
    fn the_control_message_crosses_the_link_one_way() {
        let s = glm_5_2();
        let k = Coefficients::default();
        let one_way = s.hardware.link.round_trip_s / 2.0;
        for layout in [Layout::Tensor, Layout::Expert, Layout::Pipeline] {
            assert_eq!(laid_engine(&s, &k, layout, 2.0).span.control_s, one_way, "{layout:?}");
        }
        assert_eq!(laid_engine(&s, &k, Layout::One, 1.0).span.control_s, 0.0);
    }

    /// A pipeline hop is vLLM's `send_tensor_dict`: the metadata one way over the CPU group, then the hidden
    /// state and the residual, each an NCCL send across the link; never less than NCCL's own send latency twice.
    #[test]
    fn a_pipeline_hop_sends_metadata_then_two_tensors_by_nccl() {
        let s = glm_5_2();
        let k = Coefficients::default();
        let pp = laid_engine(&s, &k, Layout::Pipeline, 2.0);
        let nccl = super::super::fabric::communicator(&s.hardware, 2.0);
        let link = &s.hardware.link;
        let mut load = crate::model::batching::StepLoad::default();
        load.add_decodes(&s.model, 1.0, 1024.0, 1.0);
        // One stream: one micro-batch of the drafts and the token, both stages back to back, one hop.
        let bytes = (s.model.draft_tokens + 1.0) * s.model.hidden_size * 2.0;
        let sends = 2.0 * (nccl.send_latency_s(bytes) + bytes / link.payload_bytes_per_sec());
        // One GPU a station: no collective inside a stage, so the step's link time is the hop and the control.
        assert_eq!(s.hardware.gpus, 1.0);
        let hop = pp.step(&load).comm_s - pp.span.control_s;
        assert!((hop - (link.round_trip_s / 2.0 + sends)).abs() < 1e-12, "hop {hop} s against {sends} s of sends");
        assert!(hop >= 2.0 * nccl.send_latency_s(bytes) + link.round_trip_s / 2.0);
    }

    /// A stand-in single machine whose batch rate per client falls as clients are added.
    fn single(n: u32) -> Prediction {
        let n_f = f64::from(n);
        Prediction {
            mode: Mode::Single,
            isl: 1024,
            osl: 128,
            concurrency: n,
            output_tok_s: 60.0 * n_f / (1.0 + 0.1 * (n_f - 1.0)),
            ttft_s: 0.1 * n_f,
            tpot_s: 0.01,
            step_s: 0.01,
            resident_seqs: n_f,
            max_resident_seqs: 100.0,
            bottleneck: Bottleneck::HbmBandwidth,
            tokens_per_step: 1.0,
            preemptions_per_request: 0.0,
            kv_utilization: 0.1,
            queue_s: 0.0,
        }
    }

    #[test]
    fn a_random_router_splits_clients_binomially() {
        let four = busier_copy_odds(4);
        let expect = [(2, 6.0 / 16.0), (3, 8.0 / 16.0), (4, 2.0 / 16.0)];
        assert_eq!(four.len(), expect.len());
        for ((m, p), (em, ep)) in four.iter().zip(expect) {
            assert_eq!(*m, em);
            assert!((p - ep).abs() < 1e-12, "{four:?}");
        }
        for c in [1, 2, 7, 64, 1000] {
            let odds = busier_copy_odds(c);
            let total: f64 = odds.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-9, "c {c}: {total}");
            assert!(odds.iter().all(|&(m, p)| 2 * m >= c && m <= c && p > 0.0), "c {c}: {odds:?}");
        }
        // At 64 clients the busier copy carries about 32 + 4 * sqrt(2 / pi) of them.
        let mean: f64 = busier_copy_odds(64).iter().map(|&(m, p)| f64::from(m) * p).sum();
        assert!((mean - 35.2).abs() < 0.3, "{mean}");
    }

    #[test]
    fn a_random_router_loses_to_a_balanced_one_and_a_batch_waits_for_the_busier_copy() {
        // Two clients: half the time one per copy (2 x single(1)), half the time both on one copy, whose batch
        // window carries both requests' tokens: single(2).
        let random = two_copies_of(DpRouter::Random, ScenarioLoad::Batch, 2, single);
        let expect = 0.5 * 2.0 * single(1).output_tok_s + 0.5 * single(2).output_tok_s;
        assert!((random.output_tok_s - expect).abs() < 1e-9, "{random:?}");
        // A closed loop's copies add their rates whatever the split.
        let closed = two_copies_of(DpRouter::Random, ScenarioLoad::ClosedLoop, 3, single);
        let expect3 = 0.75 * (single(2).output_tok_s + single(1).output_tok_s) + 0.25 * single(3).output_tok_s;
        assert!((closed.output_tok_s - expect3).abs() < 1e-9, "{closed:?}");
        for c in [1, 2, 3, 8, 64] {
            for load in [ScenarioLoad::Batch, ScenarioLoad::AllAtOnce, ScenarioLoad::ClosedLoop] {
                let r = two_copies_of(DpRouter::Random, load, c, single).output_tok_s;
                let b = two_copies_of(DpRouter::Balanced, load, c, single).output_tok_s;
                assert!(r <= b + 1e-9, "c {c} {load:?}: random {r} above balanced {b}");
            }
        }
    }

    /// Four copies behind a balanced router are four machines at a quarter of the clients each; a random router
    /// over four copies, by linearity, is four times one copy at `Binomial(c, 1/4)` clients, and loses to a
    /// balanced one; the busiest of four copies' odds sum to one and match the pair's own split at two copies.
    #[test]
    fn four_copies_split_the_clients_four_ways() {
        for c in [4, 8, 64] {
            let four = copies_of(4, DpRouter::Balanced, ScenarioLoad::ClosedLoop, c, single);
            assert!((four.output_tok_s - 4.0 * single(c / 4).output_tok_s).abs() < 1e-9, "c {c}: {four:?}");
            assert_eq!(four.mode, Mode::Dp4);
        }
        // Five clients: one copy serves two, three serve one.
        let five = copies_of(4, DpRouter::Balanced, ScenarioLoad::ClosedLoop, 5, single);
        assert!((five.output_tok_s - (single(2).output_tok_s + 3.0 * single(1).output_tok_s)).abs() < 1e-9);
        let closed = copies_of(4, DpRouter::Random, ScenarioLoad::ClosedLoop, 2, single);
        // Two clients: on different copies with odds 3/4, on one copy with odds 1/4.
        let expect = 0.75 * 2.0 * single(1).output_tok_s + 0.25 * single(2).output_tok_s;
        assert!((closed.output_tok_s - expect).abs() < 1e-9, "{closed:?}");
        for c in [1, 3, 8, 64] {
            for load in [ScenarioLoad::Batch, ScenarioLoad::ClosedLoop] {
                let r = copies_of(4, DpRouter::Random, load, c, single).output_tok_s;
                let b = copies_of(4, DpRouter::Balanced, load, c, single).output_tok_s;
                assert!(r <= b + 1e-9, "c {c} {load:?}: random {r} above balanced {b}");
            }
        }
        for c in [1, 2, 7, 64, 300] {
            let odds = busiest_copy_odds(c, 4);
            let total: f64 = odds.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-9, "c {c}: {total}");
            assert!(odds.iter().all(|&(m, _)| 4 * m >= c && m <= c), "c {c}: {odds:?}");
            let pair = busiest_copy_odds(c, 2);
            for ((m, p), (em, ep)) in pair.iter().zip(busier_copy_odds(c)) {
                assert_eq!(*m, em);
                assert!((p - ep).abs() < 1e-9, "c {c}: {pair:?}");
            }
        }
        // Four clients over four copies: all apart with odds 4!/4^4 = 3/32.
        assert!((busiest_copy_odds(4, 4)[0].1 - 3.0 / 32.0).abs() < 1e-12);
    }

    /// Four machines: tensor parallel splits every weight four ways, a pipeline runs four stages, each holding
    /// a quarter of the layers' KV, and both pay the control message one way.
    #[test]
    fn four_machines_split_weights_and_layers_four_ways() {
        let s = glm_5_2();
        let k = Coefficients::default();
        let (tp2, tp4) = (mode_engine(&s, &k, Mode::Tp2), mode_engine(&s, &k, Mode::Tp4));
        assert_eq!(tp4.placement.tp, 2.0 * tp2.placement.tp);
        assert!((tp2.placement.weight_bytes_per_gpu / tp4.placement.weight_bytes_per_gpu - 2.0).abs() < 1e-9);
        let (pp2, pp4) = (mode_engine(&s, &k, Mode::Pp2), mode_engine(&s, &k, Mode::Pp4));
        assert_eq!((pp2.span.pipeline_stages, pp4.span.pipeline_stages), (2.0, 4.0));
        assert!((pp2.placement.kv_bytes_per_token / pp4.placement.kv_bytes_per_token - 2.0).abs() < 1e-9);
        assert_eq!(tp4.span.control_s, s.hardware.link.round_trip_s / 2.0);
        // Four ranks across four machines: an all-reduce costs more than across two.
        let mut load = crate::model::batching::StepLoad::default();
        load.add_decodes(&s.model, 8.0, 1024.0, 1.0);
        let per_layer = |e: &Engine| e.step(&load).comm_s;
        assert!(per_layer(&tp4) > per_layer(&tp2));
    }
}

//! The cluster modes: one machine (`single`), one engine tensor-parallel over two machines (`tp2`), pipeline
//! parallel (`pp2`), tensor parallel with the experts split across the machines (`ep2`), prefill on one machine
//! with decode on the other (`pd`), and two independent copies behind a router (`dp2`).
//!
//! ```text
//!   single:  [machine A: prefill + decode]
//!   tp2:     [A: half of every weight] <== 2 all-reduces per layer per step ==> [B: other half]
//!   pp2:     [A: first half of the layers] --activations, once per micro-batch--> [B: second half]
//!   ep2:     [A: half of attention, half of the experts] <== 2 all-reduces per layer per step (DP = 1) ==> [B]
//!   dpep2:   [A: own requests, all attention, half the experts] <== each MoE layer: all-gather, reduce-scatter ==> [B]
//!   pd:      [A: prefill only] --KV cache, one way over the link--> [B: decode only, never pauses]
//!   dp2:     router --ceil(c/2) clients--> [A: a whole copy]   --floor(c/2) clients--> [B: a whole copy]
//! ```
//! Every engine spanning both machines (tp2, pp2, ep2) pays the driver's one-way control message per step on the
//! link's transport (`batching::Span`); DP+EP runs a scheduler on each machine and pays instead the ranks' agreement
//! on their token counts. A dense model has no experts to split: `ep2` and `dpep2` refuse it (`ep2_refusal`).
//! DP+EP's ranks each serve half of the clients (vLLM's own data-parallel load balancer keeps them even).
//! DP2's router is the scenario's: balanced (half of the clients each: round-robin or least-load) or random (a
//! "shuffle" router: binomial splits, averaged; `two_copies_of`); nothing crosses the link.
//! Every mode runs the step-level closed loop of `serving`; PD runs one prefill engine and one decode engine
//! joined by the link (KV cache of ISL tokens per request, one way).

use super::bandwidth::{place, place_split};
use super::batching::{Engine, Span};
use super::copies::{copies_of, split_between, two_copies_of};
use super::serving::{colocated_batch, colocated_memo, disaggregated_memo, disaggregated_run, LoopMemo, Measured, Run};
use super::{Coefficients, Prediction};
use crate::dataset::schema::ScenarioLoad;
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
    /// One data-parallel rank per machine (its own requests, attention and dense layers tensor parallel over its
    /// machine's GPUs), the routed experts split over every GPU of both: the engine of one rank.
    DataExpert,
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
            Mode::Dpep2 => Some(Layout::DataExpert),
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

/// Where one engine of `mode` holds the model on each GPU (one machine's engine for PD and copies).
pub fn mode_placement(s: &Scenario, k: &Coefficients, mode: Mode) -> super::bandwidth::Placement {
    mode_engine(s, k, mode).placement
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
    let data = layout == Layout::DataExpert;
    // A data-parallel rank splits its dense layers and attention over its own machine's GPUs only.
    let tp = if data { gpus } else { gpus * machines };
    let mut placement =
        if data { place_split(&s.model, hw, tp, gpus * machines, k) } else { place(&s.model, hw, tp, k) };
    if layout == Layout::Pipeline {
        // Each stage holds its share of the layers' KV, split by heads over its own machine's GPUs.
        placement.kv_bytes_per_token = s.model.kv_bytes_per_token / (machines * s.model.kv_split(gpus));
    }
    let attention_padding = s.model.attention_head_padding(
        hw.sparse_attention_head_tile,
        if layout == Layout::Pipeline { gpus } else { placement.tp },
    );
    let collective_machines = if matches!(layout, Layout::Pipeline | Layout::DataExpert) { 1.0 } else { machines };
    let (allreduce, measured) = super::fabric::tp_all_reduce(hw, collective_machines);
    let link = &hw.link;
    let span = Span {
        // The scheduler's output reaches the remote worker one way; the driver waits only for the output rank's
        // answer (`Span::control_s`).
        control_s: if machines > 1.0 && !data { link.round_trip_s / 2.0 } else { 0.0 },
        // Expert parallelism: whole experts over every rank of the engine (of every data-parallel rank's).
        expert_ranks: match layout {
            Layout::Expert => tp,
            Layout::DataExpert => gpus * machines,
            _ => 1.0,
        },
        data_ranks: if data { machines } else { 1.0 },
        // One data-parallel group per tensor-parallel position: a rank on each machine, the machine's link shared
        // by as many groups as it has GPUs.
        data_group: data.then(|| {
            let c = super::fabric::communicator(hw, machines);
            super::nccl::Communicator { ranks: machines, bus_bytes_per_sec: c.bus_bytes_per_sec / gpus, ..c }
        }),
        data_sync_s: if data { link.round_trip_s } else { 0.0 },
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
    if matches!(mode, Mode::Ep2 | Mode::Dpep2) && ep2_refusal(s).is_some() {
        return refused(mode, isl, osl, concurrency);
    }
    match mode {
        Mode::Single | Mode::Tp2 | Mode::Ep2 | Mode::Pp2 | Mode::Tp4 | Mode::Pp4 => {
            engine_prediction(s, k, &mode_engine(s, k, mode), (mode, isl, osl, concurrency), memo)
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
        Mode::Dpep2 => data_expert(s, k, isl, osl, concurrency, memo),
    }
}

/// One engine's run under the scenario's load (`serving`), as a prediction of `mode` at `concurrency` clients.
fn engine_prediction(
    s: &Scenario,
    k: &Coefficients,
    e: &Engine,
    (mode, isl, osl, concurrency): (Mode, u32, u32, u32),
    memo: &mut LoopMemo,
) -> Prediction {
    let (fi, fo, c) = (f64::from(isl.max(1)), f64::from(osl.max(1)), f64::from(concurrency.max(1)));
    let lengths = s.output_lengths(isl, osl);
    let r = match s.load {
        ScenarioLoad::ClosedLoop => colocated_memo(e, c, fi, fo, memo),
        ScenarioLoad::Batch => colocated_batch(e, c, fi, fo, Run::Batch, lengths),
        ScenarioLoad::AllAtOnce => colocated_batch(e, c, fi, fo, Run::AllAtOnce, lengths),
    };
    prediction(k, s.load, (mode, isl, osl, concurrency), &r, e.tokens_per_step())
}

/// DP+EP: each machine's rank serves its half of the clients (vLLM's data-parallel coordinator balances them)
/// with the engine of one rank, whose MoE layers multiply both ranks' tokens.
fn data_expert(
    s: &Scenario,
    k: &Coefficients,
    isl: u32,
    osl: u32,
    concurrency: u32,
    memo: &mut LoopMemo,
) -> Prediction {
    let e = mode_engine(s, k, Mode::Dpep2);
    let mut rank = |c: u32| engine_prediction(s, k, &e, (Mode::Dpep2, isl, osl, c), memo);
    let c = concurrency.max(1);
    Prediction { mode: Mode::Dpep2, ..split_between(c, c.div_ceil(2), s.load, &mut rank) }
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
    /// One memo per colocated or PD mode (single, tp2, pd, pp2, ep2, tp4, pp4, dpep2).
    loops: [LoopMemo; 8],
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
            Mode::Dpep2 => predict_memo(self.s, self.k, mode, self.isl, self.osl, concurrency, &mut self.loops[7]),
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

    /// DP+EP as vLLM runs it (`--data-parallel-size 2 --enable-expert-parallel`): each machine's rank holds the
    /// dense layers whole and half of the experts, and its own requests' whole KV (an MLA model's latent, which
    /// tensor parallelism replicates, is held once: about twice the requests of TP2); no all-reduce crosses the
    /// link, but every MoE layer all-gathers and reduce-scatters all tokens, and the ranks agree once a step.
    #[test]
    fn data_parallel_expert_parallel_holds_its_own_requests_and_exchanges_tokens_per_moe_layer() {
        let s = glm_5_2();
        let k = Coefficients::default();
        let m = &s.model;
        let (tp, ep, dep) = (
            laid_engine(&s, &k, Layout::Tensor, 2.0),
            laid_engine(&s, &k, Layout::Expert, 2.0),
            laid_engine(&s, &k, Layout::DataExpert, 2.0),
        );
        // One GPU a station: the rank's dense layers whole, half of the experts.
        let experts = m.routed_expert_bytes.min(m.weight_bytes);
        let want = m.weight_bytes - experts + experts / 2.0;
        assert!((dep.placement.weight_bytes_per_gpu - want).abs() < 1.0, "{}", dep.placement.weight_bytes_per_gpu);
        assert!(dep.placement.weight_bytes_per_gpu > ep.placement.weight_bytes_per_gpu);
        // Its own requests' KV: per GPU, a token's KV as one machine holds it, the latent once per rank.
        let per_token = |e: &Engine| e.placement.kv_bytes_per_token;
        assert_eq!(per_token(&dep), per_token(&laid_engine(&s, &k, Layout::One, 1.0)));
        let (held_tp, held_dep) = (tp.max_resident(512.0, 512.0), dep.max_resident(512.0, 512.0));
        assert!(held_dep * 2.0 > held_tp, "two ranks hold {} against tp2's {held_tp}", 2.0 * held_dep);
        // A scheduler on each machine: no one-way control message, one round trip to agree on token counts.
        assert_eq!(dep.span.control_s, 0.0);
        assert_eq!(dep.span.data_sync_s, s.hardware.link.round_trip_s);
        for seqs in [1.0, 16.0, 128.0] {
            let mut load = crate::model::batching::StepLoad::default();
            load.add_decodes(m, seqs, 1024.0, 1.0);
            let (t, d) = (ep.step(&load), dep.step(&load));
            // Per MoE layer a gather and a scatter of both ranks' tokens across the link, NCCL's cost each.
            let tokens = 2.0 * seqs * (m.draft_tokens + 1.0);
            let group = dep.span.data_group.expect("a data-parallel group");
            let call = |bytes: f64| {
                let c = group.fastest(crate::model::nccl::Call::Gather, bytes);
                c.latency_s * k.tp_latency_scale + c.transfer_s
            };
            let hidden = tokens * m.hidden_size * 2.0;
            let exchange = m.layers * (call(hidden + tokens * m.experts_per_token * 8.0) + call(hidden));
            assert!((d.comm_s - exchange - s.hardware.link.round_trip_s).abs() < 1e-12, "{seqs}: {}", d.comm_s);
            assert!(t.comm_s > 0.0 && d.comm_s > 0.0);
            // The drafter's MoE layer exchanges its tokens too, once per draft pass.
            assert!(m.draft_tokens > 0.0 && m.draft_expert_bytes > 0.0);
            let mut quiet = laid_engine(&s, &k, Layout::DataExpert, 2.0);
            quiet.span.data_group = None;
            let drafts = 2.0 * seqs;
            let draft_exchange = m.draft_passes_per_step()
                * m.draft_pass_layer_count()
                * (call(drafts * (m.hidden_size * 2.0 + m.experts_per_token * 8.0))
                    + call(drafts * m.hidden_size * 2.0));
            let extra = d.overhead_s - quiet.step(&load).overhead_s;
            assert!((extra - draft_exchange).abs() < 1e-12, "{seqs}: {extra} against {draft_exchange}");
        }
        // A dense model has no experts to split: the mode refuses it.
        let mut dense = s.clone();
        dense.model.routed_experts = 0.0;
        let p = predict(&dense, &k, Mode::Dpep2, 512, 512, 4);
        assert_eq!((p.output_tok_s, p.bottleneck), (0.0, Bottleneck::NoExperts));
        // Each rank serves half of the clients: at two clients, one each.
        let two = predict(&s, &k, Mode::Dpep2, 512, 512, 2);
        assert_eq!(two.mode, Mode::Dpep2);
        assert!(two.output_tok_s > 0.0 && two.resident_seqs > 1.5 && two.resident_seqs <= 2.0, "{two:?}");
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

//! The serving engine's closed loop, step by step: a KV block pool, admission, chunked prefill under a token
//! budget, preemption under KV pressure, and for PD a prefill machine handing KV caches to a decode machine.
//!
//! What one step does (vLLM V1's scheduler, DOMAIN.md 3c):
//! ```text
//!   1. running requests, oldest first: decodes take k+1 tokens of the budget, unfinished prompts a chunk;
//!      a request that needs a KV block when none is free preempts the newest running request (its blocks
//!      are freed, it goes back to the head of the queue and recomputes its prompt plus its output so far,
//!      less the prefix the prefix cache still holds when it is re-admitted: only what others took is lost)
//!   2. unless this step preempted: admit waiting requests while the budget and free blocks allow
//!   3. the step's time is `Engine::step` of what was scheduled; decodes advance by `a` accepted tokens
//!   4. a finished request frees its blocks, and its client sends the next request at once (closed loop)
//! ```
//! Requests are identical within a sweep point (but for a batch's output lengths, which may vary in length
//! classes: `output_length_classes`), so clients are pooled into at most `Resolution::max_cohorts` cohorts
//! that move together (prompts are chunked first come first served, splitting a cohort); preemption and partial
//! admission split a cohort, so KV pressure is resolved request by request. Throughput (output tokens produced in
//! the window per second), TTFT and TPOT (over the requests completed in it) are measured over two rounds of
//! requests after a first round that fills the pipeline; at the engine's edge over three, and on, round by round,
//! while the rounds' rates leave the window's rate uncertain by more than 1% (nine at most).

use super::batching::{Engine, StepCosts, StepLoad, StepTime};
use super::{Admission, Bottleneck};
pub use crate::dataset::schema::OutputLengths;
use crate::spec::ContextMeasures;
use std::collections::VecDeque;

/// How finely a closed loop is resolved: the cohorts its clients are pooled into, and the rounds of requests (each
/// client's one request) its window measures after the warm-up round.
///
/// A sweep's resolution is checked against `REFERENCE` (`tests/physics.rs`). Over the 1,188 engine-level points of
/// the bundled scenarios (every mode, four workloads, 1-256 clients, default coefficients), measured on
/// 2026-12-03: throughput counted as whole requests completed times OSL over two rounds (six at the edge) was off
/// the reference by 0.52% on average, 6.6% at the 99th percentile and 21.7% at worst (GPT-OSS-120B, 5000/500 at 256
/// clients: completions arrive in waves as long as the window, so the count jumps by a wave); counting the tokens
/// produced in the window, 0.24%, 3.9% and 9.4% over two rounds (three at the edge), 0.18%, 3.2% and 7.5% over six.
/// The worst point left (Gemma-4-26B-A4B TP2, 512/512 at 256 clients) is the cohorts' pooling (eight clients a
/// cohort), which more rounds do not change.
///
/// At the edge a round's rate swings (KV pressure admits requests that collide later, and the collisions come in
/// waves), so three rounds alone read up to 12% off the reference. Measured on 2026-12-05 over 990 points (every
/// bundled scenario, one machine, TP across two and PD, 512/512, 8192/1024 and 2048/256, 16-256 clients):
/// stopping at three rounds, 0.27% off on average, 19 points beyond 2%, worst +12.3% and -11.0% (Llama-3.3-70B
/// on two H100, 2048/256 at 130 and 160 clients); running on until the standard error of the window's rate over
/// its rounds is 1% of it (nine rounds at most), 0.23%, 13 and 4.7%, for 47% more instructions in the benchmark's
/// TP2 sweep (its two points past the sequence cap run nine rounds) and none in the others. More warm-up does not
/// do it: one to eight rounds of warm-up before three measured rounds left the mean at 0.23-0.28% and the worst at
/// 7-14% (against a reference warmed up for 16 rounds); the swings are the window's, not a start-up's. Nor does
/// stopping once one more round moves the window's rate by less than 1% (0.25%, 15 beyond 2%, worst -11.0%:
/// consecutive means agree by chance), or a ceiling of 5 or 6 rounds instead of 9 (worst 7.1%, 5.7%); 7 read as 9
/// do on this survey, for 3% fewer instructions in the benchmark's TP2 sweep, and 9 keep the margin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolution {
    /// Clients are pooled into at most this many cohorts: enough that prompt arrivals spread over a round like
    /// independent clients', few enough that a sweep stays far below the page's redraw budget.
    pub max_cohorts: usize,
    /// Rounds of requests measured after the warm-up round.
    pub rounds: f64,
    /// Rounds measured at least at the engine's edge (preempting, or more clients than the KV pool or the sequence
    /// cap holds), where requests complete in waves a round or so long and the rate swings from round to round.
    pub rounds_at_the_edge: f64,
    /// Rounds measured at most at the edge: past `rounds_at_the_edge` the window runs on, round by round, until
    /// the standard error of its rate over its rounds is at most `rate_error_at_the_edge` of the rate.
    pub most_rounds_at_the_edge: f64,
    pub rate_error_at_the_edge: f64,
    /// Whether decoding cohorts step together (`Lockstep`): the same loop in fewer instructions. Off, every
    /// cohort is visited every step, the reference the lockstep is checked against (`tests/physics.rs`).
    pub lockstep: bool,
}

impl Resolution {
    /// What every prediction runs.
    pub const SWEEP: Resolution = Resolution {
        max_cohorts: 32,
        rounds: 2.0,
        rounds_at_the_edge: 3.0,
        most_rounds_at_the_edge: 9.0,
        rate_error_at_the_edge: 0.01,
        lockstep: true,
    };
    /// A long run with a cohort per client up to 256: the measure a sweep's resolution is checked against (30
    /// rounds agree with 60 within 1% at every point above).
    pub const REFERENCE: Resolution = Resolution {
        max_cohorts: 256,
        rounds: 30.0,
        rounds_at_the_edge: 30.0,
        most_rounds_at_the_edge: 30.0,
        rate_error_at_the_edge: 0.0,
        lockstep: true,
    };
}

/// The smallest share of a request a cohort is split into when admitting or preempting under KV pressure: one
/// whole request, as the engine does (a finer fluid multiplies cohorts and slows the loop without changing it).
const MIN_PART: f64 = 1.0;

/// Steps one sweep point may take before the measurement ends where it is (a guard, never reached in tests).
const MAX_STEPS: usize = 200_000;

/// Tokens within which two progress counts are the same: a cohort's progress is a size-weighted mean after a merge
/// and a sum of the lockstep's advance and its own stored part, so an output of 512 tokens may read 511.999... A
/// request whose count is this close to its OSL has finished, and two gaps this close are a tie, broken by age:
/// otherwise rounding picks which cohorts merge and when a request ends, and moved a sweep point's TTFT by a
/// quarter (Llama-3.3-70B on two H100, 512/512 at 128 clients: 0.92 s or 1.26 s by the order of two additions).
const ROUNDING: f64 = 1e-9;

/// Requests in flight that behave alike.
#[derive(Debug, Clone, PartialEq)]
struct Cohort {
    /// Requests in the cohort.
    size: f64,
    /// When the client sent the request.
    arrival_s: f64,
    /// Tokens to prefill: the prompt, or the prompt plus the output so far when recomputing after preemption.
    prompt: f64,
    computed: f64,
    generated: f64,
    /// Output tokens each request produces: the workload's, or its length class's when lengths vary
    /// (`output_length_classes`). Cohorts of different lengths never merge.
    osl: f64,
    /// KV blocks each request holds.
    blocks: f64,
    first_token_s: Option<f64>,
    /// When its prompt was first scheduled.
    scheduled_s: Option<f64>,
    preemptions: f64,
    /// A preempted request waiting: the blocks of its context still in the prefix cache (freed, evictable, and
    /// counted in the free blocks), and how many free blocks are ahead of them in the eviction queue. While it
    /// waits, `computed` is the tokens those blocks hold: the prefix-cache hit it will be re-admitted with.
    cached_blocks: f64,
    evict_ahead: f64,
    /// A member of the machine's `Lockstep`: the group's `advance` when it joined (its `generated` is kept less
    /// that advance while it is a member).
    lockstep_from: f64,
}

impl Cohort {
    fn fresh(size: f64, arrival_s: f64, isl: f64, osl: f64) -> Self {
        Cohort {
            size,
            arrival_s,
            prompt: isl,
            computed: 0.0,
            generated: 0.0,
            osl,
            blocks: 0.0,
            first_token_s: None,
            scheduled_s: None,
            preemptions: 0.0,
            cached_blocks: 0.0,
            evict_ahead: 0.0,
            lockstep_from: 0.0,
        }
    }

    fn prefilling(&self) -> bool {
        self.computed < self.prompt
    }

    /// Folds `other` into this cohort: sizes add, every per-request quantity becomes the size-weighted mean.
    fn absorb(&mut self, other: &Cohort) {
        let total = self.size + other.size;
        let (a, b) = (self.size / total, other.size / total);
        let mix = |x: f64, y: f64| a * x + b * y;
        let mix_opt = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => Some(mix(x, y)),
            (x, y) => x.or(y),
        };
        self.arrival_s = mix(self.arrival_s, other.arrival_s);
        self.prompt = mix(self.prompt, other.prompt);
        self.computed = mix(self.computed, other.computed);
        self.generated = mix(self.generated, other.generated);
        self.blocks = mix(self.blocks, other.blocks);
        self.first_token_s = mix_opt(self.first_token_s, other.first_token_s);
        self.scheduled_s = mix_opt(self.scheduled_s, other.scheduled_s);
        self.preemptions = mix(self.preemptions, other.preemptions);
        self.cached_blocks = mix(self.cached_blocks, other.cached_blocks);
        self.evict_ahead = self.evict_ahead.min(other.evict_ahead);
        self.size = total;
    }

    /// Splits `n` requests off the front of this cohort.
    fn split(&mut self, n: f64) -> Cohort {
        let mut part = self.clone();
        part.size = n;
        self.size -= n;
        part
    }
}

/// What a machine does: both phases, prompts only (PD's prefill side) or decodes only (PD's decode side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Colocated,
    PrefillOnly,
    DecodeOnly,
}

#[derive(Debug, Clone, Copy)]
enum Work {
    Prefill { per: f64, offset: f64 },
    Decode { ctx: f64 },
}

/// The decoding cohorts at the front of the running list (`running[..len]`), stepped together without visiting
/// each: in a saturated point every step prefills a prompt beside a few dozen decoding cohorts, and visiting each
/// of those every step (its blocks, its measures, its advance, its finish) was three quarters of a sweep's
/// instructions.
///
/// A member's `generated` is stored less `advance` (the tokens every member has generated since the group formed)
/// and its `blocks` as they were when it joined: once it has stepped in the group, it holds what its last step
/// took (`Machine::settle_lockstep` writes both back). The group keeps what a step of all its members needs as
/// sums: their measures grow on a line (`AttentionSpec::context_measures_rate`) until a member's context reaches a
/// breakpoint. Members that finish leave the group where they are (`Machine::finish_members`). A step that
/// preempts visits the members' blocks in order, not their measures, and members it preempts leave the group's
/// end (`Machine::lockstep_take_preempting`); a member's context leaving its line or a budget too short for all of
/// them sends the step back to visiting every cohort (`Machine::lockstep_need`), the group settled. With
/// `Resolution::lockstep` off nothing joins, and the loop is the one that visits every cohort, which
/// `tests/physics.rs` holds the lockstep's answers to.
#[derive(Debug, Clone, Copy)]
struct Lockstep {
    len: usize,
    /// Tokens each member has generated since the group formed.
    advance: f64,
    /// The members' requests, the sum of their context measures at their current contexts, the rate that sum
    /// grows at per token each generates, and the blocks they hold.
    seqs: f64,
    measures: ContextMeasures,
    rate: ContextMeasures,
    blocks: f64,
    /// The least `advance` at which a member has generated its output (its OSL), exact (through merges too:
    /// `jump` reads the members' fewest tokens left from it), and the most at which every member's next step
    /// still lies on its measures' line.
    finish_at: f64,
    linear_until: f64,
}

impl Lockstep {
    const EMPTY: Lockstep = Lockstep {
        len: 0,
        advance: 0.0,
        seqs: 0.0,
        measures: ContextMeasures { seqs: 0.0, ctx: 0.0, full: 0.0, window: 0.0, local: 0.0 },
        rate: ContextMeasures { seqs: 0.0, ctx: 0.0, full: 0.0, window: 0.0, local: 0.0 },
        blocks: 0.0,
        finish_at: f64::INFINITY,
        linear_until: f64::INFINITY,
    };

    /// Counts `size` requests in the sums (takes them out when negative), each measuring `measures`, growing at
    /// `rate` and holding `blocks`.
    fn count(&mut self, size: f64, measures: &ContextMeasures, rate: &ContextMeasures, blocks: f64) {
        self.seqs += size;
        self.measures.add(size, measures);
        self.rate.add(size, rate);
        self.blocks += size * blocks;
    }

    /// The generated tokens of cohort `i` of the running list, whose `generated` field is `stored`.
    #[inline(always)]
    fn generated(&self, i: usize, stored: f64) -> f64 {
        if i < self.len {
            stored + self.advance
        } else {
            stored
        }
    }
}

/// What a step does with the lockstep (`Machine::lockstep_need`).
enum LockstepNeed {
    /// Every member steps as one, taking these blocks.
    Fits(f64),
    /// The members' blocks are not free: the step preempts (`Machine::lockstep_take_preempting`).
    Short,
    /// The step visits every cohort, the group settled: it is empty, the budget does not cover all its
    /// decodes, or a member's context left its line.
    Visit,
}

/// One engine with its queues and KV pool.
struct Machine<'e, 'a> {
    e: &'e Engine<'a>,
    /// The engine's step costs, what no load changes computed once (`Engine::costs`).
    costs: StepCosts<'e, 'a>,
    role: Role,
    running: Vec<Cohort>,
    waiting: VecDeque<Cohort>,
    total_blocks: f64,
    free_blocks: f64,
    /// Bytes one KV block holds on this engine's GPU (computed once).
    block_bytes: f64,
    /// Blocks one request holds at a context, as a line over its measures (`AttentionSpec::kv_position_line` on
    /// this GPU in blocks) and the blocks its linear layers' state takes: `blocks_for` runs for every cohort of
    /// every step, where `Engine::kv_bytes_at` and a division were a quarter of a sweep's time.
    blocks_line: ContextMeasures,
    state_blocks: f64,
    /// `ModelSpec::kv_per_layer`, computed once: the step's load needs it every step.
    kv_per_layer: f64,
    /// Whether a waiting cohort may still hold prefix-cache blocks (`cached_blocks > 0`). Set when a request is
    /// preempted, cleared when `evict_cached` finds none: most steps take blocks for every running cohort, and
    /// scanning the waiting queue for cached blocks each time was a fifth of the loop's time.
    waiting_may_hold_cache: bool,
    /// Accepted tokens per decoding sequence per step, and tokens each verifies.
    accepted: f64,
    verify: f64,
    /// Prompt and output tokens of every request in the sweep point.
    isl: f64,
    osl: f64,
    /// The engine reserves a request's whole KV (prompt plus output) when it admits it, and never preempts.
    reserve_whole: bool,
    clock_s: f64,
    /// Busy time per bottleneck and in all, for the measured window.
    busy: [f64; 5],
    /// Scratch buffers of `step`, kept between steps: a sweep point runs thousands of steps, and allocating
    /// them anew was an eighth of the loop's time.
    plan: Vec<(usize, Work)>,
    finished: Vec<usize>,
    /// The time of the last step when it decoded every running cohort and nothing has changed the cohorts
    /// since but that step's own advance (no finish, preemption, admission, merge or arrival): a lower bound on
    /// the time of any decode step of the same cohorts from here, which `jump` tests its horizon against.
    last_full_decode_s: Option<f64>,
    /// Output tokens this machine's requests have produced so far (at most OSL each): the window's throughput is
    /// the difference over its span.
    emitted: f64,
    /// `Resolution::max_cohorts` of the loop.
    max_cohorts: usize,
    /// The decoding cohorts stepped together (`Lockstep`), and whether any may join (`Resolution::lockstep`).
    lockstep: Lockstep,
    lockstep_on: bool,
}

/// What one step finished.
#[derive(Default)]
struct StepOut {
    /// Requests that produced their last token.
    done: Vec<Cohort>,
    /// Requests whose prompt is computed (PD's prefill side hands these over).
    prefilled: Vec<Cohort>,
    preempted: f64,
}

impl<'e, 'a> Machine<'e, 'a> {
    fn new(e: &'e Engine<'a>, role: Role, isl: f64, osl: f64, res: Resolution) -> Self {
        let block_tokens = e.k.kv_block_tokens.max(1.0);
        // A block holds positions; a linear layer's state is a fixed amount per sequence, counted in blocks'
        // worth of bytes by `blocks_for` like any other storage, but not part of a block's size.
        let block_bytes = e.kv_bytes_at(block_tokens) - e.state_bytes();
        let kv_per_layer = e.model.kv_per_layer();
        let total_blocks = if block_bytes > 0.0 { e.placement.kv_pool_bytes / block_bytes } else { f64::INFINITY };
        Machine {
            e,
            costs: e.costs(),
            role,
            running: Vec::new(),
            waiting: VecDeque::new(),
            total_blocks,
            free_blocks: total_blocks,
            block_bytes,
            blocks_line: e.model.attention.kv_position_line(kv_per_layer).scaled(1.0 / (e.kv_split() * block_bytes)),
            state_blocks: e.state_bytes() / block_bytes,
            kv_per_layer,
            waiting_may_hold_cache: false,
            accepted: e.tokens_per_step(),
            verify: e.model.draft_tokens.max(0.0) + 1.0,
            isl,
            osl,
            // A prefill-only machine holds a prompt's KV only until it is handed over: it reserves the prompt.
            reserve_whole: e.k.admission == Admission::GuaranteedNoEvict && role != Role::PrefillOnly,
            clock_s: 0.0,
            busy: [0.0; 5],
            plan: Vec::new(),
            finished: Vec::new(),
            last_full_decode_s: None,
            emitted: 0.0,
            max_cohorts: res.max_cohorts.max(1),
            lockstep: Lockstep::EMPTY,
            lockstep_on: res.lockstep,
        }
    }

    /// Advances cohort `c` by `tokens` generated tokens each, counting those within its OSL as emitted.
    fn advance(emitted: &mut f64, c: &mut Cohort, tokens: f64) {
        let osl = c.osl;
        *emitted += c.size * ((c.generated + tokens).min(osl) - c.generated.min(osl));
        c.generated += tokens;
    }

    /// Blocks each request of waiting cohort `w` takes when admitted with `per` prompt tokens this step: its
    /// context after the step, or under `GuaranteedNoEvict` its whole lifetime's KV (prompt, every output
    /// token still to come, and the draft tokens verified in its last step).
    fn admission_blocks(&self, w: &Cohort, per: f64) -> f64 {
        if self.reserve_whole {
            self.blocks_for(w.prompt + (w.osl - w.generated).max(0.0) + self.verify)
        } else {
            self.blocks_for(w.computed + per)
        }
    }

    fn blocks_for(&self, tokens: f64) -> f64 {
        if self.total_blocks.is_infinite() {
            return 0.0;
        }
        if tokens <= 0.0 {
            0.0
        } else {
            // Window layers hold at most their window: count the pool in full-attention-equivalent tokens. A
            // request's last block is half full on average (the fluid form of rounding up).
            self.blocks_line.of(&self.e.model.attention.context_measures(tokens)) + self.state_blocks + 0.5
        }
    }

    /// Whether a decoding request's blocks follow its context (`blocks_for` after each step): not on a no-evict
    /// engine, which reserved its whole lifetime's at admission, nor on a pool without a bound.
    fn blocks_follow_context(&self) -> bool {
        !self.reserve_whole && self.total_blocks.is_finite()
    }

    /// Adds running cohort `i` to the lockstep, if a step of it is what the group's sums give: it is decoding and has
    /// its first token (its step need not set it), its blocks are no more than its next step holds (the step takes the
    /// difference, never a negative one), and its next step's context lies on its measures' line. Returns whether it
    /// joined. Only the cohort at the group's end (`len`) or a merge of two members joins, so the members stay the
    /// front of the running list.
    fn lockstep_join(&mut self, i: usize) -> bool {
        let c = &self.running[i];
        if c.prefilling() || c.first_token_s.is_none() || c.generated >= c.osl - ROUNDING {
            return false;
        }
        let ctx = self.isl + c.generated;
        let attention = &self.e.model.attention;
        let (rate, until) = attention.context_measures_rate(ctx);
        if ctx + self.verify > until {
            return false;
        }
        let measures = attention.context_measures(ctx);
        // A no-evict engine's request holds its whole lifetime's blocks: a step never takes more.
        let enough = if self.blocks_follow_context() {
            // `blocks_for(ctx + verify)`, on the line.
            let mut next = measures;
            next.add(self.verify, &rate);
            c.blocks <= self.blocks_line.of(&next) + self.state_blocks + 0.5
        } else {
            !self.total_blocks.is_finite() || c.blocks >= self.blocks_for(self.isl + c.osl + self.verify)
        };
        if !enough {
            return false;
        }
        let g = &mut self.lockstep;
        g.count(c.size, &measures, &rate, c.blocks);
        g.finish_at = g.finish_at.min(c.osl - c.generated + g.advance);
        g.linear_until = g.linear_until.min(until - ctx - self.verify + g.advance);
        let advance = g.advance;
        let c = &mut self.running[i];
        c.generated -= advance;
        c.lockstep_from = advance;
        true
    }

    /// Adds the decoding cohorts that follow the lockstep to it, in order, while they can join.
    fn extend_lockstep(&mut self) {
        if self.lockstep.advance > self.lockstep.linear_until {
            // A member's context has left its line: the sums no longer hold.
            self.settle_lockstep();
        }
        while self.lockstep_on && self.lockstep.len < self.running.len() && self.lockstep_join(self.lockstep.len) {
            self.lockstep.len += 1;
        }
    }

    /// Running cohort `i` as the member it is: its generated tokens, and the blocks its last step in the
    /// group took (`blocks_for` its context then), if it has stepped since it joined.
    fn settle_member(&mut self, i: usize) {
        let (generated, blocks) = self.member_now(i);
        let c = &mut self.running[i];
        c.generated = generated;
        c.blocks = blocks;
    }

    /// Member `i`'s generated tokens and the blocks each of its requests holds, as `settle_member` writes them.
    fn member_now(&self, i: usize) -> (f64, f64) {
        let c = &self.running[i];
        let generated = c.generated + self.lockstep.advance;
        let stepped = self.lockstep.advance > c.lockstep_from;
        let blocks = if self.blocks_follow_context() && stepped {
            self.blocks_for(self.isl + generated - self.accepted + self.verify)
        } else {
            c.blocks
        };
        (generated, blocks)
    }

    /// Takes the group's last member out of it, settled, its measures and blocks out of the sums: the newest
    /// running request, about to be preempted.
    fn leave_lockstep(&mut self) {
        let i = self.lockstep.len - 1;
        self.settle_member(i);
        let attention = &self.e.model.attention;
        let c = &self.running[i];
        let ctx = self.isl + c.generated;
        // Its next step lies on its line (the group's `linear_until`), so the rate at its context is its line's.
        let (rate, _) = attention.context_measures_rate(ctx);
        self.lockstep.count(-c.size, &attention.context_measures(ctx), &rate, c.blocks);
        let held_finish = c.osl - c.generated + self.lockstep.advance <= self.lockstep.finish_at + ROUNDING;
        self.lockstep.len -= 1;
        if held_finish {
            self.lockstep.finish_at = self.members_finish_at();
        }
    }

    /// Dissolves the lockstep: every member's fields become what they are.
    fn settle_lockstep(&mut self) {
        for i in 0..self.lockstep.len {
            self.settle_member(i);
        }
        self.lockstep = Lockstep::EMPTY;
    }

    /// Merges members `i` and `i + 1` of the lockstep: takes both out of its sums, folds the second into the
    /// first, and puts the merged cohort back in (the whole group is settled when it cannot rejoin).
    fn merge_members(&mut self, i: usize) {
        let attention = &self.e.model.attention;
        let advance = self.lockstep.advance;
        // When one of the two was the member closest to its finish, the merged cohort (at their mean progress)
        // is further from it: `finish_at` is found again among the members.
        let left = |c: &Cohort| c.osl - c.generated;
        let held_finish = left(&self.running[i]).min(left(&self.running[i + 1])) <= self.lockstep.finish_at + ROUNDING;
        let rate_of = |c: &Cohort| attention.context_measures_rate(self.isl + c.generated + advance).0;
        if rate_of(&self.running[i]) == rate_of(&self.running[i + 1]) {
            // Both on lines of one rate: the merged cohort, at their mean context, measures and holds what the
            // two did, so the group's sums stay as they are.
            self.settle_member(i);
            self.settle_member(i + 1);
            let y = self.running.remove(i + 1);
            let c = &mut self.running[i];
            c.absorb(&y);
            c.generated -= advance;
            c.lockstep_from = advance;
            self.lockstep.len -= 1;
            if held_finish {
                self.lockstep.finish_at = self.members_finish_at();
            }
            return;
        }
        for k in [i, i + 1] {
            self.settle_member(k);
            let c = &self.running[k];
            let ctx = self.isl + c.generated;
            let (rate, _) = attention.context_measures_rate(ctx);
            self.lockstep.count(-c.size, &attention.context_measures(ctx), &rate, c.blocks);
        }
        let y = self.running.remove(i + 1);
        self.running[i].absorb(&y);
        self.lockstep.len -= 1;
        if !self.lockstep_join(i) {
            // Its members after it are settled from their stored fields, which the merged cohort is not.
            self.running[i].generated -= self.lockstep.advance;
            self.running[i].lockstep_from = self.lockstep.advance;
            self.settle_lockstep();
        } else if held_finish {
            self.lockstep.finish_at = self.members_finish_at();
        }
    }

    /// The least `advance` at which a member has generated its output, found over the members.
    fn members_finish_at(&self) -> f64 {
        self.running.iter().take(self.lockstep.len).map(|c| c.osl - c.generated).fold(f64::INFINITY, f64::min)
    }

    /// Takes the lockstep members that produced their last token in the step just run out of the group and the
    /// running list, as `step` does with any cohort that finishes, and counts none of their tokens past the OSL.
    /// Members are the front of the running list: the tail's finished cohorts are removed first.
    fn finish_members(&mut self, out: &mut StepOut) {
        let attention = &self.e.model.attention;
        let advance = self.lockstep.advance;
        let finishes = |c: &Cohort| c.generated + advance >= c.osl - ROUNDING;
        // One read-only pass finds the least finish of the members that stay and the first and last members
        // that finish (usually one, the oldest): this runs in most steps of a saturated point, where scanning
        // while removing, or twice, was a fifth of a sweep's instructions.
        let mut finish_at = f64::INFINITY;
        let mut finishing: Option<(usize, usize)> = None;
        for (i, c) in self.running[..self.lockstep.len].iter().enumerate() {
            if finishes(c) {
                finishing = Some((finishing.map_or(i, |(first, _)| first), i));
            } else {
                let left = c.osl - c.generated;
                if left < finish_at {
                    finish_at = left;
                }
            }
        }
        let Some((first, last)) = finishing else {
            self.lockstep.finish_at = finish_at;
            return;
        };
        for i in (first..=last).rev() {
            if !finishes(&self.running[i]) {
                continue;
            }
            // It stepped just now: settled, it holds the blocks of the context it stepped at, on its line.
            self.settle_member(i);
            let c = self.running.remove(i);
            let (rate, _) = attention.context_measures_rate(self.isl + c.generated - self.accepted);
            self.lockstep.count(-c.size, &attention.context_measures(self.isl + c.generated), &rate, c.blocks);
            self.lockstep.len -= 1;
            self.emitted -= c.size * (c.generated - c.osl);
            self.free_blocks += c.size * c.blocks;
            out.done.push(c);
        }
        self.lockstep.finish_at = finish_at;
    }

    /// What a step does with the lockstep: the blocks a step of every member takes when they are free, `Short`
    /// when they are not (the step preempts), `Visit` when the step must visit each cohort (the group is empty,
    /// the budget does not cover all its decodes, or a member's context left its line).
    fn lockstep_need(&self, budget: f64) -> LockstepNeed {
        let g = &self.lockstep;
        if g.len == 0 || budget < g.seqs * self.verify || g.advance > g.linear_until {
            return LockstepNeed::Visit;
        }
        let need = (self.lockstep_blocks_at(0.0) - g.blocks).max(0.0);
        if need <= self.free_blocks {
            LockstepNeed::Fits(need)
        } else {
            LockstepNeed::Short
        }
    }

    /// The lockstep's blocks for a step that preempts (`LockstepNeed::Short`): each member takes its blocks in order,
    /// and the newest running requests are preempted as they run out, exactly as the loop that visits every cohort
    /// does; members among the victims leave the group first (`preempt_newest`). Returns the blocks the members left in
    /// the group took, or `None` when none is left. Only the members' own blocks are visited, not their measures:
    /// dissolving the group for the step and forming it again after was a fifth of a saturated sweep.
    fn lockstep_take_preempting(&mut self, taken: &mut f64, out: &mut StepOut) -> Option<f64> {
        let mut took = 0.0;
        let mut i = 0;
        while i < self.lockstep.len {
            let (generated, held) = self.member_now(i);
            let need_each = (self.blocks_for(self.isl + generated + self.verify) - held).max(0.0);
            let need = need_each * self.running[i].size;
            while need > self.free_blocks {
                // A preemption puts its victim at the head of the waiting queue behind what is already free:
                // book what was taken before it first.
                self.evict_cached(std::mem::take(taken));
                let last = self.running.len() - 1;
                out.preempted += self.preempt_newest(need - self.free_blocks);
                if last == i {
                    // This member preempted (part of) itself: what is left of it, no longer a member, is
                    // planned with the cohorts after the group.
                    return (self.lockstep.len > 0).then_some(took);
                }
            }
            self.take_free_blocks(need);
            *taken += need;
            took += need;
            i += 1;
        }
        (self.lockstep.len > 0).then_some(took)
    }

    /// The blocks the lockstep's members hold after a step each takes with `ahead` more context than now (its
    /// context plus the verified tokens on its measures' line, `blocks_for` summed): what they hold now where
    /// blocks do not follow the context.
    fn lockstep_blocks_at(&self, ahead: f64) -> f64 {
        let g = &self.lockstep;
        if !self.blocks_follow_context() {
            return g.blocks;
        }
        let mut held = g.measures;
        held.add(ahead + self.verify, &g.rate);
        self.blocks_line.of(&held) + g.seqs * (self.state_blocks + 0.5)
    }

    /// Share of the KV block pool in use.
    fn kv_use(&self) -> f64 {
        (1.0 - self.free_blocks / self.total_blocks).clamp(0.0, 1.0)
    }

    /// Requests running: the lockstep's, summed as they joined, and the other cohorts'.
    fn seqs(&self) -> f64 {
        self.lockstep.seqs + self.running[self.lockstep.len..].iter().map(|c| c.size).sum::<f64>()
    }

    /// Requests decoding: the lockstep's, and those of the other running cohorts not prefilling.
    fn decoding_seqs(&self) -> f64 {
        let rest = &self.running[self.lockstep.len..];
        self.lockstep.seqs + rest.iter().filter(|c| !c.prefilling()).map(|c| c.size).sum::<f64>()
    }

    /// Preempts up to `need` blocks' worth of requests from the newest running cohort; returns the requests
    /// preempted. The victim keeps its output and recomputes prompt plus output later, less what the prefix
    /// cache still holds of it when it is re-admitted (vLLM V1, prefix caching on by default: `_preempt_request`
    /// in `vllm/v1/core/sched/scheduler.py` frees the blocks through `KVCacheManager.free`, which keeps their
    /// hashes; `SingleTypeKVCacheManager.free` returns them tail first, so the tail is evicted first and a
    /// prefix survives; on re-admission `get_computed_blocks` hits every full block still cached, up to the
    /// request's tokens less one).
    fn preempt_newest(&mut self, need: f64) -> f64 {
        // The newest is a lockstep member only when every running cohort is: it leaves the group first.
        if self.lockstep.len > 0 && self.lockstep.len == self.running.len() {
            self.leave_lockstep();
        }
        let Some(back) = self.running.last_mut() else { return 0.0 };
        let per = back.blocks.max(1.0);
        let n = (need / per).clamp(MIN_PART.min(back.size), back.size);
        let mut victim = if n < back.size { back.split(n) } else { self.running.pop().expect("back exists") };
        // Tokens whose KV the victim computed: its prompt so far, or, decoding, its context but the token
        // sampled last. Only full blocks are cached: on average half a block less.
        let kv_tokens = if victim.prefilling() { victim.computed } else { self.isl + victim.generated - 1.0 }.max(0.0);
        victim.prompt = self.isl + victim.generated;
        let block_tokens = self.e.k.kv_block_tokens.max(1.0);
        let hit = (kv_tokens - block_tokens / 2.0).min(victim.prompt - 1.0).max(0.0);
        let cached = if self.block_bytes > 0.0 && self.e.k.prefix_caching {
            (self.e.kv_bytes_at(hit) / self.block_bytes).min(victim.blocks)
        } else {
            0.0
        };
        // Its uncached tail blocks are freed first, so they sit ahead of its cached ones in the queue.
        victim.evict_ahead = self.free_blocks + victim.size * (victim.blocks - cached).max(0.0);
        self.free_blocks += victim.size * victim.blocks;
        victim.blocks = 0.0;
        victim.cached_blocks = cached;
        victim.computed = if cached > 0.0 { hit } else { 0.0 };
        victim.preemptions += 1.0;
        self.waiting_may_hold_cache |= cached > 0.0;
        self.waiting.push_front(victim);
        n
    }

    /// Takes `n` new blocks from the head of the free queue (vLLM's `BlockPool.get_new_blocks` pops the least
    /// recently freed block and evicts its cached hash): the blocks freed before a waiting preempted request's
    /// go first, then its own, tail first, which shortens its prefix-cache hit.
    fn take_blocks(&mut self, n: f64) {
        self.take_free_blocks(n);
        self.evict_cached(n);
    }

    /// The free count's part of `take_blocks`; `evict_cached` books the rest. A step takes blocks for every
    /// cohort it plans and books their eviction once: what `evict_cached` does to the waiting requests is
    /// additive in the blocks taken (each loses what passes its place in the queue, at most what it holds), so
    /// one call with their sum does what a call per cohort did (a pass over the waiting queue per cohort was a
    /// twentieth of a sweep's instructions).
    #[inline(always)]
    fn take_free_blocks(&mut self, n: f64) {
        // Admission takes what `free_blocks / each` allowed, which can round a few ulps past zero; a pool a
        // hair below empty would make the next step preempt for nothing (a no-evict engine included).
        self.free_blocks = (self.free_blocks - n).max(0.0);
    }

    /// Evicts from the waiting preempted requests' prefix caches what taking `n` blocks reaches.
    fn evict_cached(&mut self, n: f64) {
        if n <= 0.0 || !self.waiting_may_hold_cache {
            return;
        }
        let mut any_cached = false;
        for w in self.waiting.iter_mut().filter(|w| w.cached_blocks > 0.0) {
            let over = n - w.evict_ahead;
            w.evict_ahead = (w.evict_ahead - n).max(0.0);
            if over > 0.0 {
                let lost = (over / w.size).min(w.cached_blocks);
                let tokens_per_block = w.computed / w.cached_blocks;
                w.cached_blocks -= lost;
                w.computed = if w.cached_blocks > 1e-9 { w.computed - lost * tokens_per_block } else { 0.0 };
                if w.computed <= 0.0 {
                    w.cached_blocks = 0.0;
                    w.computed = 0.0;
                }
            }
            any_cached |= w.cached_blocks > 0.0;
        }
        self.waiting_may_hold_cache = any_cached;
    }

    /// Admits `c` (just split off the waiting queue) holding `each` blocks per request: its prefix-cache hits
    /// leave the free queue where they are (`BlockPool.touch`), the rest are new blocks from its head.
    fn admit_blocks(&mut self, c: &mut Cohort, each: f64) {
        let hits = (c.size * c.cached_blocks).min(c.size * each);
        if hits > 0.0 {
            self.free_blocks -= hits;
            for w in self.waiting.iter_mut().filter(|w| w.cached_blocks > 0.0 && w.evict_ahead > c.evict_ahead) {
                w.evict_ahead = (w.evict_ahead - hits).max(c.evict_ahead);
            }
        }
        self.take_blocks(c.size * each - hits);
        c.cached_blocks = 0.0;
        c.evict_ahead = 0.0;
        c.blocks = each;
    }

    /// Runs several decode-only steps at once when nothing can change between them: every running request is
    /// decoding and has its first token, none finishes, no block runs out, nothing new can be admitted, and no
    /// step would pass `horizon_s` (a hand-off arriving). Each step is timed at the jump's mean context. Returns
    /// (time of one step, steps, bottleneck slot) or `None` when fewer than two steps can be jumped.
    fn jump(&mut self, horizon_s: f64) -> Option<(f64, f64, usize)> {
        // The lockstep's members decode and have their first tokens. A request PD's decode side has just
        // received gets its first token from its first step here, which is a step of its own: timed exactly (not
        // at a jump's mean context), and after it the request can join the lockstep (before, every hand-off
        // dissolved the group for a jump that moved each cohort, and the next jump formed it again).
        if self.running.is_empty()
            || self.running[self.lockstep.len..].iter().any(|c| c.prefilling() || c.first_token_s.is_none())
        {
            return None;
        }
        if let Some(w) = self.waiting.front() {
            let chunk = self.e.limits.tokens_per_step.max(1.0);
            let per = (w.prompt - w.computed).min(chunk / fcfs_share(w.prompt - w.computed, chunk, w.size));
            if w.arrival_s <= self.clock_s && self.admission_blocks(w, per) <= self.free_blocks {
                return None;
            }
        }
        // Every running cohort decodes: those the last step finished prefilling can join the lockstep.
        self.extend_lockstep();
        let a = self.accepted;
        // The fewest steps any cohort has left: the one with the fewest tokens left. Dividing by a positive `a`
        // and rounding up keep order, so one of each on the minimum equals the minimum of them per cohort (a
        // division per cohort was a good part of a jump's time). The members' fewest is the group's `finish_at`
        // less its advance (kept exact): only the rest are scanned.
        let g = &self.lockstep;
        debug_assert!(g.len == 0 || (g.finish_at - self.members_finish_at()).abs() <= ROUNDING, "finish_at is exact");
        let fewest_left =
            self.running.iter().skip(g.len).map(|c| c.osl - c.generated).fold(g.finish_at - g.advance, f64::min);
        let until_done = ((fewest_left - ROUNDING) / a).ceil() - 1.0;
        if until_done < 2.0 {
            return None;
        }
        // A step's time never falls as contexts grow (every term of `Engine::step` is a sum or maximum of terms
        // that grow with them, and rounding keeps that order), so no jump fits before the horizon when two steps
        // at the shortest jump's mean context do not: say so before searching the free blocks (on PD's decode
        // side, hand-offs arrive every few steps and most jumps ended here after the search). The step just run,
        // when it decoded every running cohort at their contexts before this one, is shorter still: when even it
        // does not fit twice, not even that step's load needs summing.
        if horizon_s.is_finite() {
            let room_s = horizon_s - self.clock_s;
            if self.last_full_decode_s.is_some_and(|t| (room_s / t).floor() < 2.0)
                || (room_s / self.decode_step(2.0).total_s).floor() < 2.0
            {
                return None;
            }
        }
        if self.lockstep.len == self.running.len() {
            if let Some(jumped) = self.jump_lockstep(until_done, horizon_s) {
                return jumped;
            }
        }
        // The jump moves every cohort one by one: the lockstep's members first become what they are.
        self.settle_lockstep();
        let blocks_after = |j: f64| -> f64 {
            self.running
                .iter()
                .map(|c| {
                    c.size * (self.blocks_for(self.isl + c.generated + (j - 1.0) * a + self.verify) - c.blocks).max(0.0)
                })
                .sum()
        };
        let mut j = until_done.min(4096.0);
        let blocks_at_j = blocks_after(j);
        if blocks_at_j > self.free_blocks {
            j = most_steps_that_fit(blocks_after, self.free_blocks, j, blocks_at_j);
            if j < 2.0 {
                return None;
            }
        }
        let t = self.decode_step(j);
        if horizon_s.is_finite() {
            j = j.min(((horizon_s - self.clock_s) / t.total_s).floor());
        }
        if j < 2.0 {
            return None;
        }
        let mut used = 0.0;
        for c in self.running.iter_mut() {
            Self::advance(&mut self.emitted, c, j * a);
            c.first_token_s.get_or_insert(self.clock_s + t.total_s);
        }
        for i in 0..self.running.len() {
            let c = &self.running[i];
            let held = self.blocks_for(self.isl + c.generated - a + self.verify).max(c.blocks);
            used += c.size * (held - c.blocks);
            self.running[i].blocks = held;
        }
        self.take_blocks(used);
        self.clock_s += j * t.total_s;
        self.last_full_decode_s = None;
        Some((t.total_s, j, bottleneck_slot(t.bottleneck())))
    }

    /// `jump` when every running cohort is a lockstep member: the same jump, with the blocks and the load summed
    /// by the group's lines instead of over each cohort. `None` when a member's context would leave its line
    /// within the jump (`jump` then moves each cohort); else `jump`'s answer.
    fn jump_lockstep(&mut self, until_done: f64, horizon_s: f64) -> Option<Option<(f64, f64, usize)>> {
        let (a, g) = (self.accepted, self.lockstep);
        let mut j = until_done.min(4096.0);
        if g.advance + (j - 1.0) * a > g.linear_until {
            return None;
        }
        let blocks_after = |j: f64| (self.lockstep_blocks_at((j - 1.0) * a) - g.blocks).max(0.0);
        let blocks_at_j = blocks_after(j);
        if blocks_at_j > self.free_blocks {
            j = most_steps_that_fit(blocks_after, self.free_blocks, j, blocks_at_j);
            if j < 2.0 {
                return Some(None);
            }
        }
        let t = self.decode_step(j);
        if horizon_s.is_finite() {
            j = j.min(((horizon_s - self.clock_s) / t.total_s).floor());
        }
        if j < 2.0 {
            return Some(None);
        }
        let used = blocks_after(j);
        self.take_blocks(used);
        let g = &mut self.lockstep;
        g.blocks += used;
        g.advance += j * a;
        g.measures.add(j * a, &g.rate);
        self.emitted += g.seqs * j * a;
        self.clock_s += j * t.total_s;
        self.last_full_decode_s = None;
        Some(Some((t.total_s, j, bottleneck_slot(t.bottleneck()))))
    }

    /// Time of one step of a `j`-step decode-only jump: every running cohort decoding at the jump's mean context.
    fn decode_step(&self, j: f64) -> StepTime {
        let m = self.e.model;
        let a = self.accepted;
        let g = &self.lockstep;
        let mean_ahead = (j - 1.0) / 2.0 * a;
        let decodes = if g.len == self.running.len() && g.advance + mean_ahead <= g.linear_until {
            let mut on_line = g.measures;
            on_line.add(mean_ahead, &g.rate);
            on_line
        } else {
            let mut decodes = ContextMeasures::default();
            for (i, c) in self.running.iter().enumerate() {
                let generated = g.generated(i, c.generated);
                decodes.add(c.size, &m.attention.context_measures(self.isl + generated + mean_ahead));
            }
            decodes
        };
        let mut load = StepLoad::default();
        load.add_decode_measures(m, self.kv_per_layer, &decodes, self.verify);
        self.costs.step(&load)
    }

    /// Keeps the running cohorts within `max_cohorts`: first-come-first-served chunking admits a few requests a
    /// step, each group its own cohort, so merge the two neighbouring decoding cohorts closest in progress
    /// until the count is back (the merged cohort's requests run at their mean progress: a bunching of at most
    /// the gap between neighbours, instead of a loop that slows with every client).
    fn merge_closest(&mut self) {
        while self.running.len() > self.max_cohorts {
            let mut best: Option<(usize, f64)> = None;
            let g = &self.lockstep;
            for i in 0..self.running.len() - 1 {
                let (x, y) = (&self.running[i], &self.running[i + 1]);
                // Only two cohorts alike merge: of one length, both decoding, and both past their first token
                // or neither (PD's decode side receives hand-offs decoding but before their first token; merged
                // with a cohort past it they took its earlier one: a negative TTFT, a TPOT 2.7 times too long).
                if x.osl != y.osl
                    || i + 1 >= g.len
                        && (x.prefilling() || y.prefilling() || x.first_token_s.is_some() != y.first_token_s.is_some())
                {
                    continue;
                }
                // Two members decode, and their stored progress has the same offset.
                let gap = if i + 1 < g.len {
                    (x.generated - y.generated).abs()
                } else {
                    (g.generated(i, x.generated) - g.generated(i + 1, y.generated)).abs()
                };
                if best.is_none_or(|(_, g)| gap < g - ROUNDING) {
                    best = Some((i, gap));
                }
            }
            let Some((i, _)) = best else { return };
            if i + 1 < self.lockstep.len {
                self.merge_members(i);
                continue;
            }
            if i < self.lockstep.len {
                self.settle_lockstep();
            }
            let y = self.running.remove(i + 1);
            self.running[i].absorb(&y);
        }
    }

    /// Plans and runs one step at `clock_s`; `None` when there is nothing to run.
    /// What the step finished goes to `out`, cleared first: the caller keeps one for the whole loop (a step's
    /// vectors allocated anew were a twentieth of a sweep's instructions once the lockstep took the rest).
    fn step(&mut self, max_seqs: f64, record: bool, out: &mut StepOut) -> Option<f64> {
        debug_assert!(self.lockstep.len <= self.running.len(), "the lockstep's members are running cohorts");
        self.last_full_decode_s = None;
        self.extend_lockstep();
        self.merge_closest();
        let m = self.e.model;
        let mut budget = self.e.limits.tokens_per_step.max(1.0);
        out.done.clear();
        out.prefilled.clear();
        out.preempted = 0.0;
        let mut plan = std::mem::take(&mut self.plan);
        plan.clear();
        // The step's load is summed as work is planned, in plan order: a planned cohort never changes size
        // afterwards (preemption takes from the back, splits happen before a cohort is planned), so this is
        // the sum a second pass over the plan would make, without the pass.
        let mut load = StepLoad::default();
        let mut decodes = ContextMeasures::default();
        // Blocks taken whose eviction from waiting requests' prefix caches is not booked yet (`take_free_blocks`).
        let mut taken = 0.0;
        // The lockstep's members decode first, as one: their blocks and their measures are the group's sums.
        let lockstep_took = match self.lockstep_need(budget) {
            LockstepNeed::Fits(need) => {
                self.take_free_blocks(need);
                taken += need;
                Some(need)
            }
            LockstepNeed::Short => self.lockstep_take_preempting(&mut taken, out),
            LockstepNeed::Visit => None,
        };
        match lockstep_took {
            Some(_) => {
                budget -= self.lockstep.seqs * self.verify;
                decodes = self.lockstep.measures;
            }
            None => self.settle_lockstep(),
        }
        let mut i = self.lockstep.len;
        while i < self.running.len() {
            // FCFS chunking: the budget goes to whole prompts in order, the last one taking what is left; the
            // rest of a cohort whose prompts do not all fit waits for the next step.
            if self.running[i].prefilling() {
                let c = &self.running[i];
                let n = fcfs_share(c.prompt - c.computed, budget, c.size);
                if n < c.size && n > 0.0 {
                    let part = self.running[i].split(n);
                    self.running.insert(i, part);
                }
            }
            let c = &self.running[i];
            let (work, per_req, ctx_after) = if c.prefilling() {
                let per = (c.prompt - c.computed).min(budget / c.size);
                (Work::Prefill { per, offset: c.computed }, per, c.computed + per)
            } else {
                let ctx = self.isl + c.generated;
                (Work::Decode { ctx }, self.verify, ctx + self.verify)
            };
            if budget < per_req * c.size * (1.0 - 1e-9) && matches!(work, Work::Decode { .. }) || per_req <= 0.0 {
                i += 1;
                continue;
            }
            let need_each = (self.blocks_for(ctx_after) - c.blocks).max(0.0);
            let mut need = need_each * c.size;
            let mut self_preempted = false;
            while need > self.free_blocks {
                // A preemption puts its victim at the head of the waiting queue behind what is already free:
                // book what was taken before it first.
                self.evict_cached(std::mem::take(&mut taken));
                let last = self.running.len() - 1;
                let n = self.preempt_newest(need - self.free_blocks);
                out.preempted += n;
                if last == i {
                    // This cohort preempted (part of) itself.
                    if self.running.len() <= i {
                        self_preempted = true;
                        break;
                    }
                    need = need_each * self.running[i].size;
                }
            }
            if self_preempted {
                break;
            }
            self.take_free_blocks(need);
            taken += need;
            let c = &mut self.running[i];
            c.blocks += need_each;
            budget -= per_req * c.size;
            match work {
                Work::Prefill { per, offset } => load.add_prefill(m, c.size, offset, per),
                Work::Decode { ctx } => decodes.add(c.size, &m.attention.context_measures(ctx)),
            }
            plan.push((i, work));
            i += 1;
        }
        self.evict_cached(taken);
        // PD's decode side admits only requests it preempted itself, recomputed locally: vLLM's NixlConnector
        // pulls a request's KV once (`update_state_after_alloc` clears `do_remote_prefill`), so a preempted
        // request finds only its own prefix-cache hits.
        if out.preempted == 0.0 {
            let mut seqs = self.seqs();
            while budget > 1e-9 && seqs < max_seqs {
                let Some(w) = self.waiting.front() else { break };
                if w.arrival_s > self.clock_s {
                    break;
                }
                let share = fcfs_share(w.prompt - w.computed, budget, w.size);
                let per = (w.prompt - w.computed).min(budget / share);
                let need_each = self.admission_blocks(w, per);
                let fit = if need_each > 0.0 { self.free_blocks / need_each } else { w.size };
                let n = share.min(fit).min(max_seqs - seqs);
                if n < MIN_PART && n < w.size {
                    break; // Head-of-line: the oldest waiting request waits for blocks.
                }
                let mut c = if n < w.size {
                    self.waiting.front_mut().expect("front exists").split(n)
                } else {
                    self.waiting.pop_front().expect("front exists")
                };
                let per = (c.prompt - c.computed).min(budget / c.size);
                self.admit_blocks(&mut c, need_each);
                c.scheduled_s.get_or_insert(self.clock_s);
                budget -= per * c.size;
                seqs += c.size;
                load.add_prefill(m, c.size, c.computed, per);
                plan.push((self.running.len(), Work::Prefill { per, offset: c.computed }));
                self.running.push(c);
            }
        }
        if plan.is_empty() && lockstep_took.is_none() {
            self.plan = plan;
            return None;
        }
        load.add_decode_measures(m, self.kv_per_layer, &decodes, self.verify);
        let t = self.costs.step(&load);
        let now = self.clock_s + t.total_s;
        if record {
            self.busy[bottleneck_slot(t.bottleneck())] += t.total_s;
        }
        // Whether a lockstep member produces its last token in this step.
        let mut lockstep_finishes = false;
        if let Some(need) = lockstep_took {
            // Each member holds what its step took (the blocks at its context plus the verified tokens) and emits
            // every token it accepts, less, for one that finishes, those past its OSL (`finish_members`).
            let a = self.accepted;
            let g = &mut self.lockstep;
            lockstep_finishes = g.finish_at - g.advance <= a + ROUNDING;
            g.blocks += need;
            g.advance += a;
            g.measures.add(a, &g.rate);
            self.emitted += g.seqs * a;
        }
        let mut finished = std::mem::take(&mut self.finished);
        finished.clear();
        let mut decode_only = true;
        for &(i, work) in &plan {
            let c = &mut self.running[i];
            match work {
                Work::Prefill { per, .. } => {
                    decode_only = false;
                    c.computed += per;
                    if !c.prefilling() {
                        if self.role == Role::PrefillOnly {
                            finished.push(i);
                        } else {
                            // The step that completes a prompt samples its next token.
                            Self::advance(&mut self.emitted, c, 1.0);
                            c.first_token_s.get_or_insert(now);
                        }
                    }
                }
                Work::Decode { .. } => {
                    Self::advance(&mut self.emitted, c, self.accepted);
                    c.first_token_s.get_or_insert(now);
                }
            }
            if self.role != Role::PrefillOnly && c.generated >= c.osl - ROUNDING {
                finished.push(i);
            }
        }
        finished.sort_unstable();
        finished.dedup();
        for &i in finished.iter().rev() {
            let c = self.running.remove(i);
            self.free_blocks += c.size * c.blocks;
            if self.role == Role::PrefillOnly {
                out.prefilled.push(c);
            } else {
                out.done.push(c);
            }
        }
        if lockstep_finishes {
            self.finish_members(out);
        }
        if finished.is_empty()
            && !lockstep_finishes
            && out.preempted == 0.0
            && decode_only
            && plan.len() + self.lockstep.len == self.running.len()
        {
            self.last_full_decode_s = Some(t.total_s);
        }
        self.plan = plan;
        self.finished = finished;
        self.clock_s = now;
        Some(t.total_s)
    }
}

/// A sweep point measured by running the closed loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Output tokens the requests produced in the measured window over its length (`Tally::measured`).
    pub output_tok_s: f64,
    pub ttft_s: f64,
    pub tpot_s: f64,
    pub mean_step_s: f64,
    /// Mean decoding sequences per step, and the KV pool's limit at ISL + OSL tokens each.
    pub resident: f64,
    pub max_resident: f64,
    /// Preemptions in the measured window over the requests its output tokens amount to.
    pub preemptions_per_request: f64,
    /// Mean share of KV blocks in use (decode side in PD).
    pub kv_utilization: f64,
    /// Mean time a request waited before its prompt was first scheduled.
    pub queue_s: f64,
    pub bottleneck: Bottleneck,
    /// Requests completed in the measured window (and in all): every admitted request completes.
    pub completed: f64,
    pub completed_total: f64,
    /// Clients the loop ran: the sweep point's, or fewer past saturation (`saturating_clients`), the rest
    /// added as queueing by Little's law.
    pub simulated_clients: f64,
}

/// Request statistics over the measured window.
#[derive(Default)]
struct Tally {
    completed: f64,
    completed_total: f64,
    ttft: f64,
    tpot: f64,
    preemptions: f64,
    queue: f64,
    resident_time: f64,
    kv_time: f64,
    steps: f64,
    step_time: f64,
    /// Requests a round of the window completes, and (time, the machine's emitted tokens) when the window opened
    /// (at t = 0 until a warm-up ends) and when each round of it ended.
    round: f64,
    marks: Vec<(f64, f64)>,
    /// Requests preempted by the window's steps.
    preempted_in_window: f64,
}

impl Tally {
    /// A window of rounds of `round` requests, open from t = 0 (a batch has no warm-up to move it).
    fn new(round: f64) -> Self {
        Tally { round, marks: vec![(0.0, 0.0)], ..Tally::default() }
    }

    /// Books `steps` steps of `dt` seconds each with `resident` sequences decoding and `kv_use` of the pool used.
    fn ran(&mut self, steps: f64, dt: f64, resident: f64, kv_use: f64) {
        self.steps += steps;
        self.step_time += steps * dt;
        self.resident_time += steps * dt * resident;
        self.kv_time += steps * dt * kv_use;
    }

    fn warming(&self, warm: f64) -> bool {
        self.completed_total < warm - 1e-9
    }

    /// Books the requests `done` finished at `now`, when the machine had emitted `emitted` tokens.
    fn finish(&mut self, done: &[Cohort], now: f64, warm: f64, emitted: f64) {
        for c in done {
            if self.warming(warm) {
                // Warm-up: the window opens once every client has finished a request.
                self.completed_total += c.size;
                self.marks.clear();
                self.marks.push((now, emitted));
                continue;
            }
            self.completed_total += c.size;
            // A round of the window ends when as many requests as clients have completed in it.
            if self.completed + c.size >= self.marks.len() as f64 * self.round - 1e-9 {
                self.marks.push((now, emitted));
            }
            let first = c.first_token_s.unwrap_or(now);
            // Merges mix both as size-weighted means, so this holds for every cohort but for rounding.
            debug_assert!(
                first >= c.arrival_s - 1e-9 * c.arrival_s.abs().max(1.0),
                "a first token before its request was sent: {c:?}"
            );
            self.completed += c.size;
            self.ttft += c.size * (first - c.arrival_s);
            self.tpot += c.size * (now - first) / (c.osl - 1.0).max(1.0);
            self.preemptions += c.size * c.preemptions;
            self.queue += c.size * (c.scheduled_s.unwrap_or(c.arrival_s) - c.arrival_s);
        }
    }

    /// Whether the window has measured enough: `rounds` rounds, and at the engine's edge at least
    /// `rounds_at_the_edge` and then until the standard error of the window's rate over its rounds is at most
    /// `rate_error_at_the_edge` of it (or `most_rounds_at_the_edge` rounds). Called when requests complete.
    fn measured_enough(&self, res: &Resolution, at_the_edge: bool) -> bool {
        let rounds = self.completed / self.round;
        if !at_the_edge {
            return rounds >= res.rounds - 1e-9;
        }
        if rounds < res.rounds_at_the_edge - 1e-9 {
            return false;
        }
        if rounds >= res.most_rounds_at_the_edge - 1e-9 {
            return true;
        }
        // The rounds' rates, each the tokens produced between two round ends over the time between them.
        let rates = || self.marks.windows(2).map(|w| (w[1].1 - w[0].1) / (w[1].0 - w[0].0).max(1e-12));
        let n = self.marks.len().saturating_sub(1) as f64;
        if n < 2.0 {
            return true;
        }
        let mean = rates().sum::<f64>() / n;
        let variance = rates().map(|r| (r - mean) * (r - mean)).sum::<f64>() / (n - 1.0);
        variance / n <= (res.rate_error_at_the_edge * mean).powi(2)
    }

    /// The window's statistics: throughput is the output tokens produced in the window over its length (in a
    /// steady state the requests completed times OSL, without the jump of a wave of completions at its end), and
    /// preemptions per request the preemptions of the window's steps over the requests its tokens amount to
    /// (counted on the requests completed in it, they jumped with the same waves).
    fn measured(&self, now: f64, emitted: f64, osl: f64, max_resident: f64, bottleneck: Bottleneck) -> Measured {
        let (start_s, emitted_at_start) = self.marks.first().copied().unwrap_or_default();
        let span = now - start_s;
        let n = self.completed.max(1e-12);
        let window = span.max(1e-12);
        let tokens = emitted - emitted_at_start;
        Measured {
            output_tok_s: if span > 0.0 { tokens / span } else { 0.0 },
            ttft_s: self.ttft / n,
            tpot_s: self.tpot / n,
            mean_step_s: if self.steps > 0.0 { self.step_time / self.steps } else { f64::INFINITY },
            resident: self.resident_time / window,
            max_resident,
            preemptions_per_request: if tokens > 0.0 { self.preempted_in_window * osl / tokens } else { 0.0 },
            kv_utilization: self.kv_time / window,
            queue_s: self.queue / n,
            bottleneck,
            completed: self.completed,
            completed_total: self.completed_total,
            simulated_clients: 0.0,
        }
    }
}

/// How many of a cohort's `size` requests, each with `remaining` prompt tokens, get prompt tokens from a step
/// with `budget` left, first come first served: as many whole prompts as fit, and at least one request (which
/// then takes a chunk of what is left). vLLM's scheduler walks requests in order, each taking the smaller of
/// its remaining prompt and the remaining budget; spreading the budget evenly over a cohort instead would
/// finish all its prompts together, late, and bunch their decodes (a fluid artefact).
fn fcfs_share(remaining: f64, budget: f64, size: f64) -> f64 {
    if remaining <= 0.0 || budget <= 0.0 {
        return 0.0;
    }
    (budget / remaining).max(MIN_PART).min(size)
}

/// The most steps `j` in `[2, hi)` whose new blocks `blocks_after(j)` fit in `free` blocks, or 1 when none does;
/// `blocks_after(hi)` is `blocks_at_hi`, already known not to fit. `blocks_after` never decreases with `j` (a sum,
/// in a fixed order, of terms that grow with the context: rounding keeps that order), so the answer is the
/// boundary a bisection over `[1, hi)` finds. The search interpolates between the bracket's ends instead: a
/// decode-only stretch's blocks grow almost linearly with its steps, so it lands within a step or two of the
/// boundary in two or three evaluations of a sum over every cohort where bisection took twelve (the jump's
/// search was a third of PD's sweep). A step that fails to halve the bracket is followed by a bisection, so it
/// never takes more than twice bisection's evaluations.
fn most_steps_that_fit(blocks_after: impl Fn(f64) -> f64, free: f64, hi: f64, blocks_at_hi: f64) -> f64 {
    let blocks_at_two = blocks_after(2.0);
    if blocks_at_two > free {
        return 1.0;
    }
    let (mut lo, mut at_lo) = (2.0, blocks_at_two);
    let (mut hi, mut at_hi) = (hi, blocks_at_hi);
    let mut bisect = false;
    while hi - lo > 1.0 {
        let width = hi - lo;
        let mid = if bisect || at_hi <= at_lo {
            ((lo + hi) / 2.0).floor()
        } else {
            (lo + ((free - at_lo) / (at_hi - at_lo) * width).floor()).clamp(lo + 1.0, hi - 1.0)
        };
        let at_mid = blocks_after(mid);
        if at_mid <= free {
            (lo, at_lo) = (mid, at_mid);
        } else {
            (hi, at_hi) = (mid, at_mid);
        }
        bisect = !bisect && hi - lo > width / 2.0;
    }
    lo
}

/// Where a step's time is booked in `Machine::busy`.
fn bottleneck_slot(b: Bottleneck) -> usize {
    match b {
        Bottleneck::HbmBandwidth => 0,
        Bottleneck::SlowPathBandwidth => 1,
        Bottleneck::Compute => 2,
        Bottleneck::Link => 3,
        _ => 4,
    }
}

fn dominant(busy: &[f64; 5]) -> Bottleneck {
    const ORDER: [Bottleneck; 5] = [
        Bottleneck::HbmBandwidth,
        Bottleneck::SlowPathBandwidth,
        Bottleneck::Compute,
        Bottleneck::Link,
        Bottleneck::Overhead,
    ];
    let (i, _) = busy.iter().enumerate().fold((4, f64::MIN), |b, (i, &t)| if t > b.1 { (i, t) } else { b });
    ORDER[i]
}

/// How many times the requests an engine can hold the loop runs before the rest of the clients only queue.
/// Four: against the loop with every client (`Run::EVERY_CLIENT`), throughput agrees within 1.3% at four
/// times and within 4.4% at twice (MiniMax-M3 single, 8192/1024 at 44 clients: the cohorts' fluid split and the
/// preemptions per request still move with the queue's length at twice).
const SATURATING_MULTIPLE: f64 = 4.0;

/// Clients enough to keep an engine saturated: `SATURATING_MULTIPLE` times the most requests it can hold at
/// once (its sequence cap, or its KV pool at the least a request holds once admitted). Past that,
/// a closed loop is a queue that never empties in front of a saturated engine: more clients only wait longer,
/// so the loop runs this many and `with_queue` adds the rest's wait by Little's law. Simulating every waiting
/// client cost most of a sweep's time (GLM-5.2 single at 256 clients: 4 of the 9-point sweep's 8 ms).
fn saturating_clients(m: &Machine, max_seqs: f64, c: f64) -> f64 {
    // The least a request holds once admitted: its whole lifetime's KV under no-evict admission; else its prompt
    // (on PD's decode side, which receives it whole, plus its first verify step).
    let tokens_each = if m.reserve_whole {
        m.isl + m.osl + m.verify
    } else if m.role == Role::DecodeOnly {
        m.isl + m.verify
    } else {
        m.isl
    };
    let pool =
        if m.total_blocks.is_finite() { m.total_blocks / m.blocks_for(tokens_each).max(1e-12) } else { f64::INFINITY };
    let held = max_seqs.min(pool);
    if held.is_finite() {
        c.min((SATURATING_MULTIPLE * held).ceil().max(1.0))
    } else {
        c
    }
}

/// A measurement of `simulated` clients extended to `c`: the same throughput and TPOT, and a response time of
/// `c / X` (Little's law in a closed loop without think time), the part before the first token growing with
/// the queue. The loop's own finite window sits 0-7% below Little's law at any client count (waves of
/// completions at the window's edges), so an extended TTFT reads up to that much above the full loop's.
fn with_queue(mut r: Measured, c: f64, simulated: f64, osl: f64) -> Measured {
    r.simulated_clients = simulated;
    let requests_per_s = r.output_tok_s / osl;
    if c > simulated && requests_per_s > 0.0 {
        // A request's time after its first token does not depend on how many wait; the response time is
        // c / X, so the rest is the wait before the first token.
        let after_first = (osl - 1.0).max(1.0) * r.tpot_s;
        let ttft = (c / requests_per_s - after_first).max(r.ttft_s);
        r.queue_s += ttft - r.ttft_s;
        r.ttft_s = ttft;
    }
    r
}

/// Closed-loop runs already made on one engine (or one PD pair) for one workload, kept by what decides them
/// (`LoopKey`).
/// Past saturation every client count runs the same `saturating_clients`, so a sweep's 128 and 256 clients are
/// one loop and differ only by the queue `with_queue` adds (`modes::Sweep` keeps one memo per mode). A memo
/// must not outlive its engine and workload: the key does not name them.
#[derive(Debug, Default)]
pub struct LoopMemo {
    runs: Vec<(LoopKey, Measured)>,
    /// Loop runs answered from the memo (a deterministic count the tests check).
    pub reused: usize,
}

/// What a closed loop's measurement depends on besides its engine and workload: the clients it runs, whether
/// the sweep point's clients exceed the KV pool (its bottleneck is then the pool), and whether they exceed the
/// pool or the sequence cap (it then measures more rounds).
#[derive(Debug, Clone, Copy, PartialEq)]
struct LoopKey {
    simulated: f64,
    over_pool: bool,
    at_the_edge: bool,
}

impl LoopMemo {
    fn get(&mut self, key: LoopKey) -> Option<Measured> {
        let r = self.runs.iter().find(|(k, _)| *k == key).map(|(_, r)| *r);
        self.reused += usize::from(r.is_some());
        r
    }

    fn put(&mut self, key: LoopKey, r: Measured) {
        self.runs.push((key, r));
    }
}

/// Queues new requests; requests already waiting untouched merge with them (at their mean arrival time), so
/// the number of cohorts stays bounded under KV pressure.
fn enqueue_fresh(waiting: &mut VecDeque<Cohort>, c: Cohort) {
    if let Some(back) = waiting.back_mut() {
        if back.scheduled_s.is_none() && back.generated == 0.0 && back.preemptions == 0.0 && back.osl == c.osl {
            let total = back.size + c.size;
            back.arrival_s = (back.arrival_s * back.size + c.arrival_s * c.size) / total;
            back.size = total;
            return;
        }
    }
    waiting.push_back(c);
}

/// The initial load: `c` clients pooled into at most `max_cohorts` cohorts, all sending at t = 0. With several
/// length classes (share of the requests, output tokens each), each class gets cohorts in proportion to its share
/// (at least one), and the classes are interleaved through the queue as a benchmark's shuffled prompts arrive.
fn initial_cohorts(c: f64, isl: f64, classes: &[(f64, f64)], max_cohorts: usize) -> VecDeque<Cohort> {
    if let [(_, osl)] = classes {
        let groups = (c as usize).clamp(1, max_cohorts.max(1));
        return (0..groups).map(|_| Cohort::fresh(c / groups as f64, 0.0, isl, *osl)).collect();
    }
    // A class's i-th of g cohorts sits at (i + 1/2) / g of the queue: take the class whose next cohort sits first
    // (a merge of the classes' evenly spaced cohorts; the first such class on a tie).
    let groups: Vec<f64> = classes
        .iter()
        .map(|&(share, _)| (max_cohorts as f64 * share).floor().max(1.0).min((c * share).ceil().max(1.0)))
        .collect();
    let mut taken = vec![0.0_f64; classes.len()];
    let mut queue = VecDeque::new();
    loop {
        let next = (0..classes.len())
            .filter(|&k| taken[k] < groups[k])
            .min_by(|&a, &b| ((taken[a] + 0.5) / groups[a]).total_cmp(&((taken[b] + 0.5) / groups[b])));
        let Some(k) = next else { break };
        let (share, osl) = classes[k];
        queue.push_back(Cohort::fresh(c * share / groups[k], 0.0, isl, osl));
        taken[k] += 1.0;
    }
    queue
}

/// Length classes (share of the requests, output tokens each) of a batch of `n` requests whose output lengths
/// are independent exponentials of mean `mean` (`OutputLengths::Exponential`): the expected lengths of the batch's
/// requests ranked by length, `mean * (H_n - H_(k-1))` for the k-th longest (the order statistics of exponentials),
/// grouped by rank in doubling groups (the longest alone, the next two, the next four, ...), each class the mean
/// of its group. The classes' mean is `mean`, and the longest request, which decides when the batch ends, gets its
/// expected length, `mean * H_n`. One class of `mean` for fixed lengths.
pub fn output_length_classes(lengths: OutputLengths, n: f64, mean: f64) -> Vec<(f64, f64)> {
    let requests = n.round().max(1.0) as usize;
    if lengths == OutputLengths::Fixed || requests == 1 {
        return vec![(1.0, mean)];
    }
    // Expected length of rank k (1-based): mean * sum_{j=k..n} 1/j, built from the shortest up.
    let mut by_rank = vec![0.0; requests + 1];
    for k in (1..=requests).rev() {
        by_rank[k - 1] = by_rank[k] + mean / k as f64;
    }
    let mut classes = Vec::new();
    let mut first = 1;
    while first <= requests {
        let last = (2 * first - 1).min(requests);
        let size = (last - first + 1) as f64;
        let total: f64 = by_rank[first - 1..last].iter().sum();
        classes.push((size / requests as f64, total / size));
        first = last + 1;
    }
    classes
}

/// A measurement that cannot start: the model does not fit, or one request's KV exceeds the pool.
fn failed(b: Bottleneck, max_resident: f64) -> Measured {
    Measured {
        output_tok_s: 0.0,
        ttft_s: f64::INFINITY,
        tpot_s: f64::INFINITY,
        mean_step_s: f64::INFINITY,
        resident: 0.0,
        max_resident,
        preemptions_per_request: 0.0,
        kv_utilization: 0.0,
        queue_s: 0.0,
        bottleneck: b,
        completed: 0.0,
        completed_total: 0.0,
        simulated_clients: 0.0,
    }
}

/// Runs `c` closed-loop clients sending ISL/OSL requests to one engine (one machine, or TP across machines).
/// Past saturation it runs `saturating_clients` of them and adds the others' wait by Little's law.
pub fn colocated(e: &Engine, c: f64, isl: f64, osl: f64) -> Measured {
    colocated_with(e, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, None)
}

/// `colocated`, answered from `memo` when an earlier point of the same sweep ran the same loop (the same
/// answer, bit for bit).
pub fn colocated_memo(e: &Engine, c: f64, isl: f64, osl: f64, memo: &mut LoopMemo) -> Measured {
    colocated_with(e, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, Some(memo))
}

/// `colocated` driven as `run` says: one synchronized batch (`Run::Batch`, a llama-benchy run whose `output_tok_s` is
/// its batch `tg` figure, `BatchWindow::throughput`; `Run::AllAtOnce`, a `vllm bench serve` run at an unlimited rate
/// whose `output_tok_s` is its whole run's, `BatchWindow::whole_run_throughput`), or a closed loop with every client
/// (`Run::EVERY_CLIENT`, the saturation shortcut's reference) or at `Resolution::REFERENCE` (`Run::REFERENCE`, the long
/// run a sweep's resolution is checked against, tens of times slower); `tests/physics.rs` holds both checks.
pub fn colocated_run(e: &Engine, c: f64, isl: f64, osl: f64, run: Run) -> Measured {
    colocated_with(e, c, isl, osl, run, OutputLengths::Fixed, None)
}

/// `colocated_run` of a batch whose requests' output lengths vary as `lengths` says around the mean `osl`.
pub fn colocated_batch(e: &Engine, c: f64, isl: f64, osl: f64, run: Run, lengths: OutputLengths) -> Measured {
    colocated_with(e, c, isl, osl, run, lengths, None)
}

/// How a measurement drives the clients.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Run {
    /// A closed loop measured in its steady state; `shortcut` leaves clients past saturation to Little's law.
    Closed { shortcut: bool, resolution: Resolution },
    /// One batch of requests sent together, measured from the first first token to the last finish.
    Batch,
    /// One batch of requests sent together at t = 0, measured from the send to the last finish (vLLM's `bench
    /// serve` at an unlimited request rate: `output_throughput` is every output token over the run's duration).
    AllAtOnce,
}

impl Run {
    /// What a prediction runs.
    pub const SWEEP: Run = Run::Closed { shortcut: true, resolution: Resolution::SWEEP };
    /// The saturation shortcut's reference.
    pub const EVERY_CLIENT: Run = Run::Closed { shortcut: false, resolution: Resolution::SWEEP };
    /// The resolution's reference.
    pub const REFERENCE: Run = Run::Closed { shortcut: false, resolution: Resolution::REFERENCE };

    fn resolution(self) -> Resolution {
        match self {
            Run::Closed { resolution, .. } => resolution,
            Run::Batch | Run::AllAtOnce => Resolution::SWEEP,
        }
    }

    /// Whether the clients send one batch and nothing after it: the loop has no warm-up and ends when the batch
    /// does.
    fn one_batch(self) -> bool {
        matches!(self, Run::Batch | Run::AllAtOnce)
    }
}

/// The window llama-benchy measures a batch's decode over: from the first request's first token to the last
/// request's end.
#[derive(Default)]
struct BatchWindow {
    first_token_s: Option<f64>,
}

impl BatchWindow {
    /// Notes the first tokens the running requests have produced by now (a cohort's first token is set by the
    /// step that completes its prompt, before any merge moves it).
    fn note(&mut self, running: &[Cohort]) {
        for t in running.iter().filter_map(|c| c.first_token_s) {
            self.first_token_s = Some(self.first_token_s.map_or(t, |f| f.min(t)));
        }
    }

    /// llama-benchy's batch `tg` throughput (`results.py`): tokens generated after each request's first, over the
    /// time from the first first token to the last finish at `end_s`.
    fn throughput(&self, mut r: Measured, requests: f64, osl: f64, end_s: f64) -> Measured {
        let span = end_s - self.first_token_s.unwrap_or(end_s);
        r.output_tok_s = if span > 0.0 { requests * (osl - 1.0).max(0.0) / span } else { 0.0 };
        r
    }

    /// vLLM `bench serve`'s `output_throughput` of a run that sent every request at t = 0: all output tokens
    /// over the time to the last finish at `end_s` (`calculate_metrics` in `vllm/benchmarks/serve.py`:
    /// `sum(output_lens) / dur_s`).
    fn whole_run_throughput(mut r: Measured, requests: f64, osl: f64, end_s: f64) -> Measured {
        r.output_tok_s = if end_s > 0.0 { requests * osl / end_s } else { 0.0 };
        r
    }
}

/// Which loop a sweep point runs: the clients asked for, the clients simulated (fewer past saturation under the
/// shortcut), how they are driven, and the memo key of that loop. Both closed loops (one engine, PD) start and end
/// through it.
struct LoopPlan {
    run: Run,
    clients: f64,
    simulated: f64,
    key: LoopKey,
}

impl LoopPlan {
    /// `held` is the machine that holds the requests (the decode side under PD; the prefill side only runs
    /// ahead of it), `max_res` the requests its KV pool holds at full length.
    fn new(held: &Machine, run: Run, c: f64, max_res: f64, max_seqs: f64) -> Self {
        let clients = c.max(1.0).round();
        let simulated = if matches!(run, Run::Closed { shortcut: true, .. }) {
            saturating_clients(held, max_seqs, clients)
        } else {
            clients
        };
        let key =
            LoopKey { simulated, over_pool: clients > max_res, at_the_edge: clients > max_res || clients > max_seqs };
        LoopPlan { run, clients, simulated, key }
    }

    /// The answer of an earlier point of the sweep that ran this loop, for these clients.
    fn recalled(&self, memo: &mut Option<&mut LoopMemo>, osl: f64) -> Option<Measured> {
        let r = memo.as_deref_mut().and_then(|m| m.get(self.key))?;
        Some(with_queue(r, self.clients, self.simulated, osl))
    }

    /// The output length classes of the requests the loop starts with: a batch's vary as `lengths` says; a closed
    /// loop's clients send requests of one length (`validate` refuses varying lengths in a closed-loop scenario).
    fn length_classes(&self, lengths: OutputLengths, osl: f64) -> Vec<(f64, f64)> {
        if self.run.one_batch() {
            output_length_classes(lengths, self.simulated, osl)
        } else {
            vec![(1.0, osl)]
        }
    }

    /// Requests completed before the measurement starts: a round, except for a batch, which is measured whole
    /// (nothing comes after it).
    fn warm_up(&self) -> f64 {
        if self.run.one_batch() {
            0.0
        } else {
            self.simulated
        }
    }

    /// The point's answer from the loop's measurement `r`, ended at `end_s`: a batch's decode window, or the
    /// closed loop's rate (kept in the memo) with the wait of the clients left to Little's law.
    fn answer(&self, r: Measured, window: &BatchWindow, memo: Option<&mut LoopMemo>, osl: f64, end_s: f64) -> Measured {
        match self.run {
            Run::Batch => return window.throughput(r, self.clients, osl, end_s),
            Run::AllAtOnce => return BatchWindow::whole_run_throughput(r, self.clients, osl, end_s),
            Run::Closed { .. } => {}
        }
        if let Some(m) = memo {
            m.put(self.key, r);
        }
        with_queue(r, self.clients, self.simulated, osl)
    }
}

fn colocated_with(
    e: &Engine,
    c: f64,
    isl: f64,
    osl: f64,
    run: Run,
    lengths: OutputLengths,
    mut memo: Option<&mut LoopMemo>,
) -> Measured {
    let max_res = e.max_resident(isl, osl);
    if !e.placement.fits {
        return failed(Bottleneck::DoesNotFit, max_res);
    }
    if max_res < 1.0 {
        return failed(Bottleneck::KvCapacity, max_res);
    }
    let res = run.resolution();
    let mut mach = Machine::new(e, Role::Colocated, isl, osl, res);
    let max_seqs = e.limits.max_seqs.max(1.0);
    let plan = LoopPlan::new(&mach, run, c, max_res, max_seqs);
    if let Some(r) = plan.recalled(&mut memo, osl) {
        return r;
    }
    let (clients, c) = (plan.clients, plan.simulated);
    mach.waiting = initial_cohorts(c, isl, &plan.length_classes(lengths, osl), res.max_cohorts);
    let warm = plan.warm_up();
    let mut window = BatchWindow::default();
    let mut at_the_edge = plan.key.at_the_edge;
    let mut tally = Tally::new(c);
    let mut out = StepOut::default();
    for _ in 0..MAX_STEPS {
        let warming = tally.warming(warm);
        if let Some((dt, j, slot)) = mach.jump(f64::INFINITY) {
            if !warming {
                mach.busy[slot] += j * dt;
                tally.ran(j, dt, mach.decoding_seqs(), mach.kv_use());
            }
            if run.one_batch() {
                window.note(&mach.running);
            }
            continue;
        }
        let Some(dt) = mach.step(max_seqs, !warming, &mut out) else { break };
        at_the_edge |= out.preempted > 0.0;
        if !warming {
            tally.ran(1.0, dt, mach.decoding_seqs(), mach.kv_use());
            tally.preempted_in_window += out.preempted;
        }
        tally.finish(&out.done, mach.clock_s, warm, mach.emitted);
        if run.one_batch() {
            // Requests that finished in this step had their first token noted in an earlier one.
            window.note(&mach.running);
            if mach.running.is_empty() && mach.waiting.is_empty() {
                break;
            }
            continue;
        }
        // Each finished client sends its next request at once; those finishing together arrive together.
        let returning: f64 = out.done.iter().map(|c| c.size).sum();
        if returning > 0.0 {
            enqueue_fresh(&mut mach.waiting, Cohort::fresh(returning, mach.clock_s, isl, osl));
            if tally.measured_enough(&res, at_the_edge) {
                break;
            }
        }
    }
    let mut bottleneck = dominant(&mach.busy);
    if tally.preemptions > 0.0 || tally.preempted_in_window > 0.0 || clients > max_res {
        bottleneck = Bottleneck::KvCapacity;
    }
    let r = tally.measured(mach.clock_s, mach.emitted, osl, max_res, bottleneck);
    plan.answer(r, &window, memo, osl, mach.clock_s)
}

/// PD: one engine prefills and ships each KV cache over the link to the other, which only decodes. The decode
/// side reserves a request's blocks before its transfer starts; transfers share the link one at a time.
pub fn disaggregated(pre: &Engine, dec: &Engine, transfer_s_per_request: f64, c: f64, isl: f64, osl: f64) -> Measured {
    disaggregated_with(pre, dec, transfer_s_per_request, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, None)
}

/// `disaggregated`, answered from `memo` as `colocated_memo` is.
pub fn disaggregated_memo(
    pre: &Engine,
    dec: &Engine,
    transfer_s_per_request: f64,
    c: f64,
    isl: f64,
    osl: f64,
    memo: &mut LoopMemo,
) -> Measured {
    disaggregated_with(pre, dec, transfer_s_per_request, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, Some(memo))
}

/// `disaggregated` driven as `run` says (as `colocated_run`), a batch's output lengths varying as `lengths` says.
#[allow(clippy::too_many_arguments)] // the pair, the hand-off, the workload, the load, as `disaggregated_with`
pub fn disaggregated_run(
    pre: &Engine,
    dec: &Engine,
    transfer_s_per_request: f64,
    c: f64,
    isl: f64,
    osl: f64,
    run: Run,
    lengths: OutputLengths,
) -> Measured {
    disaggregated_with(pre, dec, transfer_s_per_request, c, isl, osl, run, lengths, None)
}

// The pair, its hand-off, the workload, how the clients are driven and the sweep's memo: each public entry fixes
// some of them, so a struct would only rename the list.
#[allow(clippy::too_many_arguments)]
fn disaggregated_with(
    pre: &Engine,
    dec: &Engine,
    transfer_s_per_request: f64,
    c: f64,
    isl: f64,
    osl: f64,
    run: Run,
    lengths: OutputLengths,
    mut memo: Option<&mut LoopMemo>,
) -> Measured {
    let max_res = dec.max_resident(isl, osl);
    if !dec.placement.fits || !pre.placement.fits {
        return failed(Bottleneck::DoesNotFit, max_res);
    }
    if max_res < 1.0 {
        return failed(Bottleneck::KvCapacity, max_res);
    }
    let res = run.resolution();
    let mut p = Machine::new(pre, Role::PrefillOnly, isl, osl, res);
    let mut d = Machine::new(dec, Role::DecodeOnly, isl, osl, res);
    let max_seqs = dec.limits.max_seqs.max(1.0);
    // The decode side is where requests are held; the prefill side only runs ahead of it.
    let plan = LoopPlan::new(&d, run, c, max_res, max_seqs);
    if let Some(r) = plan.recalled(&mut memo, osl) {
        return r;
    }
    let (clients, c) = (plan.clients, plan.simulated);
    p.waiting = initial_cohorts(c, isl, &plan.length_classes(lengths, osl), res.max_cohorts);
    let warm = plan.warm_up();
    let mut window = BatchWindow::default();
    let mut at_the_edge = plan.key.at_the_edge;
    let mut tally = Tally::new(c);
    let mut out = StepOut::default();
    // Prefilled requests waiting for decode-side blocks, and transfers in flight (arrival time, cohort).
    let mut handoff: VecDeque<(f64, Cohort)> = VecDeque::new();
    let mut in_flight: VecDeque<(f64, Cohort)> = VecDeque::new();
    let mut link_free_s = 0.0_f64;
    let mut p_busy = 0.0;
    let mut d_busy = 0.0;
    for _ in 0..MAX_STEPS {
        // Reserve decode-side blocks for prefilled requests, oldest first, and start their transfers. Requests
        // the decode side preempted come first: they wait at the head of its queue (vLLM puts a preempted
        // request back at the front), so a new hand-off takes blocks only when none of them waits.
        while let Some((ready, _)) = handoff.front() {
            if !d.waiting.is_empty() {
                break;
            }
            let ready = *ready;
            let size = handoff[0].1.size;
            // The decode side holds the prompt's KV plus its first verify step; under GuaranteedNoEvict the
            // whole request's.
            let need_each =
                if d.reserve_whole { d.admission_blocks(&handoff[0].1, 0.0) } else { d.blocks_for(isl + d.verify) };
            let fit = if need_each > 0.0 { d.free_blocks / need_each } else { size };
            // The blocks decide first (past the KV edge they stop every hand-off), before summing the sequences.
            if fit < MIN_PART && fit < size {
                break;
            }
            let n = size.min(fit).min(max_seqs - d.seqs() - in_flight.iter().map(|f| f.1.size).sum::<f64>());
            if n < MIN_PART && n < size {
                break;
            }
            let mut cohort =
                if n < size { handoff[0].1.split(n) } else { handoff.pop_front().expect("front exists").1 };
            d.take_blocks(need_each * cohort.size);
            cohort.blocks = need_each;
            let start = ready.max(link_free_s);
            link_free_s = start + cohort.size * transfer_s_per_request;
            in_flight.push_back((link_free_s, cohort));
        }
        let warming = tally.warming(warm);
        let p_ready = p.waiting.front().map(|w| w.arrival_s.max(p.clock_s));
        let p_next = if p.running.is_empty() { p_ready } else { Some(p.clock_s) };
        // The decode side has work while it runs requests or holds requests it preempted (which it re-admits
        // itself: with none running, nothing else would, and new hand-offs wait behind them).
        let d_next = if d.running.is_empty() && d.waiting.is_empty() {
            in_flight.front().map(|(t, _)| t.max(d.clock_s))
        } else {
            Some(d.clock_s)
        };
        let run_p = match (p_next, d_next) {
            (Some(tp), Some(td)) => tp <= td,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if run_p {
            p.clock_s = p_next.expect("p has work");
            let Some(dt) = p.step(f64::INFINITY, !warming, &mut out) else {
                // Work is queued but not yet admissible: wait for the decode side.
                p.clock_s = d_next.unwrap_or(p.clock_s).max(p.clock_s + 1e-9);
                continue;
            };
            if !warming {
                p_busy += dt;
                tally.preempted_in_window += out.preempted;
            }
            for c in out.prefilled.drain(..) {
                handoff.push_back((p.clock_s, c));
            }
        } else {
            d.clock_s = d_next.expect("d has work");
            while in_flight.front().is_some_and(|(t, _)| *t <= d.clock_s) {
                let (_, c) = in_flight.pop_front().expect("front exists");
                d.running.push(c);
                d.last_full_decode_s = None;
            }
            // The decode side must not run ahead of hand-offs still to come: stop at the next arrival, and at
            // the prefill side's clock while it has prompts in hand.
            let prefill_busy = if p.running.is_empty() && p_ready.is_none() { f64::INFINITY } else { p.clock_s };
            let horizon = in_flight.front().map_or(f64::INFINITY, |(t, _)| *t).min(prefill_busy);
            if let Some((dt, j, slot)) = d.jump(horizon) {
                if !warming {
                    d.busy[slot] += j * dt;
                    d_busy += j * dt;
                    tally.ran(j, dt, d.seqs(), d.kv_use());
                }
                if run.one_batch() {
                    window.note(&d.running);
                }
                continue;
            }
            let Some(dt) = d.step(max_seqs, !warming, &mut out) else {
                // Nothing admissible yet: wait for the next hand-off to land.
                if let Some((t, _)) = in_flight.front() {
                    d.clock_s = d.clock_s.max(*t);
                }
                continue;
            };
            at_the_edge |= out.preempted > 0.0;
            if !warming {
                d_busy += dt;
                tally.ran(1.0, dt, d.seqs(), d.kv_use());
                tally.preempted_in_window += out.preempted;
            }
            tally.finish(&out.done, d.clock_s, warm, d.emitted);
            if run.one_batch() {
                // Nothing is sent again: the loop ends when neither side has work left.
                window.note(&d.running);
                continue;
            }
            let returning: f64 = out.done.iter().map(|c| c.size).sum();
            if returning > 0.0 {
                enqueue_fresh(&mut p.waiting, Cohort::fresh(returning, d.clock_s, isl, osl));
                if tally.measured_enough(&res, at_the_edge) {
                    break;
                }
            }
        }
    }
    let bottleneck = if p_busy > d_busy { Bottleneck::PrefillRate } else { dominant(&d.busy) };
    let bottleneck = if clients > max_res { Bottleneck::KvCapacity } else { bottleneck };
    let r = tally.measured(d.clock_s, d.emitted, osl, max_res, bottleneck);
    plan.answer(r, &window, memo, osl, d.clock_s)
}

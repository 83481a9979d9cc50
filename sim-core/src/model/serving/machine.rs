//! One engine with its queues and KV pool (`Machine`): its state, how it is set up, what it holds, and where a
//! step's time is booked.

use super::cohort::Cohort;
use super::lockstep::Lockstep;
use super::step::Work;
use super::Resolution;
use crate::model::batching::{Engine, StepCosts};
use crate::model::{Admission, Bottleneck};
use crate::spec::ContextMeasures;
use std::collections::VecDeque;

/// What a machine does: both phases, prompts only (PD's prefill side) or decodes only (PD's decode side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Colocated,
    PrefillOnly,
    DecodeOnly,
}

/// One engine with its queues and KV pool.
pub(super) struct Machine<'e, 'a> {
    pub(super) e: &'e Engine<'a>,
    /// The engine's step costs, what no load changes computed once (`Engine::costs`).
    pub(super) costs: StepCosts<'e, 'a>,
    pub(super) role: Role,
    pub(super) running: Vec<Cohort>,
    pub(super) waiting: VecDeque<Cohort>,
    pub(super) total_blocks: f64,
    pub(super) free_blocks: f64,
    /// Bytes one KV block holds on this engine's GPU (computed once).
    pub(super) block_bytes: f64,
    /// Blocks one request holds at a context, as a line over its measures (`AttentionSpec::kv_position_line` on
    /// this GPU in blocks) and the blocks its linear layers' state takes: `blocks_for` runs for every cohort of
    /// every step, where `Engine::kv_bytes_at` and a division would be a quarter of a sweep's time.
    pub(super) blocks_line: ContextMeasures,
    pub(super) state_blocks: f64,
    /// `ModelSpec::kv_per_layer`, computed once: the step's load needs it every step.
    pub(super) kv_per_layer: f64,
    /// Whether a waiting cohort may still hold prefix-cache blocks (`cached_blocks > 0`). Set when a request is
    /// preempted, cleared when `evict_cached` finds none: most steps take blocks for every running cohort, and
    /// scanning the waiting queue for cached blocks each time would be a fifth of the loop's time.
    pub(super) waiting_may_hold_cache: bool,
    /// Accepted tokens per decoding sequence per step, and tokens each verifies.
    pub(super) accepted: f64,
    pub(super) verify: f64,
    /// Prompt and output tokens of every request in the sweep point.
    pub(super) isl: f64,
    pub(super) osl: f64,
    /// The engine reserves a request's whole KV (prompt plus output) when it admits it, and never preempts.
    pub(super) reserve_whole: bool,
    pub(super) clock_s: f64,
    /// Busy time per bottleneck and in all, for the measured window.
    pub(super) busy: [f64; 5],
    /// Scratch buffers of `step`, kept between steps: a sweep point runs thousands of steps, and allocating
    /// them anew would be an eighth of the loop's time.
    pub(super) plan: Vec<(usize, Work)>,
    pub(super) finished: Vec<usize>,
    /// The time of the last step when it decoded every running cohort and nothing has changed the cohorts
    /// since but that step's own advance (no finish, preemption, admission, merge or arrival): a lower bound on
    /// the time of any decode step of the same cohorts from here, which `jump` tests its horizon against.
    pub(super) last_full_decode_s: Option<f64>,
    /// Output tokens this machine's requests have produced so far (at most OSL each): the window's throughput is
    /// the difference over its span.
    pub(super) emitted: f64,
    /// `Resolution::max_cohorts` of the loop.
    pub(super) max_cohorts: usize,
    /// The decoding cohorts stepped together (`Lockstep`), and whether any may join (`Resolution::lockstep`).
    pub(super) lockstep: Lockstep,
    pub(super) lockstep_on: bool,
}

impl<'e, 'a> Machine<'e, 'a> {
    pub(super) fn new(e: &'e Engine<'a>, role: Role, isl: f64, osl: f64, res: Resolution) -> Self {
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
    pub(super) fn advance(emitted: &mut f64, c: &mut Cohort, tokens: f64) {
        let osl = c.osl;
        *emitted += c.size * ((c.generated + tokens).min(osl) - c.generated.min(osl));
        c.generated += tokens;
    }

    /// Requests running: the lockstep's, summed as they joined, and the other cohorts'.
    pub(super) fn seqs(&self) -> f64 {
        self.lockstep.seqs + self.running[self.lockstep.len..].iter().map(|c| c.size).sum::<f64>()
    }

    /// Requests decoding: the lockstep's, and those of the other running cohorts not prefilling.
    pub(super) fn decoding_seqs(&self) -> f64 {
        let rest = &self.running[self.lockstep.len..];
        self.lockstep.seqs + rest.iter().filter(|c| !c.prefilling()).map(|c| c.size).sum::<f64>()
    }
}

/// Where a step's time is booked in `Machine::busy`.
pub(super) fn bottleneck_slot(b: Bottleneck) -> usize {
    match b {
        Bottleneck::HbmBandwidth => 0,
        Bottleneck::SlowPathBandwidth => 1,
        Bottleneck::Compute => 2,
        Bottleneck::Link => 3,
        _ => 4,
    }
}

pub(super) fn dominant(busy: &[f64; 5]) -> Bottleneck {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dominant_bottleneck_is_where_the_most_time_was_booked() {
        let order = [
            Bottleneck::HbmBandwidth,
            Bottleneck::SlowPathBandwidth,
            Bottleneck::Compute,
            Bottleneck::Link,
            Bottleneck::Overhead,
        ];
        for b in order {
            let mut busy = [1.0; 5];
            busy[bottleneck_slot(b)] = 2.0;
            assert_eq!(dominant(&busy), b);
        }
        // Bottlenecks without a slot of their own are booked as overhead.
        assert_eq!(bottleneck_slot(Bottleneck::KvCapacity), bottleneck_slot(Bottleneck::Overhead));
        // A tie goes to the first in order.
        assert_eq!(dominant(&[3.0, 3.0, 1.0, 0.0, 0.0]), Bottleneck::HbmBandwidth);
    }
}

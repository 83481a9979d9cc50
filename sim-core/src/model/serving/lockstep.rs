//! The decoding cohorts stepped together (`Lockstep`): its sums, and how cohorts join, merge, finish, preempt
//! and leave it.

use super::cohort::Cohort;
use super::machine::Machine;
use super::step::StepOut;
use super::ROUNDING;
use crate::spec::ContextMeasures;

/// The decoding cohorts at the front of the running list (`running[..len]`), stepped together without visiting
/// each: in a saturated point every step prefills a prompt beside a few dozen decoding cohorts, and visiting each
/// of those every step (its blocks, its measures, its advance, its finish) would be three quarters of a
/// sweep's instructions.
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
pub(super) struct Lockstep {
    pub(super) len: usize,
    /// Tokens each member has generated since the group formed.
    pub(super) advance: f64,
    /// The members' requests, the sum of their context measures at their current contexts, the rate that sum
    /// grows at per token each generates, and the blocks they hold.
    pub(super) seqs: f64,
    pub(super) measures: ContextMeasures,
    pub(super) rate: ContextMeasures,
    pub(super) blocks: f64,
    /// The least `advance` at which a member has generated its output (its OSL), exact (through merges too:
    /// `jump` reads the members' fewest tokens left from it), and the most at which every member's next step
    /// still lies on its measures' line.
    pub(super) finish_at: f64,
    pub(super) linear_until: f64,
}

impl Lockstep {
    pub(super) const EMPTY: Lockstep = Lockstep {
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
    pub(super) fn generated(&self, i: usize, stored: f64) -> f64 {
        if i < self.len {
            stored + self.advance
        } else {
            stored
        }
    }
}

/// What a step does with the lockstep (`Machine::lockstep_need`).
pub(super) enum LockstepNeed {
    /// Every member steps as one, taking these blocks.
    Fits(f64),
    /// The members' blocks are not free: the step preempts (`Machine::lockstep_take_preempting`).
    Short,
    /// The step visits every cohort, the group settled: it is empty, the budget does not cover all its
    /// decodes, or a member's context left its line.
    Visit,
}

impl<'e, 'a> Machine<'e, 'a> {
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
        let ctx = c.isl + c.generated;
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
            !self.total_blocks.is_finite() || c.blocks >= self.blocks_for(c.isl + c.osl + self.verify)
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
    pub(super) fn extend_lockstep(&mut self) {
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
            self.blocks_for(c.isl + generated - self.accepted + self.verify)
        } else {
            c.blocks
        };
        (generated, blocks)
    }

    /// Takes the group's last member out of it, settled, its measures and blocks out of the sums: the newest
    /// running request, about to be preempted.
    pub(super) fn leave_lockstep(&mut self) {
        let i = self.lockstep.len - 1;
        self.settle_member(i);
        let attention = &self.e.model.attention;
        let c = &self.running[i];
        let ctx = c.isl + c.generated;
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
    pub(super) fn settle_lockstep(&mut self) {
        for i in 0..self.lockstep.len {
            self.settle_member(i);
        }
        self.lockstep = Lockstep::EMPTY;
    }

    /// Merges members `i` and `i + 1` of the lockstep: takes both out of its sums, folds the second into the
    /// first, and puts the merged cohort back in (the whole group is settled when it cannot rejoin).
    pub(super) fn merge_members(&mut self, i: usize) {
        let attention = &self.e.model.attention;
        let advance = self.lockstep.advance;
        // When one of the two was the member closest to its finish, the merged cohort (at their mean progress)
        // is further from it: `finish_at` is found again among the members.
        let left = |c: &Cohort| c.osl - c.generated;
        let held_finish = left(&self.running[i]).min(left(&self.running[i + 1])) <= self.lockstep.finish_at + ROUNDING;
        let rate_of = |c: &Cohort| attention.context_measures_rate(c.isl + c.generated + advance).0;
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
            let ctx = c.isl + c.generated;
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
    pub(super) fn members_finish_at(&self) -> f64 {
        self.running.iter().take(self.lockstep.len).map(|c| c.osl - c.generated).fold(f64::INFINITY, f64::min)
    }

    /// Takes the lockstep members that produced their last token in the step just run out of the group and the
    /// running list, as `step` does with any cohort that finishes, and counts none of their tokens past the OSL.
    /// Members are the front of the running list: the tail's finished cohorts are removed first.
    pub(super) fn finish_members(&mut self, out: &mut StepOut) {
        let attention = &self.e.model.attention;
        let advance = self.lockstep.advance;
        let finishes = |c: &Cohort| c.generated + advance >= c.osl - ROUNDING;
        // One read-only pass finds the least finish of the members that stay and the first and last members
        // that finish (usually one, the oldest): this runs in most steps of a saturated point, where scanning
        // while removing, or twice, would be a fifth of a sweep's instructions.
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
            let (rate, _) = attention.context_measures_rate(c.isl + c.generated - self.accepted);
            self.lockstep.count(-c.size, &attention.context_measures(c.isl + c.generated), &rate, c.blocks);
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
    pub(super) fn lockstep_need(&self, budget: f64) -> LockstepNeed {
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
    /// dissolving the group for the step and forming it again after would be a fifth of a saturated sweep.
    pub(super) fn lockstep_take_preempting(&mut self, taken: &mut f64, out: &mut StepOut) -> Option<f64> {
        let mut took = 0.0;
        let mut i = 0;
        while i < self.lockstep.len {
            let (generated, held) = self.member_now(i);
            let need_each = (self.blocks_for(self.running[i].isl + generated + self.verify) - held).max(0.0);
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
    pub(super) fn lockstep_blocks_at(&self, ahead: f64) -> f64 {
        let g = &self.lockstep;
        if !self.blocks_follow_context() {
            return g.blocks;
        }
        let mut held = g.measures;
        held.add(ahead + self.verify, &g.rate);
        self.blocks_line.of(&held) + g.seqs * (self.state_blocks + 0.5)
    }
}

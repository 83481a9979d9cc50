//! Decode-only stretches run as one jump of many steps when nothing can change between them.

use super::machine::{bottleneck_slot, Machine};
use super::step::fcfs_share;
use super::ROUNDING;
use crate::model::batching::{StepLoad, StepTime};
use crate::spec::ContextMeasures;

impl<'e, 'a> Machine<'e, 'a> {
    /// Runs several decode-only steps at once when nothing can change between them: every running request is
    /// decoding and has its first token, none finishes, no block runs out, nothing new can be admitted, and no
    /// step would pass `horizon_s` (a hand-off arriving). Each step is timed at the jump's mean context. Returns
    /// (time of one step, steps, bottleneck slot) or `None` when fewer than two steps can be jumped.
    pub(super) fn jump(&mut self, horizon_s: f64) -> Option<(f64, f64, usize)> {
        // The lockstep's members decode and have their first tokens. A request PD's decode side has just
        // received gets its first token from its first step here, which is a step of its own: timed exactly (not
        // at a jump's mean context), and after it the request can join the lockstep (stepped with the others,
        // every hand-off would dissolve the group for a jump that moves each cohort, and the next would form it again).
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
        // division per cohort would be a good part of a jump's time). The members' fewest is the group's `finish_at`
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
        // side, hand-offs arrive every few steps and most jumps end here). The step just run,
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
                    c.size * (self.blocks_for(c.isl + c.generated + (j - 1.0) * a + self.verify) - c.blocks).max(0.0)
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
            let held = self.blocks_for(c.isl + c.generated - a + self.verify).max(c.blocks);
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
                decodes.add(c.size, &m.attention.context_measures(c.isl + generated + mean_ahead));
            }
            decodes
        };
        let mut load = StepLoad::default();
        load.add_decode_measures(m, self.kv_per_layer, &decodes, self.verify);
        self.costs.step(&load)
    }
}

/// The most steps `j` in `[2, hi)` whose new blocks `blocks_after(j)` fit in `free` blocks, or 1 when none does;
/// `blocks_after(hi)` is `blocks_at_hi`, already known not to fit. `blocks_after` never decreases with `j` (a sum,
/// in a fixed order, of terms that grow with the context: rounding keeps that order), so the answer is the
/// boundary a bisection over `[1, hi)` finds. The search interpolates between the bracket's ends instead: a
/// decode-only stretch's blocks grow almost linearly with its steps, so it lands within a step or two of the
/// boundary in two or three evaluations of a sum over every cohort where bisection takes twelve (the jump's
/// search is a large part of PD's sweep). A step that fails to halve the bracket is followed by a bisection, so it
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

#[cfg(test)]
mod tests {
    use super::most_steps_that_fit;
    use std::cell::Cell;

    /// The answer is the boundary an exhaustive search finds, for blocks growing linearly, in steps, and faster than
    /// linearly, and the search stays within twice bisection's evaluations.
    #[test]
    fn the_search_finds_the_most_steps_that_fit() {
        let shapes: [fn(f64) -> f64; 3] = [|j| 10.0 * j, |j| 8.0 * (j / 3.0).ceil(), |j| j * j];
        for blocks_after in shapes {
            let hi = 100.0;
            for free in [0.0, 19.0, 20.0, 21.0, 95.0, 500.0, 999.0] {
                let at_hi = blocks_after(hi);
                if at_hi <= free {
                    continue;
                }
                let want = (2..100).map(f64::from).filter(|&j| blocks_after(j) <= free).fold(1.0, f64::max);
                let calls = Cell::new(0);
                let counted = |j: f64| {
                    calls.set(calls.get() + 1);
                    blocks_after(j)
                };
                assert_eq!(most_steps_that_fit(counted, free, hi, at_hi), want, "free {free}");
                assert!(calls.get() <= 2 * 8, "{} evaluations at free {free}", calls.get());
            }
        }
    }
}

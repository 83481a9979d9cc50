//! One scheduler step: FCFS chunked prefill under the token budget, decodes, preemption when blocks run out,
//! admission, and what the step finished; and the merge that keeps the cohorts bounded.

use super::cohort::Cohort;
use super::lockstep::LockstepNeed;
use super::machine::{bottleneck_slot, Machine, Role};
use super::{MIN_PART, ROUNDING};
use crate::model::batching::StepLoad;
use crate::spec::ContextMeasures;

#[derive(Debug, Clone, Copy)]
pub(super) enum Work {
    Prefill { per: f64, offset: f64 },
    Decode { ctx: f64 },
}

/// What one step finished.
#[derive(Default)]
pub(super) struct StepOut {
    /// Requests that produced their last token.
    pub(super) done: Vec<Cohort>,
    /// Requests whose prompt is computed (PD's prefill side hands these over).
    pub(super) prefilled: Vec<Cohort>,
    pub(super) preempted: f64,
    /// Requests that produced tokens in this step after their first: each saw one inter-token gap as long as the
    /// step (what an open loop's ITL counts).
    pub(super) gaps: f64,
}

impl<'e, 'a> Machine<'e, 'a> {
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
                // Only two cohorts alike merge: of one prompt and output length, both decoding, and both past their first token
                // or neither (PD's decode side receives hand-offs decoding but before their first token; merged
                // with a cohort past it they would take its earlier one: a negative TTFT, a TPOT far too long).
                if x.osl != y.osl
                    || x.isl != y.isl
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
    /// vectors allocated anew would be a twentieth of a sweep's instructions).
    pub(super) fn step(&mut self, max_seqs: f64, record: bool, out: &mut StepOut) -> Option<f64> {
        debug_assert!(self.lockstep.len <= self.running.len(), "the lockstep's members are running cohorts");
        self.last_full_decode_s = None;
        self.extend_lockstep();
        self.merge_closest();
        let m = self.e.model;
        let mut budget = self.e.limits.tokens_per_step.max(1.0);
        out.done.clear();
        out.prefilled.clear();
        out.preempted = 0.0;
        out.gaps = 0.0;
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
                let ctx = c.isl + c.generated;
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
            out.gaps += g.seqs;
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
                    if c.first_token_s.is_some() {
                        out.gaps += c.size;
                    }
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

/// How many of a cohort's `size` requests, each with `remaining` prompt tokens, get prompt tokens from a step
/// with `budget` left, first come first served: as many whole prompts as fit, and at least one request (which
/// then takes a chunk of what is left). vLLM's scheduler walks requests in order, each taking the smaller of
/// its remaining prompt and the remaining budget; spreading the budget evenly over a cohort instead would
/// finish all its prompts together, late, and bunch their decodes (a fluid artefact).
pub(super) fn fcfs_share(remaining: f64, budget: f64, size: f64) -> f64 {
    if remaining <= 0.0 || budget <= 0.0 {
        return 0.0;
    }
    (budget / remaining).max(MIN_PART).min(size)
}

#[cfg(test)]
mod tests {
    use super::fcfs_share;

    #[test]
    fn a_step_gives_whole_prompts_first_come_first_served() {
        // 2048 tokens fit four whole 512-token prompts of ten.
        assert_eq!(fcfs_share(512.0, 2048.0, 10.0), 4.0);
        // Never more requests than the cohort has.
        assert_eq!(fcfs_share(512.0, 8192.0, 10.0), 10.0);
        // Less than a prompt left: one request takes a chunk.
        assert_eq!(fcfs_share(512.0, 100.0, 10.0), 1.0);
        // A part of a prompt fits as a share (the last one takes what is left).
        assert_eq!(fcfs_share(512.0, 1280.0, 10.0), 2.5);
        // Nothing to compute, or no budget: nobody.
        assert_eq!(fcfs_share(0.0, 2048.0, 10.0), 0.0);
        assert_eq!(fcfs_share(512.0, 0.0, 10.0), 0.0);
    }
}

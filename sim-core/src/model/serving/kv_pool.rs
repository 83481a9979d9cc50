//! The machine's KV block pool: the blocks a request holds at a context, admission's reservation, taking
//! blocks, the prefix cache a preempted request keeps, and preemption.

use super::cohort::Cohort;
use super::machine::Machine;
use super::MIN_PART;

impl<'e, 'a> Machine<'e, 'a> {
    /// Blocks each request of waiting cohort `w` takes when admitted with `per` prompt tokens this step: its
    /// context after the step, or under `GuaranteedNoEvict` its whole lifetime's KV (prompt, every output
    /// token still to come, and the draft tokens verified in its last step).
    pub(super) fn admission_blocks(&self, w: &Cohort, per: f64) -> f64 {
        if self.reserve_whole {
            self.blocks_for(w.prompt + (w.osl - w.generated).max(0.0) + self.verify)
        } else {
            self.blocks_for(w.computed + per)
        }
    }

    pub(super) fn blocks_for(&self, tokens: f64) -> f64 {
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
    pub(super) fn blocks_follow_context(&self) -> bool {
        !self.reserve_whole && self.total_blocks.is_finite()
    }

    /// Share of the KV block pool in use.
    pub(super) fn kv_use(&self) -> f64 {
        (1.0 - self.free_blocks / self.total_blocks).clamp(0.0, 1.0)
    }

    /// Preempts up to `need` blocks' worth of requests from the newest running cohort; returns the requests
    /// preempted. The victim keeps its output and recomputes prompt plus output later, less what the prefix
    /// cache still holds of it when it is re-admitted (vLLM V1, prefix caching on by default: `_preempt_request`
    /// in `vllm/v1/core/sched/scheduler.py` frees the blocks through `KVCacheManager.free`, which keeps their
    /// hashes; `SingleTypeKVCacheManager.free` returns them tail first, so the tail is evicted first and a
    /// prefix survives; on re-admission `get_computed_blocks` hits every full block still cached, up to the
    /// request's tokens less one).
    pub(super) fn preempt_newest(&mut self, need: f64) -> f64 {
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
        let kv_tokens =
            if victim.prefilling() { victim.computed } else { victim.isl + victim.generated - 1.0 }.max(0.0);
        victim.prompt = victim.isl + victim.generated;
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
    pub(super) fn take_blocks(&mut self, n: f64) {
        self.take_free_blocks(n);
        self.evict_cached(n);
    }

    /// The free count's part of `take_blocks`; `evict_cached` books the rest. A step takes blocks for every
    /// cohort it plans and books their eviction once: what `evict_cached` does to the waiting requests is
    /// additive in the blocks taken (each loses what passes its place in the queue, at most what it holds), so
    /// one call with their sum does what a call per cohort did (a pass over the waiting queue per cohort would
    /// be a twentieth of a sweep's instructions).
    #[inline(always)]
    pub(super) fn take_free_blocks(&mut self, n: f64) {
        // Admission takes what `free_blocks / each` allowed, which can round a few ulps past zero; a pool a
        // hair below empty would make the next step preempt for nothing (a no-evict engine included).
        self.free_blocks = (self.free_blocks - n).max(0.0);
    }

    /// Evicts from the waiting preempted requests' prefix caches what taking `n` blocks reaches.
    pub(super) fn evict_cached(&mut self, n: f64) {
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
    pub(super) fn admit_blocks(&mut self, c: &mut Cohort, each: f64) {
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
}

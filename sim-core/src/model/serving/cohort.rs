//! Requests in flight that behave alike (`Cohort`), how clients are pooled into them at the start and as they
//! return, and the output length classes a batch's varying lengths are split into.

use super::OutputLengths;
use std::collections::VecDeque;

/// Requests in flight that behave alike.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cohort {
    /// Requests in the cohort.
    pub(super) size: f64,
    /// When the client sent the request.
    pub(super) arrival_s: f64,
    /// Prompt tokens each request sent (its context is this plus its output so far). Cohorts of different
    /// prompts never merge.
    pub(super) isl: f64,
    /// Tokens to prefill: the prompt, or the prompt plus the output so far when recomputing after preemption.
    pub(super) prompt: f64,
    pub(super) computed: f64,
    pub(super) generated: f64,
    /// Output tokens each request produces: the workload's, or its length class's when lengths vary
    /// (`output_length_classes`). Cohorts of different lengths never merge.
    pub(super) osl: f64,
    /// KV blocks each request holds.
    pub(super) blocks: f64,
    pub(super) first_token_s: Option<f64>,
    /// When its prompt was first scheduled.
    pub(super) scheduled_s: Option<f64>,
    pub(super) preemptions: f64,
    /// A preempted request waiting: the blocks of its context still in the prefix cache (freed, evictable, and
    /// counted in the free blocks), and how many free blocks are ahead of them in the eviction queue. While it
    /// waits, `computed` is the tokens those blocks hold: the prefix-cache hit it will be re-admitted with.
    pub(super) cached_blocks: f64,
    pub(super) evict_ahead: f64,
    /// A member of the machine's `Lockstep`: the group's `advance` when it joined (its `generated` is kept less
    /// that advance while it is a member).
    pub(super) lockstep_from: f64,
}

impl Cohort {
    pub(super) fn fresh(size: f64, arrival_s: f64, isl: f64, osl: f64) -> Self {
        Cohort {
            size,
            arrival_s,
            isl,
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

    pub(super) fn prefilling(&self) -> bool {
        self.computed < self.prompt
    }

    /// Folds `other` into this cohort: sizes add, every per-request quantity becomes the size-weighted mean (but
    /// the prompt length, which the two share: only cohorts of one prompt length merge).
    pub(super) fn absorb(&mut self, other: &Cohort) {
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
    pub(super) fn split(&mut self, n: f64) -> Cohort {
        let mut part = self.clone();
        part.size = n;
        self.size -= n;
        part
    }
}

/// Queues new requests; requests already waiting untouched merge with them (at their mean arrival time), so
/// the number of cohorts stays bounded under KV pressure.
pub(super) fn enqueue_fresh(waiting: &mut VecDeque<Cohort>, c: Cohort) {
    if let Some(back) = waiting.back_mut() {
        if back.scheduled_s.is_none()
            && back.generated == 0.0
            && back.preemptions == 0.0
            && back.osl == c.osl
            && back.isl == c.isl
        {
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
pub(super) fn initial_cohorts(c: f64, isl: f64, classes: &[(f64, f64)], max_cohorts: usize) -> VecDeque<Cohort> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_lengths_are_one_class_of_the_mean() {
        assert_eq!(output_length_classes(OutputLengths::Fixed, 64.0, 300.0), vec![(1.0, 300.0)]);
        // One request has one length whatever the distribution.
        assert_eq!(output_length_classes(OutputLengths::Exponential, 1.0, 300.0), vec![(1.0, 300.0)]);
    }

    /// Seven exponential lengths: classes of the longest, the next two and the next four, whose mean is the mean
    /// and whose longest is the expected maximum, `mean * H_7`.
    #[test]
    fn exponential_lengths_are_doubling_rank_classes_with_the_expected_maximum() {
        let mean = 100.0;
        let classes = output_length_classes(OutputLengths::Exponential, 7.0, mean);
        let shares: Vec<f64> = classes.iter().map(|c| c.0 * 7.0).collect();
        assert_eq!(shares.len(), 3);
        for (got, want) in shares.iter().zip([1.0, 2.0, 4.0]) {
            assert!((got - want).abs() < 1e-12, "{shares:?}");
        }
        let harmonic_7: f64 = (1..=7).map(|j| 1.0 / j as f64).sum();
        assert!((classes[0].1 - mean * harmonic_7).abs() < 1e-9, "{classes:?}");
        let overall: f64 = classes.iter().map(|(share, osl)| share * osl).sum();
        assert!((overall - mean).abs() < 1e-9, "classes' mean {overall}");
        assert!(classes.windows(2).all(|w| w[0].1 > w[1].1), "longest first: {classes:?}");
    }

    #[test]
    fn absorbing_takes_size_weighted_means_and_split_keeps_the_sizes() {
        let mut a = Cohort::fresh(3.0, 0.0, 512.0, 256.0);
        a.generated = 10.0;
        let mut b = Cohort::fresh(1.0, 4.0, 512.0, 256.0);
        b.generated = 30.0;
        b.first_token_s = Some(6.0);
        a.absorb(&b);
        assert_eq!(a.size, 4.0);
        assert_eq!(a.arrival_s, 1.0);
        assert_eq!(a.generated, 15.0);
        // A first token only one of them has is kept as it is.
        assert_eq!(a.first_token_s, Some(6.0));
        let part = a.split(1.5);
        assert_eq!((part.size, a.size), (1.5, 2.5));
        assert_eq!(part.generated, a.generated);
    }

    #[test]
    fn fresh_requests_merge_only_with_untouched_waiting_ones_of_their_length() {
        let mut waiting = VecDeque::new();
        enqueue_fresh(&mut waiting, Cohort::fresh(1.0, 0.0, 512.0, 256.0));
        enqueue_fresh(&mut waiting, Cohort::fresh(3.0, 4.0, 512.0, 256.0));
        assert_eq!(waiting.len(), 1);
        assert_eq!((waiting[0].size, waiting[0].arrival_s), (4.0, 3.0));
        // Another length, or a preempted request at the back, stays apart.
        enqueue_fresh(&mut waiting, Cohort::fresh(1.0, 5.0, 512.0, 128.0));
        waiting.back_mut().expect("back").preemptions = 1.0;
        enqueue_fresh(&mut waiting, Cohort::fresh(1.0, 6.0, 512.0, 128.0));
        assert_eq!(waiting.len(), 3);
    }

    #[test]
    fn clients_are_pooled_into_at_most_the_cohorts_allowed() {
        let q = initial_cohorts(100.0, 512.0, &[(1.0, 256.0)], 32);
        assert_eq!(q.len(), 32);
        assert!((q.iter().map(|c| c.size).sum::<f64>() - 100.0).abs() < 1e-9);
        assert_eq!(initial_cohorts(5.0, 512.0, &[(1.0, 256.0)], 32).len(), 5);
        // Two classes, a quarter and three quarters of 8 cohorts: 2 and 6, interleaved, the clients shared.
        let q = initial_cohorts(80.0, 512.0, &[(0.25, 900.0), (0.75, 100.0)], 8);
        let long: Vec<usize> = (0..q.len()).filter(|&i| q[i].osl == 900.0).collect();
        assert_eq!(q.len(), 8);
        assert_eq!(long, vec![1, 5]);
        let long_clients: f64 = q.iter().filter(|c| c.osl == 900.0).map(|c| c.size).sum();
        assert!((long_clients - 20.0).abs() < 1e-9);
    }
}

//! A sweep's memo of closed-loop runs, keyed by what decides a run besides its engine and workload.

use super::Measured;

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
pub(super) struct LoopKey {
    pub(super) simulated: f64,
    pub(super) over_pool: bool,
    pub(super) at_the_edge: bool,
}

impl LoopMemo {
    pub(super) fn get(&mut self, key: LoopKey) -> Option<Measured> {
        let r = self.runs.iter().find(|(k, _)| *k == key).map(|(_, r)| *r);
        self.reused += usize::from(r.is_some());
        r
    }

    pub(super) fn put(&mut self, key: LoopKey, r: Measured) {
        self.runs.push((key, r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::serving::tally::failed;
    use crate::model::Bottleneck;

    #[test]
    fn a_run_is_recalled_only_under_its_own_key() {
        let key = LoopKey { simulated: 96.0, over_pool: false, at_the_edge: true };
        let mut r = failed(Bottleneck::Compute, 40.0);
        r.output_tok_s = 1234.5;
        let mut memo = LoopMemo::default();
        assert_eq!(memo.get(key), None);
        memo.put(key, r);
        assert_eq!(memo.get(LoopKey { at_the_edge: false, ..key }), None);
        assert_eq!(memo.get(LoopKey { simulated: 97.0, ..key }), None);
        assert_eq!(memo.get(key), Some(r));
        assert_eq!(memo.reused, 1);
    }
}

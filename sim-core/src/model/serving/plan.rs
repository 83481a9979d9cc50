//! How a measurement drives its clients (`Run`) and which loop a sweep point runs (`LoopPlan`): the clients it
//! simulates past saturation, and the queue Little's law adds for the rest.

use super::batch_window::BatchWindow;
use super::machine::{Machine, Role};
use super::memo::{LoopKey, LoopMemo};
use super::{output_length_classes, Measured, OutputLengths, Resolution};

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

    pub(super) fn resolution(self) -> Resolution {
        match self {
            Run::Closed { resolution, .. } => resolution,
            Run::Batch | Run::AllAtOnce => Resolution::SWEEP,
        }
    }

    /// Whether the clients send one batch and nothing after it: the loop has no warm-up and ends when the batch
    /// does.
    pub(super) fn one_batch(self) -> bool {
        matches!(self, Run::Batch | Run::AllAtOnce)
    }
}

/// Which loop a sweep point runs: the clients asked for, the clients simulated (fewer past saturation under the
/// shortcut), how they are driven, and the memo key of that loop. Both closed loops (one engine, PD) start and end
/// through it.
pub(super) struct LoopPlan {
    run: Run,
    pub(super) clients: f64,
    pub(super) simulated: f64,
    pub(super) key: LoopKey,
}

impl LoopPlan {
    /// `held` is the machine that holds the requests (the decode side under PD; the prefill side only runs
    /// ahead of it), `max_res` the requests its KV pool holds at full length.
    pub(super) fn new(held: &Machine, run: Run, c: f64, max_res: f64, max_seqs: f64) -> Self {
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
    pub(super) fn recalled(&self, memo: &mut Option<&mut LoopMemo>, osl: f64) -> Option<Measured> {
        let r = memo.as_deref_mut().and_then(|m| m.get(self.key))?;
        Some(with_queue(r, self.clients, self.simulated, osl))
    }

    /// The output length classes of the requests the loop starts with: a batch's vary as `lengths` says; a closed
    /// loop's clients send requests of one length (`validate` refuses varying lengths in a closed-loop scenario).
    pub(super) fn length_classes(&self, lengths: OutputLengths, osl: f64) -> Vec<(f64, f64)> {
        if self.run.one_batch() {
            output_length_classes(lengths, self.simulated, osl)
        } else {
            vec![(1.0, osl)]
        }
    }

    /// Requests completed before the measurement starts: a round, except for a batch, which is measured whole
    /// (nothing comes after it).
    pub(super) fn warm_up(&self) -> f64 {
        if self.run.one_batch() {
            0.0
        } else {
            self.simulated
        }
    }

    /// The point's answer from the loop's measurement `r`, ended at `end_s`: a batch's decode window, or the
    /// closed loop's rate (kept in the memo) with the wait of the clients left to Little's law.
    pub(super) fn answer(
        &self,
        r: Measured,
        window: &BatchWindow,
        memo: Option<&mut LoopMemo>,
        osl: f64,
        end_s: f64,
    ) -> Measured {
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

/// How many times the requests an engine can hold the loop runs before the rest of the clients only queue.
/// Four: against the loop with every client (`Run::EVERY_CLIENT`), throughput agrees within 1.3% at four
/// times and within 4.4% at twice (MiniMax-M3 single, 8192/1024 at 44 clients: the cohorts' fluid split and the
/// preemptions per request still move with the queue's length at twice).
const SATURATING_MULTIPLE: f64 = 4.0;

/// Clients enough to keep an engine saturated: `SATURATING_MULTIPLE` times the most requests it can hold at
/// once (its sequence cap, or its KV pool at the least a request holds once admitted). Past that,
/// a closed loop is a queue that never empties in front of a saturated engine: more clients only wait longer,
/// so the loop runs this many and `with_queue` adds the rest's wait by Little's law. Simulating every waiting
/// client would cost most of a sweep's time.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::serving::tally::failed;
    use crate::model::Bottleneck;

    fn measured() -> Measured {
        let mut r = failed(Bottleneck::Compute, 64.0);
        (r.output_tok_s, r.ttft_s, r.tpot_s, r.queue_s) = (2560.0, 0.5, 0.02, 0.1);
        r
    }

    #[test]
    fn clients_the_loop_ran_keep_their_measure() {
        let r = with_queue(measured(), 64.0, 64.0, 256.0);
        assert_eq!((r.ttft_s, r.queue_s, r.simulated_clients), (0.5, 0.1, 64.0));
    }

    /// Past the clients simulated, the response time is Little's law's `c / X`, and only the wait before the
    /// first token grows.
    #[test]
    fn clients_past_the_loop_wait_as_littles_law_says() {
        let (c, osl) = (256.0, 256.0);
        let r = with_queue(measured(), c, 64.0, osl);
        let requests_per_s = 2560.0 / osl;
        let response_s = r.ttft_s + (osl - 1.0) * r.tpot_s;
        assert!((response_s - c / requests_per_s).abs() < 1e-9, "{response_s}");
        assert_eq!((r.output_tok_s, r.tpot_s, r.simulated_clients), (2560.0, 0.02, 64.0));
        assert!((r.queue_s - (0.1 + r.ttft_s - 0.5)).abs() < 1e-12);
    }

    #[test]
    fn only_a_batch_skips_the_warm_up() {
        assert!(Run::Batch.one_batch() && Run::AllAtOnce.one_batch());
        assert!(!Run::SWEEP.one_batch() && !Run::REFERENCE.one_batch());
        assert_eq!(Run::Batch.resolution(), Resolution::SWEEP);
        assert_eq!(Run::REFERENCE.resolution(), Resolution::REFERENCE);
    }
}

//! What a closed loop measures (`Measured`) and the window's statistics it is counted from (`Tally`).

use super::cohort::Cohort;
use super::Resolution;
use crate::model::Bottleneck;

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
pub(super) struct Tally {
    completed: f64,
    completed_total: f64,
    ttft: f64,
    tpot: f64,
    pub(super) preemptions: f64,
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
    pub(super) preempted_in_window: f64,
}

impl Tally {
    /// A window of rounds of `round` requests, open from t = 0 (a batch has no warm-up to move it).
    pub(super) fn new(round: f64) -> Self {
        Tally { round, marks: vec![(0.0, 0.0)], ..Tally::default() }
    }

    /// Books `steps` steps of `dt` seconds each with `resident` sequences decoding and `kv_use` of the pool used.
    pub(super) fn ran(&mut self, steps: f64, dt: f64, resident: f64, kv_use: f64) {
        self.steps += steps;
        self.step_time += steps * dt;
        self.resident_time += steps * dt * resident;
        self.kv_time += steps * dt * kv_use;
    }

    pub(super) fn warming(&self, warm: f64) -> bool {
        self.completed_total < warm - 1e-9
    }

    /// Books the requests `done` finished at `now`, when the machine had emitted `emitted` tokens.
    pub(super) fn finish(&mut self, done: &[Cohort], now: f64, warm: f64, emitted: f64) {
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
    pub(super) fn measured_enough(&self, res: &Resolution, at_the_edge: bool) -> bool {
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
    pub(super) fn measured(
        &self,
        now: f64,
        emitted: f64,
        osl: f64,
        max_resident: f64,
        bottleneck: Bottleneck,
    ) -> Measured {
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

/// A measurement that cannot start: the model does not fit, or one request's KV exceeds the pool.
pub(super) fn failed(b: Bottleneck, max_resident: f64) -> Measured {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A tally whose window has completed `rounds` rounds of `round` requests, each at the rate `rates[i]`
    /// tokens per second over one second.
    fn tally(round: f64, rates: &[f64]) -> Tally {
        let mut t = Tally::new(round);
        let mut emitted = 0.0;
        for (i, r) in rates.iter().enumerate() {
            emitted += r;
            t.marks.push((i as f64 + 1.0, emitted));
        }
        t.completed = round * rates.len() as f64;
        t
    }

    #[test]
    fn below_the_edge_the_window_measures_its_rounds() {
        let res = Resolution::SWEEP;
        assert!(!tally(8.0, &[100.0]).measured_enough(&res, false));
        assert!(tally(8.0, &[100.0, 300.0]).measured_enough(&res, false));
    }

    #[test]
    fn at_the_edge_the_window_runs_on_while_its_rounds_disagree() {
        let res = Resolution::SWEEP;
        // Rounds that agree still measure `rounds_at_the_edge` (five) first: the synchronized start's rounds agree too.
        assert!(!tally(8.0, &[100.0, 100.5, 99.5, 100.0]).measured_enough(&res, true));
        assert!(tally(8.0, &[100.0, 100.5, 99.5, 100.2, 99.8]).measured_enough(&res, true));
        assert!(!tally(8.0, &[100.0, 130.0, 70.0, 100.0, 130.0]).measured_enough(&res, true));
        assert!(tally(8.0, &[100.0, 130.0, 70.0, 100.0, 130.0, 70.0, 100.0, 130.0, 70.0]).measured_enough(&res, true));
    }

    #[test]
    fn throughput_is_the_windows_tokens_over_its_span() {
        let mut t = tally(8.0, &[100.0, 300.0]);
        t.marks[0] = (10.0, 50.0);
        // 400 tokens in all, 50 of them before the window opened at 10 s; it closes at 14 s.
        let r = t.measured(14.0, 400.0, 256.0, 64.0, Bottleneck::Compute);
        assert_eq!(r.output_tok_s, 350.0 / 4.0);
        assert_eq!(r.completed, 16.0);
    }
}

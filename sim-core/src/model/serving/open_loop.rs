//! The open loop (`vllm bench serve` at a request rate): requests sent at their own times whatever the engine
//! does, each simulated as its own cohort of one that never merges, so every request's TTFT, TPOT and end-to-end
//! latency is its own; one engine or several copies behind a router, and an optional client-side cap (a PD pair:
//! `open_loop_pd`).
//!
//! ```text
//!   client:  due times (arrivals) --cap: wait for a free slot--> send --route--> engine k's queue
//!   engine:  the step loop of `Machine` (admission, chunked prefill, decode, preemption), jumps bounded by the
//!            next request that can reach it
//!   measure: from t = 0 (the benchmark's start) to the last finish; per request TTFT, TPOT, E2E; ITL per gap
//! ```

use super::arrivals::Request;
use super::cohort::Cohort;
use super::machine::{dominant, Machine, Role};
use super::step::StepOut;
use super::{Resolution, MAX_STEPS};
use crate::model::batching::Engine;
use crate::model::latency::LatencyStats;
use crate::model::Bottleneck;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What an open loop measured, as `vllm bench serve` counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenMeasured {
    /// From the benchmark's start (t = 0, before the first request's gap) to the last finish, seconds.
    pub duration_s: f64,
    pub completed: f64,
    /// Output tokens of every request (each generates its drawn length).
    pub output_tokens: f64,
    /// Most requests sent and not yet finished at any moment.
    pub peak_in_flight: f64,
    pub ttft: LatencyStats,
    /// Per request `(e2e - ttft) / (output tokens - 1)`, requests of one output token left out.
    pub tpot: LatencyStats,
    /// Every gap between two tokens of a request, pooled over the requests.
    pub itl: LatencyStats,
    pub e2e: LatencyStats,
    pub bottleneck: Bottleneck,
    pub preemptions_per_request: f64,
}

/// An open loop that cannot run to its end.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpenLoopError {
    #[error("request {index} ({isl} prompt + {osl} output tokens) does not fit one engine's KV cache")]
    RequestTooLong { index: usize, isl: f64, osl: f64 },
    #[error("the model does not fit the engine's memory")]
    DoesNotFit,
    #[error("the loop did not finish its requests within {0} steps")]
    Unfinished(usize),
}

/// Cohorts never merge (each request is its own) and decoding ones step together in the lockstep, which keeps
/// every member's own progress.
pub(super) const OPEN_LOOP: Resolution = Resolution { max_cohorts: usize::MAX, ..Resolution::SWEEP };

/// Runs `requests` (in the order they are due) against `engines`, request `i` going to engine `route[i]`, at most
/// `cap` in flight.
pub fn open_loop(
    engines: &[&Engine],
    requests: &[Request],
    route: &[usize],
    cap: Option<u32>,
) -> Result<OpenMeasured, OpenLoopError> {
    let n = requests.len();
    let mean = |f: fn(&Request) -> f64| requests.iter().map(f).sum::<f64>() / n.max(1) as f64;
    let (isl, osl) = (mean(|r| r.isl), mean(|r| r.osl));
    if engines.iter().any(|e| !e.placement.fits) {
        return Err(OpenLoopError::DoesNotFit);
    }
    if engines.is_empty() {
        return Err(OpenLoopError::DoesNotFit);
    }
    for (index, r) in requests.iter().enumerate() {
        if engines[route.get(index).copied().unwrap_or(0).min(engines.len() - 1)].max_resident(r.isl, r.osl) < 1.0 {
            return Err(OpenLoopError::RequestTooLong { index, isl: r.isl, osl: r.osl });
        }
    }
    let mut machines: Vec<Machine> =
        engines.iter().map(|e| Machine::new(e, Role::Colocated, isl, osl, OPEN_LOOP)).collect();
    let last = machines.len() - 1;
    let route_of = |i: usize| route.get(i).copied().unwrap_or(0).min(last);
    // Free slots of the cap, by the time each became free (all at t = 0); none kept without a cap.
    let mut slots: BinaryHeap<Reverse<Time>> =
        cap.map(|c| (0..c).map(|_| Reverse(Time(0.0))).collect()).unwrap_or_default();
    let mut next = 0;
    let mut in_flight = 0.0_f64;
    let mut tally = OpenTally::default();
    let mut out = StepOut::default();
    let mut steps = 0;
    while next < n || machines.iter().any(has_work) {
        steps += 1;
        if steps > MAX_STEPS.max(40 * n) {
            return Err(OpenLoopError::Unfinished(steps - 1));
        }
        let busiest = (0..machines.len())
            .filter(|&k| has_work(&machines[k]))
            .min_by(|&a, &b| machines[a].clock_s.total_cmp(&machines[b].clock_s));
        // Send what is due by the earliest busy engine's clock; an idle cluster waits for the next request.
        let now = match busiest {
            Some(k) => machines[k].clock_s,
            None => send_time(&requests[next], cap.is_some(), &slots).unwrap_or(f64::INFINITY),
        };
        while next < n {
            let Some(send_s) = send_time(&requests[next], cap.is_some(), &slots) else { break };
            if send_s > now {
                break;
            }
            slots.pop();
            let r = requests[next];
            let m = &mut machines[route_of(next)];
            if !has_work(m) {
                m.clock_s = m.clock_s.max(send_s);
            }
            m.waiting.push_back(Cohort::fresh(1.0, send_s, r.isl, r.osl));
            m.last_full_decode_s = None;
            in_flight += 1.0;
            tally.peak_in_flight = tally.peak_in_flight.max(in_flight);
            next += 1;
        }
        let Some(k) = (0..machines.len())
            .filter(|&k| has_work(&machines[k]))
            .min_by(|&a, &b| machines[a].clock_s.total_cmp(&machines[b].clock_s))
        else {
            continue;
        };
        // No request can reach this engine before the next one routed to it is due, nor before a slot frees:
        // a free one, another engine's next finish (at its clock or later), or this engine's own (after a step).
        let routed = (next..n).find(|&i| route_of(i) == k);
        let horizon = routed.map_or(f64::INFINITY, |i| {
            let slot = match slots.peek() {
                _ if cap.is_none() => 0.0,
                Some(Reverse(t)) => t.0,
                None => (0..machines.len())
                    .filter(|&j| j != k && has_work(&machines[j]))
                    .map(|j| machines[j].clock_s)
                    .fold(f64::INFINITY, f64::min),
            };
            requests[i].arrival_s.max(slot)
        });
        let m = &mut machines[k];
        if let Some((dt, j, slot)) = m.jump(horizon) {
            m.busy[slot] += j * dt;
            tally.gaps.push((dt, j * m.seqs()));
            continue;
        }
        let max_seqs = m.e.limits.max_seqs.max(1.0);
        let Some(dt) = m.step(max_seqs, true, &mut out) else {
            // Nothing the engine holds can be scheduled: with nothing running, the head of its queue never will.
            return Err(OpenLoopError::Unfinished(steps));
        };
        tally.gaps.push((dt, out.gaps));
        tally.preemptions += out.preempted;
        for c in &out.done {
            tally.finish(c, m.clock_s);
            in_flight -= c.size;
            if cap.is_some() {
                slots.push(Reverse(Time(m.clock_s)));
            }
        }
    }
    let mut busy = [0.0; 5];
    for m in &machines {
        busy.iter_mut().zip(m.busy).for_each(|(b, x)| *b += x);
    }
    let bottleneck = if tally.preemptions > 0.0 { Bottleneck::KvCapacity } else { dominant(&busy) };
    Ok(tally.measured(bottleneck))
}

/// Whether an engine holds requests, running or queued.
fn has_work(m: &Machine) -> bool {
    !m.running.is_empty() || !m.waiting.is_empty()
}

/// When request `r` is sent: when it is due, or, under a cap, when the earliest free slot frees if later; `None`
/// while every slot is taken.
pub(super) fn send_time(r: &Request, capped: bool, slots: &BinaryHeap<Reverse<Time>>) -> Option<f64> {
    if !capped {
        return Some(r.arrival_s);
    }
    slots.peek().map(|Reverse(t)| r.arrival_s.max(t.0))
}

/// A time ordered totally (`f64::total_cmp`), for the heap of free slots.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Time(pub(super) f64);
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Time {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The requests' latencies as they finish.
#[derive(Default)]
pub(super) struct OpenTally {
    ttft: Vec<f64>,
    tpot: Vec<f64>,
    e2e: Vec<f64>,
    /// (a step's length, requests that waited it between two of their tokens).
    pub(super) gaps: Vec<(f64, f64)>,
    output_tokens: f64,
    pub(super) completed: f64,
    pub(super) preemptions: f64,
    last_finish_s: f64,
    pub(super) peak_in_flight: f64,
}

impl OpenTally {
    /// Books request `c` (a cohort of one) finished at `now`.
    pub(super) fn finish(&mut self, c: &Cohort, now: f64) {
        let e2e = now - c.arrival_s;
        let ttft = c.first_token_s.unwrap_or(now) - c.arrival_s;
        self.ttft.push(ttft);
        self.e2e.push(e2e);
        if c.osl > 1.0 {
            self.tpot.push((e2e - ttft) / (c.osl - 1.0));
        }
        self.output_tokens += c.size * c.osl;
        self.completed += c.size;
        self.last_finish_s = self.last_finish_s.max(now);
    }

    pub(super) fn measured(mut self, bottleneck: Bottleneck) -> OpenMeasured {
        OpenMeasured {
            duration_s: self.last_finish_s,
            completed: self.completed,
            output_tokens: self.output_tokens,
            peak_in_flight: self.peak_in_flight,
            ttft: LatencyStats::of(&self.ttft),
            tpot: LatencyStats::of(&self.tpot),
            itl: LatencyStats::of_weighted(&mut self.gaps),
            e2e: LatencyStats::of(&self.e2e),
            bottleneck,
            preemptions_per_request: if self.completed > 0.0 { self.preemptions / self.completed } else { 0.0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bandwidth::place;
    use crate::model::Coefficients;
    use crate::spec::{HardwareSpec, ModelSpec};

    /// A dense 16 GB model of 32 layers on one 80 GB GPU.
    fn model() -> ModelSpec {
        ModelSpec::dense_for_tests(16e9, 8e9, 32.0, 4096.0, 128e3)
    }

    fn run(requests: &[Request], cap: Option<u32>) -> OpenMeasured {
        let (m, hw, k) = (model(), HardwareSpec::one_gpu_for_tests(80e9, 3e12), Coefficients::default());
        let e = Engine {
            model: &m,
            hw: &hw,
            k: &k,
            placement: place(&m, &hw, 1.0, &k),
            allreduce: crate::model::fabric::AllReduceCost::Free,
            allreduce_measured: None,
            span: Default::default(),
            acceptance: 1.0,
            spilled_routing_share: 1.0,
            attention_padding: 1.0,
            limits: k.batch_limits(&hw),
        };
        open_loop(&[&e], requests, &vec![0; requests.len()], cap).expect("runs")
    }

    fn apart(n: usize, gap_s: f64) -> Vec<Request> {
        (0..n).map(|i| Request { arrival_s: (i + 1) as f64 * gap_s, isl: 1000.0, osl: 200.0 }).collect()
    }

    /// A request alone: every gap between its tokens is a step it decodes in, so the pooled ITL's mean is its
    /// TPOT, and requests sent far apart see the same latencies.
    #[test]
    fn requests_alone_see_their_own_steps_and_the_same_latencies() {
        let r = run(&apart(5, 1000.0), None);
        assert_eq!((r.completed, r.output_tokens, r.peak_in_flight), (5.0, 1000.0, 1.0));
        assert!((r.itl.mean_s / r.tpot.mean_s - 1.0).abs() < 1e-9, "{:?} {:?}", r.itl, r.tpot);
        assert!((r.ttft.p99_s - r.ttft.median_s).abs() < 1e-12, "{:?}", r.ttft);
        let e2e = r.ttft.mean_s + 199.0 * r.tpot.mean_s;
        assert!((r.e2e.mean_s - e2e).abs() < 1e-9, "{:?}", r.e2e);
        assert!((r.duration_s - (5000.0 + r.e2e.mean_s)).abs() < 1e-6, "{}", r.duration_s);
    }

    /// Under a cap of one, requests due together run one after another: each waits at the client, not in the
    /// engine, so its TTFT is one request's and the run lasts five end-to-end latencies.
    #[test]
    fn a_cap_of_one_sends_each_request_when_the_last_one_ends() {
        let alone = run(&apart(1, 1.0), None);
        let burst: Vec<Request> = apart(5, 1.0).into_iter().map(|r| Request { arrival_s: 0.0, ..r }).collect();
        let capped = run(&burst, Some(1));
        assert_eq!(capped.peak_in_flight, 1.0);
        assert!((capped.ttft.p99_s / alone.ttft.mean_s - 1.0).abs() < 1e-9, "{:?}", capped.ttft);
        assert!((capped.duration_s / (5.0 * alone.e2e.mean_s) - 1.0).abs() < 1e-9, "{}", capped.duration_s);
        let free = run(&burst, None);
        assert_eq!(free.peak_in_flight, 5.0);
        assert!(free.duration_s < capped.duration_s && free.ttft.p99_s > alone.ttft.mean_s);
    }

    #[test]
    fn a_request_is_sent_when_due_or_when_a_slot_frees() {
        let r = Request { arrival_s: 2.0, isl: 1.0, osl: 1.0 };
        let mut slots = BinaryHeap::new();
        assert_eq!(send_time(&r, false, &slots), Some(2.0));
        assert_eq!(send_time(&r, true, &slots), None);
        slots.push(Reverse(Time(5.0)));
        slots.push(Reverse(Time(1.0)));
        assert_eq!(send_time(&r, true, &slots), Some(2.0));
        slots.pop();
        assert_eq!(send_time(&r, true, &slots), Some(5.0));
    }
}

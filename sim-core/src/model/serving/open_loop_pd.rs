//! The open loop on a PD pair: requests sent at their own times to the prefill engine, each handed over the link
//! to the decode engine (its KV cache of its own prompt length), each its own cohort as in `open_loop`.

use super::arrivals::Request;
use super::cohort::Cohort;
use super::machine::{dominant, Machine, Role};
use super::open_loop::{send_time, OpenLoopError, OpenMeasured, OpenTally, Time, OPEN_LOOP};
use super::step::StepOut;
use super::{MAX_STEPS, MIN_PART};
use crate::model::batching::Engine;
use crate::model::Bottleneck;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Runs `requests` (in the order they are due) through the prefill engine `pre` and the decode engine `dec`, a
/// request's hand-off taking `transfer_s(prompt tokens)` on the link, at most `cap` in flight.
pub fn open_loop_pd(
    pre: &Engine,
    dec: &Engine,
    transfer_s: &dyn Fn(f64) -> f64,
    requests: &[Request],
    cap: Option<u32>,
) -> Result<OpenMeasured, OpenLoopError> {
    let n = requests.len();
    if !pre.placement.fits || !dec.placement.fits {
        return Err(OpenLoopError::DoesNotFit);
    }
    for (index, r) in requests.iter().enumerate() {
        if dec.max_resident(r.isl, r.osl) < 1.0 || pre.max_resident(r.isl, 1.0) < 1.0 {
            return Err(OpenLoopError::RequestTooLong { index, isl: r.isl, osl: r.osl });
        }
    }
    let mean = |f: fn(&Request) -> f64| requests.iter().map(f).sum::<f64>() / n.max(1) as f64;
    let (isl, osl) = (mean(|r| r.isl), mean(|r| r.osl));
    let mut p = Machine::new(pre, Role::PrefillOnly, isl, osl, OPEN_LOOP);
    let mut d = Machine::new(dec, Role::DecodeOnly, isl, osl, OPEN_LOOP);
    let max_seqs = dec.limits.max_seqs.max(1.0);
    let mut slots: BinaryHeap<Reverse<Time>> =
        cap.map(|c| (0..c).map(|_| Reverse(Time(0.0))).collect()).unwrap_or_default();
    let mut next = 0;
    let mut in_flight = 0.0_f64;
    let mut tally = OpenTally::default();
    let mut out = StepOut::default();
    // Prefilled requests waiting for decode-side blocks, and transfers on the link (landing time, request).
    let mut handoff: VecDeque<(f64, Cohort)> = VecDeque::new();
    let mut transfers: VecDeque<(f64, Cohort)> = VecDeque::new();
    let mut link_free_s = 0.0_f64;
    let (mut p_busy, mut d_busy) = (0.0, 0.0);
    for steps in 0..MAX_STEPS.max(40 * n) {
        // Reserve decode-side blocks for prefilled requests, oldest first, behind the requests the decode side
        // preempted (as `disaggregated` does), and start their transfers.
        while let Some((ready, c)) = handoff.front() {
            if !d.waiting.is_empty() {
                break;
            }
            let need = if d.reserve_whole { d.admission_blocks(c, 0.0) } else { d.blocks_for(c.isl + d.verify) };
            let on_link: f64 = transfers.iter().map(|t| t.1.size).sum();
            if need > d.free_blocks || max_seqs - d.seqs() - on_link < MIN_PART {
                break;
            }
            let ready = *ready;
            let (_, mut c) = handoff.pop_front().expect("front exists");
            d.take_blocks(need * c.size);
            c.blocks = need;
            link_free_s = ready.max(link_free_s) + c.size * transfer_s(c.isl);
            transfers.push_back((link_free_s, c));
        }
        let p_next = |p: &Machine| match p.running.is_empty() {
            true => p.waiting.front().map(|w| w.arrival_s.max(p.clock_s)),
            false => Some(p.clock_s),
        };
        let d_idle = d.running.is_empty() && d.waiting.is_empty();
        let d_next = if d_idle { transfers.front().map(|(t, _)| t.max(d.clock_s)) } else { Some(d.clock_s) };
        let send_next = (next < n).then(|| send_time(&requests[next], cap.is_some(), &slots)).flatten();
        // Send what is due by the earliest event.
        let now = [p_next(&p), d_next, send_next].into_iter().flatten().fold(f64::INFINITY, f64::min);
        if now.is_infinite() {
            if tally.completed < n as f64 {
                return Err(OpenLoopError::Unfinished(steps));
            }
            break;
        }
        while next < n {
            let Some(send_s) = send_time(&requests[next], cap.is_some(), &slots) else { break };
            if send_s > now {
                break;
            }
            slots.pop();
            let r = requests[next];
            p.waiting.push_back(Cohort::fresh(1.0, send_s, r.isl, r.osl));
            in_flight += 1.0;
            tally.peak_in_flight = tally.peak_in_flight.max(in_flight);
            next += 1;
        }
        let p_at = p_next(&p);
        let run_p = match (p_at, d_next) {
            (Some(tp), Some(td)) => tp <= td,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if run_p {
            p.clock_s = p_at.unwrap_or(p.clock_s);
            let Some(dt) = p.step(f64::INFINITY, true, &mut out) else {
                // Queued but not admissible yet: wait for the decode side.
                p.clock_s = d_next.unwrap_or(p.clock_s).max(p.clock_s + 1e-9);
                continue;
            };
            p_busy += dt;
            tally.preemptions += out.preempted;
            for c in out.prefilled.drain(..) {
                handoff.push_back((p.clock_s, c));
            }
            continue;
        }
        let Some(at) = d_next else { continue };
        d.clock_s = at;
        while transfers.front().is_some_and(|(t, _)| *t <= d.clock_s) {
            let (_, c) = transfers.pop_front().expect("front exists");
            d.running.push(c);
            d.last_full_decode_s = None;
        }
        // No hand-off can land before the next transfer, the prefill side's clock while it holds prompts, or a
        // request not yet sent (it must be prefilled first).
        let prefill_busy = if p.running.is_empty() && p.waiting.is_empty() { f64::INFINITY } else { p.clock_s };
        let unsent =
            (next < n).then(|| send_time(&requests[next], cap.is_some(), &slots)).flatten().unwrap_or(f64::INFINITY);
        let horizon = transfers.front().map_or(f64::INFINITY, |(t, _)| *t).min(prefill_busy).min(unsent);
        if let Some((dt, j, slot)) = d.jump(horizon) {
            d.busy[slot] += j * dt;
            d_busy += j * dt;
            tally.gaps.push((dt, j * d.seqs()));
            continue;
        }
        let Some(dt) = d.step(max_seqs, true, &mut out) else {
            if let Some((t, _)) = transfers.front() {
                d.clock_s = d.clock_s.max(*t);
            }
            continue;
        };
        d_busy += dt;
        tally.gaps.push((dt, out.gaps));
        tally.preemptions += out.preempted;
        for c in &out.done {
            tally.finish(c, d.clock_s);
            in_flight -= c.size;
            if cap.is_some() {
                slots.push(Reverse(Time(d.clock_s)));
            }
        }
    }
    if tally.completed < n as f64 {
        return Err(OpenLoopError::Unfinished(MAX_STEPS.max(40 * n)));
    }
    let bottleneck = if tally.preemptions > 0.0 {
        Bottleneck::KvCapacity
    } else if p_busy > d_busy {
        Bottleneck::PrefillRate
    } else {
        dominant(&d.busy)
    };
    Ok(tally.measured(bottleneck))
}

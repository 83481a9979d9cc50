//! The closed loop on a PD pair: a prefill engine handing KV caches over the link to a decode engine.

use super::batch_window::BatchWindow;
use super::cohort::{enqueue_fresh, initial_cohorts, Cohort};
use super::machine::{dominant, Machine, Role};
use super::plan::LoopPlan;
use super::step::StepOut;
use super::tally::{failed, Tally};
use super::{LoopMemo, Measured, OutputLengths, Run, MAX_STEPS, MIN_PART};
use crate::model::batching::Engine;
use crate::model::Bottleneck;
use std::collections::VecDeque;

// The pair, its hand-off, the workload, how the clients are driven and the sweep's memo: each public entry fixes
// some of them, so a struct would only rename the list.
#[allow(clippy::too_many_arguments)]
pub(super) fn disaggregated_with(
    pre: &Engine,
    dec: &Engine,
    transfer_s_per_request: f64,
    c: f64,
    isl: f64,
    osl: f64,
    run: Run,
    lengths: OutputLengths,
    mut memo: Option<&mut LoopMemo>,
) -> Measured {
    let max_res = dec.max_resident(isl, osl);
    if !dec.placement.fits || !pre.placement.fits {
        return failed(Bottleneck::DoesNotFit, max_res);
    }
    if max_res < 1.0 {
        return failed(Bottleneck::KvCapacity, max_res);
    }
    let res = run.resolution();
    let mut p = Machine::new(pre, Role::PrefillOnly, isl, osl, res);
    let mut d = Machine::new(dec, Role::DecodeOnly, isl, osl, res);
    let max_seqs = dec.limits.max_seqs.max(1.0);
    // The decode side is where requests are held; the prefill side only runs ahead of it.
    let plan = LoopPlan::new(&d, run, c, max_res, max_seqs);
    if let Some(r) = plan.recalled(&mut memo, osl) {
        return r;
    }
    let (clients, c) = (plan.clients, plan.simulated);
    p.waiting = initial_cohorts(c, isl, &plan.length_classes(lengths, osl), res.max_cohorts);
    let warm = plan.warm_up();
    let mut window = BatchWindow::default();
    let mut at_the_edge = plan.key.at_the_edge;
    let mut tally = Tally::new(c);
    let mut out = StepOut::default();
    // Prefilled requests waiting for decode-side blocks, and transfers in flight (arrival time, cohort).
    let mut handoff: VecDeque<(f64, Cohort)> = VecDeque::new();
    let mut in_flight: VecDeque<(f64, Cohort)> = VecDeque::new();
    let mut link_free_s = 0.0_f64;
    let mut p_busy = 0.0;
    let mut d_busy = 0.0;
    for _ in 0..MAX_STEPS {
        // Reserve decode-side blocks for prefilled requests, oldest first, and start their transfers. Requests
        // the decode side preempted come first: they wait at the head of its queue (vLLM puts a preempted
        // request back at the front), so a new hand-off takes blocks only when none of them waits.
        while let Some((ready, _)) = handoff.front() {
            if !d.waiting.is_empty() {
                break;
            }
            let ready = *ready;
            let size = handoff[0].1.size;
            // The decode side holds the prompt's KV plus its first verify step; under GuaranteedNoEvict the
            // whole request's.
            let need_each =
                if d.reserve_whole { d.admission_blocks(&handoff[0].1, 0.0) } else { d.blocks_for(isl + d.verify) };
            let fit = if need_each > 0.0 { d.free_blocks / need_each } else { size };
            // The blocks decide first (past the KV edge they stop every hand-off), before summing the sequences.
            if fit < MIN_PART && fit < size {
                break;
            }
            let n = size.min(fit).min(max_seqs - d.seqs() - in_flight.iter().map(|f| f.1.size).sum::<f64>());
            if n < MIN_PART && n < size {
                break;
            }
            let mut cohort =
                if n < size { handoff[0].1.split(n) } else { handoff.pop_front().expect("front exists").1 };
            d.take_blocks(need_each * cohort.size);
            cohort.blocks = need_each;
            let start = ready.max(link_free_s);
            link_free_s = start + cohort.size * transfer_s_per_request;
            in_flight.push_back((link_free_s, cohort));
        }
        let warming = tally.warming(warm);
        let p_ready = p.waiting.front().map(|w| w.arrival_s.max(p.clock_s));
        let p_next = if p.running.is_empty() { p_ready } else { Some(p.clock_s) };
        // The decode side has work while it runs requests or holds requests it preempted (which it re-admits
        // itself: with none running, nothing else would, and new hand-offs wait behind them).
        let d_next = if d.running.is_empty() && d.waiting.is_empty() {
            in_flight.front().map(|(t, _)| t.max(d.clock_s))
        } else {
            Some(d.clock_s)
        };
        let run_p = match (p_next, d_next) {
            (Some(tp), Some(td)) => tp <= td,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if run_p {
            p.clock_s = p_next.expect("p has work");
            let Some(dt) = p.step(f64::INFINITY, !warming, &mut out) else {
                // Work is queued but not yet admissible: wait for the decode side.
                p.clock_s = d_next.unwrap_or(p.clock_s).max(p.clock_s + 1e-9);
                continue;
            };
            if !warming {
                p_busy += dt;
                tally.preempted_in_window += out.preempted;
            }
            for c in out.prefilled.drain(..) {
                handoff.push_back((p.clock_s, c));
            }
        } else {
            d.clock_s = d_next.expect("d has work");
            while in_flight.front().is_some_and(|(t, _)| *t <= d.clock_s) {
                let (_, c) = in_flight.pop_front().expect("front exists");
                d.running.push(c);
                d.last_full_decode_s = None;
            }
            // The decode side must not run ahead of hand-offs still to come: stop at the next arrival, and at
            // the prefill side's clock while it has prompts in hand.
            let prefill_busy = if p.running.is_empty() && p_ready.is_none() { f64::INFINITY } else { p.clock_s };
            let horizon = in_flight.front().map_or(f64::INFINITY, |(t, _)| *t).min(prefill_busy);
            if let Some((dt, j, slot)) = d.jump(horizon) {
                if !warming {
                    d.busy[slot] += j * dt;
                    d_busy += j * dt;
                    tally.ran(j, dt, d.seqs(), d.kv_use());
                }
                if run.one_batch() {
                    window.note(&d.running);
                }
                continue;
            }
            let Some(dt) = d.step(max_seqs, !warming, &mut out) else {
                // Nothing admissible yet: wait for the next hand-off to land.
                if let Some((t, _)) = in_flight.front() {
                    d.clock_s = d.clock_s.max(*t);
                }
                continue;
            };
            at_the_edge |= out.preempted > 0.0;
            if !warming {
                d_busy += dt;
                tally.ran(1.0, dt, d.seqs(), d.kv_use());
                tally.preempted_in_window += out.preempted;
            }
            tally.finish(&out.done, d.clock_s, warm, d.emitted);
            if run.one_batch() {
                // Nothing is sent again: the loop ends when neither side has work left.
                window.note(&d.running);
                continue;
            }
            let returning: f64 = out.done.iter().map(|c| c.size).sum();
            if returning > 0.0 {
                enqueue_fresh(&mut p.waiting, Cohort::fresh(returning, d.clock_s, isl, osl));
                if tally.measured_enough(&res, at_the_edge) {
                    break;
                }
            }
        }
    }
    let bottleneck = if p_busy > d_busy { Bottleneck::PrefillRate } else { dominant(&d.busy) };
    let bottleneck = if clients > max_res { Bottleneck::KvCapacity } else { bottleneck };
    let r = tally.measured(d.clock_s, d.emitted, osl, max_res, bottleneck);
    plan.answer(r, &window, memo, osl, d.clock_s)
}

//! The closed loop on one engine (one machine, or TP across machines).

use super::batch_window::BatchWindow;
use super::cohort::{enqueue_fresh, initial_cohorts, Cohort};
use super::machine::{dominant, Machine, Role};
use super::plan::LoopPlan;
use super::step::StepOut;
use super::tally::{failed, Tally};
use super::{LoopMemo, Measured, OutputLengths, Run, MAX_STEPS};
use crate::model::batching::Engine;
use crate::model::Bottleneck;

pub(super) fn colocated_with(
    e: &Engine,
    c: f64,
    isl: f64,
    osl: f64,
    run: Run,
    lengths: OutputLengths,
    mut memo: Option<&mut LoopMemo>,
) -> Measured {
    let max_res = e.max_resident(isl, osl);
    if !e.placement.fits {
        return failed(Bottleneck::DoesNotFit, max_res);
    }
    if max_res < 1.0 {
        return failed(Bottleneck::KvCapacity, max_res);
    }
    let res = run.resolution();
    let mut mach = Machine::new(e, Role::Colocated, isl, osl, res);
    let max_seqs = e.limits.max_seqs.max(1.0);
    let plan = LoopPlan::new(&mach, run, c, max_res, max_seqs);
    if let Some(r) = plan.recalled(&mut memo, osl) {
        return r;
    }
    let (clients, c) = (plan.clients, plan.simulated);
    mach.waiting = initial_cohorts(c, isl, &plan.length_classes(lengths, osl), res.max_cohorts);
    let warm = plan.warm_up();
    let mut window = BatchWindow::default();
    let mut at_the_edge = plan.key.at_the_edge;
    let mut tally = Tally::new(c);
    let mut out = StepOut::default();
    for _ in 0..MAX_STEPS {
        let warming = tally.warming(warm);
        if let Some((dt, j, slot)) = mach.jump(f64::INFINITY) {
            if !warming {
                mach.busy[slot] += j * dt;
                tally.ran(j, dt, mach.decoding_seqs(), mach.kv_use());
            }
            if run.one_batch() {
                window.note(&mach.running);
            }
            continue;
        }
        let Some(dt) = mach.step(max_seqs, !warming, &mut out) else { break };
        at_the_edge |= out.preempted > 0.0;
        if !warming {
            tally.ran(1.0, dt, mach.decoding_seqs(), mach.kv_use());
            tally.preempted_in_window += out.preempted;
        }
        tally.finish(&out.done, mach.clock_s, warm, mach.emitted);
        if run.one_batch() {
            // Requests that finished in this step had their first token noted in an earlier one.
            window.note(&mach.running);
            if mach.running.is_empty() && mach.waiting.is_empty() {
                break;
            }
            continue;
        }
        // Each finished client sends its next request at once; those finishing together arrive together.
        let returning: f64 = out.done.iter().map(|c| c.size).sum();
        if returning > 0.0 {
            enqueue_fresh(&mut mach.waiting, Cohort::fresh(returning, mach.clock_s, isl, osl));
            if tally.measured_enough(&res, at_the_edge) {
                break;
            }
        }
    }
    let mut bottleneck = dominant(&mach.busy);
    if tally.preemptions > 0.0 || tally.preempted_in_window > 0.0 || clients > max_res {
        bottleneck = Bottleneck::KvCapacity;
    }
    let r = tally.measured(mach.clock_s, mach.emitted, osl, max_res, bottleneck);
    plan.answer(r, &window, memo, osl, mach.clock_s)
}

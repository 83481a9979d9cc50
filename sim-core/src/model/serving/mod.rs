//! The serving engine's closed loop, step by step: a KV block pool, admission, chunked prefill under a token
//! budget, preemption under KV pressure, and for PD a prefill machine handing KV caches to a decode machine.
//!
//! What one step does (vLLM V1's scheduler, docs/domain.md 3c):
//! ```text
//!   1. running requests, oldest first: decodes take k+1 tokens of the budget, unfinished prompts a chunk;
//!      a request that needs a KV block when none is free preempts the newest running request (its blocks
//!      are freed, it goes back to the head of the queue and recomputes its prompt plus its output so far,
//!      less the prefix the prefix cache still holds when it is re-admitted: only what others took is lost)
//!   2. unless this step preempted: admit waiting requests while the budget and free blocks allow
//!   3. the step's time is `Engine::step` of what was scheduled; decodes advance by `a` accepted tokens
//!   4. a finished request frees its blocks, and its client sends the next request at once (closed loop)
//! ```
//! Requests are identical within a sweep point (but for a batch's output lengths, which may vary in length
//! classes: `output_length_classes`), so clients are pooled into at most `Resolution::max_cohorts` cohorts
//! that move together (prompts are chunked first come first served, splitting a cohort); preemption and partial
//! admission split a cohort, so KV pressure is resolved request by request. Throughput (output tokens produced in
//! the window per second), TTFT and TPOT (over the requests completed in it) are measured over two rounds of
//! requests after a first round that fills the pipeline; at the engine's edge over three, and on, round by round,
//! while the rounds' rates leave the window's rate uncertain by more than 1% (nine at most).
//!
//! Where each part lives: `machine` (one engine's state and set-up), `kv_pool` (the blocks a request holds, taking
//! and evicting them, preemption), `step` (one scheduler step and the merge that bounds the cohorts), `lockstep`
//! (decoding cohorts stepped as one), `jump` (decode-only stretches run at once), `cohort` (requests that behave
//! alike, and a batch's output length classes), `tally` (the window's statistics and `Measured`), `resolution`,
//! `plan` (`Run`, which loop a sweep point runs, saturation), `memo`, `batch_window` (one-batch throughputs), and
//! the two closed loops, `colocated` and `disaggregated`; `open_loop` and `open_loop_pd` (requests sent at their
//! own times, each its own cohort) with `arrivals` (their seeded times and lengths).

mod arrivals;
mod batch_window;
mod cohort;
mod colocated;
mod disaggregated;
mod jump;
mod kv_pool;
mod lockstep;
mod machine;
mod memo;
mod open_loop;
mod open_loop_pd;
mod plan;
mod resolution;
mod step;
mod tally;

use super::batching::Engine;
use colocated::colocated_with;
use disaggregated::disaggregated_with;

pub use crate::dataset::schema::OutputLengths;
pub use arrivals::{LengthSpread, OpenLoad, OpenLoadError, Request, EXPONENTIAL_CAP, MAX_PROMPTS};
pub use cohort::output_length_classes;
pub use memo::LoopMemo;
pub use open_loop::{open_loop, OpenLoopError, OpenMeasured};
pub use open_loop_pd::open_loop_pd;
pub use plan::Run;
pub use resolution::Resolution;
pub use tally::Measured;

/// The smallest share of a request a cohort is split into when admitting or preempting under KV pressure: one
/// whole request, as the engine does (a finer fluid multiplies cohorts and slows the loop without changing it).
const MIN_PART: f64 = 1.0;

/// Steps one sweep point may take before the measurement ends where it is (a guard, never reached in tests).
const MAX_STEPS: usize = 200_000;

/// Tokens within which two progress counts are the same: a cohort's progress is a size-weighted mean after a merge
/// and a sum of the lockstep's advance and its own stored part, so an output of 512 tokens may read 511.999... A
/// request whose count is this close to its OSL has finished, and two gaps this close are a tie, broken by age:
/// otherwise rounding picks which cohorts merge and when a request ends, which can move a sweep point's TTFT by
/// a quarter (Llama-3.3-70B on two H100, 512/512 at 128 clients: 0.92 s or 1.26 s by the order of two additions).
const ROUNDING: f64 = 1e-9;

/// Runs `c` closed-loop clients sending ISL/OSL requests to one engine (one machine, or TP across machines).
/// Past saturation it runs `saturating_clients` of them and adds the others' wait by Little's law.
pub fn colocated(e: &Engine, c: f64, isl: f64, osl: f64) -> Measured {
    colocated_with(e, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, None)
}

/// `colocated`, answered from `memo` when an earlier point of the same sweep ran the same loop (the same
/// answer, bit for bit).
pub fn colocated_memo(e: &Engine, c: f64, isl: f64, osl: f64, memo: &mut LoopMemo) -> Measured {
    colocated_with(e, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, Some(memo))
}

/// `colocated` driven as `run` says: one synchronized batch (`Run::Batch`, a llama-benchy run whose `output_tok_s` is
/// its batch `tg` figure, `BatchWindow::throughput`; `Run::AllAtOnce`, a `vllm bench serve` run at an unlimited rate
/// whose `output_tok_s` is its whole run's, `BatchWindow::whole_run_throughput`), or a closed loop with every client
/// (`Run::EVERY_CLIENT`, the saturation shortcut's reference) or at `Resolution::REFERENCE` (`Run::REFERENCE`, the long
/// run a sweep's resolution is checked against, tens of times slower); `tests/physics.rs` holds both checks.
pub fn colocated_run(e: &Engine, c: f64, isl: f64, osl: f64, run: Run) -> Measured {
    colocated_with(e, c, isl, osl, run, OutputLengths::Fixed, None)
}

/// `colocated_run` of a batch whose requests' output lengths vary as `lengths` says around the mean `osl`.
pub fn colocated_batch(e: &Engine, c: f64, isl: f64, osl: f64, run: Run, lengths: OutputLengths) -> Measured {
    colocated_with(e, c, isl, osl, run, lengths, None)
}

/// PD: one engine prefills and ships each KV cache over the link to the other, which only decodes. The decode
/// side reserves a request's blocks before its transfer starts; transfers share the link one at a time.
pub fn disaggregated(pre: &Engine, dec: &Engine, transfer_s_per_request: f64, c: f64, isl: f64, osl: f64) -> Measured {
    disaggregated_with(pre, dec, transfer_s_per_request, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, None)
}

/// `disaggregated`, answered from `memo` as `colocated_memo` is.
pub fn disaggregated_memo(
    pre: &Engine,
    dec: &Engine,
    transfer_s_per_request: f64,
    c: f64,
    isl: f64,
    osl: f64,
    memo: &mut LoopMemo,
) -> Measured {
    disaggregated_with(pre, dec, transfer_s_per_request, c, isl, osl, Run::SWEEP, OutputLengths::Fixed, Some(memo))
}

/// `disaggregated` driven as `run` says (as `colocated_run`), a batch's output lengths varying as `lengths` says.
#[allow(clippy::too_many_arguments)] // the pair, the hand-off, the workload, the load, as `disaggregated_with`
pub fn disaggregated_run(
    pre: &Engine,
    dec: &Engine,
    transfer_s_per_request: f64,
    c: f64,
    isl: f64,
    osl: f64,
    run: Run,
    lengths: OutputLengths,
) -> Measured {
    disaggregated_with(pre, dec, transfer_s_per_request, c, isl, osl, run, lengths, None)
}

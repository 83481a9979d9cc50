//! One open-loop point of a mode (`OpenLoopPrediction`): `vllm bench serve` at a request rate against one engine
//! (single, TP2, PP2, EP2), two copies (DP2, every other request to each under a balanced router, a seeded coin per
//! request under a random one) or a PD pair (each request's KV cache handed over at its own prompt length).

use super::latency::LatencyStats;
use super::modes::{engine, ep2_refusal, handoff_s, mode_engine};
use super::serving::{open_loop, open_loop_pd, OpenLoad, OpenLoadError, OpenLoopError};
use super::{Bottleneck, Coefficients};
use crate::dataset::schema::DpRouter;
use crate::scenario::Scenario;
use crate::Mode;
use serde::Serialize;

/// One predicted point of an open loop: what was sent and what `vllm bench serve` would print.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenLoopPrediction {
    pub mode: Mode,
    /// The workload's stated lengths (requests draw theirs around them as `load.lengths` says).
    pub isl: u32,
    pub osl: u32,
    pub load: OpenLoad,
    /// From the benchmark's start to the last finish, seconds.
    pub duration_s: f64,
    /// Requests completed over the duration (vLLM's `request_throughput`).
    pub achieved_rate: f64,
    /// Every output token over the duration (vLLM's `output_throughput`).
    pub output_tok_s: f64,
    pub output_tokens: f64,
    /// Most requests in flight at once (exact; vLLM buckets it by the second).
    pub peak_concurrency: f64,
    pub ttft: LatencyStats,
    pub tpot: LatencyStats,
    pub itl: LatencyStats,
    pub e2e: LatencyStats,
    pub bottleneck: Bottleneck,
    pub preemptions_per_request: f64,
}

/// Why an open-loop point has no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpenLoopRefusal {
    #[error(transparent)]
    Load(#[from] OpenLoadError),
    #[error(transparent)]
    Loop(#[from] OpenLoopError),
    /// The mode cannot run the model at all (expert parallel of a dense model).
    #[error("{0}")]
    Mode(String),
}

/// Predicts `mode` under `load` for a workload of `isl` prompt and `osl` output tokens.
pub fn predict_open_loop(
    s: &Scenario,
    k: &Coefficients,
    mode: Mode,
    isl: u32,
    osl: u32,
    load: &OpenLoad,
) -> Result<OpenLoopPrediction, OpenLoopRefusal> {
    let requests = load.requests(isl, osl)?;
    let n = requests.len();
    let measured = match mode {
        Mode::Single | Mode::Tp2 | Mode::Pp2 | Mode::Ep2 | Mode::Tp4 | Mode::Pp4 => {
            if let Some(why) = (mode == Mode::Ep2).then(|| ep2_refusal(s)).flatten() {
                return Err(OpenLoopRefusal::Mode(why));
            }
            let e = mode_engine(s, k, mode);
            open_loop(&[&e], &requests, &vec![0; n], load.max_concurrency)?
        }
        Mode::Dp2 | Mode::Dpep2 => {
            let data_expert = mode == Mode::Dpep2;
            if let Some(why) = data_expert.then(|| ep2_refusal(s)).flatten() {
                return Err(OpenLoopRefusal::Mode(why));
            }
            // Two copies, or DP+EP's two ranks, each on the engine of one rank.
            let e = if data_expert { mode_engine(s, k, mode) } else { engine(s, k, 1.0) };
            // vLLM's data-parallel coordinator keeps DP+EP's ranks even, as a balanced router keeps copies.
            let route: Vec<usize> = match s.router {
                DpRouter::Random if !data_expert => load.coins().into_iter().map(usize::from).collect(),
                _ => (0..n).map(|i| i % 2).collect(),
            };
            open_loop(&[&e, &e], &requests, &route, load.max_concurrency)?
        }
        Mode::Dp4 => {
            let e = engine(s, k, 1.0);
            let route: Vec<usize> = match s.router {
                DpRouter::Balanced => (0..n).map(|i| i % 4).collect(),
                DpRouter::Random => load.picks(4),
            };
            open_loop(&[&e, &e, &e, &e], &requests, &route, load.max_concurrency)?
        }
        Mode::Pd => {
            let (pre, dec) = (engine(s, k, 1.0), engine(s, k, 1.0));
            open_loop_pd(&pre, &dec, &|isl| handoff_s(s, isl), &requests, load.max_concurrency)?
        }
    };
    // Each request reaches the engine `request_overhead_s` after it is sent (a constant for every request, so
    // the engine's timeline only moves later) and pays it before its first token: TTFT, end-to-end latency and
    // the run's duration gain it, TPOT and ITL do not.
    let overhead = k.request_overhead_s;
    let duration_s = measured.duration_s + if measured.completed > 0.0 { overhead } else { 0.0 };
    let per_s = |x: f64| if duration_s > 0.0 { x / duration_s } else { 0.0 };
    Ok(OpenLoopPrediction {
        mode,
        isl,
        osl,
        load: *load,
        duration_s,
        achieved_rate: per_s(measured.completed),
        output_tok_s: per_s(measured.output_tokens),
        output_tokens: measured.output_tokens,
        peak_concurrency: measured.peak_in_flight,
        ttft: measured.ttft.shifted(overhead),
        tpot: measured.tpot,
        itl: measured.itl,
        e2e: measured.e2e.shifted(overhead),
        bottleneck: measured.bottleneck,
        preemptions_per_request: measured.preemptions_per_request,
    })
}

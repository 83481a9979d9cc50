//! The latencies a target on a percentile (p50, p90, p99) reads at each load of the users grid: the requests of
//! `vllm bench serve --request-rate inf --max-concurrency <users> --num-prompts <n>` at the workload's fixed
//! lengths, run through the open loop (`model::open_loop`), each request's TTFT and TPOT counted as the benchmark
//! counts them. A closed loop's users are that benchmark's concurrency cap: a user sends again when its answer is
//! done. Throughput stays the closed loop's steady state, what "users served" means everywhere else.

use super::target::LatencyStatistic;
use crate::model::latency::LatencyStats;
use crate::model::open_loop::predict_open_loop;
use crate::model::serving::{LengthSpread, OpenLoad};
use crate::model::{Coefficients, Prediction};
use crate::scenario::Scenario;
use crate::Mode;

/// Rounds of its users a load sends: the first round starts all at once and queues for prefill together, so the
/// percentiles read a tenth of their requests from that start-up, as a benchmark of that many prompts does.
pub const ROUNDS: u32 = 10;
/// The fewest prompts a load sends, so that a p99 is more than one request's latency (at one user, 100 prompts:
/// the p99 is the 99th-100th).
pub const MIN_PROMPTS: u32 = 100;
/// The benchmark's seed; with fixed lengths and every request sent at once the answer does not depend on it.
const SEED: u64 = 0;

/// The prompts a load of `users` sends.
pub fn prompts(users: u32) -> u32 {
    users.saturating_mul(ROUNDS).max(MIN_PROMPTS)
}

/// One statistic of a latency's distribution.
pub fn pick(stats: &LatencyStats, statistic: LatencyStatistic) -> f64 {
    match statistic {
        LatencyStatistic::Mean => stats.mean_s,
        LatencyStatistic::P50 => stats.median_s,
        LatencyStatistic::P90 => stats.p90_s,
        LatencyStatistic::P99 => stats.p99_s,
    }
}

/// Replaces each point's TTFT and TPOT by `statistic` over the benchmark's requests at that point's load; a
/// load the open loop refuses gets no latency (NaN: it meets no target). The mean is left as predicted.
pub fn apply(
    s: &Scenario,
    k: &Coefficients,
    mode: Mode,
    (isl, osl): (u32, u32),
    statistic: LatencyStatistic,
    points: &mut [Prediction],
) {
    if statistic == LatencyStatistic::Mean {
        return;
    }
    for p in points {
        let users = p.concurrency.max(1);
        let load = OpenLoad {
            rate: f64::INFINITY,
            burstiness: 1.0,
            max_concurrency: Some(users),
            prompts: prompts(users),
            lengths: LengthSpread::Fixed,
            seed: SEED,
        };
        match predict_open_loop(s, k, mode, isl, osl, &load) {
            Ok(run) => {
                p.ttft_s = pick(&run.ttft, statistic);
                p.tpot_s = pick(&run.tpot, statistic);
            }
            Err(_) => {
                p.ttft_s = f64::NAN;
                p.tpot_s = f64::NAN;
            }
        }
    }
}

//! What a "user" is in a plan. By default a user is a *stream* of the closed loop: it sends its next request the
//! moment its answer ends, as `vllm bench serve --max-concurrency <users>` does. People in a chat service read
//! and type between requests: a user with a *think time* `Z` sends again `Z` seconds after an answer ends, and a
//! *paced* user sends `r` requests a second whatever the answers do. Both are answered through the open loop
//! (`model::open_loop`), each request simulated on its own:
//!
//! ```text
//! thinking  N users, think time Z:  rate = N / (Z + R), R the mean time a request takes (E2E)
//!           solved by iteration: R from the open loop at the rate, the rate from R; at most N in flight
//! paced     N users at r each:      rate = N r, Poisson arrivals, no cap
//! ```
//! The thinking users' arrivals are taken as Poisson at the solved rate (a finite population of exponential
//! thinkers is close to it once N is more than a few), capped at N requests in flight since a user waits for its
//! answer. Throughput is what those users make the engine produce, not its capacity: the users served at a
//! target are then people, not streams.

use super::target::{LatencyStatistic, LatencyTarget};
use super::target_percentiles::pick;
use crate::model::open_loop::predict_open_loop;
use crate::model::serving::{LengthSpread, OpenLoad};
use crate::model::{predict, Bottleneck, Coefficients, Prediction};
use crate::scenario::Scenario;
use crate::Mode;
use serde::Serialize;

/// Which kind of user a plan counts.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Users {
    /// Closed-loop streams: the next request the moment an answer ends.
    #[default]
    Streams,
    /// People who pause `think_s` seconds after each answer before they ask again.
    Thinking { think_s: f64 },
    /// People who send `requests_per_s` requests a second each, whatever the answers do.
    Paced { requests_per_s: f64 },
}

/// Iterations of the thinking users' rate: the rate moves by less than `TOLERANCE` well before this.
const ITERATIONS: usize = 6;
/// Relative change of the rate at which the iteration stops.
const TOLERANCE: f64 = 0.02;
/// The fewest requests a load sends, and how many per user: enough for the queue to settle past the start.
const MIN_PROMPTS: u32 = 200;
const PROMPTS_PER_USER: u32 = 4;
/// The seed of the arrivals (with fixed lengths only the gaps draw from it).
const SEED: u64 = 0;

impl Users {
    /// Whether the value is usable: a positive, finite think time or rate.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            Users::Streams => Ok(()),
            Users::Thinking { think_s } if think_s.is_finite() && think_s >= 0.0 => Ok(()),
            Users::Thinking { think_s } => Err(format!("think time {think_s}: a number of seconds, 0 or more")),
            Users::Paced { requests_per_s } if requests_per_s.is_finite() && requests_per_s > 0.0 => Ok(()),
            Users::Paced { requests_per_s } => {
                Err(format!("request rate per user {requests_per_s}: a positive number of requests a second"))
            }
        }
    }

    /// What one user is, in words, for the output: which kind of user a number counts.
    pub fn describe(&self) -> String {
        match *self {
            Users::Streams => "users are closed-loop streams: each sends its next request the moment its answer \
                               ends (no think time; --think-time counts people who pause)"
                .into(),
            Users::Thinking { think_s } => format!(
                "users are people who wait {think_s} s after each answer before asking again (open loop: Poisson \
                 arrivals at users / ({think_s} s + the time a request takes), at most one request each in flight)"
            ),
            Users::Paced { requests_per_s } => format!(
                "users are people sending {requests_per_s} requests a second each, whatever the answers do (open \
                 loop: Poisson arrivals at users x {requests_per_s}/s)"
            ),
        }
    }

    pub fn is_streams(&self) -> bool {
        *self == Users::Streams
    }
}

/// The prediction of `mode` at `users` of this kind: the open loop's throughput, and its latencies at
/// `statistic` over the requests sent; `concurrency` is the users. A load the open loop refuses gets no latency
/// (NaN: it meets no target) and no throughput.
pub fn predict_users(
    s: &Scenario,
    k: &Coefficients,
    mode: Mode,
    (isl, osl): (u32, u32),
    users: u32,
    kind: Users,
    statistic: LatencyStatistic,
) -> Prediction {
    let users = users.max(1);
    let mut p = predict(s, k, mode, isl, osl, users);
    let prompts = users.saturating_mul(PROMPTS_PER_USER).max(MIN_PROMPTS);
    let load = |rate: f64, cap: Option<u32>| OpenLoad {
        rate,
        burstiness: 1.0,
        max_concurrency: cap,
        prompts,
        lengths: LengthSpread::Fixed,
        seed: SEED,
    };
    let run = match kind {
        Users::Streams => return p,
        Users::Paced { requests_per_s } => {
            predict_open_loop(s, k, mode, isl, osl, &load(f64::from(users) * requests_per_s, None)).ok()
        }
        Users::Thinking { think_s } => {
            // Start from one user's own time to an answer, then let the answers' time set the rate.
            let one = predict(s, k, mode, isl, osl, 1);
            let mut e2e = one.ttft_s + f64::from(osl.saturating_sub(1)) * one.tpot_s;
            let mut last = None;
            for _ in 0..ITERATIONS {
                let rate = f64::from(users) / (think_s + e2e.max(1e-9));
                let Ok(r) = predict_open_loop(s, k, mode, isl, osl, &load(rate, Some(users))) else {
                    last = None;
                    break;
                };
                let next = r.e2e.mean_s;
                let settled = (next - e2e).abs() <= TOLERANCE * (think_s + e2e);
                e2e = 0.5 * (e2e + next);
                last = Some(r);
                if settled {
                    break;
                }
            }
            last
        }
    };
    match run {
        Some(r) => {
            p.output_tok_s = r.output_tok_s;
            p.ttft_s = pick(&r.ttft, statistic);
            p.tpot_s = pick(&r.tpot, statistic);
            p.queue_s = 0.0;
            p.bottleneck = r.bottleneck;
        }
        None => {
            p.output_tok_s = 0.0;
            p.ttft_s = f64::NAN;
            p.tpot_s = f64::NAN;
            p.bottleneck = Bottleneck::DoesNotFit;
        }
    }
    p
}

/// The predictions of `mode` at each load of the users `grid`. Latencies grow with the users once the engine is
/// busy, so after two loads in a row miss the `target` the larger loads are not simulated: they read as missing
/// (no throughput, NaN latencies) and serve no one.
pub fn grid_points(
    s: &Scenario,
    k: &Coefficients,
    mode: Mode,
    lengths: (u32, u32),
    grid: &[u32],
    kind: Users,
    target: &LatencyTarget,
) -> Vec<Prediction> {
    let mut out: Vec<Prediction> = Vec::with_capacity(grid.len());
    let mut misses = 0;
    for &users in grid {
        let p = if misses >= 2 {
            let mut p = predict(s, k, mode, lengths.0, lengths.1, users);
            p.output_tok_s = 0.0;
            p.ttft_s = f64::NAN;
            p.tpot_s = f64::NAN;
            p
        } else {
            predict_users(s, k, mode, lengths, users, kind, target.statistic)
        };
        misses = if target.meets(&p, (1.0, 1.0)) { 0 } else { misses + 1 };
        out.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_kind_says_what_it_counts_and_refuses_nonsense() {
        assert!(Users::Streams.describe().starts_with("users are closed-loop streams"));
        assert!(Users::Thinking { think_s: 30.0 }.describe().contains("wait 30 s after each answer"));
        assert!(Users::Thinking { think_s: -1.0 }.check().is_err());
        assert!(Users::Paced { requests_per_s: 0.0 }.check().is_err());
        assert!(Users::Paced { requests_per_s: 0.05 }.check().is_ok());
    }
}

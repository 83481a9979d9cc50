//! `predict`'s open-loop flags (`vllm bench serve`'s names), turned into the query layer's `OpenLoopQuery`.

use clap::Args;
use sim_core::explore::OpenLoopQuery;
use sim_core::model::serving::{LengthSpread, OpenLoad};
use sim_core::Mode;

/// An open loop at each rate instead of the closed-loop sweep, as `vllm bench serve` sends it.
#[derive(Args, Debug, Clone)]
pub struct RateSweep {
    /// Comma-separated request rates, requests per second, each positive or `inf` (every request at once):
    /// an open loop at each instead of the closed-loop sweep.
    #[arg(long, value_delimiter = ',', value_parser = parse_rate, conflicts_with = "concurrency")]
    pub rate: Vec<f64>,
    /// Shape of the Gamma-distributed gaps between requests (1: Poisson; below 1 burstier).
    #[arg(long, default_value_t = 1.0, requires = "rate", value_parser = parse_burstiness)]
    pub burstiness: f64,
    /// Requests in flight at most; a request due while it is reached waits at the client.
    #[arg(long, requires = "rate", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrency: Option<u32>,
    /// Requests sent at each rate.
    #[arg(long, default_value_t = 1000, requires = "rate",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(sim_core::model::serving::MAX_PROMPTS)))]
    pub num_prompts: u32,
    /// Draw each request's prompt and output lengths uniformly on [len (1 - r), len (1 + r)], 0 <= r < 1
    /// (vLLM's random dataset).
    #[arg(long, requires = "rate", value_parser = parse_range_ratio, conflicts_with = "exponential_lengths")]
    pub random_range_ratio: Option<f64>,
    /// Draw each request's lengths as independent exponentials of the stated means (a conversation dataset
    /// such as ShareGPT; assumed shape).
    #[arg(long, requires = "rate")]
    pub exponential_lengths: bool,
    /// Seed of the arrival gaps and the lengths (the same seed gives the same answer).
    #[arg(long, default_value_t = 0, requires = "rate")]
    pub seed: u64,
}

impl RateSweep {
    /// The query for `modes`, or `None` without `--rate` (the closed-loop sweep).
    pub fn query(&self, modes: Vec<Mode>) -> Option<OpenLoopQuery> {
        if self.rate.is_empty() {
            return None;
        }
        let lengths = match (self.random_range_ratio, self.exponential_lengths) {
            (_, true) => LengthSpread::Exponential,
            (Some(r), false) if r > 0.0 => LengthSpread::Uniform { range_ratio: r },
            _ => LengthSpread::Fixed,
        };
        let load = OpenLoad {
            rate: self.rate[0],
            burstiness: self.burstiness,
            max_concurrency: self.max_concurrency,
            prompts: self.num_prompts,
            lengths,
            seed: self.seed,
        };
        Some(OpenLoopQuery { modes, rates: self.rate.clone(), load })
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    if s.trim().eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err("a request rate is a positive number of requests per second, or inf".into()),
    }
}

fn parse_burstiness(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(b) if b.is_finite() && b > 0.0 => Ok(b),
        _ => Err("the Gamma shape of the gaps is a positive finite number (1 is Poisson)".into()),
    }
}

fn parse_range_ratio(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if (0.0..1.0).contains(&r) => Ok(r),
        _ => Err("a range ratio is in [0, 1)".into()),
    }
}

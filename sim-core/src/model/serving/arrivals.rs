//! An open loop's requests as `vllm bench serve` sends them (`OpenLoad`): seeded arrival times and prompt and
//! output lengths, drawn once before the loop runs.
//!
//! Arrivals follow vLLM's `get_request` (vllm/benchmarks/serve.py): each request waits a Gamma-distributed gap of
//! shape `burstiness` and mean `1 / rate` after the one before it (the first after the benchmark's start), and the
//! cumulative delays are rescaled so the last request is sent at `prompts / rate` ("to close the gap for
//! stabilizing the throughput data from different random seeds"); an infinite rate sends every request at once.
//! Lengths follow vLLM's random dataset: integers uniform on `[floor(len (1 - r)), ceil(len (1 + r))]` for
//! `--random-range-ratio r`, outputs at least one token.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp, Gamma};
use serde::Serialize;

/// How a request's prompt and output lengths spread around the workload's stated ISL and OSL.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LengthSpread {
    /// Every request sends ISL and generates OSL tokens.
    Fixed,
    /// vLLM's random dataset with `--random-range-ratio`: uniform integers on `[floor(len (1 - r)),
    /// ceil(len (1 + r))]`, `0 <= r < 1`.
    Uniform { range_ratio: f64 },
    /// A conversation dataset such as ShareGPT: independent exponential lengths of mean ISL and OSL, rounded to
    /// whole tokens (at least one, at most `EXPONENTIAL_CAP` times the mean). Assumed: the maximum-entropy shape
    /// given only a mean, the shape the project already gives ShareGPT's output lengths (docs/data.md,
    /// `output_lengths`).
    Exponential,
}

/// The longest exponential length drawn, in multiples of the mean: `e^-8` (0.03%) of the draws reach it, so the
/// mean moves by less than that, and no draw exceeds a context the stated mean would fit many times.
pub const EXPONENTIAL_CAP: f64 = 8.0;

/// Most prompts one open-loop point sends: a bound that keeps one point's loop within a page redraw's budget.
pub const MAX_PROMPTS: u32 = 100_000;

/// How an open loop's client sends its requests (`vllm bench serve`'s flags).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OpenLoad {
    /// Requests per second offered (`--request-rate`); infinite sends every request at t = 0.
    pub rate: f64,
    /// Shape of the Gamma-distributed gaps (`--burstiness`): 1 is a Poisson process, below 1 burstier, above 1
    /// more even.
    pub burstiness: f64,
    /// Requests in flight at most (`--max-concurrency`): a request due while the cap is reached waits at the
    /// client until one finishes, and its latencies count from when it is sent.
    pub max_concurrency: Option<u32>,
    /// Requests sent in all (`--num-prompts`).
    pub prompts: u32,
    pub lengths: LengthSpread,
    /// Seed of the arrival gaps and the lengths: the same seed gives the same answer.
    pub seed: u64,
}

/// One request an open loop sends: when the client has it ready, and its prompt and output tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub arrival_s: f64,
    pub isl: f64,
    pub osl: f64,
}

/// An open load that cannot be sent, naming the flag at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpenLoadError {
    #[error("rate {0}: a request rate is a positive number of requests per second, or inf")]
    Rate(f64),
    #[error("burstiness {0}: the Gamma shape of the gaps is a positive finite number (1 is Poisson)")]
    Burstiness(f64),
    #[error("max_concurrency 0: at least one request must be allowed in flight")]
    MaxConcurrency,
    #[error("num_prompts {0}: outside 1..={MAX_PROMPTS}")]
    Prompts(u32),
    #[error("random_range_ratio {0}: outside [0, 1) (vLLM's random dataset draws on [len (1 - r), len (1 + r)])")]
    RangeRatio(f64),
}

impl OpenLoad {
    /// A Poisson load of `prompts` fixed-length requests at `rate`, without a cap, seeded with 0.
    pub fn poisson(rate: f64, prompts: u32) -> Self {
        OpenLoad { rate, burstiness: 1.0, max_concurrency: None, prompts, lengths: LengthSpread::Fixed, seed: 0 }
    }

    /// Whether the load can be sent, or the first flag at fault.
    pub fn check(&self) -> Result<(), OpenLoadError> {
        if self.rate.is_nan() || self.rate <= 0.0 {
            return Err(OpenLoadError::Rate(self.rate));
        }
        if !self.burstiness.is_finite() || self.burstiness <= 0.0 {
            return Err(OpenLoadError::Burstiness(self.burstiness));
        }
        if self.max_concurrency == Some(0) {
            return Err(OpenLoadError::MaxConcurrency);
        }
        if self.prompts == 0 || self.prompts > MAX_PROMPTS {
            return Err(OpenLoadError::Prompts(self.prompts));
        }
        if let LengthSpread::Uniform { range_ratio } = self.lengths {
            if !(0.0..1.0).contains(&range_ratio) {
                return Err(OpenLoadError::RangeRatio(range_ratio));
            }
        }
        Ok(())
    }

    /// The requests, in the order they are due, for a workload of `isl` prompt and `osl` output tokens.
    pub fn requests(&self, isl: u32, osl: u32) -> Result<Vec<Request>, OpenLoadError> {
        self.check()?;
        let n = self.prompts as usize;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let arrivals = self.arrival_times(&mut rng);
        let inputs = draw_lengths(&mut rng, self.lengths, f64::from(isl.max(1)), n, 1.0);
        let outputs = draw_lengths(&mut rng, self.lengths, f64::from(osl.max(1)), n, 1.0);
        Ok((0..n).map(|i| Request { arrival_s: arrivals[i], isl: inputs[i], osl: outputs[i] }).collect())
    }

    /// A coin per request, from its own stream of the seed: for a random router.
    pub fn coins(&self) -> Vec<bool> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ ROUTER_STREAM);
        (0..self.prompts).map(|_| rng.random_bool(0.5)).collect()
    }

    /// A copy per request, each of `copies` equally likely, from the router's stream of the seed: a random
    /// router over more than two copies (two copies keep `coins`).
    pub fn picks(&self, copies: usize) -> Vec<usize> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ ROUTER_STREAM);
        (0..self.prompts).map(|_| rng.random_range(0..copies.max(1))).collect()
    }

    /// vLLM's `get_request`: cumulative Gamma gaps (shape `burstiness`, scale `1 / (rate burstiness)`), rescaled
    /// so the last is sent at `prompts / rate`.
    fn arrival_times(&self, rng: &mut Xoshiro256PlusPlus) -> Vec<f64> {
        let n = self.prompts as usize;
        if self.rate.is_infinite() {
            return vec![0.0; n];
        }
        let Ok(gap) = Gamma::new(self.burstiness, 1.0 / (self.rate * self.burstiness)) else {
            // `check` admits only a positive finite shape and a positive rate: Gamma accepts them.
            return (1..=n).map(|i| i as f64 / self.rate).collect();
        };
        let mut t = 0.0;
        let mut times: Vec<f64> = (0..n)
            .map(|_| {
                t += gap.sample(rng);
                t
            })
            .collect();
        let last = times.last().copied().unwrap_or(0.0);
        if last > 0.0 {
            let scale = n as f64 / self.rate / last;
            times.iter_mut().for_each(|x| *x *= scale);
        }
        times
    }
}

/// Separates the router's coins from the arrivals' stream of the same seed (any odd constant; this is the
/// golden ratio's, as splitmix64 uses).
const ROUTER_STREAM: u64 = 0x9E37_79B9_7F4A_7C15;

/// `n` lengths around `len` as `spread` says, each at least `least` tokens.
fn draw_lengths(rng: &mut Xoshiro256PlusPlus, spread: LengthSpread, len: f64, n: usize, least: f64) -> Vec<f64> {
    match spread {
        LengthSpread::Fixed => vec![len; n],
        LengthSpread::Uniform { range_ratio } => {
            let lo = (len * (1.0 - range_ratio)).floor().max(least) as u64;
            let hi = ((len * (1.0 + range_ratio)).ceil() as u64).max(lo);
            (0..n).map(|_| rng.random_range(lo..=hi) as f64).collect()
        }
        LengthSpread::Exponential => match Exp::new(1.0 / len) {
            Ok(exp) => (0..n).map(|_| exp.sample(rng).round().clamp(least, EXPONENTIAL_CAP * len)).collect(),
            Err(_) => vec![len; n],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rate: f64, burstiness: f64, prompts: u32) -> OpenLoad {
        OpenLoad { burstiness, ..OpenLoad::poisson(rate, prompts) }
    }

    #[test]
    fn the_last_request_is_sent_at_prompts_over_rate_and_arrivals_only_grow() {
        for b in [0.5, 1.0, 4.0] {
            let r = load(2.0, b, 50).requests(512, 128).expect("valid");
            assert!((r[49].arrival_s - 25.0).abs() < 1e-9, "burstiness {b}: {}", r[49].arrival_s);
            assert!(r.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
            assert!(r[0].arrival_s > 0.0, "the first request waits its gap too");
        }
        let at_once = load(f64::INFINITY, 1.0, 4).requests(512, 128).expect("valid");
        assert!(at_once.iter().all(|q| q.arrival_s == 0.0));
    }

    /// Gaps of shape b have a coefficient of variation 1/sqrt(b): burstier loads spread their gaps more.
    #[test]
    fn burstiness_sets_the_spread_of_the_gaps() {
        let cv = |b: f64| {
            let r = load(1.0, b, 4000).requests(1, 1).expect("valid");
            let gaps: Vec<f64> = r.windows(2).map(|w| w[1].arrival_s - w[0].arrival_s).collect();
            let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
            var.sqrt() / mean
        };
        for (b, want) in [(0.25, 2.0), (1.0, 1.0), (4.0, 0.5)] {
            let got = cv(b);
            assert!((got - want).abs() < 0.1 * want, "burstiness {b}: cv {got}, want {want}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_requests_and_another_seed_others() {
        let a = OpenLoad { lengths: LengthSpread::Uniform { range_ratio: 0.9 }, ..load(0.5, 0.7, 100) };
        assert_eq!(a.requests(4000, 500), a.requests(4000, 500));
        assert_ne!(a.requests(4000, 500), OpenLoad { seed: 1, ..a }.requests(4000, 500));
        assert_eq!(a.coins(), a.coins());
    }

    /// `--random-range-ratio 0.9` on 4000/500: inputs on [399, 7600] (4000 (1 - 0.9) is 399.99999999999994 in
    /// floating point, as in vLLM's Python), outputs on [49, 950] (likewise), integers, both ends reached in 20,000 draws,
    /// mean near the stated length.
    #[test]
    fn uniform_lengths_stay_in_vllms_range() {
        let l = OpenLoad { lengths: LengthSpread::Uniform { range_ratio: 0.9 }, ..load(1.0, 1.0, 20_000) };
        let r = l.requests(4000, 500).expect("valid");
        let (lo, hi) = r.iter().fold((f64::MAX, 0.0_f64), |(lo, hi), q| (lo.min(q.isl), hi.max(q.isl)));
        assert_eq!((lo, hi), (399.0, 7600.0));
        let (lo, hi) = r.iter().fold((f64::MAX, 0.0_f64), |(lo, hi), q| (lo.min(q.osl), hi.max(q.osl)));
        assert_eq!((lo, hi), (49.0, 950.0));
        assert!(r.iter().all(|q| q.isl.fract() == 0.0 && q.osl.fract() == 0.0));
        let mean = r.iter().map(|q| q.osl).sum::<f64>() / r.len() as f64;
        assert!((mean - 500.0).abs() < 10.0, "{mean}");
    }

    #[test]
    fn exponential_lengths_keep_their_mean_within_the_cap() {
        let l = OpenLoad { lengths: LengthSpread::Exponential, ..load(1.0, 1.0, 20_000) };
        let r = l.requests(200, 300).expect("valid");
        let mean = r.iter().map(|q| q.osl).sum::<f64>() / r.len() as f64;
        assert!((mean - 300.0).abs() < 12.0, "{mean}");
        assert!(r.iter().all(|q| q.osl >= 1.0 && q.osl <= 2400.0 && q.isl <= 1600.0));
    }

    #[test]
    fn a_load_that_cannot_be_sent_names_its_flag() {
        assert_eq!(load(0.0, 1.0, 10).check(), Err(OpenLoadError::Rate(0.0)));
        assert!(matches!(load(f64::NAN, 1.0, 10).check(), Err(OpenLoadError::Rate(_))));
        assert_eq!(load(1.0, 0.0, 10).check(), Err(OpenLoadError::Burstiness(0.0)));
        assert_eq!(load(1.0, 1.0, 0).check(), Err(OpenLoadError::Prompts(0)));
        let capped = OpenLoad { max_concurrency: Some(0), ..load(1.0, 1.0, 10) };
        assert_eq!(capped.check(), Err(OpenLoadError::MaxConcurrency));
        let wide = OpenLoad { lengths: LengthSpread::Uniform { range_ratio: 1.0 }, ..load(1.0, 1.0, 10) };
        assert_eq!(wide.check(), Err(OpenLoadError::RangeRatio(1.0)));
        assert!(OpenLoadError::Rate(0.0).to_string().starts_with("rate 0"));
    }
}

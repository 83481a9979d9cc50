//! The rate sweep's inputs as they live in the URL (`vllm bench serve`'s flag names) and as sim-core's open load.

use sim_core::model::serving::{LengthSpread, OpenLoad};

/// The URL keys of the rate sweep, `vllm bench serve`'s flags with underscores.
pub const RATE_KEYS: [&str; 6] = ["rate", "burstiness", "max_concurrency", "num_prompts", "random_range_ratio", "seed"];

/// The rate sweep's inputs. Values are kept as given when they are numbers: whether they make a load is
/// sim-core's to say (`OpenLoad::check`), and the page shows its refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSweepState {
    /// Comma-separated request rates as typed (`rate=`), each a number of requests per second or `inf`.
    pub rates: String,
    /// Shape of the Gamma-distributed gaps (`burstiness=`; 1 is Poisson).
    pub burstiness: f64,
    /// Requests in flight at most (`max_concurrency=`); `None`: no cap.
    pub max_concurrency: Option<u32>,
    /// Requests sent at each rate (`num_prompts=`).
    pub prompts: u32,
    /// Lengths drawn uniformly on `len (1 -+ r)` (`random_range_ratio=`); 0 sends the stated lengths.
    pub range_ratio: f64,
    /// Seed of the gaps and lengths (`seed=`).
    pub seed: u64,
}

/// The rates a fresh view offers: a low load up to one that most scenarios cannot keep up with.
pub const DEFAULT_RATES: &str = "0.5,1,2,4";

/// Requests per rate a fresh view sends: a fifth of `vllm bench serve`'s 1000, so the page answers at once
/// (the field takes up to sim-core's `MAX_PROMPTS`).
pub const DEFAULT_PROMPTS: u32 = 200;

impl Default for RateSweepState {
    fn default() -> Self {
        RateSweepState {
            rates: DEFAULT_RATES.into(),
            burstiness: 1.0,
            max_concurrency: None,
            prompts: DEFAULT_PROMPTS,
            range_ratio: 0.0,
            seed: 0,
        }
    }
}

impl RateSweepState {
    /// Reads one of `RATE_KEYS`; a value that is not a number keeps the default and adds a warning.
    pub fn parse_field(&mut self, key: &str, v: &str, warn: &mut Vec<String>) {
        let t = v.trim();
        let bad =
            |warn: &mut Vec<String>, what: &str| warn.push(format!("{key}=`{v}` is not {what}; using the default"));
        match key {
            "rate" => self.rates = v.to_string(),
            "burstiness" => match t.parse::<f64>() {
                Ok(x) => self.burstiness = x,
                Err(_) => bad(warn, "a number"),
            },
            "max_concurrency" => match t.parse::<u32>() {
                Ok(x) => self.max_concurrency = Some(x),
                Err(_) => bad(warn, "a whole number of requests"),
            },
            "num_prompts" => match t.parse::<u32>() {
                Ok(x) => self.prompts = x,
                Err(_) => bad(warn, "a whole number of requests"),
            },
            "random_range_ratio" => match t.parse::<f64>() {
                Ok(x) => self.range_ratio = x,
                Err(_) => bad(warn, "a number"),
            },
            "seed" => match t.parse::<u64>() {
                Ok(x) => self.seed = x,
                Err(_) => bad(warn, "a whole number"),
            },
            _ => warn.push(format!("unknown parameter `{key}` ignored")),
        }
    }

    /// The fields that differ from the defaults, as (key, value) pairs for the query (the caller encodes them).
    pub fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let d = RateSweepState::default();
        let mut out = Vec::new();
        if self.rates != d.rates {
            out.push(("rate", self.rates.clone()));
        }
        if self.burstiness != d.burstiness {
            out.push(("burstiness", self.burstiness.to_string()));
        }
        if let Some(c) = self.max_concurrency {
            out.push(("max_concurrency", c.to_string()));
        }
        if self.prompts != d.prompts {
            out.push(("num_prompts", self.prompts.to_string()));
        }
        if self.range_ratio != d.range_ratio {
            out.push(("random_range_ratio", self.range_ratio.to_string()));
        }
        if self.seed != d.seed {
            out.push(("seed", self.seed.to_string()));
        }
        out
    }

    /// The rates as numbers (`inf` sends every request at once), or which entry is not one. Whether a number
    /// is a rate (positive) is sim-core's check.
    pub fn rate_list(&self) -> Result<Vec<f64>, String> {
        let items: Vec<&str> = self.rates.split(',').map(str::trim).filter(|r| !r.is_empty()).collect();
        if items.is_empty() {
            return Err("no request rate: enter one or more, comma-separated (e.g. 0.5,1,2 or inf)".into());
        }
        items
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if r.eq_ignore_ascii_case("inf") {
                    Ok(f64::INFINITY)
                } else {
                    r.parse::<f64>().map_err(|_| {
                        format!(
                            "rate {} (`{r}`): a request rate is a positive number of requests per second, or inf",
                            i + 1
                        )
                    })
                }
            })
            .collect()
    }

    /// The open load every rate shares (its `rate` is the first of `rates`; the query replaces it per rate).
    pub fn load(&self, first_rate: f64) -> OpenLoad {
        let lengths = if self.range_ratio == 0.0 {
            LengthSpread::Fixed
        } else {
            LengthSpread::Uniform { range_ratio: self.range_ratio }
        };
        OpenLoad {
            rate: first_rate,
            burstiness: self.burstiness,
            max_concurrency: self.max_concurrency,
            prompts: self.prompts,
            lengths,
            seed: self.seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_lists_read_numbers_and_inf_and_name_the_bad_entry() {
        let mut s = RateSweepState { rates: " 0.5, 2 ,inf".into(), ..Default::default() };
        assert_eq!(s.rate_list(), Ok(vec![0.5, 2.0, f64::INFINITY]));
        s.rates = "1,fast".into();
        let e = s.rate_list().unwrap_err();
        assert!(e.contains("rate 2 (`fast`)"), "{e}");
        s.rates = " , ".into();
        assert!(s.rate_list().is_err());
    }

    #[test]
    fn a_range_ratio_of_zero_sends_the_stated_lengths() {
        let s = RateSweepState::default();
        assert_eq!(s.load(1.0).lengths, LengthSpread::Fixed);
        let s = RateSweepState { range_ratio: 0.3, ..Default::default() };
        assert_eq!(s.load(1.0).lengths, LengthSpread::Uniform { range_ratio: 0.3 });
    }
}

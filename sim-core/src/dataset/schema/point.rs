//! One measured point of a sweep: throughput, flags, the latencies and run data stated beside it, and the
//! speculative decoding counters with the acceptance they imply.

use super::From;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// The text calls the point a dip or reports it "as collected".
    Dip,
    /// Measured on another checkpoint than the model's; shown for reference only.
    OtherCheckpoint,
    /// The run never held its stated concurrency: vLLM's `max_concurrent_requests` (the most requests in
    /// flight during any one second of the run, counted by the client over successful requests) is below
    /// `max_concurrency`. It reads as a run capped by KV capacity; fewer prompts than clients or
    /// failed requests do the same. The engine did not see the point's concurrency, so the fit leaves it out.
    ConcurrencyCapped,
    /// Requests were sent at a finite rate (`request_rate` not `"inf"`): arrivals, not the closed loop of
    /// `concurrency` clients the model describes, set the load.
    RateLimited,
}

impl Flag {
    pub fn name(self) -> &'static str {
        match self {
            Flag::Dip => "dip",
            Flag::OtherCheckpoint => "other_checkpoint",
            Flag::ConcurrencyCapped => "concurrency_capped",
            Flag::RateLimited => "rate_limited",
        }
    }
}

/// One measured throughput point. Beyond concurrency and throughput it may state what the benchmark tool
/// reported next to it (all optional, all sharing the point's `from`, whose quote must contain each number):
/// latencies in milliseconds (mean, median, 99th percentile), the request rate, the peak of requests in
/// flight, speculative decoding counters and the run's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PointRecord {
    pub concurrency: f64,
    pub output_tok_s: f64,
    #[serde(default)]
    pub flags: Vec<Flag>,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
    /// Time to first token, mean over the run unless the note says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ttft_ms: Option<f64>,
    /// Time per output token, first token excluded (mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_tpot_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_tpot_ms: Option<f64>,
    /// Inter-token latency: mean time between output tokens as the benchmark tool reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_itl_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_itl_ms: Option<f64>,
    /// End-to-end latency of a request (mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_e2el_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_e2el_ms: Option<f64>,
    /// Prompt tokens of all the level's requests over the window that prefilled them, tokens per second, where
    /// the source states it (llama-benchy's `pp total`): the machine's prefill rate once the prompts fill a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_tok_s: Option<f64>,
    /// Requests per second the benchmark sent: a number, or `"inf"` (each client sends its next request as
    /// soon as the last one finishes: the closed loop the model describes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<RequestRate>,
    /// Requests per second the run completed (vLLM's `request_throughput`: prompts over the time from the
    /// first send to the last finish). Below the offered `request_rate`, the machine did not keep up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_request_rate: Option<f64>,
    /// Prompts the run sent (`--num-prompts`); an open-loop run's duration covers all of them, drain included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_prompts: Option<u32>,
    /// The most requests in flight during any one second of the run, as vLLM's benchmark counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_requests: Option<u32>,
    /// Speculative decoding counters over the run, when the server reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_decode: Option<SpecDecode>,
    /// The run's setup and metadata as the tool wrote them (`backend`, `date`, `--metadata KEY=VALUE`, ...),
    /// values as text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

impl PointRecord {
    /// A point with only its concurrency, throughput and provenance.
    pub fn new(concurrency: f64, output_tok_s: f64, from: From) -> Self {
        PointRecord {
            concurrency,
            output_tok_s,
            flags: Vec::new(),
            from,
            note: None,
            ttft_ms: None,
            median_ttft_ms: None,
            p99_ttft_ms: None,
            tpot_ms: None,
            median_tpot_ms: None,
            p99_tpot_ms: None,
            itl_ms: None,
            median_itl_ms: None,
            p99_itl_ms: None,
            e2el_ms: None,
            median_e2el_ms: None,
            p99_e2el_ms: None,
            prefill_tok_s: None,
            request_rate: None,
            achieved_request_rate: None,
            num_prompts: None,
            max_concurrent_requests: None,
            spec_decode: None,
            metadata: BTreeMap::new(),
        }
    }

    /// The latencies the point states.
    pub fn latency(&self) -> PointLatency {
        PointLatency {
            ttft_ms: self.ttft_ms,
            median_ttft_ms: self.median_ttft_ms,
            p99_ttft_ms: self.p99_ttft_ms,
            tpot_ms: self.tpot_ms,
            median_tpot_ms: self.median_tpot_ms,
            p99_tpot_ms: self.p99_tpot_ms,
            itl_ms: self.itl_ms,
            median_itl_ms: self.median_itl_ms,
            p99_itl_ms: self.p99_itl_ms,
            e2el_ms: self.e2el_ms,
            median_e2el_ms: self.median_e2el_ms,
            p99_e2el_ms: self.p99_e2el_ms,
        }
    }

    /// Sets every latency from `l` (absent values clear the field).
    pub fn set_latency(&mut self, l: &PointLatency) {
        self.ttft_ms = l.ttft_ms;
        self.median_ttft_ms = l.median_ttft_ms;
        self.p99_ttft_ms = l.p99_ttft_ms;
        self.tpot_ms = l.tpot_ms;
        self.median_tpot_ms = l.median_tpot_ms;
        self.p99_tpot_ms = l.p99_tpot_ms;
        self.itl_ms = l.itl_ms;
        self.median_itl_ms = l.median_itl_ms;
        self.p99_itl_ms = l.p99_itl_ms;
        self.e2el_ms = l.e2el_ms;
        self.median_e2el_ms = l.median_e2el_ms;
        self.p99_e2el_ms = l.p99_e2el_ms;
    }
}

/// Latencies a publication or a benchmark tool states next to a throughput point, in milliseconds: the
/// latency fields of [`PointRecord`] as one value (`MeasuredPoint::latency`, `Dataset::latency`). Written
/// in the point's object: `{"concurrency": 1, "output_tok_s": 51.67, "ttft_ms": 406.77, "itl_ms": 18.58,
/// "from": {...}}`. Unprefixed keys are means; `median_` and `p99_` are the run's median and 99th percentile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PointLatency {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_tpot_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_tpot_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_itl_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_itl_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_e2el_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_e2el_ms: Option<f64>,
}

impl PointLatency {
    /// The keys a point object may carry for latencies, in the order `values` lists them.
    pub const KEYS: [&'static str; 12] = [
        "ttft_ms",
        "median_ttft_ms",
        "p99_ttft_ms",
        "tpot_ms",
        "median_tpot_ms",
        "p99_tpot_ms",
        "itl_ms",
        "median_itl_ms",
        "p99_itl_ms",
        "e2el_ms",
        "median_e2el_ms",
        "p99_e2el_ms",
    ];

    /// Each stated latency with its key.
    pub fn values(&self) -> Vec<(&'static str, f64)> {
        let all = [
            self.ttft_ms,
            self.median_ttft_ms,
            self.p99_ttft_ms,
            self.tpot_ms,
            self.median_tpot_ms,
            self.p99_tpot_ms,
            self.itl_ms,
            self.median_itl_ms,
            self.p99_itl_ms,
            self.e2el_ms,
            self.median_e2el_ms,
            self.p99_e2el_ms,
        ];
        Self::KEYS.into_iter().zip(all).filter_map(|(k, v)| v.map(|v| (k, v))).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.values().is_empty()
    }

    /// The mean gap between a request's output tokens after its first, ms: the stated mean TPOT, else the
    /// stated mean ITL where the tool defines ITL that way (NVIDIA's NIM benchmarking metrics page, reported
    /// elsewhere: "ITL = (e2e_latency - TTFT) / (Total_output_tokens - 1)", the NIM sweep's column).
    pub fn mean_tpot_ms(&self) -> Option<f64> {
        self.tpot_ms.or(self.itl_ms)
    }
}

/// How fast a benchmark sent requests: `{"request_rate": 4.0}` requests per second, or `"inf"` for no limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum RequestRate {
    PerSecond(f64),
    Unbounded(Unbounded),
}

/// The word vLLM writes for an unbounded request rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Unbounded {
    Inf,
}

impl RequestRate {
    /// Requests per second, `None` when unbounded.
    pub fn per_second(self) -> Option<f64> {
        match self {
            RequestRate::PerSecond(x) => Some(x),
            RequestRate::Unbounded(_) => None,
        }
    }
}

/// Speculative decoding over a run, as `vllm bench serve` reads it from the server's counters (the
/// `spec_decode_*` fields of its result, without the prefix). A draft is one proposal of up to k tokens for
/// one sequence; the target model verifies it in one step and keeps the accepted prefix plus one token of
/// its own (the bonus token).
///
/// - `acceptance_rate`: accepted / draft tokens, in percent (vLLM's unit).
/// - `acceptance_length`: 1 + accepted / drafts, the mean tokens a sequence gains per step, bonus included.
/// - `per_position_acceptance_rates[i]`: the share of drafts whose token i was accepted (0..1; a token is
///   accepted only when every one before it is, so the list does not increase).
///
/// The model's acceptance is a per-draft-token probability p with `(1 - p^(k+1)) / (1 - p)` tokens per step
/// (`model::batching`), so p is the root of that expression equal to the acceptance length
/// ([`SpecDecode::per_token_acceptance`]); under that geometric model position i is accepted with p^(i+1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SpecDecode {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance_length: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_drafts: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_position_acceptance_rates: Vec<f64>,
}

impl SpecDecode {
    /// Draft tokens proposed per draft (k): draft tokens / drafts, else the number of positions listed.
    pub fn draft_length(&self) -> Option<f64> {
        match (self.draft_tokens, self.num_drafts) {
            (Some(t), Some(n)) if n > 0 => Some(t as f64 / n as f64),
            _ if !self.per_position_acceptance_rates.is_empty() => {
                Some(self.per_position_acceptance_rates.len() as f64)
            }
            _ => None,
        }
    }

    /// Mean tokens per step, bonus included: from the counters when they are there, else as stated.
    pub fn tokens_per_step(&self) -> Option<f64> {
        match (self.accepted_tokens, self.num_drafts) {
            (Some(a), Some(n)) if n > 0 => Some(1.0 + a as f64 / n as f64),
            _ => self.acceptance_length.filter(|l| l.is_finite()),
        }
    }

    /// The model's per-draft-token acceptance p: the root of `(1 - p^(k+1)) / (1 - p) = L` for the measured
    /// acceptance length L and draft length k (bisection; the left side rises from 1 at p = 0 to k + 1 at
    /// p = 1). `None` without both, or when L lies outside [1, k + 1].
    pub fn per_token_acceptance(&self) -> Option<f64> {
        per_token_acceptance(self.tokens_per_step()?, self.draft_length()?)
    }
}

/// The per-draft-token acceptance p that gives `tokens_per_step` tokens per step with `k` draft tokens:
/// the root of `(1 - p^(k+1)) / (1 - p)` (= 1 + p + ... + p^k) equal to it. `None` when k is not positive
/// or the length lies outside [1, k + 1] (a measurement the geometric model cannot produce).
pub fn per_token_acceptance(tokens_per_step: f64, k: f64) -> Option<f64> {
    if !(k > 0.0 && k.is_finite() && tokens_per_step.is_finite()) {
        return None;
    }
    let eps = 1e-9;
    if tokens_per_step < 1.0 - eps || tokens_per_step > k + 1.0 + eps {
        return None;
    }
    // 1 + p + ... + p^k in closed form; k may be fractional (drafts cut short near a request's end average
    // below the configured length), and the limit at p = 1 is k + 1.
    let length = |p: f64| if p < 1.0 - 1e-12 { (1.0 - p.powf(k + 1.0)) / (1.0 - p) } else { k + 1.0 };
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if length(mid) < tokens_per_step {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::per_token_acceptance;

    /// Tokens per step with k drafts at per-token acceptance p: 1 + p + ... + p^k (what `model::batching` uses).
    fn length(p: f64, k: i32) -> f64 {
        (0..=k).map(|i| p.powi(i)).sum()
    }

    #[test]
    fn acceptance_length_converts_to_the_per_token_probability() {
        for k in [1, 3, 5] {
            for p in [0.0, 0.3, 0.6, 0.9, 0.99] {
                let got = per_token_acceptance(length(p, k), f64::from(k)).expect("in range");
                assert!((got - p).abs() < 1e-6, "k {k}, p {p}: {got}");
            }
        }
        // vLLM's acceptance rate is not p: 2 of 3 drafts accepted on average is a length of 3, p = 0.81.
        let p = per_token_acceptance(3.0, 3.0).expect("in range");
        assert!((length(p, 3) - 3.0).abs() < 1e-9 && (p - 0.8105).abs() < 1e-3, "{p}");
        // What the geometric model cannot produce, and nonsense, give nothing.
        assert_eq!(per_token_acceptance(0.9, 3.0), None);
        assert_eq!(per_token_acceptance(4.5, 3.0), None);
        assert_eq!(per_token_acceptance(2.0, 0.0), None);
        assert_eq!(per_token_acceptance(f64::NAN, 3.0), None);
        assert_eq!(per_token_acceptance(2.0, f64::INFINITY), None);
    }
}

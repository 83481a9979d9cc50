//! Sweep files: a publication's measured series, how it measured them (`Conditions`), ranges and totals.

use super::{From, Mode, PointRecord, Source};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    pub schema_version: u32,
    pub kind: String,
    /// Sources defined by this file itself (imported measurements name the file they were read from).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    /// The dataset the sweep belongs to (one publication's measurements); absent means the GB300 report's,
    /// `REPORT_DATASET`, the one the engine coefficients are fitted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    pub model: String,
    /// The scenario that describes the measured setup (machine, model, overrides); absent means the scenario
    /// named after the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// How the publication measured (required for a dataset other than the report's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Conditions>,
    pub series: Vec<Series>,
    #[serde(default)]
    pub totals: Vec<Total>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Series {
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub hardware: String,
    #[serde(default)]
    pub note: Option<String>,
    pub points: Vec<PointRecord>,
    #[serde(default)]
    pub ranges: Vec<RangeRecord>,
    #[serde(default)]
    pub unplaced: Vec<Unplaced>,
}

/// How a publication ran its measurements: the serving software and its settings, the benchmark and the load.
/// Structured so an engine profile can be chosen from it later; free text only where the source is free text.
/// Written as `"conditions"` at the top of a sweep file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Conditions {
    /// Serving engine: `vLLM`, `NVIDIA NIM`, ...
    pub engine: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// A named build or container of the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Command-line flags as given (`--enforce-eager`, `--async-scheduling`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_utilization: Option<f64>,
    /// Longest context the engine was started with, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_dtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_dtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_backend: Option<String>,
    /// Whether CUDA graphs were on (`--enforce-eager` turns them off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_graphs: Option<bool>,
    /// How the machines or GPUs were combined, per the source (`TP2 inside one machine over NVLink`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<String>,
    /// The router in front of independent copies, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<String>,
    /// Benchmark tool and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark_tool: Option<String>,
    /// `closed_loop` (fixed concurrency: each client sends its next request when the last one ends),
    /// `batch` (each run sends `concurrency` requests together and the next run starts when all have ended,
    /// as llama-benchy does; its scenario says `"load": "batch"`), `all_at_once` (`concurrency` prompts sent
    /// together once and throughput taken over the whole run, as vLLM's `bench serve --request-rate inf` does;
    /// its scenario says `"load": "all_at_once"`), or `open_loop` (requests sent at a finite rate: no fixed
    /// concurrency, which no loop here predicts).
    pub load: String,
    /// How an `open_loop` run spaced its requests and drew their lengths (vLLM's `bench serve` flags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopConditions>,
    /// Requests or runs per concurrency level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_per_level: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where the conditions are stated (one quote per sentence of the source); every number above must be in
    /// one of the quotes.
    pub from: Vec<From>,
}

/// The arrival process and length spread of an open-loop run, as `vllm bench serve` takes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OpenLoopConditions {
    /// Shape of the Gamma distribution of the gaps between requests (`--burstiness`): 1 is a Poisson process,
    /// below 1 burstier.
    pub burstiness: f64,
    /// Each input and output length drawn uniformly from (1 - r) to (1 + r) times the stated one
    /// (`--random-range-ratio`); absent: every request has the stated lengths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_range_ratio: Option<f64>,
    /// Whether a request may end before its drawn output length (`--ignore-eos` off): the stated output length
    /// is then an upper bound, not what each request produced.
    #[serde(default)]
    pub may_stop_early: bool,
}

impl Conditions {
    pub const LOADS: [&'static str; 4] = ["closed_loop", "batch", "all_at_once", "open_loop"];
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RangeRecord {
    pub concurrency_min: f64,
    pub concurrency_max: f64,
    pub output_tok_s_min: f64,
    pub output_tok_s_max: f64,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Unplaced {
    pub output_tok_s: Vec<f64>,
    #[serde(default)]
    pub likely_concurrency: Vec<f64>,
    pub reason: String,
    pub from: From,
    /// Total (input + output) tokens/s stated next to each value (same order), when the source gives it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub total_tok_s: Vec<f64>,
    /// Mean time to first token stated next to each value (same order), in milliseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ttft_ms: Vec<f64>,
    /// Mean time per output token (first token excluded) stated next to each value, in milliseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tpot_ms: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Total {
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: f64,
    pub total_tok_s: f64,
    #[serde(default)]
    pub note: Option<String>,
    pub from: From,
}

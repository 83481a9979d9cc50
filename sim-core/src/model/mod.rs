//! The performance model: where weights live (bandwidth), what the link costs (fabric), how one engine step
//! and a closed-loop sweep behave (batching), and how single, TP2 and PD put machines together (modes).
//!
//! Every coefficient below is labelled with its basis; `fit` replaces the fitted ones and says on which points.

pub mod bandwidth;
pub mod batching;
pub mod copies;
pub mod elementwise;
pub mod fabric;
pub mod latency;
pub mod modes;
pub mod nccl;
pub mod open_loop;
pub mod plausibility;
pub mod serving;
pub mod steady;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use modes::predict;

/// Engine coefficients shared by all models on a kind of hardware, plus per-model draft acceptance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coefficients {
    /// Share of HBM bandwidth reached streaming weights and KV (fitted; prior 0.8, typical of decode kernels).
    pub hbm_efficiency: f64,
    /// Share of the GPU's CPU-memory path reached reading spilled weights (fitted; prior 0.85: GH200
    /// C2C copies reach 363-381 GB/s of a 400-450 GB/s path, reported elsewhere).
    pub slow_efficiency: f64,
    /// Share of peak tensor FLOPs reached in large (prefill) steps (fitted; prior 0.35).
    pub compute_efficiency: f64,
    /// Fixed cost of one engine step: scheduling, kernel launches, sampling (fitted; prior 4 ms).
    pub step_overhead_s: f64,
    /// Added cost per sequence in a step (fitted; prior 50 us).
    pub per_seq_overhead_s: f64,
    /// Added cost per sequence in a step of a model that drafts: the speculative-decoding bookkeeping around
    /// the drafter (fitted; prior 100 us; vllm#15029, vllm-ascend#16638 report it dominating large batches).
    pub spec_per_seq_overhead_s: f64,
    /// Multiplier on the link's per-call collective latency inside an engine step (fitted on pair points
    /// only; 1.0 in the single-station fit, where no point can inform it).
    pub tp_latency_scale: f64,
    /// Fixed cost of each decoder layer in every step, whatever the batch: its kernels' launches, ramp-up and
    /// drain (fitted; prior 20 us). A model with more layers pays more per step; `step_overhead_s` is what
    /// the step pays once (scheduling, sampling). A draft pass pays it for each of its own layers. Absent from
    /// older serialised coefficients: 0.
    #[serde(default)]
    pub per_layer_overhead_s: f64,
    /// A request's time outside the engine's steps before its first token reaches the client: the API server's
    /// HTTP handling, chat template and tokenization before the scheduler sees it, detokenization and streaming
    /// of the token after (assumed 20 ms, `REQUEST_OVERHEAD_S`). Added to TTFT and end-to-end latency, not to a
    /// step: the engine's own loop runs on. Absent from older serialised coefficients: 0.
    #[serde(default)]
    pub request_overhead_s: f64,
    /// Share of GPU memory a deployment that must offload weights keeps free of them for KV cache, activations
    /// and runtime (derived: (252 GB - (433 GB - 215 GB)) / 252 GB = 34/252, from GLM-5.2's published checkpoint
    /// and offload on one station). Weights that fit the memory share are not offloaded (`bandwidth::offloaded_bytes`).
    /// The 252 GB is the seeds' figure, kept though the driver reports 269.17 GB on such a station: the open
    /// question is recorded in data/hardware/gb300-station.json.
    pub hbm_reserve_fraction: f64,
    /// Of GPU memory, the share activations, CUDA graphs and the runtime take (assumed 8 GB of 252; the rest of
    /// the reserve is KV cache).
    pub runtime_reserve_fraction: f64,
    /// Tokens one engine step takes at most (vLLM's `--max-num-batched-tokens`); 0: the engine's own default for
    /// the GPU it runs on (`Coefficients::batch_limits`).
    pub prefill_chunk_tokens: f64,
    /// Tokens per KV cache block (vLLM's default `--block-size` 16, reported elsewhere: docs/domain.md 3c), one value
    /// per engine build whatever the model. vLLM picks larger pages for some backends: FlashMLA's kernels take
    /// 64-token blocks (vllm/v1/attention/backends/mla/flashmla.py), and a hybrid model's attention pages grow
    /// until one holds a linear layer's whole state (`HybridAttentionMambaModelConfig` in
    /// vllm/model_executor/models/config.py). Kept at the engine's one value by choice: a block rounds a
    /// sequence's KV up by less than one block, under 1% of a 9k-token MLA sequence at 64; the open case is a
    /// hybrid model at short contexts (GLM-5.3-Flash's state-sized pages), where the rounding can exceed the
    /// sequence's own attention KV but stays small beside its linear state.
    pub kv_block_tokens: f64,
    /// Most requests running at once (vLLM's `--max-num-seqs`); 0: the engine's own default for the GPU it runs
    /// on (`Coefficients::batch_limits`).
    pub max_num_seqs: f64,
    /// The KV pool as a share of the memory the weights leave free, when the engine sizes it so (TensorRT-LLM's
    /// `KvCacheConfig.free_gpu_memory_fraction`, 0.9 by default); 0 sizes it as vLLM and SGLang do, a share of all
    /// memory less the weights (`runtime_reserve_fraction`). TensorRT-LLM measures the free memory after it has
    /// loaded the weights and allocated its runtime buffers (the TensorRT engine's activation memory; the PyTorch
    /// backend's `KvCacheCreator` after a profiling forward pass), so under this rule the pool is the share of
    /// memory less the weights and `runtime_reserve_fraction` (decided from TensorRT-LLM's docs and sources over
    /// taking the share of memory less the weights alone, which counted the runtime's buffers as KV: NIM's
    /// Llama-3.3-70B on H100 held 50 requests, ~47 with them taken first).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kv_free_memory_fraction: f64,
    /// 1: every weight GEMM runs at the share of the tensor peak the machine's kernel table measured for its
    /// intensity (`spec::GemmCurves`, `data/kernels/`), and a fit holds `compute_efficiency` at 1 rather than
    /// fitting it; 0 (the default): the GEMMs run at the roofline times one fitted `compute_efficiency`. A
    /// setting a profile states, never fitted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gemm_from_kernel_table: f64,
    /// How the scheduler admits requests against the KV pool (an engine choice: vLLM preempts, TensorRT-LLM by
    /// default reserves a request's whole KV before it starts).
    #[serde(default)]
    pub admission: Admission,
    /// The grouped-GEMM kernel the build multiplies routed experts with, whose row tile pads each touched
    /// expert's tokens (an engine choice, stated by the profile with its source; unpadded by default).
    #[serde(default, skip_serializing_if = "MoeKernel::is_unpadded")]
    pub moe_kernel: MoeKernel,
    /// Scales the MoE kernel's row tile: 1, as the kernel's source sizes it. Only the sensitivity table moves it
    /// (the report's kernel is an assumption: `explore::protocol`); not read from data files.
    #[serde(skip, default = "unscaled")]
    pub moe_tile_scale: f64,
    /// Whether a preempted request's freed blocks stay in the prefix cache until something evicts them, so its
    /// recompute skips what survives (vLLM V1, `--enable-prefix-caching` on by default). Off, a preemption
    /// recomputes the whole context, as a scheduler without prefix hits does (inference-lab's synthetic
    /// requests: the cross-check past the KV pool's edge). Not read from data files: no engine profile here
    /// turns it off, and the page's bundle keeps no code to read it.
    #[serde(skip, default = "prefix_caching_on")]
    pub prefix_caching: bool,
    /// Shared coefficients a fit held at their prior because its points could not tell them apart from
    /// another (`fit`), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_at_prior: Vec<String>,
    /// Per-model draft acceptance (fitted per model where its points allow), keyed by model id.
    pub acceptance: std::collections::BTreeMap<String, f64>,
    /// Per-model routing share of the experts that spill to CPU memory, relative to uniform routing (fitted per
    /// model that spills, on its points; prior 1.0 = uniform). Below 1 means the engine offloaded colder
    /// experts: docs/domain.md's "a skew parameter is legitimate if it is calibrated and reported".
    pub spilled_routing_share: std::collections::BTreeMap<String, f64>,
}

/// The time a request spends outside the engine's steps before its first token reaches the client (assumed):
/// the floor of a short prompt's TTFT with one request in flight, less its prefill. SGLang's cookbook run of
/// DeepSeek-OCR (3B) at one request in flight reads a mean TTFT of 21.6 ms (median 20.9 ms) for about 200 prompt
/// tokens, whose prefill on one GPU takes a few ms; tokenization alone costs 10-21 us a token with the chat
/// template (tenstorrent/tt-inference-server#2173: 131 tokens in 1.3-2.8 ms). Not fitted: no dataset here states a
/// TTFT at a load light enough to read it, and an engine profile may state its own.
pub const REQUEST_OVERHEAD_S: f64 = 20e-3;

impl Default for Coefficients {
    fn default() -> Self {
        Self {
            hbm_efficiency: 0.8,
            slow_efficiency: 0.85,
            compute_efficiency: 0.35,
            step_overhead_s: 4e-3,
            per_seq_overhead_s: 50e-6,
            spec_per_seq_overhead_s: 100e-6,
            tp_latency_scale: 1.0,
            per_layer_overhead_s: 20e-6,
            request_overhead_s: REQUEST_OVERHEAD_S,
            hbm_reserve_fraction: 34.0 / 252.0,
            runtime_reserve_fraction: 8.0 / 252.0,
            prefill_chunk_tokens: 0.0,
            kv_block_tokens: 16.0,
            max_num_seqs: 0.0,
            kv_free_memory_fraction: 0.0,
            gemm_from_kernel_table: 0.0,
            admission: Admission::default(),
            moe_kernel: MoeKernel::Unpadded,
            moe_tile_scale: 1.0,
            prefix_caching: true,
            held_at_prior: Vec::new(),
            acceptance: Default::default(),
            spilled_routing_share: Default::default(),
        }
    }
}

pub use crate::dataset::schema::{removed_engine_coefficient, Admission, MoeKernel, ENGINE_COEFFICIENTS};

fn prefix_caching_on() -> bool {
    true
}

fn unscaled() -> f64 {
    1.0
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// The engine coefficients a profile states rather than fits: memory shares, the prefill chunk, the KV block
/// size and the sequence cap. A fit never frees them (`fit`), so where one fit spans several engine builds
/// (the accuracy protocol's leave-one-out) each build keeps its own. They are `ENGINE_COEFFICIENTS` after the
/// eight a fit frees (`fit::PLAUSIBLE`; test `every_engine_coefficient_is_fitted_or_a_setting`).
pub const ENGINE_SETTINGS: &[&str] = ENGINE_COEFFICIENTS.split_at(8).1;

/// What an engine profile states about how its build runs, apart from what a fit finds: its admission policy
/// and its given `ENGINE_SETTINGS` values (vLLM's `gpu_memory_utilization` as memory shares, say), following
/// its `based_on` chain. Laid over fitted coefficients, it gives that build's coefficients.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineSettings {
    admission: Option<Admission>,
    moe_kernel: Option<MoeKernel>,
    /// Each `(name, value)` is one of `ENGINE_SETTINGS` with a value `Coefficients::set_named` accepts.
    values: Vec<(&'static str, f64)>,
}

impl EngineSettings {
    /// Takes the admission policy and the MoE kernel (when stated) and every given value whose name is a setting;
    /// fitted coefficients a profile gives (the fit's starting points) and unusable values are left out.
    pub fn state(
        &mut self,
        admission: Option<Admission>,
        moe_kernel: Option<MoeKernel>,
        given: impl IntoIterator<Item = (String, f64)>,
    ) {
        if admission.is_some() {
            self.admission = admission;
        }
        if moe_kernel.is_some() {
            self.moe_kernel = moe_kernel;
        }
        for (name, v) in given {
            let Some(setting) = ENGINE_SETTINGS.iter().find(|s| **s == name) else { continue };
            if Coefficients::default().set_named(setting, v).is_err() {
                continue;
            }
            self.values.retain(|(n, _)| n != setting);
            self.values.push((setting, v));
        }
    }

    /// True when the profile states nothing beyond the defaults' own choices.
    pub fn is_empty(&self) -> bool {
        self.admission.is_none() && self.moe_kernel.is_none() && self.values.is_empty()
    }

    /// `k` under the settings of scenario `scenario`'s build, from a map by scenario id; `None` where that build
    /// states nothing (then `k` itself applies): what a fit across engine builds and its predictions both use.
    pub fn of_scenario(
        settings: &BTreeMap<String, EngineSettings>,
        scenario: &str,
        k: &Coefficients,
    ) -> Option<Coefficients> {
        settings.get(scenario).filter(|st| !st.is_empty()).map(|st| st.applied_to(k))
    }

    /// `k` with this build's settings in place of its own.
    pub fn applied_to(&self, k: &Coefficients) -> Coefficients {
        let mut out = k.clone();
        if let Some(a) = self.admission {
            out.admission = a;
        }
        if let Some(kernel) = self.moe_kernel {
            out.moe_kernel = kernel;
        }
        for &(name, v) in &self.values {
            // Checked in `state`: every name is a setting and every value acceptable.
            let _ = out.set_named(name, v);
        }
        out
    }
}

impl Coefficients {
    /// The acceptance to use for a model: fitted if present, else the model card's prior.
    pub fn acceptance_for(&self, model: &crate::spec::ModelSpec) -> f64 {
        self.acceptance.get(&model.id).copied().unwrap_or(model.draft_acceptance)
    }

    /// The routing share of a model's spilled experts: fitted if present, else uniform.
    pub fn spilled_routing_share_for(&self, model: &crate::spec::ModelSpec) -> f64 {
        self.spilled_routing_share.get(&model.id).copied().unwrap_or(1.0)
    }

    /// The free coefficients as a scenario's `calibration` map (per-model values under plain keys).
    pub fn calibration_map(&self, model: &crate::spec::ModelSpec) -> std::collections::BTreeMap<String, f64> {
        let mut map: std::collections::BTreeMap<String, f64> = [
            ("hbm_efficiency", self.hbm_efficiency),
            ("slow_efficiency", self.slow_efficiency),
            ("compute_efficiency", self.compute_efficiency),
            ("step_overhead_s", self.step_overhead_s),
            ("per_seq_overhead_s", self.per_seq_overhead_s),
            ("spec_per_seq_overhead_s", self.spec_per_seq_overhead_s),
            ("tp_latency_scale", self.tp_latency_scale),
            ("per_layer_overhead_s", self.per_layer_overhead_s),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        map.insert("acceptance".into(), self.acceptance_for(model));
        map.insert("spilled_routing_share".into(), self.spilled_routing_share_for(model));
        map
    }

    /// Applies a scenario's `calibration` map (as written by `calibration_map`) for model `model_id`.
    /// Unknown keys are ignored.
    pub fn apply_calibration_map(&mut self, model_id: &str, map: &std::collections::BTreeMap<String, f64>) {
        for (key, v) in map {
            match key.as_str() {
                "hbm_efficiency" => self.hbm_efficiency = *v,
                "slow_efficiency" => self.slow_efficiency = *v,
                "compute_efficiency" => self.compute_efficiency = *v,
                "step_overhead_s" => self.step_overhead_s = *v,
                "per_seq_overhead_s" => self.per_seq_overhead_s = *v,
                "spec_per_seq_overhead_s" => self.spec_per_seq_overhead_s = *v,
                "tp_latency_scale" => self.tp_latency_scale = *v,
                "per_layer_overhead_s" => self.per_layer_overhead_s = *v,
                "acceptance" => {
                    self.acceptance.insert(model_id.to_string(), *v);
                }
                "spilled_routing_share" => {
                    self.spilled_routing_share.insert(model_id.to_string(), *v);
                }
                _ => {}
            }
        }
    }

    /// Sets one engine coefficient by name (an engine profile's `coefficients` entry, SI value).
    pub fn set_named(&mut self, name: &str, v: f64) -> Result<(), String> {
        let field = match name {
            "hbm_efficiency" => &mut self.hbm_efficiency,
            "slow_efficiency" => &mut self.slow_efficiency,
            "compute_efficiency" => &mut self.compute_efficiency,
            "step_overhead_s" => &mut self.step_overhead_s,
            "per_seq_overhead_s" => &mut self.per_seq_overhead_s,
            "spec_per_seq_overhead_s" => &mut self.spec_per_seq_overhead_s,
            "tp_latency_scale" => &mut self.tp_latency_scale,
            "per_layer_overhead_s" => &mut self.per_layer_overhead_s,
            "request_overhead_s" => &mut self.request_overhead_s,
            "hbm_reserve_fraction" => &mut self.hbm_reserve_fraction,
            "runtime_reserve_fraction" => &mut self.runtime_reserve_fraction,
            "prefill_chunk_tokens" => &mut self.prefill_chunk_tokens,
            "kv_block_tokens" => &mut self.kv_block_tokens,
            "max_num_seqs" => &mut self.max_num_seqs,
            "kv_free_memory_fraction" => &mut self.kv_free_memory_fraction,
            "gemm_from_kernel_table" => &mut self.gemm_from_kernel_table,
            _ => {
                return Err(removed_engine_coefficient(name).unwrap_or_else(|| {
                    format!("unknown engine coefficient `{name}`; known: {}", ENGINE_COEFFICIENTS.join(", "))
                }))
            }
        };
        // A share of free memory is at most all of it.
        let most =
            if name == "kv_free_memory_fraction" || name == "gemm_from_kernel_table" { 1.0 } else { f64::INFINITY };
        if !v.is_finite() || v < 0.0 || v > most {
            return Err(format!("engine coefficient `{name}` must be a finite number from 0 to {most}, got {v}"));
        }
        if name == "gemm_from_kernel_table" && v != 0.0 && v != 1.0 {
            return Err(format!(
                "engine coefficient `{name}` is 0 (a fitted compute efficiency) or 1 (the kernel table), got {v}"
            ));
        }
        *field = v;
        Ok(())
    }

    /// Whether the weight GEMMs run at the kernel table's measured curve (`gemm_from_kernel_table`).
    pub fn gemms_from_kernel_table(&self) -> bool {
        self.gemm_from_kernel_table == 1.0
    }

    /// Whether the weight GEMMs run at a kernel table's curve on `hw`: the profile reads the table and the
    /// machine has one (its own or carried over). The curve is then the whole GEMM efficiency: the compute
    /// efficiency goes unused.
    #[inline]
    pub fn gemms_at_table_curve(&self, hw: &crate::spec::HardwareSpec) -> bool {
        self.gemms_from_kernel_table() && hw.gemm.measured()
    }

    /// Each coefficient with its value and basis, for reports and the browser.
    pub fn describe(&self, fitted_on: &str) -> Vec<(String, f64, String)> {
        let fit = |what: &str| format!("fitted on {fitted_on} ({what})");
        // `why`: what the fitted points lack when the coefficient is held.
        let fit_or_held = |name: &str, what: &str, why: &str| {
            if self.held_at_prior.iter().any(|h| h == name) {
                format!("held at its prior ({what}): in {fitted_on} {why}")
            } else {
                fit(what)
            }
        };
        let per_seq_why = "every model drafts or none does, so the two per-sequence costs cannot be told apart";
        let mut rows = vec![
            ("hbm_efficiency".to_string(), self.hbm_efficiency, fit("prior 0.8")),
            ("slow_efficiency".into(), self.slow_efficiency, fit("prior 0.85")),
            (
                "compute_efficiency".into(),
                self.compute_efficiency,
                if self.held_at_prior.iter().any(|h| h == "compute_efficiency") {
                    "held at 1: every fitted machine's GEMMs run at the share of the tensor peak its kernel table \
                     measured (data/kernels/, a curve against intensity over the ridge), not at a fitted scalar"
                        .to_string()
                } else {
                    fit("prior 0.35")
                },
            ),
            ("step_overhead_s".into(), self.step_overhead_s, fit("prior 4 ms")),
            (
                "per_seq_overhead_s".into(),
                self.per_seq_overhead_s,
                fit_or_held("per_seq_overhead_s", "prior 50 us", per_seq_why),
            ),
            (
                "spec_per_seq_overhead_s".into(),
                self.spec_per_seq_overhead_s,
                fit_or_held("spec_per_seq_overhead_s", "prior 100 us; only models that draft", per_seq_why),
            ),
            ("tp_latency_scale".into(), self.tp_latency_scale, fit("1.0 when no pair point is fitted")),
            (
                "per_layer_overhead_s".into(),
                self.per_layer_overhead_s,
                fit_or_held(
                    "per_layer_overhead_s",
                    "prior 20 us",
                    "every model has the same layer count, so the per-layer and per-step costs cannot be told apart",
                ),
            ),
            (
                "request_overhead_s".into(),
                self.request_overhead_s,
                "assumed: a request's path outside the engine's steps (HTTP, template, tokenizer, streaming), \
                 REQUEST_OVERHEAD_S"
                    .into(),
            ),
            (
                "hbm_reserve_fraction".into(),
                self.hbm_reserve_fraction,
                "derived: (252 GB - (433 GB - 215 GB)) / 252 GB, GLM-5.2 on one station".into(),
            ),
            (
                "runtime_reserve_fraction".into(),
                self.runtime_reserve_fraction,
                "assumed: 8 GB of 252 for activations, CUDA graphs, runtime".into(),
            ),
            ("prefill_chunk_tokens".into(), self.prefill_chunk_tokens, batch_basis(self.prefill_chunk_tokens)),
            ("kv_block_tokens".into(), self.kv_block_tokens, "reported elsewhere: vLLM's default --block-size".into()),
            ("max_num_seqs".into(), self.max_num_seqs, batch_basis(self.max_num_seqs)),
        ];
        for (m, a) in &self.acceptance {
            rows.push((format!("acceptance[{m}]"), *a, fit("per model, prior from the model card")));
        }
        for (m, a) in &self.spilled_routing_share {
            rows.push((
                format!("spilled_routing_share[{m}]"),
                *a,
                fit("per spilling model, prior 1.0 = uniform routing"),
            ));
        }
        rows
    }
}

/// How a batch limit was obtained, for `Coefficients::describe`: stated by the profile, or vLLM's default for the
/// GPU (0; `Coefficients::batch_limits`).
fn batch_basis(value: f64) -> String {
    if value > 0.0 { "stated by the engine profile" } else { "0: vLLM's default for the GPU (batch_limits)" }.into()
}

/// What one engine step may carry: a token budget (prompt chunks and decodes together) and the most requests
/// running at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchLimits {
    pub tokens_per_step: f64,
    pub max_seqs: f64,
}

/// `vllm serve`'s defaults when a deployment sets neither limit, on a GPU with at least 70 GiB that is not an
/// A100 (vllm-project/vllm, vllm/engine/arg_utils.py, `EngineArgs._set_default_args`: "For GPUs like H100 and
/// MI300x, use larger default values", `default_max_num_batched_tokens` 8192 and `default_max_num_seqs` 1024 for
/// the OpenAI server; reported elsewhere).
pub const VLLM_LARGE_GPU_LIMITS: BatchLimits = BatchLimits { tokens_per_step: 8192.0, max_seqs: 1024.0 };

/// The same defaults on smaller GPUs and on A100s (the same function: 2048 and 256).
pub const VLLM_SMALL_GPU_LIMITS: BatchLimits = BatchLimits { tokens_per_step: 2048.0, max_seqs: 256.0 };

/// GPU memory from which vLLM takes its larger defaults (70 GiB, as `current_platform.get_device_total_memory()`
/// reports it: the driver's total, which `HardwareSpec::gpu_memory_bytes` holds).
const VLLM_LARGE_GPU_BYTES: f64 = 70.0 * 1024.0 * 1024.0 * 1024.0;

impl Coefficients {
    /// The batch limits an engine runs with on `hw`: the profile's where it states them, else vLLM's defaults for
    /// that GPU, where a defaulted sequence cap never exceeds the token budget (vLLM takes the smaller).
    pub fn batch_limits(&self, hw: &crate::spec::HardwareSpec) -> BatchLimits {
        let large = hw.gpu_memory_bytes >= VLLM_LARGE_GPU_BYTES && !hw.name.to_ascii_lowercase().contains("a100");
        let default = if large { VLLM_LARGE_GPU_LIMITS } else { VLLM_SMALL_GPU_LIMITS };
        let tokens_per_step =
            if self.prefill_chunk_tokens > 0.0 { self.prefill_chunk_tokens } else { default.tokens_per_step };
        let max_seqs = if self.max_num_seqs > 0.0 { self.max_num_seqs } else { default.max_seqs.min(tokens_per_step) };
        BatchLimits { tokens_per_step, max_seqs }
    }
}

/// What limits a prediction most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bottleneck {
    HbmBandwidth,
    SlowPathBandwidth,
    Compute,
    Link,
    Overhead,
    KvCapacity,
    PrefillRate,
    DoesNotFit,
    /// The mode cannot run this model (expert parallel on a dense model).
    NoExperts,
}

impl Bottleneck {
    pub fn name(self) -> &'static str {
        match self {
            Bottleneck::HbmBandwidth => "hbm_bandwidth",
            Bottleneck::SlowPathBandwidth => "slow_path_bandwidth",
            Bottleneck::Compute => "compute",
            Bottleneck::Link => "link",
            Bottleneck::Overhead => "engine_overhead",
            Bottleneck::KvCapacity => "kv_capacity",
            Bottleneck::PrefillRate => "prefill_rate",
            Bottleneck::DoesNotFit => "does_not_fit",
            Bottleneck::NoExperts => "no_experts_to_split",
        }
    }
}

/// One predicted point of a closed-loop sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub mode: crate::Mode,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    pub output_tok_s: f64,
    /// Time to first token, seconds (prefill, KV transfer in PD, and waiting).
    #[serde(deserialize_with = "crate::non_finite::null_as_infinity")]
    pub ttft_s: f64,
    /// Time per output token once decoding, seconds.
    #[serde(deserialize_with = "crate::non_finite::null_as_infinity")]
    pub tpot_s: f64,
    /// Mean decode step time, seconds.
    #[serde(deserialize_with = "crate::non_finite::null_as_infinity")]
    pub step_s: f64,
    /// Sequences decoding at once, and the KV cache's limit on that number.
    pub resident_seqs: f64,
    pub max_resident_seqs: f64,
    pub bottleneck: Bottleneck,
    /// Tokens accepted per sequence per step (speculative decoding).
    pub tokens_per_step: f64,
    /// Times a request was preempted (KV blocks ran out and it was recomputed), on average.
    pub preemptions_per_request: f64,
    /// Mean share of the KV block pool in use.
    pub kv_utilization: f64,
    /// Mean time a request waited before its prompt was first scheduled, seconds.
    pub queue_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::HardwareSpec;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    #[test]
    fn an_engine_that_states_no_batch_limits_takes_vllms_defaults_for_the_gpu() {
        let k = Coefficients::default();
        // An H100 80GB as the driver reports it (79.6 GiB), a 32 GB card, an A100 80GB (excepted by name).
        let h100 = HardwareSpec::one_gpu_for_tests(81_559.0 * 1024.0 * 1024.0, 3.35e12);
        let small = HardwareSpec::one_gpu_for_tests(32.0 * GIB, 1.8e12);
        let a100 =
            HardwareSpec { name: "NVIDIA A100-SXM4-80GB".into(), ..HardwareSpec::one_gpu_for_tests(80.0 * GIB, 2e12) };
        assert_eq!(k.batch_limits(&h100), BatchLimits { tokens_per_step: 8192.0, max_seqs: 1024.0 });
        assert_eq!(k.batch_limits(&small), BatchLimits { tokens_per_step: 2048.0, max_seqs: 256.0 });
        assert_eq!(k.batch_limits(&a100), VLLM_SMALL_GPU_LIMITS);
        // The threshold is 70 GiB of what the driver reports, not 70 GB.
        assert_eq!(k.batch_limits(&HardwareSpec::one_gpu_for_tests(70.0 * GIB - 1.0, 1e12)), VLLM_SMALL_GPU_LIMITS);
        assert_eq!(k.batch_limits(&HardwareSpec::one_gpu_for_tests(70.0 * GIB, 1e12)), VLLM_LARGE_GPU_LIMITS);
    }

    #[test]
    fn a_stated_batch_limit_wins_and_a_defaulted_cap_never_exceeds_the_token_budget() {
        let h100 = HardwareSpec::one_gpu_for_tests(81_559.0 * 1024.0 * 1024.0, 3.35e12);
        let stated = Coefficients { prefill_chunk_tokens: 4096.0, max_num_seqs: 64.0, ..Coefficients::default() };
        assert_eq!(stated.batch_limits(&h100), BatchLimits { tokens_per_step: 4096.0, max_seqs: 64.0 });
        // vLLM: max_num_seqs = min(default, max_num_batched_tokens) when only the budget is given.
        let budget = Coefficients { prefill_chunk_tokens: 512.0, ..Coefficients::default() };
        assert_eq!(budget.batch_limits(&h100), BatchLimits { tokens_per_step: 512.0, max_seqs: 512.0 });
    }
}

//! Engine profiles: what the serving software achieves (fitted or given coefficients, admission, MoE kernel).

use super::{Basis, Mode, Quantity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the serving software achieves, apart from the hardware's physics and the model's geometry: an engine
/// profile. Either fitted on a dataset (the engine build those points were measured with) or given as fixed
/// values, each with its basis (the ideal roofline profile).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EngineFile {
    pub schema_version: u32,
    pub kind: String,
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The engine's free coefficients are fitted on these points.
    #[serde(default)]
    pub fitted_on: Option<FittedOn>,
    /// Coefficients given rather than fitted (see `model::Coefficients` for the names), each with its basis;
    /// with `fitted_on`, they are where the fit starts.
    #[serde(default)]
    pub coefficients: BTreeMap<String, Quantity>,
    /// Start from another profile's coefficients (fitted or given) instead of the defaults: an engine build
    /// no sweep here measures, which differs from a measured one only in what `coefficients` and `admission`
    /// state. Exclusive with `fitted_on`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub based_on: Option<String>,
    /// The scheduler's admission policy against the KV pool (absent: vLLM's, preempt the newest), with its basis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<AdmissionChoice>,
    /// The grouped-GEMM kernel the build runs a MoE model's routed experts with, which decides the row tile each
    /// touched expert's tokens are padded to (absent: inherited along `based_on`, else unpadded), with its basis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe_kernel: Option<MoeKernelChoice>,
    /// Hardware ids whose scenarios use this profile when they name none (the machines this build was measured
    /// on); `*` makes it the profile of every other machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_for: Vec<String>,
    /// The efficiencies (`hbm_efficiency`, `slow_efficiency`, `compute_efficiency`) come from the microbenchmarks
    /// of the scenario's hardware file (`microbenchmarks`: achieved / spec, or the GEMM fraction) where it gives
    /// them; where it does not, the profile's own `coefficients` (or the defaults) stand. Resolved per scenario
    /// (`explore::engine`); not inherited through `based_on`, and not with `fitted_on`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub efficiencies_from_microbenchmarks: bool,
    #[serde(default)]
    pub note: Option<String>,
}

/// An engine profile's admission policy and why it is that one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AdmissionChoice {
    pub policy: Admission,
    pub basis: Basis,
    /// The documentation or measurement that says the engine behaves so.
    pub reference: String,
}

/// An engine profile's MoE kernel and why it is that one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MoeKernelChoice {
    pub kernel: MoeKernel,
    pub basis: Basis,
    /// The source that says the build runs this kernel, and where the kernel sizes its tile.
    pub reference: String,
}

/// The grouped-GEMM kernel that multiplies a MoE model's routed experts, by how it tiles the tokens routed to
/// each expert: a kernel computes every touched expert's tokens in whole tiles of rows, so an expert that receives
/// fewer tokens than a tile still costs the tile's multiplies (`MoeKernel::tile_rows`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum MoeKernel {
    /// No tile: an expert's multiplies are its tokens' alone (the ideal roofline).
    #[default]
    Unpadded,
    /// vLLM's Triton `fused_moe` with its default configuration (no tuned file for the GPU): `BLOCK_SIZE_M` 16 up
    /// to 32 tokens in the batch, 32 up to 96, 64 up to 512, then 128 (`get_default_config`, vllm-project/vllm
    /// pull request #34846, merged 2026-02-18); `moe_align_block_size` pads each expert's tokens to a multiple.
    TritonFusedMoe,
    /// vLLM's Marlin MoE: the smallest of 8, 16, 32, 48 and 64 rows with tokens per expert below 0.9 of it, else
    /// 64 (`fused_marlin_moe.py`: `for block_size_m in [8, 16, 32, 48, 64]: if M * topk / E / block_size_m <
    /// 0.9: break`).
    Marlin,
    /// FlashInfer's TensorRT-LLM-gen MoE: tokens per expert rounded up to a power of two, within 8 to 64 ("Cap to
    /// 8-64 tokens per CTA tile", `_get_tile_tokens_dim` in vLLM's `modelopt.py`).
    FlashinferTrtllmGen,
    /// FlashInfer's CUTLASS MoE for SM120/SM121 (GB10): 64-row tiles below 64 tokens in the batch, else 128
    /// (`select_tile_mn_for_sm120` in `flashinfer/fused_moe/core.py` of the fork DGX Spark images build).
    FlashinferCutlassSm12x,
    /// vLLM's own CUTLASS NVFP4 grouped GEMM on SM100: 128-row tiles whatever the batch
    /// (`csrc/quantization/fp4/nvfp4_blockwise_moe_kernel.cu`: `MmaTileShape = Shape<_128, _128, _128>`).
    VllmCutlassSm100,
}

impl MoeKernel {
    pub fn is_unpadded(&self) -> bool {
        *self == MoeKernel::Unpadded
    }

    /// The precision the kernel multiplies a routed expert at when its weights are stored at `bits`: Marlin is
    /// a weight-only kernel (W4A16/W8A16: IST-DASLab's Marlin, "FP16xINT4"; vLLM builds its MXFP4 and NVFP4
    /// Marlin paths with `mxfp4_w4a16_moe_quant_config`), dequantising the weights in registers to multiply
    /// at the 16-bit tensor rate; every other kernel here multiplies at the weights' own precision.
    pub fn compute_bits(self, bits: f64) -> f64 {
        match self {
            MoeKernel::Marlin => bits.max(16.0),
            _ => bits,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MoeKernel::Unpadded => "unpadded",
            MoeKernel::TritonFusedMoe => "triton_fused_moe",
            MoeKernel::Marlin => "marlin",
            MoeKernel::FlashinferTrtllmGen => "flashinfer_trtllm_gen",
            MoeKernel::FlashinferCutlassSm12x => "flashinfer_cutlass_sm12x",
            MoeKernel::VllmCutlassSm100 => "vllm_cutlass_sm100",
        }
    }

    /// Rows of the tile each touched expert's tokens are padded to, in a step of `batch_tokens` tokens that
    /// routes `per_expert` tokens to each expert on average; 0 when the kernel pads nothing.
    pub fn tile_rows(self, batch_tokens: f64, per_expert: f64) -> f64 {
        match self {
            MoeKernel::Unpadded => 0.0,
            MoeKernel::TritonFusedMoe => match batch_tokens {
                t if t <= 32.0 => 16.0,
                t if t <= 96.0 => 32.0,
                t if t <= 512.0 => 64.0,
                _ => 128.0,
            },
            MoeKernel::Marlin => [8.0, 16.0, 32.0, 48.0].into_iter().find(|bs| per_expert / bs < 0.9).unwrap_or(64.0),
            MoeKernel::FlashinferTrtllmGen => {
                // `next_positive_power_of_2` of the integer tokens per expert (1 for 0), clamped.
                let whole = per_expert.max(0.0).floor().max(1.0);
                whole.log2().ceil().exp2().clamp(8.0, 64.0)
            }
            MoeKernel::FlashinferCutlassSm12x => {
                if batch_tokens < 64.0 {
                    64.0
                } else {
                    128.0
                }
            }
            MoeKernel::VllmCutlassSm100 => 128.0,
        }
    }
}

/// A serving engine's admission policy against its KV block pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Admission {
    /// vLLM V1: admit while the prompt's blocks are free; a running request that needs a block when none is
    /// free preempts the newest running request, which recomputes later (docs/domain.md 3c).
    #[default]
    PreemptNewest,
    /// TensorRT-LLM's default capacity policy `GUARANTEED_NO_EVICT`: admit a request only when blocks for its
    /// prompt plus its whole output are free, reserve them, never preempt; past the pool requests queue.
    GuaranteedNoEvict,
}

impl Admission {
    pub fn name(self) -> &'static str {
        match self {
            Admission::PreemptNewest => "preempt_newest",
            Admission::GuaranteedNoEvict => "guaranteed_no_evict",
        }
    }
}

/// The points an engine profile is fitted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FittedOn {
    pub dataset: String,
    /// Only these modes' points (absent: every mode).
    #[serde(default)]
    pub modes: Option<Vec<Mode>>,
    /// Only the points of these scenarios (absent: every scenario of the dataset): one engine build each.
    #[serde(default)]
    pub scenarios: Option<Vec<String>>,
}

/// The coefficients an engine profile may give (`model::Coefficients::set_named`): first the eight a fit frees,
/// then the build's settings (`model::ENGINE_SETTINGS` is that tail).
pub const ENGINE_COEFFICIENTS: [&str; 16] = [
    "hbm_efficiency",
    "slow_efficiency",
    "compute_efficiency",
    "step_overhead_s",
    "per_seq_overhead_s",
    "spec_per_seq_overhead_s",
    "tp_latency_scale",
    "per_layer_overhead_s",
    "request_overhead_s",
    "hbm_reserve_fraction",
    "runtime_reserve_fraction",
    "prefill_chunk_tokens",
    "kv_block_tokens",
    "max_num_seqs",
    "kv_free_memory_fraction",
    "gemm_from_kernel_table",
];

/// Engine coefficients that were once given and are no longer, with what replaced each: a profile that still
/// gives one is refused with this, not with a bare "unknown" (`Coefficients::set_named`, validation).
pub const REMOVED_ENGINE_COEFFICIENTS: [(&str, &str); 1] = [(
    "draft_pass_overhead_s",
    "removed in schema v2 (2026-12-03): a draft pass now pays `per_layer_overhead_s` for each of the model's \
     `draft_pass_layers`, as the main pass pays it for each of its layers",
)];

/// Why `name` is refused when it is a removed engine coefficient (what replaced it); `None` for any other name.
pub fn removed_engine_coefficient(name: &str) -> Option<String> {
    REMOVED_ENGINE_COEFFICIENTS
        .iter()
        .find(|(old, _)| *old == name)
        .map(|(_, why)| format!("engine coefficient `{name}` was {why}"))
}

/// The engine profile scenarios without an `engine` use: vLLM as the GB300 report ran it.
pub const DEFAULT_ENGINE: &str = "vllm-gb300-report";

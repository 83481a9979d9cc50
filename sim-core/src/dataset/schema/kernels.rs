//! The kernel table: what the kernels of one engine step cost on one GPU, as `scripts/collect-kernels.py`
//! measured them (CUDA-event medians on random data), with the machine and software that measured them.

use serde::{Deserialize, Serialize};

/// A measured kernel table (`data/kernels/<id>.json`): the GPU of the hardware file `hardware`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct KernelsFile {
    pub schema_version: u32,
    pub kind: String,
    pub id: String,
    /// The hardware file (`data/hardware/<id>.json`) whose GPU was measured: its spec peaks are the roofline
    /// the measured times are read against.
    pub hardware: String,
    pub provenance: KernelProvenance,
    /// Dense GEMMs `[m, k] x [k, n]`, one row per (precision, n, k) over a sweep of `m`.
    pub gemm: Vec<GemmRow>,
    #[serde(default)]
    pub grouped_gemm: Vec<GroupedGemmRow>,
    #[serde(default)]
    pub attention_prefill: Vec<AttentionPrefillRow>,
    #[serde(default)]
    pub attention_decode: Vec<AttentionDecodeRow>,
    #[serde(default)]
    pub elementwise: Vec<ElementwiseRow>,
    /// Whole forward passes of a layer stack, which the kernel sum is checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<StepChecks>,
}

/// Who measured what, where and how: enough to tell two tables apart and to measure again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct KernelProvenance {
    /// The GPU's name as the driver reports it.
    pub gpu: String,
    pub multiprocessors: u32,
    pub memory_bytes: f64,
    pub l2_bytes: f64,
    pub compute_capability: String,
    pub driver: String,
    pub cuda: String,
    pub torch: String,
    pub python: String,
    /// The day of the measurement, YYYY-MM-DD.
    pub date: String,
    /// The command that wrote the table.
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_taken: Option<f64>,
}

/// The precision a GEMM multiplies at: BF16 operands, or FP8 (E4M3) operands with BF16 output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GemmDtype {
    Bf16,
    Fp8,
}

impl GemmDtype {
    /// Bytes of one operand element.
    pub fn operand_bytes(self) -> f64 {
        match self {
            GemmDtype::Bf16 => 2.0,
            GemmDtype::Fp8 => 1.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GemmDtype::Bf16 => "bf16",
            GemmDtype::Fp8 => "fp8",
        }
    }
}

/// One GEMM shape's time against the rows it multiplies.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GemmRow {
    pub dtype: GemmDtype,
    /// Output columns (a weight's rows after a tensor-parallel split).
    pub n: f64,
    /// The reduction dimension (a layer's input width).
    pub k: f64,
    /// Rows multiplied (tokens in the step), strictly increasing.
    pub m: Vec<f64>,
    /// Seconds per GEMM at each `m`.
    pub seconds: Vec<f64>,
}

/// A grouped GEMM of `experts` experts, each multiplying `tokens_per_expert` rows by its own `[k, n]` weight.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GroupedGemmRow {
    pub dtype: GemmDtype,
    /// The kernel that ran (`bmm`: batched cuBLAS; `grouped_mm`: PyTorch's grouped GEMM).
    pub kernel: String,
    pub experts: f64,
    pub n: f64,
    pub k: f64,
    pub tokens_per_expert: Vec<f64>,
    pub seconds: Vec<f64>,
}

/// Flash attention over a causal prompt of `query_tokens` (PyTorch's SDPA flash kernel).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AttentionPrefillRow {
    pub heads: f64,
    pub kv_heads: f64,
    pub head_dim: f64,
    pub query_tokens: f64,
    pub context: f64,
    pub causal: bool,
    pub seconds: f64,
}

/// Attention of one query token per sequence against `context` cached positions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AttentionDecodeRow {
    pub heads: f64,
    pub kv_heads: f64,
    pub head_dim: f64,
    pub seqs: f64,
    pub context: f64,
    /// Bytes of keys and values the kernel reads.
    pub kv_bytes: f64,
    pub seconds: f64,
}

/// A memory-bound kernel (`copy`, `rms_norm`, `silu_mul`, `add`) over `tokens` rows of `width`, moving `bytes`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ElementwiseRow {
    pub op: String,
    pub tokens: f64,
    pub width: f64,
    pub bytes: f64,
    pub seconds: f64,
}

/// The layer stack whose whole forward passes were timed, and the times.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StepChecks {
    pub stack: StackShape,
    pub rows: Vec<StepRow>,
}

/// A decoder stack: `layers` of attention (`heads` query and `kv_heads` KV heads of `head_dim`) and a gated MLP of
/// `intermediate`, BF16, with an LM head of `vocab` on the sampled rows.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StackShape {
    pub layers: f64,
    pub hidden: f64,
    pub heads: f64,
    pub kv_heads: f64,
    pub head_dim: f64,
    pub intermediate: f64,
    pub vocab: f64,
    /// Weights of one layer, parameters.
    pub layer_params: f64,
    /// Whether the layer ran compiled by torch.compile (elementwise work fused around the GEMMs and attention,
    /// as vLLM compiles its models) or eager, one PyTorch kernel per operation. Absent: eager.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled: Option<bool>,
}

/// One timed forward pass: a prompt of `query_tokens` (prefill), `seqs` sequences of one token each at `context`
/// (decode), or a prompt and `decode_seqs` decodes at `decode_context` in one pass (mixed).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StepRow {
    pub phase: StepPhase,
    /// Replayed as one CUDA graph (no per-kernel launch from the host).
    pub graph: bool,
    pub seqs: f64,
    pub query_tokens: f64,
    pub context: f64,
    /// A mixed pass's decoding sequences and their context (tokens each); absent for prefill and decode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_seqs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_context: Option<f64>,
    pub seconds: f64,
    /// CUDA kernels one pass launched (PyTorch's profiler, copies and memsets not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StepPhase {
    Prefill,
    Decode,
    /// One prompt's tokens and a batch of decodes in one pass, as a chunked-prefill engine runs them.
    Mixed,
}

impl StepPhase {
    pub fn name(self) -> &'static str {
        match self {
            StepPhase::Prefill => "prefill",
            StepPhase::Decode => "decode",
            StepPhase::Mixed => "mixed",
        }
    }
}

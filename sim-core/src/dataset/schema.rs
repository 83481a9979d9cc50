//! The dataset schema (version 2) as Rust types: the normative form of `data/SCHEMA.md`.
//!
//! Every struct denies unknown fields so a typo in a data file is an error, not a silently ignored value.
//! With the `schema` feature the types also derive `schemars::JsonSchema`: `json_schema` turns them into the
//! JSON Schemas shipped in `data/schema/`, which each file names by `"$schema"`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version this build writes. Version 2 names its JSON Schema in `"$schema"` (relative to the file:
/// `"../schema/sweep.json"`) and folds a sweep's `conditions` into `SweepFile`; a version 1 file reads as it
/// is (it has no `$schema`, and everything else version 2 added is optional).
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest version this build reads.
pub const MIN_SCHEMA_VERSION: u32 = 1;

/// The dataset of the GB300 report: sweeps without a `dataset` belong to it, and the fits are made on it.
pub const REPORT_DATASET: &str = "gb300-report";

/// Where a published value comes from: a seed file id and a verbatim quote from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct From {
    pub source: String,
    pub quote: String,
}

/// How a parameter came to be: the honesty label every model input carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Published,
    Derived,
    ReportedElsewhere,
    Fitted,
    Assumed,
}

impl Basis {
    pub fn label(self) -> &'static str {
        match self {
            Basis::Published => "published",
            Basis::Derived => "derived",
            Basis::ReportedElsewhere => "reported elsewhere",
            Basis::Fitted => "fitted",
            Basis::Assumed => "assumed",
        }
    }
}

/// A number with a unit and its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    pub value: f64,
    pub unit: String,
    pub basis: Basis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<From>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derivation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Quantity {
    /// A quantity built in code (overrides, calibration output); `basis` says why it exists.
    pub fn new(value: f64, unit: &str, basis: Basis, why: &str) -> Self {
        let mut q = Quantity {
            value,
            unit: unit.to_string(),
            basis,
            from: None,
            derivation: None,
            reference: None,
            fitted_on: None,
            reason: None,
            note: None,
        };
        match basis {
            Basis::Derived => q.derivation = Some(why.into()),
            Basis::ReportedElsewhere => q.reference = Some(why.into()),
            Basis::Fitted => q.fitted_on = Some(why.into()),
            _ => q.reason = Some(why.into()),
        }
        q
    }

    /// The value in SI units, if the unit is known.
    pub fn si(&self) -> Option<f64> {
        crate::units::parse_unit(&self.unit).map(|(_, f)| self.value * f)
    }
}

/// The first fields of every file; read before the file's kind is known.
#[derive(Debug, Clone, Deserialize)]
pub struct Envelope {
    pub schema_version: u32,
    pub kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SourcesFile {
    pub schema_version: u32,
    pub kind: String,
    pub sources: Vec<Source>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub id: String,
    pub file: String,
    pub language: String,
    pub title: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
}

impl Source {
    /// Imported measurement files are not seed texts: their quotes are checked against the file at import.
    pub fn is_import(&self) -> bool {
        self.role == "import"
    }

    /// A publication other than the report (role `external`): `original` holds its URL, `published` its date,
    /// and `file` the text its quotes were copied into, relative to the seeds directory
    /// (`../external-sweeps.md`). Its quotes are checked when that text is at hand.
    pub fn is_external(&self) -> bool {
        self.role == ROLE_EXTERNAL
    }
}

/// The source role of a publication other than the GB300 report.
pub const ROLE_EXTERNAL: &str = "external";

/// One machine: GPU memory tier, CPU memory tier and the path between them, compute, NIC.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HardwareFile {
    pub schema_version: u32,
    pub kind: String,
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// GPUs in one machine that serve one engine (tensor parallel inside the box).
    pub gpus: Quantity,
    /// Memory of one GPU.
    pub gpu_memory: Quantity,
    pub gpu_memory_bandwidth: Quantity,
    /// CPU memory of the machine (shared by its GPUs).
    pub cpu_memory: Quantity,
    pub cpu_memory_bandwidth: Quantity,
    /// What one GPU reads CPU-resident weights at: the slower of the CPU memory and the GPU-CPU path.
    pub slow_path_bandwidth: Quantity,
    /// The GPU-CPU path itself (NVLink-C2C or PCIe, with its one-way bandwidth): `slow_path_bandwidth` may not
    /// exceed it nor `cpu_memory_bandwidth`. Optional: without it only the CPU memory bounds the slow path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link: Option<HostLink>,
    /// Dense low-precision (FP4/FP8 as the checkpoint uses) peak of one GPU.
    pub compute_fp4: Quantity,
    pub compute_fp8: Quantity,
    /// Dense BF16 tensor rate; absent means half the FP8 rate (each halving of precision doubles the dense
    /// tensor rate on Hopper and Blackwell: H100 SXM 989 / 1,979 TFLOPS BF16 / FP8, NVIDIA datasheet).
    #[serde(default)]
    pub compute_bf16: Option<Quantity>,
    /// Bandwidth between GPUs inside one machine (NVLink or PCIe), when `gpus` > 1.
    #[serde(default)]
    pub intra_machine_bandwidth: Option<Quantity>,
    /// Cost of one all-reduce call between the GPUs of one machine (default 10 us, assumed).
    #[serde(default)]
    pub intra_machine_call_latency: Option<Quantity>,
    /// Query heads per GPU that a sparse-MLA attention kernel computes in one tile (FlashMLA's sparse kernels as
    /// vLLM runs DeepSeek Sparse Attention: 64 on Hopper, 128 on Blackwell); a rank with fewer heads is padded
    /// to a multiple of it and computes the padding too. Absent: no padding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse_attention_head_tile: Option<Quantity>,
    /// The machine-to-machine link as a team would cable it.
    pub link: LinkSpec,
    /// What named public microbenchmarks reached on this machine (a "practical roofline"), beside the spec
    /// figures above: the `roofline` engine profile predicts with them where they are given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microbenchmarks: Option<Microbenchmarks>,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// What a named public microbenchmark reached on a machine, each figure a quantity with its basis (normally
/// `reported_elsewhere`, its `reference` naming the benchmark, the source and the figure). Every field is
/// optional: a machine without one keeps its spec figure. The validator holds each under the spec field it
/// measures; an engine profile with `efficiencies_from_microbenchmarks` (the roofline) divides it by that field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Microbenchmarks {
    /// Streaming bandwidth one GPU reached on its own memory (a bandwidth unit; BabelStream, STREAM-like copy or
    /// read kernels): at most `gpu_memory_bandwidth`. Gives `hbm_efficiency` = this / `gpu_memory_bandwidth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_bandwidth: Option<Quantity>,
    /// Bandwidth one GPU reached reading CPU memory (host-to-device copies such as nvbandwidth's, or direct reads
    /// over NVLink-C2C; a bandwidth unit): at most `slow_path_bandwidth`. Gives `slow_efficiency` = this /
    /// `slow_path_bandwidth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_path_bandwidth: Option<Quantity>,
    /// Fraction of the dense tensor peak of its precision (the matching `compute_*` field) that a large dense
    /// GEMM reached (cuBLASLt, DeepGEMM; unit `1`, in (0, 1]; the reference names the GEMM, its precision and
    /// TFLOPS). Gives `compute_efficiency` directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense_gemm_fraction: Option<Quantity>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rails: Quantity,
    pub line_rate_per_rail: Quantity,
    /// Share of line rate left for payload after packet headers (RoCEv2 with 4096-byte MTU: 98.04%).
    pub payload_efficiency: Quantity,
    /// Cost of one NCCL collective call across the link before any byte moves.
    pub collective_call_latency: Quantity,
    /// A measured all-reduce sweep between two of these machines over this link (nccl-tests' `all_reduce_perf`
    /// out-of-place time, or an equivalent two-rank benchmark): where given, a tensor-parallel all-reduce across
    /// the link costs the time measured at its message size (`spec::AllReduceCurve::seconds`) instead of
    /// `collective_call_latency` + bytes over the payload bandwidth. Sizes strictly increasing, at least two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all_reduce_times: Vec<AllReduceTime>,
    #[serde(default)]
    pub description: Option<String>,
}

/// One size of a measured all-reduce sweep across the link.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AllReduceTime {
    /// Message size of one all-reduce, bytes (nccl-tests' `size`).
    pub size_bytes: f64,
    /// Time of one call at that size (a time unit), with its provenance.
    pub time: Quantity,
}

/// The path between one GPU and the machine's CPU memory: what spilled and pinned weights cross every step.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HostLink {
    /// `nvlink_c2c` (coherent chip-to-chip link: Grace Hopper, Grace Blackwell, GB10) or `pcie`.
    pub kind: HostLinkKind,
    /// PCIe generation (1 to 6, unit `1`); required for `pcie`, absent for `nvlink_c2c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<Quantity>,
    /// PCIe lanes (1, 2, 4, 8 or 16, unit `1`); required for `pcie`, absent for `nvlink_c2c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lanes: Option<Quantity>,
    /// One-way (host to GPU) payload bandwidth of the link, before the CPU memory behind it. For PCIe Gen 3-5 a
    /// `derived` value must equal generation x lanes with 128b/130b encoding (`pcie_bytes_per_sec`).
    pub bandwidth: Quantity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What kind of path a host link is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum HostLinkKind {
    /// NVIDIA's coherent chip-to-chip link: the GPU reads CPU memory directly.
    #[serde(rename = "nvlink_c2c")]
    NvlinkC2c,
    /// A PCIe link: weights are streamed or read zero-copy over it.
    #[serde(rename = "pcie")]
    Pcie,
}

impl HostLinkKind {
    pub fn name(self) -> &'static str {
        match self {
            HostLinkKind::NvlinkC2c => "NVLink-C2C",
            HostLinkKind::Pcie => "PCIe",
        }
    }
}

/// One-way payload bandwidth of a PCIe link, bytes/s: transfer rate per lane x lanes x encoding / 8 bits
/// (PCI-SIG base specifications: Gen 1 2.5 GT/s and Gen 2 5 GT/s with 8b/10b; Gen 3 8, Gen 4 16 and Gen 5
/// 32 GT/s with 128b/130b). Gen5 x16: 32e9 x 16 x 128/130 / 8 = 63.0 GB/s. `None` for a generation outside
/// 1-5 (Gen 6's FLIT mode has no single encoding ratio) or a lane count that is not a positive number.
pub fn pcie_bytes_per_sec(generation: f64, lanes: f64) -> Option<f64> {
    const GENERATIONS: [(f64, f64); 5] =
        [(2.5e9, 8.0 / 10.0), (5e9, 8.0 / 10.0), (8e9, 128.0 / 130.0), (16e9, 128.0 / 130.0), (32e9, 128.0 / 130.0)];
    let (gt_per_s, encoding) = *(1..=5).zip(GENERATIONS.iter()).find(|(g, _)| f64::from(*g) == generation)?.1;
    (lanes.is_finite() && lanes > 0.0).then(|| gt_per_s * lanes * encoding / 8.0)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FabricFile {
    pub schema_version: u32,
    pub kind: String,
    /// Sources defined by this file itself (imported measurements name the file they were read from).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    pub id: String,
    pub hardware: String,
    pub link: FabricLink,
    pub nccl: Vec<NcclRow>,
    pub rdma: Vec<RdmaRow>,
    #[serde(default)]
    pub expectations: Vec<Expectation>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FabricLink {
    pub rails: u32,
    pub line_rate_gbit_s_per_rail: f64,
    pub mtu_bytes: u32,
    pub transport: String,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    Alltoall,
    Sendrecv,
    SendrecvBidirectional,
}

impl Collective {
    pub const ALL: [Collective; 8] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::Broadcast,
        Collective::Reduce,
        Collective::Alltoall,
        Collective::Sendrecv,
        Collective::SendrecvBidirectional,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::Alltoall => "alltoall",
            Collective::Sendrecv => "sendrecv",
            Collective::SendrecvBidirectional => "sendrecv_bidirectional",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NcclRow {
    pub collective: Collective,
    pub peak_size_bytes: f64,
    pub peak_busbw_gb_s: f64,
    #[serde(default)]
    pub busbw_16gib_gb_s: Option<f64>,
    #[serde(default)]
    pub total_16gib_gb_s: Option<f64>,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RdmaRow {
    pub test: String,
    #[serde(default)]
    pub rail: Option<u32>,
    #[serde(default)]
    pub direction: Option<String>,
    #[serde(default)]
    pub message_bytes: Option<f64>,
    #[serde(default)]
    pub bandwidth_gbit_s: Option<f64>,
    #[serde(default)]
    pub link_utilisation_percent: Option<f64>,
    #[serde(default)]
    pub mean_us: Option<f64>,
    #[serde(default)]
    pub p99_us_per_rail: Option<Vec<f64>>,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub what: String,
    pub min_gbit_s: f64,
    pub max_gbit_s: f64,
    pub from: From,
}

/// Cluster modes of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One machine (all its GPUs as one engine).
    Single,
    /// One engine tensor-parallel across two machines.
    Tp2,
    /// Prefill on one machine, decode on the other.
    Pd,
    /// Two independent copies, one per machine, behind a router that gives each half of the clients.
    Dp2,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Single, Mode::Tp2, Mode::Pd, Mode::Dp2];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Tp2 => "tp2",
            Mode::Pd => "pd",
            Mode::Dp2 => "dp2",
        }
    }

    /// How a person reads the mode.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Single => "one machine",
            Mode::Tp2 => "TP2 across both",
            Mode::Pd => "PD (prefill / decode split)",
            Mode::Dp2 => "two copies behind a router",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }

    /// Machines the mode uses.
    pub fn machines(self) -> u32 {
        match self {
            Mode::Single => 1,
            Mode::Tp2 | Mode::Pd | Mode::Dp2 => 2,
        }
    }
}

/// A model card: architecture facts (each with its basis) and the configuration the report ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    pub schema_version: u32,
    pub kind: String,
    pub id: String,
    pub name: String,
    pub architecture: Architecture,
    #[serde(default)]
    pub report_config: Option<ReportConfig>,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Architecture {
    /// Bytes of the weights as the engine loads them.
    pub weight_bytes: Quantity,
    /// Bytes of routed-expert weights (the part that can spill and is read sparsely).
    pub routed_expert_bytes: Quantity,
    /// Parameters used per token (for compute).
    pub active_params: Quantity,
    /// Parameters a prompt (prefill) token uses, where the model publishes fewer than a decode token's
    /// (DeepSeek-V4.1-Flash's causal encoder-decoder: 8B against 16B). Absent: `active_params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_active_params: Option<Quantity>,
    pub layers: Quantity,
    pub hidden_size: Quantity,
    pub routed_experts: Quantity,
    pub experts_per_token: Quantity,
    /// Bits per weight for compute: 4 for NVFP4, 8 for FP8. In a mixed-precision checkpoint this is the routed
    /// experts' precision (what "NVFP4" names), and `dense_compute_bits` the rest's.
    pub compute_bits: Quantity,
    /// Bits at which the linear layers outside the routed experts (attention projections, shared experts, dense
    /// layers, LM head) multiply. NVFP4 checkpoints quantise the routed experts only and leave these at the
    /// source's precision (nvidia/DeepSeek-R1-FP4's card; llm-compressor's DeepSeek V4 Flash recipe keeps the
    /// attention projections FP8-block). Absent: `compute_bits` (every layer at one precision).
    #[serde(default)]
    pub dense_compute_bits: Option<Quantity>,
    /// Stored bits per routed-expert parameter, block scales included (MXFP4 4.25: four bits plus an 8-bit scale
    /// per 32; NVFP4 4.5: an FP8 scale per 16), where the experts are stored in another format than they
    /// multiply in: it turns `routed_expert_bytes` into the parameters a token multiplies by. Absent: the width
    /// of `compute_bits` (4.5 for a 4-bit format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routed_expert_bits: Option<Quantity>,
    pub kv_bytes_per_token: Quantity,
    /// `mla` (KV replicated under tensor parallel) or `gqa` (KV split across ranks).
    pub attention: String,
    /// Vocabulary size (config.json `vocab_size`): the LM head is vocabulary x hidden parameters of
    /// `active_params`, multiplied only at the positions the engine samples. Absent: at every token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab_size: Option<Quantity>,
    /// KV heads of the layers `kv_bytes_per_token` counts (config.json `num_key_value_heads`): under `gqa` a
    /// tensor-parallel rank holds `1 / min(tp, kv_heads)` of the KV (vLLM replicates a head once ranks outnumber
    /// them). Absent: split over every rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_heads: Option<Quantity>,
    /// Query heads (config.json `num_attention_heads`); with `kv_lora_rank` and `rope_head_dim` (MLA's latent)
    /// or else `head_dim` it gives attention FLOPs per cached position. Absent: `4 x hidden` per layer.
    #[serde(default)]
    pub attention_heads: Option<Quantity>,
    /// Per-head dimension (`head_dim`): of GQA attention, or under `mla` of one KV every head shares without a
    /// latent (DeepSeek-V4.1-Flash's 512-wide KV).
    #[serde(default)]
    pub head_dim: Option<Quantity>,
    /// MLA latent and rotary dimensions (`kv_lora_rank`, `qk_rope_head_dim`).
    #[serde(default)]
    pub kv_lora_rank: Option<Quantity>,
    #[serde(default)]
    pub rope_head_dim: Option<Quantity>,
    /// Sliding window (tokens) and how many layers use it (`sliding_window`, `layer_types`); the other layers
    /// attend to the whole context and are the ones `kv_bytes_per_token` counts.
    #[serde(default)]
    pub sliding_window: Option<Quantity>,
    #[serde(default)]
    pub sliding_window_layers: Option<Quantity>,
    /// The window layers' own geometry where it differs from the full layers' (Gemma 4: sliding layers of 8 KV
    /// heads x 256, global layers of 2 x 512): their KV bytes per position over all window layers, and their
    /// head dimension (attention FLOPs per position). Absent: the full layers' (`kv_bytes_per_token` per layer,
    /// `head_dim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_kv_bytes_per_token: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_head_dim: Option<Quantity>,
    /// Sparse attention (DeepSeek's DSA): positions read per query (`index_topk`) after an indexer with
    /// `indexer_heads` x `indexer_head_dim` (FP8 keys) scores every position.
    #[serde(default)]
    pub sparse_top_k: Option<Quantity>,
    #[serde(default)]
    pub indexer_heads: Option<Quantity>,
    #[serde(default)]
    pub indexer_head_dim: Option<Quantity>,
    /// Positions every full-attention layer also keeps uncompressed beside its compressed or sparse global KV
    /// (DeepSeek V4's local sliding window), with `local_window_kv_bytes_per_token`, their bytes per position
    /// over all those layers: each query reads and attends to them on top of its global positions, and the pool
    /// holds them. Both or neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_window: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_window_kv_bytes_per_token: Option<Quantity>,
    /// Linear-attention layers (Kimi Delta Attention, Gated DeltaNet): each keeps a recurrent state of
    /// `linear_state_bytes` per sequence (and a slot more per draft token of a drafting model), read once and
    /// written after each verified token every step, where other layers keep a KV cache that grows;
    /// `kv_bytes_per_token` counts the other (full-attention) layers only.
    #[serde(default)]
    pub linear_attention_layers: Option<Quantity>,
    #[serde(default)]
    pub linear_state_bytes: Option<Quantity>,
    /// Routed-expert bytes of the draft's MoE layer (MTP), read at the distinct-expert rate of the draft's own
    /// token count; `draft_pass_bytes` is then the rest of a draft pass (attention, shared expert, LM head).
    #[serde(default)]
    pub draft_routed_expert_bytes: Option<Quantity>,
    /// Attention layers with a full layer's geometry the drafter runs once per draft pass, each keeping its own
    /// KV of every position (an MTP module: `num_nextn_predict_layers`, one). A draft pass then reads that
    /// layer's KV at each sequence's context, and the pool holds it. Absent: 0 (no drafter, or one whose
    /// attention is its own and small, as EAGLE3's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_attention_layers: Option<Quantity>,
    /// Drafter passes per step, where the drafter proposes its block in fewer passes than it drafts tokens
    /// (DeepSeek V4.1 Flash's DSpark: one). At most `draft_tokens`; absent: `draft_tokens` (one pass per
    /// drafted token, as MTP and EAGLE3 run). `draft_pass_bytes` is then one such pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_passes: Option<Quantity>,
    /// KV bytes per position of a drafter with its own dense attention over the whole context (an EAGLE3
    /// head): held in the pool beside the model's KV and read by every draft pass. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_kv_bytes_per_token: Option<Quantity>,
    /// Decoder layers one draft pass runs, each paying the engine's fixed cost per layer
    /// (`per_layer_overhead_s`) as the main pass's layers do (DeepSeek V4.1 Flash's DSpark: three stages).
    /// Absent: `draft_attention_layers` where it is above 0, else one (an MTP module or an EAGLE3 head is one
    /// decoder layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_pass_layers: Option<Quantity>,
    /// Tables the engine pins in CPU memory (DeepSeek's Engram), read sparsely per token.
    #[serde(default)]
    pub pinned_cpu_bytes: Option<Quantity>,
    #[serde(default)]
    pub pinned_read_bytes_per_token: Option<Quantity>,
    /// Bytes of the input embedding table: held with the dense weights, but a step gathers one row per token
    /// instead of streaming it (absent: counted as read every step, like the other dense weights).
    #[serde(default)]
    pub input_embedding_bytes: Option<Quantity>,
    /// Draft tokens per step of speculative decoding (0 = none).
    pub draft_tokens: Quantity,
    /// Per-token acceptance of the draft, before calibration.
    pub draft_acceptance: Quantity,
    /// Bytes one draft forward pass reads (MTP head or EAGLE3 layer plus LM head).
    pub draft_pass_bytes: Quantity,
    /// Expert weights the report says were offloaded to CPU memory on one station (published where known).
    #[serde(default)]
    pub published_offload_bytes: Option<Quantity>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportConfig {
    pub cluster_mode: Mode,
    pub software: String,
    pub speculative: String,
    pub cpu_memory_use: String,
    pub from: From,
}

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
    /// `max_concurrency`. Issue 11 reads this as a run capped by KV capacity; fewer prompts than clients or
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
    /// Requests per second the benchmark sent: a number, or `"inf"` (each client sends its next request as
    /// soon as the last one finishes: the closed loop the model describes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<RequestRate>,
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
            request_rate: None,
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
    /// Requests or runs per concurrency level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_per_level: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where the conditions are stated (one quote per sentence of the source); every number above must be in
    /// one of the quotes.
    pub from: Vec<From>,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimsFile {
    pub schema_version: u32,
    pub kind: String,
    pub claims: Vec<Claim>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    Ratio,
    GainPercent,
    Percent,
}

impl ClaimKind {
    /// The value a claim of this kind states for a numerator and a denominator: `2.0` (ratio), `+100` (gain
    /// percent), `200` (percent). The validator checks claims with it; the page shows it.
    pub fn value(self, numerator: f64, denominator: f64) -> f64 {
        match self {
            ClaimKind::Ratio => numerator / denominator,
            ClaimKind::GainPercent => (numerator / denominator - 1.0) * 100.0,
            ClaimKind::Percent => numerator / denominator * 100.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    pub kind: ClaimKind,
    pub stated: f64,
    #[serde(default)]
    pub decimals: u32,
    #[serde(default)]
    pub approximate: bool,
    #[serde(default)]
    pub numerator: Option<Operand>,
    #[serde(default)]
    pub denominator: Option<Operand>,
    #[serde(default)]
    pub unverifiable: Option<String>,
    #[serde(default)]
    pub caveat: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub from: From,
}

/// A claim operand: a published point, a number elsewhere in the dataset, or a constant with a reason.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Operand {
    Point(PointKey),
    Pointer { file: String, pointer: String },
    Constant { constant: f64, reason: String },
}

/// The variants in serde's untagged order (a point, then `{file, pointer}`, then `{constant, reason}`), read
/// through a borrowed JSON value like every file (no second copy of the reading code for untagged buffering).
impl<'de> Deserialize<'de> for Operand {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::Value;
        let v = Value::deserialize(d)?;
        if let Ok(k) = PointKey::deserialize(&v) {
            return Ok(Operand::Point(k));
        }
        let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        if let (Some(file), Some(pointer)) = (text("file"), text("pointer")) {
            return Ok(Operand::Pointer { file, pointer });
        }
        if let (Some(constant), Some(reason)) = (v.get("constant").and_then(Value::as_f64), text("reason")) {
            return Ok(Operand::Constant { constant, reason });
        }
        Err(D::Error::custom(format!(
            "an operand is a published point {{model, mode, isl, osl, concurrency}}, a {{file, pointer}} or a \
             {{constant, reason}}, found {v}"
        )))
    }
}

/// Identifies one published point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PointKey {
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: f64,
}

/// Accuracy thresholds the model check in `validate` enforces.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AccuracyFile {
    pub schema_version: u32,
    pub kind: String,
    pub fitted_median_ape_max: f64,
    pub fitted_p90_ape_max: f64,
    pub predictive_median_ape_max: f64,
    pub fabric_peak_ape_max: f64,
    #[serde(default)]
    pub note: Option<String>,
    /// Targets of the accuracy protocol (`sim-core report` prints each against what the model gives). Frozen
    /// before any tuning and never moved; reported, not enforced by `validate`.
    #[serde(default)]
    pub protocol: Vec<ProtocolTarget>,
}

/// The questions of the accuracy protocol, by name (`explore::protocol::Question`).
pub const PROTOCOL_QUESTIONS: [&str; 3] = ["fitted", "pair_from_one", "leave_one_out"];

/// One frozen target of the accuracy protocol.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProtocolTarget {
    /// A dataset id, or `*` for every dataset.
    pub dataset: String,
    /// One of `PROTOCOL_QUESTIONS`.
    pub question: String,
    #[serde(default)]
    pub median_ape_max: Option<f64>,
    #[serde(default)]
    pub p90_ape_max: Option<f64>,
    /// Where the target was set (an issue, a document).
    pub source: String,
}

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
    /// free preempts the newest running request, which recomputes later (DOMAIN.md 3c).
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
pub const ENGINE_COEFFICIENTS: [&str; 14] = [
    "hbm_efficiency",
    "slow_efficiency",
    "compute_efficiency",
    "step_overhead_s",
    "per_seq_overhead_s",
    "spec_per_seq_overhead_s",
    "tp_latency_scale",
    "per_layer_overhead_s",
    "hbm_reserve_fraction",
    "runtime_reserve_fraction",
    "prefill_chunk_tokens",
    "kv_block_tokens",
    "max_num_seqs",
    "kv_free_memory_fraction",
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

/// Simulator input: which machine, link and model, which workloads, and overrides.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub schema_version: u32,
    pub kind: String,
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
    /// A hardware id from `data/hardware/`, or a full hardware object inline.
    pub hardware: Reference<HardwareFile>,
    /// A model id from `data/models/`, a full model card inline, or `{"describe": {...}}` with a few numbers
    /// (see `describe::ModelDescription`).
    pub model: ModelRef,
    pub workloads: Vec<Workload>,
    #[serde(default = "default_concurrency")]
    pub concurrency: Vec<u32>,
    #[serde(default = "default_modes")]
    pub modes: Vec<Mode>,
    /// Field overrides applied after resolving references (keys in `scenario::OVERRIDES`): a plain number in
    /// the key's SI unit (`{"hardware.gpu_memory_bytes": 288e9}`), or a quantity with its unit and basis
    /// (`{"placement.pin_to_host_bytes": {"value": 20, "unit": "GiB", "basis": "assumed", "reason": "..."}}`).
    #[serde(default)]
    pub overrides: BTreeMap<String, OverrideValue>,
    /// The engine profile (`data/engines/`); absent means `DEFAULT_ENGINE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// How the clients send requests: `closed_loop` (absent: each client sends its next request as soon as its
    /// last one ends), `batch` (the benchmark sends `concurrency` requests together and waits for all of them;
    /// throughput is then the tokens generated after each request's first over the time from the first first
    /// token to the last finish, llama-benchy's `tg` figure) or `all_at_once` (`concurrency` requests sent
    /// together once, throughput every output token over the time from the send to the last finish, as vLLM's
    /// `bench serve` reports a run at an unlimited request rate).
    #[serde(default, skip_serializing_if = "ScenarioLoad::is_closed_loop")]
    pub load: ScenarioLoad,
    /// How the router in front of two copies (`dp2`) spreads requests: `balanced` (absent: half of the clients
    /// to each copy, as a round-robin or least-load router keeps it) or `random` (each request to a copy drawn
    /// at random, as LiteLLM's `simple-shuffle` does).
    #[serde(default, skip_serializing_if = "DpRouter::is_balanced")]
    pub router: DpRouter,
    /// Calibrated coefficients (written by `sim-core calibrate`).
    #[serde(default)]
    pub calibration: Option<BTreeMap<String, f64>>,
}

/// How a scenario's clients send requests (`ScenarioFile::load`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScenarioLoad {
    /// Each client sends its next request as soon as its last one ends (vLLM's `bench serve
    /// --max-concurrency`, genai-perf's concurrency mode): the steady state of a closed loop.
    #[default]
    ClosedLoop,
    /// Runs of `concurrency` requests sent together, the next run after the last request ends (llama-benchy:
    /// `asyncio.gather` over one batch per run in `runner.py`); throughput is llama-benchy's batch `tg`:
    /// (tokens generated - requests) / (last finish - first first token), in `results.py`.
    Batch,
    /// `concurrency` requests sent at once and never again, the run ending with the last (vLLM's `bench serve`
    /// with `--request-rate inf` and no `--max-concurrency`: a saturation run of a fixed number of prompts);
    /// throughput is its `output_throughput`, every output token over the time from the send to the last finish,
    /// and TTFT and TPOT are means over all requests.
    AllAtOnce,
}

impl ScenarioLoad {
    pub fn is_closed_loop(&self) -> bool {
        *self == ScenarioLoad::ClosedLoop
    }

    /// The name a data file writes (`closed_loop`, `batch`, `all_at_once`).
    pub fn name(self) -> &'static str {
        match self {
            ScenarioLoad::ClosedLoop => "closed_loop",
            ScenarioLoad::Batch => "batch",
            ScenarioLoad::AllAtOnce => "all_at_once",
        }
    }

    /// The load a sweep's `conditions.load` names, if the model runs it (`open_loop` it does not).
    pub fn named(name: &str) -> Option<Self> {
        [ScenarioLoad::ClosedLoop, ScenarioLoad::Batch, ScenarioLoad::AllAtOnce].into_iter().find(|l| l.name() == name)
    }
}

/// How a router spreads requests over two independent copies (`ScenarioFile::router`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DpRouter {
    /// Each copy serves half of the clients (the larger half when odd): round-robin or least-load routing of a
    /// steady load.
    #[default]
    Balanced,
    /// Each request goes to a copy drawn at random with equal odds (LiteLLM's `simple-shuffle`): the split of
    /// `c` clients is binomial, and a batch lasts as long as the busier copy needs.
    Random,
}

impl DpRouter {
    pub fn is_balanced(&self) -> bool {
        *self == DpRouter::Balanced
    }
}

/// One scenario override: a bare SI number, or a quantity that says its unit and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum OverrideValue {
    /// The value in the key's SI unit.
    Number(f64),
    /// A quantity (`value`, `unit` of the key's dimension, `basis` and its companion).
    Quantity(Box<Quantity>),
}

impl OverrideValue {
    /// The value in SI units (NaN for a quantity with an unknown unit).
    pub fn si(&self) -> f64 {
        match self {
            OverrideValue::Number(x) => *x,
            OverrideValue::Quantity(q) => q.si().unwrap_or(f64::NAN),
        }
    }

    pub fn quantity(&self) -> Option<&Quantity> {
        match self {
            OverrideValue::Number(_) => None,
            OverrideValue::Quantity(q) => Some(q),
        }
    }
}

impl<'de> Deserialize<'de> for OverrideValue {
    /// A number, or an object read as a quantity whose own error (a missing `basis`, an unknown field) is the
    /// one reported, rather than serde's "did not match any variant".
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Number(n) => {
                n.as_f64().map(OverrideValue::Number).ok_or_else(|| D::Error::custom("override is not a finite number"))
            }
            v @ serde_json::Value::Object(_) => Quantity::deserialize(&v)
                .map(|q| OverrideValue::Quantity(Box::new(q)))
                .map_err(|e| D::Error::custom(format!("override quantity: {e}"))),
            other => Err(D::Error::custom(format!(
                "an override is a number in the key's SI unit or a quantity {{\"value\", \"unit\", \"basis\", ...}}, found {other}"
            ))),
        }
    }
}

impl std::convert::From<f64> for OverrideValue {
    fn from(x: f64) -> Self {
        OverrideValue::Number(x)
    }
}

/// An id of another file, or the file's object inline.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Reference<T> {
    Id(String),
    Inline(Box<T>),
}

/// Reads the object through a borrowed `serde_json::Value`, as the loader reads every file: the page then holds
/// one copy of each file type's reading code instead of a second one for serde's untagged buffering (bundle
/// bytes), and an inline object's own error is the one reported, not "did not match any variant".
impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Reference<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(id) => Ok(Reference::Id(id)),
            v @ serde_json::Value::Object(_) => T::deserialize(&v)
                .map(|t| Reference::Inline(Box::new(t)))
                .map_err(|e| D::Error::custom(format!("inline object: {e}"))),
            other => Err(D::Error::custom(format!("expected an id (a string) or an inline object, found {other}"))),
        }
    }
}

/// A model: an id, a description (`{"describe": ...}`), or a model file inline.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum ModelRef {
    Id(String),
    Described { describe: Box<crate::describe::ModelDescription> },
    Inline(Box<ModelFile>),
}

/// As `Reference`: through a borrowed `serde_json::Value`, an object with `describe` being a description.
impl<'de> Deserialize<'de> for ModelRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(id) => Ok(ModelRef::Id(id)),
            serde_json::Value::Object(mut o) => match o.remove("describe") {
                Some(describe) => crate::describe::ModelDescription::deserialize(&describe)
                    .map(|m| ModelRef::Described { describe: Box::new(m) })
                    .map_err(|e| D::Error::custom(format!("model description: {e}"))),
                None => ModelFile::deserialize(&serde_json::Value::Object(o))
                    .map(|m| ModelRef::Inline(Box::new(m)))
                    .map_err(|e| D::Error::custom(format!("inline model: {e}"))),
            },
            other => Err(D::Error::custom(format!(
                "expected a model id (a string), {{\"describe\": ...}} or an inline model file, found {other}"
            ))),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub isl: u32,
    /// Output tokens per request: every request's, or their mean when `output_lengths` says they vary.
    pub osl: u32,
    /// How the requests' output lengths spread around `osl`: `fixed` (absent: every request generates `osl`
    /// tokens, as a random-token benchmark with a fixed output length does) or `exponential` (independent lengths
    /// of mean `osl`, as a dataset of real conversations such as ShareGPT gives: a batch runs until its longest
    /// request ends). Only a scenario that sends one batch (`"load": "all_at_once"` or `"batch"`) may let them
    /// vary. Say in the scenario's description why the lengths vary and where the shape comes from.
    #[serde(default, skip_serializing_if = "OutputLengths::is_fixed")]
    pub output_lengths: OutputLengths,
}

/// How a workload's output lengths spread around their mean (`Workload::output_lengths`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutputLengths {
    /// Every request generates the workload's `osl` tokens.
    #[default]
    Fixed,
    /// Independent exponential lengths of mean `osl`: the maximum-entropy distribution of a positive length with
    /// a given mean, for a run that states only the mean. A batch of n requests is run as its expected order
    /// statistics (`serving::output_length_classes`): its longest request generates `osl * H_n` tokens.
    Exponential,
}

impl OutputLengths {
    pub fn is_fixed(&self) -> bool {
        *self == OutputLengths::Fixed
    }
}

pub fn default_concurrency() -> Vec<u32> {
    vec![1, 2, 4, 8, 16, 32, 64, 128, 256]
}

fn default_modes() -> Vec<Mode> {
    Mode::ALL.to_vec()
}

//! Hardware files: one machine's memory tiers, compute, host link, machine-to-machine link and microbenchmarks.

use super::{Basis, Quantity};
pub use crate::spec::{IntraMachineFabric, TransportKind};
use serde::{Deserialize, Serialize};

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
    /// Measured cost of one small all-reduce call between the GPUs of one machine; absent, NCCL's cost model for
    /// the engine's rank count over `intra_machine_fabric` (`model::nccl`).
    #[serde(default)]
    pub intra_machine_call_latency: Option<Quantity>,
    /// What joins the GPUs inside the machine, for NCCL's per-hop latency: `nvlink` (absent) or `pcie`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intra_machine_fabric: Option<IntraMachineFabric>,
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
    /// What one machine costs to buy and to run, where a source states it: `plan` prices a million tokens with
    /// it unless `--price` and `--power-w` say otherwise. Absent where no quotable source gives a number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<HardwareCost>,
}

/// A machine's published list price and power, each with its source (a published quote, or where reported).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HardwareCost {
    /// List price of one machine (unit `USD`); say in the quantity's note on which date it was listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_price: Option<Quantity>,
    /// Power one machine draws at most: its power supply's rating, or its parts' TDP summed (unit `W` or `kW`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<Quantity>,
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
    /// How NCCL and the engine's control messages cross the link: GPUDirect RDMA, RDMA staged through host
    /// memory, or TCP sockets, with the round trip of a small message on it. A network hop of a collective costs
    /// at least half of it (`model::nccl`), and a multi-machine engine pays one per step to reach its remote
    /// worker. Absent in files written before links stated it: `LinkTransport::assumed_rdma` (see there for
    /// where that default matters).
    #[serde(default = "LinkTransport::assumed_rdma")]
    pub transport: LinkTransport,
    #[serde(default)]
    pub description: Option<String>,
}

/// The transport a link's messages travel by, and what a small message's round trip costs on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LinkTransport {
    /// `rdma` (GPUDirect RDMA: the NIC reads and writes GPU memory), `host_staged_rdma` (RDMA through host
    /// buffers, as on a GPU without GPUDirect RDMA such as GB10) or `tcp_socket` (NCCL's socket transport,
    /// `NCCL_IB_DISABLE=1`).
    pub kind: TransportKind,
    /// Round trip of a small message between the two machines on this transport (a time unit).
    pub round_trip: Quantity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl LinkTransport {
    /// The round trip the default transport assumes, microseconds: the GB300 pair's measured GPUDirect RDMA
    /// write round trip (2 x 1.46 us), the link every file of the first schema version 2 described.
    pub const ASSUMED_RDMA_ROUND_TRIP_US: f64 = 2.92;

    /// The transport of a link whose file states none (written before `transport` existed): GPUDirect RDMA with
    /// the GB300 pair's round trip, an `assumed` quantity that says so. The default matters only across
    /// machines (TP2, PP2, EP2 and PD pay NCCL's network hops and a one-way control message per step on it): on a
    /// link that really runs host-staged RDMA (GB10) or TCP sockets it is optimistic by the difference in
    /// round trip (about 5 us and 200-500 us against 2.92 us), so such a file should state its transport.
    pub fn assumed_rdma() -> LinkTransport {
        LinkTransport {
            kind: TransportKind::Rdma,
            round_trip: Quantity::new(
                Self::ASSUMED_RDMA_ROUND_TRIP_US,
                "us",
                Basis::Assumed,
                "the file states no link transport (written before links stated one): GPUDirect RDMA assumed, \
                 with the GB300 pair's measured RDMA write round trip (2 x 1.46 us)",
            ),
            description: None,
        }
    }
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

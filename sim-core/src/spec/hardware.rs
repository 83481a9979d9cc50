//! One machine and the link between machines, in SI units: what a step's collectives and reads run on.

use super::GemmCurves;
use serde::{Deserialize, Serialize};

/// One machine, in SI units (bytes, bytes/s, FLOP/s, seconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HardwareSpec {
    pub id: String,
    pub name: String,
    /// GPUs per machine serving one engine together (tensor parallel inside the box).
    pub gpus: f64,
    pub gpu_memory_bytes: f64,
    pub hbm_bytes_per_sec: f64,
    pub cpu_memory_bytes: f64,
    pub slow_path_bytes_per_sec: f64,
    pub flops_fp4: f64,
    pub flops_fp8: f64,
    /// Dense BF16 tensor FLOP/s (models computing at 16 bits).
    pub flops_bf16: f64,
    /// GPU-to-GPU bandwidth inside one machine (NCCL's all-reduce bus bandwidth, which `fabric::tp_all_reduce`
    /// turns into the ring's algorithm bandwidth), when `gpus` > 1.
    pub intra_bytes_per_sec: f64,
    /// Measured cost of one small all-reduce call between the GPUs of one machine, seconds, where the hardware
    /// gives one; otherwise NCCL's cost model for the rank count prices it (`model::nccl`).
    pub intra_call_latency_s: Option<f64>,
    /// What joins the GPUs inside the machine (NCCL's per-hop latency class).
    pub intra_fabric: IntraMachineFabric,
    /// Query heads a sparse-MLA attention kernel computes together on this GPU: a rank's heads are padded up to
    /// a multiple of it (`ModelSpec::attention_head_padding`). 0: no padding.
    pub sparse_attention_head_tile: f64,
    pub link: LinkParams,
    /// The share of its roofline a weight GEMM reaches on this GPU against its intensity (`data/kernels/`,
    /// measured here or carried over from another GPU); empty without a kernel table.
    pub gemm: GemmCurves,
}

#[cfg(test)]
impl HardwareSpec {
    /// A one-GPU machine for unit tests: `gpu_memory_bytes` of HBM at `hbm_bytes_per_sec`, 1 TB of CPU memory
    /// behind a 54 GB/s slow path, one 50 GB/s link.
    pub(crate) fn one_gpu_for_tests(gpu_memory_bytes: f64, hbm_bytes_per_sec: f64) -> Self {
        HardwareSpec {
            id: "h".into(),
            name: "h".into(),
            gpus: 1.0,
            gpu_memory_bytes,
            hbm_bytes_per_sec,
            cpu_memory_bytes: 1e12,
            slow_path_bytes_per_sec: 54e9,
            flops_fp4: 2e15,
            flops_fp8: 2e15,
            flops_bf16: 1e15,
            intra_bytes_per_sec: f64::INFINITY,
            intra_call_latency_s: None,
            intra_fabric: IntraMachineFabric::Nvlink,
            sparse_attention_head_tile: 0.0,
            gemm: GemmCurves::default(),
            link: LinkParams {
                rails: 1.0,
                line_rate_bytes_per_sec_per_rail: 50e9,
                payload_efficiency: 0.98,
                call_latency_s: 35e-6,
                all_reduce: AllReduceCurve::default(),
                transport: TransportKind::Rdma,
                round_trip_s: 3e-6,
            },
        }
    }
}

/// What joins the GPUs inside one machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum IntraMachineFabric {
    /// NVLink (or NVSwitch).
    #[default]
    #[serde(rename = "nvlink")]
    Nvlink,
    /// PCIe peer-to-peer or through the host.
    #[serde(rename = "pcie")]
    Pcie,
}

/// What kind of transport a link's messages travel by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum TransportKind {
    /// GPUDirect RDMA over InfiniBand or RoCE.
    #[serde(rename = "rdma")]
    Rdma,
    /// RDMA through host-memory buffers (no GPUDirect RDMA on the GPU).
    #[serde(rename = "host_staged_rdma")]
    HostStagedRdma,
    /// TCP sockets.
    #[serde(rename = "tcp_socket")]
    TcpSocket,
}

impl TransportKind {
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Rdma => "GPUDirect RDMA",
            TransportKind::HostStagedRdma => "host-staged RDMA",
            TransportKind::TcpSocket => "TCP sockets",
        }
    }
}

/// The machine-to-machine link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkParams {
    pub rails: f64,
    pub line_rate_bytes_per_sec_per_rail: f64,
    /// Fraction of line rate carrying payload (0..1).
    pub payload_efficiency: f64,
    pub call_latency_s: f64,
    /// Measured time of one all-reduce across the link against its message size; empty where none is
    /// published, and the physics (call latency + bytes over the payload bandwidth) stands in.
    #[serde(skip_serializing_if = "AllReduceCurve::is_empty")]
    pub all_reduce: AllReduceCurve,
    /// How messages cross the link (GPUDirect RDMA, host-staged RDMA, TCP sockets).
    pub transport: TransportKind,
    /// Round trip of a small message across the link on that transport, seconds.
    pub round_trip_s: f64,
}

/// A measured all-reduce sweep between two machines: (message bytes, seconds per call), sizes strictly
/// increasing (validation refuses anything else in a dataset file; `new` keeps only such points).
///
/// Why a table and not latency + bytes / bandwidth: where NCCL cannot use GPUDirect RDMA (GB10) it stages every
/// message through host buffers, and time then grows with size in steps no line rate and call latency describe
/// (two DGX Sparks: 64 KB at 0.5 GB/s, 16 MB at 3-5 GB/s of a 25 GB/s link).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AllReduceCurve(Vec<(f64, f64)>);

impl AllReduceCurve {
    /// The curve through `points` (bytes, seconds), keeping only finite positive points whose size is above the
    /// previous kept one.
    pub fn new(points: impl IntoIterator<Item = (f64, f64)>) -> Self {
        let mut kept: Vec<(f64, f64)> = Vec::new();
        for (b, t) in points {
            let ok = b.is_finite() && t.is_finite() && b > 0.0 && t > 0.0;
            if ok && kept.last().is_none_or(|&(last, _)| b > last) {
                kept.push((b, t));
            }
        }
        AllReduceCurve(kept)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The measured points, (bytes, seconds).
    pub fn points(&self) -> &[(f64, f64)] {
        &self.0
    }

    /// The smallest measured call's time: what every call costs at least (the call's fixed cost).
    pub fn floor_s(&self) -> f64 {
        self.0.first().map_or(0.0, |&(_, t)| t)
    }

    /// Seconds for one all-reduce of `bytes`: linear between measured sizes, the smallest size's time below it
    /// (a smaller call is not measured faster), and beyond the largest size that size's time plus the rest at
    /// its bandwidth (the sweep's last algorithm bandwidth). 0 for an empty curve.
    pub fn seconds(&self, bytes: f64) -> f64 {
        let p = &self.0;
        let Some(&(b0, t0)) = p.first() else { return 0.0 };
        if bytes <= b0 {
            return t0;
        }
        let i = p.partition_point(|&(b, _)| b < bytes);
        if i == p.len() {
            let (bl, tl) = p[p.len() - 1];
            return tl + (bytes - bl) * tl / bl;
        }
        let ((ba, ta), (bb, tb)) = (p[i - 1], p[i]);
        ta + (tb - ta) * (bytes - ba) / (bb - ba)
    }
}

impl LinkParams {
    /// One-way payload bandwidth over all rails: the ceiling every transfer and collective sits under.
    pub fn payload_bytes_per_sec(&self) -> f64 {
        self.rails * self.line_rate_bytes_per_sec_per_rail * self.payload_efficiency
    }
}

#[cfg(test)]
mod tests {
    use super::AllReduceCurve;

    #[test]
    fn a_measured_all_reduce_is_linear_between_sizes_floored_below_and_at_its_last_bandwidth_beyond() {
        let c = AllReduceCurve::new([(8192.0, 41e-6), (65536.0, 116e-6), (1048576.0, 2100e-6)]);
        assert_eq!(c.floor_s(), 41e-6);
        // Below the smallest size: the smallest call's time, never less.
        assert_eq!(c.seconds(100.0), 41e-6);
        assert_eq!(c.seconds(8192.0), 41e-6);
        // Between two sizes: on the straight line joining them.
        let mid = c.seconds((65536.0 + 1048576.0) / 2.0);
        assert!((mid - (116e-6 + 2100e-6) / 2.0).abs() < 1e-12, "{mid}");
        assert_eq!(c.seconds(65536.0), 116e-6);
        // Beyond the largest: its time, plus the rest at its bandwidth (2 MB at 1 MB's rate takes twice as long).
        assert!((c.seconds(2.0 * 1048576.0) - 2.0 * 2100e-6).abs() < 1e-12);
        // Points out of order, repeated or not positive are dropped; an empty curve costs nothing.
        let odd = AllReduceCurve::new([(8192.0, 41e-6), (4096.0, 1e-6), (8192.0, 5e-6), (0.0, 1.0), (f64::NAN, 1.0)]);
        assert_eq!(odd.points(), &[(8192.0, 41e-6)]);
        assert_eq!(AllReduceCurve::default().seconds(1e6), 0.0);
    }
}

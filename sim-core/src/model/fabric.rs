//! Fabric collectives between two machines: bus bandwidth of each nccl-tests collective against message size.
//!
//! For one collective over n = 2 ranks, nccl-tests reports busbw = algbw x factor (all_reduce 2(n-1)/n = 1,
//! all_gather / reduce_scatter / alltoall (n-1)/n = 1/2 with S the total, broadcast / reduce / sendrecv 1).
//! Time for S bytes: t(S) = alpha + factor * S / (e * B), so busbw(S) = factor * S / t(S), which approaches
//! e * B for large S and is half of that at S = alpha * e * B / factor.
//! B is the payload limit of the link (rails x line rate x RoCE payload efficiency, 98.04 GB/s here);
//! e is each collective's traffic-pattern efficiency, fitted on its 16 GiB row; the peak column is predicted
//! where the peak was measured at another size (elsewhere it is the fitted row again: `FabricRow::fitted`).
//! alpha is the link's per-call latency (assumed: no small-message rows are published).
//!
//! A tensor-parallel engine's all-reduce (`tp_all_reduce`) inside one machine is a ring over its n ranks: NCCL's
//! cost model (src/graph/tuning.cc, `ncclTopoTuneModel`) makes it 2(n-1) steps and converts the bus bandwidth to
//! algorithm bandwidth by n / (2(n-1)), so S bytes take 2(n-1)/n x S / busbw: 1 at two ranks, 1.75 at eight.
//! Across machines it is whatever algorithm and protocol NCCL's model finds fastest at the message's size
//! (`nccl`).

use super::nccl::{Call, Communicator};
use crate::dataset::schema::{Collective, FabricFile};
use crate::spec::{AllReduceCurve, HardwareSpec, LinkParams};
use serde::Serialize;

/// Measured share of the link's payload limit that a two-way all-reduce reaches (derived: 92.242 GB/s
/// peak busbw over 98.04 GB/s on the GB300 pair); used for any link, as the pattern's efficiency.
pub const ALLREDUCE_LINK_EFFICIENCY: f64 = 92.242 / 98.04;

/// Bytes a ring all-reduce moves through each rank's slowest hop per byte reduced: 2(n-1)/n for n ranks (NCCL's
/// `nsteps = 2*(nRanks-1)` and `ratio = nRanks / nsteps` from bus to algorithm bandwidth). 1 for one or two.
pub fn ring_all_reduce_factor(ranks: f64) -> f64 {
    if ranks <= 2.0 {
        1.0
    } else {
        2.0 * (ranks - 1.0) / ranks
    }
}

/// The NCCL communicator of a tensor-parallel engine over `span_machines` machines of `hw`: every GPU of each
/// machine a rank, the machine's in-machine fabric, a network hop no faster than half the link transport's round
/// trip, and the bus bandwidth of the slowest hop (the link's payload rate at a two-way all-reduce's efficiency
/// across machines, the hardware's intra-machine figure inside one).
///
/// LL128 is off: NCCL enables it by default only on compute capability 7.0, 8.0 and 9.0 (`nccl::Communicator::
/// ll128`), which a hardware file does not state; the pairs measured here are Blackwell (the GB300's 10.3, the
/// GB10's 12.1), and host-staged RDMA and TCP sockets reach the NIC through the host. A Hopper pair over
/// GPUDirect RDMA, where NCCL would run it, is priced by LL and Simple only.
pub fn communicator(hw: &HardwareSpec, span_machines: f64) -> Communicator {
    let machines = span_machines.max(1.0);
    let bus_bytes_per_sec = if machines > 1.0 {
        hw.link.payload_bytes_per_sec() * ALLREDUCE_LINK_EFFICIENCY
    } else {
        hw.intra_bytes_per_sec
    };
    Communicator {
        ranks: hw.gpus.max(1.0) * machines,
        machines,
        intra: hw.intra_fabric,
        net_hop_floor_s: if machines > 1.0 { hw.link.round_trip_s / 2.0 } else { 0.0 },
        bus_bytes_per_sec,
        ll128: false,
    }
}

/// What one all-reduce of a tensor-parallel engine costs at a message size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AllReduceCost {
    /// One rank: nothing to reduce.
    Free,
    /// A per-call latency and the rate a message's bytes are reduced at, whatever the size (inside one machine).
    Fixed { latency_s: f64, bytes_per_sec: f64 },
    /// NCCL's own choice of algorithm and protocol by message size (`nccl::Communicator::fastest`).
    Nccl(Communicator),
}

impl AllReduceCost {
    /// One call carrying `bytes`: (its latency, the time of its bytes), seconds.
    pub fn call(&self, bytes: f64) -> (f64, f64) {
        match self {
            AllReduceCost::Free => (0.0, 0.0),
            AllReduceCost::Fixed { latency_s, bytes_per_sec } => (*latency_s, bytes.max(0.0) / bytes_per_sec),
            AllReduceCost::Nccl(c) => {
                let choice = c.fastest(Call::AllReduce, bytes);
                (choice.latency_s, choice.transfer_s)
            }
        }
    }

    /// The latency of a call carrying almost nothing, seconds.
    pub fn small_message_latency_s(&self) -> f64 {
        self.call(0.0).0
    }

    /// The time of one call carrying `bytes`, seconds.
    pub fn seconds(&self, bytes: f64) -> f64 {
        let (latency_s, transfer_s) = self.call(bytes);
        latency_s + transfer_s
    }
}

/// How one all-reduce of a tensor-parallel engine over `span_machines` machines of `hw` costs, and the link's
/// measured sweep where it replaces that. Inside one machine the hardware's intra-machine figure is NCCL's bus
/// bandwidth, so the ring's factor turns it into the rate at which a message's bytes are reduced, and each call
/// pays the hardware file's measured call latency or else NCCL's for a small message.
///
/// Across machines each call costs what NCCL's own model gives for its size (`nccl::Communicator::fastest`): its
/// rank count, its machines, the hops inside each and across the link on the link's transport, and the protocol
/// that is fastest at that size (LL for a few kilobytes, Simple for megabytes). Across machines of several GPUs
/// each (16 ranks on two 8-GPU machines) the link's bus bandwidth carries 2(n-1)/n of the message. A measured
/// sweep (taken between single-GPU machines) stands only for the two-rank ring it measured.
pub fn tp_all_reduce(hw: &HardwareSpec, span_machines: f64) -> (AllReduceCost, Option<&AllReduceCurve>) {
    let gpus = hw.gpus.max(1.0);
    let nccl = communicator(hw, span_machines);
    if span_machines > 1.0 {
        let ranks = gpus * span_machines;
        let measured = (!hw.link.all_reduce.is_empty() && ranks <= 2.0).then_some(&hw.link.all_reduce);
        (AllReduceCost::Nccl(nccl), measured)
    } else if gpus > 1.0 {
        let latency_s = hw.intra_call_latency_s.unwrap_or_else(|| nccl.small_message_latency_s(Call::AllReduce));
        (AllReduceCost::Fixed { latency_s, bytes_per_sec: hw.intra_bytes_per_sec / ring_all_reduce_factor(gpus) }, None)
    } else {
        (AllReduceCost::Free, None)
    }
}

/// nccl-tests' bus-bandwidth factor for two ranks.
pub fn busbw_factor(c: Collective) -> f64 {
    match c {
        Collective::AllGather | Collective::ReduceScatter | Collective::Alltoall => 0.5,
        _ => 1.0,
    }
}

/// Predicted bus bandwidth (bytes/s) of collective `c` at message size `bytes`.
pub fn busbw(link: &LinkParams, efficiency: f64, c: Collective, bytes: f64) -> f64 {
    let b = link.payload_bytes_per_sec() * efficiency;
    let f = busbw_factor(c);
    let t = link.call_latency_s + f * bytes / b;
    f * bytes / t
}

/// Which measured column of the nccl-tests table a fabric row is (serialized as the table's own headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FabricColumn {
    /// The peak bus bandwidth, at the size where it was measured.
    #[serde(rename = "peak")]
    Peak,
    /// The bus bandwidth at 16 GiB, the row each collective's efficiency is fitted on.
    #[serde(rename = "16GiB")]
    At16Gib,
}

impl FabricColumn {
    /// The column's name as the CLI and the page print it.
    pub fn name(self) -> &'static str {
        match self {
            FabricColumn::Peak => "peak",
            FabricColumn::At16Gib => "16GiB",
        }
    }
}

/// One row of the fabric comparison.
#[derive(Debug, Clone, Serialize)]
pub struct FabricRow {
    pub collective: Collective,
    pub bytes: f64,
    pub measured_busbw_gbps: f64,
    pub predicted_busbw_gbps: f64,
    pub column: FabricColumn,
    /// The efficiency was fitted on this row's measurement, so its prediction matches by construction and
    /// says nothing about the model: true for every 16 GiB row, and for a peak row measured at 16 GiB (or
    /// standing in for a missing 16 GiB value). Only rows with `fitted == false` are predictions.
    pub fitted: bool,
    pub efficiency: f64,
}

/// Fits each collective's efficiency on its 16 GiB row and predicts both columns.
pub fn compare(fabric: &FabricFile, link: &LinkParams) -> Vec<FabricRow> {
    let limit = link.payload_bytes_per_sec();
    let big = 16.0 * crate::units::GIB;
    let mut rows = Vec::new();
    for r in &fabric.nccl {
        // Without a 16 GiB value the peak value stands in for it, so the peak row becomes the fitted one.
        let at_16 = r.busbw_16gib_gb_s.unwrap_or(r.peak_busbw_gb_s) * 1e9;
        let peak_is_fit_point = r.busbw_16gib_gb_s.is_none() || r.peak_size_bytes == big;
        // Invert m = f*S / (alpha + f*S/(e*B)) for e: e = f*S / ((f*S/m - alpha) * B).
        let f = busbw_factor(r.collective);
        let e = f * big / ((f * big / at_16 - link.call_latency_s) * limit);
        let e = if e.is_finite() && e > 0.0 { e } else { at_16 / limit };
        for (column, bytes, measured, fitted) in [
            (FabricColumn::Peak, r.peak_size_bytes, r.peak_busbw_gb_s, peak_is_fit_point),
            (FabricColumn::At16Gib, big, at_16 / 1e9, true),
        ] {
            rows.push(FabricRow {
                collective: r.collective,
                bytes,
                measured_busbw_gbps: measured,
                predicted_busbw_gbps: busbw(link, e, r.collective, bytes) / 1e9,
                column,
                fitted,
                efficiency: e,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_all_reduce_moves_2_n_minus_1_over_n_of_its_bytes_at_bus_bandwidth() {
        assert_eq!([1.0, 2.0, 4.0, 8.0].map(ring_all_reduce_factor), [1.0, 1.0, 1.5, 1.75]);
        // Eight H100s at 360 GB/s of bus bandwidth reduce a message at 360 / 1.75 GB/s; two GPUs at the bus rate.
        let mut hw = HardwareSpec::one_gpu_for_tests(80e9, 3.35e12);
        hw.intra_bytes_per_sec = 360e9;
        hw.gpus = 8.0;
        let (cost, measured) = tp_all_reduce(&hw, 1.0);
        // NCCL's ring LL over eight NVLink GPUs: 6.6 + 14 x 0.6 us.
        let expected = AllReduceCost::Fixed { latency_s: 15.0e-6, bytes_per_sec: 360e9 / 1.75 };
        let (lat, transfer) = cost.call(1e6);
        assert!((lat - 15.0e-6).abs() < 1e-12 && (transfer - 1.75e6 / 360e9).abs() < 1e-15, "{cost:?} {expected:?}");
        assert!(measured.is_none());
        hw.intra_call_latency_s = Some(9e-6);
        assert_eq!(
            tp_all_reduce(&hw, 1.0).0.small_message_latency_s(),
            9e-6,
            "a measured call latency replaces NCCL's"
        );
        hw.gpus = 2.0;
        assert_eq!(tp_all_reduce(&hw, 1.0).0.call(360e9).1, 1.0);
        hw.gpus = 1.0;
        assert_eq!(tp_all_reduce(&hw, 1.0).0, AllReduceCost::Free);
    }

    #[test]
    fn across_machines_the_call_pays_nccls_network_hops_and_protocol_on_the_links_transport() {
        let mut hw = HardwareSpec::one_gpu_for_tests(80e9, 3.35e12);
        let bus = hw.link.payload_bytes_per_sec() * ALLREDUCE_LINK_EFFICIENCY;
        // Two single-GPU machines over RDMA: NCCL's tree LL for a small message, 6.8 + 2 x 5.0 us.
        let (cost, measured) = tp_all_reduce(&hw, 2.0);
        assert!((cost.small_message_latency_s() - 16.8e-6).abs() < 1e-12 && measured.is_none(), "{cost:?}");
        // 1 MB goes by ring LL at a quarter of the bus bandwidth (17.4 us + 1 MB / (bus / 4)), 64 MB by ring
        // Simple at the whole of it.
        assert!((cost.seconds(1e6) - (17.4e-6 + 4e6 / bus)).abs() < 1e-12, "{}", cost.seconds(1e6));
        assert!((cost.call(64e6).1 - 64e6 / bus).abs() < 1e-12);
        // TCP sockets with a 300 us round trip: each of the tree's two network hops costs 150 us.
        hw.link.round_trip_s = 300e-6;
        assert!((tp_all_reduce(&hw, 2.0).0.small_message_latency_s() - 306.8e-6).abs() < 1e-12);
        // Two 8-GPU machines: a costlier call, 15/8 of a large message through the link's bus bandwidth.
        hw.link.round_trip_s = 3e-6;
        hw.gpus = 8.0;
        let (cost16, _) = tp_all_reduce(&hw, 2.0);
        assert!(cost16.small_message_latency_s() > cost.small_message_latency_s());
        assert!((cost16.call(1e9).1 - 1.875e9 / bus).abs() < 1e-9, "{:?}", cost16.call(1e9));
        // A measured sweep stands only for the two ranks it measured.
        hw.link.all_reduce = AllReduceCurve::new([(1e3, 1e-5), (1e6, 1e-4)]);
        assert!(tp_all_reduce(&hw, 2.0).1.is_none());
        hw.gpus = 1.0;
        assert!(tp_all_reduce(&hw, 2.0).1.is_some());
    }
}

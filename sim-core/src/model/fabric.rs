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
//! A tensor-parallel engine's all-reduce (`tp_all_reduce`) is a ring over its n ranks: NCCL's cost model
//! (src/graph/tuning.cc, `ncclTopoTuneModel`) makes it 2(n-1) steps and converts the bus bandwidth to algorithm
//! bandwidth by n / (2(n-1)), so S bytes take 2(n-1)/n x S / busbw: 1 at two ranks, 1.75 at eight.

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
/// machine a rank, the machine's in-machine fabric, and a network hop no faster than half the link transport's
/// round trip.
pub fn communicator(hw: &HardwareSpec, span_machines: f64) -> Communicator {
    let machines = span_machines.max(1.0);
    Communicator {
        ranks: hw.gpus.max(1.0) * machines,
        machines,
        intra: hw.intra_fabric,
        net_hop_floor_s: if machines > 1.0 { hw.link.round_trip_s / 2.0 } else { 0.0 },
    }
}

/// How one all-reduce of a tensor-parallel engine over `span_machines` machines of `hw` costs: (algorithm
/// bandwidth, bytes/s; per-call latency, s; the link's measured sweep where it replaces both). Inside one
/// machine the hardware's intra-machine figure is NCCL's bus bandwidth, so the ring's factor turns it into the
/// rate at which a message's bytes are reduced.
///
/// The per-call latency is NCCL's own for a decode-sized message (`nccl::Communicator::small_message_latency_s`):
/// its rank count, its machines, the hops inside each and across the link on the link's transport. Inside one
/// machine a hardware file's measured call latency replaces it. Across machines of several GPUs each (16 ranks on
/// two 8-GPU machines) the link's bus bandwidth carries 2(n-1)/n of the message as inside a machine. A measured
/// sweep (taken between single-GPU machines) stands only for the two-rank ring it measured.
pub fn tp_all_reduce(hw: &HardwareSpec, span_machines: f64) -> (f64, f64, Option<&AllReduceCurve>) {
    let gpus = hw.gpus.max(1.0);
    let nccl = communicator(hw, span_machines).small_message_latency_s(Call::AllReduce);
    if span_machines > 1.0 {
        // The slowest hop decides: the link between machines, as measured where a sweep is published.
        let ranks = gpus * span_machines;
        let measured = (!hw.link.all_reduce.is_empty() && ranks <= 2.0).then_some(&hw.link.all_reduce);
        let bus = hw.link.payload_bytes_per_sec() * ALLREDUCE_LINK_EFFICIENCY;
        (bus / ring_all_reduce_factor(ranks), nccl, measured)
    } else if gpus > 1.0 {
        (hw.intra_bytes_per_sec / ring_all_reduce_factor(gpus), hw.intra_call_latency_s.unwrap_or(nccl), None)
    } else {
        (f64::INFINITY, 0.0, None)
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
        let (bw, lat, measured) = tp_all_reduce(&hw, 1.0);
        // NCCL's ring LL over eight NVLink GPUs: 6.6 + 14 x 0.6 us.
        assert!((bw - 360e9 / 1.75).abs() < 1.0 && (lat - 15.0e-6).abs() < 1e-12 && measured.is_none(), "{bw}");
        hw.intra_call_latency_s = Some(9e-6);
        assert_eq!(tp_all_reduce(&hw, 1.0).1, 9e-6, "a measured call latency replaces NCCL's model");
        hw.gpus = 2.0;
        assert_eq!(tp_all_reduce(&hw, 1.0).0, 360e9);
        hw.gpus = 1.0;
        assert_eq!(tp_all_reduce(&hw, 1.0).0, f64::INFINITY);
    }

    #[test]
    fn across_machines_the_call_pays_nccls_network_hops_on_the_links_transport() {
        let mut hw = HardwareSpec::one_gpu_for_tests(80e9, 3.35e12);
        let bus = hw.link.payload_bytes_per_sec() * ALLREDUCE_LINK_EFFICIENCY;
        // Two single-GPU machines over RDMA: NCCL's tree LL, 6.8 + 2 x 5.0 us, at the link's bus bandwidth.
        let (bw, lat, measured) = tp_all_reduce(&hw, 2.0);
        assert!(bw == bus && (lat - 16.8e-6).abs() < 1e-12 && measured.is_none(), "{lat}");
        // TCP sockets with a 300 us round trip: each of the tree's two network hops costs 150 us.
        hw.link.round_trip_s = 300e-6;
        assert!((tp_all_reduce(&hw, 2.0).1 - 306.8e-6).abs() < 1e-12);
        // Two 8-GPU machines: 15/8 of the message through the link's bus bandwidth, a costlier call.
        hw.link.round_trip_s = 3e-6;
        hw.gpus = 8.0;
        let (bw, lat16, _) = tp_all_reduce(&hw, 2.0);
        assert!(lat16 > lat && (bw - bus / 1.875).abs() < 1.0, "{lat16} {bw}");
        // A measured sweep stands only for the two ranks it measured.
        hw.link.all_reduce = AllReduceCurve::new([(1e3, 1e-5), (1e6, 1e-4)]);
        assert!(tp_all_reduce(&hw, 2.0).2.is_none());
        hw.gpus = 1.0;
        assert!(tp_all_reduce(&hw, 2.0).2.is_some());
    }
}

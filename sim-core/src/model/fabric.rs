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

/// Latency of one in-machine hop of a ring all-reduce whose ring also crosses the network, seconds: NCCL's NVLink
/// ring latency for the LL protocol (decode-sized messages), 0.47 us, times the 1.8 its tuner applies to LL's
/// in-machine hops when the communicator spans nodes (src/graph/tuning.cc: `hwLat[NCCL_HW_NVLINK][RING][LL]`,
/// `if (nNodes > 1 && p == NCCL_PROTO_LL) intraLat *= 1.8`; reported elsewhere).
pub const RING_NVLINK_HOP_LATENCY_S: f64 = 0.47e-6 * 1.8;

/// How one all-reduce of a tensor-parallel engine over `span_machines` machines of `hw` costs: (algorithm
/// bandwidth, bytes/s; per-call latency, s; the link's measured sweep where it replaces both). Inside one
/// machine the hardware's intra-machine figure is NCCL's bus bandwidth, so the ring's factor turns it into the
/// rate at which a message's bytes are reduced.
///
/// Across machines of several GPUs each (16 ranks on two 8-GPU machines) the ring makes 2(n-1) = 30 steps, two
/// of them over the network (tuning.cc: `nInterSteps = 2*(nNodes-1)`, latency `(nsteps - nInterSteps) x
/// intraLat + nInterSteps x interLat` over the base). The link's call latency is what a two-rank call across it
/// costs (the base and its two network steps), so the other 28 steps add `RING_NVLINK_HOP_LATENCY_S` each, and
/// the link's bus bandwidth carries 2(n-1)/n of the message as inside a machine. Chosen over charging the
/// two-rank latency alone (what a 16-rank call cost before): NCCL's own cost model counts every ring step. A
/// measured sweep (taken between single-GPU machines) stands only for the two-rank ring it measured.
pub fn tp_all_reduce(hw: &HardwareSpec, span_machines: f64) -> (f64, f64, Option<&AllReduceCurve>) {
    let gpus = hw.gpus.max(1.0);
    if span_machines > 1.0 {
        // The slowest hop decides: the link between machines, as measured where a sweep is published.
        let ranks = gpus * span_machines;
        let measured = (!hw.link.all_reduce.is_empty() && ranks <= 2.0).then_some(&hw.link.all_reduce);
        let in_machine_steps = (2.0 * (ranks - 1.0) - 2.0 * (span_machines - 1.0)).max(0.0);
        let bus = hw.link.payload_bytes_per_sec() * ALLREDUCE_LINK_EFFICIENCY;
        (
            bus / ring_all_reduce_factor(ranks),
            hw.link.call_latency_s + in_machine_steps * RING_NVLINK_HOP_LATENCY_S,
            measured,
        )
    } else if gpus > 1.0 {
        (hw.intra_bytes_per_sec / ring_all_reduce_factor(gpus), hw.intra_call_latency_s, None)
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
        assert!((bw - 360e9 / 1.75).abs() < 1.0 && lat == hw.intra_call_latency_s && measured.is_none(), "{bw}");
        hw.gpus = 2.0;
        assert_eq!(tp_all_reduce(&hw, 1.0).0, 360e9);
        hw.gpus = 1.0;
        assert_eq!(tp_all_reduce(&hw, 1.0).0, f64::INFINITY);
    }

    #[test]
    fn a_ring_over_two_eight_gpu_machines_pays_its_28_in_machine_steps_beside_the_link() {
        let mut hw = HardwareSpec::one_gpu_for_tests(80e9, 3.35e12);
        let bus = hw.link.payload_bytes_per_sec() * ALLREDUCE_LINK_EFFICIENCY;
        // Two single-GPU machines: the two-rank call, at the link's bus bandwidth.
        assert_eq!(tp_all_reduce(&hw, 2.0), (bus, hw.link.call_latency_s, None));
        // Two 8-GPU machines: 30 ring steps, 2 over the network (the link's latency), 28 over NVLink; 15/8 of
        // the message through the link's bus bandwidth.
        hw.gpus = 8.0;
        let (bw, lat, _) = tp_all_reduce(&hw, 2.0);
        assert!((lat - (hw.link.call_latency_s + 28.0 * RING_NVLINK_HOP_LATENCY_S)).abs() < 1e-15, "{lat}");
        assert!((bw - bus / 1.875).abs() < 1.0, "{bw}");
        // A measured sweep stands only for the two ranks it measured.
        hw.link.all_reduce = AllReduceCurve::new([(1e3, 1e-5), (1e6, 1e-4)]);
        assert!(tp_all_reduce(&hw, 2.0).2.is_none());
        hw.gpus = 1.0;
        assert!(tp_all_reduce(&hw, 2.0).2.is_some());
    }
}

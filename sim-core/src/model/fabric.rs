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

use crate::dataset::schema::{Collective, FabricFile};
use crate::spec::LinkParams;
use serde::Serialize;

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

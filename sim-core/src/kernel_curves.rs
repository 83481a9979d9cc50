//! The dataset's kernel tables laid on the machines: each GPU's GEMM curves measured on it where a table of it
//! exists, else carried over from a measured GPU by the ridge-relative rule of `spec::GemmCurves`.

use crate::dataset::schema::{GemmDtype, HardwareFile, KernelsFile};
use crate::dataset::Dataset;
use crate::spec::{CurveSource, GemmCurves, HardwareSpec, RooflineCurve};

/// The roofline a table's times are read against: the measured GPU's spec peaks and memory bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Roofline {
    pub flops_bf16: f64,
    pub flops_fp8: f64,
    pub hbm_bytes_per_sec: f64,
}

impl Roofline {
    /// A hardware file's roofline, as `scenario::hardware_spec` reads it (BF16 at half the FP8 rate where the
    /// file states none).
    pub fn of(h: &HardwareFile) -> Roofline {
        let si = |q: &crate::dataset::schema::Quantity| q.si().unwrap_or(f64::NAN);
        Roofline {
            flops_bf16: h.compute_bf16.as_ref().map(si).unwrap_or_else(|| si(&h.compute_fp8) / 2.0),
            flops_fp8: si(&h.compute_fp8),
            hbm_bytes_per_sec: si(&h.gpu_memory_bandwidth),
        }
    }
}

/// The GEMM curves a table gives (BF16, FP8), each sample read against the roofline of the GPU it measured.
pub fn curves_from_table(table: &KernelsFile, measured_on: Roofline) -> (RooflineCurve, RooflineCurve) {
    let samples = |dtype: GemmDtype| -> Vec<(f64, f64)> {
        let peak = match dtype {
            GemmDtype::Bf16 => measured_on.flops_bf16,
            GemmDtype::Fp8 => measured_on.flops_fp8,
        };
        let bw = measured_on.hbm_bytes_per_sec;
        let b = dtype.operand_bytes();
        table
            .gemm
            .iter()
            .filter(|r| r.dtype == dtype)
            .flat_map(|r| {
                r.m.iter().zip(&r.seconds).map(move |(&m, &t)| {
                    let flops = 2.0 * m * r.n * r.k;
                    let bytes = r.n * r.k * b + m * r.k * b + 2.0 * m * r.n;
                    let x = (flops / bytes) / (peak / bw);
                    (x, (flops / peak).max(bytes / bw) / t)
                })
            })
            .collect()
    };
    (RooflineCurve::from_samples(&samples(GemmDtype::Bf16)), RooflineCurve::from_samples(&samples(GemmDtype::Fp8)))
}

/// The table that measured `hardware_id`'s GPU, else the table every other GPU takes its curves from: the first
/// by id whose hardware file the dataset holds. `None` without a usable table.
pub fn table_for<'d>(ds: &'d Dataset, hardware_id: &str) -> Option<(&'d KernelsFile, bool)> {
    let usable = |t: &&KernelsFile| ds.hardware.contains_key(&t.hardware);
    ds.kernels
        .values()
        .filter(usable)
        .find(|t| t.hardware == hardware_id)
        .map(|t| (t, true))
        .or_else(|| ds.kernels.values().find(usable).map(|t| (t, false)))
}

/// Lays the dataset's GEMM curves on `hw`: measured where a table of its GPU exists, else transferred; left
/// empty (every GEMM at its roofline) without a table.
pub fn attach(ds: &Dataset, hw: &mut HardwareSpec) {
    let Some((table, own)) = table_for(ds, &hw.id) else { return };
    let Some(file) = ds.hardware.get(&table.hardware) else { return };
    let (bf16, fp8) = curves_from_table(table, Roofline::of(file));
    let source = if own {
        CurveSource::Measured { table: table.id.clone() }
    } else {
        CurveSource::Transferred { table: table.id.clone(), gpu: table.provenance.gpu.clone() }
    };
    hw.gemm = GemmCurves { bf16, fp8, source };
}

//! The dataset's kernel tables laid on the machines: each GPU's GEMM curves measured on it where a table of it
//! exists, else carried over from a measured GPU by the ridge-relative rule of `spec::GemmCurves`.

use crate::dataset::schema::{GemmDtype, HardwareFile, KernelsFile, StepPhase};
use crate::dataset::Dataset;
use crate::spec::{CurveSource, GemmCurves, HardwareSpec, KernelCosts, LayerKernels, RooflineCurve};

/// The roofline a table's times are read against: the measured GPU's spec peaks and memory bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Roofline {
    pub flops_bf16: f64,
    pub flops_fp8: f64,
    pub hbm_bytes_per_sec: f64,
}

impl Roofline {
    /// A hardware file's roofline, as the scenario's machine reads it (BF16 at half the FP8 rate where the file
    /// states none).
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

/// The fields of a kernel table no prediction reads (`curves_from_table` reads the GEMM rows, `kernel_costs` the
/// small GEMMs, the attention and elementwise rows and the stack's kernel counts): the checks' measurements,
/// which a bundle that only predicts (the page) can leave out.
pub const CHECK_ONLY_FIELDS: [&str; 1] = ["grouped_gemm"];

/// Rows a GEMM may multiply and still count as weight streaming (`KernelCosts`).
const STREAMING_ROWS: f64 = 16.0;

/// A kernel's cost beyond the roofline, from `table` measured on a GPU of `measured_on`'s bandwidth
/// (`spec::KernelCosts`): `None` without small GEMMs, elementwise rows or a stack's kernel counts.
pub fn kernel_costs(table: &KernelsFile, measured_on: Roofline) -> Option<KernelCosts> {
    // Time against bytes of every GEMM of a few rows, at its operands' width.
    let points: Vec<(f64, f64)> = table
        .gemm
        .iter()
        .flat_map(|r| {
            let b = r.dtype.operand_bytes();
            r.m.iter()
                .zip(&r.seconds)
                .filter(|(m, t)| **m <= STREAMING_ROWS && **t > 0.0)
                .map(move |(&m, &t)| (r.n * r.k * b + m * r.k * b + 2.0 * m * r.n, t))
        })
        .collect();
    let (fixed, per_byte) = least_squares_line(&points)?;
    let stream_share = 1.0 / (per_byte * measured_on.hbm_bytes_per_sec);
    let steps = table.steps.as_ref()?;
    // The median kernels of the graph-replayed passes of one phase, per layer.
    let per_layer = |phase: StepPhase| {
        let mut counts: Vec<f64> =
            steps.rows.iter().filter(|r| r.graph && r.phase == phase).filter_map(|r| r.kernels).collect();
        crate::stats::median(&mut counts).map(|k| k / steps.stack.layers)
    };
    let mut small: Vec<f64> =
        table.elementwise.iter().filter(|r| r.tokens > 0.0 && r.tokens <= STREAMING_ROWS).map(|r| r.seconds).collect();
    let (decode, small_kernel_s) = (per_layer(StepPhase::Decode)?, crate::stats::median(&mut small)?);
    let ok = |x: f64| x.is_finite() && x > 0.0;
    (ok(fixed)
        && ok(stream_share)
        && stream_share <= 1.0
        && ok(decode)
        && ok(small_kernel_s)
        && steps.stack.layers > 0.0)
        .then_some(KernelCosts {
            stream_fixed_s: fixed,
            stream_share,
            layer_kernels: LayerKernels {
                decode,
                prefill: per_layer(StepPhase::Prefill).unwrap_or(decode),
                mixed: per_layer(StepPhase::Mixed).unwrap_or(decode),
            },
            small_kernel_s,
            elementwise: medians_by(
                table
                    .elementwise
                    .iter()
                    .filter(|r| r.seconds > 0.0)
                    .map(|r| (r.bytes, r.bytes / measured_on.hbm_bytes_per_sec / r.seconds)),
            ),
            prefill_attention: medians_by(table.attention_prefill.iter().filter(|r| r.causal && r.seconds > 0.0).map(
                |r| {
                    let flops = 4.0 * r.heads * r.head_dim * r.query_tokens * r.query_tokens / 2.0;
                    (r.query_tokens, flops / measured_on.flops_bf16 / r.seconds)
                },
            )),
            decode_attention: medians_by(
                table
                    .attention_decode
                    .iter()
                    .filter(|r| r.seconds > 0.0)
                    .map(|r| (r.kv_bytes, (r.kv_bytes / measured_on.hbm_bytes_per_sec / r.seconds).min(1.0))),
            ),
        })
}

/// The median `y` of each distinct `x`, `x` increasing.
fn medians_by(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut by: std::collections::BTreeMap<u64, Vec<f64>> = std::collections::BTreeMap::new();
    for (x, y) in points.filter(|(x, y)| *x > 0.0 && y.is_finite() && *y > 0.0) {
        by.entry(x.to_bits()).or_default().push(y);
    }
    let mut out: Vec<(f64, f64)> =
        by.into_iter().filter_map(|(x, mut ys)| Some((f64::from_bits(x), crate::stats::median(&mut ys)?))).collect();
    crate::stats::sort_by(&mut out, |a, b| a.0.total_cmp(&b.0));
    out
}

/// The least-squares line `y = a + b x` through `points` (`None` for fewer than two distinct `x`).
fn least_squares_line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (points.len() >= 2 && sxx > 0.0).then(|| (my - sxy / sxx * mx, sxy / sxx))
}

/// A kernel table's text without `CHECK_ONLY_FIELDS`, compact: the same curves for half the bytes. `None` when the
/// text is not a JSON object (it is then bundled as it is, and the loader reports it).
pub fn predicting_part(text: &str) -> Option<String> {
    let mut v: serde_json::Value = serde_json::from_str(text).ok()?;
    let obj = v.as_object_mut()?;
    for field in CHECK_ONLY_FIELDS {
        obj.remove(field);
    }
    serde_json::to_string(&v).ok()
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
    if let Some(curves) = curves_of(ds, table, own) {
        hw.gemm = curves;
    }
}

/// `table`'s curves and kernel costs as a GPU takes them: measured on it (`own`), else carried over from the GPU
/// the table measured. `None` where the dataset lacks that GPU's hardware file.
pub fn curves_of(ds: &Dataset, table: &KernelsFile, own: bool) -> Option<GemmCurves> {
    let file = ds.hardware.get(&table.hardware)?;
    let (bf16, fp8) = curves_from_table(table, Roofline::of(file));
    let source = if own {
        CurveSource::Measured { table: table.id.clone() }
    } else {
        CurveSource::Transferred { table: table.id.clone(), gpu: table.provenance.gpu.clone() }
    };
    // Another GPU takes the measured share of its own bandwidth and the measured fixed times as they are.
    let kernels = kernel_costs(table, Roofline::of(file));
    Some(GemmCurves { bf16, fp8, source, kernels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{load, SourceText};
    use crate::spec::GemmShape;

    fn dataset(with_table: bool) -> Dataset {
        let mut files = vec![
            ("sources.json", include_str!("../../data/sources.json")),
            ("hardware/h100-sxm.json", include_str!("../../data/hardware/h100-sxm.json")),
            ("hardware/gb300-station.json", include_str!("../../data/hardware/gb300-station.json")),
        ];
        if with_table {
            files.push(("kernels/h100-sxm.json", include_str!("../../data/kernels/h100-sxm.json")));
        }
        let texts: Vec<SourceText> =
            files.into_iter().map(|(path, text)| SourceText { path: path.into(), text: text.into() }).collect();
        load(&texts).0
    }

    /// A machine with the roofline of hardware file `id`, its kernel curves laid on.
    fn spec(ds: &Dataset, id: &str) -> HardwareSpec {
        let r = Roofline::of(&ds.hardware[id]);
        let mut h = HardwareSpec {
            id: id.into(),
            flops_bf16: r.flops_bf16,
            flops_fp8: r.flops_fp8,
            ..HardwareSpec::one_gpu_for_tests(80e9, r.hbm_bytes_per_sec)
        };
        attach(ds, &mut h);
        h
    }

    /// The H100's table, read against its own roofline: large GEMMs at 0.55-0.85 of the tensor peak (cuBLAS on
    /// an H100 SXM reaches 650-770 of 989 BF16 TFLOP/s), and less at the ridge than far above it.
    #[test]
    fn the_h100_table_reaches_a_plausible_share_far_above_the_ridge_and_less_at_it() {
        let ds = dataset(true);
        let h = spec(&ds, "h100-sxm");
        assert_eq!(h.gemm.source, CurveSource::Measured { table: "h100-sxm".into() });
        for curve in [&h.gemm.bf16, &h.gemm.fp8] {
            let large = curve.compute_share();
            assert!((0.55..=0.85).contains(&large), "{large}");
            assert!(curve.share(1.0) < large, "ridge {} against {large}", curve.share(1.0));
        }
    }

    #[test]
    fn a_gpu_without_its_own_table_takes_the_measured_one_against_its_own_ridge() {
        let ds = dataset(true);
        let gb300 = spec(&ds, "gb300-station");
        assert!(matches!(gb300.gemm.source, CurveSource::Transferred { ref table, .. } if table == "h100-sxm"));
        let h100 = spec(&ds, "h100-sxm");
        // 256 rows of an 8192-wide BF16 GEMM sit near the H100's ridge and well below the GB300's: the GB300 reads
        // the curve at its ridge, the H100 just below it; far above both ridges the two nearly agree (their ridges
        // differ by a fifth).
        let rows = |m: f64| GemmShape { m, n: 8192.0, k: 8192.0, weight_bytes: 2.0, activation_bytes: 2.0 };
        let share = |h: &HardwareSpec, m: f64| h.gemm.share(16.0, rows(m), h.flops_bf16, h.hbm_bytes_per_sec);
        assert!((share(&gb300, 1e6) - share(&h100, 1e6)).abs() < 0.05);
        assert!(share(&gb300, 256.0) <= share(&h100, 1e6));
    }

    #[test]
    fn the_predicting_part_of_a_table_gives_the_same_curves() {
        let full = include_str!("../../data/kernels/h100-sxm.json");
        let part = predicting_part(full).expect("an object");
        assert!(part.len() < full.len() && !part.contains("grouped_gemm"), "{} of {}", part.len(), full.len());
        let parse = |t: &str| -> KernelsFile {
            let mut v: serde_json::Value = serde_json::from_str(t).expect("json");
            v.as_object_mut().expect("object").remove("$schema");
            serde_json::from_value(v).expect("a kernel table")
        };
        let ds = dataset(false);
        let roofline = Roofline::of(&ds.hardware["h100-sxm"]);
        assert_eq!(curves_from_table(&parse(full), roofline), curves_from_table(&parse(&part), roofline));
        assert_eq!(predicting_part("[1, 2]"), None);
    }

    /// The H100 table's kernel costs: a weight-streaming GEMM's line through its small GEMMs (a ramp of a few
    /// microseconds, then most of the bandwidth: nvbandwidth-class reads reach about 0.9 of an H100's 3.35 TB/s),
    /// the compiled stack's kernels per layer, a small kernel's time, and attention shares that rise with size.
    #[test]
    fn the_h100_table_gives_each_kernel_its_fixed_time_and_streaming_share() {
        let ds = dataset(true);
        let h = spec(&ds, "h100-sxm");
        let c = h.gemm.kernels.as_ref().expect("the H100 table times small GEMMs, elementwise kernels and a stack");
        assert!((2e-6..=10e-6).contains(&c.stream_fixed_s), "{c:?}");
        assert!((0.8..=1.0).contains(&c.stream_share), "{c:?}");
        let k = c.layer_kernels;
        assert!((6.0..=20.0).contains(&k.decode) && (6.0..=20.0).contains(&k.prefill), "{c:?}");
        // A mixed pass runs two attention calls with their own kernels around them.
        assert!(k.mixed > k.prefill && k.mixed > k.decode, "{c:?}");
        assert!(c.layer_fixed_s(true, true) > c.layer_fixed_s(true, false), "{c:?}");
        assert!((0.5e-6..=6e-6).contains(&c.small_kernel_s), "{c:?}");
        // An elementwise kernel of a few kilobytes is its launch; one of a gigabyte streams near the HBM's rate.
        let (tiny, huge) = (c.elementwise_share(1e4), c.elementwise_share(1e9));
        assert!(tiny.zip(huge).is_some_and(|(a, b)| a < 0.05 && (0.3..=1.0).contains(&b)), "{tiny:?} {huge:?}");
        let (short, long) = (c.prefill_attention_share(256.0), c.prefill_attention_share(16384.0));
        assert!(short.zip(long).is_some_and(|(a, b)| a < b && b <= 1.0), "{short:?} {long:?}");
        let (small, large) = (c.decode_attention_share(1e6), c.decode_attention_share(1e9));
        assert!(small.zip(large).is_some_and(|(a, b)| a < b && b <= 1.0), "{small:?} {large:?}");
        // Flat beyond the measured sizes.
        assert_eq!(c.prefill_attention_share(1.0), c.prefill_attention_share(2.0));
        // The GB300 takes the same laws, its own bandwidth scaling the streaming share's bytes per second.
        assert_eq!(spec(&ds, "gb300-station").gemm.kernels.as_ref(), Some(c));
    }

    #[test]
    fn without_a_table_every_machine_keeps_the_roofline() {
        let ds = dataset(false);
        let h = spec(&ds, "h100-sxm");
        assert_eq!(h.gemm.source, CurveSource::None);
        assert!(!h.gemm.measured());
        assert!(h.gemm.kernels.is_none());
    }
}

//! How much of its roofline a weight GEMM reaches, against its arithmetic intensity relative to the GPU's ridge
//! point: a curve measured on one GPU (`data/kernels/`), carried to any GPU by its own peaks and bandwidth.
//!
//! ```text
//!   roofline(M)  = max(2 M N K / peak, bytes / bandwidth)        bytes = N K b_w + M K b_a + 2 M N
//!   share(x)     = roofline / measured time                       x = (2 M N K / bytes) / (peak / bandwidth)
//! ```
//! At `x` well below 1 a GEMM streams its weights; well above 1 it multiplies at the share its kernels reach of
//! the tensor peak; near 1 (the ridge) it does neither well. Read against `x` rather than the rows `M`, the curve
//! transfers: a GPU whose ridge sits at 2,000 FLOP per byte (FP4 on Blackwell) reaches it at more rows than one
//! at 300 (BF16 on Hopper).

use serde::Serialize;

/// The knots of one precision's curve: (log2 x, share of the roofline), x increasing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RooflineCurve {
    knots: Vec<(f64, f64)>,
}

impl RooflineCurve {
    /// A curve through `(x, share)` samples: the median share in each half-octave of `x` that holds samples,
    /// knots at the median `x` of each. Non-finite or non-positive samples are dropped.
    pub fn from_samples(samples: &[(f64, f64)]) -> RooflineCurve {
        let mut s: Vec<(f64, f64)> = samples
            .iter()
            .filter(|(x, y)| x.is_finite() && *x > 0.0 && y.is_finite() && *y > 0.0)
            .map(|(x, y)| (x.log2(), *y))
            .collect();
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut knots = Vec::new();
        let mut i = 0;
        while i < s.len() {
            let bin = (s[i].0 * 2.0).floor();
            let j = s[i..].iter().position(|(lx, _)| (lx * 2.0).floor() != bin).map_or(s.len(), |n| i + n);
            let mut xs: Vec<f64> = s[i..j].iter().map(|p| p.0).collect();
            let mut ys: Vec<f64> = s[i..j].iter().map(|p| p.1).collect();
            if let (Some(x), Some(y)) = (crate::stats::median(&mut xs), crate::stats::median(&mut ys)) {
                knots.push((x, y));
            }
            i = j;
        }
        RooflineCurve { knots }
    }

    pub fn is_empty(&self) -> bool {
        self.knots.is_empty()
    }

    /// The share of the roofline at intensity ratio `x`: linear in log2 x between knots, the end knots' values
    /// beyond them; 1 for an empty curve (the roofline itself).
    pub fn share(&self, x: f64) -> f64 {
        let k = &self.knots;
        let (Some(first), Some(last)) = (k.first(), k.last()) else { return 1.0 };
        let lx = if x > 0.0 { x.log2() } else { f64::NEG_INFINITY };
        if lx <= first.0 {
            return first.1;
        }
        if lx >= last.0 {
            return last.1;
        }
        let i = k.partition_point(|p| p.0 <= lx);
        let (a, b) = (k[i - 1], k[i]);
        a.1 + (b.1 - a.1) * (lx - a.0) / (b.0 - a.0)
    }

    /// The share far above the ridge: what a large GEMM of this precision reaches of the tensor peak.
    pub fn compute_share(&self) -> f64 {
        self.knots.last().map_or(1.0, |k| k.1)
    }
}

/// Where a machine's GEMM curves come from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CurveSource {
    /// No kernel table in the dataset: every GEMM at its roofline, scaled by the engine's compute efficiency.
    #[default]
    None,
    /// Measured on this machine's GPU (`table` is the kernel table's id).
    Measured { table: String },
    /// Measured on another GPU and read against this one's ridge (`table` measured `gpu`).
    Transferred { table: String, gpu: String },
}

impl CurveSource {
    /// Where the curves come from, in words.
    pub fn describe(&self) -> String {
        match self {
            CurveSource::None => "no kernel table: GEMMs at the roofline times the engine's compute efficiency".into(),
            CurveSource::Measured { table } => format!("kernel table `{table}`, measured on this GPU"),
            CurveSource::Transferred { table, gpu } => {
                format!("kernel table `{table}` (measured on {gpu}), read against this GPU's own ridge")
            }
        }
    }
}

/// A machine's GEMM curves per operand precision, and where they come from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GemmCurves {
    #[serde(skip)]
    pub bf16: RooflineCurve,
    /// FP8 operands; FP4 weights (NVFP4, MXFP4) take this curve too: no measured GPU multiplies FP4 natively.
    #[serde(skip)]
    pub fp8: RooflineCurve,
    pub source: CurveSource,
    /// What each kernel of a step costs beyond its bytes and FLOPs, from the same table (`None` without one, or
    /// where the table measured no whole stack).
    #[serde(skip)]
    pub kernels: Option<KernelCosts>,
}

/// A kernel's cost beyond the roofline, as a kernel table measures it on its GPU.
///
/// ```text
///   a weight-streaming GEMM (a few rows):  t = stream_fixed_s + bytes / (stream_share * B_hbm)
///   one layer of a compiled stack:         layer_kernels kernels, every one but its weight GEMMs
///                                          at least small_kernel_s
/// ```
/// `stream_fixed_s` and `stream_share`: a least-squares line through the table's GEMMs of at most 16 rows,
/// time against bytes (on the H100: 5.2 us and 0.95 of 3.35 TB/s, within 4% at the median from 8 to 470 MB).
/// `layer_kernels`: the kernels one pass of the table's compiled stack launched (PyTorch's profiler), over its
/// layers, the median of its decode passes, of its prompts' and of its mixed passes apart (a mixed pass runs its
/// prompt's and its decodes' attention as two calls, with their own kernels around them); `small_kernel_s`: the
/// median of the table's elementwise kernels at 16 tokens or fewer. The memory-bound kernels whose bytes grow with
/// the step's tokens (`model::elementwise`) move them at the share of the memory bandwidth the table's elementwise
/// kernels reached at that size.
/// Attention runs at what the table's attention kernels reached: a causal prompt at a share of the BF16 peak
/// against its tokens, a decode at a share of the memory bandwidth against the KV bytes one call reads (each
/// the median over the measured head shapes, linear in the logarithm between measured sizes, flat beyond).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCosts {
    pub stream_fixed_s: f64,
    pub stream_share: f64,
    pub layer_kernels: LayerKernels,
    pub small_kernel_s: f64,
    /// (bytes one elementwise kernel moves, share of the memory bandwidth), bytes increasing; above 1 where the
    /// bytes stay in L2.
    pub elementwise: Vec<(f64, f64)>,
    /// (prompt tokens, share of the BF16 peak), tokens increasing.
    pub prefill_attention: Vec<(f64, f64)>,
    /// (KV bytes one call reads, share of the memory bandwidth), bytes increasing.
    pub decode_attention: Vec<(f64, f64)>,
}

/// Kernels per layer of the measured stack's passes, by what the pass carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerKernels {
    pub decode: f64,
    /// A prompt's pass (the decode pass's count where the table timed none).
    pub prefill: f64,
    /// A prompt and decodes in one pass (the decode pass's count where the table timed none).
    pub mixed: f64,
}

/// `points` (x increasing, x > 0) read at `x`: linear in `ln x` between neighbours, flat beyond the ends.
fn log_interpolate(points: &[(f64, f64)], x: f64) -> Option<f64> {
    let (first, last) = (points.first()?, points.last()?);
    if x.is_nan() || x <= first.0 {
        return Some(first.1);
    }
    if x >= last.0 {
        return Some(last.1);
    }
    let i = points.iter().position(|p| p.0 >= x)?;
    let (a, b) = (points[i - 1], points[i]);
    let w = (x.ln() - a.0.ln()) / (b.0.ln() - a.0.ln());
    Some(a.1 + (b.1 - a.1) * w)
}

/// Weight GEMMs of one layer of the measured stack (QKV, output, gate and up, down), the kernels whose fixed
/// cost is `stream_fixed_s`; its layer's other kernels cost `small_kernel_s` each.
pub const STACK_LAYER_GEMMS: f64 = 4.0;

impl KernelCosts {
    /// The share of the BF16 peak causal attention over a prompt of `tokens` reaches (`None` unmeasured).
    pub fn prefill_attention_share(&self, tokens: f64) -> Option<f64> {
        log_interpolate(&self.prefill_attention, tokens)
    }

    /// The share of the memory bandwidth a decode attention call reading `bytes` of KV reaches.
    pub fn decode_attention_share(&self, bytes: f64) -> Option<f64> {
        log_interpolate(&self.decode_attention, bytes)
    }

    /// The share of the memory bandwidth an elementwise kernel moving `bytes` reaches.
    pub fn elementwise_share(&self, bytes: f64) -> Option<f64> {
        log_interpolate(&self.elementwise, bytes)
    }

    /// The fixed time of one layer's kernels in a pass carrying prompt tokens (`prompt`), decodes (`decodes`) or
    /// both: its weight GEMMs' ramp and its other kernels' floor.
    pub fn layer_fixed_s(&self, prompt: bool, decodes: bool) -> f64 {
        let kernels = match (prompt, decodes) {
            (true, true) => self.layer_kernels.mixed,
            (true, false) => self.layer_kernels.prefill,
            _ => self.layer_kernels.decode,
        };
        STACK_LAYER_GEMMS * self.stream_fixed_s + (kernels - STACK_LAYER_GEMMS).max(0.0) * self.small_kernel_s
    }
}

impl GemmCurves {
    /// The curve of weights multiplied at `bits` (the model's compute precision).
    pub fn for_bits(&self, bits: f64) -> &RooflineCurve {
        if bits <= 8.0 {
            &self.fp8
        } else {
            &self.bf16
        }
    }

    /// The share of the tensor peak a weight GEMM reaches on this GPU (1 without a curve: the roofline, which
    /// the engine's fitted compute efficiency then scales). The step model charges the weight reads apart
    /// (`t = max(bytes, FLOPs) + ...`), so below the ridge the curve is read at the ridge: there the bytes' own
    /// term decides, and a table's small-GEMM times (which carry each kernel's ramp of a few microseconds) never
    /// stand in for the weight reads an engine streams.
    ///
    /// `peak`, `bandwidth`: this GPU's tensor peak at the precision `bits` and its memory bandwidth.
    pub fn share(&self, bits: f64, shape: GemmShape, peak: f64, bandwidth: f64) -> f64 {
        let curve = self.for_bits(bits);
        if curve.is_empty() || !(peak > 0.0 && bandwidth > 0.0) {
            return 1.0;
        }
        let x = shape.intensity() / (peak / bandwidth);
        curve.share(x.max(1.0)).min(1.0)
    }

    /// Whether the GEMMs' efficiency comes from a kernel table (then no compute efficiency is fitted).
    pub fn measured(&self) -> bool {
        self.source != CurveSource::None
    }
}

/// A GEMM's dimensions and element widths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmShape {
    pub m: f64,
    pub n: f64,
    pub k: f64,
    /// Bytes per weight element and per activation element.
    pub weight_bytes: f64,
    pub activation_bytes: f64,
}

impl GemmShape {
    /// FLOPs per byte moved: `2 M N K` over the weights, the input rows and the BF16 output.
    pub fn intensity(&self) -> f64 {
        let bytes =
            self.n * self.k * self.weight_bytes + self.m * self.k * self.activation_bytes + 2.0 * self.m * self.n;
        if bytes > 0.0 {
            2.0 * self.m * self.n * self.k / bytes
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_interpolates_in_log_x_and_holds_its_ends() {
        let c = RooflineCurve::from_samples(&[(0.25, 0.8), (1.0, 0.5), (4.0, 0.7), (16.0, 0.75)]);
        assert!((c.share(0.25) - 0.8).abs() < 1e-12);
        assert!((c.share(2.0) - 0.6).abs() < 1e-12, "{}", c.share(2.0));
        assert_eq!(c.share(1e-6), 0.8);
        assert_eq!(c.share(1e6), 0.75);
        assert_eq!(c.compute_share(), 0.75);
    }

    #[test]
    fn samples_in_one_half_octave_make_one_knot_at_their_median() {
        let c = RooflineCurve::from_samples(&[(1.0, 0.4), (1.1, 0.6), (1.2, 0.5), (8.0, 0.7), (f64::NAN, 1.0)]);
        assert_eq!(c.knots.len(), 2);
        assert!((c.knots[0].1 - 0.5).abs() < 1e-12);
        assert!((c.knots[0].0 - 1.1f64.log2()).abs() < 1e-12);
    }

    #[test]
    fn without_a_curve_every_gemm_is_at_its_roofline() {
        let g = GemmCurves::default();
        let shape = GemmShape { m: 64.0, n: 4096.0, k: 4096.0, weight_bytes: 2.0, activation_bytes: 2.0 };
        assert_eq!(g.share(16.0, shape, 1e15, 3e12), 1.0);
    }

    #[test]
    fn the_ridge_sits_at_more_rows_on_a_gpu_with_more_flops_per_byte() {
        let g = GemmCurves {
            bf16: RooflineCurve::from_samples(&[(0.1, 0.8), (1.0, 0.5), (10.0, 0.75)]),
            ..Default::default()
        };
        let at = |m: f64, peak: f64| {
            let shape = GemmShape { m, n: 8192.0, k: 8192.0, weight_bytes: 2.0, activation_bytes: 2.0 };
            g.share(16.0, shape, peak, 3.35e12)
        };
        // 300 rows sit at the ridge of a 1 PFLOP/s GPU; 2,100 rows are well past it there and still at the ridge
        // of a 7 PFLOP/s one (below the ridge the curve is read at it: the weight reads decide there).
        assert!((at(300.0, 1e15) - 0.5).abs() < 0.02, "{}", at(300.0, 1e15));
        assert!((at(2100.0, 7e15) - 0.5).abs() < 1e-9, "{}", at(2100.0, 7e15));
        assert!(at(2100.0, 1e15) > 0.6, "{}", at(2100.0, 1e15));
        assert!((at(1e6, 1e15) - 0.75).abs() < 1e-9, "far above the ridge: the large GEMM's share");
    }
}

//! Error statistics: the one signed-error formula, absolute percentage error, and median / 90th percentile
//! over a group of points. Every table, chart band and accuracy check computes its error here.

use serde::Serialize;

/// Signed error of a prediction against a measurement, in percent: positive when the model predicts too much.
pub fn signed_error_pct(predicted: f64, measured: f64) -> f64 {
    (predicted - measured) / measured * 100.0
}

/// Absolute percentage error, |predicted - measured| / measured x 100.
pub fn ape(predicted: f64, measured: f64) -> f64 {
    signed_error_pct(predicted, measured).abs()
}

/// Median and 90th percentile of absolute percentage error over a group of points.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct ErrorStats {
    pub n: usize,
    pub median_ape: f64,
    pub p90_ape: f64,
}

impl ErrorStats {
    /// Statistics of a list of absolute percentage errors; `None` for an empty list.
    pub fn of(apes: &[f64]) -> Option<ErrorStats> {
        if apes.is_empty() {
            return None;
        }
        let mut v = apes.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        Some(ErrorStats { n: v.len(), median_ape: quantile(&v, 0.5), p90_ape: quantile(&v, 0.9) })
    }
}

/// Linear-interpolated quantile of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_quantiles() {
        assert_eq!(signed_error_pct(110.0, 100.0), 10.0);
        assert_eq!(ape(90.0, 100.0), 10.0);
        let s = ErrorStats::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).expect("stats");
        assert_eq!((s.n, s.median_ape), (5, 3.0));
        assert!((s.p90_ape - 4.6).abs() < 1e-12);
        assert_eq!(ErrorStats::of(&[]), None);
    }
}

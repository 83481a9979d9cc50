//! Latency statistics as `vllm bench serve` reports them (`LatencyStats`): the mean, median, p90 and p99 of
//! per-request samples, percentiles by numpy's default linear interpolation, and of weighted samples (the
//! inter-token gaps, each step's length counted once for every request that waited it).

use serde::Serialize;

/// Mean, median, 90th and 99th percentile of one latency, seconds. Zero for no samples (vLLM's `np.mean(x or 0)`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LatencyStats {
    pub mean_s: f64,
    pub median_s: f64,
    pub p90_s: f64,
    pub p99_s: f64,
}

impl LatencyStats {
    /// The statistics of `samples`, each counted once.
    pub fn of(samples: &[f64]) -> Self {
        let mut weighted: Vec<(f64, f64)> = samples.iter().map(|&x| (x, 1.0)).collect();
        Self::of_weighted(&mut weighted)
    }

    /// The statistics of `(value, count)` samples as if each value were listed `count` times (counts are whole
    /// numbers of requests; non-positive and non-finite ones are left out). Sorts `samples` by value.
    pub fn of_weighted(samples: &mut Vec<(f64, f64)>) -> Self {
        samples.retain(|&(x, w)| w > 0.0 && w.is_finite() && x.is_finite());
        samples.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n: f64 = samples.iter().map(|s| s.1).sum();
        if n <= 0.0 {
            return LatencyStats::default();
        }
        let mean = samples.iter().map(|(x, w)| x * w).sum::<f64>() / n;
        LatencyStats {
            mean_s: mean,
            median_s: percentile(samples, n, 50.0),
            p90_s: percentile(samples, n, 90.0),
            p99_s: percentile(samples, n, 99.0),
        }
    }
}

impl LatencyStats {
    /// Every sample `d` seconds later: the statistics of a latency that gained a constant (a request's time
    /// outside the engine's steps). No samples stay none.
    pub fn shifted(self, d: f64) -> Self {
        if self == LatencyStats::default() {
            return self;
        }
        LatencyStats {
            mean_s: self.mean_s + d,
            median_s: self.median_s + d,
            p90_s: self.p90_s + d,
            p99_s: self.p99_s + d,
        }
    }
}

/// numpy's `percentile(x, p)` (method "linear") of the `n` values `sorted` lists with their counts: the value at
/// the fractional rank `p/100 (n - 1)`, interpolated between its two neighbours.
fn percentile(sorted: &[(f64, f64)], n: f64, p: f64) -> f64 {
    let rank = p / 100.0 * (n - 1.0);
    let below = rank.floor();
    let (lo, hi) = (value_at(sorted, below), value_at(sorted, (below + 1.0).min(n - 1.0)));
    lo + (hi - lo) * (rank - below)
}

/// The value at 0-based rank `k` of the listed values: the first whose cumulative count passes `k`.
fn value_at(sorted: &[(f64, f64)], k: f64) -> f64 {
    let mut seen = 0.0;
    for &(x, w) in sorted {
        seen += w;
        if seen > k + 1e-9 {
            return x;
        }
    }
    sorted.last().map_or(0.0, |s| s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy: `np.percentile([1, 2, 3, 4, 10], [50, 90, 99])` is `[3, 7.6, 9.76]`, the mean 4.
    #[test]
    fn percentiles_interpolate_as_numpy_does() {
        let s = LatencyStats::of(&[10.0, 2.0, 4.0, 1.0, 3.0]);
        assert_eq!(s.mean_s, 4.0);
        assert_eq!(s.median_s, 3.0);
        assert!((s.p90_s - 7.6).abs() < 1e-12, "{s:?}");
        assert!((s.p99_s - 9.76).abs() < 1e-12, "{s:?}");
        // An even count: the median is the midpoint of the middle two.
        assert_eq!(LatencyStats::of(&[1.0, 2.0, 3.0, 4.0]).median_s, 2.5);
    }

    #[test]
    fn counted_samples_read_as_their_expanded_list() {
        let mut weighted = vec![(0.02, 3.0), (0.01, 2.0), (0.5, 1.0)];
        let expanded = [0.02, 0.02, 0.02, 0.01, 0.01, 0.5];
        let (a, b) = (LatencyStats::of_weighted(&mut weighted), LatencyStats::of(&expanded));
        for (x, y) in [(a.mean_s, b.mean_s), (a.median_s, b.median_s), (a.p90_s, b.p90_s), (a.p99_s, b.p99_s)] {
            assert!((x - y).abs() < 1e-15, "{a:?} {b:?}");
        }
    }

    #[test]
    fn no_samples_read_zero_and_one_sample_is_every_statistic() {
        assert_eq!(LatencyStats::of(&[]), LatencyStats::default());
        let one = LatencyStats::of(&[0.3]);
        assert_eq!((one.mean_s, one.median_s, one.p90_s, one.p99_s), (0.3, 0.3, 0.3, 0.3));
    }
}

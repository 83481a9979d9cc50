//! Error statistics: the one signed-error formula, absolute percentage error, and median / 90th percentile
//! over a group of points. Every table, chart band and accuracy check computes its error here.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`, exactly as `v.sort_by(cmp)` does, through one shared instance of the standard
/// library's stable sort: the indices are sorted (by comparing the elements they name) and the permutation is
/// then applied in place. `sort_by` builds a copy of the whole sort per element type and comparator (about 4 KB
/// of wasm each, 1 KB gzipped); this builds only the small index and permutation code per caller. For a
/// comparator that is a total order the result is the one stable order, whichever algorithm gets there.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    sort_indices(&mut order, &mut |a, b| cmp(&v[a], &v[b]));
    // order[k] names the element that belongs at k: follow each cycle, swapping it into place; a visited
    // position is marked by pointing at itself.
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start || from == at {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

/// Collects pairs into a map as `collect()` does (a later pair wins a repeated key), by inserting them one by
/// one: `collect()` sorts the pairs first with a copy of the standard stable sort per pair type.
pub fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> std::collections::BTreeMap<K, V> {
    let mut m = std::collections::BTreeMap::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    m
}

/// Collects items into a set as `collect()` does, by inserting them one by one (see `map_of`).
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> std::collections::BTreeSet<T> {
    let mut s = std::collections::BTreeSet::new();
    for x in items {
        s.insert(x);
    }
    s
}

/// Sorts `v` stably by a key, as `v.sort_by_key(key)` does (see `sort_by`).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` stably, as `v.sort()` does (see `sort_by`).
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// The one instance of the standard stable sort behind `sort_by` (kept out of line so it stays one).
#[inline(never)]
fn sort_indices(order: &mut [usize], cmp: &mut dyn FnMut(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

/// Signed error of a prediction against a measurement, in percent: positive when the model predicts too much.
pub fn signed_error_pct(predicted: f64, measured: f64) -> f64 {
    (predicted - measured) / measured * 100.0
}

/// Absolute percentage error, |predicted - measured| / measured x 100.
pub fn ape(predicted: f64, measured: f64) -> f64 {
    signed_error_pct(predicted, measured).abs()
}

/// Median and 90th percentile of absolute percentage error over a group of points.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
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
        sort_by(&mut v, f64::total_cmp);
        Some(ErrorStats { n: v.len(), median_ape: quantile(&v, 0.5), p90_ape: quantile(&v, 0.9) })
    }
}

/// The median of `v` (the mean of the middle two for an even count), sorting `v` in place by `f64::total_cmp`;
/// `None` for no values.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    sort_by(v, f64::total_cmp);
    Some(quantile(v, 0.5))
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

    #[test]
    fn shared_sort_matches_the_standard_stable_sort() {
        // Keys with many ties, so stability shows: every length up to past the standard sort's insertion-sort
        // cutoff, and a few long ones, against `sort_by_key` on a copy.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in (0..70).chain([257, 1000, 4099]) {
            let v: Vec<(u64, usize)> = (0..len).map(|i| (next() % 7, i)).collect();
            let (mut ours, mut std) = (v.clone(), v);
            sort_by_key(&mut ours, |p| p.0);
            std.sort_by_key(|p| p.0);
            assert_eq!(ours, std, "length {len}");
        }
        let mut words = vec!["b", "a", "c", "a"];
        sort(&mut words);
        assert_eq!(words, ["a", "a", "b", "c"]);
    }
}

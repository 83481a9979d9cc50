//! Measured against predicted: every published point next to the model's number, with error statistics.

use crate::dataset::schema::AccuracyFile;
use crate::dataset::{Dataset, MeasuredPoint};
use crate::diagnostic::Diagnostic;
use crate::fit::{fit, Calibration, FitSet};
use crate::model::fabric::{compare, FabricRow};
use crate::model::{predict, Coefficients, Prediction};
use crate::scenario::{resolve, Scenario};
use crate::Mode;
use serde::Serialize;
use std::collections::BTreeMap;

/// One published point and its prediction.
#[derive(Debug, Clone, Serialize)]
pub struct ReportRow {
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    pub measured_tok_s: f64,
    pub predicted_tok_s: f64,
    /// Absolute percentage error, |predicted - measured| / measured x 100.
    pub ape: f64,
    /// `fitted` (the point informed the fit), `predicted` (held out), or `flagged` (dip, other checkpoint).
    pub role: &'static str,
    pub flags: Vec<String>,
    pub bottleneck: String,
    pub source: String,
    pub quote: String,
}

/// Median and 90th percentile of absolute percentage error over a group of points.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct ErrorStats {
    pub n: usize,
    pub median_ape: f64,
    pub p90_ape: f64,
}

impl ErrorStats {
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

/// Statistics of one group, split by role.
#[derive(Debug, Clone, Serialize)]
pub struct GroupStats {
    pub group: String,
    pub fitted: Option<ErrorStats>,
    pub predicted: Option<ErrorStats>,
}

/// The model's TP2-vs-PD comparison for one model at one workload.
#[derive(Debug, Clone, Serialize)]
pub struct ModeComparison {
    pub model: String,
    /// The three modes' predictions (flattened into the JSON object).
    #[serde(flatten)]
    pub modes: crate::plan::PlanRow,
    pub spills_on_one_station: bool,
    pub better: Mode,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub calibration: Calibration,
    pub rows: Vec<ReportRow>,
    pub by_model: Vec<GroupStats>,
    pub by_mode: Vec<GroupStats>,
    pub overall: GroupStats,
    pub mode_comparisons: Vec<ModeComparison>,
}

/// Resolves the scenario of every model that has one, keyed by model id.
pub fn scenarios_by_model(ds: &Dataset) -> (BTreeMap<String, Scenario>, Vec<Diagnostic>) {
    let mut out = BTreeMap::new();
    let mut errs = Vec::new();
    for sc in ds.scenarios.values() {
        let file = ds.paths.get(&("scenario".to_string(), sc.id.clone())).cloned().unwrap_or_default();
        match resolve(ds, &file, sc) {
            // The scenario named after its model describes the report's own setup; other scenarios of the
            // same model (planner examples on other hardware) never stand in for it.
            Ok(s) if s.id == s.model.id => {
                out.insert(s.model.id.clone(), s);
            }
            Ok(_) => {}
            Err(e) => errs.extend(e),
        }
    }
    (out, errs)
}

/// Builds the report for a fit over `set`.
pub fn build(ds: &Dataset, set: FitSet) -> Result<Report, Vec<Diagnostic>> {
    let (scenarios, errs) = scenarios_by_model(ds);
    if !errs.is_empty() {
        return Err(errs);
    }
    let points = ds.points();
    let calibration = fit(&scenarios, &points, set);
    Ok(build_with(&scenarios, &points, calibration))
}

/// Builds the report for already-fitted coefficients.
pub fn build_with(
    scenarios: &BTreeMap<String, Scenario>,
    points: &[MeasuredPoint],
    calibration: Calibration,
) -> Report {
    let k = &calibration.coefficients;
    let set = calibration.set;
    let rows: Vec<ReportRow> = points
        .iter()
        .filter_map(|p| {
            let s = scenarios.get(&p.model)?;
            let pr = predict(s, k, p.mode, p.isl, p.osl, p.concurrency);
            let role = if p.is_flagged() {
                "flagged"
            } else if set.includes(p) {
                "fitted"
            } else {
                "predicted"
            };
            Some(ReportRow {
                model: p.model.clone(),
                mode: p.mode,
                isl: p.isl,
                osl: p.osl,
                concurrency: p.concurrency,
                measured_tok_s: p.output_tok_s,
                predicted_tok_s: pr.output_tok_s,
                ape: (pr.output_tok_s - p.output_tok_s).abs() / p.output_tok_s * 100.0,
                role,
                flags: p.flags.iter().map(|f| f.name().to_string()).collect(),
                bottleneck: pr.bottleneck.name().to_string(),
                source: p.source.clone(),
                quote: p.quote.clone(),
            })
        })
        .collect();
    let group = |name: String, pred: &dyn Fn(&ReportRow) -> bool| -> GroupStats {
        let apes =
            |role: &str| -> Vec<f64> { rows.iter().filter(|r| r.role == role && pred(r)).map(|r| r.ape).collect() };
        GroupStats {
            group: name,
            fitted: ErrorStats::of(&apes("fitted")),
            predicted: ErrorStats::of(&apes("predicted")),
        }
    };
    let mut models: Vec<String> = rows.iter().map(|r| r.model.clone()).collect();
    models.dedup();
    models.sort();
    models.dedup();
    let by_model = models.iter().map(|m| group(m.clone(), &|r: &ReportRow| &r.model == m)).collect();
    let by_mode = Mode::ALL.iter().map(|m| group(m.name().to_string(), &|r: &ReportRow| r.mode == *m)).collect();
    // A model with no single-station point cannot be predicted from one station: its pair points are shown
    // per model but kept out of the overall predictive statistic, which answers "fit one, predict two".
    let has_single: std::collections::BTreeSet<&str> =
        rows.iter().filter(|r| r.mode == Mode::Single && r.role != "flagged").map(|r| r.model.as_str()).collect();
    let overall =
        group("overall".into(), &|r: &ReportRow| r.role != "predicted" || has_single.contains(r.model.as_str()));
    let mode_comparisons = scenarios.values().flat_map(|s| compare_modes(s, k)).collect();
    Report { calibration, rows, by_model, by_mode, overall, mode_comparisons }
}

/// TP2 against PD at 32 streams for each workload of a scenario, with the reason the numbers give.
pub fn compare_modes(s: &Scenario, k: &Coefficients) -> Vec<ModeComparison> {
    s.workloads
        .iter()
        .map(|w| {
            let modes = crate::plan::row(s, k, w.isl, w.osl, 32);
            let (single, tp2, pd) = (&modes.single, &modes.tp2, &modes.pd);
            let placement = crate::model::bandwidth::place(&s.model, &s.hardware, s.hardware.gpus.max(1.0), k);
            let spills = placement.spilled_bytes() > 0.0;
            let better = if tp2.output_tok_s >= pd.output_tok_s { Mode::Tp2 } else { Mode::Pd };
            let reason = explain(single, tp2, pd, spills, placement.spilled_bytes(), better);
            ModeComparison { model: s.model.id.clone(), modes, spills_on_one_station: spills, better, reason }
        })
        .collect()
}

/// A one-line reason for a recommendation, from the predicted numbers.
pub fn explain(
    single: &Prediction,
    tp2: &Prediction,
    pd: &Prediction,
    spills: bool,
    spilled_bytes: f64,
    better: Mode,
) -> String {
    let gain =
        |p: &Prediction| if single.output_tok_s > 0.0 { p.output_tok_s / single.output_tok_s } else { f64::INFINITY };
    match (better, spills) {
        (Mode::Tp2, true) => format!(
            "one machine spills {:.0} GB to the slow path (bound: {}); TP2 halves the weights per GPU and gives {:.1}x, PD keeps the spill on both and gives {:.1}x",
            spilled_bytes / 1e9,
            single.bottleneck.name(),
            gain(tp2),
            gain(pd)
        ),
        (Mode::Tp2, false) => format!(
            "the model fits one machine, but TP2 ({:.1}x, bound: {}) beats PD ({:.1}x, bound: {}) at this load",
            gain(tp2),
            tp2.bottleneck.name(),
            gain(pd),
            pd.bottleneck.name()
        ),
        (_, true) => format!(
            "one machine spills {:.0} GB, yet PD ({:.1}x, bound: {}) beats TP2 ({:.1}x, bound: {}) at this load",
            spilled_bytes / 1e9,
            gain(pd),
            pd.bottleneck.name(),
            gain(tp2),
            tp2.bottleneck.name()
        ),
        (_, false) => format!(
            "the model fits one machine: two full copies with PD give {:.1}x (decode never pauses for prefill; bound: {}), TP2 gives {:.1}x (bound: {})",
            gain(pd),
            pd.bottleneck.name(),
            gain(tp2),
            tp2.bottleneck.name()
        ),
    }
}

/// Fabric comparison for every fabric file whose hardware is known.
pub fn fabric_rows(ds: &Dataset) -> Vec<FabricRow> {
    ds.fabrics
        .values()
        .filter_map(|f| {
            let hw = ds.hardware.get(&f.hardware)?;
            Some(compare(f, &crate::scenario::hardware_spec(hw).link))
        })
        .flatten()
        .collect()
}

/// The model check `validate` runs: accuracy targets stored with the data.
pub fn model_check(ds: &Dataset) -> Vec<Diagnostic> {
    let Some(acc) = &ds.accuracy else { return Vec::new() };
    let file = "accuracy.json";
    let mut out = Vec::new();
    let (scenarios, errs) = scenarios_by_model(ds);
    if !errs.is_empty() {
        return errs;
    }
    let points = ds.points();
    let all = build_with(&scenarios, &points, fit(&scenarios, &points, FitSet::All));
    let single = build_with(&scenarios, &points, fit(&scenarios, &points, FitSet::Single));
    check_threshold(
        &mut out,
        file,
        "/fitted_median_ape_max",
        "fitted median",
        all.overall.fitted.map(|s| s.median_ape),
        acc.fitted_median_ape_max,
    );
    check_threshold(
        &mut out,
        file,
        "/fitted_p90_ape_max",
        "fitted 90th percentile",
        all.overall.fitted.map(|s| s.p90_ape),
        acc.fitted_p90_ape_max,
    );
    check_threshold(
        &mut out,
        file,
        "/predictive_median_ape_max",
        "predictive (fit on one station, predict the pair) median",
        single.overall.predicted.map(|s| s.median_ape),
        acc.predictive_median_ape_max,
    );
    for r in fabric_rows(ds).iter().filter(|r| r.column == "peak") {
        let ape = (r.predicted_busbw_gbps - r.measured_busbw_gbps).abs() / r.measured_busbw_gbps * 100.0;
        check_threshold(
            &mut out,
            file,
            "/fabric_peak_ape_max",
            &format!("fabric {} peak", r.collective.name()),
            Some(ape),
            acc.fabric_peak_ape_max,
        );
    }
    out.extend(accuracy_sanity(acc, file));
    out.into_iter().map(|d| ds.locate(d)).collect()
}

fn accuracy_sanity(acc: &AccuracyFile, file: &str) -> Vec<Diagnostic> {
    let vals =
        [acc.fitted_median_ape_max, acc.fitted_p90_ape_max, acc.predictive_median_ape_max, acc.fabric_peak_ape_max];
    if vals.iter().all(|v| v.is_finite() && *v > 0.0) {
        Vec::new()
    } else {
        vec![Diagnostic::error(file, "", "accuracy thresholds must be positive finite percentages")]
    }
}

fn check_threshold(out: &mut Vec<Diagnostic>, file: &str, pointer: &str, what: &str, got: Option<f64>, max: f64) {
    match got {
        Some(g) if g > max => out.push(
            Diagnostic::error(
                file,
                pointer,
                format!("model check: {what} absolute percentage error {g:.1}% exceeds {max}%"),
            )
            .with_hint("run `sim-core report data/` to see which points the model misses"),
        ),
        None => {
            out.push(Diagnostic::error(file, pointer, format!("model check: no points to compute the {what} error")))
        }
        _ => {}
    }
}

/// A published value that is not a point: a band over a concurrency range, or a value without a stated
/// concurrency (placed at the likely reading). Shown next to the prediction, never counted in statistics.
#[derive(Debug, Clone, Serialize)]
pub struct StatedValue {
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    /// What the text says, e.g. "573-611 tok/s over 32-256 streams".
    pub stated: String,
    /// (concurrency, predicted tok/s, inside the stated band or equal within 15%).
    pub predicted: Vec<(u32, f64, bool)>,
    pub quote: String,
}

/// Every range and unplaced value of the dataset, against the predictions at the concurrencies they cover.
pub fn stated_values(ds: &Dataset, k: &Coefficients) -> Vec<StatedValue> {
    let (scenarios, _) = scenarios_by_model(ds);
    let mut out = Vec::new();
    for sweep in ds.sweeps.values() {
        let Some(s) = scenarios.get(&sweep.model) else { continue };
        for series in &sweep.series {
            let at = |c: f64| predict(s, k, series.mode, series.isl, series.osl, c as u32).output_tok_s;
            for r in &series.ranges {
                let mut predicted = Vec::new();
                let mut c = r.concurrency_min;
                while c <= r.concurrency_max {
                    let p = at(c);
                    predicted.push((c as u32, p, (r.output_tok_s_min..=r.output_tok_s_max).contains(&p)));
                    c *= 2.0;
                }
                out.push(StatedValue {
                    model: sweep.model.clone(),
                    mode: series.mode,
                    isl: series.isl,
                    osl: series.osl,
                    stated: format!(
                        "{}-{} tok/s over {}-{} streams",
                        r.output_tok_s_min, r.output_tok_s_max, r.concurrency_min, r.concurrency_max
                    ),
                    predicted,
                    quote: r.from.quote.clone(),
                });
            }
            for u in &series.unplaced {
                let predicted = u
                    .likely_concurrency
                    .iter()
                    .zip(&u.output_tok_s)
                    .map(|(c, v)| {
                        let p = at(*c);
                        (*c as u32, p, ((p - v) / v).abs() <= 0.15)
                    })
                    .collect();
                let values: Vec<String> = u.output_tok_s.iter().map(|v| format!("{v}")).collect();
                let likely: Vec<String> = u.likely_concurrency.iter().map(|c| format!("{c}")).collect();
                out.push(StatedValue {
                    model: sweep.model.clone(),
                    mode: series.mode,
                    isl: series.isl,
                    osl: series.osl,
                    stated: format!(
                        "{} tok/s, concurrency not stated (likely {})",
                        values.join(", "),
                        likely.join("/")
                    ),
                    predicted,
                    quote: u.from.quote.clone(),
                });
            }
        }
    }
    out
}

//! Measured against predicted: every published point next to the model's number, with error statistics.

use crate::dataset::schema::{AccuracyFile, REPORT_DATASET};
use crate::dataset::{Dataset, MeasuredPoint, OpenLoopRun};
use crate::diagnostic::Diagnostic;
use crate::fit::Calibration;
use crate::model::fabric::{compare, FabricRow};
use crate::model::open_loop::predict_open_loop;
use crate::model::serving::{LengthSpread, OpenLoad};
use crate::model::{predict, Coefficients};
use crate::plan::{explain, PlanRow};
use crate::scenario::{resolve, Scenario};
use crate::stats::ape;
pub use crate::stats::ErrorStats;
use crate::Mode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a published point is to a fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointRole {
    /// The point informed the fit.
    Fitted,
    /// Held out of the fit: its error is a prediction's.
    Predicted,
    /// Dip or other checkpoint: shown apart, never fitted or counted.
    Flagged,
}

impl PointRole {
    pub fn name(self) -> &'static str {
        match self {
            PointRole::Fitted => "fitted",
            PointRole::Predicted => "predicted",
            PointRole::Flagged => "flagged",
        }
    }
}

/// One published point and its prediction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReportRow {
    pub dataset: String,
    pub scenario: String,
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: u32,
    pub measured_tok_s: f64,
    pub predicted_tok_s: f64,
    /// Absolute percentage error, |predicted - measured| / measured x 100.
    pub ape: f64,
    /// The prediction's latencies and preemptions at this point (shown beside tok/s).
    pub predicted_ttft_s: f64,
    pub predicted_tpot_s: f64,
    pub predicted_preemptions_per_request: f64,
    /// The latencies the source states at this point, seconds (`None` where it states none): the mean TTFT and
    /// the mean TPOT (`PointLatency::mean_tpot_ms`). No fit reads them: their errors are always predictions'.
    pub measured_ttft_s: Option<f64>,
    pub measured_tpot_s: Option<f64>,
    /// For a run sent at a rate, predicted as an open loop: whether the machine kept up with the offered rate
    /// (`OpenLoopRun::kept_up`); `None` for every other point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_loop_kept_up: Option<bool>,
    /// The median TTFT the source states and, for an open-loop prediction, the predicted one, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_median_ttft_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_median_ttft_s: Option<f64>,
    pub role: PointRole,
    pub flags: Vec<String>,
    pub bottleneck: String,
    pub source: String,
    pub quote: String,
}

/// Statistics of one group, split by role.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupStats {
    pub group: String,
    pub fitted: Option<ErrorStats>,
    pub predicted: Option<ErrorStats>,
}

/// The model's TP2-vs-PD comparison for one model at one workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModeComparison {
    pub model: String,
    /// Every mode's prediction (flattened into the JSON object).
    #[serde(flatten)]
    pub row: PlanRow,
    pub spills_on_one_station: bool,
    pub better: Mode,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub calibration: Calibration,
    pub rows: Vec<ReportRow>,
    pub by_model: Vec<GroupStats>,
    pub by_mode: Vec<GroupStats>,
    /// Per dataset (publication): the calibration dataset's fitted error, every other dataset's predictive error.
    pub by_dataset: Vec<GroupStats>,
    pub overall: GroupStats,
    /// Per dataset that states latencies: the errors of the predicted mean TTFT and mean TPOT against the
    /// stated ones, split by the point's role in the throughput fit (no fit reads a latency).
    pub ttft_by_dataset: Vec<GroupStats>,
    pub tpot_by_dataset: Vec<GroupStats>,
    pub mode_comparisons: Vec<ModeComparison>,
}

/// Resolves the scenarios published points are measured under, keyed by scenario id: the scenario named after
/// each model (the report's own setup) and every scenario a sweep file names. Other scenarios (planner
/// examples on other hardware) never stand in for a measured setup.
pub fn sweep_scenarios(ds: &Dataset) -> (BTreeMap<String, Scenario>, Vec<Diagnostic>) {
    let named: std::collections::BTreeSet<&str> =
        crate::stats::set_of(ds.sweeps.values().filter_map(|s| s.scenario.as_deref()));
    let mut out = BTreeMap::new();
    let mut errs = Vec::new();
    for sc in ds.scenarios.values() {
        let file = ds.paths.get(&("scenario".to_string(), sc.id.clone())).cloned().unwrap_or_default();
        match resolve(ds, &file, sc) {
            Ok(s) if s.id == s.model.id || named.contains(s.id.as_str()) => {
                out.insert(s.id.clone(), s);
            }
            Ok(_) => {}
            Err(e) => errs.extend(e),
        }
    }
    (out, errs)
}

/// Builds the report for already-fitted coefficients fitted on the calibration dataset's points.
pub fn build_with(
    scenarios: &BTreeMap<String, Scenario>,
    points: &[MeasuredPoint],
    calibration: Calibration,
) -> Report {
    let set = calibration.set;
    build_for(scenarios, points, calibration, &|p| p.dataset == REPORT_DATASET && set.includes(p), &BTreeMap::new())
}

/// Builds the report for coefficients fitted on the points `fitted_on` admits; every other unflagged point is
/// a prediction. A scenario listed in `engines` predicts with those coefficients (its engine profile's);
/// the others with the calibration's.
pub fn build_for(
    scenarios: &BTreeMap<String, Scenario>,
    points: &[MeasuredPoint],
    calibration: Calibration,
    fitted_on: &dyn Fn(&MeasuredPoint) -> bool,
    engines: &BTreeMap<String, Coefficients>,
) -> Report {
    let k = &calibration.coefficients;
    let rows: Vec<ReportRow> = points
        .iter()
        .filter_map(|p| {
            let s = scenarios.get(&p.scenario)?;
            let k = engines.get(&p.scenario).unwrap_or(k);
            // A run sent at a rate is predicted as one: the open loop at its rate, prompts, arrivals and spread;
            // every other point (and a run the open loop refuses) as its closed loop or batch.
            let open = p.open_loop.as_ref().and_then(|run| open_loop_expected(s, k, p, run));
            let pr = match &open {
                Some(o) => o.point,
                None => PointPrediction::of(&predict(s, k, p.mode, p.isl, p.osl, p.concurrency)),
            };
            let role = if p.is_flagged() {
                PointRole::Flagged
            } else if fitted_on(p) {
                PointRole::Fitted
            } else {
                PointRole::Predicted
            };
            Some(ReportRow {
                dataset: p.dataset.clone(),
                scenario: p.scenario.clone(),
                model: p.model.clone(),
                mode: p.mode,
                isl: p.isl,
                osl: p.osl,
                concurrency: p.concurrency,
                measured_tok_s: p.output_tok_s,
                predicted_tok_s: pr.output_tok_s,
                ape: ape(pr.output_tok_s, p.output_tok_s),
                predicted_ttft_s: pr.ttft_s,
                predicted_tpot_s: pr.tpot_s,
                predicted_preemptions_per_request: pr.preemptions_per_request,
                measured_ttft_s: p.latency.ttft_ms.map(|ms| ms / 1e3),
                measured_tpot_s: p.latency.mean_tpot_ms().map(|ms| ms / 1e3),
                open_loop_kept_up: p.open_loop.as_ref().filter(|_| open.is_some()).map(|run| run.kept_up()),
                measured_median_ttft_s: p.latency.median_ttft_ms.map(|ms| ms / 1e3),
                predicted_median_ttft_s: open.as_ref().map(|o| o.median_ttft_s),
                role,
                flags: p.flags.iter().map(|f| f.name().to_string()).collect(),
                bottleneck: pr.bottleneck.name().to_string(),
                source: p.source.clone(),
                quote: p.quote.clone(),
            })
        })
        .collect();
    // The statistics of one error (`err`: a row's APE of some quantity, `None` where it has none) over the
    // rows `pred` admits, by role.
    let group_of = |name: String, pred: &dyn Fn(&ReportRow) -> bool, err: &dyn Fn(&ReportRow) -> Option<f64>| {
        let apes = |role: PointRole| -> Vec<f64> {
            rows.iter().filter(|r| r.role == role && pred(r)).filter_map(err).collect()
        };
        GroupStats {
            group: name,
            fitted: ErrorStats::of(&apes(PointRole::Fitted)),
            predicted: ErrorStats::of(&apes(PointRole::Predicted)),
        }
    };
    let group = |name: String, pred: &dyn Fn(&ReportRow) -> bool| group_of(name, pred, &|r| Some(r.ape));
    let mut models: Vec<String> = rows.iter().map(|r| r.model.clone()).collect();
    models.dedup();
    crate::stats::sort(&mut models);
    models.dedup();
    let by_model = models.iter().map(|m| group(m.clone(), &|r: &ReportRow| &r.model == m)).collect();
    // Modes with published points only (the planner's modes can outnumber what was measured).
    let by_mode = Mode::EVERY
        .iter()
        .filter(|m| rows.iter().any(|r| r.mode == **m))
        .map(|m| group(m.name().to_string(), &|r: &ReportRow| r.mode == *m))
        .collect();
    // A model with no single-station point cannot be predicted from one station: its pair points are shown
    // per model but kept out of the overall predictive statistic, which answers "fit one, predict two".
    let has_single: std::collections::BTreeSet<&str> = crate::stats::set_of(
        rows.iter().filter(|r| r.mode == Mode::Single && r.role != PointRole::Flagged).map(|r| r.model.as_str()),
    );
    // The overall numbers answer for the calibration dataset (the GB300 report); other datasets have their own.
    let overall = group("overall".into(), &|r: &ReportRow| {
        r.dataset == REPORT_DATASET && (r.role != PointRole::Predicted || has_single.contains(r.model.as_str()))
    });
    let mut datasets: Vec<String> = rows.iter().map(|r| r.dataset.clone()).collect();
    crate::stats::sort(&mut datasets);
    datasets.dedup();
    let by_dataset = datasets.iter().map(|d| group(d.clone(), &|r: &ReportRow| &r.dataset == d)).collect();
    let latency = |err: &dyn Fn(&ReportRow) -> Option<f64>| -> Vec<GroupStats> {
        datasets
            .iter()
            .map(|d| group_of(d.clone(), &|r: &ReportRow| &r.dataset == d, err))
            .filter(|g| g.fitted.is_some() || g.predicted.is_some())
            .collect()
    };
    let ttft_by_dataset = latency(&|r| r.ttft_ape());
    let tpot_by_dataset = latency(&|r| r.tpot_ape());
    // The report's own comparison: the scenarios named after their models.
    let mode_comparisons =
        scenarios.values().filter(|s| s.id == s.model.id).flat_map(|s| compare_modes(s, k)).collect();
    Report {
        calibration,
        rows,
        by_model,
        by_mode,
        by_dataset,
        overall,
        ttft_by_dataset,
        tpot_by_dataset,
        mode_comparisons,
    }
}

impl ReportRow {
    /// APE of the predicted mean TTFT against the stated one (`None` where the source states none or the
    /// prediction has none).
    pub fn ttft_ape(&self) -> Option<f64> {
        stated_ape(self.predicted_ttft_s, self.measured_ttft_s)
    }

    /// APE of the predicted mean TPOT against the stated one.
    pub fn tpot_ape(&self) -> Option<f64> {
        stated_ape(self.predicted_tpot_s, self.measured_tpot_s)
    }
}

/// Seeds an open-loop run is replayed with: a run of a hundred prompts draws its lengths and gaps once, and one
/// draw's mean output length alone sits a few percent from the stated one, so the prediction is the mean over
/// several draws (the measured run is one draw of its own, which no seed here can replay).
const OPEN_LOOP_SEEDS: u64 = 4;

/// What a report row reads of a prediction.
#[derive(Clone, Copy)]
struct PointPrediction {
    output_tok_s: f64,
    ttft_s: f64,
    tpot_s: f64,
    preemptions_per_request: f64,
    bottleneck: crate::model::Bottleneck,
}

impl PointPrediction {
    fn of(p: &crate::model::Prediction) -> Self {
        PointPrediction {
            output_tok_s: p.output_tok_s,
            ttft_s: p.ttft_s,
            tpot_s: p.tpot_s,
            preemptions_per_request: p.preemptions_per_request,
            bottleneck: p.bottleneck,
        }
    }
}

/// An open-loop run's expected prediction: the means over `OPEN_LOOP_SEEDS` draws of what a report row reads.
struct OpenLoopExpected {
    point: PointPrediction,
    median_ttft_s: f64,
}

/// The open-loop prediction of a run sent at a rate, averaged over `OPEN_LOOP_SEEDS` draws of its load; `None`
/// when the loop refuses it.
fn open_loop_expected(
    s: &Scenario,
    k: &Coefficients,
    p: &MeasuredPoint,
    run: &OpenLoopRun,
) -> Option<OpenLoopExpected> {
    let draws: Vec<_> = (0..OPEN_LOOP_SEEDS)
        .map(|seed| predict_open_loop(s, k, p.mode, p.isl, p.osl, &OpenLoad { seed, ..load_of(run) }).ok())
        .collect::<Option<_>>()?;
    let n = draws.len() as f64;
    let mean = |f: &dyn Fn(&crate::model::open_loop::OpenLoopPrediction) -> f64| draws.iter().map(f).sum::<f64>() / n;
    Some(OpenLoopExpected {
        point: PointPrediction {
            output_tok_s: mean(&|d| d.output_tok_s),
            ttft_s: mean(&|d| d.ttft.mean_s),
            tpot_s: mean(&|d| d.tpot.mean_s),
            preemptions_per_request: mean(&|d| d.preemptions_per_request),
            bottleneck: draws.first()?.bottleneck,
        },
        median_ttft_s: mean(&|d| d.ttft.median_s),
    })
}

/// The load an open-loop run sent, as the open loop replays it: its rate, prompts (vLLM's default 1,000 where the
/// source states none), arrivals and length spread (seed 0; `open_loop_expected` draws several).
fn load_of(run: &OpenLoopRun) -> OpenLoad {
    OpenLoad {
        rate: run.rate,
        burstiness: run.burstiness,
        max_concurrency: None,
        prompts: run.num_prompts.unwrap_or(1000),
        lengths: match run.random_range_ratio {
            Some(range_ratio) if range_ratio > 0.0 => LengthSpread::Uniform { range_ratio },
            _ => LengthSpread::Fixed,
        },
        seed: 0,
    }
}

impl ReportRow {
    /// APE of the predicted median TTFT of an open-loop run against the stated one.
    pub fn median_ttft_ape(&self) -> Option<f64> {
        self.predicted_median_ttft_s.and_then(|p| stated_ape(p, self.measured_median_ttft_s))
    }
}

/// APE of a prediction against a stated value, where both are there to compare.
fn stated_ape(predicted: f64, stated: Option<f64>) -> Option<f64> {
    stated.filter(|m| *m > 0.0 && predicted.is_finite()).map(|m| ape(predicted, m))
}

/// Every load where a publication measured two modes or more of one setup (unflagged points), the measured
/// modes ranked beside the model's: does the model pick the mode the measurement favours (the planner's
/// question), dataset by dataset in file order of the setups. Asked by the CLI's report, not by the page.
pub fn mode_verdicts(r: &Report) -> Vec<crate::plan::PublishedVerdict> {
    let mut keys: Vec<(&str, &str, u32, u32, u32)> = r
        .rows
        .iter()
        .filter(|x| x.role != PointRole::Flagged)
        .map(|x| (x.dataset.as_str(), x.scenario.as_str(), x.isl, x.osl, x.concurrency))
        .collect();
    crate::stats::sort(&mut keys);
    keys.dedup();
    keys.into_iter()
        .filter_map(|(dataset, scenario, isl, osl, c)| {
            let modes = r
                .rows
                .iter()
                .filter(|x| {
                    x.role != PointRole::Flagged
                        && (x.dataset.as_str(), x.scenario.as_str(), x.isl, x.osl, x.concurrency)
                            == (dataset, scenario, isl, osl, c)
                })
                .map(|x| crate::plan::MeasuredMode {
                    mode: x.mode,
                    measured_tok_s: x.measured_tok_s,
                    predicted_tok_s: x.predicted_tok_s,
                })
                .collect();
            crate::plan::PublishedVerdict::new((dataset, scenario), (isl, osl, c), modes)
        })
        .collect()
}

/// TP2 against PD at 32 streams for each workload of a scenario, with the reason the numbers give.
pub fn compare_modes(s: &Scenario, k: &Coefficients) -> Vec<ModeComparison> {
    s.workloads
        .iter()
        .map(|w| {
            let row = crate::plan::row(s, k, w.isl, w.osl, 32);
            let placement = crate::model::bandwidth::place(&s.model, &s.hardware, s.hardware.gpus.max(1.0), k);
            let spills = placement.spilled_bytes() > 0.0;
            let better =
                if row.get(Mode::Tp2).output_tok_s >= row.get(Mode::Pd).output_tok_s { Mode::Tp2 } else { Mode::Pd };
            let reason = explain(&row, placement.spilled_bytes(), better, s.router);
            ModeComparison { model: s.model.id.clone(), row, spills_on_one_station: spills, better, reason }
        })
        .collect()
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

/// One accuracy target of `data/accuracy.json` that `validate` enforces, with what the model gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnforcedTarget {
    /// What is measured: `fitted median`, `fabric all_reduce peak`, ...
    pub what: String,
    /// The field of `accuracy.json` that sets the target.
    pub pointer: String,
    /// The largest absolute percentage error allowed.
    pub max_ape: f64,
    /// The model's absolute percentage error (`None`: no points to compute it on, which fails the target).
    pub ape: Option<f64>,
}

impl EnforcedTarget {
    /// Whether the model meets the target (an error that is not above the maximum).
    pub fn met(&self) -> bool {
        self.ape.is_some_and(|g| g.partial_cmp(&self.max_ape) != Some(std::cmp::Ordering::Greater))
    }
}

/// What `validate`'s model check covers: every target it enforces with its result, and how many targets of the
/// accuracy protocol (reported by `sim-core report`, never enforced) the model misses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccuracySummary {
    pub enforced: Vec<EnforcedTarget>,
    /// Protocol rows that have a target (`accuracy.json`'s `protocol`, matched per dataset and question).
    pub protocol_targets: usize,
    /// Those whose error misses the target, as `dataset question` (`gb300-report pair_from_one`).
    pub protocol_missed: Vec<String>,
    /// The bands' coverage per question and metric (`explore::held_out::CoverageRow`), as text, and the
    /// coverage and least share they are held to (`None`: no `band_coverage` target).
    pub band_coverage: Vec<String>,
    pub band_target: Option<(f64, f64)>,
}

impl std::fmt::Display for AccuracySummary {
    /// `accuracy targets enforced: fitted median 4.9% <= 12%, ...; protocol targets (reported, not enforced):
    /// 2 of 4 missed (gb300-report fitted, ...)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let enforced: Vec<String> = self
            .enforced
            .iter()
            .map(|t| match t.ape {
                Some(g) => format!("{} {g:.1}% {} {}%", t.what, if t.met() { "<=" } else { ">" }, t.max_ape),
                None => format!("{} (no points) <= {}%", t.what, t.max_ape),
            })
            .collect();
        write!(
            f,
            "accuracy targets enforced: {}",
            if enforced.is_empty() { "none".into() } else { enforced.join(", ") }
        )?;
        write!(
            f,
            "; protocol targets (reported by `sim-core report`, not enforced): {} of {} missed",
            self.protocol_missed.len(),
            self.protocol_targets
        )?;
        if !self.protocol_missed.is_empty() {
            write!(f, " ({})", self.protocol_missed.join(", "))?;
        }
        if let Some((coverage, share)) = self.band_target {
            write!(
                f,
                "; held-out points inside their {:.0}% bands, at least {:.0}% each: {}",
                coverage * 100.0,
                share * 100.0,
                if self.band_coverage.is_empty() { "none judged".into() } else { self.band_coverage.join(", ") }
            )?;
        }
        Ok(())
    }
}

/// The targets the model check enforces, each with the error of the reports of the fit on all points and of the
/// fit on single-station points; empty without `accuracy.json`.
pub fn enforced_targets(ds: &Dataset, all: &Report, single: &Report) -> Vec<EnforcedTarget> {
    let Some(acc) = &ds.accuracy else { return Vec::new() };
    let target = |pointer: &str, what: &str, ape: Option<f64>, max_ape: f64| EnforcedTarget {
        what: what.to_string(),
        pointer: pointer.to_string(),
        max_ape,
        ape,
    };
    let mut out = vec![
        target(
            "/fitted_median_ape_max",
            "fitted median",
            all.overall.fitted.map(|s| s.median_ape),
            acc.fitted_median_ape_max,
        ),
        target(
            "/predictive_median_ape_max",
            "predictive (fit on one station, predict the pair) median",
            single.overall.predicted.map(|s| s.median_ape),
            acc.predictive_median_ape_max,
        ),
    ];
    if let Some(max) = acc.fitted_p90_ape_max {
        out.push(target("/fitted_p90_ape_max", "fitted 90th percentile", all.overall.fitted.map(|s| s.p90_ape), max));
    }
    // Only rows the efficiency was not fitted on are predictions; a fitted row matches by construction.
    for r in fabric_rows(ds).iter().filter(|r| !r.fitted) {
        let ape = ape(r.predicted_busbw_gbps, r.measured_busbw_gbps);
        out.push(target(
            "/fabric_peak_ape_max",
            &format!("fabric {} peak", r.collective.name()),
            Some(ape),
            acc.fabric_peak_ape_max,
        ));
    }
    out
}

/// The model check `validate` runs: accuracy targets stored with the data, against the reports of the fit on
/// all points and of the fit on single-station points (`explore::Workspace::model_check` passes both).
pub fn model_check_with(ds: &Dataset, all: &Report, single: &Report) -> Vec<Diagnostic> {
    let Some(acc) = &ds.accuracy else { return Vec::new() };
    let file = "accuracy.json";
    let mut out = Vec::new();
    for t in enforced_targets(ds, all, single) {
        check_threshold(&mut out, file, &t.pointer, &t.what, t.ape, t.max_ape);
    }
    out.extend(accuracy_sanity(acc, file));
    for (i, t) in acc.protocol.iter().enumerate() {
        if !crate::dataset::schema::PROTOCOL_QUESTIONS.contains(&t.question.as_str()) {
            out.push(
                Diagnostic::error(
                    file,
                    format!("/protocol/{i}/question"),
                    format!("unknown question `{}`", t.question),
                )
                .with_hint(format!("use one of {}", crate::dataset::schema::PROTOCOL_QUESTIONS.join(", "))),
            );
        }
        let bounded = t.median_ape_max.is_some() || t.p90_ape_max.is_some() || t.worst_ape_max.is_some();
        let pass_fail = t.metric == crate::dataset::schema::Metric::ModeOrder;
        if bounded == pass_fail {
            let msg = if pass_fail {
                "a mode_order target is pass or fail: it takes no median_ape_max, p90_ape_max or worst_ape_max"
            } else {
                "a target needs median_ape_max, p90_ape_max or worst_ape_max"
            };
            out.push(Diagnostic::error(file, format!("/protocol/{i}"), msg));
        }
    }
    out.into_iter().map(|d| ds.locate(d)).collect()
}

fn accuracy_sanity(acc: &AccuracyFile, file: &str) -> Vec<Diagnostic> {
    let vals = [
        acc.fitted_median_ape_max,
        acc.fitted_p90_ape_max.unwrap_or(1.0),
        acc.predictive_median_ape_max,
        acc.fabric_peak_ape_max,
    ];
    if vals.iter().all(|v| v.is_finite() && *v > 0.0) {
        Vec::new()
    } else {
        vec![Diagnostic::error(file, "", "accuracy thresholds must be positive finite percentages")]
    }
}

pub(crate) fn check_threshold(
    out: &mut Vec<Diagnostic>,
    file: &str,
    pointer: &str,
    what: &str,
    got: Option<f64>,
    max: f64,
) {
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

//! The bundled dataset: loaded through `sim_core::dataset::load` like the CLI does, validated, fitted once.

use sim_core::dataset::schema::{Claim, RangeRecord, Unplaced};
use sim_core::dataset::{self, Dataset, MeasuredPoint, SourceText};
use sim_core::fit::FitSet;
use sim_core::model::fabric::FabricRow;
use sim_core::model::Coefficients;
use sim_core::report::{self, ErrorStats, Report, ReportRow};
use sim_core::scenario::{HardwareSpec, LinkParams, Scenario};
use sim_core::Mode;
use std::collections::BTreeMap;

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/bundle.rs"));
}

/// What the page computes with; `errors` non-empty means the dataset is unusable and the page says why.
#[derive(Debug, Clone, Default)]
pub struct Bundle {
    pub errors: Vec<String>,
    pub scenarios: BTreeMap<String, Scenario>,
    pub coefficients: Coefficients,
    pub points: Vec<MeasuredPoint>,
    pub fabric: Vec<FabricRow>,
    pub link: Option<LinkParams>,
    /// Every `kind: hardware` file, resolved: the planner's presets.
    pub hardware: BTreeMap<String, HardwareSpec>,
    /// The throughput chart's error band per (model, mode): the 90th-percentile APE of the fitted points.
    pub error_bands: BTreeMap<(String, Mode), ErrorBand>,
    /// The dataset's derived claims, in file order.
    pub claims: Vec<Claim>,
    /// Values of the sweeps that are not points (ranges, values without a concurrency), per series.
    pub stated: Vec<StatedValues>,
    /// The report of the start-up fit (all unflagged points): error statistics, flagged points, coefficients.
    /// The accuracy view shows it; the single-station report is built only when that view opens.
    pub report: Option<Report>,
}

/// The ranges and unplaced values of one sweep series: shown on the throughput chart, never used as points.
#[derive(Debug, Clone)]
pub struct StatedValues {
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub ranges: Vec<RangeRecord>,
    pub unplaced: Vec<Unplaced>,
}

/// How far a model and mode's fitted points were from the fit: the 90th-percentile absolute percentage error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorBand {
    /// 90th-percentile APE, in percent.
    pub p90_pct: f64,
    /// How many fitted points it is taken over.
    pub n: usize,
    /// True when taken over this mode's fitted points; false when over all of the model's (fewer than
    /// `MIN_MODE_POINTS` fitted points for this mode).
    pub per_mode: bool,
}

/// Fewer fitted points than this for a (model, mode) and the band falls back to the model's overall p90.
pub const MIN_MODE_POINTS: usize = 3;

/// The error band of every (model, mode) that has one, from the report's rows (`role == "fitted"` only): the
/// mode's own p90 with at least `MIN_MODE_POINTS` fitted points, else the model's overall fitted p90, else none.
pub fn error_bands(rows: &[ReportRow], models: &[String]) -> BTreeMap<(String, Mode), ErrorBand> {
    let mut out = BTreeMap::new();
    for model in models {
        let fitted: Vec<&ReportRow> = rows.iter().filter(|r| &r.model == model && r.role == "fitted").collect();
        let overall = ErrorStats::of(&fitted.iter().map(|r| r.ape).collect::<Vec<_>>());
        for mode in Mode::ALL {
            let apes: Vec<f64> = fitted.iter().filter(|r| r.mode == mode).map(|r| r.ape).collect();
            let band = if apes.len() >= MIN_MODE_POINTS {
                ErrorStats::of(&apes).map(|s| ErrorBand { p90_pct: s.p90_ape, n: s.n, per_mode: true })
            } else {
                overall.map(|s| ErrorBand { p90_pct: s.p90_ape, n: s.n, per_mode: false })
            };
            if let Some(b) = band.filter(|b| b.p90_pct.is_finite()) {
                out.insert((model.clone(), mode), b);
            }
        }
    }
    out
}

impl Bundle {
    pub fn model_ids(&self) -> Vec<String> {
        self.scenarios.keys().cloned().collect()
    }

    pub fn hardware_ids(&self) -> Vec<String> {
        self.hardware.keys().cloned().collect()
    }
}

/// The embedded files as `SourceText`s, sorted by path.
pub fn sources() -> Vec<SourceText> {
    bundle::FILES.iter().map(|(p, t)| SourceText { path: p.to_string(), text: t.to_string() }).collect()
}

/// Loads, validates and fits the embedded dataset.
pub fn load() -> Bundle {
    load_from(&sources())
}

/// Loads, validates and fits any dataset given as texts (the test feeds broken ones).
pub fn load_from(files: &[SourceText]) -> Bundle {
    let (ds, mut diags) = dataset::load(files);
    if diags.iter().all(|d| !d.is_error()) {
        diags.extend(dataset::validate::check(&ds, None));
    }
    let errors: Vec<String> = diags.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    if !errors.is_empty() {
        return Bundle { errors, ..Bundle::default() };
    }
    fitted(&ds)
}

fn fitted(ds: &Dataset) -> Bundle {
    let report = match report::build(ds, FitSet::All) {
        Ok(r) => r,
        Err(e) => return Bundle { errors: e.iter().map(|d| d.to_string()).collect(), ..Bundle::default() },
    };
    let (scenarios, _) = report::scenarios_by_model(ds);
    // The link of the pair the fabric measurements were taken on.
    let link = ds
        .fabrics
        .values()
        .find_map(|f| ds.hardware.get(&f.hardware))
        .map(|h| sim_core::scenario::hardware_spec(h).link);
    let models: Vec<String> = scenarios.keys().cloned().collect();
    let error_bands = error_bands(&report.rows, &models);
    Bundle {
        errors: Vec::new(),
        error_bands,
        claims: ds.claims.iter().map(|(_, c)| c.clone()).collect(),
        stated: ds
            .sweeps
            .values()
            .flat_map(|f| f.series.iter().map(move |s| (f, s)))
            .filter(|(_, s)| !s.ranges.is_empty() || !s.unplaced.is_empty())
            .map(|(f, s)| StatedValues {
                model: f.model.clone(),
                mode: s.mode,
                isl: s.isl,
                osl: s.osl,
                ranges: s.ranges.clone(),
                unplaced: s.unplaced.clone(),
            })
            .collect(),
        scenarios,
        coefficients: report.calibration.coefficients.clone(),
        points: ds.points(),
        fabric: report::fabric_rows(ds),
        link,
        hardware: ds.hardware.iter().map(|(id, h)| (id.clone(), sim_core::scenario::hardware_spec(h))).collect(),
        report: Some(report),
    }
}

//! The bundled dataset: loaded through `sim_core::dataset::load` like the CLI does, validated, fitted once.

use sim_core::dataset::{self, Dataset, MeasuredPoint, SourceText};
use sim_core::model::fabric::FabricRow;
use sim_core::model::Coefficients;
use sim_core::report;
use sim_core::scenario::{HardwareSpec, LinkParams, Scenario};
use sim_core::fit::FitSet;
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
    let link = ds.fabrics.values().find_map(|f| ds.hardware.get(&f.hardware)).map(|h| sim_core::scenario::hardware_spec(h).link);
    Bundle {
        errors: Vec::new(),
        scenarios,
        coefficients: report.calibration.coefficients,
        points: ds.points(),
        fabric: report::fabric_rows(ds),
        link,
        hardware: ds.hardware.iter().map(|(id, h)| (id.clone(), sim_core::scenario::hardware_spec(h))).collect(),
    }
}

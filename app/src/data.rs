//! The bundled dataset: the files of `data/` compiled in, loaded into a `sim_core::explore::Workspace` as the
//! CLI loads a directory; checked and fitted once, at build time for the bundled files (app/build.rs).

use sim_core::dataset::SourceText;
use sim_core::explore::Workspace;
use sim_core::scenario::HardwareSpec;
use std::collections::BTreeMap;

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/bundle.rs"));
    include!(concat!(env!("OUT_DIR"), "/errors.rs"));
}

/// The fits of the bundled files, computed by the build script (`app/build.rs`).
pub const FITTED: &str = include_str!(concat!(env!("OUT_DIR"), "/fitted.json"));

/// What the page asks its questions of; `errors` non-empty means the dataset is unusable and the page says why.
#[derive(Debug, Default)]
pub struct Bundle {
    pub errors: Vec<String>,
    pub ws: Workspace,
    /// Every `kind: hardware` file, resolved: the planner's presets.
    pub hardware: BTreeMap<String, HardwareSpec>,
}

impl Bundle {
    pub fn model_ids(&self) -> Vec<String> {
        self.ws.models()
    }

    pub fn hardware_ids(&self) -> Vec<String> {
        self.hardware.keys().cloned().collect()
    }
}

/// The embedded files as `SourceText`s, sorted by path.
pub fn sources() -> Vec<SourceText> {
    bundle::FILES.iter().map(|(p, t)| SourceText { path: p.to_string(), text: t.to_string() }).collect()
}

/// Loads, validates and fits the embedded dataset. The build script has checked it: its errors, if any, are
/// the ones reported (the page's own loader skips those checks, see sim-core's `prechecked`).
pub fn load() -> Bundle {
    if !bundle::ERRORS.is_empty() {
        return Bundle { errors: bundle::ERRORS.iter().map(|e| e.to_string()).collect(), ..Bundle::default() };
    }
    load_from(&sources())
}

/// Loads, validates and fits any dataset given as texts (the tests feed broken ones).
pub fn load_from(files: &[SourceText]) -> Bundle {
    let ws = Workspace::load(files, None);
    if !ws.is_valid() {
        let errors = ws.errors().iter().map(|d| d.to_string()).collect();
        return Bundle { errors, ..Bundle::default() };
    }
    // The build script's fits when these are the bundled files; otherwise fit now, at start-up, rather than on
    // the first redraw.
    if !ws.adopt_fitted_state(files, FITTED) {
        ws.coefficients();
    }
    let hardware = ws.hardware();
    Bundle { errors: Vec::new(), ws, hardware }
}

//! The dataset the page asks its questions of: the data files app/build.rs writes (the files of `data/` with the
//! errors of every check, the fits, the bands' evidence), read into a `sim_core::explore::Workspace` as the CLI
//! loads a directory. The page fetches them (`fetch.rs`); native builds, the app's tests, compile them in.

use serde_json::Value;
use sim_core::dataset::SourceText;
use sim_core::explore::Workspace;
use sim_core::scenario::HardwareSpec;
use std::collections::BTreeMap;

/// The folder of the page's data files, relative to the page (Trunk's post-build hook copies them there).
pub const DATA_DIR: &str = "data";

/// The dataset's files and the errors of every check on them (`{"errors": [..], "files": [[path, text], ..]}`).
pub const DATASET_FILE: &str = env!("TWOTOWER_DATASET_FILE");
/// The fits every chart predicts with (`Workspace::fitted_state_json`, without the held-out evidence).
pub const FITS_FILE: &str = env!("TWOTOWER_FITS_FILE");
/// The held-out evidence of the planner's bands, with the fit it belongs to; adopted after the first chart.
pub const EVIDENCE_FILE: &str = env!("TWOTOWER_EVIDENCE_FILE");

/// The data files as the build script wrote them, for native builds (the page fetches them instead).
#[cfg(not(target_arch = "wasm32"))]
pub mod built {
    pub const DATASET: &str = include_str!(concat!(env!("OUT_DIR"), "/dataset.json"));
    pub const FITS: &str = include_str!(concat!(env!("OUT_DIR"), "/fits.json"));
    pub const EVIDENCE: &str = include_str!(concat!(env!("OUT_DIR"), "/evidence.json"));
}

/// What the page asks its questions of; `errors` non-empty means the dataset is unusable and the page says why.
#[derive(Debug, Default)]
pub struct Bundle {
    pub errors: Vec<String>,
    pub ws: Workspace,
    /// Every `kind: hardware` file, resolved: the planner's presets.
    pub hardware: BTreeMap<String, HardwareSpec>,
    /// The texts `ws` was loaded from: the fits and the evidence are adopted only when computed on exactly these.
    files: Vec<SourceText>,
}

impl Bundle {
    pub fn model_ids(&self) -> Vec<String> {
        self.ws.models()
    }

    pub fn hardware_ids(&self) -> Vec<String> {
        self.hardware.keys().cloned().collect()
    }

    /// Adopts the bands' evidence (`EVIDENCE_FILE`'s text): an error names the file when it does not parse or
    /// belongs to other data (the bands would otherwise run the whole accuracy protocol in the page).
    pub fn adopt_evidence(&self, text: &str) -> Result<(), String> {
        parse(EVIDENCE_FILE, text)?;
        if self.ws.adopt_fitted_state(&self.files, text) {
            Ok(())
        } else {
            Err(format!("{DATA_DIR}/{EVIDENCE_FILE}: its evidence is not of this dataset or this build"))
        }
    }
}

/// The dataset file's content: the files (paths relative to `data/`) and the errors of the full checks.
#[derive(Debug, Default)]
pub struct DatasetFile {
    pub errors: Vec<String>,
    pub files: Vec<SourceText>,
}

/// Reads the dataset file (`DATASET_FILE`'s text); an error names the file and the field that is wrong.
pub fn dataset_file(text: &str) -> Result<DatasetFile, String> {
    let v = parse(DATASET_FILE, text)?;
    let wrong = |field: &str, expected: &str| format!("{DATA_DIR}/{DATASET_FILE}: `{field}` is not {expected}");
    let errors = v
        .get("errors")
        .and_then(Value::as_array)
        .ok_or_else(|| wrong("errors", "a list"))?
        .iter()
        .enumerate()
        .map(|(i, e)| e.as_str().map(str::to_string).ok_or_else(|| wrong(&format!("errors[{i}]"), "a string")))
        .collect::<Result<_, _>>()?;
    let files = v
        .get("files")
        .and_then(Value::as_array)
        .ok_or_else(|| wrong("files", "a list"))?
        .iter()
        .enumerate()
        .map(|(i, f)| match f.as_array().map(Vec::as_slice) {
            Some([Value::String(path), Value::String(text)]) => {
                Ok(SourceText { path: path.clone(), text: text.clone() })
            }
            _ => Err(wrong(&format!("files[{i}]"), "a [path, text] pair")),
        })
        .collect::<Result<_, _>>()?;
    Ok(DatasetFile { errors, files })
}

/// Loads the dataset file's files and adopts the fits file's fits (`FITS_FILE`'s text). Errors of the dataset
/// itself are the bundle's `errors`; a file that does not read is an error naming it.
pub fn from_files(dataset: &str, fits: &str) -> Result<Bundle, String> {
    let d = dataset_file(dataset)?;
    if !d.errors.is_empty() {
        return Ok(Bundle { errors: d.errors, ..Bundle::default() });
    }
    parse(FITS_FILE, fits)?;
    Ok(load_with_fits(&d.files, fits))
}

/// The compiled-in data files' dataset, fits and evidence (native builds: the app's tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn load() -> Bundle {
    let b = from_files(built::DATASET, built::FITS).unwrap_or_else(|e| Bundle { errors: vec![e], ..Bundle::default() });
    if b.errors.is_empty() {
        if let Err(e) = b.adopt_evidence(built::EVIDENCE) {
            return Bundle { errors: vec![e], ..Bundle::default() };
        }
    }
    b
}

/// The compiled-in dataset's files, sorted by path (native builds).
#[cfg(not(target_arch = "wasm32"))]
pub fn sources() -> Vec<SourceText> {
    dataset_file(built::DATASET).map(|d| d.files).unwrap_or_default()
}

/// Loads, validates and fits any dataset given as texts (the tests feed broken ones).
pub fn load_from(files: &[SourceText]) -> Bundle {
    load_with_fits(files, "")
}

/// Loads `files`, adopting `fits` when they are these files' (else fitting now, at start-up, rather than on the
/// first redraw).
fn load_with_fits(files: &[SourceText], fits: &str) -> Bundle {
    let ws = Workspace::load(files, None);
    if !ws.is_valid() {
        let errors = ws.errors().iter().map(|d| d.to_string()).collect();
        return Bundle { errors, ..Bundle::default() };
    }
    if !ws.adopt_fitted_state(files, fits) {
        ws.coefficients();
    }
    let hardware = ws.hardware();
    Bundle { errors: Vec::new(), ws, hardware, files: files.to_vec() }
}

/// `text` parsed as JSON; an error names the data file `name` with the line and column.
fn parse(name: &str, text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{DATA_DIR}/{name}: not valid JSON: {e}"))
}

//! Writes the page's data files, which the page fetches rather than compiles in (app/src/data.rs names
//! them): every `.json` under ../data without the whitespace between tokens (the JSON Schemas in data/schema/ and
//! the stored fits in data/fitted/ describe or derive from the dataset and are no part of it) with the errors of
//! every check (the page shows them but does not run the checks itself), and their fits (the stored ones where
//! they are these files' and this build's, else fitted once with sim-core on the host; the page adopts them
//! instead of fitting at start-up, and a fingerprint of the texts makes sure they are these files' fits) split
//! into what the first chart needs and the bands' evidence, which only the planner's target reads. Also records
//! the commit the page is built from.

use sim_core::explore::stored_fits::FITTED_DIR;
use std::path::{Path, PathBuf};

// The CLI's runner of independent fits on every core: the held-out evidence baked below reads every case of
// the protocol.
#[path = "../sim-core/src/bin/sim-core/parallel.rs"]
mod parallel;

// The CLI's file reading: the stored fits are read as `sim-core` reads them.
#[path = "../sim-core/src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // only the stored fits' reader is used here
mod fsio;

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    // An unreadable data/ must stop the build: a page bundled without data only says "no sources defined".
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            // The JSON Schemas and the stored fits describe and derive from the dataset; neither is part of it.
            if dir == root && p.file_name().is_some_and(|n| n == "schema" || n == FITTED_DIR) {
                continue;
            }
            walk(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
            out.push((rel, p));
        }
    }
}

/// `json` without the whitespace between its tokens: the same document for any JSON reader, about 1 KB smaller
/// gzipped over the whole dataset. Strings are copied byte for byte (escapes included), so every value is kept.
fn without_layout(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if !c.is_ascii_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// Whether anything this build produces will run the page: a lint pass (`cargo clippy` runs build scripts but
/// no code) and the fuzz targets (the URL-state parser only) bake no fits, which take the build script most of a
/// minute; a page without baked fits still fits on demand, so either way the page is right.
fn runs_the_page() -> bool {
    println!("cargo:rerun-if-env-changed=RUSTC_WORKSPACE_WRAPPER");
    let linting = std::env::var("RUSTC_WORKSPACE_WRAPPER").is_ok_and(|w| w.contains("clippy-driver"));
    let fuzzing = std::env::var_os("CARGO_CFG_FUZZING").is_some();
    !linting && !fuzzing
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
    let root = root.canonicalize().unwrap_or(root);
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    assert!(!files.is_empty(), "no .json files under {}: the explorer needs the dataset", root.display());
    files.sort();
    for (_, p) in &files {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // The texts as written (for the checks, whose line and column point into the files) and as the page gets them.
    let texts: Vec<sim_core::dataset::SourceText> = files
        .iter()
        .map(|(rel, p)| sim_core::dataset::SourceText {
            path: rel.clone(),
            text: std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display())),
        })
        .collect();
    let shipped: Vec<sim_core::dataset::SourceText> = texts
        .iter()
        .map(|t| {
            // A kernel table's checks (attention, elementwise, whole steps) are never read by a prediction.
            let text = if t.path.starts_with("kernels/") {
                sim_core::kernel_curves::predicting_part(&t.text).unwrap_or_else(|| without_layout(&t.text))
            } else {
                without_layout(&t.text)
            };
            sim_core::dataset::SourceText { path: t.path.clone(), text }
        })
        .collect();
    // The commit the page is built from, for the metadata download's model version (`unknown` without git).
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TWOTOWER_COMMIT={commit}");
    for f in ["../.git/HEAD", "../.git/logs/HEAD"] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(f);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    // The errors of the full checks, which the page's own loader does not run (sim-core's `prechecked`): an
    // invalid dataset still shows the same list, field paths and all.
    let ws = sim_core::explore::Workspace::load(&texts, None);
    let errors: Vec<String> = ws.errors().iter().map(ToString::to_string).collect();
    let pairs: Vec<(&str, &str)> = shipped.iter().map(|t| (t.path.as_str(), t.text.as_str())).collect();
    let dataset = serde_json::json!({ "errors": errors, "files": pairs }).to_string();
    // The fits, exactly as the CLI computes them on data/ (an invalid dataset has none; the page then reports
    // its errors), stamped with the shipped texts' fingerprint: the page checks those.
    let (fits, evidence) = if ws.is_valid() && runs_the_page() {
        // The fits stored beside the data (`sim-core validate --refit`) when they are this data's and this
        // build's; otherwise fitted here, as the CLI would, with a warning that says why.
        let stored = fsio::read_stored_fits(&root).unwrap_or_else(|e| panic!("{e}"));
        if let Err(stale) = ws.adopt_stored_fits(&texts, &stored) {
            println!("cargo:warning=data/{}: {stale}; fitting here instead", stale.file());
            parallel::precompute(&ws, &[sim_core::fit::FitSet::All]);
        }
        split_evidence(&ws.fitted_state_json(&shipped))
    } else {
        ("null".to_string(), "null".to_string())
    };
    let page_files: Vec<(&str, String, String)> = [(DATASET, dataset), (FITS, fits), (EVIDENCE, evidence)]
        .into_iter()
        .map(|(name, text)| (name, published_name(name, &text), text))
        .collect();
    for (name, published, text) in &page_files {
        let path = out_dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        let var = name.trim_end_matches(".json").to_uppercase();
        println!("cargo:rustc-env=TWOTOWER_{var}_FILE={published}");
    }
    if is_the_pages_wasm() && runs_the_page() {
        publish(&out_dir, &page_files);
    }
}

/// The page's data files, as named in OUT_DIR (native builds compile them in from there).
const DATASET: &str = "dataset.json";
const FITS: &str = "fits.json";
const EVIDENCE: &str = "evidence.json";

/// The baked fits split in two: everything but the held-out evidence (what every chart predicts with), and the
/// evidence with the fit it belongs to (the bands of the planner's target; adopted later on its own).
fn split_evidence(state: &str) -> (String, String) {
    let mut first: serde_json::Value = serde_json::from_str(state).expect("sim-core wrote its fits as JSON");
    let held_out = first.get_mut("evidence").map(serde_json::Value::take).unwrap_or_default();
    first["evidence"] = serde_json::json!([]);
    let mut later = first.clone();
    later["engines"] = serde_json::json!([]);
    later["evidence"] = held_out;
    (first.to_string(), later.to_string())
}

/// Whether this build makes the page's wasm (a native build of the app only runs its tests).
fn is_the_pages_wasm() -> bool {
    std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32")
}

/// The name the page fetches `name` by: its content's fingerprint in it, so a host may cache it for good and a
/// page never reads another build's file.
fn published_name(name: &str, text: &str) -> String {
    let digest = sim_core::explore::Workspace::fingerprint(&[sim_core::dataset::SourceText {
        path: String::new(),
        text: text.to_string(),
    }]);
    format!("{}-{digest:016x}.json", name.trim_end_matches(".json"))
}

/// Copies the page's data files, under the names the page fetches, to `page-data/` beside the wasm Cargo builds
/// (`<target>/wasm32-unknown-unknown/<profile>/`), where Trunk's post-build hook (scripts/trunk-post-build.py)
/// copies them into the page's `data/` folder. Emptied first: only this build's files are published.
fn publish(out_dir: &Path, page_files: &[(&str, String, String)]) {
    // OUT_DIR is <profile dir>/build/<package>-<hash>/out.
    let Some(profile_dir) = out_dir.ancestors().nth(3) else {
        panic!("OUT_DIR {} is not <profile dir>/build/<package>/out", out_dir.display())
    };
    let dir = profile_dir.join("page-data");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    for (_, published, text) in page_files {
        let path = dir.join(published);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}

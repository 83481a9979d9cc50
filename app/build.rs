//! Generates the list of bundled dataset files (every `.json` under ../data, embedded with `include_str!`
//! without the whitespace between tokens; the JSON Schemas in data/schema/ and the stored fits in data/fitted/
//! describe or derive from the dataset and are no part of it), bakes their fits (the stored ones where they are
//! these files' and this build's, else fitted once with sim-core on the host; the page adopts them instead of
//! fitting at start-up, and a fingerprint of the texts makes sure they are these files' fits), checks them with
//! every check (the page shows their errors but does not run the checks itself), and records the commit the
//! page is built from.

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
    // The texts as written (for the checks, whose line and column point into the files) and as embedded.
    let texts: Vec<sim_core::dataset::SourceText> = files
        .iter()
        .map(|(rel, p)| sim_core::dataset::SourceText {
            path: rel.clone(),
            text: std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display())),
        })
        .collect();
    let embedded: Vec<sim_core::dataset::SourceText> = texts
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
    let mut src = String::from(
        "/// Every dataset file, path relative to data/ and its text.\npub const FILES: &[(&str, &str)] = &[\n",
    );
    for (i, t) in embedded.iter().enumerate() {
        let copy = out_dir.join(format!("data-{i}.json"));
        std::fs::write(&copy, &t.text).unwrap_or_else(|e| panic!("cannot write {}: {e}", copy.display()));
        src.push_str(&format!("    ({:?}, include_str!({:?})),\n", t.path, copy.display().to_string()));
    }
    src.push_str("];\n");
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
    std::fs::write(out_dir.join("bundle.rs"), src).unwrap();
    // The fits, exactly as the CLI computes them on data/ (an invalid dataset bakes nothing; the page then
    // reports its errors as before), stamped with the embedded texts' fingerprint: the page checks those.
    let ws = sim_core::explore::Workspace::load(&texts, None);
    let fitted = if ws.is_valid() && runs_the_page() {
        // The fits stored beside the data (`sim-core validate --refit`) when they are this data's and this
        // build's; otherwise fitted here, as the CLI would, with a warning that says why.
        let stored = fsio::read_stored_fits(&root).unwrap_or_else(|e| panic!("{e}"));
        if let Err(stale) = ws.adopt_stored_fits(&texts, &stored) {
            println!("cargo:warning=data/{}: {stale}; fitting here instead", stale.file());
            parallel::precompute(&ws, &[sim_core::fit::FitSet::All]);
        }
        ws.fitted_state_json(&embedded)
    } else {
        String::new()
    };
    // The errors of the full checks, which the page's own loader does not run (sim-core's `prechecked`): an
    // invalid dataset still shows the same list, field paths and all.
    let mut errors =
        String::from("/// The bundled files' errors, found here with every check.\npub const ERRORS: &[&str] = &[\n");
    for d in ws.errors() {
        errors.push_str(&format!("    {:?},\n", d.to_string()));
    }
    errors.push_str("];\n");
    std::fs::write(out_dir.join("errors.rs"), errors).unwrap();
    std::fs::write(out_dir.join("fitted.json"), fitted).unwrap();
}

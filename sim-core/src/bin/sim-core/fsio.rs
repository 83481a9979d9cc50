//! Reading datasets, their stored fits and seed texts from disk, and writing stored fits: the only file IO of
//! sim-core, in the CLI binary (the tests include this file by path; the library itself reads nothing, so it runs
//! unchanged in the browser).

use sim_core::dataset::validate::Seeds;
use sim_core::dataset::SourceText;
use sim_core::explore::stored_fits::{FITTED_DIR, STORED_FILES};
use std::path::Path;

/// The largest dataset file read, in bytes. The shipped files are at most ~15 KB; loading and validating grow
/// faster than the file (each diagnostic is located by walking the text up to its value, so a file whose
/// every point is wrong costs size x errors: ~17 s for 10,000 wrong points in 1.4 MB, minutes for 100,000,
/// and a million points were still validating after 5 minutes at 2.7 GB), so larger files are refused unread.
pub const MAX_DATASET_FILE_BYTES: u64 = 1 << 20;

/// Reads every `.json` file under `dir` (recursively, sorted) with paths relative to `dir`; a file over
/// [`MAX_DATASET_FILE_BYTES`] is an error naming it and the limit.
/// The folder of a dataset directory that holds the JSON Schemas (`sim-core schema` writes it).
pub const SCHEMA_DIR: &str = "schema";

pub fn load_dir(dir: &Path) -> Result<Vec<SourceText>, String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{}: not a directory", dir.display()));
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<SourceText>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        if path.is_dir() {
            // `schema/` at the root holds the JSON Schemas the files name by `$schema`, and `fitted/` the fits
            // computed from the files (`stored_fits`): neither is a dataset file.
            if dir == root && path.file_name().is_some_and(|n| n == SCHEMA_DIR || n == FITTED_DIR) {
                continue;
            }
            walk(root, &path, out)?;
        } else if path.extension().is_some_and(|x| x == "json") {
            let size = entry.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
            if size > MAX_DATASET_FILE_BYTES {
                return Err(format!(
                    "{}: the file is {:.1} MiB, over the {} MiB a dataset file may have (split a large sweep into files per model)",
                    path.display(),
                    size as f64 / f64::from(1 << 20),
                    MAX_DATASET_FILE_BYTES >> 20
                ));
            }
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            // Invalid UTF-8 is kept (lossily) so the validator reports it as a JSON error in that file.
            let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            out.push(SourceText { path: rel, text });
        }
    }
    Ok(())
}

/// The JSON Schemas of a dataset directory (`<dir>/schema/*.json`) with paths relative to `dir`
/// (`schema/sweep.json`), sorted; `None` when the dataset has no schema folder.
pub fn read_schemas(dir: &Path) -> Result<Option<Vec<SourceText>>, String> {
    let folder = dir.join(SCHEMA_DIR);
    if !folder.is_dir() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", folder.display()))?.path();
        if path.is_file() && path.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            out.push(SourceText { path: format!("{SCHEMA_DIR}/{name}"), text });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Some(out))
}

/// The stored fits of a dataset directory (`<dir>/fitted/`, `STORED_FILES` with paths relative to `dir`): those
/// that exist, none without the folder.
pub fn read_stored_fits(dir: &Path) -> Result<Vec<SourceText>, String> {
    let mut out = Vec::new();
    for name in STORED_FILES {
        let path = dir.join(name);
        if path.is_file() {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            out.push(SourceText { path: name.into(), text });
        }
    }
    Ok(out)
}

/// Writes stored fits (`Workspace::stored_fits`) under `dir`, creating `<dir>/fitted/`.
pub fn write_stored_fits(dir: &Path, files: &[SourceText]) -> Result<(), String> {
    let folder = dir.join(FITTED_DIR);
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    for f in files {
        let path = dir.join(&f.path);
        std::fs::write(&path, &f.text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Reads the seed texts of a directory, keyed by file name, and the texts beside that directory keyed
/// `../<name>`: other publications' tables (`../shared/external-sweeps.md` beside `../shared/seeds`), which
/// external sources name relative to the seeds.
pub fn read_seeds(dir: &Path) -> Result<Seeds, String> {
    let mut seeds = Seeds::new();
    read_texts(dir, "", &mut seeds)?;
    if let Some(parent) = dir.parent().filter(|p| p.is_dir()) {
        read_texts(parent, "../", &mut seeds)?;
    }
    Ok(seeds)
}

/// Every regular file of `dir` (not recursive) as text, keyed by `prefix` + file name. Files that are not
/// UTF-8 text are skipped only beside the seeds (a seed itself must be text).
fn read_texts(dir: &Path, prefix: &str, seeds: &mut Seeds) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if !path.is_file() {
            continue;
        }
        let name = format!("{prefix}{}", path.file_name().unwrap_or_default().to_string_lossy());
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                seeds.insert(name, text);
            }
            Err(e) if prefix.is_empty() => return Err(format!("{}: {e}", path.display())),
            Err(_) => {}
        }
    }
    Ok(())
}

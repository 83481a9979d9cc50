//! Fits stored as data: every fit a question reads (the report's two fits, each engine profile, every case of the
//! accuracy protocol and its held-out points, the report's predictions) computed once by `sim-core validate
//! --refit` and written under the dataset's `fitted/` folder, each file stamped with what it came from. A query
//! adopts them instead of fitting (a minute of fits becomes a file read); a stamp that does not match leaves the
//! workspace to fit on demand, as it always could.
//!
//! ```text
//! stamp.data   FNV-1a of the dataset's texts (`Workspace::fingerprint`): any edit to data/ changes it
//! stamp.model  FNV-1a of the library's source less comment and blank lines (sim-core/build.rs)
//!
//! fitted/profiles.json  the report's fits (every point, one-station points) and every engine profile
//! fitted/protocol.json  every (dataset, question) row of the accuracy protocol
//! fitted/evidence.json  the protocol's held-out points: every band's evidence
//! fitted/report.json    every published point next to its prediction, for both fits
//! ```
//! Adoption is all or nothing: the four files must all carry this data's and this build's stamp.

use super::engine::EngineProfile;
use super::held_out::HeldOutPoint;
use super::protocol::{ProtocolRow, Question};
use super::Workspace;
use crate::dataset::SourceText;
use crate::fit::{Calibration, FitSet};
use crate::report::Report;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

/// The folder of a dataset directory that holds its stored fits (not dataset files: no loader reads them as such).
pub const FITTED_DIR: &str = "fitted";

/// The stored files, relative to the dataset directory, in the order they are written.
pub const STORED_FILES: [&str; 4] =
    ["fitted/profiles.json", "fitted/protocol.json", "fitted/evidence.json", "fitted/report.json"];

/// The fingerprint of the library's source this build was compiled from (sim-core/build.rs).
pub const MODEL_FINGERPRINT: &str = env!("TWOTOWER_MODEL_FINGERPRINT");

/// What a stored file was computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// The dataset's fingerprint, 16 hex digits.
    pub data: String,
    /// The library's fingerprint, 16 hex digits.
    pub model: String,
    /// How to write the files again.
    pub written_by: String,
}

impl Stamp {
    /// The stamp of fits computed now, by this build, on `files`.
    pub fn of(files: &[SourceText]) -> Stamp {
        Stamp {
            data: format!("{:016x}", Workspace::fingerprint(files)),
            model: MODEL_FINGERPRINT.into(),
            written_by: "sim-core validate --refit <dataset directory>".into(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Profiles {
    stamp: Stamp,
    /// The report's fit over every unflagged point, and over one-station points only.
    all: Calibration,
    single: Calibration,
    engines: Vec<EngineProfile>,
}

#[derive(Serialize, Deserialize)]
struct ProtocolFile {
    stamp: Stamp,
    rows: Vec<ProtocolRow>,
}

#[derive(Serialize, Deserialize)]
struct Evidence {
    stamp: Stamp,
    held_out: Vec<HeldOutPoint>,
}

#[derive(Serialize, Deserialize)]
struct Reports {
    stamp: Stamp,
    all: Report,
    single: Report,
}

/// Why stored fits were not adopted; it reads after the file's path (`StaleFits::file`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StaleFits {
    #[error("missing")]
    Missing(String),
    #[error("unreadable: {error}")]
    Unreadable { file: String, error: String },
    #[error("computed from other data (stamp {stored}; the data's now: {now})")]
    OtherData { file: String, stored: String, now: String },
    #[error("computed by another build of the model (stamp {stored}; this build's: {now})")]
    OtherModel { file: String, stored: String, now: String },
}

impl StaleFits {
    /// The stored file it is about, relative to the dataset directory.
    pub fn file(&self) -> &str {
        match self {
            StaleFits::Missing(f) => f,
            StaleFits::Unreadable { file, .. }
            | StaleFits::OtherData { file, .. }
            | StaleFits::OtherModel { file, .. } => file,
        }
    }
}

/// Pretty JSON with a closing newline: the files are read in diffs when a refit moves a coefficient.
fn pretty<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).map(|s| s + "\n").unwrap_or_default()
}

/// The stored file `name` of `stored`, parsed, its stamp checked against `now`.
fn read<T: DeserializeOwned>(stored: &[SourceText], name: &str, now: &Stamp) -> Result<T, StaleFits> {
    let text = stored.iter().find(|f| f.path == name).ok_or_else(|| StaleFits::Missing(name.into()))?;
    // The stamp first, so that fits of other data or another build say so rather than fail on a changed field.
    #[derive(Deserialize)]
    struct Stamped {
        stamp: Stamp,
    }
    let unreadable = |e: serde_json::Error| StaleFits::Unreadable { file: name.into(), error: e.to_string() };
    let Stamped { stamp: s } = serde_json::from_str(&text.text).map_err(unreadable)?;
    if s.data != now.data {
        return Err(StaleFits::OtherData { file: name.into(), stored: s.data, now: now.data.clone() });
    }
    if s.model != now.model {
        return Err(StaleFits::OtherModel { file: name.into(), stored: s.model, now: now.model.clone() });
    }
    serde_json::from_str(&text.text).map_err(unreadable)
}

impl Workspace {
    /// Every fit a question reads, computed now (those not yet computed), as the texts of `STORED_FILES`
    /// stamped for `files` (the texts this workspace was loaded from). Run the protocol's cases on every core
    /// first where there are several (the CLI's `parallel::precompute`): here they run one after another.
    pub fn stored_fits(&self, files: &[SourceText]) -> Vec<SourceText> {
        let stamp = Stamp::of(files);
        let engines: Vec<EngineProfile> =
            self.engines().into_iter().filter_map(Result::ok).map(|p| (*p).clone()).collect();
        let profiles = Profiles {
            stamp: stamp.clone(),
            all: self.calibration(FitSet::All).clone(),
            single: self.calibration(FitSet::Single).clone(),
            engines,
        };
        let protocol = ProtocolFile { stamp: stamp.clone(), rows: self.protocol() };
        let evidence = Evidence { stamp: stamp.clone(), held_out: self.held_out() };
        let reports =
            Reports { stamp, all: self.accuracy(FitSet::All).clone(), single: self.accuracy(FitSet::Single).clone() };
        let texts = [pretty(&profiles), pretty(&protocol), pretty(&evidence), pretty(&reports)];
        STORED_FILES.iter().zip(texts).map(|(path, text)| SourceText { path: (*path).into(), text }).collect()
    }

    /// Adopts the fits `stored` (texts of `STORED_FILES`, paths as there) when every file carries the stamp of
    /// `files` and of this build; otherwise adopts nothing and says why (the workspace then fits on demand).
    pub fn adopt_stored_fits(&self, files: &[SourceText], stored: &[SourceText]) -> Result<(), StaleFits> {
        let now = Stamp::of(files);
        let profiles: Profiles = read(stored, STORED_FILES[0], &now)?;
        let protocol: ProtocolFile = read(stored, STORED_FILES[1], &now)?;
        let evidence: Evidence = read(stored, STORED_FILES[2], &now)?;
        let reports: Reports = read(stored, STORED_FILES[3], &now)?;
        // Every case of the protocol must be there, once: the data matched, so a missing one is a damaged file.
        let cases = self.protocol_cases();
        let row_of = |(d, q): &(String, Question)| protocol.rows.iter().find(|r| &r.dataset == d && r.question == *q);
        if cases.len() != protocol.rows.len() || !cases.iter().all(|c| row_of(c).is_some()) {
            return Err(StaleFits::Unreadable {
                file: STORED_FILES[1].into(),
                error: format!("its {} rows are not the protocol's {} cases", protocol.rows.len(), cases.len()),
            });
        }
        let _ = self.fit_all.set(profiles.all);
        let _ = self.fit_single.set(profiles.single);
        let _ = self.report_all.set(reports.all);
        let _ = self.report_single.set(reports.single);
        let _ = self.baked_evidence.set(evidence.held_out);
        if let Ok(mut cache) = self.engine_cache.lock() {
            for e in profiles.engines {
                cache.insert(e.id.clone(), Arc::new(e));
            }
        }
        let rows = self.protocol_rows.get_or_init(|| cases.iter().map(|c| (c.clone(), OnceLock::new())).collect());
        for (case, cell) in rows {
            if let Some(row) = row_of(case) {
                let _ = cell.set(row.clone());
            }
        }
        Ok(())
    }
}

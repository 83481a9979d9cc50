//! Meaning checks over a loaded dataset: numbers, units, provenance, references, duplicates, claims, totals.
//!
//! One file per kind of data file (`hardware`, `fabrics`, `models`, `sweeps`, `claims`, `scenarios`, `engines`,
//! `kernels`),
//! plus the checks every kind shares: `quantities` (units and bases), `quotes` (sources and verbatim quotes) and
//! `stated` (the setup a quote states: concurrency, input and output lengths). `schema_files` holds the shipped
//! JSON Schemas to what the types generate.
//! Physical plausibility of a hardware file or a model card is `model::plausibility::check`'s, which
//! `explore::Workspace::load` runs beside `check`.

mod claims;
mod engines;
mod fabrics;
mod hardware;
mod kernels;
mod models;
mod quantities;
mod quotes;
mod scenarios;
#[cfg(feature = "schema")]
mod schema_files;
mod stated;
mod sweep_setup;
mod sweeps;

pub use claims::{claim_reproduced, claim_tolerance};
pub use quotes::quote_mentions;
#[cfg(feature = "schema")]
pub use schema_files::{check_schema_files, SCHEMA_DIR};
pub use stated::{stated, Stated, Written};

use super::Dataset;
use crate::diagnostic::Diagnostic;
use std::collections::{BTreeMap, BTreeSet};

/// The seed texts quotes are checked against: source file name -> text.
pub type Seeds = BTreeMap<String, String>;

/// Runs every meaning check. `seeds`, when given, lets the validator confirm each quote is verbatim.
pub fn check(ds: &Dataset, seeds: Option<&Seeds>) -> Vec<Diagnostic> {
    let mut v = Checker { ds, seeds, out: Vec::new(), unchecked: BTreeSet::new() };
    v.sources();
    v.hardware();
    v.fabrics();
    v.models();
    v.sweeps();
    v.claims();
    v.scenarios();
    v.engines();
    v.kernels();
    v.out.into_iter().map(|d| ds.locate(d)).collect()
}

struct Checker<'a> {
    ds: &'a Dataset,
    seeds: Option<&'a Seeds>,
    out: Vec<Diagnostic>,
    /// Texts of external sources that were not at hand (noted once each).
    unchecked: BTreeSet<String>,
}

impl Checker<'_> {
    fn err(&mut self, file: &str, pointer: String, msg: String, hint: &str) {
        self.out.push(Diagnostic::error(file, pointer, msg).with_hint(hint));
    }

    fn path(&self, kind: &str, id: &str) -> String {
        self.ds.paths.get(&(kind.to_string(), id.to_string())).cloned().unwrap_or_default()
    }
}

fn concurrency_ok(c: f64) -> bool {
    c.is_finite() && c.fract() == 0.0 && (1.0..=4096.0).contains(&c)
}

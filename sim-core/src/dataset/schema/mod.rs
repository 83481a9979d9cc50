//! The dataset schema (version 2) as Rust types: the normative form of `docs/data.md`.
//!
//! Every struct denies unknown fields so a typo in a data file is an error, not a silently ignored value.
//! With the `schema` feature the types also derive `schemars::JsonSchema`: `json_schema` turns them into the
//! JSON Schemas shipped in `data/schema/`, which each file names by `"$schema"`.
//!
//! One file per kind of data file (`hardware`, `model`, `sweep`, ...), plus what several kinds share:
//! `quantity` (provenance), `mode` (cluster modes) and `point` (one measured point of a sweep).

use serde::Deserialize;

mod accuracy;
mod claims;
mod engine;
mod fabric;
mod hardware;
mod kernels;
mod mode;
mod model;
mod point;
mod quantity;
mod scenario;
mod sources;
mod sweep;

pub use accuracy::*;
pub use claims::*;
pub use engine::*;
pub use fabric::*;
pub use hardware::*;
pub use kernels::*;
pub use mode::*;
pub use model::*;
pub use point::*;
pub use quantity::*;
pub use scenario::*;
pub use sources::*;
pub use sweep::*;

/// The version this build writes. Version 2 names its JSON Schema in `"$schema"` (relative to the file:
/// `"../schema/sweep.json"`) and folds a sweep's `conditions` into `SweepFile`; a version 1 file reads as it
/// is (it has no `$schema`, and everything else version 2 added is optional).
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest version this build reads.
pub const MIN_SCHEMA_VERSION: u32 = 1;

/// The dataset of the GB300 report: sweeps without a `dataset` belong to it, and the fits are made on it.
pub const REPORT_DATASET: &str = "gb300-report";

/// The first fields of every file; read before the file's kind is known.
#[derive(Debug, Clone, Deserialize)]
pub struct Envelope {
    pub schema_version: u32,
    pub kind: String,
}

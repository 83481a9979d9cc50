//! sim-core: the twotower datasets and a physical model of LLM inference on one or two GPU machines.
//!
//! Pipeline: `dataset::load` (text in, typed files + diagnostics out) -> `dataset::validate::check` and
//! `model::plausibility::check` -> `scenario::resolve` (ids and overrides to plain SI specs) -> `model`
//! (bandwidth cliff, fabric, batching, modes) -> `fit` (calibrates the few free coefficients) -> `report`
//! (measured vs predicted, error statistics).
//! The library does no IO and keeps no global state, so it runs unchanged in the browser (wasm32).

pub mod dataset;
pub mod describe;
pub mod diagnostic;
pub mod explore;
pub mod fit;
pub mod import;
pub mod json_text;
pub mod kernel_curves;
pub mod model;
pub mod non_finite;
pub mod plan;
pub mod position;
pub mod report;
pub mod scenario;
pub mod server;
pub mod spec;
pub mod stats;
pub mod units;

pub use dataset::schema::Mode;
pub use diagnostic::Diagnostic;

//! The accuracy file: the thresholds `validate` enforces and the frozen targets of the accuracy protocol.

use serde::{Deserialize, Serialize};

/// Accuracy thresholds the model check in `validate` enforces.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AccuracyFile {
    pub schema_version: u32,
    pub kind: String,
    pub fitted_median_ape_max: f64,
    pub fitted_p90_ape_max: f64,
    pub predictive_median_ape_max: f64,
    pub fabric_peak_ape_max: f64,
    #[serde(default)]
    pub note: Option<String>,
    /// Targets of the accuracy protocol (`sim-core report` prints each against what the model gives). Frozen
    /// before any tuning and never moved; reported, not enforced by `validate`.
    #[serde(default)]
    pub protocol: Vec<ProtocolTarget>,
}

/// The questions of the accuracy protocol, by name (`explore::protocol::Question`).
pub const PROTOCOL_QUESTIONS: [&str; 3] = ["fitted", "pair_from_one", "leave_one_out"];

/// One frozen target of the accuracy protocol.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProtocolTarget {
    /// A dataset id, or `*` for every dataset.
    pub dataset: String,
    /// One of `PROTOCOL_QUESTIONS`.
    pub question: String,
    #[serde(default)]
    pub median_ape_max: Option<f64>,
    #[serde(default)]
    pub p90_ape_max: Option<f64>,
    /// Where the target was set (an issue, a document).
    pub source: String,
}

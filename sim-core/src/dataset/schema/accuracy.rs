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
    /// The fit's in-sample 90th percentile, once enforced; retired (an in-sample fit quality judges no physics:
    /// the `held_out_gate` does). Still read from files that state it, and then still enforced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted_p90_ape_max: Option<f64>,
    pub predictive_median_ape_max: f64,
    pub fabric_peak_ape_max: f64,
    #[serde(default)]
    pub note: Option<String>,
    /// Targets of the accuracy protocol (`sim-core report` prints each against what the model gives). Frozen
    /// before any tuning and never moved; reported, not enforced by `validate`.
    #[serde(default)]
    pub protocol: Vec<ProtocolTarget>,
    /// The gate a change of physics passes: no held-out median of the protocol (leave one dataset out, pair from
    /// one) may rise more than `slack_points` above the value it had when the gate was written. Enforced by
    /// `validate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_out_gate: Option<HeldOutGate>,
    /// The coverage every band `plan` and the page print is stated at, and the least share of held-out points
    /// that must fall inside the band that would have been printed for them (`validate` enforces it, `report`
    /// prints each question's share). Absent: bands at 80%, the share reported and not enforced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band_coverage: Option<BandCoverage>,
    /// How close the model's step must come to each whole forward pass a kernel table timed (`report` prints
    /// every table's check against it; not enforced). Absent: the check is printed without a target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_check: Option<StepCheckTarget>,
    /// How close the model's prefill rate must come, on a GPU without its own kernel table (the curves carried
    /// over from another GPU's), to the saturated prefill rates a source measured on it (`report` prints the
    /// check; not enforced). Absent: the check is printed without a target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_check: Option<StepCheckTarget>,
    /// How close the model's step must come to each forward pass a kernel table timed when the step takes its
    /// curves and kernel costs from another GPU's table, carried over by the ridge-relative rule (`report` prints
    /// the check for every pair of tables measured on different GPUs; not enforced). Absent: no target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_step_check: Option<StepCheckTarget>,
}

/// The step check's target: every graph-replayed forward pass of a kernel table within `ape_max` percent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StepCheckTarget {
    pub ape_max: f64,
    /// When and why it was written.
    pub source: String,
}

/// Held-out medians as they stood when the gate was written, and the slack a change may use.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HeldOutGate {
    /// Percentage points a median may rise above its recorded value.
    pub slack_points: f64,
    /// When and how the recorded medians were taken.
    pub source: String,
    pub medians: Vec<HeldOutMedian>,
}

/// One protocol row's held-out median when the gate was written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HeldOutMedian {
    pub dataset: String,
    /// `pair_from_one` or `leave_one_out` (the held-out questions of `PROTOCOL_QUESTIONS`).
    pub question: String,
    /// The row's median absolute percentage error on throughput, percent.
    pub median_ape: f64,
}

/// The coverage of the bands and its frozen target.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BandCoverage {
    /// The share of held-out points each interval is built to hold, in (0, 1) (0.8 for an 80% band).
    pub coverage: f64,
    /// The least share of the held-out points of each question and metric that must fall inside the band
    /// printed for them, in (0, 1].
    pub held_out_share_min: f64,
    /// Where the target was set.
    pub source: String,
}

impl AccuracyFile {
    /// The meaning checks of the file's numbers the types cannot state.
    pub fn check(&self, file: &str) -> Vec<crate::Diagnostic> {
        let mut out = Vec::new();
        if let Some(b) = &self.band_coverage {
            if !(b.coverage > 0.0 && b.coverage < 1.0) {
                out.push(
                    crate::Diagnostic::error(
                        file,
                        "/band_coverage/coverage",
                        format!("coverage {} is not in (0, 1)", b.coverage),
                    )
                    .with_hint("a share: 0.8 for bands that hold 80% of the held-out points"),
                );
            }
            if !(b.held_out_share_min > 0.0 && b.held_out_share_min <= 1.0) {
                out.push(
                    crate::Diagnostic::error(
                        file,
                        "/band_coverage/held_out_share_min",
                        format!("held_out_share_min {} is not in (0, 1]", b.held_out_share_min),
                    )
                    .with_hint("a share: 0.75 for at least 75% of the held-out points inside their bands"),
                );
            }
        }
        out
    }
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
    /// What the error is measured on: output throughput unless it says otherwise.
    #[serde(default, skip_serializing_if = "Metric::is_throughput")]
    pub metric: Metric,
    /// Which of the judged points the target reads: all of them unless it says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<PointSet>,
    #[serde(default)]
    pub median_ape_max: Option<f64>,
    #[serde(default)]
    pub p90_ape_max: Option<f64>,
    /// The largest error any judged point may have ("within 10% at every rate").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_ape_max: Option<f64>,
    /// Where the target was set (a document, a measurement's conditions).
    pub source: String,
}

/// What a protocol target measures its error on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Output tokens per second against the published figure.
    #[default]
    Throughput,
    /// Time to first token against the statistic the source states (its mean, or its median where only that
    /// is stated), predicted as the same statistic.
    Ttft,
    /// Time per output token, as TTFT.
    Tpot,
    /// Whether the model ranks the cluster modes of one setup in the measured order (a pass/fail target:
    /// no APE bound applies).
    ModeOrder,
    /// Each mode's throughput over one machine's at one setup (a model, workload and concurrency), predicted
    /// against measured: the APE of the predicted ratio (`worst_ape_max` bounds it at every setup).
    ModeRatio,
}

impl Metric {
    pub fn is_throughput(&self) -> bool {
        *self == Metric::Throughput
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::Ttft => "ttft",
            Metric::Tpot => "tpot",
            Metric::ModeOrder => "mode_order",
            Metric::ModeRatio => "mode_ratio",
        }
    }
}

/// A subset of the judged points a target reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PointSet {
    /// Open-loop points at a rate the machine keeps up with: the achieved request rate within 5% of the offered
    /// one (past that the queue grows through the run and the measured figures depend on its length).
    OpenLoopKeptUp,
}

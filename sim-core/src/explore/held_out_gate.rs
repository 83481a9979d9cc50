//! The held-out gate `validate` enforces: no held-out median of the accuracy protocol rises more than the stated
//! slack above the value it had when `data/accuracy.json`'s `held_out_gate` was written.
//!
//! Physics is judged on the rows a fit did not see (a dataset left out, the pair predicted from one machine): an
//! in-sample fit can absorb a missing cost into a coefficient, a held-out row cannot.

use super::protocol::{ProtocolRow, Question};
use crate::dataset::schema::AccuracyFile;
use crate::diagnostic::Diagnostic;
use crate::report::{check_threshold, EnforcedTarget};

const FILE: &str = "accuracy.json";

/// The gate's failures: a median above its ceiling, a row the protocol does not have, or an entry that names an
/// in-sample question.
pub fn gate_diagnostics(acc: &AccuracyFile, rows: &[ProtocolRow]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(gate) = &acc.held_out_gate {
        if !(gate.slack_points.is_finite() && gate.slack_points >= 0.0) {
            out.push(Diagnostic::error(
                FILE,
                "/held_out_gate/slack_points",
                "the slack must be a finite number of points, 0 or more",
            ));
        }
        for (i, m) in gate.medians.iter().enumerate() {
            if !is_held_out_question(&m.question) {
                out.push(
                    Diagnostic::error(
                        FILE,
                        format!("/held_out_gate/medians/{i}/question"),
                        format!("`{}` is not a held-out question", m.question),
                    )
                    .with_hint("the gate reads pair_from_one or leave_one_out rows"),
                );
            }
        }
    }
    for t in held_out_gate_targets(acc, rows) {
        check_threshold(&mut out, FILE, &t.pointer, &t.what, t.ape, t.max_ape);
    }
    out
}

/// Each recorded median of the gate as an enforced target: its ceiling (recorded + slack) and the protocol row's
/// median now (`None`: the row has no error, or the gate names a row the protocol does not have, which fails).
pub fn held_out_gate_targets(acc: &AccuracyFile, rows: &[ProtocolRow]) -> Vec<EnforcedTarget> {
    let Some(gate) = &acc.held_out_gate else { return Vec::new() };
    gate.medians
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let row = rows.iter().find(|r| r.dataset == m.dataset && r.question.name() == m.question);
            EnforcedTarget {
                what: format!("held-out {} {} median (recorded {}%)", m.dataset, m.question, m.median_ape),
                pointer: format!("/held_out_gate/medians/{i}/median_ape"),
                max_ape: m.median_ape + gate.slack_points,
                ape: row.and_then(|r| r.error).map(|e| e.median_ape),
            }
        })
        .collect()
}

/// Whether a gate entry names a held-out question (the gate judges no in-sample fit).
pub fn is_held_out_question(name: &str) -> bool {
    [Question::PairFromOne, Question::LeaveOneOut].iter().any(|q| q.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::{HeldOutGate, HeldOutMedian};
    use crate::stats::ErrorStats;

    fn row(dataset: &str, q: Question, median: f64) -> ProtocolRow {
        ProtocolRow {
            error: Some(ErrorStats { n: 3, median_ape: median, p90_ape: median }),
            worst_ape: Some(median),
            missing: None,
            ..ProtocolRow::missing(dataset, q, 1, String::new())
        }
    }

    fn accuracy(medians: Vec<HeldOutMedian>) -> AccuracyFile {
        AccuracyFile {
            schema_version: 2,
            kind: "accuracy".into(),
            fitted_median_ape_max: 12.0,
            fitted_p90_ape_max: None,
            predictive_median_ape_max: 25.0,
            fabric_peak_ape_max: 3.0,
            note: None,
            protocol: Vec::new(),
            held_out_gate: Some(HeldOutGate { slack_points: 1.0, source: "test".into(), medians }),
            band_coverage: None,
            step_check: None,
            transfer_check: None,
            carried_step_check: None,
        }
    }

    #[test]
    fn a_median_may_rise_by_the_slack_and_no_more() {
        let acc =
            accuracy(vec![HeldOutMedian { dataset: "a".into(), question: "leave_one_out".into(), median_ape: 20.0 }]);
        let within = held_out_gate_targets(&acc, &[row("a", Question::LeaveOneOut, 20.9)]);
        assert!(within[0].met(), "{within:?}");
        let above = held_out_gate_targets(&acc, &[row("a", Question::LeaveOneOut, 21.2)]);
        assert!(!above[0].met(), "{above:?}");
        // The fitted row of the same dataset is not the one the gate reads.
        let wrong_row = held_out_gate_targets(&acc, &[row("a", Question::Fitted, 1.0)]);
        assert!(!wrong_row[0].met() && wrong_row[0].ape.is_none(), "{wrong_row:?}");
    }

    #[test]
    fn only_the_held_out_questions_are_gated() {
        assert!(is_held_out_question("leave_one_out") && is_held_out_question("pair_from_one"));
        assert!(!is_held_out_question("fitted"));
    }
}

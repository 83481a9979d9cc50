//! Renders the accuracy protocol for the text report: each dataset's rows against their frozen targets, the
//! latency, open-loop and mode-order checks beside them, and the sensitivity table; formatting only.

use crate::out::Table;
use sim_core::explore::held_out::CoverageRow;
use sim_core::explore::step_check::{StepCheck, StepCheckError};
use sim_core::explore::transfer_check::TransferCheck;
use sim_core::explore::{ProtocolRow, SensitivityRow};

/// A protocol row's frozen target as text (`median <= 30%, p90 <= 35%`), with `le` as the comparison sign; empty
/// without a target.
pub fn target_text(target: Option<&sim_core::explore::protocol::Target>, le: &str) -> String {
    target.map_or_else(String::new, |t| {
        let part = |name: &str, v: Option<f64>| v.map(|v| format!("{name} {le} {v}%"));
        [part("median", t.median_ape_max), part("p90", t.p90_ape_max), part("worst", t.worst_ape_max)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// The accuracy protocol: per dataset, fitted error, pair predicted from one machine, and the dataset predicted
/// from the others alone.
pub fn protocol(rows: &[ProtocolRow]) -> Vec<String> {
    let mut t = Table::new(&[
        "dataset",
        "question",
        "fitted_points",
        "n",
        "median_ape",
        "p90_ape",
        "max_ape",
        "target",
        "met",
        "note",
    ]);
    for r in rows {
        let (n, med, p90) = match r.error {
            Some(e) => (e.n.to_string(), format!("{:.1}%", e.median_ape), format!("{:.1}%", e.p90_ape)),
            None => ("0".into(), "-".into(), "-".into()),
        };
        let worst = r.worst_ape.map_or_else(|| "-".to_string(), |w| format!("{w:.1}%"));
        let target = target_text(r.target.as_ref(), "<=");
        let met = met_word(r.met);
        t.row(vec![
            r.dataset.clone(),
            r.question.name().into(),
            r.fitted_points.to_string(),
            n,
            med,
            p90,
            worst,
            target,
            met.into(),
            r.note().unwrap_or_default(),
        ]);
    }
    let mut out = vec![
        String::new(),
        "accuracy protocol (every fit from the same priors; pair_from_one fits one-machine points and predicts the pair; leave_one_out fits the other datasets):".into(),
    ];
    out.extend(t.aligned());
    out.extend(protocol_checks(rows));
    out
}

/// What a target check reads, as a reader says it: the metric, and the subset of points where it has one.
pub fn check_label(c: &sim_core::explore::protocol::TargetCheck) -> String {
    match c.points {
        Some(sim_core::dataset::schema::PointSet::OpenLoopKeptUp) => {
            format!("{} (open loop, kept up)", c.metric.name())
        }
        None => c.metric.name().to_string(),
    }
}

/// A check's frozen target as text: its bounds, or for the modes' order, that order.
pub fn check_target_text(c: &sim_core::explore::protocol::TargetCheck, le: &str) -> String {
    match c.metric {
        sim_core::dataset::schema::Metric::ModeOrder => "the measured order".into(),
        _ => target_text(Some(&c.target), le),
    }
}

/// Whether a check is met, as the text report says it.
fn met_word(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "yes",
        Some(false) => "MISSED",
        None => "",
    }
}

/// The protocol's other frozen targets (latencies, open-loop points, the modes' order), each with its result.
fn protocol_checks(rows: &[ProtocolRow]) -> Vec<String> {
    let mut t = Table::new(&["dataset", "question", "metric", "n", "median_ape", "p90_ape", "target", "met", "note"]);
    for r in rows {
        for c in &r.checks {
            let (n, med, p90) = match c.error {
                Some(e) => (e.n.to_string(), format!("{:.1}%", e.median_ape), format!("{:.1}%", e.p90_ape)),
                None => ("0".into(), "-".into(), "-".into()),
            };
            t.row(vec![
                r.dataset.clone(),
                r.question.name().into(),
                check_label(c),
                n,
                med,
                p90,
                check_target_text(c, "<="),
                met_word(c.met).into(),
                c.note().unwrap_or_default(),
            ]);
        }
    }
    if t.is_empty() {
        return Vec::new();
    }
    let mut out = vec![String::new(), "the protocol's latency, open-loop and mode-order targets (same fits):".into()];
    out.extend(t.aligned());
    out
}

/// Each question's held-out points against the band that would have been printed for them, with the target.
pub fn coverage(rows: &[CoverageRow]) -> Vec<String> {
    let mut t = Table::new(&["question", "metric", "points", "inside", "share", "no_band", "target", "met"]);
    for r in rows {
        t.row(vec![
            r.question.clone(),
            r.metric.name().into(),
            r.points.to_string(),
            r.inside.to_string(),
            r.share().map_or_else(|| "-".to_string(), |s| format!("{:.1}%", s * 100.0)),
            r.without_band.to_string(),
            r.share_min.map_or_else(String::new, |m| format!(">= {:.0}%", m * 100.0)),
            met_word(r.met()).into(),
        ]);
    }
    let c = rows.first().map_or(0.0, |r| r.coverage);
    let mut out = vec![
        String::new(),
        format!(
            "band coverage ({:.0}% bands from held-out errors; each held-out point against the band printed for it, \
             built without it; no_band: points for which no band is printed):",
            c * 100.0
        ),
    ];
    out.extend(t.aligned());
    out
}

/// Each kernel table's step check: its forward passes measured against the model's step, and the target.
pub fn step_checks(checks: &[Result<StepCheck, StepCheckError>]) -> Vec<String> {
    let mut out = Vec::new();
    for c in checks {
        let c = match c {
            Ok(c) => c,
            Err(e) => {
                out.extend([String::new(), format!("step check: {e}")]);
                continue;
            }
        };
        let target = c.target_ape.map_or_else(String::new, |x| format!("; target: every pass within {x:.0}%"));
        let curves = match &c.curves_from {
            Some((table, gpu)) => format!("the roofline profile with the curves of table {table} ({gpu}) carried over"),
            None => "the roofline profile on the table".to_string(),
        };
        out.push(String::new());
        out.push(format!(
            "step check, kernel table {} ({}, {} stack; {curves}, graph-replayed passes{target}): {}, largest {:.1}%: {}",
            c.table,
            c.gpu,
            if c.compiled { "compiled" } else { "eager" },
            [("prefill", c.prefill_median_ape), ("decode", c.decode_median_ape), ("mixed", c.mixed_median_ape)]
                .iter()
                .filter_map(|(phase, m)| m.map(|m| format!("{phase} median {m:.1}%")))
                .collect::<Vec<_>>()
                .join(", "),
            c.max_ape,
            match c.met {
                Some(true) => "met",
                Some(false) => "missed",
                None => "no target",
            }
        ));
        let mut t = Table::new(&[
            "phase",
            "seqs",
            "tokens",
            "context",
            "plus_decodes",
            "measured_ms",
            "predicted_ms",
            "error",
            "hbm_ms",
            "compute_ms",
        ]);
        for r in &c.rows {
            t.row(vec![
                r.phase.name().into(),
                format!("{}", r.seqs),
                format!("{}", r.query_tokens * r.seqs),
                format!("{}", r.context),
                if r.decode_seqs > 0.0 { format!("{} at {}", r.decode_seqs, r.decode_context) } else { "-".into() },
                format!("{:.2}", r.measured_s * 1e3),
                format!("{:.2}", r.predicted_s * 1e3),
                format!("{:+.1}%", r.error() * 100.0),
                format!("{:.2}", r.hbm_s * 1e3),
                format!("{:.2}", r.compute_s * 1e3),
            ]);
        }
        out.extend(t.aligned());
    }
    out
}

/// Each machine's transfer check: the saturated prefill rates measured on a GPU whose kernel curves are carried
/// over, against the model's, and the target.
pub fn transfer_checks(checks: &[TransferCheck]) -> Vec<String> {
    let mut out = Vec::new();
    for c in checks {
        let target = c.target_ape.map_or_else(String::new, |x| format!("; target: every rate within {x:.0}%"));
        out.push(String::new());
        out.push(format!(
            "transfer check, {} (curves of kernel table {}, measured on {}; the roofline profile, saturated prefill \
             rates{target}): median {:.1}%, largest {:.1}%: {}",
            c.hardware,
            c.table,
            c.table_gpu,
            c.median_ape,
            c.max_ape,
            match c.met {
                Some(true) => "met",
                Some(false) => "missed",
                None => "no target",
            }
        ));
        let mut t =
            Table::new(&["scenario", "isl", "concurrency", "chunk", "measured_tok_s", "predicted_tok_s", "error"]);
        for r in &c.rows {
            t.row(vec![
                r.scenario.clone(),
                r.isl.to_string(),
                r.concurrency.to_string(),
                format!("{}", r.chunk_tokens),
                format!("{:.0}", r.measured_tok_s),
                format!("{:.0}", r.predicted_tok_s),
                format!("{:+.1}%", r.error() * 100.0),
            ]);
        }
        out.extend(t.aligned());
    }
    out
}

/// How the calibration dataset's fitted and predictive medians move when each assumed value is halved and
/// doubled.
pub fn sensitivity(rows: &[SensitivityRow]) -> Vec<String> {
    let mut t =
        Table::new(&["assumed value", "as used", "fitted median x0.5 / x1 / x2", "predictive median x0.5 / x1 / x2"]);
    let three = |v: &[f64]| v.iter().map(|x| format!("{x:.1}%")).collect::<Vec<_>>().join(" / ");
    for r in rows {
        t.row(vec![
            r.parameter.clone(),
            format!("{:.4e}", r.value),
            three(&r.fitted_median),
            three(&r.predictive_median),
        ]);
    }
    let mut out =
        vec![String::new(), "sensitivity of the headline errors (gb300-report) to each assumed value:".into()];
    out.extend(t.aligned());
    out
}

//! The report as Markdown for the documents (README.md, docs/accuracy.md): the accuracy protocol per dataset, the
//! stated latencies' errors, and the fitted coefficients outside their plausible range. The golden test compares
//! the documents' generated blocks with this output, so every figure there is the code's.

use sim_core::explore::held_out::CoverageRow;
use sim_core::explore::step_check::{StepCheck, StepCheckError};
use sim_core::explore::transfer_check::TransferCheck;
use sim_core::explore::ProtocolRow;
use sim_core::report::Report;
use sim_core::stats::ErrorStats;

/// A Markdown table from a header and rows of cells; a `|` inside a cell is escaped.
fn table(header: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = vec![format!("| {} |", header.join(" | "))];
    out.push(format!(
        "|{}",
        header.iter().map(|h| if h.ends_with("APE") { "---:|" } else { "---|" }).collect::<String>()
    ));
    for r in rows {
        out.push(format!("| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")));
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}%"))
}

/// The protocol's question as a reader says it.
fn question(name: &str) -> &str {
    match name {
        "fitted" => "fitted",
        "pair_from_one" => "pair from one",
        "leave_one_out" => "leave one out",
        other => other,
    }
}

/// Throughput accuracy per dataset and question against the frozen targets.
fn protocol(rows: &[ProtocolRow]) -> Vec<String> {
    let body: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| r.error.is_some())
        .map(|r| {
            let e: Option<ErrorStats> = r.error;
            let target = crate::render_protocol::target_text(r.target.as_ref(), "≤");
            let met = match (r.met, r.note()) {
                (Some(true), _) => "met".to_string(),
                (Some(false), Some(reading)) => format!("**missed**: {reading}"),
                (Some(false), None) => "**missed**".to_string(),
                (None, _) => String::new(),
            };
            vec![
                r.dataset.clone(),
                question(r.question.name()).to_string(),
                e.map_or_else(String::new, |e| e.n.to_string()),
                pct(e.map(|e| e.median_ape)),
                pct(e.map(|e| e.p90_ape)),
                pct(r.worst_ape),
                target,
                met,
            ]
        })
        .collect();
    table(&["dataset", "question", "points", "median APE", "p90 APE", "worst APE", "target", "met"], &body)
}

/// The latency targets and the protocol's other checks per dataset and question: each check's error on the
/// points it reads, against its frozen target.
fn checks(rows: &[ProtocolRow]) -> Vec<String> {
    let body: Vec<Vec<String>> = rows
        .iter()
        .flat_map(|r| r.checks.iter().map(move |c| (r, c)))
        .map(|(r, c)| {
            let met = match c.met {
                Some(true) => "met".to_string(),
                Some(false) => match &c.reading {
                    Some(reading) => format!("**missed**: {reading}"),
                    None => "**missed**".to_string(),
                },
                None => c.missing.clone().unwrap_or_default(),
            };
            // A pass/fail check has no APE: its points column counts the setups it ranked.
            let points = match (&c.error, &r.mode_order) {
                (None, Some(o)) if c.metric == sim_core::dataset::schema::Metric::ModeOrder => o.setups.to_string(),
                (e, _) => e.map_or_else(|| "0".to_string(), |e| e.n.to_string()),
            };
            vec![
                r.dataset.clone(),
                question(r.question.name()).to_string(),
                crate::render_protocol::check_label(c),
                points,
                pct(c.error.map(|e| e.median_ape)),
                crate::render_protocol::check_target_text(c, "≤"),
                met,
            ]
        })
        .collect();
    table(&["dataset", "question", "metric", "points", "median APE", "target", "met"], &body)
}

/// The fitted coefficients of the report's own fit that sit outside or at the edge of their plausible range.
fn implausible(r: &Report) -> Vec<String> {
    let rows: Vec<Vec<String>> = sim_core::fit::implausible(&r.calibration.coefficients)
        .iter()
        .map(|x| {
            vec![format!("`{}`", x.name), format!("{:.4}", x.value), format!("{} [{}, {}]", x.side, x.low, x.high)]
        })
        .collect();
    if rows.is_empty() {
        return vec!["Every fitted coefficient of the report's profile lies inside its plausible range.".into()];
    }
    table(&["coefficient", "fitted", "plausible range"], &rows)
}

/// Each question's held-out points against the band printed for them.
fn coverage(rows: &[CoverageRow]) -> Vec<String> {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let met = match r.met() {
                Some(true) => "met",
                Some(false) => "**missed**",
                None => "",
            };
            vec![
                r.question.clone(),
                r.metric.name().to_string(),
                r.points.to_string(),
                r.inside.to_string(),
                r.share().map_or_else(|| "-".to_string(), |s| format!("{:.1}%", s * 100.0)),
                r.without_band.to_string(),
                r.share_min.map_or_else(String::new, |m| format!("≥ {:.0}%", m * 100.0)),
                met.to_string(),
            ]
        })
        .collect();
    table(&["question", "metric", "points", "inside", "share", "no band", "target", "met"], &body)
}

/// The whole Markdown report.
pub fn report(
    r: &Report,
    rows: &[ProtocolRow],
    bands: &[CoverageRow],
    steps: &[Result<StepCheck, StepCheckError>],
    transfers: &[TransferCheck],
) -> String {
    let mut out =
        vec!["**Throughput** (output tok/s; APE over the points each question judges):".to_string(), String::new()];
    out.extend(protocol(rows));
    out.push(String::new());
    out.push(
        "**Latency and the other frozen targets** (TTFT and TPOT where a source states them, from the same fits; \
              open-loop and mode-order checks):"
            .into(),
    );
    out.push(String::new());
    out.extend(checks(rows));
    out.push(String::new());
    out.push(
        "**Fitted coefficients of the GB300 report's profile outside their plausible range** (a cost the physics \
              still lacks):"
            .into(),
    );
    out.push(String::new());
    out.extend(implausible(r));
    out.push(String::new());
    out.push(format!(
        "**Band coverage** (each held-out point against the {:.0}% band `plan` would print for it, built from the \
         other held-out points; no band: none is printed for lack of evidence):",
        bands.first().map_or(0.0, |b| b.coverage * 100.0)
    ));
    out.push(String::new());
    out.extend(coverage(bands));
    out.push(String::new());
    out.push(
        "**Step check** (the model's step, with the `roofline` profile on a kernel table, against the whole forward \
         passes that table timed on its GPU, replayed as CUDA graphs):"
            .into(),
    );
    out.push(String::new());
    out.extend(step_checks(steps));
    if !transfers.is_empty() {
        out.push(String::new());
        out.push(
            "**Transfer check** (on a GPU without its own kernel table, the `roofline` profile's prefill rate with the \
             curves carried over, against the saturated prefill rates a source measured there):"
                .into(),
        );
        out.push(String::new());
        out.extend(transfer_checks(transfers));
    }
    out.join("\n") + "\n"
}

/// Each machine's transfer check, one row per measured rate.
fn transfer_checks(checks: &[TransferCheck]) -> Vec<String> {
    let body: Vec<Vec<String>> = checks
        .iter()
        .flat_map(|c| {
            c.rows.iter().map(move |r| {
                vec![
                    c.hardware.clone(),
                    format!("`{}` ({})", c.table, c.table_gpu),
                    format!("`{}`", r.scenario),
                    format!("{} x {}", r.concurrency, r.isl),
                    format!("{:.0}", r.measured_tok_s),
                    format!("{:.0}", r.predicted_tok_s),
                    format!("{:+.1}%", r.error() * 100.0),
                    c.target_ape.map_or_else(String::new, |x| format!("every rate ≤ {x:.0}%")),
                    match c.met {
                        Some(true) => "met".to_string(),
                        Some(false) => "**missed**".to_string(),
                        None => String::new(),
                    },
                ]
            })
        })
        .collect();
    table(
        &["GPU", "curves from", "scenario", "prompts", "measured tok/s", "predicted tok/s", "error", "target", "met"],
        &body,
    )
}

/// Each kernel table's step check, one row per table.
fn step_checks(checks: &[Result<StepCheck, StepCheckError>]) -> Vec<String> {
    let body: Vec<Vec<String>> = checks
        .iter()
        .map(|c| match c {
            Ok(c) => vec![
                format!("`{}`", c.table),
                c.gpu.clone(),
                c.curves_from.as_ref().map_or_else(|| "its own".to_string(), |(t, gpu)| format!("`{t}` ({gpu})")),
                if c.compiled { "compiled" } else { "eager" }.to_string(),
                percent_or_dash(c.prefill_median_ape),
                percent_or_dash(c.decode_median_ape),
                percent_or_dash(c.mixed_median_ape),
                format!("{:.1}%", c.max_ape),
                c.target_ape.map_or_else(String::new, |x| format!("every pass ≤ {x:.0}%")),
                match c.met {
                    Some(true) => "met".to_string(),
                    Some(false) => "**missed**".to_string(),
                    None => String::new(),
                },
            ],
            Err(e) => std::iter::once(e.to_string()).chain(std::iter::repeat_n(String::new(), 9)).collect(),
        })
        .collect();
    table(
        &[
            "table",
            "GPU",
            "curves",
            "stack",
            "prefill median",
            "decode median",
            "mixed median",
            "largest",
            "target",
            "met",
        ],
        &body,
    )
}

/// A median error as a percentage, `-` where no row of its kind was measured.
fn percent_or_dash(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |x| format!("{x:.1}%"))
}

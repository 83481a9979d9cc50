//! The report as Markdown for the documents (README.md, docs/accuracy.md): the accuracy protocol per dataset, the
//! stated latencies' errors, and the fitted coefficients outside their plausible range. The golden test compares
//! the documents' generated blocks with this output, so every figure there is the code's.

use sim_core::explore::ProtocolRow;
use sim_core::report::{GroupStats, Report};
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
            let target = crate::render::target_text(r.target.as_ref(), "≤");
            let met = match r.met {
                Some(true) => "met",
                Some(false) => "**missed**",
                None => "",
            };
            vec![
                r.dataset.clone(),
                question(r.question.name()).to_string(),
                e.map_or_else(String::new, |e| e.n.to_string()),
                pct(e.map(|e| e.median_ape)),
                pct(e.map(|e| e.p90_ape)),
                pct(r.worst_ape),
                target,
                met.to_string(),
            ]
        })
        .collect();
    table(&["dataset", "question", "points", "median APE", "p90 APE", "worst APE", "target", "met"], &body)
}

/// The stated latencies' errors per dataset: every one a prediction's, since no fit reads a latency.
fn latency(r: &Report) -> Vec<String> {
    let find = |groups: &[GroupStats], dataset: &str| -> Option<ErrorStats> {
        groups.iter().find(|g| g.group == dataset).and_then(|g| g.predicted.or(g.fitted))
    };
    let mut datasets: Vec<&str> =
        r.ttft_by_dataset.iter().chain(&r.tpot_by_dataset).map(|g| g.group.as_str()).collect();
    datasets.sort_unstable();
    datasets.dedup();
    let body: Vec<Vec<String>> = datasets
        .iter()
        .map(|d| {
            let (ttft, tpot) = (find(&r.ttft_by_dataset, d), find(&r.tpot_by_dataset, d));
            vec![
                d.to_string(),
                ttft.map_or_else(|| "0".to_string(), |e| e.n.to_string()),
                pct(ttft.map(|e| e.median_ape)),
                tpot.map_or_else(|| "0".to_string(), |e| e.n.to_string()),
                pct(tpot.map(|e| e.median_ape)),
            ]
        })
        .collect();
    table(&["dataset", "TTFT points", "TTFT median APE", "TPOT points", "TPOT median APE"], &body)
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

/// The whole Markdown report.
pub fn report(r: &Report, rows: &[ProtocolRow]) -> String {
    let mut out =
        vec!["**Throughput** (output tok/s; APE over the points each question judges):".to_string(), String::new()];
    out.extend(protocol(rows));
    out.push(String::new());
    out.push("**Latency** where a source states it (mean TTFT and TPOT; every error is a prediction's):".into());
    out.push(String::new());
    out.extend(latency(r));
    out.push(String::new());
    out.push(
        "**Fitted coefficients of the GB300 report's profile outside their plausible range** (a cost the physics \
              still lacks):"
            .into(),
    );
    out.push(String::new());
    out.extend(implausible(r));
    out.join("\n") + "\n"
}

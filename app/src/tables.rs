//! The throughput view's points table as markup (see `html`): published points against the prediction, then
//! the values that are not points (ranges, values without a concurrency) with their notes.

use crate::compute::{PointLatencies, PointRow, StatedRow};
use crate::html::Html;

/// `<table class="points" id="points-table">` of the points and the stated values, in the answer's order.
pub fn points_table(rows: &[PointRow], stated: &[StatedRow], lat: &[PointLatencies]) -> String {
    let mut h = Html::new();
    h.open("table", &[("class", "points"), ("id", "points-table")]);
    h.el(
        "caption",
        &[],
        "Published points against the prediction (with the what-if values applied); latencies as stated / predicted",
    );
    h.open("thead", &[]).open("tr", &[]);
    let heads = ["mode", "concurrency", "measured tok/s", "predicted tok/s", "error", "TTFT ms", "TPOT ms", "source"];
    for t in heads {
        h.el("th", &[], t);
    }
    h.close("tr").close("thead").open("tbody", &[]);
    for r in rows {
        h.open("tr", &[("class", if r.flagged.is_some() { "flagged" } else { "" })]);
        h.el("td", &[], r.mode.name());
        for v in [
            r.concurrency.to_string(),
            format!("{:.0}", r.measured),
            format!("{:.0}", r.predicted),
            format!("{:+.1}%", r.error_pct),
        ] {
            h.el("td", &[("class", "num")], &v);
        }
        // Stated / predicted; the source's ITL stands in for a TPOT it does not state.
        let l = lat.iter().find(|l| l.mode == r.mode && l.concurrency == r.concurrency);
        let pair = |m: Option<f64>, p: Option<f64>| {
            let f = |v: Option<f64>| v.map(|s| format!("{:.1}", s * 1e3)).unwrap_or_else(|| "-".into());
            format!("{} / {}", f(m), f(p))
        };
        let ttft = l.map(|l| pair(l.measured_ttft_s, l.predicted_ttft_s)).unwrap_or_default();
        let tpot = l.map(|l| pair(l.measured_tpot_s.or(l.measured_itl_s), l.predicted_tpot_s)).unwrap_or_default();
        h.el("td", &[("class", "num")], &ttft).el("td", &[("class", "num")], &tpot);
        h.open("td", &[("class", "quote")]).quote(&r.source, &r.quote).close("td").close("tr");
    }
    for r in stated {
        h.open("tr", &[("class", "stated")]);
        h.el("td", &[], r.mode.name()).el("td", &[], &r.concurrency);
        for v in [r.measured.clone(), r.predicted_text(), r.error_text(), "-".into(), "-".into()] {
            h.el("td", &[("class", "num")], &v);
        }
        h.open("td", &[("class", "quote")]).quote(&r.source, &r.quote);
        if let Some(n) = &r.note {
            h.el("span", &[("class", "stated-note")], &format!(" ({n})"));
        }
        h.close("td").close("tr");
    }
    h.close("tbody").close("table");
    h.finish()
}

fn num(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "-".into()
    }
}

/// The planner's per-concurrency table: one row group per concurrency, a row per mode (the best highlighted),
/// with TTFT, TPOT, the gain over one machine and the bound.
pub fn plan_table(p: &sim_core::plan::Plan) -> String {
    let mut h = Html::new();
    h.open("table", &[("class", "points plan-table"), ("id", "plan-table")]);
    h.el("caption", &[], "Predicted per concurrency");
    h.open("thead", &[]).open("tr", &[]);
    for t in ["concurrency", "mode", "output tok/s", "TTFT s", "TPOT ms", "gain", "bound"] {
        h.el("th", &[], t);
    }
    h.close("tr").close("thead").open("tbody", &[]);
    for r in &p.rows {
        let n = r.modes.len().to_string();
        for (j, pr) in r.modes.iter().enumerate() {
            let best = pr.mode == r.best && pr.output_tok_s > 0.0;
            let class = match (best, j == 0) {
                (true, true) => "best group-start",
                (true, false) => "best",
                (false, true) => "group-start",
                (false, false) => "",
            };
            h.open("tr", &[("class", class)]);
            if j == 0 {
                h.el("td", &[("class", "num"), ("rowspan", &n)], &r.concurrency.to_string());
            }
            let g = r.gain_of(pr.mode);
            h.el("td", &[], pr.mode.name());
            for v in [
                format!("{:.0}", pr.output_tok_s),
                num(pr.ttft_s, 2),
                num(pr.tpot_s * 1e3, 1),
                if g.is_finite() { format!("{g:.2}x") } else { "-".into() },
            ] {
                h.el("td", &[("class", "num")], &v);
            }
            h.el("td", &[], pr.bottleneck.name()).close("tr");
        }
    }
    h.close("tbody").close("table");
    h.finish()
}

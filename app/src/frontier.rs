//! The frontier and compare views' questions to `sim_core::explore` and their answers as chart data. Pure, no
//! browser, no model arithmetic: the query layer normalises per GPU and per user, marks the frontier and reads
//! the headline; this file only picks the sides from the URL state.

use crate::charts::{fmt_sig, FrontierChartData};
use crate::compute::{plan_run, what_if_settings, workload};
use crate::data::Bundle;
use crate::html::Html;
use crate::state::{UrlState, View, VS_PLAN};
use sim_core::explore::{FrontierAnswer, SweepQuery};

/// The frontier of the state's model and workload (what-if settings applied).
pub fn dataset_side(b: &Bundle, st: &UrlState, model: &str) -> Result<FrontierAnswer, String> {
    let mut s = st.clone();
    s.model = model.to_string();
    let (isl, osl) = workload(b, &s);
    // The what-if settings belong to the state's own model; the other side of a comparison is as published.
    let settings = if model == st.model { what_if_settings(st) } else { Vec::new() };
    // The chosen engine profile predicts both sides, so a comparison stays like for like.
    let q = SweepQuery { model, isl, osl, settings: &settings, engine: st.engine.as_deref() };
    b.ws.frontier(&q, st.frontier.axis, st.frontier.at)
}

/// The compare view's other side: the `vs` dataset, or the first dataset other than the model's.
pub fn other(b: &Bundle, st: &UrlState) -> String {
    match &st.frontier.vs {
        Some(v) => v.clone(),
        None => b.model_ids().into_iter().find(|m| *m != st.model).unwrap_or_else(|| st.model.clone()),
    }
}

/// The frontier chart of the state: one side (the frontier view) or two (the compare view: the model against
/// another dataset, or against the planner's model on the planner's hardware). A side that cannot be answered
/// names the problem in the title.
pub fn chart(b: &Bundle, st: &UrlState) -> FrontierChartData {
    let mut data = FrontierChartData { axis: st.frontier.axis, only: st.frontier.only, ..Default::default() };
    let mut problems = Vec::new();
    let mut add = |label: String, a: Result<FrontierAnswer, String>| match a {
        Ok(a) => data.sides.push((label, a)),
        Err(e) => problems.push(format!("{label}: {e}")),
    };
    add(st.model.clone(), dataset_side(b, st, &st.model));
    if st.view == View::Compare {
        let vs = other(b, st);
        if vs == VS_PLAN {
            let label = format!("planner ({})", st.plan.hardware);
            add(label, plan_run(b, st).map(|r| r.frontier(st.frontier.axis, st.frontier.at)));
        } else {
            add(vs.clone(), dataset_side(b, st, &vs));
        }
    }
    data.title = match data.sides.as_slice() {
        [(_, a)] => a.title.clone(),
        [(l0, a), (l1, c)] => format!(
            "{l0} ({}-{}) vs {l1} ({}-{}): per GPU against {}",
            a.isl,
            a.osl,
            c.isl,
            c.osl,
            st.frontier.axis.label()
        ),
        _ => String::new(),
    };
    if !problems.is_empty() {
        data.title = format!("{} {}", data.title, problems.join("; ")).trim().to_string();
    }
    data
}

/// Seconds as milliseconds for a table cell, or a dash.
fn ms(v: Option<f64>) -> String {
    v.map(|s| fmt_sig(s * 1e3)).unwrap_or_else(|| "-".into())
}

/// The headline sentence of each side: throughput per GPU at the target tok/s per user, and how it was read.
pub fn headlines(d: &FrontierChartData) -> Vec<String> {
    d.sides
        .iter()
        .map(|(label, a)| match &a.headline {
            Some(h) if h.interpolated => format!(
                "{label}: {} output tok/s per GPU at {} tok/s per user ({}, interpolated between {} and {} concurrent \
                 requests)",
                fmt_sig(h.tok_s_per_gpu),
                fmt_sig(h.tok_s_per_user),
                h.mode.name(),
                h.between.0,
                h.between.1
            ),
            Some(h) => format!(
                "{label}: {} output tok/s per GPU at {} tok/s per user ({}, predicted at {} concurrent requests)",
                fmt_sig(h.tok_s_per_gpu),
                fmt_sig(h.tok_s_per_user),
                h.mode.name(),
                h.between.0
            ),
            None => format!("{label}: no mode reaches {} tok/s per user", fmt_sig(a.target)),
        })
        .collect()
}

/// Under the frontier chart: the headline, what per GPU and per user mean here, the points left off the axis,
/// and the table of every point drawn (in the chart's hit-point order), as markup.
pub fn table_html(d: &FrontierChartData) -> String {
    let mut h = Html::new();
    h.open("div", &[("class", "headline"), ("id", "frontier-headline"), ("role", "status")]);
    for line in headlines(d) {
        h.el("p", &[], &line);
    }
    h.close("div");
    let gpus: Vec<String> =
        d.sides.iter().map(|(l, a)| format!("{l}: {} GPU(s) per machine", a.gpus_per_machine)).collect();
    let engines: Vec<String> = d.sides.iter().map(|(l, a)| format!("{l}: {}", a.engine)).collect();
    h.el(
        "p",
        &[("class", "legend-text"), ("id", "frontier-caption")],
        &format!(
            "Per GPU counts every GPU of the mode: a pair (TP2, PD, two copies) both machines' ({}). Per user is output \
             tok/s / concurrent requests; an end-to-end latency marked * follows from it (Little's law: requests x output \
             tokens / output tok/s), unmarked it is the source's. On the frontier: no other point of the same kind does \
             better on both axes. Predictions use the {}.",
            gpus.join("; "),
            engines.join("; ")
        ),
    );
    let missing: Vec<String> = d
        .sides
        .iter()
        .filter(|(_, a)| a.measured_without_x > 0)
        .map(|(l, a)| format!("{l}: {} published points state no {}", a.measured_without_x, d.axis.label()))
        .collect();
    if !missing.is_empty() {
        h.el(
            "p",
            &[("class", "legend-text"), ("id", "frontier-missing")],
            &format!("{} (left off this axis).", missing.join("; ")),
        );
    }
    let two = d.sides.len() > 1;
    h.open("table", &[("class", "points"), ("id", "frontier-table")]);
    h.el("caption", &[], "Every point on the chart, per GPU and per user, with its latencies");
    h.open("thead", &[]).open("tr", &[]);
    let mut heads = vec!["kind", "mode", "concurrency", "tok/s", "GPUs", "tok/s per GPU", "tok/s per user", "TTFT ms"];
    heads.extend(["TPOT ms", "end-to-end s", "frontier", "source"]);
    if two {
        heads.insert(0, "side");
    }
    for t in heads {
        h.el("th", &[], t);
    }
    h.close("tr").close("thead").open("tbody", &[]);
    for (side, predicted, p) in d.drawn() {
        let class = match (p.flagged, p.on_frontier) {
            (true, _) => "flagged",
            (false, true) => "on-frontier",
            _ => "",
        };
        h.open("tr", &[("class", class)]);
        if two {
            h.el("td", &[], &d.sides[side].0);
        }
        h.el("td", &[], if predicted { "predicted" } else { "published" }).el("td", &[], p.mode.name());
        let tpot = match (p.tpot_s, p.itl_s) {
            (Some(t), _) => ms(Some(t)),
            (None, Some(i)) => format!("{} (ITL)", ms(Some(i))),
            _ => "-".into(),
        };
        let e2e = format!("{}{}", fmt_sig(p.e2e_s), if p.e2e_stated { "" } else { "*" });
        for v in [
            p.concurrency.to_string(),
            fmt_sig(p.output_tok_s),
            p.gpus.to_string(),
            fmt_sig(p.tok_s_per_gpu),
            fmt_sig(p.tok_s_per_user),
            ms(p.ttft_s),
            tpot,
            e2e,
        ] {
            h.el("td", &[("class", "num")], &v);
        }
        h.el("td", &[], if p.on_frontier { "yes" } else { "" });
        h.open("td", &[("class", "quote")]).quote(&p.source, &p.quote).close("td");
        h.close("tr");
    }
    h.close("tbody").close("table");
    h.finish()
}

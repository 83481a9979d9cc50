//! Renders the query layer's answers as tables and text lines: formatting only, every number comes from
//! `sim_core::explore`.

use crate::out::Table;
use sim_core::dataset::MeasuredPoint;
use sim_core::diagnostic::{Diagnostic, Severity};
use sim_core::explore::{ClaimCheck, FabricAnswer, GoodputAnswer, StatedRow};
use sim_core::model::open_loop::OpenLoopPrediction;
use sim_core::model::Prediction;
use sim_core::plan::{MeasuredMode, Plan, PublishedVerdict};
use sim_core::report::{self, PointRole, Report};
use sim_core::stats::{ape, ErrorStats};
use sim_core::Mode;

/// Pretty JSON of any answer (an empty string never happens for these plain data types).
pub fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Whole numbers without decimals, others with one.
pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// Three decimals, or `inf`.
pub fn fmt3(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "inf".into()
    }
}

/// Diagnostics one a row, as `validate --format csv` prints them.
pub fn diagnostics(diags: &[Diagnostic]) -> Table {
    let mut t = Table::new(&["file", "pointer", "line", "column", "severity", "message", "hint"]);
    let number = |n: Option<usize>| n.map_or(String::new(), |n| n.to_string());
    for d in diags {
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Note => "note",
        };
        t.row(vec![
            d.file.clone(),
            d.pointer.clone(),
            number(d.line),
            number(d.column),
            severity.into(),
            d.message.clone(),
            d.hint.clone().unwrap_or_default(),
        ]);
    }
    t
}

/// Every claim recomputed: what it states, what its operands hold and give, and whether that reproduces it.
pub fn claims(checks: &[ClaimCheck]) -> Table {
    let mut t = Table::new(&[
        "claim",
        "stated",
        "computed",
        "tolerance",
        "reproduced",
        "numerator",
        "numerator_value",
        "denominator",
        "denominator_value",
        "source",
        "unverifiable",
        "caveat",
    ]);
    let value = |v: Option<f64>| v.map_or("-".to_string(), fmt_num);
    for c in checks {
        let operand = |o: &Option<sim_core::explore::OperandValue>| match o {
            Some(o) => (o.names.clone(), value(o.value)),
            None => ("-".to_string(), "-".to_string()),
        };
        let (n, nv) = operand(&c.numerator);
        let (d, dv) = operand(&c.denominator);
        t.row(vec![
            c.id.clone(),
            c.stated.clone(),
            c.computed.map_or("-".to_string(), |x| format!("{x:.3}")),
            format!("{:.3}", c.tolerance),
            c.verdict.name().to_string(),
            n,
            nv,
            d,
            dv,
            c.source.clone(),
            c.unverifiable.clone().unwrap_or_default(),
            c.caveat.clone().unwrap_or_default(),
        ]);
    }
    t
}

pub fn points(points: &[MeasuredPoint]) -> Table {
    let mut t = Table::new(&["model", "mode", "isl", "osl", "concurrency", "output_tok_s", "flags", "source", "quote"]);
    for p in points {
        let flags: Vec<_> = p.flags.iter().map(|f| f.name()).collect();
        t.row(vec![
            p.model.clone(),
            p.mode.name().into(),
            p.isl.to_string(),
            p.osl.to_string(),
            p.concurrency.to_string(),
            fmt_num(p.output_tok_s),
            flags.join(";"),
            p.source.clone(),
            p.quote.clone(),
        ]);
    }
    t
}

pub fn predictions(preds: &[Prediction]) -> Table {
    let mut t = Table::new(&[
        "mode",
        "isl",
        "osl",
        "concurrency",
        "output_tok_s",
        "ttft_s",
        "tpot_ms",
        "step_ms",
        "resident",
        "max_resident",
        "preemptions_per_request",
        "kv_use",
        "queue_s",
        "bottleneck",
    ]);
    for p in preds {
        t.row(vec![
            p.mode.name().into(),
            p.isl.to_string(),
            p.osl.to_string(),
            p.concurrency.to_string(),
            fmt_num(p.output_tok_s),
            fmt3(p.ttft_s),
            fmt3(p.tpot_s * 1e3),
            fmt3(p.step_s * 1e3),
            fmt3(p.resident_seqs),
            fmt_num(p.max_resident_seqs),
            fmt3(p.preemptions_per_request),
            fmt3(p.kv_utilization),
            fmt3(p.queue_s),
            p.bottleneck.name().into(),
        ]);
    }
    t
}

/// One row per open-loop point: the load sent, what it achieved, and each latency's mean, median, p90 and p99
/// (ms; TTFT and E2E in seconds).
pub fn open_loop(points: &[OpenLoopPrediction]) -> Table {
    let mut headers: Vec<String> =
        ["mode", "isl", "osl", "rate", "burstiness", "max_concurrency", "prompts", "achieved_rate", "output_tok_s"]
            .map(String::from)
            .to_vec();
    headers.push("peak_concurrency".into());
    for (name, unit) in [("ttft", "s"), ("tpot", "ms"), ("itl", "ms"), ("e2e", "s")] {
        for stat in ["mean", "median", "p90", "p99"] {
            headers.push(format!("{stat}_{name}_{unit}"));
        }
    }
    headers.push("bottleneck".into());
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    for p in points {
        let mut row = vec![
            p.mode.name().into(),
            p.isl.to_string(),
            p.osl.to_string(),
            if p.load.rate.is_infinite() { "inf".into() } else { fmt3(p.load.rate) },
            fmt3(p.load.burstiness),
            p.load.max_concurrency.map_or_else(|| "none".into(), |c| c.to_string()),
            p.load.prompts.to_string(),
            fmt3(p.achieved_rate),
            fmt_num(p.output_tok_s),
            fmt_num(p.peak_concurrency),
        ];
        for (stats, scale) in [(&p.ttft, 1.0), (&p.tpot, 1e3), (&p.itl, 1e3), (&p.e2e, 1.0)] {
            for x in [stats.mean_s, stats.median_s, stats.p90_s, stats.p99_s] {
                row.push(fmt3(x * scale));
            }
        }
        row.push(p.bottleneck.name().into());
        t.row(row);
    }
    t
}

/// One row per concurrency; per-mode columns grouped by quantity (`single_tok_s, tp2_tok_s, ..., single_bound,
/// ...`), generated from the plan's modes so a new mode adds its columns by itself.
pub fn plan_table(plan: &Plan) -> Table {
    let modes: Vec<Mode> = plan.rows.first().map(|r| r.modes.iter().map(|p| p.mode).collect()).unwrap_or_default();
    let per_mode = |suffix: &str| modes.iter().map(|m| format!("{}_{suffix}", m.name())).collect::<Vec<_>>();
    let mut headers: Vec<String> = vec!["isl".into(), "osl".into(), "concurrency".into()];
    headers.extend(per_mode("tok_s"));
    headers.extend(["best".to_string(), "gain".to_string()]);
    headers.extend(per_mode("bound"));
    headers.extend(per_mode("ttft_s"));
    headers.extend(per_mode("tpot_ms"));
    headers.extend(per_mode("preemptions"));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(&header_refs);
    for r in &plan.rows {
        let mut row = vec![r.isl.to_string(), r.osl.to_string(), r.concurrency.to_string()];
        row.extend(r.modes.iter().map(|p| fmt_num(p.output_tok_s)));
        // A row where no mode runs has no best mode and no gain; a mode that does not run has no latencies.
        let runs = r.modes.iter().any(|p| p.output_tok_s > 0.0);
        let best = if runs { r.best.name() } else { "none" };
        let gain = if r.gain.is_finite() { format!("{:.2}", r.gain) } else { "-".into() };
        row.extend([best.to_string(), gain]);
        row.extend(r.modes.iter().map(|p| p.bottleneck.name().to_string()));
        let latency = |p: &Prediction, x: f64| if p.output_tok_s > 0.0 { fmt3(x) } else { "-".into() };
        row.extend(r.modes.iter().map(|p| latency(p, p.ttft_s)));
        row.extend(r.modes.iter().map(|p| latency(p, p.tpot_s * 1e3)));
        row.extend(r.modes.iter().map(|p| fmt3(p.preemptions_per_request)));
        t.row(row);
    }
    t
}

/// The plan as JSON, with the scenario's calibration note when it has one and the goodput answer at a latency
/// target when one was given.
pub fn plan_json(plan: &Plan, calibration: Option<&str>, goodput: Option<&GoodputAnswer>) -> String {
    let mut v = serde_json::to_value(plan).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        if let Some(g) = goodput {
            obj.insert("goodput".into(), serde_json::to_value(g).unwrap_or_default());
        }
        if let Some(c) = calibration {
            obj.insert("calibration".into(), serde_json::Value::String(c.to_string()));
        }
        // Where no mode runs, no mode is recommended: null, not the placeholder.
        if plan.recommendation().is_none() {
            obj.insert("recommended_mode".into(), serde_json::Value::Null);
        }
    }
    json(&v)
}

/// Above the plan's table without a latency target: the recommendation, wrapped at 100 columns.
pub fn plan_verdict(plan: &Plan) -> Vec<String> {
    let text = match plan.contradicted() {
        Some(v) => format!(
            "recommended: {} as measured of this setup; the model alone: {} ({}); {}",
            v.best_measured.name(),
            plan.recommendation().map_or("none", Mode::name),
            plan.reason,
            v.contradiction_text()
        ),
        None => format!("recommended: {} ({})", plan.recommendation().map_or("none", Mode::name), plan.reason),
    };
    let mut out = wrap(&text, 100, "  ");
    if let Some(f) = &plan.four_machines {
        out.extend(wrap(&format!("four machines: {}", f.reason), 100, "  "));
    }
    out.push(String::new());
    out
}

/// How to run a mode with vLLM: each step where it runs, what it does, its command and the page it follows.
pub fn serving_commands(c: &sim_core::explore::serving_commands::ServingCommands) -> Vec<String> {
    let mut out = vec![format!("how to run {} ({}) with vLLM:", c.mode.name(), c.mode.label())];
    for s in &c.steps {
        out.extend(wrap(&format!("  {}: {}", s.on, s.what), 100, "    "));
        out.extend(s.command.lines().map(|l| format!("    {l}")));
        out.push(format!("    see {}", s.doc));
    }
    for n in &c.notes {
        out.extend(wrap(&format!("  note: {n}"), 100, "    "));
    }
    out.push(String::new());
    out
}

/// Words of `text` in lines of at most `width` columns (a longer word stands alone), continuations indented.
fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut out = Vec::new();
    let body = text.trim_start_matches(' ');
    let mut line = text[..text.len() - body.len()].to_string();
    let lead = line.len();
    for word in body.split(' ') {
        let len = line.chars().count();
        if len > lead.max(indent.len()) && len + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
            line.push_str(indent);
        } else if line.chars().count() > lead && line != indent {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.trim().is_empty() {
        out.push(line);
    }
    out
}

/// Above the commands: weights kept in CPU memory and the `--cpu-offload-gb` that keeps them there, a verdict
/// that turns on a few points of the memory share.
pub fn plan_notes(
    offloads: &[sim_core::explore::memory_share::Offload],
    share: Option<&sim_core::explore::memory_share::ShareWarning>,
) -> Vec<String> {
    let mut out = Vec::new();
    for o in offloads {
        out.extend(wrap(&format!("weights: {}", o.text()), 100, "  "));
    }
    if let Some(w) = share {
        out.extend(wrap(&format!("warning: {}", w.text), 100, "  "));
    }
    if !out.is_empty() {
        out.push(String::new());
    }
    out
}

/// Under the plan's table: where the weights live, the calibration, and the plan's one answer (`headline`, the
/// verdict above in one sentence).
pub fn plan_summary(plan: &Plan, calibration: Option<&str>, headline: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    out.push("concurrency: closed-loop streams, each sending its next request the moment its answer ends".to_string());
    for p in &plan.placements {
        let pl = &p.placement;
        out.push(format!(
            "{:<6} per GPU: {:.1} GB weights in HBM, {:.1} GB spilled to CPU memory, {:.1} GB pinned in CPU memory, {:.1} GB KV pool",
            p.mode.name(),
            pl.hbm_weight_bytes() / 1e9,
            pl.spilled_bytes() / 1e9,
            pl.pinned_cpu_bytes / 1e9,
            pl.kv_pool_bytes / 1e9
        ));
    }
    if let Some(c) = calibration {
        out.push(format!("calibration: {c}"));
    }
    out.push(format!("engine: {}", plan.engine));
    out.push(format!("link: {}", plan.link));
    out.push(format!("recommended: {headline}"));
    // What the published sweeps of this setup measured: every row where the model ranks the measured modes
    // otherwise, and the top of the range either way (where the recommendation is decided).
    let top = plan.rows.iter().map(|r| r.concurrency).max();
    for v in plan.published.iter().filter(|v| !v.agrees || Some(v.concurrency) == top) {
        let list = |tok: fn(&MeasuredMode) -> f64, sep: &str| {
            v.modes.iter().map(|m| format!("{} {:.1}", m.mode.name(), tok(m))).collect::<Vec<_>>().join(sep)
        };
        let (measured, predicted) = (list(|m| m.measured_tok_s, " > "), list(|m| m.predicted_tok_s, ", "));
        let (picked, best) = (v.best_predicted.name(), v.best_measured.name());
        let verdict = if v.best_measured == v.best_predicted {
            format!("the model also puts {picked} first")
        } else if v.agrees {
            format!("the model puts {picked} first, measured within 5% of {best} (a tie)")
        } else {
            format!(
                "the model puts {picked} first, the measurement {best} (by {:.0}%)",
                (v.measured_margin() - 1.0) * 100.0
            )
        };
        out.push(format!(
            "published ({}) at {}/{}, {} clients: {measured} tok/s measured; predicted {predicted}: {verdict}",
            v.dataset, v.isl, v.osl, v.concurrency
        ));
    }
    out
}

/// The model's pick of mode against the measured winner wherever two modes or more were measured at one load:
/// a count per dataset, then every load where the measurement favours another mode by more than 5%.
pub fn verdicts(verdicts: &[PublishedVerdict]) -> Vec<String> {
    let mut out = vec![
        String::new(),
        "mode verdicts (where a publication measured two modes or more at one load; a pick measured within 5% of \
         the winner counts as right):"
            .to_string(),
    ];
    let mut datasets: Vec<&str> = verdicts.iter().map(|v| v.dataset.as_str()).collect();
    datasets.dedup();
    for d in datasets {
        let of: Vec<&PublishedVerdict> = verdicts.iter().filter(|v| v.dataset == d).collect();
        let right = of.iter().filter(|v| v.agrees).count();
        out.push(format!("  {d}: the model picks the measured winner at {right} of {} loads", of.len()));
    }
    for v in verdicts.iter().filter(|v| !v.agrees) {
        let measured = v.modes.iter().map(|m| format!("{} {}", m.mode.name(), fmt_num(m.measured_tok_s)));
        let picked = v.modes.iter().find(|m| m.mode == v.best_predicted).map_or(0.0, |m| m.predicted_tok_s);
        out.push(format!(
            "  {} {}/{} at {}: measured {}; the model picks {} ({} predicted), the measurement {} by {:.0}%",
            v.scenario,
            v.isl,
            v.osl,
            v.concurrency,
            measured.collect::<Vec<_>>().join(" > "),
            v.best_predicted.name(),
            fmt_num(picked),
            v.best_measured.name(),
            (v.measured_margin() - 1.0) * 100.0
        ));
    }
    out
}

/// A latency a source states, scaled (`-` where it states none).
fn stated_cell(v: Option<f64>, scale: f64) -> String {
    v.map_or("-".to_string(), |v| fmt3(v * scale))
}

pub fn report_rows(r: &Report) -> Table {
    let mut t = Table::new(&[
        "model",
        "mode",
        "isl",
        "osl",
        "concurrency",
        "measured_tok_s",
        "predicted_tok_s",
        "ape_pct",
        "role",
        "flags",
        "bottleneck",
        "predicted_ttft_s",
        "predicted_tpot_ms",
        "preemptions",
        "measured_ttft_s",
        "measured_tpot_ms",
    ]);
    for row in &r.rows {
        t.row(vec![
            row.model.clone(),
            row.mode.name().into(),
            row.isl.to_string(),
            row.osl.to_string(),
            row.concurrency.to_string(),
            fmt_num(row.measured_tok_s),
            fmt_num(row.predicted_tok_s),
            format!("{:.1}", row.ape),
            row.role.name().into(),
            row.flags.join(";"),
            row.bottleneck.clone(),
            fmt3(row.predicted_ttft_s),
            fmt3(row.predicted_tpot_s * 1e3),
            fmt3(row.predicted_preemptions_per_request),
            stated_cell(row.measured_ttft_s, 1.0),
            stated_cell(row.measured_tpot_s, 1e3),
        ]);
    }
    t
}

/// Under the report's rows: the fit and its coefficients, error statistics, flagged points, the mode
/// comparison, and the values stated without a point.
pub fn report_summary(r: &Report, stated: &[StatedRow]) -> Vec<String> {
    let mut out = vec![String::new()];
    out.push(format!(
        "fit: {} ({} points, rms log error {:.3}, {} evaluations)",
        r.calibration.set_description(),
        r.calibration.points_used,
        r.calibration.rms_log_error,
        r.calibration.evaluations
    ));
    for (name, value, basis) in r.calibration.coefficients.describe(r.calibration.set_description()) {
        out.push(format!("  {name:<28} {value:>12.6}  {basis}"));
    }
    let outside = sim_core::fit::implausible(&r.calibration.coefficients);
    if !outside.is_empty() {
        out.push("outside or at the edge of the plausible range (a cost the physics lacks stands in for it):".into());
        for c in outside {
            out.push(format!("  {:<28} {:>12.6}  {} [{}, {}]: {}", c.name, c.value, c.side, c.low, c.high, c.why));
        }
    }
    out.push(String::new());
    // Per dataset (publication): the calibration dataset is fitted, every other dataset predicted by that fit.
    let datasets =
        r.by_dataset.iter().map(|g| report::GroupStats { group: format!("dataset {}", g.group), ..g.clone() });
    out.extend(group_stats_lines(
        "group",
        r.by_model
            .iter()
            .cloned()
            .chain(r.by_mode.iter().cloned())
            .chain(datasets)
            .chain(std::iter::once(r.overall.clone())),
    ));
    out.extend(report_latency(r));
    let flagged: Vec<_> = r.rows.iter().filter(|x| x.role == PointRole::Flagged).collect();
    if !flagged.is_empty() {
        out.push(String::new());
        out.push("flagged points (reported as collected; excluded from fit and statistics):".into());
        for x in flagged {
            out.push(format!(
                "  {} {} {}/{} at {}: measured {}, predicted {} ({:.0}% off) [{}]",
                x.model,
                x.mode.name(),
                x.isl,
                x.osl,
                x.concurrency,
                fmt_num(x.measured_tok_s),
                fmt_num(x.predicted_tok_s),
                x.ape,
                x.flags.join(";")
            ));
        }
    }
    out.push(String::new());
    out.push("TP2 against PD at 32 streams (the model's comparison, not a lookup):".into());
    for c in &r.mode_comparisons {
        let tok = |m: Mode| fmt_num(c.row.get(m).output_tok_s);
        out.push(format!(
            "  {} {}/{}: single {} | tp2 {} | pd {} -> {}: {}",
            c.model,
            c.row.isl,
            c.row.osl,
            tok(Mode::Single),
            tok(Mode::Tp2),
            tok(Mode::Pd),
            c.better.name(),
            c.reason
        ));
    }
    if !stated.is_empty() {
        out.push(String::new());
        out.push("values stated as a band or without a concurrency (shown, never counted):".into());
        for v in stated {
            let preds: Vec<String> = v
                .predicted
                .iter()
                .map(|(c, p, inside)| format!("{c}: {}{}", fmt_num(*p), if *inside { "" } else { " (outside)" }))
                .collect();
            let preds = if preds.is_empty() { "- (no likely concurrency)".to_string() } else { preds.join(", ") };
            out.push(format!(
                "  {} {} {}/{}: {} | predicted {}",
                v.model,
                v.mode.name(),
                v.isl,
                v.osl,
                v.stated,
                preds
            ));
        }
    }
    out
}

/// The latencies sources state beside the model's, point by point, then their errors per dataset.
fn report_latency(r: &Report) -> Vec<String> {
    let stated: Vec<_> = r.rows.iter().filter(|x| x.measured_ttft_s.is_some() || x.measured_tpot_s.is_some()).collect();
    if stated.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        String::new(),
        "latency beside throughput (points whose source states a mean TTFT or TPOT; no fit reads a latency, so \
         every error here is a prediction's; role is the point's in the throughput fit):"
            .into(),
    ];
    let mut t = Table::new(&[
        "scenario",
        "mode",
        "isl",
        "osl",
        "concurrency",
        "role",
        "measured_ttft_s",
        "predicted_ttft_s",
        "ttft_ape_pct",
        "measured_tpot_ms",
        "predicted_tpot_ms",
        "tpot_ape_pct",
    ]);
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    for x in &stated {
        t.row(vec![
            x.scenario.clone(),
            x.mode.name().into(),
            x.isl.to_string(),
            x.osl.to_string(),
            x.concurrency.to_string(),
            x.role.name().into(),
            stated_cell(x.measured_ttft_s, 1.0),
            fmt3(x.predicted_ttft_s),
            pct(x.ttft_ape()),
            stated_cell(x.measured_tpot_s, 1e3),
            fmt3(x.predicted_tpot_s * 1e3),
            pct(x.tpot_ape()),
        ]);
    }
    out.extend(t.aligned());
    out.push(String::new());
    let named = |what: &'static str, groups: &[report::GroupStats]| -> Vec<report::GroupStats> {
        groups.iter().map(|g| report::GroupStats { group: format!("{what} {}", g.group), ..g.clone() }).collect()
    };
    out.extend(group_stats_lines(
        "latency",
        named("ttft", &r.ttft_by_dataset).into_iter().chain(named("tpot", &r.tpot_by_dataset)),
    ));
    out
}

/// A table of error statistics, one group a row, fitted beside predicted; `first` heads the groups' column.
fn group_stats_lines(first: &str, groups: impl IntoIterator<Item = report::GroupStats>) -> Vec<String> {
    let mut t = Table::new(&[
        first,
        "fitted_n",
        "fitted_median_ape",
        "fitted_p90_ape",
        "predicted_n",
        "predicted_median_ape",
        "predicted_p90_ape",
    ]);
    let cells = |s: Option<ErrorStats>| match s {
        Some(s) => vec![s.n.to_string(), format!("{:.1}%", s.median_ape), format!("{:.1}%", s.p90_ape)],
        None => vec!["0".into(), "-".into(), "-".into()],
    };
    for g in groups {
        let mut row = vec![g.group];
        row.extend(cells(g.fitted));
        row.extend(cells(g.predicted));
        t.row(row);
    }
    t.aligned()
}

pub fn fabric_rows(a: &FabricAnswer) -> Table {
    let mut t = Table::new(&[
        "collective",
        "bytes",
        "measured_busbw_gbps",
        "predicted_busbw_gbps",
        "column",
        "ape_pct",
        "efficiency",
    ]);
    for r in &a.rows {
        t.row(vec![
            r.collective.name().into(),
            format!("{:.0}", r.bytes),
            format!("{:.3}", r.measured_busbw_gbps),
            format!("{:.3}", r.predicted_busbw_gbps),
            r.column.name().into(),
            format!("{:.2}", ape(r.predicted_busbw_gbps, r.measured_busbw_gbps)),
            format!("{:.4}", r.efficiency),
        ]);
    }
    t
}

pub fn fabric_summary(a: &FabricAnswer) -> Vec<String> {
    let names =
        |v: &[sim_core::dataset::schema::Collective]| v.iter().map(|c| c.name()).collect::<Vec<_>>().join(" > ");
    vec![
        String::new(),
        format!("measured order of peaks:  {}", names(&a.measured_order)),
        format!("predicted order of peaks: {}", names(&a.predicted_order)),
    ]
}

/// Engine profiles: how each was obtained, the coefficients it predicts with, and for a fitted one what lies
/// outside its plausible ranges or at their edge (`outside`) or above what a machine it was fitted on reached in
/// a microbenchmark (`above`), one list each per profile.
pub fn engines(
    profiles: &[std::sync::Arc<sim_core::explore::EngineProfile>],
    outside: &[Vec<sim_core::fit::Implausible>],
    above: &[Vec<sim_core::explore::AboveMeasured>],
) -> Table {
    let mut t = Table::new(&[
        "engine",
        "obtained",
        "hbm_efficiency",
        "slow_efficiency",
        "compute_efficiency",
        "step_overhead_ms",
        "per_seq_overhead_us",
        "spec_per_seq_overhead_us",
        "tp_latency_scale",
        "per_layer_overhead_us",
        "outside_plausible_range",
    ]);
    for (i, p) in profiles.iter().enumerate() {
        let k = &p.coefficients;
        t.row(vec![
            p.id.clone(),
            p.obtained.clone(),
            format!("{:.3}", k.hbm_efficiency),
            format!("{:.3}", k.slow_efficiency),
            format!("{:.3}", k.compute_efficiency),
            format!("{:.3}", k.step_overhead_s * 1e3),
            format!("{:.1}", k.per_seq_overhead_s * 1e6),
            format!("{:.1}", k.spec_per_seq_overhead_s * 1e6),
            format!("{:.2}", k.tp_latency_scale),
            format!("{:.1}", k.per_layer_overhead_s * 1e6),
            if p.obtained.starts_with("fitted") {
                let measured = above.get(i).map(Vec::as_slice).unwrap_or_default();
                outside
                    .get(i)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .map(|c| format!("{} ({} {}-{})", c.name, c.side, c.low, c.high))
                    .chain(
                        measured
                            .iter()
                            .map(|a| format!("{} (above {:.3}, {}'s microbenchmark)", a.name, a.ceiling, a.machine)),
                    )
                    .collect::<Vec<_>>()
                    .join(", ")
            } else {
                "- (not fitted)".to_string()
            },
        ]);
    }
    t
}

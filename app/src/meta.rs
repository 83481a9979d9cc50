//! The JSON metadata download, as Our World in Data's grapher gives one: what the current view shows, where
//! its numbers come from (the published sources of its points), which model version and engine profile
//! predicted them, and the coefficients used. Pure: the page only saves the text.

use crate::charts::ChartSpec;
use crate::compute::{plan_run, what_if_settings};
use crate::data::Bundle;
use crate::state::{UrlState, View, VS_PLAN};
use sim_core::fit::FitSet;

/// The commit the page was built from (`git rev-parse --short HEAD` at build time, `unknown` without git).
pub const BUILD_COMMIT: &str = env!("TWOTOWER_COMMIT");

/// The sources of the published values the chart shows, each once, in the order drawn.
fn sources(spec: &ChartSpec, b: &Bundle, st: &UrlState) -> Vec<String> {
    let mut out: Vec<String> = match spec {
        ChartSpec::Frontier(d) => {
            d.drawn().iter().filter(|(_, pred, _)| !pred).map(|(_, _, p)| p.source.clone()).collect()
        }
        ChartSpec::Sweep(_) | ChartSpec::Gain(_) => {
            crate::compute::sweep(b, st).1.into_iter().map(|r| r.source).collect()
        }
        // The fabric rows and the planner's predictions carry no per-value source: the dataset entry names it.
        ChartSpec::Fabric(_) | ChartSpec::Plan(_) => Vec::new(),
    };
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|s| !s.is_empty() && seen.insert(s.clone()));
    out
}

/// `s` as a JSON string literal.
pub fn jstr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A number as JSON (`null` when not finite).
fn jnum(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// A JSON array of already-encoded values, one per line at `indent`.
fn jarr(items: &[String], indent: &str) -> String {
    if items.is_empty() {
        return "[]".into();
    }
    format!("[\n{indent}  {}\n{indent}]", items.join(&format!(",\n{indent}  ")))
}

/// One predicting side: its scenario, engine profile and coefficients (each with its basis), or why there is
/// none. Hand-written JSON: the page carries no serde serializer for this one file.
fn side(b: &Bundle, st: &UrlState, model: &str) -> String {
    let settings = if model == st.model { what_if_settings(st) } else { Vec::new() };
    let run = if model == VS_PLAN {
        plan_run(b, st)
    } else {
        b.ws.report_run_with_engine(model, &settings, FitSet::All, st.engine.as_deref())
    };
    let r = match run {
        Ok(r) => r,
        Err(e) => return format!("{{ \"scenario\": {}, \"error\": {} }}", jstr(model), jstr(&e)),
    };
    let scenario = if model == VS_PLAN {
        format!("planner: {} on {}", r.scenario.model.id, r.scenario.hardware.id)
    } else {
        model.to_string()
    };
    let coefficients: Vec<String> = r
        .coefficients
        .describe(&r.engine)
        .iter()
        .map(|(name, v, basis)| {
            format!("{{ \"name\": {}, \"value\": {}, \"basis\": {} }}", jstr(name), jnum(*v), jstr(basis))
        })
        .collect();
    let what_if: Vec<String> = settings
        .iter()
        .map(|s| {
            format!(
                "{{ \"knob\": {}, \"value\": {}, \"unit\": {} }}",
                jstr(s.knob.id),
                jnum(s.value),
                jstr(s.knob.unit)
            )
        })
        .collect();
    format!(
        "{{\n      \"scenario\": {},\n      \"engine_profile\": {},\n      \"coefficients\": {},\n      \"what_if\": {}\n    }}",
        jstr(&scenario),
        jstr(&r.engine),
        jarr(&coefficients, "      "),
        jarr(&what_if, "      ")
    )
}

/// The metadata of the current view as JSON.
pub fn metadata(b: &Bundle, st: &UrlState, spec: &ChartSpec) -> String {
    let (_, kind) = crate::csv::of(spec);
    let title = match spec {
        ChartSpec::Sweep(d) => d.title.clone(),
        ChartSpec::Frontier(d) => d.title.clone(),
        ChartSpec::Gain(d) => d.title.clone(),
        ChartSpec::Fabric(d) => d.title.clone(),
        ChartSpec::Plan(d) => d.title.clone(),
    };
    let mut predicted_by = vec![if st.view == View::Plan { side(b, st, VS_PLAN) } else { side(b, st, &st.model) }];
    if st.view == View::Compare {
        predicted_by.push(side(b, st, &crate::frontier::other(b, st)));
    }
    let sources: Vec<String> = sources(spec, b, st).iter().map(|s| jstr(s)).collect();
    let files = ["the chart as PNG and SVG".to_string(), format!("its data as CSV ({kind})"), "this metadata".into()];
    let fields = [
        ("title", jstr(&title)),
        ("chart", jstr(kind)),
        ("link", jstr(&st.to_query())),
        ("model_version", jstr(&format!("sim-core {} (commit {BUILD_COMMIT})", env!("CARGO_PKG_VERSION")))),
        ("predicted_by", jarr(&predicted_by, "  ")),
        ("sources", jarr(&sources, "  ")),
        (
            "dataset",
            jstr("data/ of the twotower repository, bundled at build time (docs/data.md describes every field)"),
        ),
        ("files", jarr(&files.iter().map(|f| jstr(f)).collect::<Vec<_>>(), "  ")),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("  {}: {v}", jstr(k))).collect();
    format!("{{\n{}\n}}\n", body.join(",\n"))
}

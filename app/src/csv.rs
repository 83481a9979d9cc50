//! CSV of the data behind the current chart, for the export button.

use crate::charts::{ChartSpec, FabricChartData, GainChartData, PlanChartData, SweepChartData};

/// The data of any chart as CSV, and a file name stem (csv depends on charts, never the other way round).
pub fn of(spec: &ChartSpec) -> (String, &'static str) {
    match spec {
        ChartSpec::Sweep(d) => (sweep(d), "throughput"),
        ChartSpec::Gain(d) => (gain(d), "gain"),
        ChartSpec::Fabric(d) => (fabric(d), "fabric"),
        ChartSpec::Plan(d) => (plan(d), "plan"),
    }
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// kind,mode,concurrency,value rows: predicted curve points then published points.
pub fn sweep(d: &SweepChartData) -> String {
    let mut out = String::from("kind,mode,concurrency,output_tok_s,flagged\n");
    for (m, pts) in &d.predicted {
        for (c, y) in pts {
            out.push_str(&format!("predicted,{},{c},{y:.2},\n", m.name()));
        }
    }
    for p in &d.measured {
        out.push_str(&format!("published,{},{},{},{}\n", p.mode.name(), p.x, p.y, p.hollow));
    }
    // Not points: a range as min-max bounds, an unplaced value at its likely (not stated) concurrency.
    for r in &d.ranges {
        out.push_str(&format!("published_range,{},{}-{},{}-{},\n", r.mode.name(), r.x_min, r.x_max, r.y_min, r.y_max));
    }
    for u in &d.unplaced {
        out.push_str(&format!(
            "published_unplaced,{},{},{},concurrency not stated (likely reading)\n",
            u.mode.name(),
            u.x,
            u.y
        ));
    }
    out
}

pub fn gain(d: &GainChartData) -> String {
    let mut out = String::from("kind,mode,concurrency,pair_over_single,flagged\n");
    for (m, pts) in &d.predicted {
        for (c, y) in pts {
            out.push_str(&format!("predicted,{},{c},{y:.4},\n", m.name()));
        }
    }
    for p in &d.measured {
        out.push_str(&format!("published,{},{},{:.4},{}\n", p.mode.name(), p.x, p.y, p.hollow));
    }
    out
}

pub fn fabric(d: &FabricChartData) -> String {
    let mut out = String::from("kind,collective,bytes,busbw_gb_s\n");
    for (n, pts) in &d.predicted {
        for (b, g) in pts {
            out.push_str(&format!("predicted,{},{b},{g:.3}\n", field(n)));
        }
    }
    for (n, b, g) in &d.measured {
        out.push_str(&format!("measured,{},{b},{g}\n", field(n)));
    }
    out.push_str(&format!("ceiling,,,{:.3}\n", d.ceiling_gbps));
    out
}

/// One row per mode and concurrency of a plan.
pub fn plan(d: &PlanChartData) -> String {
    let mut out = String::from("mode,concurrency,output_tok_s,ttft_s,tpot_ms,gain_over_single,bound\n");
    for r in &d.rows {
        let mode = r.mode.map(|m| m.name()).unwrap_or("");
        out.push_str(&format!(
            "{mode},{},{:.2},{:.3},{:.2},{:.3},{}\n",
            r.concurrency,
            r.output_tok_s,
            r.ttft_s,
            r.tpot_ms,
            r.gain,
            field(&r.bound)
        ));
    }
    out
}

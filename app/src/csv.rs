//! CSV of the data behind the current chart, for the export button.

use crate::charts::{ChartSpec, FabricChartData, FrontierChartData, GainChartData, PlanChartData, SweepChartData};

/// The data of any chart as CSV, and a file name stem (csv depends on charts, never the other way round).
pub fn of(spec: &ChartSpec) -> (String, &'static str) {
    match spec {
        ChartSpec::Sweep(d) => (sweep(d), "throughput"),
        ChartSpec::Frontier(d) => (frontier(d), "frontier"),
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
    let mut out = String::from(
        "kind,mode,concurrency,output_tok_s,flagged,stated_ttft_s,stated_tpot_s,predicted_ttft_s,predicted_tpot_s\n",
    );
    for (m, pts) in &d.predicted {
        for (c, y) in pts {
            out.push_str(&format!("predicted,{},{c},{y:.2},,,,,\n", m.name()));
        }
    }
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_default();
    for p in &d.measured {
        let l = d.latencies.iter().find(|l| l.mode == p.mode && f64::from(l.concurrency) == p.x);
        let lat = l.map(|l| {
            let stated_tpot = l.measured_tpot_s.or(l.measured_itl_s);
            [opt(l.measured_ttft_s), opt(stated_tpot), opt(l.predicted_ttft_s), opt(l.predicted_tpot_s)].join(",")
        });
        out.push_str(&format!(
            "published,{},{},{},{},{}\n",
            p.mode.name(),
            p.x,
            p.y,
            p.hollow,
            lat.unwrap_or_else(|| ",,,".into())
        ));
    }
    // Not points: a range as min-max bounds, an unplaced value at its likely (not stated) concurrency.
    for r in &d.ranges {
        out.push_str(&format!(
            "published_range,{},{}-{},{}-{},,,,,\n",
            r.mode.name(),
            r.x_min,
            r.x_max,
            r.y_min,
            r.y_max
        ));
    }
    for u in &d.unplaced {
        out.push_str(&format!(
            "published_unplaced,{},{},{},concurrency not stated (likely reading),,,,\n",
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

/// Every point the frontier chart draws (so exactly the view: its axis, frontier-only or not), then the
/// headline of each side. Latencies are empty where neither the model nor the source gives them.
pub fn frontier(d: &FrontierChartData) -> String {
    let mut out = String::from(
        "side,kind,mode,concurrency,output_tok_s,gpus,tok_s_per_gpu,tok_s_per_user,ttft_s,tpot_s,itl_s,e2e_s,\
         e2e_basis,on_frontier,flagged,preemptions_per_request,kv_utilization,source\n",
    );
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_default();
    for (side, predicted, p) in d.drawn() {
        out.push_str(&format!(
            "{},{},{},{},{:.2},{},{:.3},{:.3},{},{},{},{:.3},{},{},{},{},{},{}\n",
            field(&d.sides[side].0),
            if predicted { "predicted" } else { "published" },
            p.mode.name(),
            p.concurrency,
            p.output_tok_s,
            p.gpus,
            p.tok_s_per_gpu,
            p.tok_s_per_user,
            opt(p.ttft_s),
            opt(p.tpot_s),
            opt(p.itl_s),
            p.e2e_s,
            if p.e2e_stated { "stated" } else { "little's law" },
            p.on_frontier,
            p.flagged,
            opt(p.preemptions_per_request),
            opt(p.kv_utilization),
            field(&p.source)
        ));
    }
    for (label, a) in &d.sides {
        if let Some(h) = &a.headline {
            out.push_str(&format!(
                "{},headline{},{},{}-{},,,{:.3},{},,,,,,,,,,\n",
                field(label),
                if h.interpolated { " (interpolated)" } else { "" },
                h.mode.name(),
                h.between.0,
                h.between.1,
                h.tok_s_per_gpu,
                h.tok_s_per_user
            ));
        }
    }
    out
}

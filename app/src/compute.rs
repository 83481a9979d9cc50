//! The page's questions to `sim_core::explore` and their answers turned into chart data. Pure, no browser,
//! and no model arithmetic: every number comes from the query layer; this file only assembles the question
//! from the URL state and reshapes the answer for plotters.

use crate::charts::{
    FabricChartData, GainChartData, Marker, PlanChartData, RangeMarker, SweepChartData, UnplacedMarker,
};
use crate::data::Bundle;
use crate::state::{pf, ModelSource, UrlState, View, KNOB_COUNT};
use sim_core::dataset::schema::Workload;
use sim_core::describe::ModelDescription;
use sim_core::explore::settings::{self, Setting, HARDWARE, WHAT_IF};
use sim_core::explore::{GainAnswer, ModelChoice, PlanQuery, ScenarioRun, SweepAnswer, SweepQuery};
use sim_core::fit::FitSet;
use sim_core::import::{vllm_bench, VllmOptions};
use sim_core::model::Coefficients;
use sim_core::plan::Plan;
use sim_core::Mode;

pub use sim_core::explore::sweep::{explain_flags, MIN_MODE_POINTS};
pub use sim_core::explore::{ClaimRow, PointLatencies, PointRow, StatedKind, StatedRow, CONCURRENCY};
/// How the planner's coefficients were calibrated on the team's own single-machine measurements.
pub use sim_core::fit::TeamCalibration as Calibrated;

/// The what-if controls that differ from the dataset, as settings.
pub fn what_if_settings(st: &UrlState) -> Vec<Setting> {
    WHAT_IF.iter().zip(st.whatif).filter_map(|(k, v)| v.map(|value| Setting { knob: *k, value })).collect()
}

/// The workloads a model's (scenario's) data has, in the scenario's order.
pub fn workloads(b: &Bundle, model: &str) -> Vec<(u32, u32)> {
    b.ws.scenarios.get(model).map(|s| s.workloads.iter().map(|w| (w.isl, w.osl)).collect()).unwrap_or_default()
}

/// The state's workload for its model: the chosen one when the model has it, else the model's first.
pub fn workload(b: &Bundle, st: &UrlState) -> (u32, u32) {
    let all = workloads(b, &st.model);
    match st.workload {
        Some(w) if all.contains(&w) => w,
        _ => all.first().copied().unwrap_or_else(|| st.workload()),
    }
}

/// A warning when the URL asked for a workload the model has no data for (the page then shows its first).
pub fn workload_warning(b: &Bundle, st: &UrlState) -> Option<String> {
    let all = workloads(b, &st.model);
    let w = st.workload?;
    (!all.contains(&w)).then(|| {
        let known: Vec<String> = all.iter().map(|(i, o)| format!("{i}-{o}")).collect();
        format!(
            "workload `{}-{}` has no data for {}; showing {} (known: {})",
            w.0,
            w.1,
            st.model,
            known.first().cloned().unwrap_or_default(),
            known.join(", ")
        )
    })
}

/// One engine profile the page offers: its id, its name, and how its coefficients were obtained (or why the
/// profile cannot be built).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineChoice {
    pub id: String,
    pub name: String,
    pub obtained: String,
}

/// Every engine profile of the dataset, in id order (the bundled ones come fitted from the build script).
pub fn engine_choices(b: &Bundle) -> Vec<EngineChoice> {
    b.ws.dataset
        .engines
        .keys()
        .map(|id| match b.ws.engine(id) {
            Ok(p) => EngineChoice { id: id.clone(), name: p.name.clone(), obtained: p.obtained.clone() },
            Err(e) => EngineChoice { id: id.clone(), name: id.clone(), obtained: e },
        })
        .collect()
}

/// The profile the state's view predicts with when none is chosen: the planner's is the one claimed for its
/// hardware (as `plan_scenario` picks it), every other view's the scenario's own.
pub fn own_engine(b: &Bundle, st: &UrlState) -> String {
    if st.view == View::Plan {
        sim_core::scenario::default_engine(&b.ws.dataset, Some(&st.plan.hardware))
    } else {
        b.ws.scenarios.get(&st.model).map(|s| s.engine.clone()).unwrap_or_default()
    }
}

/// A warning when the URL named an engine profile the dataset does not have (the page then uses the default).
pub fn engine_warning(b: &Bundle, st: &UrlState) -> Option<String> {
    let e = st.engine.as_deref()?;
    (!b.ws.dataset.engines.contains_key(e)).then(|| {
        let known: Vec<&str> = b.ws.dataset.engines.keys().map(String::as_str).collect();
        format!("unknown engine profile `{e}`; using each scenario's own (known: {})", known.join(", "))
    })
}

/// Asks `ask` the throughput question of the state: its model and workload with the what-if settings and the
/// chosen engine profile (one place builds it for every answer that needs it).
fn with_sweep_query<T>(b: &Bundle, st: &UrlState, ask: impl FnOnce(&SweepQuery) -> T) -> T {
    let (isl, osl) = workload(b, st);
    let settings = what_if_settings(st);
    ask(&SweepQuery { model: &st.model, isl, osl, settings: &settings, engine: st.engine.as_deref() })
}

/// The throughput answer of the state.
pub fn sweep_answer(b: &Bundle, st: &UrlState) -> Result<SweepAnswer, String> {
    with_sweep_query(b, st, |q| b.ws.sweep(q))
}

/// The throughput chart of an answer: curves, bands, published points (hollow when flagged), then the markers
/// of stated values in the answer's order (the chart's hit points follow the same order).
pub fn sweep_chart(a: &SweepAnswer) -> SweepChartData {
    let mut data = SweepChartData { title: a.title.clone(), ..Default::default() };
    data.predicted = a.curves.iter().map(|c| (c.mode, c.xy())).collect();
    data.bands = a.bands.iter().map(|(m, b)| (*m, b.p90_pct)).collect();
    data.measured = a
        .points
        .iter()
        .map(|p| Marker { mode: p.mode, x: f64::from(p.concurrency), y: p.measured, hollow: p.flagged.is_some() })
        .collect();
    for r in &a.stated {
        match r.kind {
            StatedKind::Unplaced { value, likely: Some(x) } => {
                data.unplaced.push(UnplacedMarker { mode: r.mode, x, y: value })
            }
            StatedKind::Range { c_min, c_max, y_min, y_max } => {
                data.ranges.push(RangeMarker { mode: r.mode, x_min: c_min, x_max: c_max, y_min, y_max })
            }
            StatedKind::Unplaced { likely: None, .. } => {}
        }
    }
    data
}

/// The stated and predicted TTFT and TPOT of the state's published points.
pub fn point_latencies(b: &Bundle, st: &UrlState) -> Vec<PointLatencies> {
    with_sweep_query(b, st, |q| b.ws.point_latencies(q)).unwrap_or_default()
}

/// The throughput chart and its table for the state.
pub fn sweep(b: &Bundle, st: &UrlState) -> (SweepChartData, Vec<PointRow>) {
    let (data, rows, _) = sweep_all(b, st);
    (data, rows)
}

/// The throughput chart, its points and its values that are not points (ranges, values without a
/// concurrency). An unknown model gives an empty chart titled with the problem.
pub fn sweep_all(b: &Bundle, st: &UrlState) -> (SweepChartData, Vec<PointRow>, Vec<StatedRow>) {
    match sweep_answer(b, st) {
        Ok(a) => {
            let data = SweepChartData { latencies: point_latencies(b, st), ..sweep_chart(&a) };
            (data, a.points, a.stated)
        }
        Err(e) => (SweepChartData { title: e, ..Default::default() }, Vec::new(), Vec::new()),
    }
}

/// The gain chart of an answer.
pub fn gain_chart(a: &GainAnswer) -> GainChartData {
    GainChartData {
        title: a.title.clone(),
        predicted: a.predicted.clone(),
        measured: a.measured.iter().map(|&(mode, c, y, hollow)| Marker { mode, x: f64::from(c), y, hollow }).collect(),
        claims: a.claims.clone(),
    }
}

/// Gain of the pair over one station at equal concurrency: predicted curves, published ratios, claims.
pub fn gain(b: &Bundle, st: &UrlState) -> GainChartData {
    let (isl, osl) = workload(b, st);
    match b.ws.gain(&SweepQuery {
        model: &st.model,
        isl,
        osl,
        settings: &what_if_settings(st),
        engine: st.engine.as_deref(),
    }) {
        Ok(a) => gain_chart(&a),
        Err(e) => GainChartData { title: e, ..Default::default() },
    }
}

/// Every claim of the model, in the dataset's order.
pub fn claims_of(b: &Bundle, model: &str) -> Vec<ClaimRow> {
    b.ws.claims(Some(model))
}

/// Bus bandwidth against message size per collective (the link what-if applied), with the measured rows and
/// the payload ceiling.
pub fn fabric(b: &Bundle, st: &UrlState) -> FabricChartData {
    match b.ws.fabric(&what_if_settings(st)) {
        Ok(a) => FabricChartData {
            title: a.title,
            predicted: a.curves.into_iter().map(|(c, pts)| (c.name().to_string(), pts)).collect(),
            measured: a
                .rows
                .iter()
                .map(|r| (r.collective.name().to_string(), r.bytes, r.measured_busbw_gbps))
                .collect(),
            ceiling_gbps: a.ceiling_gbps,
        },
        Err(e) => FabricChartData { title: e, ..Default::default() },
    }
}

/// The dataset's value of each what-if control for a model predicted with an engine profile (`None`: its own),
/// in the controls' units.
pub fn baseline(b: &Bundle, model: &str, engine: Option<&str>) -> [f64; KNOB_COUNT] {
    let mut out = [f64::NAN; KNOB_COUNT];
    if let Ok(run) = b.ws.report_run_with_engine(model, &[], FitSet::All, engine) {
        for (o, v) in out.iter_mut().zip(settings::current(&run.scenario, &run.coefficients, &WHAT_IF)) {
            *o = v;
        }
    }
    out
}

/// The hardware preset's value of each planner hardware field, in the form's units.
pub fn hardware_baseline(b: &Bundle, id: &str) -> [f64; 6] {
    let mut out = [f64::NAN; 6];
    if let Some(h) = b.hardware.get(id) {
        for (o, v) in out.iter_mut().zip(settings::current_hardware(h, &HARDWARE)) {
            *o = v;
        }
    }
    out
}

/// The model the planner's form describes.
pub fn form_description(st: &UrlState) -> ModelDescription {
    let p = &st.plan;
    let v = |i: usize| p.value(i);
    let mla = p.attention == "mla";
    ModelDescription {
        id: "custom".into(),
        name: Some("described model".into()),
        total_params: v(pf::TOTAL) * 1e9,
        active_params: v(pf::ACTIVE) * 1e9,
        layers: v(pf::LAYERS),
        hidden_size: v(pf::HIDDEN),
        attention: p.attention.clone(),
        kv_heads: (!mla).then(|| v(pf::KV_HEADS)),
        head_dim: (!mla).then(|| v(pf::HEAD_DIM)),
        kv_lora_rank: mla.then(|| v(pf::KV_LORA)),
        rope_dim: mla.then(|| v(pf::ROPE)),
        kv_bytes_per_element: 2.0,
        routed_experts: v(pf::EXPERTS),
        experts_per_token: if v(pf::EXPERTS) > 0.0 { v(pf::TOPK) } else { 0.0 },
        routed_expert_params: None,
        vocab_size: None,
        input_embedding_params: None,
        qk_nope_head_dim: None,
        v_head_dim: None,
        mtp_routed_expert_params: None,
        mtp_dense_params: None,
        bits_per_weight: p.bits,
        dense_bits_per_weight: p.dense_bits,
        draft_tokens: v(pf::DRAFT),
        // The form does not say what the drafter is: its passes read weights only.
        draft_attention_layers: None,
        draft_acceptance: v(pf::ACCEPT) / 100.0,
        attention_heads: None,
        sliding_window: None,
        sliding_window_layers: None,
        window_kv_heads: None,
        window_head_dim: None,
        sparse_top_k: None,
        indexer_heads: None,
        indexer_head_dim: None,
        linear_attention_layers: None,
        linear_state_bytes: None,
    }
}

/// The planner's question for the state.
pub fn plan_query(st: &UrlState) -> PlanQuery {
    let p = &st.plan;
    let model = match p.source {
        ModelSource::Report => ModelChoice::Report(st.model.clone()),
        ModelSource::Form => ModelChoice::Described(form_description(st)),
        ModelSource::HfConfig => {
            ModelChoice::HfConfig { text: p.hf.clone(), bits_per_weight: p.bits, dense_bits_per_weight: p.dense_bits }
        }
    };
    let settings =
        pf::HARDWARE.zip(HARDWARE).filter_map(|(i, knob)| p.values[i].map(|value| Setting { knob, value })).collect();
    PlanQuery {
        hardware: p.hardware.clone(),
        engine: st.engine.clone(),
        settings,
        model,
        workload: Workload {
            isl: p.value(pf::ISL).round() as u32,
            osl: p.value(pf::OSL).round() as u32,
            output_lengths: Default::default(),
        },
        concurrency: p.concurrency(),
        machines: p.machines,
    }
}

/// The planner's scenario for the state, or why there is none (a broken config.json, an unknown preset).
pub fn plan_run(b: &Bundle, st: &UrlState) -> Result<ScenarioRun, String> {
    b.ws.plan_scenario(&plan_query(st))
}

/// The plan for the state, or why there is none.
pub fn plan(b: &Bundle, st: &UrlState) -> Result<Plan, String> {
    plan_with(b, st, None)
}

/// The plan with calibrated coefficients (the team's own measurements) instead of the published fit.
pub fn plan_with(b: &Bundle, st: &UrlState, calibrated: Option<&Coefficients>) -> Result<Plan, String> {
    let mut run = plan_run(b, st)?;
    if let Some(k) = calibrated {
        run.coefficients = k.clone();
    }
    Ok(run.plan())
}

/// The planner's answer at its latency target: users served per mode, the verdict, costs when a price and a
/// power are given (or the machine's file lists them), and the commands that run the verdict's mode.
#[derive(Debug, Clone)]
pub struct TargetAnswer {
    pub goodput: sim_core::explore::GoodputAnswer,
    pub commands: Option<sim_core::explore::serving_commands::ServingCommands>,
}

/// `TargetAnswer` for the state, with calibrated coefficients when the team pasted measurements.
pub fn plan_goodput(b: &Bundle, st: &UrlState, calibrated: Option<&Coefficients>) -> Result<TargetAnswer, String> {
    use sim_core::explore::{cost, GoodputQuery, LatencyTarget};
    let mut run = plan_run(b, st)?;
    if let Some(k) = calibrated {
        run.coefficients = k.clone();
    }
    let p = &st.plan;
    let (price, power) = (p.value(pf::PRICE), p.value(pf::POWER));
    let listed = b.ws.dataset.hardware.get(&p.hardware).and_then(cost::listed);
    let cost = if price > 0.0 && power > 0.0 {
        Some(cost::CostInputs::with_defaults(price, power))
    } else {
        listed.map(|(price, power)| cost::CostInputs::with_defaults(price, power))
    };
    let target = LatencyTarget {
        ttft_s: Some(p.value(pf::SLO_TTFT)),
        tpot_s: Some(p.value(pf::SLO_TPOT) / 1e3),
        statistic: p.slo_stat,
    };
    let q = GoodputQuery {
        target,
        max_users: sim_core::explore::target::MAX_USERS,
        cost,
        users: Default::default(),
        asked_users: None,
    };
    let goodput = b.ws.goodput(&run, &q).map_err(|e| e.to_string())?;
    let mode = goodput.workloads.first().and_then(|w| w.verdict.best_pair);
    let model = match p.source {
        ModelSource::Report => format!("<{} checkpoint>", run.scenario.model.id),
        _ => "<your checkpoint>".to_string(),
    };
    let gpus = run.scenario.hardware.gpus.max(1.0).round() as u32;
    // The commands set what the prediction assumed: the profile's memory share, the offload of weights that do
    // not fit (`memory_share::serve_flags`).
    let offloads = sim_core::explore::memory_share::offloads(&run);
    let commands = mode.map(|m| {
        let c = sim_core::explore::serving_commands::serving_commands(m, &model, gpus, &run.scenario.server);
        let flags = sim_core::explore::memory_share::serve_flags(&run, &offloads, m);
        sim_core::explore::serving_commands::with_serve_flags(c, &flags)
    });
    Ok(TargetAnswer { goodput, commands })
}

/// Calibrates the planner's scenario on pasted `vllm bench serve` / `benchmark_serving.py` results exactly as
/// `sim-core calibrate` does: the importer reads the paste (one result, JSON Lines, or results one after
/// another) as single-machine points of the scenario's model, then the workspace fits. An error names the
/// problem and its line in the paste.
pub fn calibrate(b: &Bundle, run: &ScenarioRun, text: &str) -> Result<Calibrated, String> {
    if text.trim().is_empty() {
        return Err("paste one or more result JSON files into the box".into());
    }
    let opts = VllmOptions {
        mode: Mode::Single,
        model: Some(run.scenario.model.id.clone()),
        hardware: run.scenario.hardware.id.clone(),
        source_prefix: "pasted".into(),
        ..VllmOptions::default()
    };
    let sweep = vllm_bench(&[("pasted results".to_string(), text.to_string())], &opts).map_err(|d| d.to_string())?;
    b.ws.calibrate_sweep(run, &sweep, "pasted results").map(|c| c.calibration)
}

/// A coefficient's value for the accuracy table: seconds in ms, shares and scales to three significant digits.
pub fn coefficient_value(name: &str, v: f64) -> String {
    if name.ends_with("_s") {
        format!("{} ms", sig3(v * 1e3))
    } else {
        sig3(v)
    }
}

fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
    format!("{v:.digits$}")
}

/// The planner's chart: predicted output tok/s per mode over the concurrency range (modes that run only).
pub fn plan_chart(plan: &Result<Plan, String>, hardware_name: &str) -> PlanChartData {
    let Ok(p) = plan else { return PlanChartData { title: "no plan".into(), ..Default::default() } };
    let (isl, osl) = p.rows.first().map(|r| (r.isl, r.osl)).unwrap_or((0, 0));
    let mut data =
        PlanChartData { title: format!("{} on {hardware_name}, ISL {isl} / OSL {osl}", p.model), ..Default::default() };
    for mode in Mode::ALL {
        let pts = p
            .rows
            .iter()
            .map(|r| (r.concurrency, r.get(mode).output_tok_s))
            .filter(|(_, y)| y.is_finite() && *y > 0.0)
            .collect::<Vec<_>>();
        if !pts.is_empty() {
            data.predicted.push((mode, pts));
        }
    }
    data.concurrency_max = p.rows.iter().map(|r| r.concurrency).max().unwrap_or(1);
    if data.predicted.is_empty() {
        data.title.push_str(": does not fit");
    }
    for r in &p.rows {
        for pr in &r.modes {
            data.rows.push(crate::charts::PlanPoint {
                mode: Some(pr.mode),
                concurrency: r.concurrency,
                output_tok_s: pr.output_tok_s,
                ttft_s: pr.ttft_s,
                tpot_ms: pr.tpot_s * 1e3,
                gain: r.gain_of(pr.mode),
                bound: pr.bottleneck.name().to_string(),
            });
        }
    }
    data.recommended = p.recommendation().filter(|r| data.predicted.iter().any(|(m, _)| m == r));
    data
}

/// The rate sweep of the state: its model's chosen workload with the what-if settings and engine profile, each
/// of the scenario's modes at each rate (`ScenarioRun::open_loop`, as `sim-core predict --rate` asks it), or
/// the refusal (a rate that is not one, a bad load) as text.
pub fn rate_sweep(b: &Bundle, st: &UrlState) -> Result<Vec<sim_core::model::open_loop::OpenLoopPrediction>, String> {
    let rates = st.rates.rate_list()?;
    let mut run = b.ws.report_run_with_engine(&st.model, &what_if_settings(st), FitSet::All, st.engine.as_deref())?;
    let (isl, osl) = workload(b, st);
    run.scenario.workloads.retain(|w| (w.isl, w.osl) == (isl, osl));
    let q =
        sim_core::explore::OpenLoopQuery { modes: run.scenario.modes.clone(), load: st.rates.load(rates[0]), rates };
    run.open_loop(&q).map_err(|e| e.to_string())
}

/// The rate sweep's chart: median and 90th-percentile TTFT against the offered rate, per mode (rates that send
/// every request at once have no place on the axis and stay in the table only).
pub fn rate_chart(
    points: &[sim_core::model::open_loop::OpenLoopPrediction],
    title: &str,
) -> crate::charts::RateChartData {
    let mut data = crate::charts::RateChartData { title: title.to_string(), ..Default::default() };
    for p in points.iter().filter(|p| p.load.rate.is_finite()) {
        let at = match data.modes.iter().position(|(m, _)| *m == p.mode) {
            Some(i) => i,
            None => {
                data.modes.push((p.mode, Vec::new()));
                data.modes.len() - 1
            }
        };
        data.modes[at].1.push((p.load.rate, p.ttft.median_s, p.ttft.p90_s));
    }
    data
}

#[cfg(test)]
mod rate_sweep_tests {
    use super::*;

    #[test]
    fn rate_sweep_has_one_row_per_rate_and_mode_and_refuses_bad_rates() {
        let b = crate::data::load();
        let models = b.model_ids();
        let (st, w) = UrlState::parse("view=rates&model=glm-5.2&rate=0.5,2,inf&num_prompts=50", &models);
        assert!(w.is_empty(), "{w:?}");
        let modes = b.ws.scenarios["glm-5.2"].modes.clone();
        let rows = rate_sweep(&b, &st).expect("sweep");
        assert_eq!(rows.len(), 3 * modes.len());
        for (i, m) in modes.iter().enumerate() {
            let rates: Vec<f64> = rows[i * 3..i * 3 + 3].iter().map(|r| r.load.rate).collect();
            assert_eq!((rows[i * 3].mode, rates), (*m, vec![0.5, 2.0, f64::INFINITY]));
        }
        let (isl, osl) = workload(&b, &st);
        assert!(rows.iter().all(|r| (r.isl, r.osl) == (isl, osl) && r.load.prompts == 50));
        // The chart leaves out the infinite rate: two points per mode.
        let chart = rate_chart(&rows, "t");
        assert_eq!(chart.modes.len(), modes.len());
        assert!(chart.modes.iter().all(|(_, v)| v.len() == 2), "{:?}", chart.modes);
        for bad in
            ["rate=-1", "rate=1,x", "rate=1&burstiness=0", "rate=1&random_range_ratio=1.5", "rate=1&num_prompts=0"]
        {
            let (st, _) = UrlState::parse(&format!("view=rates&model=glm-5.2&{bad}"), &models);
            let e = rate_sweep(&b, &st).expect_err(bad);
            assert!(!e.is_empty(), "{bad}");
        }
    }
}

//! The page: its data fetched (a loading state, or what went wrong), then state from the URL, kept in the URL,
//! tabs, controls, the chart and the view below it.

use crate::charts::ChartSpec;
use crate::compute;
use crate::data::{self, Bundle};
use crate::fetch;
use crate::state::{UrlState, View};
use crate::views::plan::{PlanControls, PlanTables, Verdict};
use crate::views::target::TargetCard;
use crate::views::{
    accuracy::AccuracyView,
    chart::Chart,
    controls::Controls,
    explorer::ExplorerTable,
    export::Export,
    fabric::FabricTable,
    frontier::{FrontierControls, FrontierTable},
    gain::GainTable,
    rate_sweep::{RateSweepControls, RateSweepView},
};
use leptos::leptos_dom::helpers::{request_animation_frame, set_timeout};
use leptos::prelude::*;
use leptos::task::spawn_local;
use sim_core::explore::{ScenarioRun, SweepAnswer};
use sim_core::fit::FitSet;
use sim_core::model::Coefficients;
use sim_core::plan::Plan;
use sim_core::report::Report;
use sim_core::scenario::Scenario;
use std::sync::Arc;
use wasm_bindgen::JsValue;

/// Installs the panic hook and mounts the page.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(Page);
}

/// Where the page's data stands.
#[derive(Clone)]
enum Loading {
    Fetching,
    Failed(String),
    Ready(Arc<Bundle>),
}

/// Fetches the dataset and the fits at once (every first chart needs both; the bands' evidence comes later),
/// says so meanwhile, then shows the page or why there is none.
#[component]
fn Page() -> impl IntoView {
    let state = RwSignal::new(Loading::Fetching);
    let (dataset, fits) = (fetch::start(data::DATASET_FILE), fetch::start(data::FITS_FILE));
    spawn_local(async move {
        let loaded = async { data::from_files(&dataset.text().await?, &fits.text().await?) }.await;
        state.set(match loaded {
            Ok(b) => Loading::Ready(Arc::new(b)),
            Err(e) => Loading::Failed(e),
        });
    });
    move || match state.get() {
        Loading::Fetching => view! { <p class="loading" role="status">"Loading the dataset\u{2026}"</p> }.into_any(),
        Loading::Failed(e) => view! {
            <main class="dataset-errors" role="alert">
                <h1>"The page's data could not be loaded"</h1>
                <p>"Reload the page. If this persists, its data/ folder is missing or from another build: serve \
                    the whole of dist/ as one build made it (scripts/build-app.sh)."</p>
                <pre>{e}</pre>
            </main>
        }
        .into_any(),
        Loading::Ready(bundle) => view! { <App bundle=bundle /> }.into_any(),
    }
}

#[component]
fn App(bundle: Arc<Bundle>) -> impl IntoView {
    if !bundle.errors.is_empty() {
        let text = bundle.errors.join("\n\n");
        return view! {
            <main class="dataset-errors">
                <h1>"The bundled dataset has errors"</h1>
                <p>"Fix them and rebuild (`sim-core validate data/` shows the same list):"</p>
                <pre>{text}</pre>
            </main>
        }
        .into_any();
    }
    let models = bundle.model_ids();
    let query = window().location().search().unwrap_or_default();
    let (mut initial, mut warnings) = UrlState::parse_with(&query, &models, &bundle.hardware_ids());
    if let Some(w) = compute::workload_warning(&bundle, &initial) {
        warnings.push(w);
        initial.workload = None;
    }
    if let Some(w) = compute::engine_warning(&bundle, &initial) {
        warnings.push(w);
        initial.engine = None;
    }
    let embed = initial.embed;
    let st = RwSignal::new(initial);
    Effect::new(move |_| {
        let q = st.with(UrlState::to_query);
        if let Ok(h) = window().history() {
            let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&q));
        }
    });
    // Which view: the page's structure changes only when this does (not on every state change).
    let view_m = Memo::new(move |_| st.with(|s| s.view));
    // Calibration on pasted measurements: refitted only when the text or the planner's scenario changes.
    type CalInput = Option<(String, Result<(Scenario, Coefficients, String), String>)>;
    let bc = bundle.clone();
    let cal_input: Memo<CalInput> = Memo::new(move |_| {
        st.with(|s| {
            let text = s.plan.measurements.trim();
            (!text.is_empty())
                .then(|| (text.to_string(), compute::plan_run(&bc, s).map(|r| (r.scenario, r.coefficients, r.engine))))
        })
    });
    let bk = bundle.clone();
    let calibration: Memo<Option<Result<compute::Calibrated, String>>> = Memo::new(move |_| {
        cal_input.with(|i| {
            i.as_ref().map(|(text, run)| match run {
                Ok((scenario, coefficients, engine)) => {
                    let run = ScenarioRun {
                        file: None,
                        scenario: scenario.clone(),
                        coefficients: coefficients.clone(),
                        engine: engine.clone(),
                    };
                    compute::calibrate(&bk, &run, text)
                }
                Err(e) => Err(format!("no scenario to calibrate: {e}")),
            })
        })
    });
    let bp = bundle.clone();
    // Plan is not PartialEq: every recomputation counts as a change (it only runs when the state changes).
    let plan: Memo<Result<Plan, String>> = Memo::new_with_compare(
        move |_| {
            let k = calibration.with(|c| c.as_ref().and_then(|r| r.as_ref().ok()).map(|c| c.coefficients.clone()));
            st.with(|s| compute::plan_with(&bp, s, k.as_ref()))
        },
        |_, _| true,
    );
    // The first chart draws before anything it does not need: the bands' evidence (the planner's target card
    // only) is fetched and adopted once the planner has drawn, and the answer at the target waits for it.
    let first_drawn = RwSignal::new(false);
    let evidence: RwSignal<Option<Result<(), String>>> = RwSignal::new(None);
    let evidence_asked = StoredValue::new(false);
    let be = bundle.clone();
    Effect::new(move |_| {
        if view_m.get() == View::Plan && first_drawn.get() && !embed && !evidence_asked.get_value() {
            evidence_asked.set_value(true);
            let (b, pending) = (be.clone(), fetch::start(data::EVIDENCE_FILE));
            spawn_local(async move {
                let adopted = match pending.text().await {
                    Ok(text) => b.adopt_evidence(&text),
                    Err(e) => Err(e),
                };
                evidence.set(Some(adopted));
            });
        }
    });
    let bg = bundle.clone();
    // The answer at the planner's latency target, only while the planner is open (`Some(None)`: waiting for the
    // bands' evidence).
    let target: Memo<Option<Option<Result<compute::TargetAnswer, String>>>> = Memo::new_with_compare(
        move |_| {
            (view_m.get() == View::Plan).then(|| {
                evidence.get().map(|adopted| {
                    adopted.map_err(|e| format!("the bands' evidence could not be loaded: {e}"))?;
                    let k =
                        calibration.with(|c| c.as_ref().and_then(|r| r.as_ref().ok()).map(|c| c.coefficients.clone()));
                    st.with(|s| compute::plan_goodput(&bg, s, k.as_ref()))
                })
            })
        },
        |_, _| true,
    );
    let chart_shown = Memo::new(move |_| !matches!(view_m.get(), View::Accuracy | View::RateSweep));
    // The single-station report is built the first time the accuracy view opens, after the page has drawn
    // its "computing" state, so start-up does not pay for a second fit.
    let single: RwSignal<Option<Arc<Report>>> = RwSignal::new(None);
    let started = StoredValue::new(false);
    let bs = bundle.clone();
    Effect::new(move |_| {
        if view_m.get() == View::Accuracy && !started.get_value() {
            started.set_value(true);
            let b = bs.clone();
            request_animation_frame(move || {
                set_timeout(
                    move || single.set(Some(Arc::new(b.ws.accuracy(FitSet::Single).clone()))),
                    std::time::Duration::from_millis(0),
                )
            });
        }
    });
    // One answer per question, shared by the chart and the table under it.
    let bw = bundle.clone();
    let sweep: Memo<Result<SweepAnswer, String>> = Memo::new(move |_| st.with(|s| compute::sweep_answer(&bw, s)));
    let spec = chart_spec(bundle.clone(), st, plan, sweep);
    let rows = Memo::new(move |_| {
        if view_m.get() != View::Explorer {
            return (Vec::new(), Vec::new());
        }
        sweep.with(|a| a.as_ref().map(|a| (a.points.clone(), a.stated.clone())).unwrap_or_default())
    });
    let model = Signal::derive(move || st.with(|s| s.model.clone()));
    let warning = (!warnings.is_empty()).then(|| {
        view! {
            <div class="url-warning" role="alert">
                <strong>"Some link parameters were not understood; defaults are shown instead:"</strong>
                <ul>{warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
            </div>
        }
    });
    if embed {
        return view! {
            <div class="embed-root">
                {warning}
                <Chart spec=spec model=model embed=true rows=rows first_drawn=first_drawn />
            </div>
        }
        .into_any();
    }
    let b = bundle.clone();
    let b2 = bundle.clone();
    view! {
        <header>
            <h1>"twotower: what does a second GPU workstation buy?"</h1>
            <p class="sub">"Published LLM inference throughput on one and two GB300 stations, against the sim-core model (fitted on all unflagged published points)."</p>
        </header>
        {warning}
        <nav class="tabs" role="tablist">
            {View::ALL
                .into_iter()
                .map(|v| {
                    view! {
                        <button role="tab" class="tab" data-view=v.name()
                            aria-selected=move || (st.with(|s| s.view) == v).to_string()
                            on:click=move |_| st.update(|s| s.view = v)>{v.label()}</button>
                    }
                })
                .collect_view()}
        </nav>
        <div class="layout">
            <aside>{move || match view_m.get() {
                View::Plan => view! { <PlanControls bundle=b2.clone() st=st plan=plan calibration=calibration /> }.into_any(),
                View::Accuracy => view! { <AccuracyAside /> }.into_any(),
                View::Frontier | View::Compare => view! {
                    <FrontierControls bundle=b2.clone() st=st />
                    <Controls bundle=b2.clone() st=st />
                }.into_any(),
                View::RateSweep => view! {
                    <RateSweepControls st=st />
                    <Controls bundle=b2.clone() st=st />
                }.into_any(),
                _ => view! { <Controls bundle=b2.clone() st=st /> }.into_any(),
            }}</aside>
            <section class="main">
                {move || (view_m.get() == View::Plan).then(|| view! {
                    <TargetCard answer=target />
                    <Verdict plan=plan calibration=calibration />
                })}
                <div class:hidden=move || !chart_shown.get()>
                    <Chart spec=spec model=model embed=false rows=rows visible=chart_shown first_drawn=first_drawn />
                    <Export spec=spec st=st bundle=bundle.clone() />
                </div>
                {move || match view_m.get() {
                    View::Explorer => view! { <ExplorerTable sweep=sweep spec=spec /> }.into_any(),
                    View::Frontier | View::Compare => view! { <FrontierTable spec=spec /> }.into_any(),
                    View::Gain => view! { <GainTable spec=spec bundle=b.clone() st=st /> }.into_any(),
                    View::Fabric => view! { <FabricTable rows=b.ws.fabric(&[]).map(|a| a.rows).unwrap_or_default() /> }.into_any(),
                    View::Plan => view! { <PlanTables plan=plan /> }.into_any(),
                    View::Accuracy => view! { <AccuracyView bundle=b.clone() single=single /> }.into_any(),
                    View::RateSweep => view! { <RateSweepView bundle=b.clone() st=st /> }.into_any(),
                }}
            </section>
        </div>
    }
    .into_any()
}

/// Beside the accuracy tables: what they are and how to reproduce them.
#[component]
fn AccuracyAside() -> impl IntoView {
    view! {
        <div class="controls accuracy-aside">
            <h2>"How good is the model?"</h2>
            <p class="hint">"Every number here comes from the same fit the other views draw with (all unflagged points), "
                "and from a second fit on single-station points only, which predicts the pair it never saw."</p>
            <p class="hint">"Reproduce: " <code>"sim-core report data/"</code> " and " <code>"sim-core report data/ --fit single"</code> "."</p>
        </div>
    }
}

/// The chart of the current view, recomputed only when its inputs change.
fn chart_spec(
    b: Arc<Bundle>,
    st: RwSignal<UrlState>,
    plan: Memo<Result<Plan, String>>,
    answer: Memo<Result<SweepAnswer, String>>,
) -> Memo<ChartSpec> {
    let (b2, b3, b4, b5) = (b.clone(), b.clone(), b.clone(), b);
    let sweep = Memo::new(move |_| {
        answer.with(|a| match a {
            Ok(a) => crate::charts::SweepChartData {
                latencies: st.with(|s| compute::point_latencies(&b5, s)),
                ..compute::sweep_chart(a)
            },
            Err(e) => crate::charts::SweepChartData { title: e.clone(), ..Default::default() },
        })
    });
    let gain = Memo::new(move |_| st.with(|s| compute::gain(&b2, s)));
    let fabric = Memo::new(move |_| st.with(|s| compute::fabric(&b3, s)));
    let frontier = Memo::new(move |_| {
        st.with(|s| matches!(s.view, View::Frontier | View::Compare).then(|| crate::frontier::chart(&b4, s)))
    });
    let planned = Memo::new(move |_| {
        let name = st.with(|s| s.plan.hardware.clone());
        plan.with(|p| compute::plan_chart(p, &name))
    });
    Memo::new(move |_| match st.with(|s| s.view) {
        // The accuracy view hides the chart; keep the throughput chart so nothing is computed for it.
        View::Explorer | View::Accuracy => ChartSpec::Sweep(sweep.get()),
        View::Frontier | View::Compare => ChartSpec::Frontier(frontier.get().unwrap_or_default()),
        View::Gain => ChartSpec::Gain(gain.get()),
        View::Fabric => ChartSpec::Fabric(fabric.get()),
        View::Plan => ChartSpec::Plan(planned.get()),
        // The rate sweep draws its own chart and hides this one, as the accuracy view does.
        View::RateSweep => ChartSpec::Sweep(sweep.get()),
    })
}

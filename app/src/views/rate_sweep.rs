//! The rate sweep view: `vllm bench serve`'s open loop at each request rate (its inputs beside the chart), and
//! per rate and mode what sim-core predicts the benchmark prints, with the median and p90 TTFT drawn.

use crate::charts::{draw_rate_sweep, fmt_sig};
use crate::compute;
use crate::data::Bundle;
use crate::state::UrlState;
use leptos::prelude::*;
use plotters::prelude::{IntoDrawingArea, SVGBackend};
use sim_core::model::latency::LatencyStats;
use sim_core::model::open_loop::OpenLoopPrediction;
use std::sync::Arc;

/// The open load's inputs; every change goes into the URL state.
#[component]
pub fn RateSweepControls(st: RwSignal<UrlState>) -> impl IntoView {
    let num = |ev: &leptos::ev::Event| event_target_value(ev).trim().parse::<f64>().ok();
    view! {
        <div class="controls rate-controls">
            <h2>"Open loop"</h2>
            <p class="hint">"As " <code>"vllm bench serve --request-rate"</code> " sends it: requests at each rate, Gamma gaps."</p>
            <label for="rs-rate">"Request rates (requests/s, comma-separated, or inf)"</label>
            <input type="text" id="rs-rate" prop:value=move || st.with(|s| s.rates.rates.clone())
                on:change=move |ev| st.update(|s| s.rates.rates = event_target_value(&ev)) />
            <label for="rs-burstiness">"Burstiness (1: Poisson, below 1 burstier)"</label>
            <input type="number" id="rs-burstiness" step="any" prop:value=move || st.with(|s| s.rates.burstiness.to_string())
                on:change=move |ev| { if let Some(v) = num(&ev) { st.update(|s| s.rates.burstiness = v) } } />
            <label for="rs-maxc">"Max concurrency (empty: no cap)"</label>
            <input type="number" id="rs-maxc" min="1" step="1"
                prop:value=move || st.with(|s| s.rates.max_concurrency.map(|c| c.to_string()).unwrap_or_default())
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    st.update(|s| s.rates.max_concurrency = v.trim().parse::<u32>().ok());
                } />
            <label for="rs-prompts">"Requests per rate (num prompts)"</label>
            <input type="number" id="rs-prompts" min="1" step="1" prop:value=move || st.with(|s| s.rates.prompts.to_string())
                on:change=move |ev| { if let Ok(v) = event_target_value(&ev).trim().parse::<u32>() { st.update(|s| s.rates.prompts = v) } } />
            <label for="rs-ratio">"Random range ratio (0: the stated lengths)"</label>
            <input type="number" id="rs-ratio" min="0" max="0.99" step="any" prop:value=move || st.with(|s| s.rates.range_ratio.to_string())
                on:change=move |ev| { if let Some(v) = num(&ev) { st.update(|s| s.rates.range_ratio = v) } } />
            <label for="rs-seed">"Seed"</label>
            <input type="number" id="rs-seed" min="0" step="1" prop:value=move || st.with(|s| s.rates.seed.to_string())
                on:change=move |ev| { if let Ok(v) = event_target_value(&ev).trim().parse::<u64>() { st.update(|s| s.rates.seed = v) } } />
            <p class="hint">"Reproduce: " <code>"sim-core predict <scenario> --rate ... --burstiness ... --num-prompts ..."</code></p>
        </div>
    }
}

/// The answer: a refusal, or the chart and the table of every rate and mode.
#[component]
pub fn RateSweepView(bundle: Arc<Bundle>, st: RwSignal<UrlState>) -> impl IntoView {
    let b = bundle.clone();
    let answer = Memo::new(move |_| st.with(|s| compute::rate_sweep(&b, s)));
    let title = Memo::new(move |_| {
        st.with(|s| {
            let (isl, osl) = compute::workload(&bundle, s);
            format!("{}, ISL {isl} / OSL {osl}: TTFT against offered rate", s.model)
        })
    });
    move || match answer.get() {
        Err(e) => view! { <p class="inline-error" id="rate-refusal" role="alert">{e}</p> }.into_any(),
        Ok(points) => {
            let svg = chart_svg(&compute::rate_chart(&points, &title.get()));
            view! {
                <div class="rate-chart" role="img" aria-label=format!("{} (values in the table below)", title.get())
                    aria-describedby="rate-table" inner_html=svg></div>
                <RateTable points=points />
            }
            .into_any()
        }
    }
}

/// The chart as SVG markup (plotters' SVG backend: attributes only, no inline style, so the page's policy holds),
/// drawn through the page's one backend type so the chart's code is compiled once.
fn chart_svg(data: &crate::charts::RateChartData) -> String {
    let mut svg = String::new();
    {
        let root = super::backend::Either::Svg(SVGBackend::with_string(&mut svg, (720, 420))).into_drawing_area();
        if let Err(e) = draw_rate_sweep(root, data) {
            return format!("<p>chart not drawn: {e}</p>");
        }
    }
    svg
}

/// Mean, median, p90 and p99 of one latency, in milliseconds.
fn stats_cells(s: &LatencyStats) -> impl IntoView {
    [s.mean_s, s.median_s, s.p90_s, s.p99_s].map(|v| view! { <td class="num">{fmt_sig(v * 1e3)}</td> }).collect_view()
}

#[component]
fn RateTable(points: Vec<OpenLoopPrediction>) -> impl IntoView {
    let groups = ["TTFT, ms", "TPOT, ms", "ITL, ms", "end-to-end, ms"];
    view! {
        <table class="points" id="rate-table">
            <caption>"Predicted open loop per rate and mode (what vllm bench serve prints)"</caption>
            <thead>
                <tr>
                    <th rowspan="2">"mode"</th><th rowspan="2">"offered req/s"</th><th rowspan="2">"achieved req/s"</th>
                    <th rowspan="2">"output tok/s"</th><th rowspan="2">"peak concurrency"</th>
                    {groups.map(|g| view! { <th colspan="4">{g}</th> }).collect_view()}
                </tr>
                <tr>{groups.map(|_| view! { <th>"mean"</th><th>"median"</th><th>"p90"</th><th>"p99"</th> }).collect_view()}</tr>
            </thead>
            <tbody>
                {points.iter().map(|p| view! {
                    <tr class="rate-row">
                        <td>{p.mode.name()}</td>
                        <td class="num">{if p.load.rate.is_finite() { fmt_sig(p.load.rate) } else { "inf".into() }}</td>
                        <td class="num">{fmt_sig(p.achieved_rate)}</td>
                        <td class="num">{fmt_sig(p.output_tok_s)}</td>
                        <td class="num">{fmt_sig(p.peak_concurrency)}</td>
                        {stats_cells(&p.ttft)}{stats_cells(&p.tpot)}{stats_cells(&p.itl)}{stats_cells(&p.e2e)}
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

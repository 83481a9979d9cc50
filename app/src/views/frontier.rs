//! The frontier and compare views' own controls (x axis, frontier only, the headline's tok/s per user, the
//! other side of a comparison) and, under the chart, the headline and the table of every point drawn.

use crate::charts::ChartSpec;
use crate::data::Bundle;
use crate::frontier;
use crate::state::{UrlState, View, AT_RANGE, VS_PLAN};
use leptos::prelude::*;
use sim_core::explore::XAxis;
use std::sync::Arc;

#[component]
pub fn FrontierControls(bundle: Arc<Bundle>, st: RwSignal<UrlState>) -> impl IntoView {
    let models = bundle.model_ids();
    let b = bundle.clone();
    let compare = move || st.with(|s| s.view == View::Compare);
    view! {
        <div class="controls frontier-controls">
            <h2>"Frontier"</h2>
            <label for="x-axis">"x axis"</label>
            <select id="x-axis" on:change=move |ev| {
                if let Some(a) = XAxis::parse(&event_target_value(&ev)) {
                    st.update(|s| s.frontier.axis = a);
                }
            }>
                {XAxis::ALL.into_iter().map(|a| view! {
                    <option value=a.name() prop:selected=move || st.with(|s| s.frontier.axis == a)>{a.label()}</option>
                }).collect_view()}
            </select>
            <label class="check" for="frontier-only">
                <input type="checkbox" id="frontier-only"
                    prop:checked=move || st.with(|s| s.frontier.only)
                    on:change=move |ev| st.update(|s| s.frontier.only = event_target_checked(&ev)) />
                " Pareto frontier only"
            </label>
            <label for="at">"Headline at (output tok/s per user)"</label>
            <input type="number" id="at" min=AT_RANGE.0 max=AT_RANGE.1 step="any"
                placeholder="mid-range"
                prop:value=move || st.with(|s| s.frontier.at.map(|x| x.to_string()).unwrap_or_default())
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    let at = v.trim().parse::<f64>().ok().filter(|x| *x >= AT_RANGE.0 && *x <= AT_RANGE.1);
                    st.update(|s| s.frontier.at = at);
                } />
            {move || compare().then(|| {
                let models = models.clone();
                let b = b.clone();
                view! {
                    <label for="vs">"Compare against"</label>
                    <select id="vs" on:change=move |ev| {
                        let v = event_target_value(&ev);
                        st.update(|s| s.frontier.vs = Some(v));
                    }>
                        <option value=VS_PLAN prop:selected={
                            let b = b.clone();
                            move || st.with(|s| frontier::other(&b, s) == VS_PLAN)
                        }>
                            "the planner's model and hardware"</option>
                        {models.into_iter().map(|m| {
                            let (m2, label) = (m.clone(), m.clone());
                            let b = b.clone();
                            view! { <option value=m prop:selected=move || st.with(|s| frontier::other(&b, s) == m2)>{label}</option> }
                        }).collect_view()}
                    </select>
                    <p class="hint">"The planner's tab sets its hardware and model; what-if values apply to the first side only."</p>
                }
            })}
        </div>
    }
}

/// The headline, the notes and the table of every point the frontier chart draws (markup from
/// `frontier::table_html`).
#[component]
pub fn FrontierTable(spec: Memo<ChartSpec>) -> impl IntoView {
    let html =
        move || spec.with(|s| if let ChartSpec::Frontier(d) = s { frontier::table_html(d) } else { String::new() });
    view! { <div class="frontier-below" inner_html=html></div> }
}

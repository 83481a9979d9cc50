//! Model and workload pickers and the what-if sliders; every change goes into the URL state.

use crate::compute;
use crate::data::Bundle;
use crate::state::{UrlState, KNOBS, WORKLOADS};
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn Controls(bundle: Arc<Bundle>, st: RwSignal<UrlState>) -> impl IntoView {
    let models = bundle.model_ids();
    let b = bundle.clone();
    let base = Memo::new(move |_| st.with(|s| compute::baseline(&b, &s.model)));
    let knobs = KNOBS.iter().enumerate().map(|(i, kn)| {
        let id = format!("knob-{}", kn.key);
        let value = move || st.with(|s| s.whatif[i]).unwrap_or_else(|| base.get()[i]);
        view! {
            <div class="knob">
                <label for=id.clone()>{kn.label}" (" {kn.unit} ")"</label>
                <div class="knob-row">
                    <input type="range" id=id name=kn.key min=kn.min max=kn.max step=kn.step
                        prop:value=move || value().to_string()
                        on:input=move |ev| {
                            if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                                st.update(|s| s.whatif[i] = Some(v));
                            }
                        } />
                    <output class:changed=move || st.with(|s| s.whatif[i].is_some())>{move || if kn.step < 1.0 { format!("{:.1}", value()) } else { format!("{:.0}", value()) }}</output>
                </div>
            </div>
        }
    });
    view! {
        <div class="controls">
            <label for="model">"Model"</label>
            <select id="model" on:change=move |ev| st.update(|s| s.model = event_target_value(&ev))>
                {models
                    .into_iter()
                    .map(|m| {
                        let (m2, label) = (m.clone(), m.clone());
                        view! { <option value=m prop:selected=move || st.with(|s| s.model == m2)>{label}</option> }
                    })
                    .collect_view()}
            </select>
            <label for="workload">"Workload (input / output tokens)"</label>
            <select id="workload" on:change=move |ev| {
                if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                    st.update(|s| s.workload = i.min(WORKLOADS.len() - 1));
                }
            }>
                {WORKLOADS
                    .iter()
                    .enumerate()
                    .map(|(i, (isl, osl))| {
                        view! { <option value=i.to_string() prop:selected=move || st.with(|s| s.workload == i)>{format!("{isl} / {osl}")}</option> }
                    })
                    .collect_view()}
            </select>
            <h2>"What if the hardware were different?"</h2>
            <p class="hint">"Moves the predicted curves; the published points stay where they were measured."</p>
            {knobs.collect_view()}
            <button id="reset" on:click=move |_| st.update(|s| s.whatif = [None; 5])>"Reset to the dataset's values"</button>
        </div>
    }
}

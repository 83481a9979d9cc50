//! Model, workload and engine profile pickers and the what-if sliders; every change goes into the URL state.

use crate::compute;
use crate::data::Bundle;
use crate::state::{UrlState, KNOBS, KNOB_COUNT};
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn Controls(bundle: Arc<Bundle>, st: RwSignal<UrlState>) -> impl IntoView {
    let models = bundle.model_ids();
    let b = bundle.clone();
    let bw = bundle.clone();
    let bm = bundle.clone();
    let base = Memo::new(move |_| st.with(|s| compute::baseline(&b, &s.model, s.engine.as_deref())));
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
    let be = bundle.clone();
    view! {
        <div class="controls">
            <label for="model">"Model"</label>
            <select id="model" on:change=move |ev| {
                let model = event_target_value(&ev);
                // Keep the workload when the new model has it; otherwise show the new model's first.
                let has = |w: &Option<(u32, u32)>| w.is_some_and(|w| compute::workloads(&bm, &model).contains(&w));
                st.update(|s| {
                    if !has(&s.workload) {
                        s.workload = None;
                    }
                    s.model = model.clone();
                });
            }>
                {models
                    .into_iter()
                    .map(|m| {
                        let (m2, label) = (m.clone(), m.clone());
                        view! { <option value=m prop:selected=move || st.with(|s| s.model == m2)>{label}</option> }
                    })
                    .collect_view()}
            </select>
            <label for="workload">"Workload (input / output tokens)"</label>
            {move || {
                // The model's own workloads: options are indexes into this list.
                let list = st.with(|s| compute::workloads(&bw, &s.model));
                let current = st.with(|s| compute::workload(&bw, s));
                let pick = list.clone();
                view! {
                    <select id="workload" on:change=move |ev| {
                        if let Some(w) = event_target_value(&ev).parse::<usize>().ok().and_then(|i| pick.get(i).copied()) {
                            st.update(|s| s.workload = Some(w));
                        }
                    }>
                        {list
                            .into_iter()
                            .enumerate()
                            .map(|(i, (isl, osl))| {
                                view! { <option value=i.to_string() selected=(isl, osl) == current>{format!("{isl} / {osl}")}</option> }
                            })
                            .collect_view()}
                    </select>
                }
            }}
            <EnginePicker bundle=be st=st />
            <h2>"What if the hardware were different?"</h2>
            <p class="hint">"Moves the predicted curves; the published points stay where they were measured."</p>
            {knobs.collect_view()}
            <button id="reset" on:click=move |_| st.update(|s| s.whatif = [None; KNOB_COUNT])>"Reset to the dataset's values"</button>
        </div>
    }
}

/// The engine profile picker: every profile of the dataset (id and name; how it was obtained as the tooltip),
/// showing the view's own profile until another is chosen. Picking the own profile again clears the choice, so
/// the link stays the default and follows the model (or the planner's hardware) as before.
#[component]
pub fn EnginePicker(bundle: Arc<Bundle>, st: RwSignal<UrlState>) -> impl IntoView {
    let choices = compute::engine_choices(&bundle);
    let b = bundle.clone();
    let own = Memo::new(move |_| st.with(|s| compute::own_engine(&b, s)));
    let current = Memo::new(move |_| st.with(|s| s.engine.clone()).unwrap_or_else(|| own.get()));
    let how = choices.clone();
    let title =
        move || current.with(|c| how.iter().find(|e| e.id == *c).map(|e| e.obtained.clone()).unwrap_or_default());
    view! {
        <label for="engine">"Engine profile"</label>
        <select id="engine" title=title on:change=move |ev| {
            let v = event_target_value(&ev);
            let own = own.get_untracked();
            st.update(|s| s.engine = (v != own).then_some(v));
        }>
            {choices
                .into_iter()
                .map(|c| {
                    let id = c.id.clone();
                    let label = format!("{} ({})", c.id, c.name);
                    view! { <option value=c.id title=c.obtained prop:selected=move || current.with(|e| *e == id)>{label}</option> }
                })
                .collect_view()}
        </select>
    }
}

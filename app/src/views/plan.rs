//! The planner: hardware preset and its key fields, the model (a report model, a description, or a pasted
//! config.json), the workload; the verdict, the per-concurrency table and where the weights live.

use crate::compute::{self, Calibrated};
use crate::data::Bundle;
use crate::state::{pf, ModelSource, UrlState, BITS, PLAN_FIELDS};
use crate::views::controls::EnginePicker;
use leptos::prelude::*;
use sim_core::explore::LatencyStatistic;
use sim_core::model::bandwidth::Placement;
use sim_core::plan::Plan;
use sim_core::Mode;
use std::sync::Arc;

/// What a mode means for someone deciding whether to buy the second machine.
pub fn mode_sentence(m: Mode) -> &'static str {
    match m {
        Mode::Single => "Stay on one machine",
        Mode::Tp2 => "Buy the second machine and run both as one engine (TP2)",
        Mode::Pd => "Buy the second machine and split prefill from decode (PD)",
        Mode::Dp2 => "Buy the second machine and run two independent copies behind a router",
        Mode::Pp2 => "Buy the second machine and put half of the layers on each (PP2)",
        Mode::Ep2 => "Buy the second machine and split the experts across both (EP2)",
        Mode::Dpep2 => "Buy the second machine, give each its own requests and split the experts (DP+EP)",
        Mode::Tp4 => "Buy three more machines and run all four as one engine (TP4)",
        Mode::Pp4 => "Buy three more machines and put a quarter of the layers on each (PP4)",
        Mode::Dp4 => "Buy three more machines and run four independent copies behind a router",
    }
}

/// One numeric input of the planner form; hardware fields show the preset's value until changed.
fn number_field(st: RwSignal<UrlState>, i: usize, base: Memo<[f64; 6]>) -> impl IntoView {
    let fl = PLAN_FIELDS[i];
    let id = format!("plan-{}", fl.key);
    let value = move || {
        let v = st.with(|s| s.plan.values[i]);
        let v = v.unwrap_or_else(|| if pf::HARDWARE.contains(&i) { base.get()[i] } else { fl.default });
        crate::state::trim(v)
    };
    let unit = if fl.unit.is_empty() { String::new() } else { format!(" ({})", fl.unit) };
    view! {
        <div class="field">
            <label for=id.clone()>{fl.label}{unit}</label>
            <input type="number" id=id name=fl.key min=fl.min max=fl.max step=fl.step
                class:changed=move || pf::HARDWARE.contains(&i) && st.with(|s| s.plan.values[i].is_some())
                prop:value=value
                on:change=move |ev| {
                    if let Ok(v) = event_target_value(&ev).trim().parse::<f64>() {
                        if v.is_finite() {
                            st.update(|s| s.plan.values[i] = Some(v.clamp(fl.min, fl.max)));
                        }
                    }
                } />
        </div>
    }
}

/// What the calibration box says about the pasted measurements: how the fit went, or what is wrong.
fn calibration_status(calibration: Memo<Option<Result<Calibrated, String>>>) -> impl IntoView {
    move || match calibration.get() {
        None => None,
        Some(Ok(c)) => {
            // ISL/OSL at 1, 8, 32 streams; one group per workload.
            let mut by: std::collections::BTreeMap<(u32, u32), Vec<u32>> = Default::default();
            for p in &c.points {
                by.entry((p.isl, p.osl)).or_default().push(p.concurrency);
            }
            let at = by
                .into_iter()
                .map(|((i, o), mut n)| {
                    n.sort_unstable();
                    let n = n.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
                    format!("{i}/{o} at {n} streams")
                })
                .collect::<Vec<_>>()
                .join("; ");
            let few = (c.points.len() < 3).then_some(
                " With fewer than 3 points the fit can match them exactly, which says little: measure several concurrencies.",
            );
            let poor = (c.stats.median_ape > 25.0).then(|| {
                format!(
                    " Even calibrated, the model misses your runs by {:.0}% (median): your setup differs from what it describes (other software, settings or hardware), so read the plan as a rough guide.",
                    c.stats.median_ape
                )
            });
            Some(
                view! {
                    <p class="calibration-ok" id="plan-calibration" role="status">
                        <strong>{format!("Calibrated on {} point{}", c.points.len(), if c.points.len() == 1 { "" } else { "s" })}</strong>
                        {format!(" ({at}): median error {:.1}%, 90th percentile {:.1}%. The plan uses the calibrated coefficients.", c.stats.median_ape, c.stats.p90_ape)}
                        {few}
                        {poor}
                    </p>
                }
                .into_any(),
            )
        }
        Some(Err(e)) => Some(
            view! {
                <div class="inline-error" id="plan-meas-error" role="alert">
                    <pre>{e}</pre>
                    "The plan uses the published fit until this is fixed."
                </div>
            }
            .into_any(),
        ),
    }
}

#[component]
pub fn PlanControls(
    bundle: Arc<Bundle>,
    st: RwSignal<UrlState>,
    plan: Memo<Result<Plan, String>>,
    calibration: Memo<Option<Result<Calibrated, String>>>,
) -> impl IntoView {
    let b = bundle.clone();
    let base = Memo::new(move |_| st.with(|s| compute::hardware_baseline(&b, &s.plan.hardware)));
    let be = bundle.clone();
    let presets: Vec<(String, String)> = bundle.hardware.iter().map(|(id, h)| (id.clone(), h.name.clone())).collect();
    let models = bundle.model_ids();
    let source = move || st.with(|s| s.plan.source);
    // The pasted texts can be megabytes: write them back into their boxes only when they change, not on every
    // change of the page's state.
    let hf_text = Memo::new(move |_| st.with(|s| s.plan.hf.clone()));
    let meas_text = Memo::new(move |_| st.with(|s| s.plan.measurements.clone()));
    let fields = move |r: std::ops::Range<usize>| r.map(|i| number_field(st, i, base)).collect_view();
    let hf_error = move || match (source(), plan.get()) {
        (ModelSource::HfConfig, Err(e)) => {
            Some(view! { <p class="inline-error" id="plan-hf-error" role="alert">{e}</p> })
        }
        _ => None,
    };
    view! {
        <div class="controls plan-controls">
            <h2>"Hardware (one machine)"</h2>
            <label for="plan-hw">"Preset"</label>
            <select id="plan-hw" on:change=move |ev| st.update(|s| {
                s.plan.hardware = event_target_value(&ev);
                for i in pf::HARDWARE { s.plan.values[i] = None; }
            })>
                {presets.into_iter().map(|(id, name)| {
                    let id2 = id.clone();
                    view! { <option value=id prop:selected=move || st.with(|s| s.plan.hardware == id2)>{name}</option> }
                }).collect_view()}
            </select>
            {fields(pf::HARDWARE)}
            <button id="plan-reset-hw" on:click=move |_| st.update(|s| for i in pf::HARDWARE { s.plan.values[i] = None; })>"Reset to the preset's values"</button>
            <label for="plan-machines">"Machines to buy up to"</label>
            <select id="plan-machines" on:change=move |ev| {
                if let Ok(m) = event_target_value(&ev).parse::<u32>() { st.update(|s| s.plan.machines = m); }
            }>
                {sim_core::explore::plan_request::PLAN_MACHINES.into_iter().map(|m| {
                    let label = if m == 2 { "2: one against a pair" } else { "4: what a 3rd and 4th add" };
                    view! { <option value=m.to_string() prop:selected=move || st.with(|s| s.plan.machines == m)>{label}</option> }
                }).collect_view()}
            </select>
            <EnginePicker bundle=be st=st />

            <h2>"Model"</h2>
            <label for="plan-src">"Source"</label>
            <select id="plan-src" on:change=move |ev| {
                let v = event_target_value(&ev);
                if let Some(m) = ModelSource::ALL.into_iter().find(|m| m.name() == v) { st.update(|s| s.plan.source = m); }
            }>
                {ModelSource::ALL.into_iter().map(|m| view! {
                    <option value=m.name() prop:selected=move || source() == m>{m.label()}</option>
                }).collect_view()}
            </select>
            <div class="field" class:hidden=move || source() != ModelSource::Report>
                <label for="plan-model">"Model of the report"</label>
                <select id="plan-model" on:change=move |ev| st.update(|s| s.model = event_target_value(&ev))>
                    {models.into_iter().map(|m| {
                        let (m2, label) = (m.clone(), m.clone());
                        view! { <option value=m prop:selected=move || st.with(|s| s.model == m2)>{label}</option> }
                    }).collect_view()}
                </select>
            </div>
            <div class="field" class:hidden=move || source() == ModelSource::Report>
                <label for="plan-bits">"Bits per weight"</label>
                <select id="plan-bits" on:change=move |ev| {
                    if let Ok(b) = event_target_value(&ev).parse::<f64>() { st.update(|s| s.plan.bits = b); }
                }>
                    {BITS.iter().map(|(b, label)| {
                        let b = *b;
                        view! { <option value=b.to_string() prop:selected=move || st.with(|s| s.plan.bits == b)>{*label}</option> }
                    }).collect_view()}
                </select>
                // NVFP4 checkpoints quantise the routed experts only: attention, shared experts and the LM head
                // stay FP8 or BF16, with their bytes and their slower tensor rate.
                <label for="plan-dense-bits">"Bits of the other layers"</label>
                <select id="plan-dense-bits" on:change=move |ev| {
                    let b = event_target_value(&ev).parse::<f64>().ok();
                    st.update(|s| s.plan.dense_bits = b);
                }>
                    <option value="same" prop:selected=move || st.with(|s| s.plan.dense_bits.is_none())>"as the experts"</option>
                    {BITS.iter().map(|(b, label)| {
                        let b = *b;
                        view! { <option value=b.to_string() prop:selected=move || st.with(|s| s.plan.dense_bits == Some(b))>{*label}</option> }
                    }).collect_view()}
                </select>
            </div>
            <div class="model-form" class:hidden=move || source() != ModelSource::Form>
                {fields(pf::TOTAL..pf::KV_HEADS)}
                <label for="plan-attn">"Attention"</label>
                <select id="plan-attn" on:change=move |ev| st.update(|s| s.plan.attention = event_target_value(&ev))>
                    <option value="mla" prop:selected=move || st.with(|s| s.plan.attention == "mla")>"MLA (latent KV)"</option>
                    <option value="gqa" prop:selected=move || st.with(|s| s.plan.attention == "gqa")>"GQA"</option>
                </select>
                <div class:hidden=move || st.with(|s| s.plan.attention != "gqa")>{fields(pf::KV_HEADS..pf::KV_LORA)}</div>
                <div class:hidden=move || st.with(|s| s.plan.attention != "mla")>{fields(pf::KV_LORA..pf::EXPERTS)}</div>
                {fields(pf::EXPERTS..pf::ACCEPT + 1)}
            </div>
            <div class="field" class:hidden=move || source() != ModelSource::HfConfig>
                <label for="plan-hf">"Hugging Face config.json"</label>
                <textarea id="plan-hf" rows="8" spellcheck="false" placeholder="{\"num_hidden_layers\": 61, \"hidden_size\": 7168, ...}"
                    prop:value=hf_text
                    on:input=move |ev| st.update(|s| s.plan.hf = event_target_value(&ev))></textarea>
                {hf_error}
            </div>

            <h2>"Workload"</h2>
            <label for="plan-preset">"Preset"</label>
            <select id="plan-preset" on:change=move |ev| {
                let id = event_target_value(&ev);
                if let Ok(w) = sim_core::explore::workloads::workload_preset(&id) {
                    st.update(|s| {
                        s.plan.values[pf::ISL] = Some(f64::from(w.isl));
                        s.plan.values[pf::OSL] = Some(f64::from(w.osl));
                    });
                }
            }>
                <option value="">"your own ISL/OSL"</option>
                {sim_core::explore::workloads::WORKLOAD_PRESETS.iter().map(|w| {
                    let (isl, osl) = (f64::from(w.isl), f64::from(w.osl));
                    let chosen = move || st.with(|s| s.plan.value(pf::ISL) == isl && s.plan.value(pf::OSL) == osl);
                    view! { <option value=w.id title=w.source prop:selected=chosen>{format!("{} ({}/{})", w.label, w.isl, w.osl)}</option> }
                }).collect_view()}
            </select>
            {fields(pf::ISL..pf::TOTAL)}

            <h2>"Latency target and cost"</h2>
            <label for="plan-slo-stat">"The target holds for"</label>
            <select id="plan-slo-stat" on:change=move |ev| {
                let v = event_target_value(&ev);
                st.update(|s| s.plan.slo_stat = LatencyStatistic::from_name(&v).unwrap_or(LatencyStatistic::Mean))
            }>
                {LatencyStatistic::ALL.into_iter().map(|x| {
                    let label = match x {
                        LatencyStatistic::Mean => "the mean",
                        LatencyStatistic::P50 => "the median (p50)",
                        LatencyStatistic::P90 => "90% of requests (p90)",
                        LatencyStatistic::P99 => "99% of requests (p99)",
                    };
                    view! { <option value=x.name() prop:selected=move || st.with(|s| s.plan.slo_stat == x)>{label}</option> }
                }).collect_view()}
            </select>
            {fields(pf::SLO_TTFT..pf::POWER + 1)}

            <h2>"Your own single-machine measurements"</h2>
            <label for="plan-meas" class="hint">"Paste one or more result JSON files of "<code>"vllm bench serve --save-result"</code>" or "<code>"benchmark_serving.py --save-result"</code>
                " (one object per line, or one after another), run on one machine with this model. The planner calibrates on them as "<code>"sim-core calibrate"</code>" does."</label>
            <textarea id="plan-meas" rows="6" spellcheck="false" placeholder="{\"max_concurrency\": 8, \"completed\": 80, \"output_throughput\": 221.5, ...}"
                prop:value=meas_text
                on:input=move |ev| st.update(|s| s.plan.measurements = event_target_value(&ev))></textarea>
            {calibration_status(calibration)}
            {move || st.with(|s| {
                let p = &s.plan;
                (!p.measurements.trim().is_empty()).then(|| {
                    if p.measurements_in_url() {
                        "These measurements are part of the share link."
                    } else {
                        "These measurements are too long for the share link: it restores the plan without them (save the JSON files to share them)."
                    }
                })
            }).map(|t| view! { <p class="hint" id="plan-meas-link">{t}</p> })}
        </div>
    }
}

/// The verdict, big, above the chart.
#[component]
pub fn Verdict(
    plan: Memo<Result<Plan, String>>,
    calibration: Memo<Option<Result<Calibrated, String>>>,
) -> impl IntoView {
    move || match plan.get() {
        Err(e) => view! {
            <div class="verdict verdict-error" id="verdict" data-mode="" role="status">
                <div class="verdict-mode">"No plan"</div>
                <p class="verdict-reason">{e}</p>
            </div>
        }
        .into_any(),
        Ok(p) => {
            let top = p.rows.iter().max_by_key(|r| r.concurrency).cloned();
            let fits = top.as_ref().is_some_and(|r| r.modes.iter().any(|p| p.output_tok_s > 0.0));
            let numbers = top.filter(|_| fits).map(|r| {
                let tok = |m: Mode| r.get(m).output_tok_s;
                let gain = if tok(Mode::Single) > 0.0 {
                    format!("best is {:.2}x one machine", r.gain)
                } else {
                    "one machine cannot run it".into()
                };
                let each: Vec<String> =
                    r.modes.iter().map(|p| format!("{} {:.0}", p.mode.label(), p.output_tok_s)).collect();
                format!("At {} concurrent requests, tok/s: {} ({gain}).", r.concurrency, each.join(", "))
            });
            let m = p.recommended_mode;
            let sentence =
                if fits { mode_sentence(m) } else { "Does not fit: neither one machine nor two hold this model" };
            view! {
                <div class="verdict" class:verdict-error=!fits id="verdict" data-mode=m.name() data-fits=fits.to_string() role="status">
                    <div class="verdict-mode">{sentence}</div>
                    <p class="verdict-reason">"Why: " {p.reason.clone()}</p>
                    <p class="verdict-engine" id="verdict-engine">"Predicted with the " {p.engine.clone()} "."</p>
                    <p class="verdict-engine" id="verdict-link">{p.link.clone()} "."</p>
                    <p class="verdict-numbers">{numbers}</p>
                    {p.four_machines.map(|f| view! { <p class="verdict-reason" id="verdict-four">{f.reason}</p> })}
                    {move || match calibration.get() {
                        Some(Ok(c)) => Some(format!("Calibrated on your {} measured point{} (median error {:.1}%).", c.points.len(), if c.points.len() == 1 { "" } else { "s" }, c.stats.median_ape)),
                        Some(Err(_)) => Some("Your pasted measurements could not be read; using the published fit.".into()),
                        None => None,
                    }.map(|t| view! { <p class="verdict-numbers" id="verdict-calibration">{t}</p> })}
                </div>
            }
            .into_any()
        }
    }
}

/// A number with `digits` decimals, or a dash where the mode does not run.
fn gb(x: f64) -> String {
    format!("{:.1}", x / 1e9)
}

fn placement_row(label: &'static str, p: &Placement) -> impl IntoView {
    view! {
        <tr>
            <td>{label}</td>
            <td class="num">{format!("{}", p.tp)}</td>
            <td class="num">{gb(p.weight_bytes_per_gpu)}</td>
            <td class="num">{gb(p.hbm_weight_bytes())}</td>
            <td class="num">{gb(p.spilled_bytes())}</td>
            <td class="num">{gb(p.kv_pool_bytes)}</td>
            <td class="num">{p.kv_pool_tokens().map_or_else(|| "-".into(), |t| format!("{:.0}", t / 1e3))}</td>
            <td>{if p.fits { "yes" } else { "no" }}</td>
        </tr>
    }
}

/// Under the planner's chart: the per-concurrency table and the placement table.
#[component]
pub fn PlanTables(plan: Memo<Result<Plan, String>>) -> impl IntoView {
    move || {
        let Ok(p) = plan.get() else { return ().into_any() };
        let one =
            p.placements.iter().find(|x| x.mode == Mode::Single).map(|x| placement_row("one machine", &x.placement));
        let two =
            p.placements.iter().find(|x| x.mode == Mode::Tp2).map(|x| placement_row("two machines, TP2", &x.placement));
        view! {
            <p class="legend-text">"Lines: sim-core predictions for this model, machine and workload (thickest: the recommended mode; PD dashed, so it shows where it runs on top of another mode). Markers: single circle, TP2 triangle, PD square. Gain is each mode's throughput over one machine's at the same concurrency; the bound is what limits that mode there. The best mode per concurrency is highlighted."</p>
            <div class="plan-table-wrap" inner_html=crate::tables::plan_table(&p)></div>
            <table class="points" id="plan-placement">
                <caption>"Where the weights live, per GPU"</caption>
                <thead><tr><th>"setup"</th><th>"GPUs per engine"</th><th>"weights GB"</th><th>"in HBM GB"</th><th>"spilled GB"</th><th>"KV pool GB"</th><th>"KV pool, k tokens"</th><th>"fits"</th></tr></thead>
                <tbody>{one}{two}</tbody>
            </table>
        }
        .into_any()
    }
}

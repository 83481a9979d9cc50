//! Under the gain chart: the report's claims (placed and listed), and predicted and published
//! pair-over-one-station ratios as tables.

use crate::charts::ChartSpec;
use crate::compute::{self, ClaimRow};
use crate::data::Bundle;
use crate::state::UrlState;
use leptos::prelude::*;
use std::sync::Arc;

/// The note under the chart for a claim over two concurrencies (`*`): its caveat and the equal-concurrency ratio.
fn unequal_note(c: &ClaimRow) -> String {
    let mut s = format!("{}*: {}.", c.stated, c.compares);
    if let Some(cav) = &c.caveat {
        s.push_str(&format!(" Caveat: {cav}."));
    }
    if let Some((conc, num, den)) = c.equal_concurrency {
        s.push_str(&format!(
            " At equal concurrency ({conc} streams) the data give {num:.0} / {den:.0} = {:.1}x.",
            num / den
        ));
    }
    s
}

#[component]
pub fn GainTable(spec: Memo<ChartSpec>, bundle: Arc<Bundle>, st: RwSignal<UrlState>) -> impl IntoView {
    let claims = Memo::new(move |_| st.with(|s| compute::claims_of(&bundle, &s.model)));
    move || {
        let ChartSpec::Gain(d) = spec.get() else { return ().into_any() };
        let rows: Vec<_> =
            d.predicted.iter().flat_map(|(m, v)| v.iter().map(move |(c, g)| (m.name(), *c, *g))).collect();
        let all = claims.get();
        let placed: Vec<String> = d.claims.iter().map(|c| c.id.clone()).collect();
        let notes: Vec<String> = all.iter().filter(|c| c.unequal && placed.contains(&c.id)).map(unequal_note).collect();
        let model = st.with_untracked(|s| s.model.clone());
        view! {
            {(!notes.is_empty()).then(|| view! {
                <div class="claim-notes" id="claim-notes">
                    {notes.into_iter().map(|n| view! { <p>{n}</p> }).collect_view()}
                </div>
            })}
            <p class="legend-text">"Gain = pair throughput / one station's throughput at the same number of concurrent requests. Markers: published ratios where both were measured at that concurrency (hollow if either point is flagged). Diamonds: the report's claims for this workload as stated, at the pair's concurrency; hollow with * when the claim divides by the station at another concurrency."</p>
            <div class="claims" id="claims">
                <h3>{format!("What the report claims for {model}")}</h3>
                {if all.is_empty() {
                    view! { <p>"No claims for this model."</p> }.into_any()
                } else {
                    view! {
                        <ul>
                            {all.into_iter().map(|c| {
                                let on_chart = placed.contains(&c.id);
                                let data = c.from_data.map(|(n, dd)| format!(" Data: {n:.0} / {dd:.0} = {:.2}x.", n / dd));
                                view! {
                                    <li data-claim=c.id.clone() class:on-chart=on_chart>
                                        <strong>{c.stated.clone()}{c.unequal.then_some("*")}</strong>
                                        " " {c.compares.clone()} "." {data}
                                        {(!on_chart).then_some(" (not on this chart)")}
                                        <div class="tip-quote"><span class="src">{c.source.clone()}</span>" \u{201c}"{c.quote.clone()}"\u{201d}"</div>
                                        {c.caveat.clone().map(|x| view! { <div class="claim-caveat">"Caveat: " {x}</div> })}
                                        {c.unverifiable.clone().map(|x| view! { <div class="claim-caveat">"Not checkable: " {x}</div> })}
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }}
            </div>
            <table class="points" id="gain-published">
                <caption>"Published ratios"</caption>
                <thead><tr><th>"mode"</th><th>"concurrency"</th><th>"published gain"</th></tr></thead>
                <tbody>
                    {d.measured.iter().map(|m| view! {
                        <tr><td>{m.mode.name()}</td><td class="num">{m.x}</td><td class="num">{format!("{:.2}x", m.y)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <table class="points" id="gain-predicted">
                <caption>"Predicted gain"</caption>
                <thead><tr><th>"mode"</th><th>"concurrency"</th><th>"predicted gain"</th></tr></thead>
                <tbody>
                    {rows.into_iter().map(|(m, c, g)| view! {
                        <tr><td>{m}</td><td class="num">{c}</td><td class="num">{format!("{g:.2}x")}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        }
        .into_any()
    }
}

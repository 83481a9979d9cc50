//! Under the throughput chart: the legend in words, flagged points with their explanation, and the points table.

use crate::charts::mode_shape;
use crate::compute;
use crate::data::Bundle;
use crate::state::UrlState;
use leptos::prelude::*;
use sim_core::Mode;
use std::sync::Arc;

#[component]
pub fn ExplorerTable(bundle: Arc<Bundle>, st: RwSignal<UrlState>) -> impl IntoView {
    let rows = Memo::new(move |_| st.with(|s| compute::sweep(&bundle, s).1));
    let legend = Mode::ALL
        .iter()
        .map(|m| format!("{} = {}", m.name(), mode_shape(*m)))
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <p class="legend-text">"Markers: published points (" {legend} "); hollow markers are flagged and not fitted. Lines: sim-core predictions at 1, 2, 4, ..., 256 concurrent requests."</p>
        {move || {
            let flagged: Vec<_> = rows.get().into_iter().filter(|r| r.flagged.is_some()).collect();
            (!flagged.is_empty()).then(|| view! {
                <div class="flagged">
                    <h3>"Flagged points (hollow)"</h3>
                    <ul>
                        {flagged.into_iter().map(|r| view! {
                            <li><strong>{format!("{} at {} requests, {:.0} tok/s: ", r.mode.name(), r.concurrency, r.measured)}</strong>{r.flagged.unwrap_or_default()}</li>
                        }).collect_view()}
                    </ul>
                </div>
            })
        }}
        <table class="points">
            <caption>"Published points against the prediction (with the what-if values applied)"</caption>
            <thead><tr><th>"mode"</th><th>"concurrency"</th><th>"measured tok/s"</th><th>"predicted tok/s"</th><th>"error"</th><th>"source"</th></tr></thead>
            <tbody>
                {move || rows.get().into_iter().map(|r| view! {
                    <tr class:flagged=r.flagged.is_some()>
                        <td>{r.mode.name()}</td>
                        <td class="num">{r.concurrency}</td>
                        <td class="num">{format!("{:.0}", r.measured)}</td>
                        <td class="num">{format!("{:.0}", r.predicted)}</td>
                        <td class="num">{format!("{:+.1}%", r.error_pct)}</td>
                        <td class="quote"><span class="src">{r.source}</span>" \u{201c}"{r.quote}"\u{201d}"</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

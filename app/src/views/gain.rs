//! Under the gain chart: predicted and published pair-over-one-station ratios as a table.

use crate::charts::ChartSpec;
use leptos::prelude::*;

#[component]
pub fn GainTable(spec: Memo<ChartSpec>) -> impl IntoView {
    move || {
        let ChartSpec::Gain(d) = spec.get() else { return ().into_any() };
        let rows: Vec<_> = d
            .predicted
            .iter()
            .flat_map(|(m, v)| v.iter().map(move |(c, g)| (m.name(), *c, *g)))
            .collect();
        view! {
            <p class="legend-text">"Gain = pair throughput / one station's throughput at the same number of concurrent requests. Markers: published ratios where both were measured at that concurrency (hollow if either point is flagged)."</p>
            <table class="points">
                <caption>"Published ratios"</caption>
                <thead><tr><th>"mode"</th><th>"concurrency"</th><th>"published gain"</th></tr></thead>
                <tbody>
                    {d.measured.iter().map(|m| view! {
                        <tr><td>{m.mode.name()}</td><td class="num">{m.x}</td><td class="num">{format!("{:.2}x", m.y)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <table class="points">
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

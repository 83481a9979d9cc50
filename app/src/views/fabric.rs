//! Under the fabric chart: measured against predicted bus bandwidth per collective.

use leptos::prelude::*;
use sim_core::model::fabric::FabricRow;

#[component]
pub fn FabricTable(rows: Vec<FabricRow>) -> impl IntoView {
    view! {
        <p class="legend-text">"Lines: busbw(S) = f S / (latency + f S / (e B)) per collective, e fitted on its 16 GiB row; dots: the measured peak and 16 GiB rows. The link-speed control moves B (the thick grey payload ceiling)."</p>
        <table class="points" id="fabric-table">
            <caption>"nccl-tests bus bandwidth between the two stations (dataset values; not changed by the controls)"</caption>
            <thead><tr><th>"collective"</th><th>"row"</th><th>"size"</th><th>"measured GB/s"</th><th>"predicted GB/s"</th><th>"efficiency e"</th></tr></thead>
            <tbody>
                {rows.iter().map(|r| view! {
                    <tr>
                        <td>{r.collective.name()}</td>
                        <td>{r.column.name()}</td>
                        <td class="num">{crate::charts::size_label(r.bytes.log2())}</td>
                        <td class="num">{format!("{:.2}", r.measured_busbw_gbps)}</td>
                        <td class="num">{format!("{:.2}", r.predicted_busbw_gbps)}</td>
                        <td class="num">{format!("{:.3}", r.efficiency)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

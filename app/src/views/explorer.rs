//! Under the throughput chart: the legend in words, flagged points with their explanation, and the points table.

use crate::charts::{mode_shape, ChartSpec, BAND_LEGEND, RANGE_LEGEND, UNPLACED_LEGEND};
use crate::compute::MIN_MODE_POINTS;
use leptos::prelude::*;
use sim_core::explore::SweepAnswer;
use sim_core::Mode;

/// The table and captions of the throughput view, from the same answer the chart draws.
#[component]
pub fn ExplorerTable(sweep: Memo<Result<SweepAnswer, String>>, spec: Memo<ChartSpec>) -> impl IntoView {
    let bands = move || {
        sweep.with(|a| {
            let Ok(a) = a else { return String::new() };
            a.curves
                .iter()
                .map(|c| c.mode)
                .map(|m| match a.bands.iter().find(|(bm, _)| *bm == m).map(|(_, e)| e) {
                    Some(e) if e.per_mode => format!("{} \u{b1}{:.1}% ({} fitted points)", m.name(), e.p90_pct, e.n),
                    Some(e) => format!(
                        "{} \u{b1}{:.1}% (fewer than {} fitted {} points: the model's {} fitted points)",
                        m.name(),
                        e.p90_pct,
                        MIN_MODE_POINTS,
                        m.name(),
                        e.n
                    ),
                    None => format!("{} no band (no fitted points)", m.name()),
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
    };
    let rows = Memo::new(move |_| sweep.with(|a| a.as_ref().map(|a| a.points.clone()).unwrap_or_default()));
    let stated = Memo::new(move |_| sweep.with(|a| a.as_ref().map(|a| a.stated.clone()).unwrap_or_default()));
    let legend = Mode::ALL.iter().map(|m| format!("{} = {}", m.name(), mode_shape(*m))).collect::<Vec<_>>().join(", ");
    view! {
        <p class="legend-text">"Markers: published points (" {legend} "); hollow markers are flagged and not fitted. Lines: sim-core predictions at 1, 2, 4, ..., 256 concurrent requests."</p>
        {move || (!stated.with(Vec::is_empty)).then(|| view! {
            <p class="legend-text" id="stated-caption">"Not points (never fitted or counted): a translucent rectangle is a value "
                {RANGE_LEGEND} "; a small hollow diamond is a value " {UNPLACED_LEGEND} ". Both in the mode's colour."</p>
        })}
        <p class="legend-text" id="engine-caption">"Predictions use the "
            {move || sweep.with(|a| a.as_ref().map(|a| a.engine.clone()).unwrap_or_default())} "."</p>
        <p class="legend-text" id="band-caption">"Shaded: predicted \u{d7} (1 \u{b1} e/100); " {BAND_LEGEND} ". e per mode: " {bands} "."</p>
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
        <div class="points-wrap" inner_html=move || {
            let lat = spec.with(|s| if let ChartSpec::Sweep(d) = s { d.latencies.clone() } else { Vec::new() });
            rows.with(|r| stated.with(|s| crate::tables::points_table(r, s, &lat)))
        }></div>
    }
}

//! The accuracy view: how good the model is, honestly. Fitted error (fit on all unflagged points, built at
//! start-up), predictive error (fit on single-station points, predict the pair; built the first time the view
//! opens), the fitted coefficients with their basis, and the flagged points that no fit or statistic sees.

use crate::compute;
use crate::data::Bundle;
use leptos::prelude::*;
use sim_core::report::{ErrorStats, GroupStats, Report};
use std::sync::Arc;

fn pct(s: Option<ErrorStats>, f: fn(&ErrorStats) -> f64) -> String {
    s.map_or_else(|| "-".into(), |s| format!("{:.1}%", f(&s)))
}

fn stats_row(
    kind: &'static str,
    g: &GroupStats,
    stats: Option<ErrorStats>,
    note: Option<String>,
    id: Option<&'static str>,
) -> impl IntoView {
    let overall = kind == "overall";
    // `data-median` carries the exact value: a reader rounding it again gets the cell's text (a value rounded
    // to 9.55 first would read 9.6% beside a cell showing 9.5%).
    view! {
        <tr class:overall=overall id=id data-median=stats.map(|s| s.median_ape.to_string()).unwrap_or_default()>
            <td>{kind}</td>
            <td>{if overall { "all models and modes".to_string() } else { g.group.clone() }}{note.map(|n| view! { <span class="acc-note">" " {n}</span> })}</td>
            <td class="num">{stats.map_or_else(|| "0".into(), |s| s.n.to_string())}</td>
            <td class="num">{pct(stats, |s| s.median_ape)}</td>
            <td class="num">{pct(stats, |s| s.p90_ape)}</td>
        </tr>
    }
}

/// One error table: per model, per mode, overall; `pick` chooses the fitted or the predicted statistics.
fn stats_table(
    r: &Report,
    id: &'static str,
    caption: String,
    pick: fn(&GroupStats) -> Option<ErrorStats>,
    note: impl Fn(&str) -> Option<String>,
    overall_id: &'static str,
) -> impl IntoView {
    let models = r.by_model.iter().map(|g| stats_row("model", g, pick(g), note(&g.group), None)).collect_view();
    let modes = r.by_mode.iter().map(|g| stats_row("mode", g, pick(g), note(&g.group), None)).collect_view();
    let overall = stats_row("overall", &r.overall, pick(&r.overall), note("overall"), Some(overall_id));
    view! {
        <table class="points acc-table" id=id>
            <caption>{caption}</caption>
            <thead><tr><th>"group"</th><th>""</th><th>"n"</th><th>"median APE"</th><th>"90th percentile APE"</th></tr></thead>
            <tbody>{models}{modes}{overall}</tbody>
        </table>
    }
}

#[component]
pub fn AccuracyView(bundle: Arc<Bundle>, single: RwSignal<Option<Arc<Report>>>) -> impl IntoView {
    let all = bundle.ws.accuracy(sim_core::fit::FitSet::All).clone();
    let without = bundle.ws.models_without_single();
    let n_fitted = all.calibration.points_used;
    let fitted = stats_table(
        &all,
        "acc-fitted",
        format!("Fitted error: coefficients fitted on all {n_fitted} unflagged points, error on those same points"),
        |g| g.fitted,
        |_| None,
        "acc-fitted-overall",
    );
    let all2 = all.clone();
    let without2 = without.clone();
    let predictive = move || {
        match single.get() {
        None => view! {
            <p class="computing" id="acc-computing" role="status">"Computing the single-station fit\u{2026} (a few hundred milliseconds)"</p>
        }
        .into_any(),
        Some(r) => {
            let w = without2.clone();
            let note = move |g: &str| {
                if w.iter().any(|m| m == g) {
                    Some("(no single-station run: predicted from priors alone; not in the overall number)".to_string())
                } else if g == "single" {
                    Some("(all fitted: nothing to predict)".to_string())
                } else if g == "overall" && !w.is_empty() {
                    Some(format!("(without {})", w.join(", ")))
                } else {
                    None
                }
            };
            let fit_note = r.overall.fitted.map(|s| {
                format!(
                    "The fit itself misses its {} single-station points by {:.1}% (median), {:.1}% (90th percentile).",
                    s.n, s.median_ape, s.p90_ape
                )
            });
            let table = stats_table(
                &r,
                "acc-predictive",
                format!(
                    "Predictive error: coefficients fitted on the {} unflagged single-station points only, error on the pair points they never saw",
                    r.calibration.points_used
                ),
                |g| g.predicted,
                note,
                "acc-predictive-overall",
            );
            view! { {table} <p class="legend-text">{fit_note}</p> }.into_any()
        }
    }
    };
    let describe = all2.calibration.coefficients.describe(all2.calibration.set_description());
    let coeffs = move || {
        let other = single.get().map(|r| r.calibration.coefficients.describe(r.calibration.set_description()));
        describe
            .iter()
            .map(|(name, v, basis)| {
                let alt = other.as_ref().map(|o| {
                    o.iter()
                        .find(|(n, _, _)| n == name)
                        .map_or_else(|| "-".into(), |(_, x, _)| compute::coefficient_value(name, *x))
                });
                view! {
                    <tr>
                        <td class="mono">{name.clone()}</td>
                        <td class="num">{compute::coefficient_value(name, *v)}</td>
                        <td class="num">{alt.unwrap_or_else(|| "\u{2026}".into())}</td>
                        <td>{basis.clone()}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    let flagged = all
        .rows
        .iter()
        .filter(|r| r.role == sim_core::report::PointRole::Flagged)
        .map(|r| {
            let err = (r.predicted_tok_s - r.measured_tok_s) / r.measured_tok_s * 100.0;
            view! {
                <tr>
                    <td>{r.model.clone()}</td>
                    <td>{r.mode.name()}</td>
                    <td class="num">{format!("{} / {}", r.isl, r.osl)}</td>
                    <td class="num">{r.concurrency}</td>
                    <td class="num">{format!("{:.0}", r.measured_tok_s)}</td>
                    <td class="num">{format!("{:.0}", r.predicted_tok_s)}</td>
                    <td class="num">{format!("{err:+.1}%")}</td>
                    <td>{r.flags.join(", ")}</td>
                    <td class="quote"><span class="src">{r.source.clone()}</span>" \u{201c}"{r.quote.clone()}"\u{201d}"</td>
                </tr>
            }
        })
        .collect_view();
    let without_text = if without.is_empty() {
        String::new()
    } else {
        format!(
            " {} has no single-station run, so the pair cannot be predicted from one station: its pair points are listed per model but kept out of the overall predictive number.",
            without.join(", ")
        )
    };
    view! {
        <div class="accuracy" id="accuracy">
            <p class="legend-text">"APE: absolute percentage error, |predicted \u{2212} measured| / measured. Flagged points (dips, other checkpoints) never enter a fit or a statistic; they are listed at the end. "
                "The fitted error says how well the model can describe the published runs; the predictive error answers the harder question of this page: measure one station, predict the pair."
                {without_text}</p>
            {fitted}
            {predictive}
            <table class="points acc-table" id="acc-coefficients">
                <caption>"Coefficients and their basis (every other number comes from the hardware, model cards and link specs)"</caption>
                <thead><tr><th>"coefficient"</th><th>"fit on all points"</th><th>"fit on single station"</th><th>"basis"</th></tr></thead>
                <tbody>{coeffs}</tbody>
            </table>
            <table class="points" id="acc-flagged">
                <caption>"Flagged points: shown, never fitted or counted"</caption>
                <thead><tr><th>"model"</th><th>"mode"</th><th>"ISL / OSL"</th><th>"concurrency"</th><th>"measured tok/s"</th><th>"predicted tok/s"</th><th>"error"</th><th>"flags"</th><th>"source"</th></tr></thead>
                <tbody>{flagged}</tbody>
            </table>
        </div>
    }
    .into_any()
}

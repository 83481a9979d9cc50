//! Downloads of the current view: the chart as PNG (the canvas) and SVG (drawn again into an SVG string), its
//! data as CSV, and a JSON metadata file (sources, model version, engine profile and coefficients).

use crate::charts::ChartSpec;
use crate::state::UrlState;
use gloo_file::{Blob, ObjectUrl};
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{HtmlAnchorElement, HtmlCanvasElement};

fn click(href: &str, name: &str) -> Option<()> {
    let a: HtmlAnchorElement = document().create_element("a").ok()?.unchecked_into();
    a.set_href(href);
    a.set_download(name);
    a.click();
    Some(())
}

/// Keeps what the last export produced on `window.__lastExport` (what the browser test checks).
fn record(kind: &str, href: &str, text: &str) {
    let o = js_sys::Object::new();
    for (k, v) in [("kind", kind), ("href", href), ("text", text)] {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &JsValue::from_str(v));
    }
    let _ = js_sys::Reflect::set(&window(), &JsValue::from_str("__lastExport"), &o);
}

fn png(name: &str) -> Option<()> {
    let canvas: HtmlCanvasElement = document().get_element_by_id("chart")?.dyn_into().ok()?;
    let href = canvas.to_data_url().ok()?;
    record("png", &href, "");
    click(&href, name)
}

/// Saves `text` as a file of MIME type `mime`; `kind` names it for the browser test. The object URL is revoked
/// when `url` goes out of scope (gloo-file), after the click has started the download.
fn save(kind: &str, mime: &str, text: &str, name: &str) {
    let url = ObjectUrl::from(Blob::new_with_options(text, Some(mime)));
    record(kind, &url, text);
    click(&url, name);
}

/// The chart drawn into SVG at the canvas's CSS size.
fn svg(spec: &ChartSpec) -> Option<String> {
    let canvas: HtmlCanvasElement = document().get_element_by_id("chart")?.dyn_into().ok()?;
    let size = (canvas.client_width().max(200) as u32, canvas.client_height().max(150) as u32);
    let mut out = String::new();
    {
        let backend = super::backend::Either::Svg(plotters::prelude::SVGBackend::with_string(&mut out, size));
        spec.draw(plotters::prelude::IntoDrawingArea::into_drawing_area(backend)).ok()?;
    }
    Some(out)
}

#[component]
pub fn Export(
    spec: Memo<ChartSpec>,
    st: RwSignal<UrlState>,
    bundle: std::sync::Arc<crate::data::Bundle>,
) -> impl IntoView {
    let stem = move || {
        let (stem, model) = (spec.with(|s| crate::csv::of(s).1), st.with(|s| s.model.clone()));
        match stem {
            "fabric" => "twotower-fabric".to_string(),
            "plan" => st.with(|s| {
                format!(
                    "twotower-plan-{}-{}",
                    if s.plan.source == crate::state::ModelSource::Report { s.model.as_str() } else { "custom" },
                    s.plan.hardware
                )
            }),
            _ => format!("twotower-{stem}-{model}"),
        }
    };
    view! {
        <div class="export">
            <button id="export-png" aria-label="Download the chart as PNG" on:click=move |_| { png(&format!("{}.png", stem())); }>"PNG"</button>
            <button id="export-svg" aria-label="Download the chart as SVG" on:click=move |_| {
                if let Some(text) = spec.with(svg) {
                    save("svg", "image/svg+xml", &text, &format!("{}.svg", stem()));
                }
            }>"SVG"</button>
            <button id="export-csv" aria-label="Download the chart's data as CSV" on:click=move |_| { save("csv", "text/csv", &spec.with(|s| crate::csv::of(s).0), &format!("{}.csv", stem())); }>"CSV"</button>
            <button id="export-json" aria-label="Download the chart's metadata as JSON (sources, model version, coefficients)" on:click=move |_| {
                let text = spec.with(|sp| st.with(|s| crate::meta::metadata(&bundle, s, sp)));
                save("json", "application/json", &text, &format!("{}.json", stem()));
            }>"JSON"</button>
            <a class="embed-link" href=move || format!("{}&embed=1", st.with(UrlState::to_query)) target="_blank">"embed link"</a>
        </div>
    }
}

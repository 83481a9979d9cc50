//! The canvas: draws the current chart with plotters-canvas and counts draws for tests (data-draws).

use crate::charts::ChartSpec;
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsValue;

#[component]
pub fn Chart(spec: Memo<ChartSpec>, model: Signal<String>, embed: bool) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let wrap = NodeRef::<leptos::html::Div>::new();
    let draws = RwSignal::new(0u32);
    let first_ms = RwSignal::new(None::<f64>);
    let error = RwSignal::new(None::<String>);
    let resized = RwSignal::new(0u32);
    let _ = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n += 1));
    Effect::new(move |_| {
        resized.track();
        let (Some(c), Some(w)) = (canvas.get(), wrap.get()) else { return };
        let width = w.client_width().clamp(280, 1100);
        let height = if embed { w.client_height().max(200) } else { (f64::from(width) * 0.58) as i32 };
        c.set_width(width as u32);
        c.set_height(height as u32);
        let result = spec.with(|s| {
            let backend = CanvasBackend::with_canvas_object(c).ok_or("canvas has no 2d context")?;
            s.draw(backend.into_drawing_area())
        });
        match result {
            Ok(()) => {
                error.set(None);
                if first_ms.get_untracked().is_none() {
                    let now = window().performance().map(|p| p.now()).unwrap_or(0.0);
                    let _ = js_sys::Reflect::set(&window(), &JsValue::from_str("__firstDrawMs"), &JsValue::from_f64(now));
                    first_ms.set(Some(now));
                }
                draws.update(|n| *n += 1);
            }
            Err(e) => error.set(Some(format!("could not draw the chart: {e}"))),
        }
    });
    view! {
        <div class="chart-wrap" class:embed=embed node_ref=wrap
            data-model=move || model.get()
            data-draws=move || draws.get().to_string()
            data-first-draw-ms=move || first_ms.get().map(|x| format!("{x:.0}")).unwrap_or_default()
            data-predicted-sum=move || spec.with(|s| format!("{:.3}", s.predicted_sum()))>
            <canvas id="chart" node_ref=canvas role="img"
                aria-label="chart of the current view; the table below lists the same numbers"></canvas>
            {move || error.get().map(|e| view! { <p class="chart-error">{e}</p> })}
        </div>
    }
}

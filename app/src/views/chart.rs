//! The canvas: draws the current chart with plotters-canvas at the screen's pixel density, redraws when its
//! container changes size (a ResizeObserver: the embed fills its frame), counts draws for tests (data-draws),
//! describes itself to screen readers (role=img, a summary, the table under it), and shows a tooltip for the
//! published point under the mouse.

use crate::charts::{fmt_sig, ChartSpec, HitPoints};
use crate::compute::{PointRow, StatedKind, StatedRow};
use gloo_events::EventListener;
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlElement, ResizeObserver};

/// How close (CSS pixels) the mouse must be to a point to show its tooltip.
const HOVER_RADIUS: f64 = 14.0;

/// What the tooltip shows for the hovered point.
#[derive(Debug, Clone, PartialEq)]
struct Tip {
    x: i32,
    y: i32,
    body: TipBody,
}

#[derive(Debug, Clone, PartialEq)]
enum TipBody {
    /// A published point, with its table row when there is one.
    Point { row: Option<PointRow>, mode: String, concurrency: f64, measured: f64 },
    /// A range or a value without a stated concurrency.
    Stated(StatedRow),
    /// A point of the frontier chart: a heading and its lines (per GPU, per user, latencies, source).
    Frontier { head: String, lines: Vec<String> },
}

/// The tooltip of the frontier chart's `i`th drawn point.
fn frontier_tip(d: &crate::charts::FrontierChartData, i: usize) -> Option<TipBody> {
    let drawn = d.drawn();
    let (side, predicted, p) = *drawn.get(i)?;
    let who = if d.sides.len() > 1 { format!("{}: ", d.sides[side].0) } else { String::new() };
    let kind = if predicted { "predicted" } else { "published" };
    let ms = |v: Option<f64>| v.map(|s| format!("{} ms", fmt_sig(s * 1e3)));
    let mut lines = vec![
        format!(
            "{} tok/s per GPU ({} tok/s on {} GPUs), {} tok/s per user",
            fmt_sig(p.tok_s_per_gpu),
            fmt_sig(p.output_tok_s),
            p.gpus,
            fmt_sig(p.tok_s_per_user)
        ),
        format!(
            "TTFT {}, TPOT {}{}, end-to-end {} s{}",
            ms(p.ttft_s).unwrap_or_else(|| "not stated".into()),
            ms(p.tpot_s).unwrap_or_else(|| "not stated".into()),
            ms(p.itl_s).map(|i| format!(" (ITL {i})")).unwrap_or_default(),
            fmt_sig(p.e2e_s),
            if p.e2e_stated { "" } else { " (Little's law)" }
        ),
    ];
    if let (Some(x), Some(kv)) = (p.preemptions_per_request, p.kv_utilization) {
        lines.push(format!("{} preemptions per request, KV cache {:.0}% in use", fmt_sig(x), kv * 100.0));
    }
    if p.on_frontier {
        lines.push("on the Pareto frontier".into());
    }
    if p.flagged {
        lines.push("flagged: shown, never on the frontier".into());
    }
    if !p.source.is_empty() {
        lines.push(format!("{} \u{201c}{}\u{201d}", p.source, p.quote));
    }
    Some(TipBody::Frontier { head: format!("{who}{} {kind} at {} requests", p.mode.name(), p.concurrency), lines })
}

/// Watches the chart's container and bumps `resized` when its size differs from the last draw's; disconnects
/// when the component goes (the callback must not outlive its closure).
struct SizeWatch {
    observer: ResizeObserver,
    _callback: Closure<dyn FnMut(js_sys::Array)>,
}

impl Drop for SizeWatch {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// The canvas's size in CSS pixels for a container of `client` (width, height): the page keeps a readable
/// width (up to 1100 px) and the plot's aspect with the legend strip under it; an embed fills its frame.
fn canvas_size(spec: &ChartSpec, embed: bool, client: (i32, i32)) -> (i32, i32) {
    if embed {
        return (client.0.max(200), client.1.max(150));
    }
    let width = client.0.clamp(280, 1100);
    // The plot keeps its aspect (taller on phones) and the legend strip goes under it, adding to the height.
    let aspect = if width < 500 { 0.78 } else { 0.58 };
    (width, (f64::from(width) * aspect) as i32 + spec.legend_height(width as u32) as i32)
}

/// What a screen reader says for the canvas: which chart, what it plots, and that the table below has the
/// numbers (the canvas itself has no text to read).
pub fn summary(spec: &ChartSpec, embed: bool) -> String {
    let names =
        |p: &[(sim_core::Mode, Vec<(u32, f64)>)]| p.iter().map(|(m, _)| m.name()).collect::<Vec<_>>().join(", ");
    let body = match spec {
        ChartSpec::Frontier(d) => format!(
            "Frontier chart, {}: output tokens per second per GPU against {} for {}; {} points, {} on the Pareto frontier",
            d.title,
            d.axis.label(),
            d.sides
                .iter()
                .map(|(l, a)| format!("{l} ({})", a.curves.iter().map(|c| c.mode.name()).collect::<Vec<_>>().join(", ")))
                .collect::<Vec<_>>()
                .join(" and "),
            d.drawn().len(),
            d.drawn().iter().filter(|(_, _, p)| p.on_frontier).count()
        ),
        ChartSpec::Sweep(d) => format!(
            "Throughput chart, {}: output tokens per second against concurrent requests; predicted curves for {} with \
             error bands, and {} published points",
            d.title,
            names(&d.predicted),
            d.measured.len()
        ),
        ChartSpec::Gain(d) => format!(
            "Gain chart, {}: the pair's throughput over one station's at equal concurrency; predicted for {}, {} \
             published ratios and {} of the report's claims",
            d.title,
            names(&d.predicted),
            d.measured.len(),
            d.claims.len()
        ),
        ChartSpec::Fabric(d) => format!(
            "Fabric chart, {}: bus bandwidth against message size for {} collectives, measured rows as dots, \
             the payload ceiling at {:.2} GB/s",
            d.title,
            d.predicted.len(),
            d.ceiling_gbps
        ),
        // No plan (a config.json the planner cannot read): the message next to the controls says why.
        ChartSpec::Plan(d) if d.rows.is_empty() => return format!("Planner chart, empty: {}.", d.title),
        ChartSpec::Plan(d) => format!(
            "Planner chart, {}: predicted output tokens per second against concurrent requests for {}{}",
            d.title,
            names(&d.predicted),
            d.recommended.map(|m| format!("; recommended: {}", m.name())).unwrap_or_default()
        ),
    };
    if embed {
        body + "."
    } else {
        body + ". The table below the chart lists the same numbers."
    }
}

/// The ids of the tables under the chart that hold its numbers (for aria-describedby); none when the view shows
/// no table (a planner question without a plan).
fn described_by(spec: &ChartSpec) -> Option<&'static str> {
    match spec {
        ChartSpec::Sweep(_) => Some("points-table"),
        ChartSpec::Frontier(_) => Some("frontier-headline frontier-table"),
        ChartSpec::Gain(_) => Some("gain-published gain-predicted"),
        ChartSpec::Fabric(_) => Some("fabric-table"),
        ChartSpec::Plan(d) => (!d.rows.is_empty()).then_some("plan-table"),
    }
}

#[component]
pub fn Chart(
    spec: Memo<ChartSpec>,
    model: Signal<String>,
    embed: bool,
    rows: Memo<(Vec<PointRow>, Vec<StatedRow>)>,
    /// False while the chart is hidden (the accuracy view): no draw then, and a fresh one at the right width
    /// when it shows again.
    #[prop(optional)]
    visible: Option<Memo<bool>>,
    /// Set once the chart has first drawn: work the first chart does not need waits for it.
    first_drawn: RwSignal<bool>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let wrap = NodeRef::<leptos::html::Div>::new();
    let draws = RwSignal::new(0u32);
    let first_ms = RwSignal::new(None::<f64>);
    // Recompute (the spec memo runs sim-core) plus redraw of the latest draw, for the README's budget.
    let last_redraw_ms = RwSignal::new(None::<f64>);
    let error = RwSignal::new(None::<String>);
    let resized = RwSignal::new(0u32);
    let hits = RwSignal::new(HitPoints::new());
    let tip = RwSignal::new(None::<Tip>);
    let dpr_seen = RwSignal::new(1.0f64);
    // The CSS size and pixel ratio of the last draw: a resize to the same size (the observer's first report, a
    // layout that did not move the chart) draws nothing.
    let drawn = StoredValue::new((0i32, 0i32, 0.0f64));
    // Zoom changes devicePixelRatio without resizing the container; the window reports that. The listener
    // lives as long as the chart (gloo-events removes it when the stored value is dropped with the component).
    let on_zoom = EventListener::new(&window(), "resize", move |_| {
        if window().device_pixel_ratio() != drawn.get_value().2 {
            resized.update(|n| *n += 1);
        }
    });
    StoredValue::new_local(on_zoom);
    let watch = StoredValue::new_local(None::<SizeWatch>);
    Effect::new(move |_| {
        let Some(w) = wrap.get() else { return };
        if watch.with_value(Option::is_some) {
            return;
        }
        let callback = Closure::<dyn FnMut(js_sys::Array)>::new(move |_: js_sys::Array| {
            let Some(w) = wrap.get_untracked() else { return };
            let size = spec.with_untracked(|s| canvas_size(s, embed, (w.client_width(), w.client_height())));
            let (dw, dh, _) = drawn.get_value();
            if size != (dw, dh) {
                resized.update(|n| *n += 1);
            }
        });
        if let Ok(observer) = ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            observer.observe(&w);
            watch.set_value(Some(SizeWatch { observer, _callback: callback }));
        }
    });
    Effect::new(move |_| {
        resized.track();
        if visible.is_some_and(|v| !v.get()) {
            return;
        }
        let started = window().performance().map(|p| p.now()).unwrap_or(0.0);
        let (Some(c), Some(w)) = (canvas.get(), wrap.get()) else { return };
        let (width, height) = spec.with(|s| canvas_size(s, embed, (w.client_width(), w.client_height())));
        // Backing store in device pixels, drawing in CSS pixels scaled up: crisp on high-DPI screens.
        let dpr = window().device_pixel_ratio().clamp(1.0, 4.0);
        dpr_seen.set(dpr);
        drawn.set_value((width, height, window().device_pixel_ratio()));
        c.set_width((f64::from(width) * dpr).round() as u32);
        c.set_height((f64::from(height) * dpr).round() as u32);
        // Through the CSSOM, which the page's style-src 'self' allows (a style attribute it would block).
        let style = HtmlElement::style(&c);
        let _ = style.set_property("width", &format!("{width}px"));
        let _ = style.set_property("height", &format!("{height}px"));
        if let Some(ctx) =
            c.get_context("2d").ok().flatten().and_then(|x| x.dyn_into::<CanvasRenderingContext2d>().ok())
        {
            let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
        }
        let result = spec.with(|s| {
            let backend = CanvasBackend::with_canvas_object(c).ok_or("canvas has no 2d context")?;
            s.draw_mapped(
                super::backend::Either::Canvas(backend)
                    .into_drawing_area()
                    .shrink((0, 0), (width as u32, height as u32)),
            )
        });
        match result {
            Ok(h) => {
                error.set(None);
                hits.set(h);
                tip.set(None);
                if first_ms.get_untracked().is_none() {
                    let now = window().performance().map(|p| p.now()).unwrap_or(0.0);
                    let _ =
                        js_sys::Reflect::set(&window(), &JsValue::from_str("__firstDrawMs"), &JsValue::from_f64(now));
                    first_ms.set(Some(now));
                    first_drawn.set(true);
                }
                last_redraw_ms.set(Some(window().performance().map(|p| p.now()).unwrap_or(0.0) - started));
                draws.update(|n| *n += 1);
            }
            Err(e) => error.set(Some(format!("could not draw the chart: {e}"))),
        }
    });
    let on_move = move |ev: leptos::ev::MouseEvent| {
        let (mx, my) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let nearest = hits.with_untracked(|h| {
            h.iter()
                .enumerate()
                .map(|(i, (x, y))| (i, (f64::from(*x) - mx).hypot(f64::from(*y) - my)))
                .filter(|(_, d)| *d <= HOVER_RADIUS)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i)
        });
        let next = nearest.and_then(|i| {
            let (x, y) = hits.with_untracked(|h| h[i]);
            spec.with_untracked(|s| match s {
                ChartSpec::Sweep(d) => match d.measured.get(i) {
                    Some(m) => {
                        let row = rows.with_untracked(|r| {
                            r.0.iter().find(|r| r.mode == m.mode && f64::from(r.concurrency) == m.x).cloned()
                        });
                        Some(Tip {
                            x,
                            y,
                            body: TipBody::Point {
                                row,
                                mode: m.mode.name().to_string(),
                                concurrency: m.x,
                                measured: m.y,
                            },
                        })
                    }
                    // After the points: unplaced values, then ranges, in the order of the stated rows.
                    None => rows.with_untracked(|r| r.1.get(i - d.measured.len()).cloned()).map(|r| Tip {
                        x,
                        y,
                        body: TipBody::Stated(r),
                    }),
                },
                ChartSpec::Frontier(d) => frontier_tip(d, i).map(|body| Tip { x, y, body }),
                _ => None,
            })
        });
        if tip.with_untracked(|t| t != &next) {
            tip.set(next);
        }
    };
    let tooltip = move || {
        tip.get().map(|t| {
            let left = t.x + 12;
            let top = (t.y - 8).max(0);
            let body = match t.body {
                TipBody::Stated(r) => {
                    let head = match r.kind {
                        StatedKind::Range { .. } => format!("{}, {} requests: {} tok/s", r.mode.name(), r.concurrency, r.measured),
                        StatedKind::Unplaced { .. } => format!("{}, {}: {} tok/s", r.mode.name(), r.concurrency, r.measured),
                    };
                    let detail = match r.kind {
                        StatedKind::Range { .. } => format!("predicted {}; a range, not a point (no error)", r.predicted_text()),
                        StatedKind::Unplaced { .. } => format!("predicted {} {}; not a point", r.predicted_text(), r.error_text()),
                    };
                    view! {
                        <div class="tip-head">{head}</div>
                        <div>{detail}</div>
                        <div class="tip-quote"><span class="src">{r.source}</span>" \u{201c}"{r.quote}"\u{201d}"</div>
                    }
                    .into_any()
                }
                TipBody::Point { row: Some(r), .. } => view! {
                    <div class="tip-head">{format!("{} at {} requests", r.mode.name(), r.concurrency)}</div>
                    <div>"measured " <strong>{format!("{:.0}", r.measured)}</strong>" tok/s, predicted " <strong>{format!("{:.0}", r.predicted)}</strong>
                        " (" {format!("{:+.1}%", r.error_pct)} ")"</div>
                    {r.flagged.map(|f| view! { <div class="tip-flag">"Flagged: " {f}</div> })}
                    <div class="tip-quote"><span class="src">{r.source}</span>" \u{201c}"{r.quote}"\u{201d}"</div>
                }
                .into_any(),
                TipBody::Frontier { head, lines } => view! {
                    <div class="tip-head">{head}</div>
                    {lines.into_iter().map(|l| view! { <div>{l}</div> }).collect_view()}
                }
                .into_any(),
                TipBody::Point { row: None, mode, concurrency, measured } => {
                    view! { <div class="tip-head">{format!("{mode} at {concurrency} requests: {measured:.0}")}</div> }.into_any()
                }
            };
            // Placed through style properties (the CSSOM), not a style attribute, which style-src 'self' blocks.
            view! {
                <div class="chart-tooltip" id="chart-tooltip" role="tooltip" style:left=format!("{left}px") style:top=format!("{top}px")>{body}</div>
            }
        })
    };
    view! {
        <div class="chart-wrap" class:embed=embed node_ref=wrap
            data-model=move || model.get()
            data-draws=move || draws.get().to_string()
            data-first-draw-ms=move || first_ms.get().map(|x| format!("{x:.0}")).unwrap_or_default()
            data-last-redraw-ms=move || last_redraw_ms.get().map(|x| format!("{x:.2}")).unwrap_or_default()
            data-dpr=move || dpr_seen.get().to_string()
            data-hit-points=move || hits.with(|h| h.iter().map(|(x, y)| format!("{x},{y}")).collect::<Vec<_>>().join(";"))
            data-predicted-sum=move || spec.with(|s| format!("{:.3}", s.predicted_sum()))>
            <canvas id="chart" node_ref=canvas role="img"
                on:mousemove=on_move
                on:mouseleave=move |_| tip.set(None)
                aria-label=move || spec.with(|s| summary(s, embed))
                aria-describedby=move || if embed { None } else { spec.with(described_by) }></canvas>
            {tooltip}
            {move || error.get().map(|e| view! { <p class="chart-error">{e}</p> })}
        </div>
    }
}

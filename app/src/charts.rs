//! The charts as pure functions over any plotters backend (canvas in the browser, SVG in tests).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sim_core::explore::{FrontierAnswer, FrontierPoint, PointLatencies, XAxis};
use sim_core::Mode;

/// Okabe-Ito colour-blind-safe palette.
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xF0, 0xE4, 0x42), // yellow
];

/// Colour of a mode: single blue, tp2 vermillion, pd bluish green.
pub fn mode_colour(m: Mode) -> RGBColor {
    match m {
        Mode::Single => OKABE_ITO[0],
        Mode::Tp2 => OKABE_ITO[1],
        Mode::Pd => OKABE_ITO[2],
        Mode::Dp2 => OKABE_ITO[3],
    }
}

/// Marker shape name of a mode, for the page's legend text: single circle, tp2 triangle, pd square.
pub fn mode_shape(m: Mode) -> &'static str {
    match m {
        Mode::Single => "circle",
        Mode::Tp2 => "triangle",
        Mode::Pd => "square",
        Mode::Dp2 => "cross",
    }
}

/// A published point on a chart; `hollow` for flagged points (dips, other checkpoints).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub mode: Mode,
    pub x: f64,
    pub y: f64,
    pub hollow: bool,
}

/// Throughput against concurrency: predicted curves per mode and published markers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepChartData {
    pub title: String,
    pub predicted: Vec<(Mode, Vec<(u32, f64)>)>,
    pub measured: Vec<Marker>,
    /// Per mode, the half-width of the translucent band around its predicted curve, in percent: predicted x
    /// (1 +- e/100), e the 90th-percentile error of the model and mode's fitted points.
    pub bands: Vec<(Mode, f64)>,
    /// Values the text gives only as a band ("between 573 and 611 at 32 through 256 streams"): never points.
    pub ranges: Vec<RangeMarker>,
    /// Values the text gives without a concurrency, placed at the likely reading: never points.
    pub unplaced: Vec<UnplacedMarker>,
    /// The published points' stated TTFT and TPOT beside the model's (the table and the CSV; not drawn).
    pub latencies: Vec<PointLatencies>,
}

/// A published range: a translucent rectangle over its concurrency and throughput bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeMarker {
    pub mode: Mode,
    pub x_min: f64,
    pub x_max: f64,
    pub y_min: f64,
    pub y_max: f64,
}

/// A published value stated without a concurrency, drawn as a small hollow diamond at the likely concurrency.
#[derive(Debug, Clone, PartialEq)]
pub struct UnplacedMarker {
    pub mode: Mode,
    /// The likely concurrency (not stated by the source).
    pub x: f64,
    pub y: f64,
}

/// Legend text of the diamonds for values stated without a concurrency.
pub const UNPLACED_LEGEND: &str = "stated without a concurrency (placed at the likely reading)";

/// Legend text of the rectangles for values stated as a range.
pub const RANGE_LEGEND: &str = "stated as a range (concurrency and throughput bounds)";

/// A claim of the report placed on the gain chart: at the numerator's concurrency, the stated ratio. `hollow`
/// (and a label ending in `*`) when numerator and denominator were measured at different concurrencies.
pub use sim_core::explore::ClaimMarker;

/// Pair over one station at equal concurrency: predicted ratio curves, published ratios and the report's claims.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GainChartData {
    pub title: String,
    pub predicted: Vec<(Mode, Vec<(u32, f64)>)>,
    pub measured: Vec<Marker>,
    pub claims: Vec<ClaimMarker>,
}

/// Colour of the report's claims on the gain chart (none of the modes' colours).
pub const CLAIM_COLOUR: RGBColor = OKABE_ITO[5];

/// Legend text of the throughput chart's error band.
pub const BAND_LEGEND: &str = "band: 90th-percentile error of the fitted points for this model and mode";

/// One mode at one concurrency of a plan, for the planner's CSV.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanPoint {
    pub mode: Option<Mode>,
    pub concurrency: u32,
    pub output_tok_s: f64,
    pub ttft_s: f64,
    pub tpot_ms: f64,
    /// This mode's throughput over one machine's.
    pub gain: f64,
    pub bound: String,
}

/// The planner: predicted throughput per mode over the scenario's concurrency range, the recommended mode drawn
/// thicker.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanChartData {
    pub title: String,
    pub predicted: Vec<(Mode, Vec<(u32, f64)>)>,
    pub recommended: Option<Mode>,
    pub rows: Vec<PlanPoint>,
    /// Top of the concurrency range: the x axis reaches it even where no mode fits.
    pub concurrency_max: u32,
}

/// Where a chart put its published points, in the drawing area's pixels: what the page's hover tooltip looks up.
/// On the throughput chart: `measured` in order, then `unplaced` in order, then the centre of each of `ranges`.
pub type HitPoints = Vec<(i32, i32)>;

/// Bus bandwidth (GB/s) against message size (bytes) per collective, measured rows, payload ceiling.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FabricChartData {
    pub title: String,
    pub predicted: Vec<(String, Vec<(f64, f64)>)>,
    pub measured: Vec<(String, f64, f64)>,
    pub ceiling_gbps: f64,
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

fn log2(x: f64) -> f64 {
    x.max(1e-9).log2()
}

type Chart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// What a legend entry shows before its text: the same shapes the plot draws.
#[derive(Debug, Clone)]
enum Icon {
    /// A predicted curve (or the fabric's ceiling): a short line, dashed for the planner's PD.
    Line { style: ShapeStyle, dashed: bool },
    /// A published point's filled marker: single circle, tp2 triangle, pd square.
    Marker(Mode),
    /// The report's claims: a diamond, filled unless every claim is hollow.
    Claim { hollow: bool },
    /// The throughput chart's error band: a grey translucent swatch.
    Band,
    /// A published range: a translucent swatch with an outline in the mode's colour.
    Range(RGBColor),
    /// A value stated without a concurrency: a small hollow diamond.
    Unplaced(RGBColor),
}

#[derive(Debug, Clone)]
struct LegendEntry {
    label: String,
    icon: Icon,
}

/// Width of a legend icon, and the gap between it and its text.
const ICON_W: i32 = 20;
const ICON_GAP: i32 = 6;
/// Space between legend columns, between rows, and around the strip.
const COL_GAP: i32 = 18;
const ROW_GAP: i32 = 4;
const STRIP_PAD_X: i32 = 12;
const STRIP_PAD_TOP: i32 = 2;
const STRIP_PAD_BOTTOM: i32 = 8;

/// Font size of the axis labels for a canvas `w` pixels wide (the legend uses one less).
fn font_for(w: u32) -> u32 {
    if w < 500 {
        12
    } else {
        15
    }
}

/// Font size of a chart's title: three more than the axis labels', or as large as the axis labels' when that
/// would not fit the width (long titles on phones).
fn caption_font(title: &str, w: u32) -> u32 {
    let font = font_for(w);
    if text_width(title, font + 3) > w as i32 - 24 {
        font
    } else {
        font + 3
    }
}

/// A generous estimate of the width of `s` in a sans-serif font of `font` pixels, so the layout is the same on
/// every backend (and can be computed before drawing, to size the canvas).
fn text_width(s: &str, font: u32) -> i32 {
    (s.chars().count() as f64 * font as f64 * 0.56).ceil() as i32
}

/// Breaks `label` at spaces into lines no wider than `max` (a single word wider than `max` gets a line of its own).
fn wrap(label: &str, font: u32, max: i32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in label.split(' ') {
        match lines.last_mut() {
            Some(l) if text_width(&format!("{l} {word}"), font) <= max => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Where the legend's entries go in a strip `width` pixels wide, in order: a grid of as many columns as fit (each
/// as wide as its widest entry) or rows packed left to right, whichever is shorter; labels wrapped when one does
/// not fit the strip.
#[derive(Debug, Clone, PartialEq)]
struct LegendLayout {
    font: u32,
    /// Per entry: left edge, vertical centre of its first line, and its lines; relative to the strip.
    items: Vec<(i32, i32, Vec<String>)>,
    height: u32,
}

fn legend_layout(labels: &[&str], width: u32) -> LegendLayout {
    let font = font_for(width) - 1;
    if labels.is_empty() {
        return LegendLayout { font, items: Vec::new(), height: 0 };
    }
    let line_h = font as i32 + 5;
    let avail = (width as i32 - 2 * STRIP_PAD_X).max(ICON_W + ICON_GAP + 40);
    let lines: Vec<Vec<String>> = labels.iter().map(|l| wrap(l, font, avail - ICON_W - ICON_GAP)).collect();
    let widths: Vec<i32> =
        lines.iter().map(|ls| ICON_W + ICON_GAP + ls.iter().map(|l| text_width(l, font)).max().unwrap_or(0)).collect();
    let n = labels.len();
    let col_widths = |cols: usize| -> Vec<i32> {
        let mut w = vec![0; cols];
        for (i, e) in widths.iter().enumerate() {
            w[i % cols] = w[i % cols].max(*e);
        }
        w
    };
    let cols = (1..=n)
        .rev()
        .find(|&c| {
            let w = col_widths(c);
            w.iter().sum::<i32>() + COL_GAP * (c as i32 - 1) <= avail
        })
        .unwrap_or(1);
    // A grid when it needs no more rows than packing the entries in reading order (one long label would
    // otherwise leave a column of short ones), else rows packed left to right.
    let cw = col_widths(cols);
    let grid: Vec<Vec<(i32, usize)>> = (0..n)
        .collect::<Vec<_>>()
        .chunks(cols)
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(j, &i)| (STRIP_PAD_X + cw[..j].iter().sum::<i32>() + COL_GAP * j as i32, i))
                .collect()
        })
        .collect();
    let mut flow: Vec<Vec<(i32, usize)>> = Vec::new();
    let mut x = STRIP_PAD_X;
    for (i, w) in widths.iter().enumerate() {
        match flow.last_mut() {
            Some(row) if x + w <= STRIP_PAD_X + avail => row.push((x, i)),
            _ => {
                x = STRIP_PAD_X;
                flow.push(vec![(x, i)]);
            }
        }
        x += w + COL_GAP;
    }
    let rows = if grid.len() <= flow.len() { grid } else { flow };
    let mut items = Vec::with_capacity(n);
    let mut y = STRIP_PAD_TOP;
    for row in rows {
        for &(x, i) in &row {
            items.push((x, y + line_h / 2, lines[i].clone()));
        }
        y += row.iter().map(|&(_, i)| lines[i].len() as i32).max().unwrap_or(1) * line_h + ROW_GAP;
    }
    LegendLayout { font, items, height: (y - ROW_GAP + STRIP_PAD_BOTTOM) as u32 }
}

fn layout_of(entries: &[LegendEntry], width: u32) -> LegendLayout {
    legend_layout(&entries.iter().map(|e| e.label.as_str()).collect::<Vec<_>>(), width)
}

/// Splits `root` into the plot (top) and the legend strip under it, so no legend entry covers the data. The
/// plot keeps at least half the height (a too-short canvas cuts the legend, never the plot).
fn split_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>, LegendLayout) {
    let (w, h) = root.dim_in_pixel();
    let layout = layout_of(entries, w);
    let plot_h = h.saturating_sub(layout.height).max(h / 2);
    let (plot, strip) = root.split_vertically(plot_h);
    (plot, strip, layout)
}

/// Draws one icon with its left edge at `x`, centred on `y`.
fn draw_icon<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, icon: &Icon, x: i32, y: i32) -> Result<(), String> {
    match icon {
        Icon::Line { style, dashed: false } => area.draw(&PathElement::new(vec![(x, y), (x + ICON_W, y)], *style)),
        Icon::Line { style, dashed: true } => area.draw(
            &(EmptyElement::at((x, y))
                + PathElement::new(vec![(0, 0), (7, 0)], *style)
                + PathElement::new(vec![(12, 0), (20, 0)], *style)),
        ),
        Icon::Marker(mode) => {
            let fs = mode_colour(*mode).filled();
            match mode {
                Mode::Single => area.draw(&Circle::new((x + 10, y), 4, fs)),
                Mode::Tp2 => area.draw(&TriangleMarker::new((x + 10, y), 5, fs)),
                Mode::Pd => area.draw(&Rectangle::new([(x + 6, y - 4), (x + 14, y + 4)], fs)),
                Mode::Dp2 => area.draw(&Cross::new((x + 10, y), 4, mode_colour(*mode).stroke_width(2))),
            }
        }
        Icon::Claim { hollow: false } => {
            area.draw(&(EmptyElement::at((x + 10, y)) + Polygon::new(diamond(6), CLAIM_COLOUR.filled())))
        }
        Icon::Claim { hollow: true } => {
            area.draw(&(EmptyElement::at((x + 10, y)) + PathElement::new(diamond(6), CLAIM_COLOUR.stroke_width(2))))
        }
        Icon::Band => area.draw(&Rectangle::new([(x, y - 5), (x + 20, y + 5)], BLACK.mix(0.15).filled())),
        Icon::Range(c) => area.draw(
            &(EmptyElement::at((x, y))
                + Rectangle::new([(2, -5), (18, 5)], c.mix(0.22).filled())
                + Rectangle::new([(2, -5), (18, 5)], c.stroke_width(1))),
        ),
        Icon::Unplaced(c) => {
            area.draw(&(EmptyElement::at((x + 10, y)) + PathElement::new(diamond(5), c.stroke_width(2))))
        }
    }
    .map_err(err)
}

/// Draws the legend in its strip, as `layout` placed it.
fn draw_legend<DB: DrawingBackend>(
    strip: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    layout: &LegendLayout,
) -> Result<(), String> {
    let style = ("sans-serif", layout.font).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    let line_h = layout.font as i32 + 5;
    for (e, (x, y, lines)) in entries.iter().zip(&layout.items) {
        draw_icon(strip, &e.icon, *x, *y)?;
        for (k, l) in lines.iter().enumerate() {
            strip.draw_text(l, &style, (x + ICON_W + ICON_GAP, y + k as i32 * line_h)).map_err(err)?;
        }
    }
    Ok(())
}

/// Draws the markers of one mode: single circle, tp2 triangle, pd square; flagged points
/// are stroked only (hollow).
fn markers<'a, DB: DrawingBackend + 'a>(chart: &mut Chart<'a, DB>, mode: Mode, pts: &[&Marker]) -> Result<(), String> {
    let c = mode_colour(mode);
    let (fs, hs) = (c.filled(), c.stroke_width(2));
    let xy = |m: &&&Marker| (log2(m.x), m.y);
    let (filled, hollow): (Vec<&Marker>, Vec<&Marker>) = pts.iter().partition(|m| !m.hollow);
    match mode {
        Mode::Single => {
            chart
                .draw_series(filled.iter().map(|m| EmptyElement::at(xy(&m)) + Circle::new((0, 0), 5, fs)))
                .map_err(err)?;
            chart
                .draw_series(hollow.iter().map(|m| EmptyElement::at(xy(&m)) + Circle::new((0, 0), 5, hs)))
                .map_err(err)?;
        }
        Mode::Tp2 => {
            chart
                .draw_series(filled.iter().map(|m| EmptyElement::at(xy(&m)) + TriangleMarker::new((0, 0), 7, fs)))
                .map_err(err)?;
            let t = 7;
            let tri = vec![(0, -t), (t, t * 2 / 3), (-t, t * 2 / 3), (0, -t)];
            chart
                .draw_series(hollow.iter().map(|m| EmptyElement::at(xy(&m)) + PathElement::new(tri.clone(), hs)))
                .map_err(err)?;
        }
        Mode::Pd => {
            chart
                .draw_series(filled.iter().map(|m| EmptyElement::at(xy(&m)) + Rectangle::new([(-5, -5), (5, 5)], fs)))
                .map_err(err)?;
            chart
                .draw_series(hollow.iter().map(|m| EmptyElement::at(xy(&m)) + Rectangle::new([(-5, -5), (5, 5)], hs)))
                .map_err(err)?;
        }
        Mode::Dp2 => {
            // A cross has no inside: flagged points are drawn thinner instead of hollow.
            chart.draw_series(filled.iter().map(|m| Cross::new(xy(&m), 6, c.stroke_width(3)))).map_err(err)?;
            chart.draw_series(hollow.iter().map(|m| Cross::new(xy(&m), 6, c.stroke_width(1)))).map_err(err)?;
        }
    }
    Ok(())
}

/// What differs between the charts `mode_chart` draws: a horizontal reference line (gain: 1x), a mode drawn
/// thicker with its points marked (planner: the recommended one), and the least concurrency the x axis reaches;
/// the throughput chart's error bands and the gain chart's claims.
#[derive(Default)]
struct Extras<'a> {
    reference: Option<f64>,
    emphasis: Option<Mode>,
    min_x_max: f64,
    bands: &'a [(Mode, f64)],
    claims: &'a [ClaimMarker],
    ranges: &'a [RangeMarker],
    unplaced: &'a [UnplacedMarker],
}

/// Line width of a predicted curve: on the planner (which has no published points and where curves often
/// coincide) the recommended mode is thickest and the others differ too, so overlapping lines stay visible.
fn curve_width(mode: Mode, emphasis: Option<Mode>) -> u32 {
    match emphasis {
        None => 2,
        Some(e) if e == mode => 5,
        Some(_) => match mode {
            Mode::Single => 3,
            Mode::Tp2 | Mode::Pd | Mode::Dp2 => 2,
        },
    }
}

/// A diamond outline around (0, 0) of half-diagonal `r`.
fn diamond(r: i32) -> Vec<(i32, i32)> {
    vec![(0, -r), (r, 0), (0, r), (-r, 0), (0, -r)]
}

/// Draws the report's claims: a diamond at (concurrency, stated ratio), filled when both operands share a
/// concurrency, hollow otherwise, and its label beside it.
fn claim_markers<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    claims: &[ClaimMarker],
    font: u32,
    xmax: f64,
) -> Result<(), String> {
    let r = 10;
    let (fs, hs) = (CLAIM_COLOUR.filled(), CLAIM_COLOUR.stroke_width(2));
    let (filled, hollow): (Vec<&ClaimMarker>, Vec<&ClaimMarker>) = claims.iter().partition(|m| !m.hollow);
    let at = |m: &ClaimMarker| EmptyElement::at((log2(m.x), m.y));
    chart.draw_series(filled.iter().map(|m| at(m) + Polygon::new(diamond(r), fs))).map_err(err)?;
    chart.draw_series(hollow.iter().map(|m| at(m) + PathElement::new(diamond(r), hs))).map_err(err)?;
    // Labels above and to the right of their marker; at the right edge, to the left so they are not cut off.
    let style = ("sans-serif", font).into_font().color(&BLACK);
    let left = style.clone().pos(Pos::new(HPos::Right, VPos::Top));
    let dy = -r - font as i32 + 4;
    chart
        .draw_series(claims.iter().map(|m| {
            let t = if log2(m.x) > xmax - 0.7 {
                Text::new(m.label.clone(), (-r - 2, dy), left.clone())
            } else {
                Text::new(m.label.clone(), (r + 2, dy), style.clone())
            };
            at(m) + t
        }))
        .map_err(err)?;
    Ok(())
}

/// The order the curves are drawn in: as given, or on the planner thicker lines first (PD last among equals) so
/// thinner ones stay visible on top.
fn curve_order(predicted: &[(Mode, Vec<(u32, f64)>)], emphasis: Option<Mode>) -> Vec<&(Mode, Vec<(u32, f64)>)> {
    let mut order: Vec<&(Mode, Vec<(u32, f64)>)> = predicted.iter().collect();
    if emphasis.is_some() {
        sim_core::stats::sort_by_key(&mut order, |(m, _)| {
            (std::cmp::Reverse(curve_width(*m, emphasis)), *m == Mode::Pd)
        });
    }
    order
}

/// The legend of `mode_chart`: the error band, the curves in drawing order, the claims, the published points per
/// mode, the ranges and the values stated without a concurrency; each only when the chart draws it.
fn mode_legend(predicted: &[(Mode, Vec<(u32, f64)>)], measured: &[Marker], extras: &Extras) -> Vec<LegendEntry> {
    let mut out = Vec::new();
    let banded = predicted.iter().any(|(mode, pts)| {
        pts.len() >= 2 && extras.bands.iter().find(|(m, _)| m == mode).is_some_and(|(_, e)| e.is_finite() && *e > 0.0)
    });
    if banded {
        out.push(LegendEntry { label: "band: 90th-percentile error of fitted points".into(), icon: Icon::Band });
    }
    for (mode, _) in curve_order(predicted, extras.emphasis) {
        let label = if extras.emphasis == Some(*mode) {
            format!("{} predicted (recommended)", mode.name())
        } else {
            format!("{} predicted", mode.name())
        };
        let style = mode_colour(*mode).stroke_width(curve_width(*mode, extras.emphasis));
        out.push(LegendEntry {
            label,
            icon: Icon::Line { style, dashed: extras.emphasis.is_some() && *mode == Mode::Pd },
        });
    }
    if !extras.claims.is_empty() {
        let hollow = extras.claims.iter().all(|c| c.hollow);
        out.push(LegendEntry {
            label: "claim as stated (hollow *: unequal concurrency)".into(),
            icon: Icon::Claim { hollow },
        });
    }
    for mode in Mode::ALL {
        if measured.iter().any(|m| m.mode == mode) {
            out.push(LegendEntry { label: format!("{} published", mode.name()), icon: Icon::Marker(mode) });
        }
    }
    if let Some(r) = extras.ranges.first() {
        out.push(LegendEntry { label: RANGE_LEGEND.into(), icon: Icon::Range(mode_colour(r.mode)) });
    }
    if let Some(u) = extras.unplaced.first() {
        out.push(LegendEntry { label: UNPLACED_LEGEND.into(), icon: Icon::Unplaced(mode_colour(u.mode)) });
    }
    out
}

/// Shared by the throughput, gain and planner charts: log2 concurrency on x (1 to 256, or further when the data
/// go further), curves and markers per mode. Returns the pixel position of every published marker.
fn mode_chart<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    predicted: &[(Mode, Vec<(u32, f64)>)],
    measured: &[Marker],
    extras: Extras,
) -> Result<HitPoints, String> {
    let entries = mode_legend(predicted, measured, &extras);
    let Extras { reference, emphasis, min_x_max, bands, claims, ranges, unplaced } = extras;
    root.fill(&WHITE).map_err(err)?;
    let (plot, strip, layout) = split_legend(&root, &entries);
    let ymax = predicted
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .chain(measured.iter().map(|m| m.y))
        .chain(claims.iter().map(|m| m.y))
        .chain(ranges.iter().map(|r| r.y_max))
        .chain(unplaced.iter().map(|m| m.y))
        .chain(reference)
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let xmax = predicted
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.0 as f64))
        .chain(measured.iter().map(|m| m.x))
        .chain(claims.iter().map(|m| m.x))
        .chain(ranges.iter().map(|r| r.x_max))
        .chain(unplaced.iter().map(|m| m.x))
        .fold(min_x_max.max(1.0), f64::max)
        .log2()
        .ceil();
    let font = font_for(root.dim_in_pixel().0);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", caption_font(title, root.dim_in_pixel().0)))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(78)
        .build_cartesian_2d(-0.3f64..xmax + 0.3, 0f64..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(xmax as usize + 1)
        .x_label_formatter(&|x| format!("{}", 2f64.powf(*x).round()))
        .y_label_formatter(&|y| if ymax < 20.0 { format!("{y:.1}") } else { format!("{y:.0}") })
        .x_desc("concurrent requests (log2)")
        .y_desc(y_desc)
        .label_style(("sans-serif", font))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    if let Some(r) = reference {
        chart
            .draw_series(LineSeries::new([(-0.3, r), (xmax + 0.3, r)], BLACK.mix(0.4).stroke_width(1)))
            .map_err(err)?;
    }
    // Error bands under everything else: predicted x (1 +- e/100), cut at the axes.
    for (mode, pts) in predicted {
        let Some((_, e)) = bands.iter().find(|(m, _)| m == mode) else { continue };
        if pts.len() < 2 || !e.is_finite() || *e <= 0.0 {
            continue;
        }
        let upper = pts.iter().map(|(x, y)| (log2(*x as f64), (y * (1.0 + e / 100.0)).min(ymax)));
        let lower = pts.iter().rev().map(|(x, y)| (log2(*x as f64), (y * (1.0 - e / 100.0)).max(0.0)));
        let fill = mode_colour(*mode).mix(0.15).filled();
        chart.draw_series(std::iter::once(Polygon::new(upper.chain(lower).collect::<Vec<_>>(), fill))).map_err(err)?;
    }
    // Published ranges over the bands, under the curves: a translucent rectangle in the mode's colour with a
    // thin outline, spanning the stated concurrency and throughput bounds.
    if !ranges.is_empty() {
        let rect = |r: &RangeMarker| [(log2(r.x_min), r.y_max), (log2(r.x_max), r.y_min)];
        chart
            .draw_series(ranges.iter().map(|r| Rectangle::new(rect(r), mode_colour(r.mode).mix(0.22).filled())))
            .map_err(err)?;
        chart
            .draw_series(ranges.iter().map(|r| Rectangle::new(rect(r), mode_colour(r.mode).stroke_width(1))))
            .map_err(err)?;
    }
    // The planner has no published points and its curves often coincide: thinner lines are drawn over thicker
    // ones, PD dashed, and each mode's predicted points get the mode's marker shape.
    for (mode, pts) in curve_order(predicted, emphasis) {
        let c = mode_colour(*mode);
        let width = curve_width(*mode, emphasis);
        let xy = pts.iter().map(|(x, y)| (log2(*x as f64), *y)).collect::<Vec<_>>();
        if emphasis.is_some() && *mode == Mode::Pd {
            chart.draw_series(DashedLineSeries::new(xy.clone(), 9, 6, c.stroke_width(width))).map_err(err)?;
        } else {
            chart.draw_series(LineSeries::new(xy.clone(), c.stroke_width(width))).map_err(err)?;
        }
        if emphasis.is_some() {
            // Marker shapes as on the other charts (single circle, tp2 triangle, pd square), hollow so a
            // coinciding mode's marker shows through.
            let st = c.stroke_width(2);
            match mode {
                Mode::Single => chart.draw_series(xy.iter().map(|p| Circle::new(*p, 4, c.filled()))).map_err(err)?,
                Mode::Tp2 => {
                    chart
                        .draw_series(xy.iter().map(|p| {
                            EmptyElement::at(*p) + PathElement::new(vec![(0, -7), (7, 5), (-7, 5), (0, -7)], st)
                        }))
                        .map_err(err)?
                }
                Mode::Pd => chart
                    .draw_series(xy.iter().map(|p| EmptyElement::at(*p) + Rectangle::new([(-6, -6), (6, 6)], st)))
                    .map_err(err)?,
                Mode::Dp2 => chart.draw_series(xy.iter().map(|p| Cross::new(*p, 6, st))).map_err(err)?,
            };
        }
    }
    if !claims.is_empty() {
        // Under the published ratios, which often sit at the same place (the claim restates them).
        claim_markers(&mut chart, claims, font, xmax)?;
    }
    for mode in Mode::ALL {
        let pts: Vec<&Marker> = measured.iter().filter(|m| m.mode == mode).collect();
        if !pts.is_empty() {
            markers(&mut chart, mode, &pts)?;
        }
    }
    // Values stated without a concurrency: small hollow diamonds at the likely concurrency.
    if !unplaced.is_empty() {
        chart
            .draw_series(unplaced.iter().map(|m| {
                EmptyElement::at((log2(m.x), m.y)) + PathElement::new(diamond(6), mode_colour(m.mode).stroke_width(2))
            }))
            .map_err(err)?;
    }
    // The legend in its strip under the plot, where it hides nothing.
    draw_legend(&strip, &entries, &layout)?;
    let hits = measured
        .iter()
        .map(|m| (m.x, m.y))
        .chain(unplaced.iter().map(|m| (m.x, m.y)))
        .map(|(x, y)| chart.backend_coord(&(log2(x), y)))
        .chain(
            ranges
                .iter()
                .map(|r| chart.backend_coord(&((log2(r.x_min) + log2(r.x_max)) / 2.0, (r.y_min + r.y_max) / 2.0))),
        )
        .collect();
    root.present().map_err(err)?;
    Ok(hits)
}

/// Output tokens/s against concurrency for one model and workload.
pub fn draw_sweep<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &SweepChartData) -> Result<(), String> {
    draw_sweep_mapped(root, data).map(|_| ())
}

/// `draw_sweep`, returning where each published point (`data.measured`, in order) was drawn, then each value
/// stated without a concurrency (`data.unplaced`) and the centre of each range (`data.ranges`).
pub fn draw_sweep_mapped<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    data: &SweepChartData,
) -> Result<HitPoints, String> {
    mode_chart(root, &data.title, "output tokens/s", &data.predicted, &data.measured, sweep_extras(data))
}

fn sweep_extras(data: &SweepChartData) -> Extras<'_> {
    Extras { min_x_max: 256.0, bands: &data.bands, ranges: &data.ranges, unplaced: &data.unplaced, ..Extras::default() }
}

fn gain_extras(data: &GainChartData) -> Extras<'_> {
    Extras { reference: Some(1.0), min_x_max: 256.0, claims: &data.claims, ..Extras::default() }
}

fn plan_extras(data: &PlanChartData) -> Extras<'_> {
    let emphasis = data.recommended.or(Some(Mode::Single));
    Extras { emphasis, min_x_max: f64::from(data.concurrency_max.max(1)), ..Extras::default() }
}

/// Pair over one station at equal concurrency, with the 1x line and the report's claims.
pub fn draw_gain<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &GainChartData) -> Result<(), String> {
    mode_chart(root, &data.title, "pair / one station (x)", &data.predicted, &data.measured, gain_extras(data))
        .map(|_| ())
}

/// The planner: predicted output tokens/s of one machine, TP2 and PD over the concurrency range.
pub fn draw_plan<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &PlanChartData) -> Result<(), String> {
    mode_chart(root, &data.title, "predicted output tokens/s", &data.predicted, &[], plan_extras(data)).map(|_| ())
}

/// Human message size for a log2 byte count.
pub fn size_label(log2_bytes: f64) -> String {
    let b = 2f64.powf(log2_bytes.round());
    for (unit, f) in [("GiB", 2f64.powi(30)), ("MiB", 2f64.powi(20)), ("KiB", 1024.0)] {
        if b >= f {
            return format!("{}{unit}", (b / f).round());
        }
    }
    format!("{b}B")
}

/// Bus bandwidth against message size per collective, measured rows as dots, and the payload ceiling.
pub fn draw_fabric<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &FabricChartData) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let entries = fabric_legend(data);
    let (plot, strip, layout) = split_legend(&root, &entries);
    let ymax = data
        .predicted
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .chain([data.ceiling_gbps])
        .fold(1.0f64, f64::max)
        * 1.12;
    let font = font_for(root.dim_in_pixel().0);
    let mut chart = ChartBuilder::on(&plot)
        .caption(&data.title, ("sans-serif", caption_font(&data.title, root.dim_in_pixel().0)))
        .margin(12)
        .margin_right(34)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(10f64..34f64, 0f64..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(if root.dim_in_pixel().0 < 500 { 7 } else { 13 })
        .x_label_formatter(&|x| size_label(*x))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("message size (log2)")
        .y_desc("bus bandwidth, GB/s")
        .label_style(("sans-serif", font))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    let ceil = data.ceiling_gbps;
    chart.draw_series(LineSeries::new([(10.0, ceil), (34.0, ceil)], BLACK.mix(0.45).stroke_width(3))).map_err(err)?;
    for (i, (name, pts)) in data.predicted.iter().enumerate() {
        let c = OKABE_ITO[i % OKABE_ITO.len()];
        chart.draw_series(LineSeries::new(pts.iter().map(|(x, y)| (log2(*x), *y)), c.stroke_width(2))).map_err(err)?;
        let measured = data.measured.iter().filter(|(n, _, _)| n == name);
        chart
            .draw_series(
                measured.map(|(_, b, g)| EmptyElement::at((log2(*b), *g)) + Circle::new((0, 0), 5, c.filled())),
            )
            .map_err(err)?;
    }
    draw_legend(&strip, &entries, &layout)?;
    root.present().map_err(err)
}

/// The fabric chart's legend: the payload ceiling, then one line per collective.
fn fabric_legend(data: &FabricChartData) -> Vec<LegendEntry> {
    let ceiling = LegendEntry {
        label: format!("payload ceiling {:.2} GB/s", data.ceiling_gbps),
        icon: Icon::Line { style: BLACK.mix(0.45).stroke_width(3), dashed: false },
    };
    std::iter::once(ceiling)
        .chain(data.predicted.iter().enumerate().map(|(i, (name, _))| LegendEntry {
            label: name.clone(),
            icon: Icon::Line { style: OKABE_ITO[i % OKABE_ITO.len()].stroke_width(2), dashed: false },
        }))
        .collect()
}

/// Throughput per GPU against what a user sees, for one side (the frontier view) or two (the compare view):
/// each side's predicted curves per mode (the second side dashed), its published points, the Pareto frontier
/// of its predictions, and the headline read at a chosen tok/s per user.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierChartData {
    pub title: String,
    pub axis: XAxis,
    /// Only the frontier: the curves and the points off it are not drawn.
    pub only: bool,
    /// (label, answer) per side.
    pub sides: Vec<(String, FrontierAnswer)>,
}

impl Default for FrontierChartData {
    fn default() -> Self {
        FrontierChartData { title: String::new(), axis: XAxis::Interactivity, only: false, sides: Vec::new() }
    }
}

/// One point the frontier chart draws: its side, whether predicted, the point.
pub type FrontierDrawn<'a> = (usize, bool, &'a FrontierPoint);

impl FrontierChartData {
    /// Every point the chart draws, in drawing (and hit-point) order: per side its predicted points curve after
    /// curve, then its published points. Points without a value on the axis, and in frontier-only mode the
    /// points off the frontier, are left out.
    pub fn drawn(&self) -> Vec<FrontierDrawn<'_>> {
        let mut out = Vec::new();
        for (i, (_, a)) in self.sides.iter().enumerate() {
            let keep = |p: &FrontierPoint| p.x(self.axis).is_some() && (!self.only || p.on_frontier);
            out.extend(a.predicted().filter(|p| keep(p)).map(|p| (i, true, p)));
            out.extend(a.measured.iter().filter(|p| keep(p)).map(|p| (i, false, p)));
        }
        out
    }

    /// The headline marker of each side that has one, on the interactivity axis only: (side, x, y).
    pub fn headlines(&self) -> Vec<(usize, f64, f64)> {
        if self.axis != XAxis::Interactivity {
            return Vec::new();
        }
        self.sides
            .iter()
            .enumerate()
            .filter_map(|(i, (_, a))| a.headline.as_ref().map(|h| (i, h.tok_s_per_user, h.tok_s_per_gpu)))
            .collect()
    }
}

/// Legend text of the frontier line.
pub const FRONTIER_LEGEND: &str = "Pareto frontier of the predictions (no mode does better on both axes)";

/// A power of two as an axis label: 0.125, 0.5, 1, 2, 64.
fn pow2_label(x: f64) -> String {
    let v = 2f64.powf(x.round());
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn frontier_legend(d: &FrontierChartData) -> Vec<LegendEntry> {
    let mut out = Vec::new();
    let two = d.sides.len() > 1;
    for (i, (label, a)) in d.sides.iter().enumerate() {
        let who = if two { format!("{label}: ") } else { String::new() };
        if !d.only {
            for c in &a.curves {
                out.push(LegendEntry {
                    label: format!("{who}{} predicted", c.mode.name()),
                    icon: Icon::Line { style: mode_colour(c.mode).stroke_width(2), dashed: i == 1 },
                });
            }
        }
        if a.predicted().any(|p| p.on_frontier) {
            out.push(LegendEntry {
                label: if two { format!("{who}Pareto frontier") } else { FRONTIER_LEGEND.into() },
                icon: Icon::Line { style: BLACK.mix(0.35).stroke_width(6), dashed: i == 1 },
            });
        }
        for mode in Mode::ALL {
            if a.measured.iter().any(|p| p.mode == mode && p.x(d.axis).is_some() && (!d.only || p.on_frontier)) {
                out.push(LegendEntry { label: format!("{who}{} published", mode.name()), icon: Icon::Marker(mode) });
            }
        }
    }
    if let Some((i, x, _)) = d.headlines().first() {
        let h = d.sides[*i].1.headline.as_ref();
        let how = if h.is_some_and(|h| h.interpolated) { "interpolated" } else { "a predicted point" };
        out.push(LegendEntry {
            label: format!("per GPU at {} tok/s per user ({how})", fmt_sig(*x)),
            icon: Icon::Claim { hollow: false },
        });
    }
    out
}

/// A positive number with about three significant digits.
pub fn fmt_sig(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Throughput per GPU (y) against the chosen x on a log2 axis; returns the pixel position of every point in
/// `FrontierChartData::drawn` order.
pub fn draw_frontier<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    d: &FrontierChartData,
) -> Result<HitPoints, String> {
    let entries = frontier_legend(d);
    root.fill(&WHITE).map_err(err)?;
    let (plot, strip, layout) = split_legend(&root, &entries);
    let drawn = d.drawn();
    let heads = d.headlines();
    let xs = drawn.iter().filter_map(|(_, _, p)| p.x(d.axis)).chain(heads.iter().map(|h| h.1)).map(log2);
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (lo, hi) = if lo.is_finite() { (lo.floor(), hi.ceil().max(lo.floor() + 1.0)) } else { (0.0, 1.0) };
    let ymax = drawn.iter().map(|(_, _, p)| p.tok_s_per_gpu).chain(heads.iter().map(|h| h.2)).fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let font = font_for(root.dim_in_pixel().0);
    let title = &d.title;
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", caption_font(title, root.dim_in_pixel().0)))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(78)
        .build_cartesian_2d(lo - 0.2..hi + 0.2, 0f64..ymax)
        .map_err(err)?;
    let x_desc =
        format!("{} (log2){}", d.axis.label(), if d.axis.lower_is_better() { ", lower is better" } else { "" });
    chart
        .configure_mesh()
        .x_labels((hi - lo) as usize + 1)
        .x_label_formatter(&|x| pow2_label(*x))
        .y_label_formatter(&|y| if ymax < 20.0 { format!("{y:.1}") } else { format!("{y:.0}") })
        .x_desc(x_desc)
        .y_desc("output tokens/s per GPU")
        .label_style(("sans-serif", font))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    let xy = |p: &FrontierPoint| p.x(d.axis).map(|x| (log2(x), p.tok_s_per_gpu));
    for (i, (_, a)) in d.sides.iter().enumerate() {
        // The frontier first, wide and grey, so the curves it follows stay visible on top of it.
        let mut front: Vec<(f64, f64)> = a.predicted().filter(|p| p.on_frontier).filter_map(xy).collect();
        sim_core::stats::sort_by(&mut front, |p, q| p.0.total_cmp(&q.0));
        let fs = BLACK.mix(0.3).stroke_width(7);
        if i == 1 {
            chart.draw_series(DashedLineSeries::new(front.clone(), 12, 6, fs)).map_err(err)?;
        } else {
            chart.draw_series(LineSeries::new(front.clone(), fs)).map_err(err)?;
        }
        if !d.only {
            for c in &a.curves {
                let pts: Vec<(f64, f64)> = c.points.iter().filter_map(xy).collect();
                let st = mode_colour(c.mode).stroke_width(2);
                if i == 1 {
                    chart.draw_series(DashedLineSeries::new(pts, 9, 6, st)).map_err(err)?;
                } else {
                    chart.draw_series(LineSeries::new(pts, st)).map_err(err)?;
                }
            }
        }
        // Predicted points: small dots in the mode's colour, ringed in black on the frontier.
        let dots = drawn.iter().filter(|(s, pred, _)| *s == i && *pred);
        chart
            .draw_series(dots.filter_map(|(_, _, p)| {
                let at = xy(p)?;
                let r = if p.on_frontier { 4 } else { 3 };
                Some(EmptyElement::at(at) + Circle::new((0, 0), r, mode_colour(p.mode).filled()))
            }))
            .map_err(err)?;
        let ringed = drawn.iter().filter(|(s, _, p)| *s == i && p.on_frontier);
        chart
            .draw_series(ringed.filter_map(|(_, _, p)| Some(Circle::new(xy(p)?, 8, BLACK.stroke_width(1)))))
            .map_err(err)?;
        for mode in Mode::ALL {
            let pts: Vec<Marker> = drawn
                .iter()
                .filter(|(s, pred, p)| *s == i && !*pred && p.mode == mode)
                .filter_map(|(_, _, p)| p.x(d.axis).map(|x| Marker { mode, x, y: p.tok_s_per_gpu, hollow: p.flagged }))
                .collect();
            if !pts.is_empty() {
                markers(&mut chart, mode, &pts.iter().collect::<Vec<_>>())?;
            }
        }
    }
    for (_, x, y) in &heads {
        let at = (log2(*x), *y);
        chart
            .draw_series(LineSeries::new([(log2(*x), 0.0), (log2(*x), ymax)], CLAIM_COLOUR.mix(0.6).stroke_width(1)))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(EmptyElement::at(at) + Polygon::new(diamond(8), CLAIM_COLOUR.filled())))
            .map_err(err)?;
    }
    draw_legend(&strip, &entries, &layout)?;
    let hits = drawn.iter().filter_map(|(_, _, p)| xy(p)).map(|at| chart.backend_coord(&at)).collect();
    root.present().map_err(err)?;
    Ok(hits)
}

/// Whichever chart the page shows.
#[derive(Debug, Clone, PartialEq)]
pub enum ChartSpec {
    Sweep(SweepChartData),
    Frontier(FrontierChartData),
    Gain(GainChartData),
    Fabric(FabricChartData),
    Plan(PlanChartData),
}

impl ChartSpec {
    pub fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<(), String> {
        self.draw_mapped(root).map(|_| ())
    }

    /// Draws and returns where the published points went (empty for charts without hover).
    pub fn draw_mapped<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<HitPoints, String> {
        match self {
            ChartSpec::Sweep(d) => draw_sweep_mapped(root, d),
            ChartSpec::Frontier(d) => draw_frontier(root, d),
            ChartSpec::Gain(d) => draw_gain(root, d).map(|_| Vec::new()),
            ChartSpec::Fabric(d) => draw_fabric(root, d).map(|_| Vec::new()),
            ChartSpec::Plan(d) => draw_plan(root, d).map(|_| Vec::new()),
        }
    }

    /// Height in pixels of the legend strip under the plot when the chart is drawn `width` pixels wide: the page
    /// adds it to the plot's height so the legend never takes room from the data.
    pub fn legend_height(&self, width: u32) -> u32 {
        let entries = match self {
            ChartSpec::Sweep(d) => mode_legend(&d.predicted, &d.measured, &sweep_extras(d)),
            ChartSpec::Frontier(d) => frontier_legend(d),
            ChartSpec::Gain(d) => mode_legend(&d.predicted, &d.measured, &gain_extras(d)),
            ChartSpec::Fabric(d) => fabric_legend(d),
            ChartSpec::Plan(d) => mode_legend(&d.predicted, &[], &plan_extras(d)),
        };
        layout_of(&entries, width).height
    }

    /// Sum of every predicted value: a cheap fingerprint the browser test watches for what-if changes.
    pub fn predicted_sum(&self) -> f64 {
        match self {
            ChartSpec::Sweep(d) => d.predicted.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)).sum(),
            ChartSpec::Frontier(d) => d.sides.iter().flat_map(|(_, a)| a.predicted().map(|p| p.tok_s_per_gpu)).sum(),
            ChartSpec::Gain(d) => d.predicted.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)).sum(),
            ChartSpec::Fabric(d) => d.predicted.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)).sum(),
            ChartSpec::Plan(d) => d.predicted.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)).sum(),
        }
    }
}

//! The legend strip under every chart: entries drawn with the plot's own shapes, laid out to the width before
//! drawing so the page can size the canvas.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sim_core::Mode;

use super::{diamond, err, mode_colour, CLAIM_COLOUR};

/// What a legend entry shows before its text: the same shapes the plot draws.
#[derive(Debug, Clone)]
pub(super) enum Icon {
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
pub(super) struct LegendEntry {
    pub(super) label: String,
    pub(super) icon: Icon,
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
pub(super) fn font_for(w: u32) -> u32 {
    if w < 500 {
        12
    } else {
        15
    }
}

/// Font size of a chart's title: three more than the axis labels', or as large as the axis labels' when that
/// would not fit the width (long titles on phones).
pub(super) fn caption_font(title: &str, w: u32) -> u32 {
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
pub(super) struct LegendLayout {
    font: u32,
    /// Per entry: left edge, vertical centre of its first line, and its lines; relative to the strip.
    items: Vec<(i32, i32, Vec<String>)>,
    pub(super) height: u32,
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

pub(super) fn layout_of(entries: &[LegendEntry], width: u32) -> LegendLayout {
    legend_layout(&entries.iter().map(|e| e.label.as_str()).collect::<Vec<_>>(), width)
}

/// Splits `root` into the plot (top) and the legend strip under it, so no legend entry covers the data. The
/// plot keeps at least half the height (a too-short canvas cuts the legend, never the plot).
pub(super) fn split_legend<DB: DrawingBackend>(
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
                Mode::Tp2 | Mode::Ep2 | Mode::Tp4 => area.draw(&TriangleMarker::new((x + 10, y), 5, fs)),
                Mode::Pd | Mode::Pp2 | Mode::Pp4 => area.draw(&Rectangle::new([(x + 6, y - 4), (x + 14, y + 4)], fs)),
                Mode::Dp2 | Mode::Dp4 | Mode::Dpep2 => {
                    area.draw(&Cross::new((x + 10, y), 4, mode_colour(*mode).stroke_width(2)))
                }
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
pub(super) fn draw_legend<DB: DrawingBackend>(
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

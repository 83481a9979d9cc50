//! What the throughput, gain and planner charts share: log2 concurrency on x, curves per mode, and the published
//! marks (points, ranges, values stated without a concurrency) with their legend.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sim_core::explore::ClaimMarker;
use sim_core::Mode;

use super::legend::{caption_font, draw_legend, font_for, split_legend, Icon, LegendEntry};
use super::{diamond, err, log2, mode_colour, Chart, HitPoints, CLAIM_COLOUR};

/// A published point on a chart; `hollow` for flagged points (dips, other checkpoints).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub mode: Mode,
    pub x: f64,
    pub y: f64,
    pub hollow: bool,
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

/// Draws the markers of one mode: single circle, tp2 triangle, pd square; flagged points
/// are stroked only (hollow).
pub(super) fn markers<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    mode: Mode,
    pts: &[&Marker],
) -> Result<(), String> {
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
        Mode::Tp2 | Mode::Ep2 | Mode::Tp4 => {
            chart
                .draw_series(filled.iter().map(|m| EmptyElement::at(xy(&m)) + TriangleMarker::new((0, 0), 7, fs)))
                .map_err(err)?;
            let t = 7;
            let tri = vec![(0, -t), (t, t * 2 / 3), (-t, t * 2 / 3), (0, -t)];
            chart
                .draw_series(hollow.iter().map(|m| EmptyElement::at(xy(&m)) + PathElement::new(tri.clone(), hs)))
                .map_err(err)?;
        }
        Mode::Pd | Mode::Pp2 | Mode::Pp4 => {
            chart
                .draw_series(filled.iter().map(|m| EmptyElement::at(xy(&m)) + Rectangle::new([(-5, -5), (5, 5)], fs)))
                .map_err(err)?;
            chart
                .draw_series(hollow.iter().map(|m| EmptyElement::at(xy(&m)) + Rectangle::new([(-5, -5), (5, 5)], hs)))
                .map_err(err)?;
        }
        Mode::Dp2 | Mode::Dp4 | Mode::Dpep2 => {
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
pub(super) struct Extras<'a> {
    pub(super) reference: Option<f64>,
    pub(super) emphasis: Option<Mode>,
    pub(super) min_x_max: f64,
    pub(super) bands: &'a [(Mode, f64)],
    pub(super) claims: &'a [ClaimMarker],
    pub(super) ranges: &'a [RangeMarker],
    pub(super) unplaced: &'a [UnplacedMarker],
}

/// Line width of a predicted curve: on the planner (which has no published points and where curves often
/// coincide) the recommended mode is thickest and the others differ too, so overlapping lines stay visible.
fn curve_width(mode: Mode, emphasis: Option<Mode>) -> u32 {
    match emphasis {
        None => 2,
        Some(e) if e == mode => 5,
        Some(_) => match mode {
            Mode::Single => 3,
            Mode::Tp2
            | Mode::Pd
            | Mode::Dp2
            | Mode::Pp2
            | Mode::Ep2
            | Mode::Dpep2
            | Mode::Tp4
            | Mode::Pp4
            | Mode::Dp4 => 2,
        },
    }
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
pub(super) fn mode_legend(
    predicted: &[(Mode, Vec<(u32, f64)>)],
    measured: &[Marker],
    extras: &Extras,
) -> Vec<LegendEntry> {
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
pub(super) fn mode_chart<DB: DrawingBackend>(
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
                Mode::Tp2 | Mode::Ep2 | Mode::Tp4 => {
                    chart
                        .draw_series(xy.iter().map(|p| {
                            EmptyElement::at(*p) + PathElement::new(vec![(0, -7), (7, 5), (-7, 5), (0, -7)], st)
                        }))
                        .map_err(err)?
                }
                Mode::Pd | Mode::Pp2 | Mode::Pp4 => chart
                    .draw_series(xy.iter().map(|p| EmptyElement::at(*p) + Rectangle::new([(-6, -6), (6, 6)], st)))
                    .map_err(err)?,
                Mode::Dp2 | Mode::Dp4 | Mode::Dpep2 => {
                    chart.draw_series(xy.iter().map(|p| Cross::new(*p, 6, st))).map_err(err)?
                }
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

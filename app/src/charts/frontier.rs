//! The frontier chart: throughput per GPU against what a user sees, the Pareto frontier and the headline.

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::explore::{FrontierAnswer, FrontierPoint, XAxis};
use sim_core::Mode;

use super::legend::{caption_font, draw_legend, font_for, split_legend, Icon, LegendEntry};
use super::mode_chart::{markers, Marker};
use super::{diamond, err, log2, mode_colour, HitPoints, CLAIM_COLOUR};

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

pub(super) fn frontier_legend(d: &FrontierChartData) -> Vec<LegendEntry> {
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

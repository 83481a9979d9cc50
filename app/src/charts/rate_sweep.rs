//! The rate sweep's chart: median and 90th-percentile time to first token against the offered request rate.

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::Mode;

use super::legend::{caption_font, draw_legend, font_for, split_legend, Icon, LegendEntry};
use super::{err, mode_colour};

/// One finite offered rate (requests/s) with its median and 90th-percentile TTFT (seconds).
pub type RateTtft = (f64, f64, f64);

/// Per mode, its rates' TTFTs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateChartData {
    pub title: String,
    pub modes: Vec<(Mode, Vec<RateTtft>)>,
}

/// Median TTFT solid, the 90th percentile dashed, one colour per mode, against the offered rate.
pub fn draw_rate_sweep<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &RateChartData) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let entries = rate_legend(data);
    let (plot, strip, layout) = split_legend(&root, &entries);
    let pts = || data.modes.iter().flat_map(|(_, v)| v.iter());
    let xmax = pts().map(|p| p.0).fold(0.0f64, f64::max);
    let xmax = if xmax > 0.0 { xmax * 1.08 } else { 1.0 };
    let ymax = pts().flat_map(|p| [p.1, p.2]).filter(|y| y.is_finite()).fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let w = root.dim_in_pixel().0;
    let mut chart = ChartBuilder::on(&plot)
        .caption(&data.title, ("sans-serif", caption_font(&data.title, w)))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .y_label_formatter(&|y| if ymax < 10.0 { format!("{y:.2}") } else { format!("{y:.0}") })
        .x_desc("offered request rate, requests/s")
        .y_desc("time to first token, s")
        .label_style(("sans-serif", font_for(w)))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    for (mode, v) in &data.modes {
        let c = mode_colour(*mode);
        let median: Vec<(f64, f64)> = v.iter().map(|p| (p.0, p.1)).filter(|p| p.1.is_finite()).collect();
        let p90: Vec<(f64, f64)> = v.iter().map(|p| (p.0, p.2)).filter(|p| p.1.is_finite()).collect();
        chart.draw_series(LineSeries::new(median.clone(), c.stroke_width(2))).map_err(err)?;
        chart.draw_series(median.iter().map(|&p| Circle::new(p, 4, c.filled()))).map_err(err)?;
        chart.draw_series(DashedLineSeries::new(p90, 9, 6, c.stroke_width(2))).map_err(err)?;
    }
    draw_legend(&strip, &entries, &layout)?;
    root.present().map_err(err)
}

/// One solid (median) and one dashed (90th percentile) entry per mode.
fn rate_legend(data: &RateChartData) -> Vec<LegendEntry> {
    data.modes
        .iter()
        .flat_map(|(m, _)| {
            let style = mode_colour(*m).stroke_width(2);
            [
                LegendEntry { label: format!("{} median TTFT", m.name()), icon: Icon::Line { style, dashed: false } },
                LegendEntry { label: format!("{} p90 TTFT", m.name()), icon: Icon::Line { style, dashed: true } },
            ]
        })
        .collect()
}

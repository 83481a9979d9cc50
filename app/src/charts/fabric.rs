//! The fabric chart: bus bandwidth against message size per collective, and the payload ceiling.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{caption_font, draw_legend, font_for, split_legend, Icon, LegendEntry};
use super::{err, log2, OKABE_ITO};

/// Bus bandwidth (GB/s) against message size (bytes) per collective, measured rows, payload ceiling.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FabricChartData {
    pub title: String,
    pub predicted: Vec<(String, Vec<(f64, f64)>)>,
    pub measured: Vec<(String, f64, f64)>,
    pub ceiling_gbps: f64,
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
pub(super) fn fabric_legend(data: &FabricChartData) -> Vec<LegendEntry> {
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

//! The charts as pure functions over any plotters backend (canvas in the browser, SVG in tests): one file per
//! chart, the legend strip and the concurrency-axis drawing they share in files of their own.

mod fabric;
mod frontier;
mod gain;
mod legend;
mod mode_chart;
mod plan;
mod rate_sweep;
mod sweep;

pub use fabric::{draw_fabric, size_label, FabricChartData};
pub use frontier::{draw_frontier, fmt_sig, FrontierChartData, FrontierDrawn, FRONTIER_LEGEND};
pub use gain::{draw_gain, ClaimMarker, GainChartData};
pub use mode_chart::{Marker, RangeMarker, UnplacedMarker, RANGE_LEGEND, UNPLACED_LEGEND};
pub use plan::{draw_plan, PlanChartData, PlanPoint};
pub use rate_sweep::{draw_rate_sweep, RateChartData};
pub use sweep::{draw_sweep, draw_sweep_mapped, SweepChartData, BAND_LEGEND};

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::Mode;

use fabric::fabric_legend;
use frontier::frontier_legend;
use gain::gain_extras;
use legend::layout_of;
use mode_chart::mode_legend;
use plan::plan_extras;
use sweep::sweep_extras;

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

/// Colour of the report's claims on the gain chart (none of the modes' colours).
pub const CLAIM_COLOUR: RGBColor = OKABE_ITO[5];

/// Colour of a mode: single blue, tp2 vermillion, pd bluish green.
pub fn mode_colour(m: Mode) -> RGBColor {
    match m {
        Mode::Single => OKABE_ITO[0],
        Mode::Tp2 => OKABE_ITO[1],
        Mode::Pd => OKABE_ITO[2],
        Mode::Dp2 => OKABE_ITO[3],
        Mode::Pp2 => OKABE_ITO[4],
        Mode::Ep2 => OKABE_ITO[6],
        // DP+EP: expert parallel's hue, darkened, in the copies' shape (each machine its own requests).
        Mode::Dpep2 => darker(OKABE_ITO[6]),
        // Four machines: the pair's mode of the same kind, darkened, so a family reads as one hue.
        Mode::Tp4 => darker(OKABE_ITO[1]),
        Mode::Pp4 => darker(OKABE_ITO[4]),
        Mode::Dp4 => darker(OKABE_ITO[3]),
    }
}

/// A colour at 60% of its brightness.
fn darker(c: RGBColor) -> RGBColor {
    let d = |x: u8| (u16::from(x) * 3 / 5) as u8;
    RGBColor(d(c.0), d(c.1), d(c.2))
}

/// Marker shape name of a mode, for the page's legend text: single circle, tp2 triangle, pd square.
pub fn mode_shape(m: Mode) -> &'static str {
    match m {
        Mode::Single => "circle",
        Mode::Tp2 => "triangle",
        Mode::Pd => "square",
        Mode::Dp2 => "cross",
        // The pipeline and expert-parallel modes take PD's and TP2's shapes in their own colours.
        Mode::Pp2 => "square",
        Mode::Ep2 => "triangle",
        Mode::Dpep2 => "cross",
        // Four machines take their pair mode's shape in a darker colour.
        Mode::Tp4 => "triangle",
        Mode::Pp4 => "square",
        Mode::Dp4 => "cross",
    }
}

/// Where a chart put its published points, in the drawing area's pixels: what the page's hover tooltip looks up.
/// On the throughput chart: `measured` in order, then `unplaced` in order, then the centre of each of `ranges`.
pub type HitPoints = Vec<(i32, i32)>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

fn log2(x: f64) -> f64 {
    x.max(1e-9).log2()
}

type Chart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

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

/// A diamond outline around (0, 0) of half-diagonal `r`.
fn diamond(r: i32) -> Vec<(i32, i32)> {
    vec![(0, -r), (r, 0), (0, r), (-r, 0), (0, -r)]
}

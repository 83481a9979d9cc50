//! The throughput chart: output tokens/s against concurrency for one model and workload.

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::explore::PointLatencies;
use sim_core::Mode;

use super::mode_chart::{mode_chart, Extras, Marker, RangeMarker, UnplacedMarker};
use super::HitPoints;

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

/// Legend text of the throughput chart's error band.
pub const BAND_LEGEND: &str = "band: 90th-percentile error of the fitted points for this model and mode";

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

pub(super) fn sweep_extras(data: &SweepChartData) -> Extras<'_> {
    Extras { min_x_max: 256.0, bands: &data.bands, ranges: &data.ranges, unplaced: &data.unplaced, ..Extras::default() }
}

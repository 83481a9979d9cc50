//! The planner chart: predicted throughput per mode over a scenario's concurrency range.

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::Mode;

use super::mode_chart::{mode_chart, Extras};

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

pub(super) fn plan_extras(data: &PlanChartData) -> Extras<'_> {
    let emphasis = data.recommended.or(Some(Mode::Single));
    Extras { emphasis, min_x_max: f64::from(data.concurrency_max.max(1)), ..Extras::default() }
}

/// The planner: predicted output tokens/s of one machine, TP2 and PD over the concurrency range.
pub fn draw_plan<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &PlanChartData) -> Result<(), String> {
    mode_chart(root, &data.title, "predicted output tokens/s", &data.predicted, &[], plan_extras(data)).map(|_| ())
}

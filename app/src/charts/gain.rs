//! The gain chart: the pair over one station at equal concurrency, with the report's claims.

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::Mode;

use super::mode_chart::{mode_chart, Extras, Marker};

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

pub(super) fn gain_extras(data: &GainChartData) -> Extras<'_> {
    Extras { reference: Some(1.0), min_x_max: 256.0, claims: &data.claims, ..Extras::default() }
}

/// Pair over one station at equal concurrency, with the 1x line and the report's claims.
pub fn draw_gain<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &GainChartData) -> Result<(), String> {
    mode_chart(root, &data.title, "pair / one station (x)", &data.predicted, &data.measured, gain_extras(data))
        .map(|_| ())
}

//! Page components: the chart canvas, the controls, export buttons, and the table under each view.

pub mod accuracy;
pub mod backend;
pub mod chart;
pub mod controls;
pub mod explorer;
pub mod export;
pub mod fabric;
pub mod frontier;
pub mod gain;
pub mod plan;
pub mod rate_sweep;
pub mod target;

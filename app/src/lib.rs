//! twotower browser explorer. Pure modules (data, state, compute, frontier, charts, csv) build natively for tests;
//! the page (app, views and the fetching of its data files) only builds for wasm32.

pub mod charts;
pub mod compute;
pub mod csv;
pub mod data;
pub mod frontier;
pub mod html;
pub mod meta;
pub mod rates;
pub mod state;
pub mod tables;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod fetch;
#[cfg(target_arch = "wasm32")]
mod views;

#[cfg(target_arch = "wasm32")]
pub use app::mount;

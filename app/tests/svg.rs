//! Native test of the chart functions: render to SVG and count what was drawn.

use plotters::prelude::*;
use twotower_app::{charts, compute, csv, data, state::UrlState};

fn render(f: impl FnOnce(DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), String>) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 520)).into_drawing_area();
        f(root).expect("draw");
    }
    svg
}

#[test]
fn bundled_dataset_loads_without_errors() {
    let b = data::load();
    assert!(b.errors.is_empty(), "{:#?}", b.errors);
    assert_eq!(b.model_ids().len(), 5);
}

#[test]
fn sweep_chart_draws_every_marker_and_curve() {
    let b = data::load();
    let models = b.model_ids();
    let (st, _) = UrlState::parse("model=glm-5.2&workload=512-512", &models);
    let (d, rows) = compute::sweep(&b, &st);
    // glm-5.2 512/512: 2 single points, 5 tp2 points (one a dip), curves for every mode of the scenario.
    assert_eq!(d.measured.len(), 7);
    assert_eq!(rows.len(), 7);
    assert_eq!(d.measured.iter().filter(|m| m.hollow).count(), 1);
    assert_eq!(d.predicted.len(), 3);
    assert!(d.predicted.iter().all(|(_, v)| v.len() == 9), "{:?}", d.predicted);
    let svg = render(|root| charts::draw_sweep(root, &d));
    // single markers are circles (2 points + 1 legend icon); filled tp2 triangles (4 + 1 legend) are polygons.
    assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
    assert_eq!(svg.matches("<polygon").count(), 5);
    // One polyline per predicted curve, the legend's three line icons, and the hollow (dip) triangle's outline.
    assert!(svg.matches("<polyline").count() >= 7);
    assert!(svg.contains("glm-5.2"));
    // Hollow markers are stroked, not filled.
    assert!(svg.contains("fill=\"none\""));
    std::fs::create_dir_all(concat!(env!("CARGO_TARGET_TMPDIR"), "/svg")).unwrap();
    std::fs::write(concat!(env!("CARGO_TARGET_TMPDIR"), "/svg/sweep.svg"), &svg).unwrap();
    assert!(csv::sweep(&d).lines().count() == 1 + 27 + 7);
}

#[test]
fn what_if_moves_the_curve_not_the_points() {
    let b = data::load();
    let models = b.model_ids();
    let (base, _) = UrlState::parse("model=glm-5.2", &models);
    let (fast, _) = UrlState::parse("model=glm-5.2&hbm=20&slow=2000", &models);
    let (a, _) = compute::sweep(&b, &base);
    let (c, _) = compute::sweep(&b, &fast);
    assert_eq!(a.measured, c.measured);
    assert_ne!(a.predicted, c.predicted);
}

#[test]
fn gain_and_fabric_charts_draw() {
    let b = data::load();
    let models = b.model_ids();
    let (st, _) = UrlState::parse("model=glm-5.2&view=gain", &models);
    let g = compute::gain(&b, &st);
    assert_eq!(g.predicted.len(), 2);
    assert_eq!(g.measured.len(), 2, "{:?}", g.measured);
    let svg = render(|root| charts::draw_gain(root, &g));
    assert!(svg.contains("pair / one station"));
    let f = compute::fabric(&b, &st);
    assert!((f.ceiling_gbps - 98.04).abs() < 0.01, "{}", f.ceiling_gbps);
    assert!(f.predicted.len() >= 6);
    let svg = render(|root| charts::draw_fabric(root, &f));
    assert_eq!(svg.matches("<circle").count(), f.measured.len());
    assert!(csv::fabric(&f).contains("all_reduce"));
}

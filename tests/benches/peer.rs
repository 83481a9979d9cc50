//! sim-core and inference-lab 1.0 side by side: the time each takes for one whole sweep of every peer
//! cross-check case (the same points, from `peer_cases.rs`, that `crosscheck.rs` holds to its bounds), then a
//! table of both times, their ratio and how closely the two tools' tok/s agree on that sweep.
//!
//! Run with `cargo bench -p twotower-tests --bench peer`.

#[path = "../peer_cases.rs"]
#[allow(dead_code)] // the cases past the KV edge are cross-checked, not timed
mod peer_cases;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use inference_lab::config::Config;
use peer_cases::{
    inference_lab_config, inference_lab_point, roofline_coefficients, sim_core_point, sim_core_scenario, Case, Point,
    CASES,
};
use sim_core::model::Coefficients;
use sim_core::scenario::Scenario;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One case's sweep with each tool's inputs built once, outside the timing: sim-core's scenario and
/// inference-lab's configurations (cloned per run, since its simulator takes the configuration by value).
struct Sweep {
    case: &'static Case,
    points: Vec<Point>,
    scenario: Scenario,
    k: Coefficients,
    configs: Vec<Config>,
}

impl Sweep {
    fn new(case: &'static Case) -> Self {
        let points = case.points();
        let configs = points.iter().map(|&p| inference_lab_config(case, p)).collect();
        Sweep { case, scenario: sim_core_scenario(case), k: roofline_coefficients(), points, configs }
    }

    /// Output tok/s at every point, from sim-core.
    fn sim_core(&self) -> Vec<f64> {
        self.points.iter().map(|&p| sim_core_point(&self.scenario, &self.k, p).output_tok_s).collect()
    }

    /// Output tok/s at every point, from inference-lab.
    fn inference_lab(&self) -> Vec<f64> {
        self.configs.iter().map(|c| inference_lab_point(self.case, c.clone())).collect()
    }
}

/// Median wall time of one call of `f`, over as many calls as fit in `budget` (at least 3, so one slow outlier
/// on a shared machine does not decide the number).
fn median_time<T>(budget: Duration, mut f: impl FnMut() -> T) -> (Duration, usize) {
    let start = Instant::now();
    let mut times = Vec::new();
    while times.len() < 3 || (start.elapsed() < budget && times.len() < 10_000) {
        let t = Instant::now();
        black_box(f());
        times.push(t.elapsed());
    }
    times.sort();
    (times[times.len() / 2], times.len())
}

/// Criterion's measurement time for a routine taking about `once`: 10 samples of at least one call each (a
/// shorter budget makes criterion warn and stretch it anyway), and no less than a second for fast ones.
fn measurement_time(once: Duration) -> Duration {
    (once * 12).max(Duration::from_secs(1))
}

fn benches(c: &mut Criterion) {
    let sweeps: Vec<Sweep> = CASES.into_iter().map(Sweep::new).collect();
    for sw in &sweeps {
        let mut g = c.benchmark_group(format!("peer_sweep_{}", sw.case.id));
        // An inference-lab sweep takes long enough that criterion's default linear sampling (1 + 2 + ... + 10
        // calls per sample point) would run it dozens of times; flat sampling keeps it at about ten.
        g.sampling_mode(SamplingMode::Flat).sample_size(10).warm_up_time(Duration::from_millis(300));
        let once = time_once(|| sw.sim_core());
        g.measurement_time(measurement_time(once));
        g.bench_function("sim-core", |b| b.iter(|| sw.sim_core()));
        let once = time_once(|| sw.inference_lab());
        g.measurement_time(measurement_time(once));
        g.bench_function("inference-lab", |b| b.iter(|| sw.inference_lab()));
        g.finish();
    }
    // `cargo test --benches` runs each routine once to check it works (no `--bench` argument): skip the table.
    if std::env::args().any(|a| a == "--bench") {
        summary(&sweeps);
    }
}

fn time_once<T>(f: impl FnOnce() -> T) -> Duration {
    let t = Instant::now();
    black_box(f());
    t.elapsed()
}

/// The side-by-side table: its own timings (median of repeated sweeps, `std::time::Instant`), since criterion
/// keeps its estimates to itself; and the agreement the cross-check bounds, so a speed-up that broke accuracy
/// fails here too.
fn summary(sweeps: &[Sweep]) {
    println!();
    println!("Peer side by side: median wall time of one whole sweep (std::time::Instant, after the criterion groups)");
    println!(
        "{:<12} {:>6} {:>20} {:>21} {:>12} {:>17} {:>7}",
        "case", "points", "sim-core/sweep", "inference-lab/sweep", "ratio (i/s)", "max |tok/s diff|", "bound"
    );
    let mut failures = Vec::new();
    for sw in sweeps {
        let (ours_t, ours_n) = median_time(Duration::from_secs(2), || sw.sim_core());
        let (theirs_t, theirs_n) = median_time(Duration::from_secs(5), || sw.inference_lab());
        let (ours, theirs) = (sw.sim_core(), sw.inference_lab());
        let mut worst = 0.0_f64;
        let mut within = true;
        for ((&p, &o), &t) in sw.points.iter().zip(&ours).zip(&theirs) {
            let diff = (o / t - 1.0).abs();
            worst = worst.max(diff);
            if diff > sw.case.tolerance(p) {
                within = false;
                failures.push(format!(
                    "{} {}/{} at {}: sim-core {o:.1} vs inference-lab {t:.1} tok/s",
                    sw.case.id, p.isl, p.osl, p.conc
                ));
            }
        }
        println!(
            "{:<12} {:>6} {:>20} {:>21} {:>12} {:>16.2}% {:>7}",
            sw.case.id,
            sw.points.len(),
            format!("{} (n={ours_n})", fmt(ours_t)),
            format!("{} (n={theirs_n})", fmt(theirs_t)),
            format!("{:.1}x", theirs_t.as_secs_f64() / ours_t.as_secs_f64()),
            worst * 100.0,
            if within { "within" } else { "OUT" }
        );
    }
    assert!(
        failures.is_empty(),
        "sim-core and inference-lab disagree beyond the cross-check's bound:\n{}",
        failures.join("\n")
    );
}

/// A duration in the unit that reads best.
fn fmt(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

criterion_group!(all, benches);
criterion_main!(all);

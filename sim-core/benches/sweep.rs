//! Speed of the model: one 9-point sweep per mode, the explorer's whole sweep answer (what one slider move
//! recomputes), an open-loop rate sweep, and the whole `validate` run with the model check.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // only the directory reader is used here
mod fsio;

use criterion::{criterion_group, criterion_main, Criterion};
use sim_core::explore::{SweepQuery, Workspace};
use sim_core::model::open_loop::predict_open_loop;
use sim_core::model::serving::{LengthSpread, OpenLoad};
use sim_core::model::{modes::Sweep, predict, Coefficients};
use sim_core::Mode;
use std::path::Path;

fn benches(c: &mut Criterion) {
    let files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data dir");
    let ws = Workspace::load(&files, None);
    let s = &ws.scenarios["glm-5.2"];
    let k = Coefficients::default();
    for mode in [Mode::Single, Mode::Tp2, Mode::Pd] {
        // As the explorer and the planner run it: one `Sweep`, which runs a saturated loop once.
        c.bench_function(&format!("sweep_9_points_{}", mode.name()), |b| {
            b.iter(|| {
                let mut sweep = Sweep::new(s, &k, 8192, 1024);
                [1, 2, 4, 8, 16, 32, 64, 128, 256].iter().map(|&n| sweep.predict(mode, n).output_tok_s).sum::<f64>()
            })
        });
        // Each point alone (`predict`), as the step loop's own cost.
        c.bench_function(&format!("points_9_alone_{}", mode.name()), |b| {
            b.iter(|| {
                [1, 2, 4, 8, 16, 32, 64, 128, 256]
                    .iter()
                    .map(|&n| predict(s, &k, mode, 8192, 1024, n).output_tok_s)
                    .sum::<f64>()
            })
        });
    }
    // `vllm bench serve`'s rate sweep on one DGX Spark at the settings of a published one (Gemma-4-26B-A4B,
    // djangodevreng/dgx-spark-benchmarks): six rates of 250 prompts, 4000/500 tokens, range ratio 0.9, burstiness 0.7.
    let spark = &ws.scenarios["kubis-gemma-4-26b-a4b-dgx-spark"];
    c.bench_function("open_loop_6_rates_250_prompts_single", |b| {
        b.iter(|| {
            [0.1, 0.2, 0.3, 0.5, 0.7, 1.0]
                .iter()
                .map(|&rate| {
                    let load = OpenLoad {
                        burstiness: 0.7,
                        lengths: LengthSpread::Uniform { range_ratio: 0.9 },
                        seed: 42,
                        ..OpenLoad::poisson(rate, 250)
                    };
                    predict_open_loop(spark, &k, Mode::Single, 4000, 500, &load).expect("the sweep runs").output_tok_s
                })
                .sum::<f64>()
        })
    });
    // The fit is computed once per workspace; warm it so the bench measures the answer alone.
    ws.coefficients();
    ws.error_bands(sim_core::fit::FitSet::All);
    c.bench_function("explore_sweep_answer_glm-5.2_8192_1024", |b| {
        b.iter(|| {
            ws.sweep(&SweepQuery { model: "glm-5.2", isl: 8192, osl: 1024, settings: &[], engine: None })
                .map(|a| a.curves.len())
        })
    });
    let mut g = c.benchmark_group("validate");
    g.sample_size(10);
    g.bench_function("validate_data_with_model_check", |b| {
        b.iter(|| {
            let ws = Workspace::load(&files, None);
            ws.diagnostics.len() + ws.model_check().len()
        })
    });
    g.finish();
}

criterion_group!(all, benches);
criterion_main!(all);

//! Speed of the model: one 9-point sweep, and the whole `validate` run with the model check.

use criterion::{criterion_group, criterion_main, Criterion};
use sim_core::dataset::{load, validate, SourceText};
use sim_core::model::{predict, Coefficients};
use sim_core::{report, Mode};
use std::path::Path;

fn data_files() -> Vec<SourceText> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("data dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let rel = p.strip_prefix(&root).expect("prefix").to_string_lossy().into_owned();
                out.push(SourceText { path: rel, text: std::fs::read_to_string(&p).expect("read") });
            }
        }
    }
    out
}

fn benches(c: &mut Criterion) {
    let files = data_files();
    let (ds, _) = load(&files);
    let (scenarios, _) = report::scenarios_by_model(&ds);
    let s = &scenarios["glm-5.2"];
    let k = Coefficients::default();
    for mode in [Mode::Single, Mode::Tp2, Mode::Pd] {
        c.bench_function(&format!("sweep_9_points_{}", mode.name()), |b| {
            b.iter(|| {
                [1, 2, 4, 8, 16, 32, 64, 128, 256]
                    .iter()
                    .map(|&n| predict(s, &k, mode, 8192, 1024, n).output_tok_s)
                    .sum::<f64>()
            })
        });
    }
    let mut g = c.benchmark_group("validate");
    g.sample_size(10);
    g.bench_function("validate_data_with_model_check", |b| {
        b.iter(|| {
            let (ds, mut d) = load(&files);
            d.extend(validate::check(&ds, None));
            d.extend(report::model_check(&ds));
            d.len()
        })
    });
    g.finish();
}

criterion_group!(all, benches);
criterion_main!(all);

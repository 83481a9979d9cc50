//! The step check: the model's step for the H100 kernel table's layer stack against its measured forward passes.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)]
mod fsio;

use sim_core::explore::Workspace;
use std::path::Path;

fn workspace() -> Workspace {
    let files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data/");
    let ws = Workspace::load(&files, None);
    assert!(ws.is_valid(), "{:?}", ws.errors());
    ws
}

#[test]
fn print_step_check() {
    let ws = workspace();
    let table = &ws.dataset.kernels["h100-sxm"];
    for r in ws.step_check(table).expect("checks") {
        println!(
            "{:?} seqs {} q {} ctx {}: measured {:.3} ms predicted {:.3} ms ({:+.1}%) hbm {:.3} compute {:.3}",
            r.phase,
            r.seqs,
            r.query_tokens,
            r.context,
            r.measured_s * 1e3,
            r.predicted_s * 1e3,
            r.error() * 100.0,
            r.hbm_s * 1e3,
            r.compute_s * 1e3
        );
    }
}

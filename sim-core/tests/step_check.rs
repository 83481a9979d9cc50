//! The step check on the shipped H100 kernel table: the model's step (the `roofline` profile on the table) for
//! the table's compiled layer stack against the whole forward passes the table timed, replayed as CUDA graphs.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // only the readers are used here
mod fsio;

use sim_core::dataset::schema::StepPhase;
use sim_core::explore::Workspace;
use std::path::Path;

fn workspace() -> Workspace {
    let files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data/");
    let ws = Workspace::load(&files, None);
    assert!(ws.is_valid(), "{:?}", ws.errors());
    ws
}

/// Every graph-replayed pass is checked, prefill of 16 to 16k tokens and decode of 1 to 256 sequences, against
/// the target `data/accuracy.json` states; a step of a few tokens is as long as reading the weights, and a long
/// prompt grows about as its attention does. The medians stay within the target: the step is the sum of the
/// kernels the table timed one by one (its GEMMs, attention, small kernels), not a fit to the passes.
#[test]
fn the_h100_stacks_passes_are_the_sum_of_the_kernels_its_table_timed() {
    let ws = workspace();
    let checks = ws.step_checks();
    let c = checks.iter().flatten().find(|c| c.table == "h100-sxm").expect("the H100 table is checked");
    let target = ws.dataset.accuracy.as_ref().and_then(|a| a.step_check.as_ref()).expect("a stated target");
    assert_eq!(c.target_ape, Some(target.ape_max));
    assert_eq!(c.rows.len(), 19, "{:?}", c.rows);
    let phase = |p: StepPhase| c.rows.iter().filter(move |r| r.phase == p);
    assert_eq!(phase(StepPhase::Prefill).count(), 10);
    assert!(c.compiled, "the shipped table's stack ran compiled, as vLLM's models do");
    assert!(c.prefill_median_ape <= target.ape_max && c.decode_median_ape <= target.ape_max, "{c:?}");
    assert_eq!(c.met, Some(c.max_ape <= target.ape_max));
    for r in &c.rows {
        assert!(r.predicted_s.is_finite() && r.predicted_s > 0.0, "{r:?}");
    }
    // A step of one sequence reads every weight once: at least the weights over the bandwidth.
    let one = phase(StepPhase::Decode).find(|r| r.seqs == 1.0).expect("one sequence");
    assert!(one.predicted_s >= one.hbm_s, "{one:?}");
}

/// A table without whole passes, or none at all, is said so, not checked.
#[test]
fn a_table_without_passes_is_not_checked() {
    let ws = workspace();
    let mut table = ws.dataset.kernels["h100-sxm"].clone();
    table.steps = None;
    let err = ws.step_check(&table).expect_err("nothing to check");
    assert!(err.to_string().contains("no whole forward pass"), "{err}");
}

/// A profile that reads the kernel table runs each GEMM at the share the table measured for its intensity: a
/// compute efficiency on top would count that share twice, so the step does not depend on it. A profile that
/// does not read the table runs its GEMMs at the roofline times its compute efficiency.
#[test]
fn a_profile_reading_the_kernel_table_ignores_the_compute_efficiency() {
    use sim_core::dataset::schema::Mode;
    use sim_core::fit::FitSet;
    use sim_core::model::batching::StepLoad;
    use sim_core::model::modes::mode_engine;
    let ws = workspace();
    let s = &ws.scenarios["nim-llama-3.3-70b-instruct-h100x2"];
    assert!(s.hardware.gemm.measured(), "the H100 has its own table");
    let (base, _) = ws.coefficients_for(s, FitSet::All).expect("coefficients");
    let mut prompt = StepLoad::default();
    prompt.add_prefill(&s.model, 1.0, 0.0, 4096.0);
    let step = |table: f64, efficiency: f64| {
        let k = sim_core::model::Coefficients {
            gemm_from_kernel_table: table,
            compute_efficiency: efficiency,
            ..base.clone()
        };
        mode_engine(s, &k, Mode::Single).step(&prompt).total_s
    };
    assert_eq!(step(1.0, 0.2), step(1.0, 1.0));
    assert!(step(0.0, 0.2) > 2.0 * step(0.0, 1.0), "a compute-bound prompt without the table scales with it");
}

/// The transfer check: the DGX Spark has no kernel table of its own, so its curves are the H100's read against
/// its own ridge; the roofline profile's prefill rate is checked against the saturated rates S4b measured there
/// (llama-benchy's pp total where the level's prompts fill a step). The roofline adds no engine cost, so it may
/// not predict a machine slower than it was measured.
#[test]
fn a_gpu_without_a_table_is_checked_against_its_measured_prefill_rates() {
    let ws = workspace();
    let checks = ws.transfer_checks();
    let c = checks.iter().find(|c| c.hardware == "dgx-spark").expect("the DGX Spark is checked");
    assert_eq!(c.table, "h100-sxm");
    let target = ws.dataset.accuracy.as_ref().and_then(|a| a.transfer_check.as_ref()).expect("a stated target");
    assert_eq!(c.target_ape, Some(target.ape_max));
    // Of the 12 S4b rates, the 8 whose prompts fill a step of 8,192 tokens (10 x 1,024, and 5 to 20 x 8,192).
    assert_eq!(c.rows.len(), 8, "{:?}", c.rows);
    for r in &c.rows {
        assert!(f64::from(r.concurrency) * f64::from(r.isl) >= r.chunk_tokens, "{r:?}");
        assert!(r.predicted_tok_s.is_finite() && r.predicted_tok_s >= r.measured_tok_s, "{r:?}");
    }
    assert_eq!(c.met, Some(c.max_ape <= target.ape_max));
    assert!(checks.iter().all(|c| c.hardware != "h100-sxm"), "a GPU with its own table is not a transfer");
}

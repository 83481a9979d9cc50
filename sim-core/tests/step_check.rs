//! The step check on the shipped H100 kernel table: the model's step (the `roofline` profile on the table) for
//! the table's compiled layer stack against the whole forward passes the table timed, replayed as CUDA graphs.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // only the readers are used here
mod fsio;

use sim_core::dataset::schema::StepPhase;
use sim_core::explore::step_check::StepCheck;
use sim_core::explore::Workspace;
use std::path::Path;

fn workspace() -> Workspace {
    let files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data/");
    let ws = Workspace::load(&files, None);
    assert!(ws.is_valid(), "{:?}", ws.errors());
    ws
}

/// Every graph-replayed pass is checked, prefill of 16 to 16k tokens, decode of 1 to 256 sequences and the nine
/// mixed passes, against the target `data/accuracy.json` states; a step of a few tokens is as long as reading the
/// weights, and a long prompt grows about as its attention does. The prompts' and decodes' medians stay within
/// the target: the step is the sum of the kernels the table timed one by one (its GEMMs, attention, small
/// kernels), not a fit to the passes.
#[test]
fn the_h100_stacks_passes_are_the_sum_of_the_kernels_its_table_timed() {
    let ws = workspace();
    let checks = ws.step_checks();
    let own = |c: &&StepCheck| c.table == "h100-sxm" && c.curves_from.is_none();
    let c = checks.iter().flatten().find(own).expect("the H100 table is checked");
    let target = ws.dataset.accuracy.as_ref().and_then(|a| a.step_check.as_ref()).expect("a stated target");
    assert_eq!(c.target_ape, Some(target.ape_max));
    assert_eq!(c.rows.len(), 28, "{:?}", c.rows);
    let phase = |p: StepPhase| c.rows.iter().filter(move |r| r.phase == p);
    assert_eq!(phase(StepPhase::Prefill).count(), 10);
    assert_eq!(phase(StepPhase::Mixed).count(), 9);
    assert!(c.mixed_median_ape.is_some());
    assert!(c.compiled, "the shipped table's stack ran compiled, as vLLM's models do");
    let within = |m: Option<f64>| m.is_some_and(|m| m <= target.ape_max);
    assert!(within(c.prefill_median_ape) && within(c.decode_median_ape), "{c:?}");
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
    let err = ws.step_check(&table, None).expect_err("nothing to check");
    assert!(err.to_string().contains("no whole forward pass"), "{err}");
}

/// The carried check predicts one table's passes with the curves and kernel costs of a table measured on another
/// GPU, carried over as a GPU without a table takes them. Carried between two GPUs of one roofline (a twin of the
/// H100 with its own copy of the table), the transfer is the identity: the carried check is the own check, row
/// by row, judged against the carried check's own target.
#[test]
fn a_table_carried_to_a_gpu_of_the_same_roofline_predicts_as_its_own() {
    let mut files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data/");
    let twin = |path: &str, files: &[sim_core::dataset::SourceText]| {
        let f = files.iter().find(|f| f.path == path).expect("shipped");
        let mut v: serde_json::Value = serde_json::from_str(&f.text).expect("json");
        v["id"] = "h100-twin".into();
        if v["kind"] == "kernels" {
            v["hardware"] = "h100-twin".into();
        }
        sim_core::dataset::SourceText { path: path.replace("h100-sxm", "h100-twin"), text: v.to_string() }
    };
    let (hw, table) = (twin("hardware/h100-sxm.json", &files), twin("kernels/h100-sxm.json", &files));
    files.extend([hw, table]);
    let ws = Workspace::load(&files, None);
    assert!(ws.is_valid(), "{:?}", ws.errors());
    let checks: Vec<StepCheck> = ws.step_checks().into_iter().collect::<Result<_, _>>().expect("every table checks");
    assert_eq!(checks.len(), 4, "each table on its own and with the other's curves");
    let find = |table: &str, from: Option<&str>| {
        checks
            .iter()
            .find(|c| c.table == table && c.curves_from.as_ref().map(|f| f.0.as_str()) == from)
            .expect("checked")
    };
    let (own, carried) = (find("h100-sxm", None), find("h100-sxm", Some("h100-twin")));
    let targets = ws.dataset.accuracy.as_ref().expect("targets");
    assert_eq!(carried.target_ape, targets.carried_step_check.as_ref().map(|t| t.ape_max));
    assert_eq!(own.target_ape, targets.step_check.as_ref().map(|t| t.ape_max));
    assert_eq!(own.rows, carried.rows);
}

/// A mixed pass (a prompt and a batch of decodes, every GEMM over all their rows at once) reads the weights
/// once: the model's step for it is shorter than the prompt's and the decodes' passes apart, and longer than
/// either. A mixed row without its decodes is refused with the field's position.
#[test]
fn a_mixed_pass_reads_the_weights_once() {
    use sim_core::dataset::schema::StepRow;
    let ws = workspace();
    let mut table = ws.dataset.kernels["h100-sxm"].clone();
    let row = |phase, seqs, query_tokens, context, decodes: Option<(f64, f64)>| StepRow {
        phase,
        graph: true,
        seqs,
        query_tokens,
        context,
        decode_seqs: decodes.map(|d| d.0),
        decode_context: decodes.map(|d| d.1),
        seconds: 1.0,
        kernels: None,
    };
    table.steps.as_mut().expect("passes").rows = vec![
        row(StepPhase::Prefill, 1.0, 1024.0, 1024.0, None),
        row(StepPhase::Decode, 16.0, 1.0, 1024.0, None),
        row(StepPhase::Mixed, 1.0, 1024.0, 1024.0, Some((16.0, 1024.0))),
    ];
    let rows = ws.step_check(&table, None).expect("checked");
    let [prefill, decode, mixed] = [0, 1, 2].map(|i| rows[i].predicted_s);
    assert!(mixed < prefill + decode && mixed > prefill.max(decode), "{rows:?}");
    assert_eq!((rows[2].decode_seqs, rows[2].decode_context), (16.0, 1024.0));

    let mut files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data/");
    let file = files.iter_mut().find(|f| f.path == "kernels/h100-sxm.json").expect("the H100 table");
    let mut v: serde_json::Value = serde_json::from_str(&file.text).expect("json");
    let rows = v["steps"]["rows"].as_array_mut().expect("rows");
    rows.push(serde_json::json!({"phase": "mixed", "graph": true, "seqs": 1, "query_tokens": 256, "context": 256,
        "decode_context": 512, "seconds": 0.01}));
    let at = rows.len() - 1;
    file.text = v.to_string();
    let errors: Vec<String> = Workspace::load(&files, None).errors().iter().map(ToString::to_string).collect();
    let want = format!("/steps/rows/{at}/decode_seqs");
    assert!(errors.iter().any(|e| e.contains("kernels/h100-sxm.json") && e.contains(&want)), "{errors:?}");
}

/// The page bundles only the part of a kernel table a prediction reads: that part gives the same GEMM curves
/// and kernel costs as the whole table.
#[test]
fn the_bundled_part_of_a_kernel_table_predicts_as_the_whole_table() {
    use sim_core::kernel_curves::{curves_from_table, kernel_costs, predicting_part, Roofline};
    let files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data/");
    let mut bundled = files.clone();
    for f in bundled.iter_mut().filter(|f| f.path.starts_with("kernels/")) {
        f.text = predicting_part(&f.text).expect("a JSON object");
    }
    let (whole, part) = (Workspace::load(&files, None), Workspace::load(&bundled, None));
    assert!(part.is_valid(), "{:?}", part.errors());
    assert!(!whole.dataset.kernels.is_empty());
    for (id, w) in &whole.dataset.kernels {
        let p = &part.dataset.kernels[id];
        let roofline = Roofline::of(&whole.dataset.hardware[&w.hardware]);
        assert_eq!(curves_from_table(w, roofline), curves_from_table(p, roofline), "{id}");
        let costs = kernel_costs(w, roofline);
        assert!(costs.is_some(), "{id}: the shipped table gives kernel costs");
        assert_eq!(costs, kernel_costs(p, roofline), "{id}");
    }
}

/// The DGX Spark has no kernel table: it takes the H100's curves against its own ridge. Where a published
/// microbenchmark timed a large dense GEMM on the GPU (`microbenchmarks.dense_gemm_fraction`: on the GB10 a BF16
/// matmul of 4096 x 4096), the carried-over curve's share for that GEMM is within the transfer check's target
/// (`data/accuracy.json`'s `transfer_check`) of it: the transfer keeps the GEMM's asymptote, and what the
/// transfer check misses lies elsewhere.
#[test]
fn the_carried_curve_meets_the_gb10s_published_dense_gemm() {
    use sim_core::kernel_curves::{curves_from_table, table_for, Roofline};
    use sim_core::spec::GemmShape;
    let ws = workspace();
    let ds = &ws.dataset;
    let (table, own) = table_for(ds, "dgx-spark").expect("a table to carry over");
    assert!(!own, "the DGX Spark has no table of its own");
    let (bf16, _) = curves_from_table(table, Roofline::of(&ds.hardware[&table.hardware]));
    let spark = &ds.hardware["dgx-spark"];
    let measured = spark.microbenchmarks.as_ref().and_then(|m| m.dense_gemm_fraction.as_ref()).expect("published");
    let measured = measured.si().expect("a fraction");
    let roofline = Roofline::of(spark);
    let n = 4096.0;
    let shape = GemmShape { m: n, n, k: n, weight_bytes: 2.0, activation_bytes: 2.0 };
    let carried = bf16.share(shape.intensity() / (roofline.flops_bf16 / roofline.hbm_bytes_per_sec));
    let tflops = |share: f64| share * roofline.flops_bf16 / 1e12;
    println!("GB10 BF16 4096^3: carried {:.1} TFLOPS, published {:.1}", tflops(carried), tflops(measured));
    let target = ws.dataset.accuracy.as_ref().and_then(|a| a.transfer_check.as_ref()).expect("a stated target");
    let error = (carried / measured - 1.0).abs() * 100.0;
    assert!(error <= target.ape_max, "carried share {carried}, published {measured}: {error:.1}% off");
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

//! Workspace tests: every shipped dataset file, the broken-file corpus, and the model's accuracy guard.

#[path = "../sim-core/src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // each test uses part of it
mod fsio;

use sim_core::dataset::{load, validate, SourceText};
use sim_core::diagnostic::{self, Diagnostic};
use sim_core::fit::FitSet;
use fsio::{load_dir, read_seeds};
use sim_core::report;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shipped() -> Vec<SourceText> {
    load_dir(&root().join("data")).expect("data/ is readable")
}

/// All diagnostics for a set of files: load, meaning checks, and (when those pass) the model check.
fn diagnose(files: &[SourceText]) -> Vec<Diagnostic> {
    let (ds, mut d) = load(files);
    d.extend(validate::check(&ds, None));
    if !d.iter().any(Diagnostic::is_error) {
        d.extend(report::model_check(&ds));
    }
    diagnostic::sort(&mut d);
    d
}

#[test]
fn shipped_dataset_is_valid_with_model_check() {
    let d = diagnose(&shipped());
    let errors: Vec<String> = d.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The seeds sit beside the repository (../shared/seeds) on developer machines and in CI.
#[test]
fn every_quote_is_verbatim_in_its_seed() {
    let seeds_dir = root().join("../shared/seeds");
    if !seeds_dir.is_dir() {
        eprintln!("skipped: {} not present", seeds_dir.display());
        return;
    }
    let seeds = read_seeds(&seeds_dir).expect("seeds readable");
    let (ds, _) = load(&shipped());
    let errors: Vec<String> =
        validate::check(&ds, Some(&seeds)).iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Each dataset file is a test case: it loads alone without schema errors, and its summary is snapshotted.
#[test]
fn each_dataset_file_summary() {
    let files = shipped();
    let (ds, _) = load(&files);
    let mut summary = String::new();
    for f in &files {
        let (_, d) = load(std::slice::from_ref(f));
        let schema_errors: Vec<_> = d.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(schema_errors.is_empty(), "{}: {}", f.path, schema_errors.join("\n"));
        let v: serde_json::Value = serde_json::from_str(&f.text).expect("json");
        let kind = v["kind"].as_str().unwrap_or("?");
        let detail = match kind {
            "sweep" => {
                let pts = ds.points().into_iter().filter(|p| p.file == f.path).collect::<Vec<_>>();
                let flagged = pts.iter().filter(|p| p.is_flagged()).count();
                format!(
                    "{} points ({} flagged), {} series",
                    pts.len(),
                    flagged,
                    v["series"].as_array().map_or(0, Vec::len)
                )
            }
            "claims" => format!("{} claims", v["claims"].as_array().map_or(0, Vec::len)),
            "fabric" => format!(
                "{} nccl rows, {} rdma rows",
                v["nccl"].as_array().map_or(0, Vec::len),
                v["rdma"].as_array().map_or(0, Vec::len)
            ),
            _ => v["id"].as_str().unwrap_or("-").to_string(),
        };
        summary.push_str(&format!("{:<36} {:<9} {}\n", f.path, kind, detail));
    }
    insta::assert_snapshot!("dataset_summary", summary);
}

/// Every file of the broken corpus replaces one shipped file; the rendered errors are what a user sees.
#[test]
fn broken_corpus_reports_precise_errors() {
    let corpus = root().join("tests/broken");
    let mut cases: Vec<_> =
        std::fs::read_dir(&corpus).expect("tests/broken").map(|e| e.expect("entry").path()).collect();
    cases.sort();
    assert!(cases.len() >= 20, "corpus has {} cases", cases.len());
    for case in cases {
        let name = case.file_name().expect("name").to_string_lossy().into_owned();
        let overlay = load_dir(&case).expect("case readable");
        let mut files = shipped();
        for o in overlay {
            match files.iter_mut().find(|f| f.path == o.path) {
                Some(f) => *f = o,
                None => files.push(o),
            }
        }
        let d = diagnose(&files);
        let errors: Vec<String> = d.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(!errors.is_empty(), "case {name}: the validator accepted broken data");
        for e in d.iter().filter(|d| d.is_error()) {
            assert!(!e.file.is_empty(), "case {name}: an error without a file: {e}");
            assert!(e.line.is_some() || e.message.contains("empty"), "case {name}: an error without a line: {e}");
        }
        insta::assert_snapshot!(format!("broken_{name}"), errors.join("\n"));
    }
}

/// With `--fit single` the pair is predicted, not fitted, and flagged points never count.
#[test]
fn fitted_and_predictive_errors_are_reported_separately() {
    let (ds, _) = load(&shipped());
    let all = report::build(&ds, FitSet::All).expect("report");
    let single = report::build(&ds, FitSet::Single).expect("report");
    assert!(all.rows.iter().all(|r| r.role != "predicted"));
    assert!(single
        .rows
        .iter()
        .filter(|r| r.mode != sim_core::Mode::Single && r.flags.is_empty())
        .all(|r| r.role == "predicted"));
    assert!(all.rows.iter().filter(|r| !r.flags.is_empty()).all(|r| r.role == "flagged"));
    let fitted = all.overall.fitted.expect("fitted stats");
    assert!(fitted.median_ape <= 12.0 && fitted.p90_ape <= 30.0, "{fitted:?}");
}

/// The report's rule comes out of the numbers: the three models that spill on one station run faster as TP2.
#[test]
fn spilling_models_prefer_tp2_at_32_streams() {
    let (ds, _) = load(&shipped());
    let r = report::build(&ds, FitSet::All).expect("report");
    for id in ["glm-5.2", "glm-5.3", "minimax-m3"] {
        for c in r.mode_comparisons.iter().filter(|c| c.model == id) {
            assert!(c.spills_on_one_station, "{id} should spill");
            assert_eq!(c.better, sim_core::Mode::Tp2, "{id} {}/{}: {}", c.modes.isl, c.modes.osl, c.reason);
        }
    }
}

/// Fabric: every collective's predicted peak within 3%, and the measured ordering reproduced.
#[test]
fn fabric_peaks_and_ordering() {
    let (ds, _) = load(&shipped());
    let rows = report::fabric_rows(&ds);
    let mut peaks: Vec<_> = rows.iter().filter(|r| r.column == "peak").collect();
    assert_eq!(peaks.len(), 8);
    for r in &peaks {
        let ape = (r.predicted_busbw_gbps - r.measured_busbw_gbps).abs() / r.measured_busbw_gbps * 100.0;
        assert!(ape <= 3.0, "{} off by {ape:.2}%", r.collective.name());
    }
    peaks.sort_by(|a, b| b.measured_busbw_gbps.total_cmp(&a.measured_busbw_gbps));
    let measured: Vec<_> = peaks.iter().map(|r| r.collective).collect();
    peaks.sort_by(|a, b| b.predicted_busbw_gbps.total_cmp(&a.predicted_busbw_gbps));
    let predicted: Vec<_> = peaks.iter().map(|r| r.collective).collect();
    // Broadcast, reduce and one-way sendrecv agree to 0.03 GB/s; compare the order of the distinct groups.
    let group = |v: &[sim_core::dataset::schema::Collective]| {
        v.iter().map(|c| format!("{:?}", c)).collect::<Vec<_>>()[3..].to_vec()
    };
    assert_eq!(group(&measured), group(&predicted));
}

/// The planner reproduces the report's rule for the modes it measured: spilling models -> TP2, fitting -> PD.
#[test]
fn planner_recommendations_for_the_report_models() {
    let (ds, _) = load(&shipped());
    let (scenarios, errs) = report::scenarios_by_model(&ds);
    assert!(errs.is_empty());
    let k = report::build(&ds, FitSet::All).expect("report").calibration.coefficients;
    let mut seen = Vec::new();
    for (id, want) in [("glm-5.2", "tp2"), ("glm-5.3", "tp2"), ("minimax-m3", "tp2"), ("glm-5.3-flash", "pd")] {
        let plan = sim_core::plan::plan(&scenarios[id], &k);
        assert_eq!(plan.recommended_mode.name(), want, "{id}: {}", plan.reason);
        assert!(!plan.reason.is_empty());
        seen.push(id);
    }
    // DeepSeek V4.1 Flash was only run as PD; the plan's answer is a prediction, shown with its reason.
    let ds_plan = sim_core::plan::plan(&scenarios["deepseek-v4.1-flash"], &k);
    assert!(ds_plan.rows.iter().all(|r| r.pd.output_tok_s > 0.0), "{}", ds_plan.reason);
    assert_eq!(seen.len(), 4);
}

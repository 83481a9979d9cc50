//! Workspace tests: every shipped dataset file, the broken-file corpus, the model's accuracy guard, and tidiness.

#[path = "../sim-core/src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // each test uses part of it
mod fsio;
mod json_patch;

use fsio::{load_dir, read_seeds};
use json_patch::Edit;
use serde::Deserialize;
use sim_core::dataset::schema::{AccuracyFile, REPORT_DATASET};
use sim_core::dataset::{load, validate, Dataset, SourceText};
use sim_core::diagnostic::{self, Diagnostic};
use sim_core::explore::Workspace;
use sim_core::fit::FitSet;
use sim_core::model::fabric::FabricColumn;
use sim_core::report::{self, PointRole};
use sim_core::Mode;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The repository's root (this package sits in its `tests/` folder).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

fn shipped() -> Vec<SourceText> {
    load_dir(&root().join("data")).expect("data/ is readable")
}

/// All diagnostics for a set of files, as `sim-core validate` finds them: load, meaning checks, and (when those
/// pass) the model check.
fn diagnose(files: &[SourceText]) -> Vec<Diagnostic> {
    diagnose_fitted_as(files, files)
}

/// `diagnose`, with the stored fits adopted where they are `fitted_as`'s: the same texts as `files` but for a part
/// no fit reads, so that the model check judges the fits those texts give without fitting them again.
fn diagnose_fitted_as(files: &[SourceText], fitted_as: &[SourceText]) -> Vec<Diagnostic> {
    let ws = with_stored_fits(Workspace::load(files, None), fitted_as);
    let mut d = ws.diagnostics.clone();
    d.extend(ws.model_check());
    diagnostic::sort(&mut d);
    d
}

/// The shipped dataset, loaded as the CLI and the page load it: once for every test here, so they share its fits.
fn workspace() -> &'static Workspace {
    static WS: std::sync::OnceLock<Workspace> = std::sync::OnceLock::new();
    WS.get_or_init(|| {
        let files = shipped();
        with_stored_fits(Workspace::load(&files, None), &files)
    })
}

/// `ws` with data/fitted/'s fits adopted where they are these files' (the shipped data's; sim-core's protocol
/// test checks they are what the data give), as the CLI opens a dataset; other files are fitted on demand.
fn with_stored_fits(ws: Workspace, files: &[SourceText]) -> Workspace {
    let stored = fsio::read_stored_fits(&root().join("data")).expect("data/fitted/ is readable");
    let _ = ws.adopt_stored_fits(files, &stored);
    ws
}

#[test]
fn shipped_dataset_is_valid_with_model_check() {
    let d = diagnose(&shipped());
    let errors: Vec<String> = d.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The thresholds of the model check, as shipped in `data/accuracy.json`.
fn accuracy(ds: &Dataset) -> &AccuracyFile {
    ds.accuracy.as_ref().expect("data/accuracy.json is loaded")
}

/// The seed texts, which sit beside the repository (`<repo>/../shared/seeds`) on developer machines and in CI.
/// A clone without them still runs every other test: a quote check then skips with a banner on stderr naming
/// it (past libtest's capture, since a skipped test reports "ok"). Under CI=true their absence is a failure.
fn seeds_dir_or_skip(test: &str, checks: &str) -> Option<PathBuf> {
    let seeds_dir = root().parent().expect("the repository has a parent").join("shared/seeds");
    if seeds_dir.is_dir() {
        return Some(seeds_dir);
    }
    let missing = format!("the seed texts are not in {} (<repo>/../shared/seeds)", seeds_dir.display());
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{missing}; CI=true runs every quote check: check out the shared folder beside the repository");
    }
    let rule = "=".repeat(100);
    let _ = writeln!(
        std::io::stderr().lock(),
        "\n{rule}\nSKIPPED quote check `{test}` ({checks}): {missing}.\n\
         Check out the shared folder beside the repository to run it; under CI=true it fails instead.\n{rule}"
    );
    None
}

#[test]
fn every_quote_is_verbatim_in_its_seed() {
    let Some(seeds_dir) =
        seeds_dir_or_skip("every_quote_is_verbatim_in_its_seed", "every quote verbatim in its seed text")
    else {
        return;
    };
    let seeds = seeds_with_external_texts(&seeds_dir);
    let (ds, _) = load(&shipped());
    let d = validate::check(&ds, Some(&seeds));
    let errors: Vec<String> = d.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Every external quote was checked: no note says a publication's text was missing.
    let unchecked: Vec<String> =
        d.iter().filter(|d| d.message.contains("not among the texts")).map(|d| d.to_string()).collect();
    assert!(unchecked.is_empty(), "{}", unchecked.join("\n"));
}

/// The seed texts plus the texts of other publications, which sit beside the seeds directory and are named
/// relative to it (`../external-sweeps.md`), as an external source's `file` says.
fn seeds_with_external_texts(seeds_dir: &Path) -> validate::Seeds {
    let mut seeds = read_seeds(seeds_dir).expect("seeds readable");
    assert!(!seeds.is_empty(), "{} holds no seed texts", seeds_dir.display());
    let (ds, _) = load(&shipped());
    let named: BTreeSet<&str> = ds.sources.iter().filter(|s| s.is_external()).map(|s| s.file.as_str()).collect();
    assert!(!named.is_empty(), "no external source in data/");
    for name in named {
        let path = seeds_dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        seeds.insert(name.to_string(), text);
    }
    seeds
}

/// A number mistyped in both a point and its quote passes the quote-holds-its-number rule; the publication's
/// text catches it.
#[test]
fn a_mistyped_external_row_fails_against_its_text() {
    let Some(seeds_dir) = seeds_dir_or_skip(
        "a_mistyped_external_row_fails_against_its_text",
        "a mistyped row caught by its publication's text",
    ) else {
        return;
    };
    let seeds = seeds_with_external_texts(&seeds_dir);
    let mut files = shipped();
    let f = files.iter_mut().find(|f| f.path == "sweeps/kubis-gpt-oss-120b-dgx-spark.json").expect("S1a sweep");
    assert!(f.text.contains("| 4 | 107.9 | 155.3 | 127.9 |"), "the row this test edits moved");
    f.text =
        f.text.replace("| 4 | 107.9 | 155.3 | 127.9 |", "| 4 | 107.8 | 155.3 | 127.9 |").replacen("107.9", "107.8", 1);
    let (ds, _) = load(&files);
    let errors: Vec<String> =
        validate::check(&ds, Some(&seeds)).iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert!(
        errors.iter().any(|e| e.contains("quote not found verbatim in ../external-sweeps.md")),
        "the mistyped row was accepted: {errors:?}"
    );
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

/// The broken-file corpus as stored in `tests/broken/cases.json`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    #[allow(dead_code)] // documentation for the reader of the JSON file
    about: String,
    cases: Vec<BrokenCase>,
}

/// One way to break the data: edits applied to a copy of `data/`, and what they break.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BrokenCase {
    name: String,
    breaks: String,
    edits: Vec<Edit>,
}

/// Each case patches the shipped files; the rendered errors are what a user sees. Patches that no longer apply
/// (a pointer gone, a replacement that changes nothing) fail here, so the corpus follows `data/` or breaks loudly.
#[test]
fn broken_corpus_reports_precise_errors() {
    let path = root().join("tests/broken/cases.json");
    let text = std::fs::read_to_string(&path).expect("tests/broken/cases.json");
    let corpus: Corpus = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(corpus.cases.len() >= 20, "corpus has {} cases", corpus.cases.len());
    let names: BTreeSet<&str> = corpus.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), corpus.cases.len(), "case names repeat");
    // A snapshot without its case is a case deleted or renamed without its snapshot: it would never be checked.
    let snapshots = root().join("tests/snapshots");
    let orphans: Vec<String> = std::fs::read_dir(&snapshots)
        .expect("tests/snapshots")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|f| {
            f.strip_prefix("tests__broken_").and_then(|f| f.strip_suffix(".snap")).is_some_and(|n| !names.contains(n))
        })
        .collect();
    assert!(orphans.is_empty(), "snapshots without a case in tests/broken/cases.json: {orphans:?}");
    for case in &corpus.cases {
        let name = &case.name;
        assert!(!case.edits.is_empty(), "case {name}: no edits");
        let mut files = shipped();
        for edit in &case.edits {
            let file = files
                .iter_mut()
                .find(|f| f.path == edit.file())
                .unwrap_or_else(|| panic!("case {name}: data/{} is not a shipped file", edit.file()));
            file.text = edit.apply(&file.text).unwrap_or_else(|e| panic!("case {name}: data/{}: {e}", edit.file()));
        }
        // `accuracy.json` judges fits and no fit reads it: a case that edits only it is diagnosed on the shipped
        // data's stored fits (the edited thresholds and gate are compared with their errors), where `validate`
        // would fit them again to the same numbers (the whole protocol, a minute and more on two cores).
        let fitted_as = if case.edits.iter().all(|e| e.file() == "accuracy.json") { shipped() } else { files.clone() };
        let d = diagnose_fitted_as(&files, &fitted_as);
        let errors: Vec<String> = d.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(!errors.is_empty(), "case {name} ({}): the validator accepted broken data", case.breaks);
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
    let ws = workspace();
    let acc = accuracy(&ws.dataset);
    let (all, single) = (ws.accuracy(FitSet::All), ws.accuracy(FitSet::Single));
    // The report's own points: other publications' are always predicted (see external_datasets_...).
    assert!(all.rows.iter().filter(|r| r.dataset == REPORT_DATASET).all(|r| r.role != PointRole::Predicted));
    assert!(single
        .rows
        .iter()
        .filter(|r| r.mode != Mode::Single && r.flags.is_empty())
        .all(|r| r.role == PointRole::Predicted));
    assert!(all.rows.iter().filter(|r| !r.flags.is_empty()).all(|r| r.role == PointRole::Flagged));
    let fitted = all.overall.fitted.expect("fitted stats");
    assert!(
        fitted.median_ape <= acc.fitted_median_ape_max
            && acc.fitted_p90_ape_max.is_none_or(|max| fitted.p90_ape <= max),
        "{fitted:?} against accuracy.json's {} / {:?}",
        acc.fitted_median_ape_max,
        acc.fitted_p90_ape_max
    );
    let predicted = single.overall.predicted.expect("predictive stats");
    assert!(
        predicted.median_ape <= acc.predictive_median_ape_max,
        "{predicted:?} against accuracy.json's {}",
        acc.predictive_median_ape_max
    );
}

/// The report's rule comes out of the numbers: the three models that spill on one station run faster as TP2.
#[test]
fn spilling_models_prefer_tp2_at_32_streams() {
    let ws = workspace();
    let r = ws.accuracy(FitSet::All);
    for id in ["glm-5.2", "glm-5.3", "minimax-m3"] {
        for c in r.mode_comparisons.iter().filter(|c| c.model == id) {
            assert!(c.spills_on_one_station, "{id} should spill");
            assert_eq!(c.better, Mode::Tp2, "{id} {}/{}: {}", c.row.isl, c.row.osl, c.reason);
        }
    }
}

/// Fabric: every predicted row within accuracy.json's target, and the measured ordering of peaks reproduced.
/// A row the efficiency was fitted on matches by construction, so only the other rows are checked against the
/// target; the fitted ones must reproduce their measurement, which shows the `fitted` flag is told truly.
#[test]
fn fabric_peaks_and_ordering() {
    let (ds, _) = load(&shipped());
    let max_ape = accuracy(&ds).fabric_peak_ape_max;
    let rows = report::fabric_rows(&ds);
    let ape = |r: &&sim_core::model::fabric::FabricRow| {
        (r.predicted_busbw_gbps - r.measured_busbw_gbps).abs() / r.measured_busbw_gbps * 100.0
    };
    let (fitted, predicted): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.fitted);
    for r in &fitted {
        assert!(
            ape(r) < 1e-6,
            "{} {} is marked fitted but is off by {:.4}%",
            r.collective.name(),
            r.column.name(),
            ape(r)
        );
    }
    let names: Vec<&str> = predicted.iter().map(|r| r.collective.name()).collect();
    eprintln!("{} of {} fabric rows are predictions: {}", predicted.len(), rows.len(), names.join(", "));
    // README and ARCHITECTURE state which peaks are genuine predictions; the other five peak at 16 GiB.
    assert_eq!(names, ["all_reduce", "reduce_scatter", "alltoall"], "the fabric rows that are predictions changed");
    for r in &predicted {
        assert_eq!(r.column, FabricColumn::Peak, "{}: only peak rows can be predictions", r.collective.name());
        assert!(ape(r) <= max_ape, "{} peak off by {:.2}% (target {max_ape}%)", r.collective.name(), ape(r));
    }
    let mut peaks: Vec<_> = rows.iter().filter(|r| r.column == FabricColumn::Peak).collect();
    assert_eq!(peaks.len(), 8);
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

/// What the planner should say for a model of the report.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// The report measured one station and the pair as TP2: among the modes the report ran (one station, TP2,
    /// PD, two copies) the plan must put TP2 first at the top concurrency, and it must recommend a mode that
    /// splits the weights across both machines: TP2, or PP2 or EP2, which the report never ran (the planner
    /// puts PP2 ahead where TP2's fitted collective latency outweighs reading each stage's weights twice).
    SplitsWeights,
    /// The report measured one station and `measured` on the pair and chose it over the other pair mode it
    /// compared (TP2 or PD); the planner also offers two independent copies (dp2), which the report never
    /// ran. Among TP2 and PD the plan must prefer `measured`; overall it must recommend `overall`.
    PrefersOver { measured: Mode, other: Mode, overall: Mode },
    /// Only measured as PD: the recommendation is a prediction, so the plan must at least predict PD throughput
    /// at every concurrency and give its reason.
    PdOnly,
}

/// The planner reproduces the report's rule for the modes it measured: spilling models -> TP2, fitting -> PD
/// (over TP2; two plain copies, which the report did not run, may beat both).
/// Every model with a report scenario needs a stated expectation here, so a new model cannot pass unseen.
#[test]
fn planner_recommendations_for_the_report_models() {
    let expected: BTreeMap<&str, Expect> = [
        ("glm-5.2", Expect::SplitsWeights),
        ("glm-5.3", Expect::SplitsWeights),
        ("minimax-m3", Expect::SplitsWeights),
        // GLM-5.3 Flash fits one station: the report ran it as PD; the model puts two plain copies ahead of PD.
        ("glm-5.3-flash", Expect::PrefersOver { measured: Mode::Pd, other: Mode::Tp2, overall: Mode::Dp2 }),
        ("deepseek-v4.1-flash", Expect::PdOnly),
    ]
    .into_iter()
    .collect();
    let ws = workspace();
    assert!(ws.is_valid(), "{:?}", ws.errors());
    // The report's scenarios: those its points (dataset gb300-report) were measured under. Other publications'
    // setups are checked in `external_datasets_are_predicted_never_fitted`.
    let report: BTreeSet<String> = ws.calibration_points().into_iter().map(|p| p.scenario).collect();
    let scenarios: BTreeMap<&String, _> = ws.scenarios.iter().filter(|(id, _)| report.contains(*id)).collect();
    let unstated: Vec<&str> = scenarios.keys().map(|s| s.as_str()).filter(|id| !expected.contains_key(id)).collect();
    assert!(
        unstated.is_empty(),
        "models with a report scenario but no expected recommendation in this test: {unstated:?}"
    );
    let gone: Vec<&str> = expected.keys().copied().filter(|id| !report.contains(*id)).collect();
    assert!(gone.is_empty(), "expectations for models without a report scenario: {gone:?}");
    for id in scenarios.keys() {
        let plan = ws.report_run(id, &[], FitSet::All).expect("report model").plan();
        assert!(!plan.reason.is_empty(), "{id}: a recommendation without a reason");
        match expected[id.as_str()] {
            Expect::SplitsWeights => {
                let top = plan.rows.iter().map(|r| r.concurrency).max().expect("rows");
                let total = |m: Mode| {
                    plan.rows.iter().filter(|r| r.concurrency == top).map(|r| r.get(m).output_tok_s).sum::<f64>()
                };
                for other in [Mode::Single, Mode::Pd, Mode::Dp2] {
                    assert!(total(Mode::Tp2) > total(other), "{id}: tp2 should beat {} at {top}", other.name());
                }
                let splits = [Mode::Tp2, Mode::Pp2, Mode::Ep2, Mode::Dpep2];
                assert!(splits.contains(&plan.recommended_mode), "{id}: {}", plan.reason);
                eprintln!("plan {id}: {} - {}", plan.recommended_mode.name(), plan.reason);
            }
            Expect::PrefersOver { measured, other, overall } => {
                let top = plan.rows.iter().map(|r| r.concurrency).max().expect("rows");
                let total = |m: Mode| {
                    plan.rows.iter().filter(|r| r.concurrency == top).map(|r| r.get(m).output_tok_s).sum::<f64>()
                };
                assert!(
                    total(measured) > total(other),
                    "{id}: {} should beat {} at {top}",
                    measured.name(),
                    other.name()
                );
                assert_eq!(plan.recommended_mode, overall, "{id}: {}", plan.reason);
            }
            Expect::PdOnly => assert!(
                !plan.rows.is_empty() && plan.rows.iter().all(|r| r.get(Mode::Pd).output_tok_s > 0.0),
                "{id}: {}",
                plan.reason
            ),
        }
    }
}

/// Other publications' measurements (`data/sweeps/` with a `dataset`): each setup resolves to a scenario, its
/// points are predicted and never fitted, saturation runs are shown without a concurrency, and what the data
/// themselves say holds. The model's accuracy on them is not asserted (it is calibrated on the GB300 report's
/// engine only); the test prints what `sim-core report` and `plan` say, for `--nocapture`.
#[test]
fn external_datasets_are_predicted_never_fitted() {
    let ws = workspace();
    assert!(ws.is_valid(), "{:?}", ws.errors());
    let points = ws.points();
    let external: BTreeSet<String> =
        points.iter().filter(|p| p.dataset != REPORT_DATASET).map(|p| p.dataset.clone()).collect();
    assert_eq!(
        external.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "al-engr-dgx-spark",
            "djangodevreng-dgx-spark",
            "flash7777-gb10-pair",
            "gb10-cluster-tp4",
            "gpustack-h100",
            "kubis-dgx-spark",
            "nvidia-nim-h100"
        ],
        "datasets with throughput points besides the report"
    );
    let report = ws.accuracy(FitSet::All);
    for r in report.rows.iter().filter(|r| r.dataset != REPORT_DATASET) {
        // Another publication's point is fitted only by the engine profile of its own build, and only where that
        // profile says (the DGX Spark builds: one-machine points; their pair is predicted from them).
        let engine = ws.scenarios.get(&r.scenario).map(|s| s.engine.clone()).unwrap_or_default();
        let profile = ws.dataset.engines.get(&engine).and_then(|e| e.fitted_on.clone());
        let may_fit = profile
            .as_ref()
            .is_some_and(|f| f.dataset == r.dataset && f.modes.as_ref().is_none_or(|m| m.contains(&r.mode)));
        if r.role == PointRole::Fitted {
            assert!(
                may_fit,
                "{} {} {}: fitted, but its engine `{engine}` is not fitted on it",
                r.scenario,
                r.mode.name(),
                r.concurrency
            );
        }
        if r.mode.machines() == 2 {
            assert_eq!(
                r.role,
                PointRole::Predicted,
                "{} {} {}: a pair point must be predicted",
                r.scenario,
                r.mode.name(),
                r.concurrency
            );
        }
        assert!(
            r.predicted_tok_s.is_finite() && r.predicted_tok_s > 0.0,
            "{} {} {}: no prediction",
            r.scenario,
            r.mode.name(),
            r.concurrency
        );
    }
    assert_eq!(
        report.rows.iter().filter(|r| r.dataset != REPORT_DATASET).count(),
        points.iter().filter(|p| p.dataset != REPORT_DATASET).count(),
        "every external point has a report row"
    );
    for g in &report.by_dataset {
        eprintln!("dataset {:<16} {:?}", g.group, g);
    }
    // What the published data say, without the model: at 64 clients two copies beat TP=2 on both DGX Spark
    // models (external-sweeps.md S1), and the NIM run's throughput flattens past 100 clients while TTFT grows.
    let at = |scenario: &str, mode: Mode, c: u32| {
        points.iter().find(|p| p.scenario == scenario && p.mode == mode && p.concurrency == c).map(|p| p.output_tok_s)
    };
    for s in ["kubis-gpt-oss-120b-dgx-spark", "kubis-gemma-4-26b-a4b-dgx-spark"] {
        assert!(at(s, Mode::Dp2, 64) > at(s, Mode::Tp2, 64), "{s}: published dp2 should beat tp2 at 64");
    }
    let nim: Vec<&sim_core::dataset::MeasuredPoint> =
        points.iter().filter(|p| p.scenario == "nim-llama-3.3-70b-instruct-h100x2").collect();
    let ttft: Vec<f64> =
        nim.iter().filter_map(|p| ws.dataset.latency(&p.file, &p.pointer).and_then(|l| l.ttft_ms)).collect();
    assert_eq!(ttft.len(), nim.len(), "every NIM point carries its TTFT");
    assert!(ttft.windows(2).all(|w| w[0] < w[1]), "published TTFT grows with concurrency: {ttft:?}");
    // The saturation runs (GPUStack: 1,000 ShareGPT prompts sent at once) are points of an all-at-once load,
    // one per setup; the run without async scheduling and the pipeline-parallel one stay stated values, unpredicted.
    let gpustack: Vec<_> = points.iter().filter(|p| p.scenario.starts_with("gpustack-")).collect();
    assert_eq!(gpustack.len(), 3, "TP1, TP2 and TP4 are points");
    assert!(gpustack.iter().all(|p| p.concurrency == 1000), "each sends its 1,000 prompts at once");
    assert!(gpustack
        .iter()
        .all(|p| ws.scenarios[&p.scenario].load == sim_core::dataset::schema::ScenarioLoad::AllAtOnce));
    let stated = ws.stated_values(FitSet::All);
    let unplaced: Vec<_> = stated.iter().filter(|r| r.model.starts_with("gpustack-")).collect();
    assert_eq!(unplaced.len(), 2, "the run without async scheduling and PP2 are listed as stated values");
    assert!(unplaced.iter().all(|r| r.predicted.is_empty()), "an unplaced value was predicted");
    // Every setup plans, with a reason; print what the planner says.
    for id in ws.scenarios.keys().filter(|id| !ws.calibration_points().iter().any(|p| &p.scenario == *id)) {
        let plan = ws.report_run(id, &[], FitSet::All).expect("external scenario").plan();
        assert!(!plan.reason.is_empty(), "{id}: a recommendation without a reason");
        assert!(!plan.rows.is_empty(), "{id}: no plan rows");
        eprintln!("plan {id}: {} - {}", plan.recommended_mode.name(), plan.reason);
    }
}

/// Two GB10 machines, one stream (external-sweeps.md S5): over RoCE TP=2 (91.6 tok/s) beats EP=2 (85.5), which beats
/// PP=2 (71.3); over TCP sockets PP=2 (70.4) beats TP=2 (45.3), which beats EP=2 (35.0). A collective's network hops
/// at the transport's round trip and the per-step control message are what reorder them, and EP=2 trails TP=2 by
/// the busiest GPU's share of the touched experts: the model, fitted on none of these points, ranks the three modes
/// as measured on each transport. The margins it predicts are printed.
#[test]
fn the_gb10_pair_ranks_pp_tp_and_ep_as_measured_over_roce_and_tcp() {
    let ws = workspace();
    let report = ws.accuracy(FitSet::All);
    for scenario in ["flash7777-qwen3-coder-30b-a3b-gb10-pair", "flash7777-qwen3-coder-30b-a3b-gb10-pair-tcp"] {
        let rows: Vec<&report::ReportRow> = report
            .rows
            .iter()
            .filter(|r| r.scenario == scenario && [Mode::Tp2, Mode::Pp2, Mode::Ep2].contains(&r.mode))
            .collect();
        assert_eq!(rows.len(), 3, "{scenario}: one point per mode");
        assert!(rows.iter().all(|r| r.role == PointRole::Predicted), "{scenario}: never fitted");
        let ranked = |tok_s: fn(&report::ReportRow) -> f64| {
            let mut modes: Vec<(Mode, f64)> = rows.iter().map(|r| (r.mode, tok_s(r))).collect();
            modes.sort_by(|a, b| b.1.total_cmp(&a.1));
            modes
        };
        let (measured, predicted) = (ranked(|r| r.measured_tok_s), ranked(|r| r.predicted_tok_s));
        eprintln!("{scenario}: measured {measured:?}, predicted {predicted:?}");
        let order = |v: &[(Mode, f64)]| v.iter().map(|(m, _)| *m).collect::<Vec<_>>();
        assert_eq!(order(&predicted), order(&measured), "{scenario}: the modes' order");
    }
}

/// The report puts every latency a source states beside the model's and counts its error apart from the
/// throughput's: the NIM sweep states a mean TTFT and ITL (= TPOT by NIM's definition) at each of its eight
/// points, GPUStack's runs a mean TTFT and TPOT at each of their three; the GB300 report and the Spark sweeps state
/// none, so they have no latency statistics. The one-Spark rate sweep states latencies at rate-limited points only,
/// which are shown but never compared.
#[test]
fn stated_latencies_are_compared_beside_throughput() {
    let ws = workspace();
    let report = ws.accuracy(FitSet::All);
    let nim: Vec<_> = report.rows.iter().filter(|r| r.dataset == "nvidia-nim-h100").collect();
    assert_eq!(nim.len(), 8);
    for r in &nim {
        let (ttft, tpot) = (r.measured_ttft_s.expect("NIM states TTFT"), r.measured_tpot_s.expect("and ITL"));
        assert!(ttft > 0.0 && tpot > 0.0, "{r:?}");
        let want = (r.predicted_ttft_s - ttft).abs() / ttft * 100.0;
        assert!((r.ttft_ape().expect("a TTFT error") - want).abs() < 1e-9, "{r:?}");
    }
    // The first point, as the source states it (external-sweeps.md S2: TTFT 406.77 ms, ITL 18.58 ms).
    let first = nim.iter().find(|r| r.concurrency == 1).expect("one client");
    let near = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 1e-12);
    assert!(near(first.measured_ttft_s, 0.40677) && near(first.measured_tpot_s, 0.01858), "{first:?}");
    let stating = ["gpustack-h100", "nvidia-nim-h100"];
    assert!(report
        .rows
        .iter()
        .filter(|r| !stating.contains(&r.dataset.as_str()) && r.role != PointRole::Flagged)
        .all(|r| r.measured_ttft_s.is_none()));
    for groups in [&report.ttft_by_dataset, &report.tpot_by_dataset] {
        let names: Vec<&str> = groups.iter().map(|g| g.group.as_str()).collect();
        assert_eq!(names, stating, "only datasets that state latencies");
        assert_eq!(groups[0].predicted.map(|s| s.n), Some(3), "all three GPUStack latencies are predictions");
        assert_eq!(groups[1].predicted.map(|s| s.n), Some(8), "all eight NIM latencies are predictions");
        assert!(groups.iter().all(|g| g.fitted.is_none()), "no external point is fitted under FitSet::All");
    }
}

/// Every Rust file says what lives in it on its first line (STYLE.md, "say what the crate is, first").
#[test]
fn every_rust_file_opens_with_a_doc_line() {
    let mut files = Vec::new();
    for dir in ["sim-core", "app", "tests"] {
        rust_files(&root().join(dir), &mut files);
    }
    // The walk must at least find this file, or an empty walk would pass.
    assert!(files.iter().any(|f| f.ends_with("tests/tests.rs")), "the walk did not find tests/tests.rs");
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).is_ok_and(|t| t.starts_with("//!")))
        .map(|f| f.strip_prefix(root()).unwrap_or(f).display().to_string())
        .collect();
    assert!(missing.is_empty(), "files that do not open with a `//!` line:\n{}", missing.join("\n"));
}

/// Every `.rs` file under `dir`, skipping build output (`target/`, also `fuzz/target/`) and the tool folder.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if name != "target" && name != ".tools" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The report's DSA models run vLLM's sparse-MLA kernel: prefill in the absorbed multi-query form decode uses,
/// and on the GB300 (Blackwell, a 128-head tile) 64 heads compute as 128 on one station and 32 per rank as 128
/// under TP2; a GQA model (MiniMax-M3) and a machine without a tile (DGX Spark) pad nothing.
#[test]
fn sparse_mla_models_pad_their_heads_on_the_gb300() {
    let ws = workspace();
    let glm = &ws.scenarios["glm-5.2"];
    let a = &glm.model.attention;
    assert_eq!(a.sparse_mla_heads, 64.0);
    assert_eq!(a.prefill_flops_per_position_layer, a.flops_per_position_layer, "absorbed form in prefill");
    let tile = glm.hardware.sparse_attention_head_tile;
    assert_eq!(tile, 128.0);
    assert_eq!(glm.model.attention_head_padding(tile, 1.0), 2.0);
    assert_eq!(glm.model.attention_head_padding(tile, 2.0), 4.0);
    let minimax = &ws.scenarios["minimax-m3"];
    assert_eq!(minimax.model.attention_head_padding(minimax.hardware.sparse_attention_head_tile, 2.0), 1.0);
    let spark = &ws.scenarios["kubis-gpt-oss-120b-dgx-spark"];
    assert_eq!(spark.hardware.sparse_attention_head_tile, 0.0);
}

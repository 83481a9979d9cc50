//! No input makes the loader, the validator, the model check, the fits or the query layer panic: random bytes,
//! and real files mutated.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // each test uses part of it
mod fsio;

use fsio::load_dir;
use proptest::prelude::*;
use sim_core::dataset::schema::{DEFAULT_ENGINE, REPORT_DATASET};
use sim_core::dataset::SourceText;
use sim_core::explore::{held_out_gate, OpenLoopQuery, Question, SweepQuery, Workspace};
use sim_core::fit::{Calibration, FitSet};
use sim_core::model::serving::{LengthSpread, OpenLoad};
use sim_core::Mode;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, OnceLock};

fn shipped() -> &'static Vec<SourceText> {
    static S: OnceLock<Vec<SourceText>> = OnceLock::new();
    S.get_or_init(|| load_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data"))
}

/// Replaces one file of the shipped dataset and runs what `validate` and the page run on it.
fn run_with(index: usize, text: String) {
    let mut files = shipped().clone();
    let i = index % files.len();
    files[i].text = text;
    let ws = Workspace::load(&files, None);
    // A fit is a function of what it reads: the report's fit on inputs an earlier case (or the shipped data) had
    // is that case's fit to the bit and is adopted, as the page adopts its baked fit; new inputs are fitted here.
    // Everything after it (the engine profiles, every prediction, the protocol's cases) runs on the mutated data.
    let inputs = report_fit_inputs(&ws);
    let fitted_before = report_fits().lock().expect("report fits").get(&inputs).cloned();
    if let Some(fit) = &fitted_before {
        let state = serde_json::json!({ "fingerprint": Workspace::fingerprint(&files), "all": fit, "engines": [] });
        assert!(ws.adopt_fitted_state(&files, &state.to_string()), "the report fit is adopted");
    }
    if ws.is_valid() {
        fit_and_check_what_changed(&ws);
    }
    // The page asks these of whatever loaded; none may panic either.
    for model in ws.models() {
        let _ = ws.sweep(&SweepQuery { model: &model, isl: 8192, osl: 1024, settings: &[], engine: None });
    }
    let _ = ws.fabric(&[]);
    let _ = ws.claims(None);
    // The sweeps and the model check above fitted the report's points wherever they ran.
    if fitted_before.is_none() && (ws.is_valid() || !ws.models().is_empty()) {
        report_fits().lock().expect("report fits").insert(inputs, ws.calibration(FitSet::All).clone());
    }
}

/// The report's fits computed so far, by what they read (`report_fit_inputs`), starting with the shipped data's
/// stored one (sim-core's protocol test checks it is what the data give).
fn report_fits() -> &'static Mutex<HashMap<String, Calibration>> {
    static FITS: OnceLock<Mutex<HashMap<String, Calibration>>> = OnceLock::new();
    FITS.get_or_init(|| {
        let ws = shipped_workspace();
        Mutex::new(HashMap::from([(report_fit_inputs(ws), ws.calibration(FitSet::All).clone())]))
    })
}

/// The model check of a dataset that still loads, fitted as a user's edited data are (the stored fits are another
/// data's): the report's two fits and every engine profile with the model check's thresholds on them, then the
/// protocol's own-data cases (fitted, pair from one) of each dataset whose fit reads the change, with the held-out
/// gate on their rows, and a plan of each of their scenarios. Not the whole protocol: its leave-one-out cases fit
/// every other dataset, a minute and a half per mutated file on two cores, and read the mutated points only as the
/// fitted case does; `protocol.rs` runs the whole protocol on the shipped data.
fn fit_and_check_what_changed(ws: &Workspace) {
    let _ = sim_core::report::model_check_with(&ws.dataset, ws.accuracy(FitSet::All), ws.accuracy(FitSet::Single));
    let datasets = ws.datasets();
    let mut changed: BTreeSet<String> =
        datasets.iter().filter(|d| fit_inputs(ws, d) != fit_inputs(shipped_workspace(), d)).cloned().collect();
    // A change no fit reads (a quote, a claim, a target in accuracy.json) still has the protocol's targets judged
    // on one case: the dataset with the fewest points, the cheapest to fit.
    if changed.is_empty() {
        let points = |d: &String| ws.points().iter().filter(|p| &p.dataset == d).count();
        changed.extend(datasets.iter().min_by_key(|d| points(d)).cloned());
    }
    let rows = ws.protocol_where(&|d, q| changed.contains(d) && q != Question::LeaveOneOut);
    if let Some(accuracy) = &ws.dataset.accuracy {
        let _ = held_out_gate::gate_diagnostics(accuracy, &rows);
    }
    let scenarios: BTreeSet<&str> =
        ws.points().iter().filter(|p| changed.contains(&p.dataset)).map(|p| p.scenario.as_str()).collect();
    for id in scenarios {
        if let Ok(run) = ws.report_run(id, &[], FitSet::All) {
            let _ = run.plan();
        }
    }
}

/// What the report's fit reads (`Workspace::calibration`), as text: its points' fit inputs, the default engine's
/// settings, and the draft acceptance of its models as the fit collects them from every scenario.
fn report_fit_inputs(ws: &Workspace) -> String {
    let models: BTreeSet<&str> =
        ws.points().iter().filter(|p| p.dataset == REPORT_DATASET).map(|p| p.model.as_str()).collect();
    let mut draft_priors =
        sim_core::stats::map_of(ws.scenarios.values().map(|s| (s.model.id.as_str(), s.model.draft_acceptance)));
    draft_priors.retain(|model, _| models.contains(model));
    format!("{} {:?} {draft_priors:?}", fit_inputs(ws, REPORT_DATASET), ws.engine_settings(DEFAULT_ENGINE))
}

/// Everything a fit of `dataset`'s points reads, as text: the points, their scenarios (machine, model, kernel
/// curves, overrides) and their engines' stated settings.
fn fit_inputs(ws: &Workspace, dataset: &str) -> String {
    let points: Vec<_> = ws.points().iter().filter(|p| p.dataset == dataset).collect();
    let scenarios: BTreeSet<&str> = points.iter().map(|p| p.scenario.as_str()).collect();
    let mut text = format!("{points:?}");
    for s in scenarios.into_iter().filter_map(|id| ws.scenarios.get(id)) {
        text.push_str(&format!("{s:?} {:?}", ws.engine_settings(&s.engine)));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_text_never_panics(index in 0usize..64, text in ".{0,400}") {
        run_with(index, text);
    }

    /// Cuts, splices and digit changes of real files: mostly still JSON, often still schema-valid.
    #[test]
    fn mutated_files_never_panic(index in 0usize..64, at in 0usize..100_000, len in 0usize..40, digit in 0u8..10, mode in 0u8..3) {
        let files = shipped();
        let original = &files[index % files.len()].text;
        let mut bytes = original.as_bytes().to_vec();
        let at = at % bytes.len().max(1);
        match mode {
            0 => bytes.truncate(at),
            1 => { let end = (at + len).min(bytes.len()); bytes.drain(at..end); }
            _ => {
                // Change a digit: values, concurrencies and versions move, the structure stays.
                if let Some(p) = bytes[at..].iter().position(u8::is_ascii_digit) { bytes[at + p] = b'0' + digit; }
            }
        }
        run_with(index, String::from_utf8_lossy(&bytes).into_owned());
    }
}

/// The shipped workspace, loaded once: the open-loop queries below ask it, and a mutated dataset's fit inputs are
/// compared with its.
fn shipped_workspace() -> &'static Workspace {
    static W: OnceLock<Workspace> = OnceLock::new();
    W.get_or_init(|| {
        let ws = Workspace::load(shipped(), None);
        // The stored fits, as the CLI adopts them (sim-core's protocol test checks they are what the data give).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
        let _ = ws.adopt_stored_fits(shipped(), &fsio::read_stored_fits(&dir).expect("data/fitted/"));
        ws
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any open load on any shipped scenario and mode answers or refuses, never panics: rates from the tiny to
    /// the infinite, any burstiness, cap and range ratio (the query layer checks them first).
    #[test]
    fn any_open_load_answers_or_refuses(
        scenario in 0usize..64,
        rate_exp in -12.0f64..6.0,
        infinite in proptest::bool::weighted(0.1),
        burstiness in -1.0f64..50.0,
        cap in 0u32..8,
        prompts in 0u32..24,
        ratio in -0.5f64..1.5,
        exponential in any::<bool>(),
        seed in any::<u64>(),
        mode in 0usize..4,
    ) {
        let ws = shipped_workspace();
        let ids: Vec<&String> = ws.dataset.scenarios.keys().collect();
        let id = ids[scenario % ids.len()];
        let Ok(run) = ws.report_run(id, &[], sim_core::fit::FitSet::All) else { return Ok(()) };
        let lengths = if exponential { LengthSpread::Exponential } else { LengthSpread::Uniform { range_ratio: ratio } };
        let load = OpenLoad {
            rate: if infinite { f64::INFINITY } else { 10f64.powf(rate_exp) },
            burstiness,
            max_concurrency: (cap > 0).then_some(cap),
            prompts,
            lengths,
            seed,
        };
        let q = OpenLoopQuery { modes: vec![Mode::ALL[mode % Mode::ALL.len()]], rates: vec![load.rate], load };
        let _ = run.open_loop(&q);
    }
}

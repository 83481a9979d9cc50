//! No input makes the loader, the validator, the model check or the query layer panic: random bytes, and real
//! files mutated.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // each test uses part of it
mod fsio;

use fsio::load_dir;
use proptest::prelude::*;
use sim_core::dataset::SourceText;
use sim_core::explore::{OpenLoopQuery, SweepQuery, Workspace};
use sim_core::model::serving::{LengthSpread, OpenLoad};
use sim_core::Mode;
use std::sync::OnceLock;

fn shipped() -> &'static Vec<SourceText> {
    static S: OnceLock<Vec<SourceText>> = OnceLock::new();
    S.get_or_init(|| load_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data"))
}

/// Replaces one file of the shipped dataset and runs everything `validate` runs.
fn run_with(index: usize, text: String) {
    let mut files = shipped().clone();
    let i = index % files.len();
    files[i].text = text;
    let ws = Workspace::load(&files, None);
    ws.model_check();
    // The page asks these of whatever loaded; none may panic either.
    for model in ws.models() {
        let _ = ws.sweep(&SweepQuery { model: &model, isl: 8192, osl: 1024, settings: &[], engine: None });
    }
    let _ = ws.fabric(&[]);
    let _ = ws.claims(None);
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

/// The shipped workspace, loaded once, for the open-loop queries below.
fn workspace() -> &'static Workspace {
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
        let ws = workspace();
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

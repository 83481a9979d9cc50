//! The accuracy protocol on the shipped data: every dataset answers the three questions (or says why it
//! cannot), and the sensitivity table moves when an assumed value that matters is scaled.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // only the readers are used here
mod fsio;

#[path = "../src/bin/sim-core/parallel.rs"]
mod parallel;

use sim_core::dataset::SourceText;
use sim_core::explore::{Question, Workspace};
use std::path::Path;
use std::sync::OnceLock;

fn data_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")
}

/// The shipped data's texts.
fn files() -> &'static [SourceText] {
    static FILES: OnceLock<Vec<SourceText>> = OnceLock::new();
    FILES.get_or_init(|| fsio::load_dir(&data_dir()).expect("data/"))
}

/// The shipped data, loaded once for every test here and fitted from scratch (the stored fits are not adopted:
/// this is where they are checked): a workspace computes each protocol row once, so the tests that read the
/// protocol share its fits instead of running them one test after another.
fn workspace() -> &'static Workspace {
    static WS: OnceLock<Workspace> = OnceLock::new();
    WS.get_or_init(|| {
        let ws = Workspace::load(files(), None);
        assert!(ws.is_valid(), "{:?}", ws.errors());
        // The protocol's fits on every core, as the CLI runs them: the tests below then read the same rows.
        parallel::precompute(&ws, &[sim_core::fit::FitSet::All, sim_core::fit::FitSet::Single]);
        ws
    })
}

/// The first place two JSON values differ, as a JSON pointer with both sides; numbers agree within a relative
/// 1e-9 (the last bits of a sum may come out otherwise on another machine, not the numbers a question reads).
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value::{Array, Number, Object};
    match (a, b) {
        (Number(x), Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            ((x - y).abs() > 1e-9 * x.abs().max(y.abs())).then(|| format!("{at}: {x} against {y}"))
        }
        (Array(x), Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (x, y))| first_difference(x, y, &format!("{at}/{i}")))
        }
        (Object(x), Object(y)) if x.keys().eq(y.keys()) => {
            x.iter().zip(y.values()).find_map(|((k, x), y)| first_difference(x, y, &format!("{at}/{k}")))
        }
        _ => (a != b).then(|| format!("{at}: {a} against {b}")),
    }
}

/// The fits stored under data/fitted/ are what this data and this build compute: every other command, test and
/// the page read them instead of fitting, so this is the one place they are fitted and compared.
#[test]
fn the_stored_fits_are_what_the_data_and_this_build_give() {
    let computed = workspace().stored_fits(files());
    let stored = fsio::read_stored_fits(&data_dir()).expect("data/fitted/");
    let names = |f: &[SourceText]| f.iter().map(|t| t.path.clone()).collect::<Vec<_>>();
    assert_eq!(names(&stored), names(&computed), "`sim-core validate --refit data/` writes every stored file");
    for (c, s) in computed.iter().zip(&stored) {
        let parse = |t: &SourceText| serde_json::from_str::<serde_json::Value>(&t.text).expect("JSON");
        if let Some(at) = first_difference(&parse(c), &parse(s), "") {
            panic!(
                "data/{} is not what this data and this build fit (computed against stored at {at}): run \
                 `sim-core validate --refit data/` and commit data/fitted/",
                s.path
            );
        }
    }
    // Read back into a fresh workspace, they are stored again byte for byte, with nothing fitted anew.
    let fresh = Workspace::load(files(), None);
    fresh.adopt_stored_fits(files(), &stored).expect("the stored fits are adopted");
    assert!(fresh.stored_fits(files()) == stored, "a stored fit does not read back to what was stored");
}

/// Stored fits of other data are not adopted, and say so naming the file.
#[test]
fn stored_fits_of_other_data_are_set_aside() {
    let stored = fsio::read_stored_fits(&data_dir()).expect("data/fitted/");
    let mut edited = files().to_vec();
    edited[0].text.push(' ');
    let ws = Workspace::load(&edited, None);
    let why = ws.adopt_stored_fits(&edited, &stored).expect_err("other data");
    assert_eq!(why.file(), "fitted/profiles.json");
    assert!(why.to_string().starts_with("computed from other data"), "{why}");
}

#[test]
fn every_dataset_answers_every_question() {
    let ws = workspace();
    let rows = ws.protocol();
    let datasets = ws.datasets();
    assert!(datasets.contains(&"gb300-report".to_string()), "{datasets:?}");
    assert_eq!(rows.len(), datasets.len() * Question::ALL.len());
    for r in &rows {
        // Either an error over some points, or the reason there is none; never both, never neither.
        assert_eq!(r.error.is_some(), r.missing.is_none(), "{r:?}");
        if let Some(e) = r.error {
            assert!(e.n > 0 && e.median_ape.is_finite() && e.p90_ape >= e.median_ape, "{r:?}");
        }
    }
    // The calibration dataset's fitted and pair-from-one numbers are the report's own (same fits).
    let gb = |q: Question| rows.iter().find(|r| r.dataset == "gb300-report" && r.question == q).and_then(|r| r.error);
    let fitted = gb(Question::Fitted).expect("fitted");
    let report = ws.accuracy(sim_core::fit::FitSet::All).overall.fitted.expect("report fitted");
    assert_eq!(fitted.n, report.n);
    assert!((fitted.median_ape - report.median_ape).abs() < 1e-9, "{fitted:?} vs {report:?}");
    let pair = gb(Question::PairFromOne).expect("pair from one");
    let single = ws.accuracy(sim_core::fit::FitSet::Single).overall.predicted.expect("report predicted");
    assert_eq!(pair.n, single.n, "the same pair points are predicted");
}

/// Issue 9's done-criterion for the NIM sweep: Llama-3.3-70B TP2 on two H100s, predicted with the profile fitted
/// on the other datasets alone, lands within 30% of every published concurrency (not only at the median).
#[test]
fn nim_left_out_lands_within_30_percent_at_every_concurrency() {
    let ws = workspace();
    let row = ws
        .protocol()
        .into_iter()
        .find(|r| r.dataset == "nvidia-nim-h100" && r.question == Question::LeaveOneOut)
        .expect("NIM's leave-one-out row");
    let (e, worst) = (row.error.expect("NIM points judged"), row.worst_ape.expect("a worst point"));
    assert_eq!(e.n, 8, "every published concurrency: {row:?}");
    assert!(worst >= e.p90_ape && worst <= 30.0, "{row:?}");
}

/// The link's assumed per-call latency (35 us) now reaches only PD's KV hand-off, once per request: TP's
/// collectives pay NCCL's own modelled latency (`model::nccl`, reported elsewhere). Halving and doubling it reaches
/// the pair's predictions (PD) but moves the predictive median by little, where it moved TP's by points before.
#[test]
fn sensitivity_reaches_pd_through_the_link_latency_and_tp_no_longer() {
    let ws = workspace();
    let link: Vec<_> = ws.assumptions().into_iter().filter(|a| a.label.starts_with("link.call_latency_s")).collect();
    assert_eq!(link.len(), 1);
    let rows = ws.sensitivity(&link);
    let r = &rows[0];
    assert_eq!(r.scales, vec![0.5, 1.0, 2.0]);
    assert!((r.value - 35e-6).abs() < 1e-12, "the link latency as used: {}", r.value);
    let p = &r.predictive_median;
    assert!((p[0] - p[1]).abs().max((p[2] - p[1]).abs()) < 0.5, "{p:?}");
}

#[test]
fn each_build_is_fitted_and_judged_under_what_its_profile_states() {
    // NIM's profile states TensorRT-LLM's admission and inherits vllm-generic's memory shares: the protocol's
    // `fitted` question must be the fit a profile of that build gets, started from those settings, not from
    // vLLM's defaults (which preempt where TensorRT-LLM queues).
    let ws = workspace();
    let dataset = "nvidia-nim-h100";
    let points: Vec<_> = ws.points().iter().filter(|p| p.dataset == dataset && !p.is_flagged()).cloned().collect();
    assert!(!points.is_empty());
    let engine = &ws.scenarios[&points[0].scenario].engine;
    let settings = ws.engine_settings(engine);
    assert!(!settings.is_empty(), "{engine} states its admission");
    let base = settings.applied_to(&sim_core::model::Coefficients::default());
    assert_eq!(base.admission, sim_core::model::Admission::GuaranteedNoEvict);
    let cal = sim_core::fit::fit_from(&base, &ws.scenarios, &points, sim_core::fit::FitSet::All, 1e-3);
    let own = sim_core::report::build_for(&ws.scenarios, &points, cal, &|_| true, &Default::default());
    let apes: Vec<f64> =
        own.rows.iter().filter(|r| r.role == sim_core::report::PointRole::Fitted).map(|r| r.ape).collect();
    let expected = sim_core::stats::ErrorStats::of(&apes).expect("fitted error");
    let row = ws
        .protocol()
        .into_iter()
        .find(|r| r.dataset == dataset && r.question == Question::Fitted)
        .and_then(|r| r.error)
        .expect("protocol row");
    assert_eq!(row.n, expected.n);
    assert!((row.median_ape - expected.median_ape).abs() < 1e-9, "{row:?} vs {expected:?}");
    assert!((row.p90_ape - expected.p90_ape).abs() < 1e-9, "{row:?} vs {expected:?}");
}

#[test]
fn every_assumed_card_field_of_the_report_has_a_sensitivity_row() {
    let ws = workspace();
    let labels: Vec<String> = ws.assumptions().into_iter().map(|a| a.label).collect();
    let report_models = ["deepseek-v4.1-flash", "glm-5.2", "glm-5.3", "glm-5.3-flash", "minimax-m3"];
    for id in report_models {
        let card = &ws.dataset.models[id];
        let arch = serde_json::to_value(&card.architecture).expect("architecture");
        for (field, q) in arch.as_object().expect("object") {
            if q.get("basis").and_then(|b| b.as_str()) == Some("assumed") {
                let wanted = format!("model.{field} ({id}, assumed");
                assert!(labels.iter().any(|l| l.starts_with(&wanted)), "no row for {wanted}: {labels:?}");
            }
        }
    }
    // A field no override reaches is scaled in the card and its scenarios resolved again: GLM-5.2's assumed
    // sparse top-k (2,048 positions) moves what long prompts read, so the fitted error moves with it.
    let top_k: Vec<_> =
        ws.assumptions().into_iter().filter(|a| a.label.starts_with("model.sparse_top_k (glm-5.2,")).collect();
    assert_eq!(top_k.len(), 1);
    let r = &ws.sensitivity(&top_k)[0];
    assert_eq!(r.value, 2048.0);
    let f = &r.fitted_median;
    assert!(f.iter().all(|x| x.is_finite()) && (f[0] != f[1] || f[2] != f[1]), "{f:?}");
}

/// What `validate` says it enforces: every threshold of `accuracy.json` with its result (all met on the shipped
/// data), and the protocol's targets counted with the ones the model misses, as `report` marks them MISSED.
#[test]
fn the_accuracy_summary_lists_enforced_targets_and_missed_protocol_ones() {
    let ws = workspace();
    let s = ws.accuracy_summary().expect("accuracy.json is shipped");
    let mut pointers: Vec<&str> = s.enforced.iter().map(|t| t.pointer.as_str()).collect();
    pointers.dedup();
    // The in-sample p90 is retired; the held-out gate enforces each recorded median.
    let gate: Vec<String> = (0..8).map(|i| format!("/held_out_gate/medians/{i}/median_ape")).collect();
    let mut want = vec!["/fitted_median_ape_max", "/predictive_median_ape_max", "/fabric_peak_ape_max"];
    want.extend(gate.iter().map(String::as_str));
    assert_eq!(pointers, want);
    assert!(s.enforced.iter().all(|t| t.met()), "{s}");
    let rows = ws.protocol();
    // Each row's throughput target first, then every row's other checks (latency, open loop, mode order).
    let mut missed: Vec<String> =
        rows.iter().filter(|r| r.met == Some(false)).map(|r| format!("{} {}", r.dataset, r.question.name())).collect();
    for r in &rows {
        for c in r.checks.iter().filter(|c| c.met == Some(false)) {
            missed.push(format!("{} {} {}", r.dataset, r.question.name(), c.metric.name()));
        }
    }
    assert_eq!(s.protocol_missed, missed);
    let checks: usize = rows.iter().map(|r| r.checks.len()).sum();
    assert_eq!(s.protocol_targets, rows.iter().filter(|r| r.target.is_some()).count() + checks);
    // The latency targets are judged wherever a dataset states latencies, the open-loop ones on one Spark's
    // rate sweep, the modes' order on the GB10 pair.
    let judged = |dataset: &str, metric: &str| {
        rows.iter()
            .any(|r| r.dataset == dataset && r.checks.iter().any(|c| c.metric.name() == metric && c.met.is_some()))
    };
    assert!(judged("nvidia-nim-h100", "ttft") && judged("gpustack-h100", "tpot"), "{rows:?}");
    assert!(judged("djangodevreng-dgx-spark", "throughput") && judged("djangodevreng-dgx-spark", "ttft"));
    assert!(judged("flash7777-gb10-pair", "mode_order"));
    let line = s.to_string();
    assert!(line.contains(&format!("{} of {} missed", missed.len(), s.protocol_targets)), "{line}");
}

/// A goodput answer's bands are intervals of the held-out errors closest to the scenario: glm-5.2 runs the profile
/// fitted on the GB300 report's stations, so a pair mode measured there takes that dataset's pair-from-one errors of
/// that mode, one machine the leave-one-out errors of that machine (no question leaves a model out), and a mode or
/// statistic no held-out point measured says so instead of borrowing a number.
#[test]
fn a_goodput_band_is_the_interval_of_the_closest_held_out_errors() {
    use sim_core::explore::confidence::Closest;
    use sim_core::explore::held_out::{interval, BandMetric};
    use sim_core::explore::LatencyStatistic;
    use sim_core::Mode;
    let ws = workspace();
    let glm = ws.scenarios.get("glm-5.2").expect("glm-5.2").clone();
    let closest = ws.closest_case(&glm);
    assert_eq!(closest, Closest::SameHardware { dataset: "gb300-report".into() });
    let bands = ws.bands(&glm);
    assert_eq!(bands.coverage, 0.8, "accuracy.json's band_coverage");
    // TP2 from the pair-from-one row's own held-out TP2 points, recomputed here.
    let rows = ws.protocol_where(&|d, q| d == "gb300-report" && q == Question::PairFromOne);
    let ratios: Vec<f64> = rows[0]
        .held_out
        .iter()
        .filter(|p| p.mode == Mode::Tp2 && p.metric == BandMetric::Throughput)
        .map(|p| p.measured / p.predicted)
        .collect();
    assert!(ratios.len() >= 9, "{ratios:?}");
    let tp2 = bands.tok_s(Mode::Tp2);
    assert_eq!(tp2.interval, interval(&ratios, 0.8));
    assert_eq!(
        tp2.evidence,
        format!("pair from one on gb300-report (this machine): {} held-out tp2 tok/s points", ratios.len())
    );
    let (lo, hi) = tp2.interval.expect("an interval");
    assert!(lo < 1.0 && lo < hi, "{tp2:?}");
    // One machine: the machine's leave-one-out errors, never the fitted (in-sample) ones.
    let single = bands.tok_s(Mode::Single);
    assert!(single.evidence.starts_with("leave one dataset out, on gb300-station"), "{single:?}");
    // PP2 was measured on two points of one other machine only, and no source states a p90.
    let pp2 = bands.tok_s(Mode::Pp2);
    assert_eq!(pp2.interval, None);
    assert!(pp2.evidence.starts_with("no measured evidence: 2 held-out points of pp2 tok/s"), "{pp2:?}");
    let p90 = bands.ttft(Mode::Single, LatencyStatistic::P90);
    assert_eq!((p90.interval, p90.evidence.starts_with("no measured evidence")), (None, true), "{p90:?}");
    // A planner example on a machine no fitted profile saw: leave one out on other machines.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/scenarios/plan-minimax-m3-h200-sxm.json"),
    )
    .expect("scenario");
    let run = ws.scenario_from_text("plan.json", &text, sim_core::fit::FitSet::All).expect("resolves");
    assert_eq!(ws.closest_case(&run.scenario), Closest::Elsewhere);
    let b = ws.bands(&run.scenario).tok_s(Mode::Tp2);
    assert!(b.evidence.starts_with("leave one dataset out, MoE models on any machine"), "{b:?}");
}

/// Every held-out point is counted once per question against the band printed for it, and each question and
/// metric with points meets `accuracy.json`'s share (what `validate` enforces).
#[test]
fn held_out_points_fall_inside_their_bands_as_often_as_the_target_asks() {
    let ws = workspace();
    let rows = ws.coverage_check();
    let protocol = ws.protocol();
    let judged = |q: Question| -> usize {
        protocol.iter().filter(|r| r.question == q).filter_map(|r| r.error).map(|e| e.n).sum()
    };
    let tok_s = |question: &str| {
        rows.iter()
            .find(|r| r.question == question && r.metric == sim_core::explore::held_out::BandMetric::Throughput)
            .map(|r| r.points + r.without_band)
            .expect("a throughput row")
    };
    assert_eq!(tok_s("pair from one"), judged(Question::PairFromOne));
    assert_eq!(tok_s("leave one out"), judged(Question::LeaveOneOut));
    assert_eq!(tok_s("leave one out, machine unmeasured"), judged(Question::LeaveOneOut));
    for r in &rows {
        assert!(r.met() != Some(false), "{r:?}");
    }
    assert!(rows.iter().filter(|r| r.met() == Some(true)).count() >= 3, "{rows:?}");
    assert!(ws.coverage_diagnostics().is_empty());
}

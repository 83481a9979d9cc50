//! Importers: sample outputs of nccl-tests and vLLM's serving benchmark in, dataset files that validate
//! together with the shipped data out; broken samples give a diagnostic that names the file.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // each test uses part of it
mod fsio;

use sim_core::dataset::schema::{Collective, Flag, Mode, RequestRate, Unbounded};
use sim_core::dataset::{load, validate, SourceText};
use sim_core::import::{self, Input, NcclOptions, VllmOptions};
use sim_core::model::Coefficients;
use sim_core::Diagnostic;
use std::path::{Path, PathBuf};
use std::process::Command;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/import-samples")
}

fn input(name: &str) -> Input {
    let text = std::fs::read_to_string(samples().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    (name.to_string(), text)
}

/// Loads the shipped data plus `text` at `path` and returns every error `load` and `check` report.
fn errors_with(path: &str, text: &str) -> Vec<Diagnostic> {
    let mut files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data dir");
    files.push(SourceText { path: path.into(), text: text.into() });
    let (ds, mut diags) = load(&files);
    diags.extend(validate::check(&ds, None));
    diags.into_iter().filter(Diagnostic::is_error).collect()
}

fn assert_validates(path: &str, text: &str) {
    let errs = errors_with(path, text);
    assert!(
        errs.is_empty(),
        "{path} does not validate:\n{}\n{text}",
        errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    );
}

fn glm() -> VllmOptions {
    VllmOptions { model: Some("glm-5.2".into()), ..VllmOptions::default() }
}

/// An imported point's quote is the fragments it was read from joined by ` … `: each one is in the text.
fn verbatim_in(quote: &str, text: &str) -> bool {
    !quote.is_empty() && quote.split(" … ").all(|piece| text.contains(piece))
}

#[test]
fn nccl_text_json_and_alltoall_make_one_valid_fabric_file() {
    let inputs = [input("all_reduce_perf.txt"), input("alltoall_perf.txt"), input("all_gather_perf.json")];
    let fab = import::nccl_tests(&inputs, &NcclOptions::default()).expect("imports");
    assert_eq!(fab.id, "imported");
    assert_eq!(fab.hardware, "gb300-station");
    assert_eq!((fab.link.rails, fab.link.line_rate_gbit_s_per_rail, fab.link.mtu_bytes), (2, 400.0, 9000));
    assert!(fab.link.note.as_deref().unwrap_or("").contains("given on the command line"));
    assert_eq!(fab.sources.len(), 4);
    assert!(fab.sources.iter().all(|s| s.role == "import"));

    let ar = &fab.nccl[0];
    assert_eq!(ar.collective, Collective::AllReduce);
    assert_eq!(ar.peak_size_bytes, 1073741824.0);
    assert_eq!(ar.peak_busbw_gb_s, 91.03);
    assert_eq!(ar.busbw_16gib_gb_s, Some(90.56));
    assert_eq!(ar.from.source, "import-1");
    assert!(ar.from.quote.starts_with("1073741824") && ar.from.quote.contains("91.03"), "{}", ar.from.quote);
    assert!(ar.note.as_deref().unwrap_or("").contains("out-of-place"));

    let a2a = &fab.nccl[1];
    assert_eq!(a2a.collective, Collective::Alltoall, "named by the file name");
    assert_eq!(a2a.peak_busbw_gb_s, 82.64);
    assert_eq!(a2a.busbw_16gib_gb_s, None, "the run stops at 1 GiB");
    assert!(a2a.note.as_deref().unwrap_or("").contains("1073741824 bytes"));

    let ag = &fab.nccl[2];
    assert_eq!(ag.collective, Collective::AllGather, "named by args[0] of the JSON");
    assert_eq!(ag.peak_size_bytes, 17179869184.0);
    assert!(ag.busbw_16gib_gb_s.is_some_and(|b| (b - ag.peak_busbw_gb_s).abs() < 1e-12));
    assert!(ag.from.quote.starts_with("{\"size\":17179869184,"), "{}", ag.from.quote);
    assert!(inputs[2].1.contains(&ag.from.quote), "the JSON quote is verbatim");

    for (row, (_, text)) in fab.nccl.iter().zip(&inputs) {
        assert!(text.contains(&row.from.quote), "quote of {} is verbatim", row.collective.name());
    }
    let json = serde_json::to_string_pretty(&fab).unwrap();
    assert_validates("fabric/imported.json", &json);
}

#[test]
fn nccl_options_override_the_file() {
    let opts = NcclOptions {
        collective: Some(Collective::SendrecvBidirectional),
        id: "lab".into(),
        rails: 1,
        ..NcclOptions::default()
    };
    let fab = import::nccl_tests(&[input("all_reduce_perf.txt")], &opts).expect("imports");
    assert_eq!(fab.nccl[0].collective, Collective::SendrecvBidirectional);
    assert_eq!(fab.link.rails, 1);
    assert_validates("fabric/lab.json", &serde_json::to_string(&fab).unwrap());
}

#[test]
fn vllm_serve_results_make_one_series() {
    let inputs = [input("vllm-serve-c8.json"), input("vllm-serve-c1.json"), input("vllm-serve-c32.json")];
    let sweep = import::vllm_bench(&inputs, &glm()).expect("imports");
    assert_eq!(sweep.model, "glm-5.2");
    assert_eq!(sweep.series.len(), 1);
    let s = &sweep.series[0];
    assert_eq!((s.mode, s.isl, s.osl, s.hardware.as_str()), (Mode::Single, 1024, 1024, "gb300-station"));
    let got: Vec<(f64, f64)> = s.points.iter().map(|p| (p.concurrency, p.output_tok_s)).collect();
    assert_eq!(got, vec![(1.0, 36.84127519073461), (8.0, 221.5066230897314), (32.0, 512.3361904761904)]);
    assert_eq!(s.points[0].from.source, "import-2", "sources follow the input order");
    assert!(s.points[0].from.quote.contains("\"output_throughput\": 36.84127519073461"), "{}", s.points[0].from.quote);
    assert!(sweep.sources.iter().all(|src| src.title == "vllm bench serve output"));
    assert_validates("sweeps/imported.json", &serde_json::to_string_pretty(&sweep).unwrap());

    // Without --model the id comes from model_id ("zai-org/GLM-5.2" -> "glm-5.2").
    let by_default = import::vllm_bench(&inputs, &VllmOptions::default()).expect("imports");
    assert_eq!(by_default.model, "glm-5.2");
}

#[test]
fn benchmark_serving_result_and_options() {
    let inputs = [input("benchmark_serving-c4.json")];
    let sweep = import::vllm_bench(&inputs, &VllmOptions { mode: Mode::Tp2, ..glm() }).expect("imports");
    let s = &sweep.series[0];
    assert_eq!((s.mode, s.isl, s.osl), (Mode::Tp2, 128, 16));
    assert_eq!(s.points[0].concurrency, 4.0);
    assert_eq!(s.points[0].output_tok_s, 131.77249);
    assert_eq!(sweep.sources[0].title, "benchmark_serving.py output");
    assert_validates("sweeps/imported.json", &serde_json::to_string_pretty(&sweep).unwrap());

    // --isl far from what the run measured is refused, naming the file.
    let d = import::vllm_bench(&inputs, &VllmOptions { isl: Some(1024), ..glm() }).unwrap_err();
    assert_eq!(d.file, "benchmark_serving-c4.json");
    assert!(d.message.contains("5%"), "{}", d.message);
}

#[test]
fn vllm_problems_name_the_files() {
    // The same concurrency twice in one series.
    let twice = [input("vllm-serve-c8.json"), ("copy-c8.json".to_string(), input("vllm-serve-c8.json").1)];
    let d = import::vllm_bench(&twice, &glm()).unwrap_err();
    assert!(d.message.contains("vllm-serve-c8.json") && d.message.contains("copy-c8.json"), "{}", d.message);

    // No max_concurrency: an error unless --concurrency is given.
    let open_loop = input("vllm-serve-c1.json").1.replace("\"max_concurrency\": 1,", "\"max_concurrency\": null,");
    let d = import::vllm_bench(&[("open.json".into(), open_loop.clone())], &glm()).unwrap_err();
    assert_eq!((d.file.as_str(), d.pointer.as_str()), ("open.json", "/max_concurrency"));
    assert!(d.line.is_some());
    let ok = import::vllm_bench(&[("open.json".into(), open_loop)], &VllmOptions { concurrency: Some(2), ..glm() })
        .expect("imports");
    assert_eq!(ok.series[0].points[0].concurrency, 2.0);

    // Python's bare NaN where a number is needed.
    let nan =
        input("vllm-serve-c1.json").1.replace("\"output_throughput\": 36.84127519073461", "\"output_throughput\": NaN");
    let d = import::vllm_bench(&[("nan.json".into(), nan)], &glm()).unwrap_err();
    assert_eq!(d.pointer, "/output_throughput");
    assert!(d.message.contains("finite"), "{}", d.message);

    // A missing field.
    let missing = input("vllm-serve-c1.json").1.replace("\"total_output_tokens\": 10240, ", "");
    let d = import::vllm_bench(&[("missing.json".into(), missing)], &glm()).unwrap_err();
    assert!(d.message.contains("total_output_tokens"), "{}", d.message);

    // --append-result: one result per line, each a point.
    let lines = format!("{}\n{}", input("vllm-serve-c1.json").1, input("vllm-serve-c32.json").1);
    let sweep = import::vllm_bench(&[("appended.json".into(), lines)], &glm()).expect("imports");
    assert_eq!(sweep.series[0].points.len(), 2);
}

/// `text` (one result on one line) indented the way `json.dump(indent=4)` or a pretty-printer writes it.
fn indented(text: &str) -> String {
    let body = text.trim().trim_start_matches('{').trim_end_matches('}');
    format!("{{\n    {}\n}}", body.replace(", \"", ",\n    \""))
}

/// (concurrency, output tok/s, quote) of every point of the first series.
fn points(sweep: &sim_core::dataset::schema::SweepFile) -> Vec<(f64, f64, String)> {
    sweep.series[0].points.iter().map(|p| (p.concurrency, p.output_tok_s, p.from.quote.clone())).collect()
}

#[test]
fn one_input_holds_results_one_per_line_concatenated_or_indented() {
    let [c1, c8, c32] = ["vllm-serve-c1.json", "vllm-serve-c8.json", "vllm-serve-c32.json"].map(|f| input(f).1);
    let separate = import::vllm_bench(
        &[input("vllm-serve-c1.json"), input("vllm-serve-c8.json"), input("vllm-serve-c32.json")],
        &glm(),
    )
    .expect("imports");
    // A paste of three files: one indented, one right after it on the same line, one indented on its own.
    let pasted = format!("\n{}{}\n\n{}\n", indented(&c1), c8.trim(), indented(&c32));
    let sweep = import::vllm_bench(&[("pasted results".into(), pasted.clone())], &glm()).expect("imports");
    assert_eq!(points(&sweep), points(&separate), "the same points as three files");
    assert_eq!(sweep.sources.len(), 1);
    assert!(sweep.series[0].points.iter().all(|p| p.from.source == "import-1" && verbatim_in(&p.from.quote, &pasted)));
    assert_validates("sweeps/pasted.json", &serde_json::to_string_pretty(&sweep).unwrap());

    // A bad result names the input and the line it starts on (here the third of three lines).
    let bad_c32 = c32.replace("\"completed\": 320", "\"completed\": 0");
    assert_ne!(bad_c32, c32, "the sample says completed 320");
    let text = format!("{}\n{}\n{}", c1.trim(), c8.trim(), bad_c32.trim());
    let d = import::vllm_bench(&[("runs.jsonl".into(), text)], &glm()).unwrap_err();
    assert_eq!((d.file.as_str(), d.pointer.as_str(), d.line), ("runs.jsonl", "/completed", Some(3)), "{d}");

    // Broken JSON inside the second of two indented results: the line in the whole input.
    let broken = indented(&c8).replace("\"failed\": 0,", "\"failed\": 0,,");
    let text = format!("{}\n{broken}\n", indented(&c1));
    let line = text.lines().position(|l| l.contains("\"failed\": 0,,")).unwrap() + 1;
    let d = import::vllm_bench(&[("pasted results".into(), text)], &glm()).unwrap_err();
    assert_eq!((d.file.as_str(), d.line), ("pasted results", Some(line)), "{d}");
    assert!(d.message.contains("invalid JSON"), "{d}");

    // Text after the last complete result, and a result cut short after a complete one.
    let d = import::vllm_bench(&[("p".into(), format!("{}\n\nSee you", c1.trim()))], &glm()).unwrap_err();
    assert_eq!((d.line, d.column), (Some(3), Some(1)), "{d}");
    assert!(d.message.contains("after the last complete result"), "{d}");
    let cut = format!("{}\n{}", c1.trim(), &c8[..c8.len() / 2]);
    let d = import::vllm_bench(&[("p".into(), cut)], &glm()).unwrap_err();
    assert!(d.message.contains("truncated"), "{d}");

    // The same concurrency twice in one paste: the message names both lines.
    let d = import::vllm_bench(&[("p".into(), format!("{c8}\n{c1}\n{c8}"))], &glm()).unwrap_err();
    assert!(d.message.contains("p (line 1)") && d.message.contains("p (line 3)"), "{d}");
}

#[test]
fn broken_samples_give_located_diagnostics() {
    let d = import::vllm_bench(&[input("broken-truncated.json")], &glm()).unwrap_err();
    assert_eq!(d.file, "broken-truncated.json");
    assert!(d.message.contains("truncated"), "{}", d.message);
    assert!(d.line.is_some() && d.hint.is_some());

    let d = import::vllm_bench(&[input("broken-not-a-result.json")], &glm()).unwrap_err();
    assert_eq!(d.file, "broken-not-a-result.json");
    assert!(d.message.contains("not a vLLM serving benchmark result"), "{}", d.message);

    let d = import::nccl_tests(&[input("broken-no-rows.txt")], &NcclOptions::default()).unwrap_err();
    assert_eq!(d.file, "broken-no-rows.txt");
    assert!(d.message.contains("no data rows"), "{}", d.message);

    let d = import::nccl_tests(&[input("broken-short-row.txt")], &NcclOptions::default()).unwrap_err();
    assert_eq!(d.file, "broken-short-row.txt");
    assert_eq!(d.line, Some(20));
    assert!(d.message.contains("too few columns"), "{}", d.message);

    // Cross-wired formats point at the other importer.
    let d = import::nccl_tests(&[input("vllm-serve-c1.json")], &NcclOptions::default()).unwrap_err();
    assert!(d.hint.as_deref().unwrap_or("").contains("vllm-bench"), "{d}");
    let d = import::vllm_bench(&[input("all_reduce_perf.txt")], &glm()).unwrap_err();
    assert!(d.hint.as_deref().unwrap_or("").contains("nccl-tests"), "{d}");
    let d = import::nccl_tests(&[("notes.txt".into(), "hello\nworld\n".into())], &NcclOptions::default()).unwrap_err();
    assert!(d.message.contains("unknown format"), "{d}");
}

#[test]
fn no_input_makes_an_importer_panic() {
    let texts = [input("all_reduce_perf.txt").1, input("all_gather_perf.json").1, input("vllm-serve-c8.json").1];
    for text in &texts {
        // Every prefix (cut at char boundaries, in steps) and a few mangled versions.
        let cuts: Vec<usize> = (0..text.len()).step_by(37).filter(|i| text.is_char_boundary(*i)).collect();
        for &cut in &cuts {
            let t = &text[..cut];
            let _ = import::nccl_tests(&[("x".into(), t.into())], &NcclOptions::default());
            let _ = import::vllm_bench(&[("x".into(), t.into())], &glm());
        }
        for mangled in [text.replace("0", "nan"), text.replace(' ', ""), text.replace("\"", ""), text.replace('1', "-")]
        {
            let _ = import::nccl_tests(&[("x".into(), mangled.clone())], &NcclOptions::default());
            let _ = import::vllm_bench(&[("x".into(), mangled)], &glm());
        }
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sim-core"))
}

#[test]
fn cli_exit_codes() {
    let ok = bin()
        .args(["import", "nccl-tests", "--id", "cli"])
        .arg(samples().join("all_reduce_perf.txt"))
        .output()
        .expect("run");
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let text = String::from_utf8_lossy(&ok.stdout).into_owned();
    assert_validates("fabric/cli.json", &text);

    let bad = bin().args(["import", "nccl-tests"]).arg(samples().join("broken-no-rows.txt")).output().expect("run");
    assert_eq!(bad.status.code(), Some(1));
    let all = format!("{}{}", String::from_utf8_lossy(&bad.stdout), String::from_utf8_lossy(&bad.stderr));
    assert!(all.contains("broken-no-rows.txt"), "{all}");

    let files = ["vllm-serve-c1.json", "vllm-serve-c8.json", "vllm-serve-c32.json"].map(|f| samples().join(f));
    let ok = bin()
        .args(["import", "vllm-bench", "--hardware", "gb300-station", "--model", "glm-5.2", "--mode", "tp2"])
        .args(&files)
        .output()
        .expect("run");
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let text = String::from_utf8_lossy(&ok.stdout).into_owned();
    assert!(text.contains("\"mode\": \"tp2\""));
    assert_validates("sweeps/cli.json", &text);

    // The CLI reads what the page accepts: several results in one file, indented one after another.
    let dir = std::env::temp_dir().join(format!("sim-core-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let results = files.iter().map(|f| indented(&std::fs::read_to_string(f).expect("sample"))).collect::<Vec<_>>();
    let pasted = dir.join("pasted.json");
    std::fs::write(&pasted, results.join("\n")).expect("write");
    let one = bin()
        .args(["import", "vllm-bench", "--hardware", "gb300-station", "--model", "glm-5.2", "--mode", "tp2"])
        .arg(&pasted)
        .output()
        .expect("run");
    assert_eq!(one.status.code(), Some(0), "{}", String::from_utf8_lossy(&one.stderr));
    let read = |out: &[u8]| serde_json::from_slice::<sim_core::dataset::schema::SweepFile>(out).expect("a sweep file");
    assert_eq!(points(&read(&one.stdout)), points(&read(&ok.stdout)), "one file of three results = three files");
    // A bad result in it is named by file and line.
    std::fs::write(
        &pasted,
        format!("{}\n{}", results[0], results[1].replace("\"completed\": 80", "\"completed\": -1")),
    )
    .expect("write");
    let bad = bin()
        .args(["import", "vllm-bench", "--hardware", "gb300-station", "--model", "glm-5.2"])
        .arg(&pasted)
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(1));
    let line = results[0].lines().count() + results[1].lines().position(|l| l.contains("\"completed\"")).unwrap() + 1;
    let all = format!("{}{}", String::from_utf8_lossy(&bad.stdout), String::from_utf8_lossy(&bad.stderr));
    assert!(all.contains(&format!("pasted.json:{line}:")), "{all}");
    std::fs::remove_dir_all(&dir).ok();

    let bad = bin()
        .args(["import", "vllm-bench", "--hardware", "gb300-station"])
        .arg(samples().join("broken-truncated.json"))
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(1));
    let missing = bin()
        .args(["import", "vllm-bench", "--hardware", "gb300-station"])
        .arg(samples().join("does-not-exist.json"))
        .output()
        .expect("run");
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn oversized_inputs_are_refused_naming_the_file_and_the_limit() {
    // A paste over the limit (what the page hands over): refused before parsing, even blank text.
    let big = " ".repeat(import::MAX_INPUT_BYTES as usize + 1);
    let d = import::vllm_bench(&[("pasted results".into(), big.clone())], &glm()).unwrap_err();
    assert!(d.file == "pasted results" && d.message.contains("over the 256 MiB"), "{d}");
    let d = import::nccl_tests(&[("log.txt".into(), big)], &NcclOptions::default()).unwrap_err();
    assert!(d.file == "log.txt" && d.message.contains("over the 256 MiB"), "{d}");

    // The CLI refuses big files unread: sparse files take no disk and would take seconds to read.
    let dir = std::env::temp_dir().join(format!("sim-core-huge-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sweeps")).expect("temp dir");
    let log = dir.join("huge-log.txt");
    std::fs::File::create(&log).and_then(|f| f.set_len(300 << 20)).expect("sparse file");
    let out = bin().args(["import", "nccl-tests"]).arg(&log).output().expect("run");
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("huge-log.txt") && all.contains("300.0 MiB, over the 256 MiB"), "{all}");

    // A dataset file over 1 MiB: `load_dir` (what `sim-core validate <dir>` reads with) names it and the limit.
    std::fs::remove_file(&log).ok();
    let sweep = dir.join("sweeps/huge.json");
    std::fs::File::create(&sweep).and_then(|f| f.set_len(fsio::MAX_DATASET_FILE_BYTES + 1)).expect("sparse file");
    let e = fsio::load_dir(&dir).unwrap_err();
    assert!(e.contains("sweeps/huge.json") && e.contains("over the 1 MiB"), "{e}");
    let out = bin().arg("validate").arg(&dir).output().expect("run");
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("over the 1 MiB"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn vllm_serve_result_with_every_field() {
    let file = input("vllm-serve-mtp-c16.json");
    let sweep = import::vllm_bench(std::slice::from_ref(&file), &VllmOptions::default()).expect("imports");
    assert_eq!(sweep.model, "glm-5.2");
    let p = &sweep.series[0].points[0];
    assert_eq!((p.concurrency, p.output_tok_s), (16.0, 612.4371829145063));
    assert!(p.flags.is_empty(), "{:?}", p.flags);
    let l = p.latency();
    assert_eq!((l.ttft_ms, l.median_ttft_ms, l.p99_ttft_ms), (Some(412.53), Some(398.1), Some(901.77)));
    assert_eq!((l.tpot_ms, l.median_tpot_ms, l.p99_tpot_ms), (Some(24.71380512), Some(24.1022), Some(31.0561)));
    assert_eq!((l.itl_ms, l.median_itl_ms, l.p99_itl_ms), (Some(69.73), Some(66.02), Some(151.3)));
    assert_eq!((l.e2el_ms, l.median_e2el_ms, l.p99_e2el_ms), (Some(25693.2), Some(25410.7), Some(32450.1)));
    assert_eq!(p.request_rate, Some(RequestRate::Unbounded(Unbounded::Inf)), "\"request_rate\": \"inf\"");
    assert_eq!(p.max_concurrent_requests, Some(16));
    let sd = p.spec_decode.as_ref().expect("spec decode counters");
    assert_eq!((sd.num_drafts, sd.draft_tokens, sd.accepted_tokens), (Some(58216), Some(174648), Some(106064)));
    assert_eq!(sd.per_position_acceptance_rates.len(), 3);
    assert!((sd.acceptance_length.unwrap() - 2.8219046310292706).abs() < 1e-15);
    assert!((sd.acceptance_rate.unwrap() - 60.73015436764234).abs() < 1e-9);
    // vLLM's acceptance length (2.82 tokens per step with 3 drafts, bonus included) is the model's
    // 1 + p + p^2 + p^3: p = 0.775 per draft token, not the acceptance rate (60.7%) nor the length / 4.
    let a = sd.per_token_acceptance().expect("converts");
    assert!((1.0 + a + a * a + a * a * a - 2.8219046310292706).abs() < 1e-9, "{a}");
    assert!((a - 0.775).abs() < 0.005, "{a}");
    // Setup and --metadata keys, as text; measurements and null values are not metadata.
    let m = &p.metadata;
    for (k, v) in [
        ("backend", "vllm"),
        ("vllm_version", "0.19.1"),
        ("tensor_parallel_size", "4"),
        ("num_prompts", "160"),
        ("burstiness", "1.0"),
        ("date", "20260305-101502"),
    ] {
        assert_eq!(m.get(k).map(String::as_str), Some(v), "{k} in {m:?}");
    }
    for k in ["label", "mean_ttft_ms", "std_itl_ms", "output_throughput", "spec_decode_num_drafts", "request_rate"] {
        assert!(!m.contains_key(k), "{k} is not metadata");
    }
    // The quote holds every number the point states, each piece verbatim in the file.
    assert!(verbatim_in(&p.from.quote, &file.1), "{}", p.from.quote);
    for piece in [
        "\"p99_e2el_ms\": 32450.1",
        "\"spec_decode_num_drafts\": 58216",
        "\"request_rate\": \"inf\"",
        "\"max_concurrent_requests\": 16",
    ] {
        assert!(p.from.quote.contains(piece), "{piece} in {}", p.from.quote);
    }
    assert!(p.note.as_deref().unwrap_or("").contains("measured draft acceptance 0.77"), "{:?}", p.note);
    let json = serde_json::to_string_pretty(&sweep).unwrap();
    assert_validates("sweeps/imported.json", &json);

    // A number the quote does not hold is caught by the validator, at its own pointer.
    let edited = json.replace("\"p99_ttft_ms\": 901.77", "\"p99_ttft_ms\": 911.77");
    let errs = errors_with("sweeps/imported.json", &edited);
    assert!(errs.iter().any(|e| e.pointer == "/series/0/points/0/p99_ttft_ms"), "{errs:?}");
    // So is an acceptance length the counters do not give.
    let edited = json.replace("\"acceptance_length\": 2.8219046310292706", "\"acceptance_length\": 2.9");
    let errs = errors_with("sweeps/imported.json", &edited);
    assert!(errs.iter().any(|e| e.pointer == "/series/0/points/0/spec_decode/acceptance_length"), "{errs:?}");
}

#[test]
fn kv_capped_run_is_flagged_and_left_out_of_calibration() {
    let capped = input("vllm-serve-mtp-c64-kv-capped.json");
    let sweep = import::vllm_bench(&[input("vllm-serve-mtp-c16.json"), capped.clone()], &glm()).expect("imports");
    let points = &sweep.series[0].points;
    assert_eq!(points.iter().map(|p| p.concurrency).collect::<Vec<_>>(), vec![16.0, 64.0]);
    assert!(points[0].flags.is_empty());
    assert_eq!(points[1].flags, vec![Flag::ConcurrencyCapped], "41 requests in flight at most, 64 clients");
    assert!(points[1].note.as_deref().unwrap_or("").contains("at most 41 requests"), "{:?}", points[1].note);
    let json = serde_json::to_string_pretty(&sweep).unwrap();
    assert_validates("sweeps/imported.json", &json);
    // Without its flag the point fails validation: a capped run cannot slip into a fit.
    let unflagged: serde_json::Value = {
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["series"][0]["points"][1]["flags"] = serde_json::json!([]);
        v
    };
    let errs = errors_with("sweeps/imported.json", &unflagged.to_string());
    assert!(
        errs.iter().any(|e| e.pointer == "/series/0/points/1/flags" && e.message.contains("concurrency_capped")),
        "{errs:?}"
    );

    // Calibration: the capped point is not used, and the draft acceptance is the measured one, not fitted.
    let files = fsio::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")).expect("data dir");
    let (ds, _) = load(&files);
    let sc = ds.scenarios.get("glm-5.2").expect("glm-5.2 scenario");
    let scenario = sim_core::scenario::resolve(&ds, "scenarios/glm-5.2.json", sc).expect("resolves");
    let measured = sim_core::dataset::sweep_points("imported", &sweep);
    let cal = sim_core::fit::calibrate_team(&Coefficients::default(), &scenario, &measured).expect("calibrates");
    assert_eq!(cal.points.len(), 1, "the capped run is left out");
    let m = cal.measured_acceptance.expect("measured acceptance");
    let expected = points[0].spec_decode.as_ref().and_then(|s| s.per_token_acceptance()).unwrap();
    assert!((m.per_token - expected).abs() < 1e-12 && m.points == 1, "{m:?}");
    assert_eq!(cal.coefficients.acceptance.get("glm-5.2").copied(), Some(m.per_token), "fixed, not fitted");

    // The same runs without counters: the acceptance is fitted (it moves off the model card's prior).
    let without: Vec<_> = measured
        .iter()
        .cloned()
        .map(|mut p| {
            p.spec_decode = None;
            p
        })
        .collect();
    let fitted = sim_core::fit::calibrate_team(&Coefficients::default(), &scenario, &without).expect("calibrates");
    assert!(fitted.measured_acceptance.is_none());
    assert_ne!(fitted.coefficients.acceptance.get("glm-5.2").copied(), Some(m.per_token));
}

#[test]
fn request_rate_inf_finite_or_malformed() {
    let c1 = input("vllm-serve-c1.json").1;
    assert!(c1.contains("\"request_rate\": \"inf\""));
    let sweep = import::vllm_bench(&[("c1.json".into(), c1.clone())], &glm()).expect("imports");
    let p = &sweep.series[0].points[0];
    assert_eq!(p.request_rate.and_then(RequestRate::per_second), None);
    assert!(p.flags.is_empty());

    // A finite rate: arrivals, not the closed loop, set the load.
    let rated = c1.replace("\"request_rate\": \"inf\"", "\"request_rate\": 0.5");
    let sweep = import::vllm_bench(&[("rated.json".into(), rated)], &glm()).expect("imports");
    let p = &sweep.series[0].points[0];
    assert_eq!(p.request_rate, Some(RequestRate::PerSecond(0.5)));
    assert_eq!(p.flags, vec![Flag::RateLimited]);
    assert_validates("sweeps/rated.json", &serde_json::to_string_pretty(&sweep).unwrap());

    // Anything else names the file, the field and the line.
    for bad in ["\"fast\"", "-1", "[1]"] {
        let text = c1.replace("\"request_rate\": \"inf\"", &format!("\"request_rate\": {bad}"));
        let d = import::vllm_bench(&[("bad.json".into(), text)], &glm()).unwrap_err();
        assert_eq!((d.file.as_str(), d.pointer.as_str(), d.line), ("bad.json", "/request_rate", Some(1)), "{d}");
    }
    // A latency or a spec-decode field of the wrong type likewise.
    let text = c1.replace("\"p99_tpot_ms\": ", "\"p99_tpot_ms\": \"slow\", \"x\": ");
    let d = import::vllm_bench(&[("bad.json".into(), text)], &glm()).unwrap_err();
    assert_eq!(d.pointer, "/p99_tpot_ms", "{d}");
    let mtp = input("vllm-serve-mtp-c16.json").1;
    let text = mtp.replace(
        "\"spec_decode_per_position_acceptance_rates\": [",
        "\"spec_decode_per_position_acceptance_rates\": [\"a\", ",
    );
    let d = import::vllm_bench(&[("bad.json".into(), text)], &glm()).unwrap_err();
    assert_eq!(d.pointer, "/spec_decode_per_position_acceptance_rates/0", "{d}");
}

//! The planner's contract as a new user meets it: what vLLM would refuse, what a user is, one answer per plan,
//! the profile measured on the machine, and outputs that keep what the reader needs.

use super::{bin, copy_dir, data, run_plan, scenario_with};
use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The text with its wrapped lines joined: a continuation line (indented by two) back onto the line before.
fn unwrapped(text: &str) -> String {
    text.replace("\n  ", " ").replace("  ", " ")
}

/// A temporary folder for one test, removed first.
fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twotower-planner-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    dir
}

/// Qwen3-235B-A22B's FP8 checkpoint as its config.json states it: 235 GB of weights, a 40,960-token context.
fn qwen3_235b(tag: &str) -> PathBuf {
    let dir = temp(tag).join("Qwen3-235B-A22B-FP8");
    std::fs::create_dir_all(&dir).expect("dir");
    let config = r#"{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
        "num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
        "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_experts": 128, "num_experts_per_tok": 8,
        "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936, "max_position_embeddings": 40960,
        "tie_word_embeddings": false, "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
        "weight_block_size": [128, 128]}}"#;
    std::fs::write(dir.join("config.json"), config).expect("config");
    dir
}

/// The lines of the summary table of a plan at a target: `mode users range tok/s ... TPOT ms band`.
fn mode_rows(text: &str) -> Vec<Vec<String>> {
    let modes = ["single", "tp2", "pd", "dp2", "pp2", "ep2"];
    text.lines()
        .take_while(|l| !l.starts_with("at ") && !l.is_empty())
        .filter(|l| modes.iter().any(|m| l.trim_start().starts_with(&format!("{m} "))))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Weights beyond the memory share: vLLM refuses to start without `--cpu-offload-gb`, so the plan says so, its
/// commands set the offload it plans with, and a verdict that turns on a few points of the share is a warning.
#[test]
fn weights_beyond_the_memory_share_are_planned_with_the_offload_the_commands_set() {
    let model = qwen3_235b("offload");
    let ask = ["--hardware", "gb300-station", "--isl", "1024", "--osl", "1024"];
    let m = model.to_str().expect("utf8");
    // A loose target at one user: one machine meets it, so its commands are the answer's.
    let out = run_plan(
        &[&["--model", m][..], &ask[..], &["--gpu-memory-utilization", "0.9", "--slo-tpot", "1000", "--users", "1"]]
            .concat(),
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let flat = unwrapped(&text);
    let said = flat.lines().find(|l| l.starts_with("weights: one machine")).expect("the offload is said");
    assert!(said.contains("vLLM refuses to start unless told to offload"), "{said}");
    let planned = said.split("planned with --cpu-offload-gb ").nth(1).expect("the flag planned");
    let gb: u32 = planned.split_whitespace().next().and_then(|n| n.parse().ok()).expect("a number");
    assert!(gb >= 30, "{said}: {gb} GiB");
    assert!(text.contains("how to run single"), "{text}");
    assert!(text.contains(&format!("--cpu-offload-gb {gb}")), "the command sets what the plan offloads: {text}");
    // The pair holds every weight in GPU memory: its commands offload nothing.
    let pair = run_plan(&[&["--model", m][..], &ask[..], &["--gpu-memory-utilization", "0.9"]].concat());
    let pair = stdout(&pair);
    let runs_a_pair = ["tp2", "pp2", "ep2", "dpep2"].iter().any(|m| pair.contains(&format!("how to run {m} ")));
    assert!(runs_a_pair && !pair.contains("\n        --cpu-offload-gb"), "{pair}");
    // At 0.95 one machine offloads, at 0.98 it would not: the verdict turns on the share and the plan warns.
    let near = run_plan(&[&["--model", m][..], &ask[..], &["--gpu-memory-utilization", "0.95"]].concat());
    let near = unwrapped(&stdout(&near));
    assert!(
        near.contains("warning: the verdict turns on the memory share: at --gpu-memory-utilization 0.98"),
        "{near}"
    );
    let far = run_plan(&[&["--model", m][..], &ask[..], &["--gpu-memory-utilization", "0.7"]].concat());
    assert!(!stdout(&far).contains("warning: the verdict turns"), "no cliff within a few points of 0.7");
    let _ = std::fs::remove_dir_all(model.parent().expect("temp"));
}

/// A request longer than the model's context is refused, naming the limit and where it comes from: the card, a
/// config.json, or `--max-model-len`; as flags a usage error, in a scenario file a finding at its line.
#[test]
fn a_workload_past_the_models_context_is_refused_naming_the_limit() {
    let long = run_plan(&["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--isl", "200000", "--osl", "128"]);
    let err = stderr(&long);
    assert_eq!(long.status.code(), Some(2), "{err}");
    assert!(err.contains("200128 tokens") && err.contains("context of 131072 tokens (gpt-oss-120b's card"), "{err}");
    let capped = run_plan(&[
        "--model",
        "gpt-oss-120b",
        "--hardware",
        "dgx-spark",
        "--workload",
        "rag",
        "--max-model-len",
        "4096",
    ]);
    assert_eq!(capped.status.code(), Some(2));
    assert!(stderr(&capped).contains("context of 4096 tokens (--max-model-len)"), "{}", stderr(&capped));
    let above = run_plan(&[
        "--model",
        "gpt-oss-120b",
        "--hardware",
        "dgx-spark",
        "--workload",
        "chat",
        "--max-model-len",
        "200000",
    ]);
    assert!(
        stderr(&above).contains("--max-model-len 200000 exceeds the model's context of 131072"),
        "{}",
        stderr(&above)
    );
    let model = qwen3_235b("context");
    let config = run_plan(&[
        "--model",
        model.to_str().unwrap(),
        "--hardware",
        "gb300-station",
        "--isl",
        "40000",
        "--osl",
        "1024",
    ]);
    let _ = std::fs::remove_dir_all(model.parent().expect("temp"));
    assert_eq!(config.status.code(), Some(2));
    assert!(stderr(&config).contains("40960 tokens (config.json's max_position_embeddings)"), "{}", stderr(&config));
    // In a scenario file: exit 1, the file, the workload's pointer and its line.
    let file = scenario_with("too-long", |v| v["workloads"] = serde_json::json!([{"isl": 200000, "osl": 128}]));
    let out = bin().arg("plan").arg(&file).arg("--data").arg(data()).output().expect("run");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("too-long.json:") && err.contains("at /workloads/0") && err.contains("131072"), "{err}");
    // Within the context, nothing changes: a --max-model-len is on every vllm serve line.
    let ok = run_plan(&[
        "--model",
        "gpt-oss-120b",
        "--hardware",
        "dgx-spark",
        "--workload",
        "chat",
        "--max-model-len",
        "8192",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(stdout(&ok).contains("--max-model-len 8192"), "{}", stdout(&ok));
}

/// Users with a think time are people, answered through the open loop: the output says which kind of user a
/// number counts, a user's tok/s is 1000 / TPOT, and pausing users are more than streams at the same target.
#[test]
fn users_with_a_think_time_are_answered_through_the_open_loop() {
    let ask = ["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat", "--slo-tpot", "100"];
    let streams = run_plan(&ask);
    let thinking = run_plan(&[&ask[..], &["--think-time", "30", "--users", "20"]].concat());
    assert!(thinking.status.success(), "{}", stderr(&thinking));
    let (streams, thinking) = (stdout(&streams), stdout(&thinking));
    assert!(streams.contains("users are closed-loop streams"), "{streams}");
    assert!(thinking.contains("users are people who wait 30 s after each answer"), "{thinking}");
    assert!(thinking.contains("at 20 users (asked):"), "{thinking}");
    let served = |text: &str, mode: &str| -> u32 {
        let rows = mode_rows(text);
        let row = rows.iter().find(|r| r[0] == mode).unwrap_or_else(|| panic!("{mode}: {text}"));
        row[1].trim_end_matches('+').parse().expect("users")
    };
    assert!(served(&thinking, "single") > served(&streams, "single"), "people who pause load a machine less");
    // tok/s/user is the interactivity, 1000 / TPOT.
    for text in [&streams, &thinking] {
        for r in mode_rows(text) {
            let (per_user, tpot): (f64, f64) = (r[5].parse().expect("tok/s/user"), r[7].parse().expect("TPOT"));
            assert!((per_user - 1000.0 / tpot).abs() <= 0.1, "{r:?}");
        }
    }
    let rate = run_plan(&[&ask[..], &["--request-rate-per-user", "0.02"]].concat());
    assert!(stdout(&rate).contains("sending 0.02 requests a second each"), "{}", stderr(&rate));
    let without =
        run_plan(&["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat", "--think-time", "30"]);
    assert_eq!(without.status.code(), Some(2));
    assert!(stderr(&without).contains("--think-time needs a latency target"), "{}", stderr(&without));
}

/// One answer per plan: one mode from the verdict to the last line, one multiplier, cost at the asked users, and
/// the commands of every mode called too close to call.
#[test]
fn a_plan_names_one_mode_one_multiplier_and_the_commands_of_every_mode_too_close() {
    let ask = ["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat"];
    let target = ["--slo-ttft", "1", "--slo-tpot", "100", "--price", "4000", "--power-w", "240"];
    let out = run_plan(&[&ask[..], &target[..]].concat());
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let flat = unwrapped(&text);
    let verdict = flat.split("ISL/OSL): ").nth(1).expect("a verdict");
    let mode = verdict.split_whitespace().next().expect("a mode");
    let last = text.lines().find(|l| l.starts_with("recommended: ")).expect("the last line");
    assert!(last.starts_with(&format!("recommended: {mode}: ")), "{last} against the verdict's {mode}");
    let gain = verdict.split(" (").nth(1).and_then(|g| g.split("x the users").next()).expect("the users gain");
    assert!(last.contains(&format!("({gain}x the users)")), "{last}: the verdict's multiplier, {gain}x");
    let multipliers = regex::Regex::new(r"\d+\.\d+x").expect("regex");
    assert_eq!(multipliers.find_iter(last).count(), 1, "one multiplier: {last}");
    assert!(text.contains(&format!("how to run {mode} ")), "{text}");
    if let Some(close) = text.lines().find(|l| l.starts_with("too close to call: ") && l.contains('±')) {
        for other in close.trim_start_matches("too close to call: ").split(", ") {
            let m = other.split_whitespace().next().expect("a mode");
            assert!(text.contains(&format!("how to run {m} ")), "{m} is too close to call: its commands: {text}");
        }
    }
    // At the asked load: the cost is the one at 20 users, the mode the one that meets the target there.
    let asked = run_plan(&[&ask[..], &target[..], &["--users", "20"]].concat());
    let asked = stdout(&asked);
    let at = asked.split("at 20 users (asked):").nth(1).expect("the asked load's table");
    let last = asked.lines().find(|l| l.starts_with("recommended: ")).expect("last");
    let picked = last.trim_start_matches("recommended: ").split(':').next().expect("mode");
    let row = at.lines().find(|l| l.trim_start().starts_with(&format!("{picked} "))).expect("the mode's row");
    let cost = row.split_whitespace().last().expect("cost");
    assert!(row.contains(" yes "), "{row}");
    assert!(last.contains(&format!("{cost} per million output tokens")), "{last} against {row}");
    assert!(asked.contains(&format!("how to run {picked} ")), "{asked}");
    // Without a target, a setup a publication measured: the first and the last line name the same mode.
    let kubis =
        bin().arg("plan").arg(data().join("scenarios/kubis-gpt-oss-120b-dgx-spark.json")).output().expect("run");
    let kubis = stdout(&kubis);
    let first = kubis.lines().next().expect("first");
    let last = kubis.lines().find(|l| l.starts_with("recommended: ") && l != &first).expect("last");
    assert!(
        first.starts_with("recommended: dp2 as measured") && last.starts_with("recommended: dp2 as measured"),
        "{kubis}"
    );
    // Too close to call: the measured mode's commands and the model's own pick's.
    let picked = ["tp2", "dpep2"].iter().any(|m| kubis.contains(&format!("how to run {m} ")));
    assert!(kubis.contains("how to run dp2") && picked, "both too close to call: {kubis}");
}

/// A plan from flags on a machine with a measured build uses it (or says why not), and the commands set the
/// memory share it was measured at.
#[test]
fn a_plan_from_flags_uses_the_profile_measured_on_the_machine() {
    let spark = run_plan(&["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat"]);
    let (text, err) = (stdout(&spark), stderr(&spark));
    assert!(text.contains("engine: engine profile `vllm-mxfp4-eager-dgx-spark`"), "{text}");
    assert!(err.contains("the build measured with gpt-oss-120b on dgx-spark"), "{err}");
    assert!(text.contains("--gpu-memory-utilization 0.70"), "the share the profile was measured at: {text}");
    let other = run_plan(&["--model", "minimax-m3", "--hardware", "dgx-spark", "--workload", "chat"]);
    assert!(stdout(&other).contains("engine: engine profile `vllm-generic`"), "{}", stdout(&other));
    assert!(stderr(&other).contains("were fitted on another model"), "{}", stderr(&other));
}

/// Outputs keep what the reader needs: validate's diagnostics on stderr as its help says, the claims' caveats,
/// a saved plan's command that works, import's required machine and every mode, a flood cut short.
#[test]
fn outputs_go_where_the_help_says_and_keep_what_the_reader_needs() {
    // validate: diagnostics on stderr, the closing line on stdout.
    let broken = super::broken_copy("stderr");
    let out = bin().args(["validate", "--no-model-check"]).arg(&broken).output().expect("run");
    let _ = std::fs::remove_dir_all(&broken);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error: claim") && !stdout(&out).contains("error: claim"), "{}", stdout(&out));
    assert!(stdout(&out).contains(" error(s) in "), "{}", stdout(&out));
    let help = bin().args(["validate", "--help"]).output().expect("help");
    assert!(stdout(&help).contains("diagnostics on stderr"), "{}", stdout(&help));
    // claims: the caveats of data/claims.json, and none stale.
    let claims = bin().args(["claims", "--format", "csv"]).arg(data()).output().expect("run");
    let csv = stdout(&claims);
    assert!(csv.lines().next().is_some_and(|h| h.ends_with(",caveat")), "{csv}");
    assert!(csv.contains("compares different concurrencies (pair at 256 streams, one station at 32)"), "{csv}");
    assert_eq!(csv.matches("single-station numbers come from the earlier ASUS ET900N G3 review").count(), 13);
    assert!(!csv.contains("until data/hardware/ holds"), "a stale caveat: {csv}");
    // plan --save: the command it suggests works from anywhere and asks the same question.
    let dir = temp("save");
    let saved = dir.join("mine.json");
    let ask = ["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat", "--slo-tpot", "100"];
    let more = ["--price", "4000", "--power-w", "240", "--users", "20", "--save", saved.to_str().unwrap()];
    let asked = run_plan(&[&ask[..], &more[..]].concat());
    let note = stderr(&asked);
    let command = note.split('`').nth(1).expect("the suggested command");
    for flag in ["--data", "--slo-tpot 100", "--price 4000", "--power-w 240", "--users 20"] {
        assert!(command.contains(flag), "{command} lacks {flag}");
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(&words[..2], ["sim-core", "plan"]);
    let again = bin().args(&words[1..]).current_dir(&dir).output().expect("run");
    assert!(again.status.success(), "{command}: {}", stderr(&again));
    assert_eq!(stdout(&again), stdout(&asked), "{command} asks the same");
    // import vllm-bench: no default machine, every mode.
    let sample = data().join("../tests/import-samples/vllm-serve-c1.json");
    let none = bin().args(["import", "vllm-bench"]).arg(&sample).output().expect("run");
    assert_eq!(none.status.code(), Some(2));
    assert!(stderr(&none).contains("--hardware"), "{}", stderr(&none));
    let ep2 = bin()
        .args(["import", "vllm-bench", "--hardware", "dgx-spark", "--mode", "ep2"])
        .arg(&sample)
        .output()
        .expect("run");
    assert!(ep2.status.success() && stdout(&ep2).contains("dgx-spark"), "{}", stderr(&ep2));
    let help = stdout(&bin().args(["import", "vllm-bench", "--help"]).output().expect("help"));
    assert!(["single", "tp2", "pd", "dp2", "pp2", "ep2"].iter().all(|m| help.contains(m)), "{help}");
    // A folder of dataset folders without their sources.json: one usage error naming them.
    let many = temp("many");
    for i in 0..12 {
        copy_dir(&data().join("models"), &many.join(format!("d{i}/models")));
    }
    let out = run_plan_on(&many);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("holds 12 datasets") && stderr(&out).lines().count() == 1, "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&many);
    // A folder that is no dataset: the first findings and a count, exit 1 even when the reader goes away.
    let flood = data().join("sweeps");
    let out = run_plan_on(&flood);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).lines().count() <= 70 && stderr(&out).contains("more ("), "{}", stderr(&out));
    let mut child = bin()
        .args(["plan", "--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat", "--data"])
        .arg(&flood)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 8];
    child.stderr.as_mut().expect("stderr").read_exact(&mut first).expect("read");
    drop(child.stderr.take());
    drop(child.stdout.take());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(1), "a closed pipe keeps the finding's exit code: {status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn run_plan_on(dataset: &std::path::Path) -> std::process::Output {
    bin()
        .args(["plan", "--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat", "--data"])
        .arg(dataset)
        .output()
        .expect("run")
}

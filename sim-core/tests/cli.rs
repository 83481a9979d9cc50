//! The command line as a user meets it: exit codes, CSV columns, and a reader that closes the pipe early.

// The planner's contract (offload, context, users, one answer, profiles, outputs), in a file of its own.
#[path = "cli/planner.rs"]
mod planner;

// `--kernels`: a user's own kernel table for plan, predict and calibrate.
#[path = "cli/kernels.rs"]
mod kernels;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sim-core"))
}

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data")
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let p = e.expect("entry").path();
        let target = to.join(p.file_name().expect("name"));
        if p.is_dir() {
            copy_dir(&p, &target);
        } else {
            std::fs::copy(&p, &target).expect("copy");
        }
    }
}

#[test]
fn validate_exit_codes() {
    let ok = bin().args(["validate", "--no-model-check"]).arg(data()).output().expect("run");
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    let missing = bin().args(["validate", "/nonexistent/dir"]).output().expect("run");
    assert_eq!(missing.status.code(), Some(2));
    let usage = bin().args(["validate"]).output().expect("run");
    assert_eq!(usage.status.code(), Some(2));
    // A copy of data/ with one claim's stated value mistranscribed.
    let broken = std::env::temp_dir().join(format!("twotower-cli-broken-{}", std::process::id()));
    copy_dir(&data(), &broken);
    let claims = broken.join("claims.json");
    let text = std::fs::read_to_string(&claims).expect("claims.json");
    let first_stated = text.find("\"stated\": ").expect("a stated value") + "\"stated\": ".len();
    std::fs::write(&claims, format!("{}9{}", &text[..first_stated], &text[first_stated..])).expect("write");
    let bad = bin().args(["validate", "--no-model-check"]).arg(&broken).output().expect("run");
    let _ = std::fs::remove_dir_all(&broken);
    assert_eq!(bad.status.code(), Some(1), "a dataset with errors exits 1");
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("claims.json")
            || String::from_utf8_lossy(&bad.stdout).contains("claims.json")
    );
}

#[test]
fn points_csv_starts_with_the_documented_columns() {
    let out = bin().args(["points", "--format", "csv"]).arg(data()).output().expect("run");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf8");
    let mut lines = text.lines();
    assert!(lines.next().expect("header").starts_with("model,mode,isl,osl,concurrency,output_tok_s"));
    assert!(text.contains("glm-5.2,tp2,512,512,32,1525,"), "the 1,525 tok/s point is listed");
    // One line per point record of every sweep file.
    let mut records = 0;
    for e in std::fs::read_dir(data().join("sweeps")).expect("sweeps") {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(e.expect("entry").path()).expect("read")).expect("json");
        for s in v["series"].as_array().expect("series") {
            records += s["points"].as_array().map_or(0, Vec::len);
        }
    }
    assert!(records >= 62, "the report alone has 62 points, found {records}");
    // A quoted field may hold a line break (a quote over two lines): a record ends where the quotes balance.
    let mut rows = 0;
    let mut open = false;
    for line in lines {
        open ^= line.matches('"').count() % 2 == 1;
        if !open {
            rows += 1;
        }
    }
    assert_eq!(rows, records);
}

#[test]
fn report_fabric_and_predict_csv_columns() {
    let r = bin().args(["report", "--format", "csv"]).arg(data()).output().expect("run");
    assert!(
        String::from_utf8_lossy(&r.stdout).starts_with("model,mode,isl,osl,concurrency,measured_tok_s,predicted_tok_s")
    );
    let f = bin().args(["fabric", "--format", "csv"]).arg(data()).output().expect("run");
    assert!(String::from_utf8_lossy(&f.stdout).starts_with("collective,bytes,measured_busbw_gbps,predicted_busbw_gbps"));
    let p = bin()
        .args(["predict", "--mode", "tp2", "--concurrency", "1,32", "--format", "csv"])
        .arg(data().join("scenarios/glm-5.2.json"))
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&p.stdout).into_owned();
    assert!(text.starts_with("mode,isl,osl,concurrency,output_tok_s"), "{text}");
    assert_eq!(text.lines().count(), 1 + 2 * 2, "two workloads x two concurrencies");
    let bad =
        bin().args(["predict", "--mode", "tp3"]).arg(data().join("scenarios/glm-5.2.json")).output().expect("run");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn closed_pipe_is_not_a_panic() {
    let mut child = bin()
        .args(["points", "--format", "csv"])
        .arg(data())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 16];
    child.stdout.as_mut().expect("stdout").read_exact(&mut first).expect("read");
    drop(child.stdout.take());
    let status = child.wait().expect("wait");
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.success(), "exit {status:?}, stderr {err}");
}

#[test]
fn calibrate_then_plan_from_the_calibrated_scenario() {
    let out = bin()
        .args(["calibrate"])
        .arg(data().join("scenarios/glm-5.2.json"))
        .arg(data().join("sweeps/glm-5.2.json"))
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("median error"), "says how well the fit matched");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("scenario json");
    assert_eq!(v["id"], "glm-5.2-calibrated");
    assert!(v["calibration"]["hbm_efficiency"].as_f64().is_some_and(|x| x > 0.0 && x <= 1.0));
    let dir = std::env::temp_dir().join(format!("twotower-cal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let path = dir.join("cal.json");
    std::fs::write(&path, &out.stdout).expect("write");
    let plan = bin().args(["plan", "--format", "json", "--data"]).arg(data()).arg(&path).output().expect("run");
    assert!(plan.status.success(), "{}", String::from_utf8_lossy(&plan.stderr));
    let p: serde_json::Value = serde_json::from_slice(&plan.stdout).expect("plan json");
    // GLM-5.2 spills on one station: the calibrated plan splits its weights across both (TP2 as the report ran
    // it, or PP2, EP2 or DP+EP, which the planner also weighs).
    let split = ["tp2", "pp2", "ep2", "dpep2"];
    assert!(split.iter().any(|m| p["recommended_mode"] == *m), "{}", p["recommended_mode"]);
    assert!(
        p["calibration"].as_str().is_some_and(|c| c.contains("median error")),
        "the plan says how well the calibration matched"
    );
    assert!(p["rows"].as_array().is_some_and(|r| !r.is_empty()));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn describe_model_reads_a_config_json() {
    let dir = std::env::temp_dir().join(format!("twotower-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let cfg = dir.join("config.json");
    std::fs::write(&cfg, r#"{"num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "intermediate_size": 6144}"#).expect("write");
    let out = bin().args(["describe-model", "--bits", "4.5", "--id", "qwen-moe"]).arg(&cfg).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let total = v["describe"]["total_params"].as_f64().expect("total");
    assert!((25e9..35e9).contains(&total), "Qwen3-30B-A3B's config, got {total}");
    assert!(v["describe"].get("dense_bits_per_weight").is_none(), "one width for every layer unless told");
    let mixed = bin().args(["describe-model", "--bits", "4.5", "--dense-bits", "16"]).arg(&cfg).output().expect("run");
    assert!(mixed.status.success(), "{}", String::from_utf8_lossy(&mixed.stderr));
    let m: serde_json::Value = serde_json::from_slice(&mixed.stdout).expect("json");
    assert_eq!(m["describe"]["dense_bits_per_weight"].as_f64(), Some(16.0));
    let nonsense = bin().args(["describe-model", "--dense-bits", "0"]).arg(&cfg).output().expect("run");
    assert_eq!(nonsense.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&nonsense.stderr).contains("dense_bits_per_weight"));
    // A config with an MTP layer: the description records it and drafts only when asked (vLLM's default).
    std::fs::write(&cfg, r#"{"num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128, "vocab_size": 129280, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1, "intermediate_size": 18432, "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "num_nextn_predict_layers": 1}"#).expect("write");
    let plain = bin().args(["describe-model", "--bits", "8"]).arg(&cfg).output().expect("run");
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let p: serde_json::Value = serde_json::from_slice(&plain.stdout).expect("json");
    assert_eq!(p["describe"]["draft_tokens"].as_f64(), Some(0.0));
    assert_eq!(p["describe"]["draft_attention_layers"].as_f64(), Some(1.0));
    let drafting =
        bin().args(["describe-model", "--bits", "8", "--draft-tokens", "1"]).arg(&cfg).output().expect("run");
    assert!(drafting.status.success(), "{}", String::from_utf8_lossy(&drafting.stderr));
    let dr: serde_json::Value = serde_json::from_slice(&drafting.stdout).expect("json");
    assert_eq!(dr["describe"]["draft_tokens"].as_f64(), Some(1.0));
    assert_eq!(dr["describe"]["kv_bytes_per_element"].as_f64(), Some(2.0), "vLLM's auto KV dtype: BF16");
    let fp8 = bin().args(["describe-model", "--kv-cache-dtype", "fp8"]).arg(&cfg).output().expect("run");
    assert!(fp8.status.success(), "{}", String::from_utf8_lossy(&fp8.stderr));
    let f: serde_json::Value = serde_json::from_slice(&fp8.stdout).expect("json");
    assert_eq!(f["describe"]["kv_bytes_per_element"].as_f64(), Some(1.0));
    let unknown = bin().args(["describe-model", "--kv-cache-dtype", "int3"]).arg(&cfg).output().expect("run");
    assert_eq!(unknown.status.code(), Some(2));
    let negative = bin().args(["describe-model", "--draft-tokens=-1"]).arg(&cfg).output().expect("run");
    assert_eq!(negative.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&negative.stderr).contains("draft_tokens"));
    std::fs::write(&cfg, "{\"hidden_size\": 4096").expect("write");
    let bad = bin().args(["describe-model"]).arg(&cfg).output().expect("run");
    assert_eq!(bad.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(dir);
}

/// `engines` lists every profile with how it was obtained; `plan --engine` predicts with another profile and
/// says so, and an unknown profile is a usage error naming the known ones.
#[test]
fn engine_profiles_are_listed_and_selectable() {
    let out = bin().args(["engines", "--format", "csv"]).arg(data()).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(text.starts_with("engine,obtained,"), "{text}");
    assert!(text.contains("vllm-gb300-report,fitted on 55 points of gb300-report"), "{text}");
    assert!(text.contains("roofline,\"not fitted"), "{text}");
    let scenario = data().join("scenarios/glm-5.2.json");
    let plan = |engine: Option<&str>| {
        let mut c = bin();
        c.arg("plan").arg(&scenario).args(["--format", "json"]);
        if let Some(e) = engine {
            c.args(["--engine", e]);
        }
        c.output().expect("run")
    };
    let tok = |o: &std::process::Output| -> f64 {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        v["rows"].as_array().expect("rows").iter().map(|r| r["modes"][0]["output_tok_s"].as_f64().unwrap_or(0.0)).sum()
    };
    let (fitted, roof) = (plan(None), plan(Some("roofline")));
    assert!(String::from_utf8_lossy(&roof.stdout).contains("engine profile `roofline`"));
    assert!(tok(&roof) > tok(&fitted), "the roofline is an upper bound: {} vs {}", tok(&roof), tok(&fitted));
    let bad = plan(Some("nope"));
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown engine profile `nope`"));
}

/// A plan of a setup a publication measured puts the measurement beside the model: at the top of the range the
/// measured modes ranked by the published numbers (the DGX Spark sweep's two copies, TP2 and one machine at 64
/// clients), in the JSON as in the text; a setup nobody measured carries none.
#[test]
fn a_plan_of_a_measured_setup_shows_what_was_measured() {
    let scenario = data().join("scenarios/kubis-gemma-4-26b-a4b-dgx-spark.json");
    let text = bin().arg("plan").arg(&scenario).output().expect("run");
    assert!(text.status.success(), "{}", String::from_utf8_lossy(&text.stderr));
    let text = String::from_utf8(text.stdout).expect("utf8");
    let line = text.lines().find(|l| l.starts_with("published (kubis-dgx-spark) at 1024/128, 64 clients:"));
    let line = line.unwrap_or_else(|| panic!("no published line at 64 clients:\n{text}"));
    assert!(line.contains("dp2 508.1 > tp2 477.8 > single 355.7 tok/s measured"), "{line}");
    let json = bin().arg("plan").arg(&scenario).args(["--format", "json"]).output().expect("run");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let top = v["published"].as_array().expect("published").iter().find(|p| p["concurrency"] == 64).expect("at 64");
    assert_eq!(top["best_measured"], "dp2");
    assert_eq!(top["modes"].as_array().map(Vec::len), Some(3));
    let elsewhere = data().join("scenarios/plan-minimax-m3-h200-sxm.json");
    let none = bin().arg("plan").arg(&elsewhere).args(["--format", "json"]).output().expect("run");
    let v: serde_json::Value = serde_json::from_slice(&none.stdout).expect("json");
    assert!(v.get("published").is_none(), "nobody measured MiniMax-M3 on H200");
}

/// A scenario a team writes in its own folder names the bundled hardware and models: without `--data` the
/// command says where the ids come from (exit 2, nothing read but the scenario), and with it the ids resolve.
#[test]
fn a_scenario_outside_a_dataset_asks_for_data_and_runs_with_it() {
    let dir = std::env::temp_dir().join(format!("twotower-cli-own-{}", std::process::id()));
    let mine = dir.join("mine");
    std::fs::create_dir_all(&mine).expect("mkdir");
    let scenario = mine.join("glm-own.json");
    let text = r#"{"schema_version": 2, "kind": "scenario", "id": "glm-own", "hardware": "gb300-station",
        "model": "glm-5.2", "workloads": [{"isl": 512, "osl": 512}], "concurrency": [1, 8], "modes": ["tp2"]}"#;
    std::fs::write(&scenario, text).expect("write");
    let without = bin().arg("predict").arg(&scenario).output().expect("run");
    assert_eq!(without.status.code(), Some(2));
    let err = String::from_utf8_lossy(&without.stderr);
    assert!(err.contains("not a dataset (no sources.json)") && err.contains("--data"), "{err}");
    let with = bin().arg("predict").arg(&scenario).arg("--data").arg(data()).args(["--format", "csv"]).output();
    let with = with.expect("run");
    assert!(with.status.success(), "{}", String::from_utf8_lossy(&with.stderr));
    let csv = String::from_utf8(with.stdout).expect("utf8");
    assert_eq!(csv.lines().filter(|l| l.starts_with("tp2,512,512,")).count(), 2, "{csv}");
    std::fs::remove_dir_all(&dir).ok();
}

/// MiniMax-M3 (259 GB) on DGX Sparks (128 GB each): no mode runs, so the planner recommends none and says how
/// much memory is missing, never "single" with an infinite gain.
#[test]
fn a_plan_where_nothing_fits_recommends_nothing_and_names_the_missing_memory() {
    let scenario = data().join("scenarios/plan-minimax-m3-dgx-spark.json");
    let out = bin().arg("plan").arg(&scenario).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf8");
    // The verdict opens the output wrapped at 100 columns; the last line of the details holds it whole.
    assert!(text.starts_with("recommended: none (nothing fits"), "{text}");
    let line = text.lines().rev().find(|l| l.starts_with("recommended:")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("recommended: none (nothing fits: one machine lacks "), "{line}");
    assert!(line.contains("GB per machine"), "{line}");
    assert!(!text.contains("inf"), "no infinite gain anywhere:\n{text}");
    let json = bin().arg("plan").arg(&scenario).args(["--format", "json"]).output().expect("run");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert!(v["recommended_mode"].is_null(), "{}", v["recommended_mode"]);
    assert!(v["reason"].as_str().is_some_and(|r| r.starts_with("nothing fits")), "{}", v["reason"]);
}

/// NIM's profile is TensorRT-LLM's: no request is ever preempted (admission reserves its whole KV), and its KV
/// pool is 90% of the memory the weights leave free, so past the pool clients queue at a plateau; the profile
/// listing says where the memory rule comes from.
#[test]
fn a_no_evict_engine_never_preempts_and_sizes_its_pool_from_free_memory() {
    let scenario = data().join("scenarios/nim-llama-3.3-70b-instruct-h100x2.json");
    let out = bin()
        .args(["predict", scenario.to_str().unwrap(), "--concurrency", "1,50,100,150,250", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name}: {header:?}"));
    let (pre, bottleneck) = (col("preemptions_per_request"), col("bottleneck"));
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 5, "{text}");
    for r in &rows {
        assert_eq!(r[pre].parse::<f64>().unwrap(), 0.0, "a no-evict engine preempted: {r:?}");
    }
    assert_eq!(rows[4][bottleneck], "kv_capacity", "{text}");
    let engines = bin().args(["engines", data().to_str().unwrap(), "--format", "json"]).output().unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&engines.stdout).unwrap();
    let nim = listing.as_array().unwrap().iter().find(|e| e["id"] == "nim-trtllm").expect("nim-trtllm listed");
    assert_eq!(nim["coefficients"]["kv_free_memory_fraction"], 0.9, "{nim}");
    assert!(nim["obtained"].as_str().unwrap().contains("kv_free_memory_fraction"), "{nim}");
}

/// The per-layer cost is fitted only where the fitted models differ in depth: the GB300 report's five models
/// (several layer counts) free it; a profile fitted on one model's sweep (the DGX Spark's GPT-OSS) holds it
/// at its prior and says why, since there it and the per-step cost are one sum.
#[test]
fn the_per_layer_cost_is_fitted_only_across_models_of_different_depths() {
    let out = bin().args(["engines", data().to_str().unwrap(), "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listing: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let profile = |id: &str| listing.as_array().unwrap().iter().find(|e| e["id"] == id).cloned().expect(id);
    let held = |p: &serde_json::Value| {
        p["coefficients"]["held_at_prior"].as_array().is_some_and(|h| h.iter().any(|n| n == "per_layer_overhead_s"))
    };
    let (gb300, spark) = (profile("vllm-gb300-report"), profile("vllm-mxfp4-eager-dgx-spark"));
    assert!(!held(&gb300), "{gb300}");
    assert!(held(&spark), "{spark}");
    assert_eq!(spark["coefficients"]["per_layer_overhead_s"], 20e-6, "{spark}");
    let fitted = gb300["coefficients"]["per_layer_overhead_s"].as_f64().unwrap();
    assert!(fitted > 0.0 && fitted != 20e-6, "{gb300}");
}

/// A profile that still gives the removed per-draft-pass cost is refused with what replaced it (a draft pass
/// pays the per-layer cost for each of its layers), naming the file and the field, not with a bare "unknown".
#[test]
fn a_removed_engine_coefficient_is_refused_with_what_replaced_it() {
    let dir = std::env::temp_dir().join(format!("twotower-cli-removed-{}", std::process::id()));
    copy_dir(&data(), &dir);
    let roofline = dir.join("engines/roofline.json");
    let text = std::fs::read_to_string(&roofline).expect("roofline.json");
    let at = text.find("\"per_layer_overhead_s\"").expect("a per-layer entry");
    let old = "\"draft_pass_overhead_s\": {\"value\": 0, \"unit\": \"s\", \"basis\": \"derived\", \"derivation\": \"none\"},\n    ";
    std::fs::write(&roofline, format!("{}{old}{}", &text[..at], &text[at..])).expect("write");
    let out = bin().args(["validate", "--no-model-check"]).arg(&dir).output().expect("run");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("roofline.json"), "{said}");
    assert!(said.contains("/coefficients/draft_pass_overhead_s"), "{said}");
    assert!(said.contains("draft_pass_layers") && said.contains("per_layer_overhead_s"), "{said}");
}

/// A fitted efficiency above what a public microbenchmark reached on a machine the profile was fitted on is
/// listed, with that machine and the microbenchmark's share of the spec: the DGX Spark fits stream at about 0.92
/// of 273 GB/s where a saturating-read kernel reached 234 GB/s (0.857). The GB300 fit (no microbenchmark of that
/// machine) and the given profiles list none.
#[test]
fn a_fit_above_a_machines_microbenchmark_is_listed() {
    let out = bin().args(["engines", data().to_str().unwrap(), "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listing: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let above = |id: &str| {
        let e = listing.as_array().unwrap().iter().find(|e| e["id"] == id).cloned().expect(id);
        e["above_measured"].as_array().cloned().expect("above_measured")
    };
    let spark = above("vllm-mxfp4-eager-dgx-spark");
    assert_eq!(spark.len(), 1, "{spark:?}");
    assert_eq!(spark[0]["name"], "hbm_efficiency");
    assert_eq!(spark[0]["machine"], "dgx-spark");
    assert!((spark[0]["ceiling"].as_f64().unwrap() - 234.0 / 273.0).abs() < 1e-9, "{spark:?}");
    assert!(spark[0]["value"].as_f64().unwrap() > spark[0]["ceiling"].as_f64().unwrap());
    assert!(above("vllm-gb300-report").is_empty());
    assert!(above("roofline").is_empty() && above("nim-trtllm").is_empty());
    let table = bin().args(["engines", data().to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    let row = text.lines().find(|l| l.starts_with("vllm-mxfp4-eager-dgx-spark")).expect("the profile's row");
    assert!(row.contains("hbm_efficiency (above 0.857, dgx-spark's microbenchmark)"), "{row}");
    // The JSON listing names what lies outside a range (or at its edge), and only for fitted profiles: the GB300
    // fit's compute efficiency lies below its range.
    let outside = |id: &str| -> Vec<(String, String, f64, f64)> {
        let e = listing.as_array().unwrap().iter().find(|e| e["id"] == id).cloned().expect(id);
        let list = e["outside_plausible_range"].as_array().cloned().expect("outside_plausible_range");
        list.iter()
            .map(|c| {
                let text = |k: &str| c[k].as_str().unwrap().to_string();
                (text("name"), text("side"), c["low"].as_f64().unwrap(), c["high"].as_f64().unwrap())
            })
            .collect()
    };
    let gb300 = outside("vllm-gb300-report");
    assert!(gb300.iter().any(|(name, side, ..)| name == "compute_efficiency" && side == "below"), "{gb300:?}");
    assert!(outside("roofline").is_empty() && outside("nim-trtllm").is_empty());
    // The table's last column is never cut: it is that whole list (a second entry used to end in "…").
    let row = text.lines().find(|l| l.starts_with("vllm-gb300-report")).expect("the profile's row");
    let listed: Vec<String> =
        gb300.iter().map(|(name, side, low, high)| format!("{name} ({side} {low}-{high})")).collect();
    assert!(row.ends_with(&listed.join(", ")), "{row} against {listed:?}");
}

/// A copy of `data/` with the first claim's stated value mistranscribed (11 -> 911): a dataset `validate` finds
/// invalid. The caller removes the folder.
fn broken_copy(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twotower-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&data(), &dir);
    let claims = dir.join("claims.json");
    let text = std::fs::read_to_string(&claims).expect("claims.json");
    let first_stated = text.find("\"stated\": ").expect("a stated value") + "\"stated\": ".len();
    std::fs::write(&claims, format!("{}9{}", &text[..first_stated], &text[first_stated..])).expect("write");
    dir
}

/// `/dev/full` as a command's stdout or stderr: every write fails with ENOSPC.
fn dev_full() -> Stdio {
    Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full"))
}

fn scenario_path() -> PathBuf {
    data().join("scenarios/kubis-gpt-oss-120b-dgx-spark.json")
}

/// A scenario file beside the dataset: the shipped DGX Spark scenario with `change` applied.
fn scenario_with(tag: &str, change: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(scenario_path()).expect("scenario")).expect("json");
    change(&mut v);
    let dir = std::env::temp_dir().join(format!("twotower-cli-sc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let path = dir.join(format!("{tag}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&v).expect("text")).expect("write");
    path
}

/// The verdict does not depend on stdout staying open: a reader that closes the pipe before anything is
/// written leaves a finding's exit 1, quietly.
#[test]
fn a_closed_pipe_keeps_a_findings_exit_code() {
    let broken = broken_copy("pipe");
    let mut child = bin()
        .args(["validate", "--no-model-check"])
        .arg(&broken)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let _ = std::fs::remove_dir_all(&broken);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked") && !err.contains("writing output"), "a closed pipe is quiet: {err}");
}

/// A full disk is an IO error: exit 2 with the reason on stderr.
#[test]
fn output_that_cannot_be_written_exits_2_with_the_reason() {
    for args in [vec!["plan".into(), scenario_path()], vec!["points".into(), data()]] {
        let out = bin().args(&args).stdout(dev_full()).stderr(Stdio::piped()).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("error: writing output") && err.contains("No space left on device"), "{args:?}: {err}");
    }
}

/// `--data` naming a folder that holds several datasets is one usage error naming them, not a diagnostic for
/// every id the copies share; and an unwritable stderr never panics.
#[test]
fn a_folder_of_datasets_is_one_error_and_a_failing_stderr_no_panic() {
    let dir = std::env::temp_dir().join(format!("twotower-cli-two-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&data(), &dir.join("a"));
    copy_dir(&data(), &dir.join("b"));
    let out = bin().arg("plan").arg(scenario_path()).arg("--data").arg(&dir).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let full = bin().arg("plan").arg(scenario_path()).arg("--data").arg(&dir).stderr(dev_full()).output().expect("run");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("holds 2 datasets") && err.contains(&dir.join("a").display().to_string()), "{err}");
    assert_eq!(full.status.code(), Some(2), "no panic when stderr cannot be written");
}

/// A scenario asking for no clients or for requests of no tokens is refused with the file, the pointer, its
/// line:column and a hint (exit 1: a finding about the input), and nothing is planned.
#[test]
fn a_scenario_of_zero_clients_or_zero_tokens_is_refused() {
    let zero_clients = scenario_with("zero-clients", |v| v["concurrency"] = serde_json::json!([0, 4]));
    let zero_tokens = scenario_with("zero-tokens", |v| v["workloads"] = serde_json::json!([{"isl": 0, "osl": 0}]));
    for (path, pointers) in
        [(&zero_clients, vec!["/concurrency/0"]), (&zero_tokens, vec!["/workloads/0/isl", "/workloads/0/osl"])]
    {
        let out = bin().arg("plan").arg(path).arg("--data").arg(data()).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty(), "nothing is planned");
        for p in pointers {
            let located = regex::Regex::new(&format!(
                r"--> {}:\d+:\d+ at {p}\n  = hint: ",
                regex::escape(&path.display().to_string())
            ))
            .expect("regex");
            assert!(located.is_match(&err), "{p} in {err}");
        }
    }
}

/// An unknown id names itself, where it is (file, pointer, line:column), the ids the dataset knows, and the
/// closest one.
#[test]
fn an_unknown_id_is_named_with_its_position_and_the_known_ids() {
    let path = scenario_with("typos", |v| {
        v["hardware"] = "dgx-sprak".into();
        v["model"] = "gpt-oss-12b".into();
    });
    let out = bin().arg("plan").arg(&path).arg("--data").arg(data()).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let file = regex::escape(&path.display().to_string());
    for (id, pointer, guess, other) in
        [("dgx-sprak", "/hardware", "dgx-spark", "gb300-station"), ("gpt-oss-12b", "/model", "gpt-oss-120b", "glm-5.2")]
    {
        let located = format!(r"unknown \w+ id `{id}`\n  --> {file}:\d+:\d+ at {pointer}\n");
        let re = format!(r"{located}  = hint: did you mean `{guess}`\? known .*{other}");
        assert!(regex::Regex::new(&re).expect("regex").is_match(&err), "{id}: {err}");
    }
}

/// Every mode comes from the mode enum: `--mode` refuses another value listing them all, `plan --help` names
/// two copies behind a router.
#[test]
fn every_mode_is_listed_from_the_mode_enum() {
    let out = bin().args(["predict", "--mode", "tp8"]).arg(scenario_path()).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for m in sim_core::Mode::EVERY {
        assert!(err.contains(m.name()), "{} in {err}", m.name());
    }
    let help = bin().args(["plan", "--help"]).output().expect("run");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("dp2") && text.contains("two copies"), "{text}");
    let dp2 =
        bin().args(["predict", "--mode", "dp2", "--concurrency", "4"]).arg(scenario_path()).output().expect("run");
    assert!(dp2.status.success(), "{}", String::from_utf8_lossy(&dp2.stderr));
}

/// `validate --format csv` prints its diagnostics as CSV, one a row, and nothing else.
#[test]
fn validate_prints_its_diagnostics_as_csv() {
    let broken = broken_copy("csv");
    let out = bin().args(["validate", "--no-model-check", "--format", "csv"]).arg(&broken).output().expect("run");
    let _ = std::fs::remove_dir_all(&broken);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("file,pointer,line,column,severity,message,hint"), "{text}");
    let rows: Vec<&str> = lines.collect();
    let claim =
        regex::Regex::new(r"^claims\.json,/claims/0/stated,\d+,\d+,error,claim `[^`]+` states 911 but").unwrap();
    assert!(rows.iter().any(|r| claim.is_match(r)), "{text}");
    let severity = regex::Regex::new(r"^[^,]+,[^,]*,\d*,\d*,(error|note),").unwrap();
    assert!(rows.iter().all(|r| severity.is_match(r)), "every row a diagnostic, no closing line: {text}");
}

/// `validate`'s closing lines say which targets it enforces and how many of the protocol's targets are missed,
/// the same count `report` marks MISSED.
#[test]
fn validate_counts_the_targets_it_enforces_and_the_protocols_misses() {
    let validate = bin().arg("validate").arg(data()).stdout(Stdio::piped()).spawn().expect("spawn");
    let report = bin().args(["report", "--format", "json"]).arg(data()).stdout(Stdio::piped()).spawn().expect("spawn");
    let (validate, report) = (validate.wait_with_output().expect("wait"), report.wait_with_output().expect("wait"));
    assert!(validate.status.success());
    let v: serde_json::Value = serde_json::from_slice(&report.stdout).expect("report json");
    let rows = v["protocol"].as_array().expect("protocol rows");
    // Every target judged: each row's throughput one and each of its other checks.
    let checks = || rows.iter().flat_map(|r| r["checks"].as_array().cloned().unwrap_or_default());
    let targets = rows.iter().filter(|r| !r["target"].is_null()).count() + checks().count();
    let missed = rows.iter().filter(|r| r["met"] == false).count() + checks().filter(|c| c["met"] == false).count();
    assert!(missed > 0, "the shipped data miss some protocol targets");
    let text = String::from_utf8_lossy(&validate.stdout);
    let last = text.lines().last().expect("a closing line");
    assert!(last.starts_with("accuracy targets enforced: fitted median"), "{last}");
    assert!(last.contains(&format!("not enforced): {missed} of {targets} missed")), "{last}");
}

/// `calibrate` leaves the draft acceptance of a model that drafts nothing out of the fit and the file, warns
/// when a fitted efficiency exceeds the machine's microbenchmark (as `engines` lists it), names a measurement
/// file as it was given, and writes only its file name into the description.
#[test]
fn calibrate_fits_only_what_the_model_has_and_names_files_as_given() {
    let sweep = data().join("sweeps/kubis-gpt-oss-120b-dgx-spark.json");
    let out = bin().arg("calibrate").arg(scenario_path()).arg(&sweep).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("scenario json");
    assert!(v["calibration"].get("acceptance").is_none(), "gpt-oss-120b drafts nothing: {}", v["calibration"]);
    assert!(err.contains("warning: fitted hbm_efficiency") && err.contains("dgx-spark's microbenchmark"), "{err}");
    let description = v["description"].as_str().expect("description");
    assert!(description.contains("from kubis-gpt-oss-120b-dgx-spark.json:"), "{description}");
    assert!(!description.contains(&data().display().to_string()), "no folder of this machine: {description}");
    let bad = scenario_with("not-a-sweep", |v| v["kind"] = "sweep".into());
    let out = bin().arg("calibrate").arg(scenario_path()).arg(&bad).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("--> {}", bad.display())) && !err.contains("sweeps/not-a-sweep"), "{err}");
}

/// `claims` lists every claim with its operands, their values, and whether the data reproduce it; exit 1 when
/// one is not.
#[test]
fn claims_are_listed_with_their_operands_and_verdicts() {
    let out = bin().args(["claims"]).arg(data()).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("claim "), "{text}");
    let row = text.lines().find(|l| l.starts_with("glm-5.2-11x-at-32 ")).expect("the 11x claim");
    let cells: Vec<&str> = row.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(&cells[..5], ["glm-5.2-11x-at-32", "11x", "10.971", "0.500", "yes"], "{row}");
    assert!(row.contains("glm-5.2 tp2 512/512 at 32") && row.contains("1525") && row.contains("139"), "{row}");
    let json = bin().args(["claims", "--format", "json"]).arg(data()).output().expect("run");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let listed = v.as_array().expect("claims");
    let shipped: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("claims.json")).expect("claims.json")).expect("json");
    assert_eq!(listed.len(), shipped["claims"].as_array().expect("claims").len());
    assert_eq!(listed[0]["numerator"]["value"], 1525.0);
    let broken = broken_copy("claims");
    let bad = bin().args(["claims", "--format", "csv"]).arg(&broken).output().expect("run");
    let _ = std::fs::remove_dir_all(&broken);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("glm-5.2-11x-at-32,911x,10.971,0.500,NO,"));
}

/// The exit-code convention is in `--help`.
#[test]
fn the_help_states_the_exit_codes() {
    let out = bin().arg("--help").output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    for code in ["0  success", "1  a finding", "2  usage or IO error"] {
        assert!(text.contains(code), "{code} in {text}");
    }
}

/// A copy of data/ with `from` replaced by `to` on line `line` (1-based) of `file`, which must hold it.
fn data_with_typo(tag: &str, file: &str, line: usize, from: &str, to: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twotower-cli-{tag}-{}", std::process::id()));
    copy_dir(&data(), &dir);
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).expect("data file");
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    assert!(lines[line - 1].contains(from), "{file}:{line} no longer holds {from}: {}", lines[line - 1]);
    lines[line - 1] = lines[line - 1].replacen(from, to, 1);
    std::fs::write(&path, lines.join("\n")).expect("write");
    dir
}

/// A point's concurrency or a series' input length mistyped against what its quote or the sweep's conditions
/// state ("1,801 bij 256"; "prompt 1024 tokens") fails with the file, line and column, pointer and a hint.
#[test]
fn a_setup_value_its_quote_contradicts_is_an_error() {
    let cases = [
        (
            "concurrency",
            "sweeps/minimax-m3.json",
            184,
            "\"concurrency\": 256",
            "\"concurrency\": 265",
            "sweeps/minimax-m3.json:184:26 at /series/3/points/7/concurrency",
            "the quote states concurrency 256, not 265",
        ),
        (
            "isl",
            "sweeps/kubis-gemma-4-26b-a4b-dgx-spark.json",
            55,
            "\"isl\": 1024",
            "\"isl\": 1042",
            "sweeps/kubis-gemma-4-26b-a4b-dgx-spark.json:55:14 at /series/0/isl",
            "the quotes state input length 1024, not 1042",
        ),
    ];
    for (tag, file, line, from, to, at, message) in cases {
        let dir = data_with_typo(tag, file, line, from, to);
        let out = bin().args(["validate", "--no-model-check"]).arg(&dir).output().expect("run");
        let _ = std::fs::remove_dir_all(&dir);
        // Diagnostics are on stderr, as `validate --help` says.
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{tag}: the typo passed:\n{said}");
        let error = said
            .split("error: ")
            .find(|e| e.contains(at))
            .unwrap_or_else(|| panic!("{tag}: no error at {at}:\n{said}"));
        assert!(error.starts_with(message), "{tag}: {error}");
        assert!(error.contains("= hint: "), "{tag}: no hint: {error}");
    }
}

/// A JSON Schema in the dataset's `schema/` folder that is not what the types generate (edited, or stale after
/// a change of the types) fails validation, naming the file and how to regenerate it.
#[test]
fn a_corrupted_schema_file_fails_validation() {
    let dir = std::env::temp_dir().join(format!("twotower-cli-schema-{}", std::process::id()));
    copy_dir(&data(), &dir);
    let path = dir.join("schema/sweep.json");
    let text = std::fs::read_to_string(&path).expect("sweep schema");
    std::fs::write(&path, text.replacen("\"type\": \"object\"", "\"type\": \"array\"", 1)).expect("write");
    let out = bin().args(["validate", "--no-model-check"]).arg(&dir).output().expect("run");
    let _ = std::fs::remove_dir_all(&dir);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "the corrupted schema passed:\n{said}");
    let error = said.split("error: ").find(|e| e.contains("schema/sweep.json")).expect("the schema file is named");
    assert!(error.contains("sim-core schema data/schema"), "{error}");
}

/// `plan` with a latency target opens with the verdict and one line per mode within 100 columns, before the plan's
/// own table; the JSON carries the whole answer under `goodput`; a percentile target and prices without a target
/// are refused as usage errors.
#[test]
fn a_plan_at_a_latency_target_opens_with_the_users_each_mode_serves() {
    let scenario = data().join("scenarios/glm-5.2.json");
    let target = ["--slo-ttft", "2", "--slo-tpot", "50", "--price", "100000", "--power-w", "3000"];
    let out = bin().arg("plan").arg(&scenario).args(target).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf8");
    let summary: Vec<&str> = text.lines().take_while(|l| !l.starts_with("isl ")).collect();
    assert!(summary.len() < text.lines().count(), "the plan's table follows the summary");
    assert!(summary[0].starts_with("verdict (512/512 ISL/OSL): "), "{text}");
    assert!(summary.iter().any(|l| l.starts_with("target: mean TTFT <= 2.00 s, mean TPOT <= 50.0 ms")), "{text}");
    assert!(summary.iter().any(|l| l.contains("cost/Mtok")), "{text}");
    // Each mode's bands with their coverage and evidence (lines wrapped at 100 columns, read as one text).
    let words = summary.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("held-out errors of the closest evidence"), "{text}");
    assert!(words.contains("at 80% coverage, from pair from one on gb300-report (this machine): "), "{text}");
    assert!(words.contains("pp2: tok/s no measured evidence: "), "{text}");
    assert!(words.contains("tp2: tok/s ") && words.contains("; cost/Mtok "), "{text}");
    for l in &summary {
        assert!(l.chars().count() <= 100, "wider than 100 columns: {l}");
    }
    let json = bin().arg("plan").arg(&scenario).args(target).args(["--format", "json"]).output().expect("run");
    assert!(json.status.success());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let g = &v["goodput"];
    // The verdict's line names the pair mode the answer holds best at the target.
    let best = g["workloads"][0]["verdict"]["best_pair"].as_str().expect("a best pair mode");
    assert!(summary[0].starts_with(&format!("verdict (512/512 ISL/OSL): {best} serves ")), "{text}");
    assert_eq!(g["workloads"][0]["modes"].as_array().map(Vec::len), Some(sim_core::Mode::ALL.len()));
    assert!(g["workloads"][0]["modes"][1]["cost"]["usd_per_million_tokens"].as_f64().is_some_and(|c| c > 0.0));
    assert_eq!(g["bands"]["coverage"], 0.8, "{g}");
    let tp2 = &g["bands"]["modes"][1];
    assert_eq!(tp2["mode"], "tp2");
    let (lo, hi) = (tp2["tok_s"]["interval"][0].as_f64(), tp2["tok_s"]["interval"][1].as_f64());
    assert!(lo.zip(hi).is_some_and(|(lo, hi)| 0.0 < lo && lo < hi), "{tp2}");
    assert!(v["rows"].is_array(), "the plan itself is still there");
    // A percentile target answers too and says which statistic it holds.
    let p90 = bin().arg("plan").arg(&scenario).args(["--slo-ttft", "2", "--slo-stat", "p90"]).output().expect("run");
    assert!(p90.status.success(), "{}", String::from_utf8_lossy(&p90.stderr));
    assert!(String::from_utf8_lossy(&p90.stdout).lines().any(|l| l.starts_with("target: p90 TTFT <= 2.00 s")));
    let price = bin().arg("plan").arg(&scenario).args(["--price", "100000"]).output().expect("run");
    assert_eq!(price.status.code(), Some(2));
}

/// `predict --rate`: one row per rate in each format, the percentile columns, the same answer for the same seed.
#[test]
fn predict_at_request_rates_prints_one_row_per_rate_in_every_format() {
    let scenario = data().join("scenarios/kubis-gemma-4-26b-a4b-dgx-spark.json");
    let run = |format: &str, seed: &str| {
        bin()
            .args(["predict", "--mode", "single", "--rate", "0.5,2,inf", "--num-prompts", "30", "--burstiness", "0.7"])
            .args(["--random-range-ratio", "0.5", "--seed", seed, "--format", format])
            .arg(&scenario)
            .output()
            .expect("run")
    };
    let csv = run("csv", "7");
    assert_eq!(csv.status.code(), Some(0), "{}", String::from_utf8_lossy(&csv.stderr));
    let text = String::from_utf8_lossy(&csv.stdout).into_owned();
    assert!(
        text.starts_with("mode,isl,osl,rate,burstiness,max_concurrency,prompts,achieved_rate,output_tok_s"),
        "{text}"
    );
    for column in ["median_ttft_s", "p90_tpot_ms", "p99_itl_ms", "mean_e2e_s", "peak_concurrency"] {
        assert!(text.lines().next().is_some_and(|h| h.split(',').any(|c| c == column)), "{column}: {text}");
    }
    assert_eq!(text.lines().count(), 1 + 3, "one row per rate: {text}");
    assert!(text.lines().nth(3).is_some_and(|l| l.contains(",inf,")), "{text}");
    assert_eq!(run("csv", "7").stdout, csv.stdout, "the same seed, the same answer");
    let json = run("json", "7");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(3));
    let table = run("table", "7");
    assert_eq!(String::from_utf8_lossy(&table.stdout).lines().count(), 1 + 3);
}

/// A bad rate list, a burstiness of zero, a range ratio of one, or open-loop flags without `--rate` are usage
/// errors (exit 2) naming the flag.
#[test]
fn a_bad_open_loop_flag_is_a_usage_error_naming_it() {
    let scenario = data().join("scenarios/kubis-gemma-4-26b-a4b-dgx-spark.json");
    for (args, flag) in [
        (vec!["--rate", "0.5,fast"], "--rate"),
        (vec!["--rate", "0.5,0"], "--rate"),
        (vec!["--rate=-1"], "--rate"),
        (vec!["--rate", "1", "--burstiness", "0"], "--burstiness"),
        (vec!["--rate", "1", "--random-range-ratio", "1"], "--random-range-ratio"),
        (vec!["--rate", "1", "--max-concurrency", "0"], "--max-concurrency"),
        (vec!["--burstiness", "0.7"], "--rate"),
        (vec!["--rate", "1", "--concurrency", "4"], "--concurrency"),
    ] {
        let r = bin().arg("predict").args(&args).arg(&scenario).output().expect("run");
        let err = String::from_utf8_lossy(&r.stderr).into_owned();
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?} should name {flag}: {err}");
    }
}

/// A reader that closes the pipe after the header of a rate sweep: no panic, and the exit code stays 0.
#[test]
fn a_rate_sweep_into_a_closed_pipe_is_not_a_panic() {
    let mut child = bin()
        .args(["predict", "--rate", "0.5,1,2,4", "--num-prompts", "50", "--format", "csv"])
        .arg(data().join("scenarios/kubis-gemma-4-26b-a4b-dgx-spark.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 16];
    child.stdout.as_mut().expect("stdout").read_exact(&mut first).expect("read");
    drop(child.stdout.take());
    let status = child.wait().expect("wait");
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.success(), "exit {status:?}, stderr {err}");
}

fn run_plan(args: &[&str]) -> std::process::Output {
    bin().arg("plan").arg("--data").arg(data()).args(args).output().expect("run")
}

/// `plan --model --hardware --workload` asks without a scenario file; `--save` writes the scenario those flags
/// ask, and `plan <that file>` gives the same answer, the server settings included.
#[test]
fn a_plan_asked_by_flags_saves_the_scenario_that_gives_the_same_answer() {
    let saved = std::env::temp_dir().join(format!("twotower-plan-save-{}.json", std::process::id()));
    let flags = ["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat", "--osl", "256"];
    let settings = ["--max-num-seqs", "48", "--gpu-memory-utilization", "0.8", "--block-size", "32"];
    let asked = run_plan(&[&flags[..], &settings[..], &["--save", saved.to_str().unwrap()]].concat());
    assert!(asked.status.success(), "{}", String::from_utf8_lossy(&asked.stderr));
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&saved).expect("saved")).expect("json");
    assert_eq!((file["workloads"][0]["isl"].as_u64(), file["workloads"][0]["osl"].as_u64()), (Some(128), Some(256)));
    assert_eq!(file["overrides"]["server.max_num_seqs"], 48.0, "{file}");
    assert_eq!(file["overrides"]["server.block_size"], 32.0, "{file}");
    let again = run_plan(&[saved.to_str().unwrap()]);
    let _ = std::fs::remove_file(&saved);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(String::from_utf8_lossy(&asked.stdout), String::from_utf8_lossy(&again.stdout));
    let text = String::from_utf8_lossy(&asked.stdout).into_owned();
    assert!(text.contains("server settings: --gpu-memory-utilization 0.8 --max-num-seqs 48 --block-size 32"), "{text}");
    // The settings move the answer: a cap of 48 sequences holds one machine's residents at 48 or below.
    let capped = text.lines().find(|l| l.starts_with("128  256  256 ")).expect("the row at 256 clients");
    let uncapped = run_plan(&flags);
    let uncapped = String::from_utf8_lossy(&uncapped.stdout).into_owned();
    let free = uncapped.lines().find(|l| l.starts_with("128  256  256 ")).expect("the row at 256 clients");
    assert_ne!(capped, free, "the server settings change the prediction");
    assert!(text.contains("how to run "), "{text}");
    assert!(text.contains("--max-num-seqs 48"), "the commands carry the team's settings: {text}");
}

/// Several `--hardware` compare machines side by side: a comparison table first, then each machine's verdict,
/// every summary line within 100 columns.
#[test]
fn several_machines_are_compared_side_by_side_within_100_columns() {
    let target = ["--slo-ttft", "1", "--slo-tpot", "100", "--price", "4000", "--power-w", "240"];
    let machines = ["--hardware", "dgx-spark", "--hardware", "gb300-station"];
    let out = run_plan(&[&["--model", "gpt-oss-120b", "--workload", "chat"][..], &machines[..], &target[..]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "machines compared (first workload):", "{text}");
    assert!(lines[1].starts_with("  hardware") && lines[1].contains("cost/Mtok"), "{text}");
    assert!(lines[2].trim_start().starts_with("dgx-spark") && lines[3].trim_start().starts_with("gb300-station"));
    let summary: Vec<&str> = lines.iter().copied().take_while(|l| !l.starts_with("isl ")).collect();
    assert!(summary.iter().any(|l| l.starts_with("verdict (128/128 ISL/OSL): ")), "{text}");
    for l in &summary {
        assert!(l.chars().count() <= 100, "wider than 100 columns: {l}");
    }
    let json =
        run_plan(&[&["--model", "gpt-oss-120b", "--workload", "chat", "--format", "json"][..], &machines[..]].concat());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(2), "one answer per machine");
    assert_eq!(v[1]["hardware"], "gb300-station");
    assert!(v[0]["serving_commands"]["steps"].as_array().is_some_and(|s| !s.is_empty()), "{}", v[0]);
}

/// `plan --machines 4` adds TP4, PP4 and four copies to the pair's modes: a column each, where the weights sit
/// on four machines, a verdict on what machines three and four add over the best pair (also at a latency
/// target), the commands of four machines, and a scenario that `--save` keeps and `plan <file>` answers alike.
#[test]
fn a_plan_for_four_machines_answers_what_the_third_and_fourth_add() {
    let saved = std::env::temp_dir().join(format!("twotower-plan-four-{}.json", std::process::id()));
    let flags = ["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "chat", "--machines", "4"];
    let out = run_plan(&[&flags[..], &["--save", saved.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let header = text.lines().find(|l| l.starts_with("isl ")).expect("the table");
    for column in ["tp2_tok_s", "tp4_tok_s", "pp4_tok_s", "dp4_tok_s"] {
        assert!(header.contains(column), "{column}: {header}");
    }
    assert!(text.lines().any(|l| l.starts_with("four machines: ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("tp4    per GPU: ")), "{text}");
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&saved).expect("saved")).expect("json");
    assert!(file["modes"].as_array().is_some_and(|m| m.iter().any(|x| x == "tp4")), "{file}");
    let again = run_plan(&[saved.to_str().unwrap()]);
    let _ = std::fs::remove_file(&saved);
    assert_eq!(String::from_utf8_lossy(&again.stdout), text);
    // JSON: the verdict and every row's four-machine predictions; copies at 4k clients are one machine at k.
    let json = run_plan(&[&flags[..], &["--format", "json", "--concurrency", "8,32"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let four = &v["four_machines"];
    assert!(four["best"].is_string() && four["tok_s"].as_f64().is_some_and(|t| t > 0.0), "{four}");
    let rows = v["rows"].as_array().expect("rows");
    let tok = |row: &serde_json::Value, mode: &str| {
        row["modes"]
            .as_array()
            .and_then(|m| m.iter().find(|p| p["mode"] == mode))
            .and_then(|p| p["output_tok_s"].as_f64())
    };
    let (dp4_at_32, single_at_8) = (tok(&rows[1], "dp4").expect("dp4"), tok(&rows[0], "single").expect("single"));
    assert!((dp4_at_32 - 4.0 * single_at_8).abs() < 1e-6 * dp4_at_32, "{dp4_at_32} against 4 x {single_at_8}");
    // At a latency target the verdict says what four machines serve; the commands of tp4 join four machines.
    let target = run_plan(&[&flags[..], &["--slo-ttft", "2", "--slo-tpot", "50"]].concat());
    let target = String::from_utf8_lossy(&target.stdout).into_owned();
    assert!(target.lines().any(|l| l.trim_start().starts_with("four machines: ")), "{target}");
    let tp4 = run_plan(&[&flags[..], &["--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&tp4.stdout).expect("json");
    assert!(v["rows"][0]["modes"].as_array().is_some_and(|m| m.len() == 10), "{}", v["rows"][0]);
    // Two machines stay the default: no four-machine column.
    let two = run_plan(&flags[..6]);
    assert!(!String::from_utf8_lossy(&two.stdout).contains("tp4_tok_s"));
}

/// Bad plan flags are usage errors (exit 2) that name the flag; an unknown id lists the known ones.
#[test]
fn bad_plan_flags_are_usage_errors_naming_the_flag() {
    let base = ["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--isl", "1024", "--osl", "128"];
    let cases: [(&[&str], &str); 10] = [
        (&["--model", "gpt-oss-120b", "--hardware", "dgx-sparc", "--workload", "chat"], "--hardware dgx-sparc"),
        (&["--model", "gpt-oss-12b", "--hardware", "dgx-spark", "--workload", "chat"], "--model gpt-oss-12b"),
        (&["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--workload", "batch"], "--workload"),
        (&["--model", "gpt-oss-120b", "--hardware", "dgx-spark", "--isl", "512"], "--isl and --osl"),
        (&["--model", "gpt-oss-120b", "--workload", "chat"], "--hardware"),
        (&[&base[..], &["--gpu-memory-utilization", "1.5"]].concat(), "--gpu-memory-utilization"),
        (&[&base[..], &["--kv-cache-dtype", "fp8"]].concat(), "--kv-cache-dtype"),
        (&[&base[..], &["--concurrency", "0"]].concat(), "--concurrency"),
        (&[&base[..], &["--hardware", "gh200", "--save", "x.json"]].concat(), "--save"),
        (&[&base[..], &["--machines", "3"]].concat(), "--machines"),
    ];
    for (args, flag) in cases {
        let out = run_plan(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?} should name {flag}: {err}");
    }
    let unknown = run_plan(&["--model", "gpt-oss-120b", "--hardware", "dgx-sparc", "--workload", "chat"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("did you mean `dgx-spark`"));
    // A scenario file states its own settings: the flag is refused with the override key to use.
    let scenario = data().join("scenarios/glm-5.2.json");
    let out = bin().arg("plan").arg(&scenario).args(["--max-num-seqs", "64"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("server.max_num_seqs"));
}

/// The S1 Sparks at 64 clients: kubis.ai measured two copies ahead of TP2 where the model puts TP2 first. The
/// plan reports what was measured, and the verdict at a target calls the two too close to call.
#[test]
fn the_sparks_at_64_clients_are_reported_as_measured_or_too_close_to_call() {
    for scenario in ["kubis-gpt-oss-120b-dgx-spark", "kubis-gemma-4-26b-a4b-dgx-spark"] {
        let path = data().join(format!("scenarios/{scenario}.json"));
        let out = bin().arg("plan").arg(&path).output().expect("run");
        let text = String::from_utf8(out.stdout).expect("utf8");
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("recommended: dp2 as measured") || text.contains("too close to call"),
            "{scenario}: {text}"
        );
        assert!(text.contains("how to run dp2"), "{scenario}: the commands are the measured mode's");
        let json = bin().arg("plan").arg(&path).args(["--slo-tpot", "200", "--format", "json"]).output().expect("run");
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
        let verdict = &v["goodput"]["workloads"][0]["verdict"];
        let called = verdict["too_close"].as_str().is_some_and(|t| t.contains("too close to call"));
        assert!(verdict["best_pair"] == "dp2" || called, "{scenario}: {verdict}");
    }
}

/// `validate` enforces the bands' coverage: with a share the held-out points do not reach it fails, naming the
/// question, the metric and the shares; a coverage outside (0, 1) is refused when the file loads.
#[test]
fn validate_fails_where_held_out_points_fall_outside_their_bands_too_often() {
    let dir = std::env::temp_dir().join(format!("twotower-cli-coverage-{}", std::process::id()));
    copy_dir(&data(), &dir);
    let path = dir.join("accuracy.json");
    let text = std::fs::read_to_string(&path).expect("accuracy.json");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["band_coverage"]["held_out_share_min"] = serde_json::json!(0.95);
    std::fs::write(&path, serde_json::to_string_pretty(&v).expect("json")).expect("write");
    let out = bin().arg("validate").arg(&dir).output().expect("run");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "a 95% share passed:\n{said}");
    let error = said.split("error: ").find(|e| e.starts_with("pair from one tok/s: ")).expect("the coverage error");
    assert!(error.contains("fell inside their 80% bands, under the 95% the target asks"), "{error}");
    assert!(error.contains("/band_coverage/held_out_share_min"), "{error}");
    // The copy's stored fits are the shipped data's: an error naming the file and the refit, the check run anyway.
    let stale = said.split("error: ").find(|e| e.contains("fitted/profiles.json")).expect("the stale fits");
    assert!(stale.starts_with("stored fits computed from other data") && stale.contains("--refit"), "{stale}");
    v["band_coverage"]["coverage"] = serde_json::json!(1.5);
    std::fs::write(&path, serde_json::to_string_pretty(&v).expect("json")).expect("write");
    let out = bin().args(["validate", "--no-model-check"]).arg(&dir).output().expect("run");
    let _ = std::fs::remove_dir_all(&dir);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("coverage 1.5 is not in (0, 1)"), "{said}");
}

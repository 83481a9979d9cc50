//! Golden outputs: the CLI on `data/` (report, fabric, points, plan and predict of every shipped scenario, both
//! importers) must print exactly `tests/golden/`. The files were captured before the query layer; where an
//! output changed on purpose, `tests/golden/README.md` says what and why.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every golden file and the CLI arguments that produce it.
fn cases() -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    out.push(("report.txt".into(), args(&["report", "data/"])));
    out.push(("report-single.txt".into(), args(&["report", "data/", "--fit", "single"])));
    out.push(("report.json".into(), args(&["report", "data/", "--format", "json"])));
    out.push(("fabric.txt".into(), args(&["fabric", "data/"])));
    out.push(("points.csv".into(), args(&["points", "data/", "--format", "csv"])));
    let samples = "tests/import-samples";
    out.push((
        "import-vllm.json".into(),
        vec![
            "import".into(),
            "vllm-bench".into(),
            format!("{samples}/vllm-serve-c1.json"),
            format!("{samples}/vllm-serve-c8.json"),
            format!("{samples}/vllm-serve-c32.json"),
        ],
    ));
    out.push((
        "import-nccl.json".into(),
        vec!["import".into(), "nccl-tests".into(), format!("{samples}/all_reduce_perf.txt")],
    ));
    out.push((
        "import-nccl-link-times.json".into(),
        vec!["import".into(), "nccl-tests".into(), "--link-times".into(), format!("{samples}/all_reduce_perf.txt")],
    ));
    let mut scenarios: Vec<String> = std::fs::read_dir(root().join("data/scenarios"))
        .expect("data/scenarios")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    scenarios.sort();
    for file in scenarios {
        let name = file.trim_end_matches(".json");
        let path = format!("data/scenarios/{file}");
        out.push((format!("plan-{name}.txt"), vec!["plan".into(), path.clone()]));
        out.push((format!("plan-{name}.json"), vec!["plan".into(), path.clone(), "--format".into(), "json".into()]));
        out.push((format!("predict-{name}.csv"), vec!["predict".into(), path, "--format".into(), "csv".into()]));
    }
    out
}

#[test]
fn cli_outputs_match_the_golden_files() {
    let cases = cases();
    // Every golden file is produced by some case, so a stale golden file cannot sit there unchecked.
    let mut golden: Vec<String> = std::fs::read_dir(root().join("tests/golden"))
        .expect("tests/golden")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    golden.sort();
    let mut produced: Vec<String> = cases.iter().map(|(f, _)| f.clone()).collect();
    produced.sort();
    assert_eq!(golden, produced, "tests/golden/ and the cases must name the same files");
    let mut failures = Vec::new();
    for (file, args) in &cases {
        let out = Command::new(env!("CARGO_BIN_EXE_sim-core")).args(args).current_dir(root()).output().expect("run");
        assert!(out.status.success(), "sim-core {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
        let want = std::fs::read_to_string(root().join("tests/golden").join(file)).expect("golden file");
        let got = String::from_utf8_lossy(&out.stdout);
        if got != want {
            let first = want.lines().zip(got.lines()).position(|(a, b)| a != b).unwrap_or(want.lines().count());
            failures.push(format!(
                "{file} (sim-core {}): first difference at line {}\n  golden: {:?}\n  now:    {:?}",
                args.join(" "),
                first + 1,
                want.lines().nth(first).unwrap_or(""),
                got.lines().nth(first).unwrap_or("")
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} outputs differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

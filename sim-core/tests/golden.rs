//! Golden outputs: the CLI on `data/` (report, fabric, points, plan and predict of every shipped scenario, both
//! importers) must print exactly `tests/golden/`, and every generated block of the documents (README.md,
//! `docs/*.md`) must be what its command prints now. `TWOTOWER_BLESS=1 cargo test -p sim-core --test golden`
//! rewrites both from the current code; the commit that does so says what moved and why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether this run rewrites the goldens and the documents' generated blocks instead of comparing them.
fn blessing() -> bool {
    std::env::var("TWOTOWER_BLESS").is_ok_and(|v| v == "1")
}

/// Runs the CLI from the repository root and returns its standard output; a failing command fails the test.
/// The CLI is deterministic, so a command two documents show (or a document and a golden file) runs once.
/// Arguments ending in `2>&1` show an error as a user meets it: stderr after stdout, and the command must exit 1
/// (a finding) without panicking.
fn run_cli(args: &[String]) -> String {
    static OUTPUTS: Mutex<BTreeMap<Vec<String>, String>> = Mutex::new(BTreeMap::new());
    if let Some(out) = OUTPUTS.lock().expect("outputs").get(args) {
        return out.clone();
    }
    let merged = args.last().is_some_and(|a| a == "2>&1");
    let run = if merged { &args[..args.len() - 1] } else { args };
    let out = Command::new(env!("CARGO_BIN_EXE_sim-core")).args(run).current_dir(root()).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = if merged {
        assert_eq!(out.status.code(), Some(1), "sim-core {}: a finding exits 1: {err}", run.join(" "));
        assert!(!err.contains("panicked"), "sim-core {}: {err}", run.join(" "));
        String::from_utf8(out.stdout).expect("the CLI prints UTF-8") + &err
    } else {
        assert!(out.status.success(), "sim-core {}: {err}", args.join(" "));
        String::from_utf8(out.stdout).expect("the CLI prints UTF-8")
    };
    OUTPUTS.lock().expect("outputs").insert(args.to_vec(), text.clone());
    text
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
            "--hardware".into(),
            "gb300-station".into(),
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
    if blessing() {
        // A blessing run writes every case below and removes the files no case produces any more.
        for stale in golden.iter().filter(|g| !produced.contains(g)) {
            let path = root().join("tests/golden").join(stale);
            std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    } else {
        assert_eq!(golden, produced, "tests/golden/ and the cases must name the same files");
    }
    let mut failures = Vec::new();
    for (file, args) in &cases {
        let got = run_cli(args);
        let path = root().join("tests/golden").join(file);
        if blessing() {
            std::fs::write(&path, &got).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            continue;
        }
        let want = std::fs::read_to_string(&path).expect("golden file");
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
    assert!(
        failures.is_empty(),
        "{} of {} outputs differ (TWOTOWER_BLESS=1 rewrites them):\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Marks the start of a generated block in a document:
/// `<!-- generated: <sim-core arguments> [| head -N | tail -N] -->`.
const BLOCK_START: &str = "<!-- generated: ";
/// Marks its end.
const BLOCK_END: &str = "<!-- end generated -->";

/// Which lines of a command's output a block shows.
#[derive(Debug, PartialEq)]
enum Slice {
    All,
    Head(usize),
    Tail(usize),
}

/// One generated block: the CLI arguments, which lines of the output it shows, and the line range of its body in
/// the document (between the markers, code fence included).
#[derive(Debug)]
struct Block {
    args: Vec<String>,
    slice: Slice,
    body: std::ops::Range<usize>,
}

/// Finds the generated blocks of a document; a malformed marker is an error naming its line.
fn blocks(text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(rest) = lines[i].trim().strip_prefix(BLOCK_START) else {
            i += 1;
            continue;
        };
        let spec = rest.strip_suffix("-->").ok_or_else(|| format!("line {}: the marker does not end in -->", i + 1))?;
        let (command, slice) = match spec.split_once('|') {
            Some((c, filter)) => {
                let f = filter.trim();
                let n = |prefix: &str| f.strip_prefix(prefix).and_then(|n| n.trim().parse().ok());
                let slice = match (n("head -"), n("tail -")) {
                    (Some(n), _) => Slice::Head(n),
                    (_, Some(n)) => Slice::Tail(n),
                    _ => return Err(format!("line {}: only `| head -N` or `| tail -N` may follow the command", i + 1)),
                };
                (c, slice)
            }
            None => (spec, Slice::All),
        };
        let args: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].trim() == BLOCK_END)
            .ok_or_else(|| format!("line {}: no `{BLOCK_END}` after this marker", i + 1))?;
        out.push(Block { args, slice, body: i + 1..end });
        i = end + 1;
    }
    Ok(out)
}

/// What a block's body must be: the command's output (the lines its slice keeps), inside a `text` code fence
/// unless the output is Markdown itself (a `--format markdown` command).
fn expected_body(block: &Block) -> Vec<String> {
    let out = run_cli(&block.args);
    let mut lines: Vec<String> = out.lines().map(str::to_string).collect();
    match block.slice {
        Slice::All => {}
        Slice::Head(n) => lines.truncate(n),
        Slice::Tail(n) => lines = lines.split_off(lines.len().saturating_sub(n)),
    }
    if block.args.windows(2).any(|w| w[0] == "--format" && w[1] == "markdown") {
        return lines;
    }
    let mut fenced = vec!["```text".to_string()];
    fenced.extend(lines);
    fenced.push("```".to_string());
    fenced
}

/// The documents that carry generated blocks.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    if let Ok(entries) = std::fs::read_dir(root().join("docs")) {
        let mut md: Vec<PathBuf> =
            entries.map(|e| e.expect("entry").path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
        md.sort();
        docs.extend(md);
    }
    docs
}

#[test]
fn generated_blocks_of_the_documents_match_the_code() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let found = blocks(&text).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let lines: Vec<&str> = text.lines().collect();
        let mut rewritten: Vec<String> = Vec::new();
        let mut next = 0;
        for block in &found {
            checked += 1;
            let want = expected_body(block);
            let have: Vec<String> = lines[block.body.clone()].iter().map(|l| l.to_string()).collect();
            rewritten.extend(lines[next..block.body.start].iter().map(|l| l.to_string()));
            rewritten.extend(want.iter().cloned());
            next = block.body.end;
            if have != want {
                let first = have.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(have.len().min(want.len()));
                failures.push(format!(
                    "{}:{} (sim-core {}): first difference at block line {}\n  document: {:?}\n  code:     {:?}",
                    doc.display(),
                    block.body.start,
                    block.args.join(" "),
                    first + 1,
                    have.get(first).map(String::as_str).unwrap_or("<end>"),
                    want.get(first).map(String::as_str).unwrap_or("<end>")
                ));
            }
        }
        if blessing() && !found.is_empty() {
            rewritten.extend(lines[next..].iter().map(|l| l.to_string()));
            std::fs::write(&doc, rewritten.join("\n") + "\n").unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        }
    }
    assert!(checked >= 3, "only {checked} generated blocks found in README.md and docs/: the markers moved?");
    if !blessing() {
        assert!(
            failures.is_empty(),
            "{} generated blocks differ from what the code prints (TWOTOWER_BLESS=1 rewrites them):\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn block_markers_parse_with_their_head_and_refuse_anything_else() {
    let doc = "a\n<!-- generated: plan x.json | head -3 -->\n```text\nold\n```\n<!-- end generated -->\nb\n";
    let found = blocks(doc).expect("parses");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].args, vec!["plan", "x.json"]);
    assert_eq!(found[0].slice, Slice::Head(3));
    let tail = blocks("<!-- generated: report data/ | tail -2 -->\n<!-- end generated -->\n").expect("parses");
    assert_eq!(tail[0].slice, Slice::Tail(2));
    assert_eq!(found[0].body, 2..5);
    assert!(blocks("<!-- generated: plan x.json | sort -->\n<!-- end generated -->\n").is_err());
    assert!(blocks("<!-- generated: plan x.json -->\nno end\n").is_err());
}

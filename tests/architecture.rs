//! The invariants of ARCHITECTURE.md, checked on the source text: sim-core's library does no IO, modules
//! import each other without cycles (sim-core and app), the app does no model arithmetic of its own, every
//! source file keeps to one concern's size, and the documents and data speak of the project only.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, recursively, sorted, skipping the folders in `skip`.
fn rust_files(dir: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("entry").path();
            if p.is_dir() {
                if !skip.iter().any(|s| p.ends_with(s)) {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A line with the contents of its string literals blanked (`"..."` becomes `""`), so text shown to people
/// never counts as code. Escaped quotes stay inside their literal.
fn without_strings(line: &str) -> String {
    let mut out = String::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in line.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                out.push(c);
            }
        } else {
            if c == '"' {
                in_string = true;
            }
            out.push(c);
        }
    }
    out
}

/// Lines of code without string contents and `//` comments (doc comments may name what code must not do).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, without_strings(l).split("//").next().unwrap_or("").to_string()))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect()
}

/// Whether `pat` occurs in `line` as a name of its own (`place(` is not in `replace(`).
fn contains_name(line: &str, pat: &str) -> bool {
    line.match_indices(pat).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        !pat.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            || !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

/// Finds forbidden patterns in the code of `files`; each hit as `file:line: pattern`.
fn hits(files: &[PathBuf], forbidden: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).expect("source");
        for (n, line) in code_lines(&text) {
            for pat in forbidden {
                if contains_name(&line, pat) {
                    out.push(format!("{}:{n}: `{pat}` in `{}`", f.display(), line.trim()));
                }
            }
        }
    }
    out
}

#[test]
fn sim_core_library_does_no_io() {
    let src = root().join("sim-core/src");
    // The binary (src/bin/) is the one place that reads files and writes to the terminal.
    let files = rust_files(&src, &["bin"]);
    assert!(files.len() > 20, "found only {} library files under {}", files.len(), src.display());
    let forbidden = [
        "std::fs",
        "File::",
        "std::io::stdin",
        "std::io::stdout",
        "std::env::",
        "std::net",
        "std::process",
        "Instant::now",
        "SystemTime::now",
        "thread::spawn",
        "println!",
        "eprintln!",
        "print!(",
        "static mut",
    ];
    let found = hits(&files, &forbidden);
    assert!(found.is_empty(), "IO or global state in sim-core's library:\n{}", found.join("\n"));
}

#[test]
fn the_app_does_no_model_arithmetic() {
    let files = rust_files(&root().join("app/src"), &[]);
    assert!(files.len() > 10, "found only {} app files", files.len());
    // Every model number comes from `sim_core::explore`: the app may not predict, fit, place weights, compute a
    // collective's bandwidth, plan or compute an error itself.
    let forbidden = [
        "predict(",
        "model::predict",
        "busbw(",
        "place(",
        "fit::fit",
        "fit_from(",
        "calibrate_team(",
        "report::build",
        "plan::plan(",
        "plan::row(",
        "ErrorStats::of(",
        "signed_error_pct(",
        "stats::ape(",
        "kv_pool_bytes /",
        "apply_override(",
    ];
    let found = hits(&files, &forbidden);
    assert!(found.is_empty(), "model arithmetic in app/ (ask sim_core::explore instead):\n{}", found.join("\n"));
}

/// The top-level module a file belongs to: `src/explore/sweep.rs` -> `explore`, `src/views/plan.rs` -> `views`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("component").as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// Module -> modules it names through `crate::...` (also inside `use crate::{a, b::c}` groups). Names that
/// are crate-root re-exports map to the module that defines them.
fn module_graph(src: &Path, skip: &[&str], reexports: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in rust_files(src, skip) {
        let m = module_of(src, &f);
        if m == "lib" || m == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("source");
        let code: String = code_lines(&text).into_iter().map(|(_, l)| l + "\n").collect();
        let mut targets = BTreeSet::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                group[..end].split(',').map(|s| s.trim().split("::").next().unwrap_or("").to_string()).collect()
            } else {
                vec![rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()]
            };
            for n in names.into_iter().filter(|n| !n.is_empty()) {
                let n = reexports.iter().find(|(name, _)| *name == n).map_or(n.clone(), |(_, m)| m.to_string());
                if n != m {
                    targets.insert(n);
                }
            }
        }
        graph.entry(m).or_default().extend(targets);
    }
    graph
}

/// A cycle in the graph, as a path that ends where it starts, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(pos) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[pos..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for next in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn modules_import_each_other_without_cycles() {
    let core =
        module_graph(&root().join("sim-core/src"), &["bin"], &[("Mode", "dataset"), ("Diagnostic", "diagnostic")]);
    assert!(core.len() > 10 && core["explore"].contains("report"), "the sim-core graph looks wrong: {core:?}");
    if let Some(c) = find_cycle(&core) {
        panic!("sim-core modules import each other in a cycle: {}", c.join(" -> "));
    }
    let app = module_graph(&root().join("app/src"), &[], &[]);
    assert!(app.contains_key("compute") && app["compute"].contains("charts"), "the app graph looks wrong: {app:?}");
    if let Some(c) = find_cycle(&app) {
        panic!("app modules import each other in a cycle: {}", c.join(" -> "));
    }
    // The checker itself finds a planted cycle.
    let planted = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["a".to_string()])),
    ]);
    assert_eq!(find_cycle(&planted), Some(vec!["a".to_string(), "b".to_string(), "a".to_string()]));
}

/// A source file past this many lines holds more than one concern: split it by concern.
const MAX_SOURCE_LINES: usize = 800;

#[test]
fn no_source_file_holds_more_than_one_concerns_worth_of_lines() {
    let mut files = rust_files(&root().join("sim-core/src"), &[]);
    files.extend(rust_files(&root().join("app/src"), &[]));
    assert!(files.len() > 40, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).expect("source").lines().count();
            (n > MAX_SOURCE_LINES).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_SOURCE_LINES} lines (split by concern):\n{}", long.join("\n"));
}

/// The manual and the map stay short enough to read in one sitting.
#[test]
fn the_readme_and_the_architecture_stay_short() {
    for (file, max) in [("README.md", 250), ("ARCHITECTURE.md", 300)] {
        let n = std::fs::read_to_string(root().join(file)).expect(file).lines().count();
        assert!(n <= max, "{file} has {n} lines, over its {max}: move detail to docs/, history to CHANGELOG.md");
    }
}

/// Every tracked document and data file a reader of a clone sees: the documents at the top, under `docs/` and
/// `tests/golden/`, and every file under `data/`.
fn reader_facing_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md", "tests/golden/README.md"]
        .iter()
        .map(|f| root().join(f))
        .collect();
    let mut stack = vec![root().join("data"), root().join("docs")];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md" || x == "json") {
                out.push(p);
            }
        }
    }
    out.retain(|p| p.is_file());
    out.sort();
    out
}

/// Words that speak of how the project was made rather than of what it is: a work session, this project's own
/// issue numbers (a public tracker's `owner/repo#N` or `repo issue #N` stays allowed), local branches, and
/// notes that live outside the repository.
fn self_reference(line: &str) -> Option<&'static str> {
    let lower = line.to_lowercase();
    if lower.contains("session") {
        return Some("a work session");
    }
    if line.contains("DOMAIN.md") {
        return Some("DOMAIN.md, which is not in the repository (docs/domain.md is)");
    }
    if lower.contains("branch `") || lower.contains("local branch") {
        return Some("a local branch");
    }
    for (i, _) in lower.match_indices("issue ") {
        let after = &lower[i + "issue ".len()..];
        let public =
            lower[..i].trim_end().ends_with("vllm") || lower[..i].contains("github.com") || lower[..i].contains('/');
        if after.starts_with(|c: char| c.is_ascii_digit()) && !public {
            return Some("an issue number of this project");
        }
    }
    None
}

#[test]
fn documents_and_data_speak_of_the_project_only() {
    let files = reader_facing_files();
    assert!(files.len() > 40, "found only {} documents and data files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("document");
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = self_reference(line) {
                found.push(format!(
                    "{}:{}: {what}: {}",
                    f.display(),
                    n + 1,
                    line.trim().chars().take(100).collect::<String>()
                ));
            }
        }
    }
    assert!(found.is_empty(), "documents that speak of how the project was made:\n{}", found.join("\n"));
    // The checker itself sees what it looks for, and lets a public tracker's issue through.
    assert!(self_reference("fixed in the fourth session").is_some());
    assert!(self_reference("the targets of issue 3").is_some());
    assert!(self_reference("see vllm-project/vllm issue #27508").is_none());
    assert!(self_reference("the model's issue with 8 GPUs").is_none());
}

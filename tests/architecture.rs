//! The invariants of ARCHITECTURE.md, checked on the source text: sim-core's library does no IO, modules
//! import each other without cycles (sim-core and app), and the app does no model arithmetic of its own.

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

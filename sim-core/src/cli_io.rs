//! Command-line IO: reading a dataset directory, and writing tables that survive a closed pipe.

use sim_core::dataset::validate::Seeds;
use sim_core::dataset::SourceText;
use std::io::{ErrorKind, Write};
use std::path::Path;

/// Reads every `.json` file under `dir` (recursively, sorted) with paths relative to `dir`.
pub fn load_dir(dir: &Path) -> Result<Vec<SourceText>, String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{}: not a directory", dir.display()));
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<SourceText>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, out)?;
        } else if path.extension().is_some_and(|x| x == "json") {
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            // Invalid UTF-8 is kept (lossily) so the validator reports it as a JSON error in that file.
            let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            out.push(SourceText { path: rel, text });
        }
    }
    Ok(())
}

/// Reads the seed texts of a directory, keyed by file name.
pub fn read_seeds(dir: &Path) -> Result<Seeds, String> {
    let mut seeds = Seeds::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            seeds.insert(path.file_name().unwrap_or_default().to_string_lossy().into_owned(), text);
        }
    }
    Ok(seeds)
}

/// Rows of strings with a header, rendered as an aligned table, CSV or JSON.
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Self {
        Self { headers: headers.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }
}

/// Stdout that stops writing once the reader is gone instead of panicking.
pub struct Out {
    inner: std::io::BufWriter<std::io::Stdout>,
    broken: bool,
}

impl Out {
    pub fn stdout() -> Self {
        Self { inner: std::io::BufWriter::new(std::io::stdout()), broken: false }
    }

    pub fn broken_pipe(&mut self) -> bool {
        if !self.broken {
            if let Err(e) = self.inner.flush() {
                self.broken = e.kind() == ErrorKind::BrokenPipe || self.broken;
            }
        }
        self.broken
    }

    pub fn line(&mut self, s: &str) {
        if self.broken {
            return;
        }
        if let Err(e) = writeln!(self.inner, "{s}") {
            // Any write error ends output; a closed pipe is the common, harmless case.
            self.broken = true;
            if e.kind() != ErrorKind::BrokenPipe {
                eprintln!("error: writing output: {e}");
            }
        }
    }

    pub fn table(&mut self, t: &Table, csv: bool, json: bool) {
        if json {
            let objs: Vec<serde_json::Map<String, serde_json::Value>> = t
                .rows
                .iter()
                .map(|r| {
                    t.headers
                        .iter()
                        .zip(r)
                        .map(|(h, c)| {
                            let v = c.parse::<f64>().ok().filter(|x| x.is_finite()).and_then(serde_json::Number::from_f64).map(serde_json::Value::Number).unwrap_or_else(|| serde_json::Value::String(c.clone()));
                            (h.clone(), v)
                        })
                        .collect()
                })
                .collect();
            self.line(&serde_json::to_string_pretty(&objs).unwrap_or_default());
        } else if csv {
            self.line(&t.headers.join(","));
            for r in &t.rows {
                let cells: Vec<String> = r.iter().map(|c| csv_cell(c)).collect();
                self.line(&cells.join(","));
            }
        } else {
            let mut widths: Vec<usize> = t.headers.iter().map(|h| h.chars().count()).collect();
            let shown: Vec<Vec<String>> = t.rows.iter().map(|r| r.iter().map(|c| truncate(c, 60)).collect()).collect();
            for r in &shown {
                for (i, c) in r.iter().enumerate() {
                    if i < widths.len() {
                        widths[i] = widths[i].max(c.chars().count());
                    }
                }
            }
            let fmt_row = |cells: &[String]| -> String {
                cells.iter().enumerate().map(|(i, c)| format!("{c:<w$}", w = widths.get(i).copied().unwrap_or(0))).collect::<Vec<_>>().join("  ").trim_end().to_string()
            };
            self.line(&fmt_row(&t.headers));
            for r in &shown {
                self.line(&fmt_row(r));
            }
        }
    }
}

fn csv_cell(c: &str) -> String {
    if c.contains([',', '"', '\n']) {
        format!("\"{}\"", c.replace('"', "\"\""))
    } else {
        c.to_string()
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}

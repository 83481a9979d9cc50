//! Command-line output: tables as aligned text, CSV or JSON on stdout, written so a closed pipe ends output
//! quietly and any other failure is remembered for the exit code; messages on stderr that never panic.

use std::io::{ErrorKind, Write};

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

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as aligned text lines, header first (cells cut at 60 characters, but the last column's: nothing
    /// follows it to align, and it is where a table says what is wrong, e.g. `engines`' coefficients outside
    /// their range, which a cut hid).
    pub fn aligned(&self) -> Vec<String> {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        let last = self.headers.len().saturating_sub(1);
        let shown: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().enumerate().map(|(i, c)| if i < last { truncate(c, 60) } else { c.clone() }).collect())
            .collect();
        for r in &shown {
            for (i, c) in r.iter().enumerate() {
                if i < widths.len() {
                    widths[i] = widths[i].max(c.chars().count());
                }
            }
        }
        let fmt_row = |cells: &[String]| -> String {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:<w$}", w = widths.get(i).copied().unwrap_or(0)))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        let mut out = vec![fmt_row(&self.headers)];
        for r in &shown {
            out.push(fmt_row(r));
        }
        out
    }
}

/// Writes one line to stderr. A closed or failing stderr loses the line, never the exit code: unlike
/// `eprintln!`, it does not panic.
pub fn warn(s: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}

/// Stdout that stops writing at the first failure instead of panicking, and remembers what failed: a reader
/// that closed the pipe (`| head`) ends output quietly, any other failure (a full disk, a closed descriptor) is
/// reported once by `main` and makes the exit code 2.
pub struct Out {
    inner: std::io::BufWriter<std::io::Stdout>,
    state: OutState,
}

/// What became of the output so far.
pub enum OutState {
    Open,
    /// The reader went away (EPIPE): not an error, the command's own verdict stands.
    Closed,
    /// Writing failed otherwise.
    Failed(std::io::Error),
}

impl Out {
    pub fn stdout() -> Self {
        Self { inner: std::io::BufWriter::new(std::io::stdout()), state: OutState::Open }
    }

    /// Flushes what is buffered and says how the output ended.
    pub fn finish(mut self) -> OutState {
        if matches!(self.state, OutState::Open) {
            if let Err(e) = self.inner.flush() {
                self.fail(e);
            }
        }
        self.state
    }

    fn fail(&mut self, e: std::io::Error) {
        self.state = if e.kind() == ErrorKind::BrokenPipe { OutState::Closed } else { OutState::Failed(e) };
    }

    pub fn line(&mut self, s: &str) {
        if !matches!(self.state, OutState::Open) {
            return;
        }
        if let Err(e) = writeln!(self.inner, "{s}") {
            self.fail(e);
        }
    }

    pub fn table(&mut self, t: &Table, csv: bool, json: bool) {
        if !json && !csv {
            for line in t.aligned() {
                self.line(&line);
            }
            return;
        }
        if json {
            let objs: Vec<serde_json::Map<String, serde_json::Value>> = t
                .rows
                .iter()
                .map(|r| {
                    t.headers
                        .iter()
                        .zip(r)
                        .map(|(h, c)| {
                            // Whole numbers stay integers (32, not 32.0); other numbers are floats; the rest text.
                            let number = c.parse::<i64>().ok().map(serde_json::Number::from).or_else(|| {
                                c.parse::<f64>().ok().filter(|x| x.is_finite()).and_then(serde_json::Number::from_f64)
                            });
                            let v = number
                                .map(serde_json::Value::Number)
                                .unwrap_or_else(|| serde_json::Value::String(c.clone()));
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

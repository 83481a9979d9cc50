//! Importers: measurement files of common tools in, dataset files (`fabric`, `sweep`) out.
//!
//! Each importer takes the files as `(name, text)` pairs (no IO here, so it runs in the browser too) and
//! returns one dataset file whose values all trace back, by verbatim quote, to a line or JSON fragment of
//! an input. The file defines its own sources (`role: "import"`), one per input file. Every problem with an
//! input is a [`Diagnostic`] naming the file, the line (text formats) or JSON pointer, and a hint.
//!
//! - [`nccl_tests`]: the text table nccl-tests prints, or the JSON it writes with `-J <file>`.
//! - [`vllm_bench`]: result files of `vllm bench serve --save-result` and the older
//!   `benchmarks/benchmark_serving.py --save-result` (one JSON object per file, or one per line with
//!   `--append-result`).

#![allow(clippy::result_large_err)] // `Result<_, Diagnostic>` is the crate-wide error shape.

pub mod nccl_tests;
pub mod vllm_bench;

pub use nccl_tests::{nccl_tests, NcclOptions};
pub use vllm_bench::{vllm_bench, VllmOptions};

use crate::dataset::schema::Source;
use crate::diagnostic::Diagnostic;
use serde_json::Value;

/// One input file: its name (as shown in diagnostics) and its text.
pub type Input = (String, String);

/// The source an imported file defines for its `n`-th input (1-based).
pub(crate) fn import_source(prefix: &str, n: usize, file: &str, title: &str) -> Source {
    Source {
        id: format!("{prefix}-{n}"),
        file: base_name(file).to_string(),
        language: "en".into(),
        title: title.into(),
        role: "import".into(),
        published: None,
        original: None,
    }
}

/// The last path component of a file name (either separator).
pub(crate) fn base_name(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// 1-based column of byte offset `byte` in `line`, counted in characters.
pub(crate) fn column(line: &str, byte: usize) -> usize {
    line.get(..byte).map_or(1, |s| s.chars().count() + 1)
}

/// Parses JSON text, turning a failure into a diagnostic that says whether the file was cut short.
/// `line_offset` is added to reported lines (for JSON Lines input).
pub(crate) fn parse_json(file: &str, text: &str, line_offset: usize) -> Result<Value, Diagnostic> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            let at = (e.line().max(1) + line_offset, e.column().max(1));
            let d = if e.classify() == serde_json::error::Category::Eof {
                Diagnostic::error(file, "", "the JSON ends in the middle of a value: the file looks truncated")
                    .with_hint("copy the complete file again; the tool writes it in one piece when the run ends")
            } else {
                Diagnostic::error(file, "", format!("invalid JSON: {msg}"))
                    .with_hint("the file must be the JSON the tool wrote, unedited")
            };
            Err(d.at(at.0, at.1))
        }
    }
}

/// Python's `json.dump` writes `NaN`, `Infinity` and `-Infinity` bare, which is not JSON. Replaces them
/// (outside strings) with `null`, so the file parses and the fields that held them read as missing.
/// Returns the text unchanged (borrowed) when there is nothing to replace.
pub(crate) fn replace_python_non_finite(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut last = 0;
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let rest = &bytes[i..];
        let word = [&b"-Infinity"[..], b"Infinity", b"NaN"].into_iter().find(|w| rest.starts_with(w));
        if let Some(w) = word {
            let o = out.get_or_insert_with(String::new);
            o.push_str(text.get(last..i).unwrap_or(""));
            o.push_str("null");
            i += w.len();
            last = i;
            continue;
        }
        i += 1;
    }
    match out {
        None => std::borrow::Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(text.get(last..).unwrap_or(""));
            std::borrow::Cow::Owned(o)
        }
    }
}

/// One step of a path into a JSON document.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The verbatim text of the value at `path` in the JSON document `text`: for an object member, from its key
/// to the end of its value (`"output_throughput": 1234.5`); for an array element, the element itself.
/// `None` when the path does not exist or the text is not well-formed there.
pub(crate) fn fragment<'t>(text: &'t str, path: &[Step<'_>]) -> Option<&'t str> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    let mut start = i;
    for step in path {
        match *step {
            Step::Key(key) => {
                if b.get(i) != Some(&b'{') {
                    return None;
                }
                i += 1;
                loop {
                    i = skip_ws(b, i);
                    if b.get(i) != Some(&b'"') {
                        return None;
                    }
                    let key_start = i;
                    let key_end = skip_string(b, i)?;
                    let raw = text.get(key_start + 1..key_end - 1)?;
                    i = skip_ws(b, key_end);
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                    if raw == key {
                        start = key_start;
                        break;
                    }
                    i = skip_ws(b, skip_value(b, i)?);
                    if b.get(i) != Some(&b',') {
                        return None;
                    }
                    i += 1;
                }
            }
            Step::Index(n) => {
                if b.get(i) != Some(&b'[') {
                    return None;
                }
                i = skip_ws(b, i + 1);
                for _ in 0..n {
                    i = skip_ws(b, skip_value(b, i)?);
                    if b.get(i) != Some(&b',') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                }
                start = i;
            }
        }
    }
    let end = skip_value(b, i)?;
    text.get(start..end)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// `i` at an opening quote; returns the index after the closing quote.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// `i` at the start of a value; returns the index after it.
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match b.get(i)? {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let s = i;
            while b.get(i).is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace()) {
                i += 1;
            }
            (i > s).then_some(i)
        }
    }
}

/// A number as written in JSON, as f64; `None` for anything else (including `null` left by
/// [`replace_python_non_finite`] and the string `"nan"` nccl-tests writes).
pub(crate) fn finite(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_are_verbatim() {
        let t = r#"{"a": {"b": [1, {"c": "x,}"}, 3.5]}, "output_throughput": 12.5, "z": null}"#;
        assert_eq!(fragment(t, &[Step::Key("output_throughput")]), Some(r#""output_throughput": 12.5"#));
        assert_eq!(fragment(t, &[Step::Key("a"), Step::Key("b"), Step::Index(1)]), Some(r#"{"c": "x,}"}"#));
        assert_eq!(fragment(t, &[Step::Key("a"), Step::Key("b"), Step::Index(2)]), Some("3.5"));
        assert_eq!(fragment(t, &[Step::Key("missing")]), None);
        assert_eq!(fragment("{\"a\": [1, 2", &[Step::Key("a"), Step::Index(5)]), None);
    }

    #[test]
    fn python_non_finite_becomes_null() {
        let t = r#"{"a": NaN, "b": "NaN", "c": -Infinity, "d": Infinity}"#;
        let v: Value = serde_json::from_str(&replace_python_non_finite(t)).unwrap();
        assert!(v["a"].is_null() && v["c"].is_null() && v["d"].is_null());
        assert_eq!(v["b"], "NaN");
    }
}

//! Importers: measurement files of common tools in, dataset files (`fabric`, `sweep`) out.
//!
//! Each importer takes the files as `(name, text)` pairs (no IO here, so it runs in the browser too) and
//! returns one dataset file whose values all trace back, by verbatim quote, to a line or JSON fragment of
//! an input. The file defines its own sources (`role: "import"`), one per input file. Every problem with an
//! input is a [`Diagnostic`] naming the file, the line (text formats) or JSON pointer, and a hint.
//!
//! - [`nccl_tests`]: the text table nccl-tests prints, or the JSON it writes with `-J <file>`.
//! - [`vllm_bench`]: result files of `vllm bench serve --save-result` and the older
//!   `benchmarks/benchmark_serving.py --save-result` (one JSON object per file, one per line with
//!   `--append-result`, or several concatenated or indented, as a paste of several files holds them).

#![allow(clippy::result_large_err)] // `Result<_, Diagnostic>` is the crate-wide error shape.

pub mod nccl_tests;
pub mod vllm_bench;

pub use nccl_tests::{nccl_tests, NcclOptions};
pub use vllm_bench::{vllm_bench, VllmOptions};

use crate::dataset::schema::Source;
use crate::diagnostic::Diagnostic;
// The JSON text scanning the importers share with the rest of the crate (quotes, records, NaN).
pub(crate) use crate::json_text::{fragment, replace_python_non_finite, shift_position, Step};
use serde_json::Value;

/// One input file: its name (as shown in diagnostics) and its text.
pub type Input = (String, String);

/// The largest input an importer reads, in bytes. Memory grows with the input (a 100 MB nccl-tests log takes
/// ~250 MB while it is read; a JSON result several times its size as a parsed value), and real outputs are
/// kilobytes to a few megabytes (a `--save-detailed` result of many requests), so anything larger is refused
/// before it is parsed. The CLI checks the file's size before reading it; the page's paste goes through here.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The error for an input of `bytes` bytes, over [`MAX_INPUT_BYTES`].
pub fn too_large(file: &str, bytes: u64) -> Diagnostic {
    Diagnostic::error(
        file,
        "",
        format!(
            "the file is {:.1} MiB, over the {} MiB an import reads",
            bytes as f64 / f64::from(1 << 20),
            MAX_INPUT_BYTES >> 20
        ),
    )
    .with_hint("pass the tool's output itself: the result JSON or the nccl-tests table, not a whole log or archive")
}

/// Refuses an input over [`MAX_INPUT_BYTES`].
pub(crate) fn check_size(file: &str, text: &str) -> Result<(), Diagnostic> {
    let bytes = text.len() as u64;
    if bytes > MAX_INPUT_BYTES {
        return Err(too_large(file, bytes));
    }
    Ok(())
}

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
/// `start` is the (line, column) where `text` begins in its file (`(1, 1)` for a whole file, the record's
/// start for one of several records), so the diagnostic names the line of the whole file.
pub(crate) fn parse_json(file: &str, text: &str, start: (usize, usize)) -> Result<Value, Diagnostic> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            let at = shift_position(start, (e.line().max(1), e.column().max(1)));
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

/// A number as written in JSON, as f64; `None` for anything else (including `null` left by
/// [`replace_python_non_finite`] and the string `"nan"` nccl-tests writes).
pub(crate) fn finite(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

//! Diagnostics as data: every problem found in a dataset, with where it is and what would fix it.

use serde::Serialize;
use std::fmt;

/// How bad a finding is. Errors make `validate` fail; notes are shown but do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Note,
}

/// One problem in one file, located by JSON pointer and (when the text is known) line and column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Path of the file relative to the dataset root, e.g. `sweeps/glm-5.2.json`.
    pub file: String,
    /// RFC 6901 pointer to the offending value; empty for the whole file.
    pub pointer: String,
    /// 1-based line and column of the value, when known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(file: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            file: file.to_string(),
            pointer: pointer.into(),
            line: None,
            column: None,
            message: message.into(),
            hint: None,
        }
    }

    pub fn note(file: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self { severity: Severity::Note, ..Self::error(file, pointer, message) }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// Cargo-style: `error: message`, then `  --> file:line:col at /pointer`, then `  = hint: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Note => "note",
        };
        writeln!(f, "{label}: {}", self.message)?;
        write!(f, "  --> {}", self.file)?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " at {}", self.pointer)?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  = hint: {h}")?;
        }
        Ok(())
    }
}

/// Sorts diagnostics for stable output: by file, then position, then message.
pub fn sort(diags: &mut [Diagnostic]) {
    crate::stats::sort_by(diags, |a, b| {
        (a.file.as_str(), a.line, a.column, a.pointer.as_str(), a.message.as_str()).cmp(&(
            b.file.as_str(),
            b.line,
            b.column,
            b.pointer.as_str(),
            b.message.as_str(),
        ))
    });
}

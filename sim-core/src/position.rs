//! Maps JSON pointers to line and column in the original text, so diagnostics can point at the value.
//!
//! serde_json keeps no spans, so a lookup walks the text along the pointer with the scanner in
//! [`crate::json_text`]: it passes only the bytes before the value (skipping siblings whole), keeps nothing
//! but the text, and so costs no memory however large the file is.

use crate::json_text::{line_column, pointer_offset};

/// Line/column (1-based) of the values of one JSON document, looked up by RFC 6901 pointer.
#[derive(Debug, Clone, Copy)]
pub struct PositionIndex<'a> {
    text: &'a str,
}

impl<'a> PositionIndex<'a> {
    /// An index over `text` (building it does no work; each lookup walks the text).
    pub fn build(text: &'a str) -> Self {
        Self { text }
    }

    /// The position of the value at `pointer`, or of its nearest existing ancestor; `None` for a pointer that
    /// is neither empty nor starts with `/`.
    pub fn locate(&self, pointer: &str) -> Option<(usize, usize)> {
        pointer_offset(self.text, pointer).map(|at| line_column(self.text, at))
    }
}

/// Escapes one pointer segment per RFC 6901.
pub fn escape_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_nested_values() {
        let text = "{\n  \"a\": [1,\n    {\"b/c\": 2}]\n}";
        let idx = PositionIndex::build(text);
        assert_eq!(idx.locate(""), Some((1, 1)));
        assert_eq!(idx.locate("/a"), Some((2, 8)));
        assert_eq!(idx.locate(&format!("/a/1/{}", escape_segment("b/c"))), Some((3, 13)));
        // Missing leaves fall back to the nearest ancestor.
        assert_eq!(idx.locate("/a/1/zzz"), Some((3, 5)));
    }
}

//! Maps JSON pointers to line and column in the original text, so diagnostics can point at the value.
//!
//! serde_json keeps no spans, so this walks the text once with a small scanner. It is only run on text
//! that serde_json already accepted (so nesting is bounded by serde_json's recursion limit of 128).

use std::collections::HashMap;

/// Line/column (1-based) of every value in a JSON document, keyed by RFC 6901 pointer.
#[derive(Debug, Default)]
pub struct PositionIndex {
    positions: HashMap<String, (usize, usize)>,
}

impl PositionIndex {
    pub fn build(text: &str) -> Self {
        let mut scanner = Scanner { bytes: text.as_bytes(), pos: 0, line: 1, col: 1, out: HashMap::new() };
        scanner.value(String::new(), 0);
        Self { positions: scanner.out }
    }

    /// The position of the value at `pointer`, or of its nearest existing ancestor.
    pub fn locate(&self, pointer: &str) -> Option<(usize, usize)> {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }
}

/// Escapes one pointer segment per RFC 6901.
pub fn escape_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    col: usize,
    out: HashMap<String, (usize, usize)>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if let Some(b) = self.peek() {
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
                self.col = 1;
            } else if b & 0xC0 != 0x80 {
                // Count characters, not UTF-8 continuation bytes.
                self.col += 1;
            }
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.bump();
        }
    }

    fn value(&mut self, pointer: String, depth: usize) {
        self.skip_ws();
        if depth > 200 {
            return;
        }
        self.out.insert(pointer.clone(), (self.line, self.col));
        match self.peek() {
            Some(b'{') => {
                self.bump();
                loop {
                    self.skip_ws();
                    match self.peek() {
                        Some(b'}') | None => {
                            self.bump();
                            return;
                        }
                        Some(b',') => self.bump(),
                        Some(b'"') => {
                            let key = self.string();
                            self.skip_ws();
                            if self.peek() == Some(b':') {
                                self.bump();
                            }
                            self.value(format!("{pointer}/{}", escape_segment(&key)), depth + 1);
                        }
                        Some(_) => self.bump(),
                    }
                }
            }
            Some(b'[') => {
                self.bump();
                let mut index = 0;
                loop {
                    self.skip_ws();
                    match self.peek() {
                        Some(b']') | None => {
                            self.bump();
                            return;
                        }
                        Some(b',') => self.bump(),
                        Some(_) => {
                            self.value(format!("{pointer}/{index}"), depth + 1);
                            index += 1;
                        }
                    }
                }
            }
            Some(b'"') => {
                self.string();
            }
            _ => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.bump();
                }
            }
        }
    }

    /// Reads a string token and returns its decoded content (escapes resolved well enough for keys).
    fn string(&mut self) -> String {
        let start = self.pos + 1;
        self.bump();
        while let Some(b) = self.peek() {
            match b {
                b'\\' => {
                    self.bump();
                    self.bump();
                }
                b'"' => break,
                _ => self.bump(),
            }
        }
        let raw = &self.bytes[start.min(self.pos)..self.pos];
        self.bump();
        let quoted = format!("\"{}\"", String::from_utf8_lossy(raw));
        serde_json::from_str::<String>(&quoted).unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned())
    }
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
        assert_eq!(idx.locate("/a/1/b~1c"), Some((3, 13)));
        // Missing leaves fall back to the nearest ancestor.
        assert_eq!(idx.locate("/a/1/zzz"), Some((3, 5)));
    }
}

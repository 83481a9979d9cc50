//! Byte-level scanning of JSON text: whitespace, strings, values, records, pointers and verbatim fragments.
//!
//! serde_json checks and parses JSON but keeps no spans, and the importers and diagnostics need spans: the
//! verbatim text of a value (the quote an imported point cites), where a value sits (line and column of a
//! diagnostic), and where one top-level object ends and the next begins when a file or a paste holds several.
//! Every such question is answered here, in one place, so the CLI and the page split and locate alike.
//!
//! The scanner does not validate: serde_json does that on the pieces found here. It never recurses (no input
//! can overflow the stack), runs in time linear in the bytes it passes, allocates only for its results, and on
//! malformed text returns `None` (or hands the rest of the text over as one record) instead of guessing.

use std::borrow::Cow;

/// One top-level JSON value of a text that may hold several (one per line, concatenated, or indented objects
/// one after another), with where it starts so diagnostics inside it can name the line of the whole text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// The record's text: a complete object or array, or (for the last record only) whatever follows the last
    /// complete one, trimmed, so the parser can say what is wrong with it.
    pub text: &'a str,
    /// 1-based line of the record's first character in the whole text.
    pub line: usize,
    /// 1-based column (in characters) of the record's first character.
    pub column: usize,
}

impl Record<'_> {
    /// Maps a 1-based (line, column) inside the record to the same place in the whole text.
    pub fn outer(&self, line: usize, column: usize) -> (usize, usize) {
        shift_position((self.line, self.column), (line, column))
    }
}

/// Maps a 1-based (line, column) inside a piece of text that starts at `start` of a larger text to the same
/// place in the larger text: lines add up, and columns too on the piece's first line.
pub fn shift_position(start: (usize, usize), at: (usize, usize)) -> (usize, usize) {
    let (line, column) = (at.0.max(1), at.1.max(1));
    if line == 1 {
        (start.0, start.1 + column - 1)
    } else {
        (start.0 + line - 1, column)
    }
}

/// Splits `text` into its top-level objects and arrays, in order. Whitespace between them is dropped; text
/// that does not start an object or array, and an object cut short at the end, become the last record as they
/// are (trimmed), so the importer that parses it names the problem and its line. Empty or blank text gives no
/// records.
pub fn split_records(text: &str) -> Vec<Record<'_>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut cursor = Cursor::default();
    let mut i = skip_ws(b, 0);
    while i < b.len() {
        let (line, column) = cursor.advance(b, i);
        let end = match b[i] {
            b'{' | b'[' => skip_value(b, i),
            _ => None,
        };
        match end {
            Some(end) => {
                // `i` is at an ASCII bracket and `end` just after one, so both are char boundaries.
                out.push(Record { text: text.get(i..end).unwrap_or(""), line, column });
                i = skip_ws(b, end);
            }
            None => {
                out.push(Record { text: text.get(i..).unwrap_or("").trim_end(), line, column });
                break;
            }
        }
    }
    out
}

/// The index of the first byte at or after `i` that is not JSON whitespace (space, tab, line feed, return).
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// With `i` at an opening quote, the index just after the closing quote; `None` when the string never ends.
pub fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// With `i` at the start of a value, the index just after it; `None` when the text ends first or a bracket
/// closes more than was opened. Brackets are counted, not matched by kind: validating is serde_json's job.
pub fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
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
            while b.get(i).is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                i += 1;
            }
            (i > s).then_some(i)
        }
    }
}

/// One step of a path into a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The verbatim text of the value at `path` in the JSON document `text`: for an object member, from its key
/// to the end of its value (`"output_throughput": 1234.5`); for an array element, the element itself. Keys
/// are compared as written (without decoding escapes), and the first member with the key is taken.
/// `None` when the path does not exist or the text is not well-formed there.
pub fn fragment<'t>(text: &'t str, path: &[Step<'_>]) -> Option<&'t str> {
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

/// Byte offset of the value an RFC 6901 `pointer` names in `text`, or of its nearest existing ancestor when
/// the pointer goes further than the text does (a missing field is reported where its object starts). Keys
/// are compared decoded, and of repeated keys the last counts, as in serde_json. `None` only for a pointer
/// that does not start with `/` (other than the empty pointer, the whole document).
pub fn pointer_offset(text: &str, pointer: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut at = skip_ws(b, 0);
    if pointer.is_empty() {
        return Some(at);
    }
    let rest = pointer.strip_prefix('/')?;
    for segment in rest.split('/') {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        match member_offset(text, at, &segment) {
            Some(next) => at = next,
            None => break,
        }
    }
    Some(at)
}

/// With `i` at an object or array, the offset of its member named `segment` (a key, or an index for arrays).
fn member_offset(text: &str, mut i: usize, segment: &str) -> Option<usize> {
    let b = text.as_bytes();
    match b.get(i)? {
        b'{' => {
            let mut found = None;
            i = skip_ws(b, i + 1);
            while b.get(i) == Some(&b'"') {
                let key_end = skip_string(b, i)?;
                let raw = text.get(i + 1..key_end - 1)?;
                i = skip_ws(b, key_end);
                if b.get(i) != Some(&b':') {
                    break;
                }
                i = skip_ws(b, i + 1);
                if decoded_key(raw).as_deref() == Some(segment) {
                    found = Some(i);
                }
                i = skip_ws(b, skip_value(b, i)?);
                if b.get(i) != Some(&b',') {
                    break;
                }
                i = skip_ws(b, i + 1);
            }
            found
        }
        b'[' => {
            let n: usize = segment.parse().ok()?;
            i = skip_ws(b, i + 1);
            if b.get(i) == Some(&b']') {
                return None;
            }
            for _ in 0..n {
                i = skip_ws(b, skip_value(b, i)?);
                if b.get(i) != Some(&b',') {
                    return None;
                }
                i = skip_ws(b, i + 1);
            }
            Some(i)
        }
        _ => None,
    }
}

/// A key as written between its quotes, with JSON escapes resolved (`None` if they are malformed).
fn decoded_key(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.contains('\\') {
        return Some(Cow::Borrowed(raw));
    }
    serde_json::from_str::<String>(&format!("\"{raw}\"")).ok().map(Cow::Owned)
}

/// 1-based line and column (in characters, not bytes) of byte offset `byte` in `text`.
pub fn line_column(text: &str, byte: usize) -> (usize, usize) {
    Cursor::default().advance(text.as_bytes(), byte)
}

/// Walks forward through a text counting lines and characters, so many increasing offsets cost one pass.
#[derive(Debug)]
struct Cursor {
    pos: usize,
    line: usize,
    column: usize,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor { pos: 0, line: 1, column: 1 }
    }
}

impl Cursor {
    /// Moves to `to` (offsets behind the cursor are not revisited) and returns its line and column.
    fn advance(&mut self, b: &[u8], to: usize) -> (usize, usize) {
        let to = to.min(b.len());
        for &c in b.get(self.pos..to).unwrap_or(&[]) {
            if c == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if c & 0xC0 != 0x80 {
                // Count characters, not UTF-8 continuation bytes.
                self.column += 1;
            }
        }
        self.pos = self.pos.max(to);
        (self.line, self.column)
    }
}

/// Python's `json.dump` writes `NaN`, `Infinity` and `-Infinity` bare, which is not JSON. Replaces them
/// (outside strings) with `null`, so the text parses and the fields that held them read as missing.
/// Returns the text unchanged (borrowed) when there is nothing to replace.
pub fn replace_python_non_finite(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            // A string that never ends holds nothing to replace.
            i = skip_string(bytes, i).unwrap_or(bytes.len());
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
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(text.get(last..).unwrap_or(""));
            Cow::Owned(o)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The records of `text` as (text, line, column).
    fn records(text: &str) -> Vec<(&str, usize, usize)> {
        split_records(text).into_iter().map(|r| (r.text, r.line, r.column)).collect()
    }

    #[test]
    fn splits_lines_concatenation_and_indented_objects() {
        assert_eq!(records(""), vec![]);
        assert_eq!(records(" \n\t"), vec![]);
        assert_eq!(records("{\"a\": 1}"), vec![("{\"a\": 1}", 1, 1)]);
        assert_eq!(records("{\"a\": 1}\n{\"a\": 2}\n"), vec![("{\"a\": 1}", 1, 1), ("{\"a\": 2}", 2, 1)]);
        assert_eq!(records("{\"a\": \"}{\"}{\"b\": [1]}"), vec![("{\"a\": \"}{\"}", 1, 1), ("{\"b\": [1]}", 1, 12)]);
        let indented = "{\n  \"a\": {\"x\": 1}\n}\n\n  {\n    \"b\": 2\n  }";
        assert_eq!(
            records(indented),
            vec![("{\n  \"a\": {\"x\": 1}\n}", 1, 1), ("{\n    \"b\": 2\n  }", 5, 3)],
            "each indented object is one record, starting where its brace is"
        );
        // Characters, not bytes, make up the column.
        assert_eq!(records("{\"é\": 1} {}")[1], ("{}", 1, 10));
    }

    #[test]
    fn leftovers_become_the_last_record() {
        assert_eq!(records("{\"a\": 1}\nnot json \n"), vec![("{\"a\": 1}", 1, 1), ("not json", 2, 1)]);
        assert_eq!(records("{\"a\": 1}\n{\"b\": [2, \n"), vec![("{\"a\": 1}", 1, 1), ("{\"b\": [2,", 2, 1)]);
        assert_eq!(records("{\"a\": \"no end}"), vec![("{\"a\": \"no end}", 1, 1)]);
        assert_eq!(records("]{}"), vec![("]{}", 1, 1)]);
        assert_eq!(records("{]]"), vec![("{]", 1, 1), ("]", 1, 3)]);
    }

    #[test]
    fn records_map_positions_back() {
        let r = split_records("{}\n  {\n\"x\": NaN}")[1];
        assert_eq!(r.outer(1, 1), (2, 3));
        assert_eq!(r.outer(2, 6), (3, 6));
    }

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
    fn pointers_find_values_or_their_nearest_ancestor() {
        let text = "{\n  \"a\": [1,\n    {\"b/c\": 2, \"k\\u0065y\": 3}],\n  \"d\": 0, \"d\": 4\n}";
        let at = |p: &str| pointer_offset(text, p).map(|o| line_column(text, o));
        assert_eq!(at(""), Some((1, 1)));
        assert_eq!(at("/a"), Some((2, 8)));
        assert_eq!(at("/a/1/b~1c"), Some((3, 13)));
        assert_eq!(at("/a/1/key"), Some((3, 28)), "escaped keys are decoded");
        assert_eq!(at("/a/1/zzz"), Some((3, 5)), "a missing leaf falls back to its object");
        assert_eq!(at("/a/7"), Some((2, 8)), "an index past the end falls back to the array");
        assert_eq!(at("/d"), Some((4, 16)), "of repeated keys the last counts");
        assert_eq!(at("no-slash"), None);
    }

    #[test]
    fn python_non_finite_becomes_null() {
        let t = r#"{"a": NaN, "b": "NaN \" Infinity", "c": -Infinity, "d": Infinity}"#;
        let v: Value = serde_json::from_str(&replace_python_non_finite(t)).unwrap();
        assert!(v["a"].is_null() && v["c"].is_null() && v["d"].is_null());
        assert_eq!(v["b"], "NaN \" Infinity");
        assert!(matches!(replace_python_non_finite("{\"a\": 1}"), Cow::Borrowed(_)));
    }

    #[test]
    fn nothing_reads_past_the_end() {
        // Every prefix of a text with strings, escapes and nesting: no panic, and nothing found past the cut.
        let text = "{\"a\\\"\": [1, {\"b\": \"x\\\\\"}], \"é\": NaN}\n[2]";
        for cut in (0..=text.len()).filter(|c| text.is_char_boundary(*c)) {
            let t = &text[..cut];
            assert!(split_records(t).iter().all(|r| t.contains(r.text)));
            let _ = replace_python_non_finite(t);
            let _ = fragment(t, &[Step::Key("a"), Step::Index(1), Step::Key("b")]);
            assert!(pointer_offset(t, "/a/1/b").is_some_and(|o| o <= t.len()));
        }
    }
}

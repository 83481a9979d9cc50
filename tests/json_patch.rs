//! Edits to a JSON file's text by JSON pointer that keep every other byte, so the broken-file corpus can patch
//! the shipped `data/` instead of keeping stale whole-file copies.
//!
//! Editing the text (not a parsed `Value` written back) keeps the file's layout, so the line and column of every
//! error outside the edit are those of the shipped file. New values are pretty-printed with two-space
//! indentation at the indentation of the line they land on, as the data files are written; members of a new
//! object come out in serde_json's sorted key order (`copy` keeps an existing value's text, order and all).
//!
//! Every edit must still apply to the current shipped file: a pointer that no longer exists, a member that
//! already exists, or a replacement that changes nothing is an error, so the corpus cannot go stale silently.

use serde::Deserialize;
use serde_json::Value;

/// One edit of one file under `data/`, as stored in `tests/broken/cases.json`.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    /// Replaces the existing value at `pointer` with `value`.
    Replace { file: String, pointer: String, value: Value },
    /// Replaces the existing value at `pointer` with raw text, for what no JSON value can hold (`1e400`, a
    /// syntax error).
    ReplaceText { file: String, pointer: String, text: String },
    /// Adds a member to an object (the member must be new) or inserts an element into an array (`-` appends).
    Add { file: String, pointer: String, value: Value },
    /// Adds (as `add` does) a copy of the existing value at `from`, verbatim, re-indented to its new place.
    Copy { file: String, from: String, pointer: String },
    /// Removes the existing member or element at `pointer`.
    Remove { file: String, pointer: String },
    /// Replaces the whole file with bytes built from `parts` (binary junk, an empty file, deep nesting).
    Write { file: String, parts: Vec<Part> },
}

/// A run of bytes of a written file: UTF-8 `text` or `hex` bytes, `repeat` times (once by default).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    hex: Option<String>,
    #[serde(default = "one")]
    repeat: usize,
}

fn one() -> usize {
    1
}

impl Edit {
    /// The edited file, relative to `data/`.
    pub fn file(&self) -> &str {
        match self {
            Edit::Replace { file, .. }
            | Edit::ReplaceText { file, .. }
            | Edit::Add { file, .. }
            | Edit::Copy { file, .. }
            | Edit::Remove { file, .. }
            | Edit::Write { file, .. } => file,
        }
    }

    /// Applies the edit to the text of the shipped file (or of the file after earlier edits of the same case).
    pub fn apply(&self, text: &str) -> Result<String, String> {
        match self {
            Edit::Replace { pointer, value, .. } => {
                let (parent, i) = find_existing(text, pointer)?;
                let item = &parent.items[i];
                let old: Value = serde_json::from_str(&text[item.start..item.end])
                    .map_err(|e| format!("{pointer}: the shipped value does not parse: {e}"))?;
                if &old == value {
                    return Err(format!("{pointer}: the shipped file already holds {value}; the edit changes nothing"));
                }
                Ok(splice(text, item.start, item.end, &render(value, &indent_of(text, item.key_start))))
            }
            Edit::ReplaceText { pointer, text: new, .. } => {
                let (parent, i) = find_existing(text, pointer)?;
                let item = &parent.items[i];
                if &text[item.start..item.end] == new {
                    return Err(format!("{pointer}: the shipped file already reads `{new}`; the edit changes nothing"));
                }
                Ok(splice(text, item.start, item.end, new))
            }
            Edit::Remove { pointer, .. } => {
                let (parent, i) = find_existing(text, pointer)?;
                let items = &parent.items;
                // Take the separator with the item: the comma before it, or the one after it for the first item.
                let (from, to) = if i > 0 {
                    (items[i - 1].end, items[i].end)
                } else if items.len() > 1 {
                    (items[0].key_start, items[1].key_start)
                } else {
                    (parent.open + 1, parent.close)
                };
                Ok(splice(text, from, to, ""))
            }
            Edit::Add { pointer, value, .. } => add(text, pointer, &|indent| render(value, indent)),
            Edit::Copy { from, pointer, .. } => {
                let (parent, i) = find_existing(text, from)?;
                let item = &parent.items[i];
                let (source, source_indent) = (&text[item.start..item.end], indent_of(text, item.key_start));
                add(text, pointer, &|indent| source.replace(&format!("\n{source_indent}"), &format!("\n{indent}")))
            }
            Edit::Write { parts, .. } => {
                let mut bytes = Vec::new();
                for p in parts {
                    let chunk = match (&p.text, &p.hex) {
                        (Some(t), None) => t.as_bytes().to_vec(),
                        (None, Some(h)) => hex(h)?,
                        _ => return Err("a part needs exactly one of `text` and `hex`".into()),
                    };
                    for _ in 0..p.repeat {
                        bytes.extend_from_slice(&chunk);
                    }
                }
                // The same lossy decoding the loader applies to a file read from disk (fsio::load_dir).
                Ok(String::from_utf8_lossy(&bytes).into_owned())
            }
        }
    }
}

/// Inserts the text `value(indent)` gives for the indentation of its new line, as RFC 6902's `add` would.
fn add(text: &str, pointer: &str, value: &dyn Fn(&str) -> String) -> Result<String, String> {
    let (parent_ptr, last) = split_last(pointer)?;
    let parent = container_at(text, &parent_ptr, pointer)?;
    let items = &parent.items;
    let is_array = text.as_bytes()[parent.open] == b'[';
    let index = if is_array {
        if last == "-" {
            items.len()
        } else {
            let i: usize = last.parse().map_err(|_| format!("{pointer}: `{last}` is not an array index"))?;
            if i > items.len() {
                return Err(format!("{pointer}: index {i} is past the end of an array of {}", items.len()));
            }
            i
        }
    } else {
        if items.iter().any(|it| it.key.as_deref() == Some(last.as_str())) {
            return Err(format!("{pointer}: the member already exists in the shipped file; use `replace`"));
        }
        items.len()
    };
    let member = |indent: &str| {
        let v = value(indent);
        if is_array {
            v
        } else {
            format!("{}: {v}", Value::String(last.clone()))
        }
    };
    Ok(match (items.get(index), index.checked_sub(1).and_then(|i| items.get(i))) {
        // Before an existing item: the new one takes its place and indentation.
        (Some(next), _) => {
            let indent = indent_of(text, next.key_start);
            splice(text, next.key_start, next.key_start, &format!("{},\n{indent}", member(&indent)))
        }
        // After the last item, on a line of its own at the last item's indentation.
        (None, Some(prev)) => {
            let indent = indent_of(text, prev.key_start);
            splice(text, prev.end, prev.end, &format!(",\n{indent}{}", member(&indent)))
        }
        (None, None) => splice(text, parent.open + 1, parent.open + 1, &member(&indent_of(text, parent.open))),
    })
}

/// One member of an object or element of an array: where its key (or, for an element, its value) starts and
/// where its value starts and ends, as byte offsets.
#[derive(Debug)]
struct Item {
    key: Option<String>,
    key_start: usize,
    start: usize,
    end: usize,
}

/// An object or array: its brackets' offsets and its items.
#[derive(Debug)]
struct Container {
    open: usize,
    close: usize,
    items: Vec<Item>,
}

/// The container holding the value at `pointer`, and the value's index in it.
fn find_existing(text: &str, pointer: &str) -> Result<(Container, usize), String> {
    let (parent_ptr, last) = split_last(pointer)?;
    let parent = container_at(text, &parent_ptr, pointer)?;
    let i = child_index(text, &parent, &last)
        .ok_or_else(|| format!("{pointer}: no such value in the shipped file (it changed; update the case)"))?;
    Ok((parent, i))
}

/// Splits a non-empty pointer into its parent's segments and its last segment, unescaped (RFC 6901).
fn split_last(pointer: &str) -> Result<(Vec<String>, String), String> {
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!("`{pointer}` is not a JSON pointer to a member or element (a whole file is `write`)"));
    };
    let mut segs: Vec<String> = rest.split('/').map(|s| s.replace("~1", "/").replace("~0", "~")).collect();
    let last = segs.pop().unwrap_or_default();
    Ok((segs, last))
}

/// Walks `segments` from the top-level value to a container.
fn container_at(text: &str, segments: &[String], pointer: &str) -> Result<Container, String> {
    let b = text.as_bytes();
    let mut at = skip_ws(b, 0);
    for seg in segments {
        let c = container(text, at)
            .ok_or_else(|| format!("{pointer}: `{seg}` is below a value that is not a container"))?;
        let i = child_index(text, &c, seg)
            .ok_or_else(|| format!("{pointer}: no `{seg}` in the shipped file (it changed; update the case)"))?;
        at = c.items[i].start;
    }
    container(text, at).ok_or_else(|| format!("{pointer}: the parent is not an object or array"))
}

fn child_index(text: &str, c: &Container, seg: &str) -> Option<usize> {
    if text.as_bytes()[c.open] == b'[' {
        seg.parse::<usize>().ok().filter(|&i| i < c.items.len())
    } else {
        c.items.iter().position(|it| it.key.as_deref() == Some(seg))
    }
}

/// Lists the items of the object or array starting at `open` (None when the value there is neither).
/// The shipped files are valid JSON, so this scanner only skips; serde_json has already checked the syntax.
fn container(text: &str, open: usize) -> Option<Container> {
    let b = text.as_bytes();
    let is_object = match b.get(open)? {
        b'{' => true,
        b'[' => false,
        _ => return None,
    };
    let mut items = Vec::new();
    let mut i = skip_ws(b, open + 1);
    loop {
        match *b.get(i)? {
            b'}' | b']' => return Some(Container { open, close: i, items }),
            b',' => i = skip_ws(b, i + 1),
            _ => {
                let key_start = i;
                let key = if is_object {
                    let end = skip_string(b, i)?;
                    let key: String = serde_json::from_str(&text[i..end]).ok()?;
                    i = skip_ws(b, end);
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                    Some(key)
                } else {
                    None
                };
                let end = skip_value(b, i)?;
                items.push(Item { key, key_start, start: i, end });
                i = skip_ws(b, end);
            }
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The offset just past the string starting at `i`.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match *b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The offset just past the value starting at `i` (iterative, so nesting depth costs no stack).
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match *b.get(i)? {
                    b'"' => i = skip_string(b, i)?,
                    b'{' | b'[' => {
                        depth += 1;
                        i += 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        i += 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => i += 1,
                }
            }
        }
        _ => {
            let start = i;
            while b.get(i).is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace()) {
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

/// The leading whitespace of the line holding byte `at`.
fn indent_of(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
}

/// `value` pretty-printed, its continuation lines indented to sit under a line indented by `indent`.
fn render(value: &Value, indent: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    pretty.replace('\n', &format!("\n{indent}"))
}

fn splice(text: &str, from: usize, to: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..from], &text[to..])
}

fn hex(h: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<char> = h.chars().filter(|c| !c.is_whitespace()).collect();
    let pairs = digits.chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return Err(format!("hex `{h}` has an odd number of digits"));
    }
    pairs
        .map(|p| {
            let s: String = p.iter().collect();
            u8::from_str_radix(&s, 16).map_err(|_| format!("`{s}` is not a hex byte"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Edit;
    use serde_json::json;

    const DOC: &str = "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {\n    \"d\": \"x\"\n  }\n}\n";

    fn check(edit: Edit, want: Result<&str, &str>) {
        match (edit.apply(DOC), want) {
            (Ok(got), Ok(want)) => assert_eq!(got, want),
            (Err(got), Err(want)) => assert!(got.contains(want), "{got}"),
            (got, want) => panic!("got {got:?}, want {want:?}"),
        }
    }

    fn ptr(p: &str) -> (String, String) {
        ("x.json".into(), p.into())
    }

    #[test]
    fn edits_keep_the_layout() {
        let (file, pointer) = ptr("/a");
        check(Edit::Replace { file, pointer, value: json!([0, 8]) }, Ok("{\n  \"a\": [\n    0,\n    8\n  ],\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {\n    \"d\": \"x\"\n  }\n}\n"));
        let (file, pointer) = ptr("/a");
        check(
            Edit::Remove { file, pointer },
            Ok("{\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {\n    \"d\": \"x\"\n  }\n}\n"),
        );
        let (file, pointer) = ptr("/b/1");
        check(
            Edit::Remove { file, pointer },
            Ok("{\n  \"a\": 1,\n  \"b\": [\n    1\n  ],\n  \"c\": {\n    \"d\": \"x\"\n  }\n}\n"),
        );
        let (file, pointer) = ptr("/c/d");
        check(Edit::Remove { file, pointer }, Ok("{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {}\n}\n"));
        let (file, pointer) = ptr("/b/-");
        check(
            Edit::Add { file, pointer, value: json!(3) },
            Ok("{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2,\n    3\n  ],\n  \"c\": {\n    \"d\": \"x\"\n  }\n}\n"),
        );
        let (file, pointer) = ptr("/b/0");
        check(
            Edit::Add { file, pointer, value: json!(0) },
            Ok("{\n  \"a\": 1,\n  \"b\": [\n    0,\n    1,\n    2\n  ],\n  \"c\": {\n    \"d\": \"x\"\n  }\n}\n"),
        );
        let (file, pointer) = ptr("/c/e");
        check(Edit::Add { file, pointer, value: json!(true) }, Ok("{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {\n    \"d\": \"x\",\n    \"e\": true\n  }\n}\n"));
        check(
            Edit::Copy { file: "x.json".into(), from: "/c".into(), pointer: "/b/-".into() },
            Ok("{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2,\n    {\n      \"d\": \"x\"\n    }\n  ],\n  \"c\": {\n    \"d\": \"x\"\n  }\n}\n"),
        );
        let (file, pointer) = ptr("/a");
        check(Edit::ReplaceText { file, pointer, text: "1e400".into() }, Ok(&DOC.replace("\"a\": 1", "\"a\": 1e400")));
    }

    #[test]
    fn stale_edits_fail() {
        let (file, pointer) = ptr("/z");
        check(Edit::Replace { file, pointer, value: json!(2) }, Err("no such value"));
        let (file, pointer) = ptr("/c/z/y");
        check(Edit::Remove { file, pointer }, Err("no `z`"));
        let (file, pointer) = ptr("/b/2");
        check(Edit::Remove { file, pointer }, Err("no such value"));
        let (file, pointer) = ptr("/a");
        check(Edit::Replace { file, pointer, value: json!(1) }, Err("changes nothing"));
        let (file, pointer) = ptr("/c/d");
        check(Edit::Add { file, pointer, value: json!(1) }, Err("already exists"));
        let (file, pointer) = ptr("/b/3");
        check(Edit::Add { file, pointer, value: json!(1) }, Err("past the end"));
    }
}

//! The record splitter and the other JSON text scanners: no panic, and the records it finds are exactly
//! the text's top-level values (positions right, nothing but whitespace between them, one record for a document).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_core::json_text::{
    fragment, line_column, pointer_offset, replace_python_non_finite, skip_value, split_records, Step,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let records = split_records(text);
    let mut end_of_last = 0;
    for (n, r) in records.iter().enumerate() {
        // Every record is a slice of the text, in order, with only JSON whitespace before it.
        let at = r.text.as_ptr() as usize - text.as_ptr() as usize;
        assert!(at >= end_of_last && at + r.text.len() <= text.len());
        assert!(text[end_of_last..at].bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')));
        assert_eq!(line_column(text, at), (r.line, r.column), "record {n} at byte {at}");
        let complete = skip_value(r.text.as_bytes(), 0) == Some(r.text.len())
            && matches!(r.text.as_bytes().first(), Some(b'{' | b'['));
        // Only the last record may be a leftover (not a complete object or array).
        assert!(complete || n + 1 == records.len(), "record {n} of {} is incomplete", records.len());
        end_of_last = at + r.text.len();
    }
    // One well-formed object or array is exactly one record.
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        if v.is_object() || v.is_array() {
            assert_eq!(records.len(), 1);
            assert_eq!(records[0].text, text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r')));
        }
    }
    let _ = replace_python_non_finite(text);
    let _ = fragment(text, &[Step::Key("a"), Step::Index(1), Step::Key("output_throughput")]);
    for p in ["", "/a", "/a/1/b", "/0/a~1b"] {
        assert!(pointer_offset(text, p).is_some_and(|o| o <= text.len()));
    }
});

//! The JSON Schemas shipped beside a dataset (`schema/<kind>.json`), held to what the types generate: a schema
//! edited by hand or left behind by a change of the types would let editors accept files the loader refuses.

use crate::dataset::json_schema::schema_files;
use crate::dataset::SourceText;
use crate::diagnostic::Diagnostic;

/// The folder of a dataset that holds the JSON Schemas, as `sim-core schema` writes them.
pub const SCHEMA_DIR: &str = "schema";

/// Compares the schema texts of a dataset (paths `schema/<kind>.json`, as the dataset's other files are named
/// relative to its root) with what the types generate: a missing, stale or edited schema is an error naming the
/// file, located at the first line that differs; a file no kind generates is a note.
pub fn check_schema_files(texts: &[SourceText]) -> Vec<Diagnostic> {
    let hint = "regenerate the schemas from the types: sim-core schema data/schema (the dataset's schema folder)";
    let expected = schema_files();
    let mut out = Vec::new();
    for (name, want) in &expected {
        let path = format!("{SCHEMA_DIR}/{name}");
        match texts.iter().find(|t| t.path == path) {
            None => out.push(
                Diagnostic::error(
                    &path,
                    "",
                    "missing JSON Schema: every kind of dataset file has its schema in this folder",
                )
                .with_hint(hint),
            ),
            Some(t) if t.text != *want => {
                let (line, column) = first_difference(&t.text, want);
                out.push(
                    Diagnostic::error(&path, "", "the JSON Schema is not the one the types generate (stale or edited)")
                        .at(line, column)
                        .with_hint(hint),
                );
            }
            Some(_) => {}
        }
    }
    for t in texts.iter().filter(|t| !expected.iter().any(|(name, _)| t.path == format!("{SCHEMA_DIR}/{name}"))) {
        out.push(
            Diagnostic::note(&t.path, "", "no kind of dataset file has this schema; nothing names or checks it")
                .with_hint("remove it, or name the kind it belongs to"),
        );
    }
    out
}

/// 1-based line and column of the first character where `a` and `b` differ (one past the end of the shorter).
fn first_difference(a: &str, b: &str) -> (usize, usize) {
    let (mut line, mut column) = (1, 1);
    for (x, y) in a.chars().zip(b.chars()) {
        if x != y {
            return (line, column);
        }
        if x == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::{check_schema_files, SCHEMA_DIR};
    use crate::dataset::json_schema::schema_files;
    use crate::dataset::SourceText;

    fn generated() -> Vec<SourceText> {
        schema_files()
            .into_iter()
            .map(|(name, text)| SourceText { path: format!("{SCHEMA_DIR}/{name}"), text })
            .collect()
    }

    #[test]
    fn generated_schemas_pass() {
        assert_eq!(check_schema_files(&generated()), Vec::new());
    }

    #[test]
    fn a_corrupted_or_missing_schema_is_an_error_naming_the_file() {
        let mut texts = generated();
        let sweep = texts.iter_mut().find(|t| t.path == "schema/sweep.json").expect("sweep schema");
        sweep.text = sweep.text.replacen("\"type\": \"object\"", "\"type\": \"array\"", 1);
        texts.retain(|t| t.path != "schema/claims.json");
        let d = check_schema_files(&texts);
        let errors: Vec<String> = d.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("schema/claims.json") && e.contains("missing")), "{errors:?}");
        let stale = errors.iter().find(|e| e.contains("schema/sweep.json")).expect("the edited schema is named");
        assert!(
            stale.contains("not the one the types generate") && stale.contains("sim-core schema data/schema"),
            "{stale}"
        );
        assert!(d.iter().any(|d| d.file == "schema/sweep.json" && d.line.is_some()), "located: {d:?}");
    }
}

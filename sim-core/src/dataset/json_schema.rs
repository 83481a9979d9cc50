//! JSON Schemas of the dataset files, generated from the types in [`super::schema`] (feature `schema`).
//!
//! One schema per kind of file (`sweep.json`, `model.json`, ...), JSON Schema 2020-12, shipped in
//! `data/schema/` and named by each data file's `"$schema"` so editors and other tools validate the files;
//! `sim-core schema <dir>` writes them and a test keeps the shipped ones equal to these. The types stay the
//! normative form: a schema only adds what the loader checks before typing (`schema_version`, `kind`, the
//! `$schema` key itself). Checks across fields and files (units, quotes, references) are the validator's.

use super::schema::*;
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};

/// Every kind of dataset file, in the order `sim-core schema` writes them.
pub const KINDS: [&str; 10] =
    ["sources", "hardware", "fabric", "model", "sweep", "claims", "scenario", "accuracy", "engine", "kernels"];

/// The schema of one kind of file, `None` for an unknown kind.
pub fn schema_for_kind(kind: &str) -> Option<Value> {
    let root = match kind {
        "sources" => root::<SourcesFile>(),
        "hardware" => root::<HardwareFile>(),
        "fabric" => root::<FabricFile>(),
        "model" => root::<ModelFile>(),
        "sweep" => root::<SweepFile>(),
        "claims" => root::<ClaimsFile>(),
        "scenario" => root::<ScenarioFile>(),
        "accuracy" => root::<AccuracyFile>(),
        "engine" => root::<EngineFile>(),
        "kernels" => root::<KernelsFile>(),
        _ => return None,
    };
    Some(envelope(kind, root))
}

/// Every schema as the file `sim-core schema` writes: `(<kind>.json, pretty JSON with a final newline)`.
pub fn schema_files() -> Vec<(String, String)> {
    KINDS
        .iter()
        .filter_map(|k| {
            let v = schema_for_kind(k)?;
            let text = serde_json::to_string_pretty(&v).ok()?;
            Some((format!("{k}.json"), format!("{text}\n")))
        })
        .collect()
}

/// The `$schema` a data file of `kind` carries: the schema's path relative to a file one folder below the
/// dataset root (`data/sweeps/x.json` -> `data/schema/sweep.json`). Files at the root (`data/claims.json`)
/// name `schema/<kind>.json`.
pub fn reference(kind: &str, at_root: bool) -> String {
    if at_root {
        format!("schema/{kind}.json")
    } else {
        format!("../schema/{kind}.json")
    }
}

fn root<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>().to_value()
}

/// What the loader checks before it types a file, added to the generated schema: the versions it reads,
/// the kind, and `$schema` itself (allowed; the loader requires it to name this kind's schema).
fn envelope(kind: &str, mut schema: Value) -> Value {
    let Some(obj) = schema.as_object_mut() else { return schema };
    obj.insert("title".into(), json!(format!("twotower {kind} file, schema_version {SCHEMA_VERSION}")));
    if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "$schema".into(),
            json!({
                "description": format!("This schema, relative to the file: \"../schema/{kind}.json\"."),
                "type": "string",
                "pattern": format!("(^|/){kind}\\.json$"),
            }),
        );
        props.insert(
            "schema_version".into(),
            json!({
                "description": format!("{MIN_SCHEMA_VERSION} (no `$schema`) or {SCHEMA_VERSION}."),
                "type": "integer",
                "minimum": MIN_SCHEMA_VERSION,
                "maximum": SCHEMA_VERSION,
            }),
        );
        props.insert("kind".into(), json!({ "const": kind }));
    }
    schema
}

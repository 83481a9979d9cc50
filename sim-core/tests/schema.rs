//! The JSON Schemas of the dataset files: the shipped `data/schema/*.json` are what the types generate, every
//! data file names its schema by `$schema` and satisfies it, the schemas reject what the loader rejects, and
//! version 1 files (no `$schema`) and files as each earlier release wrote them (`tests/earlier-releases/`) still
//! load.

#[path = "../src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // each test uses part of it
mod fsio;

use serde_json::{json, Value};
use sim_core::dataset::json_schema::{reference, schema_files, schema_for_kind, KINDS};
use sim_core::dataset::{load, validate, SourceText};
use sim_core::Diagnostic;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")
}

fn shipped() -> Vec<SourceText> {
    fsio::load_dir(&data()).expect("data/ is readable")
}

/// Every schema error of `instance` against the schema of `kind`, as `pointer: message` lines.
fn schema_errors(kind: &str, instance: &Value) -> Vec<String> {
    let schema = schema_for_kind(kind).unwrap_or_else(|| panic!("no schema for kind {kind}"));
    let mut errors = Vec::new();
    Check { root: &schema }.value(&schema, instance, "", &mut errors);
    errors
}

/// A JSON Schema 2020-12 validator for the keywords the generated schemas use (a dependency such as the
/// `jsonschema` crate would switch serde_json to exact float parsing in test builds only, so the CLI the tests
/// run would print some numbers differently from the one users run). A keyword it does not know fails the
/// test instead of passing unchecked.
struct Check<'a> {
    root: &'a Value,
}

/// Keywords that describe and do not constrain.
const ANNOTATIONS: [&str; 9] =
    ["$schema", "$id", "$defs", "title", "description", "default", "format", "examples", "deprecated"];

impl Check<'_> {
    fn value(&self, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
        let obj = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return errors.push(format!("{at}: nothing is allowed here")),
            Value::Object(o) => o,
            other => panic!("not a schema: {other}"),
        };
        for (key, rule) in obj {
            match key.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "$ref" => {
                    let target = rule.as_str().and_then(|r| r.strip_prefix('#')).expect("local $ref");
                    let resolved = self.root.pointer(target).unwrap_or_else(|| panic!("$ref {target} resolves"));
                    self.value(resolved, v, at, errors);
                }
                "type" => {
                    let types: Vec<&str> = match rule {
                        Value::String(t) => vec![t.as_str()],
                        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                        _ => panic!("type {rule}"),
                    };
                    if !types.iter().any(|t| is_type(v, t)) {
                        errors.push(format!("{at}: {v} is not of type {rule}"));
                    }
                }
                "enum" => {
                    if !rule.as_array().expect("enum list").iter().any(|x| same(x, v)) {
                        errors.push(format!("{at}: {v} is not one of {rule}"));
                    }
                }
                "const" => {
                    if !same(rule, v) {
                        errors.push(format!("{at}: {v} is not {rule}"));
                    }
                }
                "minimum" | "maximum" => {
                    if let (Some(x), Some(bound)) = (v.as_f64(), rule.as_f64()) {
                        if (key == "minimum" && x < bound) || (key == "maximum" && x > bound) {
                            errors.push(format!("{at}: {x} is outside the {key} {bound}"));
                        }
                    }
                }
                "pattern" => {
                    if let Some(text) = v.as_str() {
                        let re = regex::Regex::new(rule.as_str().expect("pattern")).expect("pattern compiles");
                        if !re.is_match(text) {
                            errors.push(format!("{at}: {text:?} does not match {rule}"));
                        }
                    }
                }
                "required" => {
                    if let Some(o) = v.as_object() {
                        for name in rule.as_array().expect("required list").iter().filter_map(Value::as_str) {
                            if !o.contains_key(name) {
                                errors.push(format!("{at}: missing required property `{name}`"));
                            }
                        }
                    }
                }
                "properties" => {
                    if let Some(o) = v.as_object() {
                        for (name, sub) in rule.as_object().expect("properties") {
                            if let Some(x) = o.get(name) {
                                self.value(sub, x, &format!("{at}/{name}"), errors);
                            }
                        }
                    }
                }
                "additionalProperties" => {
                    if let Some(o) = v.as_object() {
                        let declared = obj.get("properties").and_then(Value::as_object);
                        for (name, x) in o {
                            if !declared.is_some_and(|d| d.contains_key(name)) {
                                let before = errors.len();
                                self.value(rule, x, &format!("{at}/{name}"), errors);
                                if errors.len() > before && rule == &Value::Bool(false) {
                                    errors.truncate(before);
                                    errors.push(format!("{at}: unknown property `{name}`"));
                                }
                            }
                        }
                    }
                }
                "items" => {
                    if let Some(xs) = v.as_array() {
                        for (i, x) in xs.iter().enumerate() {
                            self.value(rule, x, &format!("{at}/{i}"), errors);
                        }
                    }
                }
                "anyOf" | "oneOf" => {
                    let matching = rule
                        .as_array()
                        .expect("alternatives")
                        .iter()
                        .filter(|alt| {
                            let mut e = Vec::new();
                            self.value(alt, v, at, &mut e);
                            e.is_empty()
                        })
                        .count();
                    if matching == 0 || (key == "oneOf" && matching > 1) {
                        errors.push(format!("{at}: {v} matches {matching} of the {key} alternatives"));
                    }
                }
                "allOf" => {
                    for alt in rule.as_array().expect("allOf list") {
                        self.value(alt, v, at, errors);
                    }
                }
                other => panic!("the schema uses `{other}`, which this check does not know: teach it"),
            }
        }
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|x| x.fract() == 0.0),
        _ => panic!("type {t}"),
    }
}

/// JSON equality with 1 and 1.0 the same number, as JSON Schema compares.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Every error `load`, `validate::check` and `model::plausibility::check` report for the shipped data with
/// `path` replaced by `text` (what `Workspace::load` runs).
fn load_errors(files: &[SourceText]) -> Vec<Diagnostic> {
    let (ds, mut diags) = load(files);
    diags.extend(validate::check(&ds, None));
    diags.extend(sim_core::model::plausibility::check(&ds));
    diags.into_iter().filter(Diagnostic::is_error).collect()
}

#[test]
fn shipped_schemas_are_what_the_types_generate() {
    let generated = schema_files();
    assert_eq!(generated.len(), KINDS.len());
    let dir = data().join(fsio::SCHEMA_DIR);
    for (name, text) in &generated {
        let shipped = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(
            &shipped == text,
            "data/schema/{name} differs from the schema the types generate: run `cargo run -p sim-core -- schema data/schema`"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("data/schema")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = generated.iter().map(|(n, _)| n.clone()).collect();
    expected.sort();
    assert_eq!(names, expected, "data/schema holds exactly one schema per kind");

    // The CLI writes the same files.
    let out = std::env::temp_dir().join(format!("sim-core-schema-{}", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_sim-core")).arg("schema").arg(&out).output().expect("run");
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    for (name, text) in &generated {
        assert_eq!(&std::fs::read_to_string(out.join(name)).expect("written"), text, "{name}");
    }
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn every_data_file_names_its_schema_and_satisfies_it() {
    let files = shipped();
    assert!(files.len() > 40, "the dataset is there");
    let mut problems = Vec::new();
    for f in &files {
        let v: Value = serde_json::from_str(&f.text).expect("json");
        let kind = v["kind"].as_str().expect("kind");
        let at_root = !f.path.contains('/');
        let want = reference(kind, at_root);
        if v["$schema"] != json!(want) {
            problems.push(format!("{}: \"$schema\" is {}, expected \"{want}\"", f.path, v["$schema"]));
            continue;
        }
        // The reference resolves, relative to the file, to the shipped schema of its kind.
        let dir = Path::new(&f.path).parent().map(|p| data().join(p)).unwrap_or_else(data);
        let schema_path = dir.join(&want);
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{}: {} does not resolve: {e}", f.path, schema_path.display()));
        assert_eq!(Some(schema), schema_for_kind(kind), "{}", f.path);
        problems.extend(schema_errors(kind, &v).into_iter().map(|e| format!("{}: {e}", f.path)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A sweep file of the shipped data, as JSON.
fn sweep() -> (String, Value) {
    let f =
        shipped().into_iter().find(|f| f.path == "sweeps/nim-llama-3.3-70b-instruct-h100x2.json").expect("NIM sweep");
    (f.path, serde_json::from_str(&f.text).expect("json"))
}

/// One change to a file's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn the_schemas_reject_what_the_loader_rejects() {
    let (path, good) = sweep();
    assert!(schema_errors("sweep", &good).is_empty());
    let cases: Vec<(&str, Edit)> = vec![
        ("a misspelt point field", Box::new(|v| v["series"][0]["points"][0]["output_tok_per_s"] = json!(1))),
        ("a number written as text", Box::new(|v| v["series"][0]["points"][0]["output_tok_s"] = json!("51.67"))),
        ("an unknown mode", Box::new(|v| v["series"][0]["mode"] = json!("tp8"))),
        ("an unknown flag", Box::new(|v| v["series"][0]["points"][0]["flags"] = json!(["kv_capped"]))),
        (
            "a request rate that is neither a number nor inf",
            Box::new(|v| v["series"][0]["points"][0]["request_rate"] = json!("fast")),
        ),
        (
            "an unknown spec_decode counter",
            Box::new(|v| v["series"][0]["points"][0]["spec_decode"] = json!({"acceptance": 0.7})),
        ),
        ("a misspelt condition", Box::new(|v| v["conditions"]["engin"] = json!("vLLM"))),
        ("a future schema_version", Box::new(|v| v["schema_version"] = json!(3))),
        ("another kind", Box::new(|v| v["kind"] = json!("model"))),
    ];
    for (what, edit) in cases {
        let mut v = good.clone();
        edit(&mut v);
        assert!(!schema_errors("sweep", &v).is_empty(), "the schema accepts {what}");
        let mut files = shipped();
        let f = files.iter_mut().find(|f| f.path == path).expect("the sweep");
        f.text = serde_json::to_string_pretty(&v).expect("json");
        assert!(!load_errors(&files).is_empty(), "the loader accepts {what}");
    }
    // What both accept: an unbounded request rate, a count of requests in flight, spec-decode counters.
    let mut v = good.clone();
    v["series"][0]["points"][0]["request_rate"] = json!("inf");
    v["series"][0]["points"][0]["spec_decode"] = json!({"num_drafts": 10, "accepted_tokens": 15});
    assert_eq!(schema_errors("sweep", &v), Vec::<String>::new());

    // `$schema` naming another kind's schema: the loader refuses it, naming the field.
    let mut files = shipped();
    let f = files.iter_mut().find(|f| f.path == path).expect("the sweep");
    f.text = f.text.replace("\"../schema/sweep.json\"", "\"../schema/model.json\"");
    let errs = load_errors(&files);
    assert!(errs.iter().any(|e| e.file == path && e.pointer == "/$schema"), "{errs:?}");
}

#[test]
fn version_1_files_still_load() {
    // Every shipped file as version 1 wrote it: no `$schema`, schema_version 1.
    let files: Vec<SourceText> = shipped()
        .into_iter()
        .map(|f| {
            let mut v: Value = serde_json::from_str(&f.text).expect("json");
            let obj = v.as_object_mut().expect("object");
            assert!(obj.remove("$schema").is_some(), "{} names its schema", f.path);
            obj.insert("schema_version".into(), json!(1));
            SourceText { path: f.path, text: serde_json::to_string_pretty(&v).expect("json") }
        })
        .collect();
    let errs = load_errors(&files);
    assert!(errs.is_empty(), "{}", errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"));
    for f in &files {
        let v: Value = serde_json::from_str(&f.text).expect("json");
        let kind = v["kind"].as_str().expect("kind");
        assert_eq!(schema_errors(kind, &v), Vec::<String>::new(), "{} as version 1", f.path);
    }
}

/// The shipped data file at `path`, as JSON.
fn shipped_json(path: &str) -> Value {
    let f = shipped().into_iter().find(|f| f.path == path).unwrap_or_else(|| panic!("{path} is shipped"));
    serde_json::from_str(&f.text).expect("json")
}

/// `path` replaced by `v` in the shipped data: the errors the loader and the validator report.
fn errors_with(path: &str, v: &Value) -> Vec<Diagnostic> {
    let mut files = shipped();
    let f = files.iter_mut().find(|f| f.path == path).expect("shipped");
    f.text = serde_json::to_string_pretty(v).expect("json");
    load_errors(&files)
}

/// A host link and a scenario's placement overrides: what the schema accepts, the loader accepts, and a host
/// link of an unknown kind or an override that is neither a number nor a quantity both refuse.
#[test]
fn host_links_and_pin_overrides_are_in_the_schemas() {
    let hw_path = "hardware/h100-sxm.json";
    let hw = shipped_json(hw_path);
    assert_eq!(hw["host_link"]["kind"], json!("pcie"));
    let mut nvlink = hw.clone();
    nvlink["host_link"]["kind"] = json!("nvlink");
    assert!(!schema_errors("hardware", &nvlink).is_empty(), "the schema accepts an unknown host link kind");
    assert!(!errors_with(hw_path, &nvlink).is_empty(), "the loader accepts an unknown host link kind");

    let sc_path = "scenarios/nim-llama-3.3-70b-instruct-h100x2.json";
    let mut sc = shipped_json(sc_path);
    sc["overrides"]["placement.pin_to_host_bytes"] =
        json!({"value": 20, "unit": "GiB", "basis": "assumed", "reason": "vLLM --cpu-offload-gb 20"});
    sc["overrides"]["placement.pin_to_host_layers"] = json!(4);
    assert_eq!(schema_errors("scenario", &sc), Vec::<String>::new());
    assert_eq!(errors_with(sc_path, &sc), Vec::<Diagnostic>::new());
    for bad in [json!("20 GiB"), json!({"value": 20, "unit": "GiB"}), json!([20])] {
        let mut v = sc.clone();
        v["overrides"]["placement.pin_to_host_bytes"] = bad.clone();
        assert!(!schema_errors("scenario", &v).is_empty(), "the schema accepts the override {bad}");
        let errs = errors_with(sc_path, &v);
        assert!(errs.iter().any(|e| e.file == sc_path), "the loader accepts the override {bad}: {errs:?}");
    }
}

/// A reference to another file reads an id, or an inline object whose own error is the one reported (not serde's
/// "did not match any variant of untagged enum"); anything else says what it takes.
#[test]
fn references_read_an_id_or_report_the_inline_objects_own_error() {
    use sim_core::dataset::schema::{ModelRef, Quantity, Reference};
    let id: Reference<Quantity> = serde_json::from_str(r#""gb300-station""#).expect("an id");
    assert!(matches!(id, Reference::Id(ref s) if s == "gb300-station"));
    let ok: Reference<Quantity> =
        serde_json::from_str(r#"{"value": 1, "unit": "GB", "basis": "assumed", "reason": "r"}"#).expect("inline");
    assert!(matches!(ok, Reference::Inline(ref q) if q.value == 1.0));
    let err = serde_json::from_str::<Reference<Quantity>>(r#"{"value": 1, "unit": "GB", "basis": "guessed"}"#)
        .expect_err("an unknown basis");
    assert!(err.to_string().contains("inline object") && err.to_string().contains("guessed"), "{err}");
    let err = serde_json::from_str::<Reference<Quantity>>("3").expect_err("a number is neither");
    assert!(err.to_string().contains("an id (a string) or an inline object"), "{err}");
    let err = serde_json::from_str::<ModelRef>(r#"{"describe": {"layers": "many"}}"#).expect_err("a bad description");
    assert!(err.to_string().contains("model description"), "{err}");
    assert!(matches!(serde_json::from_str::<ModelRef>(r#""glm-5.2""#), Ok(ModelRef::Id(_))));
    // Claim operands keep serde's untagged order: a point, then {file, pointer}, then {constant, reason}.
    use sim_core::dataset::schema::Operand;
    let p: Operand = serde_json::from_str(r#"{"file": "f.json", "pointer": "/a"}"#).expect("a pointer");
    assert!(matches!(p, Operand::Pointer { ref pointer, .. } if pointer == "/a"));
    let c: Operand = serde_json::from_str(r#"{"constant": 2, "reason": "two"}"#).expect("a constant");
    assert!(matches!(c, Operand::Constant { constant, .. } if constant == 2.0));
    let err = serde_json::from_str::<Operand>(r#"{"constant": "two"}"#).expect_err("neither");
    assert!(err.to_string().contains("an operand is a published point"), "{err}");
}

/// A shipped card whose architecture field `field` has `value` satisfies the published schema, and `break_it`
/// turns it into a card the loader refuses with the file and `pointer` named (`why`: what slipped through).
fn card_field_is_checked(
    path: &str,
    field: &str,
    value: Value,
    break_it: impl Fn(&mut Value),
    pointer: &str,
    why: &str,
) {
    let card = shipped_json(path);
    assert_eq!(card["architecture"][field]["value"], value);
    assert_eq!(schema_errors("model", &card), Vec::<String>::new());
    let mut bad = card.clone();
    break_it(&mut bad["architecture"]);
    let errs = errors_with(path, &bad);
    assert!(errs.iter().any(|e| e.file == path && e.pointer == pointer), "{why} passes: {errs:?}");
}

/// A card's prefill share of its active parameters: the schema and the loader take it, and a prefill figure
/// above the decode one is refused with the file and the field named.
#[test]
fn prefill_active_params_is_checked_against_the_active_ones() {
    card_field_is_checked(
        "models/deepseek-v4.1-flash.json",
        "prefill_active_params",
        json!(8e9),
        |a| a["prefill_active_params"]["value"] = json!(20e9),
        "/architecture/prefill_active_params",
        "a prefill share above the decode one",
    );
}

/// The routed experts' stored width (GPT-OSS's MXFP4): positive, or refused.
#[test]
fn routed_expert_bits_is_a_positive_stored_width() {
    card_field_is_checked(
        "models/gpt-oss-120b.json",
        "routed_expert_bits",
        json!(4.25),
        |a| a["routed_expert_bits"]["value"] = json!(0.0),
        "/architecture/routed_expert_bits/value",
        "a stored width of zero",
    );
}

/// A drafter's own attention layers only on a model that drafts.
#[test]
fn a_drafters_attention_layers_need_a_model_that_drafts() {
    card_field_is_checked(
        "models/glm-5.3-flash.json",
        "draft_attention_layers",
        json!(1),
        |a| a["draft_tokens"]["value"] = json!(0),
        "/architecture/draft_attention_layers",
        "drafter layers without draft tokens",
    );
}

/// A local window and its bytes go together.
#[test]
fn a_local_window_needs_its_bytes() {
    card_field_is_checked(
        "models/deepseek-v4.1-flash.json",
        "local_window",
        json!(128),
        |a| {
            a.as_object_mut().map(|o| o.remove("local_window_kv_bytes_per_token"));
        },
        "/architecture/local_window_kv_bytes_per_token",
        "a window without its bytes",
    );
}

/// The folders of `tests/earlier-releases/`, each holding files as one earlier release of the format wrote them:
/// `v1` (before `$schema`), `v2-first` (the first version 2 release) and `v2-before-link-transport` (the last
/// release before links stated their transport). Each has the H100 server's hardware file and a scenario with
/// that hardware inline.
fn earlier_releases() -> Vec<(String, Vec<SourceText>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/earlier-releases");
    let mut out: Vec<(String, Vec<SourceText>)> = std::fs::read_dir(&root)
        .expect("tests/earlier-releases is readable")
        .map(|e| e.expect("an entry").path())
        .map(|dir| {
            let name = dir.file_name().and_then(|n| n.to_str()).expect("a folder name").to_string();
            (name, fsio::load_dir(&dir).expect("a release's files"))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn files_as_each_earlier_release_wrote_them_still_load() {
    let releases = earlier_releases();
    let names: Vec<&str> = releases.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["v1", "v2-before-link-transport", "v2-first"]);
    for (release, files) in &releases {
        let text = |suffix: &str| {
            files.iter().find(|f| f.path.ends_with(suffix)).unwrap_or_else(|| panic!("{release}: {suffix}"))
        };
        // The old hardware file in place of the shipped one: loads and validates with the shipped data.
        let old_hardware = text("h100-sxm.json");
        assert!(!old_hardware.text.contains("\"transport\""), "{release} predates the link's transport");
        let mut dataset = shipped();
        let shipped_hardware = dataset.iter_mut().find(|f| f.path.ends_with("hardware/h100-sxm.json")).expect("h100");
        shipped_hardware.text = old_hardware.text.clone();
        let errs = load_errors(&dataset);
        assert!(errs.is_empty(), "{release}: {}", errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"));
        // A scenario with that hardware inline resolves, and its link takes the stated default transport.
        let scenario = text("scenario-inline-hardware.json");
        dataset.push(SourceText { path: "scenarios/inline.json".into(), text: scenario.text.clone() });
        let (ds, diags) = load(&dataset);
        let errs: Vec<&Diagnostic> = diags.iter().filter(|d| d.is_error()).collect();
        assert!(errs.is_empty(), "{release}: {errs:?}");
        let file = ds.scenarios.get("plan-minimax-m3-inline-h100-sxm").expect("the inline scenario loads");
        let s = sim_core::scenario::resolve(&ds, "scenarios/inline.json", file).expect("it resolves");
        let default = sim_core::dataset::schema::LinkTransport::assumed_rdma();
        assert_eq!(s.hardware.link.transport, default.kind, "{release}");
        assert!((s.hardware.link.round_trip_s - 2.92e-6).abs() < 1e-15, "{release}: {}", s.hardware.link.round_trip_s);
        // And the schema of today accepts both files as written.
        for f in [old_hardware, scenario] {
            let v: Value = serde_json::from_str(&f.text).expect("json");
            let kind = v["kind"].as_str().expect("kind");
            assert_eq!(schema_errors(kind, &v), Vec::<String>::new(), "{release}: {}", f.path);
        }
    }
}

/// The default a link without a transport takes is stated as an assumption, with its reason.
#[test]
fn a_link_without_a_transport_states_the_assumed_default() {
    let t = sim_core::dataset::schema::LinkTransport::assumed_rdma();
    assert_eq!(t.round_trip.basis, sim_core::dataset::schema::Basis::Assumed);
    assert!(t.round_trip.reason.as_deref().is_some_and(|r| r.contains("states no link transport")));
    let mut hw = shipped_json("hardware/h100-sxm.json");
    hw["link"].as_object_mut().expect("a link").remove("transport");
    assert_eq!(errors_with("hardware/h100-sxm.json", &hw), Vec::<Diagnostic>::new());
}

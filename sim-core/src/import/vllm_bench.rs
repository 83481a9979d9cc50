//! vLLM serving benchmark results to a `sweep` file: one result = one point.
//!
//! Reads what `vllm bench serve --save-result` (vllm/benchmarks/serve.py) and the older
//! `benchmarks/benchmark_serving.py --save-result` write: one JSON object (`json.dump`, one line) with the
//! run setup (`date`, `backend`, `model_id`, `tokenizer_id`, `num_prompts`, `request_rate`, `burstiness`,
//! `max_concurrency`) merged with the metrics (`duration`, `completed`, `total_input_tokens`,
//! `total_output_tokens`, `request_throughput`, `output_throughput`, `total_token_throughput`,
//! `mean_ttft_ms`, ..., and with `--save-detailed` the per-request `input_lens`, `output_lens`, `ttfts`,
//! `itls`, ...). `--append-result` appends one such object per line; each line is one point. One input may
//! hold any number of results, one per line, concatenated or indented one after another (a paste of several
//! files): [`crate::json_text::split_records`] finds them, and a problem names the input and the line of the
//! result it is in. Python writes `NaN`/`Infinity` bare; those are read as missing values.
//!
//! Besides throughput, a point takes what the result states about the run: TTFT, TPOT, ITL and end-to-end
//! latency (`mean_*_ms` as `ttft_ms`..., `median_*_ms`, `p99_*_ms`), `request_rate` (a number, or `"inf"`),
//! `max_concurrent_requests`, the `spec_decode_*` counters (as `spec_decode`, see
//! [`crate::dataset::schema::SpecDecode`] for their meaning and how they become the model's acceptance), and
//! the setup and `--metadata` keys as text. Its quote is every fragment it was read from, in file order,
//! joined by ` … `. Two kinds of run are flagged so no fit uses them: one that never held its concurrency
//! (`max_concurrent_requests` below `max_concurrency`: `concurrency_capped`) and one whose requests were sent
//! at a finite rate (`rate_limited`).

use super::{
    base_name, check_size, finite, fragment, import_source, parse_json, replace_python_non_finite, shift_position,
    Input, Step,
};
use crate::dataset::schema::{
    Flag, From, Mode, PointLatency, PointRecord, RequestRate, Series, SpecDecode, SweepFile, Unbounded, SCHEMA_VERSION,
};
use crate::diagnostic::Diagnostic;
use crate::json_text::split_records;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What the result files do not say (or what to use instead of what they say).
#[derive(Debug, Clone)]
pub struct VllmOptions {
    pub mode: Mode,
    /// Model id in the dataset; default: the last path segment of `model_id`, lower-cased.
    pub model: Option<String>,
    pub hardware: String,
    /// Concurrency for results run without `--max-concurrency` (`max_concurrency` null).
    pub concurrency: Option<u32>,
    /// Sequence lengths of the series; default: measured tokens per completed request.
    pub isl: Option<u32>,
    pub osl: Option<u32>,
    /// Source ids are `<prefix>-<n>`; change it when two imported files live in one dataset.
    pub source_prefix: String,
}

impl Default for VllmOptions {
    fn default() -> Self {
        VllmOptions {
            mode: Mode::Single,
            model: None,
            hardware: "gb300-station".into(),
            concurrency: None,
            isl: None,
            osl: None,
            source_prefix: "import".into(),
        }
    }
}

/// Sequence lengths of one series may differ by this share between files (random datasets vary a little).
pub const LENGTH_TOLERANCE: f64 = 0.05;

/// One benchmark result.
#[derive(Debug, Clone)]
struct Run {
    file: String,
    /// 1-based line where the result starts, when its input holds several (for messages).
    line: Option<usize>,
    source: String,
    model_id: Option<String>,
    concurrency: u32,
    concurrency_how: String,
    output_tok_s: f64,
    quote: String,
    isl: f64,
    osl: f64,
    completed: u64,
    failed: u64,
    num_prompts: Option<u64>,
    latency: PointLatency,
    request_rate: Option<RequestRate>,
    max_concurrent_requests: Option<u32>,
    spec_decode: Option<SpecDecode>,
    metadata: BTreeMap<String, String>,
}

impl Run {
    fn name(&self) -> String {
        match self.line {
            Some(line) => format!("{} (line {line})", self.file),
            None => self.file.clone(),
        }
    }
}

/// Parses vLLM benchmark result files into a sweep file, grouping points into series by mode and lengths.
pub fn vllm_bench(inputs: &[Input], opts: &VllmOptions) -> Result<SweepFile, Diagnostic> {
    if inputs.is_empty() {
        return Err(Diagnostic::error("", "", "no input files").with_hint("name one or more result JSON files"));
    }
    let mut sources = Vec::new();
    let mut runs = Vec::new();
    for (n, (file, text)) in inputs.iter().enumerate() {
        let id = format!("{}-{}", opts.source_prefix, n + 1);
        let (tool, mut file_runs) = read_file(file, text, &id, opts)?;
        sources.push(import_source(&opts.source_prefix, n + 1, file, &format!("{tool} output")));
        runs.append(&mut file_runs);
    }
    let model = match &opts.model {
        Some(m) => m.clone(),
        None => {
            let mut named = runs.iter().filter_map(|r| r.model_id.as_ref().map(|m| (r, m)));
            let Some((first, id)) = named.next() else {
                let file = runs.first().map(|r| r.file.as_str()).unwrap_or("");
                return Err(Diagnostic::error(
                    file,
                    "/model_id",
                    "no \"model_id\" in the results to name the model by",
                )
                .with_hint("pass --model <id of a data/models file>, e.g. --model glm-5.2"));
            };
            if let Some((other, oid)) = named.find(|(_, m)| *m != id) {
                return Err(Diagnostic::error(
                    &other.file,
                    "/model_id",
                    format!(
                        "results are for different models: `{id}` in {} and `{oid}` in {}",
                        first.name(),
                        other.name()
                    ),
                )
                .with_hint("import each model's results separately, or pass --model to file them under one id"));
            }
            base_name(id).to_lowercase()
        }
    };
    let mut series: Vec<(Series, Vec<Run>)> = Vec::new();
    for run in runs {
        let isl = opts.isl.map_or(run.isl, f64::from);
        let osl = opts.osl.map_or(run.osl, f64::from);
        for (given, measured, what) in [(opts.isl, run.isl, "input"), (opts.osl, run.osl, "output")] {
            if let Some(g) = given {
                if (measured - f64::from(g)).abs() > LENGTH_TOLERANCE * f64::from(g) {
                    return Err(Diagnostic::error(&run.file, "", format!("{} averages {measured:.1} {what} tokens per request, more than 5% off the --{}sl {g} given", run.name(), &what[..1]))
                        .with_hint("check the option, or import this file into a series of its own"));
                }
            }
        }
        let close = |a: f64, b: u32| (a - f64::from(b)).abs() <= LENGTH_TOLERANCE * f64::from(b);
        let slot = series.iter().position(|(s, _)| s.mode == opts.mode && close(isl, s.isl) && close(osl, s.osl));
        let i = match slot {
            Some(i) => i,
            None => {
                let (isl_r, osl_r) = (isl.round(), osl.round());
                if !(1.0..=f64::from(u32::MAX)).contains(&isl_r) || !(1.0..=f64::from(u32::MAX)).contains(&osl_r) {
                    return Err(Diagnostic::error(
                        &run.file,
                        "",
                        format!("{} has no usable sequence lengths (isl {isl:.1}, osl {osl:.1})", run.name()),
                    )
                    .with_hint("pass --isl and --osl"));
                }
                let s = Series {
                    mode: opts.mode,
                    isl: isl_r as u32,
                    osl: osl_r as u32,
                    hardware: opts.hardware.clone(),
                    note: None,
                    points: Vec::new(),
                    ranges: Vec::new(),
                    unplaced: Vec::new(),
                };
                series.push((s, Vec::new()));
                series.len() - 1
            }
        };
        let Some((_, members)) = series.get_mut(i) else { continue };
        if let Some(prev) = members.iter().find(|r| r.concurrency == run.concurrency) {
            return Err(Diagnostic::error(
                &run.file,
                "/max_concurrency",
                format!(
                    "concurrency {} is measured twice in one series: in {} and in {}",
                    run.concurrency,
                    prev.name(),
                    run.name()
                ),
            )
            .with_hint("keep one result per concurrency (or import the runs separately)"));
        }
        members.push(run);
    }
    let mut out = Vec::new();
    for (mut s, mut members) in series {
        crate::stats::sort_by_key(&mut members, |r| r.concurrency);
        let how =
            if opts.isl.is_some() || opts.osl.is_some() { "given on the command line where set, else " } else { "" };
        s.note = Some(format!(
            "imported from {} vLLM benchmark result(s); isl/osl {how}total_input_tokens / completed and total_output_tokens / completed, rounded (files within 5% share a series)",
            members.len()
        ));
        s.points = members
            .iter()
            .map(|r| {
                let mut note = format!(
                    "{}; {} requests completed, mean {:.1} input and {:.1} output tokens",
                    r.concurrency_how, r.completed, r.isl, r.osl
                );
                if r.failed > 0 {
                    note.push_str(&format!("; WARNING: {} requests failed", r.failed));
                }
                let c = f64::from(r.concurrency);
                let mut p = PointRecord::new(c, r.output_tok_s, From { source: r.source.clone(), quote: r.quote.clone() });
                if let Some(m) = r.max_concurrent_requests.filter(|m| f64::from(*m) < c) {
                    p.flags.push(Flag::ConcurrencyCapped);
                    let prompts = match r.num_prompts {
                        Some(n) if (n as f64) < c => format!(" (only {n} prompts for {} clients)", r.concurrency),
                        _ => String::new(),
                    };
                    note.push_str(&format!(
                        "; at most {m} requests were in flight at once, below max_concurrency {}{prompts}: flagged concurrency_capped, not fitted",
                        r.concurrency
                    ));
                }
                if let Some(rate) = r.request_rate.and_then(RequestRate::per_second) {
                    p.flags.push(Flag::RateLimited);
                    note.push_str(&format!("; requests sent at {rate} per second, not closed-loop: flagged rate_limited, not fitted"));
                }
                if let Some(a) = r.spec_decode.as_ref().and_then(SpecDecode::per_token_acceptance) {
                    note.push_str(&format!("; measured draft acceptance {a:.3} per token"));
                }
                p.note = Some(note);
                p.set_latency(&r.latency);
                p.request_rate = r.request_rate;
                p.max_concurrent_requests = r.max_concurrent_requests;
                p.spec_decode = r.spec_decode.clone();
                p.metadata = r.metadata.clone();
                p
            })
            .collect();
        out.push(s);
    }
    Ok(SweepFile {
        schema_version: SCHEMA_VERSION,
        kind: "sweep".into(),
        sources,
        dataset: None,
        model,
        scenario: None,
        conditions: None,
        series: out,
        totals: Vec::new(),
    })
}

/// The tool that wrote the input and its results: one, or several (one per line as `--append-result` writes
/// them, concatenated, or indented one after another).
fn read_file(file: &str, text: &str, source: &str, opts: &VllmOptions) -> Result<(&'static str, Vec<Run>), Diagnostic> {
    check_size(file, text)?;
    if text.trim().is_empty() {
        return Err(
            Diagnostic::error(file, "", "file is empty").with_hint("pass the JSON file written by --save-result")
        );
    }
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        let hint = if text.lines().any(|l| l.trim_start().starts_with('#') && l.contains("busbw")) {
            "this looks like nccl-tests output; use `sim-core import nccl-tests`"
        } else if text.contains("Serving Benchmark Result") {
            "this is the printed summary; rerun with --save-result and import the JSON file it writes"
        } else {
            "expected the JSON file `vllm bench serve --save-result` or benchmark_serving.py --save-result writes"
        };
        return Err(Diagnostic::error(file, "", "unknown format: not a JSON benchmark result")
            .at(1, 1)
            .with_hint(hint));
    }
    let records = split_records(text);
    let several = records.len() > 1;
    let mut tool = "benchmark_serving.py";
    let mut runs = Vec::new();
    for record in &records {
        let start = (record.line, record.column);
        if !record.text.starts_with('{') {
            // Only the last record can be anything but an object: what follows the last complete result.
            return Err(Diagnostic::error(file, "", "text after the last complete result is not a JSON object")
                .at(start.0, start.1)
                .with_hint("each result is one JSON object; remove what follows it, or copy the complete result"));
        }
        let cleaned = replace_python_non_finite(record.text);
        let value = parse_json(file, &cleaned, start)?;
        if value.get("endpoint_type").is_some() || value.get("label").is_some() {
            tool = "vllm bench serve";
        }
        let line = several.then_some(record.line);
        runs.push(read_record(file, &cleaned, start, line, &value, source, opts)?);
    }
    Ok((tool, runs))
}

/// One result; `text` is its record (starting at `start` of the input), `line` what messages call it by.
fn read_record(
    file: &str,
    text: &str,
    start: (usize, usize),
    line: Option<usize>,
    v: &Value,
    source: &str,
    opts: &VllmOptions,
) -> Result<Run, Diagnostic> {
    let index = crate::position::PositionIndex::build(text);
    let located = |d: Diagnostic| {
        let (l, c) = shift_position(start, index.locate(&d.pointer).unwrap_or((1, 1)));
        d.at(l, c)
    };
    let Some(obj) = v.as_object() else {
        return Err(located(
            Diagnostic::error(file, "", "unknown format: expected a JSON object")
                .with_hint("pass the result file written by --save-result"),
        ));
    };
    if !obj.contains_key("output_throughput") && !obj.contains_key("completed") {
        let hint = if obj.contains_key("results") && obj.contains_key("config") {
            "this looks like nccl-tests JSON; use `sim-core import nccl-tests`"
        } else if obj.contains_key("kind") && obj.contains_key("schema_version") {
            "this is already a twotower dataset file"
        } else {
            "expected fields such as \"completed\", \"output_throughput\", \"total_output_tokens\" and \"max_concurrency\""
        };
        return Err(located(
            Diagnostic::error(file, "", "unknown format: not a vLLM serving benchmark result").with_hint(hint),
        ));
    }
    let number = |key: &str| -> Result<f64, Diagnostic> {
        match obj.get(key) {
            None => {
                Err(located(Diagnostic::error(file, format!("/{key}"), format!("missing field \"{key}\"")).with_hint(
                    "the file looks cut or edited; vLLM writes this field in every generation benchmark result",
                )))
            }
            Some(x) => finite(Some(x)).ok_or_else(|| {
                located(
                    Diagnostic::error(file, format!("/{key}"), format!("\"{key}\" must be a finite number, found {x}"))
                        .with_hint("NaN or null here means the run produced no usable result; rerun it"),
                )
            }),
        }
    };
    let completed = number("completed")?;
    if completed < 1.0 || completed.fract() != 0.0 {
        return Err(located(
            Diagnostic::error(file, "/completed", format!("\"completed\" is {completed}: no request finished"))
                .with_hint("the run failed; check the server log and the \"errors\" field"),
        ));
    }
    let output_tok_s = number("output_throughput")?;
    if output_tok_s <= 0.0 {
        return Err(located(
            Diagnostic::error(file, "/output_throughput", format!("\"output_throughput\" is {output_tok_s}"))
                .with_hint("a point needs positive output throughput; was --skip-tokenizer-init set?"),
        ));
    }
    let total_in = number("total_input_tokens")?;
    let total_out = number("total_output_tokens")?;
    let failed = obj.get("failed").and_then(Value::as_u64).unwrap_or(0);
    let given_c = obj.get("max_concurrency").filter(|x| !x.is_null());
    let (concurrency, concurrency_how) = match (given_c, opts.concurrency) {
        (Some(x), cli) => {
            let c = x.as_u64().filter(|c| (1..=4096).contains(c)).ok_or_else(|| {
                located(Diagnostic::error(file, "/max_concurrency", format!("\"max_concurrency\" must be a whole number from 1 to 4096, found {x}"))
                    .with_hint("concurrency counts closed-loop clients"))
            })?;
            if let Some(cli) = cli.filter(|cli| u64::from(*cli) != c) {
                return Err(located(Diagnostic::error(file, "/max_concurrency", format!("the file says max_concurrency {c}, --concurrency says {cli}"))
                    .with_hint("drop --concurrency; it is only for results run without --max-concurrency")));
            }
            let frag = fragment(text, &[Step::Key("max_concurrency")]).unwrap_or("max_concurrency");
            (c as u32, format!("concurrency from `{frag}`"))
        }
        (None, Some(c)) => (c, format!("concurrency {c} given on the command line (the run has no max_concurrency)")),
        (None, None) => {
            return Err(located(Diagnostic::error(file, "/max_concurrency", "the result has no max_concurrency: the run was not closed-loop")
                .with_hint("points are measured at a fixed number of concurrent clients; if the run had one, pass --concurrency <n>")))
        }
    };
    let opt = |key: &str| optional_number(file, obj, key).map_err(located);
    let mut latency = PointLatency::default();
    for (field, key) in LATENCY_KEYS {
        let x = opt(key)?;
        match field {
            "ttft_ms" => latency.ttft_ms = x,
            "median_ttft_ms" => latency.median_ttft_ms = x,
            "p99_ttft_ms" => latency.p99_ttft_ms = x,
            "tpot_ms" => latency.tpot_ms = x,
            "median_tpot_ms" => latency.median_tpot_ms = x,
            "p99_tpot_ms" => latency.p99_tpot_ms = x,
            "itl_ms" => latency.itl_ms = x,
            "median_itl_ms" => latency.median_itl_ms = x,
            "p99_itl_ms" => latency.p99_itl_ms = x,
            "e2el_ms" => latency.e2el_ms = x,
            "median_e2el_ms" => latency.median_e2el_ms = x,
            _ => latency.p99_e2el_ms = x,
        }
    }
    // A latency of 0 is what vLLM writes when no request produced one (np.mean of an empty list falls back
    // to 0): it states nothing, and a point's latencies are positive.
    let mut cleared = latency;
    for (key, x) in latency.values() {
        if x <= 0.0 {
            clear_latency(&mut cleared, key);
        }
    }
    let latency = cleared;
    let request_rate = request_rate(file, obj).map_err(located)?;
    let max_concurrent_requests =
        count(file, obj, "max_concurrent_requests").map_err(located)?.map(|m| u32::try_from(m).unwrap_or(u32::MAX));
    let spec_decode = spec_decode(file, obj).map_err(located)?;
    let mut keys: Vec<&str> = vec!["output_throughput"];
    keys.extend(LATENCY_KEYS.iter().filter(|(f, _)| latency.values().iter().any(|(k, _)| k == f)).map(|(_, k)| *k));
    if request_rate.is_some() {
        keys.push("request_rate");
    }
    if max_concurrent_requests.is_some() {
        keys.push("max_concurrent_requests");
    }
    if spec_decode.is_some() {
        keys.extend(SPEC_DECODE_KEYS.iter().filter(|k| obj.get(**k).is_some_and(|v| !v.is_null())));
    }
    let quote = quote_of(text, &keys);
    let num_prompts = obj.get("num_prompts").and_then(Value::as_u64);
    Ok(Run {
        file: file.to_string(),
        line,
        source: source.to_string(),
        model_id: obj.get("model_id").and_then(Value::as_str).map(str::to_string),
        concurrency,
        concurrency_how,
        output_tok_s,
        quote,
        isl: total_in / completed,
        osl: total_out / completed,
        completed: completed as u64,
        failed,
        num_prompts,
        latency,
        request_rate,
        max_concurrent_requests,
        spec_decode,
        metadata: metadata(obj),
    })
}

/// Latency fields of a point and the result keys they are read from (milliseconds both).
const LATENCY_KEYS: [(&str, &str); 12] = [
    ("ttft_ms", "mean_ttft_ms"),
    ("median_ttft_ms", "median_ttft_ms"),
    ("p99_ttft_ms", "p99_ttft_ms"),
    ("tpot_ms", "mean_tpot_ms"),
    ("median_tpot_ms", "median_tpot_ms"),
    ("p99_tpot_ms", "p99_tpot_ms"),
    ("itl_ms", "mean_itl_ms"),
    ("median_itl_ms", "median_itl_ms"),
    ("p99_itl_ms", "p99_itl_ms"),
    ("e2el_ms", "mean_e2el_ms"),
    ("median_e2el_ms", "median_e2el_ms"),
    ("p99_e2el_ms", "p99_e2el_ms"),
];

fn clear_latency(l: &mut PointLatency, key: &str) {
    let slot = match key {
        "ttft_ms" => &mut l.ttft_ms,
        "median_ttft_ms" => &mut l.median_ttft_ms,
        "p99_ttft_ms" => &mut l.p99_ttft_ms,
        "tpot_ms" => &mut l.tpot_ms,
        "median_tpot_ms" => &mut l.median_tpot_ms,
        "p99_tpot_ms" => &mut l.p99_tpot_ms,
        "itl_ms" => &mut l.itl_ms,
        "median_itl_ms" => &mut l.median_itl_ms,
        "p99_itl_ms" => &mut l.p99_itl_ms,
        "e2el_ms" => &mut l.e2el_ms,
        "median_e2el_ms" => &mut l.median_e2el_ms,
        _ => &mut l.p99_e2el_ms,
    };
    *slot = None;
}

/// The speculative decoding keys of a `vllm bench serve` result (vllm/benchmarks/serve.py), present only
/// when the server runs speculative decoding and exposes its counters.
const SPEC_DECODE_KEYS: [&str; 6] = [
    "spec_decode_acceptance_rate",
    "spec_decode_acceptance_length",
    "spec_decode_num_drafts",
    "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens",
    "spec_decode_per_position_acceptance_rates",
];

/// A number that may be absent: `None` when missing or null (Python's NaN), an error when it is another type.
fn optional_number(file: &str, obj: &Map<String, Value>, key: &str) -> Result<Option<f64>, Diagnostic> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => finite(Some(x)).map(Some).ok_or_else(|| {
            Diagnostic::error(file, format!("/{key}"), format!("\"{key}\" must be a number, found {x}"))
                .with_hint("vLLM writes a number here; the file looks edited")
        }),
    }
}

/// A count that may be absent (missing or null); a negative or fractional number is an error.
fn count(file: &str, obj: &Map<String, Value>, key: &str) -> Result<Option<u64>, Diagnostic> {
    match optional_number(file, obj, key)? {
        None => Ok(None),
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) => Ok(Some(x as u64)),
        Some(x) => {
            Err(Diagnostic::error(file, format!("/{key}"), format!("\"{key}\" must be a whole number, found {x}"))
                .with_hint("vLLM writes a count here; the file looks edited"))
        }
    }
}

/// `request_rate`: requests per second, or `"inf"` (vLLM's word for no limit: each client sends as soon as
/// its last request ends).
fn request_rate(file: &str, obj: &Map<String, Value>) -> Result<Option<RequestRate>, Diagnostic> {
    let bad = |x: &Value| {
        Diagnostic::error(
            file,
            "/request_rate",
            format!("\"request_rate\" must be a positive number or \"inf\", found {x}"),
        )
        .with_hint("vLLM writes the --request-rate it ran with, \"inf\" when unbounded")
    };
    match obj.get("request_rate") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if matches!(s.to_ascii_lowercase().as_str(), "inf" | "infinity") => {
            Ok(Some(RequestRate::Unbounded(Unbounded::Inf)))
        }
        Some(x) => match finite(Some(x)) {
            Some(r) if r > 0.0 => Ok(Some(RequestRate::PerSecond(r))),
            _ => Err(bad(x)),
        },
    }
}

/// The `spec_decode_*` fields as one value; `None` when the result has none.
fn spec_decode(file: &str, obj: &Map<String, Value>) -> Result<Option<SpecDecode>, Diagnostic> {
    let n = |key: &str| optional_number(file, obj, key);
    let key = "spec_decode_per_position_acceptance_rates";
    let per_position = match obj.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(xs)) => xs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                finite(Some(x)).ok_or_else(|| {
                    Diagnostic::error(
                        file,
                        format!("/{key}/{i}"),
                        format!("a per-position acceptance rate must be a number, found {x}"),
                    )
                    .with_hint("vLLM writes one share per draft position")
                })
            })
            .collect::<Result<_, _>>()?,
        Some(x) => {
            return Err(Diagnostic::error(
                file,
                format!("/{key}"),
                format!("\"{key}\" must be a list of numbers, found {x}"),
            )
            .with_hint("vLLM writes one share per draft position"))
        }
    };
    let sd = SpecDecode {
        acceptance_rate: n("spec_decode_acceptance_rate")?,
        acceptance_length: n("spec_decode_acceptance_length")?,
        num_drafts: count(file, obj, "spec_decode_num_drafts")?,
        draft_tokens: count(file, obj, "spec_decode_draft_tokens")?,
        accepted_tokens: count(file, obj, "spec_decode_accepted_tokens")?,
        per_position_acceptance_rates: per_position,
    };
    let empty = sd.acceptance_rate.is_none()
        && sd.acceptance_length.is_none()
        && sd.num_drafts.is_none()
        && sd.draft_tokens.is_none()
        && sd.accepted_tokens.is_none()
        && sd.per_position_acceptance_rates.is_empty();
    Ok((!empty).then_some(sd))
}

/// Whether a top-level key of a result holds a measurement (imported into its own field, or a statistic
/// this importer does not keep) rather than the run's setup.
fn is_measurement(key: &str) -> bool {
    const MEASURED: [&str; 17] = [
        "duration",
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "request_goodput",
        "output_throughput",
        "total_token_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
        "max_concurrency",
        "request_rate",
        "rtfx",
        "input_throughput",
        "goodput",
        "errors",
    ];
    let statistic = key.ends_with("_ms")
        && (key.starts_with("mean_")
            || key.starts_with("median_")
            || key.starts_with("std_")
            || (key.starts_with('p') && key[1..].starts_with(|c: char| c.is_ascii_digit())));
    MEASURED.contains(&key) || statistic || key.starts_with("spec_decode_")
}

/// The run's setup and metadata: every top-level text, number or boolean that is not a measurement (`date`,
/// `backend`, `endpoint_type`, `label`, `model_id`, `tokenizer_id`, `num_prompts`, `burstiness`, and the keys
/// `--metadata KEY=VALUE` adds), as text; null values and per-request lists are left out.
fn metadata(obj: &Map<String, Value>) -> BTreeMap<String, String> {
    crate::stats::map_of(obj.iter().filter(|(k, _)| !is_measurement(k)).filter_map(|(k, v)| match v {
        Value::String(s) => Some((k.clone(), s.clone())),
        Value::Number(_) | Value::Bool(_) => Some((k.clone(), v.to_string())),
        _ => None,
    }))
}

/// The verbatim fragments of `keys` in the result text, in file order, joined by ` … ` (what an ellipsis
/// does in a quotation): each number a point states is in its quote, and each piece is in the file.
fn quote_of(text: &str, keys: &[&str]) -> String {
    let mut pieces: Vec<(usize, &str)> = keys
        .iter()
        .filter_map(|k| fragment(text, &[Step::Key(k)]))
        .map(|f| (f.as_ptr() as usize - text.as_ptr() as usize, f))
        .collect();
    crate::stats::sort_by_key(&mut pieces, |p| p.0);
    pieces.dedup_by_key(|p| p.0);
    pieces.iter().map(|p| p.1).collect::<Vec<_>>().join(" … ")
}

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

use super::{
    base_name, check_size, finite, fragment, import_source, parse_json, replace_python_non_finite, shift_position,
    Input, Step,
};
use crate::dataset::schema::{From, Mode, PointRecord, Series, SweepFile, SCHEMA_VERSION};
use crate::diagnostic::Diagnostic;
use crate::json_text::split_records;
use serde_json::Value;

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
        members.sort_by_key(|r| r.concurrency);
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
                PointRecord {
                    concurrency: f64::from(r.concurrency),
                    output_tok_s: r.output_tok_s,
                    flags: Vec::new(),
                    from: From { source: r.source.clone(), quote: r.quote.clone() },
                    note: Some(note),
                }
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
    let quote = fragment(text, &[Step::Key("output_throughput")]).unwrap_or_default().to_string();
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
    })
}

//! The `sim-core` command line: reads files, calls the library, renders tables, sets the exit code.

mod fsio;
mod import;
mod out;

use clap::{Parser, Subcommand, ValueEnum};
use out::{Out, Table};
use sim_core::dataset::{load, schema::ScenarioFile, validate, SourceText};
use sim_core::diagnostic::{self, Diagnostic};
use sim_core::fit::FitSet;
use fsio::{load_dir, read_seeds};
use sim_core::model::{predict, Coefficients};
use sim_core::{report, scenario, Mode};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sim-core",
    version,
    about = "Validate the twotower datasets and predict what a second GPU machine buys for LLM inference"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Table,
    Csv,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum FitArg {
    All,
    Single,
}

#[derive(Subcommand)]
enum Command {
    /// Check every data file against the schema and for meaning, and the model against the accuracy targets.
    Validate {
        dir: PathBuf,
        /// Directory of the seed texts; when given, every quote must occur verbatim in its seed.
        #[arg(long)]
        seeds: Option<PathBuf>,
        /// Skip the model accuracy check (schema and meaning only).
        #[arg(long)]
        no_model_check: bool,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// List every published throughput point.
    Points {
        dir: PathBuf,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Predict a sweep for one scenario file.
    Predict {
        scenario: PathBuf,
        /// Only this mode (default: the scenario's modes).
        #[arg(long)]
        mode: Option<String>,
        /// Comma-separated concurrency levels (default: the scenario's).
        #[arg(long, value_delimiter = ',')]
        concurrency: Vec<u32>,
        /// Dataset directory the scenario's ids refer to (default: the scenario's parent's parent).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Use coefficients fitted on this set of the dataset's points (default: all).
        #[arg(long, value_enum, default_value = "all")]
        fit: FitArg,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Every measured point next to its prediction, with error statistics.
    Report {
        dir: PathBuf,
        #[arg(long, value_enum, default_value = "all")]
        fit: FitArg,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// What a second machine buys: one machine, TP2 and PD across the scenario's concurrency range, with a
    /// recommendation.
    Plan {
        scenario: PathBuf,
        /// Dataset directory the scenario's ids refer to (default: the scenario's parent's parent).
        #[arg(long)]
        data: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Fit the free coefficients to a team's own single-machine sweep (dataset sweep files, e.g. from
    /// `sim-core import vllm-bench`) and print the scenario with its calibration, ready for `plan` and `predict`.
    Calibrate {
        scenario: PathBuf,
        /// Sweep files with the team's measured points (single-machine points are fitted; others are ignored).
        #[arg(required = true)]
        measurements: Vec<PathBuf>,
        /// Dataset directory the scenario's ids refer to (default: the scenario's parent's parent).
        #[arg(long)]
        data: Option<PathBuf>,
    },
    /// Read a Hugging Face style config.json and print a model description to paste into a scenario
    /// (`"model": {"describe": ...}`).
    DescribeModel {
        config: PathBuf,
        /// Id to give the model (default: the config's folder name).
        #[arg(long)]
        id: Option<String>,
        /// Bits per weight as loaded: 4.5 for NVFP4, 8 for FP8, 16 for BF16.
        #[arg(long, default_value_t = 16.0)]
        bits: f64,
    },
    /// Turn measurement files (nccl-tests output, vLLM benchmark results) into a dataset file `validate` accepts.
    Import {
        #[command(subcommand)]
        what: import::ImportCommand,
    },
    /// Predicted against measured bus bandwidth of every collective.
    Fabric {
        dir: PathBuf,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = Out::stdout();
    let code = match run(cli.command, &mut out) {
        Ok(code) => code,
        Err(CliError::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(CliError::Invalid(diags)) => {
            for d in &diags {
                eprintln!("{d}");
            }
            ExitCode::from(1)
        }
    };
    // A reader that closed the pipe early (`| head`) is not an error.
    if out.broken_pipe() {
        return ExitCode::SUCCESS;
    }
    code
}

enum CliError {
    Usage(String),
    Invalid(Vec<Diagnostic>),
}

fn fit_set(f: FitArg) -> FitSet {
    match f {
        FitArg::All => FitSet::All,
        FitArg::Single => FitSet::Single,
    }
}

/// Loads a dataset directory; IO problems are usage errors, data problems are returned as diagnostics.
fn load_dataset(dir: &Path) -> Result<(sim_core::dataset::Dataset, Vec<Diagnostic>), CliError> {
    let files = load_dir(dir).map_err(CliError::Usage)?;
    if files.is_empty() {
        return Err(CliError::Usage(format!("{}: no .json files found", dir.display())));
    }
    Ok(load(&files))
}

/// Loads a dataset and refuses to go on if it has errors.
fn load_valid(dir: &Path) -> Result<sim_core::dataset::Dataset, CliError> {
    let (ds, mut diags) = load_dataset(dir)?;
    diags.extend(validate::check(&ds, None));
    diags.retain(Diagnostic::is_error);
    if diags.is_empty() {
        Ok(ds)
    } else {
        diagnostic::sort(&mut diags);
        Err(CliError::Invalid(diags))
    }
}

fn run(cmd: Command, out: &mut Out) -> Result<ExitCode, CliError> {
    match cmd {
        Command::Validate { dir, seeds, no_model_check, format } => {
            let seeds = match seeds {
                Some(s) => Some(read_seeds(&s).map_err(CliError::Usage)?),
                None => None,
            };
            let (ds, mut diags) = load_dataset(&dir)?;
            diags.extend(validate::check(&ds, seeds.as_ref()));
            let schema_ok = !diags.iter().any(Diagnostic::is_error);
            if schema_ok && !no_model_check {
                diags.extend(report::model_check(&ds));
            }
            diagnostic::sort(&mut diags);
            let errors = diags.iter().filter(|d| d.is_error()).count();
            if format == Format::Json {
                out.line(&serde_json::to_string_pretty(&diags).unwrap_or_default());
            } else {
                for d in &diags {
                    out.line(&d.to_string());
                }
                let files = ds.raw.len();
                let points = ds.points().len();
                if errors == 0 {
                    out.line(&format!(
                        "ok: {files} files, {points} points, {} claims valid{}{}",
                        ds.claims.len(),
                        if seeds.is_some() { ", quotes verbatim in the seeds" } else { "" },
                        if no_model_check { "" } else { ", model within the accuracy targets" }
                    ));
                } else {
                    out.line(&format!("{errors} error(s) in {}", dir.display()));
                }
            }
            Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Points { dir, format } => {
            let ds = load_valid(&dir)?;
            let mut t =
                Table::new(&["model", "mode", "isl", "osl", "concurrency", "output_tok_s", "flags", "source", "quote"]);
            for p in ds.points() {
                let flags: Vec<_> = p.flags.iter().map(|f| f.name()).collect();
                t.row(vec![
                    p.model,
                    p.mode.name().into(),
                    p.isl.to_string(),
                    p.osl.to_string(),
                    p.concurrency.to_string(),
                    fmt_num(p.output_tok_s),
                    flags.join(";"),
                    p.source,
                    p.quote,
                ]);
            }
            out.table(&t, format == Format::Csv, format == Format::Json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Plan { scenario: path, data, format } => {
            let (ds, sc, s) = load_scenario(&path, data)?;
            let k = coefficients_for(&ds, &sc, FitSet::All);
            let plan = sim_core::plan::plan(&s, &k);
            // A calibrated scenario carries how well its calibration matched the team's sweep.
            let calibrated = sc.calibration.as_ref().map(|_| sc.description.clone().unwrap_or_default());
            if format == Format::Json {
                let mut v = serde_json::to_value(&plan).unwrap_or_default();
                if let (Some(obj), Some(c)) = (v.as_object_mut(), &calibrated) {
                    obj.insert("calibration".into(), serde_json::Value::String(c.clone()));
                }
                out.line(&serde_json::to_string_pretty(&v).unwrap_or_default());
                return Ok(ExitCode::SUCCESS);
            }
            let mut t = Table::new(&[
                "isl",
                "osl",
                "concurrency",
                "single_tok_s",
                "tp2_tok_s",
                "pd_tok_s",
                "best",
                "gain",
                "single_bound",
                "tp2_bound",
                "pd_bound",
                "single_ttft_s",
                "tp2_ttft_s",
                "pd_ttft_s",
                "single_tpot_ms",
                "tp2_tpot_ms",
                "pd_tpot_ms",
            ]);
            for r in &plan.rows {
                t.row(vec![
                    r.isl.to_string(),
                    r.osl.to_string(),
                    r.concurrency.to_string(),
                    fmt_num(r.single.output_tok_s),
                    fmt_num(r.tp2.output_tok_s),
                    fmt_num(r.pd.output_tok_s),
                    r.best.name().into(),
                    format!("{:.2}", r.gain),
                    r.single.bottleneck.name().into(),
                    r.tp2.bottleneck.name().into(),
                    r.pd.bottleneck.name().into(),
                    fmt3(r.single.ttft_s),
                    fmt3(r.tp2.ttft_s),
                    fmt3(r.pd.ttft_s),
                    fmt3(r.single.tpot_s * 1e3),
                    fmt3(r.tp2.tpot_s * 1e3),
                    fmt3(r.pd.tpot_s * 1e3),
                ]);
            }
            out.table(&t, format == Format::Csv, false);
            if format == Format::Table {
                out.line("");
                for p in &plan.placements {
                    let pl = &p.placement;
                    out.line(&format!("{:<6} per GPU: {:.1} GB weights in HBM, {:.1} GB spilled to CPU memory, {:.1} GB pinned in CPU memory, {:.1} GB KV pool", p.mode.name(), pl.hbm_weight_bytes() / 1e9, pl.spilled_bytes() / 1e9, pl.pinned_cpu_bytes / 1e9, pl.kv_pool_bytes / 1e9));
                }
                if let Some(c) = &calibrated {
                    out.line(&format!("calibration: {c}"));
                }
                out.line(&format!("recommended: {} ({})", plan.recommended_mode.name(), plan.reason));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Predict { scenario: path, mode, concurrency, data, fit, format } => {
            let (ds, sc, s) = load_scenario(&path, data)?;
            let modes = match mode {
                Some(m) => vec![Mode::parse(&m)
                    .ok_or_else(|| CliError::Usage(format!("unknown mode `{m}`; use single, tp2 or pd")))?],
                None => s.modes.clone(),
            };
            let conc = if concurrency.is_empty() { s.concurrency.clone() } else { concurrency };
            if let Some(bad) = conc.iter().find(|c| **c == 0 || **c > 4096) {
                return Err(CliError::Usage(format!("concurrency {bad} outside 1..=4096")));
            }
            let k = coefficients_for(&ds, &sc, fit_set(fit));
            let mut t = Table::new(&[
                "mode",
                "isl",
                "osl",
                "concurrency",
                "output_tok_s",
                "ttft_s",
                "tpot_ms",
                "step_ms",
                "resident",
                "max_resident",
                "bottleneck",
            ]);
            for w in &s.workloads {
                for m in &modes {
                    for c in &conc {
                        let p = predict(&s, &k, *m, w.isl, w.osl, *c);
                        t.row(vec![
                            m.name().into(),
                            w.isl.to_string(),
                            w.osl.to_string(),
                            c.to_string(),
                            fmt_num(p.output_tok_s),
                            fmt3(p.ttft_s),
                            fmt3(p.tpot_s * 1e3),
                            fmt3(p.step_s * 1e3),
                            fmt3(p.resident_seqs),
                            fmt_num(p.max_resident_seqs),
                            p.bottleneck.name().into(),
                        ]);
                    }
                }
            }
            out.table(&t, format == Format::Csv, format == Format::Json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Report { dir, fit, format } => {
            let ds = load_valid(&dir)?;
            let r = report::build(&ds, fit_set(fit)).map_err(CliError::Invalid)?;
            if format == Format::Json {
                out.line(&serde_json::to_string_pretty(&r).unwrap_or_default());
                return Ok(ExitCode::SUCCESS);
            }
            let mut t = Table::new(&[
                "model",
                "mode",
                "isl",
                "osl",
                "concurrency",
                "measured_tok_s",
                "predicted_tok_s",
                "ape_pct",
                "role",
                "flags",
                "bottleneck",
            ]);
            for row in &r.rows {
                t.row(vec![
                    row.model.clone(),
                    row.mode.name().into(),
                    row.isl.to_string(),
                    row.osl.to_string(),
                    row.concurrency.to_string(),
                    fmt_num(row.measured_tok_s),
                    fmt_num(row.predicted_tok_s),
                    format!("{:.1}", row.ape),
                    row.role.into(),
                    row.flags.join(";"),
                    row.bottleneck.clone(),
                ]);
            }
            out.table(&t, format == Format::Csv, false);
            if format == Format::Table {
                render_summary(out, &r);
                let stated = report::stated_values(&ds, &r.calibration.coefficients);
                if !stated.is_empty() {
                    out.line("");
                    out.line("values stated as a band or without a concurrency (shown, never counted):");
                    for v in &stated {
                        let preds: Vec<String> = v
                            .predicted
                            .iter()
                            .map(|(c, p, ok)| format!("{c}: {}{}", fmt_num(*p), if *ok { "" } else { " (outside)" }))
                            .collect();
                        out.line(&format!(
                            "  {} {} {}/{}: {} | predicted {}",
                            v.model,
                            v.mode.name(),
                            v.isl,
                            v.osl,
                            v.stated,
                            preds.join(", ")
                        ));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate { scenario: path, measurements, data } => {
            let (ds, mut sc, s) = load_scenario(&path, data)?;
            let mut files = Vec::new();
            for m in &measurements {
                let text = std::fs::read_to_string(m).map_err(|e| CliError::Usage(format!("{}: {e}", m.display())))?;
                let name = m.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                files.push(SourceText { path: format!("sweeps/{name}"), text });
            }
            let (mds, diags) = load(&files);
            let errors: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
            if !errors.is_empty() {
                return Err(CliError::Invalid(errors));
            }
            let base = coefficients_for(&ds, &sc, FitSet::All);
            let cal = sim_core::fit::calibrate_team(&base, &s, &mds.points()).map_err(CliError::Usage)?;
            let (points, stats) = (&cal.points, cal.stats);
            let map = cal.coefficients.calibration_map(&s.model);
            sc.calibration = Some(map);
            sc.id = format!("{}-calibrated", sc.id);
            sc.description = Some(
                format!(
                    "{} Calibrated on {} single-machine points from {}: median error {:.1}%, 90th percentile {:.1}%.",
                    sc.description.clone().unwrap_or_default(),
                    points.len(),
                    measurements.iter().map(|m| m.display().to_string()).collect::<Vec<_>>().join(", "),
                    stats.median_ape,
                    stats.p90_ape
                )
                .trim()
                .to_string(),
            );
            eprintln!(
                "calibrated on {} points: median error {:.1}%, 90th percentile {:.1}%",
                points.len(),
                stats.median_ape,
                stats.p90_ape
            );
            out.line(&serde_json::to_string_pretty(&sc).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Command::DescribeModel { config, id, bits } => {
            let text =
                std::fs::read_to_string(&config).map_err(|e| CliError::Usage(format!("{}: {e}", config.display())))?;
            let id = id.unwrap_or_else(|| {
                config
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "model".into())
            });
            let d = sim_core::describe::ModelDescription::from_hf_config(&id, &text, bits)
                .map_err(|e| CliError::Usage(format!("{}: {e}", config.display())))?;
            d.to_spec().map_err(|e| CliError::Usage(format!("{}: {e}", config.display())))?;
            out.line(&serde_json::to_string_pretty(&serde_json::json!({ "describe": d })).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Command::Import { what } => match import::run(what) {
            Ok(json) => {
                out.line(&json);
                Ok(ExitCode::SUCCESS)
            }
            Err(msg) => Err(CliError::Invalid(vec![msg])),
        },
        Command::Fabric { dir, format } => {
            let ds = load_valid(&dir)?;
            let rows = report::fabric_rows(&ds);
            let mut t = Table::new(&[
                "collective",
                "bytes",
                "measured_busbw_gbps",
                "predicted_busbw_gbps",
                "column",
                "ape_pct",
                "efficiency",
            ]);
            for r in &rows {
                let ape = (r.predicted_busbw_gbps - r.measured_busbw_gbps).abs() / r.measured_busbw_gbps * 100.0;
                t.row(vec![
                    r.collective.name().into(),
                    format!("{:.0}", r.bytes),
                    format!("{:.3}", r.measured_busbw_gbps),
                    format!("{:.3}", r.predicted_busbw_gbps),
                    r.column.into(),
                    format!("{ape:.2}"),
                    format!("{:.4}", r.efficiency),
                ]);
            }
            out.table(&t, format == Format::Csv, format == Format::Json);
            if format == Format::Table {
                let mut peaks: Vec<_> = rows.iter().filter(|r| r.column == "peak").collect();
                peaks.sort_by(|a, b| b.measured_busbw_gbps.total_cmp(&a.measured_busbw_gbps));
                let measured: Vec<_> = peaks.iter().map(|r| r.collective.name()).collect();
                peaks.sort_by(|a, b| b.predicted_busbw_gbps.total_cmp(&a.predicted_busbw_gbps));
                let predicted: Vec<_> = peaks.iter().map(|r| r.collective.name()).collect();
                out.line("");
                out.line(&format!("measured order of peaks:  {}", measured.join(" > ")));
                out.line(&format!("predicted order of peaks: {}", predicted.join(" > ")));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Reads a scenario file and resolves it against its dataset (given, or the scenario's grandparent folder).
fn load_scenario(
    path: &Path,
    data: Option<PathBuf>,
) -> Result<(sim_core::dataset::Dataset, ScenarioFile, scenario::Scenario), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    let data_dir = data.unwrap_or_else(|| {
        path.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
    });
    let ds = load_valid(&data_dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (one, mut diags) = load(&[SourceText { path: name.clone(), text }]);
    let Some(sc) = one.scenarios.values().next().cloned() else {
        if diags.is_empty() {
            diags.push(
                Diagnostic::error(&name, "/kind", "not a scenario file")
                    .with_hint("a scenario has \"kind\": \"scenario\""),
            );
        }
        return Err(CliError::Invalid(diags));
    };
    let s = scenario::resolve(&ds, &name, &sc).map_err(CliError::Invalid)?;
    Ok((ds, sc, s))
}

/// Coefficients for a scenario: its own calibration if it has one, else fitted on the dataset.
fn coefficients_for(ds: &sim_core::dataset::Dataset, sc: &ScenarioFile, set: FitSet) -> Coefficients {
    let (scenarios, _) = report::scenarios_by_model(ds);
    let mut k = sim_core::fit::fit(&scenarios, &ds.points(), set).coefficients;
    if let Some(cal) = &sc.calibration {
        k.apply_calibration_map(&model_id(sc), cal);
    }
    k
}

/// The model id a scenario's per-model coefficients are keyed by.
fn model_id(sc: &ScenarioFile) -> String {
    match &sc.model {
        sim_core::dataset::schema::ModelRef::Id(id) => id.clone(),
        sim_core::dataset::schema::ModelRef::Inline(m) => m.id.clone(),
        sim_core::dataset::schema::ModelRef::Described { describe } => describe.id.clone(),
    }
}

fn render_summary(out: &mut Out, r: &report::Report) {
    out.line("");
    out.line(&format!(
        "fit: {} ({} points, rms log error {:.3}, {} evaluations)",
        r.calibration.set_description(),
        r.calibration.points_used,
        r.calibration.rms_log_error,
        r.calibration.evaluations
    ));
    for (name, value, basis) in r.calibration.coefficients.describe(r.calibration.set_description()) {
        out.line(&format!("  {name:<28} {value:>12.6}  {basis}"));
    }
    out.line("");
    let mut t = Table::new(&[
        "group",
        "fitted_n",
        "fitted_median_ape",
        "fitted_p90_ape",
        "predicted_n",
        "predicted_median_ape",
        "predicted_p90_ape",
    ]);
    let cells = |s: Option<report::ErrorStats>| match s {
        Some(s) => vec![s.n.to_string(), format!("{:.1}%", s.median_ape), format!("{:.1}%", s.p90_ape)],
        None => vec!["0".into(), "-".into(), "-".into()],
    };
    for g in r.by_model.iter().chain(r.by_mode.iter()).chain(std::iter::once(&r.overall)) {
        let mut row = vec![g.group.clone()];
        row.extend(cells(g.fitted));
        row.extend(cells(g.predicted));
        t.row(row);
    }
    out.table(&t, false, false);
    let flagged: Vec<_> = r.rows.iter().filter(|x| x.role == "flagged").collect();
    if !flagged.is_empty() {
        out.line("");
        out.line("flagged points (reported as collected; excluded from fit and statistics):");
        for x in flagged {
            out.line(&format!(
                "  {} {} {}/{} at {}: measured {}, predicted {} ({:.0}% off) [{}]",
                x.model,
                x.mode.name(),
                x.isl,
                x.osl,
                x.concurrency,
                fmt_num(x.measured_tok_s),
                fmt_num(x.predicted_tok_s),
                x.ape,
                x.flags.join(";")
            ));
        }
    }
    out.line("");
    out.line("TP2 against PD at 32 streams (the model's comparison, not a lookup):");
    for c in &r.mode_comparisons {
        out.line(&format!(
            "  {} {}/{}: single {} | tp2 {} | pd {} -> {}: {}",
            c.model,
            c.modes.isl,
            c.modes.osl,
            fmt_num(c.modes.single.output_tok_s),
            fmt_num(c.modes.tp2.output_tok_s),
            fmt_num(c.modes.pd.output_tok_s),
            c.better.name(),
            c.reason
        ));
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn fmt3(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "inf".into()
    }
}

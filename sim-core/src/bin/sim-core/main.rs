//! The `sim-core` command line: parses arguments, reads files, asks `sim_core::explore` one question per
//! subcommand, hands the answer to `render`, and sets the exit code. No model arithmetic lives here.

mod fsio;
mod goodput;
mod import;
mod markdown;
mod out;
mod parallel;
mod plan_cmd;
mod rate_sweep;
mod render;
mod render_protocol;

use clap::{Parser, Subcommand, ValueEnum};
use fsio::{load_dir, read_seeds};
use out::{warn, Out, OutState};
use sim_core::dataset::{self, SourceText};
use sim_core::diagnostic::{self, Diagnostic};
use sim_core::explore::stored_fits::{self, StaleFits};
use sim_core::explore::{ScenarioRun, Workspace};
use sim_core::fit::FitSet;
use sim_core::Mode;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The exit codes, as `--help` states them.
const EXIT_CODES: &str = "Exit status:
  0  success: the data are valid, the claims reproduce, the answer was written
  1  a finding: the dataset, a scenario file or a measurement file is invalid (every problem is listed on stderr
     with its file, JSON pointer, line:column and a hint), or a claim the data do not reproduce
  2  usage or IO error: bad arguments (e.g. --concurrency 0), a file or folder that cannot be read, or output
     that cannot be written (a full disk). A reader that closes the pipe early (`| head`) ends output quietly
     and keeps the status a finding gave.";

#[derive(Parser)]
#[command(
    name = "sim-core",
    version,
    about = "Validate the twotower datasets and predict what a second GPU machine buys for LLM inference",
    long_about = format!(
        "Validate the twotower datasets and predict what a second GPU machine buys for LLM inference.\n\n{EXIT_CODES}"
    ),
    after_help = "Exit status: 0 success, 1 a finding (invalid data, a claim not reproduced), 2 usage or IO error \
                  (`--help` says more)."
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

/// `report`'s formats: the common three, and the Markdown summary the documents embed.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReportFormat {
    Table,
    Csv,
    Json,
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
enum FitArg {
    All,
    Single,
}

#[derive(Subcommand)]
enum Command {
    /// Check every data file against the schema and for meaning, and the model against the accuracy targets
    /// `data/accuracy.json` enforces (the protocol's targets are counted, `report` lists them).
    Validate {
        dir: PathBuf,
        /// Directory of the seed texts; when given, every quote must occur verbatim in its seed.
        #[arg(long)]
        seeds: Option<PathBuf>,
        /// Skip the model accuracy check (schema and meaning only).
        #[arg(long)]
        no_model_check: bool,
        /// Fit again and store the fits under <DIR>/fitted/ (what every other command then reads), instead of
        /// checking that the stored ones are this data's and this build's.
        #[arg(long)]
        refit: bool,
        /// table: diagnostics on stderr as cargo prints them, and a closing line on stdout; csv: one diagnostic
        /// a row on stdout (file,pointer,line,column,severity,message,hint); json: the diagnostics as an array on
        /// stdout.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Every derived claim of the dataset's claims files (the report's "11x", "+30%"): its operands, their
    /// values, and whether the data reproduce the stated figure (exit 1 when one is not reproduced).
    Claims {
        dir: PathBuf,
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
        #[arg(long, value_parser = mode_parser())]
        mode: Option<Mode>,
        /// Comma-separated concurrency levels, each in 1..=4096 (default: the scenario's).
        #[arg(long, value_delimiter = ',')]
        concurrency: Vec<u32>,
        #[command(flatten)]
        open: rate_sweep::RateSweep,
        /// Dataset directory the scenario's ids refer to (default: the scenario's parent's parent).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Use coefficients fitted on this set of the dataset's points (default: all).
        #[arg(long, value_enum, default_value = "all")]
        fit: FitArg,
        /// A kernel table of your GPU (`scripts/collect-kernels.py --out`), used in place of the dataset's table
        /// of that GPU; give it more than once for several GPUs.
        #[arg(long, value_name = "FILE")]
        kernels: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Every measured point next to its prediction, with error statistics.
    Report {
        dir: PathBuf,
        #[arg(long, value_enum, default_value = "all")]
        fit: FitArg,
        /// `markdown`: the accuracy summary the documents embed (protocol, latencies, implausible coefficients).
        #[arg(long, value_enum, default_value = "table")]
        format: ReportFormat,
        /// Also print how the headline errors move when each assumed value is halved and doubled (a few seconds).
        #[arg(long)]
        sensitivity: bool,
    },
    /// What a second machine buys: one machine, TP2, PD and two copies behind a router (dp2) across the
    /// scenario's concurrency range, with a recommendation; a scenario file, or --model and --hardware.
    #[command(long_about = plan_about())]
    Plan(Box<plan_cmd::PlanArgs>),
    /// Every engine profile of a dataset: how it was obtained and its coefficients.
    Engines {
        dir: PathBuf,
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
        /// A kernel table of your GPU (`scripts/collect-kernels.py --out`), used in place of the dataset's table
        /// of that GPU; give it more than once for several GPUs.
        #[arg(long, value_name = "FILE")]
        kernels: Vec<PathBuf>,
    },
    /// Read a Hugging Face style config.json and print a model description to paste into a scenario
    /// (`"model": {"describe": ...}`).
    DescribeModel {
        config: PathBuf,
        /// Id to give the model (default: the config's folder name).
        #[arg(long)]
        id: Option<String>,
        /// Bits per weight as loaded: 4.5 for NVFP4, 8 for FP8, 16 for BF16 (default: what the config's
        /// `quantization_config` says, else 16).
        #[arg(long)]
        bits: Option<f64>,
        /// Bits per weight of the layers outside the routed experts, when they differ (an NVFP4 checkpoint keeps
        /// attention, shared experts and the LM head at 8 or 16).
        #[arg(long)]
        dense_bits: Option<f64>,
        /// Tokens the model's own MTP layers draft per step, as vLLM's `--speculative-config
        /// '{"method":"mtp","num_speculative_tokens":N}'` (default 0: vLLM drafts only when told to).
        #[arg(long, default_value_t = 0.0)]
        draft_tokens: f64,
        /// The KV cache's element type, as vLLM's `--kv-cache-dtype` (fp8 halves every sequence's KV bytes).
        #[arg(long, default_value = "auto", value_parser = clap::builder::PossibleValuesParser::new(sim_core::describe::KV_CACHE_DTYPES.map(|(name, _)| name)))]
        kv_cache_dtype: String,
    },
    /// Write the JSON Schema of every kind of dataset file (sweep.json, model.json, ...) into a directory:
    /// what `data/schema/` ships and each data file names by "$schema".
    Schema { dir: PathBuf },
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version` (status 0) and usage errors (2), printed here so that a failed write of the
        // help is an IO error too.
        Err(e) => {
            let printed = e.print();
            let failed = printed.is_err_and(|p| p.kind() != std::io::ErrorKind::BrokenPipe);
            return ExitCode::from(if failed { USAGE } else { e.exit_code().clamp(0, 255) as u8 });
        }
    };
    let mut out = Out::stdout();
    let result = run(cli.command, &mut out);
    let written = out.finish();
    let code = match result {
        Ok(code) => code,
        Err(CliError::Usage(msg)) => {
            warn(&format!("error: {msg}"));
            USAGE
        }
        Err(CliError::Invalid(diags)) => {
            for line in findings(&diags) {
                warn(&line);
            }
            FINDING
        }
    };
    // A write that failed is an IO error whatever the command found; a reader that closed the pipe is not, and
    // leaves the command's own status (a finding stays 1).
    match written {
        OutState::Failed(e) => {
            warn(&format!("error: writing output: {e}"));
            ExitCode::from(USAGE)
        }
        OutState::Open | OutState::Closed => ExitCode::from(code),
    }
}

/// The most diagnostics a command other than `validate` prints before it counts the rest: a folder that is no
/// dataset (or several) gives thousands, and the first few say what is wrong.
const MAX_FINDINGS: usize = 20;

/// A command's findings as stderr lines: the first `MAX_FINDINGS` diagnostics, then how many more there are
/// and where to read them all.
fn findings(diags: &[Diagnostic]) -> Vec<String> {
    let mut lines: Vec<String> = diags.iter().take(MAX_FINDINGS).map(Diagnostic::to_string).collect();
    if diags.len() > MAX_FINDINGS {
        lines.push(format!(
            "... and {} more ({} in all; `sim-core validate <dataset>` lists every one)",
            diags.len() - MAX_FINDINGS,
            diags.len()
        ));
    }
    lines
}

/// Exit status of a finding: invalid data or input files, a claim the data do not reproduce.
const FINDING: u8 = 1;
/// Exit status of a usage or IO error.
const USAGE: u8 = 2;

/// `--mode`'s values, from the mode enum itself: clap lists them in `--help` and in the error for any other.
fn mode_parser() -> impl clap::builder::TypedValueParser<Value = Mode> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Mode::EVERY.map(Mode::name))
        .map(|name: String| Mode::parse(&name).unwrap_or(Mode::Single))
}

/// `plan --help`: the modes it compares, from the mode enum.
fn plan_about() -> String {
    let modes: Vec<String> = Mode::EVERY.iter().map(|m| format!("  {:<7} {}", m.name(), m.label())).collect();
    format!(
        "What a second machine buys: every mode across the scenario's concurrency range, with a recommendation.\n\n\
         Modes (the four-machine ones with --machines 4, or where a scenario's `modes` name them):\n{}\n\n\
         Ask with a scenario file, or with --model (an id or a config.json), --hardware (more than once to compare \
         machines) and --workload or --isl/--osl; --save writes the scenario those flags ask. The scenario file is \
         checked first: unknown hardware or model ids, a workload of 0 tokens and a concurrency outside 1..=4096 \
         are findings (exit 1) naming the file, the JSON pointer and its line:column; the same asked by flags are \
         usage errors (exit 2) naming the flag.",
        modes.join("\n")
    )
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

/// Reads a dataset directory into a workspace; IO problems are usage errors, data problems are diagnostics. The
/// workspace adopts the directory's stored fits where they are this data's and this build's (`fitted/`); stale
/// ones are set aside with a note, and it fits on demand.
fn open_workspace(dir: &Path, seeds: Option<&Path>) -> Result<Workspace, CliError> {
    let (ws, files) = load_workspace(dir, seeds)?;
    if let Some(stale) = adopt_stored_fits(dir, &files, &ws)? {
        warn(&format!(
            "note: {}: {stale}; fitting now instead (a minute or more); `sim-core validate --refit {}` stores \
             fresh fits",
            dir.join(stale.file()).display(),
            dir.display()
        ));
    }
    Ok(ws)
}

/// A dataset directory's texts and the workspace over them, without stored fits.
fn load_workspace(dir: &Path, seeds: Option<&Path>) -> Result<(Workspace, Vec<SourceText>), CliError> {
    one_dataset(dir)?;
    let files = load_dir(dir).map_err(CliError::Usage)?;
    if files.is_empty() {
        return Err(CliError::Usage(format!("{}: no .json files found", dir.display())));
    }
    let seeds = match seeds {
        Some(s) => Some(read_seeds(s).map_err(CliError::Usage)?),
        None => None,
    };
    let ws = Workspace::load(&files, seeds.as_ref());
    Ok((ws, files))
}

/// Adopts `dir`'s stored fits into `ws`; `Some` says why they are stale. A directory without `fitted/`, or data
/// with errors (nothing to fit), has nothing to adopt.
fn adopt_stored_fits(dir: &Path, files: &[SourceText], ws: &Workspace) -> Result<Option<StaleFits>, CliError> {
    if !ws.is_valid() {
        return Ok(None);
    }
    let stored = fsio::read_stored_fits(dir).map_err(CliError::Usage)?;
    if stored.is_empty() {
        return Ok(None);
    }
    Ok(ws.adopt_stored_fits(files, &stored).err())
}

/// A workspace that must be valid to go on: its errors end the command.
fn open_valid(dir: &Path) -> Result<Workspace, CliError> {
    let ws = open_workspace(dir, None)?;
    if ws.is_valid() {
        Ok(ws)
    } else {
        Err(CliError::Invalid(ws.errors()))
    }
}

/// A folder given as a dataset that is none but holds datasets below it (`--data ~/datasets` over `a/` and `b/`)
/// would load them all as one and report every id of one clashing with the other's: say so once instead.
fn one_dataset(dir: &Path) -> Result<(), CliError> {
    if dir.join(SOURCES).is_file() || !dir.is_dir() {
        return Ok(());
    }
    let mut found = Vec::new();
    datasets_below(dir, 3, &mut found);
    found.sort();
    match found.as_slice() {
        [] => Ok(()),
        [one] => Err(CliError::Usage(format!(
            "{}: not a dataset (no {SOURCES}), but it holds one: pass {}",
            dir.display(),
            one.display()
        ))),
        many => Err(CliError::Usage(format!(
            "{}: not a dataset (no {SOURCES}), but it holds {} datasets: {}; pass one of them",
            dir.display(),
            many.len(),
            many.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The file every dataset has at its root.
const SOURCES: &str = "sources.json";

/// The folders a dataset keeps its files in: a folder holding one of them is a dataset, with or without its
/// `sources.json`.
const DATASET_FOLDERS: [&str; 5] = ["hardware", "models", "sweeps", "scenarios", "engines"];

/// Folders below `dir` (down to `depth` levels) that are datasets: they hold a `sources.json` or one of a
/// dataset's folders (not looking inside those). A dataset's `schema/` folder names a schema `sources.json` and
/// is none.
fn datasets_below(dir: &Path, depth: u32, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() || path.file_name().is_some_and(|n| n == "schema") {
            continue;
        }
        if path.join(SOURCES).is_file() || DATASET_FOLDERS.iter().any(|f| path.join(f).is_dir()) {
            found.push(path);
        } else if depth > 1 {
            datasets_below(&path, depth - 1, found);
        }
    }
}

/// Reads a scenario file and resolves it against its dataset (given, or the scenario's grandparent folder).
/// Diagnostics name the file as it was given.
/// `--kernels`: each file a kernel table laid over `ws`'s dataset in place of the table of its GPU
/// (`Workspace::use_kernel_table`); a note on stderr says which it replaced.
fn use_kernel_tables(ws: &mut Workspace, tables: &[PathBuf]) -> Result<(), CliError> {
    for path in tables {
        let file = SourceText { path: path.display().to_string(), text: read_text(path)? };
        let replaced = ws.use_kernel_table(&file).map_err(CliError::Invalid)?;
        let instead = if replaced.is_empty() { String::new() } else { format!(" in place of {}", replaced.join(", ")) };
        warn(&format!("note: kernel table {}{instead}", path.display()));
    }
    Ok(())
}

fn open_scenario(
    path: &Path,
    data: Option<PathBuf>,
    set: FitSet,
    kernels: &[PathBuf],
) -> Result<(Workspace, ScenarioRun), CliError> {
    let text = read_text(path)?;
    let data_dir = match data {
        Some(dir) if dir.join(SOURCES).is_file() => dir,
        Some(dir) if !dir.is_dir() => {
            return Err(CliError::Usage(format!("--data {}: no such folder", dir.display())));
        }
        Some(dir) => {
            one_dataset(&dir)?;
            return Err(CliError::Usage(format!(
                "--data {}: not a dataset (no {SOURCES}); pass the folder the scenario's ids refer to (the \
                 bundled one is data/)",
                dir.display()
            )));
        }
        None => default_dataset_of(path)?,
    };
    let mut ws = open_valid(&data_dir)?;
    use_kernel_tables(&mut ws, kernels)?;
    let run = ws.scenario_from_text(&path.display().to_string(), &text, set).map_err(CliError::Invalid)?;
    Ok((ws, run))
}

/// The dataset a scenario given without `--data` resolves against: its grandparent folder (`data/` for
/// `data/scenarios/x.json`), when that folder is a dataset (it has `sources.json`). A scenario kept anywhere
/// else would otherwise load every JSON file around it and fail on ids it cannot know; say what to pass instead.
fn default_dataset_of(scenario: &Path) -> Result<PathBuf, CliError> {
    let dir = scenario.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    if dir.join(SOURCES).is_file() {
        Ok(dir)
    } else {
        Err(CliError::Usage(format!(
            "{}: its grandparent folder {} is not a dataset (no sources.json); pass the dataset its ids refer to \
             with --data (the bundled one is data/)",
            scenario.display(),
            dir.display()
        )))
    }
}

fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))
}

fn run(cmd: Command, out: &mut Out) -> Result<u8, CliError> {
    match cmd {
        Command::Validate { dir, seeds, no_model_check, refit, format } => {
            let (ws, files) = load_workspace(&dir, seeds.as_deref())?;
            let mut diags = ws.diagnostics.clone();
            if let Some(schemas) = fsio::read_schemas(&dir).map_err(CliError::Usage)? {
                diags.extend(dataset::validate::check_schema_files(&schemas));
            }
            // Fits stored for other data or another build would answer every later query wrongly: an error; the
            // model check still runs, on fits computed now.
            let stale = if refit || no_model_check { None } else { adopt_stored_fits(&dir, &files, &ws)? };
            if let Some(stale) = &stale {
                diags
                    .push(Diagnostic::error(stale.file(), "/stamp", format!("stored fits {stale}")).with_hint(
                        format!("`sim-core validate --refit {}` fits again and stores them", dir.display()),
                    ));
            }
            if ws.is_valid() && (refit || !no_model_check) {
                parallel::precompute(&ws, &[FitSet::All, FitSet::Single]);
            }
            if refit && ws.is_valid() {
                fsio::write_stored_fits(&dir, &ws.stored_fits(&files)).map_err(CliError::Usage)?;
                warn(&format!("stored the fits in {}", dir.join(stored_fits::FITTED_DIR).display()));
            }
            if ws.is_valid() && !no_model_check {
                diags.extend(ws.model_check());
                // The bands' coverage on the held-out points (`data/accuracy.json`'s `band_coverage`).
                diags.extend(ws.coverage_diagnostics());
            }
            diagnostic::sort(&mut diags);
            let errors = diags.iter().filter(|d| d.is_error()).count();
            match format {
                Format::Json => out.line(&render::json(&diags)),
                Format::Csv => out.table(&render::diagnostics(&diags), true, false),
                Format::Table => {
                    // Diagnostics on stderr, as every other command prints them and `--help` says; the closing
                    // line is the answer, on stdout.
                    for d in &diags {
                        warn(&d.to_string());
                    }
                    if errors == 0 {
                        out.line(&format!(
                            "ok: {} files, {} points, {} claims valid{}{}",
                            ws.dataset.raw.len(),
                            ws.points().len(),
                            ws.dataset.claims.len(),
                            if seeds.is_some() { ", quotes verbatim in the seeds" } else { "" },
                            if no_model_check { "" } else { ", model within the enforced accuracy targets" }
                        ));
                        if let Some(summary) = (!no_model_check).then(|| ws.accuracy_summary()).flatten() {
                            out.line(&summary.to_string());
                        }
                    } else {
                        out.line(&format!("{errors} error(s) in {}", dir.display()));
                    }
                }
            }
            Ok(if errors == 0 { 0 } else { FINDING })
        }
        Command::Claims { dir, format } => {
            let ws = open_workspace(&dir, None)?;
            if !ws.is_valid() {
                warn(&format!(
                    "note: {} has {} error(s) (`sim-core validate {}` lists them); claims are recomputed from what \
                     loaded",
                    dir.display(),
                    ws.errors().len(),
                    dir.display()
                ));
            }
            let checks = ws.check_claims();
            if format == Format::Json {
                out.line(&render::json(&checks));
            } else {
                out.table(&render::claims(&checks), format == Format::Csv, false);
            }
            Ok(if checks.iter().any(|c| c.verdict.fails()) { FINDING } else { 0 })
        }
        Command::Points { dir, format } => {
            let ws = open_valid(&dir)?;
            out.table(&render::points(ws.points()), format == Format::Csv, format == Format::Json);
            Ok(0)
        }
        Command::Plan(args) => plan_cmd::run(*args, out),
        Command::Predict { scenario, mode, concurrency, open, data, fit, kernels, format } => {
            let (_, run) = open_scenario(&scenario, data, fit_set(fit), &kernels)?;
            let modes = match mode {
                Some(m) => vec![m],
                None => run.scenario.modes.clone(),
            };
            if let Some(q) = open.query(modes.clone()) {
                let points = run.open_loop(&q).map_err(|e| CliError::Usage(e.to_string()))?;
                out.table(&render::open_loop(&points), format == Format::Csv, format == Format::Json);
                return Ok(0);
            }
            let max = sim_core::scenario::MAX_CONCURRENCY;
            if let Some(bad) = concurrency.iter().find(|c| **c == 0 || **c > max) {
                return Err(CliError::Usage(format!("--concurrency {bad}: outside 1..={max}")));
            }
            let conc = if concurrency.is_empty() { run.scenario.concurrency.clone() } else { concurrency };
            out.table(&render::predictions(&run.predict(&modes, &conc)), format == Format::Csv, format == Format::Json);
            Ok(0)
        }
        Command::Report { dir, fit, format, sensitivity } => {
            let ws = open_valid(&dir)?;
            parallel::precompute(&ws, &[fit_set(fit)]);
            let r = ws.accuracy(fit_set(fit));
            let protocol = ws.protocol();
            let coverage = ws.coverage_check();
            let steps = ws.step_checks();
            let transfers = ws.transfer_checks();
            let sens = if sensitivity { ws.sensitivity(&ws.assumptions()) } else { Vec::new() };
            let verdicts = sim_core::report::mode_verdicts(r);
            if format == ReportFormat::Markdown {
                out.line(markdown::report(r, &protocol, &coverage, &steps, &transfers).trim_end());
                return Ok(0);
            }
            if format == ReportFormat::Json {
                let mut v = serde_json::to_value(r).unwrap_or_default();
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("verdicts".into(), serde_json::to_value(&verdicts).unwrap_or_default());
                    obj.insert("protocol".into(), serde_json::to_value(&protocol).unwrap_or_default());
                    obj.insert("band_coverage".into(), serde_json::to_value(&coverage).unwrap_or_default());
                    let checks: Vec<serde_json::Value> = steps
                        .iter()
                        .map(|c| match c {
                            Ok(c) => serde_json::to_value(c).unwrap_or_default(),
                            Err(e) => serde_json::json!({ "error": e.to_string() }),
                        })
                        .collect();
                    obj.insert("step_check".into(), serde_json::Value::Array(checks));
                    obj.insert("transfer_check".into(), serde_json::to_value(&transfers).unwrap_or_default());
                    let outside = sim_core::fit::implausible(&r.calibration.coefficients);
                    obj.insert("outside_plausible_range".into(), serde_json::to_value(&outside).unwrap_or_default());
                    if sensitivity {
                        obj.insert("sensitivity".into(), serde_json::to_value(&sens).unwrap_or_default());
                    }
                }
                out.line(&render::json(&v));
                return Ok(0);
            }
            out.table(&render::report_rows(r), format == ReportFormat::Csv, false);
            if format == ReportFormat::Table {
                for line in render::report_summary(r, &ws.stated_values(fit_set(fit))) {
                    out.line(&line);
                }
                for line in render::verdicts(&verdicts) {
                    out.line(&line);
                }
                for line in render_protocol::protocol(&protocol) {
                    out.line(&line);
                }
                for line in render_protocol::coverage(&coverage) {
                    out.line(&line);
                }
                for line in render_protocol::step_checks(&steps) {
                    out.line(&line);
                }
                for line in render_protocol::transfer_checks(&transfers) {
                    out.line(&line);
                }
                if sensitivity {
                    for line in render_protocol::sensitivity(&sens) {
                        out.line(&line);
                    }
                }
            }
            Ok(0)
        }
        Command::Calibrate { scenario, measurements, data, kernels } => {
            let (ws, run) = open_scenario(&scenario, data, FitSet::All, &kernels)?;
            let mut files = Vec::new();
            for m in &measurements {
                // Diagnostics name each file as it was given.
                files.push(SourceText { path: m.display().to_string(), text: read_text(m)? });
            }
            let (mds, diags) = dataset::load(&files);
            let errors: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
            if !errors.is_empty() {
                return Err(CliError::Invalid(errors));
            }
            // The description travels with the scenario file: file names, not this machine's folders.
            let from = measurements
                .iter()
                .map(|m| m.file_name().map_or_else(|| m.display().to_string(), |n| n.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
                .join(", ");
            let cal = ws.calibrate(&run, &mds.points(), &from).map_err(CliError::Usage)?;
            let stats = cal.calibration.stats;
            warn(&format!(
                "calibrated on {} points: median error {:.1}%, 90th percentile {:.1}%",
                cal.calibration.points.len(),
                stats.median_ape,
                stats.p90_ape
            ));
            for a in &cal.above_measured {
                warn(&format!(
                    "warning: fitted {} {:.3} is above {:.3}, {}'s microbenchmark: a cost the model lacks stands \
                     in for it\n  = microbenchmark: {}",
                    a.name, a.value, a.ceiling, a.machine, a.how
                ));
            }
            out.line(&render::json(&cal.file));
            Ok(0)
        }
        Command::DescribeModel { config, id, bits, dense_bits, draft_tokens, kv_cache_dtype } => {
            let text = read_text(&config)?;
            let id = id.unwrap_or_else(|| {
                config
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "model".into())
            });
            let mut d = sim_core::describe::ModelDescription::from_hf_config_with(&id, &text, bits)
                .map_err(|e| CliError::Usage(format!("{}: {e}", config.display())))?;
            d.dense_bits_per_weight = dense_bits;
            d.draft_tokens = draft_tokens;
            d.kv_bytes_per_element = sim_core::describe::kv_cache_dtype_bytes(&kv_cache_dtype)
                .ok_or_else(|| CliError::Usage(format!("unknown --kv-cache-dtype `{kv_cache_dtype}`")))?;
            d.to_spec().map_err(|e| CliError::Usage(format!("{}: {e}", config.display())))?;
            out.line(&render::json(&serde_json::json!({ "describe": d })));
            Ok(0)
        }
        Command::Schema { dir } => {
            std::fs::create_dir_all(&dir).map_err(|e| CliError::Usage(format!("{}: {e}", dir.display())))?;
            for (name, text) in dataset::json_schema::schema_files() {
                let path = dir.join(name);
                std::fs::write(&path, text).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
                out.line(&path.display().to_string());
            }
            Ok(0)
        }
        Command::Import { what } => match import::run(what) {
            Ok(json) => {
                out.line(&json);
                Ok(0)
            }
            Err(msg) => Err(CliError::Invalid(vec![msg])),
        },
        Command::Engines { dir, format } => {
            let ws = open_valid(&dir)?;
            let mut profiles = Vec::new();
            for e in ws.engines() {
                profiles.push(e.map_err(CliError::Usage)?);
            }
            let above: Vec<Vec<sim_core::explore::AboveMeasured>> =
                profiles.iter().map(|p| ws.above_measured(&p.id)).collect();
            let outside: Vec<Vec<sim_core::fit::Implausible>> =
                profiles.iter().map(|p| ws.outside_plausible_range(&p.id)).collect();
            if format == Format::Json {
                /// A profile as listed: its fields, what of its fit lies outside a plausible range, and what lies
                /// above a machine's microbenchmarks.
                #[derive(serde::Serialize)]
                struct Listed<'a> {
                    #[serde(flatten)]
                    profile: &'a sim_core::explore::EngineProfile,
                    outside_plausible_range: &'a [sim_core::fit::Implausible],
                    above_measured: &'a [sim_core::explore::AboveMeasured],
                }
                let listed: Vec<Listed> = profiles
                    .iter()
                    .zip(&outside)
                    .zip(&above)
                    .map(|((p, o), a)| Listed { profile: p.as_ref(), outside_plausible_range: o, above_measured: a })
                    .collect();
                out.line(&render::json(&listed));
            } else {
                out.table(&render::engines(&profiles, &outside, &above), format == Format::Csv, false);
            }
            Ok(0)
        }
        Command::Fabric { dir, format } => {
            let ws = open_valid(&dir)?;
            let answer = ws.fabric(&[]).map_err(CliError::Usage)?;
            out.table(&render::fabric_rows(&answer), format == Format::Csv, format == Format::Json);
            if format == Format::Table {
                for line in render::fabric_summary(&answer) {
                    out.line(&line);
                }
            }
            Ok(0)
        }
    }
}

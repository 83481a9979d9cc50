//! `sim-core import`: command-line glue for the importers in `sim_core::import`.

#![allow(clippy::result_large_err)] // `Result<_, Diagnostic>` is what main.rs expects.

use clap::Subcommand;
use sim_core::dataset::schema::Mode;
use sim_core::import::{self, NcclOptions, VllmOptions};
use sim_core::Diagnostic;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ImportCommand {
    /// nccl-tests output (the text table or its -J JSON), one collective per file, to a fabric file.
    NcclTests {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Collective measured, when the output does not name its *_perf binary (e.g. all_reduce, sendrecv_bidirectional).
        #[arg(long)]
        collective: Option<String>,
        /// Id of the fabric file.
        #[arg(long, default_value = "imported")]
        id: String,
        /// Hardware id (a data/hardware file) the fabric connects.
        #[arg(long, default_value = "gb300-station")]
        hardware: String,
        /// Rails between the machines (recorded in `link`, marked as given on the command line).
        #[arg(long, default_value_t = 2)]
        rails: u32,
        /// Line rate of one rail, Gb/s.
        #[arg(long, default_value_t = 400.0)]
        line_rate_gbit: f64,
        /// MTU in bytes.
        #[arg(long, default_value_t = 9000)]
        mtu: u32,
        #[arg(long, default_value = "RoCEv2")]
        transport: String,
        /// Prefix of the source ids the file defines (`<prefix>-1`, ...).
        #[arg(long, default_value = "import")]
        source_prefix: String,
        /// Print one all_reduce_perf output as a hardware file's `link.all_reduce_times` (the time of every
        /// measured size, which tensor parallelism across the link then costs) instead of a fabric file.
        #[arg(long)]
        link_times: bool,
    },
    /// Result files of `vllm bench serve --save-result` or `benchmark_serving.py --save-result` to a sweep file.
    VllmBench {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Cluster mode the runs used.
        #[arg(long, default_value = "single", value_parser = crate::mode_parser())]
        mode: Mode,
        /// Model id (a data/models file); default: the last segment of the results' model_id, lower-cased.
        #[arg(long)]
        model: Option<String>,
        /// Hardware id (a data/hardware file) the runs were measured on. Required: vLLM's result files do not
        /// say which machine ran them, and a default would file one machine's runs under another.
        #[arg(long, value_name = "ID")]
        hardware: String,
        /// Concurrency of results run without --max-concurrency.
        #[arg(long)]
        concurrency: Option<u32>,
        /// Input length of the series (default: measured tokens per request).
        #[arg(long)]
        isl: Option<u32>,
        /// Output length of the series (default: measured tokens per request).
        #[arg(long)]
        osl: Option<u32>,
        #[arg(long, default_value = "import")]
        source_prefix: String,
    },
}

fn read_all(files: &[PathBuf]) -> Result<Vec<import::Input>, Diagnostic> {
    files
        .iter()
        .map(|f| {
            let name = f.display().to_string();
            // Refused by size before reading, so a huge file costs nothing (the importers check the text too).
            if let Some(bytes) = std::fs::metadata(f).ok().map(|m| m.len()).filter(|b| *b > import::MAX_INPUT_BYTES) {
                return Err(import::too_large(&name, bytes));
            }
            match std::fs::read(f) {
                Ok(bytes) => Ok((name, String::from_utf8_lossy(&bytes).into_owned())),
                Err(e) => {
                    Err(Diagnostic::error(&name, "", format!("cannot read the file: {e}")).with_hint("check the path"))
                }
            }
        })
        .collect()
}

/// Runs an import and returns the dataset file as pretty JSON, or the problem as a diagnostic.
pub fn run(cmd: ImportCommand) -> Result<String, Diagnostic> {
    let json = match cmd {
        ImportCommand::NcclTests {
            files,
            collective,
            id,
            hardware,
            rails,
            line_rate_gbit,
            mtu,
            transport,
            source_prefix,
            link_times,
        } => {
            let first = files.first().map(|f| f.display().to_string()).unwrap_or_default();
            let collective = match collective {
                None => None,
                Some(c) => Some(import::nccl_tests::parse_collective(&c).ok_or_else(|| {
                    Diagnostic::error(&first, "", format!("unknown collective `{c}`"))
                        .with_hint("one of all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, sendrecv_bidirectional")
                })?),
            };
            if !line_rate_gbit.is_finite() || line_rate_gbit <= 0.0 {
                return Err(Diagnostic::error(
                    &first,
                    "",
                    format!("--line-rate-gbit must be positive, got {line_rate_gbit}"),
                )
                .with_hint("e.g. 400"));
            }
            let opts = NcclOptions { id, hardware, collective, rails, line_rate_gbit, mtu, transport, source_prefix };
            let inputs = read_all(&files)?;
            if link_times {
                let [input] = inputs.as_slice() else {
                    return Err(Diagnostic::error(
                        &first,
                        "",
                        format!("--link-times reads one file, got {}", inputs.len()),
                    )
                    .with_hint("name the one all_reduce_perf output measured between the two machines"));
                };
                serde_json::to_string_pretty(&import::nccl_tests::all_reduce_times(input, &opts)?)
            } else {
                serde_json::to_string_pretty(&import::nccl_tests(&inputs, &opts)?)
            }
        }
        ImportCommand::VllmBench { files, mode, model, hardware, concurrency, isl, osl, source_prefix } => {
            let opts = VllmOptions { mode, model, hardware, concurrency, isl, osl, source_prefix };
            let sweep = import::vllm_bench(&read_all(&files)?, &opts)?;
            serde_json::to_string_pretty(&sweep)
        }
    };
    json.map_err(|e| Diagnostic::error("", "", format!("cannot write the result as JSON: {e}")))
}

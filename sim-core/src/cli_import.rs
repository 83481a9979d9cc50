//! `sim-core import`: command-line glue for the importers in `sim_core::import` (placeholder until they land).

use clap::Subcommand;
use sim_core::Diagnostic;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ImportCommand {
    /// nccl-tests output (the text table or its JSON output).
    NcclTests { files: Vec<PathBuf> },
    /// Result files of `vllm bench serve` or `benchmark_serving.py`.
    VllmBench { files: Vec<PathBuf> },
}

/// Runs an import and returns the dataset file as pretty JSON, or the problem as a diagnostic.
pub fn run(cmd: ImportCommand) -> Result<String, Diagnostic> {
    let files = match &cmd {
        ImportCommand::NcclTests { files } | ImportCommand::VllmBench { files } => files,
    };
    let name = files.first().map(|f| f.display().to_string()).unwrap_or_default();
    Err(Diagnostic::error(&name, "", "importers are not built yet"))
}

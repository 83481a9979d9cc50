//! The step check: the model's own step time for the layer stack a kernel table timed as whole forward passes
//! (`steps`), against what was measured. The stack is asked as a user asks a model (a Hugging Face
//! `config.json` of its shape) on the table's GPU with the `roofline` profile, which reads the table and adds no
//! fitted cost, so the check judges the physics and the table, not a fit.
//!
//! ```text
//!   table.steps.stack --config.json--> scenario (hardware = table.hardware, engine = roofline)
//!   each graph-replayed row: prefill of n tokens, b decodes at a context, or both in one pass (mixed)
//!       --> Engine::step --> seconds
//!   error = predicted / measured - 1
//! ```
//! Rows replayed as one CUDA graph are the ones checked: an engine replays its steps so, and their time is the
//! kernels' own; the eager rows add the host's launches, which an engine profile's overheads carry.
//!
//! The carried check asks the same of every pair of tables measured on different GPUs: one table's passes
//! predicted with the other's curves and kernel costs, carried over by the ridge-relative rule as a GPU without a
//! table takes them (`kernel_curves`), which judges the transfer rule on measured passes.

use super::plan_request::{ModelSource, PlanRequest};
use super::{FitSet, Workspace};
use crate::dataset::schema::{KernelsFile, StepPhase};
use crate::model::batching::StepLoad;
use crate::model::modes::mode_engine;
use crate::server::ServerSettings;
use crate::Mode;
use serde::Serialize;

/// The engine profile the check predicts with: the table's curves, no fitted efficiency or overhead.
pub const CHECK_ENGINE: &str = "roofline";

/// One measured forward pass against the model's step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCheckRow {
    pub phase: StepPhase,
    pub seqs: f64,
    pub query_tokens: f64,
    pub context: f64,
    /// A mixed pass's decodes and their context (0 for prefill and decode passes).
    pub decode_seqs: f64,
    pub decode_context: f64,
    pub measured_s: f64,
    pub predicted_s: f64,
    /// What the step's parts take in the model, seconds: weights and KV over HBM, compute.
    pub hbm_s: f64,
    pub compute_s: f64,
}

impl StepCheckRow {
    /// Predicted over measured, less one.
    pub fn error(&self) -> f64 {
        self.predicted_s / self.measured_s - 1.0
    }
}

/// One kernel table's check: every graph-replayed pass, the errors' summary and the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCheck {
    pub table: String,
    pub gpu: String,
    /// The table whose curves were carried over to `table`'s GPU, with the GPU it measured (`None`: `table`'s
    /// own curves).
    pub curves_from: Option<(String, String)>,
    /// Whether the table's stack ran compiled (`torch.compile`) or eager.
    pub compiled: bool,
    pub rows: Vec<StepCheckRow>,
    /// Median and largest absolute error, percent, over prefill, decode and mixed rows apart (`None`: no row of
    /// that phase).
    pub prefill_median_ape: Option<f64>,
    pub decode_median_ape: Option<f64>,
    pub mixed_median_ape: Option<f64>,
    pub max_ape: f64,
    /// `data/accuracy.json`'s `step_check.ape_max` (`carried_step_check.ape_max` for carried curves), and whether
    /// every row is within it.
    pub target_ape: Option<f64>,
    pub met: Option<bool>,
}

/// Why a table cannot be checked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepCheckError {
    #[error("kernel table `{0}` times no whole forward pass (`steps`)")]
    NoSteps(String),
    #[error("kernel table `{table}`: its stack does not resolve as a scenario: {why}")]
    Unresolved { table: String, why: String },
}

/// The stack's shape as the `config.json` a user would pass to `plan --model`.
fn stack_config(table: &KernelsFile) -> Option<String> {
    let s = &table.steps.as_ref()?.stack;
    let v = serde_json::json!({
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": s.hidden,
        "intermediate_size": s.intermediate,
        "num_hidden_layers": s.layers,
        "num_attention_heads": s.heads,
        "num_key_value_heads": s.kv_heads,
        "head_dim": s.head_dim,
        "vocab_size": s.vocab,
        "tie_word_embeddings": false,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": 40960,
    });
    Some(v.to_string())
}

impl Workspace {
    /// The step check of every kernel table that times whole forward passes, by table id, each followed by its
    /// passes predicted with every table of another GPU carried over.
    pub fn step_checks(&self) -> Vec<Result<StepCheck, StepCheckError>> {
        let targets = self.dataset.accuracy.as_ref();
        let own_target = targets.and_then(|a| a.step_check.as_ref()).map(|t| t.ape_max);
        let carried_target = targets.and_then(|a| a.carried_step_check.as_ref()).map(|t| t.ape_max);
        let tables = &self.dataset.kernels;
        tables
            .values()
            .filter(|t| t.steps.is_some())
            .flat_map(|t| {
                let carried = tables.values().filter(move |c| c.hardware != t.hardware);
                std::iter::once((t, None, own_target)).chain(carried.map(move |c| (t, Some(c), carried_target)))
            })
            .map(|(t, carried, target)| {
                let rows = self.step_check(t, carried)?;
                let ape = |r: &StepCheckRow| r.error().abs() * 100.0;
                let median_of = |phase: StepPhase| {
                    let v: Vec<f64> = rows.iter().filter(|r| r.phase == phase).map(ape).collect();
                    crate::stats::ErrorStats::of(&v).map(|s| s.median_ape)
                };
                let max_ape = rows.iter().map(ape).fold(0.0, f64::max);
                Ok(StepCheck {
                    table: t.id.clone(),
                    gpu: t.provenance.gpu.clone(),
                    curves_from: carried.map(|c| (c.id.clone(), c.provenance.gpu.clone())),
                    compiled: t.steps.as_ref().and_then(|s| s.stack.compiled).unwrap_or(false),
                    prefill_median_ape: median_of(StepPhase::Prefill),
                    decode_median_ape: median_of(StepPhase::Decode),
                    mixed_median_ape: median_of(StepPhase::Mixed),
                    max_ape,
                    target_ape: target,
                    met: target.map(|x| !rows.is_empty() && max_ape <= x),
                    rows,
                })
            })
            .collect()
    }

    /// Every graph-replayed forward pass of `table` against the model's step for its stack, on the table's own
    /// curves or with `carried`'s carried over to its GPU.
    pub fn step_check(
        &self,
        table: &KernelsFile,
        carried: Option<&KernelsFile>,
    ) -> Result<Vec<StepCheckRow>, StepCheckError> {
        let steps = table.steps.as_ref().ok_or_else(|| StepCheckError::NoSteps(table.id.clone()))?;
        let unresolved = |why: String| StepCheckError::Unresolved { table: table.id.clone(), why };
        let text = stack_config(table).ok_or_else(|| StepCheckError::NoSteps(table.id.clone()))?;
        let request = PlanRequest {
            model: ModelSource::HfConfig { id: format!("{}-stack", table.id), text },
            hardware: table.hardware.clone(),
            engine: Some(CHECK_ENGINE.to_string()),
            isl: 1,
            osl: 1,
            bits: Some(16.0),
            kv_cache_dtype: None,
            concurrency: Vec::new(),
            server: ServerSettings::default(),
            cpu_offload_gb: None,
            machines: 2,
        };
        let file = request.scenario_file("step-check").map_err(|e| unresolved(e.message))?;
        let text = super::plan_request::scenario_text(&file);
        let run = self
            .scenario_from_text("step-check.json", &text, FitSet::All)
            .map_err(|d| unresolved(d.iter().map(|x| x.message.clone()).collect::<Vec<_>>().join("; ")))?;
        // The table timed one GPU: the machine's other GPUs take no part.
        let mut scenario = run.scenario.clone();
        crate::scenario::apply_override(&mut scenario, "hardware.gpus", 1.0).map_err(unresolved)?;
        if let Some(c) = carried {
            scenario.hardware.gemm = crate::kernel_curves::curves_of(&self.dataset, c, false)
                .ok_or_else(|| unresolved(format!("no hardware file `{}` for table `{}`", c.hardware, c.id)))?;
        }
        let engine = mode_engine(&scenario, &run.coefficients, Mode::Single);
        let m = &scenario.model;
        Ok(steps
            .rows
            .iter()
            .filter(|r| r.graph && r.seconds > 0.0)
            .map(|r| {
                let mut load = StepLoad::default();
                match r.phase {
                    StepPhase::Decode => load.add_decodes(m, r.seqs, r.context, 1.0),
                    // A mixed pass is a prompt's pass that also carries its decodes.
                    StepPhase::Prefill | StepPhase::Mixed => {
                        load.add_prefill(m, r.seqs, (r.context - r.query_tokens).max(0.0), r.query_tokens);
                        if let (Some(seqs), Some(context)) = (r.decode_seqs, r.decode_context) {
                            load.add_decodes(m, seqs, context, 1.0);
                        }
                    }
                }
                let t = engine.step(&load);
                StepCheckRow {
                    phase: r.phase,
                    seqs: r.seqs,
                    query_tokens: r.query_tokens,
                    context: r.context,
                    decode_seqs: r.decode_seqs.unwrap_or(0.0),
                    decode_context: r.decode_context.unwrap_or(0.0),
                    measured_s: r.seconds,
                    predicted_s: t.total_s,
                    hbm_s: t.hbm_s,
                    compute_s: t.compute_s,
                }
            })
            .collect())
    }
}

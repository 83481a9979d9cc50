//! A plan asked without a scenario file: a model (a dataset id or a Hugging Face `config.json`), a machine, a
//! workload and the server settings, turned into the scenario file that asks the same question. The CLI resolves
//! that file's text exactly as it resolves one read from disk, so `plan --model ... --save s.json` and
//! `plan s.json` give the same answer by construction.

use crate::dataset::schema::{
    default_concurrency, DpRouter, ModelRef, OverrideValue, Reference, ScenarioFile, ScenarioLoad, Workload,
};
use crate::describe::{kv_cache_dtype_bytes, ModelDescription};
use crate::server::{ServerSettings, SERVER_SETTINGS};
use crate::Mode;
use std::collections::BTreeMap;

/// Where the model comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSource {
    /// A model id of the dataset (`data/models/`).
    Id(String),
    /// A Hugging Face `config.json`'s text, and the id to give the model.
    HfConfig { id: String, text: String },
}

/// The question, as the flags give it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    pub model: ModelSource,
    pub hardware: String,
    /// The engine profile (`None`: the one measured on the hardware, `scenario::default_engine`).
    pub engine: Option<String>,
    pub isl: u32,
    pub osl: u32,
    /// Bits per weight of a `config.json` model (`None`: what its `quantization_config` says).
    pub bits: Option<f64>,
    /// vLLM's `--kv-cache-dtype` for a `config.json` model (`auto`, `fp8`, ...).
    pub kv_cache_dtype: Option<String>,
    /// Concurrency levels of the plan table (empty: the scenario default).
    pub concurrency: Vec<u32>,
    pub server: ServerSettings,
    /// vLLM's `--cpu-offload-gb`: GiB of weights per GPU moved to CPU memory (the scenario override
    /// `placement.pin_to_host_bytes`).
    pub cpu_offload_gb: Option<f64>,
    /// Machines the plan may use: 2 answers one machine against the pair's modes (`Mode::ALL`), 4 adds the
    /// four-machine modes (`Mode::FOUR_MACHINES`).
    pub machines: u32,
}

/// The cluster sizes a plan answers for: a pair, and four machines.
pub const PLAN_MACHINES: [u32; 2] = [2, 4];

/// Whether a plan answers for `machines` (`PLAN_MACHINES`), or what to ask instead.
pub fn check_machines(machines: u32) -> Result<(), String> {
    if PLAN_MACHINES.contains(&machines) {
        Ok(())
    } else {
        Err(format!("{machines}: a plan answers for 2 machines (one against a pair) or 4 (and four)"))
    }
}

/// The override key vLLM's `--cpu-offload-gb` writes, in bytes per GPU.
pub const CPU_OFFLOAD_KEY: &str = "placement.pin_to_host_bytes";

/// Which request field an error is about, so the CLI can name its flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// `model`, `bits`, `kv_cache_dtype`, `cpu_offload_gb`, `isl`, `osl` or a `server.*` override key.
    pub field: String,
    pub message: String,
}

impl PlanRequest {
    /// The scenario file asking this question (`id` names it).
    pub fn scenario_file(&self, id: &str) -> Result<ScenarioFile, RequestError> {
        let err = |field: &str, message: String| RequestError { field: field.into(), message };
        check_machines(self.machines).map_err(|m| err("machines", m))?;
        for (field, tokens) in [("isl", self.isl), ("osl", self.osl)] {
            if tokens == 0 {
                return Err(err(field, format!("{field} counts tokens per request: at least 1")));
            }
        }
        let model = match &self.model {
            ModelSource::Id(id) => {
                if self.bits.is_some() {
                    return Err(err(
                        "bits",
                        format!("model `{id}` is a dataset card with its own precision; bits apply to a config.json"),
                    ));
                }
                if self.kv_cache_dtype.is_some() {
                    return Err(err(
                        "kv_cache_dtype",
                        format!(
                            "model `{id}` is a dataset card whose kv_bytes_per_token states its own KV element \
                             type; pass its config.json to --model to choose one, or override \
                             model.kv_bytes_per_token in a scenario file"
                        ),
                    ));
                }
                ModelRef::Id(id.clone())
            }
            ModelSource::HfConfig { id, text } => {
                let mut d = ModelDescription::from_hf_config_with(id, text, self.bits).map_err(|e| err("model", e))?;
                if let Some(dtype) = &self.kv_cache_dtype {
                    d.kv_bytes_per_element = kv_cache_dtype_bytes(dtype).ok_or_else(|| {
                        let known: Vec<&str> = crate::describe::KV_CACHE_DTYPES.iter().map(|(n, _)| *n).collect();
                        err("kv_cache_dtype", format!("unknown KV cache dtype `{dtype}`; known: {}", known.join(", ")))
                    })?;
                }
                d.to_spec().map_err(|e| err("model", e))?;
                ModelRef::Described { describe: Box::new(d) }
            }
        };
        let mut overrides = BTreeMap::new();
        for (setting, value) in self.server.given() {
            crate::server::check(setting.key, value).map_err(|e| err(setting.key, e))?;
            overrides.insert(setting.key.to_string(), OverrideValue::Number(value));
        }
        if let Some(gb) = self.cpu_offload_gb {
            if !(gb.is_finite() && gb > 0.0) {
                return Err(err("cpu_offload_gb", format!("{gb}: GiB of weights per GPU, a positive number")));
            }
            let bytes = gb * f64::from(1u32 << 30);
            overrides.insert(CPU_OFFLOAD_KEY.to_string(), OverrideValue::Number(bytes));
        }
        debug_assert!(SERVER_SETTINGS.iter().all(|s| crate::scenario::override_key(s.key).is_ok()));
        let model_name = match &self.model {
            ModelSource::Id(id) | ModelSource::HfConfig { id, .. } => id.as_str(),
        };
        Ok(ScenarioFile {
            schema_version: 2,
            kind: "scenario".into(),
            id: id.to_string(),
            description: Some(format!(
                "{model_name} on {}, {}/{} tokens in/out per request, written by sim-core plan",
                self.hardware, self.isl, self.osl
            )),
            hardware: Reference::Id(self.hardware.clone()),
            model,
            workloads: vec![Workload { isl: self.isl, osl: self.osl, output_lengths: Default::default() }],
            concurrency: if self.concurrency.is_empty() { default_concurrency() } else { self.concurrency.clone() },
            modes: Mode::up_to(self.machines),
            overrides,
            engine: self.engine.clone(),
            load: ScenarioLoad::ClosedLoop,
            router: DpRouter::Balanced,
            calibration: None,
        })
    }
}

/// A scenario file as text, with the `$schema` a shipped scenario names, ready to save.
pub fn scenario_text(file: &ScenarioFile) -> String {
    let mut v = serde_json::to_value(file).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        let mut with_schema = serde_json::Map::new();
        with_schema.insert("$schema".into(), "../schema/scenario.json".into());
        with_schema.extend(std::mem::take(o));
        *o = with_schema;
    }
    let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> PlanRequest {
        PlanRequest {
            model: ModelSource::Id("gpt-oss-120b".into()),
            hardware: "dgx-spark".into(),
            engine: None,
            isl: 1024,
            osl: 128,
            bits: None,
            kv_cache_dtype: None,
            concurrency: vec![],
            server: ServerSettings { max_num_seqs: 64.0, ..Default::default() },
            cpu_offload_gb: None,
            machines: 2,
        }
    }

    #[test]
    fn a_request_becomes_a_scenario_file_that_reads_back_the_same() {
        let file = request().scenario_file("mine").expect("a file");
        assert_eq!(file.overrides.get("server.max_num_seqs"), Some(&OverrideValue::Number(64.0)));
        let text = scenario_text(&file);
        assert!(text.starts_with("{\n  \"$schema\": \"../schema/scenario.json\""), "{text}");
        let (one, diags) = crate::dataset::load(&[crate::dataset::SourceText { path: "s.json".into(), text }]);
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        let back = one.scenarios.values().next().expect("read back");
        assert_eq!((back.workloads[0].isl, back.workloads[0].osl, back.concurrency.len()), (1024, 128, 9));
        assert_eq!(back.overrides, file.overrides);
    }

    #[test]
    fn flags_that_do_not_apply_to_a_dataset_card_are_named() {
        let e = PlanRequest { kv_cache_dtype: Some("fp8".into()), ..request() }.scenario_file("x").unwrap_err();
        assert_eq!(e.field, "kv_cache_dtype");
        let e = PlanRequest { bits: Some(4.0), ..request() }.scenario_file("x").unwrap_err();
        assert_eq!(e.field, "bits");
        let e = PlanRequest { osl: 0, ..request() }.scenario_file("x").unwrap_err();
        assert_eq!(e.field, "osl");
        let bad = ServerSettings { gpu_memory_utilization: 1.5, ..Default::default() };
        let e = PlanRequest { server: bad, ..request() }.scenario_file("x").unwrap_err();
        assert_eq!(e.field, "server.gpu_memory_utilization");
    }
}

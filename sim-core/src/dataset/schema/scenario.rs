//! Scenario files: the simulator's input (machine, model, workloads, load, router, overrides).

use super::{HardwareFile, Mode, ModelFile, Quantity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Simulator input: which machine, link and model, which workloads, and overrides.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub schema_version: u32,
    pub kind: String,
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
    /// A hardware id from `data/hardware/`, or a full hardware object inline.
    pub hardware: Reference<HardwareFile>,
    /// A model id from `data/models/`, a full model card inline, or `{"describe": {...}}` with a few numbers
    /// (see `describe::ModelDescription`).
    pub model: ModelRef,
    pub workloads: Vec<Workload>,
    #[serde(default = "default_concurrency")]
    pub concurrency: Vec<u32>,
    #[serde(default = "default_modes")]
    pub modes: Vec<Mode>,
    /// Field overrides applied after resolving references (keys in `scenario::OVERRIDES`): a plain number in
    /// the key's SI unit (`{"hardware.gpu_memory_bytes": 288e9}`), or a quantity with its unit and basis
    /// (`{"placement.pin_to_host_bytes": {"value": 20, "unit": "GiB", "basis": "assumed", "reason": "..."}}`).
    #[serde(default)]
    pub overrides: BTreeMap<String, OverrideValue>,
    /// The engine profile (`data/engines/`); absent means `DEFAULT_ENGINE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// How the clients send requests: `closed_loop` (absent: each client sends its next request as soon as its
    /// last one ends), `batch` (the benchmark sends `concurrency` requests together and waits for all of them;
    /// throughput is then the tokens generated after each request's first over the time from the first first
    /// token to the last finish, llama-benchy's `tg` figure) or `all_at_once` (`concurrency` requests sent
    /// together once, throughput every output token over the time from the send to the last finish, as vLLM's
    /// `bench serve` reports a run at an unlimited request rate).
    #[serde(default, skip_serializing_if = "ScenarioLoad::is_closed_loop")]
    pub load: ScenarioLoad,
    /// How the router in front of two copies (`dp2`) spreads requests: `balanced` (absent: half of the clients
    /// to each copy, as a round-robin or least-load router keeps it) or `random` (each request to a copy drawn
    /// at random, as LiteLLM's `simple-shuffle` does).
    #[serde(default, skip_serializing_if = "DpRouter::is_balanced")]
    pub router: DpRouter,
    /// Calibrated coefficients (written by `sim-core calibrate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<BTreeMap<String, f64>>,
}

/// How a scenario's clients send requests (`ScenarioFile::load`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScenarioLoad {
    /// Each client sends its next request as soon as its last one ends (vLLM's `bench serve
    /// --max-concurrency`, genai-perf's concurrency mode): the steady state of a closed loop.
    #[default]
    ClosedLoop,
    /// Runs of `concurrency` requests sent together, the next run after the last request ends (llama-benchy:
    /// `asyncio.gather` over one batch per run in `runner.py`); throughput is llama-benchy's batch `tg`:
    /// (tokens generated - requests) / (last finish - first first token), in `results.py`.
    Batch,
    /// `concurrency` requests sent at once and never again, the run ending with the last (vLLM's `bench serve`
    /// with `--request-rate inf` and no `--max-concurrency`: a saturation run of a fixed number of prompts);
    /// throughput is its `output_throughput`, every output token over the time from the send to the last finish,
    /// and TTFT and TPOT are means over all requests.
    AllAtOnce,
}

impl ScenarioLoad {
    pub fn is_closed_loop(&self) -> bool {
        *self == ScenarioLoad::ClosedLoop
    }

    /// The name a data file writes (`closed_loop`, `batch`, `all_at_once`).
    pub fn name(self) -> &'static str {
        match self {
            ScenarioLoad::ClosedLoop => "closed_loop",
            ScenarioLoad::Batch => "batch",
            ScenarioLoad::AllAtOnce => "all_at_once",
        }
    }

    /// The load a sweep's `conditions.load` names, if the model runs it (`open_loop` it does not).
    pub fn named(name: &str) -> Option<Self> {
        [ScenarioLoad::ClosedLoop, ScenarioLoad::Batch, ScenarioLoad::AllAtOnce].into_iter().find(|l| l.name() == name)
    }
}

/// How a router spreads requests over two independent copies (`ScenarioFile::router`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DpRouter {
    /// Each copy serves half of the clients (the larger half when odd): round-robin or least-load routing of a
    /// steady load.
    #[default]
    Balanced,
    /// Each request goes to a copy drawn at random with equal odds (LiteLLM's `simple-shuffle`): the split of
    /// `c` clients is binomial, and a batch lasts as long as the busier copy needs.
    Random,
}

impl DpRouter {
    pub fn is_balanced(&self) -> bool {
        *self == DpRouter::Balanced
    }
}

/// One scenario override: a bare SI number, or a quantity that says its unit and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum OverrideValue {
    /// The value in the key's SI unit.
    Number(f64),
    /// A quantity (`value`, `unit` of the key's dimension, `basis` and its companion).
    Quantity(Box<Quantity>),
}

impl OverrideValue {
    /// The value in SI units (NaN for a quantity with an unknown unit).
    pub fn si(&self) -> f64 {
        match self {
            OverrideValue::Number(x) => *x,
            OverrideValue::Quantity(q) => q.si().unwrap_or(f64::NAN),
        }
    }

    pub fn quantity(&self) -> Option<&Quantity> {
        match self {
            OverrideValue::Number(_) => None,
            OverrideValue::Quantity(q) => Some(q),
        }
    }
}

impl<'de> Deserialize<'de> for OverrideValue {
    /// A number, or an object read as a quantity whose own error (a missing `basis`, an unknown field) is the
    /// one reported, rather than serde's "did not match any variant".
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Number(n) => {
                n.as_f64().map(OverrideValue::Number).ok_or_else(|| D::Error::custom("override is not a finite number"))
            }
            v @ serde_json::Value::Object(_) => Quantity::deserialize(&v)
                .map(|q| OverrideValue::Quantity(Box::new(q)))
                .map_err(|e| D::Error::custom(format!("override quantity: {e}"))),
            other => Err(D::Error::custom(format!(
                "an override is a number in the key's SI unit or a quantity {{\"value\", \"unit\", \"basis\", ...}}, found {other}"
            ))),
        }
    }
}

impl std::convert::From<f64> for OverrideValue {
    fn from(x: f64) -> Self {
        OverrideValue::Number(x)
    }
}

/// An id of another file, or the file's object inline.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Reference<T> {
    Id(String),
    Inline(Box<T>),
}

/// Reads the object through a borrowed `serde_json::Value`, as the loader reads every file: the page then holds
/// one copy of each file type's reading code instead of a second one for serde's untagged buffering (bundle
/// bytes), and an inline object's own error is the one reported, not "did not match any variant".
impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Reference<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(id) => Ok(Reference::Id(id)),
            v @ serde_json::Value::Object(_) => T::deserialize(&v)
                .map(|t| Reference::Inline(Box::new(t)))
                .map_err(|e| D::Error::custom(format!("inline object: {e}"))),
            other => Err(D::Error::custom(format!("expected an id (a string) or an inline object, found {other}"))),
        }
    }
}

/// A model: an id, a description (`{"describe": ...}`), or a model file inline.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum ModelRef {
    Id(String),
    Described { describe: Box<crate::describe::ModelDescription> },
    Inline(Box<ModelFile>),
}

/// As `Reference`: through a borrowed `serde_json::Value`, an object with `describe` being a description.
impl<'de> Deserialize<'de> for ModelRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(id) => Ok(ModelRef::Id(id)),
            serde_json::Value::Object(mut o) => match o.remove("describe") {
                Some(describe) => crate::describe::ModelDescription::deserialize(&describe)
                    .map(|m| ModelRef::Described { describe: Box::new(m) })
                    .map_err(|e| D::Error::custom(format!("model description: {e}"))),
                None => ModelFile::deserialize(&serde_json::Value::Object(o))
                    .map(|m| ModelRef::Inline(Box::new(m)))
                    .map_err(|e| D::Error::custom(format!("inline model: {e}"))),
            },
            other => Err(D::Error::custom(format!(
                "expected a model id (a string), {{\"describe\": ...}} or an inline model file, found {other}"
            ))),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub isl: u32,
    /// Output tokens per request: every request's, or their mean when `output_lengths` says they vary.
    pub osl: u32,
    /// How the requests' output lengths spread around `osl`: `fixed` (absent: every request generates `osl`
    /// tokens, as a random-token benchmark with a fixed output length does) or `exponential` (independent lengths
    /// of mean `osl`, as a dataset of real conversations such as ShareGPT gives: a batch runs until its longest
    /// request ends). Only a scenario that sends one batch (`"load": "all_at_once"` or `"batch"`) may let them
    /// vary. Say in the scenario's description why the lengths vary and where the shape comes from.
    #[serde(default, skip_serializing_if = "OutputLengths::is_fixed")]
    pub output_lengths: OutputLengths,
}

/// How a workload's output lengths spread around their mean (`Workload::output_lengths`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutputLengths {
    /// Every request generates the workload's `osl` tokens.
    #[default]
    Fixed,
    /// Independent exponential lengths of mean `osl`: the maximum-entropy distribution of a positive length with
    /// a given mean, for a run that states only the mean. A batch of n requests is run as its expected order
    /// statistics (`serving::output_length_classes`): its longest request generates `osl * H_n` tokens.
    Exponential,
}

impl OutputLengths {
    pub fn is_fixed(&self) -> bool {
        *self == OutputLengths::Fixed
    }
}

pub fn default_concurrency() -> Vec<u32> {
    vec![1, 2, 4, 8, 16, 32, 64, 128, 256]
}

fn default_modes() -> Vec<Mode> {
    Mode::ALL.to_vec()
}

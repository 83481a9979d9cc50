//! What-if and planner controls as data: each control is an override key of `scenario::OVERRIDES` with a label,
//! a unit from `units` and a range. The page and the CLI hand the core a list of `(override key, value)` in
//! the control's unit; this file is the one place that turns such values into SI and reads them back.

use crate::model::Coefficients;
use crate::scenario::{apply_override, override_key, HardwareSpec, OverrideField, Scenario};
use crate::units::{parse_unit, Dimension};
use serde::Serialize;

/// One control: the override key it sets, how a person reads it, and the range the page offers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knob {
    /// Short name in share links (`gpu_mem`, `hw_link`); stable, since links are shared.
    pub id: &'static str,
    /// The override key it sets (`hardware.gpu_memory_bytes`).
    pub key: &'static str,
    pub label: &'static str,
    /// A unit `units::parse_unit` knows (`GB`, `TB/s`, `Gb/s`, `%`, `1`).
    pub unit: &'static str,
    pub min: f64,
    pub max: f64,
    pub step: f64,
}

impl Knob {
    /// The unit as shown next to the control (a count has none).
    pub fn display_unit(&self) -> &'static str {
        if self.unit == "1" {
            ""
        } else {
            self.unit
        }
    }

    /// The SI value of `value` given in this control's unit (percent of a fraction: divided by 100).
    pub fn to_si(&self, value: f64) -> f64 {
        match parse_unit(self.unit) {
            Some((Dimension::Percent, _)) => value / 100.0,
            Some((_, factor)) => value * factor,
            None => f64::NAN,
        }
    }

    /// The inverse of `to_si`: an SI value in this control's unit.
    pub fn from_si(&self, si: f64) -> f64 {
        match parse_unit(self.unit) {
            Some((Dimension::Percent, _)) => si * 100.0,
            Some((_, factor)) => si / factor,
            None => f64::NAN,
        }
    }
}

const fn knob(
    id: &'static str,
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    (min, max, step): (f64, f64, f64),
) -> Knob {
    Knob { id, key, label, unit, min, max, step }
}

/// The explorer's what-if controls: change the machine, the draft acceptance of a report model, or pin weights
/// to host memory (vLLM's `--cpu-offload-gb`, per GPU); the published points stay put.
pub const WHAT_IF: [Knob; 6] = [
    knob("gpu_mem", "hardware.gpu_memory_bytes", "GPU memory", "GB", (64.0, 1024.0, 4.0)),
    knob("hbm", "hardware.hbm_bytes_per_sec", "HBM bandwidth", "TB/s", (1.0, 30.0, 0.1)),
    knob("slow", "hardware.slow_path_bytes_per_sec", "CPU-memory (slow path) bandwidth", "GB/s", (50.0, 2000.0, 2.0)),
    knob("link", "link.line_rate_bytes_per_sec_per_rail", "Link speed per rail", "Gb/s", (25.0, 1600.0, 25.0)),
    knob("accept", "model.draft_acceptance", "Draft acceptance", "%", (0.0, 95.0, 1.0)),
    knob("pin", "placement.pin_to_host_bytes", "Weights pinned to host memory (per GPU)", "GB", (0.0, 1024.0, 1.0)),
];

/// The planner's hardware fields, applied on top of the chosen preset.
pub const HARDWARE: [Knob; 6] = [
    knob("hw_mem", "hardware.gpu_memory_bytes", "GPU memory", "GB", (8.0, 4096.0, 1.0)),
    knob("hw_hbm", "hardware.hbm_bytes_per_sec", "HBM bandwidth", "TB/s", (0.05, 50.0, 0.01)),
    knob("hw_slow", "hardware.slow_path_bytes_per_sec", "Slow path (CPU memory) bandwidth", "GB/s", (0.0, 5000.0, 1.0)),
    knob("hw_gpus", "hardware.gpus", "GPUs per machine", "1", (1.0, 64.0, 1.0)),
    knob("hw_link", "link.line_rate_bytes_per_sec_per_rail", "Link per rail", "Gb/s", (1.0, 3200.0, 1.0)),
    knob("hw_rails", "link.rails", "Link rails", "1", (1.0, 16.0, 1.0)),
];

/// One control's value, in the control's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    pub knob: Knob,
    pub value: f64,
}

/// Applies settings to a scenario and its coefficients. The draft acceptance is a fitted per-model coefficient
/// that wins over the model card's, so a setting of it replaces both.
pub fn apply(s: &mut Scenario, k: &mut Coefficients, settings: &[Setting]) -> Result<(), String> {
    for set in settings {
        let si = set.knob.to_si(set.value);
        apply_override(s, set.knob.key, si).map_err(|e| format!("{}: {e}", set.knob.label))?;
        if set.knob.key == "model.draft_acceptance" {
            k.acceptance.insert(s.model.id.clone(), si);
        }
    }
    Ok(())
}

/// The current value of each control for a scenario and its coefficients, in the controls' units (what a
/// control shows before a person moves it). Unknown keys read as NaN.
pub fn current(s: &Scenario, k: &Coefficients, knobs: &[Knob]) -> Vec<f64> {
    knobs
        .iter()
        .map(|kn| {
            let si =
                if kn.key == "model.draft_acceptance" { k.acceptance_for(&s.model) } else { read_override(s, kn.key) };
            kn.from_si(si)
        })
        .collect()
}

/// The SI value of an override key in a scenario (NaN for an unknown key).
pub fn read_override(s: &Scenario, key: &str) -> f64 {
    match override_key(key).map(|o| o.field()) {
        Ok(OverrideField::Hardware(f)) => *f(&mut s.hardware.clone()),
        Ok(OverrideField::Model(f)) => *f(&mut s.model.clone()),
        Ok(OverrideField::Server(f)) => *f(&mut s.server.clone()),
        Err(_) => f64::NAN,
    }
}

/// The current value of each hardware control for a machine (a planner preset), in the controls' units;
/// model controls read as NaN.
pub fn current_hardware(h: &HardwareSpec, knobs: &[Knob]) -> Vec<f64> {
    knobs
        .iter()
        .map(|kn| match override_key(kn.key).map(|o| o.field()) {
            Ok(OverrideField::Hardware(f)) => kn.from_si(*f(&mut h.clone())),
            // A model control has no value on a machine.
            _ => f64::NAN,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_names_a_known_key_and_unit() {
        for k in WHAT_IF.iter().chain(HARDWARE.iter()) {
            assert!(override_key(k.key).is_ok(), "{}", k.key);
            assert!(parse_unit(k.unit).is_some(), "{}: unit {}", k.id, k.unit);
            assert!(k.min < k.max && k.step > 0.0, "{}", k.id);
            let v = (k.min + k.max) / 2.0;
            assert!((k.from_si(k.to_si(v)) - v).abs() <= 1e-9 * v.abs().max(1.0), "{}", k.id);
        }
        assert_eq!(WHAT_IF[3].to_si(400.0), 50e9);
        assert_eq!(WHAT_IF[4].to_si(80.0), 0.8);
        assert_eq!(WHAT_IF[5].to_si(20.0), 20e9);
    }

    #[test]
    fn the_pin_knob_reads_and_sets_the_host_pin() {
        let model = crate::describe::ModelDescription::from_hf_config(
            "t",
            r#"{"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                "intermediate_size": 14336, "vocab_size": 128256}"#,
            16.0,
        )
        .and_then(|d| d.to_spec())
        .expect("a dense 8B config");
        let hw = crate::scenario::HardwareSpec::one_gpu_for_tests(80e9, 3.35e12);
        let mut s = Scenario {
            id: "t".into(),
            engine: "e".into(),
            hardware: hw,
            model,
            workloads: vec![],
            concurrency: vec![],
            modes: vec![],
            load: Default::default(),
            router: Default::default(),
            server: Default::default(),
        };
        let mut k = Coefficients::default();
        let pin = WHAT_IF[5];
        assert_eq!(current(&s, &k, &[pin]), vec![0.0]);
        apply(&mut s, &mut k, &[Setting { knob: pin, value: 4.0 }]).expect("pin");
        assert_eq!(s.model.host_pin.bytes, 4e9);
        assert_eq!(current(&s, &k, &[pin]), vec![4.0]);
    }
}

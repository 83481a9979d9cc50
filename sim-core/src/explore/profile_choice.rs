//! The engine profile of a plan asked by flags: the build measured with this model on this machine where the
//! dataset holds one, else the machine's default (`scenario::default_engine`), always with the reason in words.
//!
//! A profile is *measured on a machine* when it was fitted on the points of a scenario of that machine which
//! names it (`fitted_on.scenarios`): the DGX Spark's GPT-OSS-120B run fitted `vllm-mxfp4-eager-dgx-spark`, its
//! Gemma run `vllm-0.19-dgx-spark`. A plan of another model on that machine keeps the default, and says why: a
//! measured build carries its own run's settings (eager mode, a memory share), fitted on one model.

use crate::dataset::schema::{ModelRef, Reference};
use crate::dataset::Dataset;

/// The profile a plan uses and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileChoice {
    pub engine: String,
    /// One sentence, for the plan's output.
    pub why: String,
}

/// A profile measured on `hardware`: its id, the scenario it was fitted on, and that scenario's model.
#[derive(Debug, Clone, PartialEq)]
struct Measured {
    engine: String,
    scenario: String,
    model: String,
}

/// The profile for `model` (a dataset id, or `None` for a model described by a config.json) on `hardware`.
pub fn choose(ds: &Dataset, hardware: &str, model: Option<&str>) -> ProfileChoice {
    let default = crate::scenario::default_engine(ds, Some(hardware));
    let claims_machine = ds.engines.get(&default).is_some_and(|e| e.default_for.iter().any(|h| h == hardware));
    if claims_machine {
        return ProfileChoice {
            why: format!("`{default}`, the build measured on {hardware} (the profile names it in default_for)"),
            engine: default,
        };
    }
    let measured = measured_on(ds, hardware);
    if let Some(m) = measured.iter().find(|m| Some(m.model.as_str()) == model) {
        return ProfileChoice {
            engine: m.engine.clone(),
            why: format!(
                "`{}`, the build measured with {} on {hardware} (fitted on the points of {})",
                m.engine, m.model, m.scenario
            ),
        };
    }
    let why = if measured.is_empty() {
        format!("`{default}`: no build was measured on {hardware}")
    } else {
        let others: Vec<String> = measured.iter().map(|m| format!("`{}` with {}", m.engine, m.model)).collect();
        format!(
            "`{default}`: the builds measured on {hardware} ({}) were fitted on another model and carry that run's \
             own settings; --engine <id> uses one",
            others.join(", ")
        )
    };
    ProfileChoice { engine: default, why }
}

/// Every profile fitted on a scenario of `hardware` that names it, in profile order.
fn measured_on(ds: &Dataset, hardware: &str) -> Vec<Measured> {
    let mut out = Vec::new();
    for e in ds.engines.values() {
        let Some(scenarios) = e.fitted_on.as_ref().and_then(|f| f.scenarios.as_ref()) else { continue };
        for id in scenarios {
            let Some(s) = ds.scenarios.get(id) else { continue };
            let on_machine = matches!(&s.hardware, Reference::Id(h) if h == hardware);
            if !on_machine || s.engine.as_deref() != Some(e.id.as_str()) {
                continue;
            }
            let model = match &s.model {
                ModelRef::Id(m) => m.clone(),
                ModelRef::Inline(card) => card.id.clone(),
                ModelRef::Described { describe } => describe.id.clone(),
            };
            out.push(Measured { engine: e.id.clone(), scenario: id.clone(), model });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> Dataset {
        let files = [
            ("sources.json", include_str!("../../../data/sources.json")),
            ("engines/vllm-generic.json", include_str!("../../../data/engines/vllm-generic.json")),
            ("engines/vllm-gb300-report.json", include_str!("../../../data/engines/vllm-gb300-report.json")),
            (
                "engines/vllm-mxfp4-eager-dgx-spark.json",
                include_str!("../../../data/engines/vllm-mxfp4-eager-dgx-spark.json"),
            ),
            (
                "scenarios/kubis-gpt-oss-120b-dgx-spark.json",
                include_str!("../../../data/scenarios/kubis-gpt-oss-120b-dgx-spark.json"),
            ),
        ];
        let texts: Vec<crate::dataset::SourceText> = files
            .into_iter()
            .map(|(path, text)| crate::dataset::SourceText { path: path.into(), text: text.into() })
            .collect();
        crate::dataset::load(&texts).0
    }

    #[test]
    fn the_build_measured_with_the_model_on_the_machine_is_chosen_and_otherwise_the_reason_is_given() {
        let ds = shipped();
        let spark = choose(&ds, "dgx-spark", Some("gpt-oss-120b"));
        assert_eq!(spark.engine, "vllm-mxfp4-eager-dgx-spark", "{spark:?}");
        assert!(spark.why.contains("measured with gpt-oss-120b on dgx-spark"), "{spark:?}");
        let other = choose(&ds, "dgx-spark", Some("glm-5.2"));
        assert_eq!(other.engine, "vllm-generic");
        assert!(other.why.contains("`vllm-mxfp4-eager-dgx-spark` with gpt-oss-120b"), "{other:?}");
        let config = choose(&ds, "dgx-spark", None);
        assert_eq!(config.engine, "vllm-generic", "a config.json's model was measured nowhere");
        let station = choose(&ds, "gb300-station", Some("gpt-oss-120b"));
        assert_eq!(station.engine, "vllm-gb300-report");
        assert!(choose(&ds, "h100-sxm", Some("gpt-oss-120b")).why.contains("no build was measured on h100-sxm"));
    }
}

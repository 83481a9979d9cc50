//! The context a request may use: the longest prompt plus output a model takes, as its card
//! (`context_tokens`) or its Hugging Face `config.json` (`max_position_embeddings`) states it, or as the team caps
//! it with vLLM's `--max-model-len`. vLLM refuses a request longer than its `--max-model-len` and refuses to
//! start with a `--max-model-len` above the model's own context, so the planner refuses both before it predicts.

use crate::dataset::schema::{ModelFile, ModelRef, ScenarioFile};
use crate::dataset::Dataset;
use crate::diagnostic::Diagnostic;
use crate::position::PositionIndex;

/// A context limit and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextLimit {
    pub tokens: u64,
    /// In words: `gpt-oss-120b's card (context_tokens)`, `--max-model-len`.
    pub from: String,
}

/// Why a workload cannot be served within the context.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ContextRefusal {
    /// Prompt plus output exceed the limit.
    #[error(
        "{isl} prompt + {osl} output = {total} tokens per request exceed the context of {} tokens ({}): vLLM \
         refuses a request longer than its --max-model-len",
        limit.tokens,
        limit.from
    )]
    Workload { isl: u32, osl: u32, total: u64, limit: ContextLimit },
    /// `--max-model-len` above what the model takes.
    #[error(
        "--max-model-len {asked} exceeds the model's context of {} tokens ({}): vLLM refuses to start with it",
        model.tokens,
        model.from
    )]
    MaxModelLen { asked: u64, model: ContextLimit },
}

/// The context a card states (`architecture.context_tokens`), if any.
pub fn of_card(card: &ModelFile) -> Option<ContextLimit> {
    let q = card.architecture.context_tokens.as_ref()?;
    whole(q.value).map(|tokens| ContextLimit { tokens, from: format!("{}'s card, context_tokens", card.id) })
}

/// The context a Hugging Face `config.json` states (`max_position_embeddings`, at the top or in `text_config`).
pub fn of_config(text: &str) -> Option<ContextLimit> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let read = |c: &serde_json::Value| c.get("max_position_embeddings").and_then(serde_json::Value::as_f64);
    let tokens = read(&v).or_else(|| v.get("text_config").and_then(read)).and_then(whole)?;
    Some(ContextLimit { tokens, from: "config.json's max_position_embeddings".into() })
}

/// Checks a workload of `isl` prompt and `osl` output tokens against the model's own context and the team's
/// `--max-model-len` (either may be unknown). The limit that binds is the smaller.
pub fn check(
    isl: u32,
    osl: u32,
    model: Option<&ContextLimit>,
    max_model_len: Option<u64>,
) -> Result<(), ContextRefusal> {
    if let (Some(asked), Some(m)) = (max_model_len, model) {
        if asked > m.tokens {
            return Err(ContextRefusal::MaxModelLen { asked, model: m.clone() });
        }
    }
    let asked = max_model_len.map(|tokens| ContextLimit { tokens, from: "--max-model-len".into() });
    let Some(limit) = asked.or_else(|| model.cloned()) else { return Ok(()) };
    let total = u64::from(isl) + u64::from(osl);
    if total > limit.tokens {
        return Err(ContextRefusal::Workload { isl, osl, total, limit });
    }
    Ok(())
}

/// The context of a scenario file's model: its card's (by id or inline); a described model states none.
pub fn of_scenario(ds: &Dataset, file: &ScenarioFile) -> Option<ContextLimit> {
    match &file.model {
        ModelRef::Id(id) => ds.models.get(id).and_then(of_card),
        ModelRef::Inline(card) => of_card(card),
        ModelRef::Described { .. } => None,
    }
}

/// Every workload of a scenario file (`text`, named `name`) longer than its model's context, as an error at
/// the workload's line and column.
pub fn scenario_refusals(ds: &Dataset, name: &str, text: &str, file: &ScenarioFile) -> Vec<Diagnostic> {
    let limit = of_scenario(ds, file);
    let index = PositionIndex::build(text);
    file.workloads
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let e = check(w.isl, w.osl, limit.as_ref(), None).err()?;
            let pointer = format!("/workloads/{i}");
            let mut d = Diagnostic::error(name, pointer.as_str(), e.to_string())
                .with_hint("shorten the prompt (isl) or the output (osl), or choose a model with a longer context");
            if let Some((l, c)) = index.locate(&pointer) {
                d = d.at(l, c);
            }
            Some(d)
        })
        .collect()
}

/// A positive whole number of tokens.
fn whole(x: f64) -> Option<u64> {
    (x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x < 1e15).then_some(x as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(tokens: u64) -> ContextLimit {
        ContextLimit { tokens, from: "m's card, context_tokens".into() }
    }

    #[test]
    fn a_workload_past_the_context_is_refused_naming_the_limit() {
        let e = check(200_000, 128, Some(&limit(131_072)), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "200000 prompt + 128 output = 200128 tokens per request exceed the context of 131072 tokens (m's card, \
             context_tokens): vLLM refuses a request longer than its --max-model-len"
        );
        assert!(check(131_000, 72, Some(&limit(131_072)), None).is_ok(), "exactly the context fits");
        // --max-model-len binds below the model's context, and may not exceed it.
        assert!(check(8192, 1024, Some(&limit(131_072)), Some(8192))
            .unwrap_err()
            .to_string()
            .contains("--max-model-len"));
        assert!(matches!(check(1, 1, Some(&limit(1000)), Some(2000)), Err(ContextRefusal::MaxModelLen { .. })));
        assert!(check(1_000_000, 1, None, None).is_ok(), "no limit known: nothing to refuse");
    }

    #[test]
    fn a_config_states_its_context_at_the_top_or_in_its_text_config() {
        assert_eq!(of_config(r#"{"max_position_embeddings": 131072}"#).map(|l| l.tokens), Some(131_072));
        assert_eq!(
            of_config(r#"{"text_config": {"max_position_embeddings": 262144}}"#).map(|l| l.tokens),
            Some(262_144)
        );
        assert_eq!(of_config(r#"{"max_position_embeddings": -1}"#), None);
        assert_eq!(of_config("not json"), None);
    }
}

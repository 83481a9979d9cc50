//! The throughput a one-batch run reports: llama-benchy's decode window, or `vllm bench serve`'s whole run.

use super::cohort::Cohort;
use super::Measured;

/// The window llama-benchy measures a batch's decode over: from the first request's first token to the last
/// request's end.
#[derive(Default)]
pub(super) struct BatchWindow {
    first_token_s: Option<f64>,
}

impl BatchWindow {
    /// Notes the first tokens the running requests have produced by now (a cohort's first token is set by the
    /// step that completes its prompt, before any merge moves it).
    pub(super) fn note(&mut self, running: &[Cohort]) {
        for t in running.iter().filter_map(|c| c.first_token_s) {
            self.first_token_s = Some(self.first_token_s.map_or(t, |f| f.min(t)));
        }
    }

    /// llama-benchy's batch `tg` throughput (`results.py`): tokens generated after each request's first, over the
    /// time from the first first token to the last finish at `end_s`.
    pub(super) fn throughput(&self, mut r: Measured, requests: f64, osl: f64, end_s: f64) -> Measured {
        let span = end_s - self.first_token_s.unwrap_or(end_s);
        r.output_tok_s = if span > 0.0 { requests * (osl - 1.0).max(0.0) / span } else { 0.0 };
        r
    }

    /// vLLM `bench serve`'s `output_throughput` of a run that sent every request at t = 0: all output tokens
    /// over the time to the last finish at `end_s` (`calculate_metrics` in `vllm/benchmarks/serve.py`:
    /// `sum(output_lens) / dur_s`).
    pub(super) fn whole_run_throughput(mut r: Measured, requests: f64, osl: f64, end_s: f64) -> Measured {
        r.output_tok_s = if end_s > 0.0 { requests * osl / end_s } else { 0.0 };
        r
    }
}

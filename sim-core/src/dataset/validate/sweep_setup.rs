//! A sweep's setup: its dataset, the scenario that describes it, its own sources and its stated conditions.

use super::quote_mentions;
use super::Checker;
use crate::dataset::schema::{Conditions, DpRouter, ModelRef, Reference, ScenarioLoad, SweepFile, REPORT_DATASET};

impl Checker<'_> {
    /// A sweep's dataset, scenario, own sources and conditions: which publication and which measured setup its
    /// points belong to, and how they were measured.
    pub(super) fn sweep_identity(&mut self, file: &str, sweep: &SweepFile) {
        let dataset = sweep.dataset.as_deref().unwrap_or(REPORT_DATASET);
        if let Some(d) = &sweep.dataset {
            if d.is_empty() || !d.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
                self.err(
                    file,
                    "/dataset".into(),
                    format!("dataset id `{d}` is not a lowercase slug"),
                    "one id per publication, e.g. `kubis-dgx-spark`",
                );
            }
        }
        if let Some(id) = &sweep.scenario {
            match self.ds.scenarios.get(id) {
                None => {
                    let known: Vec<&str> = self.ds.scenarios.keys().map(String::as_str).collect();
                    self.err(
                        file,
                        "/scenario".into(),
                        format!("unknown scenario `{id}`"),
                        &format!(
                            "add data/scenarios/{id}.json describing the measured setup, or use one of: {}",
                            known.join(", ")
                        ),
                    );
                }
                Some(sc) => {
                    // The scenario's load drives the loop the sweep's points are predicted with: it must be the
                    // load the benchmark ran (a closed loop, llama-benchy's batches, or one batch of prompts sent
                    // at once). An open loop at a finite rate has no loop here: its points stay unplaced.
                    let load = sweep.conditions.as_ref().map(|c| c.load.as_str());
                    let ran = load.map_or(Some(ScenarioLoad::ClosedLoop), ScenarioLoad::named);
                    if ran.is_some_and(|ran| ran != sc.load) {
                        self.err(
                            file,
                            "/conditions/load".into(),
                            format!(
                                "the sweep ran load {} but scenario `{id}` predicts `{}`",
                                load.map_or("`closed_loop` (no conditions state one)".into(), |l| format!("`{l}`")),
                                sc.load.name()
                            ),
                            "set the scenario's `load` to the sweep's",
                        );
                    }
                    // Two copies are predicted behind the scenario's router: a shuffling (random) router's
                    // uneven splits are part of what the sweep measured.
                    let router = sweep.conditions.as_ref().and_then(|c| c.router.as_deref());
                    if let Some(r) = router {
                        let lower = r.to_ascii_lowercase();
                        let random = lower.contains("shuffle") || lower.contains("random");
                        if random != (sc.router == DpRouter::Random) {
                            self.err(
                                file,
                                "/conditions/router".into(),
                                format!(
                                    "the sweep's router `{r}` spreads requests {} but scenario `{id}` predicts a {} router",
                                    if random { "at random" } else { "evenly" },
                                    if sc.router == DpRouter::Random { "random" } else { "balanced" }
                                ),
                                "a shuffling router (LiteLLM simple-shuffle) needs `\"router\": \"random\"` in its scenario, and only it",
                            );
                        }
                    }
                    if let ModelRef::Id(m) = &sc.model {
                        if *m != sweep.model {
                            self.err(
                                file,
                                "/scenario".into(),
                                format!("scenario `{id}` describes model `{m}`, the sweep measures `{}`", sweep.model),
                                "a sweep's scenario describes the setup its points were measured on",
                            );
                        }
                    }
                    if let Reference::Id(h) = &sc.hardware {
                        for (si, s) in sweep.series.iter().enumerate() {
                            if s.hardware != *h {
                                self.err(
                                    file,
                                    format!("/series/{si}/hardware"),
                                    format!("series hardware `{}` differs from scenario `{id}`'s `{h}`", s.hardware),
                                    "the scenario describes the machine the series ran on",
                                );
                            }
                        }
                    }
                }
            }
        } else if dataset != REPORT_DATASET {
            self.err(
                file,
                "/dataset".into(),
                format!("a sweep of dataset `{dataset}` needs its `scenario`"),
                "another publication's setup is not the report's: name the scenario that describes it",
            );
        }
        for (i, src) in sweep.sources.iter().enumerate() {
            if !src.is_external() {
                continue;
            }
            let sp = format!("/sources/{i}");
            if dataset == REPORT_DATASET {
                self.err(
                    file,
                    sp.clone(),
                    format!("external source `{}` in a sweep without a `dataset`", src.id),
                    "another publication's measurements are their own dataset: add \"dataset\": \"<publication id>\"",
                );
            }
            let url = src.original.as_deref().unwrap_or("");
            if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains(char::is_whitespace) {
                self.err(
                    file,
                    format!("{sp}/original"),
                    format!("external source `{}` has no URL", src.id),
                    "give the publication's address in `original` (https://...)",
                );
            }
            if let Some(d) = &src.published {
                if !is_iso_date(d) {
                    self.err(
                        file,
                        format!("{sp}/published"),
                        format!("publication date `{d}` is not YYYY-MM-DD"),
                        "write the date the source states, e.g. 2026-03-22",
                    );
                }
            }
        }
        let Some(c) = self.ds.sweeps.get(file).and_then(|s| s.conditions.as_ref()) else {
            if dataset != REPORT_DATASET {
                self.err(
                    file,
                    "/dataset".into(),
                    format!("a sweep of dataset `{dataset}` needs its `conditions`"),
                    "record the engine, its version and flags, the benchmark and the load as the source states them",
                );
            }
            return;
        };
        if c.from.is_empty() {
            self.err(
                file,
                "/conditions/from".into(),
                "conditions without a quote".into(),
                "quote where the source states them",
            );
        }
        for (i, f) in c.from.iter().enumerate() {
            self.provenance_at(file, &format!("/conditions/from/{i}"), f, None);
        }
        if !Conditions::LOADS.contains(&c.load.as_str()) {
            self.err(
                file,
                "/conditions/load".into(),
                format!("unknown load `{}`", c.load),
                "use `closed_loop` (fixed concurrency), `batch` (llama-benchy's runs), `all_at_once` (prompts sent together once) or `open_loop` (a finite rate)",
            );
        }
        let open = c.open_loop.as_ref();
        if open.is_some() != (c.load == "open_loop") {
            self.err(
                file,
                "/conditions/open_loop".into(),
                format!("load `{}` with{} `open_loop` settings", c.load, if open.is_some() { "" } else { "out" }),
                "an `open_loop` load states its burstiness (and its length spread) under `open_loop`; no other load has them",
            );
        }
        if let Some(o) = open {
            let in_range = o.burstiness.is_finite()
                && o.burstiness > 0.0
                && o.random_range_ratio.is_none_or(|r| r.is_finite() && (0.0..1.0).contains(&r));
            if !in_range {
                self.err(
                    file,
                    "/conditions/open_loop".into(),
                    "burstiness must be positive and random_range_ratio from 0 up to (not including) 1".into(),
                    "copy the values of `--burstiness` and `--random-range-ratio` the run used",
                );
            }
        }
        let numbers = [
            ("gpu_memory_utilization", c.gpu_memory_utilization),
            ("max_model_len", c.max_model_len.map(f64::from)),
            ("runs_per_level", c.runs_per_level.map(f64::from)),
            ("open_loop/burstiness", open.map(|o| o.burstiness)),
            ("open_loop/random_range_ratio", open.and_then(|o| o.random_range_ratio)),
        ];
        for (name, x) in numbers {
            if let Some(x) = x.filter(|x| !c.from.iter().any(|f| quote_mentions(&f.quote, *x))) {
                self.err(
                    file,
                    format!("/conditions/{name}"),
                    format!("no quote of the conditions contains the {name} {x}"),
                    "quote the sentence that states this number",
                );
            }
        }
    }
}

/// `YYYY-MM-DD` with a plausible month and day.
fn is_iso_date(d: &str) -> bool {
    let parts: Vec<&str> = d.split('-').collect();
    let num = |s: &str, len: usize| {
        (s.len() == len && s.chars().all(|c| c.is_ascii_digit())).then(|| s.parse::<u32>().ok()).flatten()
    };
    matches!(parts.as_slice(), [y, m, dd] if num(y, 4).is_some()
        && num(m, 2).is_some_and(|m| (1..=12).contains(&m))
        && num(dd, 2).is_some_and(|x| (1..=31).contains(&x)))
}

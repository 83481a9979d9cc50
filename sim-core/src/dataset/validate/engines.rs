//! Engine profiles: known coefficients with units and bases, `based_on` and `fitted_on` that resolve.

use super::Checker;
use crate::dataset::schema::{removed_engine_coefficient, DEFAULT_ENGINE, ENGINE_COEFFICIENTS};
use crate::units::Dimension;
use std::collections::BTreeSet;

impl Checker<'_> {
    /// Engine profiles: known coefficient names with a unit of the right dimension and a basis, a fit on a
    /// dataset that has points; scenarios name engines that exist.
    pub(super) fn engines(&mut self) {
        let datasets: BTreeSet<String> = self.ds.points().into_iter().map(|p| p.dataset).collect();
        for e in self.ds.engines.values() {
            let file = self.path("engine", &e.id);
            for (name, q) in &e.coefficients {
                let pointer = format!("/coefficients/{}", crate::position::escape_segment(name));
                let want = if name.ends_with("_s") { Dimension::Seconds } else { Dimension::Count };
                if let Some(removed) = removed_engine_coefficient(name) {
                    self.err(&file, pointer, removed, "drop it (the fit or the model card now carries that cost)");
                    continue;
                }
                if !ENGINE_COEFFICIENTS.contains(&name.as_str()) {
                    self.err(
                        &file,
                        pointer,
                        format!("unknown engine coefficient `{name}`"),
                        &format!("use one of {}", ENGINE_COEFFICIENTS.join(", ")),
                    );
                    continue;
                }
                self.quantity(&file, &pointer, q, want, true);
            }
            if let Some(parent) = &e.based_on {
                if e.fitted_on.is_some() {
                    self.err(
                        &file,
                        "/based_on".into(),
                        "`based_on` and `fitted_on` exclude each other".into(),
                        "fit the profile, or base it on a fitted one, not both",
                    );
                } else if !self.ds.engines.contains_key(parent) || parent == &e.id {
                    let ids: Vec<&str> = self.ds.engines.keys().map(String::as_str).collect();
                    self.err(
                        &file,
                        "/based_on".into(),
                        format!("`based_on` names no other engine profile: `{parent}`"),
                        &format!("use an id from data/engines/: {}", ids.join(", ")),
                    );
                }
            }
            if e.efficiencies_from_microbenchmarks && e.fitted_on.is_some() {
                self.err(
                    &file,
                    "/efficiencies_from_microbenchmarks".into(),
                    "`efficiencies_from_microbenchmarks` and `fitted_on` exclude each other".into(),
                    "a fitted profile fits its efficiencies; take them from microbenchmarks only in a given profile",
                );
            }
            // An engine choice a profile states is only as good as its source.
            let choices = [
                (
                    e.admission.as_ref().map(|a| &a.reference),
                    "admission",
                    "the admission policy",
                    "name the documentation or measurement that says the engine admits so",
                ),
                (
                    e.moe_kernel.as_ref().map(|m| &m.reference),
                    "moe_kernel",
                    "the MoE kernel",
                    "name the source that says the build runs this kernel",
                ),
            ];
            for (reference, field, what, hint) in choices {
                if reference.is_some_and(|r| r.trim().is_empty()) {
                    self.err(&file, format!("/{field}/reference"), format!("{what} has no reference"), hint);
                }
            }
            if let Some(f) = &e.fitted_on {
                if !datasets.contains(&f.dataset) {
                    let known: Vec<&str> = datasets.iter().map(String::as_str).collect();
                    self.err(
                        &file,
                        "/fitted_on/dataset".into(),
                        format!("no points of dataset `{}` to fit on", f.dataset),
                        &format!("use a dataset with points: {}", known.join(", ")),
                    );
                }
            }
        }
        for s in self.ds.scenarios.values() {
            let engine = s.engine.as_deref().unwrap_or(DEFAULT_ENGINE);
            // A dataset without engine files predicts with its own fit under the default id.
            let known =
                self.ds.engines.contains_key(engine) || (self.ds.engines.is_empty() && engine == DEFAULT_ENGINE);
            if !known {
                let file = self.path("scenario", &s.id);
                let ids: Vec<&str> = self.ds.engines.keys().map(String::as_str).collect();
                self.err(
                    &file,
                    "/engine".into(),
                    format!("unknown engine profile `{engine}`"),
                    &format!("use an id from data/engines/: {}", ids.join(", ")),
                );
            }
        }
    }
}

//! Scenario files: references that resolve, workloads, overrides with their basis, concurrency levels.

use super::concurrency_ok;
use super::Checker;
use crate::dataset::schema::{ModelRef, OverrideValue, Reference, ScenarioLoad};
use crate::units::parse_unit;

impl Checker<'_> {
    pub(super) fn scenarios(&mut self) {
        for s in self.ds.scenarios.values() {
            let file = self.path("scenario", &s.id);
            if let Reference::Id(id) = &s.hardware {
                if !self.ds.hardware.contains_key(id) {
                    self.err(
                        &file,
                        "/hardware".into(),
                        format!("unknown hardware `{id}`"),
                        "use an id from data/hardware/ or an inline object",
                    );
                }
            }
            if let ModelRef::Id(id) = &s.model {
                if !self.ds.models.contains_key(id) {
                    self.err(
                        &file,
                        "/model".into(),
                        format!("unknown model `{id}`"),
                        "use an id from data/models/ or an inline object",
                    );
                }
            }
            if s.workloads.is_empty() {
                self.err(&file, "/workloads".into(), "no workloads".into(), "add at least one {\"isl\", \"osl\"}");
            }
            for (i, w) in s.workloads.iter().enumerate() {
                if w.isl == 0 || w.osl == 0 {
                    self.err(
                        &file,
                        format!("/workloads/{i}"),
                        "sequence lengths must be positive".into(),
                        "isl and osl are token counts",
                    );
                }
                // A closed loop's clients would each draw a fresh length per request; the loop pools them into
                // cohorts of one length, so only a batch sent once lets lengths vary.
                if !w.output_lengths.is_fixed() && s.load == ScenarioLoad::ClosedLoop {
                    self.err(
                        &file,
                        format!("/workloads/{i}/output_lengths"),
                        "output lengths vary in a closed-loop scenario".into(),
                        "lengths vary only in one batch sent at once (`all_at_once`, `batch`)",
                    );
                }
            }
            // An override given as a quantity carries its basis like any other parameter; whether its dimension
            // fits the key is checked where the key table lives (`scenario::resolve`).
            for (key, value) in &s.overrides {
                let pointer = format!("/overrides/{}", crate::position::escape_segment(key));
                match value {
                    OverrideValue::Quantity(q) => match parse_unit(&q.unit) {
                        Some((dim, _)) => self.quantity(&file, &pointer, q, dim, true),
                        None => self.err(
                            &file,
                            format!("{pointer}/unit"),
                            format!("unknown unit `{}`", q.unit),
                            "use a unit of the key's dimension (docs/data.md, Quantities)",
                        ),
                    },
                    OverrideValue::Number(x) if !x.is_finite() || *x < 0.0 => self.err(
                        &file,
                        pointer,
                        format!("override must be a finite non-negative number, found {x}"),
                        "overrides are SI values",
                    ),
                    OverrideValue::Number(_) => {}
                }
            }
            for (i, c) in s.concurrency.iter().enumerate() {
                if !concurrency_ok(f64::from(*c)) {
                    self.err(
                        &file,
                        format!("/concurrency/{i}"),
                        format!("concurrency {c} outside 1..=4096"),
                        "concurrency counts closed-loop clients",
                    );
                }
            }
        }
    }
}

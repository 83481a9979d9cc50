//! The protocol's checks across modes of one setup: whether the model ranks a setup's measured modes as
//! measured (`ModeOrders`), and each mode's throughput over one machine's, predicted against measured
//! (`ModeRatios`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Setups measured in several modes, and those whose modes the model ranks as measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeOrders {
    pub setups: usize,
    pub ranked_as_measured: usize,
    /// The setups ranked otherwise, as `scenario isl/osl at c: measured a > b, predicted b > a`.
    pub misranked: Vec<String>,
}

impl ModeOrders {
    /// Adds the setups of `rows` with two or more modes.
    pub(crate) fn add<'a>(&mut self, rows: impl Iterator<Item = &'a crate::report::ReportRow>) {
        let mut setups: BTreeMap<(String, u32, u32, u32), Vec<&crate::report::ReportRow>> = BTreeMap::new();
        for r in rows {
            setups.entry((r.scenario.clone(), r.isl, r.osl, r.concurrency)).or_default().push(r);
        }
        for ((scenario, isl, osl, c), rows) in setups.into_iter().filter(|(_, rows)| rows.len() >= 2) {
            let order = |tok: fn(&crate::report::ReportRow) -> f64| {
                let mut modes: Vec<(f64, &str)> = rows.iter().map(|r| (tok(r), r.mode.name())).collect();
                modes.sort_by(|a, b| b.0.total_cmp(&a.0));
                modes.into_iter().map(|m| m.1).collect::<Vec<_>>().join(" > ")
            };
            let (measured, predicted) = (order(|r| r.measured_tok_s), order(|r| r.predicted_tok_s));
            self.setups += 1;
            if measured == predicted {
                self.ranked_as_measured += 1;
            } else {
                self.misranked
                    .push(format!("{scenario} {isl}/{osl} at {c}: measured {measured}, predicted {predicted}"));
            }
        }
    }
}

/// Each mode's throughput over one machine's at one setup (a model, workload and concurrency, across the dataset's
/// scenarios: a run that drafts on one machine and not on two is two scenarios of one setup), measured and
/// predicted, and the predicted ratio's error against the measured one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeRatios {
    /// One line per ratio, as `model isl/osl at c: tp2/single measured 0.36, predicted 1.52`.
    pub ratios: Vec<String>,
    /// The absolute percentage error of each predicted ratio against the measured one, in `ratios`' order.
    pub apes: Vec<f64>,
}

impl ModeRatios {
    /// The ratios of `rows`: every other mode's row over the one-machine row of its setup.
    pub(crate) fn of(rows: &[crate::report::ReportRow]) -> Option<ModeRatios> {
        type Setup = (String, u32, u32, u32);
        let mut setups: BTreeMap<Setup, Vec<&crate::report::ReportRow>> = BTreeMap::new();
        for r in rows {
            setups.entry((r.model.clone(), r.isl, r.osl, r.concurrency)).or_default().push(r);
        }
        let mut out = ModeRatios::default();
        for ((model, isl, osl, c), rows) in setups {
            let Some(one) = rows.iter().find(|r| r.mode == crate::dataset::schema::Mode::Single) else { continue };
            for r in rows.iter().filter(|r| r.mode != crate::dataset::schema::Mode::Single) {
                let measured = r.measured_tok_s / one.measured_tok_s;
                let predicted = r.predicted_tok_s / one.predicted_tok_s;
                out.apes.push(crate::stats::ape(predicted, measured));
                out.ratios.push(format!(
                    "{model} {isl}/{osl} at {c}: {}/single measured {measured:.2}, predicted {predicted:.2}",
                    r.mode.name()
                ));
            }
        }
        (!out.apes.is_empty()).then_some(out)
    }
}

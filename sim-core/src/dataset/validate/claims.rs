//! Claims: unique ids, operands that reach a published point or number, the stated value reproduced.

use super::Checker;
use crate::dataset::schema::{Claim, Operand};
use crate::dataset::MeasuredPoint;
use std::collections::BTreeSet;

/// How far the data may land from a claim's stated value: half a unit of its last stated decimal, and 5% more
/// for a claim stated as approximate.
pub fn claim_tolerance(c: &Claim) -> f64 {
    let half_unit = 0.5 * 10f64.powi(-(c.decimals as i32));
    if c.approximate {
        half_unit + 0.05 * c.stated.abs()
    } else {
        half_unit + 1e-9
    }
}

/// Whether `got`, the value the claim's operands give, reproduces what it states (`claim_tolerance`).
pub fn claim_reproduced(c: &Claim, got: f64) -> bool {
    (got - c.stated).abs().partial_cmp(&claim_tolerance(c)) != Some(std::cmp::Ordering::Greater)
}

impl Checker<'_> {
    pub(super) fn claims(&mut self) {
        let mut ids = BTreeSet::new();
        let points = self.ds.points();
        for (ci, (file, c)) in self.ds.claims.iter().enumerate() {
            // Index within its own file (claims of one file are contiguous).
            let local = self.ds.claims[..ci].iter().filter(|(f, _)| f == file).count();
            let cp = format!("/claims/{local}");
            if !ids.insert(c.id.clone()) {
                self.err(file, format!("{cp}/id"), format!("duplicate claim id `{}`", c.id), "claim ids are unique");
            }
            self.from(file, &cp, &c.from, None);
            if c.unverifiable.is_some() {
                if c.numerator.is_some() || c.denominator.is_some() {
                    self.err(
                        file,
                        cp.clone(),
                        "an unverifiable claim has no operands".into(),
                        "drop the operands or the `unverifiable` field",
                    );
                }
                continue;
            }
            let (Some(n), Some(d)) = (&c.numerator, &c.denominator) else {
                self.err(
                    file,
                    cp.clone(),
                    "a claim needs a numerator and a denominator".into(),
                    "or mark it `unverifiable` with a reason",
                );
                continue;
            };
            let nv = self.operand(file, &format!("{cp}/numerator"), n, &points);
            let dv = self.operand(file, &format!("{cp}/denominator"), d, &points);
            let (Some(nv), Some(dv)) = (nv, dv) else { continue };
            let got = c.kind.value(nv, dv);
            if !claim_reproduced(c, got) {
                self.err(
                    file,
                    format!("{cp}/stated"),
                    format!("claim `{}` states {} but the data give {got:.3}", c.id, c.stated),
                    "the operands or the stated value are mistranscribed",
                );
            }
        }
    }

    fn operand(&mut self, file: &str, pointer: &str, op: &Operand, points: &[MeasuredPoint]) -> Option<f64> {
        match op {
            Operand::Point(k) => {
                let found: Vec<_> = points.iter().filter(|p| p.is(k)).collect();
                match found.as_slice() {
                    [p] => Some(p.output_tok_s),
                    [] if !self.ds.failed.is_empty() && !self.ds.sweeps.values().any(|s| s.model == k.model) => None,
                    [] => {
                        self.err(
                            file,
                            pointer.to_string(),
                            format!(
                                "no published point {} {} {}/{} at {}",
                                k.model,
                                k.mode.name(),
                                k.isl,
                                k.osl,
                                k.concurrency
                            ),
                            "the operand must match a point in data/sweeps/",
                        );
                        None
                    }
                    _ => None,
                }
            }
            Operand::Pointer { file: target, pointer: ptr } => match self.ds.number_at(target, ptr) {
                Some(x) => Some(x),
                None => {
                    self.err(
                        file,
                        pointer.to_string(),
                        format!("no number at {target}#{ptr}"),
                        "the pointer must reach a number in a loaded data file",
                    );
                    None
                }
            },
            Operand::Constant { constant, reason } => {
                if reason.trim().is_empty() {
                    self.err(
                        file,
                        pointer.to_string(),
                        "a constant operand needs a reason".into(),
                        "say where the constant comes from",
                    );
                }
                (*constant != 0.0).then_some(*constant)
            }
        }
    }
}

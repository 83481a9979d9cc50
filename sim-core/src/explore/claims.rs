//! The report's derived claims ("11x at 32 streams", "+30%"): what each compares, what the published points
//! give, and where the gain chart places it. The validator checks the same claims with the same look-up.

use crate::dataset::schema::{Claim, ClaimKind, Operand, PointKey};
use crate::dataset::{Dataset, MeasuredPoint};
use serde::Serialize;

/// One claim, for the list under the gain chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimRow {
    pub id: String,
    /// As stated: `27x`, `+30%`.
    pub stated: String,
    /// What it compares, in words.
    pub compares: String,
    pub source: String,
    pub quote: String,
    pub caveat: Option<String>,
    pub unverifiable: Option<String>,
    /// The numerator's and denominator's published values, when both operands are points.
    pub from_data: Option<(f64, f64)>,
    /// For a claim over two concurrencies: the denominator's concurrency, the numerator's mode there, and the
    /// denominator's value (the equal-concurrency comparison the data give).
    pub equal_concurrency: Option<(u32, f64, f64)>,
    /// Numerator and denominator at different concurrencies (marked `*` on the chart).
    pub unequal: bool,
}

/// A claim placed on the gain chart: its stated ratio at the numerator's concurrency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimMarker {
    pub id: String,
    pub x: f64,
    pub y: f64,
    pub label: String,
    /// Drawn hollow: the claim compares two concurrencies.
    pub hollow: bool,
}

/// The published point an operand names, if it is one.
fn operand_point(o: &Option<Operand>) -> Option<&PointKey> {
    match o {
        Some(Operand::Point(k)) => Some(k),
        _ => None,
    }
}

/// The published throughput a point key names, when exactly that point exists.
pub fn point_value(points: &[MeasuredPoint], k: &PointKey) -> Option<f64> {
    points.iter().find(|p| p.is(k)).map(|p| p.output_tok_s)
}

/// A claim's stated value as the report words it: `27x`, `+30%`, `98%` (`about` when approximate).
pub fn stated_label(c: &Claim) -> String {
    let d = c.decimals as usize;
    let v = match c.kind {
        ClaimKind::Ratio => format!("{:.d$}x", c.stated),
        ClaimKind::GainPercent => format!("+{:.d$}%", c.stated),
        ClaimKind::Percent => format!("{:.d$}%", c.stated),
    };
    if c.approximate {
        format!("about {v}")
    } else {
        v
    }
}

/// A claim's stated value as a pair / one station ratio (a gain of +30% is 1.3x); percent claims have none.
fn stated_ratio(c: &Claim) -> Option<f64> {
    match c.kind {
        ClaimKind::Ratio => Some(c.stated),
        ClaimKind::GainPercent => Some(1.0 + c.stated / 100.0),
        ClaimKind::Percent => None,
    }
}

fn describe_operand(o: &Option<Operand>) -> String {
    match o {
        Some(Operand::Point(k)) => format!("{} at {} streams ({} / {})", k.mode.name(), k.concurrency, k.isl, k.osl),
        Some(Operand::Pointer { file, pointer }) => format!("{file} {pointer}"),
        Some(Operand::Constant { constant, reason }) => format!("{constant} ({reason})"),
        None => "not given".into(),
    }
}

/// Does a claim belong to the model: its operands name it or, without point operands, its id starts with
/// the model's id (and no longer model id fits better: `glm-5.3-flash-...` is not `glm-5.3`'s).
fn claim_of(c: &Claim, model: &str, models: &[&str]) -> bool {
    let keys: Vec<&PointKey> = [&c.numerator, &c.denominator].into_iter().filter_map(operand_point).collect();
    if !keys.is_empty() {
        return keys.iter().any(|k| k.model == model);
    }
    let prefix = |m: &str| c.id.strip_prefix(m).is_some_and(|r| r.starts_with('-'));
    prefix(model) && !models.iter().any(|m| m.len() > model.len() && prefix(m))
}

/// Every claim of a model (all claims with `None`), in the dataset's order; `points` are the dataset's.
pub fn claims(ds: &Dataset, points: &[MeasuredPoint], model: Option<&str>) -> Vec<ClaimRow> {
    let models: Vec<&str> = ds.models.keys().map(String::as_str).collect();
    ds.claims
        .iter()
        .map(|(_, c)| c)
        .filter(|c| model.is_none_or(|m| claim_of(c, m, &models)))
        .map(|c| {
            let (n, d) = (operand_point(&c.numerator), operand_point(&c.denominator));
            let values = n.and_then(|n| point_value(points, n)).zip(d.and_then(|d| point_value(points, d)));
            let unequal = matches!((n, d), (Some(n), Some(d)) if n.concurrency != d.concurrency);
            let equal_concurrency = match (n, d, values) {
                (Some(n), Some(d), Some((_, dv))) if unequal => {
                    let same = PointKey { concurrency: d.concurrency, ..n.clone() };
                    point_value(points, &same).map(|v| (d.concurrency as u32, v, dv))
                }
                _ => None,
            };
            ClaimRow {
                id: c.id.clone(),
                stated: stated_label(c),
                compares: format!("{} over {}", describe_operand(&c.numerator), describe_operand(&c.denominator)),
                source: c.from.source.clone(),
                quote: c.from.quote.clone(),
                caveat: c.caveat.clone(),
                unverifiable: c.unverifiable.clone(),
                from_data: values,
                equal_concurrency,
                unequal,
            }
        })
        .collect()
}

/// The claims the gain chart places: ratios between two published points of the model and workload.
pub fn claim_markers(ds: &Dataset, model: &str, isl: u32, osl: u32) -> Vec<ClaimMarker> {
    ds.claims
        .iter()
        .filter_map(|(_, c)| {
            let (n, d) = (operand_point(&c.numerator)?, operand_point(&c.denominator)?);
            let ours = |k: &PointKey| k.model == model && k.isl == isl && k.osl == osl;
            if !ours(n) || !ours(d) || c.unverifiable.is_some() {
                return None;
            }
            let y = stated_ratio(c)?;
            let unequal = n.concurrency != d.concurrency;
            let label = format!("{}{}", stated_label(c), if unequal { "*" } else { "" });
            Some(ClaimMarker { id: c.id.clone(), x: n.concurrency, y, label, hollow: unequal })
        })
        .collect()
}

/// Whether the data reproduce a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimVerdict {
    /// The operands give the stated value within its tolerance.
    Reproduced,
    /// The operands give another value.
    NotReproduced,
    /// An operand names nothing the data hold (no such point, no number at the pointer, a zero constant).
    NoData,
    /// The claim says why the data cannot check it and names no operands.
    Unverifiable,
}

impl ClaimVerdict {
    pub fn name(self) -> &'static str {
        match self {
            ClaimVerdict::Reproduced => "yes",
            ClaimVerdict::NotReproduced => "NO",
            ClaimVerdict::NoData => "no data",
            ClaimVerdict::Unverifiable => "unverifiable",
        }
    }

    /// A verdict that fails the check (`sim-core claims` exits 1, `validate` reports an error).
    pub fn fails(self) -> bool {
        matches!(self, ClaimVerdict::NotReproduced | ClaimVerdict::NoData)
    }
}

/// One operand of a claim and the number the data hold for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperandValue {
    /// What it names, in words.
    pub names: String,
    pub value: Option<f64>,
}

/// A derived claim recomputed from the data: where it is, what it states, its operands' values, what they give
/// and whether that reproduces the statement (the validator's rule, `dataset::validate::claim_reproduced`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimCheck {
    pub id: String,
    /// The claims file and the claim's pointer in it.
    pub file: String,
    pub pointer: String,
    /// As stated (`11x`, `+30%`) and as a number.
    pub stated: String,
    pub stated_value: f64,
    /// What the operands give, when both hold a number.
    pub computed: Option<f64>,
    /// How far `computed` may land from `stated_value`.
    pub tolerance: f64,
    pub numerator: Option<OperandValue>,
    pub denominator: Option<OperandValue>,
    pub verdict: ClaimVerdict,
    /// Why the data cannot check it, for an unverifiable claim.
    pub unverifiable: Option<String>,
    pub source: String,
    /// What a reader must know to read the figure (`data/claims.json`'s caveat): unequal loads, a baseline
    /// from another publication.
    pub caveat: Option<String>,
}

/// The number an operand names: the one published point it keys (none when no point or several match), the
/// number at a pointer of a loaded file, or a constant other than zero (a claim divides by it).
pub fn operand_value(ds: &Dataset, points: &[MeasuredPoint], op: &Operand) -> Option<f64> {
    match op {
        Operand::Point(k) => match points.iter().filter(|p| p.is(k)).collect::<Vec<_>>().as_slice() {
            [p] => Some(p.output_tok_s),
            _ => None,
        },
        Operand::Pointer { file, pointer } => ds.number_at(file, pointer),
        Operand::Constant { constant, .. } => (*constant != 0.0).then_some(*constant),
    }
}

/// Every claim of the dataset recomputed from its points, in the dataset's order.
pub fn check_claims(ds: &Dataset, points: &[MeasuredPoint]) -> Vec<ClaimCheck> {
    ds.claims
        .iter()
        .enumerate()
        .map(|(ci, (file, c))| {
            // Index within its own file (claims of one file are contiguous).
            let local = ds.claims[..ci].iter().filter(|(f, _)| f == file).count();
            let operand = |o: &Option<Operand>| {
                o.as_ref().map(|op| OperandValue {
                    names: match op {
                        Operand::Point(k) => {
                            format!("{} {} {}/{} at {}", k.model, k.mode.name(), k.isl, k.osl, k.concurrency)
                        }
                        _ => describe_operand(o),
                    },
                    value: operand_value(ds, points, op),
                })
            };
            let (numerator, denominator) = (operand(&c.numerator), operand(&c.denominator));
            let values = numerator.as_ref().and_then(|n| n.value).zip(denominator.as_ref().and_then(|d| d.value));
            // 0 / 0 gives no number to compare: no data, as for a missing operand.
            let computed = values.map(|(n, d)| c.kind.value(n, d)).filter(|x| !x.is_nan());
            let verdict = match computed {
                _ if c.unverifiable.is_some() => ClaimVerdict::Unverifiable,
                Some(got) if crate::dataset::validate::claim_reproduced(c, got) => ClaimVerdict::Reproduced,
                Some(_) => ClaimVerdict::NotReproduced,
                None => ClaimVerdict::NoData,
            };
            ClaimCheck {
                id: c.id.clone(),
                file: file.clone(),
                pointer: format!("/claims/{local}"),
                stated: stated_label(c),
                stated_value: c.stated,
                computed,
                tolerance: crate::dataset::validate::claim_tolerance(c),
                numerator,
                denominator,
                verdict,
                unverifiable: c.unverifiable.clone(),
                source: c.from.source.clone(),
                caveat: c.caveat.clone(),
            }
        })
        .collect()
}

impl super::Workspace {
    /// Every claim of a model (all claims with `None`), with what the data give.
    pub fn claims(&self, model: Option<&str>) -> Vec<ClaimRow> {
        claims(&self.dataset, self.points(), model)
    }

    /// Every claim recomputed from the data (`sim-core claims`).
    pub fn check_claims(&self) -> Vec<ClaimCheck> {
        check_claims(&self.dataset, self.points())
    }
}

//! Provenance of every published number: `From` (a source and a verbatim quote), `Basis` and `Quantity`.

use serde::{Deserialize, Serialize};

/// Where a published value comes from: a seed file id and a verbatim quote from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct From {
    pub source: String,
    pub quote: String,
}

/// How a parameter came to be: the honesty label every model input carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Published,
    Derived,
    ReportedElsewhere,
    Fitted,
    Assumed,
}

impl Basis {
    pub fn label(self) -> &'static str {
        match self {
            Basis::Published => "published",
            Basis::Derived => "derived",
            Basis::ReportedElsewhere => "reported elsewhere",
            Basis::Fitted => "fitted",
            Basis::Assumed => "assumed",
        }
    }
}

/// A number with a unit and its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    pub value: f64,
    pub unit: String,
    pub basis: Basis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<From>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derivation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Quantity {
    /// A quantity built in code (overrides, calibration output); `basis` says why it exists.
    pub fn new(value: f64, unit: &str, basis: Basis, why: &str) -> Self {
        let mut q = Quantity {
            value,
            unit: unit.to_string(),
            basis,
            from: None,
            derivation: None,
            reference: None,
            fitted_on: None,
            reason: None,
            note: None,
        };
        match basis {
            Basis::Derived => q.derivation = Some(why.into()),
            Basis::ReportedElsewhere => q.reference = Some(why.into()),
            Basis::Fitted => q.fitted_on = Some(why.into()),
            _ => q.reason = Some(why.into()),
        }
        q
    }

    /// The value in SI units, if the unit is known.
    pub fn si(&self) -> Option<f64> {
        crate::units::parse_unit(&self.unit).map(|(_, f)| self.value * f)
    }
}

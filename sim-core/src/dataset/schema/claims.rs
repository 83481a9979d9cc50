//! The claims file: ratios and percentages a publication states, with the operands that reproduce them.

use super::{From, Mode};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimsFile {
    pub schema_version: u32,
    pub kind: String,
    pub claims: Vec<Claim>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    Ratio,
    GainPercent,
    Percent,
}

impl ClaimKind {
    /// The value a claim of this kind states for a numerator and a denominator: `2.0` (ratio), `+100` (gain
    /// percent), `200` (percent). The validator checks claims with it; the page shows it.
    pub fn value(self, numerator: f64, denominator: f64) -> f64 {
        match self {
            ClaimKind::Ratio => numerator / denominator,
            ClaimKind::GainPercent => (numerator / denominator - 1.0) * 100.0,
            ClaimKind::Percent => numerator / denominator * 100.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    pub kind: ClaimKind,
    pub stated: f64,
    #[serde(default)]
    pub decimals: u32,
    #[serde(default)]
    pub approximate: bool,
    #[serde(default)]
    pub numerator: Option<Operand>,
    #[serde(default)]
    pub denominator: Option<Operand>,
    #[serde(default)]
    pub unverifiable: Option<String>,
    #[serde(default)]
    pub caveat: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub from: From,
}

/// A claim operand: a published point, a number elsewhere in the dataset, or a constant with a reason.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Operand {
    Point(PointKey),
    Pointer { file: String, pointer: String },
    Constant { constant: f64, reason: String },
}

/// The variants in serde's untagged order (a point, then `{file, pointer}`, then `{constant, reason}`), read
/// through a borrowed JSON value like every file (no second copy of the reading code for untagged buffering).
impl<'de> Deserialize<'de> for Operand {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::Value;
        let v = Value::deserialize(d)?;
        if let Ok(k) = PointKey::deserialize(&v) {
            return Ok(Operand::Point(k));
        }
        let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        if let (Some(file), Some(pointer)) = (text("file"), text("pointer")) {
            return Ok(Operand::Pointer { file, pointer });
        }
        if let (Some(constant), Some(reason)) = (v.get("constant").and_then(Value::as_f64), text("reason")) {
            return Ok(Operand::Constant { constant, reason });
        }
        Err(D::Error::custom(format!(
            "an operand is a published point {{model, mode, isl, osl, concurrency}}, a {{file, pointer}} or a \
             {{constant, reason}}, found {v}"
        )))
    }
}

/// Identifies one published point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PointKey {
    pub model: String,
    pub mode: Mode,
    pub isl: u32,
    pub osl: u32,
    pub concurrency: f64,
}

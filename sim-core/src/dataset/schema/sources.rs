//! The sources file: the seed texts and publications every `from.source` names.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SourcesFile {
    pub schema_version: u32,
    pub kind: String,
    pub sources: Vec<Source>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub id: String,
    pub file: String,
    pub language: String,
    pub title: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
}

impl Source {
    /// Imported measurement files are not seed texts: their quotes are checked against the file at import.
    pub fn is_import(&self) -> bool {
        self.role == "import"
    }

    /// A publication other than the report (role `external`): `original` holds its URL, `published` its date,
    /// and `file` the text its quotes were copied into, relative to the seeds directory
    /// (`../external-sweeps.md`). Its quotes are checked when that text is at hand.
    pub fn is_external(&self) -> bool {
        self.role == ROLE_EXTERNAL
    }
}

/// The source role of a publication other than the GB300 report.
pub const ROLE_EXTERNAL: &str = "external";

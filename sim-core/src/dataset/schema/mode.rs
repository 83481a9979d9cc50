//! Cluster modes: how one or two machines serve a model (`single`, `tp2`, `pd`, `dp2`, `pp2`, `ep2`).

use serde::{Deserialize, Serialize};

/// Cluster modes of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One machine (all its GPUs as one engine).
    Single,
    /// One engine tensor-parallel across two machines.
    Tp2,
    /// Prefill on one machine, decode on the other.
    Pd,
    /// Two independent copies, one per machine, behind a router that gives each half of the clients.
    Dp2,
    /// One engine pipeline-parallel across two machines: half of the layers on each.
    Pp2,
    /// One engine across two machines, attention tensor-parallel and the routed experts split between them
    /// (expert parallel); only for mixture-of-experts models.
    Ep2,
}

impl Mode {
    pub const ALL: [Mode; 6] = [Mode::Single, Mode::Tp2, Mode::Pd, Mode::Dp2, Mode::Pp2, Mode::Ep2];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Tp2 => "tp2",
            Mode::Pd => "pd",
            Mode::Dp2 => "dp2",
            Mode::Pp2 => "pp2",
            Mode::Ep2 => "ep2",
        }
    }

    /// How a person reads the mode.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Single => "one machine",
            Mode::Tp2 => "TP2 across both",
            Mode::Pd => "PD (prefill / decode split)",
            Mode::Dp2 => "two copies behind a router",
            Mode::Pp2 => "PP2 (half of the layers on each)",
            Mode::Ep2 => "EP2 (experts split across both)",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }

    /// Machines the mode uses.
    pub fn machines(self) -> u32 {
        match self {
            Mode::Single => 1,
            Mode::Tp2 | Mode::Pd | Mode::Dp2 | Mode::Pp2 | Mode::Ep2 => 2,
        }
    }
}

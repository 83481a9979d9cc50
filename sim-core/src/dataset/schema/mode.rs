//! Cluster modes: how one, two or four machines serve a model (`single`, `tp2`, `pd`, `dp2`, `pp2`, `ep2`, `dpep2`;
//! `tp4`, `pp4`, `dp4`).

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
    /// One engine tensor-parallel across four machines.
    Tp4,
    /// One engine pipeline-parallel across four machines: a quarter of the layers on each.
    Pp4,
    /// Four independent copies, one per machine, behind a router that gives each a quarter of the clients.
    Dp4,
    /// Two data-parallel engines, one per machine, each with its own requests, attention and KV, whose MoE layers
    /// split the routed experts across both and exchange every token (vLLM's DP+EP: `--data-parallel-size 2
    /// --enable-expert-parallel`); only for mixture-of-experts models.
    Dpep2,
}

impl Mode {
    /// The modes of one machine and of a pair, the report's question (what a second machine buys): every
    /// scenario, plan and chart answers these.
    pub const ALL: [Mode; 7] = [Mode::Single, Mode::Tp2, Mode::Pd, Mode::Dp2, Mode::Pp2, Mode::Ep2, Mode::Dpep2];

    /// The modes of four machines that scale from two (tensor and pipeline parallel, copies), answered where a
    /// scenario names them (`plan --machines 4`). PD and EP across four are not modelled.
    pub const FOUR_MACHINES: [Mode; 3] = [Mode::Tp4, Mode::Pp4, Mode::Dp4];

    /// Every mode, in the order plans and tables show them.
    pub const EVERY: [Mode; 10] = [
        Mode::Single,
        Mode::Tp2,
        Mode::Pd,
        Mode::Dp2,
        Mode::Pp2,
        Mode::Ep2,
        Mode::Dpep2,
        Mode::Tp4,
        Mode::Pp4,
        Mode::Dp4,
    ];

    /// The modes a cluster of `machines` answers: one machine's and a pair's, and four machines' from four on.
    pub fn up_to(machines: u32) -> Vec<Mode> {
        Mode::EVERY.into_iter().filter(|m| m.machines() <= machines).collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Tp2 => "tp2",
            Mode::Pd => "pd",
            Mode::Dp2 => "dp2",
            Mode::Pp2 => "pp2",
            Mode::Ep2 => "ep2",
            Mode::Dpep2 => "dpep2",
            Mode::Tp4 => "tp4",
            Mode::Pp4 => "pp4",
            Mode::Dp4 => "dp4",
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
            Mode::Dpep2 => "DP+EP (own requests on each, experts split)",
            Mode::Tp4 => "TP4 across four",
            Mode::Pp4 => "PP4 (a quarter of the layers on each)",
            Mode::Dp4 => "four copies behind a router",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::EVERY.into_iter().find(|m| m.name() == s)
    }

    /// Machines the mode uses.
    pub fn machines(self) -> u32 {
        match self {
            Mode::Single => 1,
            Mode::Tp2 | Mode::Pd | Mode::Dp2 | Mode::Pp2 | Mode::Ep2 | Mode::Dpep2 => 2,
            Mode::Tp4 | Mode::Pp4 | Mode::Dp4 => 4,
        }
    }
}

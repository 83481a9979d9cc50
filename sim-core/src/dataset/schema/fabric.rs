//! Fabric files: the measured NCCL collectives and RDMA tests of one machine pair's link.

use super::{From, Source};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FabricFile {
    pub schema_version: u32,
    pub kind: String,
    /// Sources defined by this file itself (imported measurements name the file they were read from).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    pub id: String,
    pub hardware: String,
    pub link: FabricLink,
    pub nccl: Vec<NcclRow>,
    pub rdma: Vec<RdmaRow>,
    #[serde(default)]
    pub expectations: Vec<Expectation>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FabricLink {
    pub rails: u32,
    pub line_rate_gbit_s_per_rail: f64,
    pub mtu_bytes: u32,
    pub transport: String,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    Alltoall,
    Sendrecv,
    SendrecvBidirectional,
}

impl Collective {
    pub const ALL: [Collective; 8] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::Broadcast,
        Collective::Reduce,
        Collective::Alltoall,
        Collective::Sendrecv,
        Collective::SendrecvBidirectional,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::Alltoall => "alltoall",
            Collective::Sendrecv => "sendrecv",
            Collective::SendrecvBidirectional => "sendrecv_bidirectional",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NcclRow {
    pub collective: Collective,
    pub peak_size_bytes: f64,
    pub peak_busbw_gb_s: f64,
    #[serde(default)]
    pub busbw_16gib_gb_s: Option<f64>,
    #[serde(default)]
    pub total_16gib_gb_s: Option<f64>,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RdmaRow {
    pub test: String,
    #[serde(default)]
    pub rail: Option<u32>,
    #[serde(default)]
    pub direction: Option<String>,
    #[serde(default)]
    pub message_bytes: Option<f64>,
    #[serde(default)]
    pub bandwidth_gbit_s: Option<f64>,
    #[serde(default)]
    pub link_utilisation_percent: Option<f64>,
    #[serde(default)]
    pub mean_us: Option<f64>,
    #[serde(default)]
    pub p99_us_per_rail: Option<Vec<f64>>,
    pub from: From,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub what: String,
    pub min_gbit_s: f64,
    pub max_gbit_s: f64,
    pub from: From,
}

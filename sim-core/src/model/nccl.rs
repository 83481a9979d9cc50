//! NCCL's own latency model for one collective call: a base latency per algorithm and protocol plus a latency per
//! step of the algorithm, by the hardware each step crosses (NVLink or PCIe inside a machine, the network across).
//!
//! Reported elsewhere: NVIDIA/nccl `src/graph/tuning.cc` at commit b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2
//! (`baseLat`, `hwLat`, `ncclTopoTuneModel`, `getNetOverhead`). In microseconds:
//!
//! ```text
//!                  base (LL, LL128, Simple)   NVLink hop          PCI hop             network hop
//!   Tree           6.8, 14.0, 0               .6, 1.25, 28        1.0, 1.9, 28        5.0, 8.5, 28
//!   Ring           6.6, 14.0, 8.4             .6, 1.9, 3.4        1.0, 2.5, 5.7       2.7, 4.0, 14.0
//!
//!   all-reduce, n ranks on m machines:
//!   ring:  base + (2(n-1) - inter) x max(intra, net overhead) + inter x net,   inter = 2m if m > 1 else 0
//!   tree:  base + 2 x ((n/m - 1) x intra + log2(m) x net)
//!   all-gather or reduce-scatter (ring only): base + (n-1 - (m-1)) x max(intra, overhead) + (m-1) x net
//! ```
//!
//! A decode step's all-reduce carries a few kilobytes (tokens x hidden x 2 bytes), where NCCL picks the LL
//! protocol and whichever of ring and tree has the lower latency: `small_message_latency_s` is that minimum.
//! The network hop is NCCL's figure for an RDMA NIC plus what the link's transport adds (NCCL's `latencyInter`,
//! the net plugin's reported latency): a hop costs at least half of the transport's small-message round trip,
//! which is where TCP sockets (~200-500 us a round trip) differ from RDMA.
//!
//! NCCL's ring counts `2m` network steps for an all-reduce across `m > 1` machines, which for one GPU per
//! machine exceeds the ring's `2(n-1)` steps; the in-machine steps are then counted as zero, not negative.

pub use crate::spec::IntraMachineFabric as IntraFabric;

/// NCCL's collective algorithms that a small message can take here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Tree,
    Ring,
}

/// NCCL's protocols: LL (8-byte flag-and-data stores, lowest latency), LL128, Simple (highest bandwidth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Ll,
    Ll128,
    Simple,
}

/// The collectives whose latency the step pays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    AllReduce,
    /// An all-gather or a reduce-scatter: `n - 1` ring steps (the dispatch and combine of vLLM's all-gather /
    /// reduce-scatter backend, which runs only with data parallel > 1; no mode here does).
    Gather,
}

/// `baseLat[algorithm][protocol]`, microseconds (tuning.cc).
const BASE_LAT_US: [[f64; 3]; 2] = [[6.8, 14.0, 0.0], [6.6, 14.0, 8.4]];

/// `hwLat[hardware][algorithm][protocol]`, microseconds (tuning.cc): NVLink, PCI, network.
const HW_LAT_US: [[[f64; 3]; 2]; 3] =
    [[[0.6, 1.25, 28.0], [0.6, 1.9, 3.4]], [[1.0, 1.9, 28.0], [1.0, 2.5, 5.7]], [[5.0, 8.5, 28.0], [2.7, 4.0, 14.0]]];

/// `getNetOverhead`: the network post overhead every ring step pays once the communicator spans machines, 1 us
/// on Intel x86 and on Arm, 2 us on AMD x86 (tuning.cc); 1 us taken, times 3 for Simple as NCCL does.
const NET_OVERHEAD_US: f64 = 1.0;

/// `NCCL_P2P_LL_THRESHOLD`'s default, bytes (NVIDIA/nccl `src/enqueue.cc`, reported elsewhere): a send or receive
/// of at most this much per channel goes by LL, a larger one by Simple. One channel is taken.
const P2P_LL_THRESHOLD_BYTES: f64 = 16384.0;

/// One communicator: its ranks, the machines they sit on, the in-machine fabric and the network hop's floor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Communicator {
    pub ranks: f64,
    pub machines: f64,
    pub intra: IntraFabric,
    /// Least time of one network step, seconds: half the link transport's small-message round trip (0 inside
    /// one machine).
    pub net_hop_floor_s: f64,
}

impl Communicator {
    /// `ranks` GPUs inside one machine.
    pub fn in_machine(ranks: f64, intra: IntraFabric) -> Self {
        Communicator { ranks, machines: 1.0, intra, net_hop_floor_s: 0.0 }
    }

    /// NCCL's modelled latency of one `call` by `algorithm` and `protocol`, seconds (0 for one rank).
    pub fn latency_s(&self, call: Call, algorithm: Algorithm, protocol: Protocol) -> f64 {
        let n = self.ranks.max(1.0).round();
        let m = self.machines.max(1.0).round().min(n);
        if n <= 1.0 {
            return 0.0;
        }
        let (a, p) = (algorithm as usize, protocol as usize);
        let intra_hw = match self.intra {
            IntraFabric::Nvlink => 0,
            IntraFabric::Pcie => 1,
        };
        let intra_us = HW_LAT_US[intra_hw][a][p];
        let net_us = HW_LAT_US[2][a][p].max(self.net_hop_floor_s * 1e6);
        let overhead_us =
            if m > 1.0 { NET_OVERHEAD_US * if protocol == Protocol::Simple { 3.0 } else { 1.0 } } else { 0.0 };
        let us = match (call, algorithm) {
            (Call::AllReduce, Algorithm::Ring) => {
                let steps = 2.0 * (n - 1.0);
                let inter = if m > 1.0 { 2.0 * m } else { 0.0 };
                BASE_LAT_US[a][p] + (steps - inter).max(0.0) * intra_us.max(overhead_us) + inter * net_us
            }
            (Call::AllReduce, Algorithm::Tree) => {
                BASE_LAT_US[a][p] + 2.0 * ((n / m - 1.0) * intra_us + m.log2().floor() * net_us)
            }
            // NCCL runs all-gather and reduce-scatter as rings only.
            (Call::Gather, _) => {
                let a = Algorithm::Ring as usize;
                let (intra_us, net_us) =
                    (HW_LAT_US[intra_hw][a][p], HW_LAT_US[2][a][p].max(self.net_hop_floor_s * 1e6));
                let inter = m - 1.0;
                BASE_LAT_US[a][p] + ((n - 1.0) - inter).max(0.0) * intra_us.max(overhead_us) + inter * net_us
            }
        };
        us * 1e-6
    }

    /// The latency of one point-to-point send of `bytes` between two ranks of this communicator on different
    /// machines (`ncclSend` / `ncclRecv`, as torch.distributed's `isend` runs on NCCL): NCCL's tuning model has no
    /// row for it, so it is taken as one step of a ring across the network, the protocol NCCL picks for a send of
    /// that size (LL up to `NCCL_P2P_LL_THRESHOLD`, Simple above): base latency plus one network hop, the hop no
    /// faster than the transport's (assumed from tuning.cc's figures).
    pub fn send_latency_s(&self, bytes: f64) -> f64 {
        let protocol = if bytes <= P2P_LL_THRESHOLD_BYTES { Protocol::Ll } else { Protocol::Simple };
        let pair = Communicator { ranks: 2.0, machines: 2.0, ..*self };
        // Two ranks on two machines: a ring all-gather's single step, which crosses the network.
        pair.latency_s(Call::Gather, Algorithm::Ring, protocol)
    }

    /// The latency of a decode-sized `call`: the LL protocol, by the faster of ring and tree (NCCL's choice for
    /// messages of a few kilobytes, whose bandwidth term is negligible).
    pub fn small_message_latency_s(&self, call: Call) -> f64 {
        self.latency_s(call, Algorithm::Ring, Protocol::Ll).min(self.latency_s(call, Algorithm::Tree, Protocol::Ll))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: f64) -> f64 {
        (x * 1e6 * 1000.0).round() / 1000.0
    }

    #[test]
    fn nccl_latencies_follow_its_tuning_table() {
        // Eight NVLink GPUs: ring LL 6.6 + 14 x 0.6 = 15.0 us, tree LL 6.8 + 2 x 7 x 0.6 = 15.2 us.
        let eight = Communicator::in_machine(8.0, IntraFabric::Nvlink);
        assert_eq!(us(eight.latency_s(Call::AllReduce, Algorithm::Ring, Protocol::Ll)), 15.0);
        assert_eq!(us(eight.latency_s(Call::AllReduce, Algorithm::Tree, Protocol::Ll)), 15.2);
        assert_eq!(us(eight.small_message_latency_s(Call::AllReduce)), 15.0);
        // Two NVLink GPUs: 6.6 + 2 x 0.6; four over PCIe: 6.6 + 6 x 1.0.
        assert_eq!(
            us(Communicator::in_machine(2.0, IntraFabric::Nvlink).small_message_latency_s(Call::AllReduce)),
            7.8
        );
        assert_eq!(us(Communicator::in_machine(4.0, IntraFabric::Pcie).small_message_latency_s(Call::AllReduce)), 12.6);
        // One rank: nothing to reduce.
        assert_eq!(Communicator::in_machine(1.0, IntraFabric::Nvlink).small_message_latency_s(Call::AllReduce), 0.0);
    }

    #[test]
    fn across_two_machines_the_network_hops_and_the_transport_decide() {
        let rdma = Communicator { ranks: 2.0, machines: 2.0, intra: IntraFabric::Nvlink, net_hop_floor_s: 1.46e-6 };
        // Tree LL: 6.8 + 2 x log2(2) x 5.0 = 16.8 us; ring LL: 6.6 + 4 x 2.7 = 17.4 us.
        assert_eq!(us(rdma.latency_s(Call::AllReduce, Algorithm::Tree, Protocol::Ll)), 16.8);
        assert_eq!(us(rdma.latency_s(Call::AllReduce, Algorithm::Ring, Protocol::Ll)), 17.4);
        assert_eq!(us(rdma.small_message_latency_s(Call::AllReduce)), 16.8);
        // An all-gather across two machines: one network step, 6.6 + 2.7.
        assert_eq!(us(rdma.small_message_latency_s(Call::Gather)), 9.3);
        // A send across the network: one ring step, LL up to 16 KB (6.6 + 2.7), Simple above (8.4 + 14.0).
        assert_eq!(us(rdma.send_latency_s(4e3)), 9.3);
        assert_eq!(us(rdma.send_latency_s(1e6)), 22.4);
        // TCP sockets at a 200 us round trip: every network hop costs at least 100 us.
        let tcp = Communicator { net_hop_floor_s: 100e-6, ..rdma };
        assert_eq!(us(tcp.small_message_latency_s(Call::AllReduce)), 206.8);
        assert_eq!(us(tcp.small_message_latency_s(Call::Gather)), 106.6);
        // Two 8-GPU machines: the ring makes 30 steps, 4 counted across the network, each in-machine step at
        // least the 1 us network post overhead: 6.6 + 26 x 1.0 + 4 x 2.7; the tree 6.8 + 2 x (7 x 0.6 + 5.0).
        let sixteen = Communicator { ranks: 16.0, machines: 2.0, ..rdma };
        assert_eq!(us(sixteen.latency_s(Call::AllReduce, Algorithm::Ring, Protocol::Ll)), 43.4);
        assert_eq!(us(sixteen.small_message_latency_s(Call::AllReduce)), 25.2);
    }
}

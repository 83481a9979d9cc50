//! NCCL's own cost model for one collective call: a base latency per algorithm and protocol plus a latency per
//! step of the algorithm, by the hardware each step crosses (NVLink or PCIe inside a machine, the network across),
//! plus the message's bytes at the protocol's bandwidth; NCCL runs whichever algorithm and protocol is fastest.
//!
//! Reported elsewhere: NVIDIA/nccl `src/graph/tuning.cc` at commit b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2
//! (`baseLat`, `hwLat`, `llMaxBws`, `ncclTopoTuneModel`, `getNetOverhead`, `treeCorrectionFactor`,
//! `ncclTopoGetAlgoTime`). In microseconds:
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
//! Each protocol moves a message's bytes at its own share of the bus bandwidth (`ncclTopoTuneModel`'s
//! `comm->bandwidths`, before the ring's `nRanks / nsteps` or the tree's 1/2 turns it into algorithm bandwidth):
//!
//! ```text
//!   ring LL      min(llMaxBw, bus / 4)   (bus / 3 for a gather inside one machine)
//!   ring LL128   bus x 0.92              (x 0.7 with one GPU a machine: NCCL's `ppn < 2`)
//!   ring Simple  bus
//!   tree         bus x 0.92, then LL: min(that / 3.8, llMaxBw); LL128: x 120/128 across machines, 7/9 inside one
//!   llMaxBw      across machines 39.0 GB/s on two, 20.4 on more (the Intel-and-Arm row); inside one 87.7
//! ```
//!
//! (the tree graph NCCL searches is the balanced tree, `NCCL_TOPO_PATTERN_BALANCED_TREE` in `src/init.cc`, so
//! the further 0.85 for the plain tree pattern does not apply). `bus` is NCCL's `nChannels x bw`: the bus
//! bandwidth Simple reaches on the slowest hop, which the caller gives (`Communicator::bus_bytes_per_sec`).
//!
//! and NCCL times a call as `latency + bytes / bandwidth` (`ncclTopoGetAlgoTime`, same file), the tree's
//! bandwidth times a correction factor by message size, a ring Simple all-reduce across machines' latency
//! times 1.4 (its plateau); it runs the algorithm and protocol of the least time (`fastest`). A few kilobytes go
//! by LL, whose latency is lowest; from some hundreds of kilobytes LL's quarter rate costs more than Simple's
//! higher latency. LL128 runs only where NCCL enables it by default (`Communicator::ll128`).
//!
//! The network hop is NCCL's figure for an RDMA NIC plus what the link's transport adds (NCCL's `latencyInter`,
//! the net plugin's reported latency): a hop costs at least half of the transport's small-message round trip,
//! which is where TCP sockets (~200-500 us a round trip) differ from RDMA; Simple pays that addition twice (its
//! flush, as NCCL adds `latencyInter` once more).
//!
//! NCCL's ring counts `2m` network steps for an all-reduce across `m > 1` machines, which for one GPU per
//! machine exceeds the ring's `2(n-1)` steps; the in-machine steps are then counted as zero, not negative.
//!
//! Not modelled: the per-channel caps (`perChMaxRingLL128Bws`, `perChMaxTreeBws`, ...: 36.7-41.4 GB/s a channel
//! on Hopper), since the channel count NCCL's topology search finds is not known here (taken as never binding),
//! and AMD CPUs' lower LL cap across machines (22.5 GB/s on two).

pub use crate::spec::IntraMachineFabric as IntraFabric;

/// NCCL's collective algorithms that run here (CollNet and NVLS need switch hardware these machines lack).
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

/// `llMaxBws`, GB/s (tuning.cc): LL's ceiling. Across machines NCCL reads the row of the CPU's vendor (Intel and
/// every other vendor, Arm included, 39.0 on two machines and 20.4 on more; AMD 22.5 and 19.0: the first row is
/// taken) and inside one machine the GPU's (Ampere and Hopper 87.7, Volta 39.0: Ampere's and Hopper's taken).
const LL_MAX_BW_TWO_MACHINES_GB_S: f64 = 39.0;
const LL_MAX_BW_MORE_MACHINES_GB_S: f64 = 20.4;
const LL_MAX_BW_ONE_MACHINE_GB_S: f64 = 87.7;

/// `treeCorrectionFactor[protocol][log2(bytes / 64)]` (tuning.cc): the tree's bandwidth at sizes from 64 B to
/// 256 MB, by powers of two ("Trees are not perfectly sticking to the model for medium sizes"); 1 above.
const TREE_CORRECTION: [[f64; 23]; 3] = [
    [1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0],
    [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9],
];

/// `ncclTopoGetAlgoTime`: a ring Simple all-reduce across machines has its latency times 1.4 on compute
/// capability 8.0 and later ("Plateau effect of ring") once a message holds 64 bytes per channel and rank; taken
/// for every message, since below that size LL is faster anyway and the choice stays continuous in size.
const RING_SIMPLE_PLATEAU: f64 = 1.4;

/// One communicator: its ranks, the machines they sit on, the in-machine fabric, the network hop's floor, the
/// bus bandwidth of its slowest hop and whether NCCL enables LL128 on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Communicator {
    pub ranks: f64,
    pub machines: f64,
    pub intra: IntraFabric,
    /// Least time of one network step, seconds: half the link transport's small-message round trip (0 inside
    /// one machine).
    pub net_hop_floor_s: f64,
    /// The bus bandwidth Simple reaches on the slowest hop, bytes/s (NCCL's `nChannels x bw`).
    pub bus_bytes_per_sec: f64,
    /// Whether NCCL runs LL128 here. At the commit above it is on by default only "on Volta/Ampere/Hopper+NVLink"
    /// (tuning.cc: compute capability 7.0, 8.0 or 9.0 on every rank, NVLink inside the machine, the NIC no
    /// further from the GPU than a PCIe switch or, from 9.0, through another GPU); elsewhere it "may cause silent
    /// data corruption" and is off.
    pub ll128: bool,
}

/// What NCCL runs a call by and what it costs: the chosen algorithm and protocol, the latency and the time of
/// the bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    pub algorithm: Algorithm,
    pub protocol: Protocol,
    /// The call's latency, seconds (with the ring Simple plateau where it applies).
    pub latency_s: f64,
    /// The message's bytes at the protocol's algorithm bandwidth, seconds.
    pub transfer_s: f64,
}

impl Choice {
    /// NCCL's time of the call, seconds.
    pub fn seconds(&self) -> f64 {
        self.latency_s + self.transfer_s
    }
}

impl Communicator {
    /// `ranks` GPUs inside one machine, joined at `bus_bytes_per_sec`, without LL128.
    pub fn in_machine(ranks: f64, intra: IntraFabric, bus_bytes_per_sec: f64) -> Self {
        Communicator { ranks, machines: 1.0, intra, net_hop_floor_s: 0.0, bus_bytes_per_sec, ll128: false }
    }

    /// Whole ranks (at least one) and whole machines (one to the ranks).
    fn shape(&self) -> (f64, f64) {
        let n = self.ranks.max(1.0).round();
        (n, self.machines.max(1.0).round().min(n))
    }

    /// NCCL's modelled latency of one `call` by `algorithm` and `protocol`, seconds (0 for one rank).
    pub fn latency_s(&self, call: Call, algorithm: Algorithm, protocol: Protocol) -> f64 {
        let (n, m) = self.shape();
        if n <= 1.0 {
            return 0.0;
        }
        // NCCL runs all-gather and reduce-scatter as rings only.
        let algorithm = if call == Call::Gather { Algorithm::Ring } else { algorithm };
        let (a, p) = (algorithm as usize, protocol as usize);
        let intra_hw = match self.intra {
            IntraFabric::Nvlink => 0,
            IntraFabric::Pcie => 1,
        };
        let intra_us = HW_LAT_US[intra_hw][a][p];
        // What the transport adds to NCCL's network hop (its `latencyInter`); Simple adds it once more (its flush).
        let hop_us = HW_LAT_US[2][a][p];
        let added_us = (self.net_hop_floor_s * 1e6 - hop_us).max(0.0);
        let net_us = hop_us + added_us * if protocol == Protocol::Simple { 2.0 } else { 1.0 };
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
            (Call::Gather, _) => {
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

    /// NCCL's algorithm bandwidth of `call` by `algorithm` and `protocol`, bytes/s: the protocol's share of the
    /// bus bandwidth turned into the rate a message's bytes move at (infinite for one rank). None where NCCL does
    /// not run it: LL128 where it is off, a tree for a gather.
    pub fn bandwidth(&self, call: Call, algorithm: Algorithm, protocol: Protocol) -> Option<f64> {
        let (n, m) = self.shape();
        if n <= 1.0 {
            return Some(f64::INFINITY);
        }
        if (protocol == Protocol::Ll128 && !self.ll128) || (call == Call::Gather && algorithm == Algorithm::Tree) {
            return None;
        }
        let bus = self.bus_bytes_per_sec;
        let ll_max = 1e9
            * match m {
                m if m <= 1.0 => LL_MAX_BW_ONE_MACHINE_GB_S,
                m if m <= 2.0 => LL_MAX_BW_TWO_MACHINES_GB_S,
                _ => LL_MAX_BW_MORE_MACHINES_GB_S,
            };
        let bus_bw = match (algorithm, protocol) {
            (Algorithm::Ring, Protocol::Ll) => {
                ll_max.min(bus * if m > 1.0 || call == Call::AllReduce { 1.0 / 4.0 } else { 1.0 / 3.0 })
            }
            (Algorithm::Ring, Protocol::Ll128) => bus * if n / m < 2.0 { 0.7 } else { 0.92 },
            (Algorithm::Ring, Protocol::Simple) => bus,
            (Algorithm::Tree, Protocol::Ll) => (bus * 0.92 / 3.8).min(ll_max),
            (Algorithm::Tree, Protocol::Ll128) => bus * 0.92 * if m > 1.0 { 120.0 / 128.0 } else { 7.0 / 9.0 },
            (Algorithm::Tree, Protocol::Simple) => bus * 0.92,
        };
        // Bus to algorithm bandwidth: the ring's nRanks / nsteps, the tree's 1/2.
        let ratio = match (algorithm, call) {
            (Algorithm::Ring, Call::AllReduce) => n / (2.0 * (n - 1.0)),
            (Algorithm::Ring, Call::Gather) => n / (n - 1.0),
            (Algorithm::Tree, _) => 0.5,
        };
        Some(bus_bw * ratio)
    }

    /// NCCL's cost of one `call` of `bytes` by `algorithm` and `protocol` (`ncclTopoGetAlgoTime`), or None where
    /// NCCL does not run that pair.
    pub fn cost(&self, call: Call, algorithm: Algorithm, protocol: Protocol, bytes: f64) -> Option<Choice> {
        let algorithm = if call == Call::Gather { Algorithm::Ring } else { algorithm };
        let mut bw = self.bandwidth(call, algorithm, protocol)?;
        let bytes = bytes.max(0.0);
        if algorithm == Algorithm::Tree {
            // NCCL's `log2i(nBytes >> 6)`: the power of two at or below the message's 64-byte lines.
            let lines = (bytes / 64.0).floor();
            let index = if lines >= 1.0 { lines.log2().floor() as usize } else { 0 };
            bw *= TREE_CORRECTION[protocol as usize].get(index).copied().unwrap_or(1.0);
        }
        let (_, m) = self.shape();
        let plateau =
            algorithm == Algorithm::Ring && protocol == Protocol::Simple && m > 1.0 && call == Call::AllReduce;
        let latency_s = self.latency_s(call, algorithm, protocol) * if plateau { RING_SIMPLE_PLATEAU } else { 1.0 };
        let transfer_s = if bw.is_infinite() { 0.0 } else { bytes / bw };
        Some(Choice { algorithm, protocol, latency_s, transfer_s })
    }

    /// What NCCL runs one `call` of `bytes` by: the algorithm and protocol of the least modelled time
    /// (`ncclTopoGetAlgoTime` over every enabled pair; on a tie the first of tree, ring and of LL, LL128, Simple,
    /// as NCCL's loop keeps the first minimum).
    pub fn fastest(&self, call: Call, bytes: f64) -> Choice {
        let pairs = [Algorithm::Tree, Algorithm::Ring]
            .into_iter()
            .flat_map(|a| [Protocol::Ll, Protocol::Ll128, Protocol::Simple].map(|p| (a, p)));
        // Ring LL always runs, so the least time is always a finite one.
        let none =
            Choice { algorithm: Algorithm::Ring, protocol: Protocol::Ll, latency_s: f64::INFINITY, transfer_s: 0.0 };
        pairs.filter_map(|(a, p)| self.cost(call, a, p, bytes)).fold(none, |best, c| {
            if c.seconds() < best.seconds() {
                c
            } else {
                best
            }
        })
    }

    /// The latency of a call carrying almost nothing: the least latency NCCL has for it (LL, by the faster of
    /// ring and tree).
    pub fn small_message_latency_s(&self, call: Call) -> f64 {
        self.fastest(call, 0.0).latency_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: f64) -> f64 {
        (x * 1e6 * 1000.0).round() / 1000.0
    }

    /// Two single-GPU machines over GPUDirect RDMA at 92.24 GB/s of bus bandwidth (the GB300 pair's).
    fn gb300_pair() -> Communicator {
        Communicator {
            ranks: 2.0,
            machines: 2.0,
            intra: IntraFabric::Nvlink,
            net_hop_floor_s: 1.46e-6,
            bus_bytes_per_sec: 92.24e9,
            ll128: false,
        }
    }

    /// Every communicator the properties below hold on: the GB300 pair, over TCP sockets, two 8-GPU machines with
    /// and without LL128, four PCIe GPUs in one machine, eight NVLink GPUs with LL128.
    fn communicators() -> Vec<Communicator> {
        let pair = gb300_pair();
        let sixteen = Communicator { ranks: 16.0, bus_bytes_per_sec: 50e9, ..pair };
        vec![
            pair,
            Communicator { net_hop_floor_s: 100e-6, bus_bytes_per_sec: 3e9, ..pair },
            Communicator { ll128: true, ..pair },
            sixteen,
            Communicator { ll128: true, ..sixteen },
            Communicator::in_machine(4.0, IntraFabric::Pcie, 25e9),
            Communicator { ll128: true, ..Communicator::in_machine(8.0, IntraFabric::Nvlink, 360e9) },
        ]
    }

    /// Message sizes from 0 to 4 GB, 16 a power of two.
    fn sizes() -> Vec<f64> {
        std::iter::once(0.0).chain((0..16 * 32).map(|i| 2f64.powf(i as f64 / 16.0))).collect()
    }

    #[test]
    fn nccl_latencies_follow_its_tuning_table() {
        // Eight NVLink GPUs: ring LL 6.6 + 14 x 0.6 = 15.0 us, tree LL 6.8 + 2 x 7 x 0.6 = 15.2 us.
        let eight = Communicator::in_machine(8.0, IntraFabric::Nvlink, 360e9);
        assert_eq!(us(eight.latency_s(Call::AllReduce, Algorithm::Ring, Protocol::Ll)), 15.0);
        assert_eq!(us(eight.latency_s(Call::AllReduce, Algorithm::Tree, Protocol::Ll)), 15.2);
        assert_eq!(us(eight.small_message_latency_s(Call::AllReduce)), 15.0);
        // Two NVLink GPUs: 6.6 + 2 x 0.6; four over PCIe: 6.6 + 6 x 1.0.
        assert_eq!(
            us(Communicator::in_machine(2.0, IntraFabric::Nvlink, 360e9).small_message_latency_s(Call::AllReduce)),
            7.8
        );
        let four_pcie = Communicator::in_machine(4.0, IntraFabric::Pcie, 25e9);
        assert_eq!(us(four_pcie.small_message_latency_s(Call::AllReduce)), 12.6);
        // One rank: nothing to reduce.
        let one = Communicator::in_machine(1.0, IntraFabric::Nvlink, 360e9);
        assert_eq!(one.small_message_latency_s(Call::AllReduce), 0.0);
        assert_eq!(one.fastest(Call::AllReduce, 1e6).seconds(), 0.0);
    }

    #[test]
    fn across_two_machines_the_network_hops_and_the_transport_decide() {
        let rdma = gb300_pair();
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

    #[test]
    fn small_messages_go_by_ll_and_large_ones_by_simple() {
        let pair = gb300_pair();
        let at = |bytes: f64| pair.fastest(Call::AllReduce, bytes);
        // A few kilobytes: LL, at NCCL's lowest latency (the tree's 16.8 us, 4 KB at a quarter of the bus rate).
        assert_eq!((at(4e3).algorithm, at(4e3).protocol), (Algorithm::Tree, Protocol::Ll));
        // 1 MB: ring LL, 6.6 + 4 x 2.7 = 17.4 us plus 1 MB at 92.24 / 4 GB/s (ring Simple would be
        // 1.4 x (8.4 + 4 x 14.0) + 1 MB / 92.24 GB/s = 101.0 us).
        let mb = at(1e6);
        assert_eq!((mb.algorithm, mb.protocol), (Algorithm::Ring, Protocol::Ll));
        assert!((mb.seconds() - (17.4e-6 + 1e6 / 23.06e9)).abs() < 1e-9, "{mb:?}");
        let simple = pair.cost(Call::AllReduce, Algorithm::Ring, Protocol::Simple, 1e6).unwrap();
        assert_eq!(us(simple.latency_s), us(1.4 * 64.4e-6));
        // 16 MB: ring Simple at the full bus bandwidth.
        let big = at(16e6);
        assert_eq!((big.algorithm, big.protocol), (Algorithm::Ring, Protocol::Simple));
        assert!((big.transfer_s - 16e6 / 92.24e9).abs() < 1e-12);
        // LL128 runs only where it is enabled, and where it is it takes some middle sizes from LL and Simple.
        assert!(pair.cost(Call::AllReduce, Algorithm::Ring, Protocol::Ll128, 1e6).is_none());
        for c in communicators() {
            let picked = sizes().iter().any(|&b| c.fastest(Call::AllReduce, b).protocol == Protocol::Ll128);
            assert_eq!(picked, c.ll128, "{c:?}");
        }
    }

    #[test]
    fn the_choice_is_never_slower_than_any_protocol_and_grows_with_the_message() {
        let pairs = [Algorithm::Tree, Algorithm::Ring]
            .into_iter()
            .flat_map(|a| [Protocol::Ll, Protocol::Ll128, Protocol::Simple].map(|p| (a, p)));
        for c in communicators() {
            for call in [Call::AllReduce, Call::Gather] {
                let mut last = 0.0;
                for b in sizes() {
                    let best = c.fastest(call, b);
                    for (a, p) in pairs.clone() {
                        if let Some(one) = c.cost(call, a, p, b) {
                            assert!(best.seconds() <= one.seconds(), "{c:?} {call:?} {b}: {best:?} above {one:?}");
                        }
                    }
                    // Never faster for more bytes.
                    assert!(best.seconds() >= last, "{c:?} {call:?} {b}: {} after {last}", best.seconds());
                    last = best.seconds();
                }
            }
        }
    }
}

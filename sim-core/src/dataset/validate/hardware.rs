//! Hardware files: every quantity with its unit and basis, the link's all-reduce sweep, the host link's and the
//! microbenchmarks' quantities. Whether the numbers are physically plausible together is `model::plausibility`'s.

use super::Checker;
use crate::dataset::schema::{AllReduceTime, HostLink, Microbenchmarks, Quantity};
use crate::units::Dimension;

impl Checker<'_> {
    pub(super) fn hardware(&mut self) {
        for hw in self.ds.hardware.values() {
            let file = self.path("hardware", &hw.id);
            use Dimension::*;
            let fields: [(&str, &Quantity, Dimension); 8] = [
                ("gpus", &hw.gpus, Count),
                ("gpu_memory", &hw.gpu_memory, Bytes),
                ("gpu_memory_bandwidth", &hw.gpu_memory_bandwidth, BytesPerSec),
                ("cpu_memory_bandwidth", &hw.cpu_memory_bandwidth, BytesPerSec),
                ("slow_path_bandwidth", &hw.slow_path_bandwidth, BytesPerSec),
                ("compute_fp4", &hw.compute_fp4, FlopsPerSec),
                ("compute_fp8", &hw.compute_fp8, FlopsPerSec),
                ("link/rails", &hw.link.rails, Count),
            ];
            for (name, q, dim) in fields {
                self.quantity(&file, &format!("/{name}"), q, dim, false);
            }
            // Zero CPU memory is legal: a unified-memory machine has no slower tier to spill to.
            self.quantity(&file, "/cpu_memory", &hw.cpu_memory, Bytes, true);
            if let Some(q) = &hw.compute_bf16 {
                self.quantity(&file, "/compute_bf16", q, FlopsPerSec, false);
            }
            if let Some(q) = &hw.intra_machine_call_latency {
                self.quantity(&file, "/intra_machine_call_latency", q, Seconds, false);
            }
            if let Some(q) = &hw.intra_machine_bandwidth {
                self.quantity(&file, "/intra_machine_bandwidth", q, BytesPerSec, false);
            }
            if let Some(q) = &hw.sparse_attention_head_tile {
                self.quantity(&file, "/sparse_attention_head_tile", q, Count, false);
            }
            self.quantity(&file, "/link/line_rate_per_rail", &hw.link.line_rate_per_rail, BytesPerSec, false);
            self.quantity(&file, "/link/payload_efficiency", &hw.link.payload_efficiency, Percent, false);
            self.quantity(&file, "/link/collective_call_latency", &hw.link.collective_call_latency, Seconds, false);
            self.all_reduce_times(&file, &hw.link.all_reduce_times);
            self.quantity(&file, "/link/transport/round_trip", &hw.link.transport.round_trip, Seconds, false);
            if let Some(link) = &hw.host_link {
                self.host_link(&file, link);
            }
            if let Some(mb) = &hw.microbenchmarks {
                self.microbenchmarks(&file, mb);
            }
            if let Some(cost) = &hw.cost {
                if let Some(q) = &cost.list_price {
                    self.quantity(&file, "/cost/list_price", q, Money, false);
                }
                if let Some(q) = &cost.power {
                    self.quantity(&file, "/cost/power", q, Power, false);
                }
            }
        }
    }

    /// A link's measured all-reduce sweep: at least two sizes, each positive and above the one before, each time a
    /// positive time with its provenance.
    fn all_reduce_times(&mut self, file: &str, rows: &[AllReduceTime]) {
        if rows.len() == 1 {
            self.err(
                file,
                "/link/all_reduce_times".into(),
                "a measured all-reduce sweep needs at least two sizes".into(),
                "give two or more rows (size_bytes, time), or leave the field out",
            );
        }
        let mut previous = 0.0;
        for (i, r) in rows.iter().enumerate() {
            let pointer = format!("/link/all_reduce_times/{i}");
            self.quantity(file, &format!("{pointer}/time"), &r.time, Dimension::Seconds, false);
            if !(r.size_bytes.is_finite() && r.size_bytes > previous) {
                self.err(
                    file,
                    format!("{pointer}/size_bytes"),
                    format!("size {} is not a finite size above the row before ({previous})", r.size_bytes),
                    "list sizes in bytes, strictly increasing, as nccl-tests prints them",
                );
            }
            if r.size_bytes.is_finite() {
                previous = previous.max(r.size_bytes);
            }
        }
    }

    /// Microbenchmark figures: units and provenance (whether each is within its spec figure is plausibility's).
    fn microbenchmarks(&mut self, file: &str, mb: &Microbenchmarks) {
        use Dimension::*;
        for (name, q) in [("hbm_bandwidth", &mb.hbm_bandwidth), ("slow_path_bandwidth", &mb.slow_path_bandwidth)] {
            if let Some(q) = q {
                self.quantity(file, &format!("/microbenchmarks/{name}"), q, BytesPerSec, false);
            }
        }
        if let Some(q) = &mb.dense_gemm_fraction {
            self.quantity(file, "/microbenchmarks/dense_gemm_fraction", q, Count, false);
        }
    }

    /// A host link's quantities (whether its kind, generation, width and bandwidth agree is plausibility's).
    fn host_link(&mut self, file: &str, link: &HostLink) {
        use Dimension::*;
        self.quantity(file, "/host_link/bandwidth", &link.bandwidth, BytesPerSec, false);
        for (name, q) in [("generation", &link.generation), ("lanes", &link.lanes)] {
            if let Some(q) = q {
                self.quantity(file, &format!("/host_link/{name}"), q, Count, false);
            }
        }
    }
}

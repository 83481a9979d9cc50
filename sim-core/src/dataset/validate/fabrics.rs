//! Fabric files: the hardware they belong to, one row per collective, each number in its quote.

use super::Checker;
use std::collections::BTreeSet;

impl Checker<'_> {
    pub(super) fn fabrics(&mut self) {
        for fab in self.ds.fabrics.values() {
            let file = self.path("fabric", &fab.id);
            if !self.ds.hardware.contains_key(&fab.hardware) {
                self.err(
                    &file,
                    "/hardware".into(),
                    format!("unknown hardware `{}`", fab.hardware),
                    "add data/hardware/<id>.json or fix the id",
                );
            }
            self.from(&file, "/link", &fab.link.from, None);
            let mut seen = BTreeSet::new();
            for (i, row) in fab.nccl.iter().enumerate() {
                let p = format!("/nccl/{i}");
                if !seen.insert(row.collective) {
                    self.err(
                        &file,
                        format!("{p}/collective"),
                        format!("duplicate row for {}", row.collective.name()),
                        "one row per collective",
                    );
                }
                self.positive(&file, format!("{p}/peak_size_bytes"), row.peak_size_bytes, "peak_size_bytes");
                if self.positive(&file, format!("{p}/peak_busbw_gb_s"), row.peak_busbw_gb_s, "peak_busbw_gb_s") {
                    self.from(&file, &p, &row.from, Some(row.peak_busbw_gb_s));
                }
                if let Some(b) = row.busbw_16gib_gb_s {
                    if self.positive(&file, format!("{p}/busbw_16gib_gb_s"), b, "busbw_16gib_gb_s")
                        && b > row.peak_busbw_gb_s * 1.0001
                    {
                        self.err(
                            &file,
                            format!("{p}/busbw_16gib_gb_s"),
                            format!("16 GiB bandwidth {b} exceeds the peak {}", row.peak_busbw_gb_s),
                            "the peak is the best over all sizes",
                        );
                    }
                }
                if let Some(t) = row.total_16gib_gb_s {
                    if self.positive(&file, format!("{p}/total_16gib_gb_s"), t, "total_16gib_gb_s")
                        && (t - 2.0 * row.peak_busbw_gb_s).abs() > 0.01 * t
                    {
                        self.err(
                            &file,
                            format!("{p}/total_16gib_gb_s"),
                            format!("total {t} is not twice the per-direction {}", row.peak_busbw_gb_s),
                            "a bidirectional total is the sum of both directions",
                        );
                    }
                }
            }
            for (i, row) in fab.rdma.iter().enumerate() {
                let p = format!("/rdma/{i}");
                let number = row.bandwidth_gbit_s.or(row.mean_us);
                if number.is_none() {
                    self.err(
                        &file,
                        p.clone(),
                        "an RDMA row needs bandwidth_gbit_s or mean_us".into(),
                        "transcribe the measured value",
                    );
                }
                for (name, x) in [
                    ("bandwidth_gbit_s", row.bandwidth_gbit_s),
                    ("mean_us", row.mean_us),
                    ("message_bytes", row.message_bytes),
                ] {
                    if let Some(x) = x {
                        self.positive(&file, format!("{p}/{name}"), x, name);
                    }
                }
                if let (Some(bw), Some(u)) = (row.bandwidth_gbit_s, row.link_utilisation_percent) {
                    let expect = bw / fab.link.line_rate_gbit_s_per_rail * 100.0;
                    if (expect - u).abs() > 0.01 {
                        self.err(
                            &file,
                            format!("{p}/link_utilisation_percent"),
                            format!(
                                "utilisation {u}% does not match {bw} / {} Gb/s = {expect:.2}%",
                                fab.link.line_rate_gbit_s_per_rail
                            ),
                            "recompute the share of line rate",
                        );
                    }
                }
                self.from(&file, &p, &row.from, number);
            }
            for (i, e) in fab.expectations.iter().enumerate() {
                if e.min_gbit_s > e.max_gbit_s {
                    self.err(&file, format!("/expectations/{i}"), "min above max".into(), "swap the bounds");
                }
                self.from(&file, &format!("/expectations/{i}"), &e.from, Some(e.min_gbit_s));
            }
        }
    }
}

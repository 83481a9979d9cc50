//! Meaning checks over a loaded dataset: numbers, units, provenance, references, duplicates, claims, totals.

use super::schema::*;
use super::Dataset;
use crate::diagnostic::Diagnostic;
use crate::units::{parse_unit, Dimension};
use std::collections::{BTreeMap, BTreeSet};

/// The seed texts quotes are checked against: source file name -> text.
pub type Seeds = BTreeMap<String, String>;

/// Runs every meaning check. `seeds`, when given, lets the validator confirm each quote is verbatim.
pub fn check(ds: &Dataset, seeds: Option<&Seeds>) -> Vec<Diagnostic> {
    let mut v = Checker { ds, seeds, out: Vec::new(), unchecked: BTreeSet::new() };
    v.sources();
    v.hardware();
    v.fabrics();
    v.models();
    v.sweeps();
    v.claims();
    v.scenarios();
    v.engines();
    v.out.into_iter().map(|d| ds.locate(d)).collect()
}

struct Checker<'a> {
    ds: &'a Dataset,
    seeds: Option<&'a Seeds>,
    out: Vec<Diagnostic>,
    /// Texts of external sources that were not at hand (noted once each).
    unchecked: BTreeSet<String>,
}

impl Checker<'_> {
    fn err(&mut self, file: &str, pointer: String, msg: String, hint: &str) {
        self.out.push(Diagnostic::error(file, pointer, msg).with_hint(hint));
    }

    fn sources(&mut self) {
        let mut ids = BTreeSet::new();
        for s in &self.ds.sources {
            if !ids.insert(s.id.as_str()) {
                self.out.push(
                    Diagnostic::error("sources.json", "", format!("source id `{}` is defined twice", s.id))
                        .with_hint("source ids are unique across sources.json and imported files"),
                );
            }
        }
        if self.ds.sources.is_empty() {
            self.out.push(
                Diagnostic::error("sources.json", "", "no sources defined")
                    .with_hint("add sources.json listing the seed files every `from.source` refers to"),
            );
        }
    }

    /// A `from` must name a known source and quote it verbatim; for published numbers the quote must hold the number.
    fn from(&mut self, file: &str, pointer: &str, from: &From, number: Option<f64>) {
        self.provenance_at(file, &format!("{pointer}/from"), from, number);
    }

    /// `from` for a provenance object at `fp` itself (an element of an array of quotes).
    fn provenance_at(&mut self, file: &str, fp: &str, from: &From, number: Option<f64>) {
        let Some(src) = self.ds.sources.iter().find(|s| s.id == from.source) else {
            let known: Vec<_> = self.ds.sources.iter().map(|s| s.id.as_str()).collect();
            self.err(
                file,
                format!("{fp}/source"),
                format!("unknown source `{}`", from.source),
                &format!("use one of the ids in sources.json: {}", known.join(", ")),
            );
            return;
        };
        if from.quote.trim().is_empty() {
            self.err(file, format!("{fp}/quote"), "empty quote".into(), "copy the sentence the value comes from");
            return;
        }
        if let (Some(seeds), true) = (self.seeds, src.is_external()) {
            // A publication's text is checked when it is at hand (beside the seeds); without it the quote can
            // only be held to its number below, and a note says so once per source.
            match seeds.get(&src.file) {
                Some(text) if !text.contains(&from.quote) => self.err(
                    file,
                    format!("{fp}/quote"),
                    format!("quote not found verbatim in {} (text of external source `{}`)", src.file, src.id),
                    "copy the table row character for character from that text",
                ),
                None if self.unchecked.insert(src.file.clone()) => self.out.push(
                    Diagnostic::note(
                        file,
                        format!("{fp}/source"),
                        format!(
                            "text {} of external sources (first: `{}`) is not among the texts given; their quotes are not checked",
                            src.file, src.id
                        ),
                    )
                    .with_hint("the file is named relative to the seeds directory; put it there to check them"),
                ),
                _ => {}
            }
        } else if let Some(seeds) = self.seeds.filter(|_| !src.is_import()) {
            match seeds.get(&src.file) {
                Some(text) if !text.contains(&from.quote) => self.err(
                    file,
                    format!("{fp}/quote"),
                    format!("quote not found verbatim in seed {}", src.file),
                    "copy the text character for character from the seed",
                ),
                None => self.err(
                    file,
                    format!("{fp}/source"),
                    format!("seed file {} of source `{}` is missing from the seeds directory", src.file, src.id),
                    "pass the directory that holds the seed texts with --seeds",
                ),
                _ => {}
            }
        }
        if let Some(n) = number {
            if !quote_mentions(&from.quote, n) {
                self.err(
                    file,
                    format!("{fp}/quote"),
                    format!("the quote does not contain the value {n}"),
                    "quote the clause that states this number",
                );
            }
        }
    }

    fn positive(&mut self, file: &str, pointer: String, x: f64, what: &str) -> bool {
        if x.is_finite() && x > 0.0 {
            return true;
        }
        self.err(
            file,
            pointer,
            format!("{what} must be a positive finite number, found {x}"),
            "check the transcription",
        );
        false
    }

    fn quantity(&mut self, file: &str, pointer: &str, q: &Quantity, want: Dimension, allow_zero: bool) {
        match parse_unit(&q.unit) {
            None => self.err(
                file,
                format!("{pointer}/unit"),
                format!("unknown unit `{}`", q.unit),
                &format!("expected {}", want.name()),
            ),
            Some((dim, _)) if dim != want => self.err(
                file,
                format!("{pointer}/unit"),
                format!("unit `{}` is not {}", q.unit, want.name()),
                "this field needs a different dimension",
            ),
            _ => {}
        }
        let ok = q.value.is_finite() && (q.value > 0.0 || (allow_zero && q.value == 0.0));
        if !ok {
            self.err(
                file,
                format!("{pointer}/value"),
                format!(
                    "value must be a {} finite number, found {}",
                    if allow_zero { "non-negative" } else { "positive" },
                    q.value
                ),
                "check the number and its unit",
            );
        }
        let missing = match q.basis {
            Basis::Published => q.from.is_none().then_some("from"),
            Basis::Derived => q.derivation.is_none().then_some("derivation"),
            Basis::ReportedElsewhere => q.reference.is_none().then_some("reference"),
            Basis::Fitted => q.fitted_on.is_none().then_some("fitted_on"),
            Basis::Assumed => q.reason.is_none().then_some("reason"),
        };
        if let Some(field) = missing {
            self.err(
                file,
                pointer.to_string(),
                format!("a {} value needs `{field}`", q.basis.label()),
                "every parameter says where it came from",
            );
        }
        if let Some(from) = &q.from {
            let n = (q.basis == Basis::Published).then_some(q.value);
            self.from(file, pointer, from, n);
        }
    }

    fn hardware(&mut self) {
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
            if hw.link.payload_efficiency.value > 100.0 {
                self.err(
                    &file,
                    "/link/payload_efficiency/value".into(),
                    "payload efficiency above 100%".into(),
                    "a share of line rate is at most 100",
                );
            }
            if let Some(link) = &hw.host_link {
                self.host_link(&file, link);
            }
            self.slow_path_bound(&file, hw);
            if let Some(mb) = &hw.microbenchmarks {
                self.microbenchmarks(&file, hw, mb);
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

    /// Microbenchmark figures: units, provenance, an achieved bandwidth no higher than the spec field it
    /// measures, a GEMM fraction in (0, 1].
    fn microbenchmarks(&mut self, file: &str, hw: &HardwareFile, mb: &Microbenchmarks) {
        use Dimension::*;
        let bandwidths = [
            ("hbm_bandwidth", &mb.hbm_bandwidth, "gpu_memory_bandwidth", &hw.gpu_memory_bandwidth),
            ("slow_path_bandwidth", &mb.slow_path_bandwidth, "slow_path_bandwidth", &hw.slow_path_bandwidth),
        ];
        for (name, q, spec_name, spec) in bandwidths {
            let Some(q) = q else { continue };
            let pointer = format!("/microbenchmarks/{name}");
            self.quantity(file, &pointer, q, BytesPerSec, false);
            let (Some(achieved), Some(bound)) = (q.si(), spec.si()) else { continue };
            if parse_unit(&q.unit).is_some_and(|(d, _)| d == BytesPerSec)
                && achieved.is_finite()
                && bound.is_finite()
                && achieved > bound * (1.0 + 1e-9)
            {
                self.err(
                    file,
                    format!("{pointer}/value"),
                    format!(
                        "achieved {name} {:.1} GB/s exceeds the spec {spec_name} {:.1} GB/s",
                        achieved / 1e9,
                        bound / 1e9
                    ),
                    "a microbenchmark reaches at most the spec figure it measures; check the value, its unit and \
                     which field it belongs to",
                );
            }
        }
        if let Some(q) = &mb.dense_gemm_fraction {
            let pointer = "/microbenchmarks/dense_gemm_fraction";
            self.quantity(file, pointer, q, Count, false);
            if q.value.is_finite() && q.value > 1.0 {
                self.err(
                    file,
                    format!("{pointer}/value"),
                    format!("a fraction of the dense tensor peak lies in (0, 1], found {}", q.value),
                    "give achieved TFLOPS / peak TFLOPS with unit \"1\" (0.7, not 70)",
                );
            }
        }
    }

    /// A host link: its quantities, PCIe's generation and width (absent on NVLink-C2C), and a derived PCIe
    /// bandwidth equal to what generation x lanes carry.
    fn host_link(&mut self, file: &str, link: &HostLink) {
        use Dimension::*;
        self.quantity(file, "/host_link/bandwidth", &link.bandwidth, BytesPerSec, false);
        for (name, q) in [("generation", &link.generation), ("lanes", &link.lanes)] {
            if let Some(q) = q {
                self.quantity(file, &format!("/host_link/{name}"), q, Count, false);
            }
        }
        match link.kind {
            HostLinkKind::NvlinkC2c => {
                for (name, q) in [("generation", &link.generation), ("lanes", &link.lanes)] {
                    if q.is_some() {
                        self.err(
                            file,
                            format!("/host_link/{name}"),
                            format!("`{name}` describes a PCIe link, not NVLink-C2C"),
                            "remove it, or set `kind` to `pcie`",
                        );
                    }
                }
            }
            HostLinkKind::Pcie => {
                let (Some(generation), Some(lanes)) = (&link.generation, &link.lanes) else {
                    let missing = if link.generation.is_none() { "generation" } else { "lanes" };
                    self.err(
                        file,
                        "/host_link".into(),
                        format!("a PCIe host link needs `{missing}`"),
                        "give the PCIe generation and lane count, e.g. 5 and 16 for Gen5 x16",
                    );
                    return;
                };
                let (g, n) = (generation.value, lanes.value);
                if !(g.fract() == 0.0 && (1.0..=6.0).contains(&g)) {
                    self.err(
                        file,
                        "/host_link/generation/value".into(),
                        format!("PCIe generation {g} is not one of 1 to 6"),
                        "a PCIe generation is a whole number",
                    );
                }
                if ![1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 32.0].contains(&n) {
                    self.err(
                        file,
                        "/host_link/lanes/value".into(),
                        format!("PCIe width x{n} is not a link width (x1, x2, x4, x8, x12, x16, x32)"),
                        "a GPU usually sits on x16",
                    );
                }
                let (Some(expected), Some(stated)) = (pcie_bytes_per_sec(g, n), link.bandwidth.si()) else { return };
                if link.bandwidth.basis == Basis::Derived && (stated / expected - 1.0).abs() > 0.01 {
                    self.err(
                        file,
                        "/host_link/bandwidth/value".into(),
                        format!(
                            "PCIe Gen{g} x{n} carries {:.1} GB/s per direction (transfer rate x lanes x encoding / 8), \
                             not the derived {:.1} GB/s",
                            expected / 1e9,
                            stated / 1e9
                        ),
                        "derive the bandwidth from generation and lanes, or give a measured value with its basis",
                    );
                }
            }
        }
    }

    /// The slow path cannot beat what feeds it: CPU memory bandwidth and, when given, the host link's.
    fn slow_path_bound(&mut self, file: &str, hw: &HardwareFile) {
        let (Some(slow), Some(memory)) = (hw.slow_path_bandwidth.si(), hw.cpu_memory_bandwidth.si()) else { return };
        let link = hw.host_link.as_ref().and_then(|l| l.bandwidth.si().map(|b| (l.kind, b)));
        let bound = link.map_or(memory, |(_, b)| memory.min(b));
        // Rounding in the stated figures (e.g. 273 GB/s of unified memory read back at 273) is not an excess.
        if slow.is_finite() && bound.is_finite() && slow > bound * (1.0 + 1e-9) {
            let parts = match link {
                Some((kind, b)) => format!(
                    "min(cpu_memory_bandwidth {:.1} GB/s, host_link {} {:.1} GB/s) = {:.1} GB/s",
                    memory / 1e9,
                    kind.name(),
                    b / 1e9,
                    bound / 1e9
                ),
                None => format!("cpu_memory_bandwidth {:.1} GB/s", memory / 1e9),
            };
            self.err(
                file,
                "/slow_path_bandwidth/value".into(),
                format!("slow path {:.1} GB/s exceeds {parts}", slow / 1e9),
                "the GPU reads CPU memory no faster than the memory or the link between them delivers",
            );
        }
    }

    fn fabrics(&mut self) {
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

    fn models(&mut self) {
        for m in self.ds.models.values() {
            let file = self.path("model", &m.id);
            let a = &m.architecture;
            use Dimension::*;
            let fields: [(&str, &Quantity, Dimension, bool); 13] = [
                ("weight_bytes", &a.weight_bytes, Bytes, false),
                ("routed_expert_bytes", &a.routed_expert_bytes, Bytes, true),
                ("active_params", &a.active_params, Count, false),
                ("layers", &a.layers, Count, false),
                ("hidden_size", &a.hidden_size, Count, false),
                ("routed_experts", &a.routed_experts, Count, true),
                ("experts_per_token", &a.experts_per_token, Count, true),
                ("compute_bits", &a.compute_bits, Count, false),
                ("kv_bytes_per_token", &a.kv_bytes_per_token, Bytes, false),
                ("draft_tokens", &a.draft_tokens, Count, true),
                ("draft_acceptance", &a.draft_acceptance, Percent, true),
                ("draft_pass_bytes", &a.draft_pass_bytes, Bytes, true),
                ("weight_bytes", &a.weight_bytes, Bytes, false),
            ];
            for (name, q, dim, zero) in fields.into_iter().take(12) {
                self.quantity(&file, &format!("/architecture/{name}"), q, dim, zero);
            }
            for (name, q) in [
                ("pinned_cpu_bytes", &a.pinned_cpu_bytes),
                ("pinned_read_bytes_per_token", &a.pinned_read_bytes_per_token),
                ("published_offload_bytes", &a.published_offload_bytes),
                ("input_embedding_bytes", &a.input_embedding_bytes),
                ("draft_routed_expert_bytes", &a.draft_routed_expert_bytes),
                ("draft_kv_bytes_per_token", &a.draft_kv_bytes_per_token),
                ("local_window_kv_bytes_per_token", &a.local_window_kv_bytes_per_token),
                ("window_kv_bytes_per_token", &a.window_kv_bytes_per_token),
                ("linear_state_bytes", &a.linear_state_bytes),
            ] {
                if let Some(q) = q {
                    self.quantity(&file, &format!("/architecture/{name}"), q, Bytes, true);
                }
            }
            for (name, q) in [
                ("attention_heads", &a.attention_heads),
                ("head_dim", &a.head_dim),
                ("kv_lora_rank", &a.kv_lora_rank),
                ("sliding_window", &a.sliding_window),
                ("sliding_window_layers", &a.sliding_window_layers),
                ("window_head_dim", &a.window_head_dim),
                ("sparse_top_k", &a.sparse_top_k),
                ("indexer_heads", &a.indexer_heads),
                ("indexer_head_dim", &a.indexer_head_dim),
                ("dense_compute_bits", &a.dense_compute_bits),
                ("prefill_active_params", &a.prefill_active_params),
                ("routed_expert_bits", &a.routed_expert_bits),
                ("local_window", &a.local_window),
                ("draft_passes", &a.draft_passes),
                ("draft_pass_layers", &a.draft_pass_layers),
            ] {
                if let Some(q) = q {
                    self.quantity(&file, &format!("/architecture/{name}"), q, Count, false);
                }
            }
            // NoPE MLA has no rotary part; a model may have no linear-attention layer.
            for (name, q) in [
                ("rope_head_dim", &a.rope_head_dim),
                ("linear_attention_layers", &a.linear_attention_layers),
                ("draft_attention_layers", &a.draft_attention_layers),
            ] {
                if let Some(q) = q {
                    self.quantity(&file, &format!("/architecture/{name}"), q, Count, true);
                }
            }
            let other_layers = a.sliding_window_layers.as_ref().map_or(0.0, |q| q.value)
                + a.linear_attention_layers.as_ref().map_or(0.0, |q| q.value);
            if a.linear_attention_layers.is_some() && other_layers >= a.layers.value {
                self.err(
                    &file,
                    "/architecture/linear_attention_layers".into(),
                    format!(
                        "{other_layers} sliding-window and linear-attention layers of {} leave no full-attention layer",
                        a.layers.value
                    ),
                    "kv_bytes_per_token counts the full-attention layers; at least one must remain",
                );
            }
            for (name, q) in [
                ("draft_attention_layers", &a.draft_attention_layers),
                ("draft_kv_bytes_per_token", &a.draft_kv_bytes_per_token),
                ("draft_pass_layers", &a.draft_pass_layers),
            ] {
                if q.as_ref().is_some_and(|n| n.value > 0.0) && a.draft_tokens.value <= 0.0 {
                    self.err(
                        &file,
                        format!("/architecture/{name}"),
                        format!("{name}: a drafter's attention on a model that drafts no tokens"),
                        &format!("set draft_tokens, or drop {name}"),
                    );
                }
            }
            if let Some(p) = a.draft_passes.as_ref().filter(|p| p.value > a.draft_tokens.value) {
                self.err(
                    &file,
                    "/architecture/draft_passes".into(),
                    format!("{} draft passes for {} drafted tokens", p.value, a.draft_tokens.value),
                    "a drafter runs at most one pass per drafted token; give the published figure",
                );
            }
            if let Some(p) = a.prefill_active_params.as_ref().filter(|p| p.value > a.active_params.value) {
                self.err(
                    &file,
                    "/architecture/prefill_active_params".into(),
                    format!("{} prefill parameters exceed the {} active per token", p.value, a.active_params.value),
                    "a prompt token uses at most the parameters a decode token does; give the published figure",
                );
            }
            if a.local_window.is_some() != a.local_window_kv_bytes_per_token.is_some() {
                self.err(
                    &file,
                    "/architecture/local_window_kv_bytes_per_token".into(),
                    "`local_window` and `local_window_kv_bytes_per_token` go together".into(),
                    "give both: how many recent positions each layer keeps uncompressed, and their bytes per position",
                );
            }
            if a.linear_attention_layers.is_some() != a.linear_state_bytes.is_some() {
                self.err(
                    &file,
                    "/architecture/linear_state_bytes".into(),
                    "`linear_attention_layers` and `linear_state_bytes` go together".into(),
                    "give both: how many layers keep a recurrent state, and its bytes per layer and sequence",
                );
            }
            for (name, q) in
                [("window_kv_bytes_per_token", &a.window_kv_bytes_per_token), ("window_head_dim", &a.window_head_dim)]
            {
                if q.is_some() && (a.sliding_window.is_none() || a.sliding_window_layers.is_none()) {
                    self.err(
                        &file,
                        format!("/architecture/{name}"),
                        format!("{name}: the geometry of window layers on a model without any"),
                        "give sliding_window and sliding_window_layers, or drop it",
                    );
                }
            }
            if a.window_head_dim.is_some() && a.head_dim.is_none() {
                self.err(
                    &file,
                    "/architecture/window_head_dim".into(),
                    "window_head_dim without head_dim: the full layers' head dimension it is compared with".into(),
                    "give head_dim (the full layers') too",
                );
            }
            if let Some(w) = &a.sliding_window_layers {
                if w.value >= a.layers.value {
                    self.err(
                        &file,
                        "/architecture/sliding_window_layers".into(),
                        format!(
                            "{} sliding-window layers of {} leave no full-attention layer",
                            w.value, a.layers.value
                        ),
                        "kv_bytes_per_token counts the full-attention layers; at least one must remain",
                    );
                }
            }
            if a.routed_expert_bytes.si() > a.weight_bytes.si() {
                self.err(
                    &file,
                    "/architecture/routed_expert_bytes".into(),
                    "routed expert bytes exceed the total weight bytes".into(),
                    "experts are part of the weights",
                );
            }
            if a.experts_per_token.value > a.routed_experts.value {
                self.err(
                    &file,
                    "/architecture/experts_per_token".into(),
                    "more experts per token than routed experts".into(),
                    "top-k cannot exceed the expert count",
                );
            }
            if a.draft_acceptance.value >= 100.0 {
                self.err(
                    &file,
                    "/architecture/draft_acceptance/value".into(),
                    "acceptance must be below 100%".into(),
                    "per-token acceptance is a probability",
                );
            }
            if !matches!(a.attention.as_str(), "mla" | "gqa") {
                self.err(
                    &file,
                    "/architecture/attention".into(),
                    format!("unknown attention kind `{}`", a.attention),
                    "use `mla` or `gqa`",
                );
            }
            if let Some(rc) = &m.report_config {
                self.from(&file, "/report_config", &rc.from, None);
            }
        }
    }

    fn sweeps(&mut self) {
        for (file, sweep) in &self.ds.sweeps {
            if !self.ds.models.contains_key(&sweep.model) {
                self.err(
                    file,
                    "/model".into(),
                    format!("unknown model `{}`", sweep.model),
                    "add data/models/<id>.json or fix the id",
                );
            }
            self.sweep_identity(file, sweep);
            let mut series_keys = BTreeSet::new();
            for (si, s) in sweep.series.iter().enumerate() {
                let sp = format!("/series/{si}");
                if !series_keys.insert((s.mode, s.isl, s.osl)) {
                    self.err(
                        file,
                        sp.clone(),
                        format!("duplicate series {} {}/{}", s.mode.name(), s.isl, s.osl),
                        "merge the points into one series",
                    );
                }
                if s.isl == 0 || s.osl == 0 {
                    self.err(
                        file,
                        format!("{sp}/isl"),
                        "sequence lengths must be positive".into(),
                        "isl and osl are token counts",
                    );
                }
                if !self.ds.hardware.contains_key(&s.hardware) {
                    self.err(
                        file,
                        format!("{sp}/hardware"),
                        format!("unknown hardware `{}`", s.hardware),
                        "add data/hardware/<id>.json or fix the id",
                    );
                }
                let mut seen = BTreeSet::new();
                for (pi, p) in s.points.iter().enumerate() {
                    let pp = format!("{sp}/points/{pi}");
                    if concurrency_ok(p.concurrency) {
                        if !seen.insert(p.concurrency as u32) {
                            self.err(
                                file,
                                format!("{pp}/concurrency"),
                                format!("duplicate point at concurrency {}", p.concurrency),
                                "each concurrency appears once per series",
                            );
                        }
                    } else {
                        self.err(
                            file,
                            format!("{pp}/concurrency"),
                            format!("concurrency must be a whole number from 1 to 4096, found {}", p.concurrency),
                            "concurrency counts closed-loop clients",
                        );
                    }
                    if self.positive(file, format!("{pp}/output_tok_s"), p.output_tok_s, "output_tok_s") {
                        self.from(file, &pp, &p.from, Some(p.output_tok_s));
                    }
                    self.table_row(file, &pp, &p.from.quote, p.concurrency);
                    for (key, x) in p.latency().values() {
                        if self.positive(file, format!("{pp}/{key}"), x, key) {
                            self.mentions(file, &format!("{pp}/{key}"), &p.from.quote, x, key);
                        }
                    }
                    self.point_run(file, &pp, p);
                }
                for (ri, r) in s.ranges.iter().enumerate() {
                    let rp = format!("{sp}/ranges/{ri}");
                    let ok = concurrency_ok(r.concurrency_min)
                        && concurrency_ok(r.concurrency_max)
                        && r.concurrency_min <= r.concurrency_max;
                    if !ok {
                        self.err(
                            file,
                            rp.clone(),
                            "range concurrencies must be whole numbers with min <= max".into(),
                            "check concurrency_min and concurrency_max",
                        );
                    }
                    if self.positive(file, format!("{rp}/output_tok_s_min"), r.output_tok_s_min, "output_tok_s_min")
                        && self.positive(file, format!("{rp}/output_tok_s_max"), r.output_tok_s_max, "output_tok_s_max")
                    {
                        if r.output_tok_s_min > r.output_tok_s_max {
                            self.err(
                                file,
                                rp.clone(),
                                "output_tok_s_min above output_tok_s_max".into(),
                                "swap the bounds",
                            );
                        }
                        self.from(file, &rp, &r.from, Some(r.output_tok_s_min));
                    }
                }
                for (ui, u) in s.unplaced.iter().enumerate() {
                    let up = format!("{sp}/unplaced/{ui}");
                    if !u.likely_concurrency.is_empty() && u.likely_concurrency.len() != u.output_tok_s.len() {
                        self.err(
                            file,
                            format!("{up}/likely_concurrency"),
                            "likely_concurrency must give one concurrency per value".into(),
                            "or leave it empty",
                        );
                    }
                    for (vi, x) in u.output_tok_s.iter().enumerate() {
                        self.positive(file, format!("{up}/output_tok_s/{vi}"), *x, "output_tok_s");
                    }
                    self.from(file, &up, &u.from, u.output_tok_s.first().copied());
                    // Values stated next to each one (a saturation run's totals and latencies): one per value,
                    // each in the quote, like the value itself.
                    for (name, xs) in
                        [("total_tok_s", &u.total_tok_s), ("ttft_ms", &u.ttft_ms), ("tpot_ms", &u.tpot_ms)]
                    {
                        if xs.is_empty() {
                            continue;
                        }
                        if xs.len() != u.output_tok_s.len() {
                            self.err(
                                file,
                                format!("{up}/{name}"),
                                format!("{name} must give one value per output_tok_s value"),
                                "or leave it out",
                            );
                            continue;
                        }
                        for (vi, x) in xs.iter().enumerate() {
                            let at = format!("{up}/{name}/{vi}");
                            if self.positive(file, at.clone(), *x, name) {
                                self.mentions(file, &at, &u.from.quote, *x, name);
                            }
                        }
                    }
                    for (vi, (total, out)) in u.total_tok_s.iter().zip(&u.output_tok_s).enumerate() {
                        if total < out {
                            self.err(
                                file,
                                format!("{up}/total_tok_s/{vi}"),
                                format!("total {total} tokens/s is below the output {out}"),
                                "a total counts input and output tokens",
                            );
                        }
                    }
                }
            }
            for (ti, t) in sweep.totals.iter().enumerate() {
                let tp = format!("/totals/{ti}");
                if !self.positive(file, format!("{tp}/total_tok_s"), t.total_tok_s, "total_tok_s") {
                    continue;
                }
                self.from(file, &tp, &t.from, Some(t.total_tok_s));
                let point = sweep
                    .series
                    .iter()
                    .filter(|s| s.mode == t.mode && s.isl == t.isl && s.osl == t.osl)
                    .flat_map(|s| s.points.iter())
                    .find(|p| p.concurrency == t.concurrency);
                match point {
                    None => self.err(
                        file,
                        tp.clone(),
                        format!(
                            "no {} {}/{} point at concurrency {} to check the total against",
                            t.mode.name(),
                            t.isl,
                            t.osl,
                            t.concurrency
                        ),
                        "a total must sit on a published point",
                    ),
                    Some(p) => {
                        let expect = p.output_tok_s * f64::from(t.isl + t.osl) / f64::from(t.osl);
                        // Output throughput is rounded to whole tokens/s; scale that rounding up to the total.
                        let tol = 0.5 * f64::from(t.isl + t.osl) / f64::from(t.osl) + 1.0;
                        if (expect - t.total_tok_s).abs() > tol {
                            self.err(
                                file,
                                format!("{tp}/total_tok_s"),
                                format!(
                                    "total {} does not match output {} x ({}+{})/{} = {expect:.0}",
                                    t.total_tok_s, p.output_tok_s, t.isl, t.osl, t.osl
                                ),
                                "a total counts input and output tokens of the same requests",
                            );
                        }
                    }
                }
            }
        }
    }

    /// A sweep's dataset, scenario, own sources and conditions: which publication and which measured setup its
    /// points belong to, and how they were measured.
    fn sweep_identity(&mut self, file: &str, sweep: &SweepFile) {
        let dataset = sweep.dataset.as_deref().unwrap_or(REPORT_DATASET);
        if let Some(d) = &sweep.dataset {
            if d.is_empty() || !d.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
                self.err(
                    file,
                    "/dataset".into(),
                    format!("dataset id `{d}` is not a lowercase slug"),
                    "one id per publication, e.g. `kubis-dgx-spark`",
                );
            }
        }
        if let Some(id) = &sweep.scenario {
            match self.ds.scenarios.get(id) {
                None => {
                    let known: Vec<&str> = self.ds.scenarios.keys().map(String::as_str).collect();
                    self.err(
                        file,
                        "/scenario".into(),
                        format!("unknown scenario `{id}`"),
                        &format!(
                            "add data/scenarios/{id}.json describing the measured setup, or use one of: {}",
                            known.join(", ")
                        ),
                    );
                }
                Some(sc) => {
                    // The scenario's load drives the loop the sweep's points are predicted with: it must be the
                    // load the benchmark ran (a closed loop, llama-benchy's batches, or one batch of prompts sent
                    // at once). An open loop at a finite rate has no loop here: its points stay unplaced.
                    let load = sweep.conditions.as_ref().map(|c| c.load.as_str());
                    let ran = load.map_or(Some(ScenarioLoad::ClosedLoop), ScenarioLoad::named);
                    if ran.is_some_and(|ran| ran != sc.load) {
                        self.err(
                            file,
                            "/conditions/load".into(),
                            format!(
                                "the sweep ran load {} but scenario `{id}` predicts `{}`",
                                load.map_or("`closed_loop` (no conditions state one)".into(), |l| format!("`{l}`")),
                                sc.load.name()
                            ),
                            "set the scenario's `load` to the sweep's",
                        );
                    }
                    // Two copies are predicted behind the scenario's router: a shuffling (random) router's
                    // uneven splits are part of what the sweep measured.
                    let router = sweep.conditions.as_ref().and_then(|c| c.router.as_deref());
                    if let Some(r) = router {
                        let lower = r.to_ascii_lowercase();
                        let random = lower.contains("shuffle") || lower.contains("random");
                        if random != (sc.router == DpRouter::Random) {
                            self.err(
                                file,
                                "/conditions/router".into(),
                                format!(
                                    "the sweep's router `{r}` spreads requests {} but scenario `{id}` predicts a {} router",
                                    if random { "at random" } else { "evenly" },
                                    if sc.router == DpRouter::Random { "random" } else { "balanced" }
                                ),
                                "a shuffling router (LiteLLM simple-shuffle) needs `\"router\": \"random\"` in its scenario, and only it",
                            );
                        }
                    }
                    if let ModelRef::Id(m) = &sc.model {
                        if *m != sweep.model {
                            self.err(
                                file,
                                "/scenario".into(),
                                format!("scenario `{id}` describes model `{m}`, the sweep measures `{}`", sweep.model),
                                "a sweep's scenario describes the setup its points were measured on",
                            );
                        }
                    }
                    if let Reference::Id(h) = &sc.hardware {
                        for (si, s) in sweep.series.iter().enumerate() {
                            if s.hardware != *h {
                                self.err(
                                    file,
                                    format!("/series/{si}/hardware"),
                                    format!("series hardware `{}` differs from scenario `{id}`'s `{h}`", s.hardware),
                                    "the scenario describes the machine the series ran on",
                                );
                            }
                        }
                    }
                }
            }
        } else if dataset != REPORT_DATASET {
            self.err(
                file,
                "/dataset".into(),
                format!("a sweep of dataset `{dataset}` needs its `scenario`"),
                "another publication's setup is not the report's: name the scenario that describes it",
            );
        }
        for (i, src) in sweep.sources.iter().enumerate() {
            if !src.is_external() {
                continue;
            }
            let sp = format!("/sources/{i}");
            if dataset == REPORT_DATASET {
                self.err(
                    file,
                    sp.clone(),
                    format!("external source `{}` in a sweep without a `dataset`", src.id),
                    "another publication's measurements are their own dataset: add \"dataset\": \"<publication id>\"",
                );
            }
            let url = src.original.as_deref().unwrap_or("");
            if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains(char::is_whitespace) {
                self.err(
                    file,
                    format!("{sp}/original"),
                    format!("external source `{}` has no URL", src.id),
                    "give the publication's address in `original` (https://...)",
                );
            }
            if let Some(d) = &src.published {
                if !is_iso_date(d) {
                    self.err(
                        file,
                        format!("{sp}/published"),
                        format!("publication date `{d}` is not YYYY-MM-DD"),
                        "write the date the source states, e.g. 2026-03-22",
                    );
                }
            }
        }
        let Some(c) = self.ds.sweeps.get(file).and_then(|s| s.conditions.as_ref()) else {
            if dataset != REPORT_DATASET {
                self.err(
                    file,
                    "/dataset".into(),
                    format!("a sweep of dataset `{dataset}` needs its `conditions`"),
                    "record the engine, its version and flags, the benchmark and the load as the source states them",
                );
            }
            return;
        };
        if c.from.is_empty() {
            self.err(
                file,
                "/conditions/from".into(),
                "conditions without a quote".into(),
                "quote where the source states them",
            );
        }
        for (i, f) in c.from.iter().enumerate() {
            self.provenance_at(file, &format!("/conditions/from/{i}"), f, None);
        }
        if !Conditions::LOADS.contains(&c.load.as_str()) {
            self.err(
                file,
                "/conditions/load".into(),
                format!("unknown load `{}`", c.load),
                "use `closed_loop` (fixed concurrency), `batch` (llama-benchy's runs), `all_at_once` (prompts sent together once) or `open_loop` (a finite rate)",
            );
        }
        let numbers = [
            ("gpu_memory_utilization", c.gpu_memory_utilization),
            ("max_model_len", c.max_model_len.map(f64::from)),
            ("runs_per_level", c.runs_per_level.map(f64::from)),
        ];
        for (name, x) in numbers {
            if let Some(x) = x.filter(|x| !c.from.iter().any(|f| quote_mentions(&f.quote, *x))) {
                self.err(
                    file,
                    format!("/conditions/{name}"),
                    format!("no quote of the conditions contains the {name} {x}"),
                    "quote the sentence that states this number",
                );
            }
        }
    }

    /// A number stated next to another must be in the same quote.
    fn mentions(&mut self, file: &str, pointer: &str, quote: &str, x: f64, what: &str) {
        if !quote_mentions(quote, x) {
            self.err(
                file,
                pointer.to_string(),
                format!("the quote does not contain the {what} {x}"),
                "quote the row or clause that states this number",
            );
        }
    }

    /// What a point says about its run beyond the throughput (an imported benchmark result's request rate,
    /// peak of requests in flight and speculative decoding counters): each number positive and in the quote,
    /// the counters consistent with each other, and the flags the run calls for present.
    fn point_run(&mut self, file: &str, pp: &str, p: &PointRecord) {
        if let Some(rate) = p.request_rate.and_then(RequestRate::per_second) {
            let at = format!("{pp}/request_rate");
            if self.positive(file, at.clone(), rate, "request_rate") {
                self.mentions(file, &at, &p.from.quote, rate, "request_rate");
                if !p.flags.contains(&Flag::RateLimited) {
                    self.err(
                        file,
                        format!("{pp}/flags"),
                        format!("requests were sent at {rate} per second, not by closed-loop clients, but the point is not flagged `rate_limited`"),
                        "add \"rate_limited\" to the point's flags: the model describes a closed loop and must not fit it",
                    );
                }
            }
        }
        if let Some(m) = p.max_concurrent_requests {
            let at = format!("{pp}/max_concurrent_requests");
            self.mentions(file, &at, &p.from.quote, f64::from(m), "max_concurrent_requests");
            {
                if f64::from(m) < p.concurrency && !p.flags.contains(&Flag::ConcurrencyCapped) {
                    self.err(
                        file,
                        format!("{pp}/flags"),
                        format!("at most {m} requests were in flight at once, below the point's concurrency {}, but the point is not flagged `concurrency_capped`", p.concurrency),
                        "add \"concurrency_capped\" to the point's flags: the engine never saw this concurrency",
                    );
                }
            }
        }
        let Some(sd) = &p.spec_decode else { return };
        let sp = format!("{pp}/spec_decode");
        let scalars = [
            ("acceptance_rate", sd.acceptance_rate),
            ("acceptance_length", sd.acceptance_length),
            ("num_drafts", sd.num_drafts.map(|x| x as f64)),
            ("draft_tokens", sd.draft_tokens.map(|x| x as f64)),
            ("accepted_tokens", sd.accepted_tokens.map(|x| x as f64)),
        ];
        for (key, x) in scalars.iter().filter_map(|(k, x)| x.map(|x| (*k, x))) {
            let at = format!("{sp}/{key}");
            if !(x.is_finite() && x >= 0.0) {
                self.err(
                    file,
                    at,
                    format!("{key} must be a finite number, at least 0, found {x}"),
                    "copy it from the result",
                );
                continue;
            }
            self.mentions(file, &at, &p.from.quote, x, key);
        }
        if sd.acceptance_rate.is_some_and(|r| r > 100.0) {
            self.err(
                file,
                format!("{sp}/acceptance_rate"),
                "acceptance_rate is a percentage, at most 100".into(),
                "vLLM writes accepted / draft tokens x 100",
            );
        }
        if let (Some(a), Some(t)) = (sd.accepted_tokens, sd.draft_tokens) {
            if a > t {
                self.err(
                    file,
                    format!("{sp}/accepted_tokens"),
                    format!("{a} accepted tokens of {t} drafted"),
                    "a draft token is accepted at most once",
                );
            }
        }
        if let (Some(l), Some(k)) = (sd.tokens_per_step(), sd.draft_length()) {
            if per_token_acceptance(l, k).is_none() {
                self.err(
                    file,
                    sp.clone(),
                    format!("an acceptance length of {l} tokens per step cannot come from drafts of {k} tokens"),
                    "the length counts the bonus token: it lies between 1 and the draft length + 1",
                );
            }
        }
        if let (Some(stated), Some(a), Some(n)) = (sd.acceptance_length, sd.accepted_tokens, sd.num_drafts) {
            let measured = 1.0 + a as f64 / n.max(1) as f64;
            if n > 0 && (stated - measured).abs() > 1e-6 * stated.abs().max(1.0) {
                self.err(
                    file,
                    format!("{sp}/acceptance_length"),
                    format!("acceptance_length {stated} is not 1 + accepted_tokens / num_drafts = {measured}"),
                    "copy the counters and the length from the same result",
                );
            }
        }
        for (i, r) in sd.per_position_acceptance_rates.iter().enumerate() {
            let at = format!("{sp}/per_position_acceptance_rates/{i}");
            if !(r.is_finite() && (0.0..=1.0).contains(r)) {
                self.err(
                    file,
                    at,
                    format!("a per-position acceptance rate is a share from 0 to 1, found {r}"),
                    "vLLM writes accepted at this position / drafts",
                );
            } else {
                self.mentions(file, &at, &p.from.quote, *r, "per-position acceptance rate");
            }
        }
    }

    /// A quote that is a Markdown table row (`| 8 | 153.5 | ...`) of a sweep table starts with its concurrency:
    /// a point quoting another level's row is a transcription slip.
    fn table_row(&mut self, file: &str, pointer: &str, quote: &str, concurrency: f64) {
        let Some(first) = quote.trim().strip_prefix('|').and_then(|r| r.split('|').next()) else { return };
        let first = first.trim();
        if first.parse::<f64>().is_ok_and(|c| c != concurrency) {
            self.err(
                file,
                format!("{pointer}/from/quote"),
                format!("the quoted row is for concurrency {first}, the point is at {concurrency}"),
                "quote the row of this point's concurrency",
            );
        }
    }

    fn claims(&mut self) {
        let mut ids = BTreeSet::new();
        let points = self.ds.points();
        for (ci, (file, c)) in self.ds.claims.iter().enumerate() {
            // Index within its own file (claims of one file are contiguous).
            let local = self.ds.claims[..ci].iter().filter(|(f, _)| f == file).count();
            let cp = format!("/claims/{local}");
            if !ids.insert(c.id.clone()) {
                self.err(file, format!("{cp}/id"), format!("duplicate claim id `{}`", c.id), "claim ids are unique");
            }
            self.from(file, &cp, &c.from, None);
            if c.unverifiable.is_some() {
                if c.numerator.is_some() || c.denominator.is_some() {
                    self.err(
                        file,
                        cp.clone(),
                        "an unverifiable claim has no operands".into(),
                        "drop the operands or the `unverifiable` field",
                    );
                }
                continue;
            }
            let (Some(n), Some(d)) = (&c.numerator, &c.denominator) else {
                self.err(
                    file,
                    cp.clone(),
                    "a claim needs a numerator and a denominator".into(),
                    "or mark it `unverifiable` with a reason",
                );
                continue;
            };
            let nv = self.operand(file, &format!("{cp}/numerator"), n, &points);
            let dv = self.operand(file, &format!("{cp}/denominator"), d, &points);
            let (Some(nv), Some(dv)) = (nv, dv) else { continue };
            let got = c.kind.value(nv, dv);
            if !claim_reproduced(c, got) {
                self.err(
                    file,
                    format!("{cp}/stated"),
                    format!("claim `{}` states {} but the data give {got:.3}", c.id, c.stated),
                    "the operands or the stated value are mistranscribed",
                );
            }
        }
    }

    fn operand(&mut self, file: &str, pointer: &str, op: &Operand, points: &[super::MeasuredPoint]) -> Option<f64> {
        match op {
            Operand::Point(k) => {
                let found: Vec<_> = points.iter().filter(|p| p.is(k)).collect();
                match found.as_slice() {
                    [p] => Some(p.output_tok_s),
                    [] if !self.ds.failed.is_empty() && !self.ds.sweeps.values().any(|s| s.model == k.model) => None,
                    [] => {
                        self.err(
                            file,
                            pointer.to_string(),
                            format!(
                                "no published point {} {} {}/{} at {}",
                                k.model,
                                k.mode.name(),
                                k.isl,
                                k.osl,
                                k.concurrency
                            ),
                            "the operand must match a point in data/sweeps/",
                        );
                        None
                    }
                    _ => None,
                }
            }
            Operand::Pointer { file: target, pointer: ptr } => match self.ds.number_at(target, ptr) {
                Some(x) => Some(x),
                None => {
                    self.err(
                        file,
                        pointer.to_string(),
                        format!("no number at {target}#{ptr}"),
                        "the pointer must reach a number in a loaded data file",
                    );
                    None
                }
            },
            Operand::Constant { constant, reason } => {
                if reason.trim().is_empty() {
                    self.err(
                        file,
                        pointer.to_string(),
                        "a constant operand needs a reason".into(),
                        "say where the constant comes from",
                    );
                }
                (*constant != 0.0).then_some(*constant)
            }
        }
    }

    /// Engine profiles: known coefficient names with a unit of the right dimension and a basis, a fit on a
    /// dataset that has points; scenarios name engines that exist.
    fn engines(&mut self) {
        let datasets: BTreeSet<String> = self.ds.points().into_iter().map(|p| p.dataset).collect();
        for e in self.ds.engines.values() {
            let file = self.path("engine", &e.id);
            for (name, q) in &e.coefficients {
                let pointer = format!("/coefficients/{}", crate::position::escape_segment(name));
                let want = if name.ends_with("_s") { Dimension::Seconds } else { Dimension::Count };
                if let Some(removed) = removed_engine_coefficient(name) {
                    self.err(&file, pointer, removed, "drop it (the fit or the model card now carries that cost)");
                    continue;
                }
                if !ENGINE_COEFFICIENTS.contains(&name.as_str()) {
                    self.err(
                        &file,
                        pointer,
                        format!("unknown engine coefficient `{name}`"),
                        &format!("use one of {}", ENGINE_COEFFICIENTS.join(", ")),
                    );
                    continue;
                }
                self.quantity(&file, &pointer, q, want, true);
            }
            if let Some(parent) = &e.based_on {
                if e.fitted_on.is_some() {
                    self.err(
                        &file,
                        "/based_on".into(),
                        "`based_on` and `fitted_on` exclude each other".into(),
                        "fit the profile, or base it on a fitted one, not both",
                    );
                } else if !self.ds.engines.contains_key(parent) || parent == &e.id {
                    let ids: Vec<&str> = self.ds.engines.keys().map(String::as_str).collect();
                    self.err(
                        &file,
                        "/based_on".into(),
                        format!("`based_on` names no other engine profile: `{parent}`"),
                        &format!("use an id from data/engines/: {}", ids.join(", ")),
                    );
                }
            }
            if e.efficiencies_from_microbenchmarks && e.fitted_on.is_some() {
                self.err(
                    &file,
                    "/efficiencies_from_microbenchmarks".into(),
                    "`efficiencies_from_microbenchmarks` and `fitted_on` exclude each other".into(),
                    "a fitted profile fits its efficiencies; take them from microbenchmarks only in a given profile",
                );
            }
            // An engine choice a profile states is only as good as its source.
            let choices = [
                (
                    e.admission.as_ref().map(|a| &a.reference),
                    "admission",
                    "the admission policy",
                    "name the documentation or measurement that says the engine admits so",
                ),
                (
                    e.moe_kernel.as_ref().map(|m| &m.reference),
                    "moe_kernel",
                    "the MoE kernel",
                    "name the source that says the build runs this kernel",
                ),
            ];
            for (reference, field, what, hint) in choices {
                if reference.is_some_and(|r| r.trim().is_empty()) {
                    self.err(&file, format!("/{field}/reference"), format!("{what} has no reference"), hint);
                }
            }
            if let Some(f) = &e.fitted_on {
                if !datasets.contains(&f.dataset) {
                    let known: Vec<&str> = datasets.iter().map(String::as_str).collect();
                    self.err(
                        &file,
                        "/fitted_on/dataset".into(),
                        format!("no points of dataset `{}` to fit on", f.dataset),
                        &format!("use a dataset with points: {}", known.join(", ")),
                    );
                }
            }
        }
        for s in self.ds.scenarios.values() {
            let engine = s.engine.as_deref().unwrap_or(DEFAULT_ENGINE);
            // A dataset without engine files predicts with its own fit under the default id.
            let known =
                self.ds.engines.contains_key(engine) || (self.ds.engines.is_empty() && engine == DEFAULT_ENGINE);
            if !known {
                let file = self.path("scenario", &s.id);
                let ids: Vec<&str> = self.ds.engines.keys().map(String::as_str).collect();
                self.err(
                    &file,
                    "/engine".into(),
                    format!("unknown engine profile `{engine}`"),
                    &format!("use an id from data/engines/: {}", ids.join(", ")),
                );
            }
        }
    }

    fn scenarios(&mut self) {
        for s in self.ds.scenarios.values() {
            let file = self.path("scenario", &s.id);
            if let Reference::Id(id) = &s.hardware {
                if !self.ds.hardware.contains_key(id) {
                    self.err(
                        &file,
                        "/hardware".into(),
                        format!("unknown hardware `{id}`"),
                        "use an id from data/hardware/ or an inline object",
                    );
                }
            }
            if let ModelRef::Id(id) = &s.model {
                if !self.ds.models.contains_key(id) {
                    self.err(
                        &file,
                        "/model".into(),
                        format!("unknown model `{id}`"),
                        "use an id from data/models/ or an inline object",
                    );
                }
            }
            if s.workloads.is_empty() {
                self.err(&file, "/workloads".into(), "no workloads".into(), "add at least one {\"isl\", \"osl\"}");
            }
            for (i, w) in s.workloads.iter().enumerate() {
                if w.isl == 0 || w.osl == 0 {
                    self.err(
                        &file,
                        format!("/workloads/{i}"),
                        "sequence lengths must be positive".into(),
                        "isl and osl are token counts",
                    );
                }
                // A closed loop's clients would each draw a fresh length per request; the loop pools them into
                // cohorts of one length, so only a batch sent once lets lengths vary.
                if !w.output_lengths.is_fixed() && s.load == ScenarioLoad::ClosedLoop {
                    self.err(
                        &file,
                        format!("/workloads/{i}/output_lengths"),
                        "output lengths vary in a closed-loop scenario".into(),
                        "lengths vary only in one batch sent at once (`all_at_once`, `batch`)",
                    );
                }
            }
            // An override given as a quantity carries its basis like any other parameter; whether its dimension
            // fits the key is checked where the key table lives (`scenario::resolve`).
            for (key, value) in &s.overrides {
                let pointer = format!("/overrides/{}", crate::position::escape_segment(key));
                match value {
                    OverrideValue::Quantity(q) => match parse_unit(&q.unit) {
                        Some((dim, _)) => self.quantity(&file, &pointer, q, dim, true),
                        None => self.err(
                            &file,
                            format!("{pointer}/unit"),
                            format!("unknown unit `{}`", q.unit),
                            "use a unit of the key's dimension (data/SCHEMA.md, Quantities)",
                        ),
                    },
                    OverrideValue::Number(x) if !x.is_finite() || *x < 0.0 => self.err(
                        &file,
                        pointer,
                        format!("override must be a finite non-negative number, found {x}"),
                        "overrides are SI values",
                    ),
                    OverrideValue::Number(_) => {}
                }
            }
            for (i, c) in s.concurrency.iter().enumerate() {
                if !concurrency_ok(f64::from(*c)) {
                    self.err(
                        &file,
                        format!("/concurrency/{i}"),
                        format!("concurrency {c} outside 1..=4096"),
                        "concurrency counts closed-loop clients",
                    );
                }
            }
        }
    }

    fn path(&self, kind: &str, id: &str) -> String {
        self.ds.paths.get(&(kind.to_string(), id.to_string())).cloned().unwrap_or_default()
    }
}

/// `YYYY-MM-DD` with a plausible month and day.
/// How far the data may land from a claim's stated value: half a unit of its last stated decimal, and 5% more
/// for a claim stated as approximate.
pub fn claim_tolerance(c: &Claim) -> f64 {
    let half_unit = 0.5 * 10f64.powi(-(c.decimals as i32));
    if c.approximate {
        half_unit + 0.05 * c.stated.abs()
    } else {
        half_unit + 1e-9
    }
}

/// Whether `got`, the value the claim's operands give, reproduces what it states (`claim_tolerance`).
pub fn claim_reproduced(c: &Claim, got: f64) -> bool {
    (got - c.stated).abs().partial_cmp(&claim_tolerance(c)) != Some(std::cmp::Ordering::Greater)
}

fn is_iso_date(d: &str) -> bool {
    let parts: Vec<&str> = d.split('-').collect();
    let num = |s: &str, len: usize| {
        (s.len() == len && s.chars().all(|c| c.is_ascii_digit())).then(|| s.parse::<u32>().ok()).flatten()
    };
    matches!(parts.as_slice(), [y, m, dd] if num(y, 4).is_some()
        && num(m, 2).is_some_and(|m| (1..=12).contains(&m))
        && num(dd, 2).is_some_and(|x| (1..=31).contains(&x)))
}

fn concurrency_ok(c: f64) -> bool {
    c.is_finite() && c.fract() == 0.0 && (1.0..=4096.0).contains(&c)
}

/// True when some number written in `quote` equals `value`, reading `1,525`, `1.525` and `1 525` as the
/// thousands-separated forms the translations use, and `7,1` as a German decimal.
pub fn quote_mentions(quote: &str, value: f64) -> bool {
    let chars: Vec<char> = quote.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || ((chars[i] == ',' || chars[i] == '.') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())))
        {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        let readings = [token.replace(',', ""), token.replace('.', "").replace(',', "."), token.replace(',', ".")];
        if readings.iter().any(|r| r.parse::<f64>().is_ok_and(|x| (x - value).abs() <= 1e-9 * value.abs().max(1.0))) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::quote_mentions;
    use crate::dataset::schema::pcie_bytes_per_sec;

    #[test]
    fn pcie_bandwidth_follows_generation_lanes_and_encoding() {
        let gb = |g: f64, n: f64| pcie_bytes_per_sec(g, n).map(|b| (b / 1e8).round() / 10.0);
        // 32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s; Gen4 half of it; Gen2 with 8b/10b.
        assert_eq!(gb(5.0, 16.0), Some(63.0));
        assert_eq!(gb(4.0, 16.0), Some(31.5));
        assert_eq!(gb(5.0, 4.0), Some(15.8));
        assert_eq!(gb(2.0, 16.0), Some(8.0));
        assert_eq!(pcie_bytes_per_sec(6.0, 16.0), None);
        assert_eq!(pcie_bytes_per_sec(4.5, 16.0), None);
        assert_eq!(pcie_bytes_per_sec(5.0, 0.0), None);
    }

    #[test]
    fn reads_numbers_in_every_translation_style() {
        assert!(quote_mentions("bereikte 1,525 op 32 streams", 1525.0));
        assert!(quote_mentions("misst 1.525 Token pro Sekunde", 1525.0));
        assert!(quote_mentions("7,1 TB/s", 7.1));
        assert!(quote_mentions("92.242 GB / s", 92.242));
        assert!(!quote_mentions("139 uitvoertokens", 1525.0));
    }
}

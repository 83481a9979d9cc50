//! Physical plausibility of a spec: whether a hardware file's or a model card's numbers, each well-formed,
//! can describe one real machine or model together. A PCIe link carries what its generation and width carry,
//! a microbenchmark reaches at most the spec figure it measures, the slow path is no faster than what feeds it,
//! a model's experts fit in its weights. `check` runs them over a loaded dataset; `explore::Workspace::load`
//! reports what they find beside the format and provenance checks of `dataset::validate`.

use crate::dataset::schema::{Architecture, Basis, HardwareFile, HostLink, HostLinkKind, Microbenchmarks};
use crate::dataset::Dataset;
use crate::diagnostic::Diagnostic;
use crate::units::{parse_unit, Dimension};

/// One-way payload bandwidth of a PCIe link, bytes/s: transfer rate per lane x lanes x encoding / 8 bits
/// (PCI-SIG base specifications: Gen 1 2.5 GT/s and Gen 2 5 GT/s with 8b/10b; Gen 3 8, Gen 4 16 and Gen 5
/// 32 GT/s with 128b/130b). Gen5 x16: 32e9 x 16 x 128/130 / 8 = 63.0 GB/s. `None` for a generation outside
/// 1-5 (Gen 6's FLIT mode has no single encoding ratio) or a lane count that is not a positive number.
pub fn pcie_bytes_per_sec(generation: f64, lanes: f64) -> Option<f64> {
    const GENERATIONS: [(f64, f64); 5] =
        [(2.5e9, 8.0 / 10.0), (5e9, 8.0 / 10.0), (8e9, 128.0 / 130.0), (16e9, 128.0 / 130.0), (32e9, 128.0 / 130.0)];
    let (gt_per_s, encoding) = *(1..=5).zip(GENERATIONS.iter()).find(|(g, _)| f64::from(*g) == generation)?.1;
    (lanes.is_finite() && lanes > 0.0).then(|| gt_per_s * lanes * encoding / 8.0)
}

/// Every hardware file and model card of a loaded dataset, each diagnostic located in its file.
pub fn check(ds: &Dataset) -> Vec<Diagnostic> {
    let path = |kind: &str, id: &str| ds.paths.get(&(kind.to_string(), id.to_string())).cloned().unwrap_or_default();
    let mut out = Vec::new();
    for hw in ds.hardware.values() {
        out.extend(hardware(&path("hardware", &hw.id), hw));
    }
    for m in ds.models.values() {
        out.extend(architecture(&path("model", &m.id), &m.architecture));
    }
    out.into_iter().map(|d| ds.locate(d)).collect()
}

/// Everything physically implausible in a hardware file: a payload share above 100%, a host link whose kind,
/// generation, width and derived bandwidth disagree, a slow path faster than what feeds it, a microbenchmark
/// above its spec figure.
pub fn hardware(file: &str, hw: &HardwareFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if hw.link.payload_efficiency.value > 100.0 {
        out.push(err(
            file,
            "/link/payload_efficiency/value".into(),
            "payload efficiency above 100%".into(),
            "a share of line rate is at most 100",
        ));
    }
    if let Some(link) = &hw.host_link {
        host_link(&mut out, file, link);
    }
    slow_path_bound(&mut out, file, hw);
    if let Some(mb) = &hw.microbenchmarks {
        microbenchmarks(&mut out, file, hw, mb);
    }
    out
}

/// Everything inconsistent in a model card's architecture: layer counts that leave no full-attention layer, a
/// drafter on a model that drafts nothing, fields that go together given alone, experts that do not fit in the
/// weights, an acceptance that is no probability.
pub fn architecture(file: &str, a: &Architecture) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let other_layers = a.sliding_window_layers.as_ref().map_or(0.0, |q| q.value)
        + a.linear_attention_layers.as_ref().map_or(0.0, |q| q.value);
    if a.linear_attention_layers.is_some() && other_layers >= a.layers.value {
        out.push(err(
            file,
            "/architecture/linear_attention_layers".into(),
            format!(
                "{other_layers} sliding-window and linear-attention layers of {} leave no full-attention layer",
                a.layers.value
            ),
            "kv_bytes_per_token counts the full-attention layers; at least one must remain",
        ));
    }
    for (name, q) in [
        ("draft_attention_layers", &a.draft_attention_layers),
        ("draft_kv_bytes_per_token", &a.draft_kv_bytes_per_token),
        ("draft_pass_layers", &a.draft_pass_layers),
    ] {
        if q.as_ref().is_some_and(|n| n.value > 0.0) && a.draft_tokens.value <= 0.0 {
            out.push(err(
                file,
                format!("/architecture/{name}"),
                format!("{name}: a drafter's attention on a model that drafts no tokens"),
                &format!("set draft_tokens, or drop {name}"),
            ));
        }
    }
    if let Some(p) = a.draft_passes.as_ref().filter(|p| p.value > a.draft_tokens.value) {
        out.push(err(
            file,
            "/architecture/draft_passes".into(),
            format!("{} draft passes for {} drafted tokens", p.value, a.draft_tokens.value),
            "a drafter runs at most one pass per drafted token; give the published figure",
        ));
    }
    if let Some(p) = a.prefill_active_params.as_ref().filter(|p| p.value > a.active_params.value) {
        out.push(err(
            file,
            "/architecture/prefill_active_params".into(),
            format!("{} prefill parameters exceed the {} active per token", p.value, a.active_params.value),
            "a prompt token uses at most the parameters a decode token does; give the published figure",
        ));
    }
    if a.local_window.is_some() != a.local_window_kv_bytes_per_token.is_some() {
        out.push(err(
            file,
            "/architecture/local_window_kv_bytes_per_token".into(),
            "`local_window` and `local_window_kv_bytes_per_token` go together".into(),
            "give both: how many recent positions each layer keeps uncompressed, and their bytes per position",
        ));
    }
    if a.linear_attention_layers.is_some() != a.linear_state_bytes.is_some() {
        out.push(err(
            file,
            "/architecture/linear_state_bytes".into(),
            "`linear_attention_layers` and `linear_state_bytes` go together".into(),
            "give both: how many layers keep a recurrent state, and its bytes per layer and sequence",
        ));
    }
    for (name, q) in
        [("window_kv_bytes_per_token", &a.window_kv_bytes_per_token), ("window_head_dim", &a.window_head_dim)]
    {
        if q.is_some() && (a.sliding_window.is_none() || a.sliding_window_layers.is_none()) {
            out.push(err(
                file,
                format!("/architecture/{name}"),
                format!("{name}: the geometry of window layers on a model without any"),
                "give sliding_window and sliding_window_layers, or drop it",
            ));
        }
    }
    if a.window_head_dim.is_some() && a.head_dim.is_none() {
        out.push(err(
            file,
            "/architecture/window_head_dim".into(),
            "window_head_dim without head_dim: the full layers' head dimension it is compared with".into(),
            "give head_dim (the full layers') too",
        ));
    }
    if let Some(w) = &a.sliding_window_layers {
        if w.value >= a.layers.value {
            out.push(err(
                file,
                "/architecture/sliding_window_layers".into(),
                format!("{} sliding-window layers of {} leave no full-attention layer", w.value, a.layers.value),
                "kv_bytes_per_token counts the full-attention layers; at least one must remain",
            ));
        }
    }
    if a.routed_expert_bytes.si() > a.weight_bytes.si() {
        out.push(err(
            file,
            "/architecture/routed_expert_bytes".into(),
            "routed expert bytes exceed the total weight bytes".into(),
            "experts are part of the weights",
        ));
    }
    if a.experts_per_token.value > a.routed_experts.value {
        out.push(err(
            file,
            "/architecture/experts_per_token".into(),
            "more experts per token than routed experts".into(),
            "top-k cannot exceed the expert count",
        ));
    }
    if a.draft_acceptance.value >= 100.0 {
        out.push(err(
            file,
            "/architecture/draft_acceptance/value".into(),
            "acceptance must be below 100%".into(),
            "per-token acceptance is a probability",
        ));
    }
    out
}

/// PCIe's generation and width (absent on NVLink-C2C), and a derived PCIe bandwidth equal to what generation x
/// lanes carry.
fn host_link(out: &mut Vec<Diagnostic>, file: &str, link: &HostLink) {
    match link.kind {
        HostLinkKind::NvlinkC2c => {
            for (name, q) in [("generation", &link.generation), ("lanes", &link.lanes)] {
                if q.is_some() {
                    out.push(err(
                        file,
                        format!("/host_link/{name}"),
                        format!("`{name}` describes a PCIe link, not NVLink-C2C"),
                        "remove it, or set `kind` to `pcie`",
                    ));
                }
            }
        }
        HostLinkKind::Pcie => {
            let (Some(generation), Some(lanes)) = (&link.generation, &link.lanes) else {
                let missing = if link.generation.is_none() { "generation" } else { "lanes" };
                out.push(err(
                    file,
                    "/host_link".into(),
                    format!("a PCIe host link needs `{missing}`"),
                    "give the PCIe generation and lane count, e.g. 5 and 16 for Gen5 x16",
                ));
                return;
            };
            let (g, n) = (generation.value, lanes.value);
            if !(g.fract() == 0.0 && (1.0..=6.0).contains(&g)) {
                out.push(err(
                    file,
                    "/host_link/generation/value".into(),
                    format!("PCIe generation {g} is not one of 1 to 6"),
                    "a PCIe generation is a whole number",
                ));
            }
            if ![1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 32.0].contains(&n) {
                out.push(err(
                    file,
                    "/host_link/lanes/value".into(),
                    format!("PCIe width x{n} is not a link width (x1, x2, x4, x8, x12, x16, x32)"),
                    "a GPU usually sits on x16",
                ));
            }
            let (Some(expected), Some(stated)) = (pcie_bytes_per_sec(g, n), link.bandwidth.si()) else { return };
            if link.bandwidth.basis == Basis::Derived && (stated / expected - 1.0).abs() > 0.01 {
                out.push(err(
                    file,
                    "/host_link/bandwidth/value".into(),
                    format!(
                        "PCIe Gen{g} x{n} carries {:.1} GB/s per direction (transfer rate x lanes x encoding / 8), \
                         not the derived {:.1} GB/s",
                        expected / 1e9,
                        stated / 1e9
                    ),
                    "derive the bandwidth from generation and lanes, or give a measured value with its basis",
                ));
            }
        }
    }
}

/// The slow path cannot beat what feeds it: CPU memory bandwidth and, when given, the host link's.
fn slow_path_bound(out: &mut Vec<Diagnostic>, file: &str, hw: &HardwareFile) {
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
        out.push(err(
            file,
            "/slow_path_bandwidth/value".into(),
            format!("slow path {:.1} GB/s exceeds {parts}", slow / 1e9),
            "the GPU reads CPU memory no faster than the memory or the link between them delivers",
        ));
    }
}

/// An achieved bandwidth no higher than the spec field it measures, a GEMM fraction in (0, 1].
fn microbenchmarks(out: &mut Vec<Diagnostic>, file: &str, hw: &HardwareFile, mb: &Microbenchmarks) {
    let bandwidths = [
        ("hbm_bandwidth", &mb.hbm_bandwidth, "gpu_memory_bandwidth", &hw.gpu_memory_bandwidth),
        ("slow_path_bandwidth", &mb.slow_path_bandwidth, "slow_path_bandwidth", &hw.slow_path_bandwidth),
    ];
    for (name, q, spec_name, spec) in bandwidths {
        let Some(q) = q else { continue };
        let pointer = format!("/microbenchmarks/{name}");
        let (Some(achieved), Some(bound)) = (q.si(), spec.si()) else { continue };
        if parse_unit(&q.unit).is_some_and(|(d, _)| d == Dimension::BytesPerSec)
            && achieved.is_finite()
            && bound.is_finite()
            && achieved > bound * (1.0 + 1e-9)
        {
            out.push(err(
                file,
                format!("{pointer}/value"),
                format!(
                    "achieved {name} {:.1} GB/s exceeds the spec {spec_name} {:.1} GB/s",
                    achieved / 1e9,
                    bound / 1e9
                ),
                "a microbenchmark reaches at most the spec figure it measures; check the value, its unit and \
                 which field it belongs to",
            ));
        }
    }
    if let Some(q) = &mb.dense_gemm_fraction {
        let pointer = "/microbenchmarks/dense_gemm_fraction";
        if q.value.is_finite() && q.value > 1.0 {
            out.push(err(
                file,
                format!("{pointer}/value"),
                format!("a fraction of the dense tensor peak lies in (0, 1], found {}", q.value),
                "give achieved TFLOPS / peak TFLOPS with unit \"1\" (0.7, not 70)",
            ));
        }
    }
}

fn err(file: &str, pointer: String, msg: String, hint: &str) -> Diagnostic {
    Diagnostic::error(file, pointer, msg).with_hint(hint)
}

#[cfg(test)]
mod tests {
    use super::pcie_bytes_per_sec;

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
}

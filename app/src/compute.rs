//! Derived numbers: the what-if scenario, and the data behind each chart and table. Pure, no browser.

use crate::charts::{
    ClaimMarker, FabricChartData, GainChartData, Marker, PlanChartData, RangeMarker, SweepChartData, UnplacedMarker,
};
use crate::data::Bundle;
use crate::state::{pf, ModelSource, UrlState, PLAN_FIELDS};
use sim_core::dataset::schema::{Claim, ClaimKind, Operand, PointKey, Workload};
use sim_core::dataset::schema::{Collective, Flag};
use sim_core::dataset::{self, SourceText};
use sim_core::describe::ModelDescription;
use sim_core::fit::{fit, FitSet};
use sim_core::import::{vllm_bench, VllmOptions};
use sim_core::model::fabric::busbw;
use sim_core::model::{predict, Coefficients};
use sim_core::plan::Plan;
use sim_core::report::{self, Report};
use sim_core::scenario::{apply_override, LinkParams, Scenario};
use sim_core::Mode;

/// Concurrency levels of every curve: 1, 2, 4, ..., 256.
pub const CONCURRENCY: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// The scenario and coefficients of a model with the what-if values applied (published points stay put).
pub fn what_if(b: &Bundle, st: &UrlState) -> Option<(Scenario, Coefficients)> {
    let mut s = b.scenarios.get(&st.model)?.clone();
    let mut k = b.coefficients.clone();
    let w = st.whatif;
    let set = |s: &mut Scenario, key: &str, v: Option<f64>, scale: f64| {
        if let Some(v) = v {
            let _ = apply_override(s, key, v * scale);
        }
    };
    set(&mut s, "hardware.gpu_memory_bytes", w[0], 1e9);
    set(&mut s, "hardware.hbm_bytes_per_sec", w[1], 1e12);
    set(&mut s, "hardware.slow_path_bytes_per_sec", w[2], 1e9);
    set(&mut s, "link.line_rate_bytes_per_sec_per_rail", w[3], 1e9 / 8.0);
    if let Some(a) = w[4] {
        let a = (a / 100.0).min(0.99);
        let _ = apply_override(&mut s, "model.draft_acceptance", a);
        // The fitted per-model acceptance wins over the model card's, so the control replaces it too.
        k.acceptance.insert(st.model.clone(), a);
    }
    Some((s, k))
}

/// The dataset's value of each what-if control for a model, in the controls' units.
pub fn baseline(b: &Bundle, model: &str) -> [f64; 5] {
    let Some(s) = b.scenarios.get(model) else { return [0.0; 5] };
    [
        s.hardware.gpu_memory_bytes / 1e9,
        s.hardware.hbm_bytes_per_sec / 1e12,
        s.hardware.slow_path_bytes_per_sec / 1e9,
        s.hardware.link.line_rate_bytes_per_sec_per_rail * 8.0 / 1e9,
        b.coefficients.acceptance_for(&s.model) * 100.0,
    ]
}

/// Modes drawn for a model: those its scenario lists.
pub fn modes(b: &Bundle, model: &str) -> Vec<Mode> {
    b.scenarios.get(model).map(|s| s.modes.clone()).unwrap_or_else(|| Mode::ALL.to_vec())
}

fn curve(s: &Scenario, k: &Coefficients, mode: Mode, isl: u32, osl: u32) -> Vec<(u32, f64)> {
    CONCURRENCY
        .iter()
        .map(|&c| (c, predict(s, k, mode, isl, osl, c).output_tok_s))
        .filter(|(_, y)| y.is_finite() && *y > 0.0)
        .collect()
}

/// Why a flagged point is not used by the fit.
pub fn explain_flags(flags: &[Flag]) -> String {
    flags
        .iter()
        .map(|f| match f {
            Flag::Dip => "the source calls it a dip (reported as collected); not fitted",
            Flag::OtherCheckpoint => "measured on another checkpoint than this model's; shown for reference only",
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One row of the table under the throughput chart.
#[derive(Debug, Clone, PartialEq)]
pub struct PointRow {
    pub mode: Mode,
    pub concurrency: u32,
    pub measured: f64,
    pub predicted: f64,
    pub error_pct: f64,
    pub flagged: Option<String>,
    pub source: String,
    pub quote: String,
}

/// What a value that is not a point states.
#[derive(Debug, Clone, PartialEq)]
pub enum StatedKind {
    /// Somewhere between the throughput bounds over the concurrency bounds.
    Range { c_min: f64, c_max: f64, y_min: f64, y_max: f64 },
    /// One value without a concurrency; `likely` is the natural reading, not the source's.
    Unplaced { value: f64, likely: Option<f64> },
}

/// A row of the table under the throughput chart for a value that is not a point: a range or a value without a
/// stated concurrency. Never counted as a point: a range has no error; an unplaced value's error is against its
/// likely concurrency only.
#[derive(Debug, Clone, PartialEq)]
pub struct StatedRow {
    pub mode: Mode,
    pub kind: StatedKind,
    /// The concurrency column: `range 32-256`, `concurrency not stated (likely 64)`.
    pub concurrency: String,
    /// The measured column: `573-611`, `710`.
    pub measured: String,
    /// The prediction at the range's concurrencies (the curve's levels inside it) or at the likely concurrency.
    pub predicted: Vec<(u32, f64)>,
    /// Unplaced only: predicted against the value at the likely concurrency, in percent.
    pub likely_error_pct: Option<f64>,
    /// The range's note or the unplaced value's reason.
    pub note: Option<String>,
    pub source: String,
    pub quote: String,
}

impl StatedRow {
    /// The predicted column: `32: 617, 64: 640, ...` for a range, the value alone for an unplaced one.
    pub fn predicted_text(&self) -> String {
        match self.kind {
            StatedKind::Range { .. } => {
                self.predicted.iter().map(|(c, y)| format!("{c}: {y:.0}")).collect::<Vec<_>>().join(", ")
            }
            StatedKind::Unplaced { .. } => {
                self.predicted.first().map(|(_, y)| format!("{y:.0}")).unwrap_or_else(|| "-".into())
            }
        }
    }

    /// The error column: none for a range (not a point); for an unplaced value the error against the likely
    /// concurrency, in parentheses and marked as such.
    pub fn error_text(&self) -> String {
        match (&self.kind, self.likely_error_pct) {
            (StatedKind::Range { .. }, _) => "none (a range, not a point)".into(),
            (StatedKind::Unplaced { likely: Some(c), .. }, Some(e)) => format!("({e:+.1}% if at the likely {c})"),
            _ => "none (no concurrency)".into(),
        }
    }
}

fn fmt_conc(c: f64) -> String {
    format!("{c}")
}

/// The ranges and unplaced values of the model and workload, predicted with the what-if values applied: the
/// chart's markers (`data.unplaced`, then `data.ranges`) and one table row per marker, in the same order (the
/// order of the chart's hit points after the published points).
fn stated(b: &Bundle, st: &UrlState, s: &Scenario, k: &Coefficients, data: &mut SweepChartData) -> Vec<StatedRow> {
    let (isl, osl) = st.workload();
    let series: Vec<_> = b.stated.iter().filter(|v| v.model == st.model && v.isl == isl && v.osl == osl).collect();
    let at = |mode: Mode, c: u32| predict(s, k, mode, isl, osl, c).output_tok_s;
    let mut rows = Vec::new();
    for v in &series {
        for u in &v.unplaced {
            for (i, &value) in u.output_tok_s.iter().enumerate() {
                let likely = u.likely_concurrency.get(i).copied().filter(|c| c.is_finite() && *c >= 1.0);
                let predicted: Vec<(u32, f64)> =
                    likely.map(|c| (c.round() as u32, at(v.mode, c.round() as u32))).into_iter().collect();
                let likely_error_pct = predicted.first().map(|(_, y)| (y - value) / value * 100.0);
                if let Some(c) = likely {
                    data.unplaced.push(UnplacedMarker { mode: v.mode, x: c, y: value });
                }
                rows.push(StatedRow {
                    mode: v.mode,
                    kind: StatedKind::Unplaced { value, likely },
                    concurrency: match likely {
                        Some(c) => format!("concurrency not stated (likely {})", fmt_conc(c)),
                        None => "concurrency not stated".into(),
                    },
                    measured: format!("{value:.0}"),
                    predicted,
                    likely_error_pct,
                    // The reason once per group of values, on its first row.
                    note: (i == 0).then(|| u.reason.clone()),
                    source: u.from.source.clone(),
                    quote: u.from.quote.clone(),
                });
            }
        }
    }
    // Unplaced values without a likely concurrency have a row but no marker: keep rows and hit points aligned by
    // listing them last.
    let (mut placed, unplaced_rest): (Vec<_>, Vec<_>) =
        rows.into_iter().partition(|r| !matches!(r.kind, StatedKind::Unplaced { likely: None, .. }));
    for v in &series {
        for r in &v.ranges {
            let mut predicted: Vec<(u32, f64)> = CONCURRENCY
                .iter()
                .filter(|&&c| f64::from(c) >= r.concurrency_min && f64::from(c) <= r.concurrency_max)
                .map(|&c| (c, at(v.mode, c)))
                .collect();
            if predicted.is_empty() {
                let (a, z) = (r.concurrency_min.round().max(1.0) as u32, r.concurrency_max.round().max(1.0) as u32);
                predicted =
                    if a == z { vec![(a, at(v.mode, a))] } else { vec![(a, at(v.mode, a)), (z, at(v.mode, z))] };
            }
            data.ranges.push(RangeMarker {
                mode: v.mode,
                x_min: r.concurrency_min,
                x_max: r.concurrency_max,
                y_min: r.output_tok_s_min,
                y_max: r.output_tok_s_max,
            });
            placed.push(StatedRow {
                mode: v.mode,
                kind: StatedKind::Range {
                    c_min: r.concurrency_min,
                    c_max: r.concurrency_max,
                    y_min: r.output_tok_s_min,
                    y_max: r.output_tok_s_max,
                },
                concurrency: format!("range {}-{}", fmt_conc(r.concurrency_min), fmt_conc(r.concurrency_max)),
                measured: format!("{:.0}-{:.0}", r.output_tok_s_min, r.output_tok_s_max),
                predicted,
                likely_error_pct: None,
                note: r.note.clone(),
                source: r.from.source.clone(),
                quote: r.from.quote.clone(),
            });
        }
    }
    placed.extend(unplaced_rest);
    placed
}

/// The throughput chart and its table for the state.
pub fn sweep(b: &Bundle, st: &UrlState) -> (SweepChartData, Vec<PointRow>) {
    let (data, rows, _) = sweep_all(b, st);
    (data, rows)
}

/// The throughput chart, its table of points and its rows for values that are not points (ranges, values
/// without a concurrency), in the order of the chart's hit points after the published points.
pub fn sweep_all(b: &Bundle, st: &UrlState) -> (SweepChartData, Vec<PointRow>, Vec<StatedRow>) {
    let (mut data, rows) = sweep_points(b, st);
    let Some((s, k)) = what_if(b, st) else { return (data, rows, Vec::new()) };
    let stated = stated(b, st, &s, &k, &mut data);
    (data, rows, stated)
}

fn sweep_points(b: &Bundle, st: &UrlState) -> (SweepChartData, Vec<PointRow>) {
    let (isl, osl) = st.workload();
    let mut data = SweepChartData { title: format!("{} - ISL {isl} / OSL {osl}", st.model), ..Default::default() };
    let mut rows = Vec::new();
    let Some((s, k)) = what_if(b, st) else { return (data, rows) };
    for mode in modes(b, &st.model) {
        data.predicted.push((mode, curve(&s, &k, mode, isl, osl)));
        if let Some(e) = b.error_bands.get(&(st.model.clone(), mode)) {
            data.bands.push((mode, e.p90_pct));
        }
    }
    for p in b.points.iter().filter(|p| p.model == st.model && p.isl == isl && p.osl == osl) {
        let predicted = predict(&s, &k, p.mode, isl, osl, p.concurrency).output_tok_s;
        data.measured.push(Marker { mode: p.mode, x: p.concurrency as f64, y: p.output_tok_s, hollow: p.is_flagged() });
        let flagged = p.is_flagged().then(|| {
            let mut e = explain_flags(&p.flags);
            if let Some(n) = &p.note {
                e = format!("{e} ({n})");
            }
            e
        });
        rows.push(PointRow {
            mode: p.mode,
            concurrency: p.concurrency,
            measured: p.output_tok_s,
            predicted,
            error_pct: (predicted - p.output_tok_s) / p.output_tok_s * 100.0,
            flagged,
            source: p.source.clone(),
            quote: p.quote.clone(),
        });
    }
    rows.sort_by_key(|r| (r.mode, r.concurrency));
    (data, rows)
}

/// Gain of the pair over one station at equal concurrency: predicted curves and published ratios.
pub fn gain(b: &Bundle, st: &UrlState) -> GainChartData {
    let (isl, osl) = st.workload();
    let mut data = GainChartData {
        title: format!("{} - pair / one station, ISL {isl} / OSL {osl}", st.model),
        ..Default::default()
    };
    let Some((s, k)) = what_if(b, st) else { return data };
    let single = curve(&s, &k, Mode::Single, isl, osl);
    for mode in [Mode::Tp2, Mode::Pd] {
        let pair = curve(&s, &k, mode, isl, osl);
        let ratios = pair
            .iter()
            .filter_map(|(c, y)| single.iter().find(|(c1, _)| c1 == c).map(|(_, y1)| (*c, y / y1)))
            .collect();
        data.predicted.push((mode, ratios));
    }
    let pts: Vec<_> = b.points.iter().filter(|p| p.model == st.model && p.isl == isl && p.osl == osl).collect();
    for p in pts.iter().filter(|p| p.mode != Mode::Single) {
        if let Some(one) = pts.iter().find(|q| q.mode == Mode::Single && q.concurrency == p.concurrency) {
            data.measured.push(Marker {
                mode: p.mode,
                x: p.concurrency as f64,
                y: p.output_tok_s / one.output_tok_s,
                hollow: p.is_flagged() || one.is_flagged(),
            });
        }
    }
    data.claims = claim_markers(b, &st.model, isl, osl);
    data
}

/// The published point an operand names, if it is one.
fn operand_point(o: &Option<Operand>) -> Option<&PointKey> {
    match o {
        Some(Operand::Point(k)) => Some(k),
        _ => None,
    }
}

/// The published throughput of a point key.
pub fn point_value(b: &Bundle, k: &PointKey) -> Option<f64> {
    b.points
        .iter()
        .find(|p| {
            p.model == k.model
                && p.mode == k.mode
                && p.isl == k.isl
                && p.osl == k.osl
                && f64::from(p.concurrency) == k.concurrency
        })
        .map(|p| p.output_tok_s)
}

/// A claim's stated value as the report words it: `27x`, `+30%`, `98%` (`about` when approximate).
pub fn stated_label(c: &Claim) -> String {
    let d = c.decimals as usize;
    let v = match c.kind {
        ClaimKind::Ratio => format!("{:.d$}x", c.stated),
        ClaimKind::GainPercent => format!("+{:.d$}%", c.stated),
        ClaimKind::Percent => format!("{:.d$}%", c.stated),
    };
    if c.approximate {
        format!("about {v}")
    } else {
        v
    }
}

/// A claim's stated value as a pair / one station ratio (a gain of +30% is 1.3x); percent claims have none.
fn stated_ratio(c: &Claim) -> Option<f64> {
    match c.kind {
        ClaimKind::Ratio => Some(c.stated),
        ClaimKind::GainPercent => Some(1.0 + c.stated / 100.0),
        ClaimKind::Percent => None,
    }
}

/// The claims the gain chart places: ratios between two published points of the model and workload.
pub fn claim_markers(b: &Bundle, model: &str, isl: u32, osl: u32) -> Vec<ClaimMarker> {
    b.claims
        .iter()
        .filter_map(|c| {
            let (n, d) = (operand_point(&c.numerator)?, operand_point(&c.denominator)?);
            let ours = |k: &PointKey| k.model == model && k.isl == isl && k.osl == osl;
            if !ours(n) || !ours(d) || c.unverifiable.is_some() {
                return None;
            }
            let y = stated_ratio(c)?;
            let unequal = n.concurrency != d.concurrency;
            let label = format!("{}{}", stated_label(c), if unequal { "*" } else { "" });
            Some(ClaimMarker { id: c.id.clone(), x: n.concurrency, y, label, hollow: unequal })
        })
        .collect()
}

/// One claim of the report, for the list under the gain chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRow {
    pub id: String,
    /// As stated: `27x`, `+30%`.
    pub stated: String,
    /// What it compares, in words.
    pub compares: String,
    pub source: String,
    pub quote: String,
    pub caveat: Option<String>,
    pub unverifiable: Option<String>,
    /// The ratio the published points give, when both operands are points.
    pub from_data: Option<(f64, f64)>,
    /// For a claim over two concurrencies: the pair at the denominator's concurrency, its value, the
    /// denominator's value (the equal-concurrency ratio the data give).
    pub equal_concurrency: Option<(u32, f64, f64)>,
    /// Marked `*` on the chart: numerator and denominator at different concurrencies.
    pub unequal: bool,
}

fn describe_operand(o: &Option<Operand>) -> String {
    match o {
        Some(Operand::Point(k)) => format!("{} at {} streams ({} / {})", k.mode.name(), k.concurrency, k.isl, k.osl),
        Some(Operand::Pointer { file, pointer }) => format!("{file} {pointer}"),
        Some(Operand::Constant { constant, reason }) => format!("{constant} ({reason})"),
        None => "not given".into(),
    }
}

/// Does a claim belong to the model: its operands name it or, without point operands, its id starts with
/// the model's id (and no longer model id fits better: `glm-5.3-flash-...` is not `glm-5.3`'s).
fn claim_of(c: &Claim, model: &str, models: &[String]) -> bool {
    let keys: Vec<&PointKey> = [&c.numerator, &c.denominator].into_iter().filter_map(operand_point).collect();
    if !keys.is_empty() {
        return keys.iter().any(|k| k.model == model);
    }
    let prefix = |m: &str| c.id.strip_prefix(m).is_some_and(|r| r.starts_with('-'));
    prefix(model) && !models.iter().any(|m| m.len() > model.len() && prefix(m))
}

/// Every claim of the model, in the dataset's order.
pub fn claims_of(b: &Bundle, model: &str) -> Vec<ClaimRow> {
    let models = b.model_ids();
    b.claims
        .iter()
        .filter(|c| claim_of(c, model, &models))
        .map(|c| {
            let (n, d) = (operand_point(&c.numerator), operand_point(&c.denominator));
            let values = n.and_then(|n| point_value(b, n)).zip(d.and_then(|d| point_value(b, d)));
            let unequal = matches!((n, d), (Some(n), Some(d)) if n.concurrency != d.concurrency);
            let equal_concurrency = match (n, d, values) {
                (Some(n), Some(d), Some((_, dv))) if unequal => {
                    let same = PointKey { concurrency: d.concurrency, ..n.clone() };
                    point_value(b, &same).map(|v| (d.concurrency as u32, v, dv))
                }
                _ => None,
            };
            ClaimRow {
                id: c.id.clone(),
                stated: stated_label(c),
                compares: format!("{} over {}", describe_operand(&c.numerator), describe_operand(&c.denominator)),
                source: c.from.source.clone(),
                quote: c.from.quote.clone(),
                caveat: c.caveat.clone(),
                unverifiable: c.unverifiable.clone(),
                from_data: values,
                equal_concurrency,
                unequal,
            }
        })
        .collect()
}

/// The link with the what-if line rate applied.
pub fn link(b: &Bundle, st: &UrlState) -> Option<LinkParams> {
    let mut l = b.link.clone()?;
    if let Some(g) = st.whatif[3] {
        l.line_rate_bytes_per_sec_per_rail = g * 1e9 / 8.0;
    }
    Some(l)
}

/// Message sizes of the fabric curves: 1 KiB to 16 GiB in powers of two.
pub fn message_sizes() -> Vec<f64> {
    (10..=34).map(|e| 2f64.powi(e)).collect()
}

/// Bus bandwidth against message size per collective, with the measured rows and the payload ceiling.
pub fn fabric(b: &Bundle, st: &UrlState) -> FabricChartData {
    let mut data =
        FabricChartData { title: "Bus bandwidth between the two stations (nccl-tests)".into(), ..Default::default() };
    let Some(l) = link(b, st) else { return data };
    data.ceiling_gbps = l.payload_bytes_per_sec() / 1e9;
    for c in Collective::ALL {
        let Some(row) = b.fabric.iter().find(|r| r.collective == c) else { continue };
        let pts = message_sizes().into_iter().map(|s| (s, busbw(&l, row.efficiency, c, s) / 1e9)).collect();
        data.predicted.push((c.name().to_string(), pts));
        for r in b.fabric.iter().filter(|r| r.collective == c) {
            data.measured.push((c.name().to_string(), r.bytes, r.measured_busbw_gbps));
        }
    }
    data
}

/// The hardware preset's value of each planner hardware field, in the form's units.
pub fn hardware_baseline(b: &Bundle, id: &str) -> [f64; 6] {
    let Some(h) = b.hardware.get(id) else { return [f64::NAN; 6] };
    [
        h.gpu_memory_bytes / 1e9,
        h.hbm_bytes_per_sec / 1e12,
        h.slow_path_bytes_per_sec / 1e9,
        h.gpus,
        h.link.line_rate_bytes_per_sec_per_rail * 8.0 / 1e9,
        h.link.rails,
    ]
}

/// The model the planner's form describes.
pub fn form_description(st: &UrlState) -> ModelDescription {
    let p = &st.plan;
    let v = |i: usize| p.value(i);
    let mla = p.attention == "mla";
    ModelDescription {
        id: "custom".into(),
        name: Some("described model".into()),
        total_params: v(pf::TOTAL) * 1e9,
        active_params: v(pf::ACTIVE) * 1e9,
        layers: v(pf::LAYERS),
        hidden_size: v(pf::HIDDEN),
        attention: p.attention.clone(),
        kv_heads: (!mla).then(|| v(pf::KV_HEADS)),
        head_dim: (!mla).then(|| v(pf::HEAD_DIM)),
        kv_lora_rank: mla.then(|| v(pf::KV_LORA)),
        rope_dim: mla.then(|| v(pf::ROPE)),
        kv_bytes_per_element: 2.0,
        routed_experts: v(pf::EXPERTS),
        experts_per_token: if v(pf::EXPERTS) > 0.0 { v(pf::TOPK) } else { 0.0 },
        routed_expert_params: None,
        bits_per_weight: p.bits,
        draft_tokens: v(pf::DRAFT),
        draft_acceptance: v(pf::ACCEPT) / 100.0,
    }
}

/// The planner's scenario: preset plus overrides, the chosen model, one workload, the concurrency range.
/// An error is a message for the page (a broken config.json, an inconsistent description).
pub fn plan_scenario(b: &Bundle, st: &UrlState) -> Result<Scenario, String> {
    let p = &st.plan;
    let hardware = b.hardware.get(&p.hardware).cloned().ok_or_else(|| format!("unknown hardware `{}`", p.hardware))?;
    let model = match p.source {
        ModelSource::Report => b
            .scenarios
            .get(&st.model)
            .map(|s| s.model.clone())
            .ok_or_else(|| format!("unknown model `{}`", st.model))?,
        ModelSource::Form => form_description(st).to_spec()?,
        ModelSource::HfConfig => {
            if p.hf.trim().is_empty() {
                return Err("paste a Hugging Face config.json into the box".into());
            }
            ModelDescription::from_hf_config("pasted-config", &p.hf, p.bits)?.to_spec()?
        }
    };
    let mut s = Scenario {
        id: format!("plan-{}-{}", model.id, hardware.id),
        hardware,
        model,
        workloads: vec![Workload { isl: p.value(pf::ISL).round() as u32, osl: p.value(pf::OSL).round() as u32 }],
        concurrency: p.concurrency(),
        modes: Mode::ALL.to_vec(),
    };
    let keys = [
        ("hardware.gpu_memory_bytes", 1e9),
        ("hardware.hbm_bytes_per_sec", 1e12),
        ("hardware.slow_path_bytes_per_sec", 1e9),
        ("hardware.gpus", 1.0),
        ("link.line_rate_bytes_per_sec_per_rail", 1e9 / 8.0),
        ("link.rails", 1.0),
    ];
    for (i, (key, scale)) in pf::HARDWARE.zip(keys) {
        if let Some(v) = p.values[i] {
            apply_override(&mut s, key, v * scale).map_err(|e| format!("{}: {e}", PLAN_FIELDS[i].label))?;
        }
    }
    Ok(s)
}

/// The plan for the state, or why there is none.
pub fn plan(b: &Bundle, st: &UrlState) -> Result<Plan, String> {
    plan_with(b, st, None)
}

/// The plan with calibrated coefficients (the team's own measurements) instead of the published fit.
pub fn plan_with(b: &Bundle, st: &UrlState, calibrated: Option<&Coefficients>) -> Result<Plan, String> {
    let s = plan_scenario(b, st)?;
    Ok(sim_core::plan::plan(&s, calibrated.unwrap_or(&b.coefficients)))
}

/// How the planner's coefficients were calibrated on the team's own single-machine measurements.
pub use sim_core::fit::TeamCalibration as Calibrated;

/// Splits pasted text into one text per top-level JSON object (one result each): one object per line, objects
/// concatenated with newlines, or indented objects one after another. Text after the last complete object
/// (a truncated object, or something that is not JSON) is its own piece, so the importer names the problem.
pub fn split_results(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut in_string, mut start) = (0usize, false, None::<usize>);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if depth == 0 && start.is_none() {
            if c == b'{' {
                start = Some(i);
                depth = 1;
            } else if !c.is_ascii_whitespace() {
                // Not the start of an object: hand the rest over as it is.
                out.push(text[i..].trim().to_string());
                return out;
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if let Some(s) = start.take() {
                            out.push(text[s..=i].to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    if let Some(s) = start {
        out.push(text[s..].trim_end().to_string());
    }
    out
}

/// Calibrates the coefficients on pasted `vllm bench serve` / `benchmark_serving.py` results exactly as
/// `sim-core calibrate` does: the results imported as single-machine points of the scenario's model, then
/// `sim_core::fit::calibrate_team`. An error names the problem (and the result it is in).
pub fn calibrate(base: &Coefficients, s: &Scenario, text: &str) -> Result<Calibrated, String> {
    let inputs: Vec<(String, String)> =
        split_results(text).into_iter().enumerate().map(|(n, t)| (format!("pasted result {}", n + 1), t)).collect();
    if inputs.is_empty() {
        return Err("paste one or more result JSON files into the box".into());
    }
    let opts = VllmOptions {
        mode: Mode::Single,
        model: Some(s.model.id.clone()),
        hardware: s.hardware.id.clone(),
        source_prefix: "pasted".into(),
        ..VllmOptions::default()
    };
    let sweep = vllm_bench(&inputs, &opts).map_err(|d| d.to_string())?;
    let json = serde_json::to_string(&sweep).map_err(|e| format!("cannot read the imported results: {e}"))?;
    let (ds, diags) = dataset::load(&[SourceText { path: "sweeps/pasted.json".into(), text: json }]);
    let errors: Vec<String> = diags.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    sim_core::fit::calibrate_team(base, s, &ds.points())
}

/// The report of a fit on single-station points only, predicting the pair: what the accuracy view builds the
/// first time it opens (the all-points report is built at start-up).
pub fn single_station_report(b: &Bundle) -> Report {
    let cal = fit(&b.scenarios, &b.points, FitSet::Single);
    report::build_with(&b.scenarios, &b.points, cal)
}

/// Models with points but no unflagged single-station point: the pair cannot be predicted from one station.
pub fn models_without_single(b: &Bundle) -> Vec<String> {
    let mut out: Vec<String> = b
        .scenarios
        .keys()
        .filter(|m| b.points.iter().any(|p| &p.model == *m))
        .filter(|m| !b.points.iter().any(|p| &p.model == *m && p.mode == Mode::Single && !p.is_flagged()))
        .cloned()
        .collect();
    out.sort();
    out
}

/// A coefficient's value for the accuracy table: seconds in ms, shares and scales to three significant digits.
pub fn coefficient_value(name: &str, v: f64) -> String {
    if name.ends_with("_s") {
        format!("{} ms", sig3(v * 1e3))
    } else {
        sig3(v)
    }
}

fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
    format!("{v:.digits$}")
}

/// The planner's chart: predicted output tok/s per mode over the concurrency range (modes that fit only).
pub fn plan_chart(plan: &Result<Plan, String>, hardware_name: &str) -> PlanChartData {
    let Ok(p) = plan else { return PlanChartData { title: "no plan".into(), ..Default::default() } };
    let (isl, osl) = p.rows.first().map(|r| (r.isl, r.osl)).unwrap_or((0, 0));
    let mut data =
        PlanChartData { title: format!("{} on {hardware_name}, ISL {isl} / OSL {osl}", p.model), ..Default::default() };
    for mode in Mode::ALL {
        let pts = p
            .rows
            .iter()
            .map(|r| {
                let pr = match mode {
                    Mode::Single => &r.single,
                    Mode::Tp2 => &r.tp2,
                    Mode::Pd => &r.pd,
                };
                (r.concurrency, pr.output_tok_s)
            })
            .filter(|(_, y)| y.is_finite() && *y > 0.0)
            .collect::<Vec<_>>();
        if !pts.is_empty() {
            data.predicted.push((mode, pts));
        }
    }
    data.concurrency_max = p.rows.iter().map(|r| r.concurrency).max().unwrap_or(1);
    if data.predicted.is_empty() {
        data.title.push_str(": does not fit");
    }
    for r in &p.rows {
        for pr in [&r.single, &r.tp2, &r.pd] {
            data.rows.push(crate::charts::PlanPoint {
                mode: Some(pr.mode),
                concurrency: r.concurrency,
                output_tok_s: pr.output_tok_s,
                ttft_s: pr.ttft_s,
                tpot_ms: pr.tpot_s * 1e3,
                gain: if r.single.output_tok_s > 0.0 { pr.output_tok_s / r.single.output_tok_s } else { f64::NAN },
                bound: pr.bottleneck.name().to_string(),
            });
        }
    }
    data.recommended = data.predicted.iter().any(|(m, _)| *m == p.recommended_mode).then_some(p.recommended_mode);
    data
}

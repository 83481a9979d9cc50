//! Page state as it lives in the URL query string: parsing (with warnings for nonsense) and writing back.

use sim_core::explore::settings::{HARDWARE, WHAT_IF};
use sim_core::explore::XAxis;

pub use crate::rates::{RateSweepState, RATE_KEYS};

/// Which chart the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Explorer,
    Frontier,
    Compare,
    Gain,
    Fabric,
    Plan,
    Accuracy,
    RateSweep,
}

impl View {
    pub const ALL: [View; 8] = [
        View::Explorer,
        View::Frontier,
        View::Compare,
        View::Gain,
        View::Fabric,
        View::Plan,
        View::Accuracy,
        View::RateSweep,
    ];

    pub fn name(self) -> &'static str {
        match self {
            View::Explorer => "explorer",
            View::Frontier => "frontier",
            View::Compare => "compare",
            View::Gain => "gain",
            View::Fabric => "fabric",
            View::Plan => "plan",
            View::Accuracy => "accuracy",
            View::RateSweep => "rates",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            View::Explorer => "Throughput",
            View::Frontier => "Frontier",
            View::Compare => "Compare",
            View::Gain => "Gain of the pair",
            View::Fabric => "Fabric",
            View::Plan => "Planner",
            View::Accuracy => "Accuracy",
            View::RateSweep => "Rate sweep",
        }
    }
}

/// The workload when none is chosen and the data name none: the report's short one.
pub const DEFAULT_WORKLOAD: (u32, u32) = (512, 512);

/// One what-if control: the same shape as a planner field, its default being the dataset's value (NaN).
pub type Knob = Field;

/// The what-if controls, in the order `UrlState::whatif` uses: sim-core's table (`explore::settings::WHAT_IF`)
/// as form fields, so keys, units and ranges have one source.
pub const KNOBS: [Knob; KNOB_COUNT] = [
    from_knob(WHAT_IF[0]),
    from_knob(WHAT_IF[1]),
    from_knob(WHAT_IF[2]),
    from_knob(WHAT_IF[3]),
    from_knob(WHAT_IF[4]),
    from_knob(WHAT_IF[5]),
];

/// How many what-if controls there are: all of sim-core's (a knob added there fails to build here until listed).
pub const KNOB_COUNT: usize = WHAT_IF.len();

/// Everything the URL holds. What-if values are `None` when they keep the dataset's value.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlState {
    pub view: View,
    pub model: String,
    /// (input, output) tokens; `None` is the model's first published workload.
    pub workload: Option<(u32, u32)>,
    pub whatif: [Option<f64>; KNOB_COUNT],
    /// The engine profile predictions use (`engine=`); `None` is the scenario's own (on the planner, the one
    /// claimed for its hardware). Checked against the dataset's profiles when the page loads.
    pub engine: Option<String>,
    pub embed: bool,
    pub plan: PlanState,
    pub frontier: FrontierState,
    pub rates: RateSweepState,
}

/// The frontier and compare views' choices.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierState {
    /// What the x axis shows (`x=`).
    pub axis: XAxis,
    /// Only the Pareto frontier (`front=1`), not every curve and point.
    pub only: bool,
    /// The tok/s per user the headline is read at (`at=`); `None` is a round value mid-range.
    pub at: Option<f64>,
    /// The compare view's other side (`vs=`): a dataset's scenario id, or `VS_PLAN` for the planner's model
    /// and hardware; `None` is the first dataset other than the model's.
    pub vs: Option<String>,
}

impl Default for FrontierState {
    fn default() -> Self {
        FrontierState { axis: XAxis::Interactivity, only: false, at: None, vs: None }
    }
}

/// `vs=plan`: compare against the planner's model on the planner's hardware (predicted only).
pub const VS_PLAN: &str = "plan";

/// Headline targets a link may ask for, in tok/s per user.
pub const AT_RANGE: (f64, f64) = (0.01, 100_000.0);

/// Where the planner's model comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// One of the report's models (`UrlState::model`).
    Report,
    /// The `m_*` fields of the form.
    Form,
    /// A pasted Hugging Face config.json.
    HfConfig,
}

impl ModelSource {
    pub const ALL: [ModelSource; 3] = [ModelSource::Report, ModelSource::Form, ModelSource::HfConfig];

    pub fn name(self) -> &'static str {
        match self {
            ModelSource::Report => "report",
            ModelSource::Form => "form",
            ModelSource::HfConfig => "hf",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ModelSource::Report => "a model of the report",
            ModelSource::Form => "describe a model",
            ModelSource::HfConfig => "paste a config.json",
        }
    }
}

/// Bits per weight the planner offers: NVFP4 (with scales), FP8, BF16.
pub const BITS: [(f64, &str); 3] = [(4.5, "4.5 (NVFP4)"), (8.0, "8 (FP8)"), (16.0, "16 (BF16)")];

/// Hardware presets the planner offers (ids of `data/hardware/`), default first.
pub const DEFAULT_HARDWARE: &str = "gb300-station";

/// One numeric field (planner input or what-if control): URL key, label, unit, range, step, default (NaN: the
/// value of the selected hardware preset or dataset).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub min: f64,
    pub max: f64,
    pub step: f64,
    pub default: f64,
}

/// A sim-core control as a form field; its default is the dataset's or preset's value (NaN).
const fn from_knob(k: sim_core::explore::Knob) -> Field {
    // A count (`1`) shows no unit.
    let unit = match k.unit.as_bytes() {
        [b'1'] => "",
        _ => k.unit,
    };
    f(k.id, k.label, unit, k.min, k.max, k.step, f64::NAN)
}

const fn f(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    step: f64,
    default: f64,
) -> Field {
    Field { key, label, unit, min, max, step, default }
}

/// Indices into `PLAN_FIELDS`.
pub mod pf {
    pub const HW_MEM: usize = 0;
    pub const HW_HBM: usize = 1;
    pub const HW_SLOW: usize = 2;
    pub const HW_GPUS: usize = 3;
    pub const HW_LINK: usize = 4;
    pub const HW_RAILS: usize = 5;
    pub const ISL: usize = 6;
    pub const OSL: usize = 7;
    pub const CMAX: usize = 8;
    pub const TOTAL: usize = 9;
    pub const ACTIVE: usize = 10;
    pub const LAYERS: usize = 11;
    pub const HIDDEN: usize = 12;
    pub const KV_HEADS: usize = 13;
    pub const HEAD_DIM: usize = 14;
    pub const KV_LORA: usize = 15;
    pub const ROPE: usize = 16;
    pub const EXPERTS: usize = 17;
    pub const TOPK: usize = 18;
    pub const DRAFT: usize = 19;
    pub const ACCEPT: usize = 20;
    /// The latency target and the machine's price and power (0: no cost shown).
    pub const SLO_TTFT: usize = 21;
    pub const SLO_TPOT: usize = 22;
    pub const PRICE: usize = 23;
    pub const POWER: usize = 24;
    /// The hardware fields (defaults come from the preset).
    pub const HARDWARE: std::ops::Range<usize> = 0..6;
    /// The model form's fields.
    pub const MODEL: std::ops::Range<usize> = 9..21;
}

/// Every numeric planner input, in `pf` order. Model defaults describe a DeepSeek-V3-shaped MoE.
pub const PLAN_FIELDS: [Field; 25] = [
    from_knob(HARDWARE[0]),
    from_knob(HARDWARE[1]),
    from_knob(HARDWARE[2]),
    from_knob(HARDWARE[3]),
    from_knob(HARDWARE[4]),
    from_knob(HARDWARE[5]),
    f("isl", "Input tokens (ISL)", "", 1.0, 1_048_576.0, 1.0, 8192.0),
    f("osl", "Output tokens (OSL)", "", 1.0, 262_144.0, 1.0, 1024.0),
    f("cmax", "Concurrency up to", "streams", 1.0, 4096.0, 1.0, 256.0),
    f("m_total", "Total parameters", "B", 0.1, 20_000.0, 0.1, 671.0),
    f("m_active", "Active parameters", "B", 0.1, 20_000.0, 0.1, 37.0),
    f("m_layers", "Layers", "", 1.0, 1024.0, 1.0, 61.0),
    f("m_hidden", "Hidden size", "", 64.0, 131_072.0, 1.0, 7168.0),
    f("m_kv_heads", "KV heads (GQA)", "", 1.0, 1024.0, 1.0, 8.0),
    f("m_head_dim", "Head dim (GQA)", "", 8.0, 2048.0, 1.0, 128.0),
    f("m_kv_lora", "KV LoRA rank (MLA)", "", 8.0, 8192.0, 1.0, 512.0),
    f("m_rope", "RoPE dim (MLA)", "", 0.0, 2048.0, 1.0, 64.0),
    f("m_experts", "Routed experts (0 = dense)", "", 0.0, 4096.0, 1.0, 256.0),
    f("m_topk", "Experts per token (top-k)", "", 0.0, 256.0, 1.0, 8.0),
    f("m_draft", "Draft tokens (MTP)", "", 0.0, 16.0, 1.0, 1.0),
    f("m_accept", "Draft acceptance", "%", 0.0, 95.0, 1.0, 70.0),
    f("slo_ttft", "Time to first token at most", "s", 0.01, 600.0, 0.01, 2.0),
    f("slo_tpot", "Time per output token at most", "ms", 1.0, 10_000.0, 1.0, 50.0),
    f("price", "Price of one machine (0: no cost)", "USD", 0.0, 1e8, 1.0, 0.0),
    f("power", "Power of one machine", "W", 0.0, 1e6, 1.0, 0.0),
];

/// The planner's inputs. Numeric fields are `None` when they keep their default (or the preset's value).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanState {
    pub hardware: String,
    pub source: ModelSource,
    pub values: [Option<f64>; 25],
    /// `mla` or `gqa`.
    pub attention: String,
    /// Which statistic of the latencies the target holds.
    pub slo_stat: sim_core::explore::LatencyStatistic,
    pub bits: f64,
    /// Bits per weight of the layers outside the routed experts (one of `BITS`); `None`: as `bits`.
    pub dense_bits: Option<f64>,
    /// The pasted config.json.
    pub hf: String,
    /// Pasted `vllm bench serve` / `benchmark_serving.py` results to calibrate on; in the URL only when short
    /// (`MEASUREMENTS_URL_MAX`).
    pub measurements: String,
    /// Machines the plan may use (`sim_core::explore::plan_request::PLAN_MACHINES`): 2, or 4 for the
    /// four-machine modes too.
    pub machines: u32,
}

/// Pasted measurements longer than this (URL-encoded) stay out of the share link.
pub const MEASUREMENTS_URL_MAX: usize = 2000;

impl PlanState {
    /// Whether the pasted measurements go into the share link.
    pub fn measurements_in_url(&self) -> bool {
        !self.measurements.trim().is_empty() && encode(self.measurements.trim()).len() <= MEASUREMENTS_URL_MAX
    }
}

impl Default for PlanState {
    fn default() -> Self {
        PlanState {
            hardware: DEFAULT_HARDWARE.into(),
            source: ModelSource::Report,
            values: [None; 25],
            attention: "mla".into(),
            slo_stat: sim_core::explore::LatencyStatistic::Mean,
            bits: 4.5,
            dense_bits: None,
            hf: String::new(),
            measurements: String::new(),
            machines: 2,
        }
    }
}

impl PlanState {
    /// A field's value, falling back to its default (NaN for hardware fields without an override).
    pub fn value(&self, i: usize) -> f64 {
        self.values[i].unwrap_or(PLAN_FIELDS[i].default)
    }

    /// Concurrency levels: powers of two up to `cmax`, and `cmax` itself.
    pub fn concurrency(&self) -> Vec<u32> {
        let max = self.value(pf::CMAX).round().max(1.0) as u32;
        let mut v: Vec<u32> = (0..13).map(|e| 1u32 << e).take_while(|c| *c < max).collect();
        v.push(max);
        v
    }
}

impl UrlState {
    pub fn defaults(models: &[String]) -> Self {
        let model = if models.iter().any(|m| m == "glm-5.2") {
            "glm-5.2".to_string()
        } else {
            models.first().cloned().unwrap_or_default()
        };
        UrlState {
            view: View::Explorer,
            model,
            workload: None,
            whatif: [None; KNOB_COUNT],
            engine: None,
            embed: false,
            plan: PlanState::default(),
            frontier: FrontierState::default(),
            rates: RateSweepState::default(),
        }
    }

    /// Like `parse`, also checking the planner's hardware id against the bundled presets.
    pub fn parse_with(query: &str, models: &[String], hardware: &[String]) -> (Self, Vec<String>) {
        let (mut s, mut warn) = Self::parse(query, models);
        if let Some(vs) = s.frontier.vs.clone().filter(|v| v != VS_PLAN && !models.contains(v)) {
            warn.push(format!("unknown comparison `{vs}`; use a model id or {VS_PLAN} (known: {})", models.join(", ")));
            s.frontier.vs = None;
        }
        if !hardware.contains(&s.plan.hardware) {
            warn.push(format!(
                "unknown hardware `{}`; showing {DEFAULT_HARDWARE} (known: {})",
                s.plan.hardware,
                hardware.join(", ")
            ));
            s.plan.hardware = DEFAULT_HARDWARE.into();
        }
        (s, warn)
    }

    /// Parses a query string (with or without the leading `?`). Unknown or broken values fall back to defaults
    /// and add a warning each.
    pub fn parse(query: &str, models: &[String]) -> (Self, Vec<String>) {
        let mut s = Self::defaults(models);
        let mut warn = Vec::new();
        for (k, v) in pairs(query) {
            match k.as_str() {
                "view" => match View::ALL.into_iter().find(|x| x.name() == v) {
                    Some(x) => s.view = x,
                    None => warn.push(format!("unknown view `{v}`; showing {}", s.view.name())),
                },
                "model" => {
                    if models.contains(&v) {
                        s.model = v;
                    } else {
                        warn.push(format!("unknown model `{v}`; showing {} (known: {})", s.model, models.join(", ")));
                    }
                }
                "workload" => match parse_workload(&v) {
                    Some(w) => s.workload = Some(w),
                    None => warn.push(format!("workload `{v}` is not <input tokens>-<output tokens>, e.g. 8192-1024")),
                },
                "engine" => s.engine = Some(v),
                "embed" => s.embed = v == "1" || v == "true",
                "x" => match XAxis::parse(&v) {
                    Some(a) => s.frontier.axis = a,
                    None => warn.push(format!("unknown x axis `{v}`; use interactivity, ttft or e2e")),
                },
                "front" => s.frontier.only = v == "1" || v == "true",
                "at" => match v.parse::<f64>() {
                    Ok(x) if x >= AT_RANGE.0 && x <= AT_RANGE.1 => s.frontier.at = Some(x),
                    _ => warn.push(format!(
                        "at=`{v}` is not a tok/s per user between {} and {}; reading the headline mid-range",
                        AT_RANGE.0, AT_RANGE.1
                    )),
                },
                "vs" => s.frontier.vs = Some(v),
                "hw" => s.plan.hardware = v,
                "src" => match ModelSource::ALL.into_iter().find(|x| x.name() == v) {
                    Some(x) => s.plan.source = x,
                    None => warn.push(format!("unknown model source `{v}`; use report, form or hf")),
                },
                "attn" => match v.as_str() {
                    "gqa" | "mla" => s.plan.attention = v,
                    _ => warn.push(format!("unknown attention `{v}`; use gqa or mla (showing mla)")),
                },
                "slo_stat" => match sim_core::explore::LatencyStatistic::from_name(&v) {
                    Some(x) => s.plan.slo_stat = x,
                    None => warn.push(format!("unknown slo_stat `{v}`; use mean, p50, p90 or p99 (showing mean)")),
                },
                "bits" => match v.parse::<f64>().ok().filter(|b| BITS.iter().any(|(x, _)| x == b)) {
                    Some(b) => s.plan.bits = b,
                    None => warn.push(format!("bits=`{v}` is not one of 4.5, 8, 16; using 4.5")),
                },
                "dbits" => match v.parse::<f64>().ok().filter(|b| BITS.iter().any(|(x, _)| x == b)) {
                    Some(b) => s.plan.dense_bits = Some(b),
                    None => warn.push(format!("dbits=`{v}` is not one of 4.5, 8, 16; using the experts' bits")),
                },
                "machines" => match v.parse::<u32>() {
                    Ok(m) if sim_core::explore::plan_request::PLAN_MACHINES.contains(&m) => s.plan.machines = m,
                    _ => warn.push(format!("machines=`{v}` is not 2 or 4; comparing one machine against a pair")),
                },
                "hf" => s.plan.hf = v,
                "meas" => s.plan.measurements = v,
                key if RATE_KEYS.contains(&key) => s.rates.parse_field(key, &v, &mut warn),
                key if PLAN_FIELDS.iter().any(|fl| fl.key == key) => {
                    let i = PLAN_FIELDS.iter().position(|fl| fl.key == key).unwrap_or(0);
                    let fl = PLAN_FIELDS[i];
                    let what =
                        if fl.default.is_nan() { "the preset's value".to_string() } else { format!("{}", fl.default) };
                    match v.parse::<f64>() {
                        Ok(x) if x.is_finite() && x >= fl.min && x <= fl.max => s.plan.values[i] = Some(x),
                        Ok(x) => {
                            warn.push(format!("{key}={x} is outside {}..{} {}; using {what}", fl.min, fl.max, fl.unit))
                        }
                        Err(_) => warn.push(format!("{key}=`{v}` is not a number; using {what}")),
                    }
                }
                key => match KNOBS.iter().position(|kn| kn.key == key) {
                    Some(i) => {
                        let kn = KNOBS[i];
                        match v.parse::<f64>() {
                            Ok(x) if x.is_finite() && x >= kn.min && x <= kn.max => s.whatif[i] = Some(x),
                            Ok(x) => warn.push(format!(
                                "{key}={x} is outside {}..{} {}; using the dataset's value",
                                kn.min, kn.max, kn.unit
                            )),
                            Err(_) => warn.push(format!("{key}=`{v}` is not a number; using the dataset's value")),
                        }
                    }
                    None => warn.push(format!("unknown parameter `{key}` ignored")),
                },
            }
        }
        (s, warn)
    }

    /// The query string for this state, without defaults, with a leading `?` (empty when all default).
    pub fn to_query(&self) -> String {
        let mut parts = Vec::new();
        if self.view != View::Explorer {
            parts.push(format!("view={}", self.view.name()));
        }
        parts.push(format!("model={}", encode(&self.model)));
        if let Some((i, o)) = self.workload {
            parts.push(format!("workload={i}-{o}"));
        }
        for (kn, v) in KNOBS.iter().zip(self.whatif) {
            if let Some(v) = v {
                // Rust's shortest round-trip form: the link reads back to exactly this value.
                parts.push(format!("{}={v}", kn.key));
            }
        }
        if let Some(e) = &self.engine {
            parts.push(format!("engine={}", encode(e)));
        }
        let p = &self.plan;
        if p.hardware != DEFAULT_HARDWARE {
            parts.push(format!("hw={}", encode(&p.hardware)));
        }
        if p.source != ModelSource::Report {
            parts.push(format!("src={}", p.source.name()));
        }
        if p.attention != "mla" {
            parts.push(format!("attn={}", p.attention));
        }
        if p.slo_stat != sim_core::explore::LatencyStatistic::Mean {
            parts.push(format!("slo_stat={}", p.slo_stat.name()));
        }
        if p.bits != 4.5 {
            parts.push(format!("bits={}", trim(p.bits)));
        }
        if let Some(b) = p.dense_bits {
            parts.push(format!("dbits={}", trim(b)));
        }
        if p.machines != 2 {
            parts.push(format!("machines={}", p.machines));
        }
        for (fl, v) in PLAN_FIELDS.iter().zip(p.values) {
            if let Some(v) = v {
                parts.push(format!("{}={v}", fl.key));
            }
        }
        if !p.hf.is_empty() {
            parts.push(format!("hf={}", encode(&p.hf)));
        }
        if p.measurements_in_url() {
            parts.push(format!("meas={}", encode(p.measurements.trim())));
        }
        let fr = &self.frontier;
        if fr.axis != XAxis::Interactivity {
            parts.push(format!("x={}", fr.axis.name()));
        }
        if fr.only {
            parts.push("front=1".into());
        }
        if let Some(at) = fr.at {
            parts.push(format!("at={at}"));
        }
        if let Some(vs) = &fr.vs {
            parts.push(format!("vs={}", encode(vs)));
        }
        for (k, v) in self.rates.query_pairs() {
            parts.push(format!("{k}={}", encode(&v)));
        }
        if self.embed {
            parts.push("embed=1".into());
        }
        format!("?{}", parts.join("&"))
    }

    /// The chosen workload, or the default one (`compute::workload` resolves it against the model's data).
    pub fn workload(&self) -> (u32, u32) {
        self.workload.unwrap_or(DEFAULT_WORKLOAD)
    }
}

/// `8192-1024` as (8192, 1024); both positive.
fn parse_workload(v: &str) -> Option<(u32, u32)> {
    let (i, o) = v.split_once('-')?;
    let (i, o) = (i.trim().parse::<u32>().ok()?, o.trim().parse::<u32>().ok()?);
    (i > 0 && o > 0).then_some((i, o))
}

/// A number without trailing zeros.
pub fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(x) => {
                        out.push(x);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|c| {
            if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
                (c as char).to_string()
            } else {
                format!("%{c:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models() -> Vec<String> {
        vec!["glm-5.2".into(), "minimax-m3".into()]
    }

    #[test]
    fn round_trip() {
        let q = "?view=gain&model=minimax-m3&workload=8192-1024&hbm=9.5&engine=roofline&embed=1";
        let (s, w) = UrlState::parse(q, &models());
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            (s.view, s.model.as_str(), s.workload, s.whatif[1], s.engine.as_deref(), s.embed),
            (View::Gain, "minimax-m3", Some((8192, 1024)), Some(9.5), Some("roofline"), true)
        );
        assert_eq!(UrlState::parse(&s.to_query(), &models()).0, s);
    }

    #[test]
    fn links_read_back_exactly() {
        let (s, w) = UrlState::parse("hbm=9.1024&view=plan&hw_hbm=3.3512345", &models());
        assert!(w.is_empty(), "{w:?}");
        let back = UrlState::parse(&s.to_query(), &models()).0;
        assert_eq!((back.whatif[1], back.plan.values[1]), (Some(9.1024), Some(3.3512345)));
    }

    #[test]
    fn nonsense_falls_back_with_warnings() {
        let (s, w) = UrlState::parse("model=nope&gpu_mem=abc&hbm=1e9&view=x&%zz=%", &models());
        assert_eq!(s, UrlState::defaults(&models()));
        assert_eq!(w.len(), 5, "{w:?}");
    }

    #[test]
    fn frontier_round_trip_and_nonsense() {
        let q = "?view=compare&model=glm-5.2&x=ttft&front=1&at=12.5&vs=minimax-m3";
        let (s, w) = UrlState::parse_with(q, &models(), &["gb300-station".to_string()]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            (s.view, s.frontier.axis, s.frontier.only, s.frontier.at, s.frontier.vs.as_deref()),
            (View::Compare, XAxis::Ttft, true, Some(12.5), Some("minimax-m3"))
        );
        assert_eq!(UrlState::parse_with(&s.to_query(), &models(), &["gb300-station".to_string()]).0, s);
        let (s, w) = UrlState::parse_with("view=frontier&x=tpot&at=-3&vs=nope", &models(), &["gb300-station".into()]);
        assert_eq!((s.view, s.frontier.clone()), (View::Frontier, FrontierState::default()));
        assert_eq!(w.len(), 3, "{w:?}");
    }

    #[test]
    fn planner_round_trip_and_nonsense() {
        let hw = vec!["gb300-station".to_string(), "dgx-spark".to_string()];
        let q = "?view=plan&hw=dgx-spark&src=hf&bits=8&dbits=16&isl=2048&cmax=64&hw_mem=96&hf=%7B%22a%22%3A%201%7D&attn=gqa&slo_stat=p90&machines=4";
        let (s, w) = UrlState::parse_with(q, &models(), &hw);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            (s.view, s.plan.hardware.as_str(), s.plan.source, s.plan.bits, s.plan.dense_bits),
            (View::Plan, "dgx-spark", ModelSource::HfConfig, 8.0, Some(16.0))
        );
        assert_eq!(s.plan.hf, "{\"a\": 1}");
        assert_eq!(s.plan.slo_stat, sim_core::explore::LatencyStatistic::P90);
        assert_eq!(s.plan.machines, 4);
        assert_eq!(s.plan.concurrency(), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(UrlState::parse_with(&s.to_query(), &models(), &hw).0, s);
        // Short pasted measurements travel in the link; long ones do not.
        let mut m = s.clone();
        m.plan.measurements = "{\"completed\": 1}".into();
        assert_eq!(UrlState::parse_with(&m.to_query(), &models(), &hw).0, m);
        m.plan.measurements = "x".repeat(MEASUREMENTS_URL_MAX + 1);
        assert!(!m.to_query().contains("meas="));
        let (s, w) = UrlState::parse_with(
            "view=plan&hw=tpu&bits=3&dbits=2&isl=-1&cmax=x&src=zz&attn=ssm&slo_stat=p95&machines=3",
            &models(),
            &hw,
        );
        assert_eq!(s.plan, PlanState::default());
        assert_eq!(w.len(), 9, "{w:?}");
    }

    #[test]
    fn rate_sweep_round_trip_and_nonsense() {
        let q = "?view=rates&model=glm-5.2&rate=0.1%2C0.5%2Cinf&burstiness=0.7&max_concurrency=32&num_prompts=500&random_range_ratio=0.3&seed=7";
        let (s, w) = UrlState::parse(q, &models());
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            (s.view, s.rates.rates.as_str(), s.rates.burstiness, s.rates.max_concurrency, s.rates.prompts),
            (View::RateSweep, "0.1,0.5,inf", 0.7, Some(32), 500)
        );
        assert_eq!((s.rates.range_ratio, s.rates.seed), (0.3, 7));
        assert_eq!(UrlState::parse(&s.to_query(), &models()).0, s);
        // Numbers sim-core will refuse stay (the view shows the refusal); words fall back with a warning each.
        let (s, w) =
            UrlState::parse("view=rates&rate=-1&burstiness=x&num_prompts=-5&seed=s&max_concurrency=0", &models());
        assert_eq!((s.rates.rates.as_str(), s.rates.max_concurrency), ("-1", Some(0)));
        assert_eq!((s.rates.burstiness, s.rates.prompts, s.rates.seed), (1.0, RateSweepState::default().prompts, 0));
        assert_eq!(w.len(), 3, "{w:?}");
    }
}

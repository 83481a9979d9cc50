//! Page state as it lives in the URL query string: parsing (with warnings for nonsense) and writing back.

/// Which chart the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Explorer,
    Gain,
    Fabric,
}

impl View {
    pub const ALL: [View; 3] = [View::Explorer, View::Gain, View::Fabric];

    pub fn name(self) -> &'static str {
        match self {
            View::Explorer => "explorer",
            View::Gain => "gain",
            View::Fabric => "fabric",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            View::Explorer => "Throughput",
            View::Gain => "Gain of the pair",
            View::Fabric => "Fabric",
        }
    }
}

/// The two published workloads, as (input, output) sequence lengths.
pub const WORKLOADS: [(u32, u32); 2] = [(512, 512), (8192, 1024)];

/// One what-if control: URL key, label, unit, range, step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knob {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub min: f64,
    pub max: f64,
    pub step: f64,
}

/// The what-if controls, in the order `WhatIf::values` uses.
pub const KNOBS: [Knob; 5] = [
    Knob { key: "gpu_mem", label: "GPU memory", unit: "GB", min: 64.0, max: 1024.0, step: 4.0 },
    Knob { key: "hbm", label: "HBM bandwidth", unit: "TB/s", min: 1.0, max: 30.0, step: 0.1 },
    Knob { key: "slow", label: "CPU-memory (slow path) bandwidth", unit: "GB/s", min: 50.0, max: 2000.0, step: 2.0 },
    Knob { key: "link", label: "Link speed per rail", unit: "Gb/s", min: 25.0, max: 1600.0, step: 25.0 },
    Knob { key: "accept", label: "Draft acceptance", unit: "%", min: 0.0, max: 95.0, step: 1.0 },
];

/// Everything the URL holds. What-if values are `None` when they keep the dataset's value.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlState {
    pub view: View,
    pub model: String,
    pub workload: usize,
    pub whatif: [Option<f64>; 5],
    pub embed: bool,
}

impl UrlState {
    pub fn defaults(models: &[String]) -> Self {
        let model = if models.iter().any(|m| m == "glm-5.2") { "glm-5.2".to_string() } else { models.first().cloned().unwrap_or_default() };
        UrlState { view: View::Explorer, model, workload: 0, whatif: [None; 5], embed: false }
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
                "workload" => match WORKLOADS.iter().position(|(i, o)| format!("{i}-{o}") == v) {
                    Some(i) => s.workload = i,
                    None => warn.push(format!("unknown workload `{v}`; use 512-512 or 8192-1024")),
                },
                "embed" => s.embed = v == "1" || v == "true",
                key => match KNOBS.iter().position(|kn| kn.key == key) {
                    Some(i) => {
                        let kn = KNOBS[i];
                        match v.parse::<f64>() {
                            Ok(x) if x.is_finite() && x >= kn.min && x <= kn.max => s.whatif[i] = Some(x),
                            Ok(x) => warn.push(format!("{key}={x} is outside {}..{} {}; using the dataset's value", kn.min, kn.max, kn.unit)),
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
        let (i, o) = WORKLOADS[self.workload.min(WORKLOADS.len() - 1)];
        parts.push(format!("workload={i}-{o}"));
        for (kn, v) in KNOBS.iter().zip(self.whatif) {
            if let Some(v) = v {
                parts.push(format!("{}={}", kn.key, trim(v)));
            }
        }
        if self.embed {
            parts.push("embed=1".into());
        }
        format!("?{}", parts.join("&"))
    }

    pub fn workload(&self) -> (u32, u32) {
        WORKLOADS[self.workload.min(WORKLOADS.len() - 1)]
    }
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
        .map(|c| if c.is_ascii_alphanumeric() || b"-._~".contains(&c) { (c as char).to_string() } else { format!("%{c:02X}") })
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
        let (s, w) = UrlState::parse("?view=gain&model=minimax-m3&workload=8192-1024&hbm=9.5&embed=1", &models());
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((s.view, s.model.as_str(), s.workload, s.whatif[1], s.embed), (View::Gain, "minimax-m3", 1, Some(9.5), true));
        assert_eq!(UrlState::parse(&s.to_query(), &models()).0, s);
    }

    #[test]
    fn nonsense_falls_back_with_warnings() {
        let (s, w) = UrlState::parse("model=nope&gpu_mem=abc&hbm=1e9&view=x&%zz=%", &models());
        assert_eq!(s, UrlState::defaults(&models()));
        assert_eq!(w.len(), 5, "{w:?}");
    }
}

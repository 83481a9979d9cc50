//! Weights that do not fit the engine's memory share, as vLLM meets them. vLLM loads every weight into GPU
//! memory unless `--cpu-offload-gb N` moves N GiB per GPU to CPU memory; weights beyond its share
//! (`--gpu-memory-utilization`) without that flag and it refuses to start. So where the model places weights in
//! CPU memory (`model::bandwidth::place`), the plan says so and its commands carry the `--cpu-offload-gb` that
//! places them there (`Offload`); and where the answer turns on a few points of the share, it says that too
//! (`ShareWarning`): at 0.90 a station may offload and lose half its speed, at 0.93 hold every weight.
//!
//! ```text
//! share   0.87        0.90 (asked)       0.93
//! one     offloads    offloads 42 GiB    fits        <- the cliff lies within NEAR of the asked share: warn
//! ```

use super::{GoodputQuery, ScenarioRun, Workspace};
use crate::model::bandwidth::{place, Placement};
use crate::server::{ServerSettings, RUNTIME_SHARE};
use crate::Mode;
use serde::Serialize;

/// How far from the asked share ("a few points") a changed verdict is worth a warning.
pub const NEAR: f64 = 0.03;
/// Bytes of vLLM's GiB (its `--cpu-offload-gb` counts GiB per GPU).
const GIB: f64 = (1u64 << 30) as f64;

/// Weights one engine keeps in CPU memory, and the flag that puts them there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Offload {
    /// The modes run on this placement: one machine's engine (single, PD, two copies) or the pair's (TP2, PP2,
    /// EP2).
    pub modes: Vec<Mode>,
    /// Machines the engine spans.
    pub machines: u32,
    /// Weight bytes per GPU, and the engine's memory share of one GPU, bytes.
    pub weight_bytes_per_gpu: f64,
    pub share_bytes_per_gpu: f64,
    /// The share the plan is for (`--gpu-memory-utilization`, or what the engine profile assumes).
    pub gpu_memory_utilization: f64,
    /// Weight bytes per GPU in CPU memory: what `--cpu-offload-gb` must move.
    pub host_bytes_per_gpu: f64,
    /// `--cpu-offload-gb`'s value: the bytes above in whole GiB, rounded up.
    pub cpu_offload_gb: u32,
    /// What the team asked (`placement.pin_to_host_bytes` in GiB), when less than is needed: vLLM would not
    /// start with it.
    pub asked_gb: Option<f64>,
}

impl Offload {
    /// In words, for the plan's output.
    pub fn text(&self) -> String {
        let whose = if self.machines == 1 { "one machine" } else { "the pair" };
        let modes: Vec<&str> = self.modes.iter().map(|m| m.name()).collect();
        if self.weight_bytes_per_gpu <= self.share_bytes_per_gpu {
            return format!(
                "{whose} ({}): --cpu-offload-gb {} keeps {:.0} GB of weights per GPU in CPU memory, as asked",
                modes.join(", "),
                self.cpu_offload_gb,
                self.host_bytes_per_gpu / 1e9
            );
        }
        let asked = self.asked_gb.map_or(String::new(), |a| {
            format!(" (--cpu-offload-gb {a} is not enough: vLLM would refuse to start with it)")
        });
        format!(
            "{whose} ({}): {:.0} GB of weights per GPU exceed the engine's {:.0} GB at --gpu-memory-utilization \
             {:.2}, and vLLM refuses to start unless told to offload; planned with --cpu-offload-gb {} ({:.0} GB \
             per GPU in CPU memory, read over the slow path every step), as the commands set it{asked}",
            modes.join(", "),
            self.weight_bytes_per_gpu / 1e9,
            self.share_bytes_per_gpu / 1e9,
            self.gpu_memory_utilization,
            self.cpu_offload_gb,
            self.host_bytes_per_gpu / 1e9
        )
    }
}

/// A verdict that changes within `NEAR` of the asked memory share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShareWarning {
    pub asked: f64,
    pub other: f64,
    /// The verdict at each, in words.
    pub verdict_asked: String,
    pub verdict_other: String,
    pub text: String,
}

/// The share of GPU memory the plan's engine takes: the scenario's setting, or the profile's own.
pub fn gpu_memory_utilization(run: &ScenarioRun) -> Option<f64> {
    let k = &run.coefficients;
    if k.kv_free_memory_fraction > 0.0 {
        return None; // TensorRT-LLM sizes its pool otherwise; the setting has no meaning there.
    }
    let u = run.scenario.server.gpu_memory_utilization;
    Some(if u > 0.0 { u } else { 1.0 - k.runtime_reserve_fraction + RUNTIME_SHARE })
}

/// The placements of one machine's engine, the pair's and (where the plan has four-machine modes) the four's,
/// with the modes each runs.
fn placements(run: &ScenarioRun) -> Vec<(Vec<Mode>, u32, Placement)> {
    let s = &run.scenario;
    let gpus = s.hardware.gpus.max(1.0);
    let modes = crate::plan::plan_modes(s);
    let on = |machines: u32| modes.iter().copied().filter(|m| layout_machines(*m) == machines).collect::<Vec<_>>();
    [1, 2, 4]
        .into_iter()
        .map(|n| (on(n), n))
        .filter(|(modes, _)| !modes.is_empty())
        .map(|(modes, n)| (modes, n, place(&s.model, &s.hardware, f64::from(n) * gpus, &run.coefficients)))
        // DP+EP holds a rank's dense layers on each machine and half of the experts.
        .chain(
            modes.contains(&Mode::Dpep2).then(|| {
                (vec![Mode::Dpep2], 2, crate::model::modes::mode_placement(s, &run.coefficients, Mode::Dpep2))
            }),
        )
        .collect()
}

/// Machines one engine of `mode` spans: copies and PD run one machine's engine each (0 for DP+EP, placed apart).
fn layout_machines(mode: Mode) -> u32 {
    match mode {
        Mode::Tp2 | Mode::Pp2 | Mode::Ep2 | Mode::Tp4 | Mode::Pp4 => mode.machines(),
        Mode::Single | Mode::Pd | Mode::Dp2 | Mode::Dp4 => 1,
        Mode::Dpep2 => 0,
    }
}

/// Every engine placement that keeps weights in CPU memory, with the flag that does it.
pub fn offloads(run: &ScenarioRun) -> Vec<Offload> {
    let Some(u) = gpu_memory_utilization(run) else { return Vec::new() };
    let s = &run.scenario;
    let share = crate::model::bandwidth::engine_memory_share(s.hardware.gpu_memory_bytes, &run.coefficients);
    placements(run)
        .into_iter()
        .filter(|(_, _, p)| p.fits && p.host_weight_bytes() > 0.0)
        .map(|(modes, machines, p)| {
            let gb = (p.host_weight_bytes() / GIB - 1e-9).ceil().max(1.0) as u32;
            let pinned_gb = p.pinned_bytes() / GIB;
            Offload {
                modes,
                machines,
                weight_bytes_per_gpu: p.weight_bytes_per_gpu,
                share_bytes_per_gpu: share,
                gpu_memory_utilization: u,
                host_bytes_per_gpu: p.host_weight_bytes(),
                cpu_offload_gb: gb,
                asked_gb: (pinned_gb > 0.0 && p.spilled_bytes() > 0.0).then(|| (pinned_gb * 100.0).round() / 100.0),
            }
        })
        .collect()
}

/// `--cpu-offload-gb` for the engine of `mode`, when its weights need it.
pub fn cpu_offload_gb(offloads: &[Offload], mode: Mode) -> Option<u32> {
    offloads.iter().find(|o| o.modes.contains(&mode)).map(|o| o.cpu_offload_gb)
}

/// vLLM's default `--gpu-memory-utilization`.
pub const VLLM_DEFAULT_SHARE: f64 = 0.9;

/// The flags the commands of `mode` need for vLLM to do what the plan predicts beyond the team's own server
/// settings: the engine profile's memory share where the team gave none and it is not vLLM's default (a profile
/// fitted on a run at 0.70 predicts that run's KV pool), and the `--cpu-offload-gb` its weights need.
pub fn serve_flags(run: &ScenarioRun, offloads: &[Offload], mode: Mode) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(u) = gpu_memory_utilization(run).filter(|_| run.scenario.server.gpu_memory_utilization <= 0.0) {
        if (u - VLLM_DEFAULT_SHARE).abs() > 0.005 {
            flags.push(format!("--gpu-memory-utilization {u:.2}"));
        }
    }
    if let Some(gb) = cpu_offload_gb(offloads, mode) {
        flags.push(format!("--cpu-offload-gb {gb}"));
    }
    flags
}

/// `run` at another memory share: the scenario's setting and the coefficients it moves.
fn at_share(run: &ScenarioRun, u: f64) -> Option<ScenarioRun> {
    let mut other = run.clone();
    let settings = ServerSettings { gpu_memory_utilization: u, ..Default::default() };
    super::server_settings::apply(&settings, &mut other.coefficients, &run.scenario.engine).ok()?;
    other.scenario.server.gpu_memory_utilization = u;
    Some(other)
}

/// Whether each engine placement keeps weights in CPU memory.
fn offloading(run: &ScenarioRun) -> Vec<bool> {
    placements(run).into_iter().map(|(_, _, p)| p.host_weight_bytes() > p.pinned_bytes()).collect()
}

impl Workspace {
    /// Where a share `NEAR` above or below the asked one moves weights between GPU and CPU memory and the
    /// verdict changes with it (its mode, or its multiplier by more than a tenth), both verdicts; `None`
    /// otherwise. The verdict is the one at the latency target when `q` asks one, else the plan's.
    pub fn memory_share_warning(&self, run: &ScenarioRun, q: Option<&GoodputQuery>) -> Option<ShareWarning> {
        let u = gpu_memory_utilization(run)?;
        let here = offloading(run);
        let other = [u + NEAR, u - NEAR]
            .into_iter()
            .map(|x| (x * 1000.0).round() / 1000.0)
            .filter(|x| *x > RUNTIME_SHARE && *x <= 1.0)
            .filter_map(|x| at_share(run, x).map(|r| (x, r)))
            .find(|(_, r)| offloading(r) != here)?;
        let (asked_mode, asked_gain, asked_text) = self.verdict_of(run, q);
        let (other_mode, other_gain, other_text) = self.verdict_of(&other.1, q);
        let changed = asked_mode != other_mode
            || match (asked_gain, other_gain) {
                (Some(a), Some(b)) => (a - b).abs() > 0.1 * a.abs().max(b.abs()),
                (a, b) => a.is_some() != b.is_some(),
            };
        if !changed {
            return None;
        }
        let moves = |r: &ScenarioRun| {
            let o = offloads(r);
            if o.is_empty() {
                "every weight in GPU memory".to_string()
            } else {
                o.iter()
                    .map(|o| {
                        let whose = if o.machines == 1 { "one machine" } else { "the pair" };
                        format!("{whose} offloading {} GiB per GPU", o.cpu_offload_gb)
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let text = format!(
            "the verdict turns on the memory share: at --gpu-memory-utilization {:.2} ({}) it reads {other_text}; \
             at {u:.2} ({}) {asked_text}. Measure the share your vLLM reports before buying on either",
            other.0,
            moves(&other.1),
            moves(run)
        );
        Some(ShareWarning { asked: u, other: other.0, verdict_asked: asked_text, verdict_other: other_text, text })
    }

    /// The verdict's mode, multiplier and words: at the target when `q` asks one, else the plan's.
    fn verdict_of(&self, run: &ScenarioRun, q: Option<&GoodputQuery>) -> (Option<Mode>, Option<f64>, String) {
        if let Some(w) = q.and_then(|q| self.goodput(run, q).ok()).and_then(|a| a.workloads.into_iter().next()) {
            let v = w.verdict;
            let text = match (v.best_pair, v.users_gain) {
                (Some(m), Some(g)) => format!("{} {g:.1}x the users", m.name()),
                (Some(m), None) => format!("{} (one machine serves none)", m.name()),
                (None, _) => "no two-machine mode meets the target".to_string(),
            };
            return (v.best_pair, v.users_gain, text);
        }
        let plan = run.plan();
        let mode = plan.recommendation();
        let top = plan.rows.iter().map(|r| r.concurrency).max();
        let gain = mode.zip(plan.rows.iter().find(|r| Some(r.concurrency) == top)).map(|(m, r)| r.gain_of(m));
        let text = match (mode, gain) {
            (Some(m), Some(g)) => format!("{} {g:.2}x one machine's tok/s", m.name()),
            _ => "nothing to run".to_string(),
        };
        (mode, gain.filter(|g| g.is_finite()), text)
    }
}

//! The serving engine's settings a team chooses, by vLLM's names: the memory share, the sequence cap, the step's
//! token budget and the KV block size. They are laid over the engine profile's coefficients once the profile is
//! chosen (`explore::server_settings::apply`, from `explore::Workspace::coefficients_for`), so a profile's fitted efficiencies stay and only what the
//! team states changes.
//!
//! ```text
//! GPU memory  [ weights | KV pool          | activations, runtime | unused          ]
//!             |<---- engine share --------->|<- RUNTIME_SHARE ---->|<- 1 - gpu_memory_utilization ->|
//!             |<------------- gpu_memory_utilization ------------->|
//! ```
//! vLLM sizes weights, the activation peak and the KV cache together to `gpu_memory_utilization` of the GPU's
//! memory; the model's engine share (`model::bandwidth::engine_memory_share`) is all but
//! `runtime_reserve_fraction`, so that reserve is `1 - gpu_memory_utilization + RUNTIME_SHARE`, and the share
//! an offloading deployment keeps free of weights (`hbm_reserve_fraction`) moves by the same amount.

use serde::{Deserialize, Serialize};

/// Of GPU memory, the share activations, CUDA graphs and the runtime take inside vLLM's
/// `gpu_memory_utilization`: 8 GB of 252, as every vLLM engine profile of the dataset assumes (their
/// `runtime_reserve_fraction` is `1 - gpu_memory_utilization` plus this; vLLM's own profile of Llama-3-8B on an
/// H100 measured 3.8% of the GPU, vllm-project/vllm pull request #10511).
pub const RUNTIME_SHARE: f64 = 8.0 / 252.0;

/// The settings a team chooses; 0 leaves the engine profile's own value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSettings {
    /// vLLM's `--gpu-memory-utilization`: the share of GPU memory the engine takes, in (0, 1].
    pub gpu_memory_utilization: f64,
    /// vLLM's `--max-num-seqs`: most requests running at once.
    pub max_num_seqs: f64,
    /// vLLM's `--max-num-batched-tokens`: most tokens one step takes (the prefill chunk).
    pub max_num_batched_tokens: f64,
    /// vLLM's `--block-size`: tokens per KV cache block.
    pub block_size: f64,
}

/// One setting: its override key in a scenario file, its vLLM flag, and its field.
pub struct ServerSetting {
    /// The scenario override key (`server.max_num_seqs`).
    pub key: &'static str,
    /// The vLLM flag (`--max-num-seqs`), which is also the CLI's.
    pub flag: &'static str,
    pub field: fn(&mut ServerSettings) -> &mut f64,
}

/// Every setting, in one table so the override keys, the flags and the fields cannot drift apart.
pub const SERVER_SETTINGS: [ServerSetting; 4] = [
    ServerSetting {
        key: "server.gpu_memory_utilization",
        flag: "--gpu-memory-utilization",
        field: |s| &mut s.gpu_memory_utilization,
    },
    ServerSetting { key: "server.max_num_seqs", flag: "--max-num-seqs", field: |s| &mut s.max_num_seqs },
    ServerSetting {
        key: "server.max_num_batched_tokens",
        flag: "--max-num-batched-tokens",
        field: |s| &mut s.max_num_batched_tokens,
    },
    ServerSetting { key: "server.block_size", flag: "--block-size", field: |s| &mut s.block_size },
];

impl ServerSettings {
    /// Whether every setting is left to the profile.
    pub fn is_default(&self) -> bool {
        *self == ServerSettings::default()
    }

    /// Each setting given, as `(setting, value)`.
    pub fn given(&self) -> Vec<(&'static ServerSetting, f64)> {
        SERVER_SETTINGS.iter().map(|s| (s, *(s.field)(&mut self.clone()))).filter(|(_, v)| *v > 0.0).collect()
    }

    /// The settings as vLLM flags with their values (`--max-num-seqs 64`), for the serving commands.
    pub fn vllm_args(&self) -> Vec<String> {
        self.given().into_iter().map(|(s, v)| format!("{} {}", s.flag, trim(v))).collect()
    }
}

/// Whether `value` is a usable setting for the override `key` (0 leaves the profile's value).
pub fn check(key: &str, value: f64) -> Result<(), String> {
    if value == 0.0 {
        return Ok(());
    }
    if key == "server.gpu_memory_utilization" {
        if !(value > RUNTIME_SHARE && value <= 1.0) {
            return Err(format!(
                "`{key}` must be in ({RUNTIME_SHARE:.3}, 1]: the engine's share of GPU memory, the runtime's \
                 {:.1}% included, got {value}",
                RUNTIME_SHARE * 100.0
            ));
        }
    } else if value < 1.0 || value.fract() != 0.0 {
        return Err(format!("`{key}` must be a whole number at least 1, got {value}"));
    }
    Ok(())
}

/// A whole number without decimals, a share with up to three.
fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_read_as_vllm_flags() {
        let s = ServerSettings {
            max_num_seqs: 64.0,
            max_num_batched_tokens: 4096.0,
            block_size: 32.0,
            ..Default::default()
        };
        assert_eq!(s.vllm_args(), ["--max-num-seqs 64", "--max-num-batched-tokens 4096", "--block-size 32"]);
        let share = ServerSettings { gpu_memory_utilization: 0.85, ..Default::default() };
        assert_eq!(share.vllm_args(), ["--gpu-memory-utilization 0.85"]);
        assert!(ServerSettings::default().is_default());
    }

    #[test]
    fn bad_settings_are_named() {
        assert!(check("server.gpu_memory_utilization", 1.2).unwrap_err().contains("gpu_memory_utilization"));
        assert!(check("server.gpu_memory_utilization", 0.9).is_ok());
        assert!(check("server.max_num_seqs", 2.5).unwrap_err().contains("whole number"));
        assert!(check("server.block_size", 0.0).is_ok(), "0 leaves the profile's");
    }
}

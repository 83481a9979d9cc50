//! Where the server settings a team chooses (`server::ServerSettings`, vLLM's names) meet an engine profile's
//! coefficients: laid over them once the profile is chosen, so its fitted efficiencies stay and only what the
//! team states changes. `server.rs` says how `gpu_memory_utilization` maps onto the memory shares.

use crate::model::Coefficients;
use crate::server::{ServerSettings, RUNTIME_SHARE};

/// Lays the settings over an engine profile's coefficients. `engine` names the profile in errors.
pub fn apply(s: &ServerSettings, k: &mut Coefficients, engine: &str) -> Result<(), String> {
    if s.gpu_memory_utilization > 0.0 {
        if k.kv_free_memory_fraction > 0.0 {
            return Err(format!(
                "engine profile `{engine}` sizes its KV pool as TensorRT-LLM does (a share of the memory the \
                 weights leave free); --gpu-memory-utilization is vLLM's setting and has no meaning there"
            ));
        }
        let runtime = (1.0 - s.gpu_memory_utilization + RUNTIME_SHARE).clamp(0.0, 1.0);
        k.hbm_reserve_fraction = (k.hbm_reserve_fraction + runtime - k.runtime_reserve_fraction).clamp(0.0, 1.0);
        k.runtime_reserve_fraction = runtime;
    }
    if s.max_num_seqs > 0.0 {
        k.max_num_seqs = s.max_num_seqs;
    }
    if s.max_num_batched_tokens > 0.0 {
        k.prefill_chunk_tokens = s.max_num_batched_tokens;
    }
    if s.block_size > 0.0 {
        k.kv_block_tokens = s.block_size;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_memory_utilization_is_the_engine_share_plus_the_runtime_and_moves_the_offload_reserve_with_it() {
        // vllm-generic states 0.9 as runtime 0.1317 and an offload reserve 0.2349.
        let mut k =
            Coefficients { runtime_reserve_fraction: 0.1317, hbm_reserve_fraction: 0.2349, ..Coefficients::default() };
        let s = ServerSettings { gpu_memory_utilization: 0.9, ..ServerSettings::default() };
        apply(&s, &mut k, "vllm-generic").unwrap();
        assert!((k.runtime_reserve_fraction - (0.1 + 8.0 / 252.0)).abs() < 1e-4, "{k:?}");
        assert!((k.hbm_reserve_fraction - 0.2349).abs() < 1e-4, "{k:?}");
        // 0.7 takes 20% more of memory away from weights and KV: both reserves grow by it.
        let s = ServerSettings { gpu_memory_utilization: 0.7, ..s };
        apply(&s, &mut k, "vllm-generic").unwrap();
        assert!((k.runtime_reserve_fraction - 0.3317).abs() < 1e-4, "{k:?}");
        assert!((k.hbm_reserve_fraction - 0.4349).abs() < 1e-4, "{k:?}");
        // A TensorRT-LLM profile's pool is no vLLM share.
        let mut trt = Coefficients { kv_free_memory_fraction: 0.9, ..Coefficients::default() };
        assert!(apply(&s, &mut trt, "nim-trtllm").unwrap_err().contains("TensorRT-LLM"));
    }

    #[test]
    fn the_other_settings_set_their_coefficient_and_unset_ones_leave_the_profiles() {
        let mut k = Coefficients { max_num_seqs: 256.0, ..Coefficients::default() };
        let before = k.clone();
        apply(&ServerSettings::default(), &mut k, "e").unwrap();
        assert_eq!(k, before);
        let s = ServerSettings {
            max_num_seqs: 64.0,
            max_num_batched_tokens: 4096.0,
            block_size: 32.0,
            ..Default::default()
        };
        apply(&s, &mut k, "e").unwrap();
        assert_eq!((k.max_num_seqs, k.prefill_chunk_tokens, k.kv_block_tokens), (64.0, 4096.0, 32.0));
        assert_eq!(s.vllm_args(), ["--max-num-seqs 64", "--max-num-batched-tokens 4096", "--block-size 32"]);
    }
}

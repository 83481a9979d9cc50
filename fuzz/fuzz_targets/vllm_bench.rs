//! vLLM serving benchmark results (one, JSON Lines, concatenated or indented per input): no panic, and a
//! sweep it returns serialises. A NUL byte splits the input into several files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_core::import::{vllm_bench, Input, VllmOptions};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let inputs: Vec<Input> =
        text.split('\0').enumerate().map(|(n, t)| (format!("result-{n}.json"), t.to_string())).collect();
    for opts in
        [VllmOptions::default(), VllmOptions { concurrency: Some(4), isl: Some(1024), ..VllmOptions::default() }]
    {
        if let Ok(sweep) = vllm_bench(&inputs, &opts) {
            assert!(serde_json::to_string(&sweep).is_ok());
        }
    }
});

//! nccl-tests text tables and `-J` JSON: no panic. A NUL byte splits the input into several files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_core::import::{nccl_tests, Input, NcclOptions};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let inputs: Vec<Input> =
        text.split('\0').enumerate().map(|(n, t)| (format!("all_reduce_perf-{n}.txt"), t.to_string())).collect();
    let _ = nccl_tests(&inputs, &NcclOptions::default());
});

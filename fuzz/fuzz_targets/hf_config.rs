//! A Hugging Face `config.json` read into a model description and turned into a model spec: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_core::describe::ModelDescription;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The first character picks the weight precision the page offers (4, 8 or 16 bits) or an odd one.
    let bits = match text.bytes().next().unwrap_or(0) % 4 {
        0 => 4.0,
        1 => 8.0,
        2 => 16.0,
        _ => 4.25,
    };
    if let Ok(d) = ModelDescription::from_hf_config("fuzz", text, bits) {
        let _ = d.to_spec();
    }
});

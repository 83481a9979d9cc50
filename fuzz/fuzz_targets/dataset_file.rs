//! One dataset file of any kind, loaded and validated on its own: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_core::dataset::{load, validate, SourceText};

fuzz_target!(|data: &[u8]| {
    // The CLI reads invalid UTF-8 lossily too (fsio.rs), so the loader sees what it would see.
    let text = String::from_utf8_lossy(data).into_owned();
    let (ds, _) = load(&[SourceText { path: "sweeps/fuzz.json".into(), text }]);
    let _ = validate::check(&ds, None);
    let _ = sim_core::model::plausibility::check(&ds);
});

//! A scenario file loaded and resolved against the shipped dataset (ids, inline objects, overrides): no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_core::dataset::{load, Dataset, SourceText};
use sim_core::scenario::resolve;
use std::sync::OnceLock;

#[path = "../../sim-core/src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // only load_dir is used
mod fsio;

fn shipped() -> &'static Dataset {
    static DATA: OnceLock<Dataset> = OnceLock::new();
    DATA.get_or_init(|| {
        let files =
            fsio::load_dir(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../data"))).expect("data/");
        load(&files).0
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let (one, _) = load(&[SourceText { path: "scenarios/fuzz.json".into(), text }]);
    for (file, sc) in &one.scenarios {
        let _ = resolve(shipped(), file, sc);
    }
});

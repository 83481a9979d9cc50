//! One file of the shipped dataset replaced by the input (the first byte picks which), then the whole
//! dataset loaded and validated: no panic, whatever the other files' checks make of the broken one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_core::dataset::{load, validate, SourceText};
use std::sync::OnceLock;

#[path = "../../sim-core/src/bin/sim-core/fsio.rs"]
#[allow(dead_code)] // only load_dir is used
mod fsio;

fn shipped() -> &'static [SourceText] {
    static DATA: OnceLock<Vec<SourceText>> = OnceLock::new();
    DATA.get_or_init(|| {
        fsio::load_dir(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../data"))).expect("data/")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let mut files = shipped().to_vec();
    let n = usize::from(pick) % files.len();
    files[n].text = String::from_utf8_lossy(rest).into_owned();
    let (ds, _) = load(&files);
    let _ = validate::check(&ds, None);
    let _ = sim_core::model::plausibility::check(&ds);
});

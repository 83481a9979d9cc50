//! The page's URL state parser (`app/src/state.rs`): any query string gives a state and warnings, no panic,
//! and the link the page writes for that state reads back without warnings to a state that writes the same
//! link. (The state itself need not survive: the writer rounds what-if values, `hbm=9.1024` -> `hbm=9.102`.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use twotower_app::state::UrlState;

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else { return };
    let models: Vec<String> = ["glm-5.2", "glm-5.3", "minimax-m3"].map(String::from).to_vec();
    let hardware: Vec<String> = ["gb300-station", "h100-sxm"].map(String::from).to_vec();
    let (state, _) = UrlState::parse_with(query, &models, &hardware);
    let written = state.to_query();
    let (again, warnings) = UrlState::parse_with(&written, &models, &hardware);
    assert!(warnings.is_empty(), "{query:?} -> {written:?} warns {warnings:?}");
    assert_eq!(again.to_query(), written, "{query:?}");
});

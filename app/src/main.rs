//! Entry point: mounts the explorer into the page (wasm32); natively there is nothing to run.

fn main() {
    #[cfg(target_arch = "wasm32")]
    twotower_app::mount();
}

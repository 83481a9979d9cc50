#!/usr/bin/env bash
#! Builds the browser explorer into dist/: the tools (scripts/setup.sh), then `trunk build --release` (profile
#! wasm-release, wasm-opt from npm binaryen 132). Trunk.toml's post_build hook (scripts/trunk-post-build.py) moves
#! Trunk's inline loader into a file for the page's Content-Security-Policy and runs one more wasm-opt round, so
#! plain `trunk build --release` makes the same dist/. Extra arguments go to trunk (e.g. --dist DIR).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
export PATH="$HOME/.cargo/bin:$ROOT/.tools/node_modules/.bin:$PATH"
trunk build --release "$@"

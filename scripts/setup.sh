#!/usr/bin/env bash
#! Installs every tool the explorer build and the test suite need; each step skips quickly when already done.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$ROOT/.tools/node_modules/.bin:$PATH"

step() { printf '==> %s\n' "$*" >&2; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if ! command -v trunk >/dev/null || ! trunk --version | grep -q '0.21.14'; then
  step "cargo install trunk 0.21.14 (about 12 minutes on 2 cores)"
  cargo install --locked trunk --version 0.21.14
fi

if ! command -v wasm-bindgen >/dev/null || ! wasm-bindgen --version | grep -q '0.2.130'; then
  step "cargo install wasm-bindgen-cli 0.2.130 (about 5 minutes)"
  # Not --locked: its lock file names a crate version the registry no longer has.
  cargo install wasm-bindgen-cli --version 0.2.130
fi

# The fuzz targets (scripts/fuzz.sh); stable rustc runs them with RUSTC_BOOTSTRAP=1.
if ! command -v cargo-fuzz >/dev/null || ! cargo fuzz --version | grep -q '0.13.2'; then
  step "cargo install cargo-fuzz 0.13.2 (about 2 minutes)"
  cargo install --locked cargo-fuzz --version 0.13.2
fi

# wasm-opt from npm's binaryen 132; Debian's binaryen 108 produces a blank page.
if [ ! -x "$ROOT/.tools/node_modules/.bin/wasm-opt" ]; then
  step "npm install binaryen@132 into .tools/"
  mkdir -p "$ROOT/.tools"
  (cd "$ROOT/.tools" && npm install --no-audit --no-fund --silent binaryen@132)
fi

if [ "${TWOTOWER_SKIP_BROWSER:-0}" != 1 ] && { ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; }; then
  step "apt-get install chromium chromium-driver"
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi

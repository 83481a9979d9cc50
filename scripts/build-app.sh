#!/usr/bin/env bash
#! Builds the browser explorer into dist/ with Trunk (release, profile wasm-release, wasm-opt from npm binaryen 132),
#! then moves Trunk's inline loader into a file so the page runs under a strict Content-Security-Policy.
# Cold build (tools installed, empty target/ for wasm32) measured at 4 min on 2 cores (2026-12, trunk 0.21.14, std rebuilt, LTO + wasm-opt -Oz);
# a rebuild after an app change takes about 40 s (LTO dominates).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
export PATH="$HOME/.cargo/bin:$ROOT/.tools/node_modules/.bin:$PATH"
# Leptos builds each component as a type-erased view (AnyView) instead of one nested type per view: fewer
# monomorphised copies of the render code, a smaller bundle (the wasm-release profile is only built here).
export RUSTFLAGS="${RUSTFLAGS:-} --cfg erase_components"
# The standard library is rebuilt with the bundle's own settings (opt-level z, LTO) and its size-first
# algorithms, and a panic stops the page at once instead of formatting a message (-Cpanic=immediate-abort:
# no panic strings, locations or formatting machinery in the bundle). Measured on 2026-12-01 (gzip -9 of the
# wasm, binaryen 132): 483,319 bytes before, 467,959 with std rebuilt for size, 450,384 with immediate abort
# too. A panic then shows in the console as "RuntimeError: unreachable", which the browser tests fail on as on
# any error; a build without these flags (plain `trunk build`) keeps the messages (console_error_panic_hook).
# Both are unstable cargo/rustc options on the stable toolchain, hence RUSTC_BOOTSTRAP=1, as scripts/fuzz.sh
# does for cargo-fuzz; they apply to the wasm target only (build scripts run on the host's prebuilt std).
export RUSTC_BOOTSTRAP=1
export CARGO_UNSTABLE_BUILD_STD="std,panic_abort"
export CARGO_UNSTABLE_BUILD_STD_FEATURES="optimize_for_size"
export RUSTFLAGS="$RUSTFLAGS -Zunstable-options -Cpanic=immediate-abort"
trunk build --release "$@"

# The page's policy is `script-src 'self' 'wasm-unsafe-eval'; style-src 'self'`: no inline script may run. Trunk
# 0.21 always writes the wasm loader as an inline <script type="module">, so it moves here into boot-<hash>.js
# (named by its content, like Trunk's own files, with the same sha384 integrity). The build fails if the page
# still has any inline script or style afterwards.
DIST="dist"
for ((i = 1; i <= $#; i++)); do
  if [[ "${!i}" == "--dist" ]]; then j=$((i + 1)); DIST="${!j}"; fi
done
# One more wasm-opt round over Trunk's -Oz output: flattening the code and rebuilding its control flow
# (--flatten --rereloop) lets a second -Oz find more to share; 2.5 KB smaller gzipped (binaryen 132), about
# 30 s more. The page's preload integrity is rewritten below for the new bytes.
for w in "$DIST"/*_bg.wasm; do
  wasm-opt --flatten --rereloop -Oz "$w" -o "$w.opt"
  mv "$w.opt" "$w"
done
python3 - "$DIST" <<'PY'
import base64, hashlib, pathlib, re, sys

dist = pathlib.Path(sys.argv[1])
index = dist / "index.html"
html = index.read_text()
for wasm in dist.glob("*_bg.wasm"):
    sri = "sha384-" + base64.b64encode(hashlib.sha384(wasm.read_bytes()).digest()).decode()
    tag = re.compile(r'(<link rel="preload" href="\./' + re.escape(wasm.name) + r'"[^>]*integrity=")[^"]*(")')
    if len(tag.findall(html)) != 1:
        sys.exit(f"build-app.sh: expected one preload link for {wasm.name} in {index}")
    html = tag.sub(lambda m: m.group(1) + sri + m.group(2), html)
inline = re.compile(r"<script type=\"module\">(.*?)</script>", re.S)
found = inline.findall(html)
if len(found) != 1:
    sys.exit(f"build-app.sh: expected one inline module loader in {index}, found {len(found)}")
body = "// Loads the explorer's wasm (Trunk's loader, moved out of index.html for the Content-Security-Policy).\n" + found[0].strip() + "\n"
for old in dist.glob("boot-*.js"):
    old.unlink()
name = "boot-" + hashlib.sha256(body.encode()).hexdigest()[:16] + ".js"
(dist / name).write_text(body)
sri = "sha384-" + base64.b64encode(hashlib.sha384(body.encode()).digest()).decode()
html = inline.sub(lambda _: f'<script type="module" src="./{name}" integrity="{sri}"></script>', html, count=1)
left = [s for s in re.findall(r"<script\b[^>]*>", html) if "src=" not in s]
if left or re.search(r"<style\b|\sstyle=", html):
    sys.exit(f"build-app.sh: {index} still has inline script or style: {left}")
index.write_text(html)
PY
echo "built $DIST ($(du -sh "$DIST" | cut -f1))" >&2

#!/usr/bin/env python3
#! Trunk's post_build hook (Trunk.toml), run on the staged page by every `trunk build` and `trunk serve`.
#! The page's policy (index.html) is `script-src 'self' 'wasm-unsafe-eval'; style-src 'self'`: no inline script
#! may run, but Trunk 0.21 writes its wasm loader as an inline <script type="module"> and, under `trunk serve`,
#! its auto-reload client as an inline <script>. Each moves here into a file named by its content (like Trunk's
#! own files) with a sha384 integrity; the build fails if the page keeps any inline script or style. A release
#! build also gives the wasm one more wasm-opt round. The page's data files, which app/build.rs writes beside the
#! wasm Cargo builds, are copied into the page's data/ folder. Reads Trunk's TRUNK_* variables.

import base64
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

stage = pathlib.Path(os.environ["TRUNK_STAGING_DIR"])
source = pathlib.Path(os.environ.get("TRUNK_SOURCE_DIR", "."))
release = os.environ.get("TRUNK_PROFILE") == "release"
index = stage / "index.html"


def fail(msg: str) -> None:
    sys.exit(f"trunk-post-build: {msg}")


def sri(data: bytes) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


html = index.read_text()

# One more wasm-opt round over Trunk's -Oz output in a release build: flattening the code and rebuilding its
# control flow (--flatten --rereloop) lets a second -Oz find more to share, 2.5 KB smaller gzipped (binaryen 132)
# for about 30 s. Debug builds (`trunk serve`'s default) skip it. The preload's integrity is rewritten for the
# new bytes.
if release:
    wasm_opt = shutil.which("wasm-opt") or str(source / ".tools/node_modules/.bin/wasm-opt")
    if not os.access(wasm_opt, os.X_OK):
        fail("wasm-opt (binaryen 132) not found on PATH or in .tools/; run scripts/setup.sh")
    for wasm in stage.glob("*_bg.wasm"):
        subprocess.run([wasm_opt, "--flatten", "--rereloop", "-Oz", str(wasm), "-o", f"{wasm}.opt"], check=True)
        os.replace(f"{wasm}.opt", wasm)
        tag = re.compile(r'(<link rel="preload" href="\./' + re.escape(wasm.name) + r'"[^>]*integrity=")[^"]*(")')
        if len(tag.findall(html)) != 1:
            fail(f"expected one preload link for {wasm.name} in {index}")
        digest = sri(wasm.read_bytes())
        html = tag.sub(lambda m: m.group(1) + digest + m.group(2), html)

# The page's data files (the dataset, its fits, the bands' evidence) are fetched by the page from data/ beside
# it, under names app/build.rs gives them (their content's fingerprint) and compiles into the wasm. That build
# script writes them to page-data/ in the Cargo profile's folder of the wasm target; Trunk copies only what it
# built itself, so they are copied here. A file the wasm does not name is another build's: the build fails
# rather than ship a page that cannot load. The dataset and the fits, which every first chart needs, are
# preloaded so they download alongside the wasm instead of after it starts.
profile = re.search(r'data-cargo-profile="([^"]+)"', (source / "index.html").read_text())
if not profile:
    fail("index.html names no data-cargo-profile for the wasm")
metadata = subprocess.run(
    ["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=source, check=True, capture_output=True
)
page_data = pathlib.Path(json.loads(metadata.stdout)["target_directory"]) / "wasm32-unknown-unknown"
page_data = page_data / profile.group(1) / "page-data"
wasm_bytes = b"".join(w.read_bytes() for w in stage.glob("*_bg.wasm"))
data_files = sorted(page_data.glob("*.json"))
if len(data_files) != 3:
    fail(f"expected the page's 3 data files in {page_data}, found {len(data_files)}; rebuild the page")
(stage / "data").mkdir(exist_ok=True)
for f in data_files:
    if f.name.encode() not in wasm_bytes:
        fail(f"{f} is not a file this build's wasm fetches; rebuild the page")
    shutil.copyfile(f, stage / "data" / f.name)
preloads = "".join(
    f'<link rel="preload" href="./data/{f.name}" as="fetch" crossorigin>'
    for f in data_files
    if not f.name.startswith("evidence-")
)
if html.count("</head>") != 1:
    fail(f"expected one </head> in {index}")
html = html.replace("</head>", preloads + "</head>")

# The auto-reload client learns its server from placeholders `trunk serve` fills in HTML responses only; moved
# into a file it reads the same values from the page's own location.
PLACEHOLDERS = {
    "'{{__TRUNK_ADDRESS__}}'": "window.location.host",
    "'{{__TRUNK_WS_BASE__}}'": "window.location.pathname.replace(/[^/]*$/, '')",
}

inline = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)


def move_out(m: re.Match) -> str:
    attrs, body = m.group("attrs"), m.group("body")
    if "src=" in attrs or not body.strip():
        return m.group(0)
    module = 'type="module"' in attrs
    kind = "boot" if module else "autoreload"
    what = "Loads the explorer's wasm" if module else "Trunk's auto-reload client for `trunk serve`"
    for placeholder, value in PLACEHOLDERS.items():
        body = body.replace(placeholder, value)
    text = f"// {what} (moved out of index.html for its Content-Security-Policy).\n{body.strip()}\n".encode()
    name = f"{kind}-{hashlib.sha256(text).hexdigest()[:16]}.js"
    (stage / name).write_bytes(text)
    kept = re.sub(r'\snonce="[^"]*"', "", attrs)
    return f'<script{kept} src="./{name}" integrity="{sri(text)}"></script>'


html = inline.sub(move_out, html)
if not re.search(r'<script type="module" src="\./boot-[0-9a-f]{16}\.js"', html):
    fail(f"no wasm loader found in {index}")
left = [s for s in re.findall(r"<script\b[^>]*>", html) if "src=" not in s]
if left or re.search(r"<style\b|\sstyle=", html):
    fail(f"{index} still has inline script or style: {left}")
index.write_text(html)

#!/usr/bin/env bash
#! Builds the explorer, then serves dist/ on http://127.0.0.1:${PORT:-8080}/ (local only).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/build-app.sh"
PORT="${PORT:-8080}"
echo "serving http://127.0.0.1:$PORT/ (Ctrl-C stops)" >&2
cd "$ROOT/dist"
exec python3 -m http.server --bind 127.0.0.1 "$PORT"

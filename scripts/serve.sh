#!/usr/bin/env bash
#! Builds the explorer, then serves dist/ on http://127.0.0.1:${PORT:-8080}/ (local only) with the page's
#! Content-Security-Policy header, the same one the browser tests send.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/build-app.sh"
PORT="${PORT:-8080}"
echo "serving http://127.0.0.1:$PORT/ (Ctrl-C stops)" >&2
cd "$ROOT/dist"
# Python's http.server with one header added to every response (it sends no policy of its own); .wasm must be
# served as application/wasm for streaming compilation.
exec python3 - "$PORT" <<'PY'
import http.server, sys

CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'"

class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm", ".js": "text/javascript"}

    def end_headers(self):
        self.send_header("Content-Security-Policy", CSP)
        super().end_headers()

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY

#!/usr/bin/env bash
# Builds the MongoDB-wire test server (FerretDB v1.24, SQLite backend) from tools/ferretdb into
# .cache/ferretdb/ferretdb-sqlite, once: later runs reuse the binary while the sources are the same.
# Prints the binary's path. Needs Go and the Go module proxy; nothing else.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/tools/ferretdb"
out="$root/.cache/ferretdb"
bin="$out/ferretdb-sqlite"
stamp="$out/sources.sha256"

command -v go >/dev/null || { echo "build-ferretdb: Go is not installed" >&2; exit 3; }
want="$(cat "$src"/*.go "$src/go.mod" "$src/go.sum" | sha256sum | cut -d' ' -f1)"
if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$out"
(cd "$src" && GOFLAGS=-mod=mod go build -trimpath -o "$bin.tmp" .) >&2
mv "$bin.tmp" "$bin"
echo "$want" > "$stamp"
echo "$bin"

#!/usr/bin/env bash
# Builds btcd v0.24.2 (the Go full node the node-facing tests run in regtest) with
# `go install` from the Go module proxy into .cache/btcd/, once: later runs reuse the binary
# while the pinned version is the same. Prints the binary's path. Needs Go; nothing else.
set -euo pipefail
version="v0.24.2"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.cache/btcd"
bin="$out/btcd"
stamp="$out/version"

if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "build-btcd: Go is not installed" >&2; exit 3; }
mkdir -p "$out"
rm -f "$stamp"
# GOFLAGS from the caller's environment (e.g. -mod=vendor) would not apply to a module install
(cd "$out" && GOBIN="$out" GOFLAGS= go install -trimpath "github.com/btcsuite/btcd@$version") >&2
echo "$version" > "$stamp"
echo "$bin"

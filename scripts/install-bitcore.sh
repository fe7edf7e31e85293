#!/usr/bin/env bash
# Installs a bitcore host into .cache, once: later runs reuse it while the pins are the same.
# Prints the host dir.
#   scripts/install-bitcore.sh                      the bitcore-node host the plugin's tests and
#     benchmark run in (bitcore-node 3.1.3, insight-api 0.4.3, bitcore-lib 0.13.19, pinned by
#     tools/bitcore-host/package-lock.json), into .cache/bitcore
#   scripts/install-bitcore.sh bitcore-client-host  bitcore-client 8.25.47 and socket.io-client 2
#     (tools/bitcore-client-host), into .cache/bitcore-client, for the tests of /api/BTC/:network
#   scripts/install-bitcore.sh bws-host             bitcore-wallet-service and -client 8.25.47
#     (tools/bws-host), into .cache/bws, for the wallet service's v8 explorer test
#
# Its own package.json and node_modules: the project's devDependency bitcore-lib 11 must never
# meet bitcore-lib 0.13 in one process (0.13 refuses a second copy). Scripts are off:
# bitcore-node's preinstall downloads a bitcoind and its zmq@2 does not compile on Node 20;
# neither is used (the plugin requires bitcore-node/lib/node, lib/service and lib/services/web).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
host="${1:-bitcore-host}"
case "$host" in
  bitcore-host) out="$root/.cache/bitcore" ;;
  bitcore-client-host) out="$root/.cache/bitcore-client" ;;
  bws-host) out="$root/.cache/bws" ;;
  *) echo "install-bitcore: unknown host $host (bitcore-host, bitcore-client-host, bws-host)" >&2; exit 2 ;;
esac
src="$root/tools/$host"
stamp="$out/pins.sha256"

command -v npm >/dev/null || { echo "install-bitcore: npm is not installed" >&2; exit 3; }
want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$out/node_modules/.package-lock.json" ]; then
  echo "$out"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
cp "$src/package.json" "$src/package-lock.json" "$out/"
(cd "$out" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
echo "$want" > "$stamp"
echo "$out"

#!/usr/bin/env bash
# Installs the Electrum wallet from Debian's package (bookworm: 4.3.4) when `electrum` is not
# on the PATH, for the tests that run the real wallet against addrindex's Electrum server.
set -euo pipefail
exec "$(dirname "$0")/apt-install.sh" electrum electrum

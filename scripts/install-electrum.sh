#!/usr/bin/env bash
# Installs the Electrum wallet from Debian's package (bookworm: 4.3.4) when `electrum` is not
# on the PATH, for the tests that run the real wallet against addrindex's Electrum server.
# Uses apt-get: run as root, or with sudo available.
set -euo pipefail

if command -v electrum >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-electrum.sh: electrum is not installed and apt-get is not available to install it" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends electrum >/dev/null
command -v electrum

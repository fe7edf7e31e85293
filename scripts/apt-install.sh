#!/usr/bin/env bash
# Installs a Debian package when its command is not on the PATH, for the tests that run a real
# program from Debian (the Electrum wallet, Chromium). Prints the command's path.
# usage: apt-install.sh COMMAND PACKAGE...   (apt-get: run as root, or with sudo available)
set -euo pipefail
cmd="$1"
shift
if command -v "$cmd" >/dev/null 2>&1; then
  command -v "$cmd"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt-install.sh: $cmd is not installed and apt-get is not available to install it" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
command -v "$cmd"

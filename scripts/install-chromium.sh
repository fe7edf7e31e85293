#!/usr/bin/env bash
# Installs Debian's Chromium when no `chromium` is on the PATH, for the tests that open the
# explorer (insight-ui on `addrindex serve`) in a real headless browser over the DevTools
# protocol (puppeteer-core drives it; no browser is ever downloaded by npm). Prints its path.
# Uses apt-get: run as root, or with sudo available.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  command -v chromium
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium.sh: chromium is not installed and apt-get is not available to install it" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium

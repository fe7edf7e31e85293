#!/usr/bin/env bash
# Installs Debian's Chromium when no `chromium` is on the PATH, for the tests that open the
# explorer (insight-ui on `addrindex serve`) in a real headless browser over the DevTools
# protocol (puppeteer-core drives it; no browser is ever downloaded by npm). Prints its path.
set -euo pipefail
exec "$(dirname "$0")/apt-install.sh" chromium chromium fonts-dejavu-core

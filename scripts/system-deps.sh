#!/usr/bin/env bash
# System packages the tests need, installed only when missing (idempotent, no sudo prompt).
set -euo pipefail
# postgresql: the postgres tests start their own server.
# chromium: the headless browser of the Shiny end-to-end test (driven by Playwright's
# Python API with an explicit executable path; Playwright never downloads a browser).
packages=(postgresql chromium)
missing=()
for p in "${packages[@]}"; do
  # Installed means "install ok installed": a removed package keeps a dpkg record.
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

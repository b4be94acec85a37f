#!/usr/bin/env bash
# System packages the tests need, installed with apt only when missing (idempotent, no
# sudo prompt; run as root, as CI does).
set -euo pipefail
# postgresql: the PostgreSQL tests (stores, durable queues) start their own server.
# chromium: the headless browser of the browser tests (the Shiny apps, the docs site from
# file://), driven by Playwright's Python API with an explicit executable path;
# Playwright never downloads a browser.
# SKIP_BROWSER=1 (`make test SKIP_BROWSER=1`) leaves Chromium out: the browser tests are
# then skipped, each saying so, and under CI=true each such skip is a failure.
packages=(postgresql)
case "${SKIP_BROWSER:-}" in
  "" | 0) packages+=(chromium) ;;
esac
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

#!/usr/bin/env bash
# System packages the tests need, installed only when missing (idempotent, no sudo prompt).
set -euo pipefail
packages=(postgresql)  # the postgres tests start their own server
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

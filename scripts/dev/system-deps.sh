#!/usr/bin/env bash
# The Debian packages the test run needs beyond Node, Java and the local services: promtool (from
# `prometheus`, checks deploy/prometheus) and Chromium (the chart page's browser test). Installs
# only what is missing; apt's lists are refreshed only when the first attempt fails.
set -euo pipefail
declare -A need=([promtool]=prometheus [chromium]=chromium)
missing=()
for cmd in "${!need[@]}"; do command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}"); done
[ "${#missing[@]}" -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
install() { $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
install || { $SUDO apt-get update -q >/dev/null && install; }

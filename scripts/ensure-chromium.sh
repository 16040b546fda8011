#!/usr/bin/env bash
# Installs Debian's Chromium for the tests that open report.html in a real browser, when it is missing.
# Needs root (CI runs as root); otherwise it says what to run and leaves the decision to the user.
set -u
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then exit 0; fi
done
if [ "$(id -u)" != "0" ]; then
  echo "ensure-chromium: Chromium is missing; the report.html browser test needs it: sudo apt-get install chromium" >&2
  exit 0
fi
echo "ensure-chromium: installing Debian's chromium for the browser tests (once per machine)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || {
  echo "ensure-chromium: apt-get install chromium failed; the report.html browser test will fail" >&2
  exit 0
}

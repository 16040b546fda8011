#!/usr/bin/env bash
# Installs Debian's redis-server for the fleet tests' Redis variant (they start a throwaway server in a temporary
# directory, without persistence), when it is missing. Needs root (CI runs as root); otherwise it says what to
# run and leaves the decision to the user: the Redis variant is then skipped.
set -u
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "ensure-redis: redis-server is missing; the fleet tests' Redis variant is skipped: sudo apt-get install redis-server" >&2
  exit 0
fi
echo "ensure-redis: installing Debian's redis-server for the fleet tests (once per machine)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq --no-install-recommends redis-server >/dev/null 2>&1 || {
  echo "ensure-redis: apt-get install redis-server failed; the fleet tests' Redis variant will be skipped" >&2
  exit 0
}
# The package starts a system service; the tests run their own servers, so leave the machine as it was.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
exit 0

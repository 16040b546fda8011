#!/usr/bin/env bash
# Installs Debian's PostgreSQL server for the fleet tests (they start a throwaway cluster in a temporary
# directory, as an unprivileged user), when it is missing. Needs root (CI runs as root); otherwise it says what
# to run and leaves the decision to the user. (redis-server, for the Redis variant: scripts/ensure-redis.sh.)
set -u
found=""
for d in /usr/lib/postgresql/*/bin; do
  if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then found="$d"; fi
done
if [ -z "$found" ] && command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1; then found="path"; fi
if [ -z "$found" ]; then
  if [ "$(id -u)" != "0" ]; then
    echo "ensure-postgres: PostgreSQL is missing; the fleet tests need it: sudo apt-get install postgresql" >&2
  else
    echo "ensure-postgres: installing Debian's postgresql for the fleet tests (once per machine)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null 2>&1 || {
      echo "ensure-postgres: apt-get install postgresql failed; the fleet tests will fail" >&2
      exit 0
    }
  fi
fi
exit 0

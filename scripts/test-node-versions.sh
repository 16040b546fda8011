#!/usr/bin/env bash
# Runs the fast test tier on other Node.js majors than the one installed (default: 22 and 24; or those given as
# arguments), with Node binaries from the npm registry's node-linux-<arch> packages. Each is installed once into
# ~/.cache/fsm-bulk/node-<major> (about 30 MB each); this script says so before it installs. Not part of `npm test`,
# which runs on the machine's own Node: `npm run test:node-versions`.
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "test-node-versions: no Node package for $(uname -m)" >&2; exit 2 ;;
esac
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(22 24)
status=0
for major in "${majors[@]}"; do
  home="${XDG_CACHE_HOME:-$HOME/.cache}/fsm-bulk/node-$major"
  node="$home/node_modules/node-linux-$arch/bin/node"
  if [ ! -x "$node" ]; then
    echo "test-node-versions: installing node-linux-$arch@$major from the npm registry into $home (once)" >&2
    mkdir -p "$home"
    npm install --prefix "$home" --no-save --no-audit --no-fund --ignore-scripts "node-linux-$arch@$major" >/dev/null
    chmod +x "$node"
  fi
  echo "test-node-versions: the fast tier on Node $("$node" --version)" >&2
  if ! "$node" node_modules/vitest/vitest.mjs run --project fast; then status=1; fi
done
exit $status

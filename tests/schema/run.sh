#!/usr/bin/env bash
# Installs the schema validator from the lockfile (offline afterwards) and runs it.
#   run.sh FILE...
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# flock: CTest may start several tests that use the validator at once.
(
  exec 9>"$here/node_modules.lock"
  flock 9
  if [ ! -d "$here/node_modules/kubernetes-models" ] || [ ! -d "$here/node_modules/yaml" ] \
    || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
    cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null
  fi
)
exec node "$here/validate.mjs" "$@"

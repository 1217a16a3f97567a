#!/usr/bin/env bash
# Cross-object checks on every kustomization under deploy/, rendered by
# kubectl kustomize (check_manifests.mjs says what is checked).
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

need node "install nodejs and npm"
deploy_node_modules || { fail "npm ci in tests/deploy failed"; finish; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
render_all_or_finish "$work"
args=()
for f in "$work"/rendered/*.yaml; do
  if [ "$(basename "$f")" = base.yaml ]; then args+=(--base "$f"); else args+=("$f"); fi
done
# check_manifests.mjs prints each check and the closing "N passed, M failed".
exec node "$deploy_tests/check_manifests.mjs" --dockerfile "$repo/Dockerfile" "${args[@]}"

#!/usr/bin/env bash
# Every object that every kustomization under deploy/ renders is valid against
# the Kubernetes OpenAPI schemas (and cert-manager's for Issuer and Certificate),
# checked by tests/schema/validate.mjs with the kubernetes-models packages.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

need node "install nodejs and npm"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
render_all_or_finish "$work"
# validate.mjs prints each failing object and the closing "N passed, M failed".
exec bash "$repo/tests/schema/run.sh" "$work"/rendered/*.yaml

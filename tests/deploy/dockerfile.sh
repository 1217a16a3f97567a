#!/usr/bin/env bash
# Static checks of the Dockerfile and .dockerignore (check_dockerfile.mjs says
# which): no container engine runs here, so the image itself is not built.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

need node "install nodejs and npm"
deploy_node_modules || { fail "npm ci in tests/deploy failed"; finish; }
exec node "$deploy_tests/check_dockerfile.mjs" "$repo"

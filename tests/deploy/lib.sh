# shellcheck shell=bash
# Shared by the deploy tests (sourced). Counts checks and renders deploy/.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
deploy_tests="$repo/tests/deploy"
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit $?
}

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  fail "$1 not found: $2"
  finish
}

# Installs tests/deploy's npm packages from its lockfile when missing or stale.
# flock: CTest may start several tests that need them at once.
deploy_node_modules() {
  (
    cd "$deploy_tests" || exit 1
    exec 9>"$deploy_tests/node_modules.lock"
    flock 9
    if [ ! -d node_modules/yaml ] || [ ! -d node_modules/dockerfile-utils ] \
      || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      npm ci --no-audit --no-fund --loglevel=error >/dev/null
    fi
  )
}

# A copy of deploy/ and certs/generate.sh in a temp dir, with the static-certs
# overlay's files generated there, so the work tree is never written to.
#   copy_deploy_tree DIR
copy_deploy_tree() {
  local dir="$1"
  mkdir -p "$dir/certs"
  cp "$repo/certs/generate.sh" "$dir/certs/"
  cp -R "$repo/deploy" "$dir/deploy"
  rm -rf "$dir/deploy/overlays/static-certs/generated"
  bash "$dir/deploy/overlays/static-certs/generate.sh" >/dev/null 2>"$dir/static-certs.log" || {
    cat "$dir/static-certs.log" >&2
    return 1
  }
}

# Every folder under deploy/ with a kustomization.yaml, relative to deploy/:
# base, overlays/*, examples/*.
kustomizations() {
  (cd "$1/deploy" && find . -name kustomization.yaml -printf '%h\n' | sed 's|^\./||' | sort)
}

# Renders every kustomization of a copied tree into OUT/<name>.yaml, where
# <name> is the folder with / replaced by _. Prints "name rc" per folder;
# kustomize's stderr goes to OUT/<name>.stderr.
#   render_tree TREE OUT [KUBECTL]
render_tree() {
  local tree="$1" out="$2" kubectl="${3:-kubectl}" k name
  mkdir -p "$out"
  for k in $(kustomizations "$tree"); do
    name="${k//\//_}"
    if "$kubectl" kustomize "$tree/deploy/$k" >"$out/$name.yaml" 2>"$out/$name.stderr"; then
      echo "$name 0"
    else
      echo "$name $?"
    fi
  done
}

# Copies deploy/, generates the static certificates and renders everything with
# kubectl into OUT; fails the test with kustomize's message when anything
# does not render (the render test reports each folder on its own).
render_all_or_finish() {
  local out="$1" tree="$1/tree" name rc
  need kubectl "install Debian's kubernetes-client (apt-get install kubernetes-client)"
  if ! copy_deploy_tree "$tree"; then
    fail "deploy/overlays/static-certs/generate.sh failed"
    finish
  fi
  while read -r name rc; do
    if [ "$rc" != 0 ]; then
      fail "kubectl kustomize deploy/${name//_//} exited $rc: $(head -c 2000 "$out/rendered/$name.stderr")"
    fi
  done < <(render_tree "$tree" "$out/rendered")
  [ "$failed" -eq 0 ] || finish
}

# Whether the server accepts a rendered Deployment's command line: the
# Dockerfile's ENTRYPOINT with SERVER as its program, the container's args and
# env, and the certificate folder ABSENT, which must not exist, so the server
# parses every flag and the environment, then stops at the certificate
# (exit 1). Prints what the server said when it refused them.
#   image_command_parses SERVER RENDERED_JSON ABSENT   (RENDERED_JSON: yaml2json.mjs output)
image_command_parses() {
  local server="$1" json="$2" absent="$3" entrypoint=() cmd=() args=() env=() i k v rc out
  mapfile -t entrypoint < <(sed -n 's/^ENTRYPOINT[[:space:]]*//p' "$repo/Dockerfile" | tail -n1 | jq -r '.[]')
  cmd=("$server")
  for ((i = 1; i < ${#entrypoint[@]}; i++)); do
    if [ "${entrypoint[$((i - 1))]}" = --cert-dir ]; then cmd+=("$absent"); else cmd+=("${entrypoint[$i]}"); fi
  done
  mapfile -t args < <(jq -r '.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].args // [] | .[]' "$json")
  while IFS=$'\t' read -r k v; do env+=("$k=$v"); done < <(jq -r '.[] | select(.kind == "Deployment")
    | .spec.template.spec.containers[0].env // [] | .[] | select(.value != null) | [.name, .value] | @tsv' "$json")
  out="$(timeout 10 env -i PATH="$PATH" "${env[@]}" "${cmd[@]}" "${args[@]}" 2>&1)"
  rc=$?
  [ "$rc" = 1 ] && grep -q 'certificate' <<<"$out" && return 0
  echo "status $rc: $(head -c 300 <<<"$out")"
  return 1
}

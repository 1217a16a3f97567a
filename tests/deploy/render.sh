#!/usr/bin/env bash
# Every kustomization under deploy/ (base, overlays/*, examples/*) renders with
# `kubectl kustomize`, after overlays/static-certs/generate.sh ran in a temp
# copy of the tree. With KUBECTLS="kubectl /path/to/other/kubectl" every one of
# them renders it, and all must produce the same objects: Debian 12's kubectl
# 1.20 (kustomize v2.0.3) and a current kubectl (kustomize v5) alike.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

need kubectl "install Debian's kubernetes-client (apt-get install kubernetes-client)"
need node "install nodejs and npm"
need jq "install jq"
deploy_node_modules || { fail "npm ci in tests/deploy failed"; finish; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if copy_deploy_tree "$work/tree"; then
  pass "overlays/static-certs/generate.sh wrote its files in a copy of the tree"
else
  fail "overlays/static-certs/generate.sh failed"
  finish
fi

read -r -a kubectls <<<"${KUBECTLS:-kubectl}"
first=""
for i in "${!kubectls[@]}"; do
  kubectl="${kubectls[$i]}"
  version="$("$kubectl" version --client 2>/dev/null | tr '\n' ' ' | head -c 200)"
  echo "# $kubectl: $version"
  out="$work/out$i"
  while read -r name rc; do
    folder="deploy/${name//_//}"
    if [ "$rc" != 0 ]; then
      fail "$kubectl kustomize $folder exited $rc: $(head -c 2000 "$out/$name.stderr")"
      continue
    fi
    count="$(node "$deploy_tests/yaml2json.mjs" "$out/$name.yaml" | jq length)"
    if [ "${count:-0}" -gt 0 ]; then
      pass "$kubectl kustomize $folder: $count objects"
    else
      fail "$kubectl kustomize $folder rendered no objects"
    fi
    # Anything kustomize says besides v5's deprecation notices for the
    # v2.0.3-compatible fields is worth a look.
    other="$(grep -v "^# Warning: '[A-Za-z0-9]*' is deprecated" "$out/$name.stderr" || true)"
    [ -z "$other" ] || echo "# $folder: kustomize said: $other"
    if [ -n "$first" ]; then
      if diff <(node "$deploy_tests/yaml2json.mjs" --sorted "$work/out$first/$name.yaml") \
              <(node "$deploy_tests/yaml2json.mjs" --sorted "$out/$name.yaml") >"$work/diff" 2>&1; then
        pass "$folder: ${kubectls[$first]} and $kubectl render the same objects"
      else
        fail "$folder: ${kubectls[$first]} and $kubectl render different objects: $(head -c 2000 "$work/diff")"
      fi
    fi
  done < <(render_tree "$work/tree" "$out" "$kubectl")
  [ -n "$first" ] || first="$i"
done
finish

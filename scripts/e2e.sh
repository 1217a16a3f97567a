#!/usr/bin/env bash
# End-to-end suite: ray-webhook behind a real kube-apiserver, etcd, controllers,
# scheduler, KWOK, kube-proxy, CoreDNS and KubeRay operators, all built from Go modules
# (tests/e2e/, README there). This script builds; the Go framework
# (tests/e2e/framework, BringUp) starts and stops the cluster.
#
#   scripts/e2e.sh            build what is missing, run the Go suite (it brings
#                             the cluster up and stops it), print the verdicts
#   scripts/e2e.sh --keep     the same, then leave the cluster running with the
#                             current operator, and print how to reach and stop it
#   scripts/e2e.sh --up       bring the cluster up with ray-webhook installed from
#                             deploy/, run no test, leave it running (bench/apiserver.sh)
#   scripts/e2e.sh --build    only build the Go binaries into tests/e2e/.bin/
#
# Environment: RAY_WEBHOOK_BIN (default build/ray-webhook, built with
# scripts/build.sh when missing), E2E_GO_P (go build -p, default 1),
# E2E_BIN_DIR (where the Go binaries are cached, default tests/e2e/.bin),
# E2E_WORK (work directory, default a new one under /tmp), E2E_POD_CIDR,
# E2E_GO_RUN (a -test.run pattern for the Go suite), E2E_GO_TIMEOUT,
# E2E_GO_PARALLEL (go test -parallel: how many of the tests that call
# t.Parallel run at once, default 2; 1 runs them one after the other),
# E2E_ALL_RELEASES=1 (also the operator releases marked OPTIONAL), E2E_IMAGE
# (the OCI archive ray-webhook runs from; default scripts/image.sh's, built
# when missing; none: the binary), E2E_APISERVER_PROFILING=1 (--up: serve
# kube-apiserver's /debug/pprof, for bench/apiserver.sh).
#
# Output: one PASS or FAIL line per test (each innermost subtest, and each
# package of the tools' own unit tests), then
# "N passed, N failed". Needs root (a network namespace, a local route).
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
e2e="$repo/tests/e2e"
bin="${E2E_BIN_DIR:-$e2e/.bin}"
keep=0
up_only=0
build_only=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    --up) keep=1; up_only=1 ;;
    --build) build_only=1 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "e2e.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

# The Go of /usr/local/go first (Debian's golang-go is older than these modules).
[ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
export PATH
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
go_p="${E2E_GO_P:-1}"
# go test's -parallel defaults to GOMAXPROCS, the number of cores: what bounds
# the tests that call t.Parallel is what they may do beside one another on one
# cluster (docs/end-to-end.md, "Tests in parallel"), not the cores, so it is
# set here: 2, the size of that set.
go_parallel="${E2E_GO_PARALLEL:-2}"

log() { printf '%s e2e: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "$*"; exit 1; }

need_tools() {
  local missing=()
  command -v curl >/dev/null || missing+=(curl)
  command -v jq >/dev/null || missing+=(jq)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v ip >/dev/null || missing+=(iproute2)
  # The image is pushed, pulled and tampered with through the suite's registry (framework/registry.go, TestRegistry).
  command -v skopeo >/dev/null || missing+=(skopeo)
  command -v buildah >/dev/null || missing+=(buildah)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
      || die "could not install ${missing[*]}"
  fi
  command -v go >/dev/null || die "go is not on PATH"
}

# ---------------------------------------------------------------- building
# build NAME DIR PACKAGE: go build PACKAGE inside module DIR into .bin/NAME.
# Go's build cache decides what to compile again; an unchanged binary is
# neither relinked nor rewritten (its build ID matches), so a second run
# costs the hashing of its sources, seconds a binary.
build() {
  local name="$1" dir="$2" pkg="$3" ldflags=""
  local t0=$SECONDS
  case "$name" in
    kube-apiserver|kubectl|kube-scheduler|kube-controller-manager|kube-proxy)
      # What k8s.io/kubernetes' hack/lib/version.sh stamps into a release
      # build; without it the binaries report v0.0.0-master.
      local v
      v="$(cd "$dir" && go list -m -f '{{.Version}}' k8s.io/kubernetes)" || return 1
      local x="-X k8s.io/component-base/version"
      ldflags="$x.gitVersion=$v $x.gitMajor=$(cut -d. -f1 <<<"${v#v}") $x.gitMinor=$(cut -d. -f2 <<<"$v")"
      ldflags="$ldflags $x.gitTreeState=clean $x.buildDate=1970-01-01T00:00:00Z"
      ;;
  esac
  # -s -w: no symbol table or DWARF (nothing here debugs these binaries; a
  # panic's trace still names its functions), a shorter link for each.
  ldflags="-s -w $ldflags"
  if (cd "$dir" && nice -n 10 go build -p="$go_p" -trimpath -ldflags="$ldflags" -o "$bin/$name" "$pkg") \
    >"$bin/$name.build.log" 2>&1; then
    [ $((SECONDS - t0)) -lt 20 ] || log "built $name ($pkg in ${dir#"$repo"/}) in $((SECONDS - t0)) s"
  else
    log "building $name failed:"; tail -20 "$bin/$name.build.log" >&2
    return 1
  fi
}

operator_releases() { # a folder with a file OPTIONAL (a long cold build) only with E2E_ALL_RELEASES=1
  local d
  for d in "$e2e"/kuberay-v*/; do
    [ -f "$d/OPTIONAL" ] && [ "${E2E_ALL_RELEASES:-0}" != 1 ] && continue
    [ -f "$d/go.mod" ] && basename "$d"
  done
}

build_all() {
  mkdir -p "$bin"
  local ok=0 r
  build etcd "$e2e/etcd" . || ok=1
  build kube-apiserver "$e2e" ./cmd/kube-apiserver || ok=1
  build kubectl "$e2e" ./cmd/kubectl || ok=1
  build kube-controller-manager "$e2e" ./cmd/kube-controller-manager || ok=1
  build kube-scheduler "$e2e" ./cmd/kube-scheduler || ok=1
  build kube-proxy "$e2e" ./cmd/kube-proxy || ok=1
  build kwok "$e2e/addons" sigs.k8s.io/kwok/cmd/kwok || ok=1
  build coredns "$e2e/addons" ./cmd/coredns || ok=1
  # The Go suite itself is built by `go test` (run_go_suite), from the same cache.
  build recorder "$e2e" ./cmd/recorder || ok=1
  build podload "$e2e" ./cmd/podload || ok=1
  build ray-standin "$e2e" ./cmd/ray-standin || ok=1
  build e2e-cluster "$e2e" ./cmd/e2e-cluster || ok=1
  # Helm for charts/ray-webhook (checks 25a to 25c); the other checks run without it.
  build helm "$e2e/helm" helm.sh/helm/v3/cmd/helm || log "helm did not build (see $bin/helm.build.log)"
  # The image as users pull it (framework/registry.go): distribution's registry and cosign.
  build registry "$e2e/registry" github.com/distribution/distribution/v3/cmd/registry || ok=1
  build cosign "$e2e/cosign" github.com/sigstore/cosign/v2/cmd/cosign || ok=1
  # cert-manager's controller and cainjector for TestCertManager (tests/e2e/cert-manager/main.go).
  build cert-manager "$e2e/cert-manager" . || log "cert-manager did not build (see $bin/cert-manager.build.log)"
  for r in $(operator_releases); do
    build "$r" "$e2e/$r" github.com/ray-project/kuberay/ray-operator || log "$r did not build (see $bin/$r.build.log)"
  done
  return $ok
}

need_tools
t_build=$SECONDS
build_all || die "the control plane did not build"
log "binaries ready in $((SECONDS - t_build)) s"
[ "$build_only" = 1 ] && exit 0

ray_webhook="${RAY_WEBHOOK_BIN:-$repo/build/ray-webhook}"
if [ ! -x "$ray_webhook" ]; then
  [ -z "${RAY_WEBHOOK_BIN:-}" ] || die "RAY_WEBHOOK_BIN=$ray_webhook is not executable"
  log "building ray-webhook (scripts/build.sh)"
  bash "$repo/scripts/build.sh" >&2 || die "scripts/build.sh failed"
fi

# ray-webhook runs from its image (scripts/image.sh builds it, or reuses the
# one of this commit); E2E_IMAGE=none runs the binary instead (TestImage fails).
image="${E2E_IMAGE:-}"
if [ -z "$image" ]; then
  bash "$repo/scripts/image.sh" >&2 || die "scripts/image.sh failed"
  image="$repo/build/image/ray-webhook-$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt").oci.tar"
fi
[ "$image" = none ] && image=""
[ -z "$image" ] || image="$(cd "$(dirname "$image")" && pwd)/$(basename "$image")"

# ---------------------------------------------------------------- run
work="${E2E_WORK:-$(mktemp -d /tmp/ray-webhook-e2e.XXXXXX)}"
mkdir -p "$work/logs"
logs="$work/logs"
passed=0
failed=0
failures=()
summary_printed=0
pass() { passed=$((passed + 1)); printf 'PASS %s\n' "$1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); printf 'FAIL %s: %s\n' "$1" "$2"; }

# Whatever the suite or e2e-cluster left running (a crash, the timeout, a
# signal) is stopped from WORK/processes; a kept cluster is left alone.
cleanup() {
  local rc=$?
  if [ "$keep" = 1 ] && [ "$summary_printed" = 1 ]; then return; fi
  [ -f "$work/processes" ] && "$bin/e2e-cluster" down --work "$work" --keep-work
  if [ "$failed" = 0 ] && [ $rc = 0 ]; then
    rm -rf "$work"
  elif [ "$summary_printed" = 0 ]; then
    log "logs kept in $work/logs"
    echo "$passed passed, $((failed + 1)) failed"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

kept() { # what --keep and --up print
  echo "everything is still running:"
  echo "  export KUBECONFIG=$work/kubeconfig"
  echo "  kubectl: $bin/kubectl   logs: $logs/   stop: $work/stop.sh"
  echo "  the Go suite: E2E_CLUSTER_ENV=$work/cluster.env go test -v ./ (in tests/e2e)"
}

if [ "$up_only" = 1 ]; then
  "$bin/e2e-cluster" up --repo "$repo" --work "$work" --bin "$bin" --ray-webhook "$ray_webhook" --image "$image" \
    ${E2E_POD_CIDR:+--pod-cidr "$E2E_POD_CIDR"} $([ "${E2E_APISERVER_PROFILING:-}" != 1 ] || echo --apiserver-profiling) \
    || die "the cluster did not come up (logs in $logs)"
  kept
  summary_printed=1
  exit 0
fi

# run_go_suite: `go test -json` in tests/e2e: the suite (package ., which
# brings the cluster up in WORK and stops it) and, when no E2E_GO_RUN narrows
# the run, the unit tests of the suite's own tools (./...; they need no
# cluster). Each test of the suite that has no subtests, and each innermost
# subtest, counts as one check (PASS or FAIL line of its own); each tool
# package counts as one; a package that ends without a verdict for a test it
# started (a panic, the timeout) is one more failure. LOGS/go-suite.json is
# go test's record, LOGS/go-suite.log its text.
run_go_suite() {
  local json="$logs/go-suite.json" out="$logs/go-suite.log" suite rc verdict name
  # The packages with tests: go test would also build every command beside
  # them (kube-apiserver and the rest), a minute each, to report no tests.
  local pkgs=(.)
  [ -n "${E2E_GO_RUN:-}" ] || mapfile -t pkgs < <(cd "$e2e" && go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...)
  suite="$(cd "$e2e" && go list .)"
  log "the Go suite: go test -json ${pkgs[*]#"$suite"/} in tests/e2e (log: logs/go-suite.log)"
  # framework.Main brings the cluster up in WORK (the binaries of BIN, the
  # server RAY_WEBHOOK_BIN) and stops it at the end, unless E2E_KEEP=1.
  (cd "$e2e" && env -u E2E_CLUSTER_ENV E2E_WORK="$work" E2E_BIN_DIR="$bin" RAY_WEBHOOK_BIN="$ray_webhook" E2E_IMAGE="$image" \
    E2E_KEEP="$keep" nice -n 10 go test -json -count=1 -p 1 -parallel "$go_parallel" -trimpath -timeout "${E2E_GO_TIMEOUT:-45m}" \
    ${E2E_GO_RUN:+-run "$E2E_GO_RUN"} "${pkgs[@]}") >"$json" 2>"$logs/go-suite.stderr"
  rc=$?
  jq -j 'select(.Action == "output") | .Output' "$json" >"$out" 2>/dev/null
  # The verdicts: the suite's leaves (a test with subtests is not one, unless
  # it failed while none of them did: its own assertion failed), and each
  # other package as a whole.
  while read -r verdict name; do
    [ -n "$name" ] || continue
    case "$verdict" in
      pass) pass "go $name" ;;
      fail) fail "go $name" "$(grep -F -- "$name" "$out" | grep -v -- '--- ' | head -3 | cut -c1-300 | paste -sd ' ' -)" ;;
      skip) fail "go $name" "skipped: $(grep -A2 -F -- "--- SKIP: ${name#unit } " "$out" | tail -2 | paste -sd ' ' -)" ;;
    esac
  done < <(jq -r --arg suite "$suite" -s '
    [ .[] | select(.Action == "pass" or .Action == "fail" or .Action == "skip") ] as $ends
    | ($ends | map(select(.Package == $suite and .Test != null)) | map({(.Test): .Action}) | add // {}) as $v
    | ( $v | to_entries | map(.key) ) as $names
    | ( $names[] as $n
        | ($names | map(select(startswith($n + "/")))) as $kids
        | select(($kids | length) == 0 or ($v[$n] == "fail" and ([$kids[] | $v[.]] | index("fail")) == null))
        | "\($v[$n]) \($n)" ),
      ( $ends[] | select(.Package != $suite and .Test == null and .Action != "skip")
        | "\(.Action) unit \(.Package | sub("^.*/tests/e2e/"; ""))" )' "$json" 2>>"$logs/go-suite.stderr")
  # A test that started but has no verdict: the package died under it.
  while read -r name; do
    [ -n "$name" ] && fail "go $name" "no verdict (the run ended under it: $(tail -3 "$out" | cut -c1-200 | paste -sd ' ' -))"
  done < <(jq -r -s '
    (map(select(.Action == "run")) | map(.Package + " " + .Test)) - (map(select(.Action == "pass" or .Action == "fail" or .Action == "skip") | select(.Test != null)) | map(.Package + " " + .Test))
    | .[] | sub("^[^ ]* "; "")' "$json" 2>/dev/null)
  if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
    fail "go suite" "exit $rc without a failed test: $( (tail -5 "$out"; tail -5 "$logs/go-suite.stderr") | cut -c1-300 | paste -sd ' ' -)"
  fi
  # What a person reads: each test's t.Log lines.
  grep -E '^ +[a-z_]+_test\.go:[0-9]+: ' "$out" | cut -c1-400 | sed 's/^ */     /'
  # The times: from the first top-level test's start to the last one's end
  # (the cluster's bring-up and stop left out), and each top-level test's own.
  jq -r -s --arg suite "$suite" --arg par "$go_parallel" '
    def secs: .Time | sub("\\.[0-9]+"; "") | sub("\\+00:00$"; "Z") | fromdateiso8601;
    [ .[] | select(.Package == $suite and .Test != null and (.Test | contains("/") | not)) ] as $top
    | ($top | map(select(.Action == "run") | secs) | min) as $t0
    | ($top | map(select(.Action == "pass" or .Action == "fail") | secs) | max) as $t1
    | select($t0 != null and $t1 != null)
    | "the tests took \($t1 - $t0) s (-parallel \($par)): "
      + ($top | map(select(.Action == "pass" or .Action == "fail")) | sort_by(-.Elapsed)
         | map("\(.Test) \(.Elapsed | round) s") | join(", "))' "$json" 2>>"$logs/go-suite.stderr" \
    | while read -r line; do log "$line"; done
}

run_go_suite

if [ "$keep" = 1 ]; then
  # Left running for a person to try: the current operator (the newest 1.x release built).
  current="$(operator_releases | grep -v 'v0\.' | sort -V | tail -1)"
  if [ -n "$current" ] && [ -f "$work/processes" ] && "$bin/e2e-cluster" operator --work "$work" --release "$current"; then
    log "operator $current running (logs/operator-$current.log)"
  else
    log "the current operator did not start"
  fi
  kept
fi

for f in "${failures[@]}"; do log "failed: $f"; done
[ "$failed" = 0 ] || log "logs kept in $work/logs"
summary_printed=1
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

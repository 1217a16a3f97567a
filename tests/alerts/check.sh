#!/usr/bin/env bash
# The chart's alerting rules and dashboard, checked with Prometheus's promtool
# (Debian's prometheus package):
#   - `promtool check rules` on charts/ray-webhook/files/alerts.rules.yaml;
#   - `promtool test rules` on tests/alerts/alerts_test.yaml: each alert
#     firing on series that should fire it, silent on those that should not;
#   - every query of charts/ray-webhook/files/dashboard.json parses as PromQL
#     (each becomes a recording rule that promtool checks; Grafana's $job
#     variable stands for a job name).
# Which metrics the queries may name is checked against a running server's
# /metrics (tests/server/test_metrics.py, test_monitoring).
# Prints one PASS or FAIL line per check, then "N passed, M failed".
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
passed=0
failed=0
check() { local what="$1"; shift; if out="$("$@" 2>&1)"; then passed=$((passed + 1)); echo "PASS $what"
  else failed=$((failed + 1)); echo "FAIL $what"; sed 's/^/    /' <<<"$out" | tail -20; fi; }
command -v promtool >/dev/null || { echo "FAIL promtool is not installed (apt-get install prometheus)"; echo "0 passed, 1 failed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL jq is not installed"; echo "0 passed, 1 failed"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

check "promtool check rules: the chart's alerting rules" promtool check rules "$repo/charts/ray-webhook/files/alerts.rules.yaml"
check "promtool test rules: every alert fires and stays silent as tests/alerts/alerts_test.yaml says" \
  bash -c 'cd "$1/tests/alerts" && promtool test rules alerts_test.yaml' _ "$repo"
jq -r '[.panels[].targets[].expr] | to_entries[] | "  - record: dashboard:query\(.key)\n    expr: \(.value | gsub("\\$job"; "ray-webhook") | @json)"' \
  "$repo/charts/ray-webhook/files/dashboard.json" | { echo "groups:"; echo "- name: dashboard"; echo "  rules:"; cat; } >"$work/dashboard.rules.yaml"
n="$(grep -c 'record:' "$work/dashboard.rules.yaml")"
check "every one of the dashboard's $n queries parses as PromQL" promtool check rules "$work/dashboard.rules.yaml"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# Checks that every C++ file of the project is formatted as .clang-format says
# (Google style, 120 columns). `scripts/check-format.sh --fix` reformats them.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format not found (scripts/install-deps.sh --test)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if clang-format --dry-run --Werror "${files[@]}" 2>/tmp/check-format.$$; then
  rm -f /tmp/check-format.$$
  echo "check-format: ${#files[@]} files formatted as .clang-format says"
else
  grep -E '^[^ ].*: (error|warning):' /tmp/check-format.$$ | cut -d: -f1 | sort -u | sed 's/^/check-format: not formatted: /' >&2
  rm -f /tmp/check-format.$$
  echo "check-format: run scripts/check-format.sh --fix" >&2
  exit 1
fi

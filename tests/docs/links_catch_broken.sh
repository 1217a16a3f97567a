#!/usr/bin/env bash
# check_links.py finds what it exists to find: run on the tree of
# tests/fixtures/doc-links (a missing file, a missing anchor, a link out of
# the tree, a reference link, a missing bench/journal/ file, an old item
# citation, and source paths named in code spans that do not exist: a file,
# a brace's alternative, a glob that matches nothing; links in code and to the
# web, placeholders, what a .gitignore lists, code blocks and the journal's
# entries ignored), it fails with exactly the failures listed in
# expected-failures.txt there.
#   links_catch_broken.sh FIXTURE_DIR
set -uo pipefail
# shellcheck source=../deploy/lib.sh
source "$(dirname "$0")/../deploy/lib.sh"
fixture="${1:?usage: links_catch_broken.sh FIXTURE_DIR}"
out="$(python3 "$(dirname "$0")/check_links.py" "$fixture")"
rc=$?
if [ "$rc" = 1 ]; then pass "check_links.py exits 1 on the broken tree"
else fail "check_links.py exits 1 on the broken tree (exit $rc)"; fi
if diff <(grep '^FAIL' <<<"$out") "$fixture/expected-failures.txt"; then
  pass "check_links.py reports exactly the expected failures"
else
  fail "check_links.py reports exactly the expected failures (diff above: got <, expected >)"
fi
if grep -q '^PASS README.md: every bench/journal/ citation exists' <<<"$out"; then
  pass "a citation of an existing bench/journal/ file passes"
else
  fail "a citation of an existing bench/journal/ file passes"
fi
if grep -q '^PASS README.md: every path it names exists' <<<"$out"; then
  pass "a document naming only existing source paths passes"
else
  fail "a document naming only existing source paths passes"
fi
if grep -q '^FAIL docs/guide.md:[0-9]*: names src/edge/http_router.cpp, which does not exist' <<<"$out"; then
  pass "a stale source path named in a document fails"
else
  fail "a stale source path named in a document fails"
fi
finish

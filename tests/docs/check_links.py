#!/usr/bin/env python3
"""The documents' relative links resolve, and so do the sources' citations.

Checks, under ROOT:
  - every relative link of README.md, docs/**/*.md, bench/**/*.md,
    deploy/**/*.md, charts/**/*.md and tests/e2e/README.md (inline
    [text](target) and reference [label]: target) names a file or folder that
    exists, and its #anchor, when it points into a Markdown file, names a
    heading of that file as GitHub renders anchors (an anchor of its own file
    too). Links in code blocks and code spans are not links;
  - every file of bench/journal/ that src/, include/, tests/, scripts/,
    bench/, fuzz/, pgo/ or a checked document cites by its path exists, and
    none of them cites an item of bench/README.md any more (the rounds live
    in bench/journal/).

  check_links.py ROOT

Prints PASS or FAIL per file and "N passed, M failed"; exits 1 on a failure.
"""
import os
import re
import sys
import urllib.parse

DOC_GLOBS = ("README.md", "docs", "bench", "deploy", "charts", "tests/e2e/README.md")
SOURCE_DIRS = ("src", "include", "tests", "scripts", "bench", "fuzz", "pgo")
SKIP_DIRS = {".git", "node_modules", ".bin"}

INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(?:(?!\n\s*\n).)+?\1", re.S)
JOURNAL_CITATION = re.compile(r"bench/journal(?:/[A-Za-z0-9._-]+)?/?")
# Across a line break and the comment marker that starts the next line, too.
OLD_ITEM_CITATION = re.compile(r"bench/README\.md,?(?:\s|#|//|\*)*items?\s+[0-9]")


def walk_files(root, top, suffixes):
    start = os.path.join(root, top)
    if os.path.isfile(start):
        yield start
        return
    for directory, dirs, files in os.walk(start):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if suffixes is None or name.endswith(suffixes):
                yield os.path.join(directory, name)


def prose_lines(text):
    """The lines outside fenced code blocks, with their numbers."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading: the rendered text, lowercased, with
    everything but letters, digits, spaces, hyphens and underscores dropped,
    and spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text)
    text = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors_of(path, cache):
    if path not in cache:
        seen = {}
        anchors = set()
        with open(path, encoding="utf-8") as f:
            for _, line in prose_lines(f.read()):
                m = HEADING.match(line)
                if not m:
                    continue
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                anchors.add(base if n == 0 else f"{base}-{n}")
        cache[path] = anchors
    return cache[path]


def links_of(text):
    """(line, target) of each link; a link's text may run over several lines."""
    kept = dict(prose_lines(text))
    lines = [kept.get(n, "") for n in range(1, len(text.splitlines()) + 1)]
    # Code spans end within their paragraph; blank them, keeping every offset.
    prose = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), "\n".join(lines))
    for m in INLINE_LINK.finditer(prose):
        yield line_of(prose, m.start()), m.group(1)
    for number, line in enumerate(prose.split("\n"), 1):
        m = REFERENCE_LINK.match(line)
        if m:
            yield number, m.group(1)


def broken_links(root, path, cache):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for number, target in links_of(text):
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target):
            continue  # https:, mailto: and other schemes are not files here
        file_part, _, anchor = target.partition("#")
        file_part = urllib.parse.unquote(file_part)
        if file_part.startswith("/"):
            yield number, target, "absolute path (links are relative to the file)"
            continue
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not os.path.realpath(resolved).startswith(os.path.realpath(root) + os.sep):
            yield number, target, "points outside the repository"
        elif not os.path.exists(resolved):
            yield number, target, "no such file"
        elif anchor and resolved.endswith(".md") and os.path.isfile(resolved):
            if urllib.parse.unquote(anchor).lower() not in anchors_of(resolved, cache):
                yield number, target, f"no heading with anchor #{anchor} in {os.path.relpath(resolved, root)}"


def sources_of(root):
    for top in SOURCE_DIRS:
        if os.path.isdir(os.path.join(root, top)):
            for path in walk_files(root, top, None):
                if "/fixtures/" not in "/" + os.path.relpath(path, root):
                    yield path


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    passed = failed = 0
    cache = {}

    docs = []
    for top in DOC_GLOBS:
        if os.path.exists(os.path.join(root, top)):
            docs.extend(walk_files(root, top, (".md",)))
    for path in sorted(set(docs)):
        rel = os.path.relpath(path, root)
        problems = list(broken_links(root, path, cache))
        for number, target, why in problems:
            print(f"FAIL {rel}:{number}: link ({target}): {why}")
        if problems:
            failed += 1
        else:
            passed += 1
            print(f"PASS {rel}: every relative link resolves")

    for path in sorted(set(docs) | set(sources_of(root))):
        rel = os.path.relpath(path, root)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        problems = []
        for m in JOURNAL_CITATION.finditer(text):
            cited = m.group(0).rstrip(".")
            if cited.endswith("/") or os.path.isfile(os.path.join(root, cited)):
                continue
            if cited == "bench/journal" and os.path.isdir(os.path.join(root, cited)):
                continue
            problems.append(f"{rel}:{line_of(text, m.start())}: cites {cited}, which does not exist")
        for m in OLD_ITEM_CITATION.finditer(text):
            problems.append(f"{rel}:{line_of(text, m.start())}: cites an item of bench/README.md; "
                            "cite its file in bench/journal/")
        for p in problems:
            print(f"FAIL {p}")
        if problems:
            failed += 1
        elif "bench/journal/" in text:
            passed += 1
            print(f"PASS {rel}: every bench/journal/ citation exists")

    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()

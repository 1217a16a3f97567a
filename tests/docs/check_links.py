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
    in bench/journal/);
  - every path of the repository that docs/**/*.md and the README.md files
    name in a code span (`src/...`, `include/...`, `tests/...`, `scripts/...`,
    `bench/...`, `deploy/...`, `charts/...`, `fuzz/...`, `pgo/...`,
    `docs/...`; the first word of the span, so a command's arguments do not
    count) exists, from the repository's root. A glob (`src/core/*.cpp`)
    must match something, and each alternative of a brace (`{a,b}`) too; a
    span with a placeholder (`<name>`, `$VAR`, `@NAME@`, `...`, `X.Y`, `PID`)
    or naming what a build or a script writes (a path that a .gitignore on
    its way lists, such as build/) is not checked. The journal's entries
    keep the paths of their day and are not checked.

  check_links.py ROOT

Prints PASS or FAIL per file and "N passed, M failed"; exits 1 on a failure.
"""
import fnmatch
import glob
import os
import re
import sys
import urllib.parse

DOC_GLOBS = ("README.md", "docs", "bench", "deploy", "charts", "tests/e2e/README.md")
SOURCE_DIRS = ("src", "include", "tests", "scripts", "bench", "fuzz", "pgo")
SKIP_DIRS = {".git", "node_modules", ".bin"}
PATH_PREFIXES = ("src", "include", "tests", "scripts", "bench", "deploy", "charts", "fuzz", "pgo", "docs")

INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(?:(?!\n\s*\n).)+?\1", re.S)
JOURNAL_CITATION = re.compile(r"bench/journal(?:/[A-Za-z0-9._-]+)?/?")
# The repository's paths a code span names, as its first word.
NAMED_PATH = re.compile(r"^(?:%s)/\S*$" % "|".join(PATH_PREFIXES))
PLACEHOLDER = re.compile(r"[<>$@%]|\.\.\.|\u2026|X\.Y|\bN\b|PID|NAME")
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


def path_checked(path, root):
    """Whether the documents' named source paths are checked in PATH: docs/
    and the README.md files, not the journal's entries."""
    rel = os.path.relpath(path, root)
    return rel.startswith("docs" + os.sep) or os.path.basename(rel) == "README.md"


def expand_braces(pattern):
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out = []
    for alternative in m.group(1).split(","):
        out.extend(expand_braces(pattern[:m.start()] + alternative + pattern[m.end():]))
    return out


def named_paths(text):
    """(line, path) of each repository path a code span of the prose names."""
    kept = dict(prose_lines(text))
    prose = "\n".join(kept.get(n, "") for n in range(1, len(text.splitlines()) + 1))
    for m in CODE_SPAN.finditer(prose):
        words = m.group(0).strip("`").split()
        if not words:
            continue
        word = words[0].rstrip(".,;:)")
        word = re.sub(r":[0-9].*$", "", word)  # a line number
        if not NAMED_PATH.match(word) or PLACEHOLDER.search(word):
            continue
        yield line_of(prose, m.start()), word


def ignored(root, rel):
    """Whether a .gitignore of ROOT or of a folder on REL's way lists REL or
    one of its folders (plain names and folder-relative paths, a trailing /
    for folders only; no negation): what a build or a script writes, absent
    from a clean clone."""
    parts = rel.rstrip("/").split("/")
    # Which of REL's leading parts are folders: all but the last, unless REL ends with /.
    folders = len(parts) if rel.endswith("/") else len(parts) - 1
    for depth in range(len(parts)):
        try:
            with open(os.path.join(root, *parts[:depth], ".gitignore"), encoding="utf-8") as f:
                patterns = [l.strip() for l in f if l.strip() and not l.startswith(("#", "!"))]
        except OSError:
            continue
        for pattern in patterns:
            folder_only = pattern.endswith("/")
            pattern = pattern.rstrip("/")
            anchored = "/" in pattern
            pattern = pattern.lstrip("/")
            for end in range(depth + 1, len(parts) + 1):
                if folder_only and end > folders:
                    break
                if anchored:
                    hit = fnmatch.fnmatchcase("/".join(parts[depth:end]), pattern)
                else:
                    hit = fnmatch.fnmatchcase(parts[end - 1], pattern)
                if hit:
                    return True
    return False


def missing_paths(root, text):
    """(line, path, why) of each path TEXT names that is not in ROOT."""
    for number, word in named_paths(text):
        if ignored(root, word):
            continue
        for alternative in expand_braces(word):
            if any(c in alternative for c in "*?["):
                if not glob.glob(os.path.join(root, alternative)):
                    yield number, alternative, "matches nothing"
            elif not os.path.exists(os.path.join(root, alternative)):
                yield number, alternative, "does not exist"


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

    for path in sorted(p for p in set(docs) if path_checked(p, root)):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        problems = list(missing_paths(root, text))
        for number, named, why in problems:
            print(f"FAIL {rel}:{number}: names {named}, which {why}")
        if problems:
            failed += 1
        elif any(True for _ in named_paths(text)):
            passed += 1
            print(f"PASS {rel}: every path it names exists")

    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()

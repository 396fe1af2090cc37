#!/usr/bin/env python3
"""docs/architecture.md is the whole map: every file under src/ is named
in it (by its path, or by its name in a row of the same folder's files),
and every src/ path it names exists.

Usage: check-architecture.py [REPO]
"""
import os
import re
import sys


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    repo = os.path.normpath(repo)
    with open(os.path.join(repo, "docs", "architecture.md"), encoding="utf-8") as f:
        doc = f.read()
    named = set()
    for line in doc.splitlines():
        if line.startswith("| `src/"):
            # a row of the file table: its first cell names a folder's
            # files, `src/x/a.c`, `b.c` -> src/x/b.c
            folder = None
            for p in re.findall(r"`([^`\s]+)`", line.split("|")[1]):
                if p.startswith("src/"):
                    folder = os.path.dirname(p)
                    named.add(p)
                elif folder:
                    named.add(folder + "/" + p)
        else:
            named.update(p for p in re.findall(r"`(src/[^`\s]+)`", line)
                         if not re.search(r"[<*]", p))
    errors = []
    files = []
    for dirpath, _, names in os.walk(os.path.join(repo, "src")):
        for name in names:
            files.append(os.path.relpath(os.path.join(dirpath, name), repo)
                         .replace(os.sep, "/"))
    for rel in sorted(files):
        if rel not in named:
            errors.append("docs/architecture.md does not name %s" % rel)
    for rel in sorted(named):
        if not os.path.exists(os.path.join(repo, rel)):
            errors.append("docs/architecture.md names %s, which does not exist" % rel)
    if not files:
        errors.append("no files found under %s/src" % repo)
    for e in errors:
        print(e, file=sys.stderr)
    print("%d files under src/, %d named" % (len(files), len(named)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

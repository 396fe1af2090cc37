#!/usr/bin/env python3
"""The house rules of src/ that a compiler does not check:

- no C file over 800 lines, no function over 100 (a function is counted
  from the line of its opening brace in column 0 to its closing one);
- each third-party library is used from one file (its headers included
  there and nowhere else);
- the core and the CLI include only the C standard library's headers and
  their own: OS calls live in src/platform.

Usage: check-source.py [SRC]   (default: the src/ beside tests/)
"""
import os
import re
import sys

MAX_FILE = 800
MAX_FUNCTION = 100
# header prefix -> the one file that may include it
THIRD_PARTY = {
    "archive.h": "src/core/archive-lib.c",
    "archive_entry.h": "src/core/archive-lib.c",
    "cjson/": "src/core/manifest.c",
    "openssl/": "src/core/hash.c",
    "curl/": "src/platform/posix/http-posix.c",
    "lzma.h": "src/core/xz.c",
}
STANDARD_C = {
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h",
    "locale.h", "math.h", "setjmp.h", "signal.h", "stdarg.h", "stdbool.h",
    "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "time.h",
    "wchar.h",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>')


def functions(lines):
    """(name line, first line, last line) of each top-level brace block."""
    start = None
    for i, line in enumerate(lines):
        if line.startswith("{") and start is None:
            start = i
        elif line.startswith("}") and start is not None:
            yield start, i
            start = None


def check(src):
    errors = []
    seen = 0
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = "src/" + os.path.relpath(path, src).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            seen += 1
            if name.endswith(".c") and len(lines) - 1 > MAX_FILE:
                errors.append("%s: %d lines (at most %d): split it by concern"
                              % (rel, len(lines) - 1, MAX_FILE))
            for first, last in functions(lines):
                if last - first + 1 > MAX_FUNCTION and name.endswith(".c"):
                    j = first - 1
                    while j >= 0 and "(" not in lines[j]:
                        j -= 1
                    errors.append("%s:%d: %s is %d lines (at most %d)"
                                  % (rel, first + 1, lines[j].strip()[:50],
                                     last - first + 1, MAX_FUNCTION))
            for n, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                owner = next((f for p, f in THIRD_PARTY.items()
                              if header == p or (p.endswith("/") and header.startswith(p))),
                             None)
                if owner and rel != owner:
                    errors.append("%s:%d: <%s> is %s's alone" % (rel, n, header, owner))
                elif (not owner and rel.startswith(("src/core/", "src/cli/"))
                      and header not in STANDARD_C):
                    errors.append("%s:%d: <%s> is an OS header: OS calls go "
                                  "in src/platform" % (rel, n, header))
    if not seen:
        errors.append("%s: no C sources found" % src)
    return errors, seen


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    errors, seen = check(os.path.normpath(src))
    for e in errors:
        print(e, file=sys.stderr)
    print("%d source files checked" % seen)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

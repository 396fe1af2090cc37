#!/usr/bin/env python3
"""verify --python's frameworks are one list: the names in frameworks[]
of src/core/verify-python.c are the probe's LOADERS
(src/core/pyprobe.py --list), in the same order, so that a framework the
C side runs has a loader and none is left out quietly."""
import os
import re
import subprocess
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    with open(os.path.join(REPO, "src", "core", "verify-python.c"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"frameworks\[\]\s*=\s*\{([^}]*)\}", text)
    c_names = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    out = subprocess.run([sys.executable, os.path.join(REPO, "src", "core", "pyprobe.py"),
                          "--list"], check=True, stdout=subprocess.PIPE, text=True).stdout
    probe = out.strip().split("\t") if out.strip() else []
    errors = []
    if not c_names:
        errors.append("verify-python.c: no frameworks[] list found")
    if not probe:
        errors.append("pyprobe.py --list printed no framework")
    if c_names != probe:
        errors.append("verify-python.c lists %s, pyprobe.py's LOADERS %s" % (c_names, probe))
    for e in errors:
        print(e, file=sys.stderr)
    print("%d frameworks" % len(c_names))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

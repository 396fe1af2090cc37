#!/usr/bin/env python3
"""scripts/deps.lock pins every source package the Windows and release
builds build (each `dep PACKAGE RECIPE` line of scripts/build-windows.sh
and scripts/release.sh), once, with a Debian version and a SHA-256; and
scripts/test.sh does not pass a run whose libraries could not be fetched
(exit 75) unless CUDNNCTL_ALLOW_UNFETCHED=1."""
import os
import re
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
VERSION = re.compile(r"^(\d+:)?[0-9][A-Za-z0-9.+~-]*$")


def read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


def main():
    errors = []
    lock = {}
    for n, line in enumerate(read("scripts/deps.lock").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or not VERSION.match(parts[1]) or \
                not re.fullmatch(r"[0-9a-f]{64}", parts[2]):
            errors.append("scripts/deps.lock:%d: not 'package version sha256': %s" % (n, line))
            continue
        if parts[0] in lock:
            errors.append("scripts/deps.lock:%d: %s pinned twice" % (n, parts[0]))
        lock[parts[0]] = parts[1]
    used = set()
    for script in ("scripts/build-windows.sh", "scripts/release.sh"):
        for pkg in re.findall(r"^dep (\S+) \S+$", read(script), re.M):
            used.add(pkg)
            if pkg not in lock:
                errors.append("%s builds %s, which scripts/deps.lock does not pin"
                              % (script, pkg))
    if not used:
        errors.append("no `dep PACKAGE RECIPE` line found in the build scripts")
    for pkg in sorted(set(lock) - used):
        errors.append("scripts/deps.lock pins %s, which no build script builds" % pkg)
    test_sh = read("scripts/test.sh")
    # every exit 75 handled (the Windows build, the Wine 10 chroot, the
    # release) fails the run unless it is allowed
    allowed = test_sh.count('[ "${CUDNNCTL_ALLOW_UNFETCHED:-0}" = 1 ] || status=1')
    if allowed < 2 or allowed != len(re.findall(r'" = 75 \]', test_sh)):
        errors.append("scripts/test.sh: exit 75 of the Windows, Wine 10 or release build "
                      "is not a failure without CUDNNCTL_ALLOW_UNFETCHED=1")
    for e in errors:
        print(e, file=sys.stderr)
    print("%d packages pinned, %d built" % (len(lock), len(used)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

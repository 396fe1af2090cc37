#!/usr/bin/env python3
"""The built-in manifests are NVIDIA's files byte for byte.

Every manifests/*.json must have a line in manifests/SOURCES.txt, and its
SHA-256 must be the one that line records (copied from NVIDIA's redist
server through the repositories SOURCES.txt names; never re-serialised).
A line for a file that is not there fails too.
"""
import hashlib
import pathlib
import re
import sys

repo = pathlib.Path(__file__).resolve().parent.parent
mdir = repo / "manifests"
recorded = {}
for line in (mdir / "SOURCES.txt").read_text().splitlines():
    m = re.match(r"^(redistrib_[0-9.]+\.json)\s+[0-9a-f]{40}\s", line)
    if not m:
        continue
    sums = re.findall(r"\b[0-9a-f]{64}\b", line)
    if len(sums) != 1:
        print(f"manifests/SOURCES.txt: {m.group(1)}: expected one SHA-256 on its line, found {len(sums)}")
        sys.exit(1)
    recorded[m.group(1)] = sums[0]

bad = 0
files = sorted(p.name for p in mdir.glob("*.json"))
for name in files:
    got = hashlib.sha256((mdir / name).read_bytes()).hexdigest()
    want = recorded.get(name)
    if want is None:
        print(f"manifests/{name}: not in manifests/SOURCES.txt (where did it come from?)")
        bad += 1
    elif got != want:
        print(f"manifests/{name}: SHA-256 {got}, SOURCES.txt records {want}: "
              "not NVIDIA's bytes (re-serialised or edited?)")
        bad += 1
for name in sorted(set(recorded) - set(files)):
    print(f"manifests/SOURCES.txt: {name} is listed but manifests/{name} is missing")
    bad += 1
if bad:
    sys.exit(1)
print(f"{len(files)} manifests match the SHA-256 recorded in SOURCES.txt")

#!/usr/bin/env python3
"""docs/exit-codes.md against the binary: every code `cudnnctl version
--json` lists has a row with its status, and every row names codes the
binary has, with their status.  Reading nothing is a failure, not a pass.

Usage: check-docs.py CUDNNCTL [DOC]   (DOC: docs/exit-codes.md)
       check-docs.py --self-test CUDNNCTL
       (the check itself: the real table passes; a table of no rows, a
       row for a code that does not exist, a missing row and a wrong
       status each fail)
"""
import json
import os
import re
import subprocess
import sys

ROW = re.compile(r"^\| (\d+) \| ([A-Z_ /]+) \|")


def doc_rows(path):
    """{name without the E: status} from the table's rows."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            for name in m.group(2).split("/"):
                name = name.strip()
                rows[name[1:] if name.startswith("E") and name != "OK"
                     else name] = int(m.group(1))
    return rows


def check(binary, doc):
    out = subprocess.run([binary, "version", "--json"], check=True,
                         stdout=subprocess.PIPE).stdout
    codes = json.loads(out)["exit_codes"]
    rows = doc_rows(doc)
    errors = []
    if not codes:
        errors.append("%s version --json lists no exit codes" % binary)
    if not rows:
        errors.append("%s: no table row read" % doc)
    for name, status in sorted(codes.items()):
        if rows.get(name) != status:
            errors.append("%s: no row for E%s (exit %d)" % (doc, name, status))
    for name, status in sorted(rows.items()):
        if name == "OK":
            if status != 0:
                errors.append("%s: OK is not exit 0" % doc)
        elif codes.get(name) != status:
            errors.append("%s: row E%s (exit %d) is no code of the binary's"
                          % (doc, name, status))
    return errors


def self_test(binary, doc):
    import tempfile
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    rows = [l for l in text.splitlines(True) if ROW.match(l)]
    mutations = {
        "no rows": "".join(l for l in text.splitlines(True)
                           if not ROW.match(l)),
        "a code that does not exist":
            text + "| 99 | EBOGUS | not a code | |\n",
        "a missing row": text.replace(rows[-1], ""),
        "a wrong status": text.replace("| 9 | ELOCKED |", "| 19 | ELOCKED |"),
    }
    failures = 0
    if check(binary, doc):
        print("self-test: the real table fails", file=sys.stderr)
        failures += 1
    with tempfile.TemporaryDirectory() as tmp:
        for what, body in mutations.items():
            path = os.path.join(tmp, "exit-codes.md")
            with open(path, "w", encoding="utf-8") as f:
                f.write(body)
            if body == text or not check(binary, path):
                print("self-test: a table with %s passes" % what,
                      file=sys.stderr)
                failures += 1
            else:
                print("ok: a table with %s fails" % what)
    return 1 if failures else 0


def main():
    default_doc = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "..", "docs", "exit-codes.md")
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        return self_test(sys.argv[2], default_doc)
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    doc = sys.argv[2] if len(sys.argv) == 3 else default_doc
    errors = check(sys.argv[1], doc)
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

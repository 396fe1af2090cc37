#!/usr/bin/env python3
"""ctest registers one entry per "class Test...(" of each Python test file
(tests/CMakeLists.txt, cctl_py_entries): a test method in a class whose
name does not start with Test would never run.  This fails on one."""
import ast
import glob
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))


def main():
    errors = []
    files = sorted(glob.glob(os.path.join(TESTS, "*", "test_*.py")))
    for path in files:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in tree.body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("Test"):
                continue
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    errors.append("%s:%d: %s.%s is in a class ctest does not run"
                                  % (os.path.relpath(path, TESTS), item.lineno,
                                     node.name, item.name))
    if not files:
        errors.append("no test files found under %s" % TESTS)
    for e in errors:
        print(e, file=sys.stderr)
    print("%d test files checked" % len(files))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

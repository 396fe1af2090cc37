#!/usr/bin/env python3
"""ctest registers one entry per "class Test...(" of each Python test file
(tests/CMakeLists.txt, cctl_py_entries): a test method in a class whose
name does not start with Test would never run.  This fails on one.

The archives the suites install come from one place, tests/lib/fixtures.py:
this also fails on a class Fixtures defined anywhere else under tests/, or
an archive packed there with mkcudnn_pack."""
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
    errors += one_fixture_path()
    for e in errors:
        print(e, file=sys.stderr)
    print("%d test files checked" % len(files))
    return 1 if errors else 0


def one_fixture_path():
    errors = []
    home = os.path.join(TESTS, "lib", "fixtures.py")
    for path in sorted(glob.glob(os.path.join(TESTS, "**", "*.py"), recursive=True)):
        if path == home:
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        where = os.path.relpath(path, TESTS)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "Fixtures":
                errors.append("%s:%d: a Fixtures class outside lib/fixtures.py"
                              % (where, node.lineno))
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "mkcudnn_pack"):
                errors.append("%s:%d: an archive packed outside lib/fixtures.py (use FX)"
                              % (where, node.lineno))
    return errors


if __name__ == "__main__":
    sys.exit(main())

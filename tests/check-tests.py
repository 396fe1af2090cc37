#!/usr/bin/env python3
"""ctest registers one entry per "class Test...(" of each Python test file
(tests/CMakeLists.txt, cctl_py_entries): a test method in a class whose
name does not start with Test would never run.  This fails on one.

The archives the suites install come from one place, tests/lib/fixtures.py:
this also fails on a class Fixtures defined anywhere else under tests/, or
an archive packed there with mkcudnn_pack.

Cases shared between platforms live in tests/lib/*_cases.py, in classes
named ...Cases that the test files mix into their Test classes: this fails
on such a class that holds no test, or that no Test class has as a base."""
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
    errors += cases_used(files)
    for e in errors:
        print(e, file=sys.stderr)
    print("%d test files checked" % len(files))
    return 1 if errors else 0


def cases_used(files):
    """Each ...Cases class of tests/lib/*_cases.py has tests and is a base
    of a Test class in at least one test file."""
    errors, bases = [], set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                bases.update(getattr(b, "id", getattr(b, "attr", None)) for b in node.bases)
    shared = sorted(glob.glob(os.path.join(TESTS, "lib", "*_cases.py")))
    for path in shared:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        where = os.path.relpath(path, TESTS)
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)
                   and n.name.endswith("Cases")]
        if not classes:
            errors.append("%s: no ...Cases class" % where)
        for node in classes:
            if not any(isinstance(i, ast.FunctionDef) and i.name.startswith("test")
                       for i in node.body):
                errors.append("%s:%d: %s holds no test" % (where, node.lineno, node.name))
            if node.name not in bases:
                errors.append("%s:%d: %s is a base of no Test class: its tests never run"
                              % (where, node.lineno, node.name))
    return errors


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

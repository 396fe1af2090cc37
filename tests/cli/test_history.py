#!/usr/bin/env python3
"""<root>/history.jsonl and `cudnnctl history`, `switch -`: a line per
change (install, switch, uninstall, deactivate...) with the time, user,
host, command line, the active version before and after and the
archive's SHA-256; none for a refusal; a damaged line skipped with a
warning.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import json
import re
import os
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401


class TestHistory(CliTest):
    fixtures = ("v9_txz", "v914_txz")
    V19, V14 = "9.19.0.99-cuda13", "9.14.0.99-cuda12"

    def history(self, *args):
        return self.ok("history", "--json", *args).json()["changes"]

    def test_a_sequence_of_changes_and_switch_back(self):
        self.install("v9_txz")
        self.install("v914_txz", "--no-activate")
        self.ok("switch", "9.14")
        r = self.ok("switch", "-")
        self.assertIn("%s -> %s" % (self.V14, self.V19), r.out)
        self.ok("switch", "-")  # and back again, as cd - does
        self.assertEqual(self.active_id(), self.V14)
        self.ok("switch", "-")
        self.ok("uninstall", "9.14")
        got = [(c["command"], c["from"], c["to"], c["ok"]) for c in self.history()]
        self.assertEqual(got, [
            ("install", None, self.V19, True),
            ("install", self.V19, self.V19, True),
            ("switch", self.V19, self.V14, True),
            ("switch", self.V14, self.V19, True),
            ("switch", self.V19, self.V14, True),
            ("switch", self.V14, self.V19, True),
            ("uninstall", self.V19, self.V19, True)])
        first = self.history()[0]
        self.assertEqual(first["sha256"], sha256_file(FX.pack("v9_txz")[0]))
        self.assertTrue(first["args"].startswith("cudnnctl install "), first)
        self.assertRegex(first["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(first["host"], socket.gethostname())
        self.assertTrue(first["user"])
        self.assertIsNone(self.history()[2]["sha256"])  # a switch installs nothing
        # the last N; the table
        self.assertEqual([c["command"] for c in self.history("-n", "2")], ["switch", "uninstall"])
        r = self.ok("history")
        self.assertRegex(r.out, r"(?m)^TIME +USER +FROM +TO +COMMAND$")
        # (the tests' cudnnctl gets --root and --no-verify first)
        self.assertRegex(r.out, r"(?m)^\S+Z +\S+ +%s +%s +cudnnctl switch .*9\.14$"
                         % (re.escape(self.V19), re.escape(self.V14)))

    def test_a_refusal_writes_nothing(self):
        self.install("v9_txz")
        with self.unchanged():
            self.fails(EXIT["NOTFOUND"], "switch", "9.2")
            self.fails(EXIT["ACTIVE"], "uninstall", "9.19")
        self.assertEqual(len(self.history()), 1)

    def test_nothing_to_go_back_to(self):
        self.install("v9_txz")
        self.fails(EXIT["NOTFOUND"], "switch", "-", words=("no earlier active version",))

    def test_a_damaged_line_is_skipped(self):
        self.install("v9_txz")
        path = os.path.join(self.root, "history.jsonl")
        with open(path, "a") as f:
            f.write('{"time":"2026-12-01T00:00:00Z","command":"swi\n')  # cut short
            f.write("not json at all\n")
        self.install("v914_txz", "--no-activate")
        r = self.ok("history", "--json")
        doc = r.json()
        self.assertEqual(doc["skipped"], 2)
        self.assertEqual([c["command"] for c in doc["changes"]], ["install", "install"])
        self.assertIn("2 damaged lines skipped", r.err)


if __name__ == "__main__":
    unittest.main()

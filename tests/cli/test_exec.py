#!/usr/bin/env python3
"""End-to-end tests of cudnnctl exec on Linux: the command replaces
cudnnctl (its arguments, stdin, exit status and signals are its own) with
the version's lib folder first on LD_LIBRARY_PATH, CUDNN_PATH, LIBRARY_PATH
and CPATH set, and nothing of the root, HOME or the profiles changed.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import json
import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401

# prints its arguments and the variables exec sets, as JSON
SHOW = ("import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'env': {k: "
        "os.environ.get(k) for k in ('LD_LIBRARY_PATH', 'CUDNN_PATH', 'LIBRARY_PATH', "
        "'CPATH', 'KEEP')}}))")


class TestExec(CliTest):
    fixtures = ("v9_txz", "v914_txz")
    V19, V14 = "9.19.0.99-cuda13", "9.14.0.99-cuda12"

    def setUp(self):
        super().setUp()
        self.install("v9_txz")
        self.install("v914_txz", "--no-activate")

    def show(self, *before, env=None):
        r = self.ok("exec", *before, "--", sys.executable, "-c", SHOW, "a b", 'c"d', "",
                    "--json", env=env)
        return json.loads(r.out)

    def lib(self, vid):
        return os.path.join(self.root, "versions", vid, "lib")

    def test_active_version_first_and_nothing_changed(self):
        with self.unchanged():
            doc = self.show(env={"LD_LIBRARY_PATH": "/opt/other/lib", "KEEP": "kept"})
        # the arguments arrive as given: spaces, quotes, an empty one, an
        # option of the command's own (--json is not cudnnctl's after --)
        self.assertEqual(doc["argv"], ["a b", 'c"d', "", "--json"])
        env = doc["env"]
        self.assertEqual(env["LD_LIBRARY_PATH"], self.lib(self.V19) + ":/opt/other/lib")
        self.assertEqual(env["CUDNN_PATH"], os.path.join(self.root, "versions", self.V19))
        self.assertEqual(env["LIBRARY_PATH"], self.lib(self.V19))
        self.assertEqual(env["CPATH"], os.path.join(self.root, "versions", self.V19, "include"))
        self.assertEqual(env["KEEP"], "kept")

    def test_a_version_that_is_not_active(self):
        with self.unchanged():
            doc = self.show("9.14")
            self.assertEqual(doc["env"]["LD_LIBRARY_PATH"], self.lib(self.V14))
            doc = self.show("9", "--cuda", "12")
            self.assertEqual(doc["env"]["CUDNN_PATH"],
                             os.path.join(self.root, "versions", self.V14))
        self.assertEqual(self.active_id(), self.V19)

    def test_exit_status_and_signal_are_the_commands(self):
        r = self.run_cli("exec", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
        self.assertEqual((r.rc, r.out, r.err), (7, "out\n", "err\n"), r)
        # the command is the process: a signal that ends it ends "cudnnctl"
        r = self.run_cli("exec", "--", "sh", "-c", "kill -TERM $$")
        self.assertEqual(r.rc, -signal.SIGTERM, r)

    def test_stdin_is_the_commands(self):
        cmd = cli_command(clitest.CLI, ("exec", "--", "cat"), self.root)
        p = subprocess.run(cmd, input=b"line one\nline two\n", capture_output=True,
                           env=self.env, timeout=60)
        self.assertEqual((p.returncode, p.stdout), (0, b"line one\nline two\n"), p)

    def test_missing_command_names_path(self):
        with self.unchanged():
            r = self.fails(EXIT["NOCOMMAND"], "exec", "--", "no-such-command-here",
                           env={"PATH": "/usr/bin:/bin"},
                           words=("'no-such-command-here' was not found", "/usr/bin:/bin"))
        self.assertEqual(r.rc, 127)
        self.fails(EXIT["NOCOMMAND"], "exec", "--", os.path.join(self.tmp, "nope"),
                   words=("does not exist",))
        notexe = os.path.join(self.tmp, "plain.txt")
        self.write(notexe, "not a program\n")
        r = self.fails(EXIT["CANNOTRUN"], "exec", "--", notexe, words=("cannot run",))
        self.assertEqual(r.rc, 126)

    def test_not_installed_names_the_install_command(self):
        with self.unchanged():
            self.fails(EXIT["NOTFOUND"], "exec", "9.2", "--", "true",
                       words=("not installed", "cudnnctl install 9.2"))

    def test_usage(self):
        self.fails(EXIT["USAGE"], "exec", "--", words=("a command after '--'",))
        self.fails(EXIT["USAGE"], "exec", "true", words=("needs '--'",))
        self.fails(EXIT["USAGE"], "exec", "--json", "--", "true", words=("no --json",))

    def test_no_active_version_and_none_named(self):
        self.ok("deactivate")
        self.fails(EXIT["NOTFOUND"], "exec", "--", "true",
                   words=("no VERSION given", "cudnnctl exec VERSION -- COMMAND"))
        # a named one still runs
        self.assertEqual(self.show("9.19")["env"]["LD_LIBRARY_PATH"], self.lib(self.V19))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""End-to-end tests of cudnnctl exec on Linux: the command replaces
cudnnctl (its arguments, stdin, exit status and signals are its own) with
the version's lib folder first on LD_LIBRARY_PATH, CUDNN_PATH, LIBRARY_PATH
and CPATH set, and nothing of the root, HOME or the profiles changed; and
the version that applies in a folder (which, pin, .cudnn-version,
CUDNNCTL_VERSION, install with no argument).

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import json
import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from redist_server import build_mirror  # noqa: E402
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401

# prints its arguments and the variables exec sets, as JSON
SHOW = ("import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'env': {k: "
        "os.environ.get(k) for k in ('LD_LIBRARY_PATH', 'CUDNN_PATH', 'LIBRARY_PATH', "
        "'CPATH', 'KEEP')}}))")


class TwoInstalled(CliTest):
    """9.19 installed and active, 9.14 installed beside it."""
    fixtures = ("v9_txz", "v914_txz")
    V19, V14 = "9.19.0.99-cuda13", "9.14.0.99-cuda12"

    def setUp(self):
        super().setUp()
        self.install("v9_txz")
        self.install("v914_txz", "--no-activate")


class TestExec(TwoInstalled):

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

    def test_env_version_prints_that_versions_set_up(self):
        with self.unchanged():
            r = self.ok("env", "--version", "9.14")
            doc = self.ok("env", "--version", "9.14", "--json").json()
        self.assertIn("export LD_LIBRARY_PATH='%s" % self.lib(self.V14), r.out)
        self.assertEqual(doc["set"]["CUDNN_PATH"], os.path.join(self.root, "versions", self.V14))
        self.fails(EXIT["NOTFOUND"], "env", "--version", "9.2", words=("cudnnctl install 9.2",))

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

    def test_install_first(self):
        """--install: a version not installed is installed from the mirror
        (not activated: the active one, the profiles and current stay),
        then the command runs with it; installed already, nothing is
        fetched.  Without --install the hint names it."""
        mirror = os.path.join(self.tmp, "mirror")
        build_mirror(mirror, [FX.release("c13")])
        cache = os.path.join(self.tmp, "cache")
        r = self.fails(EXIT["NOTFOUND"], "exec", "9.90", "--", "true",
                       words=("cudnnctl exec --install 9.90 -- ...",))
        with self.unchanged(self.home, only=True):  # no profile lines
            r = self.ok("exec", "--install", "9.90", "--mirror", mirror, "--cache", cache, "--",
                        sys.executable, "-c", SHOW)
        self.assertIn("installed 9.90.0.1-cuda13 into %s" % self.root, r.err)
        doc = json.loads(r.out)  # stdout is the command's alone
        self.assertEqual(doc["env"]["LD_LIBRARY_PATH"], self.lib("9.90.0.1-cuda13"))
        self.assertEqual(self.active_id(), self.V19)
        # again: installed, so no fetch (an empty mirror would fail one)
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        r = self.ok("exec", "--install", "9.90", "--mirror", empty, "--offline", "--", "true")
        self.assertNotIn("installed", r.err)
        # a version no manifest knows: install's error, the command not run
        self.fails(EXIT["NORELEASE"], "exec", "--install", "9.77", "--mirror", mirror,
                   "--cache", cache, "--", "touch", os.path.join(self.tmp, "ran"))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "ran")))

    def test_install_first_into_no_root(self):
        """exec --install on a machine with no root yet makes it."""
        mirror = os.path.join(self.tmp, "mirror")
        build_mirror(mirror, [FX.release("c13")])
        fresh = os.path.join(self.tmp, "fresh-root")
        r = self.run_cli("exec", "--install", "9.90", "--mirror", mirror, "--cache",
                         os.path.join(self.tmp, "cache"), "--", "sh", "-c",
                         'printf %s "$CUDNN_PATH"', root=fresh)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.out, os.path.join(fresh, "versions", "9.90.0.1-cuda13"))
        # without --install a missing root is the error it always was
        self.fails(EXIT["NOTFOUND"], "exec", "--", "true",
                   root=os.path.join(self.tmp, "none"), words=("does not exist",))

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


class TestPin(TwoInstalled):
    """The version that applies in a folder: the command line >
    CUDNNCTL_VERSION > the nearest .cudnn-version from the folder up > the
    active version; which says which and why, exec and install follow it."""

    def setUp(self):
        super().setUp()
        self.proj = os.path.join(self.tmp, "proj")
        self.sub = os.path.join(self.proj, "src", "deep")
        os.makedirs(self.sub)

    def which(self, *args, cwd=None, env=None):
        return self.ok("which", *args, "--json", cwd=cwd or self.sub, env=env).json()

    def test_precedence(self):
        # nothing pinned: the active version
        doc = self.which()
        self.assertEqual((doc["id"], doc["source"], doc["file"]),
                         (self.V19, "the active version", None))
        # a pin file above: it wins over the active version
        pin = os.path.join(self.proj, ".cudnn-version")
        self.write(pin, "# the version CI tested\n\n9.14   # for CUDA 12\n")
        doc = self.which()
        self.assertEqual((doc["id"], doc["source"], doc["file"]), (self.V14, pin, pin))
        self.assertEqual(self.ok("which", cwd=self.sub).out, "%s, set by %s\n" % (self.V14, pin))
        # a nearer one wins over it
        near = os.path.join(self.sub, ".cudnn-version")
        self.write(near, "9.19 cuda13\n")
        self.assertEqual(self.which()["id"], self.V19)
        self.assertEqual(self.which()["file"], near)
        os.remove(near)
        # CUDNNCTL_VERSION over the file; the command line over both
        doc = self.which(env={"CUDNNCTL_VERSION": "9.19"})
        self.assertEqual((doc["id"], doc["source"]), (self.V19, "CUDNNCTL_VERSION"))
        doc = self.which("9.14", env={"CUDNNCTL_VERSION": "9.19"})
        self.assertEqual((doc["id"], doc["source"]), (self.V14, "the command line"))
        # exec follows the same choice, and changes nothing
        with self.unchanged():
            r = self.ok("exec", "--", "sh", "-c", 'echo "$CUDNN_PATH"', cwd=self.sub)
        self.assertEqual(r.out.strip(), os.path.join(self.root, "versions", self.V14))
        self.assertEqual(self.active_id(), self.V19)

    def test_verify_checks_the_pinned_version(self):
        self.write(os.path.join(self.proj, ".cudnn-version"), "9.14\n")
        r = self.run_cli("verify", "--no-gpu", "--json", cwd=self.sub)
        # the made-up libraries do not load: what counts is which was checked
        self.assertEqual(r.json()["install"], self.V14, r)
        self.assertIn("note: verifying %s, as %s asks"
                      % (self.V14, os.path.join(self.proj, ".cudnn-version")), r.err)
        self.assertIn("new processes get %s (the active version); cudnnctl exec -- COMMAND"
                      % self.V19, r.err)
        # outside the project: the active version, no note
        r = self.run_cli("verify", "--no-gpu", "--json", cwd=self.tmp)
        self.assertEqual(r.json()["install"], self.V19, r)
        self.assertNotIn("note:", r.err)

    def test_not_installed_is_exit_1_naming_the_pin(self):
        pin = os.path.join(self.proj, ".cudnn-version")
        self.write(pin, "9.2 cuda12\n")
        r = self.fails(EXIT["FAIL"], "which", cwd=self.sub,
                       words=("9.2", "not installed", "cudnnctl install 9.2"))
        self.assertEqual(r.rc, 1)
        self.assertIn("note: %s asks for 9.2 for CUDA 12" % pin, r.err)
        r = self.fails(EXIT["NOTFOUND"], "exec", "--", "true", cwd=self.sub,
                       words=("not installed",))
        self.assertIn(pin, r.err)

    def test_bad_pin_files_name_the_file_and_line(self):
        pin = os.path.join(self.proj, ".cudnn-version")
        for text, line, why in (("latest\n", 1, "not a version"),
                                ("# c\n9.14 12\n", 2, "only the CUDA major"),
                                ("9.14\n9.19\n", 2, "a second version line"),
                                ("9.14 cuda12 extra\n", 1, "more than a version"),
                                ("# only a comment\n", 1, "no version line")):
            with self.subTest(text=text):
                self.write(pin, text)
                self.fails(EXIT["USAGE"], "which", cwd=self.sub,
                           words=("'%s' line %d" % (pin, line), why, "cudnnctl pin VERSION"))
        self.write(pin, "9.14\n")
        self.fails(EXIT["USAGE"], "which", cwd=self.sub, env={"CUDNNCTL_VERSION": "x.y"},
                   words=("CUDNNCTL_VERSION", "not a version"))

    def test_pin_writes_a_known_version(self):
        # the built-in manifests know 9.14 (no network: --offline)
        with self.unchanged():
            r = self.ok("pin", "9.14", "--cuda", "12", "--offline", root=False, cwd=self.proj)
        pin = os.path.join(self.proj, ".cudnn-version")
        self.assertIn("pinned cuDNN 9.14 for CUDA 12 in %s" % pin, r.out)
        lines = [x for x in self.read(pin).splitlines() if not x.startswith("#")]
        self.assertEqual(lines, ["9.14 cuda12"])
        self.assertEqual(self.which()["id"], self.V14)
        # a version no manifest knows is refused, and the pin stays
        self.fails(EXIT["NORELEASE"], "pin", "9.99", "--offline", root=False, cwd=self.proj,
                   words=("9.99",))
        self.assertEqual(self.which()["id"], self.V14)

    def test_install_with_no_argument_installs_the_pin(self):
        # a folder mirror with a release the pin names
        mirror = os.path.join(self.tmp, "mirror")
        build_mirror(mirror, [FX.release("c13")])
        self.write(os.path.join(self.proj, ".cudnn-version"), "9.90 cuda13\n")
        cache = os.path.join(self.tmp, "cache")
        r = self.ok("install", "--mirror", mirror, "--cache", cache,
                    cwd=self.sub)
        self.assertIn("installing 9.90 for CUDA 13, as %s asks"
                      % os.path.join(self.proj, ".cudnn-version"), r.err)
        self.assertEqual(self.active_id(), "9.90.0.1-cuda13")
        self.assertEqual(self.which()["id"], "9.90.0.1-cuda13")
        # nothing pinned and nothing named: a usage error
        os.remove(os.path.join(self.proj, ".cudnn-version"))
        self.fails(EXIT["USAGE"], "install", cwd=self.sub, words=(".cudnn-version",))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""End-to-end tests of the cudnnctl binary: the command line itself: usage errors, CI mode, completions, doctor, the progress bar, every --help, errors as JSON.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import contextlib
import fcntl
import glob
import hashlib
import json
import lzma
import os
import re
import resource
import shlex
import shutil
import signal
import stat
import time
import types
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401


class TestUsage(CliTest):
    fixtures = ("v9_txz",)

    def test_no_arguments(self):
        r = self.run_cli(root=False)
        self.assertEqual(r.rc, EXIT["USAGE"], r)
        self.assertIn("usage: cudnnctl", r.err)
        self.assertEqual(r.out, "")

    def test_help(self):
        for args in (("--help",), ("-h",), ("help",)):
            r = self.ok(*args, root=False)
            self.assertIn("usage: cudnnctl <command>", r.out)
            self.assertEqual(r.err, "")
        r = self.ok("install", "--help", root=False)
        self.assertIn("usage: cudnnctl install [ARCHIVE|VERSION]", r.out)

    def test_install_of_a_folder_says_it_is_one(self):
        # issue 23 item 10: an extracted archive was taken for a version
        # number and looked for on the network
        folder = os.path.join(self.tmp, "cudnn-linux-x86_64-9.19.0.99_cuda13-archive")
        os.makedirs(os.path.join(folder, "lib"))
        with self.unchanged():
            self.fails(EXIT["USAGE"], "install", folder,
                       words=("'%s' is a folder" % folder, "as downloaded",
                              "cudnnctl install 9.1"))

    def test_version(self):
        self.assertRegex(self.ok("--version", root=False).out, r"^cudnnctl \d+\.\d+\.\d+\n$")

    def test_usage_errors(self):
        cases = [
            (("frobnicate",), ("unknown command 'frobnicate'", "cudnnctl --help")),
            # issue 23 item 10: "did you mean" within two edits
            (("isntall", "x.zip"), ("unknown command 'isntall'",
                                    "did you mean 'cudnnctl install'?")),
            (("swtich", "9"), ("did you mean 'cudnnctl switch'?",)),
            (("list", "--frob"), ("unknown option '--frob'", "usage: cudnnctl list")),
            (("install",), ("needs an archive or a VERSION", "usage: cudnnctl install")),
            (("install", "x.tar.xz", "--cuda", "abc"), ("--cuda", "abc")),
            (("install", "x.tar.xz", "--cuda", "0"), ("--cuda",)),
            (("install", "x.tar.xz", "--manifest"), ("--manifest", "needs a value")),
            (("switch", "9", "10"), ("unexpected argument '10'",)),
            (("uninstall", "9", "--force=yes"), ("--force", "takes no value")),
        ]
        with self.unchanged():
            for args, words in cases:
                with self.subTest(args=args):
                    self.fails(EXIT["USAGE"], *args, words=words)
        self.assertFalse(os.path.lexists(self.root))

    def check_json_failure(self, code, *args):
        r = self.run_cli(*args)
        self.assertEqual(r.rc, code, r)
        doc = r.json()
        self.assertIs(doc["ok"], False, r)
        self.assertEqual(doc["error"]["exit_status"], code, r)
        self.assertTrue(doc["error"]["code"].startswith("E"), r)
        self.assertTrue(doc["error"]["message"], r)
        return doc

    def test_json_failures(self):
        path, _ = FX.pack("v9_txz")
        doc = self.check_json_failure(EXIT["UNKNOWN_ARCHIVE"], "install", path, "--json")
        self.assertEqual(doc["command"], "install")
        self.assertIn(sha256_file(path), doc["error"]["message"])
        self.check_json_failure(EXIT["NOTFOUND"], "switch", "9", "--json")
        # a usage error found after parsing (no CUDA major in the name)
        renamed = os.path.join(self.tmp, "mystery.tar.xz")
        shutil.copyfile(path, renamed)
        doc = self.check_json_failure(EXIT["USAGE"], "install", renamed, "--allow-unknown",
                                      "--json")
        self.assertIn("--cuda", doc["error"]["hint"])
        self.assertFalse(os.path.lexists(self.root))

    def test_json_usage_error(self):
        self.check_json_failure(EXIT["USAGE"], "install", "--json", "x.tar.xz", "--cuda", "abc")
        self.check_json_failure(EXIT["USAGE"], "install", "--json")


class TestCiMode(CliTest):
    """CI mode (--ci; CI=true, GITHUB_ACTIONS or TF_BUILD in the
    environment): progress as plain lines, the install handed to the
    pipeline's later steps (GitHub's GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT,
    GITHUB_STEP_SUMMARY files; Azure's ##vso commands), and the user's shell
    profiles left alone unless --persist."""
    fixtures = ("v9_txz", "v8_zip")

    def github(self, **extra):
        d = os.path.join(self.tmp, "runner")
        os.makedirs(d, exist_ok=True)
        env = {"GITHUB_ACTIONS": "true"}
        for name in ("ENV", "PATH", "OUTPUT", "STEP_SUMMARY"):
            env["GITHUB_" + name] = os.path.join(d, name.lower())
        env.update(extra)
        return env

    def runner_file(self, name):
        path = os.path.join(self.tmp, "runner", name)
        return self.read(path) if os.path.exists(path) else ""

    def outputs(self):
        return dict(line.split("=", 1) for line in self.runner_file("output").splitlines())

    def test_github_actions(self):
        env = self.github()
        with self.unchanged(self.home, only=True):  # no profile lines
            r = self.install("v9_txz", env=env)
        self.assertIn("for this job's later steps", r.out)
        # progress: lines, never a bar redrawn with \r
        self.assertNotIn("\r", r.err)
        self.assertRegex(r.err, r"(?m)^cudnnctl: extract \S+ \S+ / \S+ \S+ \(\d+%\)$")
        cur = os.path.join(self.root, "current")
        self.assertEqual(self.runner_file("env").splitlines(),
                         ["CUDNN_PATH=" + cur, "CUDNN_ROOT=" + cur, "CUDNN_HOME=" + cur,
                          "CUDNN_INSTALL_PATH=" + cur, "LD_LIBRARY_PATH=" + cur + "/lib",
                          "LIBRARY_PATH=" + cur + "/lib", "CPATH=" + cur + "/include",
                          "CMAKE_PREFIX_PATH=" + cur,
                          "PKG_CONFIG_PATH=" + cur + "/lib/pkgconfig",
                          "CUDNNCTL_ROOT=" + self.root])
        self.assertEqual(self.runner_file("path"), "")  # Linux: nothing for PATH
        self.assertEqual(self.outputs(), {"cudnn-id": "9.19.0.99-cuda13",
                                          "cudnn-version": "9.19.0.99", "cuda": "13",
                                          "cudnn-path": cur, "changed": "true"})
        self.assertFalse(os.path.exists(os.path.join(self.root, "env.sh")))
        self.assertEqual(self.active_id(), "9.19.0.99-cuda13")
        # again: nothing changes, and the output says so
        os.unlink(os.path.join(self.tmp, "runner", "output"))
        r = self.install("v9_txz", "--json", env=env)
        self.assertFalse(r.json()["changed"])
        self.assertEqual(self.outputs()["changed"], "false")
        # a switch hands over the version switched to
        self.install("v8_zip", "--no-activate", env=env)
        os.unlink(os.path.join(self.tmp, "runner", "output"))
        with self.unchanged(self.home, only=True):
            self.ok("switch", "8.9", env=env)
        self.assertEqual(self.outputs()["cudnn-id"], "8.9.7.99-cuda12")
        self.assertEqual(self.outputs()["changed"], "true")

    def test_persist_and_outside_ci(self):
        # --persist: the profiles as outside CI
        self.install("v9_txz", "--persist", env=self.github())
        self.assert_active("9.19.0.99-cuda13")
        self.assertIn("cudnn-id=9.19.0.99-cuda13", self.runner_file("output"))
        # CI=false is not CI
        shutil.rmtree(self.root)
        self.install("v9_txz", env={"CI": "false"})
        self.assert_active("9.19.0.99-cuda13")

    def test_ci_true_and_the_flag(self):
        for env, extra in (({"CI": "true"}, ()), ({}, ("--ci",))):
            shutil.rmtree(self.root, True)
            with self.unchanged(self.home, only=True):
                r = self.install("v9_txz", *extra, env=env)
            self.assertNotIn("\r", r.err)
            self.assertIn("cudnnctl: extract", r.err)
            self.assertEqual(self.active_id(), "9.19.0.99-cuda13")
        # --quiet: no progress lines either
        r = self.ok("switch", "9.19", "--ci", "--quiet")
        self.assertNotIn("cudnnctl:", r.err)

    def test_azure_pipelines(self):
        r = self.install("v9_txz", env={"TF_BUILD": "True"})
        cur = os.path.join(self.root, "current")
        self.assertIn("##vso[task.setvariable variable=CUDNN_PATH]%s\n" % cur, r.out)
        self.assertIn("##vso[task.setvariable variable=LD_LIBRARY_PATH]%s/lib\n" % cur, r.out)
        self.assertIn("##vso[task.setvariable variable=cudnn_version;isOutput=true]9.19.0.99", r.out)
        self.assertIn("##vso[task.setvariable variable=CUDNNCTL_ROOT]%s\n" % self.root, r.out)
        # with --json, stdout is the JSON alone
        r = self.install("v9_txz", "--json", env={"TF_BUILD": "True"})
        self.assertFalse(r.json()["changed"])
        self.assertIn("##vso[task.setvariable variable=CUDNN_PATH]", r.err)

    def test_unwritable_runner_file(self):
        env = self.github(GITHUB_ENV=os.path.join(self.tmp, "no", "such", "env"))
        path, manifest = FX.pack("v9_txz")
        r = self.run_cli("install", path, "--manifest", manifest, env=env)
        self.assertEqual(r.rc, 3, r)
        self.assertIn("cannot write GITHUB_ENV: cannot open '%s'" % env["GITHUB_ENV"], r.err)
        # the install itself is done; the next run hands it over
        self.assertEqual(self.active_id(), "9.19.0.99-cuda13")
        self.ok("install", path, "--manifest", manifest, env=self.github())
        self.assertIn("CUDNN_PATH=", self.runner_file("env"))

    def test_verify_summary(self):
        # the fixture's libraries are not ELF files: a failing verify, its
        # table in the summary with the fix (test_verify.py has a passing one)
        self.install("v9_txz")
        env = self.github()
        r = self.run_cli("verify", "--no-gpu", env=env)
        self.assertEqual(r.rc, EXIT["VERIFY_VERSION"], r)
        summary = self.runner_file("step_summary")
        self.assertTrue(summary.startswith("### cudnnctl verify: NOT READY"), summary)
        self.assertEqual(summary.count("\n| "), 9 + 1, summary)  # header, a row per stage
        self.assertIn("| version | fail | ", summary)
        self.assertIn("<br>fix: reinstall this version |", summary)
        # verify hands nothing over
        self.assertEqual(self.runner_file("env"), "")


class TestCompletions(CliTest):
    """cudnnctl completions bash|zsh|powershell: scripts made from the
    command table; bash's is run here as bash would run it, zsh's loaded
    by zsh (when installed), PowerShell's checked for every option."""
    fixtures = ("v9_txz",)

    def script(self, shell):
        r = self.run_cli("completions", shell, root=False)
        self.assertEqual(r.rc, 0, r)
        return r.out

    def bash_complete(self, *words):
        """COMPREPLY for the command line words (the last one being typed)."""
        path = os.path.join(self.tmp, "comp.bash")
        self.write(path, self.script("bash"))
        line = " ".join(shlex.quote(w) for w in ("cudnnctl",) + words)
        prog = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _cudnnctl; '
                'printf "%%s\\n" "${COMPREPLY[@]}"' % (shlex.quote(path), line, len(words)))
        env = dict(self.env, PATH=os.path.dirname(clitest.CLI) + os.pathsep + self.env.get("PATH", ""),
                   CUDNNCTL_ROOT=self.root)
        p = subprocess.run(["bash", "-c", prog], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return sorted(x for x in p.stdout.splitlines() if x)

    def test_bash(self):
        self.assertEqual(self.bash_complete("sw"), ["switch"])
        self.assertEqual(self.bash_complete("install", "--no-"),
                         ["--no-activate", "--no-gpu", "--no-verify"])
        self.assertEqual(self.bash_complete("switch", "--scope", ""), ["machine", "user"])
        self.assertEqual(self.bash_complete("env", "--shell", "p"), ["powershell"])
        self.assertEqual(self.bash_complete("cache", ""), ["clean", "list"])
        self.assertEqual(self.bash_complete("completions", ""), ["bash", "powershell", "zsh"])
        # installed versions, from cudnnctl list --json
        self.install("v9_txz")
        self.assertEqual(self.bash_complete("switch", ""), ["9.19.0.99"])
        self.assertEqual(self.bash_complete("uninstall", "9."), ["9.19.0.99"])
        # every option of every command, as its --help lists them
        for cmd, (_, own) in TestHelpTable.COMMANDS.items():
            self.assertEqual(self.bash_complete(cmd, "--"),
                             sorted(own + TestHelpTable.COMMON), cmd)

    def test_zsh(self):
        text = self.script("zsh")
        self.assertTrue(text.startswith("#compdef cudnnctl\n"))
        for cmd, (_, own) in TestHelpTable.COMMANDS.items():
            self.assertIn("\n\t%s)\n" % cmd, text)
            block = text.split("\n\t%s)\n" % cmd, 1)[1].split(";;", 1)[0]
            for opt in own + TestHelpTable.COMMON:
                self.assertIn("'%s[" % opt, block, (cmd, opt))
        if not shutil.which("zsh"):
            self.skipTest("no zsh here (scripts/deps.sh --test installs it)")
        path = os.path.join(self.tmp, "_cudnnctl")
        self.write(path, text)
        p = subprocess.run(["zsh", "-n", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run(["zsh", "-f", "-c", "autoload -U compinit; compinit -u -d %s; "
                            "source %s; print -r -- ${_comps[cudnnctl]}"
                            % (shlex.quote(os.path.join(self.tmp, "zcd")), shlex.quote(path))],
                           env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "_cudnnctl"), p.stderr)

    def test_powershell(self):
        text = self.script("powershell")
        self.assertIn("Register-ArgumentCompleter -Native -CommandName 'cudnnctl', "
                      "'cudnnctl.exe'", text)
        for cmd, (_, own) in TestHelpTable.COMMANDS.items():
            line = next(x for x in text.splitlines() if x.strip().startswith("'%s' = @(" % cmd))
            for opt in own + TestHelpTable.COMMON:
                self.assertIn("'%s'" % opt, line, (cmd, opt))
        self.assertEqual(text.count("{"), text.count("}"))
        self.assertEqual(text.count("("), text.count(")"))

    def test_unknown_shell(self):
        r = self.run_cli("completions", "fish", root=False)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("no completions for 'fish': bash, zsh or powershell", r.err)
        r = self.run_cli("completions", root=False)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("usage: cudnnctl completions bash|zsh|powershell", r.err)


class TestDoctor(CliTest):
    """cudnnctl doctor: one screen for a bug report, the home folder as ~
    unless --no-redact, colour only on a terminal and never with NO_COLOR."""
    fixtures = ("v9_txz",)

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.home, "cudnn")  # under HOME: redacted

    def test_report(self):
        self.install("v9_txz")
        extra = os.path.join(self.home, "lib")
        r = self.ok("doctor", "--no-gpu", env={"LD_LIBRARY_PATH": "/opt/x:" + extra})
        lines = r.out.splitlines()
        self.assertIn("(the home folder is shown as ~)", lines[0])
        self.assertRegex(r.out, r"(?m)^cudnnctl: +\S+ \(linux-x86_64\)$")
        self.assertRegex(r.out, r"(?m)^system: +.*; Linux \S+ \S+$")
        self.assertIn("root:       ~/cudnn, mode user", r.out)
        self.assertIn("installed:  9.19.0.99-cuda13 (verified, active)", r.out)
        self.assertIn("LD_LIBRARY_PATH of this process, first to last:\n  /opt/x\n  ~/lib\n",
                      r.out)
        self.assertIn("cuDNN a new process can find, in the loader's order:\n  1. ", r.out)
        self.assertIn("driver:     not looked at (--no-gpu)", r.out)
        self.assertIn("\nverify:\nSTAGE ", r.out)
        self.assertRegex(r.out, r"(?m)^verdict: ")
        self.assertNotIn(self.home, r.out)
        self.assertNotIn("\033[", r.out)  # not a terminal: no colour
        r = self.ok("doctor", "--no-gpu", "--no-redact")
        self.assertIn("root:       %s, mode user" % self.root, r.out)
        doc = self.ok("doctor", "--no-gpu", "--json").json()
        self.assertEqual(doc["root"], "~/cudnn")
        self.assertEqual(doc["installed"], [{"id": "9.19.0.99-cuda13", "active": True,
                                             "verified": True}])
        self.assertEqual(doc["verify"]["command"], "verify")

    def test_no_root(self):
        r = self.ok("doctor", "--no-gpu")
        self.assertIn("root:       none", r.out)
        self.assertIn("installed:  none", r.out)

    def test_colour_on_a_terminal_only_without_no_color(self):
        self.install("v9_txz")
        # TERM=dumb: a terminal that takes no escape sequences (issue 23
        # item 7: a Windows console without virtual-terminal mode)
        for no_color, term, want in (("", "xterm", True), ("1", "xterm", False),
                                     ("", "dumb", False)):
            out = on_a_terminal(self, ("doctor", "--no-gpu"),
                                dict(self.env, NO_COLOR=no_color, TERM=term), "stdout")
            self.assertEqual(b"\033[" in out, want, out[-400:])


class TestProgressBar(CliTest):
    fixtures = ("v9_txz",)

    def stderr_on_a_terminal(self, args, term):
        return on_a_terminal(self, args, dict(self.env, TERM=term), "stderr")

    def test_plain_redraws_where_escapes_do_not_work(self):
        # issue 23 item 7: the bar wrote escapes into a console that does
        # not take them; where the terminal takes none (TERM=dumb here; a
        # Windows console whose virtual-terminal mode cannot be turned on)
        # it is redrawn with \r and spaces
        path, manifest = FX.pack("v9_txz")
        out = self.stderr_on_a_terminal(("install", path, "--manifest", manifest), "dumb")
        self.assertIn(b"\r", out)
        self.assertIn(b"[###", out)
        self.assertNotIn(b"\033[", out)
        shutil.rmtree(self.root)
        out = self.stderr_on_a_terminal(("install", path, "--manifest", manifest), "xterm")
        self.assertIn(b"\033[K", out)


class TestHelpTable(CliTest):
    """The usage lines and every --help come from the command table: each
    command lists every option with a line of description; --quiet keeps
    the progress bar off for every command, also on a terminal."""
    fixtures = ("v9_txz",)

    # command: (usage arguments, its own options); the common ones follow
    FETCH = ["--mirror", "--cache", "--offline"]
    COMMANDS = {
        "install": ("[ARCHIVE|VERSION]", ["--manifest", "--allow-unknown", "--cuda"] + FETCH +
                    ["--connections", "--jobs"] +
                    ["--no-activate", "--platform", "--system", "--persist", "--scope",
                     "--no-verify", "--no-gpu", "--wait"]),
        "download": ("[VERSION]", ["--cuda", "--platform", "--output", "--dry-run", "--manifest"]
                     + FETCH + ["--connections"]),
        "manifests": ("update", ["--manifest"] + FETCH),
        "cache": ("list|clean", ["--cache"]),
        "mirror": ("sync DIR", ["--versions", "--platform", "--cuda", "--from", "--manifest",
                                "--prune", "--dry-run", "--connections"]),
        "list": ("", ["--available", "--manifest", "--cache"]),
        "switch": ("VERSION", ["--cuda", "--system", "--persist", "--scope", "--no-verify",
                               "--no-gpu", "--wait"]),
        "uninstall": ("VERSION", ["--cuda", "--force", "--wait"]),
        "verify": ("[VERSION|INTERPRETER]", ["--cuda", "--junit", "--no-gpu", "--require-gpu",
                                            "--full", "--build", "--app", "--run", "--python",
                                            "--device"]),
        "env": ("", ["--shell", "--version", "--cuda"]),
        "exec": ("[VERSION] -- COMMAND [ARGS...]", ["--cuda", "--install"] + FETCH
                 + ["--manifest"]),
        "which": ("[VERSION]", ["--cuda"]),
        "history": ("", ["--last"]),
        "scan": ("", ["--deep", "--time-limit"]),
        "quarantine": ("[PATH...]", ["--list", "--restore", "--force", "--wait"]),
        "link-cuda": ("[TOOLKIT]", ["--wait"]),
        "unlink-cuda": ("", ["--wait"]),
        "pin": ("VERSION", ["--cuda"] + FETCH),
        "deactivate": ("", ["--wait"]),
        "path": ("restore", ["--scope", "--force", "--wait"]),
        "version": ("", []),
        "doctor": ("", ["--no-gpu", "--no-redact"]),
    }
    COMMON = ["--root", "--json", "--quiet", "--verbose", "--ci", "--help"]
    # an option line: "  [-q, ]--name[ VALUE]", its description after two
    # spaces or, for a long name, on the next line
    OPTION = re.compile(r"^  (?:-\w, )?(--[a-z-]+)(?: (\S+))?(?:  +(\S.*))?$")

    def options_in(self, text):
        """[(name, value name, description)] of the option lines of a help."""
        lines, out = text.splitlines(), []
        for i, line in enumerate(lines):
            m = self.OPTION.match(line)
            if not m:
                continue
            desc = m.group(3)
            if desc is None and i + 1 < len(lines) and re.match(r"^ {20,}\S", lines[i + 1]):
                desc = lines[i + 1].strip()
            out.append((m.group(1), m.group(2), desc))
        return out

    def test_top_level_help_lists_every_command(self):
        for args in (("--help",), ("-h",), ("help",)):
            r = self.ok(*args, root=False)
            self.assertEqual(r.err, "", r)
            self.assertTrue(r.out.startswith("usage: cudnnctl <command>"), r)
            for name, (pos, _) in self.COMMANDS.items():
                head = ("%s %s" % (name, pos)).strip()
                with self.subTest(args=args, command=name):
                    # "  name ARGS   summary", or the summary below a long
                    # name (and going on below)
                    self.assertRegex(r.out, r"(?m)^  %s(?: +\S|\n {20,}\S)" % re.escape(head),
                                     r)
            listed = [o[0] for o in self.options_in(r.out)]
            self.assertEqual(listed, self.COMMON, r)
        # without a command: the same on stderr, exit 2
        r = self.run_cli(root=False)
        self.assertEqual(r.rc, EXIT["USAGE"], r)
        self.assertIn("commands:", r.err)

    def test_command_help_lists_every_option(self):
        for name, (pos, own) in self.COMMANDS.items():
            with self.subTest(command=name):
                r = self.ok(name, "--help", root=False)
                self.assertEqual(r.err, "", r)
                self.assertTrue(r.out.startswith(("usage: cudnnctl %s %s" % (name, pos)).strip()),
                                r)
                opts = self.options_in(r.out)
                # its own options, then the common ones, each described
                self.assertEqual([o[0] for o in opts], own + self.COMMON, r)
                for opt, _, desc in opts:
                    self.assertTrue(desc, "%s: no description:%s" % (opt, r))
                    # and on the usage line (--help aside)
                    if opt != "--help":
                        self.assertIn("[%s" % opt, r.out.split("\n\n")[0], r)
                # -h and `help NAME` print the same
                self.assertEqual(self.ok(name, "-h", root=False).out, r.out)
                self.assertEqual(self.ok("help", name, root=False).out, r.out)
                # every option the help lists is one the command takes: the
                # parser reaches --help after it instead of failing
                for opt, value, _ in opts:
                    if opt == "--help":
                        continue
                    args = [name, opt] + (["1" if value == "N" else "x"] if value else [])
                    h = self.run_cli(*args, "--help", root=False)
                    self.assertEqual((h.rc, h.out), (0, r.out), h)

    def test_usage_error_prints_the_usage_on_stderr(self):
        cases = [(name, ("--frob",), "unknown option '--frob' for '%s'" % name)
                 for name in self.COMMANDS]
        cases += [(name, (), "'%s' needs an argument" % name)
                  for name in ("switch", "uninstall", "path", "pin")]
        # install: an archive, a version, or a pin file (none in the tests'
        # folders)
        cases += [("install", (), "'install' needs an archive or a VERSION (or a "
                   ".cudnn-version")]
        cases += [("verify", ("9", "10"), "unexpected argument '10' for 'verify'"),
                  ("list", ("--json=yes",), "option '--json' takes no value"),
                  ("verify", ("--junit",), "option '--junit' needs a value"),
                  ("env", ("--shell", "fish"), "unknown shell 'fish'"),
                  ("switch", ("9", "--scope", "galaxy"), "unknown scope 'galaxy'"),
                  ("path", ("frob",), "unknown 'path' action 'frob'")]
        with self.unchanged():
            for name, args, words in cases:
                with self.subTest(command=name, args=args):
                    r = self.fails(EXIT["USAGE"], name, *args, words=(words,))
                    usage = r.err.split("\n", 1)[1]
                    self.assertTrue(usage.startswith("usage: cudnnctl %s" % name), r)
                    self.assertIn("[--json]", usage, r)
                    if "--json=yes" in args:
                        continue
                    # with --json: the error object, the usage line its hint
                    j = self.run_cli(name, "--json", *args)
                    self.assertEqual(j.rc, EXIT["USAGE"], j)
                    doc = j.json()
                    self.assertEqual((doc["command"], doc["ok"], doc["error"]["code"]),
                                     (name, False, "EUSAGE"), j)
                    self.assertIn(words, doc["error"]["message"], j)
                    self.assertTrue(doc["error"]["hint"].startswith("cudnnctl %s" % name), j)
        self.assertFalse(os.path.lexists(self.root))

    # -- the bar on a terminal
    def run_pty(self, *args):
        """Runs the binary with stderr on a pseudo-terminal (stdout a pipe):
        (exit status, stdout, what the terminal got)."""
        import pty
        import select
        master, slave = pty.openpty()
        cmd = [clitest.CLI] + [str(a) for a in args] + ["--root", self.root]
        proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        err = b""
        try:
            while True:
                ready, _, _ = select.select([master], [], [], 120)
                if not ready:
                    proc.kill()
                    raise AssertionError("%s: no end after 120 s" % cmd)
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                err += chunk
            out = proc.stdout.read()
            proc.wait(timeout=60)
        finally:
            proc.stdout.close()
            os.close(master)
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def assert_bar(self, err, phase, drawn, what):
        bar = re.compile(r"\r%s +\[#*" % phase)
        if drawn:
            self.assertRegex(err, bar, "%s: no bar on the terminal:\n%r" % (what, err))
        else:
            self.assertNotRegex(err, bar, "%s: a bar on the terminal:\n%r" % (what, err))
            self.assertNotIn("\x1b[K", err, "%s: the terminal got bar output:\n%r"
                             % (what, err))

    def test_quiet_keeps_the_bar_off_for_install(self):
        path, manifest = FX.pack("v9_txz")
        for extra in ([], ["--quiet"], ["-q"], ["--json"]):
            with self.subTest(options=extra):
                shutil.rmtree(self.root, ignore_errors=True)
                rc, out, err = self.run_pty("install", path, "--manifest", manifest,
                                            "--no-verify", *extra)
                self.assertEqual(rc, 0, err)
                # the bar draws while the archive is read, whatever its size
                self.assert_bar(err, "(sha256|check)", not extra, "install %s" % extra)
                if extra == ["--json"]:
                    self.assertTrue(json.loads(out)["ok"])

    def test_quiet_keeps_the_bar_off_for_verify_full(self):
        self.install("v9_txz")
        for extra in ([], ["--quiet"], ["-q"], ["--json"]):
            with self.subTest(options=extra):
                # the fixture's libraries are not loadable: verify fails at
                # a later stage, after --full re-hashed every file
                rc, out, err = self.run_pty("verify", "--full", "--no-gpu", *extra)
                self.assertNotEqual(rc, EXIT["USAGE"], err)
                self.assertIn("files", out)
                self.assert_bar(err, "sha256", not extra, "verify --full %s" % extra)


class TestErrorJson(CliTest):
    """The error object carries the OS's own error number when an OS call
    failed, and null otherwise."""

    def failure(self, code, *args):
        r = self.run_cli(*args)
        self.assertEqual(r.rc, code, r)
        doc = r.json()
        self.assertIs(doc["ok"], False, r)
        return doc

    def test_os_error_number(self):
        import errno
        missing = os.path.join(self.tmp, "cudnn-linux-x86_64-9.19.0.99_cuda13-archive.tar.xz")
        doc = self.failure(EXIT["IO"], "install", missing, "--json")
        self.assertEqual(doc["error"]["os_error"], errno.ENOENT, doc)
        self.assertIn(missing, doc["error"]["message"])
        doc = self.failure(EXIT["NOTFOUND"], "switch", "9", "--json")
        self.assertIsNone(doc["error"]["os_error"], doc)


if __name__ == "__main__":
    unittest.main()

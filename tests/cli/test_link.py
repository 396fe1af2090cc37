#!/usr/bin/env python3
"""link-cuda and unlink-cuda on Linux, into a fake CUDA toolkit folder
(include/, lib64/ with files of its own and an older cuDNN copied in as
NVIDIA's tar guide does): links through <root>/current, the toolkit's files
kept as *.cudnnctl-backup and restored byte for byte, switch and deactivate
keeping the links in step, a program built through the toolkit's folders,
the refusals (no toolkit, no write access, a tampered record), and a kill
at every point of link-cuda, of a switch that relinks, and of unlink-cuda.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import os
import shutil
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401




class LinkTest(CliTest):
    """The fake 9.19.0.99 active, 9.14.0.99 beside it (both CUDA 13, the
    same fake libraries), and a toolkit folder with its own files."""
    fixtures = ()
    V19, V14 = "9.19.0.99-cuda13", "9.14.0.99-cuda13"

    def setUp(self):
        super().setUp()
        for version in (None, "9.14.0.99"):
            archive, manifest = FX.fake("good", version, 13)
            self.ok("install", archive, "--manifest", manifest,
                    *(("--no-activate",) if version else ()))
        self.toolkit = os.path.join(self.tmp, "cuda")
        self.make_toolkit()

    def make_toolkit(self):
        shutil.rmtree(self.toolkit, True)
        for d in ("include", "lib64", "bin"):
            os.makedirs(os.path.join(self.toolkit, d))
        self.write(os.path.join(self.toolkit, "include", "cuda.h"), "/* CUDA's */\n")
        # an older cuDNN copied in by hand: a header and a library file
        self.write(os.path.join(self.toolkit, "include", "cudnn.h"), "/* cuDNN 8.9 */\n")
        self.write(os.path.join(self.toolkit, "lib64", "libcudnn.so.9"), "old library\n")
        self.write(os.path.join(self.toolkit, "lib64", "libcudart.so.13"), "CUDA's\n")

    def tree(self):
        return snapshot(self.toolkit)

    def links(self):
        """{name: target} of the links in the toolkit's include and lib64."""
        out = {}
        for d in ("include", "lib64"):
            for n in os.listdir(os.path.join(self.toolkit, d)):
                p = os.path.join(self.toolkit, d, n)
                if os.path.islink(p):
                    out[d + "/" + n] = os.readlink(p)
        return out


class TestLinkCuda(LinkTest):

    def test_link_then_unlink_restores_the_toolkit_byte_for_byte(self):
        before = self.tree()
        r = self.ok("link-cuda", self.toolkit, "--json")
        doc = r.json()
        self.assertEqual((doc["toolkit"], doc["version"], doc["backups"]),
                         (self.toolkit, self.V19, 2))
        links = self.links()
        self.assertEqual(len(links), doc["files"])
        cur = os.path.join(self.root, "current")
        self.assertEqual(links["include/cudnn.h"], cur + "/include/cudnn.h")
        self.assertEqual(links["lib64/libcudnn.so.9"], cur + "/lib/libcudnn.so.9")
        self.assertEqual(links["lib64/libcudnn.so"], cur + "/lib/libcudnn.so")
        # the fully versioned names change with every release: not linked
        self.assertFalse([n for n in links if n.endswith(".so.9.19.0")], links)
        self.assertNotIn("include/cuda.h", links)
        self.assertEqual(self.read(os.path.join(self.toolkit, "include",
                                                "cudnn.h.cudnnctl-backup")), "/* cuDNN 8.9 */\n")
        # a program built the old way, through the toolkit's folders only
        src = os.path.join(self.tmp, "probe.c")
        self.write(src, PROBE_C)
        exe = os.path.join(self.tmp, "probe")
        subprocess.run(["cc"] + BUILD_FLAGS.split() + ["-I" + os.path.join(self.toolkit, "include"),
                                                     src, "-o", exe,
                                                     "-L" + os.path.join(self.toolkit, "lib64"),
                                                     "-lcudnn"], check=True)
        run = subprocess.run([exe], capture_output=True, text=True, check=True,
                             env=dict(self.env, LD_LIBRARY_PATH=os.path.join(self.toolkit,
                                                                            "lib64")))
        self.assertEqual(run.stdout, "header 91900 library 91900\n")
        # linking again changes nothing
        self.assertEqual(self.ok("link-cuda", "--json").json()["files"], doc["files"])
        r = self.ok("unlink-cuda")
        self.assertIn("2 of the toolkit's own put back", r.out)
        self.assertEqual(self.tree(), before)
        self.assertFalse(os.path.exists(os.path.join(self.root, "cuda-link")))
        self.fails(EXIT["NOTFOUND"], "unlink-cuda", words=("nothing is placed",))

    def test_switch_and_deactivate_keep_it_in_step(self):
        before = self.tree()
        self.ok("link-cuda", self.toolkit)
        links = self.links()
        header = os.path.join(self.toolkit, "include", "cudnn_version.h")
        self.assertIn("#define CUDNN_MINOR 19", self.read(header))
        # 9.14: the same names, through current
        self.ok("switch", "9.14")
        self.assertEqual(self.links(), links)
        self.assertIn("#define CUDNN_MINOR 14", self.read(header))
        self.assertIn(self.V14, self.read(os.path.join(self.root, "cuda-link")))
        # nothing active: the toolkit as it was
        self.ok("deactivate")
        self.assertEqual(self.tree(), before)
        self.fails(EXIT["NOTFOUND"], "unlink-cuda")

    def test_default_toolkit_is_cuda_path(self):
        r = self.ok("link-cuda", env={"CUDA_PATH": self.toolkit + "/"})
        self.assertIn("into %s:" % self.toolkit, r.out)
        # one toolkit at a time
        other = os.path.join(self.tmp, "other-cuda")
        shutil.copytree(self.toolkit, other, symlinks=True)
        self.fails(EXIT["FAIL"], "link-cuda", other, words=("placed into '%s' already"
                                                            % self.toolkit, "unlink-cuda"))
        self.ok("unlink-cuda")

    def test_refusals_change_nothing(self):
        root_before = snapshot(self.root)
        not_tk = os.path.join(self.tmp, "not-a-toolkit")
        os.makedirs(os.path.join(not_tk, "include"))
        self.fails(EXIT["NOTFOUND"], "link-cuda", not_tk,
                   words=("is not a CUDA toolkit", "nothing was placed"))
        self.assertEqual(os.listdir(os.path.join(not_tk, "include")), [])
        # a backup name taken by someone else's file
        self.write(os.path.join(self.toolkit, "include", "cudnn.h.cudnnctl-backup"), "x\n")
        before = self.tree()
        self.fails(EXIT["FAIL"], "link-cuda", self.toolkit, words=("is there already",))
        self.assertEqual(self.tree(), before)
        self.assertEqual(snapshot(self.root), root_before)

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv"),
                         "needs root and setpriv (to run as another user)")
    def test_no_write_access_is_a_clear_error(self):
        """As a user who cannot write the toolkit (root's, mode 755): the
        error names the folder and sudo, and nothing is placed."""
        for d in (self.tmp, self.toolkit):
            os.chmod(d, 0o755)
        shutil.rmtree(self.root)
        user_root = os.path.join(self.tmp, "user-root")
        os.makedirs(user_root)
        os.chown(user_root, 65534, 65534)
        shared = os.path.join(self.tmp, "shared")  # the fixtures' folder is private
        os.makedirs(shared)
        archive, manifest = (shutil.copy(p, shared) for p in FX.fake("good", None, 13))
        env = dict(self.env, HOME=user_root)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        r = subprocess.run(cmd + [clitest.CLI, "install", archive, "--manifest", manifest,
                                  "--root", user_root, "--no-verify"],
                           capture_output=True, text=True, env=env)
        if r.returncode:
            self.skipTest("cudnnctl cannot run as nobody here: %s" % r.stderr)
        before = self.tree()
        r = subprocess.run(cmd + [clitest.CLI, "link-cuda", self.toolkit, "--root", user_root],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, EXIT["FAIL"], r.stderr)
        self.assertIn("cannot write into '%s/include'" % self.toolkit, r.stderr)
        self.assertIn("sudo", r.stderr)
        self.assertEqual(self.tree(), before)
        self.assertFalse(os.path.exists(os.path.join(user_root, "cuda-link")))

    def test_a_tampered_record_is_refused(self):
        self.ok("link-cuda", self.toolkit)
        rec = os.path.join(self.root, "cuda-link")
        text = self.read(rec)
        planted = "\t%s/include/cudnn.h\t" % self.toolkit
        self.assertIn(planted, text)
        self.write(rec, text.replace(planted, "\t/etc/cudnn.h\t", 1))
        before = self.tree()
        self.fails(EXIT["FAIL"], "unlink-cuda", words=("is not a record cudnnctl wrote",))
        self.assertEqual(self.tree(), before)


class TestKillPointsLink(LinkTest):
    """A kill at every change link-cuda, a relinking switch and unlink-cuda
    make: the next command (the same one again) finishes the work, and
    unlink-cuda then leaves the toolkit exactly as it was."""

    def sweep(self, setup, args):
        kills = 0
        for at in range(1, 400):
            self.reset_root()
            for a in setup:
                self.ok(*a)
            r = self.run_cli(*args, env={"CUDNNCTL_TEST_KILL_AT": str(at)})
            if r.rc == 0:
                break
            self.assertEqual(r.rc, -signal.SIGKILL, "at=%d:%s" % (at, r))
            kills += 1
            label = "%s killed at %d" % (" ".join(args), at)
            r = self.run_cli(*args)
            # unlink-cuda: the next command finished it, so there may be
            # nothing left to take out
            self.assertIn(r.rc, (0, EXIT["NOTFOUND"]) if args[0] == "unlink-cuda" else (0,),
                          "%s, then again:%s" % (label, r))
            if args[0] != "unlink-cuda":
                self.assertEqual(self.links(), self.want, label)
                self.ok("unlink-cuda")
            self.assertEqual(self.tree(), self.original, label)
        return kills

    def reset_root(self):
        if os.path.exists(os.path.join(self.root, "cuda-link")):
            os.remove(os.path.join(self.root, "cuda-link"))
        self.ok("switch", "9.19")
        self.make_toolkit()

    def test_every_kill_point(self):
        self.original = self.tree()
        self.ok("link-cuda", self.toolkit)
        self.want = self.links()
        self.ok("unlink-cuda")
        self.assertEqual(self.tree(), self.original)
        n = self.sweep([], ("link-cuda", self.toolkit))
        # each sweep about as long as when it was written (2026-12-01)
        self.assertGreaterEqual(n, 22, "link-cuda")  # 24: the record, 18 links, 2 backups
        n = self.sweep([("link-cuda", self.toolkit)], ("unlink-cuda",))
        self.assertGreaterEqual(n, 21, "unlink-cuda")  # 23
        # a switch relinks (the record names the version)
        n = self.sweep([("link-cuda", self.toolkit)], ("switch", "9.14"))
        self.assertGreaterEqual(n, 46, "switch")  # 52: current, then out and in again


if __name__ == "__main__":
    unittest.main()

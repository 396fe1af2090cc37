#!/usr/bin/env python3
"""Where cuDNN's sub-libraries come from (verify's load stage): cuDNN 9's
main library loads them later by name, so LD_LIBRARY_PATH can give an
install's libcudnn.so.9 another copy's sub-libraries.  With the real cuDNN
9.19 of this machine, installed, and a folder holding a copy of one of
its sub-libraries first on LD_LIBRARY_PATH, verify fails naming it, and
passes once the copy is gone; with the fake cuDNN, a 9.14 sub-library
there fails it for its folder and its version.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import json
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401


class SubLibTest(CliTest):
    fixtures = ()

    def verify(self, ld_path, code):
        r = self.run_cli("verify", "--no-gpu", "--json", env={"LD_LIBRARY_PATH": ld_path})
        self.assertEqual(r.rc, code, r)
        doc = r.json()
        return doc, [s for s in doc["stages"] if s["stage"] == "load"][0]

    def lib(self):
        return os.path.join(self.root, "current", "lib")


class TestRealCudnnSubLibraries(SubLibTest):
    def test_a_copy_earlier_on_the_search_path(self):
        lib, _ = find_real_cudnn()
        if not lib:
            self.skipTest("no real cuDNN (/usr/local/cuda/lib/libcudnn.so.9)")
        path, manifest = FX.pack_from(lib, "9.19.0.0", 13, "zip", "--level", "0")
        self.ok("install", path, "--manifest", manifest, "--no-verify")
        # the name cuDNN 9.19 asks the loader for: the ops library's full
        # name, as the archive (and so the install) has it
        ops = os.path.basename(os.path.realpath(os.path.join(self.lib(), "libcudnn_ops.so.9")))
        self.assertEqual(ops, "libcudnn_ops.so.9.19.0")
        stray = os.path.join(self.tmp, "stray")
        os.mkdir(stray)
        shutil.copy(os.path.join(lib, "libcudnn_ops.so.9"), os.path.join(stray, ops))
        doc, load = self.verify(stray + ":" + self.lib(), EXIT["VERIFY_LOAD"])
        self.assertEqual(load["status"], "fail")
        self.assertIn("%s was loaded from %s (entry 1 of LD_LIBRARY_PATH), not from %s"
                      % (ops, stray, os.path.realpath(self.lib())), load["reason"])
        self.assertIn("take that folder off LD_LIBRARY_PATH", load["next"])
        got = {os.path.basename(l["path"]): l for l in doc["libraries"]}
        self.assertTrue(got[ops]["foreign"])
        self.assertEqual(got[ops]["path"], os.path.join(stray, ops))
        # cuDNN loaded every sub-library it has: graph, ops, cnn, adv
        self.assertGreaterEqual(len(doc["libraries"]), 5, doc["libraries"])
        os.remove(os.path.join(stray, ops))
        doc, load = self.verify(stray + ":" + self.lib(), 0)
        self.assertEqual(load["status"], "pass", load)
        self.assertIn("cuDNN libraries loaded, all from its folder", load["finding"])
        self.assertFalse([l for l in doc["libraries"] if l["foreign"]], doc["libraries"])


class TestFakeSubLibraries(SubLibTest):
    def test_another_versions_sub_library_first(self):
        archive, manifest = FX.fake("good", None, 13)
        self.ok("install", archive, "--manifest", manifest, "--no-verify")
        stray = os.path.join(self.tmp, "stray")
        os.mkdir(stray)
        old = FX.variant_dir("old")
        shutil.copy(os.path.join(old, "libcudnn_ops.so.9.14.0"),
                    os.path.join(stray, "libcudnn_ops.so.9"))
        doc, load = self.verify(stray + ":" + self.lib(), EXIT["VERIFY_LOAD"])
        # the version check and the folder both say so
        self.assertIn("cudnnOpsVersionCheck() failed", load["reason"])
        self.assertIn("libcudnn_ops.so.9 was loaded from %s (entry 1 of LD_LIBRARY_PATH)"
                      % stray, load["reason"])
        # a sub-library missing beside the main one, found nowhere
        os.remove(os.path.join(stray, "libcudnn_ops.so.9"))
        doc, load = self.verify(stray + ":" + self.lib(), 0)
        self.assertEqual(load["status"], "pass", load)


class TestExecEnvironment(SubLibTest):
    """A version that is not active, checked in this shell (whose
    LD_LIBRARY_PATH names the active one) and in exec's environment,
    where its own folder comes first."""

    def test_under_exec_its_own_sub_libraries(self):
        for variant, extra in (("good", ()), ("old", ("--no-activate",))):
            archive, manifest = FX.fake(variant)  # 9.19.0.99-cuda13, 9.14.0.99-cuda12
            self.ok("install", archive, "--manifest", manifest, "--no-verify", *extra)
        r = self.run_cli("verify", "9.14", "--no-gpu", "--json",
                         env={"LD_LIBRARY_PATH": self.lib()})
        load = [s for s in r.json()["stages"] if s["stage"] == "load"][0]
        self.assertEqual(load["status"], "warn", load)
        self.assertIn("cudnnctl exec 9.14.0.99-cuda12", load["next"])
        # the same check under exec: every library from 9.14's folder
        r = self.run_cli("exec", "9.14", "--", clitest.CLI, "verify", "9.14", "--no-gpu",
                         "--json", "--root", self.root, env={"LD_LIBRARY_PATH": self.lib()})
        self.assertEqual(r.rc, 0, r)
        doc = json.loads(r.out)
        load = [s for s in doc["stages"] if s["stage"] == "load"][0]
        self.assertEqual(load["status"], "pass", load)
        v14 = os.path.join(self.root, "versions", "9.14.0.99-cuda12", "lib")
        self.assertEqual({os.path.dirname(os.path.realpath(l["path"])) for l in doc["libraries"]},
                         {os.path.realpath(v14)})


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""End-to-end tests of the cudnnctl binary: Ctrl+C, SIGTERM and SIGHUP, and a kill at every change to the disk (the kill-point sweeps).

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


class TestInterrupt(CliTest):
    """Ctrl+C (SIGINT), SIGTERM and SIGHUP stop the work and put back what
    was under way; what a killed command left is swept by the next one
    that takes the root's lock.  CUDNNCTL_TEST_INTERRUPT_AT=N sends the
    process a real SIGINT at the Nth point where the work checks for one
    (each entry scanned, each block extracted, each block hashed)."""
    fixtures = ("v9_txz", "v9_zip", "v914_txz")

    def leftovers(self):
        vdir = os.path.join(self.root, "versions")
        return sorted(n for n in os.listdir(vdir) if n.startswith(".")) \
            if os.path.isdir(vdir) else []

    def test_interrupt_at_every_point_of_an_install(self):
        # every check point of an install, one run each, until the install
        # gets through: each interrupted run exits 130 and leaves the root,
        # HOME and the profiles as they were
        self.install("v914_txz")
        path, manifest = FX.pack("v9_zip")
        at = 0
        while True:
            at += 1
            self.assertLess(at, 2000, "the install never got through")
            before = [snapshot(p) for p in (self.root, self.home)]
            r = self.run_cli("install", path, "--manifest", manifest,
                             env={"CUDNNCTL_TEST_INTERRUPT_AT": str(at)})
            if r.rc == 0:
                break
            self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
            self.assertIn("interrupted", r.err)
            after = [snapshot(p) for p in (self.root, self.home)]
            self.assertEqual(after, before, "at=%d:%s\n%s" % (
                at, r, "\n".join(snapshot_diff(b, a) for b, a in zip(before, after))))
        self.assertGreater(at, 20, "too few check points seen")
        self.assertEqual(self.leftovers(), [])
        self.assert_active("9.19.0.99-cuda13")
        self.assertEqual(sorted(i["id"] for i in self.ok("list", "--json").json()["installed"]),
                         ["9.14.0.99-cuda12", "9.19.0.99-cuda13"])

    def test_after_the_interrupts_the_install_goes_through(self):
        path, manifest = FX.pack("v9_txz")
        for at in (3, 40):
            r = self.run_cli("install", path, "--manifest", manifest,
                             env={"CUDNNCTL_TEST_INTERRUPT_AT": str(at)})
            self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
            self.assertFalse(os.path.lexists(self.root), "a new root is taken back")
        self.install("v9_txz")
        self.assert_active("9.19.0.99-cuda13")

    def test_leftovers_of_killed_commands_are_swept(self):
        self.install("v9_txz")
        vdir = os.path.join(self.root, "versions")
        for leaf in (".staging-999999-0badc0de", ".trash-999998-00000001"):
            os.makedirs(os.path.join(vdir, leaf, "lib"))
            with open(os.path.join(vdir, leaf, "lib", "big"), "wb") as f:
                f.write(b"\0" * (1 << 20))
        r = self.ok("switch", "9.19")
        self.assertIn("removed 2 folders left in '%s' by interrupted commands (2.0 MB freed)"
                      % vdir, r.err)
        self.assertEqual(self.leftovers(), [])
        # list takes no lock: it never removes anything
        os.makedirs(os.path.join(vdir, ".staging-1-2"))
        self.ok("list")
        self.assertEqual(self.leftovers(), [".staging-1-2"])


class KillPoints(CliTest):
    """A power cut anywhere: CUDNNCTL_TEST_KILL_AT=N makes the process kill
    itself (SIGKILL) at its Nth change to the disk (a folder made, an entry
    removed, a file written, a rename, a link, each entry extracted).  Each
    command is run once for every N until it gets through; after each kill
    the root is consistent (only whole versions listed, each matching its
    record; `current` names one of them), the profiles are exactly as before
    or as after, and the next run of the command succeeds and leaves no
    leftovers."""
    fixtures = ("v9_zip", "v914_txz")
    V19, V14 = "9.19.0.99-cuda13", "9.14.0.99-cuda12"

    def reset(self, setup):
        shutil.rmtree(self.root, True)
        self.write(os.path.join(self.home, ".profile"), USER_PROFILE)
        self.write(os.path.join(self.home, ".bashrc"), USER_BASHRC)
        for args in setup:
            self.ok(*args)

    def profiles(self):
        return [self.read(os.path.join(self.home, n)) for n in (".profile", ".bashrc")]

    def check_consistent(self, label):
        doc = self.ok("list", "--json").json()
        ids = [i["id"] for i in doc["installed"]]
        for vid in ids:
            r = self.run_cli("verify", vid, "--no-gpu", "--full", "--json")
            files = {st["stage"]: st for st in r.json()["stages"]}["files"]
            self.assertEqual(files["status"], "pass", "%s: %s is not whole:%s" % (
                label, vid, r))
        active = self.active_id()
        if active is not None:
            self.assertIn(active, ids, "%s: current names %s" % (label, active))
        return ids

    def sweep(self, setup, args, again_ok=(0,), first=1, stride=1):
        """The number of kills; every STRIDE-th point from FIRST (a class
        each, so that no ctest entry holds a whole sweep)."""
        self.reset(setup)
        before = self.profiles()
        self.ok(*args)
        after = self.profiles()
        done = self.check_consistent("after")
        kills = 0
        for at in range(first, 500, stride):
            self.reset(setup)
            r = self.run_cli(*args, env={"CUDNNCTL_TEST_KILL_AT": str(at)})
            if r.rc == 0:
                break
            self.assertEqual(r.rc, -signal.SIGKILL, "at=%d:%s" % (at, r))
            kills += 1
            label = "%s killed at %d" % (" ".join(args), at)
            self.check_consistent(label)
            # each profile is written whole: as before or as after
            for now, b, a in zip(self.profiles(), before, after):
                self.assertIn(now, (b, a), label)
            r = self.run_cli(*args)
            self.assertIn(r.rc, again_ok, "%s, then again:%s" % (label, r))
            self.assertEqual(self.profiles(), after, "%s, then again" % label)
            vdir = os.path.join(self.root, "versions")
            left = [n for n in os.listdir(vdir) if n.startswith(".")]
            self.assertEqual(left, [], "%s: leftovers after the next run" % label)
            self.assertEqual(sorted(self.check_consistent(label + ", then again")),
                             sorted(done))
        return kills

    def packs(self):
        v19, m19 = FX.pack("v9_zip")
        v14, m14 = FX.pack("v914_txz")
        return ("install", v19, "--manifest", m19), ("install", v14, "--manifest", m14)


# The sweeps, a few per class: each class is a ctest entry, and they run
# side by side; an install's points are split between two classes, the odd
# ones and the even ones.  Each asserts it swept about as many points as it
# had when it was written (a sweep that stops early proves less).
class TestKillPointsInstallZip1(KillPoints):
    def test_every_odd_kill_point_of_installing_a_zip(self):
        inst19, _ = self.packs()
        self.assertGreaterEqual(self.sweep([], inst19, first=1, stride=2), 21)  # 47 in all


class TestKillPointsInstallZip2(KillPoints):
    def test_every_even_kill_point_of_installing_a_zip(self):
        inst19, _ = self.packs()
        self.assertGreaterEqual(self.sweep([], inst19, first=2, stride=2), 21)  # 47 in all


class TestKillPointsInstallTarXz1(KillPoints):
    def test_every_odd_kill_point_of_installing_a_tar_xz(self):
        # its files written by the scan, then moved into place
        _, inst14 = self.packs()
        self.assertGreaterEqual(self.sweep([], inst14, first=1, stride=2), 40)  # 89 in all


class TestKillPointsInstallTarXz2(KillPoints):
    def test_every_even_kill_point_of_installing_a_tar_xz(self):
        _, inst14 = self.packs()
        self.assertGreaterEqual(self.sweep([], inst14, first=2, stride=2), 40)  # 89 in all


class TestKillPointsInstallBeside1(KillPoints):
    def test_every_odd_kill_point_of_installing_beside_an_active_version(self):
        inst19, inst14 = self.packs()
        self.assertGreaterEqual(self.sweep([inst19], inst14 + ("--no-activate",),
                                           first=1, stride=2), 35)  # 79 in all (37 before the one-pass tar.xz)


class TestKillPointsInstallBeside2(KillPoints):
    def test_every_even_kill_point_of_installing_beside_an_active_version(self):
        inst19, inst14 = self.packs()
        self.assertGreaterEqual(self.sweep([inst19], inst14 + ("--no-activate",),
                                           first=2, stride=2), 35)  # 79 in all (37 before the one-pass tar.xz)


class TestKillPointsUninstall(KillPoints):
    def test_every_kill_point_of_uninstall(self):
        inst19, inst14 = self.packs()
        self.assertGreaterEqual(
            self.sweep([inst19, inst14 + ("--no-activate",)], ("uninstall", "9.14"),
                       again_ok=(0, EXIT["NOTFOUND"])), 28)  # 32 (2026-12-01)


class TestKillPointsUninstallActive(KillPoints):
    def test_every_kill_point_of_uninstalling_the_active_version(self):
        inst19, _ = self.packs()
        self.assertGreaterEqual(
            self.sweep([inst19], ("uninstall", "9.19", "--force"),
                       again_ok=(0, EXIT["NOTFOUND"])), 37)  # 42 (2026-12-01)


class TestKillPointsSwitch(KillPoints):
    def test_every_kill_point_of_switch_and_deactivate(self):
        inst19, inst14 = self.packs()
        total = self.sweep([inst19, inst14], ("switch", "9.14"))
        total += self.sweep([inst19], ("deactivate",))
        self.assertGreaterEqual(total, 11)  # 6 + 7


if __name__ == "__main__":
    unittest.main()

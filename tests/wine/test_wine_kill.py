#!/usr/bin/env python3
"""cudnnctl.exe under Wine killed at each of its writes, renames and
registry changes (CUDNNCTL_TEST_KILL_AT): a first install, and switch,
uninstall, deactivate and path restore.

Part of the Wine suite: tests/wine/winetest.py has the prefix, the
registry helpers and the WineTest base (and says how to run a file).
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import winetest as W  # noqa: E402  (W.WINE_, W.FX: made by W.start())
from winetest import *  # noqa: E402,F401,F403  (setUpModule, tearDownModule too)


# ------------------------------------------------------------ kill points
class KillPoints(WineTest):
    def tree(self):
        # the lock file holds the pid of the last holder: present is what
        # counts (snapshot's default)
        return snapshot(self.root)


class KillPointsInstall:
    """Every kill point of a first install under Wine, in STRIDE classes
    (one ctest entry each, so that none takes minutes): the one with OFFSET
    k kills at points k+1, k+1+STRIDE, ... until a run is not killed, i.e.
    it got past the last point.  A mixin, ahead of KillPoints, so that it
    does not run as a class of its own; each class names sweep_install as
    its test."""
    STRIDE = 8
    OFFSET = 0

    def sweep_install(self):
        # the install ends in registry changes: after each kill the root
        # lists only whole versions, the user PATH and CUDNN_PATH are each
        # as before or as after, and the next install finishes cleanly
        path, manifest = W.FX.fake("good")
        args = ("install", zpath(path), "--manifest", zpath(manifest), "--no-verify")
        vdir = os.path.join(self.root, "versions")

        def state():
            return self.user_path_and_cudnn_path()

        before = state()
        self.ok(*args)
        after = state()
        self.ok("deactivate")
        shutil.rmtree(self.root, True)
        self.assertEqual(state(), before)
        kills = 0
        for at in range(1 + self.OFFSET, 400, self.STRIDE):
            r = self.run_cli(*args, env={"CUDNNCTL_TEST_KILL_AT": str(at)})
            if r.rc == 0:
                break
            kills += 1
            self.assertEqual(r.rc, 137, "at=%d:%s" % (at, r))
            # each value is written whole: as before or as after
            for now, b, a in zip(state(), before, after):
                self.assertIn(now, (b, a), "at=%d" % at)
            doc = self.ok("list", "--json").json() if os.path.isdir(vdir) else {"installed": []}
            self.assertIn([i["id"] for i in doc["installed"]], ([], [VID19]), "at=%d" % at)
            self.ok(*args)
            self.assertEqual(state(), after, "at=%d, then again" % at)
            self.assertEqual([n for n in os.listdir(vdir) if n.startswith(".")], [])
            self.ok("deactivate")
            shutil.rmtree(self.root, True)
            self.assertEqual(state(), before)
        print("\n  [info] kill points under Wine, every %d from %d: %d"
              % (self.STRIDE, 1 + self.OFFSET, kills), file=sys.stderr)
        self.assertEqual(r.rc, 0, "the last run was killed too:%s" % r)
        self.assertGreater(kills, 1)


class TestKillPointsInstall0(KillPointsInstall, KillPoints):
    OFFSET = 0
    test_kill_points = KillPointsInstall.sweep_install


class TestKillPointsInstall1(KillPointsInstall, KillPoints):
    OFFSET = 1
    test_kill_points = KillPointsInstall.sweep_install


class TestKillPointsInstall2(KillPointsInstall, KillPoints):
    OFFSET = 2
    test_kill_points = KillPointsInstall.sweep_install


class TestKillPointsInstall3(KillPointsInstall, KillPoints):
    OFFSET = 3
    test_kill_points = KillPointsInstall.sweep_install


class TestKillPointsInstall4(KillPointsInstall, KillPoints):
    OFFSET = 4
    test_kill_points = KillPointsInstall.sweep_install


class TestKillPointsInstall5(KillPointsInstall, KillPoints):
    OFFSET = 5
    test_kill_points = KillPointsInstall.sweep_install


class TestKillPointsInstall6(KillPointsInstall, KillPoints):
    OFFSET = 6
    test_kill_points = KillPointsInstall.sweep_install


class TestKillPointsInstall7(KillPointsInstall, KillPoints):
    OFFSET = 7
    test_kill_points = KillPointsInstall.sweep_install


class KillPointsChange(KillPoints):
    """The kill points of one command after install (a class each): each
    value is written whole and the next run of the command finishes it."""

    def setUp(self):
        super().setUp()
        self.set_user_path("REG_EXPAND_SZ", r"C:\Tools;%SystemRoot%\system32")
        self.install("old", V14)
        self.install("good")

    def kill_sweep(self, args, reset, first=1, stride=1):
        """Kills `cudnnctl ARGS` at each of its writes, renames and registry
        changes in turn (CUDNNCTL_TEST_KILL_AT), or at every STRIDE-th
        from FIRST.  After each kill: the user
        PATH, CUDNN_PATH, the active version and the listed versions are
        each as before or as after; running ARGS again ends as after, with
        no leftovers; reset() puts the state before back.  The number of
        kills."""
        vdir = os.path.join(self.root, "versions")

        def state():
            return (*self.user_path_and_cudnn_path(), self.active_id(),
                    [i["id"] for i in self.ok("list", "--json").json()["installed"]])

        before = state()
        self.ok(*args)
        after = state()
        reset()
        self.assertEqual(state(), before)
        kills = 0
        for at in range(first, 200, stride):
            r = self.run_cli(*args, env={"CUDNNCTL_TEST_KILL_AT": str(at)})
            if r.rc == 0:
                break
            kills += 1
            self.assertEqual(r.rc, 137, "%s at=%d:%s" % (args[0], at, r))
            now = state()
            for n, b, a in zip(now, before, after):
                self.assertIn(n, (b, a), "%s at=%d" % (args[0], at))
            # again: it finishes; an uninstall killed after its commit
            # point (the rename) is done and says so
            r = self.run_cli(*args)
            self.assertTrue(r.rc == 0 or (now == after and args[0] == "uninstall"
                                          and r.rc == EXIT["NOTFOUND"]),
                            "%s at=%d, then again:%s" % (args[0], at, r))
            self.assertEqual(state(), after, "%s at=%d, then again" % (args[0], at))
            self.assertEqual([n for n in os.listdir(vdir) if n.startswith(".")], [])
            reset()
            self.assertEqual(state(), before)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(state(), after)
        reset()
        return kills

    def sweep(self, args, reset, first=1, stride=1):
        kills = self.kill_sweep(args, reset, first, stride)
        print("\n  [info] kill points of %s under Wine, every %d from %d: %d"
              % (args[0], stride, first, kills), file=sys.stderr)
        self.assertGreater(kills, 0)


class TestKillPointsSwitch(KillPointsChange):
    def test_kill_points(self):
        self.sweep(("switch", V14), lambda: self.ok("switch", V19))


class KillPointsUninstall(KillPointsChange):
    """uninstall's points, every STRIDE-th from OFFSET+1 in each of STRIDE
    classes (each reset installs the old version again); no tests of its
    own, as KillPointsInstall."""
    STRIDE = 5
    OFFSET = 0

    def sweep_uninstall(self):
        self.sweep(("uninstall", V14), lambda: (self.install("old", V14), self.ok("switch", V19)),
                   1 + self.OFFSET, self.STRIDE)


class TestKillPointsUninstall0(KillPointsUninstall):
    OFFSET = 0
    test_kill_points = KillPointsUninstall.sweep_uninstall


class TestKillPointsUninstall1(KillPointsUninstall):
    OFFSET = 1
    test_kill_points = KillPointsUninstall.sweep_uninstall


class TestKillPointsUninstall2(KillPointsUninstall):
    OFFSET = 2
    test_kill_points = KillPointsUninstall.sweep_uninstall


class TestKillPointsUninstall3(KillPointsUninstall):
    OFFSET = 3
    test_kill_points = KillPointsUninstall.sweep_uninstall


class TestKillPointsUninstall4(KillPointsUninstall):
    OFFSET = 4
    test_kill_points = KillPointsUninstall.sweep_uninstall


class TestKillPointsDeactivate(KillPointsChange):
    def test_kill_points(self):
        self.sweep(("deactivate",), lambda: self.ok("switch", V19))


class TestKillPointsPathRestore(KillPointsChange):
    def test_kill_points(self):
        self.sweep(("path", "restore"), lambda: self.ok("switch", V19))


if __name__ == "__main__":
    W.main("test_wine_kill.py")

#!/usr/bin/env python3
"""cudnnctl.exe under Wine: what it refuses (hostile zips, Windows name
rules, a Linux archive, an unknown archive), Ctrl+C, and the junction
data on a real NTFS volume.

Part of the Wine suite: tests/wine/winetest.py has the prefix, the
registry helpers and the WineTest base (and says how to run a file).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import winetest as W  # noqa: E402  (W.WINE_, W.FX: made by W.start())
from winetest import *  # noqa: E402,F401,F403  (setUpModule, tearDownModule too)


# ---------------------------------------------------------------- refusals
class TestRefusals(WineTest):
    def tree(self):
        # the lock file holds the pid of the last holder: present is what
        # counts (snapshot's default)
        return snapshot(self.root)

    def test_hostile_zip_is_refused(self):
        for pre in (False, True):
            if pre:
                self.install("good")
            for kind in ("dotdot", "dotdot-backslash", "absolute-drive"):
                with self.subTest(kind=kind, root_exists=pre):
                    before = self.tree()
                    path_before = self.user_path()
                    self.fails(EXIT["UNSAFE"], "install", zpath(W.FX.hostile(kind)),
                               "--allow-unknown", "--cuda", "12",
                               words=("refusing", "nothing was written"),
                               names_in_archive=("C:/evil.txt",))
                    self.assertEqual(self.tree(), before)
                    self.assertEqual(os.path.lexists(self.root), pre)
                    self.assertEqual(self.user_path(), path_before)
                    self.assertFalse(os.path.exists(os.path.join(W.WINE_.drive_c, "evil.txt")))
                    self.assertFalse(os.path.exists(os.path.join(W.WINE_.tmp, "evil.txt")))

    def test_windows_name_rules(self):
        # a CON entry used to fail half-way under Wine and leave a staging
        # folder that blocked every later install; a trailing dot would
        # overwrite the library it names: both refused before any write,
        # and the next install goes through
        for kind, why in (("device-con", "Windows device"),
                          ("trailing-dot", "ending in a dot or a space"),
                          ("device-folder", "Windows device")):
            with self.subTest(kind=kind):
                before = self.tree()
                self.fails(EXIT["UNSAFE"], "install", zpath(W.FX.hostile(kind)),
                           "--allow-unknown", "--cuda", "12",
                           words=("refusing", why, "nothing was written"))
                self.assertEqual(self.tree(), before)
        self.install("good")
        self.assert_active(VID19)

    def interrupt_paused(self, signals, *args, at=3):
        """Runs cudnnctl ARGS paused at its AT-th interrupt point
        (CUDNNCTL_TEST_PAUSE_AT), then sends each of signals to the Wine
        process: Wine turns SIGINT into a CTRL_C_EVENT for the console
        handlers, as Ctrl+C in a console does.  The finished Result."""
        import signal as _signal
        marker = os.path.join(W.WINE_.tmp, "paused-%d" % at)
        if os.path.exists(marker):
            os.unlink(marker)
        cmd = cli_command(W.WINE_.exe, args, self.root_win)
        env = dict(W.WINE_.env, CUDNNCTL_TEST_PAUSE_AT="%d:%s" % (at, zpath(marker)))
        proc = subprocess.Popen([WINE] + cmd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not os.path.exists(marker) and proc.poll() is None:
            self.assertLess(time.monotonic(), deadline, "never paused")
            time.sleep(0.05)
        for i, sig in enumerate(signals):
            # a later one finds the process gone when the first one's
            # clean-up was done by then (seen under load): that ends the
            # same way, exit 130 and everything put back
            if i and proc.poll() is not None:
                break
            try:
                os.kill(proc.pid, sig or _signal.SIGINT)
            except ProcessLookupError:
                assert i, "the process ended before the first signal"
                break
            time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
        proc.args = cmd
        return Result(cmd, subprocess.CompletedProcess(cmd, proc.returncode, out, err),
                      runner="wine ", crlf=True)

    def test_ctrl_c_stops_and_puts_back(self):
        """A real Ctrl+C in the middle of an install (through Wine's console
        control events, not the test hook's direct call): exit 130, the
        staging folder gone, the active version, user PATH and CUDNN_PATH as
        they were; a second Ctrl+C ends the process at once, and the next
        command sweeps what that left."""
        self.install("old", V14)
        state = (self.user_path(), W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        path, manifest = W.FX.fake("good")
        args = ("install", zpath(path), "--manifest", zpath(manifest))
        vdir = os.path.join(self.root, "versions")
        for at in (2, 6):
            r = self.interrupt_paused([None], *args, at=at)
            self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
            self.assertIn("interrupted", r.err)
            self.assertEqual(sorted(os.listdir(vdir)), [VID14], "at=%d" % at)
            self.assertEqual((self.user_path(), W.WINE_.reg_get(USER_ENV, "CUDNN_PATH")), state)
            self.assert_active(VID14)
        # twice: the process ends at once, whatever it was doing
        r = self.interrupt_paused([None, None], *args, at=4)
        self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
        self.assertEqual((self.user_path(), W.WINE_.reg_get(USER_ENV, "CUDNN_PATH")), state)
        self.ok("list")
        self.assertEqual(sorted(os.listdir(vdir)), [VID14])
        self.install("good")
        self.assert_active(VID19)

    def test_linux_tar_xz_is_refused_leaving_no_trace(self):
        """A tar.xz is decompressed once, into a delete-on-close file under
        the root: refused for its platform, it leaves nothing behind."""
        self.install("good")
        path, manifest = W.FX.pack("linux")
        before = self.tree()
        self.fails(EXIT["PLATFORM"], "install", zpath(path), "--manifest", zpath(manifest),
                   words=("linux-x86_64", "windows-x86_64"))
        self.assertEqual(self.tree(), before)
        self.assert_active(VID19)

    def test_unknown_archive_is_refused(self):
        path, _ = W.FX.fake("good")
        self.fails(EXIT["UNKNOWN_ARCHIVE"], "install", zpath(path),
                   words=("matches none", "--allow-unknown"))
        self.assertFalse(os.path.lexists(self.root))
        self.assertIsNone(W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"))



# -------------------------------------------------------------- junctions
JUNCTION_DATA = os.environ.get("CUDNNCTL_JUNCTION_DATA") or os.path.join(
    os.path.dirname(EXE), "tests", "junction-data.exe")


def ntfs_missing():
    """Why an NTFS volume cannot be mounted here, or None."""
    for tool, pkg in (("mkntfs", "ntfs-3g"), ("ntfs-3g", "ntfs-3g"), ("setfattr", "attr"),
                      ("getfattr", "attr")):
        if not shutil.which(tool):
            return "%s not found (apt-get install %s)" % (tool, pkg)
    if os.geteuid() != 0 or not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return "mounting ntfs-3g needs root and /dev/fuse"
    if not os.path.isfile(JUNCTION_DATA):
        return "no %s (set CUDNNCTL_JUNCTION_DATA)" % JUNCTION_DATA
    return None


class TestJunctionsOfThisWine(WineTest):
    """Whether this Wine makes and follows a junction (junction-data.exe
    probe: FSCTL_SET_REPARSE_POINT with a mount-point buffer, then a file
    opened through it), and that cudnnctl's `current` is what that allows:
    a junction that leads to the version where it does, the pointer file
    where it does not.  Wine 8 and Wine 10 (scripts/test-wine10.sh) both
    refuse the reparse point (2026-12-02), so both take the pointer file;
    a Wine that makes junctions runs the junction path for real here."""

    def test_current_is_what_this_wine_can_make(self):
        if not os.path.isfile(JUNCTION_DATA):
            self.skipTest("no %s (set CUDNNCTL_JUNCTION_DATA)" % JUNCTION_DATA)
        probe = "C:\\probe-%d" % W.WineTest.counter
        r = W.WINE_.run([JUNCTION_DATA, "probe", probe])
        self.assertEqual(r.rc, 0, r)
        got = dict(line.split("=", 1) for line in r.out.split())
        shutil.rmtree(W.WINE_.linux(probe), True)
        sys.stderr.write("  [info] junctions here: set %s, follow %s\n"
                         % (got["set"], got["follow"]))
        self.install("good")
        current = os.path.join(self.root, "current")
        if got["set"] == "ok" and got["follow"] == "ok":
            self.assertTrue(os.path.isdir(current), "a junction was possible")
            r = W.WINE_.run(["cmd", "/c", "dir", "/b", self.root_win + "\\current\\bin"])
            self.assertIn("cudnn64_9.dll", r.out, r)
        else:
            self.assertTrue(os.path.isfile(current), "no junction: the pointer file")
        self.assert_active(VID19)


class TestJunctionOnNtfs(unittest.TestCase):
    """Wine cannot make junctions, so cudnnctl's junction code is split:
    the reparse data (built and read by os-win.c's functions, run here
    under Wine through junction-data.exe) goes onto a real NTFS volume
    through ntfs-3g, whose driver must then follow it to the version's
    folder as Windows would.  What stays unchecked is the DeviceIoControl
    call that hands the same bytes to Windows."""

    @classmethod
    def setUpClass(cls):
        why = ntfs_missing()
        if why:
            raise unittest.SkipTest(why)
        cls.tmp = tempfile.mkdtemp(prefix="cudnnctl-ntfs-")
        cls.image = os.path.join(cls.tmp, "ntfs.img")
        cls.mnt = os.path.join(cls.tmp, "mnt")
        os.mkdir(cls.mnt)
        with open(cls.image, "wb") as f:
            f.truncate(16 << 20)
        run_checked(["mkntfs", "-F", "-f", "-q", cls.image])
        cls.mounted = False

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "tmp", None):
            if cls.mounted:
                subprocess.run(["umount", cls.mnt])
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def mount(self, first=False):
        r = subprocess.run(["ntfs-3g", self.image, self.mnt], capture_output=True, text=True)
        if r.returncode and first:
            # a container without the right to mount FUSE file systems
            self.skipTest("cannot mount with ntfs-3g here: %s" % (r.stderr.strip() or r.returncode))
        self.assertEqual(r.returncode, 0, "ntfs-3g failed: %s" % r.stderr)
        type(self).mounted = True

    def umount(self):
        run_checked(["umount", self.mnt])
        type(self).mounted = False

    def data(self, target):
        r = W.WINE_.run([JUNCTION_DATA, "make", target])
        self.assertEqual(r.rc, 0, r)
        return r.out.strip()

    def read(self, hexdata):
        r = W.WINE_.run([JUNCTION_DATA, "read", hexdata])
        self.assertEqual(r.rc, 0, r)
        return r.out.strip()

    def test_ntfs_follows_the_junction_cudnnctl_writes(self):
        # the volume is C: to the junction; ntfs-3g resolves its targets
        # inside the volume
        target = "C:\\cudnn\\versions\\%s" % VID19
        hexdata = self.data(target)
        self.assertTrue(hexdata.startswith("030000a0"), hexdata)  # mount point
        self.mount(first=True)
        vbin = os.path.join(self.mnt, "cudnn", "versions", VID19, "bin")
        os.makedirs(vbin)
        with open(os.path.join(vbin, "cudnn64_9.dll"), "wb") as f:
            f.write(b"MZ cudnn 9.19")
        current = os.path.join(self.mnt, "cudnn", "current")
        os.mkdir(current)  # a junction is an empty folder with the data
        run_checked(["setfattr", "-n", "system.ntfs_reparse_data", "-v", "0x" + hexdata,
                     current])
        # read back from the disk, not from the driver's cache
        self.umount()
        self.mount()
        self.assertEqual(os.readlink(current),
                         os.path.join(self.mnt, "cudnn", "versions", VID19))
        with open(os.path.join(current, "bin", "cudnn64_9.dll"), "rb") as f:
            self.assertEqual(f.read(), b"MZ cudnn 9.19")
        # what the volume holds is what cudnnctl reads back as the target
        stored = run_checked(["getfattr", "-h", "-e", "hex", "-n",
                              "system.ntfs_reparse_data", current])
        m = re.search(r"system\.ntfs_reparse_data=0x([0-9a-f]+)", stored)
        self.assertTrue(m, stored)
        self.assertEqual(m.group(1), hexdata)
        self.assertEqual(self.read(hexdata), target)

    def test_damaged_data_is_neither_written_nor_read(self):
        # cudnnctl makes no data for a target a junction cannot have
        r = W.WINE_.run([JUNCTION_DATA, "make", "\\\\server\\share\\cudnn"])
        self.assertEqual(r.rc, 1, r)
        hexdata = self.data("C:\\x")
        r = W.WINE_.run([JUNCTION_DATA, "read", hexdata[:-4]])  # cut short
        self.assertEqual(r.rc, 1, r)


if __name__ == "__main__":
    W.main("test_wine_refusals.py")

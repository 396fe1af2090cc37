#!/usr/bin/env python3
"""cudnnctl.exe under Wine, the machine as users bring it: scan finds the
fake cuDNN DLLs planted in Wine's real C:\\windows\\system32, in a CUDA
toolkit's bin (CUDA_PATH) and in NVIDIA's installer's folder, each with
its FileVersion, owner and search order; quarantine moves the System32
copy aside and --restore puts it back byte for byte; a Windows process
holding a DLL with LoadLibrary (tests/wine/holddll.c) makes uninstall and
quarantine refuse, naming its process id.

Part of the Wine suite: tests/wine/winetest.py has the prefix, the
registry helpers and the WineTest base (and says how to run a file).
"""
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import winetest as W  # noqa: E402  (W.WINE_, W.FX: made by W.start())
from winetest import *  # noqa: E402,F401,F403  (setUpModule, tearDownModule too)

HOLDDLL = os.environ.get("CUDNNCTL_HOLDDLL") or os.path.join(
    os.path.dirname(W.EXE), "tests", "holddll.exe")
SYS32 = "C:\\windows\\system32"
INSTALLER = "C:\\Program Files\\NVIDIA\\CUDNN"


class Holder:
    """holddll.exe with a DLL loaded, until its stdin closes."""

    def __init__(self, dll_win):
        for attempt in range(3):
            self.proc = subprocess.Popen([W.WINE, HOLDDLL, dll_win], env=W.WINE_.env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True)
            line = self.proc.stdout.readline().split()
            if line[:1] == ["ready"]:
                break
            self.proc.kill()
            rc = self.proc.wait(timeout=120)
            self.proc.stdin.close()
            self.proc.stdout.close()
            if not W.unstarted(rc, " ".join(line), ""):
                raise AssertionError("holddll.exe could not load %s: %s (status %d)"
                                     % (dll_win, line, rc))
            W.said_unstarted("holddll.exe", rc)
        else:
            raise AssertionError("wine did not start holddll.exe three times")
        self.pid = int(line[1])

    def stop(self):
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.proc.wait(timeout=120)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class MachineTest(WineTest):
    def setUp(self):
        super().setUp()
        self.sys32_dll = os.path.join(W.WINE_.linux(SYS32), "cudnn64_9.dll")
        self.assertFalse(os.path.exists(self.sys32_dll))
        shutil.copy(W.FX.dll("old"), self.sys32_dll)
        self.addCleanup(lambda: os.path.exists(self.sys32_dll) and os.remove(self.sys32_dll))
        self.toolkit_win = self.root_win + "\\cuda\\v12.8"
        v8 = os.path.join(os.path.dirname(APPCUDNN8), "fake-v8", "cudnn64_8.dll")
        tk_bin = W.WINE_.linux(self.toolkit_win + "\\bin")
        os.makedirs(tk_bin)
        shutil.copy(v8, tk_bin)
        inst = W.WINE_.linux(INSTALLER + "\\v9.1\\bin\\12.x")
        os.makedirs(inst)
        shutil.copy(W.FX.dll("good"), inst)
        self.addCleanup(shutil.rmtree, W.WINE_.linux(INSTALLER), True)
        self.install("good")
        self.env = {"CUDA_PATH": self.toolkit_win}

    def copies(self):
        r = self.run_cli("scan", "--json", env=self.env)
        self.assertEqual(r.rc, 0, r)
        return {(c["dir"].lower(), c["major"]): c for c in r.json()["copies"]}


class TestScan(MachineTest):
    def test_the_planted_copies(self):
        c = self.copies()
        sys32 = c[(SYS32.lower(), 9)]
        self.assertEqual((sys32["place"], sys32["version"], sys32["version_from"],
                          sys32["owner"], sys32["search_rank"], sys32["before_active"]),
                         ("System32", "9.14.0", "FileVersion", "unknown", 1, True))
        self.assertEqual(sys32["files"], ["cudnn64_9.dll"])
        self.assertIn("cudnn_ops64_9.dll", sys32["missing"])
        active = c[(self.bin_entry(VID19).lower(), 9)]
        self.assertEqual((active["owner"], active["active"], active["version"],
                          active["search_rank"], active["before_active"]),
                         ("cudnnctl", True, "9.19.0", 2, False))
        self.assertTrue(active["complete"], active)
        tk = c[((self.toolkit_win + "\\bin").lower(), 8)]
        self.assertEqual((tk["owner"], tk["cuda"], tk["place"]),
                         ("unknown", 12, "CUDA toolkit (CUDA_PATH)"))
        inst = c[((INSTALLER + "\\v9.1\\bin\\12.x").lower(), 9)]
        self.assertEqual((inst["owner"], inst["version"], inst["cuda"], inst["search_rank"]),
                         ("installer", "9.19.0", 12, 0))
        self.assertIn("Settings > Apps", inst["remove_with"])


class TestQuarantine(MachineTest):
    def test_system32_copy_out_and_back(self):
        data = read(self.sys32_dll)
        r = self.ok("quarantine", SYS32 + "\\cudnn64_9.dll")
        self.assertIn("undo with: cudnnctl quarantine --restore", r.out)
        self.assertFalse(os.path.exists(self.sys32_dll))
        c = self.copies()
        self.assertNotIn((SYS32.lower(), 9), c)
        self.assertEqual(c[(self.bin_entry(VID19).lower(), 9)]["search_rank"], 1)
        self.ok("quarantine", "--restore", "all")
        self.assertEqual(read(self.sys32_dll), data)

    def test_the_installer_copy_is_refused(self):
        """Named by its entry in Settings > Apps (the registry's Uninstall
        key), with what that entry runs."""
        key = "HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\cctl-test-cudnn"
        uninstaller = INSTALLER + "\\v9.1\\uninstall.exe"
        W.WINE_.reg("add", key, "/v", "DisplayName", "/d", "NVIDIA cuDNN 9.1 (test)", "/f")
        W.WINE_.reg("add", key, "/v", "UninstallString", "/d", uninstaller, "/f")
        self.addCleanup(W.WINE_.reg, "delete", key, "/f", check=False)
        before = read(W.WINE_.linux(INSTALLER + "\\v9.1\\bin\\12.x\\cudnn64_9.dll"))
        self.fails(EXIT["OWNED"], "quarantine", INSTALLER + "\\v9.1\\bin\\12.x",
                   words=("belongs to the installer NVIDIA cuDNN 9.1 (test)",
                          'uninstall "NVIDIA cuDNN 9.1 (test)" in Settings > Apps (it runs %s)'
                          % uninstaller))
        self.assertEqual(read(W.WINE_.linux(INSTALLER + "\\v9.1\\bin\\12.x\\cudnn64_9.dll")),
                         before)


class TestInUse(MachineTest):
    def test_uninstall_and_quarantine_refuse_while_loaded(self):
        h = Holder(self.bin_entry(VID19) + "\\cudnn64_9.dll")
        self.addCleanup(h.stop)
        self.ok("deactivate")
        self.fails(EXIT["INUSE"], "uninstall", VID19,
                   words=("cannot uninstall %s" % VID19, "pid %d" % h.pid))
        self.assertTrue(os.path.isdir(os.path.join(self.root, "versions", VID19)))
        s = Holder(SYS32 + "\\cudnn64_9.dll")
        self.addCleanup(s.stop)
        self.fails(EXIT["INUSE"], "quarantine", SYS32 + "\\cudnn64_9.dll",
                   words=("pid %d" % s.pid, "nothing was changed"))
        self.assertTrue(os.path.exists(self.sys32_dll))

    def test_uninstall_force_while_loaded(self):
        """--force: Windows renames a loaded DLL but does not delete it; the
        version is gone from the list at once, its files deleted by a later
        command once free."""
        h = Holder(self.bin_entry(VID19) + "\\cudnn64_9.dll")
        self.ok("deactivate")
        r = self.ok("uninstall", VID19, "--force")
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID19)), r)
        self.assertEqual(self.ok("list", "--json").json()["installed"], [])
        h.stop()
        self.ok("deactivate")  # a command that takes the lock sweeps the trash
        left = [n for n in os.listdir(os.path.join(self.root, "versions"))]
        self.assertEqual(left, [], r)


if __name__ == "__main__":
    W.main(__file__)

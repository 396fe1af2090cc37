#!/usr/bin/env python3
"""End-to-end tests of the Windows cudnnctl.exe under Wine.

Runs build-win/cudnnctl.exe (scripts/build-windows.sh) in a private Wine
prefix against Windows-layout zips packed at test time from fake cuDNN DLLs
that these tests build with mingw-w64 (tests/fake/fake-cudnn.c with a
VERSIONINFO from tests/fake/fake-version.rc).  Checks exit statuses,
messages, the install root and the registry (HKCU\\Environment Path and
CUDNN_PATH, and the machine PATH for shadowing).  Stdlib only (Python >=
3.11, Debian 12's /usr/bin/python3).

    python3 tests/wine/test_wine.py -v
    python3 tests/wine/test_wine.py -v -k Verify

Environment: CUDNNCTL_EXE (default ../../build-win/cudnnctl.exe from this
file), CUDNNCTL_MKCUDNN (default ../fixtures/mkcudnn.py), WINE (default
/usr/lib/wine/wine64).  Everything is skipped, with the reason, when Wine,
the mingw-w64 tools or the .exe are missing; run as a script, the exit
status is then 77 (ctest's SKIP_RETURN_CODE).  What these tests share with
the Linux CLI tests is in tests/lib/cctltest.py.

Wine notes (see /work/shared/FACTS.md): junctions do not work there, so
cudnnctl's `current` is a pointer file and the user PATH names
<root>\\versions\\<id>\\bin.  One `wineserver -p` serves the whole run and
is killed at the end; the prefix lives in a temporary folder.  The junction
data cudnnctl would write on NTFS is checked on a real NTFS volume mounted
with ntfs-3g (TestJunctionOnNtfs; skipped without root, /dev/fuse,
ntfs-3g or attr).  Every test
snapshots the registry values it may touch and puts them back.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from fixtures import Fixtures  # noqa: E402
from cctltest import (EXIT, GPU_STAGES, MKCUDNN, REPO, V9_PARTS, CliAsserts,  # noqa: E402
                      Result, cli_command, edited_manifest, load_tables,
                      run_checked, snapshot)

EXE = os.path.abspath(os.environ.get("CUDNNCTL_EXE")
                      or os.path.join(REPO, "build-win", "cudnnctl.exe"))
WINE = os.environ.get("WINE") or "/usr/lib/wine/wine64"
WINE = shutil.which(WINE) or WINE
# the fake cuDNN DLLs (tests/fake/variants.txt) and python.exe the
# Windows build made
FAKE_DIR = os.path.abspath(os.environ.get("CUDNNCTL_FAKE_DIR")
                           or os.path.join(REPO, "build-win", "tests", "fake"))
FAKEPYTHON = os.path.abspath(os.environ.get("CUDNNCTL_FAKEPYTHON")
                             or os.path.join(REPO, "build-win", "tests", "fakepython.exe"))

USER_ENV = r"HKCU\Environment"
MACHINE_ENV = r"HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment"
HIVES = {"HKCU": "HKEY_CURRENT_USER", "HKLM": "HKEY_LOCAL_MACHINE"}
REG_TYPES = {0: "REG_NONE", 1: "REG_SZ", 2: "REG_EXPAND_SZ", 3: "REG_BINARY",
             4: "REG_DWORD", 7: "REG_MULTI_SZ", 11: "REG_QWORD"}
REG_NUM = {v: k for k, v in REG_TYPES.items()}

V19, V14 = "9.19.0.99", "9.14.0.99"
VID19, VID14 = V19 + "-cuda12", V14 + "-cuda12"
NO_DRIVER = "nvcuda.dll not found"


def wineserver_path():
    """The wineserver of this Wine: next to it (Debian: /usr/lib/wine), or
    on PATH."""
    for d in (os.path.dirname(os.path.realpath(WINE)), os.path.dirname(WINE), "/usr/lib/wine"):
        for name in ("wineserver64", "wineserver"):
            if os.access(os.path.join(d, name), os.X_OK):
                return os.path.join(d, name)
    return shutil.which("wineserver") or shutil.which("wineserver64")


def missing_prerequisites():
    """Why the suite cannot run here, or None."""
    if not os.access(WINE, os.X_OK):
        return "Wine not found at %s (set WINE; apt-get install wine64)" % WINE
    if not wineserver_path():
        return "wineserver not found next to %s or on PATH" % WINE
    if not os.path.isfile(os.path.join(FAKE_DIR, "good", "cudnn64_9.dll")):
        return ("no fake cuDNN DLLs in %s (scripts/build-windows.sh -DCUDNNCTL_TESTS=ON, "
                "or set CUDNNCTL_FAKE_DIR)" % FAKE_DIR)
    if not os.path.isfile(EXE):
        return "no %s (run scripts/build-windows.sh, or set CUDNNCTL_EXE)" % EXE
    if not os.path.isfile(MKCUDNN):
        return "no %s (set CUDNNCTL_MKCUDNN)" % MKCUDNN
    return None


def zpath(path):
    """The Windows name of a Linux path outside the prefix (drive Z:)."""
    return "Z:" + os.path.abspath(path).replace("/", "\\")


# ------------------------------------------------------------------- Wine
class Wine:
    """A private prefix with one persistent wineserver for the whole run."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="cudnnctl-wine-")
        self.prefix = os.path.join(self.tmp, "prefix")
        self.drive_c = os.path.join(self.prefix, "drive_c")
        self.server = wineserver_path()
        # only what Wine needs: the rest of this environment would reach
        # the Windows process (CUDNNCTL_ROOT, CUDNN_PATH, ...)
        self.env = {k: os.environ[k] for k in ("PATH", "HOME", "USER", "LOGNAME", "TMPDIR")
                    if k in os.environ}
        self.env.update(WINEPREFIX=self.prefix, WINEDEBUG="-all", LANG="C.UTF-8",
                        LC_ALL="C.UTF-8", WINEDLLOVERRIDES="mscoree,mshtml=")
        self.exe = os.path.join(self.tmp, "cudnnctl.exe")
        self.started = False

    def start(self):
        # a private copy: a rebuild during the run must not change what runs
        shutil.copy2(EXE, self.exe)
        os.mkdir(self.prefix)
        t = time.monotonic()
        # persistent across the tests; it also exits a minute after the
        # last client should this run be killed before stop()
        subprocess.run([self.server, "-p60"], env=self.env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        self.started = True
        # creates the prefix (about 10 s); its helper processes stay with
        # the server, so their output must not be a pipe we wait on
        with open(os.path.join(self.tmp, "wineboot.log"), "wb") as log:
            subprocess.run([WINE, "wineboot", "--init"], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=log, stderr=log, timeout=300, check=True)
            # no X server here: Wine's null display driver gives windows
            # (the WM_SETTINGCHANGE test makes one) and a desktop; it is
            # read when the prefix starts, so start it again
            subprocess.run([WINE, "reg", "add", r"HKCU\Software\Wine\Drivers", "/v",
                            "Graphics", "/d", "null", "/f"], env=self.env,
                           stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=120,
                           check=True)
            # a program that crashes ends at once, winedbg's backtrace on
            # its stderr: the crash dialog would wait (with the null
            # driver, until the test's timeout)
            subprocess.run([WINE, "reg", "add", r"HKCU\Software\Wine\WineDbg", "/v",
                            "ShowCrashDialog", "/t", "REG_DWORD", "/d", "0", "/f"],
                           env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                           timeout=120, check=True)
        for arg in ("-k", "-w", "-p60"):
            subprocess.run([self.server, arg], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        # and up again before the first test (without this, the first
        # command after the restart was seen to hang for a minute)
        with open(os.path.join(self.tmp, "wineboot2.log"), "wb") as log:
            subprocess.run([WINE, "wineboot"], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=log, stderr=log, timeout=300, check=True)
        print("\n  [info] Wine prefix %s ready in %.1f s" % (self.prefix, time.monotonic() - t),
              file=sys.stderr)

    def stop(self):
        if self.started:
            subprocess.run([self.server, "-k"], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run([self.server, "-w"], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            self.started = False
        shutil.rmtree(self.tmp, ignore_errors=True)

    def linux(self, winpath):
        """The Linux path of C:\\..."""
        assert winpath[:3].upper() == "C:\\", winpath
        return os.path.join(self.drive_c, *[p for p in winpath[3:].split("\\") if p])

    def run(self, args, timeout=180, env=None):
        """Runs a Windows program; env: variables added for this run."""
        cmd = [str(a) for a in args]
        for attempt in range(3):
            proc = subprocess.run([WINE] + cmd, env=dict(self.env, **(env or {})),
                                  stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=timeout)
            # Wine itself failing to start the program is not the
            # program's answer, and the program never ran: ask again.  Seen
            # once in a while: cudnnctl.exe with status 1 and nothing
            # printed (it prints a message with every failure), and any
            # program with status 1 and Wine's launcher's own words
            # ("ShellExecuteEx failed: Internal error", a fresh-clone CI
            # run's `reg add`; the likely cause of the reg export and reg
            # delete failures the registry helpers ask again for)
            silent = (cmd[0].endswith("cudnnctl.exe") and proc.returncode == 1
                      and not proc.stdout and not proc.stderr)
            unlaunched = (proc.returncode == 1 and
                          b"ShellExecuteEx failed" in proc.stdout + proc.stderr)
            if not (silent or unlaunched):
                break
            sys.stderr.write("  [info] wine did not start %s (status 1%s); "
                             "running it again\n"
                             % (cmd[:2], ", ShellExecuteEx failed" if unlaunched
                                else ", no output"))
        # the C runtime writes text mode: CRLF line ends
        return Result(cmd, proc, runner="wine ", crlf=True)

    def reg(self, *args, check=True):
        r = self.run(["reg"] + list(args), timeout=60)
        if check and r.rc:
            raise AssertionError("reg failed:%s" % r)
        return r

    # -- registry values as (type name, text | int | bytes)
    def reg_values(self, key):
        """{name: (type, value)} of one key, read exactly through reg export
        (reg query prints in the console code page)."""
        out = os.path.join(self.tmp, "export.reg")
        if os.path.exists(out):
            os.remove(out)
        # reg export has been seen to fail once in a while under Wine
        # with the key there; ask again before taking it as absent
        for _ in range(3):
            r = self.reg("export", key, zpath(out), "/y", check=False)
            if not r.rc and os.path.exists(out):
                break
        else:
            return {}  # no such key
        with open(out, "rb") as f:
            text = f.read().decode("utf-16")
        text = re.sub(r"\\\r?\n\s*", "", text)  # continuation lines
        values, section = {}, None
        for line in text.splitlines():
            if line.startswith("["):
                section = line.strip("[]")
                continue
            m = re.match(r'^"((?:[^"\\]|\\.)*)"=(.*)$', line)
            if not m or section != self.full_key(key):
                continue
            name = re.sub(r"\\(.)", r"\1", m.group(1))
            values[name.lower()] = self.parse_reg_data(m.group(2))
        return values

    @staticmethod
    def parse_reg_data(data):
        if data.startswith('"'):
            return ("REG_SZ", re.sub(r"\\(.)", r"\1", data[1:-1]))
        if data.startswith("dword:"):
            return ("REG_DWORD", int(data[6:], 16))
        m = re.match(r"^hex(?:\(([0-9a-f]+)\))?:(.*)$", data)
        if not m:
            raise AssertionError("cannot parse exported value %r" % data)
        num = int(m.group(1), 16) if m.group(1) else 3
        raw = bytes(int(h, 16) for h in m.group(2).split(",") if h.strip())
        kind = REG_TYPES.get(num, "REG_%d" % num)
        if num in (1, 2):
            text = raw.decode("utf-16le")
            return (kind, text[:-1] if text.endswith("\0") else text)
        if num == 4:
            return (kind, int.from_bytes(raw, "little"))
        return (kind, raw)

    @staticmethod
    def full_key(key):
        hive, rest = key.split("\\", 1)
        return HIVES[hive] + "\\" + rest

    def reg_get(self, key, name):
        return self.reg_values(key).get(name.lower())

    def reg_add(self, key, name, kind, data):
        """reg add, as a user would set the value up."""
        if kind == "REG_BINARY":
            data = data.hex()
        self.reg("add", key, "/v", name, "/t", kind, "/d", str(data), "/f")

    def reg_delete(self, key, name):
        self.reg("delete", key, "/v", name, "/f", check=False)

    def reg_put(self, key, name, value):
        """Puts back an exact (type, value) from reg_get, or deletes."""
        if value is None:
            # reg.exe has been seen (once, in a fresh-clone CI run) to leave
            # the value in place, as reg export sometimes fails: the delete
            # is checked, asked again, and its output kept when it fails
            for _ in range(3):
                r = self.reg("delete", key, "/v", name, "/f", check=False)
                if self.reg_get(key, name) is None:
                    return
            raise AssertionError("reg delete left %s in place:%s" % (name, r))
        kind, v = value
        if isinstance(v, str):
            raw = (v + "\0").encode("utf-16le")
        elif isinstance(v, int):
            raw = v.to_bytes(4, "little")
        else:
            raw = v
        path = os.path.join(self.tmp, "import.reg")
        body = ("Windows Registry Editor Version 5.00\r\n\r\n[%s]\r\n\"%s\"=hex(%x):%s\r\n"
                % (self.full_key(key), name, REG_NUM[kind], ",".join("%02x" % b for b in raw)))
        with open(path, "wb") as f:
            f.write(b"\xff\xfe" + body.encode("utf-16le"))
        self.reg("import", zpath(path))


WINE_ = None


FX = None


def setUpModule():
    global WINE_, FX
    why = missing_prerequisites()
    if why:
        raise unittest.SkipTest(why)
    WINE_ = Wine()
    try:
        FX = Fixtures("windows-x86_64", FAKE_DIR, parent=WINE_.tmp)
        WINE_.start()
        # the .exe's own exit statuses and verify stages (EXIT, GPU_STAGES)
        load_tables(WINE_.run([WINE_.exe, "version", "--json"]))
    except BaseException:
        WINE_.stop()
        raise


def tearDownModule():
    if WINE_:
        WINE_.stop()


# ------------------------------------------------------------- test base
class WineTest(CliAsserts, unittest.TestCase):
    """A fresh install root C:\\tN per test; the registry values a test can
    touch are put back afterwards."""
    counter = 0
    WATCHED = ((USER_ENV, "Path"), (USER_ENV, "CUDNN_PATH"), (MACHINE_ENV, "Path"))

    def setUp(self):
        WineTest.counter += 1
        self.root_win = "C:\\t%d" % WineTest.counter
        self.root = WINE_.linux(self.root_win)
        self.assertFalse(os.path.lexists(self.root))
        self.addCleanup(shutil.rmtree, self.root, True)
        saved = {kn: WINE_.reg_get(*kn) for kn in self.WATCHED}
        self.addCleanup(self.restore_registry, saved)
        # every test starts from a prefix without cudnnctl's values
        WINE_.reg_delete(USER_ENV, "CUDNN_PATH")

    def restore_registry(self, saved):
        for (key, name), value in saved.items():
            if WINE_.reg_get(key, name) != value:
                WINE_.reg_put(key, name, value)
            self.assertEqual(WINE_.reg_get(key, name), value, "could not restore %s" % name)

    # -- running
    def run_cli(self, *args, root=True, verify=False, env=None):
        """--root self.root_win is added unless root is False or another
        root; install and switch get --no-verify unless verify."""
        return WINE_.run(cli_command(WINE_.exe, args,
                                     self.root_win if root is True else root, verify),
                         env=env)

    def fails(self, code, *args, words=(), names_in_archive=(), **kw):
        """CliAsserts.fails, and every Windows path in the message is spelled
        with '\\' (but for names_in_archive)."""
        r = super().fails(code, *args, words=words, **kw)
        assert_windows_paths(self, r.err, need=False, quoted=names_in_archive)
        return r

    def install(self, variant="good", version=V19, *extra, **kw):
        path, manifest = FX.fake(variant, version)
        return self.ok("install", zpath(path), "--manifest", zpath(manifest), *extra, **kw)

    # -- the root and the registry
    def bin_entry(self, vid, root_win=None):
        return "%s\\versions\\%s\\bin" % (root_win or self.root_win, vid)

    def vdir_win(self, vid):
        return "%s\\versions\\%s" % (self.root_win, vid)

    def active_id(self):
        """The id the pointer file <root>\\current names (Wine has no
        junctions), or None."""
        cur = os.path.join(self.root, "current")
        if not os.path.lexists(cur):
            return None
        self.assertTrue(os.path.isfile(cur) and not os.path.islink(cur),
                        "%s is not a plain file" % cur)
        with open(cur, encoding="utf-8") as f:
            text = f.read()
        m = re.fullmatch(r"cudnnctl-link versions/([^/\s]+)\n?", text)
        self.assertTrue(m, "unexpected pointer file: %r" % text)
        return m.group(1)

    def user_path(self):
        return WINE_.reg_get(USER_ENV, "Path")

    def set_user_path(self, kind, value):
        if value is None:
            WINE_.reg_delete(USER_ENV, "Path")
        else:
            WINE_.reg_add(USER_ENV, "Path", kind, value)
        # the set-up itself, read back exactly
        self.assertEqual(self.user_path(), None if value is None else (kind, value))

    def assert_user_path(self, kind, value):
        self.assertEqual(self.user_path(), (kind, value))

    def assert_cudnn_path(self, vid):
        want = None if vid is None else ("REG_SZ", self.vdir_win(vid))
        self.assertEqual(WINE_.reg_get(USER_ENV, "CUDNN_PATH"), want)

    def assert_active(self, vid, others=""):
        """vid is active: pointer file, user PATH = its bin then `others`,
        CUDNN_PATH."""
        self.assertEqual(self.active_id(), vid)
        self.assert_user_path("REG_EXPAND_SZ",
                              self.bin_entry(vid) + (";" + others if others else ""))
        self.assert_cudnn_path(vid)

    def backup(self):
        with open(os.path.join(self.root, "path-backup-user.txt"), encoding="utf-8") as f:
            return f.read()


def assert_windows_paths(test, text, need=True, quoted=()):
    """Every drive-letter path cudnnctl printed is spelled with '\\' only
    (the tests give it none with '/'), but for names quoted from an
    archive."""
    paths = [p for p in re.findall(r"[A-Za-z]:[\\/][^\s'\",;)]*", text)
             if p not in quoted]
    test.assertTrue(paths or not need, text)
    for p in paths:
        test.assertNotIn("/", p, "a Windows path with '/' in:\n%s" % text)


# ----------------------------------------------------------------- install
class TestInstall(WineTest):
    def test_install_into_c_cudnn_with_no_user_path(self):
        """C:\\cudnn, no user PATH value: created as REG_EXPAND_SZ with our
        entry; verify at the end passes."""
        self.root_win, self.root = "C:\\cudnn", WINE_.linux("C:\\cudnn")
        shutil.rmtree(self.root, ignore_errors=True)
        self.addCleanup(shutil.rmtree, self.root, True)
        self.set_user_path(None, None)
        path, _ = FX.fake("good")
        r = self.install(verify=True)
        self.assertIn("installed cuDNN %s for CUDA 12 (sha256 verified) into "
                      "C:\\cudnn\\versions\\%s\n" % (V19, VID19), r.out)
        assert_windows_paths(self, r.out + r.err)
        self.assertIn(os.path.basename(path), self.ok("list", "--json").out)
        vdir = os.path.join(self.root, "versions", VID19)
        for part in V9_PARTS:
            self.assertTrue(os.path.isfile(os.path.join(vdir, "bin", "cudnn%s64_9.dll" % part)))
        for rel in ("lib/x64/cudnn.lib", "lib/x64/cudnn64_9.lib", "include/cudnn_version.h",
                    "LICENSE", ".cudnnctl-record"):
            self.assertTrue(os.path.isfile(os.path.join(vdir, rel)), rel)
        self.assert_active(VID19)
        self.assertEqual(self.backup(), "missing\n")
        # the verify run at the end of install
        self.assertIn("file version %s" % V19, r.out)
        self.assertIn("cuDNN 9.19.0 (91900)", r.out)
        self.assertRegex(r.out, r"driver +skip .*%s" % re.escape(NO_DRIVER))

    def test_running_programs_hear_of_the_change(self):
        """A window (as Explorer has) gets WM_SETTINGCHANGE "Environment"
        from install and from deactivate, so programs started from it see
        the new PATH."""
        if not os.path.isfile(SETTINGWATCH):
            self.skipTest("no %s (set CUDNNCTL_SETTINGWATCH)" % SETTINGWATCH)
        watch = subprocess.Popen([WINE, SETTINGWATCH, "120"], env=WINE_.env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        self.addCleanup(watch.wait)
        self.addCleanup(watch.kill)
        self.assertEqual(watch.stdout.readline().strip(), b"ready")
        self.install("good")
        self.ok("deactivate")
        # SendMessageTimeout returns once each window has answered: both
        # broadcasts are in by now
        watch.kill()
        lines = [l.strip() for l in watch.stdout.read().decode().splitlines()]
        self.assertGreaterEqual(lines.count("WM_SETTINGCHANGE Environment"), 2, lines)

    def test_console_code_page_is_left_as_it_was(self):
        """cudnnctl shows UTF-8 while it runs, and gives the console (the
        user's shell's) its code page back, also after an error."""
        if not os.path.isfile(CONSOLECP) or not shutil.which("script"):
            self.skipTest("needs %s and script(1)" % CONSOLECP)
        cp, exe = zpath(CONSOLECP), zpath(WINE_.exe)
        line = " & ".join([cp, exe + " version", cp, exe + " nosuchcommand", cp])
        # a pseudo-terminal, so that the programs have a console
        r = subprocess.run(["script", "-qec", "%s cmd /c '%s'" % (WINE, line), "/dev/null"],
                           env=WINE_.env, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=180)
        # Wine's console draws each character with cursor escapes around it
        out = re.sub(r"\x1b\[[?0-9;]*[A-Za-z]|\r", "", r.stdout.decode("utf-8", "replace"))
        pages = re.findall(r"cp=(\d+)", out)
        self.assertEqual(len(pages), 3, out)
        self.assertNotEqual(pages[0], "0", "no console:\n" + out)
        self.assertEqual(pages, [pages[0]] * 3, out)

    def test_pointer_file_and_path_follow_switch(self):
        """current is a file naming the version (junctions do not work under
        Wine); the user PATH names versions\\<id>\\bin, never current\\bin."""
        self.install("good")
        self.assertTrue(os.path.isfile(os.path.join(self.root, "current")))
        self.assertFalse(os.path.isdir(os.path.join(self.root, "current")))
        self.assert_active(VID19)
        self.assertNotIn("current", self.user_path()[1])
        r = self.install("old", V14)  # a later install is activated too
        self.assertIn("%s -> %s" % (VID19, VID14), r.out)
        self.assert_active(VID14)
        r = self.ok("switch", "9.19")
        self.assertIn("%s -> %s" % (VID14, VID19), r.out)
        self.assert_active(VID19)
        r = self.ok("switch", VID14)
        self.assert_active(VID14)

    def test_list_human_and_json(self):
        self.ok("list")  # an empty or missing root lists nothing
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.assert_active(VID19)
        out = self.ok("list").out
        self.assertRegex(out, r"\* 9\.19\.0\.99 +12 .*verified, active")
        self.assertRegex(out, r"\n  9\.14\.0\.99 +12 .*verified\n")
        doc = self.ok("list", "--json").json()
        self.assertEqual(doc["root"], self.root_win)
        got = {i["id"]: (i["active"], i["verified"], i["platform"], i["cuda"])
               for i in doc["installed"]}
        self.assertEqual(got, {VID19: (True, True, "windows-x86_64", 12),
                               VID14: (False, True, "windows-x86_64", 12)})

    def test_several_workers_extract_the_same_files(self):
        """--jobs 4: the zip is extracted by four workers reading the file
        at their own offsets (ReadFile with an OVERLAPPED position); the
        record holds the same files and hashes as with one, and verify
        --full re-hashes them all against it."""
        def files():
            rec = os.path.join(self.root, "versions", VID19, ".cudnnctl-record")
            with open(rec, encoding="utf-8") as f:
                return sorted(line.split("\t")[2:4] + [line.split("\t")[6]]
                              for line in f if line.startswith("file\t"))
        self.install("good", V19, "--jobs", "1")
        one = files()
        self.ok("uninstall", V19, "--force")
        self.install("good", V19, "--jobs", "4")
        self.assertEqual(files(), one)
        self.assertGreater(len(one), 5)
        self.ok("verify", "--no-gpu", "--full")

    def test_uninstall(self):
        self.set_user_path("REG_SZ", "C:\\a;C:\\b")
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.fails(EXIT["ACTIVE"], "uninstall", "9.19", words=(VID19, "--force"))
        self.assert_active(VID19, "C:\\a;C:\\b")
        self.ok("uninstall", "9.14")
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID14)))
        self.assertEqual([i["id"] for i in self.ok("list", "--json").json()["installed"]],
                         [VID19])
        self.assert_active(VID19, "C:\\a;C:\\b")
        # the active one with --force: its PATH entry and CUDNN_PATH go too
        self.ok("uninstall", "9.19", "--force")
        self.assertIsNone(self.active_id())
        self.assertEqual(os.listdir(os.path.join(self.root, "versions")), [])
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\b")
        self.assert_cudnn_path(None)

    def test_deactivate_removes_only_ours(self):
        others = "C:\\a;%SystemRoot%\\foo;C:\\t999\\versions\\x\\bin;C:\\b"
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.assert_active(VID19, others)
        r = self.ok("deactivate")
        self.assertIn("deactivated", r.out)
        self.assert_user_path("REG_EXPAND_SZ", others)
        self.assert_cudnn_path(None)
        self.assertIsNone(self.active_id())
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, "versions"))),
                         [VID14, VID19])
        # switch activates again
        self.ok("switch", "9.14")
        self.assert_active(VID14, others)

    def test_env_names_the_version_folder(self):
        # `current` is a pointer file under Wine: env must name the
        # version's own folder, with Windows separators
        self.install("good")
        out = self.ok("env", "--shell", "cmd").out
        self.assertIn('set "CUDNN_PATH=%s"' % self.vdir_win(VID19), out)
        self.assertIn('set "PATH=%s;' % self.bin_entry(VID19), out)
        self.assertNotIn("current", out)
        self.assertNotIn("/", out.split("PATH=")[1].split(";")[0])
        out = self.ok("env", "--shell", "powershell").out
        self.assertIn("$env:CUDNN_PATH = '%s'" % self.vdir_win(VID19), out)

    def test_deactivate_keeps_a_cudnn_path_not_of_this_root(self):
        self.install("good")
        WINE_.reg_add(USER_ENV, "CUDNN_PATH", "REG_SZ", "D:\\my\\cudnn")
        self.ok("deactivate")
        self.assertEqual(WINE_.reg_get(USER_ENV, "CUDNN_PATH"), ("REG_SZ", "D:\\my\\cudnn"))
        self.assertIsNone(self.active_id())


# -------------------------------------------------------------- path restore
class TestCiMode(WineTest):
    def test_github_actions_job(self):
        """In a GitHub Actions job: the bin folder goes to GITHUB_PATH and
        CUDNN_PATH to GITHUB_ENV (LF line ends, as the runner writes), the
        registry is left alone, and the install's verify judges what the
        job's later steps get; --persist writes the registry as outside
        CI."""
        self.set_user_path("REG_EXPAND_SZ", r"C:\tools")
        runner = os.path.join(WINE_.tmp, "runner")
        shutil.rmtree(runner, True)
        os.mkdir(runner)
        env = {"GITHUB_ACTIONS": "true"}
        for name in ("ENV", "PATH", "OUTPUT"):
            env["GITHUB_" + name] = zpath(os.path.join(runner, name.lower()))
        r = self.install(verify=True, env=env)
        self.assertIn("for this job's later steps", r.out)
        self.assertIn("cuDNN 9.19.0 (91900)", r.out)  # verify's load stage passed
        self.assert_user_path("REG_EXPAND_SZ", r"C:\tools")
        self.assertIsNone(WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        self.assertEqual(self.active_id(), VID19)
        with open(os.path.join(runner, "path"), "rb") as f:
            self.assertEqual(f.read(), (self.bin_entry(VID19) + "\n").encode())
        with open(os.path.join(runner, "env"), "rb") as f:
            self.assertEqual(f.read(), ("CUDNN_PATH=%s\nCUDNNCTL_ROOT=%s\n"
                                        % (self.vdir_win(VID19), self.root_win)).encode())
        with open(os.path.join(runner, "output"), "rb") as f:
            out = f.read().decode()
        self.assertIn("cudnn-version=%s\ncuda=12\n" % V19, out)
        self.assertIn("changed=true\n", out)
        # a later step: PATH with the folder first, as the runner makes it
        # (Wine builds a process's PATH from the registry and WINEPATH)
        later = dict(env, WINEPATH=self.bin_entry(VID19))
        r = self.run_cli("verify", "--no-gpu", env=later)
        self.assertEqual(r.rc, 0, r)
        self.assertRegex(r.out, r"locate +pass")
        # --persist: the registry, as outside CI
        self.install("good", V19, "--persist", env=env)
        self.assert_active(VID19, r"C:\tools")


class TestArm64(WineTest):
    """NVIDIA's windows-arm64 zips (CUDA 13) keep the DLLs in bin\\arm64.
    Wine runs x64 only, so the machine is said with install --platform
    (what an x64 cudnnctl.exe emulated on an arm64 PC finds out itself
    through IsWow64Process2); verify from this x64 process reads the arm64
    DLLs and says why it does not load them."""
    V = V19  # the fake DLLs say 9.19.0.99 in their VERSIONINFO
    VID = V + "-cuda13"

    def pack(self):
        return FX.fake("good", self.V, platform="windows-arm64", cuda="13")

    def test_install_and_verify_an_arm64_build(self):
        self.set_user_path("REG_SZ", r"C:\tools")
        path, manifest = self.pack()
        # this machine is x64 to cudnnctl: refused, naming the way out
        r = self.fails(EXIT["PLATFORM"], "install", zpath(path), "--manifest", zpath(manifest),
                       words=["windows-arm64 build", "--platform windows-arm64"])
        self.assert_user_path("REG_SZ", r"C:\tools")
        r = self.ok("install", zpath(path), "--manifest", zpath(manifest),
                    "--platform", "windows-arm64", "--json")
        doc = r.json()
        self.assertEqual((doc["id"], doc["platform"]), (self.VID, "windows-arm64"), r)
        arm = self.bin_entry(self.VID) + "\\arm64"
        self.assert_user_path("REG_EXPAND_SZ", arm + r";C:\tools")
        self.assertTrue(os.path.isfile(os.path.join(self.root, "versions", self.VID, "bin",
                                                    "arm64", "cudnn64_9.dll")))
        # verify from this x64 process: the stages that read, not those
        # that load; never "error 193"
        doc = self.verify()
        self.assertEqual(doc["library"], arm + "\\cudnn64_9.dll")
        self.assert_stage(doc, "locate", "pass", "(user PATH)")
        self.assert_stage(doc, "files", "pass", "8/8 libraries")
        self.assert_stage(doc, "version", "warn", "file version %s" % self.V)
        version = self.stage(doc, "version")
        self.assertIn("cudnn64_9.dll is an arm64 DLL: only an arm64 process loads it "
                      "(this cudnnctl is x64)", version["reason"])
        self.assertIn("arm64 cudnnctl.exe", version["next"])
        self.assertNotEqual(self.stage(doc, "dependencies")["status"], "fail", doc["_r"])
        for name in ["load"] + list(GPU_STAGES):
            self.assert_stage(doc, name, "skip", "arm64 DLLs load only in an arm64 process, "
                              "and this cudnnctl is x64", field="reason")
        self.assertNotIn("193", doc["_r"].out + doc["_r"].err)


class TestTwoAtOnce(WineTest):
    """A second command waits for the root's lock instead of failing,
    naming the holder and what it does: the text is read from past the
    locked byte of the lock file (LockFileEx covers byte 0)."""

    def test_second_install_waits_for_the_first(self):
        self.set_user_path("REG_SZ", r"C:\tools")
        path, manifest = FX.fake("good")
        old, old_manifest = FX.fake("old", V14)
        marker = os.path.join(WINE_.tmp, "paused-lock-%d" % WineTest.counter)
        if os.path.exists(marker):
            os.unlink(marker)
        first_cmd = cli_command(WINE_.exe, ("install", zpath(path), "--manifest",
                                            zpath(manifest)), self.root_win)
        first = subprocess.Popen([WINE] + first_cmd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=dict(WINE_.env, CUDNNCTL_TEST_PAUSE_AT="1:%s" % zpath(marker)))
        self.addCleanup(lambda: first.poll() is None and first.kill())
        deadline = time.monotonic() + 120  # a hang guard, not a speed check
        while not os.path.exists(marker) and first.poll() is None:
            self.assertLess(time.monotonic(), deadline, "never paused")
            time.sleep(0.05)
        second_cmd = cli_command(WINE_.exe, ("install", zpath(old), "--manifest",
                                             zpath(old_manifest), "--no-activate", "--wait",
                                             "300"), self.root_win)
        second = subprocess.Popen([WINE] + second_cmd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=WINE_.env, text=True, errors="replace")
        self.addCleanup(lambda: second.poll() is None and second.kill())
        seen = []
        for line in second.stderr:
            seen.append(line)
            if "waiting for" in line:
                break
        said = "".join(seen)
        self.assertRegex(said, r"waiting for process \d+ \(install %s\) to finish"
                         % re.escape(os.path.basename(path)), said)
        os.unlink(marker)
        out, err = first.communicate(timeout=300)
        self.assertEqual(first.returncode, 0, err)
        out, err = second.communicate(timeout=300)
        self.assertEqual(second.returncode, 0, said + err)
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, "versions"))),
                         [VID14, VID19])
        self.assert_active(VID19, r"C:\tools")


class TestHostileManifestWine(WineTest):
    """A manifest whose version or relative_path leads outside the root or
    the mirror, with Windows' separators too: refused, nothing written."""

    def evil(self, **change):
        path, manifest = FX.fake("good")
        out = os.path.join(WINE_.tmp, "evil-%d" % WineTest.counter, "redistrib_evil.json")
        return path, edited_manifest(manifest, out, "windows-x86_64", 12, **change)

    def test_version_and_path_leading_out(self):
        self.install("old", V14)
        before = snapshot(self.root)
        for version in ("9\\..\\..\\..\\escaped", "9/../../../escaped", "C:\\x"):
            with self.subTest(version=version):
                path, manifest = self.evil(version=version)
                self.fails(EXIT["MANIFEST"], "install", zpath(path), "--manifest",
                           zpath(manifest), words=["cudnn.version", "nothing was"])
                self.assertEqual(snapshot(self.root), before)
        self.assertFalse(os.path.exists(os.path.join(WINE_.drive_c, "escaped-cuda12")))
        mirror = os.path.join(WINE_.tmp, "mirror-evil")
        os.makedirs(mirror, exist_ok=True)
        for rel in ("..\\secret.txt", "cudnn/..\\..\\secret.txt", "C:\\secret.txt",
                    "\\\\server\\share\\x.zip"):
            with self.subTest(relative_path=rel):
                _, manifest = self.evil(relative_path=rel)
                self.fails(EXIT["MANIFEST"], "download", "9.19", "--cuda", "12",
                           "--mirror", zpath(mirror), "--manifest", zpath(manifest),
                           "--cache", r"C:\evil-cache", words=["relative_path"], root=False)
                self.assertFalse(os.path.exists(os.path.join(WINE_.drive_c, "evil-cache")))
        self.assert_active(VID14)


class TestReportFiles(WineTest):
    """Files cudnnctl produces are replaced run after run (rename on
    Windows does not replace a file: the second --junit failed with
    "cannot write" and left the first report), and the runner's files are
    appended to, keeping what other steps wrote."""

    def test_junit_twice_to_the_same_path(self):
        self.install("good", V19)
        folder = os.path.join(WINE_.tmp, "rapports-\u00e9t\u00e9")
        shutil.rmtree(folder, True)
        os.mkdir(folder)
        junit = os.path.join(folder, "verify.xml")
        with open(junit, "w") as f:
            f.write("stale report of an earlier run\n")
        for run in (1, 2):
            with self.subTest(run=run):
                r = self.run_cli("verify", "--no-gpu", "--junit", zpath(junit))
                self.assertEqual(r.rc, 0, r)
                suite = ET.parse(junit).getroot().find("testsuite")
                self.assertEqual(suite.get("name"), "cudnnctl verify")
                self.assertEqual(sorted(os.listdir(folder)), ["verify.xml"])
        # a folder that is not there: the cause and the next step
        r = self.run_cli("verify", "--no-gpu", "--junit",
                         zpath(os.path.join(folder, "no", "verify.xml")))
        self.assertEqual(r.rc, 3, r)
        self.assertIn("cannot write the JUnit report", r.err)
        self.assertIn("cudnnctl: hint: give --junit a file", r.err)

    def test_runner_files_are_appended_to(self):
        runner = os.path.join(WINE_.tmp, "runner-append")
        shutil.rmtree(runner, True)
        os.mkdir(runner)
        env = {"GITHUB_ACTIONS": "true"}
        for name in ("ENV", "OUTPUT", "STEP_SUMMARY"):
            env["GITHUB_" + name] = zpath(os.path.join(runner, name.lower()))
            with open(os.path.join(runner, name.lower()), "wb") as f:
                f.write(b"EARLIER_STEP=1\n")
        self.install("good", V19, env=env)
        for run in (1, 2):
            r = self.run_cli("verify", "--no-gpu", env=env)
            self.assertEqual(r.rc, 0, r)
        with open(os.path.join(runner, "env"), "rb") as f:
            text = f.read().decode()
        self.assertTrue(text.startswith("EARLIER_STEP=1\nCUDNN_PATH="), text)
        with open(os.path.join(runner, "step_summary"), "rb") as f:
            text = f.read().decode()
        self.assertTrue(text.startswith("EARLIER_STEP=1\n"), text)
        self.assertEqual(text.count("### cudnnctl verify: ready"), 2, text)
        self.assertNotIn("\r", text)


class TestDoctor(WineTest):
    def test_report(self):
        """doctor: the Windows release from the registry and RtlGetVersion,
        the root and its mode, the process PATH entry by entry, the copies
        a new process finds, the verify table."""
        self.install()
        r = self.ok("doctor", "--no-gpu")
        self.assertRegex(r.out, r"(?m)^cudnnctl: +\S+ \(windows-x86_64\)$")
        self.assertRegex(r.out, r"(?m)^system: +.*Windows.* \(\d+\.\d+, build \d+\); x64$")
        self.assertIn("root:       %s, mode user" % self.root_win, r.out)
        self.assertIn("installed:  %s (verified, active)" % VID19, r.out)
        self.assertIn("PATH of this process, first to last:\n  ", r.out)
        self.assertIn("1. %s\\cudnn64_9.dll (user PATH)" % self.bin_entry(VID19), r.out)
        self.assertRegex(r.out, r"(?m)^verdict: ")


    def test_messages_fit_windows(self):
        # issue 23 item 10: --help sent Windows users to `man`; a root with
        # a space was refused for a reason that is not true there
        r = self.ok("--help", root=False)
        self.assertIn("the manual is docs/cudnnctl.md", r.out)
        path, manifest = FX.fake("good")
        self.fails(EXIT["BADROOT"], "install", zpath(path), "--manifest", zpath(manifest),
                   root="C:\\Program Files\\cudnn",
                   words=("has a space; cudnnctl keeps its roots free of spaces",))

    def test_home_is_redacted_in_json_too_whatever_its_case(self):
        # issue 23 item 8: doctor --json showed the user name (the home
        # folder) 7 times on Windows: JSON doubles each '\\', and Windows
        # spells one folder in any case
        r = WINE_.run(["cmd", "/c", "echo %USERPROFILE%"])
        home = r.out.strip()  # Wine sets it: C:\users\<name>
        self.assertRegex(home, r"^[A-Za-z]:\\", r)
        # the same folder spelt in other case, as Windows allows
        root = "%s\\cudnn%d" % (home.upper(), WineTest.counter)
        self.addCleanup(shutil.rmtree, WINE_.linux(root), True)
        path, manifest = FX.fake("good")
        self.ok("install", zpath(path), "--manifest", zpath(manifest), root=root)
        for args in (("doctor", "--no-gpu", "--json"), ("doctor", "--no-gpu")):
            r = self.run_cli(*args, root=root)
            self.assertNotIn(home.lower(), (r.out + r.err).lower().replace("\\\\", "\\"), r)
            self.assertIn("~", r.out)
        doc = self.run_cli("doctor", "--no-gpu", "--json", root=root).json()
        self.assertEqual(doc["root"].lower(), "~\\cudnn%d" % WineTest.counter)


class TestPathRestore(WineTest):
    def check_restore(self, kind, value):
        self.set_user_path(kind, value)
        self.install("good")
        self.install("old", V14)
        self.ok("switch", "9.19")
        self.assertEqual(self.active_id(), VID19)
        r = self.ok("path", "restore")
        self.assertIn("restored", r.out)
        self.assertEqual(self.user_path(), None if value is None else (kind, value))
        self.assert_cudnn_path(None)

    def test_missing_original_is_deleted_again(self):
        self.check_restore(None, None)

    def test_reg_sz_original_comes_back_as_reg_sz(self):
        self.check_restore("REG_SZ", "C:\\a;C:\\b\\;C:\\Program Files\\x")

    def test_expand_sz_original_comes_back_byte_for_byte(self):
        self.check_restore("REG_EXPAND_SZ",
                           "%USERPROFILE%\\bin;%SystemRoot%\\foo;;C:\\Users\\J\u00f6rg\\bin;")

    def test_restore_deactivates_and_retires_the_backup(self):
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        self.install("good")
        self.ok("path", "restore")
        self.assertIsNone(self.active_id())
        self.assertFalse(os.path.exists(os.path.join(self.root, "path-backup-user.txt")))
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a")
        # the next change saves the PATH of that day
        self.set_user_path("REG_EXPAND_SZ", "C:\\a;C:\\later")
        self.ok("switch", "9.19")
        self.assertEqual(self.backup(), "REG_EXPAND_SZ\nC:\\a;C:\\later")

    def test_entries_added_since_are_kept(self):
        # issue 23 item 3: another installer appends to PATH after
        # cudnnctl's first change; restoring the old snapshot dropped it
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        self.install("good")
        kind, now = self.user_path()
        self.set_user_path(kind, now + ";C:\\Program Files\\New\\bin")
        r = self.ok("path", "restore")
        self.assertIn("kept the entries added to the user PATH since cudnnctl first "
                      "changed it: 'C:\\Program Files\\New\\bin'", r.err)
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\Program Files\\New\\bin")
        self.assertIsNone(self.active_id())
        # --force: the saved value exactly, naming what it drops
        self.ok("switch", "9.19")
        kind, now = self.user_path()
        self.set_user_path(kind, now + ";C:\\new2")
        r = self.ok("path", "restore", "--force")
        self.assertIn("dropped the entries added to the user PATH since cudnnctl first "
                      "changed it: 'C:\\new2'", r.err)
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\Program Files\\New\\bin")

    def test_after_deactivate(self):
        self.set_user_path(None, None)
        self.install("good")
        self.ok("deactivate")
        self.ok("path", "restore")
        self.assertIsNone(self.user_path())

    def test_no_backup(self):
        self.fails(EXIT["NOTFOUND"], "path", "restore", words=("does not exist",))
        os.mkdir(self.root)
        self.fails(EXIT["NOTFOUND"], "path", "restore", words=("no backup",))


# ------------------------------------------------------- registry PATH cases
class TestRegistryPath(WineTest):
    def test_reg_sz_becomes_expand_sz_keeping_the_entries(self):
        self.set_user_path("REG_SZ", "C:\\tools\\bin;D:\\x")
        self.install("good")
        self.assert_active(VID19, "C:\\tools\\bin;D:\\x")
        self.assertEqual(self.backup(), "REG_SZ\nC:\\tools\\bin;D:\\x")

    def test_expand_sz_entries_stay_unexpanded(self):
        others = "%USERPROFILE%\\bin;%SystemRoot%\\foo;C:\\Users\\J\u00f6rg\\bin"
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.assert_active(VID19, others)
        self.install("old", V14)
        self.assert_active(VID14, others)

    def check_not_a_string(self, kind, value):
        self.set_user_path(kind, value)
        r = self.install("good")
        self.assertIn("cudnnctl: warning: the user PATH in the registry is not a string", r.err)
        self.assertIn("left untouched", r.err)
        self.assert_user_path(kind, value)
        self.assertEqual(self.active_id(), VID19)
        self.assert_cudnn_path(VID19)
        # a new process finds no cuDNN: verify says so
        doc = self.run_cli("verify", "--json").json()
        self.assertEqual(doc["exit_status"], EXIT["VERIFY_LOCATE"], doc)
        # deactivate leaves it alone too; nothing was saved to restore
        self.ok("deactivate")
        self.assert_user_path(kind, value)
        self.assert_cudnn_path(None)
        self.fails(EXIT["NOTFOUND"], "path", "restore", words=("no backup",))
        self.assert_user_path(kind, value)

    def test_reg_dword_path_is_left_untouched(self):
        self.check_not_a_string("REG_DWORD", 5)

    def test_reg_binary_path_is_left_untouched(self):
        self.check_not_a_string("REG_BINARY", b"C\0:\0\\\0x\0")

    def long_path(self):
        """About 2000 characters, under the 2047 limit until our entry is
        added: 18 entries of 100 characters and one of 200."""
        entries = ["C:\\Program Files\\Vendor%02d\\%s\\bin" % (i, "x" * 70) for i in range(18)]
        longest = "C:\\" + "L" * 197
        entries.insert(7, longest)
        value = ";".join(entries)
        self.assertLessEqual(len(value), 2047)
        self.assertGreater(len(value) + 1 + len(self.bin_entry(VID19)), 2047)
        return value, longest

    def test_too_long_path_is_refused(self):
        value, longest = self.long_path()
        self.set_user_path("REG_EXPAND_SZ", value)
        path, manifest = FX.fake("good")
        r = self.fails(EXIT["ACTIVATE"], "install", zpath(path), "--manifest", zpath(manifest),
                       words=("user PATH would have", "2047", "nothing was changed",
                              "longest entries: '%s' (200)" % longest))
        self.assert_user_path("REG_EXPAND_SZ", value)
        self.assert_cudnn_path(None)
        self.assertEqual(r.out, "")
        # the install was undone with the root it created
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID19)))

    def test_too_long_path_keeps_the_active_version(self):
        self.install("good")
        value, longest = self.long_path()
        self.set_user_path("REG_EXPAND_SZ", value)
        path, manifest = FX.fake("old", V14)
        self.fails(EXIT["ACTIVATE"], "install", zpath(path), "--manifest", zpath(manifest),
                   words=("longest entries: '%s'" % longest,))
        self.assert_user_path("REG_EXPAND_SZ", value)
        self.assert_cudnn_path(VID19)
        self.assertEqual(self.active_id(), VID19)
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID14)))
        self.fails(EXIT["ACTIVATE"], "switch", "9.19", words=("2047",))
        self.assert_user_path("REG_EXPAND_SZ", value)

    def test_duplicates_of_our_entry_collapse(self):
        ours = self.bin_entry(VID19)
        before = ";".join(["C:\\a", ours + "\\", ours.upper(), "C:\\b", ours.lower() + "\\\\",
                           self.bin_entry(VID14), "C:\\c"])
        self.set_user_path("REG_EXPAND_SZ", before)
        self.install("good")
        self.assert_active(VID19, "C:\\a;C:\\b;C:\\c")

    def test_forward_slash_spelling_of_our_entry_is_ours(self):
        ours = self.bin_entry(VID19).replace("\\", "/")
        self.set_user_path("REG_EXPAND_SZ", "C:\\a;" + ours + ";C:\\b")
        self.install("good")
        self.assert_active(VID19, "C:\\a;C:\\b")
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\b")

    def test_empty_entries_and_a_trailing_separator_are_kept(self):
        # issue 23 item 5: ';;' and a trailing ';' were dropped
        others = "C:\\a;;C:\\b;"
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.assert_active(VID19, others)
        self.install("old", V14)
        self.assert_active(VID14, others)
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", others)

    def test_our_entry_written_with_a_variable_is_ours(self):
        # %SystemDrive%\tN\versions\<id>\bin is this root's entry: taken
        # out, not added a second time, gone after deactivate
        ours = "%SystemDrive%" + self.bin_entry(VID19)[2:]
        self.set_user_path("REG_EXPAND_SZ", "C:\\a;" + ours + ";C:\\b")
        self.install("good")
        self.assert_active(VID19, "C:\\a;C:\\b")
        self.set_user_path("REG_EXPAND_SZ", ours + ";C:\\a")
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a")

    def test_the_users_cudnn_path_comes_back(self):
        # issue 23 item 2: the user's own CUDNN_PATH was overwritten at the
        # first install and deleted by deactivate
        WINE_.reg_add(USER_ENV, "CUDNN_PATH", "REG_EXPAND_SZ", "%USERPROFILE%\\cudnn")
        r = self.install("good")
        self.assertIn("the user CUDNN_PATH was '%USERPROFILE%\\cudnn'; cudnnctl saved it", r.err)
        self.assert_cudnn_path(VID19)
        self.install("old", V14)  # saved once: the user's, not ours
        self.ok("deactivate")
        self.assertEqual(WINE_.reg_get(USER_ENV, "CUDNN_PATH"),
                         ("REG_EXPAND_SZ", "%USERPROFILE%\\cudnn"))
        self.ok("switch", "9.19")
        self.assert_cudnn_path(VID19)
        self.ok("path", "restore")
        self.assertEqual(WINE_.reg_get(USER_ENV, "CUDNN_PATH"),
                         ("REG_EXPAND_SZ", "%USERPROFILE%\\cudnn"))

    def test_two_roots_at_once_keep_both_entries(self):
        # issue 23 item 4: two installs into different roots at the same
        # time lost one's entry about 6 times in 50; one cudnnctl at a time
        # edits the environment now
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        path, manifest = FX.fake("good")
        for round_ in range(12):
            others = []
            for i in range(2):
                win = "%s_%d_%d" % (self.root_win, round_, i)
                self.addCleanup(shutil.rmtree, WINE_.linux(win), True)
                others.append(win)
            results = [None, None]

            def run(i):
                results[i] = self.run_cli("install", zpath(path), "--manifest",
                                          zpath(manifest), root=others[i])
            threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for r in results:
                self.assertEqual(r.rc, 0, r)
            entries = self.user_path()[1].split(";")
            for win in others:
                self.assertIn(self.bin_entry(VID19, win), entries, (round_, entries))
            for win in others:
                self.ok("deactivate", root=win)
            self.assert_user_path("REG_EXPAND_SZ", "C:\\a")

    def test_other_tools_entries_kept_in_order(self):
        others = ";".join(["C:\\Python312\\Scripts", "C:\\Python312",
                           "%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps",
                           # another root whose name starts like ours
                           self.root_win + "0\\versions\\%s\\bin" % VID19,
                           self.root_win + "\\versionsX\\bin",
                           "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8\\bin"])
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.assert_active(VID19, others)
        self.install("old", V14)
        self.assert_active(VID14, others)
        self.ok("switch", "9.19")
        self.assert_active(VID19, others)
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", others)


# ------------------------------------------------------------------ verify
class TestVerify(WineTest):
    # verify(), stage() and assert_stage() are CliAsserts'
    def dll_path(self, vid=VID19):
        return self.bin_entry(vid) + "\\cudnn64_9.dll"

    def test_active_fake_install(self):
        self.install("good")
        doc = self.verify()
        self.assertEqual(doc["install"], VID19)
        self.assertEqual(doc["copies"], [{"path": self.dll_path(), "origin": "user PATH"}])
        self.assertEqual(doc["library"], self.dll_path())
        self.assertEqual(doc["loaded"].lower(), self.dll_path().lower())
        self.assertEqual((doc["cudnn_version"], doc["cudnn_version_code"], doc["cudart_version"]),
                         ("9.19.0", 91900, 12080))
        self.assert_stage(doc, "locate", "pass", "(user PATH)")
        self.assert_stage(doc, "files", "pass", "8/8 libraries")
        self.assert_stage(doc, "version", "pass", "file version %s" % V19)
        self.assert_stage(doc, "load", "pass", "cuDNN 9.19.0 (91900)", "CUDA runtime 12.8")
        for name in GPU_STAGES:
            self.assert_stage(doc, name, "skip", NO_DRIVER, field="reason")
        # the PE reader on the fakes' imports: KERNEL32.dll and msvcrt.dll
        # are Wine's own DLLs in System32, read and judged loadable there;
        # cuBLASLt and NVRTC are missing (a warning), the VC++ runtime is
        # Wine's
        deps = self.stage(doc, "dependencies")
        m = re.fullmatch(r"8 libraries need (\d+) others: (\d+) found, 2 missing",
                         deps["finding"])
        self.assertTrue(m, doc["_r"])
        self.assertGreaterEqual(int(m.group(2)), 2)
        self.assertEqual(deps["status"], "warn")
        self.assertEqual(sorted(re.findall(r"loads (\S+) at run time", deps["reason"])),
                         ["cublasLt64_12.dll", "nvrtc64_120_0.dll"], deps["reason"])
        self.assertNotIn("KERNEL32", deps["reason"].upper())
        self.assertNotIn("MSVCRT", deps["reason"].upper())
        # the human table
        r = self.ok("verify")
        self.assertRegex(r.out, r"version +pass .*file version 9\.19\.0\.99; expected 9\.19\.0\.99")
        assert_windows_paths(self, r.out + r.err)
        self.assertIn("verdict: loads", r.out)

    def test_zlibwapi_is_decided_from_the_dlls(self):
        # issue 23 item 9: that 9.0 and 9.1 need zlibwapi.dll is inferred,
        # not documented; a 9.1 build none of whose DLLs imports or names it
        # is not failed for lacking it
        self.install("good", "9.1.0.99", "--no-verify")
        # (the load stage then fails: the fake DLLs say 9.19)
        doc = self.run_cli("verify", "--json").json()
        deps = self.stage(doc, "dependencies")
        self.assertEqual(deps["status"], "warn", deps)  # cuBLASLt, NVRTC
        self.assertNotIn("zlibwapi", repr(deps))

    def test_each_missing_dependency_its_own_fix(self):
        # a 9.1 build whose main DLL names zlibwapi.dll, where neither
        # zlibwapi, cuBLASLt nor NVRTC can be found: each is its own note
        # with its own fix, and the hint is the one of the failure the
        # verdict names
        vid = "9.1.0.99-cuda12"
        self.install("zlib", "9.1.0.99", "--no-verify")
        junit = os.path.join(WINE_.drive_c, "verify%d.xml" % WineTest.counter)
        self.addCleanup(lambda: os.path.exists(junit) and os.remove(junit))
        doc = self.verify("--junit", zpath(junit), code=EXIT["VERIFY_DEPS"])
        self.assertEqual(doc["install"], vid)
        deps = self.stage(doc, "dependencies")
        self.assertEqual(deps["status"], "fail")
        notes = {re.search(r"(\S+\.dll)", n["reason"]).group(1): n for n in deps["notes"]}
        self.assertEqual(sorted(notes), ["cublasLt64_12.dll", "nvrtc64_120_0.dll",
                                         "zlibwapi.dll"], deps)
        zlib = notes["zlibwapi.dll"]
        self.assertEqual(zlib["status"], "fail")
        self.assertIn("next to cudnn64_9.dll", zlib["next"])
        self.assertIn(self.bin_entry(vid), zlib["next"])
        self.assertEqual(notes["cublasLt64_12.dll"]["status"], "warn")
        self.assertIn("pip install nvidia-cublas-cu12", notes["cublasLt64_12.dll"]["next"])
        self.assertIn("pip install nvidia-cuda-nvrtc-cu12",
                      notes["nvrtc64_120_0.dll"]["next"])
        self.assertEqual(deps["next"], zlib["next"])
        # the table: each problem, then its fix; the error's hint
        r = self.run_cli("verify")
        self.assertEqual(r.rc, EXIT["VERIFY_DEPS"], r)
        lines = [l.strip() for l in r.out.splitlines()]
        for dll, label in (("zlibwapi.dll", "why"), ("cublasLt64_12.dll", "warn"),
                           ("nvrtc64_120_0.dll", "warn")):
            i = next(i for i, l in enumerate(lines) if l.startswith(label + ":") and dll in l)
            self.assertEqual(lines[i + 1], "fix: " + notes[dll]["next"], r)
        self.assertIn("cudnnctl: hint: " + zlib["next"], r.err)
        failure = ET.parse(junit).getroot().find(
            "testsuite/testcase[@name='4-dependencies']/failure")
        for dll in notes:
            self.assertIn(dll, failure.text)
        self.assertIn("fix: " + zlib["next"], failure.text)

    def test_named_version_not_active(self):
        self.install("good")
        self.install("old", V14, "--no-activate")
        doc = self.verify("9.14")
        self.assertEqual(doc["install"], VID14)
        self.assert_stage(doc, "version", "pass", "file version %s" % V14)
        self.assert_stage(doc, "load", "pass", "cuDNN 9.14.0 (91400)")

    def shadow_on_machine_path(self, spelling):
        """A folder C:\\shadowN holding the "old" variant's cudnn64_9.dll,
        added to the end of the machine PATH as `spelling` % its name (the
        registry put back by WineTest); its Windows path."""
        shadow = os.path.join(WINE_.drive_c, "shadow%d" % WineTest.counter)
        os.mkdir(shadow)
        self.addCleanup(shutil.rmtree, shadow, True)
        shutil.copy2(FX.dll("old"), shadow)
        shadow_win = "C:\\" + os.path.basename(shadow)
        kind, machine = WINE_.reg_get(MACHINE_ENV, "Path")
        WINE_.reg_add(MACHINE_ENV, "Path", kind, machine + ";" + spelling % shadow_win)
        return shadow_win

    def test_machine_path_copy_shadows_the_install(self):
        self.install("good")
        shadow_win = self.shadow_on_machine_path("%s")
        doc = self.verify(code=EXIT["VERIFY_LOAD"])
        shadow_dll = shadow_win + "\\cudnn64_9.dll"
        self.assertEqual(doc["copies"], [{"path": shadow_dll, "origin": "machine PATH"},
                                         {"path": self.dll_path(), "origin": "user PATH"}])
        self.assert_stage(doc, "locate", "warn", shadow_dll, "(machine PATH)")
        self.assert_stage(doc, "locate", "warn", "shadowed", shadow_dll, "machine PATH",
                          field="reason")
        # its own fix, fit for the machine PATH (issue 23 item 6)
        notes = [n for n in self.stage(doc, "locate")["notes"] if shadow_dll in n["reason"]]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn("take %s out of the machine PATH" % shadow_win, notes[0]["next"])
        self.assertIn("cudnnctl switch %s --scope machine" % VID19, notes[0]["next"])
        self.assert_stage(doc, "load", "fail", "9.14.0", field="reason")
        self.assertEqual(doc["cudnn_version_code"], 91400)
        # the user PATH is untouched by verify
        self.assert_active(VID19)

    def test_switch_says_what_it_repaired(self):
        # issue 23 item 10: "already active" while it just repaired PATH
        self.install("good")
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        r = self.ok("switch", "9.19")
        self.assertIn("already active", r.out)
        self.assertIn("the user PATH did not have the active install first", r.err)
        self.assert_active(VID19, "C:\\a")
        r = self.ok("switch", "9.19")  # nothing to repair: nothing said
        self.assertNotIn("did not have", r.err)

    def test_after_deactivate_the_fix_is_switch(self):
        # issue 23 item 10: verify after deactivate said to install
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.ok("deactivate")
        doc = self.verify(code=EXIT["VERIFY_LOCATE"])
        stage = self.stage(doc, "locate")
        self.assertIn("no version is active: cudnnctl switch %s" % VID19, stage["next"])
        self.assertNotIn("install", stage["next"].replace("cudnnctl list", ""))

    def test_each_shadowing_copy_its_own_fix(self):
        # two copies ahead of the install: System32's and one of cudnnctl's
        # own other versions still named on the user PATH
        self.install("good")
        self.install("old", V14, "--no-activate")
        sys32 = os.path.join(WINE_.drive_c, "windows", "system32", "cudnn64_9.dll")
        shutil.copy2(FX.dll("old"), sys32)
        self.addCleanup(os.remove, sys32)
        kind, now = self.user_path()
        self.set_user_path(kind, self.bin_entry(VID14) + ";" + now)
        doc = self.run_cli("verify", "--json").json()
        notes = {n["reason"].split(" (")[0].split()[-1]: n for n in self.stage(doc, "locate")["notes"]
                 if n["reason"].startswith("shadowed")}
        self.assertEqual(len(notes), 2, notes)
        s32 = next(n for k, n in notes.items() if "system32" in k.lower())
        self.assertIn("delete it as administrator", s32["next"])
        own = next(n for k, n in notes.items() if VID14 in k)
        self.assertIn("cudnnctl's own", own["next"])
        self.assertIn("cudnnctl switch %s repairs it" % VID19, own["next"])

    def test_quoted_path_entry_is_no_place_for_dlls(self):
        # issue 23 item 6: a quoted entry ("C:\\...\\bin") was counted as a
        # place the DLL is found (false shadowing, exit 24); the loader does
        # not strip quotes: it is skipped, with a warning
        self.install("good")
        shadow_win = self.shadow_on_machine_path('"%s"')
        doc = self.verify()
        self.assertEqual(doc["copies"], [{"path": self.dll_path(), "origin": "user PATH"}])
        self.assert_stage(doc, "locate", "warn", '"%s" is in quotes' % shadow_win,
                          "no DLL", field="reason")
        self.assert_stage(doc, "load", "pass", "9.19.0")

    def test_path_without_the_install_says_switch(self):
        # issue 23 item 6: the registry PATH lost the active install (an
        # edit, a restore): not "not a shared library; reinstall", but that
        # a new process does not find it and that switch repairs it
        self.install("good")
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        doc = self.verify(code=EXIT["VERIFY_LOCATE"])
        self.assert_stage(doc, "locate", "fail", "a new process does not find",
                          field="reason")
        stage = self.stage(doc, "locate")
        self.assertIn("cudnnctl switch %s" % VID19, stage["next"])
        self.assertNotIn("reinstall", stage["next"])
        self.ok("switch", VID19)
        self.verify()

    def test_import_of_an_absent_dll(self):
        path, manifest = FX.fake("missingdep")
        # install runs verify at the end and exits with its status, the
        # install itself done
        r = self.run_cli("install", zpath(path), "--manifest", zpath(manifest), verify=True)
        self.assertEqual(r.rc, EXIT["VERIFY_DEPS"], r)
        self.assertIn("absent.dll", r.err)
        self.assert_active(VID19)
        doc = self.verify(code=EXIT["VERIFY_DEPS"])
        self.assert_stage(doc, "dependencies", "fail", "cudnn_ops64_9.dll needs absent.dll",
                          field="reason")
        self.assert_stage(doc, "load", "skip")


# ------------------------------------------------------- verify --python
class TestVerifyPython(WineTest):
    """verify --python on Windows: the interpreter picked from VIRTUAL_ENV
    (Scripts\\python.exe), the probe passed whole through CreateProcess's
    command line, one process per framework with TerminateProcess at the
    time limit, a crash's exception status, and Windows paths judged in
    any case.  No Windows Python runs here: the interpreter is
    tests/wine/fakepython.c, which loads the fake cuDNN DLLs with the real
    (Wine's) loader and answers in the probe's format, as its fixture
    files say."""

    @classmethod
    def setUpClass(cls):
        cls.fakepy = FAKEPYTHON
        if not os.path.isfile(cls.fakepy):
            raise unittest.SkipTest("no %s (set CUDNNCTL_FAKEPYTHON)" % FAKEPYTHON)

    def setUp(self):
        super().setUp()
        self.install("good")
        base = os.path.join(self.root, "py")  # C:\tN\py: a virtual environment
        self.venv = self.root_win + "\\py"
        os.makedirs(os.path.join(base, "Scripts"))
        shutil.copy(self.fakepy, os.path.join(base, "Scripts", "python.exe"))
        site = os.path.join(base, "Lib", "site-packages")
        self.site = self.venv + "\\Lib\\site-packages"
        # torch bundles its own (older) cuDNN in torch\lib
        os.makedirs(os.path.join(site, "torch", "lib"))
        shutil.copy(FX.dll("old"), os.path.join(site, "torch", "lib", "cudnn64_9.dll"))
        # a cuDNN whose ops DLL needs a DLL that is nowhere
        broken = os.path.join(self.root, "broken")
        shutil.copytree(FX.variant_dir("missingdep"), broken)
        self.fixtures = os.path.join(self.root, "fixtures")
        os.makedirs(self.fixtures)
        self.fixture("torch", "version\t2.9.0+cu130", "location\t%s\\torch" % self.site,
                     "built\t91400", "load %s\\torch\\lib\\cudnn64_9.dll" % self.site)
        # onnxruntime and ctranslate2 load cudnn64_9.dll by name: PATH
        self.fixture("onnxruntime", "version\t1.23.0", "location\t%s\\onnxruntime" % self.site,
                     "load cudnn64_9.dll")
        self.fixture("ctranslate2", "version\t4.6.0", "location\t%s\\ctranslate2" % self.site,
                     "load %s\\broken\\cudnn64_9.dll" % self.root_win,
                     "load %s\\broken\\cudnn_ops64_9.dll" % self.root_win)
        self.fixture("cupy", "version\t13.6.0", "crash")
        self.fixture("jax", "version\t0.7.0", "hang")
        # tensorflow: no fixture, not installed
        self.probe = os.path.join(self.root, "probe.py")
        shutil.copy(os.path.join(REPO, "src", "core", "pyprobe.py"), self.probe)
        # PATH: the active version's bin, spelled in lower case (a module's
        # name comes back in PATH's spelling)
        self.env = {"VIRTUAL_ENV": self.venv, "FAKEPY_DIR": self.root_win + "\\fixtures",
                    "FAKEPY_PROBE": self.root_win + "\\probe.py",
                    "WINEPATH": self.bin_entry(VID19).lower(),
                    "CUDNNCTL_PYTHON_TIMEOUT": "5"}

    def fixture(self, name, *lines):
        with open(os.path.join(self.fixtures, name + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    def frameworks(self, *extra):
        r = self.run_cli("verify", "--python", "--json", *extra, env=self.env)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        doc = r.json()
        return {f["name"]: f for f in doc["frameworks"]}, doc

    def test_each_framework_judged(self):
        fw, doc = self.frameworks()
        self.assertEqual(doc["interpreter"], self.venv + "\\Scripts\\python.exe")
        for f in fw.values():
            self.assertNotIn("arrived changed", f.get("finding", ""), f)
        t = fw["torch"]
        self.assertEqual((t["status"], t["version"], t["built_with"]),
                         ("pass", "2.9.0+cu130", 91400), t)
        self.assertEqual([(x["path"].lower(), x["version"], x["origin"]) for x in t["loaded"]],
                         [((self.site + "\\torch\\lib\\cudnn64_9.dll").lower(), "9.14.0",
                           "bundled with torch")])
        self.assertIn("its own cuDNN, not cudnnctl's: that is fine", t["hint"])
        o = fw["onnxruntime"]
        self.assertEqual(o["status"], "pass", o)
        self.assertEqual([(x["path"].lower(), x["version"], x["origin"], x["cudnnctl_active"])
                          for x in o["loaded"]],
                         [((self.bin_entry(VID19) + "\\cudnn64_9.dll").lower(), "9.19.0",
                           "cudnnctl, the active version", True)])
        c = fw["ctranslate2"]
        self.assertEqual(c["status"], "fail", c)
        self.assertIn("Could not find module '%s\\broken\\cudnn_ops64_9.dll'" % self.root_win,
                      c["finding"])
        self.assertIn("cudnn_ops64_9.dll or a DLL it needs cannot be found", c["hint"])
        self.assertEqual(fw["cupy"]["status"], "fail")
        self.assertIn("crashed (exception 0xC0000005) while loading cuDNN",
                      fw["cupy"]["finding"])
        j = fw["jax"]
        self.assertEqual((j["status"], j["exit_status"]), ("fail", -1), j)
        self.assertIn("did not finish in 5 s", j["finding"])
        self.assertEqual((fw["tensorflow"]["status"], fw["tensorflow"]["installed"]),
                         ("skip", False))
        # the table: Windows paths with '\\' only
        r = self.run_cli("verify", "--python", env=self.env)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        self.assertRegex(r.out, r"(?m)^torch 2\.9\.0\+cu130 +pass +\S+ +9\.14\.0 +loads ")
        assert_windows_paths(self, r.out + r.err)

    def test_the_probe_must_arrive_whole(self):
        # the stand-in compares what it got with the file: a probe that
        # differs by one character is caught (so the test above can fail)
        with open(self.probe, "a", encoding="utf-8") as f:
            f.write("#")
        fw, _ = self.frameworks()
        self.assertIn("the probe arrived changed", fw["torch"]["finding"])

    def test_cublaslt_missing(self):
        # a DLL cuDNN needs, by name, nowhere on PATH: what provides it
        self.fixture("tensorflow", "version\t2.20.0", "load cublasLt64_12.dll")
        fw, _ = self.frameworks()
        t = fw["tensorflow"]
        self.assertEqual(t["status"], "fail", t)
        self.assertIn("Could not find module 'cublasLt64_12.dll'", t["finding"])
        self.assertIn("cublasLt64_12.dll, which cuDNN needs, cannot be found: install cuBLAS "
                      "for CUDA 12 (the CUDA toolkit, or pip install nvidia-cublas-cu12)",
                      t["hint"])

    def test_python_on_path_and_none(self):
        # no environment active: python.exe on PATH
        env = dict(self.env, VIRTUAL_ENV="", WINEPATH=self.venv + "\\Scripts;"
                   + self.bin_entry(VID19))
        del env["VIRTUAL_ENV"]
        r = self.run_cli("verify", "--python", "--json", env=env)
        self.assertEqual(r.json()["interpreter"], "python", r)
        # one that is not there: the error names it, and what to do
        self.fails(EXIT["NOTFOUND"], "verify", "--python", "C:\\nowhere\\python.exe",
                   env=self.env, words=["C:\\nowhere\\python.exe"])


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
                    self.fails(EXIT["UNSAFE"], "install", zpath(FX.hostile(kind)),
                               "--allow-unknown", "--cuda", "12",
                               words=("refusing", "nothing was written"),
                               names_in_archive=("C:/evil.txt",))
                    self.assertEqual(self.tree(), before)
                    self.assertEqual(os.path.lexists(self.root), pre)
                    self.assertEqual(self.user_path(), path_before)
                    self.assertFalse(os.path.exists(os.path.join(WINE_.drive_c, "evil.txt")))
                    self.assertFalse(os.path.exists(os.path.join(WINE_.tmp, "evil.txt")))

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
                self.fails(EXIT["UNSAFE"], "install", zpath(FX.hostile(kind)),
                           "--allow-unknown", "--cuda", "12",
                           words=("refusing", why, "nothing was written"))
                self.assertEqual(self.tree(), before)
        self.install("good")
        self.assert_active(VID19)

    def test_kill_points_sample(self):
        # every kill point of a first install under Wine,
        # which ends in registry changes: after each kill the root lists
        # only whole versions, the user PATH and CUDNN_PATH are each as before
        # or as after, and the next install finishes cleanly
        path, manifest = FX.fake("good")
        args = ("install", zpath(path), "--manifest", zpath(manifest), "--no-verify")
        vdir = os.path.join(self.root, "versions")

        def state():
            return (self.user_path(), WINE_.reg_get(USER_ENV, "CUDNN_PATH"))

        before = state()
        self.ok(*args)
        after = state()
        self.ok("deactivate")
        shutil.rmtree(self.root, True)
        self.assertEqual(state(), before)
        kills = 0
        for at in range(1, 400):
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
        print("\n  [info] kill points sampled under Wine: %d" % kills, file=sys.stderr)
        self.assertGreater(kills, 5)

    def kill_sweep(self, args, reset):
        """Kills `cudnnctl ARGS` at each of its writes, renames and registry
        changes in turn (CUDNNCTL_TEST_KILL_AT).  After each kill: the user
        PATH, CUDNN_PATH, the active version and the listed versions are
        each as before or as after; running ARGS again ends as after, with
        no leftovers; reset() puts the state before back.  The number of
        kills."""
        vdir = os.path.join(self.root, "versions")

        def state():
            return (self.user_path(), WINE_.reg_get(USER_ENV, "CUDNN_PATH"),
                    self.active_id(),
                    [i["id"] for i in self.ok("list", "--json").json()["installed"]])

        before = state()
        self.ok(*args)
        after = state()
        reset()
        self.assertEqual(state(), before)
        kills = 0
        for at in range(1, 200):
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

    def test_kill_points_switch_uninstall_deactivate_restore(self):
        """Kill points of the commands after install, under Wine: each value
        is written whole and the next run of the command finishes it."""
        self.set_user_path("REG_EXPAND_SZ", r"C:\Tools;%SystemRoot%\system32")
        self.install("old", V14)
        self.install("good")
        counts = {
            "switch": self.kill_sweep(("switch", V14), lambda: self.ok("switch", V19)),
            "uninstall": self.kill_sweep(
                ("uninstall", V14),
                lambda: (self.install("old", V14), self.ok("switch", V19))),
            "deactivate": self.kill_sweep(("deactivate",), lambda: self.ok("switch", V19)),
            "path restore": self.kill_sweep(("path", "restore"),
                                            lambda: self.ok("switch", V19)),
        }
        print("\n  [info] kill points under Wine: %s" % counts, file=sys.stderr)
        for name, n in counts.items():
            self.assertGreater(n, 0, name)

    def interrupt_paused(self, signals, *args, at=3):
        """Runs cudnnctl ARGS paused at its AT-th interrupt point
        (CUDNNCTL_TEST_PAUSE_AT), then sends each of signals to the Wine
        process: Wine turns SIGINT into a CTRL_C_EVENT for the console
        handlers, as Ctrl+C in a console does.  The finished Result."""
        import signal as _signal
        marker = os.path.join(WINE_.tmp, "paused-%d" % at)
        if os.path.exists(marker):
            os.unlink(marker)
        cmd = cli_command(WINE_.exe, args, self.root_win)
        env = dict(WINE_.env, CUDNNCTL_TEST_PAUSE_AT="%d:%s" % (at, zpath(marker)))
        proc = subprocess.Popen([WINE] + cmd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not os.path.exists(marker) and proc.poll() is None:
            self.assertLess(time.monotonic(), deadline, "never paused")
            time.sleep(0.05)
        for sig in signals:
            os.kill(proc.pid, sig or _signal.SIGINT)
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
        state = (self.user_path(), WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        path, manifest = FX.fake("good")
        args = ("install", zpath(path), "--manifest", zpath(manifest))
        vdir = os.path.join(self.root, "versions")
        for at in (2, 6):
            r = self.interrupt_paused([None], *args, at=at)
            self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
            self.assertIn("interrupted", r.err)
            self.assertEqual(sorted(os.listdir(vdir)), [VID14], "at=%d" % at)
            self.assertEqual((self.user_path(), WINE_.reg_get(USER_ENV, "CUDNN_PATH")), state)
            self.assert_active(VID14)
        # twice: the process ends at once, whatever it was doing
        r = self.interrupt_paused([None, None], *args, at=4)
        self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
        self.assertEqual((self.user_path(), WINE_.reg_get(USER_ENV, "CUDNN_PATH")), state)
        self.ok("list")
        self.assertEqual(sorted(os.listdir(vdir)), [VID14])
        self.install("good")
        self.assert_active(VID19)

    def test_linux_tar_xz_is_refused_leaving_no_trace(self):
        """A tar.xz is decompressed once, into a delete-on-close file under
        the root: refused for its platform, it leaves nothing behind."""
        self.install("good")
        path, manifest = FX.pack("linux")
        before = self.tree()
        self.fails(EXIT["PLATFORM"], "install", zpath(path), "--manifest", zpath(manifest),
                   words=("linux-x86_64", "windows-x86_64"))
        self.assertEqual(self.tree(), before)
        self.assert_active(VID19)

    def test_unknown_archive_is_refused(self):
        path, _ = FX.fake("good")
        self.fails(EXIT["UNKNOWN_ARCHIVE"], "install", zpath(path),
                   words=("matches none", "--allow-unknown"))
        self.assertFalse(os.path.lexists(self.root))
        self.assertIsNone(WINE_.reg_get(USER_ENV, "CUDNN_PATH"))


# ----------------------------------------------------------- machine scope
CONSOLECP = os.environ.get("CUDNNCTL_CONSOLECP") or os.path.join(
    os.path.dirname(EXE), "tests", "consolecp.exe")
SETTINGWATCH = os.environ.get("CUDNNCTL_SETTINGWATCH") or os.path.join(
    os.path.dirname(EXE), "tests", "settingwatch.exe")
REGACL = os.environ.get("CUDNNCTL_REGACL") or os.path.join(
    os.path.dirname(EXE), "tests", "regacl.exe")
MACHINE_KEY = MACHINE_ENV.split("\\", 1)[1]


class TestMachineScope(WineTest):
    """--scope machine: the machine PATH and CUDNN_PATH instead of the
    user's; without write access to that key (Wine checks registry ACLs as
    Windows does for a user who is not elevated), a clear error and
    nothing changed."""
    WATCHED = WineTest.WATCHED + ((MACHINE_ENV, "CUDNN_PATH"),)

    @staticmethod
    def after_system(machine, entry):
        """machine with entry after its last entry under %SystemRoot%
        (C:\\windows under Wine), as cudnnctl puts it (issue 23, item 1)."""
        parts = machine.split(";")
        at = 0
        for i, p in enumerate(parts):
            low = p.lower()
            if p and (low.startswith("c:\\windows") or low.startswith("%systemroot%")):
                at = i + 1
        return ";".join(parts[:at] + [entry] + parts[at:])

    def test_machine_path_gets_the_entry_and_loses_it(self):
        user_before = self.user_path()
        kind, machine = WINE_.reg_get(MACHINE_ENV, "Path")
        r = self.install("good", V19, "--scope", "machine")
        self.assertEqual(WINE_.reg_get(MACHINE_ENV, "Path"),
                         ("REG_EXPAND_SZ", self.after_system(machine, self.bin_entry(VID19))), r)
        self.assertTrue(machine.lower().startswith("%systemroot%"), machine)
        self.assertFalse(WINE_.reg_get(MACHINE_ENV, "Path")[1].startswith(self.root_win))
        self.assertEqual(WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"),
                         ("REG_SZ", self.vdir_win(VID19)))
        self.assertEqual(self.user_path(), user_before)
        self.assertIsNone(WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        # a later switch keeps the machine scope
        self.install("old", V14)
        self.assertEqual(WINE_.reg_get(MACHINE_ENV, "Path")[1],
                         self.after_system(machine, self.bin_entry(VID14)))
        self.assertEqual(self.user_path(), user_before)
        self.ok("deactivate")
        self.assertEqual(WINE_.reg_get(MACHINE_ENV, "Path")[1], machine)
        self.assertIsNone(WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"))

    def file_acl(self, path_win):
        r = WINE_.run([REGACL, "getfile", path_win])
        self.assertEqual(r.rc, 0, r)
        return r.out.strip()

    def test_existing_root_others_can_write_is_refused(self):
        # issue 23 item 1: a machine root any user can write is refused,
        # naming who can.  Wine keeps no file DACLs (SetNamedSecurityInfoW
        # succeeds and stores nothing) but shows one made of the Unix mode:
        # mode 777 is "Everyone" with write access.  The protected DACL a new
        # machine root gets is checked with icacls on real Windows (the CI
        # workflow's Windows job).
        if not os.path.isfile(REGACL):
            self.skipTest("no %s (set CUDNNCTL_REGACL)" % REGACL)
        os.makedirs(self.root)
        os.chmod(self.root, 0o777)
        self.assertIn(";;;WD)", self.file_acl(self.root_win))
        machine_before = WINE_.reg_get(MACHINE_ENV, "Path")
        path, manifest = FX.fake("good")
        self.fails(EXIT["BADROOT"], "install", zpath(path), "--manifest", zpath(manifest),
                   "--scope", "machine",
                   words=("--scope machine: '%s' can be written by 'Everyone'" % self.root_win,
                          "icacls", "nothing was changed"))
        self.assertEqual(WINE_.reg_get(MACHINE_ENV, "Path"), machine_before)
        self.assertIsNone(WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"))
        self.assertEqual(os.listdir(self.root), [])  # as it was
        os.chmod(self.root, 0o755)
        self.install("good", V19, "--scope", "machine")
        self.ok("deactivate")

    def test_without_write_access_nothing_changes(self):
        if not os.path.isfile(REGACL):
            self.skipTest("no %s (set CUDNNCTL_REGACL)" % REGACL)
        r = WINE_.run([REGACL, "get", MACHINE_KEY])
        self.assertEqual(r.rc, 0, r)
        dacl = r.out.strip()
        self.addCleanup(lambda: self.assertEqual(
            WINE_.run([REGACL, "set", MACHINE_KEY, dacl]).rc, 0))
        # read only, for everyone: what a user who is not elevated has
        r = WINE_.run([REGACL, "set", MACHINE_KEY, "D:P(A;;KR;;;WD)"])
        self.assertEqual(r.rc, 0, r)
        machine_before = WINE_.reg_get(MACHINE_ENV, "Path")
        user_before = self.user_path()
        path, manifest = FX.fake("good")
        self.fails(EXIT["ACTIVATE"], "install", zpath(path), "--manifest", zpath(manifest),
                   "--scope", "machine",
                   words=("needs administrator rights", "elevated prompt"))
        self.assertEqual(WINE_.reg_get(MACHINE_ENV, "Path"), machine_before)
        self.assertIsNone(WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"))
        self.assertEqual(self.user_path(), user_before)
        self.assertIsNone(WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        self.assertFalse(os.path.lexists(self.root), "the root was left behind")


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
        r = WINE_.run([JUNCTION_DATA, "make", target])
        self.assertEqual(r.rc, 0, r)
        return r.out.strip()

    def read(self, hexdata):
        r = WINE_.run([JUNCTION_DATA, "read", hexdata])
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
        r = WINE_.run([JUNCTION_DATA, "make", "\\\\server\\share\\cudnn"])
        self.assertEqual(r.rc, 1, r)
        hexdata = self.data("C:\\x")
        r = WINE_.run([JUNCTION_DATA, "read", hexdata[:-4]])  # cut short
        self.assertEqual(r.rc, 1, r)


if __name__ == "__main__":
    reason = missing_prerequisites()
    if reason:
        print("test_wine.py: skipped: %s" % reason, file=sys.stderr)
        sys.exit(77)
    unittest.main()

"""The Wine suite's harness: end-to-end tests of the Windows cudnnctl.exe
under Wine, in the files tests/wine/test_wine_*.py (install, registry,
verify, refusals, kill) and test_download_wine.py, test_http_wine.py.

Each file runs build-win/cudnnctl.exe (scripts/build-windows.sh) in a
private Wine prefix of its own (start() and stop(), its setUpModule and
tearDownModule) against Windows-layout zips packed at test time from the
fake cuDNN DLLs the Windows build makes (tests/fake/variants.txt, packed
by tests/lib/fixtures.py).  Checks exit statuses, messages, the install
root and the registry (HKCU\\Environment Path and CUDNN_PATH, and the
machine PATH for shadowing).  Stdlib only (Python >= 3.11, Debian 12's
/usr/bin/python3).  Each test class is one ctest entry (ctest -L wine in
build-win/), its process with a prefix copied from one made for the run
(TEMPLATE below):

    python3 tests/wine/test_wine_install.py -v
    python3 tests/wine/test_wine_verify.py -v -k Python

Environment: CUDNNCTL_EXE (default ../../build-win/cudnnctl.exe from this
file), CUDNNCTL_FAKE_DIR and CUDNNCTL_FAKEPYTHON (default under
../../build-win/tests), CUDNNCTL_MKCUDNN (default ../fixtures/mkcudnn.py),
WINE (default /usr/lib/wine/wine64), CUDNNCTL_WINEDEBUG (Wine's WINEDEBUG
for the programs run, default -all; -all,err+virtual,err+module shows why
Wine could not start one, see Wine.run).  Everything is skipped, with the
reason, when Wine, the fake DLLs or the .exe are missing; run as a script,
the exit status is then 77 (ctest's SKIP_RETURN_CODE).  What these tests
share with the Linux CLI tests is in tests/lib/cctltest.py.

Wine notes (see /work/shared/FACTS.md): junctions do not work there, so
cudnnctl's `current` is a pointer file and the user PATH names
<root>\\versions\\<id>\\bin.  One `wineserver -p` serves a file's run
and is killed at the end; the prefix lives in a temporary folder.  The
junction data cudnnctl would write on NTFS is checked on a real NTFS
volume mounted with ntfs-3g (test_wine_refusals.py's TestJunctionOnNtfs;
skipped without root, /dev/fuse, ntfs-3g or attr).  Every test snapshots
the registry values it may touch and puts them back.
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
                      run_checked, sha256_file, snapshot)

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

# helper programs the Windows build makes (tests/CMakeLists.txt)
CONSOLECP = os.environ.get("CUDNNCTL_CONSOLECP") or os.path.join(
    os.path.dirname(EXE), "tests", "consolecp.exe")
SETTINGWATCH = os.environ.get("CUDNNCTL_SETTINGWATCH") or os.path.join(
    os.path.dirname(EXE), "tests", "settingwatch.exe")
SHOWARGS = os.environ.get("CUDNNCTL_SHOWARGS") or os.path.join(
    os.path.dirname(EXE), "tests", "showargs.exe")
FAKECC = os.environ.get("CUDNNCTL_FAKECC") or os.path.join(
    os.path.dirname(EXE), "tests", "fakecc.exe")
APPCUDNN = os.environ.get("CUDNNCTL_APPCUDNN") or os.path.join(
    os.path.dirname(EXE), "tests", "appcudnn.exe")
APPCUDNN8 = os.environ.get("CUDNNCTL_APPCUDNN8") or os.path.join(
    os.path.dirname(EXE), "tests", "appcudnn8.exe")
REGACL = os.environ.get("CUDNNCTL_REGACL") or os.path.join(
    os.path.dirname(EXE), "tests", "regacl.exe")
ROOTCA = os.environ.get("CUDNNCTL_ROOTCA") or os.path.join(
    os.path.dirname(EXE), "tests", "rootca.exe")

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


def trust_ca(wine, pem, trusted):
    """Puts the CA certificate in the file pem into the current user's Root
    store of wine's prefix, or takes it out (rootca.exe, through CryptoAPI;
    Wine 10 does not trust the local machine's Root store, which Wine 8
    did: tests/wine/rootca.c)."""
    r = wine.run([ROOTCA, "add" if trusted else "remove", zpath(pem)])
    if r.rc != 0:
        raise AssertionError("rootca.exe failed:%s" % r)


# ------------------------------------------------------------------- Wine
# A prefix made once for a whole ctest run (tests/wine/unitprefix.py
# template, a fixture of every Wine entry): each test process copies it in
# about a second instead of making its own (wineboot --init and the settings
# below: about 10 s, 14 s with the cores busy).  Unset, or not finished
# (no READY file), and each process makes its own, as when a file is run
# by hand.
TEMPLATE = os.environ.get("CUDNNCTL_WINE_TEMPLATE")
TEMPLATE_READY = "cudnnctl-template-ready"


def make_prefix(env, logdir):
    """Makes the prefix env names (wineboot --init; Wine's null display
    driver; crashes end at once, without a dialog) and leaves no wineserver
    running on it."""
    server = wineserver_path()
    quiet = dict(env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
    subprocess.run([server, "-p60"], check=True, **quiet)
    try:
        # its helper processes stay with the server, so their output must
        # not be a pipe we wait on
        with open(os.path.join(logdir, "wineboot.log"), "wb") as log:
            run = dict(env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                       check=True)
            subprocess.run([WINE, "wineboot", "--init"], timeout=300, **run)
            # no X server here: Wine's null display driver gives windows
            # (the WM_SETTINGCHANGE test makes one) and a desktop; it is
            # read when the prefix starts, so it is started again after
            subprocess.run([WINE, "reg", "add", r"HKCU\Software\Wine\Drivers", "/v",
                            "Graphics", "/d", "null", "/f"], timeout=120, **run)
            # a program that crashes ends at once, winedbg's backtrace on
            # its stderr: the crash dialog would wait (with the null
            # driver, until the test's timeout)
            subprocess.run([WINE, "reg", "add", r"HKCU\Software\Wine\WineDbg", "/v",
                            "ShowCrashDialog", "/t", "REG_DWORD", "/d", "0", "/f"],
                           timeout=120, **run)
    finally:
        # the registry written out, every process of the prefix ended
        for arg in ("-k", "-w"):
            subprocess.run([server, arg], timeout=60, **quiet)


def clone_prefix(src, dst):
    """dst: a copy of the finished template prefix src (False when src is
    not one).  Wine's own files under drive_c/windows are hard links when
    src and dst share a file system (Wine never writes to its DLLs; a test
    that replaced one would unlink it first), its .ini and .log files and
    everything else (the registry) are copied; the file naming src's
    wineserver socket folder (Debian bug 903622) is left out."""
    if not os.path.isfile(os.path.join(src, TEMPLATE_READY)):
        return False
    windows = os.path.join(src, "drive_c", "windows") + os.sep

    def copy(s, d):
        if s.startswith(windows) and not s.endswith((".ini", ".log")):
            try:
                return os.link(s, d)
            except OSError:
                pass
        return shutil.copy2(s, d)

    shutil.copytree(src, dst, symlinks=True, copy_function=copy,
                    ignore=lambda d, names: [n for n in names if d == src and
                                             n in ("wineserver", TEMPLATE_READY)])
    return True


def unstarted(rc, out, err, speaks=True):
    """True when a program's end (status rc, its stdout and stderr) says
    Wine did not start it, which is not the program's answer.  Seen once
    in a while: status 1 and nothing printed from a program that prints a
    line on every way out (speaks: cudnnctl.exe, holddll.exe); status 66
    and nothing printed, a fresh-clone CI run's: 0xC0000142
    (STATUS_DLL_INIT_FAILED, a DLL's start-up failed in Wine's loader,
    before main) in the 8 bits a Linux status keeps (cudnnctl has no
    status 66); and any program with status 1 and Wine's launcher's own
    words ("ShellExecuteEx failed: Internal error", a fresh-clone CI run's
    `reg add`; the likely cause of the reg export and reg delete failures
    the registry helpers ask again for).  With
    CUDNNCTL_WINEDEBUG=-all,err+virtual a status-1 one shows as "failed to
    map the shared user data: c0000018" (seen 4 times in 6 runs of the
    Wine suite, 2026-12-05)."""
    out = out.encode() if isinstance(out, str) else out or b""
    err = err.encode() if isinstance(err, str) else err or b""
    if speaks and rc in (1, 66) and not out and not err:
        return True
    return rc == 1 and (b"ShellExecuteEx failed" in out + err or
                        b"failed to map the shared user data" in err)


def said_unstarted(what, rc, output=b""):
    """The line a test prints before it starts again what Wine did not."""
    sys.stderr.write("  [info] wine did not start %s (status %d, %s); running it "
                     "again\n" % (what, rc, "ShellExecuteEx failed" if output
                                   else "no output"))


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
        self.env.update(WINEPREFIX=self.prefix,
                        WINEDEBUG=os.environ.get("CUDNNCTL_WINEDEBUG", "-all"), LANG="C.UTF-8",
                        LC_ALL="C.UTF-8", WINEDLLOVERRIDES="mscoree,mshtml=")
        self.exe = os.path.join(self.tmp, "cudnnctl.exe")
        self.started = False

    def start(self):
        # a private copy: a rebuild during the run must not change what runs
        shutil.copy2(EXE, self.exe)
        t = time.monotonic()
        how = "copied from the template %s" % TEMPLATE
        if not (TEMPLATE and clone_prefix(TEMPLATE, self.prefix)):
            how = "made"
            os.mkdir(self.prefix)
            self.started = True  # stop() kills a server make_prefix left
            make_prefix(self.env, self.tmp)
        # one persistent server for the tests; it also exits a minute
        # after the last client should this run be killed before stop()
        subprocess.run([self.server, "-p60"], env=self.env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        self.started = True
        # and up before the first test (without this, the first command
        # after a restart was seen to hang for a minute)
        with open(os.path.join(self.tmp, "wineboot2.log"), "wb") as log:
            subprocess.run([WINE, "wineboot"], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=log, stderr=log, timeout=300, check=True)
        print("\n  [info] Wine prefix %s %s, ready in %.1f s"
              % (self.prefix, how, time.monotonic() - t), file=sys.stderr)

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

    def run(self, args, timeout=180, env=None, cwd=None):
        """Runs a Windows program; env: variables added for this run; cwd:
        the Linux folder it starts in (Wine gives the program its name on
        C: or Z:)."""
        cmd = [str(a) for a in args]
        for attempt in range(3):
            proc = subprocess.run([WINE] + cmd, env=dict(self.env, **(env or {})),
                                  stdin=subprocess.DEVNULL, cwd=cwd,
                                  capture_output=True, timeout=timeout)
            # Wine itself failing to start the program is not the
            # program's answer, and the program never ran: ask again
            if not unstarted(proc.returncode, proc.stdout, proc.stderr,
                             cmd[0].endswith("cudnnctl.exe")):
                break
            said_unstarted(cmd[:2], proc.returncode, proc.stdout + proc.stderr)
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


# the session of this process: made by start(), ended by stop()
WINE_ = None  # the Wine prefix
FX = None     # the archives (tests/lib/fixtures.py), packed under its folder


def start():
    """Starts this process's prefix (the setUpModule of every test file);
    unittest.SkipTest with the reason when the suite cannot run here."""
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


def stop():
    global WINE_, FX
    if WINE_:
        WINE_.stop()
    WINE_ = FX = None


# every test file takes these with `from winetest import *`
def setUpModule():
    start()


def tearDownModule():
    stop()


def main(name):
    """A test file run as a script: exit status 77 (ctest's skip) with the
    reason when the suite cannot run here, else unittest.main()."""
    reason = missing_prerequisites()
    if reason:
        print("%s: skipped: %s" % (name, reason), file=sys.stderr)
        sys.exit(77)
    unittest.main(module="__main__")


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
        saved = self.watched_values()
        self.addCleanup(self.restore_registry, saved)
        # every test starts from a prefix without cudnnctl's values
        if saved[(USER_ENV, "CUDNN_PATH")] is not None:
            WINE_.reg_delete(USER_ENV, "CUDNN_PATH")

    def watched_values(self):
        """{(key, name): value} of WATCHED, each key exported once (each
        reg.exe run under Wine costs about 0.15 s, and every test reads
        them twice)."""
        keys = {key: WINE_.reg_values(key) for key in dict.fromkeys(k for k, _ in self.WATCHED)}
        return {(key, name): keys[key].get(name.lower()) for key, name in self.WATCHED}

    def restore_registry(self, saved):
        now = self.watched_values()
        changed = [kn for kn, value in saved.items() if now[kn] != value]
        for key, name in changed:
            WINE_.reg_put(key, name, saved[(key, name)])
        if changed:
            now = self.watched_values()
        for (key, name), value in saved.items():
            self.assertEqual(now[(key, name)], value, "could not restore %s" % name)

    # -- running
    def run_cli(self, *args, root=True, verify=False, env=None, cwd=None):
        """--root self.root_win is added unless root is False or another
        root; install and switch get --no-verify unless verify."""
        return WINE_.run(cli_command(WINE_.exe, args,
                                     self.root_win if root is True else root, verify),
                         env=env, cwd=cwd)

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

    def user_path_and_cudnn_path(self):
        """The user Path and CUDNN_PATH values, from one reg export."""
        values = WINE_.reg_values(USER_ENV)
        return values.get("path"), values.get("cudnn_path")

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

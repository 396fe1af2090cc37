#!/usr/bin/env python3
"""Install by version on Windows, end to end: cudnnctl.exe install VERSION
--mirror http://127.0.0.1:PORT/ and cudnnctl.exe download VERSION under
Wine, the archive fetched through WinHTTP (src/platform/win/http-win.c)
from tests/lib/redist_server.py, hashed as it arrives (src/core/fetch.c),
kept in the cache and installed like an archive given by path.

The release is 9.90.0.1 (in none of NVIDIA's manifests), built for CUDA 12
and 13 from the fake DLLs that report 9.90.0.1 (the r990 variant of
tests/fake/variants.txt, packed by tests/lib/fixtures.py), laid
out in a mirror folder with its redistrib_9.90.0.json (build_mirror).  The
manifest is given with --manifest (a fetched one is taken only over
HTTPS); over HTTPS (https://localhost, the server's CA put into the
prefix's root store) the mirror's index and manifest are read too.  Each
test has its own install root C:\\tN, cache C:\\cacheN and server.  Stdlib
only (Python >= 3.11).

Covered: install by version (list, the registry PATH and CUDNN_PATH as for
an archive, the zip in the cache, verify at the end); a transfer cut or
reset by the server resumed with a Range (bytes sent: the archive's
size); a NAME.part of an earlier run resumed, and started again from 0
when the server ignores the Range; tampered and over-long transfers
refused with MISMATCH, nothing installed, no NAME.part, the next run from
byte 0; a wrong cached copy fetched again; other roots from the cache
with the server stopped (and --offline); 404, 503 retried, an
unreachable port (NETWORK, quickly, naming the URL); download --json
--output and --dry-run; the CUDA choice through the test hooks; the
default cache under %LOCALAPPDATA%; two processes fetching into one
cache; an HTTPS mirror without --manifest; ranges over several WinHTTP
requests, a zip unpacked while it downloads, and an install killed then
resumed that keeps the members its journal vouches for.  From 9.23 on the Windows
archive keeps its DLLs in bin\\x64 (mkcudnn.py does too), so the user
PATH names versions\\<id>\\bin\\x64.

    python3 tests/wine/test_download_wine.py -v

Environment: as winetest.py (CUDNNCTL_EXE, CUDNNCTL_MKCUDNN, WINE).
Skipped, with the reason (exit status 77 as a script), when Wine, the
mingw-w64 tools or cudnnctl.exe are missing.
"""
import collections
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import winetest  # noqa: E402  (the Wine prefix, the fake DLLs, the test base)
from winetest import assert_windows_paths, zpath  # noqa: E402
from cctltest import (EXIT, cli_command, resume_folders,  # noqa: E402
                      sha256_file, some_vouched)
from redist_server import RedistServer, build_mirror  # noqa: E402
from download_cases import (Archive, DownloadOptionsCases, InstallCacheCases,  # noqa: E402
                            InstallRefusalCases, InstallResumeCases)
import proxy  # noqa: E402

VER = "9.90.0.1"
VID = VER + "-cuda12"
PLATFORM = "windows-x86_64"
NAME = "cudnn-%s-%s_cuda12-archive.zip" % (PLATFORM, VER)
NAME13 = "cudnn-%s-%s_cuda13-archive.zip" % (PLATFORM, VER)
PATH = "/cudnn/%s/%s" % (PLATFORM, NAME)
MANIFEST_PATH = "/redistrib_9.90.0.json"

WINE_ = None
MIRROR = None    # the folder served
MANIFEST = None  # its redistrib_9.90.0.json
DATA = b""       # the CUDA 12 archive's bytes
SIZE = 0
SHA = ""


def missing_prerequisites():
    return winetest.missing_prerequisites()


def setUpModule():
    global WINE_, MIRROR, MANIFEST, DATA, SIZE, SHA
    # winetest's prefix, fixtures and WineTest base
    winetest.start()
    WINE_ = winetest.WINE_
    try:
        # the fake DLLs say they are 9.90.0.1, so that verify passes
        archives = [winetest.FX.fake_release("r990", VER, cuda) for cuda in (12, 13)]
        MIRROR = os.path.join(WINE_.tmp, "mirror")
        (MANIFEST,) = build_mirror(MIRROR, archives)
        assert os.path.basename(MANIFEST) == MANIFEST_PATH[1:], MANIFEST
        with open(MIRROR + PATH, "rb") as f:
            DATA = f.read()
        SIZE, SHA = len(DATA), hashlib.sha256(DATA).hexdigest()
        print("  [info] %s: %d bytes" % (NAME, SIZE), file=sys.stderr)
    except BaseException:
        winetest.stop()
        raise


def tearDownModule():
    winetest.stop()



# ------------------------------------------------------------- test base
class DownloadTest(winetest.WineTest):
    """WineTest (a root C:\\tN, the registry put back) with a cache
    C:\\cacheN and a server of the mirror, stopped at the end."""
    tls = None

    def setUp(self):
        super().setUp()
        n = winetest.WineTest.counter
        self.cache_win = "C:\\cache%d" % n
        self.cache = WINE_.linux(self.cache_win)
        self.addCleanup(shutil.rmtree, self.cache, True)
        self.srv = RedistServer(MIRROR, tls=self.tls).start()
        self.addCleanup(self.srv.stop)
        self.extra = []  # other roots and folders made by the test

    def tearDown(self):
        for p in self.extra:
            shutil.rmtree(p, ignore_errors=True)

    def other(self, prefix):
        """Another folder C:\\<prefix>N, removed at the end: (Windows, Linux)."""
        win = "C:\\%s%d" % (prefix, winetest.WineTest.counter)
        self.extra.append(WINE_.linux(win))
        return win, WINE_.linux(win)

    def mirror(self):
        return self.srv.url

    def url(self, path=PATH):
        return self.mirror().rstrip("/") + path

    def fetch_args(self, mirror=None, manifest=True, cache=True):
        a = ["--mirror", mirror or self.mirror()]
        if cache:
            a += ["--cache", self.cache_win if cache is True else cache]
        if manifest:
            a += ["--manifest", zpath(MANIFEST)]
        return a

    def install_version(self, *extra, root=True, verify=False, env=None, **kw):
        args = ["install", VER, "--cuda", "12", *self.fetch_args(**kw), *extra]
        return self.run_env(args, root, verify, env)

    def download(self, *extra, env=None, **kw):
        return self.run_env(["download", VER, *self.fetch_args(**kw), *extra], False,
                            False, env)

    def run_env(self, args, root=True, verify=False, env=None):
        # retries wait 20 ms, not from 0.5 s up (as on Linux)
        return WINE_.run(cli_command(WINE_.exe, args,
                                     self.root_win if root is True else root, verify),
                         env=dict({"CUDNNCTL_TEST_BACKOFF_MS": "20"}, **(env or {})))

    def ok_r(self, r):
        self.assertEqual(r.rc, 0, "command failed:%s" % r)
        assert_no_slash_paths(self, r)
        return r

    def fails_r(self, r, code, *words):
        """r failed with `code`, an error message holding every one of words."""
        self.assertEqual(r.rc, code, "wrong exit status:%s" % r)
        self.assertIn("cudnnctl: error: ", r.err, "no error message:%s" % r)
        for w in words:
            self.assertIn(str(w), r.err, "stderr lacks %r:%s" % (w, r))
        assert_no_slash_paths(self, r)
        return r

    # -- what is where
    def cached(self, name=NAME):
        return os.path.join(self.cache, "archives", name)

    def cache_names(self):
        d = os.path.join(self.cache, "archives")
        return sorted(n for n in os.listdir(d) if not n.endswith(".lock")) \
            if os.path.isdir(d) else []

    def assert_cached(self):
        self.assertEqual(self.cache_names(), [NAME])
        self.assertEqual(sha256_file(self.cached()), SHA)

    def installed_ids(self, root=True):
        r = self.run_cli("list", "--json", root=root)
        self.assertEqual(r.rc, 0, r)
        return [i["id"] for i in r.json()["installed"]]

    def assert_installed(self, r=None):
        """VID is installed into the root and active, as an archive install
        makes it: the pointer file, the user PATH with the version's DLL
        folder first (bin\\x64: 9.23 and later), CUDNN_PATH."""
        self.assertEqual(self.installed_ids(), [VID])
        vdir = os.path.join(self.root, "versions", VID)
        for dll in ("cudnn64_9.dll", "cudnn_ops64_9.dll"):
            self.assertTrue(os.path.isfile(os.path.join(vdir, "bin", "x64", dll)), dll)
        self.assertTrue(os.path.isfile(os.path.join(vdir, ".cudnnctl-record")))
        self.assertEqual(self.active_id(), VID)
        self.assert_user_path("REG_EXPAND_SZ", self.bin_entry(VID) + "\\x64;C:\\tools")
        self.assert_cudnn_path(VID)
        if r is not None:
            self.assertIn("installed cuDNN %s for CUDA 12 (sha256 verified) into %s\n"
                          % (VER, self.vdir_win(VID)), r.out)

    def assert_nothing_installed(self):
        self.assertEqual(self.installed_ids(), [])
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID)))
        self.assertIsNone(self.active_id())
        self.assert_user_path("REG_SZ", "C:\\tools")
        self.assert_cudnn_path(None)

    def part(self, nbytes):
        """NAME.part in the cache holding the archive's first nbytes, as a
        download that was cut off leaves it."""
        os.makedirs(os.path.dirname(self.cached()), exist_ok=True)
        with open(self.cached() + ".part", "wb") as f:
            f.write(DATA[:nbytes])

    def chose(self, r, cuda, why):
        self.assertIn("cudnnctl: cuDNN %s for CUDA %d (%s): %s" % (VER, cuda, PLATFORM, why),
                      r.err, r)


def assert_no_slash_paths(test, r):
    """The drive-letter paths printed use '\\' (the URLs aside)."""
    assert_windows_paths(test, re.sub(r"https?://\S+", "", r.out + r.err), need=False)


# ------------------------------------------------------------------- tests
class CasesHost(DownloadTest):
    """What tests/lib/download_cases.py's cases (Linux runs them too:
    tests/cli/test_download.py) ask of their host: here through WinHTTP,
    with the CUDA 12 zip, the user PATH C:\\tools before each test."""

    def setUp(self):
        super().setUp()
        self.set_user_path("REG_SZ", "C:\\tools")
        self.AR = Archive(PATH, DATA, VER)
        self.folders = 0

    # what download_cases' Install...Cases ask of their host
    def download_version(self, *extra, mirror=None):
        return self.download("--cuda", "12", *extra, mirror=mirror)

    def other_root(self):
        self.folders += 1
        return self.other("r%d-" % self.folders)[0]

    def scratch(self, name):
        path = os.path.join(WINE_.tmp, "%s-%d" % (name, winetest.WineTest.counter))
        self.extra.append(path)
        return path

    def cache_file(self, name):
        return self.cached(name)

    def output_folder(self):
        self.folders += 1
        return self.other("x%d-" % self.folders)

    def shown(self, folder, name):
        return "%s\\%s" % (folder or self.cache_win + "\\archives", name)

    def assert_installed_as_fetched(self, root=None):
        if root is None:
            return self.assert_installed()
        self.assertEqual(self.installed_ids(root=root), [VID])
        self.assertTrue(os.path.isfile(os.path.join(WINE_.linux(root), "versions", VID,
                                                    "bin", "x64", "cudnn64_9.dll")))
        # the first install into a root makes it active
        self.assertTrue(self.user_path()[1].startswith(
            "%s\\versions\\%s\\bin\\x64;" % (root, VID)), self.user_path())


class TestInstallResume(InstallResumeCases, CasesHost):
    """install VERSION through cuts, resets and planted parts (shared)."""


class TestInstallRefusals(InstallRefusalCases, CasesHost):
    """install VERSION refusing tampered bytes and wrong cached copies
    (shared)."""


class TestInstallVersion(InstallCacheCases, CasesHost):
    """install VERSION: the shared cache and server-error cases, and what
    only Windows has (the registry PATH, verify of the DLLs)."""

    def test_install_by_version_over_http(self):
        """install 9.90.0.1 --cuda 12 --mirror http://127.0.0.1:PORT/: one
        GET of the archive, the zip kept in the cache, installed and active
        as from a file; verify at the end passes (no GPU under Wine)."""
        r = self.ok_r(self.install_version(verify=True))
        self.chose(r, 12, "--cuda 12")
        self.assert_installed(r)
        self.assert_cached()
        st = self.srv.stats()
        # only the archive: the manifest came with --manifest
        self.assertEqual(list(st), [PATH], st)
        self.assertEqual(st[PATH]["ranges"], [None], st)
        self.assertEqual(st[PATH]["statuses"], [200], st)
        self.assertEqual(st[PATH]["bytes_sent"], SIZE, st)
        # the verify run at the end: the fake DLLs of 9.90.0.1 load
        self.assertIn("file version %s" % VER, r.out)
        self.assertIn("cuDNN 9.90.0 (99000)", r.out)
        self.assertRegex(r.out, r"driver +skip .*%s" % re.escape(winetest.NO_DRIVER))
        # cache list names it
        doc = self.run_env(["cache", "list", "--json", "--cache", self.cache_win],
                           root=False).json()
        self.assertEqual(doc["cache"], self.cache_win)
        self.assertIn({"kind": "archive", "name": NAME, "size": SIZE}, doc["entries"])
        # again: already installed, from the cache, no request
        self.srv.reset_stats()
        r = self.ok_r(self.install_version())
        self.assertIn("already installed", r.out)
        self.assertEqual(self.srv.stats(), {})

class TestRanges(DownloadTest):
    """One archive over several WinHTTP requests at once
    (src/core/fetch-ranges.c on threads, src/platform/win/http-win.c with
    bounded Range headers); CUDNNCTL_TEST_RANGE_MIN lets the small test
    archive be cut into ranges."""
    RANGED = {"CUDNNCTL_TEST_RANGE_MIN": "4096"}

    def gets(self):
        return [q for q in self.srv.requests(PATH) if q["method"] == "GET"]

    def test_four_requests_cover_the_archive_once(self):
        r = self.ok_r(self.download("--cuda", "12", "--json", "--connections", "4",
                                    env=self.RANGED))
        reqs = self.gets()
        self.assertEqual([q["status"] for q in reqs], [206] * 4, reqs)
        spans = sorted(tuple(int(x) for x in q["range"][6:].split("-")) for q in reqs)
        self.assertEqual(spans[0][0], 0)
        self.assertEqual(spans[-1][1], SIZE - 1)
        for a, b in zip(spans, spans[1:]):
            self.assertEqual(a[1] + 1, b[0], spans)
        self.assertEqual(sum(q["sent"] for q in reqs), SIZE)
        self.assertEqual(r.json()["requests"], 4, r)
        # four connections at most: one whose range is in goes on to the
        # next (the process's WinHTTP session keeps them alive)
        self.assertLessEqual(len({q["conn"] for q in reqs}), 4, reqs)
        self.assert_cached()

    def test_the_pieces_of_an_install_reuse_four_connections(self):
        # an install reads the zip as it arrives: it is cut into many
        # pieces, taken four at a time, the first four held until all
        # four are in flight; each connection goes on from one piece to
        # the next: no new connection (nor TLS handshake) a piece
        self.srv.gather(PATH, count=4)
        self.ok_r(self.install_version("--connections", "4", env=self.RANGED))
        reqs = self.gets()
        self.assertGreater(len(reqs), 8, reqs)
        self.assertEqual([q["faults"] for q in reqs].count(["gathered"]), 4, reqs)
        self.assertEqual(len({q["conn"] for q in reqs}), 4, reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), SIZE)
        self.assertEqual(self.installed_ids(), [VID])
        self.assert_cached()

    def test_a_cut_range_is_resumed_and_a_tampered_one_refused(self):
        self.srv.cut(PATH, after=3000, count=2)
        self.ok_r(self.download("--cuda", "12", "--connections", "4", env=self.RANGED))
        reqs = self.gets()
        self.assertEqual(len(reqs), 6, reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), SIZE, "resumed, not read twice")
        self.assert_cached()
        shutil.rmtree(self.cache)
        self.srv.tamper(PATH, count=None)
        self.fails_r(self.install_version("--connections", "4", env=self.RANGED),
                     EXIT["MISMATCH"], "sha256 mismatch", SHA)
        self.assertEqual(self.cache_names(), [], "no archive and no range left")
        self.assertEqual(self.installed_ids(), [])
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID)))

    def test_a_server_that_lies_gets_nothing_installed_or_kept(self):
        # WinHTTP's view of the Content-Length: a range whose header says
        # one byte more than its whole body is taken (4 requests, no
        # retry); one past the archive's end, and ranges from a file
        # changed since range 0, leave nothing
        self.srv.lie_length(PATH, delta=1)
        r = self.ok_r(self.download("--cuda", "12", "--connections", "4", env=self.RANGED))
        self.assertNotIn("trying again", r.err)
        self.assertEqual(len(self.gets()), 4)
        self.assert_cached()
        shutil.rmtree(self.cache)
        self.srv.lie_length(PATH, delta=5000, count=None)
        self.fails_r(self.download("--cuda", "12", "--connections", "4", env=self.RANGED),
                     EXIT["MISMATCH"], "past the %d the manifest gives" % SIZE)
        self.srv.clear_faults()
        self.srv.changed(PATH, count=None)
        self.fails_r(self.install_version("--connections", "4", env=self.RANGED),
                     EXIT["MISMATCH"], "sha256 mismatch", SHA)
        self.assertEqual(self.cache_names(), [], "no archive and no range left")
        self.assertEqual(self.installed_ids(), [])

    def test_interrupt_leaves_no_range(self):
        # a Ctrl+C (the test hook raises one at the 60th point the work
        # checks for one: a block received by a range) stops every range
        env = dict(self.RANGED, CUDNNCTL_TEST_INTERRUPT_AT="60")
        self.srv.slow(PATH, rate=max(SIZE // 10, 1), count=None)
        self.fails_r(self.download("--cuda", "12", "--connections", "4", env=env),
                     EXIT["INTERRUPTED"], "interrupted")
        self.assertEqual(self.cache_names(), [], "nothing left in the cache")
        self.assertGreater(len(self.gets()), 1, "it was a ranged download")

    def test_an_append_cut_short_is_cut_back(self):
        # NAME.part holds range 0 and part of the next range, whose file is
        # still there (a run killed while it appended the ranges): it is cut
        # back (SetEndOfFile) to where that range starts
        os.makedirs(os.path.join(self.cache, "archives"), exist_ok=True)
        s1, s2 = SIZE // 3, 2 * SIZE // 3
        for name, body in ((NAME + ".part", DATA[:s1 + 1000]),
                           ("%s.%d.part" % (NAME, s1), DATA[s1:s1 + 3000]),
                           ("%s.%d.part" % (NAME, s2), DATA[s2:s2 + 10])):
            with open(self.cached(name), "wb") as f:
                f.write(body)
        self.ok_r(self.download("--cuda", "12", "--connections", "4", env=self.RANGED))
        reqs = self.gets()
        self.assertEqual(sorted(int(q["range"][6:].split("-")[0]) for q in reqs),
                         [s1 + 3000, s2 + 10], reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), SIZE - s1 - 3010)
        self.assert_cached()

    def start_held(self):
        """install VER started in ranges with the pieces from the middle on
        held by the server: the running Wine process.  Two workers whatever
        the machine has (the members are kept for a resume only when
        workers unpack them)."""
        self.srv.stall(PATH, seconds=120, resume=True, count=None,
                       from_byte=SIZE // 2, to_byte=SIZE - SIZE // 8)
        cmd = [winetest.WINE] + cli_command(WINE_.exe, [
            "install", VER, "--cuda", "12", *self.fetch_args(), "--connections", "4",
            "--jobs", "2"],
            self.root_win, False)
        env = dict(WINE_.env, CUDNNCTL_TEST_BACKOFF_MS="20", **self.RANGED)
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc

    def wait_while_held(self, what, cond):
        """start_held(), then wait (at most 60 s) until cond() holds while
        it runs held; the process.  One that Wine did not start (status 1
        or 66 and nothing printed, as winetest's WinePrefix.run tells) is
        started again."""
        for attempt in range(3):
            proc = self.start_held()
            deadline = time.monotonic() + 60
            while not cond() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if cond() or proc.poll() is None:
                break
            out, err = proc.communicate(timeout=60)
            if not winetest.unstarted(proc.returncode, out, err):
                break
            winetest.said_unstarted("cudnnctl.exe", proc.returncode, out + err)
        if not cond() and proc.poll() is not None:
            out, err = proc.communicate(timeout=60)
            self.fail("%s: the install ended (status %d): %s%s"
                      % (what, proc.returncode, out.decode(errors="replace"),
                         err.decode(errors="replace")))
        if not cond():
            vdir = os.path.join(self.root, "versions")
            seen = {n: sorted(os.listdir(os.path.join(vdir, n)))
                    for n in (os.listdir(vdir) if os.path.isdir(vdir) else ())
                    if os.path.isdir(os.path.join(vdir, n))}
            for folder in resume_folders(self.root):
                with open(os.path.join(folder, "journal"), errors="replace") as f:
                    seen[folder + " journal"] = f.read()[-2000:]
            self.fail("%s while the rest was held (60 s); requests %s; versions: %s"
                      % (what, self.gets(), seen))
        return proc

    def test_zip_members_are_unpacked_while_it_downloads(self):
        # the pieces from the middle on held (WinHTTP, the feed's files on
        # Windows): the first members are unpacked already, nothing is
        # visible, and once released the install completes
        vdir = os.path.join(self.root, "versions")

        def unpacked():
            for n in os.listdir(vdir) if os.path.isdir(vdir) else ():
                d = os.path.join(vdir, n)
                # (a .resume- folder holds its journal from the start)
                if n.startswith((".staging-", ".resume-")) and os.path.isdir(d) and \
                        [f for f in os.listdir(d) if f != "journal"]:
                    return True
            return False
        proc = self.wait_while_held("no member unpacked", unpacked)
        self.assertEqual([n for n in os.listdir(vdir) if not n.startswith(".")], [])
        self.srv.release_stalls()
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(self.installed_ids(), [VID])
        self.assert_cached()

    def test_a_killed_install_keeps_what_was_unpacked(self):
        # killed (as the task manager or a cancelled job kills it) once
        # the journal vouches for some members: the .part and the
        # versions\.resume-* folder stay, and the next install takes those
        # members from it (the journal and the files opened again under
        # Windows' sharing rules) instead of inflating them again
        found = {}
        proc = self.wait_while_held("no member vouched for in the journal",
                                    lambda: some_vouched(self.root, found))
        proc.kill()
        proc.communicate(timeout=120)
        self.assertIn(NAME + ".part", self.cache_names())
        (folder, kept), = found.items()
        self.assertEqual(resume_folders(self.root), [folder])
        self.srv.release_stalls()
        r = self.ok_r(self.install_version("--connections", "4", env=self.RANGED))
        got = [w for w in r.err.split("\n") if "unpacked before the download stopped" in w]
        self.assertEqual(len(got), 1, r)
        self.assertGreaterEqual(int(got[0].split("resumed: ")[1].split()[0]), len(kept), r)
        self.assertEqual(self.installed_ids(), [VID])
        self.assert_cached()
        self.assertEqual(resume_folders(self.root), [])
        # every member of the archive is installed byte for byte (beside
        # them, the files cudnnctl writes: the record, CMake's and
        # pkg-config's files); a kept member that was wrong would be missing
        with zipfile.ZipFile(io.BytesIO(DATA)) as z:
            want = collections.Counter(hashlib.sha256(z.read(i)).hexdigest()
                                       for i in z.infolist() if not i.is_dir())
        vdir = os.path.join(self.root, "versions", VID)
        got = collections.Counter(sha256_file(os.path.join(d, f))
                                  for d, _, files in os.walk(vdir) for f in files)
        self.assertEqual(want - got, collections.Counter())

    def test_ranges_left_by_a_run_are_taken_up(self):
        self.srv.cut(PATH, after=2000, count=None)
        self.fails_r(self.download("--cuda", "12", "--connections", "4", env=self.RANGED),
                     EXIT["NETWORK"], self.url())
        left = self.cache_names()
        self.assertEqual(len(left), 4, left)
        have = sum(os.path.getsize(self.cached(n)) for n in left)
        self.srv.clear_faults()
        self.srv.reset_stats()
        r = self.ok_r(self.download("--cuda", "12", "--json", "--connections", "4",
                                    env=self.RANGED))
        self.assertEqual(r.json()["downloaded"], SIZE - have, r)
        self.assertEqual(len(self.gets()), 4)
        self.assert_cached()


class TestMirrorSync(DownloadTest):
    """mirror sync on Windows: from the folder the server serves (Z:) and
    over HTTP with the manifest as a file, into C:\\siteN, then installed
    from as --mirror."""

    def sync(self, site_win, *extra):
        return WINE_.run(cli_command(WINE_.exe, ["mirror", "sync", site_win, "--versions",
                                                 "all", "--cuda", "12", "--json", *extra],
                                     None, False))

    def test_sync_from_a_folder_then_install_from_it(self):
        site_win, site = self.other("site")
        r = self.ok_r(self.sync(site_win, "--from", zpath(MIRROR)))
        states = {f["name"]: f["state"] for f in r.json()["files"]}
        rel = PATH[1:]
        self.assertEqual(states, {MANIFEST_PATH[1:]: "written", rel: "fetched"}, r)
        with open(os.path.join(site, *rel.split("/")), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), SHA)
        with open(os.path.join(site, MANIFEST_PATH[1:]), "rb") as f, \
                open(MANIFEST, "rb") as g:
            self.assertEqual(f.read(), g.read(), "the manifest byte for byte")
        r = self.ok_r(self.install_version(mirror=site_win, manifest=False))
        self.assertIn("installed cuDNN %s for CUDA 12 (sha256 verified)" % VER, r.out)
        self.assertEqual(self.installed_ids(), [VID])
        self.assertEqual(self.active_id(), VID)

    def test_sync_over_plain_http_with_the_manifest(self):
        site_win, site = self.other("site")
        self.fails_r(self.sync(site_win, "--from", self.mirror()), EXIT["MANIFEST"],
                     "only over HTTPS")
        r = self.ok_r(self.sync(site_win, "--from", self.mirror(), "--manifest",
                                zpath(MANIFEST)))
        self.assertEqual(r.json()["failed"], 0, r)
        self.assertTrue(os.path.isfile(os.path.join(site, *PATH[1:].split("/"))))


class TestDownload(DownloadOptionsCases, CasesHost):
    def test_cuda_choice(self):
        """Two CUDA builds and neither driver nor toolkit (Wine): --cuda is
        asked for; the test hooks stand in for a driver and a toolkit."""
        self.fails_r(self.download("--dry-run"), EXIT["USAGE"], "no NVIDIA driver and no CUDA "
                     "toolkit found, and it is built for CUDA 12, 13", "--cuda N")
        for env, cuda, why in (
                ({"CUDNNCTL_TEST_CUDA_DRIVER": "13000"}, 13, "the newest CUDA major"),
                ({"CUDNNCTL_TEST_CUDA_DRIVER": "12080"}, 12, "the newest CUDA major"),
                ({"CUDNNCTL_TEST_CUDA_DRIVER": "13000", "CUDNNCTL_TEST_CUDA_TOOLKIT": "12"},
                 12, "the CUDA 12 toolkit")):
            r = self.ok_r(self.download("--dry-run", "--json", env=env))
            self.assertEqual(r.json()["name"], NAME if cuda == 12 else NAME13, (env, r))
            self.chose(r, cuda, why)
        # a driver too old for the build asked for: refused before downloading
        r = self.download("--cuda", "13", env={"CUDNNCTL_TEST_CUDA_DRIVER": "12080"})
        self.fails_r(r, EXIT["DRIVER"], "needs a driver for CUDA 13")
        self.assertEqual(self.srv.stats(), {})



class TestDownloadCache(CasesHost):
    """download VERSION's cache on Windows: where it is by default, two
    processes sharing it."""

    def test_default_cache_is_under_local_appdata(self):
        """Without --cache: %LOCALAPPDATA%\\cudnnctl\\cache; CUDNNCTL_CACHE
        wins over it."""
        r = self.ok_r(self.download("--cuda", "12", "--json", cache=False))
        path = r.json()["path"]
        self.assertRegex(path, r"(?i)^C:\\users\\[^\\]+\\AppData\\Local\\cudnnctl\\cache"
                               r"\\archives\\%s$" % re.escape(NAME))
        cache = os.path.dirname(os.path.dirname(WINE_.linux(path)))
        self.addCleanup(shutil.rmtree, cache, True)
        self.assertEqual(sha256_file(WINE_.linux(path)), SHA)
        r = self.ok_r(self.download("--cuda", "12", "--json", cache=False,
                                    env={"CUDNNCTL_CACHE": self.cache_win}))
        self.assertEqual(r.json()["path"], "%s\\archives\\%s" % (self.cache_win, NAME))
        self.assert_cached()

    def test_two_downloads_into_one_cache(self):
        """Two processes fetch the same archive into one cache at once: one
        downloads (slowly), the other waits for its lock and takes the
        verified file; one GET in all."""
        self.srv.slow(PATH, rate=max(SIZE // 8, 16384))  # about 8 s
        cmd = [winetest.WINE] + cli_command(WINE_.exe, ["download", VER, "--cuda", "12",
                                                          "--json", *self.fetch_args()])
        first = subprocess.Popen(cmd, env=WINE_.env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(first.kill)
        # the first one is sending its request before the second starts
        deadline = time.monotonic() + 60
        while not self.srv.requests(PATH, settle=0) and time.monotonic() < deadline:
            time.sleep(0.1)
        second = self.download("--cuda", "12", "--json")
        out, err = first.communicate(timeout=120)
        self.assertEqual(first.returncode, 0, err)
        self.ok_r(second)
        docs = [json.loads(out), second.json()]
        self.assertEqual(sorted(d["cached"] for d in docs), [False, True], docs)
        self.assertIn("waiting for another cudnnctl", second.err)
        st = self.srv.stats(PATH)
        self.assertEqual((st["requests"], st["bytes_sent"]), (1, SIZE), st)
        self.assert_cached()


class TestPlanted(DownloadTest):
    """What another user of a shared cache may plant is not written
    through on Windows either: a NAME.lock that is a hard link to a file
    of the user's is refused, its target untouched; a NAME.part that is one
    is replaced and the download starts afresh (issue 22, item 1).  Links: every file cudnnctl writes or
    locks is opened with FILE_FLAG_OPEN_REPARSE_POINT and refused when it
    is a reparse point, but Wine 8 shows a Unix symbolic link as the file
    it points to (no reparse points, as no junctions), so that part only
    real Windows shows."""

    def secret(self):
        win, lin = self.other("secret")
        os.makedirs(lin)
        path = os.path.join(lin, "secret.txt")
        with open(path, "w") as f:
            f.write("only mine\n")
        return path

    def assert_untouched(self, secret):
        with open(secret) as f:
            self.assertEqual(f.read(), "only mine\n")

    def test_lock_planted_as_a_hard_link_is_refused(self):
        secret = self.secret()
        os.makedirs(os.path.dirname(self.cached()))
        os.link(secret, self.cached() + ".lock")
        self.fails_r(self.download("--cuda", "12"), EXIT["IO"],
                     "refusing to use the lock file", "a file with other hard links",
                     "del ")
        self.assert_untouched(secret)

    def test_part_planted_as_a_hard_link_is_not_appended_to(self):
        secret = self.secret()
        os.makedirs(os.path.dirname(self.cached()))
        os.link(secret, self.cached() + ".part")
        self.ok_r(self.download("--cuda", "12"))
        self.assert_untouched(secret)
        self.assert_cached()


class TestHttpsMirror(DownloadTest):
    """An HTTPS mirror (https://localhost: Wine refuses a certificate for
    an IP address) with the server's CA in the prefix's root store: install
    VERSION without --manifest reads the index and redistrib_9.90.0.json
    (a fetched manifest is taken only over HTTPS), caches it, downloads
    the archive; then a second root installs offline from the cache."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("openssl"):
            raise unittest.SkipTest("openssl not found (the server's certificates)")
        cls.tlsdir = tempfile.mkdtemp(prefix="cudnnctl-dl-tls-")
        cls.tls = cls.tlsdir
        srv = RedistServer(MIRROR, tls=cls.tls).start()  # makes the CA
        srv.stop()
        cls.ca_file = srv.ca_file
        winetest.trust_ca(WINE_, cls.ca_file, True)

    @classmethod
    def tearDownClass(cls):
        winetest.trust_ca(WINE_, cls.ca_file, False)
        shutil.rmtree(cls.tlsdir, ignore_errors=True)

    def mirror(self):
        return "https://localhost:%d/" % self.srv.port

    def test_https_through_a_proxy(self):
        """HTTPS_PROXY: WinHTTP tunnels through the proxy (CONNECT)."""
        if not proxy.available():
            self.skipTest("no tinyproxy (scripts/deps.sh --test installs it)")
        p = proxy.Proxy().start()
        self.addCleanup(p.cleanup)
        self.set_user_path("REG_SZ", "C:\\tools")
        self.ok_r(self.install_version(env={"HTTPS_PROXY": p.url}))
        self.assert_installed()
        self.assertIn("CONNECT localhost:%d HTTP/1.1" % self.srv.port, p.requests(),
                      p.log_text())

    def test_install_reads_the_mirrors_manifests_over_https(self):
        self.set_user_path("REG_SZ", "C:\\tools")
        r = self.ok_r(self.install_version("--json", manifest=False))
        self.assertIn("fetched 1 new manifest from %s" % self.mirror(), r.err)
        doc = r.json()
        self.assertEqual((doc["id"], doc["verified"]), (VID, True), r)
        self.assertEqual(doc["download"]["url"], self.url(), r)
        st = self.srv.stats()
        self.assertEqual(st["/"]["statuses"], [200], st)
        self.assertEqual(st[MANIFEST_PATH]["statuses"], [200], st)
        self.assertEqual((st[PATH]["statuses"], st[PATH]["bytes_sent"]), ([200], SIZE), st)
        self.assert_installed()
        self.assert_cached()
        self.assertTrue(os.path.isfile(os.path.join(self.cache, "manifests",
                                                    MANIFEST_PATH[1:])))
        # another root, the server gone, no --manifest: the cached manifest
        # and archive
        self.srv.stop()
        root_win, _ = self.other("r")
        r = self.ok_r(self.install_version("--offline", "--no-activate", "--json",
                                           manifest=False, root=root_win))
        self.assertEqual(r.json()["download"]["cached"], True, r)
        self.assertEqual(self.installed_ids(root=root_win), [VID])


class TestProxy(DownloadTest):
    """WinHTTP through a real proxy (tinyproxy, started here), named by
    the variables curl, git and pip take on Windows too (HTTP_PROXY,
    HTTPS_PROXY, NO_PROXY): a plain-HTTP mirror through it, NO_PROXY
    going around it, and a proxy that refuses.  (Wine's WinHTTP takes no
    automatic proxy settings, so the system-settings path is not run.)"""

    def setUp(self):
        if not proxy.available():
            self.skipTest("no tinyproxy (scripts/deps.sh --test installs it)")
        super().setUp()
        self.set_user_path("REG_SZ", "C:\\tools")

    def start_proxy(self, refuse=False):
        p = proxy.Proxy(refuse=refuse).start()
        self.addCleanup(p.cleanup)
        return p

    def test_plain_http_through_the_proxy(self):
        p = self.start_proxy()
        # the proxy as "localhost": Wine's WinHTTP sends a proxy the
        # absolute URL only when its name differs from the server's
        r = self.install_version(env={"HTTP_PROXY": p.url.replace("127.0.0.1", "localhost")})
        self.assertEqual(r.rc, 0, "%s\n%s\n%s" % (r, p.log_text(), self.srv.stats()))
        self.assert_installed()
        self.assertIn("GET %s HTTP/1.1" % self.url(), p.requests(), p.log_text())

    def test_no_proxy_goes_around_it(self):
        p = self.start_proxy()
        self.ok_r(self.install_version(env={"HTTP_PROXY": p.url, "NO_PROXY": "127.0.0.1"}))
        self.assert_installed()
        self.assertEqual(p.requests(), [], p.log_text())

    def test_a_proxy_that_refuses(self):
        p = self.start_proxy(refuse=True)
        r = self.fails_r(self.install_version(env={"HTTP_PROXY": p.url}), EXIT["NETWORK"],
                         self.url(), "the proxy refused it (HTTP 403", "HTTP_PROXY")
        self.assertNotIn("trying again", r.err)
        self.assertEqual(self.srv.stats(), {}, "nothing reached the server")
        self.assert_nothing_installed()


if __name__ == "__main__":
    reason = missing_prerequisites()
    if reason:
        print("test_download_wine.py: skipped: %s" % reason, file=sys.stderr)
        sys.exit(77)
    unittest.main()

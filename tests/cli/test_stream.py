#!/usr/bin/env python3
"""Extraction while the bytes arrive (src/core/feed.c, acquire.c): `install
VERSION` reads the archive as it downloads, and nothing is visible before
the download is whole and verified.

Each test holds the download half-way with a long stall of the tests'
server (tests/lib/redist_server.py), looks at the running cudnnctl
through /proc while it is held, and then lets it go (release_stalls) or
stops it.  Shares its base class with test_download.py.

    python3 tests/cli/test_stream.py -v
"""
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_download import (EXIT, FX, DownloadTest, name_of,  # noqa: E402,F401
                           setUpModule, tearDownModule)
from redist_server import build_mirror  # noqa: E402
from cctltest import resume_folders, some_vouched  # noqa: E402

WAIT = 60  # seconds: what is looked for shows at once; this only bounds a failure


class StreamTest(DownloadTest):
    packs = ("c13",)  # a tar.xz

    def setUp(self):
        super().setUp()
        self.size = os.path.getsize(FX.release("c13")[0])
        # the hold must outlast nothing on the client's side
        self.env["CUDNNCTL_TIMEOUT"] = "300"

    def start_held(self, *extra, env=None):
        """install 9.90 with the archive's transfer held after half of it."""
        srv = self.serve()
        srv.stall("*.tar.xz", after=self.size // 2, seconds=WAIT * 2, resume=True)
        cmd = self.command(("install", "9.90", "--mirror", srv.url, "--manifest",
                            self.manifest, "--connections", "1") + extra)
        proc = subprocess.Popen(cmd, env=dict(self.env, **(env or {})), cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return srv, proc

    def unpacked_size(self):
        """The bytes of the files the scan has unpacked so far (in a
        versions/.staging-* or .resume-* folder of its own), or None when there is no
        such folder."""
        vdir = os.path.join(self.root, "versions")
        size = None
        for n in os.listdir(vdir) if os.path.isdir(vdir) else ():
            if not n.startswith((".staging-", ".resume-")):
                continue
            size = size or 0
            for dirpath, _, files in os.walk(os.path.join(vdir, n)):
                for f in files:
                    if f == "journal" and n.startswith(".resume-"):
                        continue  # (there from the start)
                    try:
                        size += os.lstat(os.path.join(dirpath, f)).st_size
                    except OSError:
                        continue
        return size

    def wait_for(self, what, cond, proc):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and proc.poll() is None:
            if cond():
                return
            time.sleep(0.05)
        out, err = proc.communicate(timeout=WAIT) if proc.poll() is not None else ("", "")
        self.fail("%s did not happen (rc %s)\n%s%s" % (what, proc.poll(), out, err))

    def held_half(self, srv, proc):
        """Waits until the scan has unpacked some of the first half while
        the second is held back; checks nothing is in the root yet."""
        self.wait_for("the scan unpacking the first half",
                      lambda: (self.unpacked_size() or 0) > 0, proc)
        sent = sum(q["sent"] for q in srv.requests() if q["path"].endswith(".tar.xz"))
        self.assertLessEqual(sent, self.size // 2)
        vdir = os.path.join(self.root, "versions")
        seen = [n for n in os.listdir(vdir) if not n.startswith(".")] \
            if os.path.isdir(vdir) else []
        self.assertEqual(seen, [], "a version is visible before the download is whole")


def open_for_reading(proc, path):
    """Whether proc holds path open read-only."""
    fds = "/proc/%d/fd" % proc.pid
    for n in os.listdir(fds) if os.path.isdir(fds) else ():
        try:
            if os.readlink(os.path.join(fds, n)) != path:
                continue
            with open("/proc/%d/fdinfo/%s" % (proc.pid, n), encoding="ascii") as f:
                flags = int(f.read().split("flags:")[1].split()[0], 8)
            if flags & os.O_ACCMODE == os.O_RDONLY:
                return True
        except (OSError, IndexError, ValueError):
            continue
    return False


class TestStreamZip(StreamTest):
    packs = ("zip13",)

    def test_zip_streams_unless_told_not_to(self):
        # by default a zip is read as it downloads: its tail is a range of
        # its own and the rest comes in pieces; CUDNNCTL_STREAM=0 downloads
        # it first (four ranges, no tail), then installs it
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        size = os.path.getsize(FX.release("zip13")[0])
        tail = "bytes=%d-%d" % (size - size // 8, size - 1)
        srv = self.serve()
        for stream, want in ((None, 48), ("0", 4)):
            with self.subTest(CUDNNCTL_STREAM=stream):
                shutil.rmtree(self.cache, ignore_errors=True)
                shutil.rmtree(self.root, ignore_errors=True)
                srv.reset_stats()
                env = {"CUDNNCTL_STREAM": stream} if stream else {}
                self.ok("install", "9.92", "--mirror", srv.url, "--manifest",
                        os.path.join(self.mirror, "redistrib_9.92.0.json"), "--connections", "4",
                        env=env)
                spans = [q["range"] for q in srv.requests() if q["path"].endswith(".zip")
                         and q["method"] == "GET"]
                self.assertEqual(len(spans), want, spans)
                (self.assertIn if stream is None else self.assertNotIn)(tail, spans)
                self.assert_installed("zip13")

    def test_zip_is_read_from_its_end_while_the_start_is_held(self):
        # ranges of a few KB (the test hook): the zip's last eighth is a
        # range of its own, which the scan reads (the central directory)
        # while range 0 (the smallest piece, 1 KiB) is held after 500 bytes
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        size = os.path.getsize(FX.release("zip13")[0])
        srv = self.serve()
        srv.stall("*.zip", after=500, seconds=WAIT * 2, resume=True)
        cmd = self.command(("install", "9.92", "--mirror", srv.url, "--manifest",
                            os.path.join(self.mirror, "redistrib_9.92.0.json"),
                            "--connections", "4"))
        proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        tail = os.path.join(self.archives, "%s.%d.part" % (name_of("zip13"), size - size // 8))
        self.wait_for("the scan reading the tail range", lambda: open_for_reading(proc, tail),
                      proc)
        spans = sorted((q["range"] or "") for q in srv.requests() if q["path"].endswith(".zip"))
        self.assertIn("bytes=%d-%d" % (size - size // 8, size - 1), spans)
        vdir = os.path.join(self.root, "versions")
        self.assertEqual([n for n in os.listdir(vdir) if not n.startswith(".")]
                         if os.path.isdir(vdir) else [], [])
        srv.release_stalls()
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn(b"installed cuDNN 9.92.0.1 for CUDA 13 (sha256 verified)", out)
        self.assert_installed("zip13")
        self.assert_cache_holds("zip13")


    def start_zip_held(self, *extra, srv=None):
        """install 9.92 (the zip) in ranges of a few KB, the pieces from
        the middle on held; returns once some members are unpacked (by the
        workers: the scan only reads the headers) and checks that no
        version is visible yet."""
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        size = os.path.getsize(FX.release("zip13")[0])
        srv = srv or self.serve()
        srv.stall("*.zip", seconds=WAIT * 2, resume=True, count=None,
                  from_byte=size // 2, to_byte=size - size // 8)
        cmd = self.command(("install", "9.92", "--mirror", srv.url, "--manifest",
                            os.path.join(self.mirror, "redistrib_9.92.0.json"),
                            "--connections", "4") + extra)
        proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        self.wait_for("members unpacked", lambda: (self.unpacked_size() or 0) > 0, proc)
        vdir = os.path.join(self.root, "versions")
        self.assertEqual([n for n in os.listdir(vdir) if not n.startswith(".")], [])
        return srv, proc

    def assert_nothing_installed(self):
        vdir = os.path.join(self.root, "versions")
        self.assertEqual(os.listdir(vdir) if os.path.isdir(vdir) else [], [])
        self.assertFalse(os.path.lexists(os.path.join(self.root, "current")))

    def test_zip_members_are_unpacked_while_it_downloads(self):
        # the pieces from the middle on held: the members before it are
        # unpacked already, and no version is visible
        srv, proc = self.start_zip_held()
        srv.release_stalls()
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, 0, err)
        self.assert_installed("zip13")
        self.assert_cache_holds("zip13")

    def test_zip_unpacked_on_one_job_or_many(self):
        # one worker or more, each reading the download through a reader
        # of its own while the scan walks the headers
        for jobs in ("1", "2", "8"):
            with self.subTest(jobs=jobs):
                srv, proc = self.start_zip_held("--jobs", jobs)
                srv.release_stalls()
                out, err = proc.communicate(timeout=WAIT)
                self.assertEqual(proc.returncode, 0, err)
                self.assert_installed("zip13")
                self.assert_cache_holds("zip13")
                srv.stop()
                shutil.rmtree(self.root)
                shutil.rmtree(self.archives)

    def test_ctrl_c_while_members_are_unpacked_leaves_nothing(self):
        # the workers wait on the held bytes: an interrupt stops them, the
        # download and the scan, and what they wrote goes
        srv, proc = self.start_zip_held()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, EXIT["INTERRUPTED"], err)
        self.assert_nothing_installed()
        self.assertEqual([n for n in self.cached() if not n.endswith(".part")
                          and ".part." not in n], [])

    def test_tampered_member_leaves_nothing(self):
        # bytes changed inside a member the workers inflate: the archive's
        # hash fails, and neither the cache nor the root keeps anything
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        size = os.path.getsize(FX.release("zip13")[0])
        srv = self.serve()
        srv.tamper("*.zip", offset=size // 3, length=4096, count=None)
        self.fails(EXIT["MISMATCH"], "install", "9.92", "--mirror", srv.url, "--manifest",
                   os.path.join(self.mirror, "redistrib_9.92.0.json"),
                   "--connections", "4", words=["sha256 mismatch"], timeout=WAIT)
        self.assert_nothing_installed()
        self.assertEqual(self.cached(), {})

    def test_zip_tail_is_taken_before_the_pieces(self):
        # the zip cut into pieces for a reader going along: its tail (the
        # central directory, needed first) among the first four requests,
        # which are held until all four are in flight
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        size = os.path.getsize(FX.release("zip13")[0])
        srv = self.serve()
        srv.gather("*.zip", count=4)
        self.ok("install", "9.92", "--mirror", srv.url, "--manifest",
                os.path.join(self.mirror, "redistrib_9.92.0.json"))
        reqs = sorted((q for q in srv.requests() if q["path"].endswith(".zip")
                       and q["method"] == "GET"), key=lambda q: q["seq"])
        self.assertEqual(len(reqs), 48, reqs)
        self.assertEqual([q["faults"] for q in reqs[:4]], [["gathered"]] * 4, reqs)
        tail = "bytes=%d-%d" % (size - size // 8, size - 1)
        self.assertIn(tail, [q["range"] for q in reqs[:4]], reqs)
        self.assert_installed("zip13")

    def test_zip_whose_directory_lies_outside_is_refused(self):
        # the scan asks the feed for bytes past the end: refused at once,
        # streamed or not, and nothing is installed
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        for kind in ("cd-outside", "member-outside"):
            build_mirror(self.mirror, [(FX.hostile(kind, "zip"), "9.1.0.70",
                                        "linux-x86_64", "12")], link=True)
            srv = self.serve()
            for stream in ("1", "0"):
                with self.subTest(kind=kind, CUDNNCTL_STREAM=stream):
                    self.fails(EXIT["BADARCHIVE"], "install", "9.1.0.70", "--mirror", srv.url,
                               "--manifest", os.path.join(self.mirror, "redistrib_9.1.0.json"),
                               "--connections", "4", words=["cannot read"],
                               env={"CUDNNCTL_STREAM": stream}, timeout=WAIT)
                    self.assertFalse(os.path.lexists(os.path.join(self.root, "current")))
                    vdir = os.path.join(self.root, "versions")
                    self.assertEqual([n for n in os.listdir(vdir) if not n.startswith(".")]
                                     if os.path.isdir(vdir) else [], [])
            srv.stop()


class TestStreamZipResume(StreamTest):
    """A zip install killed while it downloads keeps what its workers
    unpacked (versions/.resume-*, with a journal) as long as the download's
    .part stays; the next install takes those members instead of inflating
    them again, but only those that the archive's own hash at a checkpoint
    past them and their file's hash vouch for."""
    packs = ("zip13",)
    start_zip_held = TestStreamZip.start_zip_held

    def killed_held(self, jobs="2"):
        """install 9.92 held from the middle on, killed once the journal
        vouches for some members; returns (server, folder, vouched).
        With two workers whatever the machine has (and one, below)."""
        srv, proc = self.start_zip_held("--jobs", jobs)
        found = {}
        self.wait_for("members vouched for in the journal",
                      lambda: some_vouched(self.root, found), proc)
        proc.kill()
        proc.communicate(timeout=WAIT)
        self.assertIn(name_of("zip13") + ".part", self.cached())
        (folder, kept), = found.items()
        return srv, folder, kept

    def assert_files_are_the_archives(self):
        """Every file installed is the packed zip's member, byte for byte."""
        import zipfile
        path, version, _, cuda = FX.release("zip13")
        vdir = os.path.join(self.root, "versions", "%s-cuda%s" % (version, cuda))
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if info.is_dir():
                    continue
                rel = info.filename.split("/", 1)[1]
                if (info.external_attr >> 16) & 0o170000 == 0o120000:  # a link
                    self.assertEqual(os.readlink(os.path.join(vdir, rel)),
                                     z.read(info).decode(), rel)
                    continue
                with open(os.path.join(vdir, rel), "rb") as f:
                    self.assertEqual(f.read(), z.read(info), rel)

    def resume_held(self, srv):
        """The held download let go and its faults cleared: install 9.92
        again, which must succeed; returns its result."""
        srv.release_stalls()
        srv.clear_faults()
        return self.ok("install", "9.92", "--mirror", srv.url, "--manifest",
                       os.path.join(self.mirror, "redistrib_9.92.0.json"), "--connections", "4")

    def resume_keeps_nothing(self, edit):
        """Killed while held, the journal's lines changed by EDIT (a list
        changed in place): the resumed install takes no member from the
        folder and installs the archive's files."""
        srv, folder, kept = self.killed_held()
        jpath = os.path.join(folder, "journal")
        with open(jpath, encoding="utf-8") as f:
            lines = f.read().split("\n")
        edit(lines)
        with open(jpath, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        r = self.resume_held(srv)
        self.assertNotIn("unpacked before the download stopped", r.err)
        self.assert_installed("zip13")
        self.assert_files_are_the_archives()

    def test_killed_install_keeps_what_was_unpacked(self):
        self.killed_then_resumed("2")

    def test_killed_install_on_one_job_keeps_what_was_unpacked(self):
        # --jobs 1 (a one-core machine's default): one worker, kept too
        self.killed_then_resumed("1")

    def killed_then_resumed(self, jobs):
        srv, folder, kept = self.killed_held(jobs)
        inodes = {os.stat(os.path.join(folder, str(i))).st_ino for i in kept}
        # another command's sweep (under the root's lock) leaves the folder
        # while its .part is there
        self.run_cli("uninstall", "9.92", cache=False)
        self.assertEqual(resume_folders(self.root), [folder])
        r = self.resume_held(srv)
        got = [w for w in r.err.split("\n") if "unpacked before the download stopped" in w]
        self.assertEqual(len(got), 1, r)
        self.assertGreaterEqual(int(got[0].split("resumed: ")[1].split()[0]), len(kept), r)
        self.assert_installed("zip13")
        self.assert_cache_holds("zip13")
        self.assert_files_are_the_archives()
        # the kept files are the ones installed: moved, not written again
        path, version, _, cuda = FX.release("zip13")
        vdir = os.path.join(self.root, "versions", "%s-cuda%s" % (version, cuda))
        installed = {os.stat(os.path.join(d, f)).st_ino
                     for d, _, files in os.walk(vdir) for f in files}
        self.assertLessEqual(inodes, installed)
        self.assertEqual(resume_folders(self.root), [])

    def test_a_kept_file_changed_or_a_journal_lying_is_inflated_again(self):
        srv, folder, kept = self.killed_held()
        first, *rest = sorted(kept)
        # a kept file's bytes changed (its size kept): inflated again
        p = os.path.join(folder, str(first))
        with open(p, "r+b") as f:
            b = f.read(1)
            f.seek(0)
            f.write(bytes([b[0] ^ 0xFF]) if b else b"")
        # the journal's checkpoints changed: nothing it vouched for is kept
        # past the first one that no longer matches; and lines that are not
        # well-formed end what is read
        with open(os.path.join(folder, "journal"), "a", encoding="utf-8") as f:
            f.write("m 99999999999 1 1 zz ../../etc/passwd\nm x\n")
        r = self.resume_held(srv)
        got = [w for w in r.err.split("\n") if "unpacked before the download stopped" in w]
        if got:
            self.assertLessEqual(int(got[0].split("resumed: ")[1].split()[0]), len(rest), r)
        self.assert_installed("zip13")
        self.assert_files_are_the_archives()
        self.assertEqual(resume_folders(self.root), [])

    def test_other_checkpoints_keep_nothing(self):
        # a journal whose checkpoints are not this download's (another
        # archive under the same name): every member is inflated again
        def other_checkpoints(lines):
            lines[:] = [("h %s %s" % (ln.split()[1], "0" * 64)) if ln.startswith("h ") else ln
                        for ln in lines]
        self.resume_keeps_nothing(other_checkpoints)

    def test_a_member_index_past_the_cap_ends_the_journal(self):
        # an archive has at most 100000 entries (the scan refuses more): a
        # journal line naming member 100000 is not read, nor what follows
        # it (no table of that size is ever made from a journal)
        def past_the_cap(lines):
            self.assertTrue(lines[1].startswith("part "), lines[:2])
            lines.insert(2, "m 100000 1 1 %s lib/x" % ("0" * 64))
        self.resume_keeps_nothing(past_the_cap)

    def test_folder_goes_with_its_part(self):
        # the .part deleted (cache clean): the next command sweeps the
        # folder; a Ctrl+C of the resumed install deletes both
        srv, folder, kept = self.killed_held()
        os.unlink(os.path.join(self.archives, name_of("zip13") + ".part"))
        self.run_cli("uninstall", "9.92", cache=False)
        self.assertEqual(resume_folders(self.root), [])
        srv.stop()
        srv, folder, kept = self.killed_held()
        srv.stop()
        srv = self.serve()
        srv, proc = self.start_zip_held(srv=srv)
        # (the folder holds files already: wait for this install's requests)
        self.wait_for("the resumed download", lambda: any(
            q["path"].endswith(".zip") for q in srv.requests()), proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, EXIT["INTERRUPTED"], err)
        self.assertEqual(resume_folders(self.root), [])
        self.assertNotIn(name_of("zip13") + ".part", self.cached())


class StreamZipKillPoints(StreamTest):
    """A power cut anywhere in an install of a zip read as it downloads,
    its members inflated by the workers: CUDNNCTL_TEST_KILL_AT=N kills the
    process at its Nth change to the disk, which the workers reach from
    their own threads, in no set order.  The zip comes in ranges of a few
    KB, its tail first, so that the workers inflate members while the rest
    is still coming.  After each kill no version is visible before the
    download is verified, the cache holds the archive only as a download
    not yet verified (or whole and verified), and a version listed is
    whole; the next install succeeds and leaves nothing behind."""
    packs = ("zip13",)

    def sweep(self, first, stride):
        """The number of kills: every STRIDE-th point from FIRST (a class
        each, so that no ctest entry holds the whole sweep)."""
        name = name_of("zip13")
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        srv = self.serve()
        args = ("install", "9.92", "--mirror", srv.url, "--manifest",
                os.path.join(self.mirror, "redistrib_9.92.0.json"), "--jobs", "2",
                "--connections", "4")
        vdir = os.path.join(self.root, "versions")
        kills = 0
        for at in range(first, 400, stride):
            shutil.rmtree(self.root, True)
            shutil.rmtree(self.archives, True)
            r = self.run_cli(*args, env={"CUDNNCTL_TEST_KILL_AT": str(at)}, timeout=WAIT)
            if r.rc == 0:
                break
            label = "killed at %d" % at
            self.assertEqual(r.rc, -signal.SIGKILL, "%s:%s" % (label, r))
            kills += 1
            # a version is listed only once it is whole (the kills after
            # its rename into versions/), and only after the download was
            # verified
            listed = [i["id"] for i in self.ok("list", "--json", cache=False).json()["installed"]]
            for vid in listed:
                r = self.run_cli("verify", vid, "--no-gpu", "--full", "--json", cache=False)
                files = {st["stage"]: st for st in r.json()["stages"]}["files"]
                self.assertEqual(files["status"], "pass", "%s: %s:%s" % (label, vid, r))
            visible = os.path.isdir(vdir) and \
                [n for n in os.listdir(vdir) if not n.startswith(".")]
            if visible or name in self.cached():  # only once it was verified
                self.assert_cache_holds("zip13", r=label)
            r = self.run_cli(*args, timeout=WAIT)
            self.assertEqual(r.rc, 0, "%s, then again:%s" % (label, r))
            self.assert_installed("zip13")
            self.assert_cache_holds("zip13", r="%s, then again:%s" % (label, r))
            self.assertEqual([n for n in os.listdir(vdir)
                              if n.startswith((".staging-", ".resume-"))], [], label)
        return kills


class TestStreamZipKillPoints1(StreamZipKillPoints):
    def test_every_third_kill_point_from_the_first(self):
        self.assertGreaterEqual(self.sweep(1, 3), 30)  # 105 in all


class TestStreamZipKillPoints2(StreamZipKillPoints):
    def test_every_third_kill_point_from_the_second(self):
        self.assertGreaterEqual(self.sweep(2, 3), 30)


class TestStreamZipKillPoints3(StreamZipKillPoints):
    def test_every_third_kill_point_from_the_third(self):
        self.assertGreaterEqual(self.sweep(3, 3), 30)


class TestStreamXzBlocks(StreamTest):
    """A tar.xz of many xz blocks as it downloads over several
    connections: its end (the index) is fetched as a range of its own
    first, so that its blocks can be decoded on threads as they arrive."""
    packs = ("blocks13",)

    def setUp(self):
        super().setUp()
        self.size = os.path.getsize(FX.release("blocks13")[0])
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        self.mf = os.path.join(self.mirror, "redistrib_9.93.0.json")

    def install(self, srv, *extra):
        return self.ok("install", "9.93", "--mirror", srv.url, "--manifest", self.mf,
                       *extra)

    def test_end_first_then_installed(self):
        srv = self.serve()
        for conns in ("4", "1"):
            with self.subTest(connections=conns):
                shutil.rmtree(self.root, True)
                shutil.rmtree(self.archives, True)
                srv.reset_stats()
                self.install(srv, "--connections", conns, "--jobs", "2")
                self.assert_installed("blocks13")
                self.assert_cache_holds("blocks13")
                starts = [int(q["range"][6:].split("-")[0]) for q in
                          self.archive_requests("blocks13") if q["range"]]
                tail = min(self.size // 8, 64 << 10)  # XZ_TAIL, src/core/acquire.c
                if conns == "4":
                    self.assertIn(self.size - tail, starts, "the end as a range of its own")
                else:
                    self.assertEqual(starts, [], "one connection, no range")

    def test_tampered_block_installs_nothing(self):
        srv = self.serve()
        srv.tamper("*.tar.xz", offset=self.size // 3, length=64, count=None)
        self.fails(EXIT["MISMATCH"], "install", "9.93", "--mirror", srv.url, "--manifest",
                   self.mf, "--connections", "4", "--jobs", "2")
        self.assertFalse(os.path.isdir(os.path.join(self.root, "versions", "9.93.0.1-cuda13")))
        self.assertEqual(self.cached(), {})


class TestStream(StreamTest):
    def test_tar_xz_is_unpacked_while_it_downloads(self):
        srv, proc = self.start_held()
        self.held_half(srv, proc)
        srv.release_stalls()
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn(b"installed cuDNN 9.90.0.1 for CUDA 13 (sha256 verified)", out)
        self.assert_installed("c13")
        self.assert_cache_holds("c13")

    def test_without_streaming_nothing_is_unpacked_before_the_end(self):
        # CUDNNCTL_STREAM=0: the download first, then the scan (what the
        # test above would see if the install did not stream)
        srv, proc = self.start_held(env={"CUDNNCTL_STREAM": "0"})
        self.wait_for("half of the archive sent",
                      lambda: sum(q["sent"] for q in srv.requests()
                                  if q["path"].endswith(".tar.xz")) >= self.size // 2, proc)
        # the client has all the first half it will get; the scan would
        # have begun by now if it ran: give it the same chance, then check
        part = os.path.join(self.archives, name_of("c13") + ".part")
        self.wait_for("the first half written", lambda: os.path.isfile(part) and
                      os.path.getsize(part) >= self.size // 2, proc)
        self.assertIsNone(self.unpacked_size())
        srv.release_stalls()
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, 0, err)
        self.assert_installed("c13")

    def test_bytes_taken_back_by_a_restart_are_read_again(self):
        # the first answer tampered early and held half-way, then cut; the
        # resume answered whole (200): the download starts again from byte
        # 0 with the right bytes.  The scan was given the tampered ones, so
        # what it made of them goes and the verified file is read again
        # (before, the install failed on them; an archive whose first part
        # was another valid tar.xz would have been installed from it)
        srv = self.serve()
        srv.tamper("*.tar.xz", offset=200, length=4096)
        srv.stall("*.tar.xz", after=self.size // 2, seconds=WAIT * 2, resume=False)
        srv.ignore_range("*.tar.xz")
        cmd = self.command(("install", "9.90", "--mirror", srv.url, "--manifest",
                            self.manifest, "--connections", "1"))
        proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        part = os.path.join(self.archives, name_of("c13") + ".part")
        self.wait_for("the scan reading the first answer", lambda: open_for_reading(proc, part),
                      proc)
        srv.release_stalls()
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn(b"installed cuDNN 9.90.0.1 for CUDA 13 (sha256 verified)", out)
        reqs = [q for q in srv.requests() if q["path"].endswith(".tar.xz") and q["method"] == "GET"]
        self.assertEqual([q["status"] for q in reqs], [200, 200], reqs)
        self.assertIn("tamper", reqs[0]["faults"], reqs)
        self.assertIn("ignore_range", reqs[1]["faults"], reqs)
        self.assert_installed("c13")
        self.assert_cache_holds("c13")

    def test_tampered_archive_leaves_nothing(self):
        srv = self.serve()
        srv.tamper("*.tar.xz", offset=self.size - 100)
        self.fails(EXIT["MISMATCH"], "install", "9.90", "--mirror", srv.url, "--manifest",
                   self.manifest, words=["sha256 mismatch"])
        self.assertEqual(self.cached(), {})
        vdir = os.path.join(self.root, "versions")
        self.assertEqual(os.listdir(vdir) if os.path.isdir(vdir) else [], [])

    def test_ctrl_c_while_held_leaves_nothing(self):
        srv, proc = self.start_held()
        self.held_half(srv, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
        self.assertEqual(proc.returncode, EXIT["INTERRUPTED"], err)
        self.assertEqual(self.cached(), {}, "the interrupted download is deleted")
        vdir = os.path.join(self.root, "versions")
        self.assertEqual(os.listdir(vdir) if os.path.isdir(vdir) else [], [])

    def test_killed_while_held_resumes(self):
        srv, proc = self.start_held()
        self.held_half(srv, proc)
        proc.kill()
        proc.communicate(timeout=WAIT)
        vdir = os.path.join(self.root, "versions")
        left = [n for n in os.listdir(vdir) if not n.startswith(".lock")] \
            if os.path.isdir(vdir) else []
        # nothing but the lock and the files the scan had unpacked, in a
        # folder of its own that the next command sweeps
        self.assertEqual([n for n in left if not n.startswith(".staging-")], [], left)
        part = name_of("c13") + ".part"
        self.assertIn(part, self.cached())
        srv.release_stalls()
        srv.clear_faults()
        r = self.ok("install", "9.90", "--mirror", srv.url, "--manifest", self.manifest)
        self.assertIn("installed cuDNN 9.90.0.1 for CUDA 13 (sha256 verified)", r.out)
        self.assertEqual([n for n in os.listdir(vdir) if n.startswith(".staging-")], [])
        self.assert_installed("c13")
        self.assert_cache_holds("c13")


if __name__ == "__main__":
    unittest.main()

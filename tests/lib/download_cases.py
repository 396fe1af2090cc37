"""The install-by-version cases that hold on every platform, written once:
tests/cli/test_download.py runs them on Linux (libcurl, a tar.xz) and
tests/wine/test_download_wine.py on Windows under Wine (WinHTTP, a zip),
each against tests/lib/redist_server.py, which cuts, resets, tampers and
fails on request and counts every byte it sends.

InstallResumeCases, InstallRefusalCases, InstallCacheCases (install VERSION)
and DownloadOptionsCases are mixins, one ctest entry each: the test class
each is mixed into (ahead of its unittest.TestCase base) provides

    self.srv                    the started server of the mirror
    self.AR                     the archive install VERSION picks: an
                                Archive (its URL path, name and bytes)
    self.install_version(*extra, mirror=None, root=None) -> Result
    self.download_version(*extra, mirror=None) -> Result
                                the command with --mirror (the server's URL
                                unless mirror), --manifest and --cache;
                                root: another install root
    self.other_root()           another install root for install_version,
                                removed at the end
    self.ok_r(r), self.fails_r(r, code, *words)
                                r succeeded; r failed with code and an error
                                message that holds every word
    self.cache_names()          the cache's archive folder, sorted (lock
                                files left out)
    self.cache_file(name)       the path of one of them
    self.scratch(name)          a new empty folder of the test's own
    self.output_folder()        a folder for --output that does not exist:
                                (as given to cudnnctl, its local path)
    self.shown(folder, name)    the path of name in folder as cudnnctl
                                prints it (folder: as given to cudnnctl, or
                                None for the cache's archives folder)
    self.assert_installed_as_fetched(root=None)
                                the archive's release is installed into the
                                root (the test's own unless root) and active
    self.assert_nothing_installed()
                                nothing installed, nothing active, the user's
                                environment as it was

Stdlib only (Python >= 3.11).
"""
import hashlib
import os
import re
import time

from cctltest import EXIT
from redist_server import RedistServer, free_port

QUICK = 20  # seconds: "fails quickly" (the issue asks for under 30 s)
RETRIES = 5  # what fetch.c tries again after the first attempt


class Archive:
    """The archive a test fetches: path (its URL path under the mirror,
    '/cudnn/PLATFORM/NAME'), name, data, size, sha and version."""

    def __init__(self, path, data, version):
        self.path, self.data, self.version = path, data, version
        self.name = os.path.basename(path)
        self.platform = path.split("/")[2]
        self.cuda = int(re.search(r"_cuda(\d+)-archive", self.name).group(1))
        self.size = len(data)
        self.sha = hashlib.sha256(data).hexdigest()


class Helpers:
    """What the cases below share, over their host's methods."""

    def url(self, mirror=None):
        return (mirror or self.srv.url).rstrip("/") + self.AR.path

    def archive_requests(self):
        """The GET requests of the archive, in order, each once finished."""
        return [q for q in self.srv.requests(self.AR.path, settle=2.0)
                if q["method"] == "GET"]

    def write_part(self, data):
        """NAME.part in the cache holding data, as a cut download leaves it."""
        part = self.cache_file(self.AR.name + ".part")
        os.makedirs(os.path.dirname(part), exist_ok=True)
        with open(part, "wb") as f:
            f.write(data)

    def write_cached(self, data):
        path = self.cache_file(self.AR.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def assert_cached(self):
        """The cache holds the archive, bit for bit, and nothing else."""
        self.assertEqual(self.cache_names(), [self.AR.name])
        with open(self.cache_file(self.AR.name), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), self.AR.sha)

    def assert_from_zero(self):
        """The archive was fetched once, whole, from byte 0."""
        st = self.srv.stats(self.AR.path)
        self.assertEqual((st["ranges"], st["bytes_sent"]), ([None], self.AR.size), st)


class InstallResumeCases(Helpers):
    """install VERSION through cuts, resets, planted parts and servers that
    ignore ranges: what is resumed and what starts again from zero."""

    # -- transfers that break
    def test_cut_transfer_is_resumed_with_a_range(self):
        """The server closes the connection half way: the download goes on
        from there with a Range request, the archive's size sent in all."""
        cut = self.AR.size // 2
        self.srv.cut(self.AR.path, after=cut)
        r = self.ok_r(self.install_version("--json"))
        d = r.json()["download"]
        self.assertEqual((d["downloaded"], d["requests"], d["cached"], d["resumed_at"]),
                         (self.AR.size, 2, False, 0), r)
        self.assertIn("trying again in", r.err)
        self.assertIn("from byte %d" % cut, r.err)
        self.assertIn(self.url(), r.err)
        st = self.srv.stats(self.AR.path)
        self.assertEqual(st["ranges"], [None, "bytes=%d-" % cut], st)
        self.assertEqual(st["statuses"], [200, 206], st)
        self.assertEqual(st["faults"], ["cut"], st)
        # resumed, not read twice
        self.assertEqual(st["bytes_sent"], self.AR.size, st)
        self.assert_installed_as_fetched()
        self.assert_cached()

    def test_reset_transfer_is_resumed_where_the_bytes_stopped(self):
        """A reset may lose bytes the server sent: they, and nothing more,
        are asked for again."""
        cut = self.AR.size // 3
        self.srv.cut(self.AR.path, after=cut, reset=True)
        r = self.ok_r(self.download_version("--json"))
        doc = r.json()
        self.assertEqual((doc["cached"], doc["requests"], doc["downloaded"]),
                         (False, 2, self.AR.size), r)
        reqs = self.archive_requests()
        self.assertEqual([q["status"] for q in reqs], [200, 206], reqs)
        self.assertRegex(reqs[1]["range"], r"^bytes=\d+-$", reqs)
        start = int(reqs[1]["range"][6:-1])
        self.assertLessEqual(start, cut, reqs)
        self.assertEqual(reqs[1]["sent"], self.AR.size - start, reqs)
        self.assert_cached()

    def test_part_left_by_an_earlier_run_is_resumed(self):
        """NAME.part of an earlier cudnnctl (killed mid-download): hashed,
        then only the rest is asked for."""
        k = self.AR.size * 2 // 5
        self.write_part(self.AR.data[:k])
        r = self.ok_r(self.install_version("--json"))
        d = r.json()["download"]
        self.assertEqual((d["resumed_at"], d["downloaded"], d["requests"]),
                         (k, self.AR.size - k, 1), r)
        st = self.srv.stats(self.AR.path)
        self.assertEqual((st["ranges"], st["statuses"], st["bytes_sent"]),
                         (["bytes=%d-" % k], [206], self.AR.size - k), st)
        self.assert_installed_as_fetched()
        self.assert_cached()

    def test_server_ignoring_the_range_means_from_zero(self):
        """A 200 to the Range request of a part: the part is started again,
        not appended to."""
        k = self.AR.size // 4
        self.write_part(self.AR.data[:k])
        self.srv.ignore_range(self.AR.path)
        r = self.ok_r(self.install_version("--json"))
        d = r.json()["download"]
        self.assertEqual((d["resumed_at"], d["downloaded"]), (k, self.AR.size), r)
        st = self.srv.stats(self.AR.path)
        self.assertEqual((st["ranges"], st["statuses"], st["bytes_sent"]),
                         (["bytes=%d-" % k], [200], self.AR.size), st)
        self.assert_installed_as_fetched()
        self.assert_cached()

    def test_cut_then_range_ignored_restarts_from_zero(self):
        cut = self.AR.size // 5
        self.srv.cut(self.AR.path, after=cut)
        self.srv.ignore_range(self.AR.path)
        doc = self.ok_r(self.download_version("--json")).json()
        reqs = self.archive_requests()
        self.assertEqual([(q["range"], q["status"]) for q in reqs],
                         [(None, 200), ("bytes=%d-" % cut, 200)], reqs)
        self.assertEqual(reqs[1]["faults"], ["ignore_range"])
        self.assertEqual(reqs[1]["sent"], self.AR.size, "the whole file the second time")
        self.assertEqual((doc["sha256"], doc["downloaded"]), (self.AR.sha, self.AR.size + cut),
                         doc)
        self.assert_cached()

    def test_part_of_a_failed_run_is_kept_and_resumed(self):
        """Cut on every attempt: after the retries, exit NETWORK with
        NAME.part holding exactly what came; the next run asks for the rest."""
        step = self.AR.size // 10
        self.srv.cut(self.AR.path, after=step, count=RETRIES + 1)
        self.fails_r(self.install_version(), EXIT["NETWORK"],
                     "cannot download '%s': " % self.url())
        st = self.srv.stats(self.AR.path)
        self.assertEqual(st["ranges"], [None] + ["bytes=%d-" % (step * i)
                                                 for i in range(1, RETRIES + 1)], st)
        self.assertEqual(self.cache_names(), [self.AR.name + ".part"])
        with open(self.cache_file(self.AR.name + ".part"), "rb") as f:
            self.assertEqual(f.read(), self.AR.data[:(RETRIES + 1) * step])
        self.assert_nothing_installed()
        self.srv.reset_stats()
        have = (RETRIES + 1) * step
        d = self.ok_r(self.install_version("--json")).json()["download"]
        self.assertEqual((d["resumed_at"], d["downloaded"]), (have, self.AR.size - have), d)
        self.assertEqual(self.srv.stats(self.AR.path)["ranges"], ["bytes=%d-" % have])
        self.assert_installed_as_fetched()
        self.assert_cached()


class InstallRefusalCases(Helpers):
    """install VERSION refusing tampered or oversized bodies and wrong
    cached copies: nothing of them is installed or trusted later."""

    # -- bytes that do not hash right
    def test_tampered_transfer_is_refused_and_not_trusted_later(self):
        """One byte of the body changed: exit MISMATCH with both hashes,
        nothing installed, neither the archive nor NAME.part in the cache;
        the next run downloads from byte 0."""
        self.srv.tamper(self.AR.path)
        bad = bytearray(self.AR.data)
        bad[len(bad) // 2] ^= 0xFF
        self.fails_r(self.install_version(), EXIT["MISMATCH"],
                     "sha256 mismatch for '%s'" % self.url(), self.AR.sha,
                     hashlib.sha256(bad).hexdigest(), "the download was deleted")
        self.assertEqual(self.srv.stats(self.AR.path)["faults"], ["tamper"])
        self.assert_nothing_installed()
        self.assertEqual(self.cache_names(), [])
        self.srv.reset_stats()
        self.ok_r(self.install_version())
        self.assert_from_zero()
        self.assert_installed_as_fetched()
        self.assert_cached()

    def test_tampered_bytes_in_a_part_are_not_resumed_into_an_archive(self):
        # the first run gets tampered bytes and then only cuts: it leaves a part
        self.srv.tamper(self.AR.path, offset=1000)
        self.srv.cut(self.AR.path, after=self.AR.size // 10, count=None)
        self.fails_r(self.download_version(), EXIT["NETWORK"])
        self.assertEqual(self.cache_names(), [self.AR.name + ".part"])
        # the next run resumes the part: the whole does not hash right
        self.srv.clear_faults()
        self.fails_r(self.install_version(), EXIT["MISMATCH"], "sha256 mismatch", self.AR.sha)
        self.assertEqual(self.cache_names(), [], "the bad part must go")
        self.assert_nothing_installed()
        # and the one after that starts from zero and succeeds
        self.srv.reset_stats()
        self.ok_r(self.install_version())
        self.assert_from_zero()
        self.assert_installed_as_fetched()

    def test_bigger_file_is_refused_and_its_bytes_not_kept(self):
        """The mirror serves a file longer than the manifest's size (with
        the right first bytes): refused at its Content-Length, before a byte
        is kept, and no NAME.part that a later run could resume from."""
        big = self.scratch("mirror-big")
        os.makedirs(os.path.dirname(big + self.AR.path))
        with open(big + self.AR.path, "wb") as f:
            f.write(self.AR.data + b"more" * 1000)
        with RedistServer(big) as srv:
            self.fails_r(self.install_version(mirror=srv.url), EXIT["MISMATCH"],
                         "the manifest gives %d" % self.AR.size)
        self.assert_nothing_installed()
        self.assertEqual(self.cache_names(), [])
        # the right mirror: from byte 0
        self.ok_r(self.install_version())
        self.assert_from_zero()
        self.assert_installed_as_fetched()

    # -- wrong copies in the cache
    def test_wrong_bytes_in_the_cache_are_removed_and_fetched_again(self):
        """A cached archive of the right size whose bytes differ: the hash
        finds it; it is removed and downloaded again, by both commands."""
        data = bytearray(self.AR.data)
        data[5000] ^= 1
        for cmd in (self.download_version, self.install_version):
            with self.subTest(cmd=cmd.__name__):
                self.write_cached(data)
                self.srv.reset_stats()
                r = self.ok_r(cmd())
                self.assertIn("in the cache is not %s's archive (wrong sha256); removed, "
                              "fetching it again" % self.AR.version, r.err)
                self.assert_from_zero()
                self.assert_cached()
        self.assert_installed_as_fetched()

    def test_wrong_size_in_the_cache_is_removed_and_fetched_again(self):
        for cmd, data in ((self.install_version, self.AR.data + b"\0" * 1000),
                          (self.download_version, self.AR.data[:-1000])):
            with self.subTest(cmd=cmd.__name__):
                self.write_cached(data)
                self.srv.reset_stats()
                r = self.ok_r(cmd())
                self.assertIn("(wrong size); removed, fetching it again", r.err)
                self.assert_from_zero()
                self.assert_cached()
        self.assert_installed_as_fetched()


class InstallCacheCases(Helpers):
    """install VERSION from the cache with the server gone, --offline, and
    servers that are not there or fail: 404, 503."""

    # -- the cache
    def test_second_root_from_the_cache_with_the_server_stopped(self):
        """The archive downloaded for one root installs into others with the
        server gone: from the cache, and with --offline."""
        self.ok_r(self.install_version())
        self.assert_installed_as_fetched()
        self.srv.stop()
        for extra in ([], ["--offline"]):
            root = self.other_root()
            d = self.ok_r(self.install_version("--json", *extra, root=root)).json()["download"]
            self.assertEqual((d["cached"], d["downloaded"], d["requests"]), (True, 0, 0), d)
            self.assert_installed_as_fetched(root=root)
        self.assert_cached()

    def test_offline_without_the_archive_in_the_cache(self):
        self.fails_r(self.install_version("--offline"), EXIT["NETWORK"],
                     "'%s' is not in the cache and --offline" % self.AR.name)
        self.assertEqual(self.srv.stats(), {})
        self.assert_nothing_installed()
        self.assertEqual(self.cache_names(), [])

    # -- servers that fail
    def test_unreachable_port_fails_quickly_naming_the_url(self):
        for mirror in ("http://127.0.0.1:%d/" % free_port(), "http://127.0.0.1:1/"):
            with self.subTest(mirror=mirror):
                t = time.monotonic()
                r = self.fails_r(self.install_version(mirror=mirror), EXIT["NETWORK"],
                                 "cannot download '%s': " % self.url(mirror))
                self.assertLess(time.monotonic() - t, QUICK)
                self.assertNotIn("trying again", r.err, "no answer at all: not retried")
                self.assert_nothing_installed()
                self.assertEqual(self.cache_names(), [])

    def test_404_is_not_retried(self):
        self.srv.fail(self.AR.path, code=404)
        r = self.fails_r(self.install_version(), EXIT["NOTFOUND"],
                         "cannot download '%s': " % self.url(), "has no such file (HTTP 404")
        self.assertNotIn("trying again", r.err)
        self.assertEqual(self.srv.stats(self.AR.path)["requests"], 1)
        self.assert_nothing_installed()
        self.assertEqual(self.cache_names(), [])
        # --json: the error in the document, with the same exit status
        nowhere = self.srv.url + "nowhere/"
        r = self.download_version("--json", mirror=nowhere)
        self.assertEqual(r.rc, EXIT["NOTFOUND"], r)
        doc = r.json()
        self.assertEqual(doc["error"]["exit_status"], EXIT["NOTFOUND"], doc)
        self.assertIn(self.url(nowhere), doc["error"]["message"])

    def test_server_error_is_retried(self):
        self.srv.fail(self.AR.path, code=503, count=2)
        r = self.ok_r(self.install_version("--json"))
        self.assertEqual(r.json()["download"]["requests"], 3, r)
        self.assertEqual(self.srv.stats(self.AR.path)["statuses"], [503, 503, 200])
        self.assertIn("HTTP 503", r.err)
        self.assert_installed_as_fetched()

    def test_503_every_time_gives_up_after_the_retries(self):
        self.srv.fail(self.AR.path, code=503, count=None)
        r = self.fails_r(self.download_version(), EXIT["NETWORK"], self.url(), "HTTP 503")
        self.assertEqual(r.err.count("trying again"), RETRIES, r)
        self.assertEqual(self.srv.stats(self.AR.path)["statuses"], [503] * (RETRIES + 1))
        self.assertEqual(self.cache_names(), [])


class DownloadOptionsCases(Helpers):
    """download VERSION --json, --dry-run and --output, and what install
    VERSION --json says of its download, as the mixins above (the same
    host methods)."""

    def test_dry_run_fetches_nothing(self):
        doc = self.ok_r(self.download_version("--dry-run", "--json")).json()
        url = self.url()
        want = {"command": "download", "ok": True, "name": self.AR.name,
                "version": self.AR.version, "cuda": self.AR.cuda,
                "platform": self.AR.platform, "size": self.AR.size, "sha256": self.AR.sha,
                "url": url}
        self.assertEqual({k: doc.get(k) for k in want}, want, doc)
        self.assertNotIn("path", doc)
        r = self.ok_r(self.download_version("--dry-run"))
        for w in (self.AR.name, self.AR.sha, url, "%d bytes" % self.AR.size):
            self.assertIn(w, r.out)
        self.assertEqual(self.srv.stats(), {}, "a dry run asks nothing")
        self.assertEqual(self.cache_names(), [])

    def test_download_json_then_from_the_cache(self):
        doc = self.ok_r(self.download_version("--json")).json()
        want = {"name": self.AR.name, "sha256": self.AR.sha, "size": self.AR.size,
                "url": self.url(),
                "path": self.shown(None, self.AR.name), "cached": False,
                "downloaded": self.AR.size, "resumed_at": 0, "requests": 1}
        self.assertEqual({k: doc.get(k) for k in want}, want, doc)
        self.assert_cached()
        self.srv.reset_stats()
        doc = self.ok_r(self.download_version("--json")).json()
        self.assertEqual((doc["cached"], doc["downloaded"], doc["requests"]), (True, 0, 0), doc)
        r = self.ok_r(self.download_version())
        self.assertIn("cached %s (sha256 verified" % self.AR.name, r.out)
        self.assertIn(self.shown(None, self.AR.name), r.out)
        self.assertEqual(self.srv.stats(), {})
        self.assert_nothing_installed()

    def test_output_copies_the_archive(self):
        given, local = self.output_folder()
        doc = self.ok_r(self.download_version("--json", "--output", given)).json()
        self.assertEqual(doc["path"], self.shown(given, self.AR.name), doc)
        self.assertEqual(os.listdir(local), [self.AR.name])
        with open(os.path.join(local, self.AR.name), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), self.AR.sha)
        self.assert_cached()
        # from the cache the second time, into another folder
        self.srv.reset_stats()
        given, local = self.output_folder()
        r = self.ok_r(self.download_version("--output", given))
        self.assertIn(self.shown(given, self.AR.name), r.out)
        self.assertEqual(os.listdir(local), [self.AR.name])
        self.assertEqual(self.srv.stats(), {})

    def test_install_json_reports_the_download(self):
        doc = self.ok_r(self.install_version("--json")).json()
        self.assertEqual((doc["verified"], doc["sha256"]), (True, self.AR.sha), doc)
        self.assertEqual(doc["archive"], self.shown(None, self.AR.name), doc)
        d = doc["download"]
        self.assertEqual((d["name"], d["size"], d["sha256"], d["url"], d["path"]),
                         (self.AR.name, self.AR.size, self.AR.sha,
                          self.url(), doc["archive"]), d)
        self.assertEqual((d["cached"], d["downloaded"], d["resumed_at"], d["requests"]),
                         (False, self.AR.size, 0, 1), d)
        self.assert_installed_as_fetched()

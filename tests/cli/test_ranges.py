#!/usr/bin/env python3
"""One archive over several connections (src/core/fetch-ranges.c): `download`
and `install VERSION` with `--connections N` against the tests' real server
(tests/lib/redist_server.py), which honours Range or ignores it, cuts,
tampers and slows on request and logs every request.

The tests' archives are small (a few hundred KB), so the test hook
CUDNNCTL_TEST_RANGE_MIN makes the smallest range worth a connection a few KB
instead of 16 MiB.  Shares its base class with test_download.py.

    python3 tests/cli/test_ranges.py -v
"""
import os
import re
import signal
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_download import (EXIT, FX, DownloadTest, Result, TestConcurrent, name_of,  # noqa: E402,F401
                           rel_of, setUpModule, sha256_file, tearDownModule, urlpath)

RANGE_RE = re.compile(r"^bytes=(\d+)-(\d*)$")


class RangesTest(DownloadTest):
    def setUp(self):
        super().setUp()
        self.size = os.path.getsize(FX.release("c13")[0])
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"

    def download(self, *extra, fails=None, words=()):
        args = ("download", "9.90", "--json", "--mirror", self.srv.url,
                "--manifest", self.manifest) + extra
        if fails:
            return self.fails(fails, *args, words=words)
        return self.ok(*args).json()

    def spans(self, reqs):
        """Each GET's asked-for span (start, end exclusive)."""
        out = []
        for q in reqs:
            m = RANGE_RE.match(q["range"] or "bytes=0-")
            self.assertIsNotNone(m, q)
            out.append((int(m.group(1)), int(m.group(2)) + 1 if m.group(2) else self.size))
        return out

    def most_at_once(self, reqs):
        """The most requests in flight at once, as the server saw them: each
        from its start until its last write began (the client cannot have
        had that request's last byte, and so cannot have begun a request
        after it, before then)."""
        return max(sum(1 for o in reqs if o["start"] <= q["start"] and
                       (o["last_write"] is None or o["last_write"] > q["start"]))
                   for q in reqs)

    def assert_back_to_back(self, reqs):
        """The requests' spans cover the archive once, in order."""
        spans = sorted(self.spans(reqs))
        self.assertEqual(spans[0][0], 0, spans)
        self.assertEqual(spans[-1][1], self.size, spans)
        for a, b in zip(spans, spans[1:]):
            self.assertEqual(a[1], b[0], spans)

    def assert_no_part(self):
        left = [n for n in self.cached() if n.endswith(".part")]
        self.assertEqual(left, [], "partial downloads left")


class TestRanges(RangesTest):
    """Ranges that cover the archive once, on connections of their own."""

    def test_four_connections_cover_the_archive_once(self):
        self.serve()
        doc = self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual(len(reqs), 4, reqs)
        self.assertEqual([q["status"] for q in reqs], [206] * 4, reqs)
        spans = sorted(self.spans(reqs))
        # in order, back to back, from 0 to the end: each byte asked for once
        self.assertEqual(spans[0][0], 0)
        self.assertEqual(spans[-1][1], self.size)
        for a, b in zip(spans, spans[1:]):
            self.assertEqual(a[1], b[0], spans)
        # four connections at most: one whose range is in goes on to the
        # next (libcurl's shared cache of connections)
        self.assertLessEqual(len({q["conn"] for q in reqs}), 4, "four connections")
        self.assertEqual(sum(q["sent"] for q in reqs), self.size)
        self.assertEqual(doc["downloaded"], self.size, doc)
        self.assertEqual(doc["requests"], 4, doc)
        self.assertEqual(doc["sha256"], sha256_file(FX.release("c13")[0]))
        self.assert_cache_holds("c13")

    def test_the_ranges_run_at_once(self):
        # each connection capped: the four transfers overlap in time
        srv = self.serve()
        srv.slow("*.tar.xz", rate=max(self.size // 4, 1), count=None)
        self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual(len(reqs), 4, reqs)
        first_end = min(q["end"] for q in reqs)
        self.assertTrue(all(q["start"] < first_end for q in reqs),
                        "every range began before the first one ended: %s" % reqs)
        self.assert_cache_holds("c13")

    def test_default_is_four_and_install_uses_them(self):
        # the install reads the tar.xz as it arrives: 48 pieces (the most),
        # taken in order, four at a time; the first four held until all
        # four are in flight, which a client with fewer would never reach
        srv = self.serve()
        srv.gather("*.tar.xz", count=4)
        r = self.ok("install", "9.90", "--mirror", self.srv.url, "--manifest", self.manifest)
        self.assertIn("installed cuDNN 9.90.0.1 for CUDA 13 (sha256 verified)", r.out)
        reqs = sorted(self.archive_requests("c13"), key=lambda q: q["seq"])
        self.assertEqual(len(reqs), 48, reqs)
        self.assertEqual([q["faults"] for q in reqs[:4]], [["gathered"]] * 4, reqs)
        self.assertEqual(self.most_at_once(reqs), 4, reqs)
        # the 48 pieces over the four connections, each kept alive from
        # one piece to the next: no new connection (nor TLS handshake) each
        self.assertEqual(len({q["conn"] for q in reqs}), 4, reqs)
        self.assertEqual(self.spans(reqs)[0][0], 0, "range 0 first")
        self.assert_back_to_back(reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), self.size)
        self.assert_installed("c13")
        self.assert_cache_holds("c13")

    def test_pieces_are_taken_by_as_many_connections_as_asked(self):
        srv = self.serve()
        srv.gather("*.tar.xz", count=2)
        self.ok("install", "9.90", "--mirror", self.srv.url, "--manifest", self.manifest,
                "--connections", "2")
        reqs = self.archive_requests("c13")
        self.assertEqual(len(reqs), 48, reqs)
        self.assertEqual(self.most_at_once(reqs), 2, reqs)
        self.assert_back_to_back(reqs)
        self.assert_installed("c13")

    def test_one_connection_when_asked(self):
        self.serve()
        self.download("--connections", "1")
        self.assertEqual([q["range"] for q in self.archive_requests("c13")], [None])
        self.assert_cache_holds("c13")

    def test_connections_from_the_environment(self):
        self.serve()
        self.env["CUDNNCTL_CONNECTIONS"] = "2"
        self.download()
        self.assertEqual(len(self.archive_requests("c13")), 2)

    def test_small_archive_gets_one_connection(self):
        # without the test hook the smallest range is 16 MiB
        del self.env["CUDNNCTL_TEST_RANGE_MIN"]
        self.serve()
        self.download("--connections", "8")
        self.assertEqual([q["range"] for q in self.archive_requests("c13")], [None])

    def test_server_that_ignores_range_gets_one_connection(self):
        srv = self.serve()
        srv.ignore_range("*.tar.xz", count=None)
        doc = self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual([q["status"] for q in reqs], [200], reqs)
        self.assertEqual(reqs[0]["sent"], self.size)
        self.assertEqual(doc["downloaded"], self.size)
        self.assert_cache_holds("c13")
        self.assert_no_part()


class TestRangeFaults(RangesTest):
    """A range that breaks is resumed on its own; bad bytes in any range are
    never kept; a run that gives up leaves ranges the next run takes up."""

    def test_cut_ranges_are_resumed_each_on_its_own(self):
        srv = self.serve()
        srv.cut("*.tar.xz", after=3000, count=3)
        doc = self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual(len(reqs), 7, reqs)
        self.assertTrue(all(q["status"] == 206 for q in reqs), reqs)
        # resumed, never read twice: the bytes served are the archive's size
        self.assertEqual(sum(q["sent"] for q in reqs), self.size, reqs)
        self.assertEqual(doc["downloaded"], self.size)
        self.assertEqual(doc["requests"], 7, doc)
        self.assert_cache_holds("c13")

    def test_server_that_caps_each_range_is_asked_again(self):
        # every 206 carries at most 5000 bytes, whatever was asked for
        srv = self.serve()
        srv.short_range("*.tar.xz", length=5000, count=None)
        doc = self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertGreater(len(reqs), 4, reqs)
        self.assertTrue(all(q["status"] == 206 and q["sent"] <= 5000 for q in reqs), reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), self.size)
        self.assertEqual(doc["requests"], len(reqs))
        self.assert_cache_holds("c13")

    def test_one_connection_resumed_from_a_capping_server(self):
        # one connection: the first answer is whole (no Range), cut; the
        # resumes come back short and are asked again until it is all in
        srv = self.serve()
        srv.cut("*.tar.xz", after=3000)
        srv.short_range("*.tar.xz", length=50000, count=None)
        self.download("--connections", "1")
        reqs = self.archive_requests("c13")
        self.assertEqual(reqs[0]["range"], None)
        self.assertEqual(sum(q["sent"] for q in reqs), self.size, reqs)
        self.assert_cache_holds("c13")

    def test_each_retry_is_said_once(self):
        # the ranges' warnings reach stderr from the command's thread, whole
        srv = self.serve()
        srv.cut("*.tar.xz", after=3000, count=3)
        r = self.ok("download", "9.90", "--connections", "4", "--mirror", srv.url,
                    "--manifest", self.manifest)
        tries = [ln for ln in r.err.splitlines() if "trying again" in ln]
        self.assertEqual(len(tries), 3, r)
        for ln in tries:
            self.assertTrue(ln.startswith("cudnnctl: warning: "), ln)
            self.assertRegex(ln, r"from byte \d+$")

    def test_tampered_range_fails_and_leaves_nothing(self):
        srv = self.serve()
        good = sha256_file(FX.release("c13")[0])
        srv.tamper("*.tar.xz", count=None)
        self.fails(EXIT["MISMATCH"], "install", "9.90", "--mirror", srv.url,
                   "--manifest", self.manifest, words=["sha256 mismatch", good])
        self.assertEqual(self.cached(), {}, "no archive and no range left")
        self.assert_nothing_installed()

    def test_a_run_that_gives_up_leaves_ranges_the_next_takes_up(self):
        srv = self.serve()
        srv.cut("*.tar.xz", after=2000, count=None)
        self.download("--connections", "4", fails=EXIT["NETWORK"],
                      words=[srv.url + rel_of("c13")])
        left = self.cached()
        base = name_of("c13")
        ranges = sorted(n for n in left if n != base + ".part")
        self.assertEqual(len(ranges), 3, left)
        self.assertTrue(all(re.fullmatch(re.escape(base) + r"\.[1-9]\d*\.part", n)
                            for n in ranges), ranges)
        have = sum(left.values())
        self.assertGreater(have, 0)
        # cache list shows them as partial downloads
        r = self.ok("cache", "list")
        for n in ranges:
            self.assertIn(n, r.out)
        srv.clear_faults()
        srv.reset_stats()
        doc = self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual(len(reqs), 4, reqs)
        starts = sorted(int(n[len(base) + 1:-5]) for n in ranges)
        got = sorted(s for s, _ in self.spans(reqs))
        # each range goes on from its own end
        self.assertEqual(got[0], left[base + ".part"])
        for s, n in zip(starts, got[1:]):
            self.assertEqual(n, s + left["%s.%d.part" % (base, s)], (starts, got))
        self.assertEqual(doc["downloaded"], self.size - have, doc)
        self.assert_cache_holds("c13")

    def test_install_cuts_the_rest_of_each_leftover_range_into_pieces(self):
        # a download cut in its four ranges, then an install, which reads
        # the archive as it arrives: each range goes on from its own end,
        # in pieces, four at a time
        srv = self.serve()
        srv.cut("*.tar.xz", after=2000, count=None)
        self.download("--connections", "4", fails=EXIT["NETWORK"])
        left = self.cached()
        base = name_of("c13")
        starts = sorted(int(n[len(base) + 1:-5]) for n in left if n != base + ".part")
        self.assertEqual(len(starts), 3, left)
        srv.clear_faults()
        srv.reset_stats()
        self.ok("install", "9.90", "--mirror", srv.url, "--manifest", self.manifest)
        reqs = self.archive_requests("c13")
        self.assertGreater(len(reqs), 4, reqs)
        self.assertLessEqual(len(reqs), 64, reqs)  # the most ranges
        self.assertLessEqual(self.most_at_once(reqs), 4, reqs)
        got = {s for s, _ in self.spans(reqs)}
        ends = {left[base + ".part"]} | {s + left["%s.%d.part" % (base, s)] for s in starts}
        self.assertLessEqual(ends, got, "each range goes on from its own end")
        self.assertEqual(sum(q["sent"] for q in reqs), self.size - sum(left.values()))
        self.assert_installed("c13")
        self.assert_cache_holds("c13")

    def test_leftover_ranges_with_one_connection_are_dropped(self):
        srv = self.serve()
        srv.cut("*.tar.xz", after=2000, count=None)
        self.download("--connections", "4", fails=EXIT["NETWORK"])
        srv.clear_faults()
        srv.reset_stats()
        self.download("--connections", "1")
        self.assertEqual(len(self.archive_requests("c13")), 1)
        self.assert_cache_holds("c13")

    def test_a_range_name_cudnnctl_does_not_make_starts_afresh(self):
        self.serve()
        os.makedirs(self.archives)
        base = os.path.join(self.archives, name_of("c13"))
        with open(FX.release("c13")[0], "rb") as f:
            head = f.read(100)
        with open(base + ".part", "wb") as f:
            f.write(head)
        # a leading zero, a start past the end: both deleted, the archive's
        # own first bytes in NAME.part kept
        for suffix in (".0123.part", ".%d.part" % (self.size + 5)):
            with open(base + suffix, "wb") as f:
                f.write(b"x" * 100)
        self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual(len(reqs), 4, reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), self.size - 100, reqs)
        self.assert_cache_holds("c13")

    def test_an_append_cut_short_is_cut_back(self):
        # killed while the ranges were appended to NAME.part: it holds range
        # 0 and part of the next, whose file is still there; it is cut back
        # to where that range starts, and nothing before it is fetched again
        self.serve()
        os.makedirs(self.archives)
        base = os.path.join(self.archives, name_of("c13"))
        with open(FX.release("c13")[0], "rb") as f:
            data = f.read()
        s1, s2 = self.size // 3, 2 * self.size // 3
        for path, body in ((base + ".part", data[:s1 + 1000]),
                           ("%s.%d.part" % (base, s1), data[s1:s1 + 3000]),
                           ("%s.%d.part" % (base, s2), data[s2:s2 + 10])):
            with open(path, "wb") as f:
                f.write(body)
        doc = self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual(sorted(s for s, _ in self.spans(reqs)), [s1 + 3000, s2 + 10], reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), self.size - s1 - 3010, reqs)
        self.assertEqual(doc["sha256"], sha256_file(FX.release("c13")[0]))
        self.assert_cache_holds("c13")
        self.assert_no_part()

    def test_cache_clean_removes_ranges(self):
        srv = self.serve()
        srv.cut("*.tar.xz", after=2000, count=None)
        self.download("--connections", "4", fails=EXIT["NETWORK"])
        self.assertEqual(len(self.cached()), 4)
        self.ok("cache", "clean")
        self.assertEqual(self.cached(), {})

    def test_interrupt_leaves_no_range(self):
        srv = self.serve()
        srv.slow("*.tar.xz", rate=max(self.size // 40, 1), count=None)
        cmd, p = TestConcurrent.start(self, "download", "9.90", "--connections", "4",
                                      "--mirror", srv.url, "--manifest", self.manifest)
        for _ in range(400):
            if len([n for n in self.cached() if n.endswith(".part")]) == 4:
                break
            self.assertIsNone(p.poll(), "ended before the ranges began")
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        p.stdout, p.stderr = out, err
        r = Result(cmd, p)
        self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
        self.assertEqual(self.cached(), {}, "nothing left in the cache:%s" % r)


class TestLyingServer(RangesTest):
    """A server whose answers do not add up: the file changes between
    ranges, or its Content-Length is not its body's.  Nothing unverified
    is ever installed or kept."""

    def test_file_changed_between_ranges_installs_nothing(self):
        # ranges 1-3 come from another file of the same size (new ETag)
        srv = self.serve()
        good = sha256_file(FX.release("c13")[0])
        srv.changed("*.tar.xz", count=None)
        self.fails(EXIT["MISMATCH"], "install", "9.90", "--mirror", srv.url,
                   "--manifest", self.manifest, "--connections", "4",
                   words=["sha256 mismatch", good, "the download was deleted"])
        reqs = sorted(self.archive_requests("c13"), key=lambda q: q["seq"])
        self.assertGreater(len(reqs), 1, reqs)
        self.assertEqual([q["faults"] for q in reqs],
                         [[]] + [["changed"]] * (len(reqs) - 1), reqs)
        self.assertEqual(self.cached(), {}, "no archive and no range left")
        self.assert_nothing_installed()
        # the server's file whole again: the next run fetches it anew
        srv.clear_faults()
        self.ok("install", "9.90", "--mirror", srv.url, "--manifest", self.manifest)
        self.assert_installed("c13")

    def test_whole_file_of_another_length_is_refused_at_its_header(self):
        for delta in (1000, -1000):
            with self.subTest(delta=delta):
                srv = self.serve()
                srv.lie_length("*.tar.xz", delta=delta)
                self.fails(EXIT["MISMATCH"], "download", "9.90", "--mirror", srv.url,
                           "--manifest", self.manifest, "--connections", "1",
                           words=["the server says", "is %d bytes" % (self.size + delta),
                                  "the manifest gives %d" % self.size])
                self.assertEqual(self.cached(), {})
                srv.stop()

    def test_range_that_says_less_than_it_sends_is_asked_again(self):
        # range 0's first answer: the client reads what the header says,
        # then asks for the rest of that range
        srv = self.serve()
        srv.lie_length("*.tar.xz", delta=-3000)
        self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual([q["faults"] for q in reqs][0], ["lie_length"], reqs)
        self.assertEqual(len(reqs), 5, reqs)
        self.assert_cache_holds("c13")
        self.assert_no_part()

    def test_range_that_says_more_than_it_sends_is_taken_when_whole(self):
        # range 0's body is all it asked for, its Content-Length one more:
        # the transfer ends "partial", the range is whole (the hash
        # decides); not asked again past its end (found by this test:
        # that was refused as "sends more than asked")
        srv = self.serve()
        srv.lie_length("*.tar.xz", delta=1)
        r = self.ok("download", "9.90", "--mirror", srv.url, "--manifest", self.manifest,
                    "--connections", "4")
        self.assertNotIn("trying again", r.err)
        reqs = self.archive_requests("c13")
        self.assertEqual(len(reqs), 4, reqs)
        self.assertEqual(sum(q["sent"] for q in reqs), self.size, reqs)
        self.assert_cache_holds("c13")

    def test_range_that_overlaps_goes_on_over_one_connection(self):
        # a later range answered from 100 bytes before its start: not
        # taken as that range; the download goes on over one connection
        # from range 0's end, and what is kept is verified
        srv = self.serve()
        srv.wrong_start("*.tar.xz", shift=100)
        self.download("--connections", "4")
        reqs = self.archive_requests("c13")
        self.assertEqual(sum(1 for q in reqs if "wrong_start" in q["faults"]), 1, reqs)
        self.assert_cache_holds("c13")
        self.assert_no_part()

    def test_range_past_the_end_is_refused(self):
        srv = self.serve()
        srv.lie_length("*.tar.xz", delta=5000, count=None)
        # the last range's header says it runs past the manifest's size
        self.download("--connections", "4", fails=EXIT["MISMATCH"],
                      words=["the server says its part of", "past the %d" % self.size])
        self.assert_no_part()


if __name__ == "__main__":
    unittest.main()

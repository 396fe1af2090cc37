#!/usr/bin/env python3
"""`cudnnctl mirror sync DIR` (src/core/sync.c): a site's mirror in NVIDIA's
layout, synced from a folder, from the tests' real server over HTTPS
(tests/lib/redist_server.py, with cuts and tampering), or over plain HTTP
with the manifests given as files; filters, --prune, --dry-run, the index
page, and the result used as --mirror.  Shares its base class with
test_download.py.

    python3 tests/cli/test_mirror.py -v
"""
import filecmp
import functools
import http.server
import os
import shutil
import signal
import subprocess
import ssl
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_download import (EXIT, FX, DownloadTest, Result, name_of,  # noqa: E402,F401
                           rel_of, setUpModule, sha256_file, tearDownModule)
from redist_server import ensure_tls_files  # noqa: E402

MANIFEST_NAME = "redistrib_9.90.0.json"


class MirrorTest(DownloadTest):
    def setUp(self):
        super().setUp()
        self.out = os.path.join(self.tmp, "site")

    def sync(self, *args, fails=None, words=()):
        cmd = ("mirror", "sync", self.out, "--json") + args
        if fails is not None:
            # the report of every file, with the error as its "error"
            return self.fails(fails, *cmd, words=words, root=False, cache=False).json()
        r = self.ok(*cmd, root=False, cache=False)
        return r.json()

    def states(self, doc):
        return {f["name"]: f["state"] for f in doc["files"]}

    def assert_site_has(self, *keys):
        """The site holds the mirror's manifest byte for byte and exactly
        these archives, each the packed one."""
        self.assertTrue(filecmp.cmp(os.path.join(self.mirror, MANIFEST_NAME),
                                    os.path.join(self.out, MANIFEST_NAME), shallow=False))
        have = []
        for dirpath, _, files in os.walk(os.path.join(self.out, "cudnn")):
            have += [os.path.relpath(os.path.join(dirpath, f), self.out) for f in files
                     if f.startswith("cudnn-")]
        self.assertEqual(sorted(have), sorted(rel_of(k) for k in keys))
        for k in keys:
            self.assertEqual(sha256_file(os.path.join(self.out, rel_of(k))),
                             sha256_file(FX.release(k)[0]), k)


class TestSync(MirrorTest):

    def test_from_a_folder_then_nothing_to_do(self):
        doc = self.sync("--from", self.mirror, "--versions", "all")
        st = self.states(doc)
        self.assertEqual(st[MANIFEST_NAME], "written", doc)
        self.assertEqual(st[rel_of("c12")], "fetched")
        self.assertEqual(st[rel_of("c13")], "fetched")
        self.assert_site_has("c12", "c13")
        with open(os.path.join(self.out, "index.html")) as f:
            page = f.read()
        self.assertIn('href="%s"' % MANIFEST_NAME, page)
        self.assertIn('href="%s"' % rel_of("c13"), page)
        # again: everything present and verified, nothing fetched
        doc = self.sync("--from", self.mirror, "--versions", "all")
        self.assertEqual(set(self.states(doc).values()), {"present"}, doc)
        self.assertEqual(doc["downloaded"], 0)

    def test_the_site_works_as_a_mirror(self):
        self.sync("--from", self.mirror, "--versions", "9.90", "--cuda", "13")
        r = self.ok("install", "9.90", "--mirror", self.out)
        self.assertIn("installed cuDNN 9.90.0.1 for CUDA 13 (sha256 verified)", r.out)
        self.assert_installed("c13")

    def test_filters(self):
        doc = self.sync("--from", self.mirror, "--versions", ">=9.90,<9.91", "--cuda", "12",
                        "--platform", "linux-x86_64")
        self.assertEqual(sorted(self.states(doc)), sorted([MANIFEST_NAME, rel_of("c12")]))
        self.assert_site_has("c12")
        # a filter that chooses nothing writes nothing
        other = os.path.join(self.tmp, "none")
        for args in (("--versions", ">9.90"), ("--versions", "9.9"),
                     ("--versions", "all", "--platform", "windows-x86_64")):
            self.out = other
            doc = self.sync("--from", self.mirror, *args)
            self.assertEqual(doc["files"], [], args)

    def test_prune_with_and_without_dry_run(self):
        self.sync("--from", self.mirror, "--versions", "all")
        notes = os.path.join(self.out, "cudnn", "notes.txt")
        with open(notes, "w") as f:
            f.write("ours\n")
        doc = self.sync("--from", self.mirror, "--versions", "all", "--cuda", "13",
                        "--prune", "--dry-run")
        self.assertEqual(self.states(doc)[rel_of("c12")], "would prune", doc)
        self.assert_site_has("c12", "c13")
        doc = self.sync("--from", self.mirror, "--versions", "all", "--cuda", "13", "--prune")
        self.assertEqual(self.states(doc)[rel_of("c12")], "pruned", doc)
        self.assert_site_has("c13")
        self.assertTrue(os.path.isfile(notes), "a file cudnnctl does not write stays")
        # nothing chosen: the manifest goes too
        doc = self.sync("--from", self.mirror, "--versions", ">=10", "--prune")
        self.assertEqual(self.states(doc)[MANIFEST_NAME], "pruned", doc)
        self.assertFalse(os.path.exists(os.path.join(self.out, rel_of("c13"))))

    def test_dry_run_changes_nothing(self):
        doc = self.sync("--from", self.mirror, "--versions", "all", "--dry-run")
        self.assertEqual(set(self.states(doc).values()), {"would fetch"}, doc)
        self.assertEqual([n for n in os.listdir(self.out) if n != ".cudnnctl-sync"], [])

    def test_versions_are_needed_and_checked(self):
        self.sync("--from", self.mirror, fails=EXIT["USAGE"], words=["--versions"])
        for bad in (">>9", "9..1", "latest", "=<9"):
            self.sync("--from", self.mirror, "--versions", bad, fails=EXIT["USAGE"],
                      words=[bad])
        self.sync("--from", self.mirror, "--versions", "all", "--cuda", "x",
                  fails=EXIT["USAGE"], words=["--cuda"])
        self.sync("--from", self.mirror, "--versions", "all", "--manifest",
                  "https://example.com/" + MANIFEST_NAME, fails=EXIT["USAGE"],
                  words=["as files"])
        self.sync("--from", self.mirror, "--versions", "all", "--manifest",
                  os.path.join(self.tmp, "cudnn.json"), fails=EXIT["USAGE"],
                  words=["NVIDIA's names"])


class TestSyncOverHttp(MirrorTest):

    def test_https_cut_then_resumed(self):
        srv = self.serve(tls=True)
        srv.cut("*.tar.xz", after=10000, count=None)
        doc = self.sync("--from", srv.url, "--versions", "all", "--cuda", "13",
                        fails=EXIT["NETWORK"], words=[rel_of("c13")])
        self.assertFalse(os.path.exists(os.path.join(self.out, rel_of("c13"))),
                         "no half file in the mirror")
        parts = os.listdir(os.path.join(self.out, ".cudnnctl-sync", "archives"))
        self.assertIn(name_of("c13") + ".part", parts)
        srv.clear_faults()
        srv.reset_stats()
        doc = self.sync("--from", srv.url, "--versions", "all", "--cuda", "13")
        self.assertEqual(self.states(doc)[rel_of("c13")], "fetched")
        reqs = self.archive_requests("c13")
        self.assertTrue(reqs and reqs[0]["range"].startswith("bytes=") and
                        not reqs[0]["range"].startswith("bytes=0-"), reqs)
        self.assert_site_has("c13")

    def test_tampered_archive_is_not_taken(self):
        srv = self.serve(tls=True)
        srv.tamper("*.tar.xz", count=None)
        self.sync("--from", srv.url, "--versions", "all", fails=EXIT["MISMATCH"],
                  words=["sha256 mismatch"])
        self.assertFalse(os.path.exists(os.path.join(self.out, "cudnn")))
        srv.clear_faults()
        self.sync("--from", srv.url, "--versions", "all")
        self.assert_site_has("c12", "c13")

    def test_a_manifest_that_does_not_come_keeps_its_releases(self):
        """A manifest the source lists but does not give this time (an
        error, or bytes that disagree with the built-in ones) prunes
        nothing: the site's copy stands for it, stays in the index, and an
        error is a failure a cron job sees."""
        srv = self.serve(tls=True)
        self.sync("--from", srv.url, "--versions", "all")
        index = os.path.join(self.out, "index.html")
        srv.fail("/" + MANIFEST_NAME, code=404, count=None)
        doc = self.sync("--from", srv.url, "--versions", "all", "--prune",
                        fails=EXIT["NOTFOUND"], words=[MANIFEST_NAME])
        self.assertEqual((doc["ok"], doc["error"]["code"], doc["failed"]),
                         (False, "ENOTFOUND", 1), doc)
        self.assertEqual(self.states(doc)[MANIFEST_NAME], "kept", doc)
        self.assertIn({"name": MANIFEST_NAME, "state": "failed"},
                      [{k: f[k] for k in ("name", "state")} for f in doc["files"]], doc)
        self.assert_site_has("c12", "c13")
        with open(index) as f:
            self.assertIn('href="%s"' % MANIFEST_NAME, f.read())
        # bytes that are no manifest: refused, the site's copy kept
        srv.clear_faults()
        with open(os.path.join(self.mirror, MANIFEST_NAME), "w") as f:
            f.write("<html>maintenance</html>\n")
        doc = self.sync("--from", srv.url, "--versions", "all", "--prune")
        self.assertEqual(self.states(doc)[MANIFEST_NAME], "kept", doc)
        self.assertNotIn("pruned", self.states(doc).values(), doc)
        self.assertTrue(os.path.isfile(os.path.join(self.out, rel_of("c12"))))
        self.assertTrue(os.path.isfile(os.path.join(self.out, rel_of("c13"))))

    def test_plain_http_needs_the_manifests_as_files(self):
        srv = self.serve()
        self.sync("--from", srv.url, "--versions", "all", fails=EXIT["MANIFEST"],
                  words=["only over HTTPS", "--manifest FILE"])
        self.sync("--from", srv.url, "--versions", "all", "--manifest", self.manifest)
        self.assert_site_has("c12", "c13")


class TestSyncSeveral(MirrorTest):
    """Several values of each filter, over a mirror of three manifests
    (9.90.0 for CUDA 12 and 13 on Linux and for Windows, 9.90.1, 9.91.0)."""
    packs = ("c12", "c13", "win", "new", "only13")

    def site_archives(self):
        have = []
        for dirpath, _, files in os.walk(os.path.join(self.out, "cudnn")):
            have += [os.path.relpath(os.path.join(dirpath, f), self.out) for f in files]
        return sorted(have)

    def manifests(self):
        return sorted(n for n in os.listdir(self.out) if n.startswith("redistrib_"))

    def test_several_versions(self):
        self.sync("--from", self.mirror, "--versions", "9.90.1", "--versions", "9.91")
        self.assertEqual(self.site_archives(), sorted([rel_of("new"), rel_of("only13")]))
        self.assertEqual(self.manifests(), ["redistrib_9.90.1.json", "redistrib_9.91.0.json"])

    def test_several_platforms_and_cudas(self):
        self.sync("--from", self.mirror, "--versions", "9.90.0", "--platform", "linux-x86_64",
                  "--platform", "windows-x86_64", "--cuda", "12", "--cuda", "13")
        self.assertEqual(self.site_archives(), sorted(rel_of(k) for k in ("c12", "c13", "win")))
        self.assertEqual(self.manifests(), [MANIFEST_NAME])
        for k in ("c12", "c13", "win"):
            self.assertEqual(sha256_file(os.path.join(self.out, rel_of(k))),
                             sha256_file(FX.release(k)[0]), k)
        # one platform and one CUDA of them, pruned to that
        doc = self.sync("--from", self.mirror, "--versions", "9.90.0", "--platform",
                        "windows-x86_64", "--cuda", "13", "--prune")
        self.assertEqual(self.states(doc)[rel_of("win")], "present", doc)
        self.assertEqual(self.site_archives(), [rel_of("win")])


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class TestSiteBehindAWebServer(MirrorTest):
    """The synced folder served as it is by a plain static web server
    (Python's http.server: its index.html for "/", no Range), over HTTPS
    and over plain HTTP with the manifests sync wrote given as files."""

    def web_server(self, tls):
        handler = functools.partial(_Quiet, directory=self.out)
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        scheme = "http"
        if tls:
            ca, cert, key = ensure_tls_files(FX.tls())
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
            self.env["CURL_CA_BUNDLE"] = ca
            scheme = "https"
        t = threading.Thread(target=srv.serve_forever, daemon=True)
        t.start()
        self.addCleanup(t.join)
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return "%s://127.0.0.1:%d/" % (scheme, srv.server_address[1])

    def test_over_https(self):
        self.sync("--from", self.mirror, "--versions", "all")
        url = self.web_server(tls=True)
        r = self.ok("install", "9.90", "--mirror", url)
        self.assertIn("installed cuDNN 9.90.0.1 for CUDA 13 (sha256 verified)", r.out)
        self.assert_installed("c13")

    def test_over_plain_http_with_the_manifests_as_files(self):
        self.sync("--from", self.mirror, "--versions", "all")
        url = self.web_server(tls=False)
        self.fails(EXIT["NORELEASE"], "install", "9.90", "--mirror", url, words=["plain HTTP"])
        r = self.ok("install", "9.90", "--mirror", url, "--manifest",
                    os.path.join(self.out, MANIFEST_NAME))
        self.assertIn("installed cuDNN 9.90.0.1 for CUDA 13 (sha256 verified)", r.out)
        self.assert_installed("c13")


class TestSyncStopped(MirrorTest):
    """A sync stopped anywhere (a power cut at each change to the disk, a
    Ctrl+C) leaves no half file in the mirror: every archive there is whole
    and verified, every manifest NVIDIA's bytes; the next sync completes."""

    def assert_only_whole_files(self, label):
        want = {rel_of(k): sha256_file(FX.release(k)[0]) for k in ("c12", "c13")}
        for dirpath, _, files in os.walk(self.out):
            rel_dir = os.path.relpath(dirpath, self.out)
            if rel_dir.split(os.sep)[0] == ".cudnnctl-sync":
                continue
            for f in files:
                rel = os.path.normpath(os.path.join(rel_dir, f))
                path = os.path.join(self.out, rel)
                if rel == MANIFEST_NAME:
                    self.assertTrue(filecmp.cmp(path, os.path.join(self.mirror, rel),
                                                shallow=False), label)
                elif rel.endswith(".lock"):
                    # a file written whole is written as NAME.lock, then
                    # renamed: never taken for NAME, replaced by the next run
                    continue
                elif rel != "index.html":
                    self.assertIn(rel, want, "%s: %s in the mirror" % (label, rel))
                    self.assertEqual(sha256_file(path), want[rel], "%s: %s" % (label, rel))

    def kill_sweep(self, args, keys, limit):
        """Kill `mirror sync DIR ARGS` at each change to the disk in turn
        (1, 2, ... until a run completes): after each kill only whole files
        are left, and the next sync completes with KEYS and no lock."""
        kills = 0
        for at in range(1, limit):
            shutil.rmtree(self.out, True)
            r = self.run_cli("mirror", "sync", self.out, *args, root=False, cache=False,
                             env={"CUDNNCTL_TEST_KILL_AT": str(at)})
            if r.rc == 0:
                break
            self.assertEqual(r.rc, -signal.SIGKILL, "at=%d:%s" % (at, r))
            kills += 1
            label = "killed at %d" % at
            self.assert_only_whole_files(label)
            self.sync(*args)
            self.assert_site_has(*keys)
            self.assertEqual([n for n in os.listdir(self.out) if n.endswith(".lock")], [],
                             label + ", then again")
        self.assertGreaterEqual(kills, 8, "a sweep that stops early proves less")

    def test_every_kill_point(self):
        self.kill_sweep(("--from", self.mirror, "--versions", "all"), ("c12", "c13"), 300)

    def test_every_kill_point_over_https_in_ranges(self):
        # the archive fetched as several ranges on several connections (a
        # few KB each): a kill at each change to the disk, whichever range's
        # thread makes it, leaves only whole files; the next sync completes
        srv = self.serve(tls=True)
        self.env["CUDNNCTL_TEST_RANGE_MIN"] = "4096"
        self.kill_sweep(("--from", srv.url, "--versions", "all", "--cuda", "13",
                         "--connections", "4"), ("c13",), 400)
        ranged = [q for q in self.archive_requests("c13")
                  if q["range"] and not q["range"].startswith("bytes=0-")]
        self.assertTrue(ranged, "the archive came in ranges")

    def test_ctrl_c_leaves_no_half_file(self):
        srv = self.serve(tls=True)
        size = os.path.getsize(FX.release("c13")[0])
        srv.slow("*.tar.xz", rate=max(size // 20, 1), count=None)
        cmd = self.command(("mirror", "sync", self.out, "--from", srv.url, "--versions", "all",
                            "--cuda", "13"), root=False, cache=False)
        p = subprocess.Popen(cmd, env=self.env, cwd=self.tmp, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        part = os.path.join(self.out, ".cudnnctl-sync", "archives", name_of("c13") + ".part")
        for _ in range(400):
            if os.path.exists(part) and os.path.getsize(part) > 0:
                break
            self.assertIsNone(p.poll(), "ended before any byte arrived")
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        p.stdout, p.stderr = out, err
        r = Result(cmd, p)
        self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
        self.assertFalse(os.path.exists(os.path.join(self.out, rel_of("c13"))))
        self.assertFalse(os.path.exists(part), "the interrupted download is removed")
        srv.clear_faults()
        self.sync("--from", srv.url, "--versions", "all", "--cuda", "13")
        self.assert_site_has("c13")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Downloads on Windows: cctl_os_http_get with WinHTTP (src/platform/win/
http-win.c) under Wine.

tests/wine/httpget.exe makes one cctl_os_http_get and prints what the sink
saw (status, length, start; bytes and blocks) and what the call returned;
the body goes to a file.  The servers are tests/lib/redist_server.py on
127.0.0.1 (ranges, and the faults: cut, ignore_range, status, stall), over
HTTPS with its generated CA too, and a few raw sockets here for what it
does not do: a server that never answers, a body without Content-Length,
a listening socket whose queue is full (a connect that hangs).  Stdlib
only (Python >= 3.11).

    python3 tests/wine/test_http_wine.py -v

Environment: CUDNNCTL_HTTPGET (default ../../build-win/tests/httpget.exe),
CUDNNCTL_EXE (the cudnnctl.exe whose `version --json` gives the exit
statuses; default ../../build-win/cudnnctl.exe), WINE.  The Wine prefix and
its wineserver are tests/wine/winetest.py's (class Wine).  Skipped, with the reason
(exit status 77 as a script), when Wine, the mingw-w64 tools or the .exe
files are missing.

Wine 8 notes (what Windows may do differently): a stalled receive fails
with the socket's WSAETIMEDOUT (10060), not ERROR_WINHTTP_TIMEOUT; a reset
mid-body ends the body like a complete one (no error); an untrusted
certificate is ERROR_WINHTTP_SECURE_CHANNEL_ERROR (12157); a certificate
for the IP address 127.0.0.1 is refused even from a trusted CA, so HTTPS
is tested with https://localhost.
"""
import hashlib
import json
import os
import random
import shutil
import socket
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import winetest  # noqa: E402  (the Wine prefix and wineserver helpers)
from winetest import REPO, Wine, zpath  # noqa: E402
from redist_server import RedistServer, free_port  # noqa: E402

HTTPGET = os.path.abspath(os.environ.get("CUDNNCTL_HTTPGET")
                          or os.path.join(REPO, "build-win", "tests", "httpget.exe"))
NAME = "cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip"
PATH = "/cudnn/windows-x86_64/" + NAME
SIZE = 3_000_000
DATA = random.Random(1).randbytes(SIZE)
SINK_STOP = 4242  # httpget's on_data value with STOP_AFTER

WINE_ = None
EXIT = {}  # "NETWORK" -> 17, from cudnnctl.exe version --json


def missing_prerequisites():
    why = winetest.missing_prerequisites()
    if why:
        return why
    if not os.path.isfile(HTTPGET):
        return "no %s (build with -DCUDNNCTL_TESTS=ON, or set CUDNNCTL_HTTPGET)" % HTTPGET
    return None


def setUpModule():
    global WINE_
    why = missing_prerequisites()
    if why:
        raise unittest.SkipTest(why)
    WINE_ = Wine()
    try:
        WINE_.start()
        shutil.copy2(HTTPGET, os.path.join(WINE_.tmp, "httpget.exe"))
        r = WINE_.run([WINE_.exe, "version", "--json"])
        if r.rc:
            raise RuntimeError("version --json failed:%s" % r)
        EXIT.update(json.loads(r.out)["exit_codes"])
    except BaseException:
        WINE_.stop()
        raise


def tearDownModule():
    if WINE_:
        WINE_.stop()


class Get:
    """One run of httpget.exe: the printed keys, the body and the exit status."""

    def __init__(self, r, body):
        self.r, self.rc, self.body = r, r.rc, body
        self.keys = {}
        for line in r.out.splitlines():
            k, sep, v = line.partition("=")
            if sep:
                self.keys.setdefault(k, v)
        self.code = self.keys.get("rc")
        self.msg = self.keys.get("msg", "")
        self.ms = float(self.keys.get("ms", "nan"))
        self.bytes = int(self.keys.get("bytes", "-1"))
        self.oserr = int(self.keys.get("oserr", "0"))
        s = self.keys.get("start")
        self.start = tuple(int(x) for x in s.split()) if s else None

    def __str__(self):
        return str(self.r)


# ------------------------------------------------------------ raw servers
class RawServer:
    """A listening socket on 127.0.0.1 that answers each connection with
    `reply` (bytes, then close) after reading the request, or with nothing
    for `silent` seconds."""

    def __init__(self, reply=None, silent=0):
        self.reply, self.silent = reply, silent
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.conns = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(c)
            c.settimeout(5)
            try:
                c.recv(65536)
                if self.reply is not None:
                    c.sendall(self.reply)
                    c.shutdown(socket.SHUT_RDWR)
                    c.close()
                else:
                    self.stop.wait(self.silent)
            except OSError:
                pass

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for c in self.conns:
            c.close()
        self.sock.close()


class FullQueue:
    """A listening socket whose accept queue is full and never served: on
    Linux a new connection's SYN is dropped, so connecting hangs."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.fill = []
        for _ in range(4):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self.fill.append(c)
        time.sleep(0.2)

    def close(self):
        for c in self.fill:
            c.close()
        self.sock.close()



# ------------------------------------------------------------- test base
class HttpTest(unittest.TestCase):
    tls = None
    srv = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cudnnctl-http-")
        cls.root = os.path.join(cls.tmp, "root")
        os.makedirs(os.path.dirname(cls.root + PATH))
        with open(cls.root + PATH, "wb") as f:
            f.write(DATA)
        cls.srv = RedistServer(cls.root, tls=cls.tls and os.path.join(cls.tmp, cls.tls)).start()
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        if cls.srv:
            cls.srv.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        # a request an earlier test gave up on (a stall) ends first
        self.srv.wait_idle(15)
        self.srv.clear_faults()
        self.srv.reset_stats()

    def get(self, url, offset=0, connect_s=10, stall_s=10, stop_after=None, timeout=120):
        type(self).n += 1
        out = os.path.join(self.tmp, "out-%d.bin" % self.n)
        args = [os.path.join(WINE_.tmp, "httpget.exe"), url, offset, zpath(out),
                connect_s, stall_s]
        if stop_after is not None:
            args.append(stop_after)
        r = WINE_.run(args, timeout=timeout)
        body = b""
        if os.path.exists(out):
            with open(out, "rb") as f:
                body = f.read()
        g = Get(r, body)
        # whatever happened: on_start at most once and before any byte,
        # and the bytes counted are the bytes written
        self.assertEqual(g.keys.get("order"), "ok", g)
        self.assertEqual(g.bytes, len(body), g)
        return g

    def url(self, path=PATH):
        return self.srv.url.rstrip("/") + path

    def ok(self, g, status, start=0):
        self.assertEqual(g.code, "OK", g)
        self.assertEqual(g.rc, 0, g)
        self.assertEqual(g.msg, "", g)
        self.assertEqual(g.start, (status, SIZE - start, start), g)
        self.assertEqual(hashlib.sha256(g.body).hexdigest(),
                         hashlib.sha256(DATA[start:]).hexdigest(), g)

    def fails(self, g, code, url, *words):
        """The call returned CCTL_E<code>, exited with its status, and the
        message is "cannot download 'URL': ..." with every one of words."""
        self.assertEqual(g.code, "E" + code, g)
        self.assertEqual(g.rc, EXIT[code], g)
        self.assertIn("cannot download '%s': " % url, g.msg, g)
        for w in words:
            self.assertIn(w, g.msg, g)


# ------------------------------------------------------------------- tests
class TestHttp(HttpTest):
    def test_whole_file(self):
        g = self.get(self.url())
        self.ok(g, 200)
        st = self.srv.stats(PATH)
        self.assertEqual(st["ranges"], [None], st)

    def test_range_from_an_offset(self):
        g = self.get(self.url(), offset=1_000_000)
        self.ok(g, 206, start=1_000_000)
        self.assertEqual(self.srv.stats(PATH)["ranges"], ["bytes=1000000-"])

    def test_server_ignoring_range_is_a_200_from_0(self):
        self.srv.ignore_range(PATH)
        g = self.get(self.url(), offset=1_000_000)
        # on_start sees the 200 and start 0: the sink decides (the whole file came)
        self.ok(g, 200)
        self.assertEqual(self.srv.stats(PATH)["faults"], ["ignore_range"])

    def test_redirect_is_followed_with_the_range(self):
        self.srv.fail("/moved.zip", code=302, headers={"Location": PATH})
        g = self.get(self.url("/moved.zip"), offset=2_000_000)
        self.ok(g, 206, start=2_000_000)
        self.assertEqual(self.srv.stats(PATH)["ranges"], ["bytes=2000000-"])

    def test_404_is_notfound(self):
        url = self.url("/cudnn/windows-x86_64/missing.zip")
        g = self.get(url)
        self.fails(g, "NOTFOUND", url, "404")
        # on_start saw the status; no byte of the error page reached the sink
        self.assertEqual(g.start[0], 404, g)
        self.assertEqual(g.body, b"", g)

    def test_410_is_notfound(self):
        self.srv.fail(PATH, code=410)
        g = self.get(self.url())
        self.fails(g, "NOTFOUND", self.url(), "410")
        self.assertEqual(g.body, b"", g)

    def test_500_is_network(self):
        self.srv.fail(PATH, code=500)
        g = self.get(self.url())
        self.fails(g, "NETWORK", self.url(), "500")
        self.assertEqual(g.start[0], 500, g)
        self.assertEqual(g.body, b"", g)

    def test_cut_transfer_is_not_a_success(self):
        # WinHTTP ends the body of a cut connection like a complete one
        self.srv.cut(PATH, after=1_234_567)
        g = self.get(self.url())
        self.fails(g, "NETWORK", self.url(), "cut after 1234567 of 3000000 bytes")
        self.assertEqual(g.start, (200, SIZE, 0), g)
        self.assertEqual(g.body, DATA[:1_234_567], g)

    def test_reset_transfer_is_not_a_success(self):
        self.srv.cut(PATH, after=1_234_567, reset=True)
        g = self.get(self.url())
        self.fails(g, "NETWORK", self.url())
        self.assertLess(len(g.body), SIZE, g)
        self.assertEqual(g.body, DATA[:len(g.body)], g)

    def test_cut_range_is_not_a_success(self):
        self.srv.cut(PATH, after=500_000)
        g = self.get(self.url(), offset=1_000_000)
        self.fails(g, "NETWORK", self.url(), "cut after 500000 of 2000000 bytes")
        self.assertEqual(g.start, (206, SIZE - 1_000_000, 1_000_000), g)
        self.assertEqual(g.body, DATA[1_000_000:1_500_000], g)

    def test_stall_longer_than_stall_s(self):
        self.srv.stall(PATH, after=100_000, seconds=8)
        t = time.monotonic()
        g = self.get(self.url(), stall_s=2)
        self.fails(g, "NETWORK", self.url(), "no data for 2 s",
                   "after 100000 of 3000000 bytes")
        self.assertEqual(g.body, DATA[:100_000], g)
        self.assertGreaterEqual(g.ms, 1500, g)
        self.assertLess(g.ms, 6000, g)
        self.assertLess(time.monotonic() - t, 30, g)
        self.assertNotEqual(g.oserr, 0, g)

    def test_sink_stop_is_returned(self):
        g = self.get(self.url(), stop_after=500_000)
        self.assertEqual(g.code, "SINK_STOP", g)
        self.assertEqual(g.rc, SINK_STOP & 0xFF, g)
        self.assertGreaterEqual(len(g.body), 500_000, g)
        self.assertLess(len(g.body), SIZE, g)
        self.assertEqual(g.msg, "", g)

    def test_nothing_listening_fails_quickly(self):
        url = "http://127.0.0.1:%d%s" % (free_port(), PATH)
        g = self.get(url, connect_s=10)
        self.fails(g, "NETWORK", url)
        self.assertIsNone(g.start, g)
        self.assertLess(g.ms, 3000, g)  # refused, not timed out
        self.assertNotEqual(g.oserr, 0, g)

    def test_connect_that_hangs_ends_after_connect_s(self):
        q = FullQueue()
        try:
            url = "http://127.0.0.1:%d/x" % q.port
            g = self.get(url, connect_s=3, stall_s=30)
        finally:
            q.close()
        self.fails(g, "NETWORK", url, "no connection within 3 s")
        self.assertIsNone(g.start, g)
        self.assertGreaterEqual(g.ms, 2500, g)
        self.assertLess(g.ms, 8000, g)

    def test_server_that_never_answers(self):
        s = RawServer(silent=20)
        try:
            url = "http://127.0.0.1:%d/x" % s.port
            g = self.get(url, stall_s=2)
        finally:
            s.close()
        self.fails(g, "NETWORK", url, "no answer for 2 s")
        self.assertIsNone(g.start, g)
        self.assertLess(g.ms, 6000, g)

    def test_no_content_length_ends_with_the_connection(self):
        body = DATA[:100_000]
        s = RawServer(reply=b"HTTP/1.0 200 OK\r\nContent-Type: application/zip\r\n\r\n" + body)
        try:
            g = self.get("http://127.0.0.1:%d/x" % s.port)
        finally:
            s.close()
        self.assertEqual(g.code, "OK", g)
        self.assertEqual(g.start, (200, -1, 0), g)
        self.assertEqual(g.body, body, g)

    def test_206_length_from_content_range(self):
        # no Content-Length: the range says how long the body is
        s = RawServer(reply=b"HTTP/1.0 206 Partial Content\r\n"
                            b"Content-Range: bytes 10-99/100\r\n\r\n" + b"y" * 50)
        try:
            url = "http://127.0.0.1:%d/x" % s.port
            g = self.get(url, offset=10)
        finally:
            s.close()
        self.assertEqual(g.start, (206, 90, 10), g)
        self.fails(g, "NETWORK", url, "cut after 50 of 90 bytes")

    def test_url_that_is_not_http(self):
        url = "ftp://127.0.0.1/x.zip"
        g = self.get(url)
        self.fails(g, "USAGE", url)
        self.assertIsNone(g.start, g)


class TestHttps(HttpTest):
    """HTTPS against the server's generated CA: refused until the CA is in
    the prefix's (the user's) Root store, then the same download works."""
    tls = "tls"

    @classmethod
    def setUpClass(cls):
        if not shutil.which("openssl"):
            raise unittest.SkipTest("openssl not found (the server's certificates)")
        super().setUpClass()

    def url(self, path=PATH):
        return "https://localhost:%d%s" % (self.srv.port, path)

    def trust_ca(self, trusted):
        winetest.trust_ca(WINE_, self.srv.ca_file, trusted)

    def test_untrusted_certificate_is_refused_then_trusted_one_works(self):
        self.trust_ca(False)
        g = self.get(self.url())
        self.fails(g, "NETWORK", self.url())
        self.assertIsNone(g.start, g)
        self.assertEqual(g.body, b"", g)
        self.assertNotEqual(g.oserr, 0, g)
        self.trust_ca(True)
        try:
            g = self.get(self.url(), offset=123)
            self.ok(g, 206, start=123)
        finally:
            self.trust_ca(False)


if __name__ == "__main__":
    reason = missing_prerequisites()
    if reason:
        print("test_http_wine.py: skipped: %s" % reason, file=sys.stderr)
        sys.exit(77)
    unittest.main()

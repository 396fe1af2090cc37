#!/usr/bin/env python3
"""Self-test of tests/lib/redist_server.py (stdlib only).

    python3 tests/lib/test_redist_server.py -v

Uses /usr/bin/openssl to make the test CA and /usr/bin/curl for the HTTPS
checks (PATH is searched too).
"""
import hashlib
import html.parser
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import redist_server as rs  # noqa: E402

SERVER_PY = os.path.join(HERE, "redist_server.py")
SIZE = 300_000  # a few 64 KiB blocks
ARCH = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"
ARCH2 = "cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip"
APATH = "/cudnn/linux-x86_64/" + ARCH
BPATH = "/cudnn/windows-x86_64/" + ARCH2
CURL = shutil.which("curl") or "/usr/bin/curl"


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sha256(b):
    return hashlib.sha256(b).hexdigest()


class Links(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.hrefs = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs)["href"])


def make_tree(base):
    """A mirror with two archives of 9.1.0.70; returns (root, {path: bytes})."""
    src = os.path.join(base, "src")
    os.makedirs(src)
    data = {APATH: os.urandom(SIZE), BPATH: os.urandom(SIZE // 3)}
    a = os.path.join(src, ARCH)
    b = os.path.join(src, ARCH2)
    with open(a, "wb") as f:
        f.write(data[APATH])
    with open(b, "wb") as f:
        f.write(data[BPATH])
    root = os.path.join(base, "root")
    rs.build_mirror(root, [(a, "9.1.0.70", "linux-x86_64", "12"),
                           (b, "9.1.0.70", "windows-x86_64", 12)])
    with open(os.path.join(root, "cudnn_samples", "a b&c.txt"), "wb") as f:
        f.write(b"x")
    with open(os.path.join(root, ".hidden"), "wb") as f:
        f.write(b"x")
    return root, data


def raw_get(port, path, headers=(), timeout=5.0, method="GET", tls_ctx=None,
            keep_alive=False):
    """One request on a fresh socket, read until the server closes it (it is
    asked to with "Connection: close" unless keep_alive).

    Returns (status, headers dict lower-cased, body bytes, how) where how is
    'eof' (the server closed), 'reset' or 'timeout' (body is what came)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if tls_ctx is not None:
        s = tls_ctx.wrap_socket(s, server_hostname="127.0.0.1")
    if not keep_alive:
        headers = [*headers, ("Connection", "close")]
    req = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % (
        method, path, "".join("%s: %s\r\n" % h for h in headers))
    s.sendall(req.encode())
    buf = b""
    how = "eof"
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except socket.timeout:
        how = "timeout"
    except ConnectionResetError:
        how = "reset"
    except ssl.SSLError:
        how = "eof"  # a TLS peer closing without close_notify
    finally:
        s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines[0] else None
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return status, hdrs, body, how


class ServerCase(unittest.TestCase):
    tls = False

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="redist-test-")
        cls.root, cls.data = make_tree(cls.tmp)
        cls.tls_dir = os.path.join(cls.tmp, "tls") if cls.tls else None
        cls.srv = rs.RedistServer(cls.root, tls=cls.tls_dir).start()
        cls.ctx = cls.srv.client_ssl_context()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.srv.clear_faults()
        self.srv.reset_stats()

    def conn(self, timeout=10):
        if self.tls:
            return http.client.HTTPSConnection("127.0.0.1", self.srv.port, timeout=timeout,
                                               context=self.ctx)
        return http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=timeout)

    def get(self, path, headers=None, method="GET"):
        c = self.conn()
        try:
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()


class TestServing(ServerCase):
    def test_index_root(self):
        st, h, body = self.get("/")
        self.assertEqual(st, 200)
        self.assertTrue(h["content-type"].startswith("text/html"))
        self.assertEqual(int(h["content-length"]), len(body))
        hrefs = Links(body.decode()).hrefs
        # folders first, then files, each sorted; no ../ at the top; no dot-files
        self.assertEqual(hrefs, ["cudnn/", "cudnn_jit/", "cudnn_samples/",
                                 "redistrib_9.1.0.json"])
        self.assertIn(">redistrib_9.1.0.json</a>", body.decode())

    def test_index_subfolders(self):
        _, _, body = self.get("/cudnn/")
        self.assertEqual(Links(body.decode()).hrefs,
                         ["../", "linux-x86_64/", "windows-x86_64/"])
        _, _, body = self.get("/cudnn/linux-x86_64/")
        self.assertEqual(Links(body.decode()).hrefs, ["../", ARCH])
        _, _, body = self.get("/cudnn_samples/")
        self.assertEqual(Links(body.decode()).hrefs, ["../", "a%20b%26c.txt"])
        self.assertIn(">a b&amp;c.txt</a>", body.decode())
        self.assertEqual(self.get("/cudnn_samples/a%20b%26c.txt")[2], b"x")
        st, h, _ = self.get("/cudnn/linux-x86_64")
        self.assertEqual((st, h["location"]), (301, "/cudnn/linux-x86_64/"))

    def test_full_get_and_head(self):
        st, h, body = self.get(APATH)
        self.assertEqual(st, 200)
        self.assertEqual(body, self.data[APATH])
        self.assertEqual(int(h["content-length"]), SIZE)
        self.assertEqual(h["accept-ranges"], "bytes")
        st, h, body = self.get(APATH, method="HEAD")
        self.assertEqual((st, body, int(h["content-length"])), (200, b"", SIZE))
        # the manifest is served as written and describes the archive
        st, h, body = self.get("/redistrib_9.1.0.json")
        self.assertEqual(h["content-type"], "application/json")
        e = json.loads(body)["cudnn"]["linux-x86_64"]["cuda12"]
        self.assertEqual(e["relative_path"], APATH[1:])
        self.assertEqual(e["sha256"], sha256(self.data[APATH]))
        self.assertEqual(e["size"], str(SIZE))

    def test_not_found_and_outside_root(self):
        self.assertEqual(self.get("/nope.json")[0], 404)
        for p in ("/../root/redistrib_9.1.0.json", "/cudnn/%2e%2e/%2e%2e/etc/passwd",
                  "/..%2f..%2fetc/passwd"):
            self.assertEqual(raw_get(self.srv.port, p, tls_ctx=self.ctx)[0], 404, p)

    def test_ranges(self):
        d = self.data[APATH]
        cases = [("bytes=1000-", 1000, SIZE), ("bytes=10-19", 10, 20),
                 ("bytes=0-0", 0, 1), ("bytes=-500", SIZE - 500, SIZE),
                 ("bytes=%d-" % (SIZE - 1), SIZE - 1, SIZE),
                 ("bytes=%d-%d" % (SIZE - 10, SIZE + 100), SIZE - 10, SIZE)]
        for rng, a, b in cases:
            st, h, body = self.get(APATH, {"Range": rng})
            self.assertEqual(st, 206, rng)
            self.assertEqual(h["content-range"], "bytes %d-%d/%d" % (a, b - 1, SIZE), rng)
            self.assertEqual(int(h["content-length"]), b - a, rng)
            self.assertEqual(body, d[a:b], rng)
        for rng in ("bytes=%d-" % SIZE, "bytes=%d-%d" % (SIZE + 5, SIZE + 9), "bytes=-0"):
            st, h, _ = self.get(APATH, {"Range": rng})
            self.assertEqual(st, 416, rng)
            self.assertEqual(h["content-range"], "bytes */%d" % SIZE, rng)
        for rng in ("bytes=5-2", "items=0-1", "bytes=0-1,5-6", "bytes=x-"):
            st, _, body = self.get(APATH, {"Range": rng})
            self.assertEqual((st, len(body)), (200, SIZE), rng)
        # If-Range: the ETag matches -> 206, another one -> 200
        etag = self.get(APATH, method="HEAD")[1]["etag"]
        self.assertEqual(self.get(APATH, {"Range": "bytes=5-", "If-Range": etag})[0], 206)
        self.assertEqual(self.get(APATH, {"Range": "bytes=5-", "If-Range": '"x"'})[0], 200)

    def test_keep_alive(self):
        c = self.conn()
        for _ in range(3):
            c.request("GET", "/redistrib_9.1.0.json")
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            r.read()
        c.close()
        conns = {r["conn"] for r in self.srv.requests()}
        self.assertEqual(len(conns), 1)
        self.assertEqual(len(self.srv.requests()), 3)

    def test_client_closing_early(self):
        # a client that reads a little and hangs up must not hurt the server
        # (slow: the body must not fit in the socket buffers at once)
        self.srv.slow(APATH, rate=400_000, count=3)
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", self.srv.port))
            if self.ctx:
                s = self.ctx.wrap_socket(s, server_hostname="127.0.0.1")
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % APATH).encode())
            s.recv(100)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            s.close()
        self.assertTrue(self.srv.wait_idle(5))
        st, _, body = self.get(APATH)
        self.assertEqual((st, body), (200, self.data[APATH]))
        reqs = self.srv.requests(APATH)
        self.assertEqual([r["complete"] for r in reqs], [False] * 3 + [True])


class TestFaults(ServerCase):
    def test_cut(self):
        self.srv.cut(APATH, after=1000)
        st, h, body, how = raw_get(self.srv.port, APATH, tls_ctx=self.ctx, keep_alive=True)
        self.assertEqual((st, int(h["content-length"])), (200, SIZE))
        self.assertEqual(len(body), 1000)
        self.assertEqual(body, self.data[APATH][:1000])
        self.assertEqual(how, "eof")  # the server closed the connection
        # used up: the next one is whole
        self.assertEqual(self.get(APATH)[2], self.data[APATH])
        self.assertEqual(self.srv.faults(), [])

    def test_cut_reset_and_http_client(self):
        self.srv.cut("*.tar.xz", after=5000, reset=True)
        c = self.conn()
        c.request("GET", APATH)
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        with self.assertRaises((http.client.IncompleteRead, ConnectionResetError,
                                ssl.SSLError)):
            r.read()
        c.close()
        rec = self.srv.requests(APATH)[-1]
        self.assertEqual((rec["sent"], rec["complete"], rec["faults"]), (5000, False, ["cut"]))

    def test_cut_of_a_range(self):
        self.srv.cut(APATH, after=10)
        st, h, body, how = raw_get(self.srv.port, APATH, [("Range", "bytes=100-")],
                                   tls_ctx=self.ctx)
        self.assertEqual((st, int(h["content-length"]), body), (206, SIZE - 100,
                                                                 self.data[APATH][100:110]))

    def test_ignore_range(self):
        self.srv.ignore_range(APATH)
        # a request without Range does not use it up
        self.assertEqual(self.get(APATH)[0], 200)
        st, h, body = self.get(APATH, {"Range": "bytes=1000-"})
        self.assertEqual((st, body), (200, self.data[APATH]))
        self.assertNotIn("content-range", h)
        self.assertEqual(self.get(APATH, {"Range": "bytes=1000-"})[0], 206)

    def test_short_range(self):
        d = self.data[APATH]
        self.srv.short_range(APATH, length=100, count=2)
        # a request without Range does not use it up: the whole file
        self.assertEqual(self.get(APATH)[2], d)
        st, h, body = self.get(APATH, {"Range": "bytes=1000-4999"})
        self.assertEqual((st, body), (206, d[1000:1100]))
        self.assertEqual(h["content-range"], "bytes 1000-1099/%d" % SIZE)
        self.assertEqual(int(h["content-length"]), 100)
        self.assertEqual(self.get(APATH, {"Range": "bytes=2000-"})[2], d[2000:2100])
        self.assertEqual(self.get(APATH, {"Range": "bytes=2000-"})[2], d[2000:])  # used up

    def test_lie_length(self):
        d = self.data[APATH]
        self.srv.lie_length(APATH, delta=-100)
        # the body as it is, then the connection's end; the header lies
        st, h, body, how = raw_get(self.srv.port, APATH, tls_ctx=self.ctx if self.tls else None)
        self.assertEqual((st, int(h["content-length"]), body, how), (200, SIZE - 100, d, "eof"))
        self.srv.lie_length(APATH, delta=500)
        st, h, body, _ = raw_get(self.srv.port, APATH, [("Range", "bytes=1000-1999")],
                                 tls_ctx=self.ctx if self.tls else None)
        self.assertEqual((st, int(h["content-length"]), body), (206, 1500, d[1000:2000]))
        self.assertEqual(self.get(APATH)[2], d)  # used up
        with self.assertRaises(ValueError):
            self.srv.lie_length(APATH, delta=0)

    def test_changed(self):
        d = self.data[APATH]
        _, h0, _ = self.get(APATH, {"Range": "bytes=0-99"})
        self.srv.changed(APATH, from_byte=1000, count=2)
        # a body from before from_byte does not use it up
        self.assertEqual(self.get(APATH, {"Range": "bytes=0-99"})[2], d[:100])
        st, h, body = self.get(APATH, {"Range": "bytes=1000-1099"})
        self.assertEqual((st, body), (206, bytes(b ^ 0x5A for b in d[1000:1100])))
        self.assertNotEqual(h["etag"], h0["etag"])
        self.assertNotEqual(h["last-modified"], h0["last-modified"])
        # with If-Range of the old ETag: the whole (other) file
        st, _, body = self.get(APATH, {"Range": "bytes=2000-", "If-Range": h0["etag"]})
        self.assertEqual((st, body), (200, bytes(b ^ 0x5A for b in d)))
        self.assertEqual(self.get(APATH, {"Range": "bytes=1000-1099"})[2], d[1000:1100])

    def test_wrong_start(self):
        d = self.data[APATH]
        self.srv.wrong_start(APATH, shift=100, from_byte=1000)
        self.assertEqual(self.get(APATH, {"Range": "bytes=500-"})[2], d[500:])  # not taken
        st, h, body = self.get(APATH, {"Range": "bytes=2000-2999"})
        self.assertEqual((st, h["content-range"], body),
                         (206, "bytes 1900-2999/%d" % SIZE, d[1900:3000]))
        self.assertEqual(self.get(APATH, {"Range": "bytes=2000-2999"})[2], d[2000:3000])

    def test_status(self):
        self.srv.fail(APATH, 503, count=2)
        self.srv.fail("/redistrib_9.1.0.json", 404, body="gone\n")
        for _ in range(2):
            st, h, body = self.get(APATH)
            self.assertEqual(st, 503)
            self.assertEqual(int(h["content-length"]), len(body))
            self.assertLess(len(body), 200)
        self.assertEqual(self.get(APATH)[0], 200)
        self.assertEqual(self.get("/redistrib_9.1.0.json")[:3:2], (404, b"gone\n"))
        self.assertEqual(self.get("/redistrib_9.1.0.json")[0], 200)
        # a redirect through extra headers
        self.srv.fail("/old.json", 302, headers={"Location": "/redistrib_9.1.0.json"})
        st, h, _ = self.get("/old.json")
        self.assertEqual((st, h["location"]), (302, "/redistrib_9.1.0.json"))
        self.assertEqual(self.srv.stats(APATH)["statuses"], [503, 503, 200])

    def test_stall(self):
        self.srv.stall(APATH, after=1000, seconds=1.5)
        t0 = time.monotonic()
        st, h, body, how = raw_get(self.srv.port, APATH, timeout=0.5, tls_ctx=self.ctx)
        self.assertEqual((st, int(h["content-length"]), len(body), how), (200, SIZE, 1000,
                                                                          "timeout"))
        self.assertLess(time.monotonic() - t0, 1.4)
        # a patient client sees the connection closed after the stall
        self.srv.stall(APATH, after=1000, seconds=1)
        t0 = time.monotonic()
        st, _, body, how = raw_get(self.srv.port, APATH, timeout=5, tls_ctx=self.ctx,
                                   keep_alive=True)
        self.assertGreaterEqual(time.monotonic() - t0, 0.9)
        self.assertEqual((len(body), how), (1000, "eof"))

    def test_stall_resume(self):
        self.srv.stall(APATH, after=0, seconds=1, resume=True)
        t0 = time.monotonic()
        st, _, body = self.get(APATH)
        self.assertGreaterEqual(time.monotonic() - t0, 0.9)
        self.assertEqual((st, body), (200, self.data[APATH]))

    def test_tamper(self):
        d = self.data[APATH]
        self.srv.tamper(APATH)
        st, h, body = self.get(APATH)
        self.assertEqual((st, len(body), int(h["content-length"])), (200, SIZE, SIZE))
        self.assertNotEqual(sha256(body), sha256(d))
        diff = [i for i in range(SIZE) if body[i] != d[i]]
        self.assertEqual(diff, [SIZE // 2])
        self.srv.tamper(APATH, offset=70000, length=3)
        _, _, body = self.get(APATH, {"Range": "bytes=69999-70010"})
        self.assertEqual(body, d[69999:70000] + bytes(x ^ 0xFF for x in d[70000:70003])
                         + d[70003:70011])
        self.assertEqual(self.get(APATH)[2], d)  # used up

    def test_slow(self):
        self.srv.slow(APATH, rate=400_000)
        t0 = time.monotonic()
        st, _, body = self.get(APATH)
        took = time.monotonic() - t0
        self.assertEqual(body, self.data[APATH])
        self.assertGreater(took, 0.6)
        self.assertLess(took, 3)

    def test_wildcard_scope_and_count(self):
        self.srv.fail("*", 500, count=None)
        for p in ("/", APATH, BPATH, "/nope"):
            self.assertEqual(self.get(p)[0], 500, p)
        self.assertEqual(len(self.srv.faults()), 1)
        self.srv.clear_faults()
        self.assertEqual(self.get(APATH)[0], 200)
        # a fault scoped to one path leaves the others alone
        self.srv.cut(BPATH, after=1)
        self.assertEqual(self.get(APATH)[2], self.data[APATH])
        self.assertEqual(len(self.srv.faults()), 1)

    def test_head_does_not_use_up_body_faults(self):
        self.srv.cut(APATH, after=10)
        self.assertEqual(self.get(APATH, method="HEAD")[0], 200)
        self.assertEqual(self.get(APATH, method="HEAD")[0], 200)
        self.assertEqual(len(self.srv.faults()), 1)

    def test_fault_validation(self):
        for kind, kw in [("nope", {}), ("cut", {"after": -1}), ("cut", {"seconds": 1}),
                         ("status", {"code": 99}), ("slow", {"rate": 0}),
                         ("stall", {"seconds": -1}), ("tamper", {"offset": -2}),
                         ("cut", {"count": 0})]:
            with self.assertRaises(ValueError, msg=(kind, kw)):
                self.srv.add_fault(kind, **kw)
        self.assertEqual(self.srv.faults(), [])


class TestRateTotal(ServerCase):
    """rate_total caps the bodies of all connections together: two GETs at
    once take at least as long as both files at that rate (a lower bound:
    a busy machine only makes it slower)."""
    RATE = 1_000_000

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="redist-test-")
        cls.root, cls.data = make_tree(cls.tmp)
        cls.tls_dir = None
        cls.srv = rs.RedistServer(cls.root, rate_total=cls.RATE).start()
        cls.ctx = None

    def test_two_connections_share_the_rate(self):
        got = {}

        def fetch(path):
            got[path] = self.get(path)[2]
        t0 = time.monotonic()
        threads = [threading.Thread(target=fetch, args=(p,)) for p in (APATH, BPATH)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        took = time.monotonic() - t0
        self.assertEqual(got[APATH], self.data[APATH])
        self.assertEqual(got[BPATH], self.data[BPATH])
        both = len(self.data[APATH]) + len(self.data[BPATH])
        self.assertGreaterEqual(took, 0.9 * both / self.RATE)


class TestStats(ServerCase):
    def test_counting_and_resume(self):
        K = 100_000
        self.srv.cut(APATH, after=K)
        _, _, body, _ = raw_get(self.srv.port, APATH, tls_ctx=self.ctx)
        st, _, rest = self.get(APATH, {"Range": "bytes=%d-" % len(body)})
        self.assertEqual(st, 206)
        self.assertEqual(body + rest, self.data[APATH])
        s = self.srv.stats(APATH)
        self.assertEqual(s["requests"], 2)
        self.assertEqual(s["ranges"], [None, "bytes=%d-" % K])
        self.assertEqual(s["statuses"], [200, 206])
        self.assertEqual(s["bytes_sent"], SIZE)  # the archive once, not twice
        self.assertEqual(s["faults"], ["cut"])
        self.assertEqual(s["methods"], ["GET", "GET"])
        self.get("/")
        self.get("/nope")
        allst = self.srv.stats()
        self.assertEqual(set(allst), {APATH, "/", "/nope"})
        self.assertEqual(allst["/nope"]["statuses"], [404])
        self.assertEqual(self.srv.stats("*.tar.xz")["bytes_sent"], SIZE)
        self.assertEqual(self.srv.stats("/never")["requests"], 0)
        self.srv.reset_stats()
        self.assertEqual(self.srv.stats(), {})

    def test_concurrent_downloads(self):
        # A stalls for 1.5 s in the middle; B is downloaded whole meanwhile
        self.srv.stall(APATH, after=SIZE // 2, seconds=1.5, resume=True)
        out = {}

        def fetch(p):
            out[p] = self.get(p)[2]

        ta = threading.Thread(target=fetch, args=(APATH,))
        t0 = time.monotonic()
        ta.start()
        time.sleep(0.2)
        fetch(BPATH)
        tb = time.monotonic() - t0
        self.assertTrue(ta.is_alive())
        ta.join(10)
        self.assertLess(tb, 1.2)
        self.assertGreaterEqual(time.monotonic() - t0, 1.4)
        self.assertEqual(out[APATH], self.data[APATH])
        self.assertEqual(out[BPATH], self.data[BPATH])
        ra, rb = self.srv.requests(APATH)[0], self.srv.requests(BPATH)[0]
        self.assertLess(ra["start"], rb["end"])
        self.assertLess(rb["end"], ra["end"])

    def test_control_url(self):
        ctl = rs.ServerControl(self.srv.url, cafile=self.srv.ca_file)
        f = ctl.fail(APATH, 500)
        self.assertEqual((f["kind"], f["code"], f["path"]), ("status", 500, APATH))
        self.assertEqual(len(ctl.faults()), 1)
        self.assertEqual(self.get(APATH)[0], 500)
        ctl.cut("cudnn/*", after=3, count=None)  # '/' added in front
        self.assertEqual(raw_get(self.srv.port, BPATH, tls_ctx=self.ctx)[2],
                         self.data[BPATH][:3])
        ctl.clear_faults()
        self.assertEqual(ctl.faults(), [])
        self.assertEqual(ctl.stats(APATH)["statuses"], [500])
        self.assertEqual(ctl.stats()[BPATH]["bytes_sent"], 3)
        self.assertEqual([r["path"] for r in ctl.requests()], [APATH, BPATH])
        ctl.reset_stats()
        self.assertEqual(ctl.stats(), {})
        with self.assertRaisesRegex(ValueError, "unknown fault kind"):
            ctl.control({"fault": {"kind": "explode"}})
        # raw protocol: several keys at once
        req = urllib.request.Request(self.srv.url + "_control", method="POST", data=json.dumps(
            {"clear_faults": True, "faults": [{"kind": "ignore_range", "path": APATH},
                                              {"kind": "slow", "rate": 10 ** 6}]}).encode())
        with urllib.request.urlopen(req, context=self.ctx) as r:
            doc = json.load(r)
        self.assertEqual([f["kind"] for f in doc["faults"]], ["ignore_range", "slow"])
        self.assertEqual(self.srv.stats(), {})  # control requests are not counted


class TestHTTPS(TestServing):
    """The serving tests again over HTTPS, plus curl and the CA."""
    tls = True

    def test_generated_files(self):
        for n in ("ca.pem", "server.pem", "server.key"):
            self.assertTrue(os.path.isfile(os.path.join(self.tls_dir, n)), n)
        self.assertTrue(self.srv.url.startswith("https://127.0.0.1:"))
        self.assertEqual(self.srv.ca_file, os.path.join(self.tls_dir, "ca.pem"))
        # a second server on the same folder reuses them
        before = read(self.srv.ca_file)
        with rs.RedistServer(self.root, tls=self.tls_dir) as s2:
            self.assertEqual(read(s2.ca_file), before)

    def curl(self, *args):
        return subprocess.run([CURL, "-sS", "--max-time", "20", *args],
                              capture_output=True, timeout=30)

    def test_curl_with_cacert(self):
        r = self.curl("--cacert", self.srv.ca_file, self.srv.url)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b'href="redistrib_9.1.0.json"', r.stdout)
        r = self.curl("--cacert", self.srv.ca_file, self.srv.url + APATH[1:])
        self.assertEqual(r.stdout, self.data[APATH])
        r = self.curl("--cacert", self.srv.ca_file, "-r", "100-", self.srv.url + APATH[1:])
        self.assertEqual(r.stdout, self.data[APATH][100:])
        # localhost is in the certificate too
        r = self.curl("--cacert", self.srv.ca_file,
                      "https://localhost:%d/redistrib_9.1.0.json" % self.srv.port)
        self.assertEqual(r.returncode, 0, r.stderr)
        # CURL_CA_BUNDLE works the same; no CA at all fails verification
        r = subprocess.run([CURL, "-sS", "-o", os.devnull, self.srv.url], capture_output=True,
                           env=dict(os.environ, CURL_CA_BUNDLE=self.srv.ca_file), timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run([CURL, "-sS", "-o", os.devnull, self.srv.url], capture_output=True,
                           env=dict(os.environ, CURL_CA_BUNDLE="/dev/null"), timeout=30)
        self.assertEqual(r.returncode, 77 if b"error setting" in r.stderr else 60, r.stderr)

    def test_curl_sees_a_cut(self):
        self.srv.cut(APATH, after=1234)
        r = self.curl("--cacert", self.srv.ca_file, self.srv.url + APATH[1:])
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(r.stdout), 1234)

    def test_python_ssl(self):
        with urllib.request.urlopen(self.srv.url + APATH[1:], context=self.ctx) as r:
            self.assertEqual(r.read(), self.data[APATH])
        # the default trust store does not know this CA
        with self.assertRaises(ssl.SSLCertVerificationError):
            s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
            try:
                ssl.create_default_context().wrap_socket(s, server_hostname="127.0.0.1")
            finally:
                s.close()
        # a client that never finishes its handshake does not block others
        idle = socket.create_connection(("127.0.0.1", self.srv.port))
        try:
            self.assertEqual(self.get("/")[0], 200)
        finally:
            idle.close()


class TestTLSFaults(TestFaults):
    """The fault tests again over HTTPS."""
    tls = True


class TestMirror(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="redist-mirror-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_build_mirror_shapes(self):
        files = {}
        for name in ("cudnn-linux-x86_64-9.19.0.56_cuda12-archive.tar.xz",
                     "cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz",
                     "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
                     "renamed.tar.xz"):
            files[name] = os.path.join(self.tmp, name)
            with open(files[name], "wb") as f:
                f.write(name.encode() * 100)
        root = os.path.join(self.tmp, "m")
        got = rs.build_mirror(root, [
            (files["cudnn-linux-x86_64-9.19.0.56_cuda12-archive.tar.xz"], "9.19.0.56",
             "linux-x86_64", "12"),
            (files["cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz"], "9.19.0.56",
             "linux-x86_64", 13),
            (files["renamed.tar.xz"], "9.14.0.64", "linux-sbsa", "12")],
            release_date="2025-01-02")
        self.assertEqual(got, [os.path.join(root, "redistrib_9.14.0.json"),
                               os.path.join(root, "redistrib_9.19.0.json")])
        with open(got[1]) as f:
            doc = json.load(f)
        self.assertEqual(doc["release_date"], "2025-01-02")
        cu = doc["cudnn"]
        self.assertEqual((cu["license"], cu["version"]), ("cudnn", "9.19.0.56"))
        self.assertEqual(sorted(cu["linux-x86_64"]), ["cuda12", "cuda13"])
        self.assertEqual(cu["cuda_variant"], ["12", "13"])
        for cuda in ("12", "13"):
            e = cu["linux-x86_64"]["cuda" + cuda]
            name = "cudnn-linux-x86_64-9.19.0.56_cuda%s-archive.tar.xz" % cuda
            self.assertEqual(e["relative_path"], "cudnn/linux-x86_64/" + name)
            data = read(files[name])
            self.assertEqual(e["sha256"], sha256(data))
            self.assertEqual(e["md5"], hashlib.md5(data).hexdigest())
            self.assertEqual(e["size"], str(len(data)))
            self.assertEqual(read(os.path.join(root, e["relative_path"])), data)
        with open(got[0]) as f:
            e = json.load(f)["cudnn"]["linux-sbsa"]["cuda12"]
        self.assertEqual(e["relative_path"], "cudnn/linux-sbsa/renamed.tar.xz")
        # the flat 8.9.7.29 shape, named by the full version
        flat = rs.build_mirror(root, [(files["cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"],
                                       "8.9.7.29", "linux-x86_64", "12")], flat=True, link=True)
        self.assertEqual(flat, [os.path.join(root, "redistrib_8.9.7.29.json")])
        with open(flat[0]) as f:
            e = json.load(f)["cudnn"]["linux-x86_64"]
        self.assertEqual(e["relative_path"],
                         "cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz")
        self.assertEqual(sorted(os.listdir(root)),
                         ["cudnn", "cudnn_jit", "cudnn_samples", "redistrib_8.9.7.29.json",
                          "redistrib_9.14.0.json", "redistrib_9.19.0.json"])

    def test_mirror_command(self):
        a = os.path.join(self.tmp, ARCH)
        with open(a, "wb") as f:
            f.write(b"abc")
        root = os.path.join(self.tmp, "m")
        r = subprocess.run([sys.executable, SERVER_PY, "mirror", "--root", root,
                            "--archive", a, "9.1.0.70", "linux-x86_64", "12"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), os.path.join(root, "redistrib_9.1.0.json"))
        with open(r.stdout.strip()) as f:
            self.assertEqual(json.load(f)["cudnn"]["linux-x86_64"]["cuda12"]["size"], "3")


class TestCommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="redist-cli-")
        self.root, self.data = make_tree(self.tmp)
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, *args):
        pf = os.path.join(self.tmp, "port")
        self.proc = subprocess.Popen([sys.executable, SERVER_PY, "--root", self.root,
                                      "--port-file", pf, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.exists(pf):
            if self.proc.poll() is not None:
                self.fail("server exited: %s" % self.proc.stderr.read().decode())
            if time.monotonic() > deadline:
                self.fail("no port file")
            time.sleep(0.02)
        with open(pf) as f:
            return int(f.read())

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(10)
        err = self.proc.stderr.read().decode()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc, err

    def test_port_file_control_url_and_sigterm(self):
        port = self.start("--fault", '{"kind": "status", "path": "/", "code": 503}')
        url = "http://127.0.0.1:%d/" % port
        st = raw_get(port, "/")[0]
        self.assertEqual(st, 503)  # the --fault
        with urllib.request.urlopen(url) as r:
            self.assertIn(b'href="redistrib_9.1.0.json"', r.read())
        ctl = rs.ServerControl(url)
        ctl.cut(APATH, after=7)
        self.assertEqual(len(raw_get(port, APATH)[2]), 7)
        with urllib.request.urlopen(url + APATH[1:]) as r:
            self.assertEqual(r.read(), self.data[APATH])
        s = ctl.stats(APATH)
        self.assertEqual((s["requests"], s["bytes_sent"]), (2, SIZE + 7))
        rc, err = self.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn("serving", err)

    def test_control_file_stats_file_and_tls(self):
        cf = os.path.join(self.tmp, "control.json")
        sf = os.path.join(self.tmp, "stats.json")
        tls = os.path.join(self.tmp, "tls")
        port = self.start("--control-file", cf, "--stats-file", sf, "--tls-dir", tls)
        ctx = ssl.create_default_context(cafile=os.path.join(tls, "ca.pem"))
        rs.write_control_file(cf, {"faults": [{"kind": "ignore_range", "path": APATH}]})
        st, _, body, _ = raw_get(port, APATH, [("Range", "bytes=10-")], tls_ctx=ctx)
        self.assertEqual((st, len(body)), (200, SIZE))
        self.assertFalse(os.path.exists(cf))  # taken
        self.assertEqual(raw_get(port, APATH, [("Range", "bytes=10-")], tls_ctx=ctx)[0], 206)
        with open(sf) as f:
            doc = json.load(f)
        self.assertEqual(doc["paths"][APATH]["statuses"], [200, 206])
        self.assertEqual(doc["paths"][APATH]["faults"], ["ignore_range"])
        rs.write_control_file(cf, {"reset_stats": True, "fault": {"kind": "nope"}})
        raw_get(port, "/", tls_ctx=ctx)
        self.assertTrue(os.path.exists(cf + ".bad"))
        r = subprocess.run([CURL, "-sS", "--max-time", "20", "--cacert",
                            os.path.join(tls, "ca.pem"), "https://127.0.0.1:%d/" % port],
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"cudnn_jit/", r.stdout)
        rc, err = self.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn("bad control file", err)

    def test_bad_root(self):
        r = subprocess.run([sys.executable, SERVER_PY, "--root", os.path.join(self.tmp, "no")],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no folder", r.stderr)


if __name__ == "__main__":
    unittest.main()

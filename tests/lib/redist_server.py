#!/usr/bin/env python3
"""A local stand-in for NVIDIA's cuDNN redist server, with fault injection.

Stdlib only (Python >= 3.11, Debian 12's /usr/bin/python3).  It serves a
folder laid out like https://developer.download.nvidia.com/compute/cudnn/redist/
(redistrib_X.Y.Z.json at the top, archives at each entry's relative_path,
e.g. cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz)
over HTTP/1.1 or HTTPS on 127.0.0.1, and can be told to misbehave.

In a test (in-process):

    from redist_server import RedistServer, build_mirror
    build_mirror(root, [(archive, "9.1.0.70", "linux-x86_64", "12")])
    with RedistServer(root, tls=None) as srv:      # tls=DIR for HTTPS
        srv.cut("*.tar.xz", after=1000)            # next GET of an archive
        ... run cudnnctl against srv.url ...
        srv.stats("/cudnn/linux-x86_64/...")       # requests, ranges, bytes

From another process: `redist_server.py --root DIR --port-file F`, then
POST /_control and GET /_stats (ServerControl(url) wraps both), or a
--control-file.  The fault and stats API and the control protocol are
described on RedistServer and in control_body().  `redist_server.py mirror`
builds a mirror folder from archives (build_mirror).

Serving
  GET/HEAD of a file: 200 with Content-Length, Accept-Ranges, Last-Modified
  and ETag; Range "bytes=N-", "bytes=N-M" and "bytes=-S" get 206 with
  Content-Range (M past the end is clamped); N at or past the end, or a
  zero suffix, gets 416 with "Content-Range: bytes */SIZE"; a malformed or
  multi-range Range is ignored (200); If-Range that does not match the
  ETag/Last-Modified is ignored too.  A folder URL ending in '/' gets a
  generated nginx-style autoindex (folders first, then files, each sorted;
  "../" except at the top; dot-files hidden); a folder URL without the '/'
  gets a 301 to it.  Anything outside the root is 404.
"""
import argparse
import datetime
import email.utils
import fcntl
import fnmatch
import html
import importlib.util
import itertools
import json
import mimetypes
import os
import shutil
import signal
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
MKCUDNN = os.path.join(HERE, "..", "fixtures", "mkcudnn.py")

FAULT_KINDS = ("cut", "ignore_range", "short_range", "status", "stall", "tamper", "slow",
               "lie_length", "changed", "wrong_start", "gather")
# which requests a fault of each kind is used up by (see RedistServer)
BODY_FAULTS = ("cut", "stall", "tamper", "slow")
CONTROL_PATHS = ("/_control", "/_stats", "/_faults")
CHUNK = 64 * 1024
TYPES = {".json": "application/json", ".xz": "application/x-xz", ".zip": "application/zip",
         ".gz": "application/gzip", ".tgz": "application/gzip", ".tar": "application/x-tar",
         ".txt": "text/plain", ".html": "text/html"}
# the keyword arguments each kind takes, with their defaults
FAULT_PARAMS = {
    "cut": {"after": 0, "reset": False},
    "ignore_range": {},
    "short_range": {"length": 1024},
    "status": {"code": 503, "body": None, "headers": None},
    "stall": {"after": 0, "seconds": 2.0, "resume": False, "from_byte": 0, "to_byte": None},
    "tamper": {"offset": None, "length": 1},
    "slow": {"rate": 65536},
    "lie_length": {"delta": 1000},
    "changed": {"from_byte": 1},
    "wrong_start": {"shift": 100, "from_byte": 1},
    "gather": {"seconds": 20.0},
}


class _Abort(Exception):
    """The connection was cut on purpose or by the client: stop this request."""


# ---------------------------------------------------------------- faults
def make_fault(kind, path="*", count=1, **params):
    """A fault as a plain dict (what the control protocol carries).

    kind: one of FAULT_KINDS.  path: the URL path
    it applies to ('/' added in front when missing; shell wildcards as in
    fnmatch, so '*' is every path and '*.tar.xz' every archive).  count: how
    many requests it applies to before it clears itself (None: until
    cleared).  params: see FAULT_PARAMS and RedistServer's methods.
    """
    if kind not in FAULT_PARAMS:
        raise ValueError("unknown fault kind %r (one of %s)" % (kind, ", ".join(FAULT_KINDS)))
    extra = set(params) - set(FAULT_PARAMS[kind])
    if extra:
        raise ValueError("fault %s takes no %s" % (kind, ", ".join(sorted(extra))))
    if count is not None and (not isinstance(count, int) or isinstance(count, bool)
                              or count < 1):
        raise ValueError("count must be a positive integer or None, not %r" % (count,))
    if not isinstance(path, str) or not path:
        raise ValueError("path must be a non-empty string")
    f = {"kind": kind, "path": path if path.startswith("/") or path == "*" else "/" + path,
         "count": count}
    for k, default in FAULT_PARAMS[kind].items():
        f[k] = params.get(k, default)
    if f.get("to_byte") is not None and (not isinstance(f["to_byte"], int) or f["to_byte"] < 0):
        raise ValueError("to_byte must be a non-negative integer or None")
    for k in ("after", "length", "rate", "from_byte", "shift"):
        if k in f and (not isinstance(f[k], int) or isinstance(f[k], bool) or f[k] < 0):
            raise ValueError("%s must be a non-negative integer" % k)
    if kind in ("slow", "tamper", "short_range") and f.get("rate", f.get("length")) < 1:
        raise ValueError("%s must be at least 1" % ("rate" if kind == "slow" else "length"))
    if kind == "status" and not (isinstance(f["code"], int) and 100 <= f["code"] <= 599):
        raise ValueError("code must be an HTTP status (100-599)")
    if kind == "lie_length" and (not isinstance(f["delta"], int) or isinstance(f["delta"], bool)
                                 or f["delta"] == 0):
        raise ValueError("delta must be a non-zero integer")
    if kind == "gather" and not isinstance(count, int):
        raise ValueError("gather needs a count: the requests to hold together")
    if kind in ("stall", "gather") and not (isinstance(f["seconds"], (int, float)) and f["seconds"] >= 0):
        raise ValueError("seconds must be a non-negative number")
    if kind == "tamper" and f["offset"] is not None and (not isinstance(f["offset"], int)
                                                         or f["offset"] < 0):
        raise ValueError("offset must be a non-negative integer or None")
    return f


def _path_matches(pattern, path):
    return pattern == "*" or pattern == path or fnmatch.fnmatchcase(path, pattern)


# ---------------------------------------------------------------- state
class _State:
    """Faults and the request log, shared by the handler threads."""

    def __init__(self):
        self.lock = threading.Condition()
        self.faults = []
        self.log = []
        self.inflight = 0
        self.gathering = {}  # a gather fault's id: the requests it holds
        self.ids = itertools.count(1)
        self.seq = itertools.count(1)

    def add(self, fault):
        with self.lock:
            fault = dict(fault, id=next(self.ids), total=fault["count"])
            self.faults.append(fault)
            return dict(fault)

    def clear(self):
        with self.lock:
            self.faults.clear()

    def list(self):
        with self.lock:
            return [dict(f) for f in self.faults]

    def take(self, path, kinds, start=0):
        """Use up, for each kind in kinds, the oldest fault matching path
        (a `changed` fault only by a body from its from_byte on)."""
        got = {}
        with self.lock:
            for f in list(self.faults):
                if f["kind"] in kinds and f["kind"] not in got and _path_matches(f["path"], path) \
                        and start >= f.get("from_byte", 0) \
                        and (f.get("to_byte") is None or start < f["to_byte"]):
                    got[f["kind"]] = dict(f)
                    if f["count"] is not None:
                        f["count"] -= 1
                        if f["count"] <= 0:
                            self.faults.remove(f)
        return got

    def begin(self, method, path, rng, conn):
        rec = {"seq": next(self.seq), "conn": conn, "method": method, "path": path,
               "range": rng, "status": None, "length": None, "sent": 0, "faults": [],
               "complete": False, "start": time.time(), "end": None, "last_write": None}
        with self.lock:
            self.log.append(rec)
            self.inflight += 1
        return rec

    def end(self, rec):
        with self.lock:
            rec["end"] = time.time()
            self.inflight -= 1
            self.lock.notify_all()

    def wait_idle(self, timeout):
        with self.lock:
            return self.lock.wait_for(lambda: self.inflight == 0, timeout)

    def reset(self, settle=1.0):
        """Forget the log, after waiting up to settle seconds for running
        requests to end (one still running after that is not counted)."""
        self.wait_idle(settle)
        with self.lock:
            self.log = []

    def requests(self, path=None):
        with self.lock:
            return [dict(r, faults=list(r["faults"])) for r in self.log
                    if path is None or _path_matches(path, r["path"])]

    def stats(self):
        out = {}
        for r in self.requests():
            s = out.setdefault(r["path"], _empty_stats())
            s["requests"] += 1
            s["methods"].append(r["method"])
            s["ranges"].append(r["range"])
            s["statuses"].append(r["status"])
            s["bytes_sent"] += r["sent"]
            s["faults"].extend(r["faults"])
        return out


def _empty_stats():
    return {"requests": 0, "methods": [], "ranges": [], "statuses": [], "bytes_sent": 0,
            "faults": []}


def control_body(body, state):
    """Apply one control message (POST /_control or the control file).

    body is a JSON object; its keys are applied in this order:
      "clear_faults": true      remove every fault
      "reset_stats": true       forget the request log (as reset_stats())
      "faults": [FAULT, ...]    add faults; "fault": FAULT adds one
    where FAULT is {"kind": ..., "path": "*", "count": 1, params...} as in
    make_fault.  Returns {"ok": true, "faults": [the active faults]}.
    Raises ValueError for a malformed message (nothing is applied then).
    """
    if not isinstance(body, dict):
        raise ValueError("the control message must be a JSON object")
    unknown = set(body) - {"clear_faults", "reset_stats", "faults", "fault"}
    if unknown:
        raise ValueError("unknown control key(s): %s" % ", ".join(sorted(unknown)))
    specs = list(body.get("faults") or [])
    if body.get("fault") is not None:
        specs.append(body["fault"])
    faults = []
    for spec in specs:
        if not isinstance(spec, dict) or "kind" not in spec:
            raise ValueError("a fault must be an object with a kind")
        faults.append(make_fault(**spec))
    if body.get("clear_faults"):
        state.clear()
    if body.get("reset_stats"):
        state.reset()
    for f in faults:
        state.add(f)
    return {"ok": True, "faults": state.list()}


# ---------------------------------------------------------------- TLS
_TLS_CONF = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = %(cn)s
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
"""


def free_port():
    """A port of 127.0.0.1 that nothing listens on (bound, then let go)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ensure_tls_files(tls_dir, openssl="openssl"):
    """Make DIR/ca.pem, DIR/server.pem and DIR/server.key unless all three exist.

    A self-signed CA (its key stays in DIR/ca.key) and a server certificate
    it signs for IP 127.0.0.1 and DNS localhost, RSA 2048, valid 10 years,
    made with the openssl command-line tool.  Safe to call from several
    processes at once (a lock file in DIR).  Returns (ca, cert, key) paths.
    """
    os.makedirs(tls_dir, exist_ok=True)
    ca, cert, key = (os.path.join(tls_dir, n) for n in ("ca.pem", "server.pem", "server.key"))
    with open(os.path.join(tls_dir, ".lock"), "w") as lockf:
        fcntl.flock(lockf, fcntl.LOCK_EX)
        if all(os.path.isfile(p) for p in (ca, cert, key)):
            return ca, cert, key
        with tempfile.TemporaryDirectory(dir=tls_dir, prefix=".gen-") as tmp:
            def t(name):
                return os.path.join(tmp, name)

            def run(cn, *args):
                conf = t("openssl-%s.cnf" % cn.split()[0])
                with open(conf, "w") as f:
                    f.write(_TLS_CONF % {"cn": cn})
                r = subprocess.run([openssl, *args, "-config" if args[0] == "req" else
                                    "-extfile", conf], capture_output=True, text=True)
                if r.returncode:
                    raise RuntimeError("openssl %s failed: %s" % (args[0], r.stderr.strip()))

            run("cudnnctl test CA", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                "-keyout", t("ca.key"), "-out", t("ca.pem"), "-days", "3650",
                "-sha256", "-extensions", "ca_ext")
            run("127.0.0.1", "req", "-new", "-newkey", "rsa:2048", "-nodes",
                "-keyout", t("server.key"), "-out", t("server.csr"))
            run("127.0.0.1", "x509", "-req", "-in", t("server.csr"), "-CA", t("ca.pem"),
                "-CAkey", t("ca.key"), "-set_serial", str(int(time.time() * 1000)),
                "-out", t("server.pem"), "-days", "3650", "-sha256",
                "-extensions", "server_ext")
            os.chmod(t("ca.key"), 0o600)
            os.chmod(t("server.key"), 0o600)
            for name in ("ca.key", "server.key", "server.pem", "ca.pem"):
                os.replace(t(name), os.path.join(tls_dir, name))
    return ca, cert, key


# ---------------------------------------------------------------- HTTP
class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    redist = None  # the RedistServer

    def server_bind(self):
        # HTTPServer.server_bind asks DNS for the host's name (socket.getfqdn),
        # which can hang where there is no resolver; not needed here
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def finish_request(self, request, client_address):
        r = self.redist
        sock = request
        try:
            sock.settimeout(r.idle_timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if r.ssl_context is not None:
                sock = r.ssl_context.wrap_socket(request, server_side=True)
        except (OSError, ValueError):
            request.close()
            return
        with r._conn_lock:
            r._conns.add(sock)
        try:
            self.RequestHandlerClass(sock, client_address, self)
        finally:
            with r._conn_lock:
                r._conns.discard(sock)
            if sock is not request:
                try:
                    sock.close()
                except OSError:
                    pass

    def handle_error(self, request, client_address):
        if self.redist.verbose:
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "redist-server/1"
    _conn_ids = itertools.count(1)

    # ---- plumbing
    def setup(self):
        super().setup()
        self.conn_id = next(self._conn_ids)
        self.redist = self.server.redist

    def handle(self):
        try:
            super().handle()
        except _Abort:
            self.close_connection = True
        except (OSError, ssl.SSLError, ValueError):
            # the client went away (reset, broken pipe, timeout, TLS error)
            self.close_connection = True

    def log_message(self, fmt, *args):
        if self.redist.verbose:
            sys.stderr.write("redist-server: %s %s\n" % (self.address_string(), fmt % args))

    def do_GET(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def _dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path or "/")
        if not path.startswith("/"):
            path = "/" + path
        if path in CONTROL_PATHS:
            return self._control(path, url.query)
        self.redist._poll_control_file()
        st = self.redist.state
        self.rec = st.begin(self.command, path, self.headers.get("Range"), self.conn_id)
        try:
            self._serve(path)
            self.rec["complete"] = self.rec["status"] is not None and \
                (self.command == "HEAD" or self.rec["sent"] == (self.rec["length"] or 0))
        finally:
            st.end(self.rec)
            self.redist._write_stats_file()

    def _start(self, code, headers, length):
        """Send the status line and headers (Content-Length: length)."""
        self.rec["status"] = code
        self.rec["length"] = length
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

    def _simple(self, code, text, headers=(), ctype="text/plain; charset=utf-8"):
        body = text.encode("utf-8") if isinstance(text, str) else text
        self._start(code, [("Content-Type", ctype), *headers], len(body))
        if self.command != "HEAD":
            self.wfile.write(body)
            self.rec["sent"] += len(body)

    # ---- control
    def _control(self, path, query):
        st = self.redist.state
        try:
            if path == "/_control" and self.command == "POST":
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b"{}"
                try:
                    out = control_body(json.loads(raw or b"{}"), st)
                    code = 200
                except (ValueError, TypeError) as e:
                    out, code = {"ok": False, "error": str(e)}, 400
            elif path == "/_stats" and self.command in ("GET", "HEAD"):
                q = urllib.parse.parse_qs(query)
                settle = float(q.get("settle", ["1"])[0])
                st.wait_idle(settle)
                out, code = {"paths": st.stats(), "requests": st.requests()}, 200
            elif path == "/_faults" and self.command in ("GET", "HEAD"):
                out, code = {"faults": st.list()}, 200
            else:
                out, code = {"ok": False, "error": "%s not allowed on %s" %
                             (self.command, path)}, 405
        except ValueError as e:
            out, code = {"ok": False, "error": str(e)}, 400
        body = (json.dumps(out, indent=1) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    # ---- serving
    def _serve(self, path):
        r = self.redist
        if self.command == "POST":
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
        got = r.state.take(path, ("status",))
        if "status" in got:
            f = got["status"]
            self.rec["faults"].append("status")
            body = f["body"] if f["body"] is not None else \
                "injected status %d for %s\n" % (f["code"], path)
            if f["code"] < 200 or f["code"] in (204, 304):
                body = ""  # no body allowed
            hdrs = list((f["headers"] or {}).items())
            if f["code"] >= 400:
                self.close_connection = True
            return self._simple(f["code"], body, hdrs)
        if self.command == "POST":
            return self._simple(405, "POST is only for /_control\n", [("Allow", "GET, HEAD")])
        fs = r._resolve(path)
        if fs is None or not os.path.exists(fs):
            return self._simple(404, "404 Not Found: %s\n" % path)
        if os.path.isdir(fs):
            if not path.endswith("/"):
                loc = urllib.parse.quote(path + "/")
                return self._simple(301, "Moved to %s\n" % loc, [("Location", loc)])
            return self._send_body(path, _autoindex(path, fs), None, "text/html; charset=utf-8")
        try:
            f = open(fs, "rb")
        except OSError:
            return self._simple(403, "403 Forbidden: %s\n" % path)
        with f:
            return self._send_body(path, None, f, _content_type(fs))

    def _send_body(self, path, data, fobj, ctype):
        """A 200/206/416 of data (bytes) or fobj (an open file), with faults."""
        st = self.redist.state
        if fobj is not None:
            fst = os.fstat(fobj.fileno())
            size = fst.st_size
            mtime = fst.st_mtime
        else:
            size, mtime = len(data), time.time()
        # the file replaced by another of its size since the client's
        # first request: other bytes, other validators
        changed = fobj is not None and self.command == "GET" and \
            st.take(path, ("changed",), self._range_start(size))
        if changed:
            self.rec["faults"].append("changed")
            mtime += 3600
        last_mod = email.utils.formatdate(mtime, usegmt=True)
        etag = '"%x-%x"' % (size, int(mtime * 1e6))
        headers = [("Content-Type", ctype), ("Last-Modified", last_mod)]
        if fobj is not None:
            headers += [("Accept-Ranges", "bytes"), ("ETag", etag)]
        rng_hdr = self.headers.get("Range") if fobj is not None else None
        if rng_hdr is not None:
            if_range = self.headers.get("If-Range")
            if if_range is not None and if_range.strip() not in (etag, last_mod):
                rng_hdr = None
        if rng_hdr is not None and st.take(path, ("ignore_range",)):
            self.rec["faults"].append("ignore_range")
            rng_hdr = None
        rng = _parse_range(rng_hdr, size) if rng_hdr is not None else None
        if rng == "unsatisfiable":
            return self._simple(416, "416 Range Not Satisfiable\n",
                                [("Content-Range", "bytes */%d" % size)])
        if rng is None:
            code, start, end = 200, 0, size
        else:
            code, (start, end) = 206, rng
            # a server (or CDN) that caps the size of a range: a valid 206
            # of at most `length` bytes, whatever was asked for
            short = st.take(path, ("short_range",)) if self.command == "GET" else {}
            if "short_range" in short:
                self.rec["faults"].append("short_range")
                end = min(end, start + short["short_range"]["length"])
            # a valid 206 of another span than asked for: from `shift`
            # bytes before the asked start (overlapping what the client has)
            wrong = st.take(path, ("wrong_start",), start) if self.command == "GET" else {}
            if wrong and start >= wrong["wrong_start"]["shift"]:
                self.rec["faults"].append("wrong_start")
                start -= wrong["wrong_start"]["shift"]
            headers.append(("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size)))
        faults = st.take(path, BODY_FAULTS, start) if self.command == "GET" else {}
        if changed:
            faults["changed"] = True
        lie = st.take(path, ("lie_length",)) if self.command == "GET" else {}
        length = end - start
        if lie:
            # a Content-Length that is not the body's: the body as it is,
            # then the end of the connection (the only end it can have)
            self.rec["faults"].append("lie_length")
            length = max(0, length + lie["lie_length"]["delta"])
            self.close_connection = True
        self.rec["faults"].extend(sorted(k for k in faults if k != "changed"))
        self._start(code, headers, length)
        if self.command == "HEAD":
            return
        faults.update(st.take(path, ("gather",)))
        self._write_range(data, fobj, start, end, size, faults)
        if lie:
            self._close(reset=False)

    def _gather(self, g):
        """The "gather" fault: this answer's body waits after its first
        block until as many requests as the fault's count wait with it (all
        then go on, "gathered"), or for its seconds ("gather_timeout")."""
        st = self.redist.state
        self.wfile.flush()
        with st.lock:
            st.gathering[g["id"]] = st.gathering.get(g["id"], 0) + 1
            st.lock.notify_all()
            ok = st.lock.wait_for(lambda: st.gathering[g["id"]] >= g["total"], g["seconds"])
        self.rec["faults"].append("gathered" if ok else "gather_timeout")

    def _range_start(self, size):
        """Where the body of this request would start (0 without a
        usable Range)."""
        rng = _parse_range(self.headers.get("Range"), size) \
            if self.headers.get("Range") is not None else None
        return rng[0] if isinstance(rng, tuple) else 0

    def _write_range(self, data, fobj, start, end, size, faults):
        r = self.redist
        cut = faults.get("cut")
        stall = faults.get("stall")
        slow = faults.get("slow")
        tamper = faults.get("tamper")
        if tamper is not None:
            t_off = tamper["offset"] if tamper["offset"] is not None else size // 2
            t_end = min(size, t_off + tamper["length"])
        sent = 0  # bytes of this body written
        total = end - start
        t0 = time.monotonic()
        if fobj is not None and not faults and not r.rate_total and total:
            # nothing shapes this body: the kernel sends the file, as
            # nginx's "sendfile on" does, so that the server takes little
            # of the CPU a benchmark's client shares with it
            self.wfile.flush()
            self.rec["last_write"] = time.time()
            n = 0  # a client gone mid-body: what it got is not known
            try:
                n = self.connection.sendfile(fobj, start, total)
            except OSError:
                pass
            self.rec["sent"] += n
            if n != total:
                self._close(reset=False)  # the file shrank, or the client left
            return
        if fobj is not None:
            fobj.seek(start)
        pos = start
        while sent < total:
            # how far this block may go before the next fault triggers
            n = min(CHUNK, total - sent)
            if slow is not None:
                n = min(n, max(1, slow["rate"] // 20))
            if r.rate_total:
                n = min(n, max(1, r.rate_total // 100))
            if faults.get("gather"):
                n = min(n, 1)  # one byte, then the wait: the client has begun
            if stall is not None and sent < stall["after"]:
                n = min(n, stall["after"] - sent)
            if cut is not None:
                n = min(n, cut["after"] - sent) if sent < cut["after"] else 0
            if stall is not None and sent >= stall["after"]:
                self.wfile.flush()
                r._wake.wait(stall["seconds"])
                if not stall["resume"] or r._stop.is_set():
                    self._close(reset=False)
                stall = None
                continue
            if n <= 0:  # the cut point
                self._close(reset=cut["reset"])
            block = data[pos:pos + n] if fobj is None else fobj.read(n)
            if not block:
                self._close(reset=False)  # the file shrank under us
            if r.rate_total:
                r._take_rate(len(block))
            if faults.get("changed"):
                block = bytes(b ^ 0x5A for b in block)
            if tamper is not None and pos < t_end and pos + len(block) > t_off:
                b = bytearray(block)
                for i in range(max(t_off, pos), min(t_end, pos + len(block))):
                    b[i - pos] ^= 0xFF
                block = bytes(b)
            # taken before the write: a client cannot have this request's
            # last byte, and so start its next request, before this time
            self.rec["last_write"] = time.time()
            self.wfile.write(block)
            sent += len(block)
            pos += len(block)
            self.rec["sent"] += len(block)
            if faults.get("gather"):
                self._gather(faults.pop("gather"))
            if slow is not None:
                ahead = sent / slow["rate"] - (time.monotonic() - t0)
                if ahead > 0 and r._stop.wait(ahead):
                    self._close(reset=False)
        if cut is not None and cut["after"] <= sent:
            self._close(reset=cut["reset"])  # a cut at the very end: no keep-alive either
        if stall is not None and sent >= stall["after"] and stall["after"] == total:
            r._wake.wait(stall["seconds"])
            if not stall["resume"]:
                self._close(reset=False)

    def _close(self, reset):
        """End the connection now: FIN (reset=False) or RST (reset=True)."""
        self.close_connection = True
        sock = self.connection
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            if reset:
                # an RST throws away what is still queued: let the client's
                # kernel have the bytes sent so far first
                _wait_sent(sock, 2.0)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                os.close(sock.detach())
            else:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _Abort()


def _wait_sent(sock, timeout):
    """Wait until the peer has acknowledged every byte written (Linux:
    TIOCOUTQ is the bytes not yet acknowledged), at most timeout seconds."""
    deadline = time.monotonic() + timeout
    buf = bytearray(struct.calcsize("i"))
    while time.monotonic() < deadline:
        try:
            fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, buf)
        except OSError:
            return
        if struct.unpack("i", buf)[0] == 0:
            return
        time.sleep(0.005)


def _parse_range(value, size):
    """(start, end) for a single satisfiable byte range, 'unsatisfiable', or None
    (ignore the header: malformed, not bytes, or several ranges)."""
    value = value.strip()
    if not value.lower().startswith("bytes="):
        return None
    spec = value[6:].strip()
    if "," in spec or "-" not in spec:
        return None
    first, last = (s.strip() for s in spec.split("-", 1))
    if first == "":
        if not last.isdigit():
            return None
        n = int(last)
        if n == 0 or size == 0:
            return "unsatisfiable"
        return max(0, size - n), size
    if not first.isdigit() or (last and not last.isdigit()):
        return None
    a = int(first)
    if last and int(last) < a:
        return None
    if a >= size:
        return "unsatisfiable"
    b = min(int(last), size - 1) if last else size - 1
    return a, b + 1


def _content_type(path):
    ext = os.path.splitext(path)[1].lower()
    return TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"


def _autoindex(urlpath, fspath):
    """nginx-style autoindex page of the folder fspath, as bytes."""
    dirs, files = [], []
    for e in os.scandir(fspath):
        if e.name.startswith("."):
            continue
        try:
            st = e.stat()
        except OSError:
            continue
        (dirs if e.is_dir() else files).append((e.name, st))
    title = html.escape(urlpath)
    out = ["<html>\r\n<head><title>Index of %s</title></head>\r\n<body>\r\n"
           "<h1>Index of %s</h1><hr><pre>" % (title, title)]
    if urlpath != "/":
        out.append('<a href="../">../</a>\r\n')
    for name, st, is_dir in sorted((n, s, True) for n, s in dirs) + \
            sorted((n, s, False) for n, s in files):
        shown = name + ("/" if is_dir else "")
        href = urllib.parse.quote(name) + ("/" if is_dir else "")
        when = datetime.datetime.fromtimestamp(st.st_mtime, datetime.timezone.utc)
        size = "-" if is_dir else str(st.st_size)
        pad = " " * max(1, 51 - len(shown))
        out.append('<a href="%s">%s</a>%s%s %19s\r\n' % (
            href, html.escape(shown), pad, when.strftime("%d-%b-%Y %H:%M"), size))
    out.append("</pre><hr></body>\r\n</html>\r\n")
    return "".join(out).encode("utf-8")


# ---------------------------------------------------------------- server
class _FaultMethods:
    """One method per fault kind (see RedistServer), for the server in
    this process and for one in another (ServerControl); each class gives
    add_fault."""

    def cut(self, path="*", after=0, count=1, reset=False):
        return self.add_fault("cut", path, count, after=after, reset=reset)

    def ignore_range(self, path="*", count=1):
        return self.add_fault("ignore_range", path, count)

    def short_range(self, path="*", length=1024, count=1):
        return self.add_fault("short_range", path, count, length=length)

    def lie_length(self, path="*", delta=1000, count=1):
        return self.add_fault("lie_length", path, count, delta=delta)

    def changed(self, path="*", from_byte=1, count=1):
        return self.add_fault("changed", path, count, from_byte=from_byte)

    def wrong_start(self, path="*", shift=100, from_byte=1, count=1):
        return self.add_fault("wrong_start", path, count, shift=shift, from_byte=from_byte)

    def fail(self, path="*", code=503, count=1, body=None, headers=None):
        return self.add_fault("status", path, count, code=code, body=body, headers=headers)

    def stall(self, path="*", after=0, seconds=2.0, count=1, resume=False, from_byte=0,
              to_byte=None):
        return self.add_fault("stall", path, count, after=after, seconds=seconds, resume=resume,
                              from_byte=from_byte, to_byte=to_byte)

    def tamper(self, path="*", offset=None, length=1, count=1):
        return self.add_fault("tamper", path, count, offset=offset, length=length)

    def slow(self, path="*", rate=65536, count=1):
        return self.add_fault("slow", path, count, rate=rate)

    def gather(self, path="*", count=2, seconds=20.0):
        return self.add_fault("gather", path, count, seconds=seconds)


class RedistServer(_FaultMethods):
    """The server, in this process, on its own threads.

    RedistServer(root, tls=None, host="127.0.0.1", port=0, control_file=None,
                 stats_file=None, verbose=False, idle_timeout=30)
      root          the folder served at "/"
      tls           a folder for ca.pem/server.pem/server.key (made if
                    missing, see ensure_tls_files): serve HTTPS
      control_file  a file checked before each request: when it exists it is
                    taken (renamed away), read as a control message
                    (control_body) and deleted; write it with
                    write_control_file (atomically)
      stats_file    rewritten (atomically) with GET /_stats's JSON after
                    each request
    start() -> self; stop(); also a context manager.  After start():
    .port, .url ("http://127.0.0.1:PORT/" or "https://..."), .ca_file (the
    CA's ca.pem with tls, else None), .client_ssl_context().

    Faults (each returns the fault dict, with its "id"): path is a URL path
    or fnmatch pattern ('*' is all), count the requests it lasts (None:
    until clear_faults).  Several kinds can apply to one request (e.g.
    ignore_range with cut); of each kind the oldest matching fault is used.
      cut(path, after=0, count=1, reset=False)
          headers with the full Content-Length, then `after` bytes of the
          body, then the connection is closed (FIN; RST with reset=True)
      ignore_range(path, count=1)
          a request with Range gets 200 and the whole file (used up only by
          requests that carry a Range header)
      short_range(path, length=1024, count=1)
          a request with Range gets a valid 206 of at most `length` bytes
          from its start (Content-Range and Content-Length say so), as a
          server that caps the size of a range (used up only by GETs that
          carry a Range header)
      fail(path, code=503, count=1, body=None, headers=None)
          answer `code` with a small text body (or `body`) and the extra
          headers (e.g. {"Location": ...} for a redirect, {"Retry-After":
          "1"}); codes >= 400 close the connection.  Used up by any request.
      stall(path, after=0, seconds=2.0, count=1, resume=False)
          headers and `after` bytes, then nothing for `seconds`, then close
          (or send the rest with resume=True)
      tamper(path, offset=None, length=1, count=1)
          bytes [offset, offset+length) of the file (offset None: the middle,
          size // 2) are inverted (XOR 0xFF); same length; a Range that
          misses them is served unchanged
      slow(path, rate=65536, count=1)
          the body at about `rate` bytes per second
      lie_length(path, delta=1000, count=1)
          Content-Length is the body's length plus delta (non-zero, may be
          negative); the body is sent as it is and the connection closed
      wrong_start(path, shift=100, from_byte=1, count=1)
          a request with Range from byte N >= from_byte gets a valid 206
          that starts shift bytes earlier (Content-Range says so): a span
          that overlaps what the client already has
      changed(path, from_byte=1, count=1)
          the file is another of the same size: every byte XOR 0x5A, its
          ETag and Last-Modified an hour later (so If-Range with the old
          ones does not match); used up only by GETs whose body would
          start at or after from_byte (from_byte=1: ranges after the first)
      add_fault(kind, path="*", count=1, **params)   the same, by kind name
    rate_total=BYTES (--rate-total): at most BYTES of bodies a second over
    all connections together (the link as the limit; slow() caps each
    request on its own).
    cut, stall, tamper and slow are used up only by GET responses that
    carry a body (200/206 of a file or a folder listing), not by HEAD,
    404 or 416.
      faults() -> [fault dicts], clear_faults()

    Statistics (control requests to /_control, /_stats, /_faults are not
    counted):
      stats(path=None, settle=1.0)
          {path: {"requests": n, "methods": [...], "ranges": [Range header
          or None, ...], "statuses": [...], "bytes_sent": body bytes written
          to the socket, "faults": [kinds applied, ...]}}; with path (exact or
          pattern), that path's dict (zeros if never asked, patterns summed).
          First waits up to `settle` seconds for running requests to end.
      requests(path=None, settle=1.0) -> the request log, oldest first: dicts
          with seq, conn (connection number: same number = keep-alive
          reuse), method, path, range, status, length (Content-Length sent),
          sent, faults, complete, start, end (time.time()).
      reset_stats(settle=1.0)
          forget the log, after waiting up to `settle` seconds for running
          requests to end (what one still running sends is not counted)
      wait_idle(timeout) -> True when no request is running.
    """

    def __init__(self, root, tls=None, host="127.0.0.1", port=0, control_file=None,
                 stats_file=None, verbose=False, idle_timeout=30, rate_total=None):
        self.root = os.path.abspath(root)
        # at most this many body bytes a second over all connections
        # together (a link that is the limit), None: no limit
        self.rate_total = rate_total
        self._rate_lock = threading.Lock()
        self._rate_next = 0.0
        self._root_real = os.path.realpath(self.root)
        self.tls = tls
        self.host = host
        self.port = port
        self.control_file = control_file
        self.stats_file = stats_file
        self.verbose = verbose
        self.idle_timeout = idle_timeout
        self.state = _State()
        self.ssl_context = None
        self.ca_file = None
        self._httpd = None
        self._thread = None
        self._stop = threading.Event()
        self._wake = threading.Event()  # set by stop() and release_stalls()
        self._conns = set()
        self._conn_lock = threading.Lock()
        self._file_lock = threading.Lock()

    def _take_rate(self, n):
        """Waits until n more body bytes fit under rate_total: each block
        takes its slot in one schedule that all connections share."""
        with self._rate_lock:
            now = time.monotonic()
            start = max(now, self._rate_next)
            self._rate_next = start + n / self.rate_total
        if start > now:
            self._stop.wait(start - now)

    # ---- life cycle
    def start(self):
        if not os.path.isdir(self.root):
            raise FileNotFoundError("redist-server: no folder %s" % self.root)
        if self.tls:
            ca, cert, key = ensure_tls_files(self.tls)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            self.ssl_context, self.ca_file = ctx, ca
        self._httpd = _HTTPServer((self.host, self.port), _Handler)
        self._httpd.redist = self
        self.port = self._httpd.server_address[1]
        self._stop.clear()
        self._wake.clear()
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.1},
                                        name="redist-server", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """Stop listening, wake stalled requests and close every connection."""
        if self._httpd is None:
            return
        self._stop.set()
        self._wake.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._conn_lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(5)
        self.state.wait_idle(2)
        self._httpd = None

    def __enter__(self):
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        return "%s://%s:%d/" % ("https" if self.tls else "http", self.host, self.port)

    def client_ssl_context(self):
        """An ssl context trusting this server's CA (None without TLS)."""
        return ssl.create_default_context(cafile=self.ca_file) if self.ca_file else None

    # ---- faults
    def add_fault(self, kind, path="*", count=1, **params):
        return self.state.add(make_fault(kind, path, count, **params))


    def stall(self, path="*", after=0, seconds=2.0, count=1, resume=False, from_byte=0,
              to_byte=None):
        self._wake.clear()
        return super().stall(path, after, seconds, count, resume, from_byte, to_byte)

    def release_stalls(self):
        """Ends every stall now (and any later one at once, until the next
        stall() call): a test holds a transfer with a long stall and lets
        it go when it has seen what it waited for."""
        self._wake.set()


    def faults(self):
        return self.state.list()

    def clear_faults(self):
        self.state.clear()

    def control(self, body):
        """Apply a control message (see control_body) as POST /_control would."""
        return control_body(body, self.state)

    # ---- statistics
    def wait_idle(self, timeout=5.0):
        return self.state.wait_idle(timeout)

    def stats(self, path=None, settle=1.0):
        self.state.wait_idle(settle)
        all_stats = self.state.stats()
        if path is None:
            return all_stats
        path = path if path.startswith("/") or path == "*" else "/" + path
        out = _empty_stats()
        for p, s in all_stats.items():
            if _path_matches(path, p):
                for k in out:
                    out[k] += s[k]
        return out

    def requests(self, path=None, settle=1.0):
        self.state.wait_idle(settle)
        if path is not None and not (path.startswith("/") or path == "*"):
            path = "/" + path
        return self.state.requests(path)

    def reset_stats(self, settle=1.0):
        self.state.reset(settle)

    # ---- internals
    def _resolve(self, urlpath):
        parts = [p for p in urlpath.split("/") if p not in ("", ".")]
        if any(p == ".." or "\\" in p or "\0" in p for p in parts):
            return None
        fs = os.path.join(self.root, *parts)
        real = os.path.realpath(fs)
        if real != self._root_real and not real.startswith(self._root_real + os.sep):
            return None
        return fs

    def _poll_control_file(self):
        cf = self.control_file
        if not cf or not os.path.exists(cf):
            return
        taken = "%s.taken-%d" % (cf, threading.get_ident())
        try:
            os.rename(cf, taken)  # only one thread gets it
        except OSError:
            return
        try:
            with open(taken, encoding="utf-8") as f:
                control_body(json.load(f), self.state)
            os.unlink(taken)
        except (OSError, ValueError, TypeError) as e:
            sys.stderr.write("redist-server: bad control file %s: %s\n" % (cf, e))
            os.replace(taken, cf + ".bad")

    def _write_stats_file(self):
        if not self.stats_file:
            return
        with self._file_lock:
            doc = {"paths": self.state.stats(), "requests": self.state.requests()}
            _atomic_write(self.stats_file, json.dumps(doc, indent=1) + "\n")


def _atomic_write(path, text):
    tmp = "%s.tmp-%d-%d" % (path, os.getpid(), threading.get_ident())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_control_file(path, body):
    """Write a control message (see control_body) for a --control-file server.

    Atomic: the server never sees half a file.  It is applied before the
    server's next request (it is gone once applied)."""
    _atomic_write(path, json.dumps(body))


# ---------------------------------------------------------------- remote
class ServerControl(_FaultMethods):
    """The fault and statistics API of a server in another process, by URL.

    ServerControl(url, cafile=None): url is the server's root URL; cafile its
    ca.pem for HTTPS.  Same methods as RedistServer: add_fault, cut,
    ignore_range, fail, stall, tamper, slow, faults, clear_faults, control,
    stats, requests, reset_stats.
    """

    def __init__(self, url, cafile=None, timeout=30):
        self.url = url if url.endswith("/") else url + "/"
        self.timeout = timeout
        self._ctx = ssl.create_default_context(cafile=cafile) if cafile else None

    def _call(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method="POST" if data else "GET",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ctx) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            raise ValueError(json.load(e).get("error", str(e))) from None

    def control(self, body):
        return self._call("_control", body)

    def add_fault(self, kind, path="*", count=1, **params):
        f = make_fault(kind, path, count, **params)
        return self.control({"fault": f})["faults"][-1]




    def faults(self):
        return self._call("_faults")["faults"]

    def clear_faults(self):
        self.control({"clear_faults": True})

    def reset_stats(self):
        self.control({"reset_stats": True})

    def stats(self, path=None, settle=1.0):
        all_stats = self._call("_stats?settle=%g" % settle)["paths"]
        if path is None:
            return all_stats
        path = path if path.startswith("/") or path == "*" else "/" + path
        out = _empty_stats()
        for p, s in all_stats.items():
            if _path_matches(path, p):
                for k in out:
                    out[k] += s[k]
        return out

    def requests(self, path=None, settle=1.0):
        reqs = self._call("_stats?settle=%g" % settle)["requests"]
        if path is not None and not (path.startswith("/") or path == "*"):
            path = "/" + path
        return [r for r in reqs if path is None or _path_matches(path, r["path"])]


# ---------------------------------------------------------------- mirror
def _mkcudnn():
    spec = importlib.util.spec_from_file_location("mkcudnn", MKCUDNN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def manifest_name(version, flat=False):
    """redistrib_X.Y.Z.json (NVIDIA names them by the short version), or
    redistrib_<full version>.json for a flat one (like 8.9.7.29)."""
    return "redistrib_%s.json" % (version if flat else ".".join(version.split(".")[:3]))


def build_mirror(root, archives, release_date="2024-01-01", flat=False, link=False,
                 extra_dirs=True):
    """Lay archives out like NVIDIA's redist folder and write their manifests.

    archives: (archive_path, version, platform, cuda) tuples, e.g.
    ("/tmp/x.tar.xz", "9.1.0.70", "linux-x86_64", "12").  Each is copied
    (hard-linked with link=True, where it can be) to
    root/cudnn/<platform>/<its file name>, and its entry is added to
    root/<manifest_name(version, flat)> in NVIDIA's nested shape
    (cudnn -> platform -> cudaN -> relative_path, sha256, md5, size as a
    string; flat=True: cudnn -> platform -> entry, the 8.9.7.29 shape),
    written by tests/fixtures/mkcudnn.py's write_manifest.  Archives of one
    version share one manifest.  extra_dirs makes the empty cudnn_jit/ and
    cudnn_samples/ folders NVIDIA's index also lists.  Returns the
    manifests' paths, sorted.
    """
    mk = _mkcudnn()
    manifests = set()
    os.makedirs(root, exist_ok=True)
    for d in ("cudnn_jit", "cudnn_samples") if extra_dirs else ():
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for archive, version, platform, cuda in archives:
        name = os.path.basename(archive)
        dest_dir = os.path.join(root, "cudnn", platform)
        os.makedirs(dest_dir, exist_ok=True)
        dest = os.path.join(dest_dir, name)
        if os.path.abspath(archive) != os.path.abspath(dest):
            if os.path.lexists(dest):
                os.unlink(dest)
            done = False
            if link:
                try:
                    os.link(archive, dest)
                    done = True
                except OSError:
                    pass
            if not done:
                shutil.copyfile(archive, dest)
        mpath = os.path.join(root, manifest_name(version, flat))
        mk.write_manifest(mpath, dest, version, str(cuda), platform, flat, name, release_date)
        manifests.add(mpath)
    return sorted(manifests)


# ---------------------------------------------------------------- CLI
def _serve_main(a):
    faults = []
    for spec in a.fault or []:
        try:
            faults.append(make_fault(**json.loads(spec)))
        except (ValueError, TypeError) as e:
            sys.exit("redist-server: bad --fault %s: %s" % (spec, e))
    srv = RedistServer(a.root, tls=a.tls_dir, host=a.host, port=a.port,
                       control_file=a.control_file, stats_file=a.stats_file,
                       verbose=a.verbose, rate_total=a.rate_total)
    for f in faults:
        srv.state.add(f)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: done.set())
    try:
        srv.start()
    except (OSError, RuntimeError) as e:
        sys.exit("redist-server: %s" % e)
    if a.port_file:
        _atomic_write(a.port_file, "%d\n" % srv.port)
    print("redist-server: serving %s at %s" % (srv.root, srv.url), file=sys.stderr, flush=True)
    while not done.wait(1):
        pass
    srv.stop()


def _mirror_main(a):
    for m in build_mirror(a.root, [tuple(x) for x in a.archive], a.release_date, a.flat,
                          a.link):
        print(m)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("serve", "mirror", "-h", "--help"):
        argv.insert(0, "serve")
    ap = argparse.ArgumentParser(prog="redist_server.py",
                                 description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("serve", help="serve a folder (the default subcommand)")
    p.add_argument("--root", required=True, metavar="DIR", help="the folder served at /")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="default 0: the OS picks one")
    p.add_argument("--port-file", metavar="F",
                   help="write the port here (atomically) once listening")
    p.add_argument("--tls-dir", metavar="DIR",
                   help="serve HTTPS with DIR/server.pem, made with DIR/ca.pem if missing")
    p.add_argument("--control-file", metavar="F",
                   help="a control message (JSON) to apply before the next request")
    p.add_argument("--stats-file", metavar="F", help="rewrite /_stats here after each request")
    p.add_argument("--rate-total", type=int, metavar="BYTES",
                   help="send at most BYTES of bodies a second over all connections together")
    p.add_argument("--fault", action="append", metavar="JSON",
                   help='a fault from the start, e.g. \'{"kind":"cut","path":"*","after":100}\'')
    p.add_argument("-v", "--verbose", action="store_true", help="log each request to stderr")
    p.set_defaults(fn=_serve_main)
    p = sub.add_parser("mirror", help="lay out archives and write their manifests")
    p.add_argument("--root", required=True, metavar="DIR")
    p.add_argument("--archive", action="append", nargs=4, required=True,
                   metavar=("PATH", "VERSION", "PLATFORM", "CUDA"))
    p.add_argument("--release-date", default="2024-01-01")
    p.add_argument("--flat", action="store_true", help="8.9.7.29-style flat manifests")
    p.add_argument("--link", action="store_true", help="hard-link instead of copying")
    p.set_defaults(fn=_mirror_main)
    a = ap.parse_args(argv)
    a.fn(a)


if __name__ == "__main__":
    main()

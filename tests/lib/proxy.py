"""A real HTTP proxy for the download tests: tinyproxy (Debian's package),
started by the test on 127.0.0.1 with its own configuration and log.

    with Proxy() as p:                 # allows 127.0.0.1
        env["HTTPS_PROXY"] = p.url     # CONNECT for https://
        ...
        p.requests()                   # what it was asked for, in order
    Proxy(refuse=True)                 # answers every request 403

Readiness is waited for by connecting, never by a clock: the port is
taken before tinyproxy starts, so a port another process grabbed in
between makes tinyproxy exit, and the start is tried again on another.
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

from redist_server import free_port


def available():
    return shutil.which("tinyproxy") is not None


class Proxy:
    def __init__(self, refuse=False):
        self.refuse = refuse
        self.dir = tempfile.mkdtemp(prefix="cctl-proxy-")
        self.log = os.path.join(self.dir, "log")
        self.proc = None
        self.port = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def _config(self, port):
        conf = os.path.join(self.dir, "tinyproxy.conf")
        # a proxy that refuses: it allows only an address no test uses,
        # so 127.0.0.1 gets "403 Access denied"
        allow = "10.255.255.1" if self.refuse else "127.0.0.1"
        with open(conf, "w") as f:
            f.write('Port %d\nListen 127.0.0.1\nTimeout 120\nLogFile "%s"\n'
                    "LogLevel Connect\nMaxClients 50\nAllow %s\nDisableViaHeader Yes\n"
                    % (port, self.log, allow))
        return conf

    def start(self):
        for _ in range(20):
            port = free_port()
            self.proc = subprocess.Popen(["tinyproxy", "-d", "-c", self._config(port)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # up when it accepts; gone when it could not bind
            deadline = time.monotonic() + 120  # a hang guard, not a speed check
            while self.proc.poll() is None and time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=5).close()
                    self.port = port
                    return self
                except OSError:
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError("tinyproxy did not start (log: %s)" % self.log_text())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()

    def log_text(self):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def requests(self):
        """The request lines it logged ("CONNECT 127.0.0.1:4443 HTTP/1.1",
        "GET http://127.0.0.1:8080/x HTTP/1.1"), in order."""
        return re.findall(r"Request \(file descriptor \d+\): (.*)", self.log_text())

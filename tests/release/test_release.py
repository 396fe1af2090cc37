#!/usr/bin/env python3
"""The artifacts scripts/release.sh leaves in dist/: the Linux tar.gz with
one binary that needs nothing but glibc (and a few MB), the Windows zip,
the .deb, SHA256SUMS that match; and the release binary itself through the
download tests (HTTP and HTTPS with its statically linked libcurl and
OpenSSL) and an install."""
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DIST = os.path.join(REPO, "dist")


def version():
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(cudnnctl VERSION ([0-9.]+)", f.read()).group(1)


class TestRelease(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.v = version()
        cls.tgz = os.path.join(DIST, "cudnnctl-%s-linux-x86_64.tar.gz" % cls.v)
        if not os.path.exists(cls.tgz):
            raise unittest.SkipTest("no %s: run scripts/release.sh" % cls.tgz)
        cls.tmp = tempfile.mkdtemp(prefix="cctl-release-")
        with tarfile.open(cls.tgz) as t:
            cls.names = sorted(t.getnames())
            t.extractall(cls.tmp, filter="data") if sys.version_info >= (3, 12) \
                else t.extractall(cls.tmp)
        cls.bin = os.path.join(cls.tmp, "cudnnctl-%s-linux-x86_64" % cls.v, "cudnnctl")

    def test_linux_tarball(self):
        top = "cudnnctl-%s-linux-x86_64" % self.v
        self.assertEqual(self.names, sorted([top] + ["%s/%s" % (top, n) for n in
                                                    ("cudnnctl", "LICENSE", "README.md",
                                                     "cudnnctl.1")]))
        # glibc only: no libarchive, libcurl, libssl, ICU, libxml2
        ldd = subprocess.run(["ldd", self.bin], capture_output=True, text=True).stdout
        libs = sorted(re.findall(r"^\s*(\S+\.so[.\d]*)", ldd, re.M))
        for lib in libs:
            self.assertRegex(lib, r"^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|"
                                  r"libpthread\.so\.0|/lib64/ld-linux-x86-64\.so\.2)$", ldd)
        size = os.path.getsize(self.bin)
        self.assertLess(size, 8 << 20, "the release binary is %d bytes" % size)
        out = subprocess.run([self.bin, "version"], capture_output=True, text=True)
        self.assertEqual(out.stdout, "cudnnctl %s\n" % self.v)
        # the newest glibc symbol it needs, for the notes
        objdump = subprocess.run(["objdump", "-T", self.bin], capture_output=True, text=True)
        need = sorted({tuple(int(x) for x in m.split("."))
                       for m in re.findall(r"GLIBC_([0-9.]+)", objdump.stdout)})
        print("\n  release binary: %d bytes; needs glibc %s" % (size, ".".join(map(str, need[-1]))))
        if os.environ.get("CUDNNCTL_REL_GLIBC", "2.27") == "2.27":
            # compiled against the glibc 2.27 sysroot: the floor cuDNN 9 sets
            self.assertLessEqual(need[-1], (2, 27), objdump.stdout)

    def test_sums(self):
        with open(os.path.join(DIST, "SHA256SUMS"), encoding="utf-8") as f:
            rows = [line.split() for line in f.read().splitlines()]
        names = sorted(r[1] for r in rows)
        want = ["cudnnctl-%s-linux-x86_64.tar.gz" % self.v, "cudnnctl_%s_amd64.deb" % self.v]
        if os.path.exists(os.path.join(DIST, "cudnnctl-%s-windows-x86_64.zip" % self.v)):
            want.append("cudnnctl-%s-windows-x86_64.zip" % self.v)
        self.assertEqual(names, sorted(want))
        for digest, name in rows:
            with open(os.path.join(DIST, name), "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest, name)

    def test_windows_zip(self):
        path = os.path.join(DIST, "cudnnctl-%s-windows-x86_64.zip" % self.v)
        if not os.path.exists(path):
            self.skipTest("built without Windows (CUDNNCTL_REL_WINDOWS=0)")
        top = "cudnnctl-%s-windows-x86_64/" % self.v
        with zipfile.ZipFile(path) as z:
            names = sorted(n for n in z.namelist() if not n.endswith("/"))
            self.assertEqual(names, sorted(top + n for n in ("cudnnctl.exe", "LICENSE",
                                                             "README.md")))
            self.assertEqual(z.read(top + "cudnnctl.exe")[:2], b"MZ")

    def test_package_manager_manifests(self):
        """winget's manifest set and Scoop's manifest, valid against the
        published schemas, naming the zip's URL and SHA-256."""
        if not os.path.exists(os.path.join(DIST, "cudnnctl-%s-windows-x86_64.zip" % self.v)):
            self.skipTest("built without Windows (CUDNNCTL_REL_WINDOWS=0)")
        # the interpreter with PyYAML and jsonschema: this one, else Debian's
        py = sys.executable
        if subprocess.run([py, "-c", "import yaml, jsonschema"], capture_output=True).returncode:
            py = "/usr/bin/python3"
        p = subprocess.run([py, os.path.join(REPO, "tests", "release", "check_pkg_manifests.py"),
                            DIST, self.v], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_deb(self):
        deb = os.path.join(DIST, "cudnnctl_%s_amd64.deb" % self.v)
        info = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Version", "Depends"],
                              capture_output=True, text=True, check=True).stdout
        self.assertIn("Package: cudnnctl\n", info)
        self.assertIn("Version: %s\n" % self.v, info)
        # what the binary needs, not this machine's glibc
        objdump = subprocess.run(["objdump", "-T", self.bin], capture_output=True, text=True)
        need = max((tuple(int(x) for x in m.split(".")), m)
                   for m in re.findall(r"GLIBC_([0-9.]+)", objdump.stdout))[1]
        self.assertRegex(info, r"Depends: libc6 \(>= %s\)\n?$" % re.escape(need))
        files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True,
                               check=True).stdout
        for f in ("./usr/bin/cudnnctl", "./usr/share/man/man1/cudnnctl.1",
                  "./usr/share/doc/cudnnctl/LICENSE"):
            self.assertIn(f, files)

    def download_tests(self, binary):
        """tests/cli/test_download.py's install by version over HTTP and
        HTTPS (its own CA), resume, cache and CA stores, with binary."""
        env = dict(os.environ, CUDNNCTL_BIN=binary,
                   CUDNNCTL_MKCUDNN=os.path.join(REPO, "tests", "fixtures", "mkcudnn.py"))
        p = subprocess.run([sys.executable, os.path.join(REPO, "tests", "cli", "test_download.py"),
                            "TestResume", "TestCache", "TestManifests", "TestCaStore"],
                           env=env, capture_output=True, text=True, timeout=900)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertRegex(p.stderr, r"\nOK")

    def test_the_binary_through_the_download_tests(self):
        self.download_tests(self.bin)

    def test_the_action_on_a_release_tag(self):
        # action.yml used at a v* tag takes this tar.gz, checked with SHA256SUMS
        env = dict(os.environ, CUDNNCTL_BIN=self.bin)
        p = subprocess.run([sys.executable, os.path.join(REPO, "tests", "action",
                                                         "test_action.py"),
                            "-v", "TestActionBinary.test_release_on_a_tag"],
                           env=env, capture_output=True, text=True, timeout=900)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("test_release_on_a_tag (__main__.TestActionBinary."
                      "test_release_on_a_tag) ... ok", p.stderr)


class TestSigning(unittest.TestCase):
    """scripts/sign-windows.sh (what release.sh runs with
    CUDNNCTL_SIGN_PFX) on the release zip's cudnnctl.exe, with a
    code-signing certificate made here: a signature osslsigncode verifies
    against that certificate, over the program's own digest; a wrong
    password leaves the file as it was."""

    @classmethod
    def setUpClass(cls):
        v = version()
        zpath = os.path.join(DIST, "cudnnctl-%s-windows-x86_64.zip" % v)
        if not os.path.exists(zpath):
            raise unittest.SkipTest("built without Windows (CUDNNCTL_REL_WINDOWS=0)")
        cls.tmp = tempfile.mkdtemp(prefix="cctl-sign-")
        with zipfile.ZipFile(zpath) as z:
            cls.exe = z.read("cudnnctl-%s-windows-x86_64/cudnnctl.exe" % v)
        conf = os.path.join(cls.tmp, "cs.cnf")
        with open(conf, "w") as f:
            f.write("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\n"
                    "CN = cudnnctl test code signing\n[ext]\n"
                    "basicConstraints = critical, CA:FALSE\n"
                    "keyUsage = critical, digitalSignature\n"
                    "extendedKeyUsage = codeSigning\n")
        cls.cert, key = os.path.join(cls.tmp, "cs.pem"), os.path.join(cls.tmp, "cs.key")
        cls.pfx = os.path.join(cls.tmp, "cs.pfx")
        for args in (["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                      "-out", cls.cert, "-days", "30", "-sha256", "-config", conf,
                      "-extensions", "ext"],
                     ["pkcs12", "-export", "-in", cls.cert, "-inkey", key, "-out", cls.pfx,
                      "-passout", "pass:s3cret"]):
            subprocess.run(["openssl"] + args, check=True, capture_output=True)

    def sign(self, password):
        exe = os.path.join(self.tmp, "cudnnctl-%s.exe" % password)
        with open(exe, "wb") as f:
            f.write(self.exe)
        env = dict(os.environ, CUDNNCTL_SIGN_PFX=self.pfx, CUDNNCTL_SIGN_PASSWORD=password)
        env.pop("CUDNNCTL_SIGN_TIMESTAMP", None)
        p = subprocess.run(["sh", os.path.join(REPO, "scripts", "sign-windows.sh"), exe],
                           env=env, capture_output=True, text=True, timeout=300)
        return exe, p

    def test_signed_and_verified(self):
        exe, p = self.sign("s3cret")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(exe, "rb") as f:
            signed = f.read()
        self.assertNotEqual(signed, self.exe)
        self.assertEqual(signed[:2], b"MZ")
        v = subprocess.run(["osslsigncode", "verify", "-CAfile", self.cert, "-in", exe],
                           capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        self.assertIn("Signature verification: ok", v.stdout)
        self.assertIn("cudnnctl test code signing", v.stdout)
        self.assertRegex(v.stdout, r"(?i)message digest algorithm\s*:\s*SHA256")

    def test_wrong_password_leaves_it_unsigned(self):
        exe, p = self.sign("wrong")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("it is unsigned", p.stderr)
        with open(exe, "rb") as f:
            self.assertEqual(f.read(), self.exe)
        self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith(".sign.")], [])


class TestOldGlibc(TestRelease):
    """The release binary run by glibc 2.27's own loader and libraries (the
    sysroot scripts/release.sh compiles against): what a machine with
    Ubuntu 18.04's or RHEL 8's glibc does with it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cache = os.environ.get("CUDNNCTL_REL_CACHE", "/var/cache/cudnnctl-rel")
        lib = os.path.join(cache, "sysroot-glibc2.27", "r", "lib", "x86_64-linux-gnu")
        cls.ld = os.path.join(lib, "ld-2.27.so")
        if not os.path.exists(cls.ld):
            raise unittest.SkipTest("no %s: scripts/release.sh builds it" % cls.ld)
        cls.lib = lib
        cls.wrapper = os.path.join(cls.tmp, "cudnnctl-glibc2.27")
        with open(cls.wrapper, "w", encoding="utf-8") as f:
            f.write('#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' % (cls.ld, lib, cls.bin))
        os.chmod(cls.wrapper, 0o755)

    # the tests of the base class are not run again here
    test_linux_tarball = test_sums = test_windows_zip = test_deb = None
    test_the_binary_through_the_download_tests = test_the_action_on_a_release_tag = None

    def test_runs_on_glibc_2_27(self):
        out = subprocess.run([self.wrapper, "version"], capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout), (0, "cudnnctl %s\n" % self.v), out.stderr)
        # the same loader refuses a program of this machine's (glibc 2.36)
        # that needs more: so the line above did run on 2.27
        host = subprocess.run([self.ld, "--library-path", self.lib, "/usr/bin/cmake", "--version"],
                              capture_output=True, text=True)
        self.assertNotEqual(host.returncode, 0)
        self.assertIn("GLIBC_2.", host.stderr)

    def test_verify_says_the_system_is_too_old(self):
        # the real cuDNN of this machine under glibc 2.27: its C++ runtime
        # (Debian 12's libstdc++) needs a newer glibc, as cuDNN's own
        # libraries would on an old distribution; verify says so
        if not any(os.path.exists(os.path.join(d, "libcudnn.so.9"))
                   for d in ("/usr/local/cuda-13.0/lib", "/usr/local/cuda/lib64")):
            self.skipTest("no real cuDNN in the loader's cache here")
        env = dict(os.environ, HOME=self.tmp)
        for k in ("CUDNNCTL_ROOT", "LD_LIBRARY_PATH", "CUDNN_PATH"):
            env.pop(k, None)
        p = subprocess.run([self.wrapper, "verify", "--no-gpu", "--json"], env=env,
                           capture_output=True, text=True)
        load = [st for st in json.loads(p.stdout)["stages"] if st["stage"] == "load"][0]
        self.assertEqual((p.returncode, load["status"]), (24, "fail"), p.stdout)
        self.assertRegex(load["reason"], r"version `GLIBC_2\.\d+' not found \(required by ")
        self.assertRegex(load["next"], r"needs glibc 2\.\d+, newer than this system's: this "
                                       r"cuDNN build needs a newer distribution")

    def test_the_download_tests_on_glibc_2_27(self):
        self.download_tests(self.wrapper)


if __name__ == "__main__":
    unittest.main()

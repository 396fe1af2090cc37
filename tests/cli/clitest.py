"""What the end-to-end tests of the cudnnctl binary share (tests/cli/test_*.py
import it; each test file is a ctest entry per class).

Runs the real binary against archives made by tests/fixtures/mkcudnn.py,
each test in its own scratch folder with its own HOME.  Stdlib only
(Python >= 3.11, Debian 12's /usr/bin/python3 is fine).

    python3 tests/cli/test_install.py -v            # one file
    python3 tests/cli/test_install.py -v TestJobs   # one class

Environment: CUDNNCTL_BIN (default ../../build/cudnnctl from this file),
CUDNNCTL_MKCUDNN (default ../fixtures/mkcudnn.py).  The versions used here
(9.19.0.99, 9.14.0.99, 8.9.7.99, ...) are not in NVIDIA's manifests: each
archive is verified through the manifest mkcudnn writes for it.  What
these tests share with the Wine tests is in tests/lib/cctltest.py.
"""
import contextlib
import fcntl
import glob
import hashlib
import json
import lzma
import os
import re
import resource
import shlex
import shutil
import signal
import stat
import time
import types
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from cctltest import (CI_VARS, ENV_VARS, EXIT, V9_PARTS, CliAsserts, Result, cli_command,  # noqa: E402
                      edited_manifest, private_binary, mkcudnn, mkcudnn_hostile,
                      mkcudnn_pack, quote_name,
                      sha256_file, snapshot, snapshot_diff)
from fixtures import Fixtures  # noqa: E402

BIN = os.path.abspath(os.environ.get("CUDNNCTL_BIN")
                      or os.path.join(HERE, "..", "..", "build", "cudnnctl"))
PLATFORM = "linux-x86_64"

V8_PARTS = ["", "_adv_infer", "_adv_train", "_cnn_infer", "_cnn_train", "_ops_infer",
            "_ops_train"]
USER_PROFILE = "# my profile\nexport EDITOR=vi\nPATH=$HOME/bin:$PATH\n"
USER_BASHRC = "# my bashrc\nalias ll='ls -l'\n"


# ------------------------------------------------------------------ helpers
def archive_tree(path, strip=1, lib64_to_lib=False):
    """{normalised path: ('file', sha256) | ('link', target)} of an archive's
    files and links, with `strip` leading folders dropped."""
    out = {}

    def norm(name):
        parts = [p for p in name.split("/") if p][strip:]
        if lib64_to_lib and parts and parts[0] == "lib64":
            parts[0] = "lib"
        return "/".join(parts)

    if path.endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            for zi in zf.infolist():
                mode = zi.external_attr >> 16
                if zi.is_dir():
                    continue
                data = zf.read(zi)
                if stat.S_ISLNK(mode):
                    out[norm(zi.filename)] = ("link", data.decode())
                else:
                    out[norm(zi.filename)] = ("file", hashlib.sha256(data).hexdigest())
    else:
        with tarfile.open(path) as tf:
            for ti in tf.getmembers():
                if ti.isdir():
                    continue
                if ti.issym():
                    out[norm(ti.name)] = ("link", ti.linkname)
                else:
                    data = tf.extractfile(ti).read()
                    out[norm(ti.name)] = ("file", hashlib.sha256(data).hexdigest())
    return out


# what install writes into each version beside the archive's files
BUILD_FILES = ("lib/cmake/CUDNN/CUDNNConfig.cmake", "lib/cmake/CUDNN/CUDNNConfigVersion.cmake",
               "lib/pkgconfig/cudnn.pc")


# The flags the build tests compile and link with: the sanitizer's in the
# sanitizer build, whose fake libraries need its runtime loaded first
BUILD_FLAGS = os.environ.get("CUDNNCTL_TEST_CFLAGS", "")


def build_env(cflags="", ldflags=""):
    """CFLAGS and LDFLAGS for a build in the tests: BUILD_FLAGS and these."""
    return {"CFLAGS": " ".join(f for f in (BUILD_FLAGS, cflags) if f),
            "LDFLAGS": " ".join(f for f in (BUILD_FLAGS, ldflags) if f)}


# What a user's program does: the version in the header it was compiled
# with and what the library it loaded says.  cudnn_version.h alone (cudnn.h
# needs the CUDA toolkit's headers); WITH_CUDNN_H includes cudnn.h too.
PROBE_C = r"""
#include <stdio.h>
#include <stddef.h>
#ifdef WITH_CUDNN_H
#include <cudnn.h>
#else
#include <cudnn_version.h>
size_t cudnnGetVersion(void);
#endif
int main(void)
{
	printf("header %d library %d\n", (int)CUDNN_VERSION, (int)cudnnGetVersion());
	return 0;
}
"""


def installed_tree(vdir):
    """archive_tree's shape for an installed version folder (record left out)."""
    out = {}
    for rel, v in snapshot(vdir).items():
        if v[0] == "file" and rel != ".cudnnctl-record":
            out[rel] = ("file", v[3])
        elif v[0] == "link":
            out[rel] = v
    return out


def read_record(vdir):
    """(header fields, [file lines as dicts]) of <vdir>/.cudnnctl-record."""
    with open(os.path.join(vdir, ".cudnnctl-record"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines[0] != "cudnnctl-record 1":
        raise AssertionError("bad record magic %r" % lines[0])
    head, files = {}, []
    for line in lines[1:]:
        if not line:
            continue
        fields = line.split("\t")
        if fields[0] == "file":
            files.append(dict(type=fields[1], size=int(fields[2]), sha256=fields[3],
                              path=fields[6], link=fields[7]))
        else:
            head[fields[0]] = fields[1]
    return head, files


def profile_line(root):
    return "[ -f '%s/env.sh' ] && . '%s/env.sh' # added by cudnnctl" % (root, root)


def lib_names(layout, version):
    """[(real file, .so.M link, .so link)] in lib/ for a v8 or v9 install."""
    short = ".".join(version.split(".")[:3])
    major = version.split(".")[0]
    parts = V8_PARTS if layout == "v8" else V9_PARTS
    return [("libcudnn%s.so.%s" % (p, short), "libcudnn%s.so.%s" % (p, major),
             "libcudnn%s.so" % p) for p in parts]


def can_mount_tmpfs():
    return os.geteuid() == 0 and shutil.which("mount") and shutil.which("umount")


# ----------------------------------------------------------------- fixtures
# the archives (tests/lib/fixtures.py), the fake cuDNN builds of this build
FAKE_DIR = os.path.abspath(os.environ.get("CUDNNCTL_FAKE_DIR")
                           or os.path.join(HERE, "..", "..", "build", "tests", "fake"))
FX = Fixtures(PLATFORM, FAKE_DIR)
CLI = BIN  # the copy the tests run (see setUpModule)


def setUpModule():
    # a private copy of the binary, with its tables (cctltest.private_binary)
    global CLI
    if os.access(BIN, os.X_OK):
        CLI = private_binary(BIN, FX.base(), FX.cleanup)


def tearDownModule():
    FX.cleanup()


class CliTest(CliAsserts, unittest.TestCase):
    """A scratch folder per test: HOME (with user lines in ~/.profile and
    ~/.bashrc), the install root path (not created) and a sibling folder."""
    fixtures = ()

    @classmethod
    def setUpClass(cls):
        if not os.access(CLI, os.X_OK):
            raise unittest.SkipTest("no cudnnctl binary at %s (set CUDNNCTL_BIN)" % BIN)
        for key in cls.fixtures:
            FX.pack(key)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cctl-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.home = os.path.join(self.tmp, "home")
        os.mkdir(self.home)
        self.write(os.path.join(self.home, ".profile"), USER_PROFILE)
        self.write(os.path.join(self.home, ".bashrc"), USER_BASHRC)
        self.root = os.path.join(self.tmp, "root")
        self.sibling = os.path.join(self.tmp, "sibling")
        os.mkdir(self.sibling)
        self.write(os.path.join(self.sibling, "keep.txt"), "not cudnnctl's\n")
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("CUDNNCTL_ROOT", "CUDNNCTL_VERSION", "XDG_DATA_HOME",
                                 "CUDNNCTL_LDCONF_DIR",
                                 "CUDNNCTL_LDCONFIG") + ENV_VARS + CI_VARS}
        self.env["HOME"] = self.home

    # -- running
    def run_cli(self, *args, root=True, env=None, cwd=None, verify=False):
        """Runs the binary; --root self.root is added unless root is False or
        a string (another root).  install and switch get --no-verify unless
        verify: the fake libraries of the fixtures are not loadable."""
        cmd = cli_command(CLI, args, self.root if root is True else root, verify)
        full_env = dict(self.env, **(env or {}))
        note = "".join(" [%s=%s]" % kv for kv in (env or {}).items())
        proc = subprocess.run(cmd, env=full_env, cwd=cwd or self.tmp,
                              capture_output=True, timeout=300)
        return Result(cmd, proc, note)

    def fails(self, code, *args, words=(), **kw):
        """Runs a command that must fail with exit status `code`, stderr
        holding every one of `words`, stdout empty (no --json here)."""
        r = super().fails(code, *args, words=words, **kw)
        if "--json" not in args:
            self.assertEqual(r.out, "", "stdout not empty on failure:%s" % r)
        return r

    def install(self, key, *extra, **kw):
        path, manifest = FX.pack(key)
        return self.ok("install", path, "--manifest", manifest, *extra, **kw)

    # -- checking
    @contextlib.contextmanager
    def unchanged(self, *paths, only=False):
        """Asserts that the root, HOME and the sibling folder (and paths; with
        only=True just paths) are as they were before the block."""
        if not only:
            paths = (self.root, self.home, self.sibling) + paths
        before = [snapshot(p) for p in paths]
        failure = None
        try:
            yield
        except AssertionError as e:  # report it with what changed, if anything
            failure = e
        changed = ["%s changed:\n%s" % (p, snapshot_diff(b, a))
                   for p, b, a in ((p, b, snapshot(p)) for p, b in zip(paths, before))
                   if a != b]
        if failure and not changed:
            raise failure
        if changed:
            raise AssertionError("\n".join([str(failure)] * bool(failure) + changed)) from None

    def write(self, path, text):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def read(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def active_id(self, root=None):
        link = os.path.join(root or self.root, "current")
        if not os.path.lexists(link):
            return None
        target = os.readlink(link)
        self.assertTrue(target.startswith("versions/"), target)
        return target[len("versions/"):]

    def assert_profiles(self, root=None, count=1):
        """~/.profile and ~/.bashrc keep the user's lines and hold the line
        sourcing <root>/env.sh `count` times."""
        root = root or self.root
        for name, user in ((".profile", USER_PROFILE), (".bashrc", USER_BASHRC)):
            text = self.read(os.path.join(self.home, name))
            lines = text.splitlines()
            sourcing = [line for line in lines if "%s/env.sh" % root in line]
            self.assertEqual(len(sourcing), count, "%s:\n%s" % (name, text))
            if count:
                self.assertEqual(sourcing[0], profile_line(root))
            self.assertTrue(text.startswith(user), "%s lost user lines:\n%s" % (name, text))

    def assert_installed(self, archive, vid, layout="v9", strip=1, lib64_to_lib=False,
                         verified=True):
        """versions/<vid> holds exactly the archive's files and links, with the
        top folder dropped, and a record that matches them."""
        vdir = os.path.join(self.root, "versions", vid)
        version = vid.split("-cuda")[0]
        self.assertTrue(os.path.isdir(vdir), "no %s" % vdir)
        got = installed_tree(vdir)
        want = archive_tree(archive, strip=strip, lib64_to_lib=lib64_to_lib)
        # beside the archive's files: the CMake package config and the
        # pkg-config file install writes, in the record like the rest
        # (the record below lists them too)
        for rel in BUILD_FILES:
            self.assertIn(rel, got, "install wrote no %s" % rel)
        archive_files = {k: v for k, v in got.items() if k not in BUILD_FILES or k in want}
        self.assertEqual(archive_files, want, "installed tree differs from the archive:\n%s"
                         % snapshot_diff(want, archive_files))
        for real, so_major, so in lib_names(layout, version + ".0"):
            self.assertTrue(os.path.isfile(os.path.join(vdir, "lib", real)), real)
            self.assertEqual(os.readlink(os.path.join(vdir, "lib", so_major)), real)
            self.assertEqual(os.readlink(os.path.join(vdir, "lib", so)), so_major)
        for f in ("include/cudnn.h", "include/cudnn_version.h"):
            self.assertTrue(os.path.isfile(os.path.join(vdir, f)), f)
        head, files = read_record(vdir)
        self.assertEqual(head["id"], vid)
        self.assertEqual(head["version"], version)
        self.assertEqual(head["platform"], PLATFORM)
        self.assertEqual(head["verified"], "1" if verified else "0")
        self.assertEqual(head["archive"], os.path.basename(archive))
        self.assertEqual(head["archive-sha256"], sha256_file(archive))
        recorded = {}
        for f in files:
            recorded[f["path"]] = (("link", f["link"]) if f["type"] == "l"
                                   else ("file", f["sha256"]))
        self.assertEqual(recorded, got, "record differs from the files:\n%s"
                         % snapshot_diff(got, recorded))

    def assert_active(self, vid):
        self.assertEqual(self.active_id(), vid)
        env_sh = self.read(os.path.join(self.root, "env.sh"))
        self.assertIn("CUDNN_PATH='%s/current'" % self.root, env_sh)
        self.assert_profiles()


HOSTILE_TOP = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive"


HOSTILE = {  # kind: (formats, planted entry name or None, words of the reason)
    "dotdot": (("zip", "tar.xz"), HOSTILE_TOP + "/../../evil.txt", ("'..'",)),
    "dotdot-backslash": (("zip", "tar.xz"), HOSTILE_TOP + "/..\\..\\evil.txt", ("'..'",)),
    "absolute": (("zip", "tar.xz"), "/tmp/evil.txt", ("absolute",)),
    "absolute-drive": (("zip", "tar.xz"), "C:/evil.txt", ("drive letter",)),
    "control-char": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/evil\x07\n.txt",
                     ("control character",)),
    "zero-width": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/libcudnn\u200b.so.9.1.0",
                   ("invisible", "U+200B")),
    "bom": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/\ufefflibcudnn.so.9.1.0",
            ("invisible", "U+FEFF")),
    "non-ascii": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/libc\u00fcdnn.so", ("non-ASCII",)),
    "symlink-escape": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/evil", ("points outside",)),
    "symlink-chain": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/evil",
                      ("goes through another link",)),
    "symlink-absolute": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/evil", ("points outside",)),
    "hardlink-escape": (("tar", "tar.xz"), HOSTILE_TOP + "/lib/evil", ("hard link",)),
    "duplicate": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/libcudnn.so.9.1.0",
                  ("appears twice",)),
    "duplicate-case": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/LIBCUDNN.so.9.1.0",
                       ("differs only in case",)),
    "device": (("tar", "tar.xz"), HOSTILE_TOP + "/lib/evil-dev", ("device",)),
    "trailing-dot": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/libcudnn.so.9.1.0.",
                     ("ending in a dot or a space",)),
    "trailing-space": (("zip", "tar.xz"), HOSTILE_TOP + "/include/cudnn.h ",
                       ("ending in a dot or a space",)),
    "device-con": (("zip", "tar.xz"), HOSTILE_TOP + "/CON", ("Windows device",)),
    "device-aux-ext": (("zip", "tar.xz"), HOSTILE_TOP + "/include/aux.h", ("Windows device",)),
    "device-folder": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/com1/x.txt", ("Windows device",)),
    "device-case": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/Lpt1.dll", ("Windows device",)),
    "device-nul-ext": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/nul.lib", ("Windows device",)),
    "windows-char": (("zip", "tar.xz"), HOSTILE_TOP + "/lib/a?b.txt",
                     ("Windows does not allow",)),
    "truncated": (("zip", "tar.xz", "tar"), None, ("cannot read",)),
    "not-archive": (("zip", "tar.xz"), None, ("cannot read",)),
    # read by the central directory, never by walking the local headers
    "cd-outside": (("zip",), None, ("cannot read",)),
    "member-outside": (("zip",), None, ("cannot read",)),
}


LOCALES = ("C", "C.UTF-8")


def find_real_cudnn():
    for top in ("/usr/local/cuda", "/usr/local/cuda-13.0"):
        lib, inc = os.path.join(top, "lib"), os.path.join(top, "include", "cudnn_version.h")
        if os.path.isfile(os.path.join(lib, "libcudnn.so.9")) and os.path.isfile(inc):
            return lib, inc
    return None, None


def on_a_terminal(test, args, env, stream):
    """Runs cudnnctl ARGS (in test's root) with `stream` ("stdout" or
    "stderr") on a pseudo-terminal, the other to /dev/null; what it wrote
    there.  It must exit 0."""
    import pty
    master, slave = pty.openpty()
    ends = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: slave}
    p = subprocess.Popen(cli_command(CLI, args, test.root), env=env, **ends)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    test.assertEqual(p.wait(timeout=120), 0, out[-400:])
    return out

#!/usr/bin/env python3
"""End-to-end tests of the cudnnctl binary.

Runs the real binary against archives made by tests/fixtures/mkcudnn.py,
each test in its own scratch folder with its own HOME.  Stdlib only
(Python >= 3.11, Debian 12's /usr/bin/python3 is fine).

    python3 tests/cli/test_cli.py -v            # everything
    python3 tests/cli/test_cli.py -v -k Real    # only the real-cuDNN test

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
from cctltest import (CI_VARS, EXIT, V9_PARTS, CliAsserts, Result, cli_command,  # noqa: E402
                      edited_manifest, private_binary, mkcudnn, mkcudnn_hostile,
                      mkcudnn_pack, quote_name,
                      sha256_file, snapshot, snapshot_diff)

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
class Fixtures:
    """Archives built once per run (on first use) in one scratch folder."""
    PACKS = {
        # key: (version, cuda, format, extra mkcudnn pack args)
        "v9_txz": ("9.19.0.99", 13, "tar.xz", []),
        "v9_zip": ("9.19.0.99", 13, "zip", []),
        "v9c12_txz": ("9.19.0.99", 12, "tar.xz", []),
        "v914_txz": ("9.14.0.99", 12, "tar.xz", []),
        "v8_zip": ("8.9.7.99", 12, "zip", ["--layout", "v8"]),
        "v8_txz": ("8.9.7.99", 12, "tar.xz", ["--layout", "v8", "--flat"]),
        "old_tgz": ("8.9.7.98", 12, "tgz", ["--layout", "old-cuda-prefix"]),
        "incomplete": ("9.19.0.99", 13, "tar.xz", ["--omit", "lib/libcudnn_cnn.so.9.19.0"]),
        "windows": ("9.19.0.99", 13, "zip", ["--platform", "windows-x86_64"]),
    }

    def __init__(self):
        self.dir = None
        self.cache = {}

    def base(self):
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="cudnnctl-fixtures-")
        return self.dir

    def pack(self, key):
        """(archive path, manifest path) of a packed fixture."""
        if key not in self.cache:
            version, cuda, fmt, extra = self.PACKS[key]
            out = os.path.join(self.base(), key)
            if "--platform" not in extra:
                extra = extra + ["--platform", PLATFORM]
            self.cache[key] = mkcudnn_pack(out, "redistrib_%s.json" % key, "--version", version,
                                           "--cuda", cuda, "--format", fmt, *extra)
        return self.cache[key]

    def hostile(self, kind, fmt):
        key = ("hostile", kind, fmt)
        if key not in self.cache:
            path = os.path.join(self.base(), "hostile", "hostile-%s.%s" % (kind, fmt))
            self.cache[key] = mkcudnn_hostile(kind, path)
        return self.cache[key]

    def cleanup(self):
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


FX = Fixtures()
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
                    if k not in ("CUDNNCTL_ROOT", "XDG_DATA_HOME", "CUDNNCTL_LDCONF_DIR",
                                 "CUDNNCTL_LDCONFIG", "LD_LIBRARY_PATH", "LIBRARY_PATH",
                                 "CPATH", "CUDNN_PATH") + CI_VARS}
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
        self.assertEqual(got, want, "installed tree differs from the archive:\n%s"
                         % snapshot_diff(want, got))
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


# ------------------------------------------------------------------ install
class TestInstall(CliTest):
    fixtures = ("v9_txz", "v9_zip", "v8_zip", "v8_txz", "old_tgz", "v914_txz")

    def check_install(self, key, vid, layout):
        path, manifest = FX.pack(key)
        r = self.ok("install", path, "--manifest", manifest)
        self.assertIn("installed cuDNN %s" % vid.split("-cuda")[0], r.out)
        self.assertIn("sha256 verified", r.out)
        self.assertIn("%s/versions/%s" % (self.root, vid), r.out)
        self.assert_installed(path, vid, layout)
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", vid,
                                                     os.path.basename(path).split(".tar")[0])))
        self.assert_active(vid)
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, "versions"))), [vid],
                         "staging left behind?")

    def test_install_v9_tar_xz(self):
        self.check_install("v9_txz", "9.19.0.99-cuda13", "v9")

    def test_install_v9_zip(self):
        self.check_install("v9_zip", "9.19.0.99-cuda13", "v9")

    def test_install_v8_zip(self):
        self.check_install("v8_zip", "8.9.7.99-cuda12", "v8")

    def test_install_v8_tar_xz_flat_manifest(self):
        self.check_install("v8_txz", "8.9.7.99-cuda12", "v8")

    def test_install_json(self):
        path, manifest = FX.pack("v9_txz")
        r = self.ok("install", path, "--manifest", manifest, "--json")
        doc = r.json()
        want = {"command": "install", "ok": True, "id": "9.19.0.99-cuda13",
                "version": "9.19.0.99", "cuda": 13, "platform": PLATFORM,
                "verified": True, "manifest": manifest, "archive": path,
                "sha256": sha256_file(path), "root": self.root,
                "path": os.path.join(self.root, "versions", "9.19.0.99-cuda13"),
                "already_installed": False, "files": 27, "activated": True,
                "previous": None}
        for k, v in want.items():
            self.assertEqual(doc.get(k), v, "%s in %s" % (k, r.out))
        tree = archive_tree(path)
        self.assertEqual(doc["files"], len(tree))
        self.assertGreater(doc["size"], 8 * 4096)

    def test_zip_and_tar_xz_install_the_same_tree(self):
        self.install("v9_txz")
        other = os.path.join(self.tmp, "other")
        self.install("v9_zip", root=other)
        a = installed_tree(os.path.join(self.root, "versions", "9.19.0.99-cuda13"))
        b = installed_tree(os.path.join(other, "versions", "9.19.0.99-cuda13"))
        self.assertEqual(a, b)
        modes = [{k: v[:2] for k, v in snapshot(os.path.join(r, "versions")).items()}
                 for r in (self.root, other)]
        self.assertEqual(modes[0], modes[1], "modes differ between zip and tar.xz")

    def test_same_archive_twice_is_already_installed(self):
        self.install("v9_txz")
        path, manifest = FX.pack("v9_txz")
        with self.unchanged():
            r = self.ok("install", path, "--manifest", manifest)
        self.assertIn("already installed", r.out)
        self.assertIn("nothing changed", r.out)
        with self.unchanged():
            doc = self.ok("install", path, "--manifest", manifest, "--json").json()
        self.assertTrue(doc["already_installed"])
        self.assertTrue(doc["verified"])

    def test_already_installed_json_describes_the_install(self):
        self.install("v9_txz")
        self.install("v914_txz")
        path, manifest = FX.pack("v9_txz")
        doc = self.ok("install", path, "--manifest", manifest, "--json").json()
        self.assertTrue(doc["already_installed"])
        self.assertEqual(doc["files"], 27, "files of an already installed version")
        self.assertGreater(doc["size"], 8 * 4096, "size of an already installed version")

    def test_verify_runs_after_install(self):
        # install runs verify at the end; the fake libraries are no ELF files,
        # so it fails (a VERIFY_* status) after the install itself was done
        path, manifest = FX.pack("v9_txz")
        r = self.run_cli("install", path, "--manifest", manifest, "--no-gpu", verify=True)
        self.assertIn(r.rc, [s for n, s in EXIT.items() if n.startswith("VERIFY_")],
                      "expected a verify status:%s" % r)
        self.assertIn("installed cuDNN 9.19.0.99", r.out)
        self.assert_installed(path, "9.19.0.99-cuda13")
        self.assert_active("9.19.0.99-cuda13")

    def test_header_disagreeing_with_manifest_warns(self):
        path, _ = FX.pack("v9_txz")
        manifest = os.path.join(self.tmp, "redistrib_9.20.0.json")
        mkcudnn("manifest-entry", "--version", "9.20.0.1", "--cuda", "13", "--platform",
                PLATFORM, "--archive", path, "--out", manifest)
        r = self.ok("install", path, "--manifest", manifest)
        self.assertIn("warning", r.err)
        self.assertIn("9.19.0", r.err)
        self.assertIn("9.20.0.1", r.err)
        self.assert_active("9.20.0.1-cuda13")

    def test_same_id_from_another_archive_is_refused(self):
        self.install("v9_txz")
        path, manifest = FX.pack("v9_zip")
        with self.unchanged():
            self.fails(EXIT["FAIL"], "install", path, "--manifest", manifest,
                       words=("already holds cuDNN 9.19.0.99-cuda13", "another archive",
                              "uninstall"))

    def test_second_install_activates_it_and_keeps_one_profile_line(self):
        self.install("v9_txz")
        r = self.install("v914_txz")
        self.assertIn("9.19.0.99-cuda13 -> 9.14.0.99-cuda12", r.out)
        self.assert_active("9.14.0.99-cuda12")
        self.assertEqual(len(os.listdir(os.path.join(self.root, "versions"))), 2)

    def test_no_activate_keeps_the_active_one(self):
        self.install("v9_txz")
        r = self.install("v914_txz", "--no-activate")
        self.assertIn("unchanged", r.out)
        # the id: a version alone is ambiguous with two CUDA builds of it
        self.assertIn("cudnnctl switch 9.14.0.99-cuda12 to use the new one", r.out)
        self.assert_active("9.19.0.99-cuda13")
        self.assertTrue(os.path.isdir(os.path.join(self.root, "versions", "9.14.0.99-cuda12")))
        # a folder an interrupted command left is named by list
        os.mkdir(os.path.join(self.root, "versions", ".staging-4242"))
        r = self.ok("list")
        self.assertIn("holds 1 folder left by an interrupted command", r.err)
        self.ok("switch", "9.14.0.99-cuda12")
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", ".staging-4242")))
        self.assertNotIn("interrupted", self.ok("list").err)

    def test_no_activate_on_empty_root_still_activates(self):
        # with nothing active there is nothing to keep (install.c)
        self.install("v914_txz", "--no-activate")
        self.assert_active("9.14.0.99-cuda12")

    def test_old_cuda_prefix_layout(self):
        path, manifest = FX.pack("old_tgz")
        names = tarfile.open(path).getnames()
        self.assertTrue(all(n == "cuda" or n.startswith("cuda/") for n in names), names)
        self.assertTrue(any(n.startswith("cuda/lib64/") for n in names), names)
        self.assertFalse(os.path.basename(path).startswith("cudnn-linux"))
        self.ok("install", path, "--manifest", manifest)
        vid = "8.9.7.98-cuda12"
        vdir = os.path.join(self.root, "versions", vid)
        self.assertFalse(os.path.exists(os.path.join(vdir, "cuda")))
        self.assertTrue(os.path.isfile(os.path.join(vdir, "NVIDIA_SLA_cuDNN_Support.txt")))
        # the libraries must be where `env` and env.sh point: <root>/current/lib
        self.assert_installed(path, vid, "v8", lib64_to_lib=True)
        lib_dirs = [line for line in self.ok("env").out.splitlines()
                    if line.startswith("export LD_LIBRARY_PATH=")][0]
        self.assertIn("%s/current/lib" % self.root, lib_dirs)
        self.assertTrue(os.path.isfile(os.path.join(self.root, "current", "lib",
                                                    "libcudnn.so.8")))

    def test_mirror_renamed_file_is_identified_by_hash(self):
        path, manifest = FX.pack("v9_txz")
        renamed = os.path.join(self.tmp, "something-else.tar.xz")
        shutil.copyfile(path, renamed)
        r = self.ok("install", renamed, "--manifest", manifest, "--json")
        doc = r.json()
        self.assertTrue(doc["verified"], r)
        self.assertEqual(doc["id"], "9.19.0.99-cuda13")
        self.assertEqual(doc["cuda"], 13)
        self.assert_installed(renamed, "9.19.0.99-cuda13")

    def test_relative_root_and_trailing_slash(self):
        path, manifest = FX.pack("v9_txz")
        self.ok("install", path, "--manifest", manifest, root="root/", cwd=self.tmp)
        self.assert_active("9.19.0.99-cuda13")
        # the same root spelt differently is the same root
        self.ok("deactivate", root="%s//" % self.root)
        self.assert_profiles(count=0)
        self.assertEqual(self.read(os.path.join(self.home, ".profile")), USER_PROFILE)

    def test_root_option_with_equals(self):
        path, manifest = FX.pack("v9_txz")
        self.ok("install", path, "--manifest=%s" % manifest, "--root=%s" % self.root, root=False)
        self.assert_active("9.19.0.99-cuda13")


# ------------------------------------------------------- unverified archives
class TestUnverified(CliTest):
    fixtures = ("v9_txz",)

    def test_unknown_archive_is_refused(self):
        path, _ = FX.pack("v9_txz")
        with self.unchanged():
            self.fails(EXIT["UNKNOWN_ARCHIVE"], "install", path,
                       words=("matches none", str(os.path.getsize(path)), sha256_file(path),
                              "--allow-unknown", "--manifest"))
        self.assertFalse(os.path.lexists(self.root))

    def test_allow_unknown_installs_unverified(self):
        path, _ = FX.pack("v9_txz")
        r = self.ok("install", path, "--allow-unknown")
        self.assertIn("warning", r.err)
        self.assertIn("unverified", r.err)
        self.assertIn("UNVERIFIED", r.out)
        # version from include/cudnn_version.h, CUDA major from the name
        self.assert_installed(path, "9.19.0-cuda13", verified=False)
        self.assert_active("9.19.0-cuda13")
        out = self.ok("list").out
        self.assertRegex(out, r"\* 9\.19\.0 +13 .*unverified, active")

    def test_renamed_unknown_archive_needs_cuda(self):
        path, _ = FX.pack("v9_txz")
        renamed = os.path.join(self.tmp, "mystery.tar.xz")
        shutil.copyfile(path, renamed)
        with self.unchanged():
            self.fails(EXIT["USAGE"], "install", renamed, "--allow-unknown",
                       words=("--cuda", "mystery.tar.xz"))
        self.ok("install", renamed, "--allow-unknown", "--cuda", "12")
        self.assert_installed(renamed, "9.19.0-cuda12", verified=False)
        self.assert_active("9.19.0-cuda12")

    def test_cuda_option_contradicting_the_manifest(self):
        path, manifest = FX.pack("v9_txz")
        with self.unchanged():
            self.fails(EXIT["USAGE"], "install", path, "--manifest", manifest, "--cuda", "12",
                       words=("cuda13", "cuda12"))


# ------------------------------------------------------------ bad manifests
class TestTampered(CliTest):
    fixtures = ("v9_txz", "v914_txz")

    def copy_release(self):
        path, manifest = FX.pack("v9_txz")
        d = os.path.join(self.tmp, "download")
        os.mkdir(d)
        copy = os.path.join(d, os.path.basename(path))
        shutil.copyfile(path, copy)
        with open(manifest, encoding="utf-8") as f:
            want = json.load(f)["cudnn"][PLATFORM]["cuda13"]
        return copy, manifest, want

    def check_both_roots(self, code, args, words):
        with self.unchanged():
            self.fails(code, *args, words=words)
        self.assertFalse(os.path.lexists(self.root))
        self.install("v914_txz")
        with self.unchanged():
            self.fails(code, *args, words=words)
        self.assertEqual(self.active_id(), "9.14.0.99-cuda12")

    def test_flipped_byte_is_sha256_mismatch(self):
        copy, manifest, want = self.copy_release()
        with open(copy, "r+b") as f:
            f.seek(os.path.getsize(copy) // 2)
            b = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([b[0] ^ 0xff]))
        self.assertEqual(os.path.getsize(copy), int(want["size"]))
        self.check_both_roots(EXIT["MISMATCH"], ("install", copy, "--manifest", manifest),
                              ("sha256 mismatch", want["sha256"], sha256_file(copy),
                               os.path.basename(copy)))

    def test_truncated_copy_is_size_mismatch(self):
        copy, manifest, want = self.copy_release()
        with open(copy, "r+b") as f:
            f.truncate(int(want["size"]) // 2)
        self.check_both_roots(EXIT["MISMATCH"], ("install", copy, "--manifest", manifest),
                              ("size mismatch", want["size"], str(int(want["size"]) // 2)))

    def test_missing_manifest_file(self):
        path, _ = FX.pack("v9_txz")
        missing = os.path.join(self.tmp, "nope.json")
        self.check_both_roots(EXIT["MANIFEST"], ("install", path, "--manifest", missing),
                              ("nope.json",))

    def test_manifest_not_json(self):
        path, _ = FX.pack("v9_txz")
        bad = os.path.join(self.tmp, "bad.json")
        self.write(bad, "{ not json")
        self.check_both_roots(EXIT["MANIFEST"], ("install", path, "--manifest", bad),
                              ("bad.json", "not valid JSON"))


# ---------------------------------------------------------- hostile archives
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
}
LOCALES = ("C", "C.UTF-8")


class TestHostile(CliTest):
    """Every hostile kind is refused before anything is written, in a fresh
    root and in one with another version installed and active, whatever
    the locale."""
    fixtures = ("v914_txz",)

    def check_kind(self, kind):
        fmts, name, why = HOSTILE[kind]
        code = EXIT["BADARCHIVE"] if name is None else EXIT["UNSAFE"]
        words = list(why)
        if name is not None:
            words += ["refusing", "entry '%s'" % quote_name(name), "nothing was written"]
        archives = [FX.hostile(kind, fmt) for fmt in fmts]
        evil = "/tmp/evil.txt"
        evil_before = snapshot(evil)
        for pre in (False, True):
            if pre:
                self.install("v914_txz")
            for path in archives:
                for loc in LOCALES:
                    with self.subTest(archive=os.path.basename(path), root_exists=pre,
                                      LC_ALL=loc):
                        with self.unchanged():
                            self.fails(code, "install", path, "--allow-unknown", "--cuda", "12",
                                       words=words + [os.path.basename(path)],
                                       env={"LC_ALL": loc})
                        if not pre:
                            self.assertFalse(os.path.lexists(self.root))
                        self.assertEqual(snapshot(evil), evil_before)
        self.assertEqual(self.active_id(), "9.14.0.99-cuda12")



for _kind in HOSTILE:
    setattr(TestHostile, "test_hostile_" + _kind.replace("-", "_"),
            lambda self, k=_kind: self.check_kind(k))


class TestBadArchives(CliTest):
    fixtures = ("incomplete", "windows", "v914_txz")

    def test_incomplete_archive_names_the_missing_library(self):
        path, manifest = FX.pack("incomplete")
        for pre in (False, True):
            if pre:
                self.install("v914_txz")
            with self.subTest(root_exists=pre), self.unchanged():
                self.fails(EXIT["BADARCHIVE"], "install", path, "--manifest", manifest,
                           words=("incomplete", "lib/libcudnn_cnn.so.9", "nothing was installed"))

    def test_windows_zip_on_linux(self):
        path, manifest = FX.pack("windows")
        with self.unchanged():
            self.fails(EXIT["PLATFORM"], "install", path, "--manifest", manifest,
                       words=("windows", PLATFORM))
        self.assertFalse(os.path.lexists(self.root))

    def test_unknown_windows_zip_on_linux(self):
        path, _ = FX.pack("windows")
        with self.unchanged():
            self.fails(EXIT["PLATFORM"], "install", path, "--allow-unknown",
                       words=("windows", PLATFORM))

    def test_missing_archive_file(self):
        with self.unchanged():
            self.fails(EXIT["IO"], "install", os.path.join(self.tmp, "nope.tar.xz"),
                       words=("nope.tar.xz", "No such file"))


# -------------------------------------------------------------------- roots
class TestRoot(CliTest):
    fixtures = ("v9_txz", "v914_txz")

    def refused(self, root, *words):
        path, manifest = FX.pack("v9_txz")
        with self.unchanged(root):
            self.fails(EXIT["BADROOT"], "install", path, "--manifest", manifest, root=root,
                       words=("install root",) + words)
        self.assertFalse(os.path.lexists(root))

    def test_root_with_a_space(self):
        self.refused(os.path.join(self.tmp, "my root"), "a space")

    def test_root_with_a_search_path_separator_or_a_dash(self):
        """A ':' split env.sh's LD_LIBRARY_PATH into a folder relative to
        the current one (issue 22, item 5); a part starting with '-' reads
        as an option to the commands it is passed to."""
        self.refused(os.path.join(self.tmp, "a:b"), "':'", "library search path")
        self.refused(os.path.join(self.tmp, "-rf"), "starting with '-'")
        self.ok("list", root=os.path.join(self.tmp, "not-a-dash"))

    def test_root_with_non_ascii(self):
        self.refused(os.path.join(self.tmp, "cudnn-\u00e9t\u00e9"), "non-ASCII")

    def test_root_with_shell_character(self):
        self.refused(os.path.join(self.tmp, "cud$nn"), "shells")

    def test_very_long_root(self):
        root = os.path.join(self.tmp, "r" * (190 - len(self.tmp) - 1))
        self.assertEqual(len(root), 190)
        self.refused(root, "too long")

    def test_root_too_long_for_the_archive(self):
        # short enough to be opened (and created), too long for the longest
        # path of this archive: refused, and the made folders removed again
        root = os.path.join(self.tmp, "r" * (135 - len(self.tmp) - 1))
        self.assertEqual(len(root), 135)
        self.refused(root, "too long", "200")

    def test_root_that_is_a_file(self):
        self.write(self.root, "x")
        path, manifest = FX.pack("v9_txz")
        with self.unchanged():
            self.fails(EXIT["BADROOT"], "install", path, "--manifest", manifest,
                       words=("not a folder",))

    def test_linked_home_and_linked_root(self):
        # issue 22 item 7: a HOME that is a link (Fedora Atomic's /home ->
        # var/home) broke every install ("Cannot extract through
        # symlink"); the root is resolved once, links inside archives are
        # still refused (TestHostile)
        real_home = os.path.join(self.tmp, "var", "home", "u")
        os.makedirs(os.path.dirname(real_home))
        os.rename(self.home, real_home)
        os.symlink(real_home, self.home)  # HOME names the link
        path, manifest = FX.pack("v9_txz")
        r = self.ok("install", path, "--manifest", manifest,
                    root=os.path.join(self.home, "cudnn"))  # through the link
        want = os.path.join(real_home, "cudnn")
        self.assertIn("into %s/versions/9.19.0.99-cuda13" % want, r.out)
        self.assertIn("'%s/env.sh'" % want, self.read(os.path.join(real_home, ".profile")))
        # a root that is itself a link to a folder is the folder
        target = os.path.join(self.tmp, "real-root")
        os.mkdir(target)
        os.symlink(target, self.root)
        r = self.install("v9_txz")
        self.assertIn("into %s/versions/" % target, r.out)
        self.assertTrue(os.path.islink(self.root))
        self.assertEqual(self.ok("list", "--json").json()["root"], target)

    def test_relative_home_is_refused(self):
        # issue 22 item 9: HOME=relhome wrote ./relhome/.profile
        path, manifest = FX.pack("v9_txz")
        with self.unchanged():
            self.fails(EXIT["ACTIVATE"], "install", path, "--manifest", manifest,
                       env={"HOME": "relhome"},
                       words=("HOME='relhome' is not an absolute path", "full path"))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "relhome")))

    def test_failed_install_removes_the_parents_it_made(self):
        path, _ = FX.pack("v9_txz")
        top = os.path.join(self.tmp, "new1")
        with self.unchanged():
            self.fails(EXIT["UNKNOWN_ARCHIVE"], "install", path,
                       root=os.path.join(top, "new2", "root"))
        self.assertFalse(os.path.lexists(top), "left behind: %s" % snapshot(top))

    def test_failed_install_into_an_existing_empty_root(self):
        os.mkdir(self.root)
        path, _ = FX.pack("v9_txz")
        with self.unchanged():
            self.fails(EXIT["UNKNOWN_ARCHIVE"], "install", path)

    def test_lock_held(self):
        self.install("v914_txz")
        path, manifest = FX.pack("v9_txz")
        fd = os.open(os.path.join(self.root, ".lock"), os.O_RDWR)
        self.addCleanup(os.close, fd)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, b"%d\ninstall 9.19.0.56\n" % os.getpid())
        with self.unchanged():
            for args in (("install", path, "--manifest", manifest),
                         ("switch", "9.14"), ("uninstall", "9.14", "--force"),
                         ("deactivate",)):
                with self.subTest(command=args[0]):
                    self.fails(EXIT["LOCKED"], *args, "--wait", "0",
                               words=("in use", ".lock", "process %d (install 9.19.0.56)"
                                      % os.getpid(), "--wait SECONDS"))
            self.fails(EXIT["LOCKED"], "switch", "9.14", "--wait", "1",
                       words=("still in use after 1 s", "process %d" % os.getpid()))
            for bad in ("-1", "x", "", "86401"):
                self.fails(EXIT["USAGE"], "switch", "9.14", "--wait", bad, words=["--wait"])
            # reading needs no lock
            self.assertIn("9.14.0.99", self.ok("list").out)
            self.assertIn("CUDNN_PATH", self.ok("env").out)
        fcntl.flock(fd, fcntl.LOCK_UN)
        self.install("v9_txz")

    def hold_lock(self, doing=b"install 9.19.0.56"):
        """Holds <root>/.lock as another cudnnctl would; returns its fd."""
        fd = os.open(os.path.join(self.root, ".lock"), os.O_RDWR | os.O_CREAT)
        self.addCleanup(os.close, fd)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, b"%d\n%s\n" % (os.getpid(), doing))
        return fd

    def start_waiting(self, *args):
        """Starts cudnnctl ARGS against a held root and returns it once it
        says whom it waits for (stderr read line by line: no clock)."""
        cmd = cli_command(CLI, args, self.root, False)
        proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "waiting for" in line:
                break
        self.assertIn("waiting for process %d (install 9.19.0.56) to finish" % os.getpid(),
                      "".join(seen))
        return proc

    def test_waits_for_the_holder(self):
        """A second command waits for the first instead of failing, as
        cargo and uv do, saying who holds the root and doing what."""
        self.install("v914_txz")
        path, manifest = FX.pack("v9_txz")
        fd = self.hold_lock()
        proc = self.start_waiting("install", path, "--manifest", manifest, "--wait", "600")
        self.assertIsNone(proc.poll())
        self.assertEqual(self.active_id(), "9.14.0.99-cuda12")  # nothing done yet
        fcntl.flock(fd, fcntl.LOCK_UN)
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(self.active_id(), "9.19.0.99-cuda13")

    def test_interrupt_while_waiting_leaves_nothing(self):
        self.install("v914_txz")
        path, manifest = FX.pack("v9_txz")
        self.hold_lock()
        with self.unchanged():
            proc = self.start_waiting("install", path, "--manifest", manifest)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=300)
            self.assertEqual(proc.returncode, EXIT["INTERRUPTED"], err)

    def test_a_dead_holder_is_no_holder(self):
        """The lock goes with the process that held it, however it died;
        what it left is swept as before."""
        self.install("v914_txz")
        holder = subprocess.Popen(
            [sys.executable, "-c", "import fcntl, os, sys, time\n"
             "fd = os.open(sys.argv[1], os.O_RDWR)\n"
             "fcntl.flock(fd, fcntl.LOCK_EX)\n"
             "os.mkdir(sys.argv[2])\n"
             "print('held', flush=True)\n"
             "time.sleep(600)\n",
             os.path.join(self.root, ".lock"),
             os.path.join(self.root, "versions", ".staging-1-deadbeef")],
            stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: holder.poll() is None and holder.kill())
        self.assertEqual(holder.stdout.readline().strip(), "held")
        holder.kill()
        holder.wait()
        holder.stdout.close()
        self.install("v9_txz", "--wait", "0")
        self.assertFalse(os.path.lexists(os.path.join(self.root, "versions",
                                                      ".staging-1-deadbeef")))

    def test_commands_started_at_once(self):
        """Installs of different versions, install with switch, uninstall
        with verify: started together, each does what it does alone."""
        def start(*args):
            return subprocess.Popen(cli_command(CLI, args, self.root, False), env=self.env,
                                    cwd=self.tmp, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)

        def finish(procs):
            for p in procs:
                out, err = p.communicate(timeout=600)
                yield p.returncode, out, err

        packs = [FX.pack(k) for k in ("v9_txz", "v914_txz", "v8_zip")]
        procs = [start("install", p, "--manifest", m, "--no-activate") for p, m in packs]
        for rc, out, err in finish(procs):
            self.assertEqual(rc, 0, err)
        got = [i["id"] for i in self.ok("list", "--json").json()["installed"]]
        self.assertEqual(got, ["8.9.7.99-cuda12", "9.14.0.99-cuda12", "9.19.0.99-cuda13"])
        # install with switch
        path, manifest = FX.pack("v9c12_txz")
        procs = [start("install", path, "--manifest", manifest, "--no-activate"),
                 start("switch", "8.9.7")]
        for rc, out, err in finish(procs):
            self.assertEqual(rc, 0, err)
        self.assertEqual(self.active_id(), "8.9.7.99-cuda12")
        self.assertEqual(len(self.ok("list", "--json").json()["installed"]), 4)
        # uninstall with verify: verify's answer is the one it gives alone
        alone = self.run_cli("verify", "--no-gpu", "--json")
        procs = [start("uninstall", "9.14"), start("verify", "--no-gpu", "--json")]
        (urc, _, uerr), (vrc, vout, verr) = finish(procs)
        self.assertEqual(urc, 0, uerr)
        self.assertEqual(vrc, alone.rc, verr)
        stages = lambda doc: [(s["stage"], s["status"]) for s in doc["stages"]]  # noqa: E731
        self.assertEqual(stages(json.loads(vout)), stages(alone.json()))

    def mount_tmpfs(self, options):
        if not can_mount_tmpfs():
            self.skipTest("mounting a tmpfs needs root")
        mnt = os.path.join(self.tmp, "mnt")
        os.mkdir(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", mnt],
                           capture_output=True, text=True)
        if r.returncode:
            self.skipTest("cannot mount a tmpfs here: %s" % r.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", mnt], capture_output=True)
        return mnt

    def test_read_only_linked_bashrc(self):
        # issue 22 item 9: ~/.bashrc a link into a read-only store (Nix's
        # home-manager): the first install cannot activate; the error says
        # why and how to go on (the line to add, --ci)
        mnt = self.mount_tmpfs("size=1m")
        store = os.path.join(mnt, "bashrc")
        self.write(store, USER_BASHRC)
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        bashrc = os.path.join(self.home, ".bashrc")
        os.unlink(bashrc)
        os.symlink(store, bashrc)
        path, manifest = FX.pack("v9_txz")
        with self.unchanged():
            self.fails(EXIT["ACTIVATE"], "install", path, "--manifest", manifest,
                       words=("Read-only file system", "cannot be changed here",
                              "home-manager", profile_line(self.root), "--ci"))
        r = self.ok("install", path, "--manifest", manifest, "--ci")
        self.assertEqual(self.read(bashrc), USER_BASHRC)
        self.assertIn(self.root, self.ok("env").out)

    def test_not_enough_space(self):
        mnt = self.mount_tmpfs("size=1m")
        path, manifest = FX.pack("v9_txz")
        with self.unchanged(mnt):
            self.fails(EXIT["NOSPACE"], "install", path, "--manifest", manifest,
                       root=os.path.join(mnt, "root"),
                       words=("not enough room", "nothing was written"))

    def test_tar_xz_too_big_for_half_the_space_is_read_twice(self):
        # a tar.xz is decompressed once, into a temporary file under the
        # root, only when that file takes at most half the free space;
        # otherwise it is read twice and the free-space check refuses it
        # with nothing written
        mnt = self.mount_tmpfs("size=4k")
        path, manifest = FX.pack("v9_txz")
        with self.unchanged(mnt):
            self.fails(EXIT["NOSPACE"], "install", path, "--manifest", manifest,
                       root=os.path.join(mnt, "root"),
                       words=("not enough room", "nothing was written"))

    def test_out_of_memory_while_decompressing(self):
        # issue 22 item 9: a tar.xz whose dictionary (1 GiB) does not fit in
        # the memory allowed (ulimit -v 512 MB) is exit 3, out of memory,
        # not "the file is damaged, download it again" (exit 7)
        if "ASAN_OPTIONS" in os.environ:
            self.skipTest("AddressSanitizer reserves terabytes of address space: "
                          "no address-space limit under it")
        src, manifest = FX.pack("v9_txz")
        path = os.path.join(self.tmp, "big-dict", os.path.basename(src))
        os.makedirs(os.path.dirname(path))
        with lzma.open(src) as f:
            tar = f.read()
        with open(path, "wb") as f:
            f.write(lzma.compress(tar, format=lzma.FORMAT_XZ,
                                  filters=[{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 30}]))
        m = edited_manifest(manifest, os.path.join(self.tmp, "m", "redistrib_big.json"),
                            PLATFORM, 13, archive=path)
        root = os.path.join(self.tmp, "nomem-root")

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
        for jobs in ("1", "2"):
            cmd = [CLI, "install", "--root", root, "--no-verify", path, "--manifest", m,
                   "--jobs", jobs]
            r = subprocess.run(cmd, env=self.env, cwd=self.tmp, capture_output=True,
                               timeout=300, preexec_fn=limit)
            err = r.stderr.decode()
            self.assertEqual(r.returncode, EXIT["NOMEM"], err)
            self.assertIn("out of memory", err)
            self.assertNotIn("download it again", err)
            self.assertFalse(os.path.lexists(root), "the root was left behind")
        self.ok("install", path, "--manifest", m)  # with the memory it needs

    def test_write_error_while_decompressing(self):
        # the temporary copy cannot be written (a file size limit): a clear
        # error naming the archive and the folder, and no trace
        path, manifest = FX.pack("v9_txz")
        root = os.path.join(self.tmp, "fsize-root")

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        cmd = [CLI, "install", "--root", root, "--no-verify", path, "--manifest", manifest]
        r = subprocess.run(cmd, env=self.env, cwd=self.tmp, capture_output=True, timeout=300,
                           preexec_fn=limit)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, EXIT["IO"], err)
        for w in ("cannot unpack", os.path.basename(path), "File too large",
                  "nothing was installed"):
            self.assertIn(w, err)
        self.assertFalse(os.path.lexists(root), "the root was left behind")
        # an archive that is neither named as a release nor taken
        # unverified is not copied before it is identified: under the same
        # limit it is refused as unknown, not for the size of a copy
        mystery = os.path.join(self.tmp, "mystery.tar.xz")
        shutil.copy(path, mystery)
        r = subprocess.run([CLI, "install", "--root", root, "--no-verify", mystery],
                           env=self.env, cwd=self.tmp, capture_output=True, timeout=300,
                           preexec_fn=limit)
        self.assertEqual(r.returncode, EXIT["UNKNOWN_ARCHIVE"], r.stderr.decode())
        self.assertFalse(os.path.lexists(root), "the root was left behind")

    def test_disk_full_during_extraction(self):
        # enough bytes for the free-space check, too few inodes for the files:
        # extraction fails halfway (ENOSPC); the staging folder must go
        mnt = self.mount_tmpfs("size=64m,nr_inodes=16")
        path, manifest = FX.pack("v9_txz")
        with self.unchanged(mnt):
            self.fails(EXIT["NOSPACE"], "install", path, "--manifest", manifest,
                       root=os.path.join(mnt, "root"))


# --------------------------------------------------------------------- list
class TestList(CliTest):
    fixtures = ("v9_txz", "v8_zip")

    def test_list_nothing_installed(self):
        r = self.ok("list")
        self.assertIn("no cuDNN installed", r.out)
        self.assertFalse(os.path.lexists(self.root))

    def test_list_json_nothing_installed(self):
        r = self.ok("list", "--json")
        doc = r.json()
        self.assertTrue(doc["ok"])
        self.assertEqual(doc["installed"], [])

    def install_two(self):
        self.install("v9_txz")
        self.install("v8_zip")
        self.ok("switch", "9.19")

    def test_list_human(self):
        self.install_two()
        lines = self.ok("list").out.splitlines()
        self.assertIn("VERSION", lines[0])
        self.assertRegex(lines[1], r"^  8\.9\.7\.99 +12 +\S+ \S+ +verified$")
        self.assertRegex(lines[2], r"^\* 9\.19\.0\.99 +13 +\S+ \S+ +verified, active$")

    def test_list_json(self):
        self.install_two()
        r = self.ok("list", "--json")
        doc = r.json()
        self.assertEqual(doc["root"], self.root)
        got = [(i["id"], i["version"], i["cuda"], i["active"], i["verified"], i["files"])
               for i in doc["installed"]]
        self.assertEqual(got, [("8.9.7.99-cuda12", "8.9.7.99", 12, False, True, 24),
                               ("9.19.0.99-cuda13", "9.19.0.99", 13, True, True, 27)])

    def test_list_available_human(self):
        r = self.ok("list", "--available", root=False)
        out = r.out
        # once: where newer or missing releases come from
        self.assertEqual(r.err.count("cudnnctl manifests update"), 1, r)
        self.assertIn("newer than 9.27.0.42", r.err)
        self.assertRegex(out, r"(?m)^9\.1\.0\.70 +12 .*cudnn-linux-x86_64-9\.1\.0\.70_cuda12-archive\.tar\.xz$")
        self.assertNotIn("windows", out)

    def test_list_available_json(self):
        r = self.ok("list", "--available", "--json", root=False)
        doc = r.json()
        self.assertEqual(doc["platform"], PLATFORM)
        hits = [a for a in doc["available"] if a["version"] == "9.1.0.70" and a["cuda"] == 12]
        self.assertEqual(len(hits), 1, r)
        self.assertTrue(hits[0]["sha256"].startswith("fdc6d6f2"), hits[0])
        self.assertTrue(all("/linux-x86_64/" in a["relative_path"] for a in doc["available"]))

    def test_list_available_with_extra_manifest(self):
        _, manifest = FX.pack("v9_txz")
        out = self.ok("list", "--available", "--manifest", manifest, root=False).out
        self.assertRegex(out, r"(?m)^9\.19\.0\.99 +13 ")


    def test_list_available_in_version_order(self):
        """Every part numerically: 9.2 before 9.10 before 9.27 (it sorted as
        text: 9.10-9.19 before 9.2, 9.27 between 9.22 and 9.3)."""
        def key(v):
            return tuple(int(x) for x in v.split("."))
        doc = self.ok("list", "--available", "--json", root=False).json()
        got = [(a["version"], a["cuda"]) for a in doc["available"]]
        self.assertEqual(got, sorted(got, key=lambda vc: (key(vc[0]), vc[1])), got)
        versions = [v for v, _ in got]
        for lo, hi in (("8.9.7.29", "9.1.0.70"), ("9.1.0.70", "9.2.0.82"),
                       ("9.2.0.82", "9.10.2.21"), ("9.10.2.21", "9.27.0.42"),
                       ("9.22.0.52", "9.27.0.42"), ("9.3.0.75", "9.22.0.52")):
            self.assertLess(versions.index(lo), versions.index(hi), (lo, hi))
        out = self.ok("list", "--available", root=False).out
        shown = [line.split()[0] for line in out.splitlines()[1:] if line[:1].isdigit()]
        self.assertEqual(shown, versions)

    def dated_manifest(self, version, date):
        """A manifest of one (unreal) release with the given release_date."""
        path = os.path.join(self.tmp, "redistrib_%s.json" % version)
        name = "cudnn-%s-%s_cuda12-archive.tar.xz" % (PLATFORM, version)
        doc = {"release_date": date, "release_label": version, "release_product": "cudnn",
               "cudnn": {"name": "x", "license": "cudnn", "version": version,
                         PLATFORM: {"cuda12": {
                             "relative_path": "cudnn/%s/%s" % (PLATFORM, name),
                             "sha256": hashlib.sha256(version.encode()).hexdigest(),
                             "md5": "0" * 32, "size": "1000"}}}}
        self.write(path, json.dumps(doc, indent=4))
        return path

    def test_newest_is_the_highest_version_not_the_latest_date(self):
        """NVIDIA's dates do not rise with versions (9.24.1 came after
        9.25.1): "newest" is the highest version."""
        manifests = []
        for version, date in (("9.95.1.1", "2027-01-01"), ("9.96.0.1", "2026-06-01"),
                              ("9.100.0.1", "2025-01-01"), ("9.99.0.1", "2027-06-01")):
            manifests += ["--manifest", self.dated_manifest(version, date)]
        for want, ask in (("9.100.0.1", "9"), ("9.96.0.1", "9.96"), ("9.95.1.1", "9.95")):
            doc = self.ok("download", ask, "--cuda", "12", "--dry-run", "--json",
                          *manifests, root=False).json()
            self.assertEqual(doc["version"], want, doc)
        doc = self.ok("list", "--available", "--json", *manifests, root=False).json()
        ours = {"9.95.1.1", "9.96.0.1", "9.99.0.1", "9.100.0.1"}
        mine = [a["version"] for a in doc["available"] if a["version"] in ours]
        self.assertEqual(mine, ["9.95.1.1", "9.96.0.1", "9.99.0.1", "9.100.0.1"])

    def test_cache_list_in_version_order(self):
        cache = os.path.join(self.tmp, "cache")
        os.makedirs(os.path.join(cache, "archives"))
        os.makedirs(os.path.join(cache, "manifests"))
        names = ["cudnn-%s-%s_cuda12-archive.tar.xz" % (PLATFORM, v)
                 for v in ("9.27.0.42", "9.2.0.82", "9.10.2.21", "8.9.7.29")]
        for n in names:
            self.write(os.path.join(cache, "archives", n), "x")
        for v in ("9.3.0", "9.22.0", "9.10.0"):
            self.write(os.path.join(cache, "manifests", "redistrib_%s.json" % v), "{}")
        doc = self.ok("cache", "list", "--json", "--cache", cache, root=False).json()
        got = [e["name"] for e in doc["entries"]]
        self.assertEqual(got, [names[3], names[1], names[2], names[0],
                               "redistrib_9.3.0.json", "redistrib_9.10.0.json",
                               "redistrib_9.22.0.json"])


class TestHostileManifest(CliTest):
    """A manifest's values become paths only once checked: a version or a
    relative_path that leads out of the root, the cache or the mirror is
    refused, naming the file, the field and the value; nothing is written
    anywhere."""
    fixtures = ("v914_txz",)

    def evil(self, **change):
        """The fixture's manifest with cudnn.version or its entry changed."""
        path, manifest = FX.pack("v914_txz")
        return path, edited_manifest(manifest, os.path.join(self.tmp, "evil",
                                                            "redistrib_9.14.0.json"),
                                     PLATFORM, 12, **change)

    def test_version_with_dot_dot_installs_nothing(self):
        escaped = "/tmp/cctl-escaped-%d" % os.getpid()
        self.addCleanup(shutil.rmtree, escaped + "-cuda12", True)
        version = "9/../../../../../../../.." + escaped
        path, manifest = self.evil(version=version)
        self.install("v914_txz")  # a root in use: it must stay as it is
        with self.unchanged():
            r = self.fails(EXIT["MANIFEST"], "install", path, "--manifest", manifest,
                           words=[manifest, "cudnn.version", version, "nothing was"])
        self.assertFalse(os.path.lexists(escaped + "-cuda12"), r)
        with self.unchanged():
            self.fails(EXIT["MANIFEST"], "install", "9.14", "--manifest", manifest,
                       "--offline", words=[manifest, "cudnn.version"])
        self.assertEqual(self.active_id(), "9.14.0.99-cuda12")

    def test_relative_path_outside_the_folder_mirror(self):
        mirror = os.path.join(self.tmp, "mirror")
        os.makedirs(os.path.join(mirror, "cudnn", PLATFORM))
        secret = os.path.join(self.tmp, "secret.txt")
        self.write(secret, "not for the mirror\n")
        cache = os.path.join(self.tmp, "cache")
        for rel in ("../secret.txt", "cudnn/../../secret.txt", "/etc/hostname",
                    "cudnn\\..\\..\\secret.txt", "C:/secret.txt"):
            with self.subTest(relative_path=rel):
                _, manifest = self.evil(relative_path=rel)
                with self.unchanged(cache, mirror):
                    self.fails(EXIT["MANIFEST"], "download", "9.14", "--cuda", "12",
                               "--mirror", mirror, "--cache", cache, "--manifest", manifest,
                               words=[manifest, "relative_path", rel], root=False)
                self.assertFalse(os.path.lexists(cache))

    def test_damaged_record_is_not_a_path(self):
        self.install("v914_txz")
        vdir = os.path.join(self.root, "versions", "9.14.0.99-cuda12")
        rec = os.path.join(vdir, ".cudnnctl-record")
        text = self.read(rec)
        for field, bad in (("id", "../../../tmp/x-cuda12"), ("version", "9/../x")):
            with self.subTest(field=field):
                lines = [("%s\t%s" % (field, bad)) if line.startswith(field + "\t") else line
                         for line in text.split("\n")]
                self.write(rec, "\n".join(lines))
                r = self.ok("list", "--json")
                self.assertEqual(r.json()["installed"], [], r)
                self.assertIn("damaged", r.err)
                self.assertIn(bad, r.err)
        self.write(rec, text)
        self.assertEqual(len(self.ok("list", "--json").json()["installed"]), 1)
        # a record that is a FIFO (it hung list) or a link to /dev/zero
        for kind in ("fifo", "link"):
            with self.subTest(record=kind):
                os.unlink(rec)
                os.mkfifo(rec) if kind == "fifo" else os.symlink("/dev/zero", rec)
                r = self.run_cli("list", "--json")
                self.assertEqual((r.rc, r.json()["installed"]), (0, []), r)
                self.assertIn("not an install record cudnnctl wrote", r.err)
        # it must not trap the user: install says "uninstall first", and
        # uninstall --force with the whole id removes the folder as it is
        path, manifest = FX.pack("v914_txz")
        self.fails(EXIT["FAIL"], "install", path, "--manifest", manifest, "--wait", "0")
        r = self.ok("uninstall", "9.14.0.99-cuda12", "--force")
        self.assertIn("no usable install record", r.err)
        self.assertFalse(os.path.lexists(vdir))
        self.assertIsNone(self.active_id())
        self.install("v914_txz")


# ------------------------------------------------------------------- switch
class TestSwitch(CliTest):
    fixtures = ("v914_txz", "v8_zip", "v9_txz", "v9c12_txz")

    def setUp(self):
        super().setUp()
        self.install("v914_txz")
        self.install("v8_zip")
        self.install("v9_txz")
        self.assert_active("9.19.0.99-cuda13")

    def test_switch_by_prefix(self):
        r = self.ok("switch", "9.14")
        self.assertIn("9.19.0.99-cuda13 -> 9.14.0.99-cuda12", r.out)
        self.assert_active("9.14.0.99-cuda12")
        with self.unchanged():
            r = self.ok("switch", "9.14")
        self.assertIn("already active", r.out)
        self.ok("switch", "8")
        self.assert_active("8.9.7.99-cuda12")

    def test_switch_json(self):
        doc = self.ok("switch", "8.9.7", "--json").json()
        want = {"command": "switch", "ok": True, "from": "9.19.0.99-cuda13",
                "to": "8.9.7.99-cuda12", "changed": True}
        self.assertEqual({k: doc.get(k) for k in want}, want, doc)

    def test_switch_ambiguous(self):
        with self.unchanged():
            self.fails(EXIT["AMBIGUOUS"], "switch", "9",
                       words=("matches 2", "9.14.0.99-cuda12", "9.19.0.99-cuda13"))

    def test_switch_not_installed(self):
        with self.unchanged():
            self.fails(EXIT["NOTFOUND"], "switch", "7.0",
                       words=("7.0", "not installed", "8.9.7.99-cuda12", "9.14.0.99-cuda12"))

    def test_prefix_matches_whole_components(self):
        with self.unchanged():
            for prefix in ("9.1", "9.19.0.5", "8.9.7.9", "9.14.0.6"):
                with self.subTest(prefix=prefix):
                    self.fails(EXIT["NOTFOUND"], "switch", prefix, words=("not installed",))

    def test_two_cuda_variants(self):
        self.install("v9c12_txz")
        self.assert_active("9.19.0.99-cuda12")
        with self.unchanged():
            self.fails(EXIT["AMBIGUOUS"], "switch", "9.19.0.99",
                       words=("9.19.0.99-cuda12", "9.19.0.99-cuda13", "--cuda"))
            self.fails(EXIT["NOTFOUND"], "switch", "9.14", "--cuda", "13", words=("cuda13",))
        r = self.ok("switch", "9.19.0.99", "--cuda", "13")
        self.assertIn("9.19.0.99-cuda12 -> 9.19.0.99-cuda13", r.out)
        self.assert_active("9.19.0.99-cuda13")
        self.ok("switch", "9.19.0.99-cuda12")
        self.assert_active("9.19.0.99-cuda12")

    def test_switch_without_root(self):
        with self.unchanged(os.path.join(self.tmp, "none")):
            self.fails(EXIT["NOTFOUND"], "switch", "9", root=os.path.join(self.tmp, "none"),
                       words=("does not exist",))


# ---------------------------------------------------------------- uninstall
class TestUninstall(CliTest):
    fixtures = ("v914_txz", "v9_txz")

    def setUp(self):
        super().setUp()
        self.install("v914_txz")
        self.install("v9_txz")
        # things outside the root that links inside it point at
        self.outside_file = os.path.join(self.sibling, "keep.txt")
        os.symlink(os.path.join(self.root, "versions", "9.14.0.99-cuda12", "lib"),
                   os.path.join(self.sibling, "link-into-root"))

    def test_refuses_the_active_one(self):
        with self.unchanged():
            self.fails(EXIT["ACTIVE"], "uninstall", "9.19",
                       words=("9.19.0.99-cuda13", "active", "--force", "nothing was removed"))

    def test_removes_a_non_active_one(self):
        vdir = os.path.join(self.root, "versions", "9.14.0.99-cuda12")
        # links a user (or anything) added inside the version folder, pointing
        # outside the root: removing the version must not follow them
        os.symlink(self.outside_file, os.path.join(vdir, "lib", "outside-file"))
        os.symlink(self.sibling, os.path.join(vdir, "outside-dir"))
        before = snapshot(self.root)
        with self.unchanged(self.sibling, self.home, only=True):
            r = self.ok("uninstall", "9.14")
        self.assertIn("removed cuDNN 9.14.0.99-cuda12", r.out)
        self.assertFalse(os.path.lexists(vdir))
        after = snapshot(self.root)
        expect = {k: v for k, v in before.items()
                  if not k.startswith("versions/9.14.0.99-cuda12")}
        self.assertEqual(after, expect, snapshot_diff(expect, after))
        self.assert_active("9.19.0.99-cuda13")
        self.assertNotIn("9.14", self.ok("list").out)

    def test_force_removes_the_active_one_and_current(self):
        with self.unchanged(self.sibling, only=True):
            doc = self.ok("uninstall", "9.19", "--force", "--json").json()
        # nothing is active any more, so the shell set-up goes too
        for name in (".profile", ".bashrc"):
            with open(os.path.join(self.home, name)) as f:
                self.assertNotIn("env.sh", f.read())
        self.assertFalse(os.path.exists(os.path.join(self.root, "env.sh")))
        self.assertEqual(doc, {"command": "uninstall", "ok": True,
                               "removed": "9.19.0.99-cuda13"})
        self.assertFalse(os.path.lexists(os.path.join(self.root, "versions",
                                                      "9.19.0.99-cuda13")))
        self.assertFalse(os.path.lexists(os.path.join(self.root, "current")))
        self.assertTrue(os.path.isdir(os.path.join(self.root, "versions", "9.14.0.99-cuda12")))
        self.fails(EXIT["NOTFOUND"], "env", words=("no cuDNN is active",))
        self.assertNotIn("*", self.ok("list").out)

    def test_not_installed(self):
        with self.unchanged():
            self.fails(EXIT["NOTFOUND"], "uninstall", "7", words=("not installed",))
            self.fails(EXIT["AMBIGUOUS"], "uninstall", "9", words=("matches 2",))


# ---------------------------------------------------------------------- env
class TestEnv(CliTest):
    fixtures = ("v9_txz",)

    def setUp(self):
        super().setUp()
        self.install("v9_txz")
        self.cur = os.path.join(self.root, "current")

    def test_env_sh(self):
        out = self.ok("env").out
        self.assertEqual(out, "export CUDNN_PATH='%s'\n"
                              "export LD_LIBRARY_PATH='%s/lib'\n"
                              "export LIBRARY_PATH='%s/lib'\n"
                              "export CPATH='%s/include'\n" % ((self.cur,) * 4))

    def test_env_prepends_once_and_keeps_other_dirs(self):
        lib = self.cur + "/lib"
        out = self.ok("env", env={"LD_LIBRARY_PATH": "/opt/other:%s:/x/y" % lib}).out
        self.assertIn("export LD_LIBRARY_PATH='%s:/opt/other:/x/y'\n" % lib, out)

    def test_env_other_shells(self):
        ps = self.ok("env", "--shell", "powershell").out
        self.assertIn("$env:CUDNN_PATH = '%s'\n" % self.cur, ps)
        self.assertIn("$env:LD_LIBRARY_PATH = '%s/lib'\n" % self.cur, ps)
        cmd = self.ok("env", "--shell", "cmd").out
        self.assertIn('set "CUDNN_PATH=%s"\n' % self.cur, cmd)
        self.assertIn('set "LD_LIBRARY_PATH=%s/lib"\n' % self.cur, cmd)
        self.fails(EXIT["USAGE"], "env", "--shell", "fish", words=("fish",))

    def test_eval_env(self):
        script = 'eval "$("$0" env --root "$1")"; printf "%s|%s" "$CUDNN_PATH" "$LD_LIBRARY_PATH"'
        r = subprocess.run(["sh", "-c", script, CLI, self.root], capture_output=True,
                           text=True, env=dict(self.env, LD_LIBRARY_PATH="/opt/a"))
        self.assertEqual(r.stdout, "%s|%s/lib:/opt/a" % (self.cur, self.cur), r.stderr)

    def test_env_nothing_active(self):
        self.ok("deactivate")
        self.fails(EXIT["NOTFOUND"], "env", words=("no cuDNN is active",))
        self.fails(EXIT["NOTFOUND"], "env", root=os.path.join(self.tmp, "none"),
                   words=("does not exist",))

    def source(self, shell, script, **env):
        r = subprocess.run([shell, "-uc", script, "sh", os.path.join(self.root, "env.sh")],
                           capture_output=True, text=True, env=dict(self.env, **env))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_sourced_env_sh(self):
        lib = self.cur + "/lib"
        shells = ["sh"] + (["bash"] if shutil.which("bash") else [])
        for shell in shells:
            with self.subTest(shell=shell):
                got = self.source(shell, '. "$1"; . "$1"; printf %s "$LD_LIBRARY_PATH"',
                                  LD_LIBRARY_PATH="%s:/opt/other:%s:/x" % (lib, lib))
                self.assertEqual(got, "%s:/opt/other:/x" % lib)
                got = self.source(shell, 'unset LD_LIBRARY_PATH; . "$1"; '
                                         'printf "%s|%s|%s" "$LD_LIBRARY_PATH" "$CUDNN_PATH" "$CPATH"')
                self.assertEqual(got, "%s|%s|%s/include" % (lib, self.cur, self.cur))
                # a file name with glob characters in the old value is kept as is
                got = self.source(shell, '. "$1"; printf %s "$LD_LIBRARY_PATH"',
                                  LD_LIBRARY_PATH="/opt/*:/x")
                self.assertEqual(got, "%s:/opt/*:/x" % lib)

    def test_login_shell_gets_it_through_profile(self):
        r = subprocess.run(["sh", "-c", '. "$HOME/.profile"; printf %s "$CUDNN_PATH"'],
                           capture_output=True, text=True, env=self.env)
        self.assertEqual(r.stdout, self.cur, r.stderr)


# --------------------------------------------------------------- deactivate
class TestDeactivate(CliTest):
    fixtures = ("v9_txz", "v914_txz")

    def test_deactivate_and_reactivate(self):
        self.install("v9_txz")
        r = self.ok("deactivate")
        self.assertIn("deactivated", r.out)
        self.assertEqual(self.read(os.path.join(self.home, ".profile")), USER_PROFILE)
        self.assertEqual(self.read(os.path.join(self.home, ".bashrc")), USER_BASHRC)
        for name in ("current", "env.sh"):
            self.assertFalse(os.path.lexists(os.path.join(self.root, name)), name)
        self.assertTrue(os.path.isdir(os.path.join(self.root, "versions", "9.19.0.99-cuda13")))
        self.assertIn("9.19.0.99", self.ok("list").out)
        self.assertNotIn("*", self.ok("list").out)
        with self.unchanged():
            self.ok("deactivate")  # a second time: nothing to undo
        self.ok("switch", "9.19")
        self.assert_active("9.19.0.99-cuda13")
        self.ok("deactivate")
        self.install("v914_txz")
        self.assert_active("9.14.0.99-cuda12")

    def test_symlinked_bashrc_stays_a_link(self):
        dotfiles = os.path.join(self.home, "dotfiles")
        os.mkdir(dotfiles)
        target = os.path.join(dotfiles, "bashrc")
        os.replace(os.path.join(self.home, ".bashrc"), target)
        os.symlink("dotfiles/bashrc", os.path.join(self.home, ".bashrc"))
        self.install("v9_txz")
        self.assertEqual(os.readlink(os.path.join(self.home, ".bashrc")), "dotfiles/bashrc")
        self.assert_profiles()
        self.ok("deactivate")
        self.assertEqual(os.readlink(os.path.join(self.home, ".bashrc")), "dotfiles/bashrc")
        self.assertEqual(self.read(target), USER_BASHRC)
        self.assertEqual(os.listdir(dotfiles), ["bashrc"])

    def test_profile_with_a_nul_byte_is_kept_whole(self):
        # found in review: the profile was cut at the first NUL
        path = os.path.join(self.home, ".bashrc")
        body = b"export A=1\n\0binary-ish\nexport KEEP_ME=1\n"
        with open(path, "wb") as f:
            f.write(body)
        self.install("v9_txz")
        with open(path, "rb") as f:
            got = f.read()
        self.assertTrue(got.startswith(body), got)
        self.assertIn(b"env.sh", got[len(body):])
        self.ok("deactivate")
        with open(path, "rb") as f:
            self.assertEqual(f.read(), body)

    def test_profile_permissions_are_kept(self):
        os.chmod(os.path.join(self.home, ".bashrc"), 0o600)
        os.chmod(os.path.join(self.home, ".profile"), 0o640)
        self.install("v9_txz")
        self.assert_profiles()
        for name, mode in ((".bashrc", 0o600), (".profile", 0o640)):
            got = stat.S_IMODE(os.stat(os.path.join(self.home, name)).st_mode)
            self.assertEqual(got, mode, "%s mode %o, was %o" % (name, got, mode))

    def test_profiles_created_when_missing(self):
        os.unlink(os.path.join(self.home, ".profile"))
        os.unlink(os.path.join(self.home, ".bashrc"))
        self.install("v9_txz")
        for name in (".profile", ".bashrc"):
            self.assertEqual(self.read(os.path.join(self.home, name)),
                             profile_line(self.root) + "\n")

    def test_failed_activation_leaves_nothing(self):
        # ~/.bashrc that cannot be edited: activation fails after ~/.profile
        # was done; the install must be undone everywhere
        os.unlink(os.path.join(self.home, ".bashrc"))
        os.mkdir(os.path.join(self.home, ".bashrc"))
        path, manifest = FX.pack("v9_txz")
        with self.unchanged():
            self.fails(EXIT["ACTIVATE"], "install", path, "--manifest", manifest,
                       words=("cannot activate", ".bashrc"))


# ------------------------------------------------------------------- system
class TestSystem(CliTest):
    fixtures = ("v9_txz", "v914_txz")

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("--system needs root")
        self.ldconf = os.path.join(self.tmp, "ld.so.conf.d")
        os.mkdir(self.ldconf)
        self.log = os.path.join(self.tmp, "ldconfig.log")
        self.ldconfig = os.path.join(self.tmp, "fake-ldconfig")
        self.write(self.ldconfig, '#!/bin/sh\necho "ldconfig $*" >> "%s"\n' % self.log)
        os.chmod(self.ldconfig, 0o755)
        self.env.update(CUDNNCTL_LDCONF_DIR=self.ldconf, CUDNNCTL_LDCONFIG=self.ldconfig)

    def ldconfig_runs(self):
        return self.read(self.log).count("ldconfig") if os.path.exists(self.log) else 0

    def test_system_install_and_deactivate(self):
        conf = os.path.join(self.ldconf, "cudnnctl.conf")
        home_before = snapshot(self.home)
        self.install("v9_txz", "--system")
        self.assertEqual(self.read(conf).splitlines()[-1], "%s/current/lib" % self.root)
        self.assertEqual(self.ldconfig_runs(), 1)
        self.assertEqual(self.active_id(), "9.19.0.99-cuda13")
        self.install("v914_txz")  # stays system-wide
        self.assertEqual(self.active_id(), "9.14.0.99-cuda12")
        self.assertEqual(snapshot(self.home), home_before, "HOME touched by --system")
        self.ok("deactivate")
        self.assertFalse(os.path.lexists(conf))
        self.assertEqual(self.ldconfig_runs(), 3)
        self.assertFalse(os.path.lexists(os.path.join(self.root, "current")))
        self.assertEqual(snapshot(self.home), home_before)

    def test_true_as_ldconfig(self):
        self.env["CUDNNCTL_LDCONFIG"] = "true"
        self.install("v9_txz", "--system")
        self.assertIn("%s/current/lib\n" % self.root,
                      self.read(os.path.join(self.ldconf, "cudnnctl.conf")))
        self.assertEqual(self.read(os.path.join(self.home, ".profile")), USER_PROFILE)

    def test_failed_ldconfig_leaves_nothing(self):
        self.env["CUDNNCTL_LDCONFIG"] = "false"
        path, manifest = FX.pack("v9_txz")
        with self.unchanged(self.ldconf):
            self.fails(EXIT["ACTIVATE"], "install", path, "--manifest", manifest, "--system",
                       words=("cannot activate", "false"))


    def test_system_root_below_a_folder_others_can_write(self):
        # issue 22 item 4: with --system every process's library path names
        # the root, so every folder from / down must be the
        # administrator's alone; /tmp (sticky) above a root-owned folder is
        # fine (the tests above), a group-writable folder is not
        shared = os.path.join(self.tmp, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o775)
        root = os.path.join(shared, "cudnn")
        path, manifest = FX.pack("v9_txz")
        with self.unchanged(self.ldconf):
            self.fails(EXIT["BADROOT"], "install", path, "--manifest", manifest, "--system",
                       "--root", root, root=False,
                       words=("--system", "'%s' can be written by its group (mode 775)" % shared,
                              "/opt/cudnn"))
        self.assertFalse(os.path.exists(os.path.join(self.ldconf, "cudnnctl.conf")))
        os.chmod(shared, 0o755)
        self.ok("install", path, "--manifest", manifest, "--system", "--root", root, root=False)


# -------------------------------------------------------------- whose root
class TestForeignRoot(CliTest):
    """A root that another user owns or can write is refused for work and
    named when read, as ssh refuses a ~/.ssh others can write (issue 22,
    item 4).  Needs root: chown gives the files to 'nobody'."""
    fixtures = ("v9_txz", "v914_txz")
    NOBODY = 65534

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("needs root to give files to another user")

    def refused(self, *words, args=None):
        path, manifest = FX.pack("v914_txz")
        with self.unchanged():
            r = self.fails(EXIT["BADROOT"], *(args or ("install", path, "--manifest", manifest)),
                           words=words + ("nothing was changed", "--root"))
        return r

    def test_root_owned_by_another_user(self):
        self.install("v9_txz")
        os.chown(self.root, self.NOBODY, self.NOBODY)
        self.refused("'%s' is owned by" % self.root, "uid %d" % self.NOBODY)
        self.refused("owned by", args=("switch", "9.19"))
        r = self.ok("list")  # reading says so, and goes on
        self.assertIn("another user can change the cuDNN it holds", r.err)
        self.assertIn("9.19.0.99", r.out)

    def test_env_sh_and_current_planted_by_another_user(self):
        self.install("v9_txz")
        env_sh = os.path.join(self.root, "env.sh")
        os.chown(env_sh, self.NOBODY, self.NOBODY)
        self.refused("'%s' is owned by" % env_sh)
        os.chown(env_sh, 0, 0)
        current = os.path.join(self.root, "current")
        os.lchown(current, self.NOBODY, self.NOBODY)
        self.refused("'%s' is owned by" % current)
        os.lchown(current, 0, 0)
        self.install("v914_txz")

    def test_root_everyone_can_write(self):
        os.makedirs(self.root)
        for mode, who in ((0o777, "every user"), (0o1777, "every user (a sticky folder)")):
            os.chmod(self.root, mode)
            self.refused("'%s' can be written by %s" % (self.root, who))
        os.chmod(self.root, 0o770)  # the user's own private group: fine
        os.chown(self.root, 0, self.NOBODY)  # a group with others in it
        self.refused("can be written by its group (mode 770)")
        os.chown(self.root, 0, 0)
        versions = os.path.join(self.root, "versions")
        os.chmod(self.root, 0o755)
        os.mkdir(versions)
        os.chmod(versions, 0o777)
        self.refused("'%s' can be written by every user (mode 777)" % versions)
        os.chmod(versions, 0o755)
        self.install("v9_txz")


# -------------------------------------------------------------------- usage
class TestUsage(CliTest):
    fixtures = ("v9_txz",)

    def test_no_arguments(self):
        r = self.run_cli(root=False)
        self.assertEqual(r.rc, EXIT["USAGE"], r)
        self.assertIn("usage: cudnnctl", r.err)
        self.assertEqual(r.out, "")

    def test_help(self):
        for args in (("--help",), ("-h",), ("help",)):
            r = self.ok(*args, root=False)
            self.assertIn("usage: cudnnctl <command>", r.out)
            self.assertEqual(r.err, "")
        r = self.ok("install", "--help", root=False)
        self.assertIn("usage: cudnnctl install ARCHIVE", r.out)

    def test_install_of_a_folder_says_it_is_one(self):
        # issue 23 item 10: an extracted archive was taken for a version
        # number and looked for on the network
        folder = os.path.join(self.tmp, "cudnn-linux-x86_64-9.19.0.99_cuda13-archive")
        os.makedirs(os.path.join(folder, "lib"))
        with self.unchanged():
            self.fails(EXIT["USAGE"], "install", folder,
                       words=("'%s' is a folder" % folder, "as downloaded",
                              "cudnnctl install 9.1"))

    def test_version(self):
        self.assertRegex(self.ok("--version", root=False).out, r"^cudnnctl \d+\.\d+\.\d+\n$")

    def test_usage_errors(self):
        cases = [
            (("frobnicate",), ("unknown command 'frobnicate'", "cudnnctl --help")),
            # issue 23 item 10: "did you mean" within two edits
            (("isntall", "x.zip"), ("unknown command 'isntall'",
                                    "did you mean 'cudnnctl install'?")),
            (("swtich", "9"), ("did you mean 'cudnnctl switch'?",)),
            (("list", "--frob"), ("unknown option '--frob'", "usage: cudnnctl list")),
            (("install",), ("needs an argument", "usage: cudnnctl install")),
            (("install", "x.tar.xz", "--cuda", "abc"), ("--cuda", "abc")),
            (("install", "x.tar.xz", "--cuda", "0"), ("--cuda",)),
            (("install", "x.tar.xz", "--manifest"), ("--manifest", "needs a value")),
            (("switch", "9", "10"), ("unexpected argument '10'",)),
            (("uninstall", "9", "--force=yes"), ("--force", "takes no value")),
        ]
        with self.unchanged():
            for args, words in cases:
                with self.subTest(args=args):
                    self.fails(EXIT["USAGE"], *args, words=words)
        self.assertFalse(os.path.lexists(self.root))

    def check_json_failure(self, code, *args):
        r = self.run_cli(*args)
        self.assertEqual(r.rc, code, r)
        doc = r.json()
        self.assertIs(doc["ok"], False, r)
        self.assertEqual(doc["error"]["exit_status"], code, r)
        self.assertTrue(doc["error"]["code"].startswith("E"), r)
        self.assertTrue(doc["error"]["message"], r)
        return doc

    def test_json_failures(self):
        path, _ = FX.pack("v9_txz")
        doc = self.check_json_failure(EXIT["UNKNOWN_ARCHIVE"], "install", path, "--json")
        self.assertEqual(doc["command"], "install")
        self.assertIn(sha256_file(path), doc["error"]["message"])
        self.check_json_failure(EXIT["NOTFOUND"], "switch", "9", "--json")
        # a usage error found after parsing (no CUDA major in the name)
        renamed = os.path.join(self.tmp, "mystery.tar.xz")
        shutil.copyfile(path, renamed)
        doc = self.check_json_failure(EXIT["USAGE"], "install", renamed, "--allow-unknown",
                                      "--json")
        self.assertIn("--cuda", doc["error"]["hint"])
        self.assertFalse(os.path.lexists(self.root))

    def test_json_usage_error(self):
        self.check_json_failure(EXIT["USAGE"], "install", "--json", "x.tar.xz", "--cuda", "abc")
        self.check_json_failure(EXIT["USAGE"], "install", "--json")


# ------------------------------------------------------------- real cuDNN
def find_real_cudnn():
    for top in ("/usr/local/cuda", "/usr/local/cuda-13.0"):
        lib, inc = os.path.join(top, "lib"), os.path.join(top, "include", "cudnn_version.h")
        if os.path.isfile(os.path.join(lib, "libcudnn.so.9")) and os.path.isfile(inc):
            return lib, inc
    return None, None


class TestRealCudnn(CliTest):
    """Packs the cuDNN installed under /usr/local/cuda (zip, level 1) and
    installs it: the libraries must arrive bit for bit."""

    def test_real_cudnn(self):
        lib, header = find_real_cudnn()
        if not lib:
            self.skipTest("no real cuDNN (/usr/local/cuda/lib/libcudnn.so.9 and "
                          "include/cudnn_version.h)")
        text = self.read(header)
        nums = [re.search(r"#define CUDNN_%s\s+(\d+)" % n, text)
                for n in ("MAJOR", "MINOR", "PATCHLEVEL")]
        if not all(nums):
            self.skipTest("cannot read the version from %s" % header)
        short = ".".join(m.group(1) for m in nums)
        version = short + ".0"
        path, manifest = mkcudnn_pack(os.path.join(self.tmp, "pack"), "redistrib_real.json",
                                      "--from", lib, "--version", version, "--cuda", "13",
                                      "--platform", PLATFORM, "--format", "zip", "--level", "1")
        r = self.ok("install", path, "--manifest", manifest, "--json")
        self.assertTrue(r.json()["verified"], r)
        vid = "%s-cuda13" % version
        vdir = os.path.join(self.root, "versions", vid)
        _, files = read_record(vdir)
        recorded = {f["path"]: f["sha256"] for f in files if f["type"] == "f"}
        for real, so_major, so in lib_names("v9", version):
            with self.subTest(lib=so_major):
                want = sha256_file(os.path.realpath(os.path.join(lib, so_major)))
                self.assertEqual(recorded.get("lib/" + real), want)
                self.assertEqual(sha256_file(os.path.join(vdir, "lib", real)), want)
                self.assertEqual(os.path.realpath(os.path.join(self.root, "current", "lib", so)),
                                 os.path.join(vdir, "lib", real))
        self.assertEqual(sha256_file(os.path.join(vdir, "include", "cudnn_version.h")),
                         sha256_file(header))
        self.assertRegex(self.ok("list").out, r"\* %s +13 .*verified, active" % re.escape(version))



# ------------------------------------------------ help and --quiet (table)
class TestInterrupt(CliTest):
    """Ctrl+C (SIGINT), SIGTERM and SIGHUP stop the work and put back what
    was under way; what a killed command left is swept by the next one
    that takes the root's lock.  CUDNNCTL_TEST_INTERRUPT_AT=N sends the
    process a real SIGINT at the Nth point where the work checks for one
    (each entry scanned, each block extracted, each block hashed)."""
    fixtures = ("v9_txz", "v9_zip", "v914_txz")

    def leftovers(self):
        vdir = os.path.join(self.root, "versions")
        return sorted(n for n in os.listdir(vdir) if n.startswith(".")) \
            if os.path.isdir(vdir) else []

    def test_interrupt_at_every_point_of_an_install(self):
        # every check point of an install, one run each, until the install
        # gets through: each interrupted run exits 130 and leaves the root,
        # HOME and the profiles as they were
        self.install("v914_txz")
        path, manifest = FX.pack("v9_zip")
        at = 0
        while True:
            at += 1
            self.assertLess(at, 2000, "the install never got through")
            before = [snapshot(p) for p in (self.root, self.home)]
            r = self.run_cli("install", path, "--manifest", manifest,
                             env={"CUDNNCTL_TEST_INTERRUPT_AT": str(at)})
            if r.rc == 0:
                break
            self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
            self.assertIn("interrupted", r.err)
            after = [snapshot(p) for p in (self.root, self.home)]
            self.assertEqual(after, before, "at=%d:%s\n%s" % (
                at, r, "\n".join(snapshot_diff(b, a) for b, a in zip(before, after))))
        self.assertGreater(at, 20, "too few check points seen")
        self.assertEqual(self.leftovers(), [])
        self.assert_active("9.19.0.99-cuda13")
        self.assertEqual(sorted(i["id"] for i in self.ok("list", "--json").json()["installed"]),
                         ["9.14.0.99-cuda12", "9.19.0.99-cuda13"])

    def test_after_the_interrupts_the_install_goes_through(self):
        path, manifest = FX.pack("v9_txz")
        for at in (3, 40):
            r = self.run_cli("install", path, "--manifest", manifest,
                             env={"CUDNNCTL_TEST_INTERRUPT_AT": str(at)})
            self.assertEqual(r.rc, EXIT["INTERRUPTED"], r)
            self.assertFalse(os.path.lexists(self.root), "a new root is taken back")
        self.install("v9_txz")
        self.assert_active("9.19.0.99-cuda13")

    def test_leftovers_of_killed_commands_are_swept(self):
        self.install("v9_txz")
        vdir = os.path.join(self.root, "versions")
        for leaf in (".staging-999999-0badc0de", ".trash-999998-00000001"):
            os.makedirs(os.path.join(vdir, leaf, "lib"))
            with open(os.path.join(vdir, leaf, "lib", "big"), "wb") as f:
                f.write(b"\0" * (1 << 20))
        r = self.ok("switch", "9.19")
        self.assertIn("removed 2 folders left in '%s' by interrupted commands (2.0 MB freed)"
                      % vdir, r.err)
        self.assertEqual(self.leftovers(), [])
        # list takes no lock: it never removes anything
        os.makedirs(os.path.join(vdir, ".staging-1-2"))
        self.ok("list")
        self.assertEqual(self.leftovers(), [".staging-1-2"])


class KillPoints(CliTest):
    """A power cut anywhere: CUDNNCTL_TEST_KILL_AT=N makes the process kill
    itself (SIGKILL) at its Nth change to the disk (a folder made, an entry
    removed, a file written, a rename, a link, each entry extracted).  Each
    command is run once for every N until it gets through; after each kill
    the root is consistent (only whole versions listed, each matching its
    record; `current` names one of them), the profiles are exactly as before
    or as after, and the next run of the command succeeds and leaves no
    leftovers."""
    fixtures = ("v9_zip", "v914_txz")
    V19, V14 = "9.19.0.99-cuda13", "9.14.0.99-cuda12"

    def reset(self, setup):
        shutil.rmtree(self.root, True)
        self.write(os.path.join(self.home, ".profile"), USER_PROFILE)
        self.write(os.path.join(self.home, ".bashrc"), USER_BASHRC)
        for args in setup:
            self.ok(*args)

    def profiles(self):
        return [self.read(os.path.join(self.home, n)) for n in (".profile", ".bashrc")]

    def check_consistent(self, label):
        doc = self.ok("list", "--json").json()
        ids = [i["id"] for i in doc["installed"]]
        for vid in ids:
            r = self.run_cli("verify", vid, "--no-gpu", "--full", "--json")
            files = {st["stage"]: st for st in r.json()["stages"]}["files"]
            self.assertEqual(files["status"], "pass", "%s: %s is not whole:%s" % (
                label, vid, r))
        active = self.active_id()
        if active is not None:
            self.assertIn(active, ids, "%s: current names %s" % (label, active))
        return ids

    def sweep(self, setup, args, again_ok=(0,)):
        self.reset(setup)
        before = self.profiles()
        self.ok(*args)
        after = self.profiles()
        done = self.check_consistent("after")
        kills = 0
        for at in range(1, 500):
            self.reset(setup)
            r = self.run_cli(*args, env={"CUDNNCTL_TEST_KILL_AT": str(at)})
            if r.rc == 0:
                break
            self.assertEqual(r.rc, -signal.SIGKILL, "at=%d:%s" % (at, r))
            kills += 1
            label = "%s killed at %d" % (" ".join(args), at)
            self.check_consistent(label)
            # each profile is written whole: as before or as after
            for now, b, a in zip(self.profiles(), before, after):
                self.assertIn(now, (b, a), label)
            r = self.run_cli(*args)
            self.assertIn(r.rc, again_ok, "%s, then again:%s" % (label, r))
            self.assertEqual(self.profiles(), after, "%s, then again" % label)
            vdir = os.path.join(self.root, "versions")
            left = [n for n in os.listdir(vdir) if n.startswith(".")]
            self.assertEqual(left, [], "%s: leftovers after the next run" % label)
            self.assertEqual(sorted(self.check_consistent(label + ", then again")),
                             sorted(done))
        return kills

    def packs(self):
        v19, m19 = FX.pack("v9_zip")
        v14, m14 = FX.pack("v914_txz")
        return ("install", v19, "--manifest", m19), ("install", v14, "--manifest", m14)


class TestKillPointsInstall(KillPoints):
    """KillPoints' sweep of install: a zip, a tar.xz (through its spool),
    and a second version beside an active one."""

    def test_every_kill_point_of_install(self):
        inst19, inst14 = self.packs()
        total = self.sweep([], inst19)
        total += self.sweep([], inst14)
        total += self.sweep([inst19], inst14 + ("--no-activate",))
        print("\nkill points swept: %d" % total, file=sys.stderr)
        self.assertGreaterEqual(total, 120)


class TestKillPointsChange(KillPoints):
    """KillPoints' sweep of switch, uninstall and deactivate."""

    def test_every_kill_point_of_switch_uninstall_deactivate(self):
        inst19, inst14 = self.packs()
        total = self.sweep([inst19, inst14], ("switch", "9.14"))
        total += self.sweep([inst19, inst14 + ("--no-activate",)], ("uninstall", "9.14"),
                            again_ok=(0, EXIT["NOTFOUND"]))
        total += self.sweep([inst19], ("uninstall", "9.19", "--force"),
                            again_ok=(0, EXIT["NOTFOUND"]))
        total += self.sweep([inst19], ("deactivate",))
        print("\nkill points swept: %d" % total, file=sys.stderr)
        self.assertGreaterEqual(total, 80)

class TestJobs(CliTest):
    """A zip, and the spooled tar of a tar.xz, are extracted by several
    workers (--jobs N, CUDNNCTL_JOBS; default: the processors).  Whatever
    the number, the same files with the same hashes, and an interrupt or a
    kill leaves nothing half-way."""
    fixtures = ("v9_zip", "v9_txz")

    def files(self, vid):
        """(path, size, sha256) of every file the install record lists."""
        rec = os.path.join(self.root, "versions", vid, ".cudnnctl-record")
        with open(rec, encoding="utf-8") as f:
            rows = [line.split("\t") for line in f if line.startswith("file\t")]
        return sorted((r[6], r[2], r[3]) for r in rows)

    def test_same_files_whatever_the_number_of_workers(self):
        for key, vid in (("v9_zip", "9.19.0.99-cuda13"), ("v9_txz", "9.19.0.99-cuda13")):
            seen = {}
            for jobs in ("1", "2", "5"):
                shutil.rmtree(self.root, True)
                self.install(key, "--jobs", jobs)
                seen[jobs] = self.files(vid)
                self.assertGreater(len(seen[jobs]), 5)
            self.assertEqual(seen["1"], seen["2"], key)
            self.assertEqual(seen["1"], seen["5"], key)
            # CUDNNCTL_JOBS is the default
            shutil.rmtree(self.root, True)
            self.install(key, env={"CUDNNCTL_JOBS": "3"})
            self.assertEqual(self.files(vid), seen["1"])

    def test_bad_jobs_values(self):
        path, manifest = FX.pack("v9_zip")
        self.fails(EXIT["USAGE"], "install", path, "--manifest", manifest, "--jobs", "0",
                   words=("--jobs", "positive number"))
        r = self.install("v9_zip", env={"CUDNNCTL_JOBS": "many"})
        self.assertIn("CUDNNCTL_JOBS='many' is not a number from 1 to 64", r.err)

    def test_interrupt_and_kill_with_several_workers(self):
        # every interrupt point, then every kill point, of a zip install
        # with three workers: nothing is left half-way, and the install
        # gets through in the end
        path, manifest = FX.pack("v9_zip")
        args = ("install", path, "--manifest", manifest, "--jobs", "3")
        for hook, rc in (("CUDNNCTL_TEST_INTERRUPT_AT", EXIT["INTERRUPTED"]),
                         ("CUDNNCTL_TEST_KILL_AT", -9)):  # SIGKILL
            shutil.rmtree(self.root, True)
            at = 0
            while True:
                at += 1
                self.assertLess(at, 2000)
                r = self.run_cli(*args, env={hook: str(at)})
                if r.rc == 0:
                    break
                self.assertEqual(r.rc, rc, "%s=%d:%s" % (hook, at, r))
                vdir = os.path.join(self.root, "versions")
                if os.path.isdir(self.root):
                    doc = self.ok("list", "--json").json()
                    self.assertIn([i["id"] for i in doc["installed"]],
                                  ([], ["9.19.0.99-cuda13"]), "%s=%d" % (hook, at))
                    # an interrupt cleans up itself; after a kill, the
                    # next command that takes the lock does
                    if rc == -9:
                        self.ok(*args)
                    self.assertEqual([n for n in os.listdir(vdir) if n.startswith(".")]
                                     if os.path.isdir(vdir) else [], [], "%s=%d" % (hook, at))
                shutil.rmtree(self.root, True)
            self.assertGreater(at, 5, hook)
            self.assert_active("9.19.0.99-cuda13")

    def paused_in_extraction(self, args, touch):
        """Runs ARGS paused at each check point in turn until one falls in
        the extraction (the staging folder exists), calls touch() there,
        lets it go on and returns its Result."""
        marker = os.path.join(self.tmp, "paused")
        vdir = os.path.join(self.root, "versions")
        for at in range(1, 200):
            cmd = cli_command(CLI, args, self.root, False)
            env = dict(self.env, CUDNNCTL_TEST_PAUSE_AT="%d:%s" % (at, marker))
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, cwd=self.tmp)
            deadline = time.monotonic() + 60
            while not os.path.exists(marker) and proc.poll() is None:
                self.assertLess(time.monotonic(), deadline, "never paused")
                time.sleep(0.02)
            self.assertIsNone(proc.poll(), "finished before a point in the extraction")
            staging = os.path.isdir(vdir) and [n for n in os.listdir(vdir)
                                               if n.startswith(".staging")]
            if staging:
                touch()
            else:
                proc.send_signal(signal.SIGINT)
            os.unlink(marker)
            out, err = proc.communicate(timeout=120)
            if staging:
                return Result(cmd, subprocess.CompletedProcess(cmd, proc.returncode, out, err))
            self.assertEqual(proc.returncode, EXIT["INTERRUPTED"], err)
        self.fail("no check point in the extraction")

    def paused_everywhere(self, args, at_pause):
        """Runs ARGS (with --jobs 1: one thread counts the points) paused at
        every check point, calling at_pause() at each, until it ends; its
        Result."""
        marker = os.path.join(self.tmp, "paused")
        cmd = cli_command(CLI, args, self.root, False)
        env = dict(self.env, CUDNNCTL_TEST_PAUSE_AT="1+:%s" % marker)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=self.tmp)
        deadline = time.monotonic() + 300  # a hang guard only
        while proc.poll() is None:
            self.assertLess(time.monotonic(), deadline, "never ended")
            if os.path.exists(marker):
                at_pause()
                os.unlink(marker)
            else:
                time.sleep(0.005)
        out, err = proc.communicate(timeout=120)
        return Result(cmd, subprocess.CompletedProcess(cmd, proc.returncode, out, err))

    def swap_pair(self):
        """(archive, forged bytes, original LICENSE, forged LICENSE, manifest):
        the v9 zip rewritten with 320 KiB of stored noise and then its
        LICENSE, stored, after include/cudnn.h (so that the extraction reads
        the LICENSE from the disk well after it starts), the bytes of the
        same zip with another LICENSE of the same length and its CRC32 set
        to match (a forgery the zip reader cannot tell), and a manifest
        that names the first."""
        src, manifest = FX.pack("v9_zip")
        path = os.path.join(self.tmp, "cache", os.path.basename(src))
        os.makedirs(os.path.dirname(path))
        with zipfile.ZipFile(src) as zf:
            infos = [(i, zf.read(i)) for i in zf.infolist()]
        lic = next(x for x in infos if x[0].filename.endswith("/LICENSE"))
        infos.remove(lic)
        at = next(n for n, x in enumerate(infos) if x[0].filename.endswith("/include/cudnn.h"))
        noise = zipfile.ZipInfo(infos[at][0].filename[:-len("cudnn.h")] + "noise.bin",
                                lic[0].date_time)
        noise.create_system, noise.external_attr = 3, lic[0].external_attr
        infos[at + 1:at + 1] = [(noise, os.urandom(320 << 10)), lic]
        forged_text = b"Forged: not NVIDIA's words".ljust(len(lic[1]), b"!")
        made = []
        for text in (lic[1], forged_text):
            out = path + (".forged" if made else "")
            with zipfile.ZipFile(out, "w") as zf:
                for info, data in infos:
                    if info is lic[0]:
                        data = text
                    if info in (lic[0], noise):
                        info.compress_type = zipfile.ZIP_STORED
                    zf.writestr(info, data)
            with open(out, "rb") as f:
                made.append(f.read())
        os.unlink(path + ".forged")
        self.assertEqual(len(made[0]), len(made[1]))
        m = edited_manifest(manifest, os.path.join(self.tmp, "m", "redistrib_swap.json"),
                            PLATFORM, 13, archive=path)
        return path, made[1], lic[1], forged_text, m

    def swap_and_restore(self, path, forged, write):
        """An at_pause for paused_everywhere: at the first pause in the
        extraction write(forged); once the forged LICENSE is in the staging
        folder, write() the original bytes back.  Its state: .swapped,
        .restored."""
        vdir = os.path.join(self.root, "versions")
        with open(path, "rb") as f:
            original = f.read()
        state = types.SimpleNamespace(swapped=False, restored=False, staged=None)

        def at_pause():
            staging = glob.glob(os.path.join(vdir, ".staging-*"))
            if not staging or state.restored:
                return
            if not state.swapped:
                write(forged)
                state.swapped = True
                return
            lic = os.path.join(staging[0], "LICENSE")
            if os.path.exists(lic) and os.path.getsize(lic) == len(self.forged_text):
                with open(lic, "rb") as f:
                    state.staged = f.read()  # what the extraction read
                write(original)
                state.restored = True
        return state, at_pause

    def assert_original_installed(self, r, path, sha, original_text):
        self.assertEqual(r.rc, 0, r)
        self.assertIn("sha256 verified", r.out + r.err)
        with open(os.path.join(self.root, "current", "LICENSE"), "rb") as f:
            self.assertEqual(f.read(), original_text)
        self.assertEqual(sha256_file(path), sha)  # the archive as it was
        _, files = read_record(os.path.join(self.root, "versions", "9.19.0.99-cuda13"))
        lic = next(f for f in files if f["path"] == "LICENSE")
        self.assertEqual(lic["sha256"], hashlib.sha256(original_text).hexdigest())

    def test_archive_swapped_and_restored_during_the_install(self):
        # #22 item 2: whoever can write the archive changes an entry once
        # the scan has hashed the file, and puts the original bytes back
        # once the forged entry was extracted: the file hashes as the
        # original again afterwards.  The archive was guarded (a read
        # lease); the writer's open broke the guard, so what the
        # extraction read cannot be proven: it is extracted again from a
        # private copy, hashed on the way.
        path, forged, original_text, self.forged_text, m = self.swap_pair()
        sha = sha256_file(path)

        def write(data):
            with open(path, "r+b") as f:
                f.write(data)
        state, at_pause = self.swap_and_restore(path, forged, write)
        r = self.paused_everywhere(("install", path, "--manifest", m, "--jobs", "1"), at_pause)
        self.assertTrue(state.swapped and state.restored, r)
        self.assertEqual(state.staged, self.forged_text)  # the swap was read
        self.assertIn("extracting it again from a private copy", r.err)
        self.assert_original_installed(r, path, sha, original_text)

    def test_archive_open_for_writing_is_installed_from_a_copy(self):
        # the same, by a program that holds the archive open for writing
        # from before the install: no guard can be had, so the install
        # reads a private copy from the start
        path, forged, original_text, self.forged_text, m = self.swap_pair()
        sha = sha256_file(path)
        with open(path, "r+b") as held:
            def write(data):
                held.seek(0)
                held.write(data)
                held.flush()
            state, at_pause = self.swap_and_restore(path, forged, write)
            r = self.paused_everywhere(("install", path, "--manifest", m, "--jobs", "1"),
                                       at_pause)
        self.assertTrue(state.swapped and state.restored, r)
        self.assertEqual(state.staged, original_text)  # the copy was read
        self.assertNotIn("extracting it again", r.err)
        self.assert_original_installed(r, path, sha, original_text)

    def test_archive_written_during_the_install(self):
        # the archive is hashed once, while the scan reads it, and guarded
        # (a read lease) until the extraction is over; a writer that opens
        # it meanwhile breaks the guard: the archive is hashed again, and
        # a change refuses the install leaving the root as it was
        path, manifest = FX.pack("v9_zip")
        copy = os.path.join(self.tmp, os.path.basename(path))
        shutil.copyfile(path, copy)
        args = ("install", copy, "--manifest", manifest, "--jobs", "3")

        def opened_only():
            with open(copy, "r+b"):
                pass

        def appended():
            with open(copy, "ab") as f:
                f.write(b"\0")

        r = self.paused_in_extraction(args, opened_only)
        self.assertEqual(r.rc, 0, r)
        self.assert_active("9.19.0.99-cuda13")
        shutil.rmtree(self.root)
        r = self.paused_in_extraction(args, appended)
        self.assertEqual(r.rc, EXIT["BADARCHIVE"], r)
        self.assertIn("changed after it was checked", r.err)
        vdir = os.path.join(self.root, "versions")
        self.assertEqual([n for n in os.listdir(vdir) if n != ".lock"]
                         if os.path.isdir(vdir) else [], [])


class TestCiMode(CliTest):
    """CI mode (--ci; CI=true, GITHUB_ACTIONS or TF_BUILD in the
    environment): progress as plain lines, the install handed to the
    pipeline's later steps (GitHub's GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT,
    GITHUB_STEP_SUMMARY files; Azure's ##vso commands), and the user's shell
    profiles left alone unless --persist."""
    fixtures = ("v9_txz", "v8_zip")

    def github(self, **extra):
        d = os.path.join(self.tmp, "runner")
        os.makedirs(d, exist_ok=True)
        env = {"GITHUB_ACTIONS": "true"}
        for name in ("ENV", "PATH", "OUTPUT", "STEP_SUMMARY"):
            env["GITHUB_" + name] = os.path.join(d, name.lower())
        env.update(extra)
        return env

    def runner_file(self, name):
        path = os.path.join(self.tmp, "runner", name)
        return self.read(path) if os.path.exists(path) else ""

    def outputs(self):
        return dict(line.split("=", 1) for line in self.runner_file("output").splitlines())

    def test_github_actions(self):
        env = self.github()
        with self.unchanged(self.home, only=True):  # no profile lines
            r = self.install("v9_txz", env=env)
        self.assertIn("for this job's later steps", r.out)
        # progress: lines, never a bar redrawn with \r
        self.assertNotIn("\r", r.err)
        self.assertRegex(r.err, r"(?m)^cudnnctl: extract \S+ \S+ / \S+ \S+ \(\d+%\)$")
        cur = os.path.join(self.root, "current")
        self.assertEqual(self.runner_file("env").splitlines(),
                         ["CUDNN_PATH=" + cur, "LD_LIBRARY_PATH=" + cur + "/lib",
                          "LIBRARY_PATH=" + cur + "/lib", "CPATH=" + cur + "/include",
                          "CUDNNCTL_ROOT=" + self.root])
        self.assertEqual(self.runner_file("path"), "")  # Linux: nothing for PATH
        self.assertEqual(self.outputs(), {"cudnn-id": "9.19.0.99-cuda13",
                                          "cudnn-version": "9.19.0.99", "cuda": "13",
                                          "cudnn-path": cur, "changed": "true"})
        self.assertFalse(os.path.exists(os.path.join(self.root, "env.sh")))
        self.assertEqual(self.active_id(), "9.19.0.99-cuda13")
        # again: nothing changes, and the output says so
        os.unlink(os.path.join(self.tmp, "runner", "output"))
        r = self.install("v9_txz", "--json", env=env)
        self.assertFalse(r.json()["changed"])
        self.assertEqual(self.outputs()["changed"], "false")
        # a switch hands over the version switched to
        self.install("v8_zip", "--no-activate", env=env)
        os.unlink(os.path.join(self.tmp, "runner", "output"))
        with self.unchanged(self.home, only=True):
            self.ok("switch", "8.9", env=env)
        self.assertEqual(self.outputs()["cudnn-id"], "8.9.7.99-cuda12")
        self.assertEqual(self.outputs()["changed"], "true")

    def test_persist_and_outside_ci(self):
        # --persist: the profiles as outside CI
        self.install("v9_txz", "--persist", env=self.github())
        self.assert_active("9.19.0.99-cuda13")
        self.assertIn("cudnn-id=9.19.0.99-cuda13", self.runner_file("output"))
        # CI=false is not CI
        shutil.rmtree(self.root)
        self.install("v9_txz", env={"CI": "false"})
        self.assert_active("9.19.0.99-cuda13")

    def test_ci_true_and_the_flag(self):
        for env, extra in (({"CI": "true"}, ()), ({}, ("--ci",))):
            shutil.rmtree(self.root, True)
            with self.unchanged(self.home, only=True):
                r = self.install("v9_txz", *extra, env=env)
            self.assertNotIn("\r", r.err)
            self.assertIn("cudnnctl: extract", r.err)
            self.assertEqual(self.active_id(), "9.19.0.99-cuda13")
        # --quiet: no progress lines either
        r = self.ok("switch", "9.19", "--ci", "--quiet")
        self.assertNotIn("cudnnctl:", r.err)

    def test_azure_pipelines(self):
        r = self.install("v9_txz", env={"TF_BUILD": "True"})
        cur = os.path.join(self.root, "current")
        self.assertIn("##vso[task.setvariable variable=CUDNN_PATH]%s\n" % cur, r.out)
        self.assertIn("##vso[task.setvariable variable=LD_LIBRARY_PATH]%s/lib\n" % cur, r.out)
        self.assertIn("##vso[task.setvariable variable=cudnn_version;isOutput=true]9.19.0.99", r.out)
        self.assertIn("##vso[task.setvariable variable=CUDNNCTL_ROOT]%s\n" % self.root, r.out)
        # with --json, stdout is the JSON alone
        r = self.install("v9_txz", "--json", env={"TF_BUILD": "True"})
        self.assertFalse(r.json()["changed"])
        self.assertIn("##vso[task.setvariable variable=CUDNN_PATH]", r.err)

    def test_unwritable_runner_file(self):
        env = self.github(GITHUB_ENV=os.path.join(self.tmp, "no", "such", "env"))
        path, manifest = FX.pack("v9_txz")
        r = self.run_cli("install", path, "--manifest", manifest, env=env)
        self.assertEqual(r.rc, 3, r)
        self.assertIn("cannot write GITHUB_ENV: cannot open '%s'" % env["GITHUB_ENV"], r.err)
        # the install itself is done; the next run hands it over
        self.assertEqual(self.active_id(), "9.19.0.99-cuda13")
        self.ok("install", path, "--manifest", manifest, env=self.github())
        self.assertIn("CUDNN_PATH=", self.runner_file("env"))

    def test_verify_summary(self):
        # the fixture's libraries are not ELF files: a failing verify, its
        # table in the summary with the fix (test_verify.py has a passing one)
        self.install("v9_txz")
        env = self.github()
        r = self.run_cli("verify", "--no-gpu", env=env)
        self.assertEqual(r.rc, EXIT["VERIFY_VERSION"], r)
        summary = self.runner_file("step_summary")
        self.assertTrue(summary.startswith("### cudnnctl verify: NOT READY"), summary)
        self.assertEqual(summary.count("\n| "), 8 + 1, summary)  # header, a row per stage
        self.assertIn("| version | fail | ", summary)
        self.assertIn("<br>fix: reinstall this version |", summary)
        # verify hands nothing over
        self.assertEqual(self.runner_file("env"), "")

class TestCompletions(CliTest):
    """cudnnctl completions bash|zsh|powershell: scripts made from the
    command table; bash's is run here as bash would run it, zsh's loaded
    by zsh (when installed), PowerShell's checked for every option."""
    fixtures = ("v9_txz",)

    def script(self, shell):
        r = self.run_cli("completions", shell, root=False)
        self.assertEqual(r.rc, 0, r)
        return r.out

    def bash_complete(self, *words):
        """COMPREPLY for the command line words (the last one being typed)."""
        path = os.path.join(self.tmp, "comp.bash")
        self.write(path, self.script("bash"))
        line = " ".join(shlex.quote(w) for w in ("cudnnctl",) + words)
        prog = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _cudnnctl; '
                'printf "%%s\\n" "${COMPREPLY[@]}"' % (shlex.quote(path), line, len(words)))
        env = dict(self.env, PATH=os.path.dirname(CLI) + os.pathsep + self.env.get("PATH", ""),
                   CUDNNCTL_ROOT=self.root)
        p = subprocess.run(["bash", "-c", prog], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return sorted(x for x in p.stdout.splitlines() if x)

    def test_bash(self):
        self.assertEqual(self.bash_complete("sw"), ["switch"])
        self.assertEqual(self.bash_complete("install", "--no-"),
                         ["--no-activate", "--no-gpu", "--no-verify"])
        self.assertEqual(self.bash_complete("switch", "--scope", ""), ["machine", "user"])
        self.assertEqual(self.bash_complete("env", "--shell", "p"), ["powershell"])
        self.assertEqual(self.bash_complete("cache", ""), ["clean", "list"])
        self.assertEqual(self.bash_complete("completions", ""), ["bash", "powershell", "zsh"])
        # installed versions, from cudnnctl list --json
        self.install("v9_txz")
        self.assertEqual(self.bash_complete("switch", ""), ["9.19.0.99"])
        self.assertEqual(self.bash_complete("uninstall", "9."), ["9.19.0.99"])
        # every option of every command, as its --help lists them
        for cmd, (_, own) in TestHelpTable.COMMANDS.items():
            self.assertEqual(self.bash_complete(cmd, "--"),
                             sorted(own + TestHelpTable.COMMON), cmd)

    def test_zsh(self):
        text = self.script("zsh")
        self.assertTrue(text.startswith("#compdef cudnnctl\n"))
        for cmd, (_, own) in TestHelpTable.COMMANDS.items():
            self.assertIn("\n\t%s)\n" % cmd, text)
            block = text.split("\n\t%s)\n" % cmd, 1)[1].split(";;", 1)[0]
            for opt in own + TestHelpTable.COMMON:
                self.assertIn("'%s[" % opt, block, (cmd, opt))
        if not shutil.which("zsh"):
            self.skipTest("no zsh here (scripts/deps.sh --test installs it)")
        path = os.path.join(self.tmp, "_cudnnctl")
        self.write(path, text)
        p = subprocess.run(["zsh", "-n", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run(["zsh", "-f", "-c", "autoload -U compinit; compinit -u -d %s; "
                            "source %s; print -r -- ${_comps[cudnnctl]}"
                            % (shlex.quote(os.path.join(self.tmp, "zcd")), shlex.quote(path))],
                           env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "_cudnnctl"), p.stderr)

    def test_powershell(self):
        text = self.script("powershell")
        self.assertIn("Register-ArgumentCompleter -Native -CommandName 'cudnnctl', "
                      "'cudnnctl.exe'", text)
        for cmd, (_, own) in TestHelpTable.COMMANDS.items():
            line = next(x for x in text.splitlines() if x.strip().startswith("'%s' = @(" % cmd))
            for opt in own + TestHelpTable.COMMON:
                self.assertIn("'%s'" % opt, line, (cmd, opt))
        self.assertEqual(text.count("{"), text.count("}"))
        self.assertEqual(text.count("("), text.count(")"))

    def test_unknown_shell(self):
        r = self.run_cli("completions", "fish", root=False)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("no completions for 'fish': bash, zsh or powershell", r.err)
        r = self.run_cli("completions", root=False)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("usage: cudnnctl completions bash|zsh|powershell", r.err)


class TestDoctor(CliTest):
    """cudnnctl doctor: one screen for a bug report, the home folder as ~
    unless --no-redact, colour only on a terminal and never with NO_COLOR."""
    fixtures = ("v9_txz",)

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.home, "cudnn")  # under HOME: redacted

    def test_report(self):
        self.install("v9_txz")
        extra = os.path.join(self.home, "lib")
        r = self.ok("doctor", "--no-gpu", env={"LD_LIBRARY_PATH": "/opt/x:" + extra})
        lines = r.out.splitlines()
        self.assertIn("(the home folder is shown as ~)", lines[0])
        self.assertRegex(r.out, r"(?m)^cudnnctl: +\S+ \(linux-x86_64\)$")
        self.assertRegex(r.out, r"(?m)^system: +.*; Linux \S+ \S+$")
        self.assertIn("root:       ~/cudnn, mode user", r.out)
        self.assertIn("installed:  9.19.0.99-cuda13 (verified, active)", r.out)
        self.assertIn("LD_LIBRARY_PATH of this process, first to last:\n  /opt/x\n  ~/lib\n",
                      r.out)
        self.assertIn("cuDNN a new process can find, in the loader's order:\n  1. ", r.out)
        self.assertIn("driver:     not looked at (--no-gpu)", r.out)
        self.assertIn("\nverify:\nSTAGE ", r.out)
        self.assertRegex(r.out, r"(?m)^verdict: ")
        self.assertNotIn(self.home, r.out)
        self.assertNotIn("\033[", r.out)  # not a terminal: no colour
        r = self.ok("doctor", "--no-gpu", "--no-redact")
        self.assertIn("root:       %s, mode user" % self.root, r.out)
        doc = self.ok("doctor", "--no-gpu", "--json").json()
        self.assertEqual(doc["root"], "~/cudnn")
        self.assertEqual(doc["installed"], [{"id": "9.19.0.99-cuda13", "active": True,
                                             "verified": True}])
        self.assertEqual(doc["verify"]["command"], "verify")

    def test_no_root(self):
        r = self.ok("doctor", "--no-gpu")
        self.assertIn("root:       none", r.out)
        self.assertIn("installed:  none", r.out)

    def test_colour_on_a_terminal_only_without_no_color(self):
        self.install("v9_txz")
        # TERM=dumb: a terminal that takes no escape sequences (issue 23
        # item 7: a Windows console without virtual-terminal mode)
        for no_color, term, want in (("", "xterm", True), ("1", "xterm", False),
                                     ("", "dumb", False)):
            out = on_a_terminal(self, ("doctor", "--no-gpu"),
                                dict(self.env, NO_COLOR=no_color, TERM=term), "stdout")
            self.assertEqual(b"\033[" in out, want, out[-400:])


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


class TestProgressBar(CliTest):
    fixtures = ("v9_txz",)

    def stderr_on_a_terminal(self, args, term):
        return on_a_terminal(self, args, dict(self.env, TERM=term), "stderr")

    def test_plain_redraws_where_escapes_do_not_work(self):
        # issue 23 item 7: the bar wrote escapes into a console that does
        # not take them; where the terminal takes none (TERM=dumb here; a
        # Windows console whose virtual-terminal mode cannot be turned on)
        # it is redrawn with \r and spaces
        path, manifest = FX.pack("v9_txz")
        out = self.stderr_on_a_terminal(("install", path, "--manifest", manifest), "dumb")
        self.assertIn(b"\r", out)
        self.assertIn(b"[###", out)
        self.assertNotIn(b"\033[", out)
        shutil.rmtree(self.root)
        out = self.stderr_on_a_terminal(("install", path, "--manifest", manifest), "xterm")
        self.assertIn(b"\033[K", out)


class TestHelpTable(CliTest):
    """The usage lines and every --help come from the command table: each
    command lists every option with a line of description; --quiet keeps
    the progress bar off for every command, also on a terminal."""
    fixtures = ("v9_txz",)

    # command: (usage arguments, its own options); the common ones follow
    FETCH = ["--mirror", "--cache", "--offline"]
    COMMANDS = {
        "install": ("ARCHIVE|VERSION", ["--manifest", "--allow-unknown", "--cuda"] + FETCH + ["--jobs"] +
                    ["--no-activate", "--platform", "--system", "--persist", "--scope",
                     "--no-verify", "--no-gpu", "--wait"]),
        "download": ("VERSION", ["--cuda", "--platform", "--output", "--dry-run", "--manifest"]
                     + FETCH),
        "manifests": ("update", ["--manifest"] + FETCH),
        "cache": ("list|clean", ["--cache"]),
        "list": ("", ["--available", "--manifest", "--cache"]),
        "switch": ("VERSION", ["--cuda", "--system", "--persist", "--scope", "--no-verify",
                               "--no-gpu", "--wait"]),
        "uninstall": ("VERSION", ["--cuda", "--force", "--wait"]),
        "verify": ("[VERSION|INTERPRETER]", ["--cuda", "--junit", "--no-gpu", "--require-gpu",
                                            "--full", "--python", "--device"]),
        "env": ("", ["--shell"]),
        "deactivate": ("", ["--wait"]),
        "path": ("restore", ["--scope", "--force", "--wait"]),
        "version": ("", []),
        "doctor": ("", ["--no-gpu", "--no-redact"]),
    }
    COMMON = ["--root", "--json", "--quiet", "--verbose", "--ci", "--help"]
    # an option line: "  [-q, ]--name[ VALUE]", its description after two
    # spaces or, for a long name, on the next line
    OPTION = re.compile(r"^  (?:-\w, )?(--[a-z-]+)(?: (\S+))?(?:  +(\S.*))?$")

    def options_in(self, text):
        """[(name, value name, description)] of the option lines of a help."""
        lines, out = text.splitlines(), []
        for i, line in enumerate(lines):
            m = self.OPTION.match(line)
            if not m:
                continue
            desc = m.group(3)
            if desc is None and i + 1 < len(lines) and re.match(r"^ {20,}\S", lines[i + 1]):
                desc = lines[i + 1].strip()
            out.append((m.group(1), m.group(2), desc))
        return out

    def test_top_level_help_lists_every_command(self):
        for args in (("--help",), ("-h",), ("help",)):
            r = self.ok(*args, root=False)
            self.assertEqual(r.err, "", r)
            self.assertTrue(r.out.startswith("usage: cudnnctl <command>"), r)
            for name, (pos, _) in self.COMMANDS.items():
                head = ("%s %s" % (name, pos)).strip()
                with self.subTest(args=args, command=name):
                    # "  name ARGS   summary", or the summary below a long
                    # name (and going on below)
                    self.assertRegex(r.out, r"(?m)^  %s(?: +\S|\n {20,}\S)" % re.escape(head),
                                     r)
            listed = [o[0] for o in self.options_in(r.out)]
            self.assertEqual(listed, self.COMMON, r)
        # without a command: the same on stderr, exit 2
        r = self.run_cli(root=False)
        self.assertEqual(r.rc, EXIT["USAGE"], r)
        self.assertIn("commands:", r.err)

    def test_command_help_lists_every_option(self):
        for name, (pos, own) in self.COMMANDS.items():
            with self.subTest(command=name):
                r = self.ok(name, "--help", root=False)
                self.assertEqual(r.err, "", r)
                self.assertTrue(r.out.startswith(("usage: cudnnctl %s %s" % (name, pos)).strip()),
                                r)
                opts = self.options_in(r.out)
                # its own options, then the common ones, each described
                self.assertEqual([o[0] for o in opts], own + self.COMMON, r)
                for opt, _, desc in opts:
                    self.assertTrue(desc, "%s: no description:%s" % (opt, r))
                    # and on the usage line (--help aside)
                    if opt != "--help":
                        self.assertIn("[%s" % opt, r.out.split("\n\n")[0], r)
                # -h and `help NAME` print the same
                self.assertEqual(self.ok(name, "-h", root=False).out, r.out)
                self.assertEqual(self.ok("help", name, root=False).out, r.out)
                # every option the help lists is one the command takes: the
                # parser reaches --help after it instead of failing
                for opt, value, _ in opts:
                    if opt == "--help":
                        continue
                    args = [name, opt] + (["1" if value == "N" else "x"] if value else [])
                    h = self.run_cli(*args, "--help", root=False)
                    self.assertEqual((h.rc, h.out), (0, r.out), h)

    def test_usage_error_prints_the_usage_on_stderr(self):
        cases = [(name, ("--frob",), "unknown option '--frob' for '%s'" % name)
                 for name in self.COMMANDS]
        cases += [(name, (), "'%s' needs an argument" % name)
                  for name in ("install", "switch", "uninstall", "path")]
        cases += [("verify", ("9", "10"), "unexpected argument '10' for 'verify'"),
                  ("list", ("--json=yes",), "option '--json' takes no value"),
                  ("verify", ("--junit",), "option '--junit' needs a value"),
                  ("env", ("--shell", "fish"), "unknown shell 'fish'"),
                  ("switch", ("9", "--scope", "galaxy"), "unknown scope 'galaxy'"),
                  ("path", ("frob",), "unknown 'path' action 'frob'")]
        with self.unchanged():
            for name, args, words in cases:
                with self.subTest(command=name, args=args):
                    r = self.fails(EXIT["USAGE"], name, *args, words=(words,))
                    usage = r.err.split("\n", 1)[1]
                    self.assertTrue(usage.startswith("usage: cudnnctl %s" % name), r)
                    self.assertIn("[--json]", usage, r)
                    if "--json=yes" in args:
                        continue
                    # with --json: the error object, the usage line its hint
                    j = self.run_cli(name, "--json", *args)
                    self.assertEqual(j.rc, EXIT["USAGE"], j)
                    doc = j.json()
                    self.assertEqual((doc["command"], doc["ok"], doc["error"]["code"]),
                                     (name, False, "EUSAGE"), j)
                    self.assertIn(words, doc["error"]["message"], j)
                    self.assertTrue(doc["error"]["hint"].startswith("cudnnctl %s" % name), j)
        self.assertFalse(os.path.lexists(self.root))

    # -- the bar on a terminal
    def run_pty(self, *args):
        """Runs the binary with stderr on a pseudo-terminal (stdout a pipe):
        (exit status, stdout, what the terminal got)."""
        import pty
        import select
        master, slave = pty.openpty()
        cmd = [CLI] + [str(a) for a in args] + ["--root", self.root]
        proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        err = b""
        try:
            while True:
                ready, _, _ = select.select([master], [], [], 120)
                if not ready:
                    proc.kill()
                    raise AssertionError("%s: no end after 120 s" % cmd)
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                err += chunk
            out = proc.stdout.read()
            proc.wait(timeout=60)
        finally:
            proc.stdout.close()
            os.close(master)
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def assert_bar(self, err, phase, drawn, what):
        bar = re.compile(r"\r%s +\[#*" % phase)
        if drawn:
            self.assertRegex(err, bar, "%s: no bar on the terminal:\n%r" % (what, err))
        else:
            self.assertNotRegex(err, bar, "%s: a bar on the terminal:\n%r" % (what, err))
            self.assertNotIn("\x1b[K", err, "%s: the terminal got bar output:\n%r"
                             % (what, err))

    def test_quiet_keeps_the_bar_off_for_install(self):
        path, manifest = FX.pack("v9_txz")
        for extra in ([], ["--quiet"], ["-q"], ["--json"]):
            with self.subTest(options=extra):
                shutil.rmtree(self.root, ignore_errors=True)
                rc, out, err = self.run_pty("install", path, "--manifest", manifest,
                                            "--no-verify", *extra)
                self.assertEqual(rc, 0, err)
                # the bar draws while the archive is read, whatever its size
                self.assert_bar(err, "(sha256|check)", not extra, "install %s" % extra)
                if extra == ["--json"]:
                    self.assertTrue(json.loads(out)["ok"])

    def test_quiet_keeps_the_bar_off_for_verify_full(self):
        self.install("v9_txz")
        for extra in ([], ["--quiet"], ["-q"], ["--json"]):
            with self.subTest(options=extra):
                # the fixture's libraries are not loadable: verify fails at
                # a later stage, after --full re-hashed every file
                rc, out, err = self.run_pty("verify", "--full", "--no-gpu", *extra)
                self.assertNotEqual(rc, EXIT["USAGE"], err)
                self.assertIn("files", out)
                self.assert_bar(err, "sha256", not extra, "verify --full %s" % extra)


class TestErrorJson(CliTest):
    """The error object carries the OS's own error number when an OS call
    failed, and null otherwise."""

    def failure(self, code, *args):
        r = self.run_cli(*args)
        self.assertEqual(r.rc, code, r)
        doc = r.json()
        self.assertIs(doc["ok"], False, r)
        return doc

    def test_os_error_number(self):
        import errno
        missing = os.path.join(self.tmp, "cudnn-linux-x86_64-9.19.0.99_cuda13-archive.tar.xz")
        doc = self.failure(EXIT["IO"], "install", missing, "--json")
        self.assertEqual(doc["error"]["os_error"], errno.ENOENT, doc)
        self.assertIn(missing, doc["error"]["message"])
        doc = self.failure(EXIT["NOTFOUND"], "switch", "9", "--json")
        self.assertIsNone(doc["error"]["os_error"], doc)


if __name__ == "__main__":
    unittest.main()

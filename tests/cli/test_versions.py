#!/usr/bin/env python3
"""End-to-end tests of the cudnnctl binary: list, switch, uninstall, env and deactivate; hostile manifests in list --available.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401


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
        # the archive's files (24, 27) and the three build files install writes
        self.assertEqual(got, [("8.9.7.99-cuda12", "8.9.7.99", 12, False, True, 27),
                               ("9.19.0.99-cuda13", "9.19.0.99", 13, True, True, 30)])

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
        # the version gone, and a line more in the history, nothing else
        after = snapshot(self.root)
        expect = {k: v for k, v in before.items()
                  if not k.startswith("versions/9.14.0.99-cuda12") and k != "history.jsonl"}
        after.pop("history.jsonl")
        self.assertEqual(after, expect, snapshot_diff(expect, after))
        self.assertIn('"command":"uninstall"', self.read(os.path.join(self.root, "history.jsonl")))
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


class TestEnv(CliTest):
    fixtures = ("v9_txz",)

    def setUp(self):
        super().setUp()
        self.install("v9_txz")
        self.cur = os.path.join(self.root, "current")

    def test_env_sh(self):
        out = self.ok("env").out
        self.assertEqual(out, "export CUDNN_PATH='%s'\n"
                              "export CUDNN_ROOT='%s'\n"
                              "export CUDNN_HOME='%s'\n"
                              "export CUDNN_INSTALL_PATH='%s'\n"
                              "export LD_LIBRARY_PATH='%s/lib'\n"
                              "export LIBRARY_PATH='%s/lib'\n"
                              "export CPATH='%s/include'\n"
                              "export CMAKE_PREFIX_PATH='%s'\n"
                              "export PKG_CONFIG_PATH='%s/lib/pkgconfig'\n" % ((self.cur,) * 9))

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
        r = subprocess.run(["sh", "-c", script, clitest.CLI, self.root], capture_output=True,
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


if __name__ == "__main__":
    unittest.main()

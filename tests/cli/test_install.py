#!/usr/bin/env python3
"""End-to-end tests of the cudnnctl binary: install ARCHIVE: layouts, verified and unverified archives, tampered manifests, hostile and bad archives, the real cuDNN, --jobs.

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
                "already_installed": False, "files": 30, "activated": True,
                "previous": None}
        for k, v in want.items():
            self.assertEqual(doc.get(k), v, "%s in %s" % (k, r.out))
        tree = archive_tree(path)  # and the CMake and pkg-config files
        self.assertEqual(doc["files"], len(tree) + len(clitest.BUILD_FILES))
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
        self.assertEqual(doc["files"], 30, "files of an already installed version")
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


class HostileCase(CliTest):
    """Every hostile kind is refused before anything is written, in a fresh
    root and in one with another version installed and active, whatever
    the locale.  (The kinds are split between TestHostile and
    TestHostileMore, so that each ctest entry stays short.)"""
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



class TestHostile(HostileCase):
    pass


class TestHostileMore(HostileCase):
    pass


for _i, _kind in enumerate(HOSTILE):
    setattr(TestHostile if _i % 2 == 0 else TestHostileMore,
            "test_hostile_" + _kind.replace("-", "_"),
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


class TestRealCudnn(CliTest):
    """Packs the cuDNN installed under /usr/local/cuda (a zip of stored
    members: level 0, as the bytes are what count here) and
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
        path, manifest = FX.pack_from(lib, version, 13, "zip", "--level", "0")
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


class JobsCase(CliTest):
    """A zip is extracted by several workers, a tar.xz decoded on several
    threads (--jobs N, CUDNNCTL_JOBS; default: the processors).  Whatever
    the number, the same files with the same hashes, and an interrupt or a
    kill leaves nothing half-way.  (No tests of its own: the classes
    below split them so that each ctest entry stays short.)"""
    fixtures = ("v9_zip", "v9_txz", "v9_txz_blocks")

    def files(self, vid):
        """(path, size, sha256) of every file the install record lists."""
        rec = os.path.join(self.root, "versions", vid, ".cudnnctl-record")
        with open(rec, encoding="utf-8") as f:
            rows = [line.split("\t") for line in f if line.startswith("file\t")]
        return sorted((r[6], r[2], r[3]) for r in rows)

    def same_files(self, key, vid="9.19.0.99-cuda13"):
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

    def sweep(self, key, jobs, what):
        # every interrupt point, or every kill point, of an install with
        # several workers: nothing is left half-way, and the install gets
        # through in the end (one class each: under the sanitizers a sweep
        # of both took 31 s)
        path, manifest = FX.pack(key)
        args = ("install", path, "--manifest", manifest, "--jobs", jobs)
        sweeps = {"interrupt": ("CUDNNCTL_TEST_INTERRUPT_AT", EXIT["INTERRUPTED"]),
                  "kill": ("CUDNNCTL_TEST_KILL_AT", -9)}  # SIGKILL
        for hook, rc in (sweeps[what],):
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


class TestJobs(JobsCase):
    def test_same_files_whatever_the_number_of_workers_zip(self):
        self.same_files("v9_zip")

    def test_same_files_whatever_the_number_of_workers_tar_xz(self):
        self.same_files("v9_txz")

    def test_tar_xz_blocks_on_threads_the_same_files(self):
        # a tar.xz in several xz blocks (xz -T's) has its blocks decoded
        # on threads: the files of the same tar in one block
        self.same_files("v9_txz_blocks")
        blocks = self.files("9.19.0.99-cuda13")
        shutil.rmtree(self.root, True)
        self.install("v9_txz", "--jobs", "2")
        self.assertEqual(self.files("9.19.0.99-cuda13"), blocks)

    def test_bad_jobs_values(self):
        path, manifest = FX.pack("v9_zip")
        self.fails(EXIT["USAGE"], "install", path, "--manifest", manifest, "--jobs", "0",
                   words=("--jobs", "positive number"))
        r = self.install("v9_zip", env={"CUDNNCTL_JOBS": "many"})
        self.assertIn("CUDNNCTL_JOBS='many' is not a number from 1 to 64", r.err)


class TestJobsInterrupt(JobsCase):
    def test_interrupt_with_several_workers(self):
        self.sweep("v9_zip", "3", "interrupt")


class TestJobsKill(JobsCase):
    def test_kill_with_several_workers(self):
        self.sweep("v9_zip", "3", "kill")


class TestJobsInterruptBlocks(JobsCase):
    def test_interrupt_tar_xz_blocks_on_threads(self):
        self.sweep("v9_txz_blocks", "3", "interrupt")


class TestJobsKillBlocks(JobsCase):
    def test_kill_tar_xz_blocks_on_threads(self):
        self.sweep("v9_txz_blocks", "3", "kill")


class TestJobsArchiveChanged(JobsCase):
    def paused_in_extraction(self, args, touch):
        """Runs ARGS paused at each check point in turn until one falls in
        the extraction (the staging folder exists), calls touch() there,
        lets it go on and returns its Result."""
        marker = os.path.join(self.tmp, "paused")
        vdir = os.path.join(self.root, "versions")
        for at in range(1, 200):
            cmd = cli_command(clitest.CLI, args, self.root, False)
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
        cmd = cli_command(clitest.CLI, args, self.root, False)
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


if __name__ == "__main__":
    unittest.main()

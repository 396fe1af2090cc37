#!/usr/bin/env python3
"""End-to-end tests of the cudnnctl binary: the install root: where it is, what it must look like, --system, roots another user can write.

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
        cmd = cli_command(clitest.CLI, args, self.root, False)
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
            return subprocess.Popen(cli_command(clitest.CLI, args, self.root, False), env=self.env,
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
            cmd = [clitest.CLI, "install", "--root", root, "--no-verify", path, "--manifest", m,
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
        # a file the scan unpacks cannot be written (a file size limit
        # below the fake libraries' 4 KiB): a clear error naming the
        # archive and the folder, and no trace
        path, manifest = FX.pack("v9_txz")
        root = os.path.join(self.tmp, "fsize-root")

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        cmd = [clitest.CLI, "install", "--root", root, "--no-verify", path, "--manifest", manifest]
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
        r = subprocess.run([clitest.CLI, "install", "--root", root, "--no-verify", mystery],
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


if __name__ == "__main__":
    unittest.main()

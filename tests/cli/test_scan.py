#!/usr/bin/env python3
"""The machine as users bring it: scan finds the cuDNN copies planted in
the places copies are found (LD_LIBRARY_PATH, a CUDA toolkit named by
CUDA_PATH, a venv's site-packages with the nvidia-cudnn wheel and torch's
bundle, conda environments, a real Debian package built and installed
with dpkg in a private dpkg database, and with --deep a tree), each with
its version, CUDA major, owner, completeness and search order;
quarantine moves a hand-copied one aside and --restore puts it back byte
for byte, also after a kill at any point; a process that has a library
loaded makes uninstall and quarantine refuse, naming its pid.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401

V8 = ["libcudnn.so.8", "libcudnn_adv_infer.so.8", "libcudnn_adv_train.so.8",
      "libcudnn_cnn_infer.so.8", "libcudnn_cnn_train.so.8", "libcudnn_ops_infer.so.8",
      "libcudnn_ops_train.so.8"]
GOOD = os.path.join(FAKE_DIR, "good")  # the fake cuDNN 9.19.0, loadable


def plant(dir, names, data=b"not a real library\n"):
    """Files named names in dir."""
    os.makedirs(dir, exist_ok=True)
    for n in names:
        with open(os.path.join(dir, n), "wb") as f:
            f.write(data)


def plant_versioned(dir, names, version):
    """libX.so.9 -> libX.so.9.1.0, the file holding a little of its own."""
    os.makedirs(dir, exist_ok=True)
    for n in names:
        full = "%s.%s" % (n, ".".join(version.split(".")[1:3]))
        with open(os.path.join(dir, full), "wb") as f:
            f.write(b"fake %s %s\n" % (n.encode(), version.encode()))
        os.symlink(full, os.path.join(dir, n))


def tree(top):
    """{relative path: bytes, or ("link", target)} of a folder."""
    out = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, top)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def sanitizer_preload():
    """In the sanitizer build the fake libraries are instrumented: a plain
    Python loads them only with the sanitizer's runtime preloaded."""
    if "sanitize" not in os.environ.get("CUDNNCTL_TEST_CFLAGS", ""):
        return {}
    libs = []
    for name in ("libasan.so", "libubsan.so"):
        p = subprocess.run(["cc", "-print-file-name=" + name], capture_output=True, text=True)
        if p.returncode == 0 and os.path.isabs(p.stdout.strip()):
            libs.append(p.stdout.strip())
    return {"LD_PRELOAD": ":".join(libs), "ASAN_OPTIONS": "detect_leaks=0"}


class Holder:
    """A Python process that has a library loaded (ctypes: dlopen), until
    stopped."""

    def __init__(self, path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c",
             "import ctypes, sys\nctypes.CDLL(sys.argv[1])\nprint('ready', flush=True)\n"
             "sys.stdin.read()", path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, **sanitizer_preload()))
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the holder could not load %s" % path)
        self.pid = self.proc.pid

    def stop(self):
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.proc.wait(timeout=60)


class ScanTest(CliTest):
    fixtures = ()

    def install_fake(self, variant, *extra):
        """The fake cuDNN built for variant: loadable, so the loader's
        search counts it (the packed fixtures' bytes are not)."""
        path, manifest = FX.fake(variant)
        return self.ok("install", path, "--manifest", manifest, *extra)

    def setUp(self):
        super().setUp()
        t = self.tmp
        self.stray = os.path.join(t, "stray")
        shutil.copytree(GOOD, self.stray, symlinks=True)
        self.toolkit = os.path.join(t, "cuda-12.4")
        plant_versioned(os.path.join(self.toolkit, "lib64"),
                        [n for n in V8 if n != "libcudnn_adv_train.so.8"], "8.9.7")
        venv = os.path.join(t, "venv")
        os.makedirs(os.path.join(venv, "bin"))
        self.write(os.path.join(venv, "bin", "python3"), "")
        site = os.path.join(venv, "lib", "python3.11", "site-packages")
        self.wheel = os.path.join(site, "nvidia", "cudnn", "lib")
        plant(self.wheel, ["libcudnn.so.9"])
        plant(self.wheel, ["libcudnn_graph.so.9"],
              data=b"\0" * 5000 + b"jit_flags_dbg\0cudnn_version_9_1_0_70_\0\0" + b"\1" * 100)
        os.makedirs(os.path.join(site, "nvidia_cudnn_cu12-9.1.0.70.dist-info"))
        self.torch = os.path.join(site, "torch", "lib")
        plant(self.torch, ["libcudnn.so.9"])
        self.conda = os.path.join(t, "conda")
        os.makedirs(os.path.join(self.conda, "conda-meta"))
        plant_versioned(os.path.join(self.conda, "lib"), ["libcudnn.so.9"], "9.14.0")
        self.conda2 = os.path.join(t, "envs", "two")
        os.makedirs(os.path.join(self.conda2, "conda-meta"))
        plant_versioned(os.path.join(self.conda2, "lib"), ["libcudnn.so.8"], "8.9.2")
        os.makedirs(os.path.join(self.home, ".conda"))
        self.write(os.path.join(self.home, ".conda", "environments.txt"),
                   "%s\nnot a path\n%s\n" % (self.conda, self.conda2))
        self.deep = os.path.join(t, "deep")
        self.mixed = os.path.join(self.deep, "a", "b", "mixed")
        plant_versioned(self.mixed, ["libcudnn.so.8"], "8.9.7")
        plant_versioned(self.mixed, ["libcudnn.so.9"], "9.1.0")
        self.mixed9 = os.path.join(self.deep, "mixed9")
        plant_versioned(self.mixed9, ["libcudnn.so.9"], "9.1.0")
        plant_versioned(self.mixed9, ["libcudnn_ops.so.9"], "9.6.0")
        self.install_fake("good")
        self.active_lib = os.path.join(self.root, "current", "lib")
        self.scan_env = {
            "LD_LIBRARY_PATH": "%s:%s" % (self.stray, self.active_lib),
            "CUDA_PATH": self.toolkit,
            "PATH": "%s:%s" % (os.path.join(venv, "bin"), os.environ.get("PATH", "")),
            "CONDA_PREFIX": self.conda,
        }

    def scan(self, *extra, env=None):
        r = self.ok("scan", "--json", *extra, env=dict(self.scan_env, **(env or {})))
        doc = r.json()
        return {os.path.realpath(c["dir"]) + "#%d" % c["major"]: c for c in doc["copies"]}, doc

    def copy(self, copies, path, major=9):
        key = os.path.realpath(path) + "#%d" % major
        self.assertIn(key, copies, sorted(copies))
        return copies[key]


class TestScan(ScanTest):
    def test_every_planted_copy(self):
        copies, doc = self.scan("--deep", self.deep)
        stray = self.copy(copies, self.stray)
        self.assertEqual((stray["version"], stray["version_from"], stray["owner"]),
                         ("9.19.0", "file name", "unknown"))
        self.assertTrue(stray["complete"], stray)
        self.assertEqual(stray["place"], "LD_LIBRARY_PATH entry 1")
        self.assertEqual(stray["search_rank"], 1)
        self.assertTrue(stray["before_active"], stray)
        active = self.copy(copies, self.active_lib)
        self.assertEqual((active["owner"], active["active"], active["search_rank"],
                          active["before_active"]), ("cudnnctl", True, 2, False))
        tk = self.copy(copies, os.path.join(self.toolkit, "lib64"), 8)
        self.assertEqual((tk["version"], tk["cuda"], tk["owner"], tk["place"]),
                         ("8.9.7", 12, "unknown", "CUDA toolkit (CUDA_PATH)"))
        self.assertFalse(tk["complete"])
        self.assertEqual(tk["missing"], "libcudnn_adv_train.so.8")
        self.assertEqual(tk["search_rank"], 0)
        wheel = self.copy(copies, self.wheel)
        self.assertEqual((wheel["owner"], wheel["owner_name"], wheel["remove_with"],
                          wheel["version"], wheel["version_from"], wheel["cuda"]),
                         ("wheel", "nvidia-cudnn-cu12 9.1.0.70", "pip uninstall nvidia-cudnn-cu12",
                          "9.1.0", "library", 12))
        torch = self.copy(copies, self.torch)
        self.assertEqual((torch["owner"], torch["owner_name"], torch["version"]),
                         ("framework", "torch", None))
        self.assertIn("libcudnn_ops.so.9", torch["missing"])
        conda = self.copy(copies, os.path.join(self.conda, "lib"))
        self.assertEqual((conda["owner"], conda["version"]), ("conda", "9.14.0"))
        self.assertEqual(conda["remove_with"], "conda remove -p %s cudnn" % self.conda)
        two = self.copy(copies, os.path.join(self.conda2, "lib"), 8)
        self.assertEqual((two["owner"], two["version"]), ("conda", "8.9.2"))
        for major in (8, 9):
            self.assertEqual(self.copy(copies, self.mixed, major)["mixed"], "8.x and 9.x")
        self.assertEqual(self.copy(copies, self.mixed9)["mixed"], "9.1.0 and 9.6.0")
        self.assertFalse(doc["deep_cut"])

    def test_text(self):
        r = self.ok("scan", env=self.scan_env)
        self.assertIn("%s\n    cuDNN 9.19.0 (from the file name), 8 libraries" % self.stray, r.out)
        self.assertIn("owner: unknown (copied by hand: cudnnctl quarantine moves it aside)",
                      r.out)
        self.assertIn("a new process finds it 1st, BEFORE cudnnctl's active version", r.out)
        self.assertIn("incomplete: lacks libcudnn_adv_train.so.8", r.out)
        self.assertIn("owner: wheel nvidia-cudnn-cu12 9.1.0.70 (removed with: pip uninstall "
                      "nvidia-cudnn-cu12)", r.out)

    def test_without_deep_the_tree_is_not_walked(self):
        copies, _ = self.scan()
        self.assertNotIn(os.path.realpath(self.mixed) + "#9", copies)

    def test_doctor_includes_it(self):
        r = self.ok("doctor", "--no-gpu", env=self.scan_env)
        self.assertIn("cuDNN copies on this machine (cudnnctl scan):", r.out)
        self.assertIn(self.stray, r.out)
        doc = self.ok("doctor", "--no-gpu", "--json", "--no-redact", env=self.scan_env).json()
        dirs = [os.path.realpath(c["dir"]) for c in doc["scan"]["copies"]]
        self.assertIn(os.path.realpath(self.stray), dirs)


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("dpkg-deb") and shutil.which("dpkg"),
                     "needs root, dpkg and dpkg-deb")
class TestDebianPackage(ScanTest):
    """A real .deb, built here with dpkg-deb and installed with dpkg into a
    database of the test's own (DPKG_ADMINDIR: the system's is untouched),
    with its files under /opt."""
    PKG = "cudnnctl-test-libcudnn9"

    def setUp(self):
        super().setUp()
        self.opt = "/opt/cudnnctl-test-%d" % os.getpid()
        self.pkg_lib = os.path.join(self.opt, "lib")
        pkg = os.path.join(self.tmp, "pkg")
        os.makedirs(os.path.join(pkg, "DEBIAN"))
        plant_versioned(pkg + self.pkg_lib, ["libcudnn.so.9", "libcudnn_ops.so.9"], "9.14.0")
        self.write(os.path.join(pkg, "DEBIAN", "control"),
                   "Package: %s\nVersion: 9.14.0-1\nArchitecture: all\n"
                   "Maintainer: cudnnctl tests <tests@invalid>\n"
                   "Description: a fake cuDNN for cudnnctl's tests\n" % self.PKG)
        admin = os.path.join(self.tmp, "dpkg")
        for d in ("info", "updates", "triggers"):
            os.makedirs(os.path.join(admin, d))
        self.write(os.path.join(admin, "status"), "")
        self.scan_env["DPKG_ADMINDIR"] = admin
        deb = os.path.join(self.tmp, "fake.deb")
        subprocess.run(["dpkg-deb", "--root-owner-group", "-b", pkg, deb], check=True,
                       capture_output=True)
        env = dict(os.environ, DPKG_ADMINDIR=admin)
        subprocess.run(["dpkg", "--log=/dev/null", "-i", deb], check=True, env=env,
                       capture_output=True)
        self.addCleanup(shutil.rmtree, self.opt, True)
        self.addCleanup(subprocess.run, ["dpkg", "--log=/dev/null", "-r", self.PKG],
                        env=env, capture_output=True)

    def test_the_owner_is_the_package(self):
        copies, _ = self.scan("--deep", self.opt)
        c = self.copy(copies, self.pkg_lib)
        self.assertEqual((c["owner"], c["owner_name"], c["remove_with"], c["version"]),
                         ("package", self.PKG, "apt remove %s" % self.PKG, "9.14.0"))

    def test_quarantine_refuses_it(self):
        before = tree(self.opt)
        self.fails(EXIT["OWNED"], "quarantine", self.pkg_lib, env=self.scan_env,
                   words=("belongs to the package %s" % self.PKG, "apt remove %s" % self.PKG))
        self.assertEqual(tree(self.opt), before)


class TestQuarantine(ScanTest):
    def quarantined(self):
        return self.ok("quarantine", "--list", "--json").json()["quarantines"]

    def test_move_list_restore(self):
        before = tree(self.stray)
        r = self.ok("quarantine", self.stray, env=self.scan_env)
        self.assertIn("undo with: cudnnctl quarantine --restore ", r.out)
        self.assertEqual([n for n in os.listdir(self.stray)], [])
        copies, _ = self.scan()
        self.assertNotIn(os.path.realpath(self.stray) + "#9", copies)
        # the active version is what a new process finds now
        self.assertEqual(self.copy(copies, self.active_lib)["search_rank"], 1)
        q = self.quarantined()
        self.assertEqual(len(q), 1)
        self.assertEqual(sorted(os.path.basename(f["path"]) for f in q[0]["files"]),
                         sorted(before))
        for f in q[0]["files"]:
            self.assertTrue(f["stored"].startswith(os.path.join(self.root, "quarantine",
                                                                q[0]["id"])), f)
        r = self.ok("quarantine", "--restore", q[0]["id"])
        self.assertIn("restored %s" % q[0]["id"], r.out)
        self.assertEqual(tree(self.stray), before)
        self.assertEqual(self.quarantined(), [])
        self.assertFalse(os.path.exists(os.path.join(self.root, "quarantine", q[0]["id"])))
        hist = self.ok("history", "--json").json()["changes"]
        self.assertEqual([h["command"] for h in hist][-2:], ["quarantine", "quarantine"])

    def test_one_file_and_restore_all(self):
        one = os.path.join(self.stray, "libcudnn_ops.so.9.19.0")
        with open(one, "rb") as f:
            data = f.read()
        self.ok("quarantine", one)
        self.assertFalse(os.path.exists(one))
        self.ok("quarantine", os.path.join(self.stray, "libcudnn_cnn.so.9.19.0"))
        self.assertEqual(len(self.quarantined()), 2)
        self.ok("quarantine", "--restore", "all")
        with open(one, "rb") as f:
            self.assertEqual(f.read(), data)
        self.assertEqual(self.quarantined(), [])

    def test_refusals_change_nothing(self):
        cases = [
            (self.wheel, EXIT["OWNED"], ("the Python wheel nvidia-cudnn-cu12 9.1.0.70",
                                        "pip uninstall nvidia-cudnn-cu12")),
            (self.torch, EXIT["OWNED"], ("the Python framework torch", "verify --python")),
            (os.path.join(self.conda, "lib"), EXIT["OWNED"],
             ("the conda environment", "conda remove -p %s cudnn" % self.conda)),
            (self.active_lib, EXIT["OWNED"], ("one of cudnnctl's own installs",
                                              "cudnnctl uninstall")),
            (os.path.join(self.sibling, "keep.txt"), EXIT["USAGE"], ("is not a cuDNN library",)),
            (os.path.join(self.tmp, "nothing-here"), EXIT["NOTFOUND"], ("does not exist",)),
            (self.sibling, EXIT["NOTFOUND"], ("no cuDNN library in",)),
        ]
        def machine():
            # the root keeps a history line of each refusal
            return {k: v for k, v in tree(self.tmp).items() if not k.startswith("root")}
        before = machine()
        for path, code, words in cases:
            self.fails(code, "quarantine", path, words=words + ("nothing was moved",))
            self.assertEqual(machine(), before, path)
        self.fails(EXIT["USAGE"], "quarantine", words=("one of them",))
        self.fails(EXIT["USAGE"], "quarantine", "--list", self.stray, words=("one of them",))
        self.fails(EXIT["NOTFOUND"], "quarantine", "--restore", "20990101T000000Z",
                   words=("no quarantine",))

    def test_a_tampered_file_is_not_restored(self):
        self.ok("quarantine", self.stray)
        q = self.quarantined()[0]
        stored = [f["stored"] for f in q["files"] if f["sha256"] != "link"][0]
        with open(stored, "ab") as f:
            f.write(b"x")
        self.fails(EXIT["FAIL"], "quarantine", "--restore", q["id"],
                   words=("SHA-256 or link target differs", "nothing was restored"))
        self.assertEqual(os.listdir(self.stray), [])

    def test_in_use_refused_then_forced(self):
        lib = os.path.join(self.stray, "libcudnn.so.9")
        h = Holder(lib)
        self.addCleanup(h.stop)
        before = tree(self.stray)
        self.fails(EXIT["INUSE"], "quarantine", self.stray,
                   words=("cannot quarantine", "loaded by pid %d" % h.pid, "--force"))
        self.assertEqual(tree(self.stray), before)
        self.ok("quarantine", self.stray, "--force")
        self.assertEqual(os.listdir(self.stray), [])


    @unittest.skipUnless(can_mount_tmpfs(), "needs root and mount (a tmpfs)")
    def test_another_volume_is_renamed_in_place(self):
        other = os.path.join(self.tmp, "other")
        os.makedirs(other)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", other], check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", other])
        stray = os.path.join(other, "lib")
        plant_versioned(stray, ["libcudnn.so.9", "libcudnn_ops.so.9"], "9.1.0")
        before = tree(stray)
        self.ok("quarantine", stray)
        self.assertEqual(sorted(os.listdir(stray)),
                         sorted(n + ".cudnnctl-quarantined" for n in before))
        q = self.quarantined()[0]
        self.assertTrue(all(f["stored"] == f["path"] + ".cudnnctl-quarantined"
                            for f in q["files"]), q)
        copies, _ = self.scan()
        self.assertNotIn(os.path.realpath(stray) + "#9", copies)
        self.ok("quarantine", "--restore", q["id"])
        self.assertEqual(tree(stray), before)

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv"),
                         "needs root and setpriv (to run as another user)")
    def test_no_write_access_is_a_clear_error(self):
        """As nobody, a folder of root's (mode 755): the error names the
        folder and sudo, and nothing is moved."""
        os.chmod(self.tmp, 0o755)
        os.chmod(self.stray, 0o755)
        user_root = os.path.join(self.tmp, "user-root")
        os.makedirs(user_root)
        os.chown(user_root, 65534, 65534)
        before = tree(self.stray)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               clitest.CLI, "quarantine", self.stray, "--root", user_root]
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(self.env, HOME=user_root))
        if "cannot move files out of" not in r.stderr and r.returncode:
            self.skipTest("cudnnctl cannot run as nobody here: %s" % r.stderr)
        self.assertEqual(r.returncode, EXIT["FAIL"], r.stderr)
        self.assertIn("cannot move files out of '%s'" % self.stray, r.stderr)
        self.assertIn("sudo", r.stderr)
        self.assertEqual(tree(self.stray), before)


class TestQuarantineKillPoints(ScanTest):
    """A kill at every point of quarantine and of restore: the next command
    leaves every file in one place, and a restore then gives the folder
    back byte for byte."""

    def test_every_kill_point(self):
        # a small copy: two libraries, each a file and its link
        self.stray = os.path.join(self.tmp, "small")
        plant_versioned(self.stray, ["libcudnn.so.9", "libcudnn_ops.so.9"], "9.1.0")
        original = tree(self.stray)
        n = len(original)
        kills = {"move": 0, "restore": 0}
        for phase in ("move", "restore"):
            for at in range(1, 200):
                if phase == "restore":
                    self.ok("quarantine", self.stray)
                args = (("quarantine", self.stray) if phase == "move"
                        else ("quarantine", "--restore", "all"))
                r = self.run_cli(*args, env={"CUDNNCTL_TEST_KILL_AT": str(at)})
                label = "%s killed at %d" % (phase, at)
                if r.rc == 0:
                    self.ok("quarantine", "--restore", "all")
                    self.assertEqual(tree(self.stray), original, label)
                    break
                self.assertEqual(r.rc, -signal.SIGKILL, "%s:%s" % (label, r))
                kills[phase] += 1
                # the next command (under the root lock) undoes or finishes it
                q = self.ok("quarantine", "--list", "--json").json()["quarantines"]
                held = sum(len(x["files"]) for x in q)
                left = len(tree(self.stray))
                self.assertEqual(held + left, n, "%s: %d held, %d left" % (label, held, left))
                self.assertIn(left, (0, n), label)
                self.ok("quarantine", "--restore", "all")
                self.assertEqual(tree(self.stray), original, label)
        # a record, the renames (one per file and link), the record again
        self.assertGreaterEqual(kills["move"], n, kills)
        self.assertGreaterEqual(kills["restore"], n, kills)


class TestInUse(ScanTest):
    def test_uninstall_refuses_while_loaded(self):
        vid = self.active_id()
        lib = os.path.join(self.root, "versions", vid, "lib", "libcudnn.so.9")
        h = Holder(lib)
        self.addCleanup(h.stop)
        self.fails(EXIT["ACTIVE"], "uninstall", vid)
        r = self.run_cli("deactivate")
        self.assertEqual(r.rc, 0, r)
        self.fails(EXIT["INUSE"], "uninstall", vid,
                   words=("cannot uninstall %s" % vid, "pid %d" % h.pid, "close those programs"))
        self.assertTrue(os.path.isdir(os.path.join(self.root, "versions", vid)))
        self.ok("uninstall", vid, "--force")
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", vid)))

    def test_switch_names_who_keeps_the_old_version(self):
        self.install_fake("old", "--no-activate")
        old = self.active_id()
        self.ok("switch", old)
        h = Holder(os.path.join(self.root, "versions", old, "lib", "libcudnn.so.9"))
        self.addCleanup(h.stop)
        others = [v for v in os.listdir(os.path.join(self.root, "versions"))
                  if v != old and not v.startswith(".")]
        r = self.ok("switch", others[0])
        self.assertIn("pid %d (" % h.pid, r.out)
        self.assertIn("keeps %s loaded until it restarts" % old, r.out)
        doc = self.ok("switch", old, "--json").json()
        self.assertEqual(doc["still_loaded_by"], [])
        # an install that makes another version active says the same
        path, manifest = FX.fake("r990")
        doc = self.ok("install", path, "--manifest", manifest, "--json").json()
        self.assertEqual(doc["previous"], old)
        self.assertEqual([u["pid"] for u in doc["still_loaded_by"]], [h.pid])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""The Ansible role (contrib/ansible): `ansible-playbook` against localhost
(connection local) installs cuDNN by version from the local test server
(tests/lib/redist_server.py, over HTTPS with its own CA) with the cudnnctl
of this build, verifies it,
reports changed=0 when run again, and changed=1 when the version changes.

Needs ansible-playbook (Debian: ansible-core) and the fake cuDNN libraries
the build makes (CUDNNCTL_FAKE_DIR), packed as releases.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))
import fake_mirror  # noqa: E402
from cctltest import CI_VARS  # noqa: E402

BIN = os.path.abspath(os.environ.get("CUDNNCTL_BIN")
                      or os.path.join(REPO, "build", "cudnnctl"))
FAKE_DIR = os.path.abspath(os.environ.get("CUDNNCTL_FAKE_DIR")
                           or os.path.join(REPO, "build", "tests", "fake"))
PLAYBOOK = os.path.join(REPO, "contrib", "ansible", "site.yml")
ANSIBLE = shutil.which("ansible-playbook")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


@unittest.skipUnless(ANSIBLE, "no ansible-playbook (Debian: apt-get install ansible-core)")
class AnsibleRole(unittest.TestCase):
    """site.yml against a fake mirror of this class's own (the test
    classes below are one ctest entry each)."""

    @classmethod
    def setUpClass(cls):
        if not os.access(BIN, os.X_OK):
            raise unittest.SkipTest("no cudnnctl binary at %s (set CUDNNCTL_BIN)" % BIN)
        if not os.path.isdir(os.path.join(FAKE_DIR, "r990")):
            raise unittest.SkipTest("no fake cuDNN in %s" % FAKE_DIR)
        cls.tmp = tempfile.mkdtemp(prefix="cctl-ansible-")
        # a private copy: a rebuild during the run must not change what runs
        cls.bin = shutil.copy2(BIN, os.path.join(cls.tmp, "cudnnctl"))
        cls.srv = fake_mirror.start(cls.tmp, FAKE_DIR, cudnnctl=cls.bin)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="run-", dir=self.tmp)
        self.root = os.path.join(self.work, "root")
        self.home = os.path.join(self.work, "home")
        os.mkdir(self.home)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in CI_VARS + ("CUDNNCTL_ROOT", "CUDNNCTL_MIRROR", "CUDNNCTL_CACHE",
                                           "LD_LIBRARY_PATH", "CUDNN_PATH")}
        self.env.update(HOME=self.home, NO_PROXY="*", no_proxy="*",
                        CURL_CA_BUNDLE=self.srv.ca_file,
                        ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=os.path.join(self.work, "at"),
                        ANSIBLE_REMOTE_TEMP=os.path.join(self.work, "rt"))

    def play(self, version, cuda, **extra):
        """Runs site.yml on localhost; (changed, the play's output)."""
        variables = {"cudnn_hosts": "all", "cudnn_version": version, "cudnn_cuda": cuda,
                     "cudnn_mirror": self.srv.url, "cudnn_root": self.root,
                     "cudnn_cache": os.path.join(self.work, "cache"), "cudnnctl_path": self.bin,
                     "ansible_python_interpreter": PY}
        variables.update(extra)
        cmd = [ANSIBLE, "-i", "localhost,", "-c", "local", PLAYBOOK, "-e", json.dumps(variables)]
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=300)
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 0, out)
        m = re.search(r"localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                      r"failed=(\d+)", out)
        self.assertTrue(m, out)
        self.assertEqual((m.group(3), m.group(4)), ("0", "0"), out)
        return int(m.group(2)), out

    def cli_install(self, version, cuda):
        """What the role's install task runs, without a play: the state a
        test starts from, at a fraction of a play's cost."""
        subprocess.run([self.bin, "install", version, "--cuda", str(cuda), "--mirror",
                        self.srv.url, "--root", self.root, "--cache",
                        os.path.join(self.work, "cache"), "--scope", "user", "--quiet",
                        "--no-verify"], env=self.env, capture_output=True, check=True)

    def active(self):
        doc = subprocess.run([self.bin, "list", "--root", self.root, "--json"], env=self.env,
                             capture_output=True, text=True, check=True).stdout
        return [i["id"] for i in json.loads(doc)["installed"] if i.get("active")]


class TestAnsibleIdempotent(AnsibleRole):
    def test_install_is_idempotent(self):
        changed, out = self.play("9.90", 13)
        self.assertEqual(changed, 1, out)
        self.assertIn("Verify cuDNN", out)
        self.assertEqual(self.active(), ["9.90.0.1-cuda13"])
        # again: nothing to do
        changed, out = self.play("9.90", 13)
        self.assertEqual(changed, 0, out)


class TestAnsibleSwitch(AnsibleRole):
    def test_another_version_then_back(self):
        # (the first install's play is TestAnsibleIdempotent's)
        self.cli_install("9.90", 13)
        self.assertEqual(self.active(), ["9.90.0.1-cuda13"])
        # another version: installed and made active
        changed, out = self.play("9.91", 12)
        self.assertEqual(changed, 1, out)
        self.assertEqual(self.active(), ["9.91.0.1-cuda12"])
        # back to the first: already installed, made active again; the
        # history shown after it: the last three changes, each a line of
        # time, command line, active after
        changed, out = self.play("9.90", 13, cudnn_show_history=3)
        self.assertEqual(changed, 1, out)
        self.assertEqual(self.active(), ["9.90.0.1-cuda13"])
        self.assertIn("Show the recent changes", out)
        lines = re.findall(r'"(\d{4}-\d\d-\d\dT[^"]*)"', out)
        self.assertEqual(len(lines), 3, out)
        self.assertIn("install", lines[0])
        self.assertIn("switch 9.90.0.1-cuda13", lines[-1])
        self.assertTrue(lines[-1].endswith("  9.90.0.1-cuda13"), lines)


class TestAnsiblePlainHttp(AnsibleRole):
    def test_plain_http_mirror_with_manifests(self):
        """An intranet mirror over plain HTTP: its own manifests are
        refused, the ones given in cudnn_manifests (here a file on the
        host) vouch for its archives."""
        plain = fake_mirror.start_plain(self.srv)
        self.addCleanup(plain.stop)
        manifest = os.path.join(self.srv.mirror_dir, "redistrib_9.90.0.json")
        # without: the play fails, naming why and the ways out
        variables = {"cudnn_hosts": "all", "cudnn_version": "9.90", "cudnn_cuda": 13,
                     "cudnn_mirror": plain.url, "cudnn_root": self.root,
                     "cudnn_cache": os.path.join(self.work, "cache"), "cudnnctl_path": self.bin,
                     "ansible_python_interpreter": PY}
        p = subprocess.run([ANSIBLE, "-i", "localhost,", "-c", "local", PLAYBOOK, "-e",
                            json.dumps(variables)], env=self.env, capture_output=True,
                           text=True, timeout=300)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("not plain HTTP", p.stdout + p.stderr)
        # a file
        changed, out = self.play("9.90", 13, cudnn_mirror=plain.url,
                                 cudnn_manifests=[manifest])
        self.assertEqual(changed, 1, out)
        self.assertEqual(self.active(), ["9.90.0.1-cuda13"])
        self.assertGreaterEqual(plain.stats("*.tar.xz")["requests"], 1)
        # nothing but archives asked of the plain-HTTP mirror
        self.assertTrue(all(p.endswith(".tar.xz") for p in plain.stats()), plain.stats())


class TestAnsiblePlainHttpUrl(AnsibleRole):
    def test_plain_http_mirror_with_a_manifest_url(self):
        """The manifests given in cudnn_manifests as an https:// URL vouch
        for a plain-HTTP mirror's archive."""
        plain = fake_mirror.start_plain(self.srv)
        self.addCleanup(plain.stop)
        changed, out = self.play("9.91", 12, cudnn_mirror=plain.url,
                                 cudnn_manifests=[self.srv.url + "redistrib_9.91.0.json"])
        self.assertEqual(changed, 1, out)
        self.assertEqual(self.active(), ["9.91.0.1-cuda12"])
        self.assertGreaterEqual(plain.stats("*.tar.xz")["requests"], 1)
        self.assertTrue(all(p.endswith(".tar.xz") for p in plain.stats()), plain.stats())



class TestAnsibleVerify(AnsibleRole):
    def test_a_failing_verify_fails_the_play(self):
        # require-gpu on a machine whose driver the tests do not provide
        variables = {"cudnn_hosts": "all", "cudnn_version": "9.90", "cudnn_cuda": 13,
                     "cudnn_mirror": self.srv.url, "cudnn_root": self.root,
                     "cudnn_cache": os.path.join(self.work, "cache"), "cudnnctl_path": self.bin,
                     "cudnn_verify": "require-gpu", "ansible_python_interpreter": PY}
        env = dict(self.env, LD_LIBRARY_PATH=os.path.join(self.work, "no-driver-here"))
        p = subprocess.run([ANSIBLE, "-i", "localhost,", "-c", "local", PLAYBOOK, "-e",
                            json.dumps(variables)], env=env, capture_output=True, text=True,
                           timeout=300)
        out = p.stdout + p.stderr
        if os.path.exists("/dev/nvidiactl"):
            self.skipTest("this machine has an NVIDIA driver")
        self.assertNotEqual(p.returncode, 0, out)
        self.assertRegex(out, r"failed=1", out)
        self.assertIn("\"rc\": 28", out)


if __name__ == "__main__":
    unittest.main()

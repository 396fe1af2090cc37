#!/usr/bin/env python3
"""action.yml, run here step by step as a GitHub runner runs a composite
action: the runner's files and variables (GITHUB_ENV, GITHUB_PATH,
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_OS, RUNNER_TEMP), the action's
expressions, `if:` conditions and outputs, and actions/cache emulated by a
store keyed like the real one (restored before the job's later steps,
saved after the job).  Installs by version from the tests' HTTPS server
(tests/lib/fake_mirror.py) with the cudnnctl of this build, and once with
cudnnctl built from the action's own sources, as on a branch."""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))
import fake_mirror  # noqa: E402
from cctltest import CI_VARS, ENV_VARS  # noqa: E402

BIN = os.path.abspath(os.environ.get("CUDNNCTL_BIN")
                      or os.path.join(REPO, "build", "cudnnctl"))
FAKE_DIR = os.path.abspath(os.environ.get("CUDNNCTL_FAKE_DIR")
                           or os.path.join(REPO, "build", "tests", "fake"))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Job:
    """One job of a runner that uses the action once (run()), then runs
    later steps (shell())."""

    def __init__(self, tmp, env, cache_store, action_ref=""):
        self.tmp = tmp
        self.temp = os.path.join(tmp, "runner-temp")
        self.files = os.path.join(tmp, "runner-files")
        # where the checkout is, and the steps run (github.workspace)
        self.workspace = os.path.join(tmp, "workspace")
        os.makedirs(self.temp)
        os.makedirs(self.files)
        os.makedirs(self.workspace)
        self.env = dict(env, GITHUB_ACTIONS="true", CI="true", RUNNER_OS="Linux",
                        RUNNER_TEMP=self.temp)
        for name in ("ENV", "PATH", "STEP_SUMMARY"):
            self.env["GITHUB_" + name] = os.path.join(self.files, name.lower())
            open(self.env["GITHUB_" + name], "w").close()
        self.store = cache_store
        self.ref = action_ref
        self.steps = {}
        self.saves = []

    def value(self, expr, inputs):
        """An expression of the kinds action.yml uses."""
        m = re.fullmatch(r"(.+?)\s*(==|!=)\s*'([^']*)'", expr)
        if m:
            same = str(self.value(m.group(1), inputs)) == m.group(3)
            return same if m.group(2) == "==" else not same
        parts = expr.split(".")
        if parts[0] == "inputs":
            return inputs[parts[1]]
        if parts[0] == "steps":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        if expr == "github.action_path":
            return REPO
        if expr == "github.action_ref":
            return self.ref
        if expr == "github.action_repository":
            return "cudnnctl/cudnnctl"
        if expr == "runner.os":
            return "Linux"
        raise ValueError("an expression the test runner does not know: " + expr)

    def subst(self, text, inputs):
        return EXPR.sub(lambda m: str(self.value(m.group(1), inputs)), str(text))

    def run(self, action, given):
        inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
        for k in given:
            assert k in action["inputs"], "no input %s in action.yml" % k
        inputs.update({k: str(v) for k, v in given.items()})
        for k, v in action["inputs"].items():
            assert not v.get("required") or inputs[k], "input %s is required" % k
        for step in action["runs"]["steps"]:
            cond = step.get("if")
            if cond is not None and not self.value(EXPR.fullmatch(cond).group(1)
                                                   if EXPR.fullmatch(cond) else cond, inputs):
                continue
            if "uses" in step:
                assert step["uses"].startswith("actions/cache@"), step["uses"]
                self.cache(step, inputs)
                continue
            out = os.path.join(self.files, "output-" + step["id"])
            open(out, "w").close()
            env = dict(self.env, GITHUB_OUTPUT=out, GITHUB_ACTION_PATH=REPO)
            env.update({k: self.subst(v, inputs) for k, v in step.get("env", {}).items()})
            assert step["shell"] == "bash"
            p = subprocess.run(["bash", "-e", "-c", self.subst(step["run"], inputs)], env=env,
                               cwd=self.workspace, capture_output=True, text=True, timeout=900)
            if p.returncode:
                raise AssertionError("step %s failed (%d):\n%s%s" % (step["id"], p.returncode,
                                                                    p.stdout, p.stderr))
            self.steps[step["id"]] = self.read_outputs(out)
        return {k: self.subst(v["value"], inputs) for k, v in action["outputs"].items()}

    def read_outputs(self, path):
        outputs = {}
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        i = 0
        while i < len(lines):
            m = re.fullmatch(r"([^=<]+)<<(.+)", lines[i])
            if m:
                end = lines.index(m.group(2), i + 1)
                outputs[m.group(1)] = "\n".join(lines[i + 1:end])
                i = end + 1
                continue
            k, v = lines[i].split("=", 1)
            outputs[k] = v
            i += 1
        return outputs

    def cache(self, step, inputs):
        path = self.subst(step["with"]["path"], inputs)
        key = self.subst(step["with"]["key"], inputs)
        assert key and path, step
        if key in self.store:
            shutil.copytree(self.store[key], path, dirs_exist_ok=True)
            self.steps[step["id"]] = {"cache-hit": "true"}
        else:
            self.steps[step["id"]] = {"cache-hit": "false"}
            self.saves.append((key, path))

    def end(self):
        """The post step of actions/cache: saves what it missed."""
        for key, path in self.saves:
            saved = os.path.join(self.tmp, "cache-store", key)
            shutil.copytree(path, saved)
            self.store[key] = saved

    def later_env(self):
        """A later step's environment: GITHUB_ENV and GITHUB_PATH applied."""
        env = dict(self.env)
        with open(self.env["GITHUB_ENV"], encoding="utf-8") as f:
            for line in f.read().splitlines():
                k, v = line.split("=", 1)
                env[k] = v
        with open(self.env["GITHUB_PATH"], encoding="utf-8") as f:
            for d in f.read().splitlines():
                env["PATH"] = d + os.pathsep + env["PATH"]
        return env


class ActionTest(unittest.TestCase):
    """The action's steps run as jobs against the tests' mirror, with a
    private copy of the binary (one server and folder for each class)."""
    @classmethod
    def setUpClass(cls):
        if not os.access(BIN, os.X_OK):
            raise unittest.SkipTest("no cudnnctl binary at %s (set CUDNNCTL_BIN)" % BIN)
        if not os.path.isdir(os.path.join(FAKE_DIR, "r990")):
            raise unittest.SkipTest("no fake cuDNN in %s" % FAKE_DIR)
        with open(os.path.join(REPO, "action.yml"), encoding="utf-8") as f:
            cls.action = yaml.safe_load(f)
        cls.tmp = tempfile.mkdtemp(prefix="cctl-action-")
        # a private copy: a rebuild during the run must not change what runs
        cls.bin = shutil.copy2(BIN, os.path.join(cls.tmp, "cudnnctl"))
        cls.srv = fake_mirror.start(cls.tmp, FAKE_DIR, cudnnctl=cls.bin)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="job-", dir=self.tmp)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in CI_VARS + ENV_VARS + ("CUDNNCTL_ROOT", "CUDNNCTL_MIRROR",
                                                      "CUDNNCTL_CACHE")}
        self.env.update(HOME=os.path.join(self.work, "home"), NO_PROXY="*", no_proxy="*",
                        CURL_CA_BUNDLE=self.srv.ca_file)
        os.mkdir(self.env["HOME"])

    def job(self, store, name, ref=""):
        return Job(os.path.join(self.work, name), self.env, store, ref)


class TestAction(ActionTest):
    """The jobs: cache, inputs, the pin file, a failing step."""
    def test_two_jobs_the_second_from_the_cache(self):
        store = {}
        inputs = {"version": "9.90", "cuda": 13, "mirror": self.srv.url, "cudnnctl": self.bin,
                  "junit": os.path.join(self.work, "verify.xml")}
        job = self.job(store, "one")
        outputs = job.run(self.action, inputs)
        root = os.path.join(job.temp, "cudnn")
        self.assertEqual(outputs, {"cudnn-version": "9.90.0.1",
                                   "cudnn-path": os.path.join(root, "current"),
                                   "cuda": "13", "cache-hit": "false"})
        self.assertRegex(job.steps["setup"]["key"], r"^cudnnctl-Linux-[0-9a-f]{64}$")
        # the profiles were left alone; later steps find it through GITHUB_ENV
        self.assertEqual(os.listdir(self.env["HOME"]), [])
        r = subprocess.run([self.bin, "verify", "--json", "--no-gpu"], env=job.later_env(),
                           capture_output=True, text=True)
        doc = json.loads(r.stdout)
        self.assertEqual((r.returncode, doc["install"]), (0, "9.90.0.1-cuda13"), r.stderr)
        self.assertEqual(doc["library"], os.path.join(root, "current", "lib", "libcudnn.so.9"))
        with open(job.env["GITHUB_STEP_SUMMARY"], encoding="utf-8") as f:
            self.assertIn("### cudnnctl verify: ready", f.read())
        with open(inputs["junit"], encoding="utf-8") as f:
            self.assertIn('<testsuite name="cudnnctl verify"', f.read())
        job.end()
        self.assertEqual(list(store), [job.steps["setup"]["key"]])
        # a second job: the archive comes from the cache, not the server
        def archive_gets():
            return self.srv.stats("/cudnn/linux-x86_64/*.tar.xz")["requests"]
        before = archive_gets()
        self.assertGreater(before, 0)
        job2 = self.job(store, "two")
        outputs = job2.run(self.action, dict(inputs, junit=""))
        self.assertEqual(outputs["cache-hit"], "true")
        self.assertEqual(outputs["cudnn-version"], "9.90.0.1")
        self.assertEqual(archive_gets(), before)

    def test_no_cache_and_another_release(self):
        inputs = {"version": "9.91", "cuda": 12, "mirror": self.srv.url, "cudnnctl": self.bin,
                  "cache": "false", "verify": "none"}
        job = self.job({}, "one")
        outputs = job.run(self.action, inputs)
        self.assertEqual((outputs["cudnn-version"], outputs["cuda"], outputs["cache-hit"]),
                         ("9.91.0.1", "12", ""))
        self.assertNotIn("cache", job.steps)
        with open(job.env["GITHUB_STEP_SUMMARY"], encoding="utf-8") as f:
            self.assertEqual(f.read(), "")  # verify none

    def test_plain_http_mirror_with_the_manifest_input(self):
        """An intranet mirror over plain HTTP: the manifest input (files
        or https:// URLs, one per line or comma-separated) vouches for its
        archives; without it the step fails."""
        plain = fake_mirror.start_plain(self.srv)
        self.addCleanup(plain.stop)
        base = {"cuda": 13, "mirror": plain.url, "cudnnctl": self.bin, "cache": "false",
                "verify": "none"}
        with self.assertRaisesRegex(AssertionError, "step setup failed"):
            self.job({}, "without").run(self.action, dict(base, version="9.90"))
        manifest = os.path.join(self.srv.mirror_dir, "redistrib_9.90.0.json")
        both = " %s \n\n%s," % (manifest, self.srv.url + "redistrib_9.91.0.json")
        for name, version, cuda, given in (("file", "9.90", 13, manifest),
                                           ("both", "9.91", 12, both)):
            with self.subTest(manifest=name):
                job = self.job({}, name)
                outputs = job.run(self.action, dict(base, version=version, cuda=cuda,
                                                    manifest=given))
                self.assertEqual(outputs["cudnn-version"], version + ".0.1")
        self.assertTrue(all(p.endswith(".tar.xz") for p in plain.stats()), plain.stats())

    def test_version_from_the_pin_file(self):
        """No version input: the checkout's .cudnn-version (found from the
        working folder up) names it, for the cache key and the install;
        with no pin either, the setup step fails saying so."""
        job = self.job({}, "pinned")
        with open(os.path.join(job.workspace, ".cudnn-version"), "w") as f:
            f.write("# what CI tested\n9.91 cuda12\n")
        outputs = job.run(self.action, {"mirror": self.srv.url, "cudnnctl": self.bin,
                                        "verify": "none"})
        self.assertEqual((outputs["cudnn-version"], outputs["cuda"]), ("9.91.0.1", "12"))
        self.assertRegex(job.steps["setup"]["key"], r"^cudnnctl-Linux-[0-9a-f]{64}$")
        with self.assertRaisesRegex(AssertionError, "(?s)step setup failed.*"
                                                    "needs a VERSION \\(or a .cudnn-version"):
            self.job({}, "unpinned").run(self.action, {"mirror": self.srv.url,
                                                       "cudnnctl": self.bin})

    def test_a_failure_fails_the_step(self):
        job = self.job({}, "one")
        with self.assertRaisesRegex(AssertionError, "step setup failed"):
            job.run(self.action, {"version": "9.99", "mirror": self.srv.url, "cudnnctl": self.bin})


class TestActionBinary(ActionTest):
    """Where the step's cudnnctl comes from without the cudnnctl input:
    built from the action's sources on a branch, the release on a tag (a
    class of its own: the build takes most of its time)."""
    def test_from_source_on_a_branch(self):
        # no cudnnctl input and a branch ref: built from the action's sources
        if os.environ.get("CUDNNCTL_ACTION_BUILD", "1") == "0":
            self.skipTest("CUDNNCTL_ACTION_BUILD=0")
        job = self.job({}, "one", ref="main")
        # verify none: in the sanitizer build the fake libraries are
        # instrumented, and this cudnnctl (a plain build) must not load them
        outputs = job.run(self.action, {"version": "9.90", "cuda": 13, "mirror": self.srv.url,
                                        "cache": "false", "verify": "none"})
        self.assertEqual(outputs["cudnn-version"], "9.90.0.1")
        built = job.steps["setup"]["bin"]
        self.assertEqual(built, os.path.join(job.temp, "cudnnctl-bin", "cudnnctl"))
        r = subprocess.run([built, "version"], capture_output=True, text=True)
        self.assertRegex(r.stdout, r"^cudnnctl \S+\n$")

    def test_release_on_a_tag(self):
        # a v* ref: the release's Linux tar.gz and SHA256SUMS (scripts/
        # release.sh's dist/), from GITHUB_SERVER_URL as a runner sets it,
        # here the tests' server; a tar.gz that does not match is refused
        with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
            ver = re.search(r"project\(cudnnctl VERSION ([0-9.]+)", f.read()).group(1)
        name = "cudnnctl-%s-linux-x86_64.tar.gz" % ver
        dist = os.path.join(REPO, "dist")
        if not os.path.exists(os.path.join(dist, name)):
            self.skipTest("no dist/%s: run scripts/release.sh" % name)
        rel = os.path.join(self.srv.root, "cudnnctl", "cudnnctl", "releases", "download",
                           "v" + ver)
        os.makedirs(rel, exist_ok=True)
        self.addCleanup(shutil.rmtree, os.path.join(self.srv.root, "cudnnctl"), True)
        shutil.copy(os.path.join(dist, name), rel)
        with open(os.path.join(dist, "SHA256SUMS"), encoding="utf-8") as f:
            sums = f.read()
        self.env["GITHUB_SERVER_URL"] = self.srv.url.rstrip("/")
        inputs = {"version": "9.90", "cuda": 13, "mirror": self.srv.url, "cache": "false"}
        with open(os.path.join(rel, "SHA256SUMS"), "w", encoding="utf-8") as f:
            f.write(re.sub(r"^[0-9a-f]{64}(?=  %s$)" % re.escape(name), "0" * 64, sums,
                           flags=re.M))
        with self.assertRaisesRegex(AssertionError, "does not match the release's SHA256SUMS"):
            self.job({}, "tampered", ref="v" + ver).run(self.action, inputs)
        with open(os.path.join(rel, "SHA256SUMS"), "w", encoding="utf-8") as f:
            f.write(sums)
        job = self.job({}, "one", ref="v" + ver)
        outputs = job.run(self.action, inputs)
        self.assertEqual(outputs["cudnn-version"], "9.90.0.1")
        got = job.steps["setup"]["bin"]
        self.assertEqual(got, os.path.join(job.temp, "cudnnctl-bin", "cudnnctl"))
        with open(got, "rb") as a, tarfile.open(os.path.join(dist, name)) as t:
            self.assertEqual(a.read(), t.extractfile("cudnnctl-%s-linux-x86_64/cudnnctl"
                                                     % ver).read())
        r = subprocess.run([got, "verify", "--json", "--no-gpu"], env=job.later_env(),
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, json.loads(r.stdout)["install"]),
                         (0, "9.90.0.1-cuda13"), r.stderr)


if __name__ == "__main__":
    unittest.main()

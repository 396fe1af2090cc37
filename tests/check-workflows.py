#!/usr/bin/env python3
"""The repository's own workflow (.github/workflows/ci.yml) and action.yml
read as YAML and name only files that exist: what can be checked here of
pipelines that run on GitHub's machines."""
import os
import re
import unittest

try:
    import yaml
except ImportError:  # scripts/deps.sh --test installs python3-yaml
    yaml = None

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def load(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return yaml.safe_load(f)


@unittest.skipUnless(yaml, "no PyYAML (Debian: python3-yaml)")
class TestWorkflows(unittest.TestCase):
    def referenced(self, text):
        return set(re.findall(r"(?:scripts|tests|\.ci)/[\w./-]+\.(?:sh|ps1|py)|\.ci/run", text))

    def test_ci_workflow(self):
        wf = load(".github/workflows/ci.yml")
        jobs = wf["jobs"]
        self.assertEqual(sorted(jobs), ["linux", "release", "windows"])
        self.assertEqual(jobs["release"]["needs"], ["linux", "windows"])
        self.assertIn("refs/tags/v", jobs["release"]["if"])
        # yaml reads the key `on` as True
        self.assertIn("tags", wf[True]["push"])
        runs = "\n".join(s.get("run", "") for j in jobs.values() for s in j["steps"])
        for path in self.referenced(runs):
            self.assertTrue(os.path.exists(os.path.join(REPO, path)), path)
        self.assertIn("bash .ci/run", runs)
        self.assertIn("scripts/release.sh", runs)
        self.assertIn("windows-smoke.ps1", runs)
        self.assertIn("windows-build-check.ps1", runs)

    def test_action(self):
        action = load("action.yml")
        self.assertEqual(action["runs"]["using"], "composite")
        runs = "\n".join(s.get("run", "") for s in action["runs"]["steps"])
        self.assertEqual(self.referenced(runs), {"scripts/action.sh"})
        for name in ("version", "cuda", "mirror", "cache", "verify", "root", "junit"):
            self.assertIn(name, action["inputs"])
        self.assertEqual(sorted(action["outputs"]),
                         ["cache-hit", "cuda", "cudnn-path", "cudnn-version"])


if __name__ == "__main__":
    unittest.main()

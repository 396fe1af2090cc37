#!/usr/bin/env python3
"""docs/cudnnctl.1 against the binary's help: every option of every command
in both (in that command's section of the page), the page as
scripts/mkman.py makes it today, and groff renders it without a warning."""
import os
import re
import shutil
import subprocess
import sys
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import mkman  # noqa: E402

BIN = os.path.abspath(os.environ.get("CUDNNCTL_BIN") or os.path.join(REPO, "build", "cudnnctl"))
PAGE = os.path.join(REPO, "docs", "cudnnctl.1")


def page_sections():
    """{command: set of options} from the page's .SS sections, and the
    common options of its OPTIONS section."""
    with open(PAGE, encoding="utf-8") as f:
        text = f.read().replace("\\-", "-")
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith(".SS "):
            cur = out.setdefault(line[4:].split()[0], set())
        elif line.startswith(".SH "):
            cur = out.setdefault("*common*", set()) if line == ".SH OPTIONS" else None
        elif cur is not None:
            cur.update(re.findall(r"\\fB(?:-\w, )?(--[a-z-]+)", line))
    return out


class TestManPage(unittest.TestCase):
    def test_page_is_current(self):
        with open(PAGE, encoding="utf-8") as f:
            committed = f.read()
        self.assertEqual(committed, mkman.manual(BIN),
                         "docs/cudnnctl.1 is stale: run python3 scripts/mkman.py")

    def test_every_option_in_both(self):
        sections = page_sections()
        common = {o[0].split(", ")[-1] for o in
                  mkman.parse_options(mkman.run(BIN, "version", "--help")
                                      .split("options every command takes:")[1])}
        self.assertEqual(sections["*common*"], common)
        for name, _, _ in mkman.commands(BIN):
            own = mkman.run(BIN, name, "--help").split("options every command takes:")[0]
            want = {o[0].split(", ")[-1] for o in mkman.parse_options(own)}
            self.assertEqual(sections.get(name, set()), want, name)
        self.assertIn("completions", sections)

    @unittest.skipUnless(shutil.which("groff"), "no groff")
    def test_renders_without_warnings(self):
        p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", PAGE],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stderr), (0, ""))


if __name__ == "__main__":
    unittest.main()

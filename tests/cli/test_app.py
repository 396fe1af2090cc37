#!/usr/bin/env python3
"""verify --app PROGRAM on Linux: ELF programs built here (cc) that link
the fake libcudnn.so.9 (through LD_LIBRARY_PATH, or a RUNPATH pointing at
a planted copy), a libcudnn.so.8 while 9 is active, a plugin in the
program's folder that links cuDNN, a program that loads cuDNN by name at
run time, and one that uses none.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401

MAIN_C = "#include <stddef.h>\nsize_t cudnnGetVersion(void);\n" \
         "int main(void) { return cudnnGetVersion() ? 0 : 1; }\n"
DLOPEN_C = "#include <dlfcn.h>\n" \
           "int main(void) { return dlopen(\"libcudnn.so.9\", RTLD_NOW) ? 0 : 1; }\n"


@unittest.skipUnless(shutil.which("cc"), "needs cc")
class AppTest(CliTest):
    """The fake 9.19 installed and active; programs built into app/."""
    fixtures = ()

    def setUp(self):
        super().setUp()
        archive, manifest = FX.fake("good", None, 13)
        self.ok("install", archive, "--manifest", manifest)
        self.lib = os.path.join(self.root, "current", "lib")
        self.app_dir = os.path.join(self.tmp, "app")
        os.mkdir(self.app_dir)

    def cc(self, name, src, *args, shared=False):
        c = os.path.join(self.tmp, name + ".c")
        self.write(c, src)
        out = os.path.join(self.app_dir, name)
        subprocess.run(["cc"] + BUILD_FLAGS.split() + (["-shared", "-fPIC"] if shared else []) +
                       [c, "-o", out] + list(args), check=True)
        return out

    def app(self, program, code=0, env=None):
        r = self.run_cli("verify", "--app", program, "--json", env=env)
        self.assertEqual(r.rc, code, r)
        doc = r.json()
        return doc, [l for l in doc["libraries"] if l["kind"] == "cudnn"]



class TestVerifyApp(AppTest):
    def test_gets_cudnnctls_through_the_search_path(self):
        prog = self.cc("app", MAIN_C, "-L" + self.lib, "-lcudnn")
        doc, libs = self.app(prog, env={"LD_LIBRARY_PATH": self.lib})
        self.assertEqual((doc["status"], doc["cudnn_major"]), ("pass", 9))
        self.assertEqual(libs[0]["name"], "libcudnn.so.9")
        self.assertEqual(libs[0]["resolved"], os.path.join(self.lib, "libcudnn.so.9"))
        self.assertEqual(libs[0]["origin"], "LD_LIBRARY_PATH")
        self.assertTrue(libs[0]["cudnnctl"])
        r = self.ok("verify", "--app", prog, env={"LD_LIBRARY_PATH": self.lib})
        self.assertRegex(r.out, r"(?m)^libcudnn\.so\.9 +pass +%s gets " % re.escape(prog))

    def test_a_runpath_copy_wins(self):
        own = os.path.join(self.app_dir, "own")
        os.mkdir(own)
        shutil.copy(os.path.join(FX.variant_dir("old"), "libcudnn.so.9.14.0"),
                    os.path.join(own, "libcudnn.so.9"))
        prog = self.cc("app", MAIN_C, "-L" + self.lib, "-lcudnn", "-Wl,-rpath," + own)
        doc, libs = self.app(prog, env={"LD_LIBRARY_PATH": ""})
        self.assertEqual(doc["status"], "warn")
        self.assertEqual(libs[0]["resolved"], os.path.join(own, "libcudnn.so.9"))
        self.assertEqual(libs[0]["origin"], "the program's RUNPATH")
        self.assertIn("its own copy", libs[0]["finding"])

    def test_another_generation_than_the_active_one(self):
        """A program built for cuDNN 8 and CUDA 12: the fix is the install
        and exec lines, not a switch."""
        eight = os.path.join(self.tmp, "v8")
        os.mkdir(eight)
        for soname in ("libcudnn.so.8", "libcudart.so.12"):
            c = os.path.join(self.tmp, "stub.c")
            self.write(c, "int cudnnctl_stub(void) { return 0; }\n")
            subprocess.run(["cc", "-shared", "-fPIC", c, "-o", os.path.join(eight, soname),
                            "-Wl,-soname," + soname], check=True)
        prog = self.cc("app8", "int cudnnctl_stub(void);\nint main(void) "
                       "{ return cudnnctl_stub(); }\n",
                       "-Wl,--no-as-needed", os.path.join(eight, "libcudnn.so.8"),
                       os.path.join(eight, "libcudart.so.12"))
        doc, libs = self.app(prog, EXIT["VERIFY_LOAD"], env={"LD_LIBRARY_PATH": eight})
        self.assertEqual((doc["cudnn_major"], doc["cuda_majors"]), (8, [12]))
        self.assertIn("needs cuDNN 8 (libcudnn.so.8); the active install is 9.19.0.99-cuda13",
                      libs[0]["finding"])
        self.assertEqual(libs[0]["next"], "cudnnctl install 8 --cuda 12 --no-activate, then "
                         "cudnnctl exec 8 -- %s" % prog)
        # found nowhere: exit 20, the same fix
        doc, libs = self.app(prog, EXIT["VERIFY_LOCATE"], env={"LD_LIBRARY_PATH": ""})
        self.assertIn("found nowhere the loader looks", libs[0]["finding"])

    def test_a_plugin_in_its_folder_and_a_load_at_run_time(self):
        self.cc("libplugin.so", MAIN_C.replace("int main(void)", "int plugin(void)"),
                "-L" + self.lib, "-lcudnn", shared=True)
        prog = self.cc("host", "int main(void) { return 0; }\n")
        doc, libs = self.app(prog, env={"LD_LIBRARY_PATH": self.lib})
        self.assertEqual(libs[0]["needed_by"], os.path.join(self.app_dir, "libplugin.so"))
        self.assertFalse(doc["runtime_load"])
        os.remove(os.path.join(self.app_dir, "libplugin.so"))
        prog = self.cc("loader", DLOPEN_C, "-ldl")
        doc, libs = self.app(prog, env={"LD_LIBRARY_PATH": self.lib})
        self.assertTrue(doc["runtime_load"])
        self.assertTrue(libs[0]["runtime"])
        self.assertIn("loaded at run time", doc["finding"])
        self.assertEqual(libs[0]["status"], "pass")

    def test_no_cudnn_and_not_a_program(self):
        doc, libs = self.app(self.cc("plain", "int main(void) { return 0; }\n"))
        self.assertEqual((doc["status"], libs), ("skip", []))
        notprog = os.path.join(self.tmp, "notes.txt")
        self.write(notprog, "not a program\n")
        self.fails(EXIT["FAIL"], "verify", "--app", notprog, words=(notprog,))
        self.fails(EXIT["USAGE"], "verify", "--app", notprog, "--python", words=("goes alone",))


RUN_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	void *h;
	int (*check)(void);
	if (argc > 1 && !strcmp(argv[1], "hang"))
		for (;;)
			pause();
	/* as a program that loads cuDNN at run time, then convolves */
	h = dlopen("libcudnn.so.9", RTLD_NOW);
	*(void **)&check = h ? dlsym(h, "cudnnOpsVersionCheck") : NULL;
	printf("ops check %d\n", check ? check() : -1);
	return argc > 1 ? atoi(argv[1]) : 0;
}
"""


@unittest.skipUnless(shutil.which("cc"), "needs cc")
class TestVerifyAppRun(AppTest):
    """--run: every cuDNN library the program really loads (glibc's own
    report of each load), judged by folder; its output in a file; its
    exit status; a time limit."""

    def test_what_it_really_loads(self):
        prog = self.cc("runner", RUN_C.replace("#include <unistd.h>",
                                              "#include <unistd.h>\n#include <string.h>"),
                       "-ldl")
        r = self.run_cli("verify", "--app", prog, "--run", "--json", "--", "5",
                         env={"LD_LIBRARY_PATH": self.lib})
        self.assertEqual(r.rc, 0, r)
        run = r.json()["run"]
        self.assertEqual((run["status"], run["exit_status"]), ("pass", 5))
        names = sorted(os.path.basename(l["path"]) for l in run["loaded"])
        self.assertEqual(names, ["libcudnn.so.9", "libcudnn_ops.so.9"])
        self.assertEqual(self.read(run["output"]), "ops check 0\n")
        # another version's ops library first on the search path
        stray = os.path.join(self.tmp, "stray")
        os.mkdir(stray)
        shutil.copy(os.path.join(FX.variant_dir("old"), "libcudnn_ops.so.9.14.0"),
                    os.path.join(stray, "libcudnn_ops.so.9"))
        r = self.run_cli("verify", "--app", prog, "--run", "--json",
                         env={"LD_LIBRARY_PATH": stray + ":" + self.lib})
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        run = r.json()["run"]
        self.assertEqual(run["status"], "fail")
        bad = [l for l in run["loaded"] if l["foreign"]]
        self.assertEqual([l["path"] for l in bad], [os.path.join(stray, "libcudnn_ops.so.9")])
        self.assertIn("take that folder off LD_LIBRARY_PATH", run["next"])
        self.assertIn("ops check 4001", self.read(run["output"]))  # the mismatch it got
        # the human form says it too
        r = self.run_cli("verify", "--app", prog, "--run",
                         env={"LD_LIBRARY_PATH": stray + ":" + self.lib})
        self.assertRegex(r.out, r"(?m)^  fail +%s$" % re.escape(os.path.join(stray,
                                                                          "libcudnn_ops.so.9")))
        self.assertIn("verdict: NOT READY", r.out)

    def test_a_time_limit(self):
        prog = self.cc("hanger", RUN_C.replace("#include <unistd.h>",
                                              "#include <unistd.h>\n#include <string.h>"),
                       "-ldl")
        r = self.run_cli("verify", "--app", prog, "--run", "--json", "--", "hang",
                         env={"CUDNNCTL_APP_TIMEOUT": "1"})
        self.assertEqual(r.json()["run"]["exit_status"], -1, r)
        self.fails(EXIT["USAGE"], "verify", "--run", words=("go with --app",))


if __name__ == "__main__":
    unittest.main()

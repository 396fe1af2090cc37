#!/usr/bin/env python3
"""cudnnctl.exe under Wine: verify's stages with the fake DLLs (shadowing
copies, missing dependencies, zlibwapi) and verify --python.

Part of the Wine suite: tests/wine/winetest.py has the prefix, the
registry helpers and the WineTest base (and says how to run a file).
"""
import os
import re
import shutil
import sys
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import winetest as W  # noqa: E402  (W.WINE_, W.FX: made by W.start())
from winetest import *  # noqa: E402,F401,F403  (setUpModule, tearDownModule too)


# ------------------------------------------------------------------ verify
class VerifyTest(WineTest):
    # verify(), stage() and assert_stage() are CliAsserts'
    def dll_path(self, vid=VID19):
        return self.bin_entry(vid) + "\\cudnn64_9.dll"


class TestVerify(VerifyTest):
    """verify of an install: its stages, sub-libraries, dependencies."""

    def test_a_sub_library_of_another_version(self):
        """No install root: a folder on PATH with the 9.19 DLLs but 9.14's
        cudnn_ops64_9.dll.  The load stage, having cuDNN load its ops DLL,
        names its version (FileVersion) and cuDNN's own check failing; the
        JSON lists every cuDNN DLL mapped."""
        mixed = os.path.join(self.root, "mixed")
        shutil.copytree(W.FX.variant_dir("good"), mixed)
        shutil.copy(W.FX.dll("old", "_ops"), os.path.join(mixed, "cudnn_ops64_9.dll"))
        # a new process's PATH: the registry's
        self.set_user_path("REG_EXPAND_SZ", self.root_win + "\\mixed")
        env = {"CUDNNCTL_ROOT": self.root_win + "\\no-root"}
        r = self.run_cli("verify", "--json", root=False, env=env)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        doc = r.json()
        load = self.stage(doc, "load")
        self.assertEqual(load["status"], "fail", load)
        self.assertIn("cudnn_ops64_9.dll is cuDNN 9.14.0, the main library 9.19.0",
                      load["reason"])
        self.assertIn("cudnnOpsVersionCheck() failed", load["reason"])
        ops = [l for l in doc["libraries"] if l["path"].lower().endswith("cudnn_ops64_9.dll")]
        self.assertEqual((ops[0]["version"], ops[0]["foreign"]), ("9.14.0", True))
        # the whole 9.19 set there: every DLL from its folder, of its version
        shutil.copy(W.FX.dll("good", "_ops"), os.path.join(mixed, "cudnn_ops64_9.dll"))
        r = self.run_cli("verify", "--json", root=False, env=env)
        load = self.stage(r.json(), "load")
        self.assertEqual(load["status"], "pass", load)
        self.assertIn("cuDNN libraries loaded, all from its folder", load["finding"])

    def test_active_fake_install(self):
        self.install("good")
        doc = self.verify()
        self.assertEqual(doc["install"], VID19)
        self.assertEqual(doc["copies"], [{"path": self.dll_path(), "origin": "user PATH"}])
        self.assertEqual(doc["library"], self.dll_path())
        self.assertEqual(doc["loaded"].lower(), self.dll_path().lower())
        self.assertEqual((doc["cudnn_version"], doc["cudnn_version_code"], doc["cudart_version"]),
                         ("9.19.0", 91900, 12080))
        self.assert_stage(doc, "locate", "pass", "(user PATH)")
        self.assert_stage(doc, "files", "pass", "8/8 libraries")
        self.assert_stage(doc, "version", "pass", "file version %s" % V19)
        self.assert_stage(doc, "load", "pass", "cuDNN 9.19.0 (91900)", "CUDA runtime 12.8")
        for name in GPU_STAGES:
            self.assert_stage(doc, name, "skip", NO_DRIVER, field="reason")
        # the PE reader on the fakes' imports: KERNEL32.dll and msvcrt.dll
        # are Wine's own DLLs in System32, read and judged loadable there;
        # cuBLASLt and NVRTC are missing (a warning), the VC++ runtime is
        # Wine's
        deps = self.stage(doc, "dependencies")
        m = re.fullmatch(r"8 libraries need (\d+) others: (\d+) found, 2 missing",
                         deps["finding"])
        self.assertTrue(m, doc["_r"])
        self.assertGreaterEqual(int(m.group(2)), 2)
        self.assertEqual(deps["status"], "warn")
        self.assertEqual(sorted(re.findall(r"loads (\S+) at run time", deps["reason"])),
                         ["cublasLt64_12.dll", "nvrtc64_120_0.dll"], deps["reason"])
        self.assertNotIn("KERNEL32", deps["reason"].upper())
        self.assertNotIn("MSVCRT", deps["reason"].upper())
        # the human table
        r = self.ok("verify")
        self.assertRegex(r.out, r"version +pass .*file version 9\.19\.0\.99; expected 9\.19\.0\.99")
        assert_windows_paths(self, r.out + r.err)
        self.assertIn("verdict: loads", r.out)

    def test_zlibwapi_is_decided_from_the_dlls(self):
        # issue 23 item 9: that 9.0 and 9.1 need zlibwapi.dll is inferred,
        # not documented; a 9.1 build none of whose DLLs imports or names it
        # is not failed for lacking it
        self.install("good", "9.1.0.99", "--no-verify")
        # (the load stage then fails: the fake DLLs say 9.19)
        doc = self.run_cli("verify", "--json").json()
        deps = self.stage(doc, "dependencies")
        self.assertEqual(deps["status"], "warn", deps)  # cuBLASLt, NVRTC
        self.assertNotIn("zlibwapi", repr(deps))

    def test_each_missing_dependency_its_own_fix(self):
        # a 9.1 build whose main DLL names zlibwapi.dll, where neither
        # zlibwapi, cuBLASLt nor NVRTC can be found: each is its own note
        # with its own fix, and the hint is the one of the failure the
        # verdict names
        vid = "9.1.0.99-cuda12"
        self.install("zlib", "9.1.0.99", "--no-verify")
        junit = os.path.join(W.WINE_.drive_c, "verify%d.xml" % WineTest.counter)
        self.addCleanup(lambda: os.path.exists(junit) and os.remove(junit))
        doc = self.verify("--junit", zpath(junit), code=EXIT["VERIFY_DEPS"])
        self.assertEqual(doc["install"], vid)
        deps = self.stage(doc, "dependencies")
        self.assertEqual(deps["status"], "fail")
        notes = {re.search(r"(\S+\.dll)", n["reason"]).group(1): n for n in deps["notes"]}
        self.assertEqual(sorted(notes), ["cublasLt64_12.dll", "nvrtc64_120_0.dll",
                                         "zlibwapi.dll"], deps)
        zlib = notes["zlibwapi.dll"]
        self.assertEqual(zlib["status"], "fail")
        self.assertIn("next to cudnn64_9.dll", zlib["next"])
        self.assertIn(self.bin_entry(vid), zlib["next"])
        self.assertEqual(notes["cublasLt64_12.dll"]["status"], "warn")
        self.assertIn("pip install nvidia-cublas-cu12", notes["cublasLt64_12.dll"]["next"])
        self.assertIn("pip install nvidia-cuda-nvrtc-cu12",
                      notes["nvrtc64_120_0.dll"]["next"])
        self.assertEqual(deps["next"], zlib["next"])
        # the table: each problem, then its fix; the error's hint
        r = self.run_cli("verify")
        self.assertEqual(r.rc, EXIT["VERIFY_DEPS"], r)
        lines = [l.strip() for l in r.out.splitlines()]
        for dll, label in (("zlibwapi.dll", "why"), ("cublasLt64_12.dll", "warn"),
                           ("nvrtc64_120_0.dll", "warn")):
            i = next(i for i, l in enumerate(lines) if l.startswith(label + ":") and dll in l)
            self.assertEqual(lines[i + 1], "fix: " + notes[dll]["next"], r)
        self.assertIn("cudnnctl: hint: " + zlib["next"], r.err)
        failure = ET.parse(junit).getroot().find(
            "testsuite/testcase[@name='4-dependencies']/failure")
        for dll in notes:
            self.assertIn(dll, failure.text)
        self.assertIn("fix: " + zlib["next"], failure.text)

    def test_named_version_not_active(self):
        self.install("good")
        self.install("old", V14, "--no-activate")
        doc = self.verify("9.14")
        self.assertEqual(doc["install"], VID14)
        self.assert_stage(doc, "version", "pass", "file version %s" % V14)
        self.assert_stage(doc, "load", "pass", "cuDNN 9.14.0 (91400)")


class TestVerifyPath(VerifyTest):
    """verify against PATH: copies that shadow the install, entries with no
    install, quoted entries, and the fix each gets."""

    def shadow_on_machine_path(self, spelling):
        """A folder C:\\shadowN holding the "old" variant's cudnn64_9.dll,
        added to the end of the machine PATH as `spelling` % its name (the
        registry put back by WineTest); its Windows path."""
        shadow = os.path.join(W.WINE_.drive_c, "shadow%d" % WineTest.counter)
        os.mkdir(shadow)
        self.addCleanup(shutil.rmtree, shadow, True)
        shutil.copy2(W.FX.dll("old"), shadow)
        shadow_win = "C:\\" + os.path.basename(shadow)
        kind, machine = W.WINE_.reg_get(MACHINE_ENV, "Path")
        W.WINE_.reg_add(MACHINE_ENV, "Path", kind, machine + ";" + spelling % shadow_win)
        return shadow_win

    def test_machine_path_copy_shadows_the_install(self):
        self.install("good")
        shadow_win = self.shadow_on_machine_path("%s")
        doc = self.verify(code=EXIT["VERIFY_LOAD"])
        shadow_dll = shadow_win + "\\cudnn64_9.dll"
        self.assertEqual(doc["copies"], [{"path": shadow_dll, "origin": "machine PATH"},
                                         {"path": self.dll_path(), "origin": "user PATH"}])
        self.assert_stage(doc, "locate", "warn", shadow_dll, "(machine PATH)")
        self.assert_stage(doc, "locate", "warn", "shadowed", shadow_dll, "machine PATH",
                          field="reason")
        # its own fix, fit for the machine PATH (issue 23 item 6)
        notes = [n for n in self.stage(doc, "locate")["notes"] if shadow_dll in n["reason"]]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn("take %s out of the machine PATH" % shadow_win, notes[0]["next"])
        self.assertIn("cudnnctl switch %s --scope machine" % VID19, notes[0]["next"])
        self.assert_stage(doc, "load", "fail", "9.14.0", field="reason")
        self.assertEqual(doc["cudnn_version_code"], 91400)
        # the user PATH is untouched by verify
        self.assert_active(VID19)

    def test_switch_says_what_it_repaired(self):
        # issue 23 item 10: "already active" while it just repaired PATH
        self.install("good")
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        r = self.ok("switch", "9.19")
        self.assertIn("already active", r.out)
        self.assertIn("the user PATH did not have the active install first", r.err)
        self.assert_active(VID19, "C:\\a")
        r = self.ok("switch", "9.19")  # nothing to repair: nothing said
        self.assertNotIn("did not have", r.err)

    def test_after_deactivate_the_fix_is_switch(self):
        # issue 23 item 10: verify after deactivate said to install
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.ok("deactivate")
        doc = self.verify(code=EXIT["VERIFY_LOCATE"])
        stage = self.stage(doc, "locate")
        self.assertIn("no version is active: cudnnctl switch %s" % VID19, stage["next"])
        self.assertNotIn("install", stage["next"].replace("cudnnctl list", ""))

    def test_each_shadowing_copy_its_own_fix(self):
        # two copies ahead of the install: System32's and one of cudnnctl's
        # own other versions still named on the user PATH
        self.install("good")
        self.install("old", V14, "--no-activate")
        sys32 = os.path.join(W.WINE_.drive_c, "windows", "system32", "cudnn64_9.dll")
        shutil.copy2(W.FX.dll("old"), sys32)
        self.addCleanup(os.remove, sys32)
        kind, now = self.user_path()
        self.set_user_path(kind, self.bin_entry(VID14) + ";" + now)
        doc = self.run_cli("verify", "--json").json()
        notes = {n["reason"].split(" (")[0].split()[-1]: n for n in self.stage(doc, "locate")["notes"]
                 if n["reason"].startswith("shadowed")}
        self.assertEqual(len(notes), 2, notes)
        s32 = next(n for k, n in notes.items() if "system32" in k.lower())
        self.assertIn("delete it as administrator", s32["next"])
        own = next(n for k, n in notes.items() if VID14 in k)
        self.assertIn("cudnnctl's own", own["next"])
        self.assertIn("cudnnctl switch %s repairs it" % VID19, own["next"])

    def test_quoted_path_entry_is_no_place_for_dlls(self):
        # issue 23 item 6: a quoted entry ("C:\\...\\bin") was counted as a
        # place the DLL is found (false shadowing, exit 24); the loader does
        # not strip quotes: it is skipped, with a warning
        self.install("good")
        shadow_win = self.shadow_on_machine_path('"%s"')
        doc = self.verify()
        self.assertEqual(doc["copies"], [{"path": self.dll_path(), "origin": "user PATH"}])
        self.assert_stage(doc, "locate", "warn", '"%s" is in quotes' % shadow_win,
                          "no DLL", field="reason")
        self.assert_stage(doc, "load", "pass", "9.19.0")

    def test_path_without_the_install_says_switch(self):
        # issue 23 item 6: the registry PATH lost the active install (an
        # edit, a restore): not "not a shared library; reinstall", but that
        # a new process does not find it and that switch repairs it
        self.install("good")
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        doc = self.verify(code=EXIT["VERIFY_LOCATE"])
        self.assert_stage(doc, "locate", "fail", "a new process does not find",
                          field="reason")
        stage = self.stage(doc, "locate")
        self.assertIn("cudnnctl switch %s" % VID19, stage["next"])
        self.assertNotIn("reinstall", stage["next"])
        self.ok("switch", VID19)
        self.verify()

    def test_import_of_an_absent_dll(self):
        path, manifest = W.FX.fake("missingdep")
        # install runs verify at the end and exits with its status, the
        # install itself done
        r = self.run_cli("install", zpath(path), "--manifest", zpath(manifest), verify=True)
        self.assertEqual(r.rc, EXIT["VERIFY_DEPS"], r)
        self.assertIn("absent.dll", r.err)
        self.assert_active(VID19)
        doc = self.verify(code=EXIT["VERIFY_DEPS"])
        self.assert_stage(doc, "dependencies", "fail", "cudnn_ops64_9.dll needs absent.dll",
                          field="reason")
        self.assert_stage(doc, "load", "skip")


# ------------------------------------------------------- verify --app
class TestVerifyApp(WineTest):
    """verify --app on Windows: a PE program importing cudnn64_9.dll
    (tests/wine/appcudnn.c, linked against the fake), resolved as the
    loader will for it: its own folder first, then the system folders,
    then a new process's PATH (the registry's, which install set)."""

    def test_program_folder_copy_wins_over_path(self):
        self.install("good")
        app = os.path.join(self.root, "app")
        os.makedirs(app)
        shutil.copy(APPCUDNN, os.path.join(app, "app.exe"))
        prog = self.root_win + "\\app\\app.exe"
        r = self.run_cli("verify", "--app", prog, "--json")
        self.assertEqual(r.rc, 0, r)
        doc = r.json()
        libs = [l for l in doc["libraries"] if l["kind"] == "cudnn"]
        self.assertEqual((doc["status"], doc["cudnn_major"]), ("pass", 9))
        self.assertEqual([l["name"].lower() for l in libs], ["cudnn64_9.dll"])
        self.assertEqual(libs[0]["resolved"].lower(),
                         (self.bin_entry(VID19) + "\\cudnn64_9.dll").lower())
        self.assertTrue(libs[0]["cudnnctl"])
        # a copy beside the program: it wins, whatever is active
        shutil.copy(W.FX.dll("old"), os.path.join(app, "cudnn64_9.dll"))
        r = self.run_cli("verify", "--app", prog, "--json")
        self.assertEqual(r.rc, 0, r)
        lib = [l for l in r.json()["libraries"] if l["kind"] == "cudnn"][0]
        self.assertEqual(lib["status"], "warn", lib)
        self.assertEqual(lib["origin"], "the program's folder")
        self.assertEqual(lib["resolved"].lower(), (self.root_win + "\\app\\cudnn64_9.dll").lower())
        self.assertIn("remove it from the program's folder", lib["next"])

    def test_a_cudnn_8_program_with_9_active(self):
        """A program importing cudnn64_8.dll, cuDNN 9 active: the
        generation it needs, that the active install cannot give it, and
        the install and exec lines (no switch)."""
        self.install("good")
        app = os.path.join(self.root, "app8")
        os.makedirs(app)
        shutil.copy(APPCUDNN8, os.path.join(app, "tf.exe"))
        prog = self.root_win + "\\app8\\tf.exe"
        r = self.run_cli("verify", "--app", prog, "--json")
        self.assertEqual(r.rc, EXIT["VERIFY_LOCATE"], r)  # no cudnn64_8.dll anywhere
        doc = r.json()
        lib = [l for l in doc["libraries"] if l["kind"] == "cudnn"][0]
        self.assertEqual((doc["cudnn_major"], lib["name"].lower()), (8, "cudnn64_8.dll"))
        self.assertIn("cudnnctl install 8", lib["next"])
        self.assertIn("cudnnctl exec 8 -- %s" % prog, lib["next"])
        # one on PATH (not cudnnctl's): found, still not what is active
        other = os.path.join(self.root, "old8")
        os.makedirs(other)
        shutil.copy(os.path.join(os.path.dirname(APPCUDNN8), "fake-v8", "cudnn64_8.dll"), other)
        self.set_user_path("REG_EXPAND_SZ", self.root_win + "\\old8;" + self.user_path()[1])
        r = self.run_cli("verify", "--app", prog, "--json")
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        lib = [l for l in r.json()["libraries"] if l["kind"] == "cudnn"][0]
        self.assertIn("needs cuDNN 8 (cudnn64_8.dll); the active install is %s" % VID19,
                      lib["finding"])

    def test_run_records_each_dll_it_loads(self):
        """--run under the debugging API: one LOAD_DLL_DEBUG_EVENT per
        DLL.  With cudnnctl's cuDNN (through PATH) every cuDNN DLL it
        loads is the install's; with only cudnn64_9.dll copied beside
        the program, that copy loads the ops DLL from PATH: two folders,
        a failure naming the PATH copy."""
        self.install("good")
        app = os.path.join(self.root, "app")
        os.makedirs(app)
        shutil.copy(APPCUDNN, os.path.join(app, "app.exe"))
        prog = self.root_win + "\\app\\app.exe"
        r = self.run_cli("verify", "--app", prog, "--run", "--json")
        self.assertEqual(r.rc, 0, r)
        run = r.json()["run"]
        self.assertEqual((run["status"], run["exit_status"]), ("pass", 0), run)
        bin_dir = self.bin_entry(VID19).lower()
        self.assertEqual(sorted(l["path"].lower() for l in run["loaded"]),
                         [bin_dir + "\\cudnn64_9.dll", bin_dir + "\\cudnn_ops64_9.dll"])
        with open(W.WINE_.linux(run["output"]), encoding="utf-8", errors="replace") as f:
            self.assertEqual(f.read().split(), ["91900", "0"])
        shutil.copy(W.FX.dll("good"), os.path.join(app, "cudnn64_9.dll"))
        r = self.run_cli("verify", "--app", prog, "--run", "--json")
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        run = r.json()["run"]
        bad = [l["path"].lower() for l in run["loaded"] if l["foreign"]]
        self.assertEqual(bad, [bin_dir + "\\cudnn_ops64_9.dll"], run)


# ------------------------------------------------------- verify --build
class TestVerifyBuild(WineTest):
    """verify --build on Windows: the compiler chosen (cl.exe in a Visual
    Studio developer prompt, else gcc.exe on PATH, else a skip), its
    arguments in its own style, the header it reports, and the program
    run with the version's DLL folder on PATH.  The compiler is
    tests/wine/fakecc.c (the real cl.exe is the Windows CI job's)."""

    def setUp(self):
        super().setUp()
        self.install("good")
        for name in ("gcc", "cl"):
            d = os.path.join(self.root, "tools-" + name)
            os.makedirs(d)
            shutil.copy(FAKECC, os.path.join(d, name + ".exe"))
        self.inc = self.root_win + "\\versions\\%s\\include" % VID19
        # GetTempPath: the prefix's TEMP, which Wine sets itself (Wine 8:
        # C:\users\NAME\Temp; Wine 10: C:\users\NAME\AppData\Local\Temp)
        r = W.WINE_.run(["cmd", "/c", "echo", "%TEMP%"])
        self.assertEqual(r.rc, 0, r)
        self.temp = W.WINE_.linux(r.out.strip())

    def work_folders(self):
        return sorted(n for n in os.listdir(self.temp) if n.startswith("cudnnctl-build-"))

    def build(self, code=0, **env):
        r = self.run_cli("verify", "--build", "--json", env=env)
        self.assertEqual(r.rc, code, r)
        return [s for s in r.json()["stages"] if s["stage"] == "build"][0]

    def test_gcc_on_path(self):
        s = self.build(WINEPATH=self.root_win + "\\tools-gcc")
        self.assertEqual(s["status"], "pass", s)
        self.assertEqual(s["finding"], "gcc.exe: compiled against %s\\cudnn_version.h, linked "
                         "and ran: CUDNN_VERSION 91900, cudnnGetVersion() 91900" % self.inc)
        self.assertTrue(os.path.isdir(self.temp), self.temp)
        self.assertEqual(self.work_folders(), [])  # removed: it passed

    def test_cl_in_a_developer_prompt(self):
        """VCINSTALLDIR set and cl.exe found: cl's arguments (/I, /link
        /LIBPATH:...\\lib\\x64 cudnn.lib) and its /showIncludes line."""
        s = self.build(WINEPATH=self.root_win + "\\tools-cl;" + self.root_win + "\\tools-gcc",
                       VCINSTALLDIR="C:\\VS\\VC\\")
        self.assertEqual(s["status"], "pass", s)
        self.assertIn("cl.exe: compiled against %s\\cudnn_version.h" % self.inc, s["finding"])

    def test_stale_header_first_on_the_include_path(self):
        stale = os.path.join(self.root, "cuda", "include")
        os.makedirs(stale)
        with open(os.path.join(self.root, "versions", VID19, "include", "cudnn_version.h")) as f:
            text = f.read()
        with open(os.path.join(stale, "cudnn_version.h"), "w") as f:
            f.write(re.sub(r"(#define CUDNN_MINOR\s+)\d+", r"\g<1>4", text))
        stale_win = self.root_win + "\\cuda\\include"
        for tools, env in (("gcc", {"CFLAGS": "-I" + stale_win}),
                           ("cl", {"CFLAGS": "/I" + stale_win, "VCINSTALLDIR": "C:\\VS"})):
            with self.subTest(compiler=tools):
                s = self.build(EXIT["VERIFY_BUILD"], WINEPATH=self.root_win + "\\tools-" + tools,
                               **env)
                self.assertIn("the compiler saw CUDNN_VERSION 90400 in %s\\cudnn_version.h, "
                              "the loaded library is 91900" % stale_win, s["reason"])
                log = re.search(r"output in (\S+build\.log)", s["finding"]).group(1)
                with open(W.WINE_.linux(log), encoding="utf-8", errors="replace") as f:
                    self.assertIn(stale_win, f.read())  # the command as run
                shutil.rmtree(os.path.dirname(W.WINE_.linux(log)))

    def test_no_compiler_is_a_skip(self):
        s = self.build()
        self.assertEqual(s["status"], "skip")
        self.assertEqual(s["reason"], "no C compiler: no Visual Studio developer prompt "
                         "(VCINSTALLDIR, cl.exe) and no gcc.exe on PATH")


# ------------------------------------------------------- verify --python
class VerifyPython(WineTest):
    """verify --python on Windows: the interpreter picked from VIRTUAL_ENV
    (Scripts\\python.exe), the probe passed whole through CreateProcess's
    command line, one process per framework with TerminateProcess at the
    time limit, a crash's exception status, and Windows paths judged in
    any case.  No Windows Python runs here: the interpreter is
    tests/wine/fakepython.c, which loads the fake cuDNN DLLs with the real
    (Wine's) loader and answers in the probe's format, as its fixture
    files say."""

    @classmethod
    def setUpClass(cls):
        cls.fakepy = FAKEPYTHON
        if not os.path.isfile(cls.fakepy):
            raise unittest.SkipTest("no %s (set CUDNNCTL_FAKEPYTHON)" % FAKEPYTHON)

    def setUp(self):
        super().setUp()
        self.install("good")
        base = os.path.join(self.root, "py")  # C:\tN\py: a virtual environment
        self.venv = self.root_win + "\\py"
        os.makedirs(os.path.join(base, "Scripts"))
        shutil.copy(self.fakepy, os.path.join(base, "Scripts", "python.exe"))
        site = os.path.join(base, "Lib", "site-packages")
        self.site = self.venv + "\\Lib\\site-packages"
        # torch bundles its own (older) cuDNN in torch\lib
        os.makedirs(os.path.join(site, "torch", "lib"))
        shutil.copy(W.FX.dll("old"), os.path.join(site, "torch", "lib", "cudnn64_9.dll"))
        # a cuDNN whose ops DLL needs a DLL that is nowhere
        broken = os.path.join(self.root, "broken")
        shutil.copytree(W.FX.variant_dir("missingdep"), broken)
        self.fixtures = os.path.join(self.root, "fixtures")
        os.makedirs(self.fixtures)
        self.fixture("torch", "version\t2.9.0+cu130", "location\t%s\\torch" % self.site,
                     "built\t91400", "load %s\\torch\\lib\\cudnn64_9.dll" % self.site)
        # onnxruntime and ctranslate2 load cudnn64_9.dll by name: PATH
        self.fixture("onnxruntime", "version\t1.23.0", "location\t%s\\onnxruntime" % self.site,
                     "load cudnn64_9.dll")
        self.fixture("ctranslate2", "version\t4.6.0", "location\t%s\\ctranslate2" % self.site,
                     "load %s\\broken\\cudnn64_9.dll" % self.root_win,
                     "load %s\\broken\\cudnn_ops64_9.dll" % self.root_win)
        self.fixture("cupy", "version\t13.6.0", "crash")
        # jax hangs only in the test that checks the hang: every other run
        # would wait out CUDNNCTL_PYTHON_TIMEOUT for it
        self.fixture("jax", "version\t0.7.0")
        # tensorflow: no fixture, not installed
        self.probe = os.path.join(self.root, "probe.py")
        shutil.copy(os.path.join(REPO, "src", "core", "pyprobe.py"), self.probe)
        # PATH: the active version's bin, spelled in lower case (a module's
        # name comes back in PATH's spelling)
        self.env = {"VIRTUAL_ENV": self.venv, "FAKEPY_DIR": self.root_win + "\\fixtures",
                    "FAKEPY_PROBE": self.root_win + "\\probe.py",
                    "WINEPATH": self.bin_entry(VID19).lower(),
                    "CUDNNCTL_PYTHON_TIMEOUT": "5"}

    def fixture(self, name, *lines):
        with open(os.path.join(self.fixtures, name + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    def frameworks(self, *extra):
        r = self.run_cli("verify", "--python", "--json", *extra, env=self.env)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        doc = r.json()
        return {f["name"]: f for f in doc["frameworks"]}, doc


class TestVerifyPython(VerifyPython):
    """verify --python: each framework judged, the probe passed whole."""

    def test_each_framework_judged(self):
        self.fixture("jax", "version\t0.7.0", "hang")
        fw, doc = self.frameworks()
        self.assertEqual(doc["interpreter"], self.venv + "\\Scripts\\python.exe")
        for f in fw.values():
            self.assertNotIn("arrived changed", f.get("finding", ""), f)
        t = fw["torch"]
        self.assertEqual((t["status"], t["version"], t["built_with"]),
                         ("pass", "2.9.0+cu130", 91400), t)
        self.assertEqual([(x["path"].lower(), x["version"], x["origin"]) for x in t["loaded"]],
                         [((self.site + "\\torch\\lib\\cudnn64_9.dll").lower(), "9.14.0",
                           "bundled with torch")])
        self.assertIn("its own cuDNN, not cudnnctl's: that is fine", t["hint"])
        o = fw["onnxruntime"]
        self.assertEqual(o["status"], "pass", o)
        self.assertEqual([(x["path"].lower(), x["version"], x["origin"], x["cudnnctl_active"])
                          for x in o["loaded"]],
                         [((self.bin_entry(VID19) + "\\cudnn64_9.dll").lower(), "9.19.0",
                           "cudnnctl, the active version", True)])
        c = fw["ctranslate2"]
        self.assertEqual(c["status"], "fail", c)
        self.assertIn("Could not find module '%s\\broken\\cudnn_ops64_9.dll'" % self.root_win,
                      c["finding"])
        self.assertIn("cudnn_ops64_9.dll or a DLL it needs cannot be found", c["hint"])
        self.assertEqual(fw["cupy"]["status"], "fail")
        self.assertIn("crashed (exception 0xC0000005) while loading cuDNN",
                      fw["cupy"]["finding"])
        j = fw["jax"]
        self.assertEqual((j["status"], j["exit_status"]), ("fail", -1), j)
        self.assertIn("did not finish in 5 s", j["finding"])
        self.assertEqual((fw["tensorflow"]["status"], fw["tensorflow"]["installed"]),
                         ("skip", False))
        # the table: Windows paths with '\\' only
        self.fixture("jax", "version\t0.7.0")
        r = self.run_cli("verify", "--python", env=self.env)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        self.assertRegex(r.out, r"(?m)^torch 2\.9\.0\+cu130 +pass +\S+ +9\.14\.0 +loads ")
        assert_windows_paths(self, r.out + r.err)

    def test_the_probe_must_arrive_whole(self):
        # the stand-in compares what it got with the file: a probe that
        # differs by one character is caught (so the test above can fail)
        with open(self.probe, "a", encoding="utf-8") as f:
            f.write("#")
        fw, _ = self.frameworks()
        self.assertIn("the probe arrived changed", fw["torch"]["finding"])


class TestVerifyPythonInterpreter(VerifyPython):
    """verify --python: a framework missing cublasLt, the interpreter found
    on PATH and none at all."""

    def test_cublaslt_missing(self):
        # a DLL cuDNN needs, by name, nowhere on PATH: what provides it
        self.fixture("tensorflow", "version\t2.20.0", "load cublasLt64_12.dll")
        fw, _ = self.frameworks()
        t = fw["tensorflow"]
        self.assertEqual(t["status"], "fail", t)
        self.assertIn("Could not find module 'cublasLt64_12.dll'", t["finding"])
        self.assertIn("cublasLt64_12.dll, which cuDNN needs, cannot be found: install cuBLAS "
                      "for CUDA 12 (the CUDA toolkit, or pip install nvidia-cublas-cu12)",
                      t["hint"])

    def test_python_on_path_and_none(self):
        # no environment active: python.exe on PATH
        env = dict(self.env, VIRTUAL_ENV="", WINEPATH=self.venv + "\\Scripts;"
                   + self.bin_entry(VID19))
        del env["VIRTUAL_ENV"]
        r = self.run_cli("verify", "--python", "--json", env=env)
        self.assertEqual(r.json()["interpreter"], "python", r)
        # one that is not there: the error names it, and what to do
        self.fails(EXIT["NOTFOUND"], "verify", "--python", "C:\\nowhere\\python.exe",
                   env=self.env, words=["C:\\nowhere\\python.exe"])


if __name__ == "__main__":
    W.main("test_wine_verify.py")

#!/usr/bin/env python3
"""cudnnctl.exe under Wine: install, switch, uninstall, CI mode, arm64,
two installs at once, hostile manifests, report files, doctor, path
restore.

Part of the Wine suite: tests/wine/winetest.py has the prefix, the
registry helpers and the WineTest base (and says how to run a file).
"""
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import winetest as W  # noqa: E402  (W.WINE_, W.FX: made by W.start())
from winetest import *  # noqa: E402,F401,F403  (setUpModule, tearDownModule too)


# ----------------------------------------------------------------- install
class TestInstall(WineTest):
    def test_install_into_c_cudnn_with_no_user_path(self):
        """C:\\cudnn, no user PATH value: created as REG_EXPAND_SZ with our
        entry; verify at the end passes."""
        self.root_win, self.root = "C:\\cudnn", W.WINE_.linux("C:\\cudnn")
        shutil.rmtree(self.root, ignore_errors=True)
        self.addCleanup(shutil.rmtree, self.root, True)
        self.set_user_path(None, None)
        path, _ = W.FX.fake("good")
        r = self.install(verify=True)
        self.assertIn("installed cuDNN %s for CUDA 12 (sha256 verified) into "
                      "C:\\cudnn\\versions\\%s\n" % (V19, VID19), r.out)
        assert_windows_paths(self, r.out + r.err)
        self.assertIn(os.path.basename(path), self.ok("list", "--json").out)
        vdir = os.path.join(self.root, "versions", VID19)
        for part in V9_PARTS:
            self.assertTrue(os.path.isfile(os.path.join(vdir, "bin", "cudnn%s64_9.dll" % part)))
        for rel in ("lib/x64/cudnn.lib", "lib/x64/cudnn64_9.lib", "include/cudnn_version.h",
                    "LICENSE", ".cudnnctl-record"):
            self.assertTrue(os.path.isfile(os.path.join(vdir, rel)), rel)
        self.assert_active(VID19)
        self.assertEqual(self.backup(), "missing\n")
        # the verify run at the end of install
        self.assertIn("file version %s" % V19, r.out)
        self.assertIn("cuDNN 9.19.0 (91900)", r.out)
        self.assertRegex(r.out, r"driver +skip .*%s" % re.escape(NO_DRIVER))

    def test_running_programs_hear_of_the_change(self):
        """A window (as Explorer has) gets WM_SETTINGCHANGE "Environment"
        from install and from deactivate, so programs started from it see
        the new PATH."""
        if not os.path.isfile(SETTINGWATCH):
            self.skipTest("no %s (set CUDNNCTL_SETTINGWATCH)" % SETTINGWATCH)
        watch = subprocess.Popen([WINE, SETTINGWATCH, "120"], env=W.WINE_.env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        self.addCleanup(watch.wait)
        self.addCleanup(watch.kill)
        self.assertEqual(watch.stdout.readline().strip(), b"ready")
        self.install("good")
        self.ok("deactivate")
        # SendMessageTimeout returns once each window has answered: both
        # broadcasts are in by now
        watch.kill()
        lines = [l.strip() for l in watch.stdout.read().decode().splitlines()]
        self.assertGreaterEqual(lines.count("WM_SETTINGCHANGE Environment"), 2, lines)

    def test_console_code_page_is_left_as_it_was(self):
        """cudnnctl shows UTF-8 while it runs, and gives the console (the
        user's shell's) its code page back, also after an error."""
        if not os.path.isfile(CONSOLECP) or not shutil.which("script"):
            self.skipTest("needs %s and script(1)" % CONSOLECP)
        cp, exe = zpath(CONSOLECP), zpath(W.WINE_.exe)
        line = " & ".join([cp, exe + " version", cp, exe + " nosuchcommand", cp])
        # a pseudo-terminal, so that the programs have a console
        r = subprocess.run(["script", "-qec", "%s cmd /c '%s'" % (WINE, line), "/dev/null"],
                           env=W.WINE_.env, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=180)
        # Wine's console draws each character with cursor escapes around it
        out = re.sub(r"\x1b\[[?0-9;]*[A-Za-z]|\r", "", r.stdout.decode("utf-8", "replace"))
        pages = re.findall(r"cp=(\d+)", out)
        self.assertEqual(len(pages), 3, out)
        self.assertNotEqual(pages[0], "0", "no console:\n" + out)
        self.assertEqual(pages, [pages[0]] * 3, out)

    def test_pointer_file_and_path_follow_switch(self):
        """current is a file naming the version (junctions do not work under
        Wine); the user PATH names versions\\<id>\\bin, never current\\bin."""
        self.install("good")
        self.assertTrue(os.path.isfile(os.path.join(self.root, "current")))
        self.assertFalse(os.path.isdir(os.path.join(self.root, "current")))
        self.assert_active(VID19)
        self.assertNotIn("current", self.user_path()[1])
        r = self.install("old", V14)  # a later install is activated too
        self.assertIn("%s -> %s" % (VID19, VID14), r.out)
        self.assert_active(VID14)
        r = self.ok("switch", "9.19")
        self.assertIn("%s -> %s" % (VID14, VID19), r.out)
        self.assert_active(VID19)
        r = self.ok("switch", VID14)
        self.assert_active(VID14)

    def test_list_human_and_json(self):
        self.ok("list")  # an empty or missing root lists nothing
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.assert_active(VID19)
        out = self.ok("list").out
        self.assertRegex(out, r"\* 9\.19\.0\.99 +12 .*verified, active")
        self.assertRegex(out, r"\n  9\.14\.0\.99 +12 .*verified\n")
        doc = self.ok("list", "--json").json()
        self.assertEqual(doc["root"], self.root_win)
        got = {i["id"]: (i["active"], i["verified"], i["platform"], i["cuda"])
               for i in doc["installed"]}
        self.assertEqual(got, {VID19: (True, True, "windows-x86_64", 12),
                               VID14: (False, True, "windows-x86_64", 12)})

    def test_several_workers_extract_the_same_files(self):
        """--jobs 4: the zip is extracted by four workers reading the file
        at their own offsets (ReadFile with an OVERLAPPED position); the
        record holds the same files and hashes as with one, and verify
        --full re-hashes them all against it."""
        def files():
            rec = os.path.join(self.root, "versions", VID19, ".cudnnctl-record")
            with open(rec, encoding="utf-8") as f:
                return sorted(line.split("\t")[2:4] + [line.split("\t")[6]]
                              for line in f if line.startswith("file\t"))
        self.install("good", V19, "--jobs", "1")
        one = files()
        self.ok("uninstall", V19, "--force")
        self.install("good", V19, "--jobs", "4")
        self.assertEqual(files(), one)
        self.assertGreater(len(one), 5)
        self.ok("verify", "--no-gpu", "--full")


class TestUninstall(WineTest):
    """uninstall and deactivate take away only what is ours; env."""

    def test_uninstall(self):
        self.set_user_path("REG_SZ", "C:\\a;C:\\b")
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.fails(EXIT["ACTIVE"], "uninstall", "9.19", words=(VID19, "--force"))
        self.assert_active(VID19, "C:\\a;C:\\b")
        self.ok("uninstall", "9.14")
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID14)))
        self.assertEqual([i["id"] for i in self.ok("list", "--json").json()["installed"]],
                         [VID19])
        self.assert_active(VID19, "C:\\a;C:\\b")
        # the active one with --force: its PATH entry and CUDNN_PATH go too
        self.ok("uninstall", "9.19", "--force")
        self.assertIsNone(self.active_id())
        self.assertEqual(os.listdir(os.path.join(self.root, "versions")), [])
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\b")
        self.assert_cudnn_path(None)

    def test_deactivate_removes_only_ours(self):
        others = "C:\\a;%SystemRoot%\\foo;C:\\t999\\versions\\x\\bin;C:\\b"
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.install("old", V14, "--no-activate")
        self.assert_active(VID19, others)
        r = self.ok("deactivate")
        self.assertIn("deactivated", r.out)
        self.assert_user_path("REG_EXPAND_SZ", others)
        self.assert_cudnn_path(None)
        self.assertIsNone(self.active_id())
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, "versions"))),
                         [VID14, VID19])
        # switch activates again
        self.ok("switch", "9.14")
        self.assert_active(VID14, others)

    def test_env_names_the_version_folder(self):
        # `current` is a pointer file under Wine: env must name the
        # version's own folder, with Windows separators
        self.install("good")
        out = self.ok("env", "--shell", "cmd").out
        self.assertIn('set "CUDNN_PATH=%s"' % self.vdir_win(VID19), out)
        self.assertIn('set "PATH=%s;' % self.bin_entry(VID19), out)
        self.assertNotIn("current", out)
        self.assertNotIn("/", out.split("PATH=")[1].split(";")[0])
        out = self.ok("env", "--shell", "powershell").out
        self.assertIn("$env:CUDNN_PATH = '%s'" % self.vdir_win(VID19), out)

    def test_deactivate_keeps_a_cudnn_path_not_of_this_root(self):
        self.install("good")
        W.WINE_.reg_add(USER_ENV, "CUDNN_PATH", "REG_SZ", "D:\\my\\cudnn")
        self.ok("deactivate")
        self.assertEqual(W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"), ("REG_SZ", "D:\\my\\cudnn"))
        self.assertIsNone(self.active_id())


# -------------------------------------------------------------- path restore
class TestCiMode(WineTest):
    def github_runner(self, name):
        """(a fresh folder for the runner's files, the environment of a
        GitHub Actions step that names them: GITHUB_ENV, _PATH, _OUTPUT)."""
        runner = os.path.join(W.WINE_.tmp, name)
        shutil.rmtree(runner, True)
        os.mkdir(runner)
        env = {"GITHUB_ACTIONS": "true"}
        for var in ("ENV", "PATH", "OUTPUT"):
            env["GITHUB_" + var] = zpath(os.path.join(runner, var.lower()))
        return runner, env

    def test_github_actions_job(self):
        """In a GitHub Actions job: the bin folder goes to GITHUB_PATH and
        CUDNN_PATH to GITHUB_ENV (LF line ends, as the runner writes), the
        registry is left alone, and the install's verify judges what the
        job's later steps get; --persist writes the registry as outside
        CI."""
        self.set_user_path("REG_EXPAND_SZ", r"C:\tools")
        runner, env = self.github_runner("runner")
        r = self.install(verify=True, env=env)
        self.assertIn("for this job's later steps", r.out)
        self.assertIn("cuDNN 9.19.0 (91900)", r.out)  # verify's load stage passed
        self.assert_user_path("REG_EXPAND_SZ", r"C:\tools")
        self.assertIsNone(W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        self.assertEqual(self.active_id(), VID19)
        with open(os.path.join(runner, "path"), "rb") as f:
            self.assertEqual(f.read(), (self.bin_entry(VID19) + "\n").encode())
        vdir = self.vdir_win(VID19)
        with open(os.path.join(runner, "env"), "rb") as f:
            self.assertEqual(f.read().decode().splitlines(), [
                "CUDNN_PATH=" + vdir, "CUDNN_ROOT=" + vdir, "CUDNN_HOME=" + vdir,
                "CUDNN_INSTALL_PATH=" + vdir, "CMAKE_PREFIX_PATH=" + vdir,
                "PKG_CONFIG_PATH=" + vdir + "\\lib\\pkgconfig",
                "CUDNNCTL_ROOT=" + self.root_win])  # INCLUDE, LIB: exec's only
        with open(os.path.join(runner, "output"), "rb") as f:
            out = f.read().decode()
        self.assertIn("cudnn-version=%s\ncuda=12\n" % V19, out)
        self.assertIn("changed=true\n", out)
        # a later step: PATH with the folder first, as the runner makes it
        # (Wine builds a process's PATH from the registry and WINEPATH)
        later = dict(env, WINEPATH=self.bin_entry(VID19))
        r = self.run_cli("verify", "--no-gpu", env=later)
        self.assertEqual(r.rc, 0, r)
        self.assertRegex(r.out, r"locate +pass")
        # --persist: the registry, as outside CI
        self.install("good", V19, "--persist", env=env)
        self.assert_active(VID19, r"C:\tools")


    def test_bin_x64_layout_goes_first_everywhere(self):
        """From 9.23 on NVIDIA's zips keep the DLLs in bin\\x64 (the r990
        fake packs as 9.90.0.1): the folder `env` puts first on PATH, the
        one a GitHub job gets in GITHUB_PATH and the registry entry are all
        that folder, not bin (which holds nothing but x64).  Before the fix
        env and GITHUB_PATH named bin, so a later step or shell found no
        cuDNN there (or a stray copy further down PATH)."""
        path, manifest = W.FX.fake("r990")
        vid = "9.90.0.1-cuda12"
        dll_dir = self.bin_entry(vid) + "\\x64"
        self.ok("install", zpath(path), "--manifest", zpath(manifest))
        self.assertEqual(self.user_path()[1].split(";")[0], dll_dir)
        r = self.ok("env", "--shell", "cmd")
        line = [x for x in r.out.splitlines() if x.startswith('set "PATH=')][0]
        self.assertEqual(line[len('set "PATH='):].split(";")[0], dll_dir, r.out)
        self.assertEqual(self.ok("env", "--json").json()["set"]["PATH"].split(";")[0], dll_dir)
        runner, env = self.github_runner("runner-x64")
        self.ok("switch", vid, env=env)
        with open(os.path.join(runner, "path"), "rb") as f:
            self.assertEqual(f.read(), (dll_dir + "\n").encode())


class TestArm64(WineTest):
    """NVIDIA's windows-arm64 zips (CUDA 13) keep the DLLs in bin\\arm64.
    Wine runs x64 only, so the machine is said with install --platform
    (what an x64 cudnnctl.exe emulated on an arm64 PC finds out itself
    through IsWow64Process2); verify from this x64 process reads the arm64
    DLLs and says why it does not load them."""
    V = V19  # the fake DLLs say 9.19.0.99 in their VERSIONINFO
    VID = V + "-cuda13"

    def pack(self):
        return W.FX.fake("good", self.V, platform="windows-arm64", cuda="13")

    def test_install_and_verify_an_arm64_build(self):
        self.set_user_path("REG_SZ", r"C:\tools")
        path, manifest = self.pack()
        # this machine is x64 to cudnnctl: refused, naming the way out
        r = self.fails(EXIT["PLATFORM"], "install", zpath(path), "--manifest", zpath(manifest),
                       words=["windows-arm64 build", "--platform windows-arm64"])
        self.assert_user_path("REG_SZ", r"C:\tools")
        r = self.ok("install", zpath(path), "--manifest", zpath(manifest),
                    "--platform", "windows-arm64", "--json")
        doc = r.json()
        self.assertEqual((doc["id"], doc["platform"]), (self.VID, "windows-arm64"), r)
        arm = self.bin_entry(self.VID) + "\\arm64"
        self.assert_user_path("REG_EXPAND_SZ", arm + r";C:\tools")
        self.assertTrue(os.path.isfile(os.path.join(self.root, "versions", self.VID, "bin",
                                                    "arm64", "cudnn64_9.dll")))
        # verify from this x64 process: the stages that read, not those
        # that load; never "error 193"
        doc = self.verify()
        self.assertEqual(doc["library"], arm + "\\cudnn64_9.dll")
        self.assert_stage(doc, "locate", "pass", "(user PATH)")
        self.assert_stage(doc, "files", "pass", "8/8 libraries")
        self.assert_stage(doc, "version", "warn", "file version %s" % self.V)
        version = self.stage(doc, "version")
        self.assertIn("cudnn64_9.dll is an arm64 DLL: only an arm64 process loads it "
                      "(this cudnnctl is x64)", version["reason"])
        self.assertIn("arm64 cudnnctl.exe", version["next"])
        self.assertNotEqual(self.stage(doc, "dependencies")["status"], "fail", doc["_r"])
        for name in ["load"] + list(GPU_STAGES):
            self.assert_stage(doc, name, "skip", "arm64 DLLs load only in an arm64 process, "
                              "and this cudnnctl is x64", field="reason")
        self.assertNotIn("193", doc["_r"].out + doc["_r"].err)


class TestTwoAtOnce(WineTest):
    """A second command waits for the root's lock instead of failing,
    naming the holder and what it does: the text is read from past the
    locked byte of the lock file (LockFileEx covers byte 0)."""

    def test_second_install_waits_for_the_first(self):
        self.set_user_path("REG_SZ", r"C:\tools")
        path, manifest = W.FX.fake("good")
        old, old_manifest = W.FX.fake("old", V14)
        marker = os.path.join(W.WINE_.tmp, "paused-lock-%d" % WineTest.counter)
        if os.path.exists(marker):
            os.unlink(marker)
        first_cmd = cli_command(W.WINE_.exe, ("install", zpath(path), "--manifest",
                                            zpath(manifest)), self.root_win)
        first = subprocess.Popen([WINE] + first_cmd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=dict(W.WINE_.env, CUDNNCTL_TEST_PAUSE_AT="1:%s" % zpath(marker)))
        self.addCleanup(lambda: first.poll() is None and first.kill())
        deadline = time.monotonic() + 120  # a hang guard, not a speed check
        while not os.path.exists(marker) and first.poll() is None:
            self.assertLess(time.monotonic(), deadline, "never paused")
            time.sleep(0.05)
        second_cmd = cli_command(W.WINE_.exe, ("install", zpath(old), "--manifest",
                                             zpath(old_manifest), "--no-activate", "--wait",
                                             "300"), self.root_win)
        second = subprocess.Popen([WINE] + second_cmd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=W.WINE_.env, text=True, errors="replace")
        self.addCleanup(lambda: second.poll() is None and second.kill())
        seen = []
        for line in second.stderr:
            seen.append(line)
            if "waiting for" in line:
                break
        said = "".join(seen)
        self.assertRegex(said, r"waiting for process \d+ \(install %s\) to finish"
                         % re.escape(os.path.basename(path)), said)
        os.unlink(marker)
        out, err = first.communicate(timeout=300)
        self.assertEqual(first.returncode, 0, err)
        out, err = second.communicate(timeout=300)
        self.assertEqual(second.returncode, 0, said + err)
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, "versions"))),
                         [VID14, VID19])
        self.assert_active(VID19, r"C:\tools")


class TestHostileManifestWine(WineTest):
    """A manifest whose version or relative_path leads outside the root or
    the mirror, with Windows' separators too: refused, nothing written."""

    def evil(self, **change):
        path, manifest = W.FX.fake("good")
        out = os.path.join(W.WINE_.tmp, "evil-%d" % WineTest.counter, "redistrib_evil.json")
        return path, edited_manifest(manifest, out, "windows-x86_64", 12, **change)

    def test_version_and_path_leading_out(self):
        self.install("old", V14)
        before = snapshot(self.root)
        for version in ("9\\..\\..\\..\\escaped", "9/../../../escaped", "C:\\x"):
            with self.subTest(version=version):
                path, manifest = self.evil(version=version)
                self.fails(EXIT["MANIFEST"], "install", zpath(path), "--manifest",
                           zpath(manifest), words=["cudnn.version", "nothing was"])
                self.assertEqual(snapshot(self.root), before)
        self.assertFalse(os.path.exists(os.path.join(W.WINE_.drive_c, "escaped-cuda12")))
        mirror = os.path.join(W.WINE_.tmp, "mirror-evil")
        os.makedirs(mirror, exist_ok=True)
        for rel in ("..\\secret.txt", "cudnn/..\\..\\secret.txt", "C:\\secret.txt",
                    "\\\\server\\share\\x.zip"):
            with self.subTest(relative_path=rel):
                _, manifest = self.evil(relative_path=rel)
                self.fails(EXIT["MANIFEST"], "download", "9.19", "--cuda", "12",
                           "--mirror", zpath(mirror), "--manifest", zpath(manifest),
                           "--cache", r"C:\evil-cache", words=["relative_path"], root=False)
                self.assertFalse(os.path.exists(os.path.join(W.WINE_.drive_c, "evil-cache")))
        self.assert_active(VID14)


class TestReportFiles(WineTest):
    """Files cudnnctl produces are replaced run after run (rename on
    Windows does not replace a file: the second --junit failed with
    "cannot write" and left the first report), and the runner's files are
    appended to, keeping what other steps wrote."""

    def test_junit_twice_to_the_same_path(self):
        self.install("good", V19)
        folder = os.path.join(W.WINE_.tmp, "rapports-\u00e9t\u00e9")
        shutil.rmtree(folder, True)
        os.mkdir(folder)
        junit = os.path.join(folder, "verify.xml")
        with open(junit, "w") as f:
            f.write("stale report of an earlier run\n")
        for run in (1, 2):
            with self.subTest(run=run):
                r = self.run_cli("verify", "--no-gpu", "--junit", zpath(junit))
                self.assertEqual(r.rc, 0, r)
                suite = ET.parse(junit).getroot().find("testsuite")
                self.assertEqual(suite.get("name"), "cudnnctl verify")
                self.assertEqual(sorted(os.listdir(folder)), ["verify.xml"])
        # a folder that is not there: the cause and the next step
        r = self.run_cli("verify", "--no-gpu", "--junit",
                         zpath(os.path.join(folder, "no", "verify.xml")))
        self.assertEqual(r.rc, 3, r)
        self.assertIn("cannot write the JUnit report", r.err)
        self.assertIn("cudnnctl: hint: give --junit a file", r.err)

    def test_runner_files_are_appended_to(self):
        runner = os.path.join(W.WINE_.tmp, "runner-append")
        shutil.rmtree(runner, True)
        os.mkdir(runner)
        env = {"GITHUB_ACTIONS": "true"}
        for name in ("ENV", "OUTPUT", "STEP_SUMMARY"):
            env["GITHUB_" + name] = zpath(os.path.join(runner, name.lower()))
            with open(os.path.join(runner, name.lower()), "wb") as f:
                f.write(b"EARLIER_STEP=1\n")
        self.install("good", V19, env=env)
        for run in (1, 2):
            r = self.run_cli("verify", "--no-gpu", env=env)
            self.assertEqual(r.rc, 0, r)
        with open(os.path.join(runner, "env"), "rb") as f:
            text = f.read().decode()
        self.assertTrue(text.startswith("EARLIER_STEP=1\nCUDNN_PATH="), text)
        with open(os.path.join(runner, "step_summary"), "rb") as f:
            text = f.read().decode()
        self.assertTrue(text.startswith("EARLIER_STEP=1\n"), text)
        self.assertEqual(text.count("### cudnnctl verify: ready"), 2, text)
        self.assertNotIn("\r", text)


class TestDoctor(WineTest):
    def test_report(self):
        """doctor: the Windows release from the registry and RtlGetVersion,
        the root and its mode, the process PATH entry by entry, the copies
        a new process finds, the verify table."""
        self.install()
        r = self.ok("doctor", "--no-gpu")
        self.assertRegex(r.out, r"(?m)^cudnnctl: +\S+ \(windows-x86_64\)$")
        self.assertRegex(r.out, r"(?m)^system: +.*Windows.* \(\d+\.\d+, build \d+\); x64$")
        self.assertIn("root:       %s, mode user" % self.root_win, r.out)
        self.assertIn("installed:  %s (verified, active)" % VID19, r.out)
        self.assertIn("PATH of this process, first to last:\n  ", r.out)
        self.assertIn("1. %s\\cudnn64_9.dll (user PATH)" % self.bin_entry(VID19), r.out)
        self.assertRegex(r.out, r"(?m)^verdict: ")


    def test_messages_fit_windows(self):
        # issue 23 item 10: --help sent Windows users to `man`; a root with
        # a space was refused for a reason that is not true there
        r = self.ok("--help", root=False)
        self.assertIn("the manual is docs/cudnnctl.md", r.out)
        path, manifest = W.FX.fake("good")
        self.fails(EXIT["BADROOT"], "install", zpath(path), "--manifest", zpath(manifest),
                   root="C:\\Program Files\\cudnn",
                   words=("has a space; cudnnctl keeps its roots free of spaces",))

    def test_home_is_redacted_in_json_too_whatever_its_case(self):
        # issue 23 item 8: doctor --json showed the user name (the home
        # folder) 7 times on Windows: JSON doubles each '\\', and Windows
        # spells one folder in any case
        r = W.WINE_.run(["cmd", "/c", "echo %USERPROFILE%"])
        home = r.out.strip()  # Wine sets it: C:\users\<name>
        self.assertRegex(home, r"^[A-Za-z]:\\", r)
        # the same folder spelt in other case, as Windows allows
        root = "%s\\cudnn%d" % (home.upper(), WineTest.counter)
        self.addCleanup(shutil.rmtree, W.WINE_.linux(root), True)
        path, manifest = W.FX.fake("good")
        self.ok("install", zpath(path), "--manifest", zpath(manifest), root=root)
        for args in (("doctor", "--no-gpu", "--json"), ("doctor", "--no-gpu")):
            r = self.run_cli(*args, root=root)
            self.assertNotIn(home.lower(), (r.out + r.err).lower().replace("\\\\", "\\"), r)
            self.assertIn("~", r.out)
        doc = self.run_cli("doctor", "--no-gpu", "--json", root=root).json()
        self.assertEqual(doc["root"].lower(), "~\\cudnn%d" % WineTest.counter)


class TestPathRestore(WineTest):
    def check_restore(self, kind, value):
        self.set_user_path(kind, value)
        self.install("good")
        self.install("old", V14)
        self.ok("switch", "9.19")
        self.assertEqual(self.active_id(), VID19)
        r = self.ok("path", "restore")
        self.assertIn("restored", r.out)
        self.assertEqual(self.user_path(), None if value is None else (kind, value))
        self.assert_cudnn_path(None)

    def test_missing_original_is_deleted_again(self):
        self.check_restore(None, None)

    def test_reg_sz_original_comes_back_as_reg_sz(self):
        self.check_restore("REG_SZ", "C:\\a;C:\\b\\;C:\\Program Files\\x")

    def test_expand_sz_original_comes_back_byte_for_byte(self):
        self.check_restore("REG_EXPAND_SZ",
                           "%USERPROFILE%\\bin;%SystemRoot%\\foo;;C:\\Users\\J\u00f6rg\\bin;")

    def test_restore_deactivates_and_retires_the_backup(self):
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        self.install("good")
        self.ok("path", "restore")
        self.assertIsNone(self.active_id())
        self.assertFalse(os.path.exists(os.path.join(self.root, "path-backup-user.txt")))
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a")
        # the next change saves the PATH of that day
        self.set_user_path("REG_EXPAND_SZ", "C:\\a;C:\\later")
        self.ok("switch", "9.19")
        self.assertEqual(self.backup(), "REG_EXPAND_SZ\nC:\\a;C:\\later")

    def test_entries_added_since_are_kept(self):
        # issue 23 item 3: another installer appends to PATH after
        # cudnnctl's first change; restoring the old snapshot dropped it
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        self.install("good")
        kind, now = self.user_path()
        self.set_user_path(kind, now + ";C:\\Program Files\\New\\bin")
        r = self.ok("path", "restore")
        self.assertIn("kept the entries added to the user PATH since cudnnctl first "
                      "changed it: 'C:\\Program Files\\New\\bin'", r.err)
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\Program Files\\New\\bin")
        self.assertIsNone(self.active_id())
        # --force: the saved value exactly, naming what it drops
        self.ok("switch", "9.19")
        kind, now = self.user_path()
        self.set_user_path(kind, now + ";C:\\new2")
        r = self.ok("path", "restore", "--force")
        self.assertIn("dropped the entries added to the user PATH since cudnnctl first "
                      "changed it: 'C:\\new2'", r.err)
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\Program Files\\New\\bin")

    def test_after_deactivate(self):
        self.set_user_path(None, None)
        self.install("good")
        self.ok("deactivate")
        self.ok("path", "restore")
        self.assertIsNone(self.user_path())

    def test_no_backup(self):
        self.fails(EXIT["NOTFOUND"], "path", "restore", words=("does not exist",))
        os.mkdir(self.root)
        self.fails(EXIT["NOTFOUND"], "path", "restore", words=("no backup",))


class TestLinkCuda(WineTest):
    """link-cuda on Windows: copies of the active version's DLLs, headers
    and import libraries into the toolkit's bin, include and lib\\x64 (a
    fake toolkit folder C:\\tN\\cuda), the toolkit's own cudnn.h kept as
    cudnn.h.cudnnctl-backup, switch copying the other version's files in
    their place, unlink-cuda restoring the toolkit byte for byte."""

    def test_copies_backups_switch_and_unlink(self):
        self.install("good")
        self.install("old", V14, "--no-activate")
        tk = os.path.join(self.root, "cuda")
        for d in ("bin", "include", os.path.join("lib", "x64")):
            os.makedirs(os.path.join(tk, d))
        with open(os.path.join(tk, "include", "cudnn.h"), "wb") as f:
            f.write(b"/* the cuDNN 8.9 header copied in by hand */\r\n")
        with open(os.path.join(tk, "bin", "cudart64_12.dll"), "wb") as f:
            f.write(b"CUDA's own\r\n")
        before = snapshot(tk)
        tk_win = self.root_win + "\\cuda"
        r = self.ok("link-cuda", "--json", env={"CUDA_PATH": tk_win})
        doc = r.json()
        self.assertEqual((doc["toolkit"], doc["version"], doc["backups"]), (tk_win, VID19, 1))
        vdir = os.path.join(self.root, "versions", VID19)
        for rel in (("bin", "cudnn64_9.dll"), ("bin", "cudnn_ops64_9.dll"),
                    ("include", "cudnn_version.h"), ("lib", "x64", "cudnn.lib")):
            with self.subTest(file=rel):
                # copies, not links: the same bytes as the version's file
                self.assertFalse(os.path.islink(os.path.join(tk, *rel)))
                self.assertEqual(sha256_file(os.path.join(tk, *rel)),
                                 sha256_file(os.path.join(vdir, *rel)))
        with open(os.path.join(tk, "include", "cudnn.h.cudnnctl-backup"), "rb") as f:
            self.assertIn(b"copied in by hand", f.read())
        # switch: the other version's files in their place
        self.ok("switch", V14)
        header = os.path.join(tk, "include", "cudnn_version.h")
        self.assertEqual(sha256_file(header), sha256_file(
            os.path.join(self.root, "versions", VID14, "include", "cudnn_version.h")))
        r = self.ok("unlink-cuda")
        self.assertIn("1 of the toolkit's own put back", r.out)
        self.assertEqual(snapshot(tk), before)
        # no toolkit named and no CUDA_PATH: the error says what to do
        self.fails(EXIT["USAGE"], "link-cuda", words=("CUDA_PATH is not set",))


class TestExec(WineTest):
    """cudnnctl exec under Wine: the command runs from CreateProcessW with
    the version's DLL folder first on PATH and CUDNN_PATH set, gets its
    arguments as the C runtime parses the quoted command line, its
    standard input, and its exit code is cudnnctl's; the registry and the
    root are not touched."""

    def show(self, *before, extra=(), code=0, env=None):
        r = self.run_cli("exec", *before, "--", zpath(SHOWARGS), *extra, env=env)
        self.assertEqual(r.rc, code, r)
        lines = r.out.splitlines()
        args = [x[4:] for x in lines if x.startswith("arg ")]
        var = {x.split(" ", 1)[0]: x.split(" ", 1)[1] for x in lines
               if not x.startswith("arg ") and " " in x}
        return args, var

    def test_arguments_path_and_exit_code(self):
        self.install("good")
        self.install("old", V14, "--no-activate")
        before, path_before = self.tree(), self.user_path()
        tricky = ["a b", 'c"d', "e\\", "f\\\"g", "", "C:\\Program Files\\x", "--json",
                  "exit=7"]
        args, var = self.show(extra=tricky, code=7)
        self.assertEqual(args, tricky)
        self.assertEqual(var["PATH1"], self.bin_entry(VID19))
        vdir = self.vdir_win(VID19)
        for name in ("CUDNN_PATH", "CUDNN_ROOT", "CUDNN_HOME", "CUDNN_INSTALL_PATH",
                     "CMAKE_PREFIX_PATH1"):
            self.assertEqual(var[name], vdir, name)
        # what cl.exe, link.exe and pkg-config read
        self.assertEqual(var["INCLUDE1"], vdir + "\\include")
        self.assertEqual(var["LIB1"], vdir + "\\lib\\x64")
        self.assertEqual(var["PKG_CONFIG_PATH1"], vdir + "\\lib\\pkgconfig")
        # another version, by prefix: its folders, nothing else changed
        args, var = self.show("9.14")
        self.assertEqual(var["PATH1"], self.bin_entry(VID14))
        self.assertEqual(var["CUDNN_PATH"], self.vdir_win(VID14))
        self.assertEqual(self.tree(), before)
        self.assertEqual(self.user_path(), path_before)
        self.assert_active(VID19)

    def test_bin_x64_layout(self):
        path, manifest = W.FX.fake("r990")
        self.ok("install", zpath(path), "--manifest", zpath(manifest), "--no-activate")
        _, var = self.show("9.90")
        self.assertEqual(var["PATH1"], self.bin_entry("9.90.0.1-cuda12") + "\\x64")

    def test_stdin_reaches_the_command(self):
        self.install("good")
        cmd = cli_command(W.WINE_.exe, ("exec", "--", zpath(SHOWARGS), "stdin"), self.root_win)
        p = subprocess.run([WINE] + cmd, env=W.WINE_.env, input=b"from the pipe",
                           capture_output=True, timeout=120)
        self.assertEqual(p.returncode, 0, p)
        self.assertIn(b"stdin from the pipe", p.stdout, p)

    def test_missing_command_and_version(self):
        self.install("good")
        r = self.fails(EXIT["NOCOMMAND"], "exec", "--", "no-such-program",
                       words=("'no-such-program' was not found", "PATH"))
        self.assertEqual(r.rc, 127)
        self.fails(EXIT["NOTFOUND"], "exec", "9.2", "--", zpath(SHOWARGS),
                   words=("not installed", "cudnnctl install 9.2"))

    def started_waiting(self):
        """cudnnctl exec -- showargs wait=...: the Popen of cudnnctl (its
        Wine process) once the command's Ctrl+C handler is in place, and
        the command's own Unix process id (Wine runs each Windows process
        as one)."""
        marker = os.path.join(W.WINE_.tmp, "exec-wait")
        if os.path.exists(marker):
            os.unlink(marker)
        cmd = cli_command(W.WINE_.exe, ("exec", "--", zpath(SHOWARGS), "wait=" + zpath(marker)),
                          self.root_win)
        proc = subprocess.Popen([WINE] + cmd, env=W.WINE_.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        deadline = time.monotonic() + 60
        while not os.path.exists(marker):
            self.assertIsNone(proc.poll(), "cudnnctl ended before the command waited")
            self.assertLess(time.monotonic(), deadline, "the command never started")
            time.sleep(0.05)
        child = [p for p in self.unix_processes("showargs.exe") if p != proc.pid]
        self.assertEqual(len(child), 1, child)
        self.addCleanup(lambda: self.alive(child[0]) and os.kill(child[0], 9))
        return proc, child[0]

    @staticmethod
    def unix_processes(exe):
        """The processes whose program (argv[0]) ends with exe."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    argv0 = f.read().split(b"\0")[0].decode(errors="replace")
            except OSError:
                continue
            if argv0.replace("\\", "/").lower().endswith(exe):
                found.append(int(pid))
        return found

    @staticmethod
    def alive(pid):
        try:
            with open("/proc/%d/status" % pid) as f:
                return "\nState:\tZ" not in f.read()
        except OSError:
            return False

    def test_ctrl_c_reaches_the_command_and_its_code_comes_back(self):
        """Ctrl+C in the console reaches every process attached to it: Wine
        turns SIGINT into CTRL_C_EVENT for each.  cudnnctl leaves it to
        the command and passes the command's exit code on (42: its handler
        ran), instead of stopping itself (130)."""
        import signal as _signal
        self.install("good")
        proc, child = self.started_waiting()
        os.kill(proc.pid, _signal.SIGINT)
        os.kill(child, _signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 42, (out, err))
        self.assertIn(b"ctrl-c", out)

    def test_killed_cudnnctl_takes_the_command_with_it(self):
        """cudnnctl killed (a cancelled CI job): the job object it put the
        command in is closed with it, and ends the command too."""
        import signal as _signal
        self.install("good")
        proc, child = self.started_waiting()
        os.kill(proc.pid, _signal.SIGKILL)
        proc.communicate(timeout=60)
        deadline = time.monotonic() + 60
        while self.alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertFalse(self.alive(child), "the command outlived cudnnctl")

    def test_pin_file_found_walking_up_to_the_drive(self):
        """.cudnn-version in C:\\tN\\proj, which and exec from a folder
        below it: the walk goes up through backslashes (and ends at C:\\
        when there is none)."""
        self.install("good")
        self.install("old", V14, "--no-activate")
        proj = os.path.join(self.root, "proj")
        sub = os.path.join(proj, "src", "deep")
        os.makedirs(sub)
        r = self.ok("which", cwd=sub)
        self.assertEqual(r.out.strip(), "%s, set by the active version" % VID19)
        with open(os.path.join(proj, ".cudnn-version"), "w") as f:
            f.write("# ours\r\n9.14 cuda12\r\n")  # as Notepad saves it
        pin = self.root_win + "\\proj\\.cudnn-version"
        r = self.ok("which", cwd=sub)
        self.assertEqual(r.out.strip(), "%s, set by %s" % (VID14, pin))
        _, var = self.show_in(sub)
        self.assertEqual(var["CUDNN_PATH"], self.vdir_win(VID14))
        # pin writes one in the current folder
        r = self.ok("pin", "9.19", "--offline", root=False, cwd=sub)
        self.assertIn("pinned cuDNN 9.19", r.out)
        self.assertEqual(self.ok("which", cwd=sub).out.strip(),
                         "%s, set by %s\\src\\deep\\.cudnn-version" % (VID19, self.root_win + "\\proj"))

    def show_in(self, cwd):
        r = self.run_cli("exec", "--", zpath(SHOWARGS), cwd=cwd)
        self.assertEqual(r.rc, 0, r)
        lines = r.out.splitlines()
        return None, {x.split(" ", 1)[0]: x.split(" ", 1)[1] for x in lines if " " in x}

    def tree(self):
        return snapshot(self.root)


if __name__ == "__main__":
    W.main("test_wine_install.py")

#!/usr/bin/env python3
"""cudnnctl.exe under Wine: the user PATH in the registry as users leave
it (REG_SZ, REG_EXPAND_SZ, odd types, other tools' entries, too long)
and --scope machine.

Part of the Wine suite: tests/wine/winetest.py has the prefix, the
registry helpers and the WineTest base (and says how to run a file).
"""
import os
import shutil
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import winetest as W  # noqa: E402  (W.WINE_, W.FX: made by W.start())
from winetest import *  # noqa: E402,F401,F403  (setUpModule, tearDownModule too)


# ------------------------------------------------------- registry PATH cases
class TestRegistryPath(WineTest):
    """The user PATH as a registry value: its type kept or refused, its
    length."""

    def test_reg_sz_becomes_expand_sz_keeping_the_entries(self):
        self.set_user_path("REG_SZ", "C:\\tools\\bin;D:\\x")
        self.install("good")
        self.assert_active(VID19, "C:\\tools\\bin;D:\\x")
        self.assertEqual(self.backup(), "REG_SZ\nC:\\tools\\bin;D:\\x")

    def test_expand_sz_entries_stay_unexpanded(self):
        others = "%USERPROFILE%\\bin;%SystemRoot%\\foo;C:\\Users\\J\u00f6rg\\bin"
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.assert_active(VID19, others)
        self.install("old", V14)
        self.assert_active(VID14, others)

    def check_not_a_string(self, kind, value):
        self.set_user_path(kind, value)
        r = self.install("good")
        self.assertIn("cudnnctl: warning: the user PATH in the registry is not a string", r.err)
        self.assertIn("left untouched", r.err)
        self.assert_user_path(kind, value)
        self.assertEqual(self.active_id(), VID19)
        self.assert_cudnn_path(VID19)
        # a new process finds no cuDNN: verify says so
        doc = self.run_cli("verify", "--json").json()
        self.assertEqual(doc["exit_status"], EXIT["VERIFY_LOCATE"], doc)
        # deactivate leaves it alone too; nothing was saved to restore
        self.ok("deactivate")
        self.assert_user_path(kind, value)
        self.assert_cudnn_path(None)
        self.fails(EXIT["NOTFOUND"], "path", "restore", words=("no backup",))
        self.assert_user_path(kind, value)

    def test_reg_dword_path_is_left_untouched(self):
        self.check_not_a_string("REG_DWORD", 5)

    def test_reg_binary_path_is_left_untouched(self):
        self.check_not_a_string("REG_BINARY", b"C\0:\0\\\0x\0")

    def long_path(self):
        """About 2000 characters, under the 2047 limit until our entry is
        added: 18 entries of 100 characters and one of 200."""
        entries = ["C:\\Program Files\\Vendor%02d\\%s\\bin" % (i, "x" * 70) for i in range(18)]
        longest = "C:\\" + "L" * 197
        entries.insert(7, longest)
        value = ";".join(entries)
        self.assertLessEqual(len(value), 2047)
        self.assertGreater(len(value) + 1 + len(self.bin_entry(VID19)), 2047)
        return value, longest

    def test_too_long_path_is_refused(self):
        value, longest = self.long_path()
        self.set_user_path("REG_EXPAND_SZ", value)
        path, manifest = W.FX.fake("good")
        r = self.fails(EXIT["ACTIVATE"], "install", zpath(path), "--manifest", zpath(manifest),
                       words=("user PATH would have", "2047", "nothing was changed",
                              "longest entries: '%s' (200)" % longest))
        self.assert_user_path("REG_EXPAND_SZ", value)
        self.assert_cudnn_path(None)
        self.assertEqual(r.out, "")
        # the install was undone with the root it created
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID19)))

    def test_too_long_path_keeps_the_active_version(self):
        self.install("good")
        value, longest = self.long_path()
        self.set_user_path("REG_EXPAND_SZ", value)
        path, manifest = W.FX.fake("old", V14)
        self.fails(EXIT["ACTIVATE"], "install", zpath(path), "--manifest", zpath(manifest),
                   words=("longest entries: '%s'" % longest,))
        self.assert_user_path("REG_EXPAND_SZ", value)
        self.assert_cudnn_path(VID19)
        self.assertEqual(self.active_id(), VID19)
        self.assertFalse(os.path.exists(os.path.join(self.root, "versions", VID14)))
        self.fails(EXIT["ACTIVATE"], "switch", "9.19", words=("2047",))
        self.assert_user_path("REG_EXPAND_SZ", value)


class TestRegistryPathEntries(WineTest):
    """The user PATH's entries around ours: duplicates, other spellings,
    empty entries, a variable, CUDNN_PATH, two roots, other tools'."""

    def test_duplicates_of_our_entry_collapse(self):
        ours = self.bin_entry(VID19)
        before = ";".join(["C:\\a", ours + "\\", ours.upper(), "C:\\b", ours.lower() + "\\\\",
                           self.bin_entry(VID14), "C:\\c"])
        self.set_user_path("REG_EXPAND_SZ", before)
        self.install("good")
        self.assert_active(VID19, "C:\\a;C:\\b;C:\\c")

    def test_forward_slash_spelling_of_our_entry_is_ours(self):
        ours = self.bin_entry(VID19).replace("\\", "/")
        self.set_user_path("REG_EXPAND_SZ", "C:\\a;" + ours + ";C:\\b")
        self.install("good")
        self.assert_active(VID19, "C:\\a;C:\\b")
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a;C:\\b")

    def test_empty_entries_and_a_trailing_separator_are_kept(self):
        # issue 23 item 5: ';;' and a trailing ';' were dropped
        others = "C:\\a;;C:\\b;"
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.assert_active(VID19, others)
        self.install("old", V14)
        self.assert_active(VID14, others)
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", others)

    def test_our_entry_written_with_a_variable_is_ours(self):
        # %SystemDrive%\tN\versions\<id>\bin is this root's entry: taken
        # out, not added a second time, gone after deactivate
        ours = "%SystemDrive%" + self.bin_entry(VID19)[2:]
        self.set_user_path("REG_EXPAND_SZ", "C:\\a;" + ours + ";C:\\b")
        self.install("good")
        self.assert_active(VID19, "C:\\a;C:\\b")
        self.set_user_path("REG_EXPAND_SZ", ours + ";C:\\a")
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", "C:\\a")

    def test_the_users_cudnn_path_comes_back(self):
        # issue 23 item 2: the user's own CUDNN_PATH was overwritten at the
        # first install and deleted by deactivate
        W.WINE_.reg_add(USER_ENV, "CUDNN_PATH", "REG_EXPAND_SZ", "%USERPROFILE%\\cudnn")
        r = self.install("good")
        self.assertIn("the user CUDNN_PATH was '%USERPROFILE%\\cudnn'; cudnnctl saved it", r.err)
        self.assert_cudnn_path(VID19)
        self.install("old", V14)  # saved once: the user's, not ours
        self.ok("deactivate")
        self.assertEqual(W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"),
                         ("REG_EXPAND_SZ", "%USERPROFILE%\\cudnn"))
        self.ok("switch", "9.19")
        self.assert_cudnn_path(VID19)
        self.ok("path", "restore")
        self.assertEqual(W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"),
                         ("REG_EXPAND_SZ", "%USERPROFILE%\\cudnn"))

    def test_other_tools_entries_kept_in_order(self):
        others = ";".join(["C:\\Python312\\Scripts", "C:\\Python312",
                           "%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps",
                           # another root whose name starts like ours
                           self.root_win + "0\\versions\\%s\\bin" % VID19,
                           self.root_win + "\\versionsX\\bin",
                           "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8\\bin"])
        self.set_user_path("REG_EXPAND_SZ", others)
        self.install("good")
        self.assert_active(VID19, others)
        self.install("old", V14)
        self.assert_active(VID14, others)
        self.ok("switch", "9.19")
        self.assert_active(VID19, others)
        self.ok("deactivate")
        self.assert_user_path("REG_EXPAND_SZ", others)


class TestTwoRoots(WineTest):
    """Two installs into two roots at once, twelve times: both entries stay."""

    def test_two_roots_at_once_keep_both_entries(self):
        # issue 23 item 4: two installs into different roots at the same
        # time lost one's entry about 6 times in 50; one cudnnctl at a time
        # edits the environment now
        self.set_user_path("REG_EXPAND_SZ", "C:\\a")
        path, manifest = W.FX.fake("good")
        for round_ in range(12):
            others = []
            for i in range(2):
                win = "%s_%d_%d" % (self.root_win, round_, i)
                self.addCleanup(shutil.rmtree, W.WINE_.linux(win), True)
                others.append(win)
            results = [None, None]

            def run(i):
                results[i] = self.run_cli("install", zpath(path), "--manifest",
                                          zpath(manifest), root=others[i])
            threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for r in results:
                self.assertEqual(r.rc, 0, r)
            entries = self.user_path()[1].split(";")
            for win in others:
                self.assertIn(self.bin_entry(VID19, win), entries, (round_, entries))
            for win in others:
                self.ok("deactivate", root=win)
            self.assert_user_path("REG_EXPAND_SZ", "C:\\a")


# ----------------------------------------------------------- machine scope
MACHINE_KEY = MACHINE_ENV.split("\\", 1)[1]


class TestMachineScope(WineTest):
    """--scope machine: the machine PATH and CUDNN_PATH instead of the
    user's; without write access to that key (Wine checks registry ACLs as
    Windows does for a user who is not elevated), a clear error and
    nothing changed."""
    WATCHED = WineTest.WATCHED + ((MACHINE_ENV, "CUDNN_PATH"),)

    @staticmethod
    def after_system(machine, entry):
        """machine with entry after its last entry under %SystemRoot%
        (C:\\windows under Wine), as cudnnctl puts it (issue 23, item 1)."""
        parts = machine.split(";")
        at = 0
        for i, p in enumerate(parts):
            low = p.lower()
            if p and (low.startswith("c:\\windows") or low.startswith("%systemroot%")):
                at = i + 1
        return ";".join(parts[:at] + [entry] + parts[at:])

    def test_machine_path_gets_the_entry_and_loses_it(self):
        user_before = self.user_path()
        kind, machine = W.WINE_.reg_get(MACHINE_ENV, "Path")
        r = self.install("good", V19, "--scope", "machine")
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "Path"),
                         ("REG_EXPAND_SZ", self.after_system(machine, self.bin_entry(VID19))), r)
        self.assertTrue(machine.lower().startswith("%systemroot%"), machine)
        self.assertFalse(W.WINE_.reg_get(MACHINE_ENV, "Path")[1].startswith(self.root_win))
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"),
                         ("REG_SZ", self.vdir_win(VID19)))
        self.assertEqual(self.user_path(), user_before)
        self.assertIsNone(W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        # a later switch keeps the machine scope
        self.install("old", V14)
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "Path")[1],
                         self.after_system(machine, self.bin_entry(VID14)))
        self.assertEqual(self.user_path(), user_before)
        self.ok("deactivate")
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "Path")[1], machine)
        self.assertIsNone(W.WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"))

    def file_acl(self, path_win):
        r = W.WINE_.run([REGACL, "getfile", path_win])
        self.assertEqual(r.rc, 0, r)
        return r.out.strip()

    def test_existing_root_others_can_write_is_refused(self):
        # issue 23 item 1: a machine root any user can write is refused,
        # naming who can.  Wine keeps no file DACLs (SetNamedSecurityInfoW
        # succeeds and stores nothing) but shows one made of the Unix mode:
        # mode 777 is "Everyone" with write access.  The protected DACL a new
        # machine root gets is checked with icacls on real Windows (the CI
        # workflow's Windows job).
        if not os.path.isfile(REGACL):
            self.skipTest("no %s (set CUDNNCTL_REGACL)" % REGACL)
        os.makedirs(self.root)
        os.chmod(self.root, 0o777)
        self.assertIn(";;;WD)", self.file_acl(self.root_win))
        machine_before = W.WINE_.reg_get(MACHINE_ENV, "Path")
        path, manifest = W.FX.fake("good")
        self.fails(EXIT["BADROOT"], "install", zpath(path), "--manifest", zpath(manifest),
                   "--scope", "machine",
                   words=("--scope machine: '%s' can be written by 'Everyone'" % self.root_win,
                          "icacls", "nothing was changed"))
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "Path"), machine_before)
        self.assertIsNone(W.WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"))
        self.assertEqual(os.listdir(self.root), [])  # as it was
        os.chmod(self.root, 0o755)
        self.install("good", V19, "--scope", "machine")
        self.ok("deactivate")

    def read_only_machine_key(self):
        """Makes the machine's environment key read only, for everyone
        (what a user who is not elevated has), until the test ends;
        returns its DACL before."""
        if not os.path.isfile(REGACL):
            self.skipTest("no %s (set CUDNNCTL_REGACL)" % REGACL)
        r = W.WINE_.run([REGACL, "get", MACHINE_KEY])
        self.assertEqual(r.rc, 0, r)
        dacl = r.out.strip()
        self.addCleanup(lambda: self.assertEqual(
            W.WINE_.run([REGACL, "set", MACHINE_KEY, dacl]).rc, 0))
        r = W.WINE_.run([REGACL, "set", MACHINE_KEY, "D:P(A;;KR;;;WD)"])
        self.assertEqual(r.rc, 0, r)
        return dacl

    def test_without_write_access_nothing_changes(self):
        self.read_only_machine_key()
        machine_before = W.WINE_.reg_get(MACHINE_ENV, "Path")
        user_before = self.user_path()
        path, manifest = W.FX.fake("good")
        self.fails(EXIT["ACTIVATE"], "install", zpath(path), "--manifest", zpath(manifest),
                   "--scope", "machine",
                   words=("needs administrator rights", "elevated prompt"))
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "Path"), machine_before)
        self.assertIsNone(W.WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"))
        self.assertEqual(self.user_path(), user_before)
        self.assertIsNone(W.WINE_.reg_get(USER_ENV, "CUDNN_PATH"))
        self.assertFalse(os.path.lexists(self.root), "the root was left behind")

    def test_deactivate_without_write_access_is_refused_and_changes_nothing(self):
        """A machine-wide activation, then deactivate from a prompt that
        cannot write the machine's environment: refused, saying so, and
        nothing changes.  (Before: "deactivated", with the machine PATH
        still naming the version, as Wine 10's non-elevated token showed.)"""
        if not os.path.isfile(REGACL):
            self.skipTest("no %s (set CUDNNCTL_REGACL)" % REGACL)
        self.install("good", V19, "--scope", "machine")
        machine_before = W.WINE_.reg_get(MACHINE_ENV, "Path")
        cudnn_before = W.WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH")
        user_before = self.user_path()
        dacl = self.read_only_machine_key()
        self.fails(EXIT["ACTIVATE"], "deactivate",
                   words=("machine environment names", "needs administrator rights",
                          "elevated prompt"))
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "Path"), machine_before)
        self.assertEqual(W.WINE_.reg_get(MACHINE_ENV, "CUDNN_PATH"), cudnn_before)
        self.assertEqual(self.user_path(), user_before)
        self.assertEqual(self.active_id(), VID19)
        # with the rights back, it goes through
        self.assertEqual(W.WINE_.run([REGACL, "set", MACHINE_KEY, dacl]).rc, 0)
        self.ok("deactivate")
        self.assertNotIn(self.bin_entry(VID19), W.WINE_.reg_get(MACHINE_ENV, "Path")[1])


if __name__ == "__main__":
    W.main("test_wine_registry.py")

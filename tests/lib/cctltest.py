"""What the end-to-end tests of the cudnnctl binary share: the Linux CLI
tests (tests/cli/clitest.py and the tests/cli/test_*.py that use it) and the Wine tests
of cudnnctl.exe (tests/wine/winetest.py and its test files).

Stdlib only (Python >= 3.11).  Each test file puts this folder on sys.path:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "lib"))
    import cctltest

The exit statuses and verify's stages are not copied here from the C
tables: each test module runs its binary's `cudnnctl version --json` once
(under Wine for the .exe) and hands the result to load_tables().

Environment: CUDNNCTL_MKCUDNN (default tests/fixtures/mkcudnn.py).
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys

LIB = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(LIB, "..", ".."))
MKCUDNN = os.path.abspath(os.environ.get("CUDNNCTL_MKCUDNN")
                          or os.path.join(REPO, "tests", "fixtures", "mkcudnn.py"))

# What the binary under test says about itself (load_tables), filled in
# place, so that `from cctltest import EXIT` sees them once loaded:
EXIT = {}         # error name without the E ("USAGE", "VERIFY_LOAD") -> exit status
STAGES = []       # verify's stages, in run order
GPU_STAGES = []   # those of them that need a GPU
STAGE_EXIT = {}   # stage -> the exit status of its failure

# The variables that turn CI mode on, and those it writes to: the tests
# run the binary without them unless a test sets them (a CI runner has them)
CI_VARS = ("CI", "GITHUB_ACTIONS", "TF_BUILD", "GITHUB_ENV", "GITHUB_PATH",
           "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")

# What env, exec and CI mode set (and the search lists they extend), in
# the order env prints them on Linux: the tests run the binary without the
# machine's values of them
CUDNN_VARS = ("CUDNN_PATH", "CUDNN_ROOT", "CUDNN_HOME", "CUDNN_INSTALL_PATH")
LINUX_LISTS = ("LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "CMAKE_PREFIX_PATH",
               "PKG_CONFIG_PATH")
ENV_VARS = CUDNN_VARS + LINUX_LISTS

V9_PARTS = ["", "_adv", "_cnn", "_engines_precompiled", "_engines_runtime_compiled",
            "_graph", "_heuristic", "_ops"]


# ------------------------------------------------------------------ files
def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def snapshot(top, ignore_content=(".lock",)):
    """{relative path: (type, mode, size, sha256 | link target)} of a tree, or
    None when it does not exist.  Root-level names in ignore_content are only
    recorded as present (the lock file holds the pid of the last holder)."""
    if not os.path.lexists(top):
        return None

    def one(path, rel):
        st = os.lstat(path)
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            return ("link", os.readlink(path))
        if stat.S_ISDIR(st.st_mode):
            return ("dir", mode)
        if not stat.S_ISREG(st.st_mode):
            return ("other", mode)
        if rel in ignore_content:
            return ("file", "(content ignored)")
        return ("file", mode, st.st_size, sha256_file(path))

    out = {".": one(top, ".")}
    if out["."][0] != "dir":
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, top)
            out[rel] = one(path, rel)
    return out


def snapshot_diff(before, after):
    if before is None or after is None:
        return "before: %s, after: %s" % (
            "absent" if before is None else "%d entries" % len(before),
            "absent" if after is None else "%d entries: %s" % (len(after), sorted(after)[:20]))
    lines = []
    for k in sorted(set(before) | set(after)):
        if before.get(k) != after.get(k):
            lines.append("  %s: %s -> %s" % (k, before.get(k, "(absent)"),
                                            after.get(k, "(absent)")))
    return "\n".join(lines)


def quote_name(name):
    """The binary's rendering of an untrusted entry name (archive.c)."""
    out, b, i = [], name.encode("utf-8"), 0
    while i < len(b):
        c = b[i]
        if 0x20 <= c < 0x7f:
            out.append(chr(c))
            i += 1
        elif 0xc2 <= c <= 0xdf and i + 1 < len(b) and b[i + 1] & 0xc0 == 0x80:
            out.append("<U+%04X>" % (((c & 0x1f) << 6) | (b[i + 1] & 0x3f)))
            i += 2
        elif 0xe0 <= c <= 0xef and i + 2 < len(b) and b[i + 1] & 0xc0 == 0x80 \
                and b[i + 2] & 0xc0 == 0x80:
            out.append("<U+%04X>" % (((c & 0x0f) << 12) | ((b[i + 1] & 0x3f) << 6)
                                     | (b[i + 2] & 0x3f)))
            i += 3
        else:
            out.append("\\x%02x" % c)
            i += 1
    return "".join(out)


# --------------------------------------------------------------- fixtures
def run_checked(cmd, **kw):
    """stdout of a helper command that must succeed."""
    cmd = [str(a) for a in cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode,
                                                      r.stdout, r.stderr))
    return r.stdout


def mkcudnn(*args):
    """Runs tests/fixtures/mkcudnn.py; the last line it printed (the file it
    wrote), or None."""
    out = run_checked([sys.executable, MKCUDNN] + list(args)).strip()
    return out.splitlines()[-1] if out else None


def mkcudnn_pack(out, manifest_name, *args):
    """(archive, manifest) of `mkcudnn pack ARGS` into the folder out, with
    its manifest there as manifest_name."""
    manifest = os.path.join(out, manifest_name)
    return mkcudnn("pack", *args, "--out", out, "--manifest", manifest), manifest


def edited_manifest(manifest, out, platform, cuda, version=None, relative_path=None,
                    archive=None):
    """A copy of a one-release manifest at out with cudnn.version and/or
    the relative_path of its <platform>.cuda<N> entry replaced; with
    archive, that entry's sha256 and size are the file's."""
    with open(manifest, encoding="utf-8") as f:
        doc = json.load(f)
    cu = doc["cudnn"]
    if version is not None:
        cu["version"] = version
    if relative_path is not None:
        cu[platform]["cuda%s" % cuda]["relative_path"] = relative_path
    if archive is not None:
        cu[platform]["cuda%s" % cuda]["sha256"] = sha256_file(archive)
        cu[platform]["cuda%s" % cuda]["size"] = str(os.path.getsize(archive))
        cu[platform]["cuda%s" % cuda].pop("md5", None)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=4)
    return out


def mkcudnn_hostile(kind, path):
    """A hostile archive of one kind at path (its format from the name)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return mkcudnn("hostile", "--kind", kind, "--out", path)


# ---------------------------------------------------------------- running
def load_tables(r):
    """Fills EXIT, STAGES, GPU_STAGES and STAGE_EXIT from r, the Result of
    running `cudnnctl version --json` with the binary under test."""
    if r.rc != 0:
        raise RuntimeError("version --json failed:%s" % r)
    doc = r.json()
    codes, stages = doc.get("exit_codes"), doc.get("verify_stages")
    if not isinstance(codes, dict) or not codes or not isinstance(stages, list) or not stages:
        raise RuntimeError("version --json has no exit_codes or verify_stages:%s" % r)
    for s in stages:
        if s.get("exit_code") not in codes.values() or not isinstance(s.get("needs_gpu"), bool):
            raise RuntimeError("verify stage %r: exit_code not in exit_codes or "
                               "needs_gpu not a boolean:%s" % (s, r))
    EXIT.clear()
    EXIT.update(codes)
    STAGES[:] = [s["name"] for s in stages]
    GPU_STAGES[:] = [s["name"] for s in stages if s["needs_gpu"]]
    STAGE_EXIT.clear()
    STAGE_EXIT.update((s["name"], s["exit_code"]) for s in stages)


def private_binary(binary, folder, cleanup):
    """A copy of binary in folder, with EXIT, STAGES and the other tables
    loaded from its `version --json`: a rebuild of the binary during the
    run must not change what the tests run.  cleanup() runs when that fails
    (a failed set-up gets no tearDownModule)."""
    copy = os.path.join(folder, os.path.basename(binary))
    shutil.copy2(binary, copy)
    cmd = [copy, "version", "--json"]
    try:
        load_tables(Result(cmd, subprocess.run(cmd, capture_output=True, timeout=60)))
    except BaseException:
        cleanup()
        raise
    return copy


def resume_folders(root):
    """The versions/.resume-* folders of a root: a zip install cut while it
    downloaded keeps its unpacked members there, with their journal."""
    vdir = os.path.join(root, "versions")
    return [os.path.join(vdir, n) for n in os.listdir(vdir) if n.startswith(".resume-")] \
        if os.path.isdir(vdir) else []


def journal(folder):
    """The journal of a versions/.resume-* folder: (step, {k: digest},
    {idx: (size, end, sha256, name)})."""
    with open(os.path.join(folder, "journal"), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    step = int(lines[0].split()[2])
    marks, members = {}, {}
    for line in lines[2:]:
        w = line.split(" ", 5)
        if w[0] == "h" and len(w) == 3:
            marks[int(w[1])] = w[2]
        elif w[0] == "m" and len(w) == 6:
            members[int(w[1])] = (int(w[2]), int(w[3]), w[4], w[5])
    return step, marks, members


def vouched(folder):
    """The members of a journal that a checkpoint vouches for."""
    step, marks, members = journal(folder)
    top = max(marks) if marks else 0
    return {i: m for i, m in members.items() if max(1, -(-m[1] // step)) <= top}


def some_vouched(root, found):
    """Whether a .resume-* folder of root has a journal vouching for a
    member yet (one being written may not be read whole: not yet); found
    gets {folder: vouched(folder)} for the folder read."""
    for folder in resume_folders(root):
        try:
            found[folder] = vouched(folder)
        except (OSError, ValueError, IndexError):
            continue
        return bool(found[folder])
    return False


def cli_command(exe, args, root=None, verify=False):
    """exe ARGS with --root ROOT (when root) and, for install and switch
    unless verify, --no-verify, right after the command name, so that the
    options at the end stay last."""
    cmd = [exe] + [str(a) for a in args]
    if not verify and args and args[0] in ("install", "switch"):
        cmd[2:2] = ["--no-verify"]
    if root:
        cmd[2:2] = ["--root", root]
    return cmd


class Result:
    """A finished run of the binary: rc, out and err as text."""

    def __init__(self, cmd, proc, note="", runner="", crlf=False):
        self.cmd, self.rc = cmd, proc.returncode
        self.out = proc.stdout.decode("utf-8", "replace")
        self.err = proc.stderr.decode("utf-8", "replace")
        if crlf:  # a C runtime that writes text mode: CRLF line ends
            self.out = self.out.replace("\r\n", "\n")
            self.err = self.err.replace("\r\n", "\n")
        self.note, self.runner = note, runner

    def __str__(self):
        return ("\n$ %s%s%s\nexit status: %d\n--- stdout ---\n%s--- stderr ---\n%s"
                "--------------" % (self.runner, " ".join(self.cmd), self.note, self.rc,
                                    self.out, self.err))

    def json(self):
        try:
            return json.loads(self.out)
        except ValueError as e:
            raise AssertionError("stdout is not JSON (%s):%s" % (e, self)) from None


class CliAsserts:
    """For a unittest.TestCase with run_cli(*args, **kw) -> Result."""

    def ok(self, *args, **kw):
        r = self.run_cli(*args, **kw)
        self.assertEqual(r.rc, 0, "command failed:%s" % r)
        return r

    def fails(self, code, *args, words=(), **kw):
        """Runs a command that must fail with exit status `code`, an error
        message on stderr holding every one of `words`."""
        r = self.run_cli(*args, **kw)
        self.assertEqual(r.rc, code, "wrong exit status:%s" % r)
        self.assertIn("cudnnctl: error: ", r.err, "no error message:%s" % r)
        for w in words:
            self.assertIn(str(w), r.err, "stderr lacks %r:%s" % (w, r))
        return r

    # -- verify
    def verify(self, *args, code=0, **kw):
        """Runs `verify --json ARGS`; checks the exit status, that the JSON
        agrees with it, and that stderr names the failing stage."""
        r = self.run_cli("verify", "--json", *args, **kw)
        self.assertEqual(r.rc, code, "wrong exit status:%s" % r)
        doc = r.json()
        self.assertEqual(doc["command"], "verify", r)
        self.assertEqual(doc["exit_status"], code, r)
        self.assertEqual(doc["ok"], code == 0, r)
        self.assertEqual([s["stage"] for s in doc["stages"]], STAGES, r)
        failed = [s for s in doc["stages"] if s["status"] == "fail"]
        if code:
            self.assertTrue(failed, "exit %d but no stage failed:%s" % (code, r))
            self.assertIn("cudnnctl: error: %s: " % failed[0]["stage"], r.err, r)
            # the first failure's status (or, with --require-gpu, no GPU's)
            self.assertIn(code, (STAGE_EXIT[failed[0]["stage"]], EXIT["VERIFY_NOGPU"]), r)
        else:
            self.assertFalse(failed, r)
        doc["_r"] = r
        return doc

    def stage(self, doc, name):
        return next(s for s in doc["stages"] if s["stage"] == name)

    def assert_stage(self, doc, name, status, *words, field="finding"):
        """Stage `name` of a verify() doc has `status` and its `field` holds
        every one of `words`."""
        s = self.stage(doc, name)
        self.assertEqual(s["status"], status, "stage %s:%s" % (name, doc["_r"]))
        for w in words:
            self.assertIn(w, s[field] or "", "stage %s %s lacks %r:%s"
                          % (name, field, w, doc["_r"]))

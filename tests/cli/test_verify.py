#!/usr/bin/env python3
"""End-to-end tests of `cudnnctl verify` (and the verify run at the end of
install and switch).

Two kinds of cuDNN are checked:
  - the real cuDNN 9.19 in /usr/local/cuda-13.0/lib, found by the loader
    without any install root (skipped when absent);
  - the fake cuDNN libraries the build makes under build/tests/fake
    (tests/fake/fake-cudnn.c: real ELF shared objects returning fixed
    versions), packed into archives with tests/fixtures/mkcudnn.py --from.

Reuses clitest.py's helpers (private copy of the binary, scratch HOME and
root per test, --no-verify injection for install/switch) and, with the Wine
tests, tests/lib/cctltest.py's (verify's JSON checks; the exit statuses and
stage names, read from the binary's `version --json`).  Stdlib only.

    python3 tests/cli/test_verify.py -v

Environment: as clitest.py (CUDNNCTL_BIN, CUDNNCTL_MKCUDNN), plus
CUDNNCTL_FAKE_DIR (default ../../build/tests/fake from this file).
"""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import clitest as base  # noqa: E402
from cctltest import EXIT, GPU_STAGES, STAGES, V9_PARTS  # noqa: E402

FAKE_DIR = base.FAKE_DIR
REAL_LIB_DIR = "/usr/local/cuda-13.0/lib"
REAL_LIB = os.path.join(REAL_LIB_DIR, "libcudnn.so.9")
NO_DRIVER_REASON = "no NVIDIA driver (libcuda.so.1 not found)"
NOT_ASKED = "not asked for (verify --build compiles a program against it)"
V9 = "9.19.0.99"
VID13, VID12 = V9 + "-cuda13", V9 + "-cuda12"


def have_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


HAVE_DRIVER = have_driver()
# on a machine with a driver the fake cuDNN fails cudnnCreate (26): stop
# verify of the fakes after the load stage there
NOGPU = ["--no-gpu"] if HAVE_DRIVER else []


def setUpModule():
    base.setUpModule()


def tearDownModule():
    base.tearDownModule()


class VerifyTest(base.CliTest):
    """CliTest plus verify's stages (verify() and stage() are CliAsserts')."""

    def assert_stages(self, doc, **want):
        """want: stage=status, or stage=(status, words of the reason...)."""
        for name, w in want.items():
            w = (w,) if isinstance(w, str) else w
            self.assert_stage(doc, name, *w, field="reason")

    def assert_gpu_skipped(self, doc, why=None):
        """The GPU stages are skipped: `why`, else for lack of a driver (or
        --no-gpu where this machine has one)."""
        why = why or ("--no-gpu" if HAVE_DRIVER else NO_DRIVER_REASON)
        self.assert_stages(doc, **{n: ("skip", why) for n in GPU_STAGES})

    def assert_not_run_after(self, doc, failed):
        for name in STAGES[STAGES.index(failed) + 1:]:
            s = self.stage(doc, name)
            if name == "build":  # off unless asked for, whatever came before
                self.assertEqual(s["status"], "skip", name)
                self.assertEqual(s["reason"], NOT_ASKED, name)
                continue
            self.assertEqual(s["status"], "skip", "%s:%s" % (name, doc["_r"]))
            self.assertEqual(s["reason"], "not run: the %s stage failed" % failed, name)
            self.assertEqual(s["finding"], "not run", name)

    def install_fake(self, variant, version=None, cuda=None, *extra, **kw):
        """Installs a fake variant (by default the release of its files,
        for the CUDA major of its cudart: tests/fake/variants.txt)."""
        path, manifest = base.FX.fake(variant, version, cuda)
        return self.ok("install", path, "--manifest", manifest, *extra, **kw)

    def vdir(self, vid=VID13):
        return os.path.join(self.root, "versions", vid)

    def current_lib(self):
        return os.path.join(self.root, "current", "lib")

    def new_shell(self):
        """The environment of a shell that sourced env.sh."""
        return {"LD_LIBRARY_PATH": self.current_lib()}


class FakeTest(VerifyTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not os.path.isfile(os.path.join(FAKE_DIR, "good", "libcudnn.so.9.19.0")):
            raise unittest.SkipTest("no fake cuDNN in %s (build first, or set "
                                    "CUDNNCTL_FAKE_DIR)" % FAKE_DIR)


# ------------------------------------------------------- 1: real cuDNN, no root
@unittest.skipUnless(os.path.exists(REAL_LIB), "no real cuDNN at %s" % REAL_LIB)
class TestRealCudnnNoRoot(VerifyTest):
    """No install root: verify checks whatever cuDNN the loader finds."""

    def setUp(self):
        super().setUp()
        # a missing CUDNNCTL_ROOT, so that neither ~/.local/share/cudnn nor
        # (as root) /opt/cudnn decides
        self.env["CUDNNCTL_ROOT"] = os.path.join(self.tmp, "no-root")

    def check_loader_mode(self, doc):
        self.assertIsNone(doc["install"])
        self.assertEqual(doc["library"], REAL_LIB)
        self.assertEqual(doc["copies"][0], {"path": REAL_LIB, "origin": "ld.so.cache"})
        self.assertEqual(doc["cudnn_version"], "9.19.0")
        self.assertEqual(doc["cudnn_version_code"], 91900)
        self.assertEqual(doc["cudart_version"], 13010)
        self.assertEqual(doc["expected_cuda"], 13)
        self.assertEqual(os.path.realpath(doc["loaded"]), os.path.realpath(REAL_LIB))
        self.assert_stages(doc, locate="pass", files="pass", version="pass",
                           dependencies="pass", load="pass")
        self.assertIn("ld.so.cache", self.stage(doc, "locate")["finding"])
        self.assertIn("not installed by cudnnctl", self.stage(doc, "files")["finding"])

    def test_root_given_must_exist(self):
        missing = os.path.join(self.tmp, "nowhere")
        r = self.fails(EXIT["NOTFOUND"], "verify", root=missing,
                       words=("install root '%s' does not exist" % missing,))
        self.assertFalse(os.path.lexists(missing))
        self.assertNotIn("STAGE", r.out)

    def test_version_without_root_is_not_found(self):
        self.fails(EXIT["NOTFOUND"], "verify", V9, root=False, words=("does not exist",))

    @unittest.skipIf(HAVE_DRIVER, "this machine has an NVIDIA driver")
    def test_loader_mode_without_driver(self):
        with self.unchanged():
            doc = self.verify(root=False)
        self.check_loader_mode(doc)
        self.assert_gpu_skipped(doc, "libcuda.so.1")
        self.assertFalse(os.path.lexists(self.env["CUDNNCTL_ROOT"]))
        print("\n  [info] verify of the real cuDNN, no GPU: total_ms=%s" % doc["total_ms"],
              file=sys.stderr)

    @unittest.skipIf(HAVE_DRIVER or os.geteuid() == 0 and os.path.lexists("/opt/cudnn"),
                     "a driver, or /opt/cudnn exists")
    def test_loader_mode_with_default_root_absent(self):
        del self.env["CUDNNCTL_ROOT"]  # default: ~/.local/share/cudnn or /opt/cudnn
        doc = self.verify(root=False)
        self.check_loader_mode(doc)

    @unittest.skipIf(HAVE_DRIVER, "this machine has an NVIDIA driver")
    def test_require_gpu_fails_without_driver(self):
        doc = self.verify("--require-gpu", root=False, code=EXIT["VERIFY_NOGPU"])
        self.check_loader_mode(doc)
        self.assert_stages(doc, driver=("fail", "no NVIDIA driver", "libcuda.so.1"),
                           create=("skip", "not run", "driver stage failed"),
                           convolution=("skip", "not run", "driver stage failed"))
        self.assertEqual(self.stage(doc, "driver")["finding"], "no driver")

    def test_no_gpu_stops_after_load(self):
        doc = self.verify("--no-gpu", root=False)
        self.check_loader_mode(doc)
        self.assert_gpu_skipped(doc, "--no-gpu")

    def test_no_gpu_and_require_gpu_contradict(self):
        self.fails(EXIT["USAGE"], "verify", "--no-gpu", "--require-gpu", root=False,
                   words=("contradict",))

    def test_table(self):
        r = self.ok("verify", "--no-gpu", root=False)
        self.assertTrue(r.out.startswith("STAGE"), r)
        self.assertRegex(r.out, r"(?m)^locate +pass .*%s \(ld\.so\.cache\)$" % re.escape(REAL_LIB))
        self.assertRegex(r.out, r"(?m)^driver +skip +- +--no-gpu$")
        self.assertRegex(r.out, r"(?m)^verdict: loads: cuDNN 9\.19\.0 for CUDA 13 loads; "
                                r"GPU stages skipped: --no-gpu \(\d+ ms\)$")


# --------------------------------------------- GPU fitness (fake driver)
class GpuTest(FakeTest):
    """With a fake libcuda.so.1 (tests/fake/fake-cuda.c) that reports the
    devices with_gpus() names."""

    def setUp(self):
        super().setUp()
        if not os.path.isfile(os.path.join(FAKE_DIR, "driver", "libcuda.so.1")):
            self.skipTest("no fake driver in %s" % FAKE_DIR)

    def with_gpus(self, devices, driver="13000"):
        return {"LD_LIBRARY_PATH": self.current_lib() + ":" + os.path.join(FAKE_DIR, "driver"),
                "FAKE_CUDA_DEVICES": devices, "FAKE_CUDA_DRIVER": driver}


class TestGpuFitness(GpuTest):
    """The driver stage holds the GPU against the oldest one the build runs
    on (the table in src/core/platform.c), with a fake libcuda.so.1 that
    reports chosen devices (tests/fake/fake-cuda.c).  The "good" fake cuDNN
    refuses cudnnCreate, so create fails after a passing driver stage: the
    fake stands in for the driver's answers, never for a GPU."""

    def test_pre_turing_gpu_and_a_9_19_build(self):
        self.install_fake("good")  # 9.19.0 for CUDA 13
        doc = self.verify("--require-gpu", env=self.with_gpus("Tesla V100-SXM2-16GB,7.0,16"),
                          code=EXIT["VERIFY_DRIVER"])
        self.assert_stages(doc, driver=("fail", "GPU 0 (Tesla V100-SXM2-16GB): compute "
                                        "capability 7.0", "cuDNN 9.19.0 for CUDA 13 runs on "
                                        "Turing (7.5) and newer only"))
        self.assertIn("cudnnctl install 9.10.2 --cuda 12", self.stage(doc, "driver")["next"])
        self.assertIn("support matrix", self.stage(doc, "driver")["next"])
        self.assertEqual(doc["compute_capability"], "7.0")
        self.assert_not_run_after(doc, "driver")
        # the table says why and what to do
        r = self.run_cli("verify", "--require-gpu", env=self.with_gpus("Tesla V100,7.0,16"))
        self.assertEqual(r.rc, EXIT["VERIFY_DRIVER"], r)
        self.assertIn("cudnnctl install 9.10.2 --cuda 12", r.out + r.err)

    def test_turing_and_newer_pass_the_driver_stage(self):
        self.install_fake("good")
        for gpu in ("Tesla T4,7.5,15", "NVIDIA H200,9.0,141"):
            doc = self.verify("--require-gpu", env=self.with_gpus(gpu),
                              code=EXIT["VERIFY_CREATE"])
            self.assert_stages(doc, driver="pass",
                               create=("fail", "cudnnCreate returned CUDNN_STATUS_NOT_INITIALIZED"))
            self.assertIn(gpu.split(",")[0], self.stage(doc, "driver")["finding"])

    def test_a_9_14_build_for_cuda_12_on_pascal(self):
        self.install_fake("old", "9.14.0.99", 12)  # cudnnGetVersion 91400, cudart 12.8
        doc = self.verify("--require-gpu", env=self.with_gpus("Tesla P100,6.0,16", "12080"),
                          code=EXIT["VERIFY_DRIVER"])
        self.assertIn("cuDNN 9.14.0 for CUDA 12 runs on Turing (7.5)",
                      self.stage(doc, "driver")["reason"])
        self.assertIn("cudnnctl install 9.10.2 --cuda 12", self.stage(doc, "driver")["next"])

    def test_maxwell_floor_of_every_cudnn_9(self):
        self.install_fake("good")
        doc = self.verify("--require-gpu", env=self.with_gpus("Tesla K80,3.7,12"),
                          code=EXIT["VERIFY_DRIVER"])
        self.assertIn("compute capability 3.7", self.stage(doc, "driver")["reason"])

    def test_old_driver_for_the_cuda_major(self):
        self.install_fake("good")  # CUDA 13
        doc = self.verify("--require-gpu", env=self.with_gpus("NVIDIA H200,9.0,141", "12080"),
                          code=EXIT["VERIFY_DRIVER"])
        self.assertIn("the driver supports CUDA 12.8, cuDNN was built for CUDA 13",
                      self.stage(doc, "driver")["reason"])


class TestSeveralGpus(GpuTest):
    """verify --device N,M|all: the GPU stages on each GPU, at the same time
    (one thread and one context each), each GPU with its own rows, JSON
    entry and JUnit cases; a GPU that fails does so on its own row, and the
    others still run.  The fake driver (tests/fake/fake-cuda.c) with the
    "gpu" fake cuDNN, whose convolution runs on the CPU: the stages run
    their whole course here, and the tests choose which GPU fails how."""

    H200 = "NVIDIA H200,9.0,141"

    def setUp(self):
        super().setUp()
        if not os.path.isfile(os.path.join(FAKE_DIR, "gpu", "libcudnn.so.9.19.0")):
            self.skipTest("no fake gpu variant in %s" % FAKE_DIR)
        self.install_fake("gpu")

    def gpu_stage(self, gpu, name):
        return next((s for s in gpu["stages"] if s["stage"] == name), None)

    def junit(self, *args, env, code):
        path = os.path.join(self.tmp, "verify.xml")
        r = self.run_cli("verify", "--junit", path, *args, env=env)
        self.assertEqual(r.rc, code, r)
        import xml.etree.ElementTree as ET
        suite = ET.parse(path).getroot().find("testsuite")
        cases = {c.get("name"): c for c in suite.findall("testcase")}
        self.assertEqual(int(suite.get("tests")), len(cases))
        self.assertEqual(int(suite.get("failures")),
                         sum(c.find("failure") is not None for c in cases.values()))
        return r, cases

    def test_every_gpu_at_the_same_time(self):
        # FAKE_CUDA_RENDEZVOUS=3: each GPU's synchronisation waits until
        # all three have begun one (at most 10 s, then CUDA_ERROR_TIMEOUT),
        # so the convolutions pass only if they run at the same time
        env = dict(self.with_gpus(";".join([self.H200] * 3)), FAKE_CUDA_RENDEZVOUS="3")
        doc = self.verify("--require-gpu", "--device", "all", env=env)
        self.assert_stages(doc, driver="pass", create="pass", convolution="pass")
        self.assertEqual([g["index"] for g in doc["gpus"]], [0, 1, 2])
        for g in doc["gpus"]:
            self.assertTrue(g["ok"], g)
            self.assertEqual(g["name"], "NVIDIA H200")
            self.assertEqual(g["compute_capability"], "9.0")
            self.assertEqual(g["memory"], 141 << 30)
            self.assertEqual(g["free_memory"], (141 << 30) // 2)
            self.assertRegex(g["uuid"], r"^GPU-[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$")
            self.assertEqual([x["stage"] for x in g["stages"]], ["driver", "create", "convolution"])
            self.assertEqual([x["status"] for x in g["stages"]], ["pass"] * 3)
            self.assertEqual(g["algorithm"], "IMPLICIT_GEMM")
            self.assertLess(g["max_rel_error"], 1e-5)
        self.assertEqual(len({g["uuid"] for g in doc["gpus"]}), 3)
        self.assertEqual(self.stage(doc, "convolution")["finding"], "3 of 3 GPUs passed")
        # one after another, the same check cannot pass: the rendezvous is real
        env1 = dict(env, FAKE_CUDA_DEVICES=self.H200)
        doc = self.verify("--require-gpu", env=env1, code=EXIT["VERIFY_CONV"])
        self.assertIn("CUDA_ERROR_TIMEOUT", self.stage(doc, "convolution")["reason"])
        # the table: a row per GPU under each GPU stage, and the verdict
        r = self.run_cli("verify", "--device", "all", env=env)
        self.assertEqual(r.rc, 0, r)
        rows = [line.split()[:3] for line in r.out.splitlines() if line.startswith("  GPU ")]
        self.assertEqual(rows, [["GPU", str(i), "pass"] for _ in range(3) for i in range(3)])
        self.assertIn("ran a convolution on 3 GPUs", r.out)
        # JUnit: a case per GPU stage per GPU
        r, cases = self.junit("--device", "all", env=env, code=0)
        self.assertEqual(sorted(n for n in cases if "-gpu" in n),
                         sorted("%d-%s-gpu%d" % (k, s, i) for k, s in
                                ((6, "driver"), (7, "create"), (8, "convolution"))
                                for i in range(3)))
        self.assertIn("5-load", cases)
        self.assertNotIn("7-create", cases)

    def test_default_is_the_first_gpu_and_lists_pick(self):
        env = self.with_gpus("%s;Tesla T4,7.5,15;NVIDIA L4,8.9,22" % self.H200)
        doc = self.verify("--require-gpu", env=env)
        self.assertEqual([g["index"] for g in doc["gpus"]], [0])
        self.assertEqual(doc["gpu_count"], 3)
        self.assertEqual(doc["gpu"], "NVIDIA H200")
        self.assertIn("3 GPUs, using 0: NVIDIA H200", self.stage(doc, "driver")["finding"])
        r = self.run_cli("verify", env=env)
        self.assertEqual(r.rc, 0, r)
        self.assertNotIn("  GPU ", r.out)
        doc = self.verify("--device", "2,0,2", env=env)
        self.assertEqual([(g["index"], g["name"]) for g in doc["gpus"]],
                         [(2, "NVIDIA L4"), (0, "NVIDIA H200")])
        self.assertEqual(doc["gpu"], "NVIDIA L4")
        doc = self.verify("--device", "1", env=env)
        self.assertEqual([g["name"] for g in doc["gpus"]], ["Tesla T4"])

    def test_each_failure_on_its_own_row(self):
        gpus = [self.H200, self.H200 + ",busy", "Tesla V100,7.0,16", self.H200 + ",ecc",
                self.H200 + ",oom", self.H200 + ",lost"]
        env = self.with_gpus(";".join(gpus))
        # the first stage that failed on any GPU gives the exit status
        doc = self.verify("--device", "all", env=env, code=EXIT["VERIFY_DRIVER"])
        g = doc["gpus"]
        self.assertEqual([x["ok"] for x in g], [True] + [False] * 5)
        want = {  # GPU: (stage that failed, words of its reason)
            1: ("create", "cannot make a CUDA context: CUDA_ERROR_DEVICE_UNAVAILABLE"),
            2: ("driver", "compute capability 7.0"),
            3: ("convolution", "cuCtxSynchronize returned CUDA_ERROR_ECC_UNCORRECTABLE"),
            4: ("create", "100 MiB free of 144384 MiB; the check needs 256 MiB"),
            5: ("convolution", "cuCtxSynchronize returned CUDA_ERROR_LAUNCH_FAILED"),
        }
        for i, (stage, words) in want.items():
            self.assertEqual(self.gpu_stage(g[i], stage)["status"], "fail", g[i])
            self.assertIn(words, self.gpu_stage(g[i], stage)["reason"])
            # the stage's row names the GPU
            self.assertIn("GPU %d (%s): %s" % (i, g[i]["name"], words),
                          self.stage(doc, stage)["reason"])
            # and later stages did not run on it
            later = ["driver", "create", "convolution"]
            for after in later[later.index(stage) + 1:]:
                self.assertEqual(self.gpu_stage(g[i], after)["status"], "skip", g[i])
        self.assertIn("cudnnctl install 9.10.2 --cuda 12", self.gpu_stage(g[2], "driver")["next"])
        # the good GPU ran everything all the same
        self.assertEqual([x["status"] for x in g[0]["stages"]], ["pass"] * 3)
        self.assertEqual(self.stage(doc, "convolution")["finding"], "1 of 6 GPUs passed")
        # the table's verdict names each GPU that failed, and why
        r = self.run_cli("verify", "--device", "all", env=env)
        self.assertEqual(r.rc, EXIT["VERIFY_DRIVER"], r)
        self.assertIn("verdict: NOT READY: 5 of 6 GPUs failed", r.out)
        for i, (stage, words) in want.items():
            self.assertIn("  GPU %d (%s): %s: %s" % (i, g[i]["name"], stage, words), r.out)
        # JUnit: the cases of the GPUs that failed fail
        r, cases = self.junit("--device", "all", env=env, code=EXIT["VERIFY_DRIVER"])
        failed = sorted(n for n, c in cases.items() if c.find("failure") is not None)
        self.assertEqual(failed, ["6-driver-gpu2", "7-create-gpu1", "7-create-gpu4",
                                  "8-convolution-gpu3", "8-convolution-gpu5"])
        self.assertIsNotNone(cases["8-convolution-gpu1"].find("skipped"))
        # one GPU of a kind alone: its own stage's exit status
        for mode, code in (("busy", "VERIFY_CREATE"), ("oom", "VERIFY_CREATE"),
                           ("ecc", "VERIFY_CONV"), ("lost", "VERIFY_CONV")):
            self.verify("--device", "1", env=self.with_gpus("%s;%s,%s" % (self.H200, self.H200, mode)),
                        code=EXIT[code])

    def test_doctor_lists_every_gpu(self):
        env = self.with_gpus("%s;Tesla T4,7.5,15" % self.H200)
        r = self.ok("doctor", env=env)
        self.assertIn("driver:     supports CUDA 13.0; 2 GPUs\n", r.out)
        self.assertRegex(r.out, r"(?m)^  GPU 0: NVIDIA H200 \(compute 9\.0, 141 GiB\) GPU-[0-9a-f-]+$")
        self.assertRegex(r.out, r"(?m)^  GPU 1: Tesla T4 \(compute 7\.5, 15 GiB\) GPU-[0-9a-f-]+$")
        self.assertIn("ran a convolution on 2 GPUs", r.out)

    def test_devices_the_driver_does_not_have(self):
        env = self.with_gpus(";".join([self.H200] * 2))
        doc = self.verify("--device", "0,5", env=env, code=EXIT["VERIFY_DRIVER"])
        self.assertIn("no GPU 5: the driver sees 2 (0-1)", self.stage(doc, "driver")["reason"])
        self.assertIn("nvidia-smi -L", self.stage(doc, "driver")["next"])
        self.assert_not_run_after(doc, "driver")
        for bad in ("x", "1,", ",1", "1;2", "-1", ""):
            self.fails(EXIT["USAGE"], "verify", "--device", bad, env=env, words=("--device",))
        self.fails(EXIT["USAGE"], "verify", "--device", "all", "--no-gpu", env=env,
                   words=("--no-gpu and --device",))


# --------------------------------------------- CI mode: the job's later steps
class TestCiHandOver(FakeTest):
    def test_later_steps_find_the_install(self):
        # install in a GitHub Actions job: no profile or env.sh is written;
        # a later step gets the variables of GITHUB_ENV, and verify there
        # finds and loads the install
        runner = os.path.join(self.tmp, "runner")
        os.mkdir(runner)
        gh = {"GITHUB_ACTIONS": "true", "GITHUB_ENV": os.path.join(runner, "env")}
        with self.unchanged(self.home, only=True):
            self.install_fake("good", env=gh)
        self.assertFalse(os.path.exists(os.path.join(self.root, "env.sh")))
        later = dict(line.split("=", 1) for line in self.read(gh["GITHUB_ENV"]).splitlines())
        doc = self.verify(*NOGPU, env=later)
        self.assertEqual(doc["library"], os.path.join(self.current_lib(), "libcudnn.so.9"))
        self.assert_stages(doc, locate="pass", load="pass")
        # a step without them: verify judges what later steps get, and
        # warns that this one lacks it
        doc = self.verify(*NOGPU, env={"GITHUB_ACTIONS": "true"})
        self.assert_stages(doc, locate=("warn", "activated in CI mode, and this step's "
                                        "environment lacks it"))
        self.assertIn("job's later steps get it", self.stage(doc, "locate")["next"])
        # --persist: the profiles, and a new shell, as outside CI
        self.install_fake("good", V9, 13, "--persist", env=gh)
        doc = self.verify(*NOGPU, env=self.new_shell())
        self.assert_stages(doc, locate="pass")
        self.assertTrue(os.path.exists(os.path.join(self.root, "env.sh")))


# --------------------------------------------------------- verify --python
FAKE_FRAMEWORKS = {
    # a copy bundled in the package, as PyTorch's wheels do
    "torch/__init__.py": """
import ctypes, os
__version__ = "2.9.0+fake"
class backends:
    class cudnn:
        @staticmethod
        def version():
            ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libcudnn.so.9"))
            return 91900
""",
    # the copy the search path gives (cudnnctl's), as ONNX Runtime's
    # preload_dlls() finds it
    "onnxruntime/__init__.py": """
import ctypes
__version__ = "1.22.0+fake"
def preload_dlls(cuda=True, cudnn=True, msvc=True):
    ctypes.CDLL("libcudnn.so.9")
""",
    # a crash while loading
    "cupy/__init__.py": "__version__ = '13.6.0+fake'\n",
    "cupy/cuda/__init__.py": "",
    "cupy/cuda/cudnn.py": """
import os, signal
def getVersion():
    os.kill(os.getpid(), signal.SIGSEGV)
""",
    # a hang
    # hangs in the test that wants a hang (FAKE_JAX_HANG=1): every other
    # run would wait out the probe's timeout for it
    "jax/__init__.py": """
import os, time
__version__ = "0.7.0+fake"
def devices():
    if os.environ.get("FAKE_JAX_HANG") == "1":
        time.sleep(600)
    return []
""",
    # loads libcudnn.so.9 and libcudnn_ops.so.9 from the search path
    "ctranslate2/__init__.py": "__version__ = '4.6.0+fake'\n",
}


class TestVerifyPython(FakeTest):
    """verify --python: each framework in its own process; fake framework
    packages (on PYTHONPATH) that load the fake cuDNN: a bundled copy,
    cudnnctl's copy from the search path, a crash, a hang, a missing
    sub-library, one not installed."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # in the sanitizer build the fake libraries are instrumented, and
        # a plain Python cannot load them (the plain build runs these)
        lib = os.path.join(FAKE_DIR, "good", "libcudnn.so.9.19.0")
        p = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                            lib], capture_output=True, text=True)
        if p.returncode:
            raise unittest.SkipTest("Python cannot load the fake cuDNN here: %s"
                                    % (p.stderr.strip().splitlines() or ["?"])[-1])

    def setUp(self):
        super().setUp()
        self.install_fake("good")
        pkgs = os.path.join(self.tmp, "pkgs")
        for rel, text in FAKE_FRAMEWORKS.items():
            path = os.path.join(pkgs, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.write(path, text.lstrip())
        os.makedirs(os.path.join(pkgs, "torch", "lib"))
        shutil.copy(os.path.join(FAKE_DIR, "good", "libcudnn.so.9.19.0"),
                    os.path.join(pkgs, "torch", "lib", "libcudnn.so.9"))
        self.env.update(PYTHONPATH=pkgs, CUDNNCTL_PYTHON_TIMEOUT="5",
                        LD_LIBRARY_PATH=self.current_lib())
        self.env.pop("VIRTUAL_ENV", None)
        self.env.pop("CONDA_PREFIX", None)

    def run_python(self, *extra, env=None, code=None):
        r = self.run_cli("verify", "--python", sys.executable, "--json", *extra, env=env)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"] if code is None else code, r)
        doc = r.json()
        return {f["name"]: f for f in doc["frameworks"]}, doc

    def test_each_framework_in_its_own_process(self):
        self.env["FAKE_JAX_HANG"] = "1"
        fw, doc = self.run_python()
        self.assertEqual(doc["interpreter"], sys.executable)
        self.assertEqual(list(fw), ["torch", "onnxruntime", "ctranslate2", "cupy",
                                    "tensorflow", "jax"])
        # torch bundles only the main library (an incomplete wheel): cuDNN
        # loads its sub-libraries by name, and LD_LIBRARY_PATH (cudnnctl's
        # folder) gives them, as pytorch #185512 saw
        t = fw["torch"]
        self.assertEqual((t["status"], t["version"], t["built_with"]), ("fail", "2.9.0+fake", 91900))
        self.assertEqual(len(t["loaded"]), 1)
        torch_lib = os.path.join(self.tmp, "pkgs", "torch", "lib")
        self.assertEqual(t["loaded"][0]["path"], os.path.join(torch_lib, "libcudnn.so.9"))
        self.assertEqual(t["loaded"][0]["origin"], "bundled with torch")
        self.assertEqual(t["loaded"][0]["version"], "9.19.0")
        self.assertFalse(t["loaded"][0]["cudnnctl_active"])
        self.assertRegex(t["finding"], r"^cuDNN libraries from two folders: libcudnn\.so\.9 from %s, "
                         r"libcudnn_\w+\.so\.9\.19\.0 from %s$" % (re.escape(torch_lib),
                                                                 re.escape(self.vdir() + "/lib")))
        # as mapped: the files behind the links
        self.assertEqual(sorted(os.path.basename(p) for p in t["sublibraries"]),
                         ["libcudnn_%s.so.9.19.0" % n for n in ("adv", "cnn", "graph", "ops")])
        o = fw["onnxruntime"]
        self.assertEqual(o["status"], "pass")
        self.assertEqual(o["loaded"][0]["path"],
                         os.path.join(self.vdir(), "lib", "libcudnn.so.9.19.0"))
        self.assertEqual(o["loaded"][0]["origin"], "cudnnctl, the active version")
        self.assertTrue(o["loaded"][0]["cudnnctl_active"])
        c = fw["cupy"]
        self.assertEqual(c["status"], "fail")
        self.assertIn("crashed (signal 11) while loading cuDNN", c["finding"])
        j = fw["jax"]
        self.assertEqual(j["status"], "fail")
        self.assertIn("did not finish in 5 s", j["finding"])
        self.assertEqual(j["exit_status"], -1)
        self.assertEqual(fw["tensorflow"]["status"], "skip")
        self.assertFalse(fw["tensorflow"]["installed"])
        self.assertEqual(fw["ctranslate2"]["status"], "pass")  # the whole install is there
        # the table and JUnit
        path = os.path.join(self.tmp, "py.xml")
        r = self.run_cli("verify", "--python", sys.executable, "--junit", path)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        self.assertRegex(r.out, r"(?m)^torch 2\.9\.0\+fake +fail +\S+ +9\.19\.0 +cuDNN libraries "
                         r"from two folders")
        self.assertRegex(r.out, r"(?m)^jax 0\.7\.0\+fake +fail ")
        text = self.read(path)
        self.assertIn('tests="6" failures="3" errors="0" skipped="1"', text)
        self.assertIn('name="cupy"', text)

    def test_a_complete_bundle_passes(self):
        """torch with every library in torch/lib, and no LD_LIBRARY_PATH
        in the way: its own cuDNN, whole, from one folder."""
        torch_lib = os.path.join(self.tmp, "pkgs", "torch", "lib")
        for part in V9_PARTS[1:]:
            shutil.copy(os.path.join(FAKE_DIR, "good", "libcudnn%s.so.9.19.0" % part),
                        os.path.join(torch_lib, "libcudnn%s.so.9" % part))
        self.env.pop("LD_LIBRARY_PATH")
        r = self.run_cli("verify", "--python", sys.executable, "--json")
        t = {f["name"]: f for f in r.json()["frameworks"]}["torch"]
        self.assertEqual(t["status"], "pass", t)
        self.assertIn("its own cuDNN, not cudnnctl's: that is fine", t["hint"])
        self.assertEqual({os.path.dirname(p) for p in t["sublibraries"]}, {torch_lib})

    def test_a_missing_sub_library(self):
        # the search path has a cuDNN that lacks libcudnn_ops
        partial = os.path.join(self.tmp, "partial")
        shutil.copytree(self.current_lib(), partial, symlinks=True)
        for name in os.listdir(partial):
            if name.startswith("libcudnn_ops"):
                os.unlink(os.path.join(partial, name))
        fw, _ = self.run_python(env={"LD_LIBRARY_PATH": partial})
        c = fw["ctranslate2"]
        self.assertEqual(c["status"], "fail", c)
        self.assertIn("libcudnn_ops.so.9", c["finding"])
        # without libcudnn_ops in that folder the loader looks further: on a
        # machine with another cuDNN in ld.so.cache it finds that one, of
        # another build (undefined symbols); elsewhere nothing
        if "undefined symbol" in c["finding"]:
            self.assertRegex(c["hint"], r"^libcudnn_ops\.so\.9 came from another cuDNN \(/")
        else:
            self.assertIn("libcudnn_ops.so.9 is missing from the cuDNN this framework finds",
                          c["hint"], c)
        o = fw["onnxruntime"]
        self.assertEqual(o["loaded"][0]["origin"], "another copy on this system")
        self.assertEqual(o["status"], "warn")
        self.assertIn("does not use cudnnctl's active 9.19.0.99-cuda13", o["hint"])

    def test_a_cupy_without_cudnn(self):
        # CuPy 14 has no cuDNN module: nothing to load, not a failure
        pkgs = os.path.join(self.tmp, "pkgs")
        os.unlink(os.path.join(pkgs, "cupy", "cuda", "cudnn.py"))
        fw, _ = self.run_python()
        self.assertEqual(fw["cupy"]["status"], "skip")
        self.assertIn("has no cuDNN module", fw["cupy"]["finding"])

    def test_cublaslt_missing(self):
        # a framework built for CUDA 12 whose GPU set-up loads cuBLASLt 12,
        # which is nowhere (this machine has CUDA 13's): the hint names
        # what provides it
        pkgs = os.path.join(self.tmp, "pkgs")
        os.makedirs(os.path.join(pkgs, "tensorflow"))
        self.write(os.path.join(pkgs, "tensorflow", "__init__.py"), """
import ctypes
__version__ = "2.20.0+fake"
class sysconfig:
    @staticmethod
    def get_build_info():
        return {"cudnn_version": "9.3.0"}
class config:
    @staticmethod
    def list_physical_devices(kind):
        ctypes.CDLL("libcublasLt.so.12")
""".lstrip())
        fw, _ = self.run_python()
        t = fw["tensorflow"]
        self.assertEqual((t["status"], t["version"]), ("fail", "2.20.0+fake"), t)
        self.assertIn("libcublasLt.so.12: cannot open shared object file", t["finding"])
        self.assertEqual(t["hint"], "libcublasLt.so.12, which cuDNN needs, cannot be found: "
                         "install cuBLAS for CUDA 12 (the CUDA toolkit, or pip install "
                         "nvidia-cublas-cu12) and put the folder that holds it on the "
                         "search path")

    def test_no_interpreter(self):
        r = self.run_cli("verify", "--python", os.path.join(self.tmp, "no-python"))
        self.assertEqual(r.rc, EXIT["NOTFOUND"], r)
        self.assertIn("cannot run the Python interpreter", r.err)


# ------------------------------------------------- 2: fake good, installed
class TestGoodInstall(FakeTest):
    def setUp(self):
        super().setUp()
        self.install_fake("good")

    def check_good(self, doc):
        self.assertEqual(doc["install"], VID13)
        self.assertEqual(doc["expected_version"], V9)
        self.assertEqual(doc["expected_cuda"], 13)
        self.assertEqual(doc["library"], os.path.join(self.current_lib(), "libcudnn.so.9"))
        self.assertTrue(doc["loaded"].startswith(self.root + "/"), doc["loaded"])
        self.assertEqual(doc["cudnn_version"], "9.19.0")
        self.assertEqual(doc["cudnn_version_code"], 91900)
        self.assertEqual(doc["cudart_version"], 13010)
        self.assertEqual(doc["copies"][0], {"path": doc["library"], "origin": "LD_LIBRARY_PATH"})
        self.assert_stages(doc, files="pass", version="pass", dependencies="pass", load="pass")
        self.assertIn("8/8 libraries", self.stage(doc, "files")["finding"])
        self.assert_gpu_skipped(doc)

    def test_old_shell_warns(self):
        # this shell's LD_LIBRARY_PATH lacks <root>/current/lib
        with self.unchanged():
            doc = self.verify(*NOGPU)
        self.check_good(doc)
        self.assert_stages(doc, locate=("warn", "this shell was set up before the change"))
        self.assertIn("cudnnctl env --root %s" % self.root, self.stage(doc, "locate")["next"])

    def test_ci_step_summary(self):
        # GitHub Actions: the table as Markdown in GITHUB_STEP_SUMMARY
        summary = os.path.join(self.tmp, "summary.md")
        env = dict(self.new_shell(), GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=summary)
        doc = self.verify(*NOGPU, env=env)
        self.check_good(doc)
        text = self.read(summary)
        self.assertTrue(text.startswith("### cudnnctl verify: ready\n\ncuDNN 9.19.0 for CUDA 13\n"),
                        text)
        self.assertIn("| stage | status | ms | finding |\n|---|---|---|---|\n| locate | pass |", text)
        self.assertIn("| load | pass |", text)
        self.assertRegex(text, r"\| driver \| skip \| - \| [^|]+ \|")

    def test_new_shell_passes(self):
        with self.unchanged():
            doc = self.verify(*NOGPU, env=self.new_shell())
        self.check_good(doc)
        self.assert_stages(doc, locate="pass")
        self.assertIsNone(self.stage(doc, "locate")["reason"])

    def test_untouched_install_rehashes_nothing(self):
        doc = self.verify(*NOGPU, env=self.new_shell())
        self.assertRegex(self.stage(doc, "files")["finding"],
                         r"\d+ files checked against the install record \(0 re-hashed\)")

    def test_junit(self):
        junit = os.path.join(self.tmp, "verify.xml")
        r = self.ok("verify", "--junit", junit, *NOGPU, env=self.new_shell())
        self.assertIn("verdict: loads: cuDNN 9.19.0 for CUDA 13", r.out)
        self.assertFalse(os.path.exists(junit + ".tmp"))
        suites = ET.parse(junit).getroot()
        self.assertEqual(suites.tag, "testsuites")
        suite = suites.find("testsuite")
        cases = suite.findall("testcase")
        self.assertEqual([c.get("name") for c in cases],
                         ["%d-%s" % (i + 1, n) for i, n in enumerate(STAGES)])
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("skipped")),
                         (str(len(STAGES)), "0", str(len(GPU_STAGES) + 1)))  # + build
        for c in cases:
            skipped = c.find("skipped")
            self.assertIsNone(c.find("failure"), c.get("name"))
            if c.get("name").split("-", 1)[1] in GPU_STAGES:
                self.assertIsNotNone(skipped, c.get("name"))
                self.assertEqual(skipped.get("message"), "--no-gpu" if HAVE_DRIVER
                                 else NO_DRIVER_REASON)
            elif c.get("name").endswith("-build"):
                self.assertEqual(skipped.get("message"), NOT_ASKED)
            else:
                self.assertIsNone(skipped, c.get("name"))

    def test_junit_and_json_together(self):
        junit = os.path.join(self.tmp, "verify.xml")
        doc = self.verify("--junit", junit, *NOGPU, env=self.new_shell())
        self.check_good(doc)
        self.assertEqual(len(ET.parse(junit).getroot().find("testsuite")), len(STAGES))

    # -- 5: a sub-library missing
    def test_missing_sub_library(self):
        os.remove(os.path.join(self.vdir(), "lib", "libcudnn_cnn.so.9.19.0"))
        doc = self.verify(*NOGPU, env=self.new_shell(), code=EXIT["VERIFY_FILES"])
        # and the load stage, making cuDNN load it, finds it missing too
        self.assert_stages(doc, files=("fail", "libcudnn_cnn.so.9.19.0 is missing"),
                           version="pass", dependencies="pass",
                           load=("fail", "cudnnCnnVersionCheck() failed"))
        self.assertEqual(doc["cudnn_version"], "9.19.0")
        self.assertIn("7/8 libraries", self.stage(doc, "files")["finding"])
        self.assert_not_run_after(doc, "load")

    # -- 8: a file tampered with
    def test_tampered_file(self):
        lib = os.path.join(self.vdir(), "lib", "libcudnn_graph.so.9.19.0")
        size = os.path.getsize(lib)
        with open(lib, "r+b") as f:
            f.seek(size // 2)
            byte = f.read(1)
            f.seek(size // 2)
            f.write(bytes([byte[0] ^ 0xff]))
        self.assertEqual(os.path.getsize(lib), size)
        doc = self.verify(env=self.new_shell(), code=EXIT["VERIFY_FILES"])
        self.assert_stages(doc, files=("fail", "lib/libcudnn_graph.so.9.19.0",
                                       "changed since it was installed"))
        self.assert_not_run_after(doc, "files")
        self.assertIsNone(doc["loaded"], "a changed install must not be loaded")

    def test_full_rehashes_everything(self):
        doc = self.verify("--full", *NOGPU, env=self.new_shell())
        m = re.search(r"(\d+) files checked against the install record \((\d+) re-hashed\)",
                      self.stage(doc, "files")["finding"])
        self.assertTrue(m, self.stage(doc, "files"))
        self.assertGreater(int(m.group(1)), 8)
        self.assertEqual(m.group(1), m.group(2))
        self.assert_stages(doc, files="pass")

    # -- 9: metadata changed, content not
    def test_touched_file_is_rehashed_and_passes(self):
        lib = os.path.join(self.vdir(), "lib", "libcudnn_adv.so.9.19.0")
        st = os.stat(lib)
        os.utime(lib, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))
        doc = self.verify(*NOGPU, env=self.new_shell())
        self.assert_stages(doc, files="pass", load="pass")
        self.assertIn("(1 re-hashed)", self.stage(doc, "files")["finding"])

    # -- 11: two majors in one folder
    def test_mixed_majors_warn(self):
        shutil.copy(os.path.join(FAKE_DIR, "good", "libcudnn.so.9.19.0"),
                    os.path.join(self.vdir(), "lib", "libcudnn.so.8"))
        doc = self.verify(*NOGPU, env=self.new_shell())
        self.assert_stages(doc, locate=("warn", "'%s' holds files of cuDNN 9 and 8"
                                        % self.current_lib()),
                           files="pass", load="pass")
        self.assertIn("one cuDNN major per folder", self.stage(doc, "locate")["next"])

    # -- 7: another copy first on the search path
    def test_shadowed_by_another_copy(self):
        shadow = os.path.join(self.tmp, "shadow")
        shutil.copytree(os.path.join(FAKE_DIR, "old"), shadow, symlinks=True)
        lib_path = "%s:%s" % (shadow, self.current_lib())
        doc = self.verify(*NOGPU, env={"LD_LIBRARY_PATH": lib_path},
                          code=EXIT["VERIFY_LOAD"])
        shadow_lib = os.path.join(shadow, "libcudnn.so.9")
        self.assert_stages(doc, locate=("warn", "shadowed", shadow_lib),
                           files="pass", version="pass", dependencies="pass",
                           load=("fail", "loaded cuDNN 9.14.0, expected 9.19.0"))
        self.assertEqual(doc["copies"][0], {"path": shadow_lib, "origin": "LD_LIBRARY_PATH"})
        self.assertEqual(doc["copies"][1]["path"],
                         os.path.join(self.current_lib(), "libcudnn.so.9"))
        self.assertEqual(doc["library"], shadow_lib)
        self.assertTrue(doc["loaded"].startswith(shadow + "/"), doc["loaded"])
        self.assertEqual(doc["cudnn_version"], "9.14.0")
        self.assert_not_run_after(doc, "load")


# ------------------------------------------- 3, 4, 6: broken fake installs
class TestBrokenInstalls(FakeTest):
    def test_wrong_version_loads(self):
        # the old build (9.14.0, CUDA 12) packed as 9.19.0.99 for CUDA 12
        self.install_fake("old", V9, 12)
        doc = self.verify(env=self.new_shell(), code=EXIT["VERIFY_LOAD"])
        # dependencies may warn: cuBLASLt/NVRTC 12 need not be on this machine
        self.assert_stages(doc, locate="pass", files="pass", version="pass",
                           load=("fail", "loaded cuDNN 9.14.0, expected 9.19.0"))
        self.assertIn(self.stage(doc, "dependencies")["status"], ("pass", "warn"))
        self.assertEqual((doc["cudnn_version"], doc["cudnn_version_code"]), ("9.14.0", 91400))
        self.assert_not_run_after(doc, "load")
        self.assertIn("see the locate stage", self.stage(doc, "load")["next"])

    def test_wrong_version_table(self):
        self.install_fake("old", V9, 12)
        r = self.run_cli("verify", env=self.new_shell())
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        self.assertRegex(r.out, r"(?m)^load +fail .*\n +why: loaded cuDNN 9\.14\.0, "
                                r"expected 9\.19\.0$")
        self.assertRegex(r.out, r"(?m)^verdict: NOT READY: the load stage failed \(\d+ ms\)$")
        self.assertIn("cudnnctl: error: load: loaded cuDNN 9.14.0", r.err)

    def test_wrong_cuda_major(self):
        self.install_fake("wrongcuda", V9, 13)
        doc = self.verify(env=self.new_shell(), code=EXIT["VERIFY_LOAD"])
        self.assert_stages(doc, files="pass", dependencies="pass",
                           load=("fail", "built for CUDA 12, expected CUDA 13"))
        self.assertEqual((doc["cudnn_version"], doc["cudart_version"]), ("9.19.0", 12080))
        self.assert_not_run_after(doc, "load")

    def test_missing_dependency(self):
        self.install_fake("missingdep")
        junit = os.path.join(self.tmp, "verify.xml")
        doc = self.verify("--junit", junit, env=self.new_shell(), code=EXIT["VERIFY_DEPS"])
        self.assert_stages(doc, locate="pass", files="pass", version="pass",
                           dependencies=("fail", "libcctl_absent.so",
                                         "which the loader cannot find"))
        self.assert_not_run_after(doc, "dependencies")
        self.assertIsNone(doc["loaded"])
        suite = ET.parse(junit).getroot().find("testsuite")
        # the stages after dependencies were not run
        not_run = len(STAGES) - STAGES.index("dependencies") - 1
        self.assertEqual((suite.get("failures"), suite.get("skipped")), ("1", str(not_run)))
        failure = suite.find("testcase[@name='4-dependencies']/failure")
        self.assertIn("libcctl_absent.so", failure.get("message"))
        # every problem is a note with its own fix; the stage's fix (and
        # the error's hint) is the one of its first failure
        deps = self.stage(doc, "dependencies")
        fails = [n for n in deps["notes"] if n["status"] == "fail"]
        self.assertEqual(len(fails), 1, deps)
        self.assertIn("libcctl_absent.so", fails[0]["reason"])
        self.assertEqual(fails[0]["next"], "install the package that provides libcctl_absent.so")
        self.assertEqual(deps["next"], fails[0]["next"])
        for n in deps["notes"]:
            self.assertIn(n["status"], ("warn", "fail"), n)
            self.assertTrue(n["next"], n)
        self.assertIn("fix: install the package that provides libcctl_absent.so",
                      failure.text)

    def test_missing_dependency_found_elsewhere(self):
        # the same install passes once the dependency is on the search path
        self.install_fake("missingdep")
        lib_path = "%s:%s" % (self.current_lib(), os.path.join(FAKE_DIR, "absent"))
        doc = self.verify(*NOGPU, env={"LD_LIBRARY_PATH": lib_path})
        self.assert_stages(doc, dependencies="pass", load="pass")


# ------------------------------------- 10, 12: which install is checked
class TestWhichInstall(FakeTest):
    def test_non_active_version(self):
        self.install_fake("good")
        self.install_fake("old", "9.14.0.99", 12, "--no-activate")
        self.assertEqual(self.active_id(), VID13)
        with self.unchanged():
            doc = self.verify("9.14.0.99", *NOGPU, env=self.new_shell())
        vid = "9.14.0.99-cuda12"
        self.assertEqual(doc["install"], vid)
        # this shell's LD_LIBRARY_PATH names the active version, so its
        # sub-libraries come with 9.14's main library: a warning (checked
        # as if it were active), with exec as the way to run it
        self.assert_stages(doc, locate=("warn", "%s is not the active install" % vid),
                           files="pass", load=("warn", "another version of this root"))
        self.assertIn("cudnnctl exec %s" % vid, self.stage(doc, "load")["next"])
        libs = doc["libraries"]
        self.assertEqual(libs[0], {"path": os.path.join(self.vdir(vid), "lib", "libcudnn.so.9"),
                                   "version": "9.14.0", "origin": "the main library's folder",
                                   "foreign": False})
        self.assertEqual(sorted(os.path.basename(l["path"]) for l in libs[1:] if l["foreign"]),
                         ["libcudnn_adv.so.9", "libcudnn_cnn.so.9", "libcudnn_graph.so.9",
                          "libcudnn_ops.so.9"])
        self.assertIn("cudnnctl switch", self.stage(doc, "locate")["next"])
        self.assertEqual(doc["library"], os.path.join(self.vdir(vid), "lib", "libcudnn.so.9"))
        self.assertTrue(doc["loaded"].startswith(self.vdir(vid) + "/"), doc["loaded"])
        self.assertEqual((doc["cudnn_version"], doc["cudart_version"]), ("9.14.0", 12080))
        self.assertEqual(self.active_id(), VID13)

    def test_unknown_version(self):
        self.install_fake("good")
        self.fails(EXIT["NOTFOUND"], "verify", "7")

    def test_two_cuda_builds(self):
        self.install_fake("good", V9, 13)
        self.install_fake("wrongcuda", V9, 12, "--no-activate")  # cudart 12080
        self.fails(EXIT["AMBIGUOUS"], "verify", V9, words=("--cuda",))
        doc = self.verify(V9, "--cuda", "13", *NOGPU, env=self.new_shell())
        self.assertEqual(doc["install"], VID13)
        self.assert_stages(doc, locate="pass", load="pass")
        doc = self.verify(V9, "--cuda", "12", *NOGPU, env=self.new_shell())
        self.assertEqual(doc["install"], VID12)
        self.assert_stages(doc, locate=("warn", "not the active install"),
                           load=("warn", "another version of this root"))
        self.assertEqual(doc["cudart_version"], 12080)


# ----------------------------------- 13: verify at the end of install/switch
class TestVerifyAfterChange(FakeTest):
    def test_install_prints_the_table(self):
        path, manifest = base.FX.fake("good")
        r = self.ok("install", path, "--manifest", manifest, *NOGPU, verify=True)
        self.assertIn("installed cuDNN %s" % V9, r.out)
        self.assertRegex(r.out, r"(?m)^STAGE +STATUS +MS +FINDING$")
        self.assertLess(r.out.index("installed cuDNN"), r.out.index("STAGE"), r)
        self.assertRegex(r.out, r"(?m)^load +pass ")
        self.assertIn("verdict: loads: cuDNN 9.19.0 for CUDA 13", r.out)
        self.assert_active(VID13)

    def test_install_json_has_verify(self):
        path, manifest = base.FX.fake("good")
        doc = self.ok("install", path, "--manifest", manifest, "--json", *NOGPU,
                      verify=True).json()
        self.assertTrue(doc["ok"])
        v = doc["verify"]
        self.assertEqual((v["command"], v["ok"], v["exit_status"]), ("verify", True, 0))
        self.assertEqual(v["install"], VID13)
        self.assertEqual([s["stage"] for s in v["stages"]], STAGES)
        self.assertEqual(self.stage(v, "load")["status"], "pass")

    def test_switch_verifies(self):
        self.install_fake("good", V9, 13)
        self.install_fake("wrongcuda", V9, 12, "--no-activate")
        r = self.ok("switch", V9, "--cuda", "12", *NOGPU, verify=True)
        self.assertLess(r.out.find(VID12), r.out.index("STAGE"), r)
        self.assertIn("verdict: loads: cuDNN 9.19.0 for CUDA 12", r.out)
        self.assertEqual(self.active_id(), VID12)
        doc = self.ok("switch", V9, "--cuda", "13", "--json", *NOGPU, verify=True).json()
        self.assertEqual(doc["verify"]["install"], VID13)
        self.assertTrue(doc["verify"]["ok"])
        self.assertEqual(self.active_id(), VID13)

    def test_switch_to_broken_install_fails_after_switching(self):
        self.install_fake("good", V9, 13)
        self.install_fake("old", V9, 12, "--no-activate")  # loads 9.14.0
        r = self.run_cli("switch", V9, "--cuda", "12", verify=True)
        self.assertEqual(r.rc, EXIT["VERIFY_LOAD"], r)
        self.assertEqual(self.active_id(), VID12, "the switch itself is done")

    def test_install_with_missing_dependency(self):
        path, manifest = base.FX.fake("missingdep")
        r = self.run_cli("install", path, "--manifest", manifest, verify=True)
        self.assertEqual(r.rc, EXIT["VERIFY_DEPS"], r)
        self.assertIn("installed cuDNN %s" % V9, r.out)
        self.assertRegex(r.out, r"(?m)^dependencies +fail ")
        self.assertIn("libcctl_absent.so", r.err)
        installed = self.ok("list", "--json").json()["installed"]
        self.assertEqual([(i["id"], i["active"]) for i in installed], [(VID13, True)])
        self.assert_active(VID13)

    def test_install_json_with_missing_dependency(self):
        path, manifest = base.FX.fake("missingdep")
        r = self.run_cli("install", path, "--manifest", manifest, "--json", verify=True)
        self.assertEqual(r.rc, EXIT["VERIFY_DEPS"], r)
        doc = r.json()
        self.assertEqual(doc["id"], VID13)
        self.assertEqual(doc["verify"]["exit_status"], EXIT["VERIFY_DEPS"])
        self.assertEqual(self.stage(doc["verify"], "dependencies")["status"], "fail")


if __name__ == "__main__":
    unittest.main()

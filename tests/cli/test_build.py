#!/usr/bin/env python3
"""Builds find the version they will load: the CMake package config and
the pkg-config file install writes into each version (lib/cmake/CUDNN,
lib/pkgconfig/cudnn.pc), and the build variables env and exec set, used by
the real CMake, pkg-config and C compiler of this machine: a project is
configured, compiled, linked and run against a fake cuDNN (loadable
libraries exporting cudnnGetVersion) and, where this machine has it,
against the real cuDNN 9.19.

The scratch folders, fixtures and helpers are tests/cli/clitest.py's.
"""
import os
import re
import tempfile
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
from clitest import *  # noqa: E402,F401,F403
from clitest import setUpModule, tearDownModule  # noqa: E402,F401

# PROBE_C (clitest.py): the program a user's build makes
CMAKELISTS = """cmake_minimum_required(VERSION 3.16)
project(probe C)
find_package(CUDNN %s CONFIG REQUIRED)
message(STATUS "found cuDNN ${CUDNN_VERSION} for CUDA ${CUDNN_CUDA_MAJOR} in ${CUDNN_DIR}")
add_executable(probe probe.c)
target_link_libraries(probe PRIVATE CUDNN::cudnn)
"""


def have_tools(*names):
    return all(shutil.which(n) for n in names)


class BuildTest(CliTest):

    def project(self, request="", defines=()):
        src = tempfile.mkdtemp(prefix="proj-", dir=self.tmp)
        self.write(os.path.join(src, "probe.c"),
                   "".join("#define %s 1\n" % d for d in defines) + PROBE_C)
        self.write(os.path.join(src, "CMakeLists.txt"), CMAKELISTS % request)
        return src

    def cmake(self, src, *exec_args, env=None, ok=True):
        """cudnnctl exec [ARGS] -- cmake (configure and build) in src/b;
        the configure output."""
        build = os.path.join(src, "b")
        env = dict(build_env(), **(env or {}))
        r = self.run_cli("exec", *exec_args, "--", "cmake", "-S", src, "-B", build, env=env)
        if not ok:
            self.assertNotEqual(r.rc, 0, r)
            return r
        self.assertEqual(r.rc, 0, r)
        b = self.run_cli("exec", *exec_args, "--", "cmake", "--build", build, env=env)
        self.assertEqual(b.rc, 0, b)
        return r

    def probe(self, path, *exec_args):
        r = self.ok("exec", *exec_args, "--", path)
        return r.out.strip()


@unittest.skipUnless(have_tools("cmake", "pkg-config", "cc"), "needs cmake, pkg-config and cc")
class TestBuildFiles(BuildTest):
    """Against the fake 9.19.0.99 (cudnnGetVersion 91900) and 9.14 beside
    it, packed from the same fake libraries."""
    fixtures = ()

    def setUp(self):
        super().setUp()
        self.ok("install", *self.fake_args("good"))
        self.ok("install", *self.fake_args("good", "9.14.0.99"), "--no-activate")
        self.v19 = os.path.join(self.root, "versions", "9.19.0.99-cuda13")
        self.v14 = os.path.join(self.root, "versions", "9.14.0.99-cuda13")

    def fake_args(self, variant, version=None):
        archive, manifest = FX.fake(variant, version, 13)
        return archive, "--manifest", manifest

    def test_files_name_the_install_relative_to_themselves(self):
        cfg = self.read(os.path.join(self.v19, "lib", "cmake", "CUDNN", "CUDNNConfig.cmake"))
        self.assertIn('set(CUDNN_VERSION "9.19.0.99")', cfg)
        self.assertIn('IMPORTED_LOCATION "${_cudnn_prefix}/lib/libcudnn.so.9"', cfg)
        pc = self.read(os.path.join(self.v19, "lib", "pkgconfig", "cudnn.pc"))
        self.assertIn("prefix=${pcfiledir}/../..\n", pc)
        self.assertIn("Version: 9.19.0.99\n", pc)
        for text in (cfg, pc):
            self.assertNotIn(self.root, text)  # so `current` works too
        # verify checks them like the archive's files
        r = self.ok("verify", "--no-gpu", "--json")
        self.assertEqual(self.stage(r.json(), "files")["status"], "pass")
        with open(os.path.join(self.v19, "lib", "pkgconfig", "cudnn.pc"), "a") as f:
            f.write("Libs: -lother\n")
        r = self.run_cli("verify", "--no-gpu")
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("lib/pkgconfig/cudnn.pc", r.out + r.err)

    def stage(self, doc, name):
        return [s for s in doc["stages"] if s["stage"] == name][0]

    def test_cmake_find_package_links_and_runs(self):
        src = self.project("9.10")
        r = self.cmake(src)
        self.assertIn("found cuDNN 9.19.0.99 for CUDA 13 in %s" %
                      os.path.join(self.v19, "lib", "cmake", "CUDNN"), r.out)
        probe = os.path.join(src, "b", "probe")
        self.assertEqual(self.probe(probe), "header 91900 library 91900")
        # the program asks for libcudnn.so.9 (the soname), not a path
        needed = subprocess.run(["readelf", "-d", probe], capture_output=True, text=True).stdout
        self.assertIn("[libcudnn.so.9]", needed)
        # another version by exec: its own config, its own header
        src = self.project("9.14")
        r = self.cmake(src, "9.14")
        self.assertIn("found cuDNN 9.14.0.99", r.out)
        self.assertEqual(self.probe(os.path.join(src, "b", "probe"), "9.14"),
                         "header 91400 library 91900")

    def test_cmake_version_requests(self):
        """SameMajorVersion: a lower 9.x request finds 9.19, 8 and 9.20 do
        not (CMake names the file it did not accept), EXACT and ranges."""
        for request, found in (("9", True), ("9.19.0.99 EXACT", True), ("9.0...<10", True),
                               ("8", False), ("9.20", False), ("9.19.0.98 EXACT", False),
                               ("10...11", False)):
            with self.subTest(request=request):
                src = self.project(request)
                r = self.run_cli("exec", "--", "cmake", "-S", src, "-B",
                                 os.path.join(src, "b"))
                if found:
                    self.assertEqual(r.rc, 0, r)
                else:
                    self.assertNotEqual(r.rc, 0, r)
                    self.assertIn("CUDNNConfig.cmake, version: 9.19.0.99", r.out + r.err)

    def test_cmake_through_current_follows_switch(self):
        """With env's CMAKE_PREFIX_PATH (<root>/current), the same project
        configured again after a switch finds the other version."""
        cur = os.path.join(self.root, "current")
        env = {"CMAKE_PREFIX_PATH": cur}
        src = self.project()
        build = os.path.join(src, "b")
        cmd = ["cmake", "-S", src, "-B", build]
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(self.env, **env))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("found cuDNN 9.19.0.99 for CUDA 13 in %s/lib/cmake/CUDNN" % cur, r.stdout)
        self.ok("switch", "9.14")
        shutil.rmtree(build)
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(self.env, **env))
        self.assertIn("found cuDNN 9.14.0.99 for CUDA 13 in %s/lib/cmake/CUDNN" % cur, r.stdout)

    def test_pkg_config_compiles_links_and_runs(self):
        src = self.project()
        out = os.path.join(src, "probe-pc")
        r = self.ok("exec", "--", "pkg-config", "--modversion", "cudnn")
        self.assertEqual(r.out.strip(), "9.19.0.99")
        r = self.ok("exec", "9.14", "--", "sh", "-c",
                    'cc $CFLAGS "$1" $(pkg-config --cflags --libs cudnn) $LDFLAGS -o "$2"', "sh",
                    os.path.join(src, "probe.c"), out, env=build_env())
        self.assertEqual(self.probe(out, "9.14"), "header 91400 library 91900")
        # the variables alone (LIBRARY_PATH, CPATH): cc -lcudnn finds it too
        out2 = out + "2"
        self.ok("exec", "--", "sh", "-c", 'cc $CFLAGS "$1" -lcudnn $LDFLAGS -o "$2"', "sh",
                os.path.join(src, "probe.c"), out2, env=build_env())
        self.assertEqual(self.probe(out2), "header 91900 library 91900")


@unittest.skipUnless(have_tools("cmake", "pkg-config", "cc"), "needs cmake, pkg-config and cc")
class TestBuildRealCudnn(BuildTest):
    """The real cuDNN 9.19 of this machine, packed and installed: built
    through find_package(CUDNN CONFIG) (with cudnn.h, where the CUDA
    headers are here) and pkg-config, linked and run."""
    fixtures = ()

    def test_real_cudnn_builds(self):
        lib, header = find_real_cudnn()
        if not lib:
            self.skipTest("no real cuDNN (/usr/local/cuda/lib/libcudnn.so.9)")
        text = self.read(header)
        code = "%d%02d%02d" % tuple(int(re.search(r"#define CUDNN_%s\s+(\d+)" % n, text).group(1))
                                    for n in ("MAJOR", "MINOR", "PATCHLEVEL"))
        version = "%d.%d.%d.0" % (int(code[0]), int(code[1:3]), int(code[3:]))
        path, manifest = FX.pack_from(lib, version, 13, "zip", "--level", "0")
        self.ok("install", path, "--manifest", manifest)
        cuda_inc = os.path.join(os.path.dirname(os.path.dirname(lib)), "include")
        defines, env = (), build_env()
        if os.path.isfile(os.path.join(cuda_inc, "cuda_runtime_api.h")):
            defines = ("WITH_CUDNN_H",)
            env = build_env("-I" + cuda_inc)
        src = self.project("9", defines)
        r = self.cmake(src, env=env)
        self.assertIn("found cuDNN %s" % version, r.out)
        want = "header %s library %s" % (code, code)
        self.assertEqual(self.probe(os.path.join(src, "b", "probe")), want)
        out = os.path.join(src, "probe-pc")
        self.ok("exec", "--", "sh", "-c", 'cc $CFLAGS "$1" $(pkg-config --cflags --libs cudnn) '
                '$LDFLAGS -o "$2"', "sh", os.path.join(src, "probe.c"), out, env=env)
        self.assertEqual(self.probe(out), want)


@unittest.skipUnless(have_tools("cc"), "needs cc")
class TestVerifyBuild(BuildTest):
    """verify --build against the fake 9.19.0.99: compiled with this
    machine's cc, linked, run; a stale cudnn_version.h earlier on the
    include path, a missing libcudnn.so, no compiler."""
    fixtures = ()

    def setUp(self):
        super().setUp()
        archive, manifest = FX.fake("good", None, 13)
        self.ok("install", archive, "--manifest", manifest)
        self.vdir = os.path.join(self.root, "versions", "9.19.0.99-cuda13")
        self.tmpdir = os.path.join(self.tmp, "tmpdir")  # verify's TMPDIR
        os.mkdir(self.tmpdir)

    def verify(self, *args, env=None, code=0):
        # a new shell's LD_LIBRARY_PATH (env.sh): in the sanitizer build
        # cuDNN's dlopen of its sub-libraries goes through the sanitizer's
        # interceptor, whose RUNPATH (none) is the one that counts
        env = dict(build_env(), TMPDIR=self.tmpdir,
                   LD_LIBRARY_PATH=os.path.join(self.root, "current", "lib"), **(env or {}))
        r = self.run_cli("verify", "--no-gpu", "--build", "--json", *args, env=env)
        self.assertEqual(r.rc, code, r)
        doc = r.json()
        return doc, [s for s in doc["stages"] if s["stage"] == "build"][0]

    def test_passes_and_leaves_nothing(self):
        junit = os.path.join(self.tmp, "v.xml")
        doc, build = self.verify("--junit", junit)
        self.assertEqual(build["status"], "pass", build)
        self.assertIn("cc: compiled against %s/include/cudnn_version.h, linked and ran: "
                      "CUDNN_VERSION 91900, cudnnGetVersion() 91900" % self.vdir, build["finding"])
        self.assertEqual(os.listdir(self.tmpdir), [])  # the work folder went
        self.assertIn('name="9-build"', self.read(junit))
        # not asked for: skipped, and said so
        r = self.ok("verify", "--no-gpu")
        self.assertRegex(r.out, r"(?m)^build +skip +- +not asked for \(verify --build")

    def test_stale_header_earlier_on_the_include_path(self):
        """A cudnn_version.h of 9.4 in a folder CFLAGS names (as the CUDA
        toolkit's include folder often is): the program compiles and
        links, and the finding names that file."""
        stale = os.path.join(self.tmp, "cuda", "include")
        os.makedirs(stale)
        text = self.read(os.path.join(self.vdir, "include", "cudnn_version.h"))
        self.write(os.path.join(stale, "cudnn_version.h"),
                   re.sub(r"(#define CUDNN_MINOR\s+)\d+", r"\g<1>4", text))
        doc, build = self.verify(env={"CFLAGS": build_env("-O2 -I" + stale)["CFLAGS"]},
                                 code=EXIT["VERIFY_BUILD"])
        self.assertEqual(build["status"], "fail")
        self.assertIn("the compiler saw CUDNN_VERSION 90400 in %s/cudnn_version.h, the loaded "
                      "library is 91900" % stale, build["reason"])
        self.assertIn("remove or rename the stale %s/cudnn_version.h" % stale, build["next"])
        log = re.search(r"output in (\S+build\.log)", build["finding"]).group(1)
        self.assertTrue(log.startswith(self.tmpdir), log)
        self.assertIn("-I" + stale, self.read(log))  # the command, then its output
        # the GPU stages were judged as without --build
        self.assertEqual(doc["stages"][5]["stage"], "driver")

    def test_missing_import_library_names_the_folder(self):
        archive, manifest = FX.pack_from(FX.variant_dir("good"), "9.19.0.98", 13, "tar.xz",
                                         "--omit", "lib/libcudnn.so")
        self.ok("install", archive, "--manifest", manifest)
        doc, build = self.verify(code=EXIT["VERIFY_BUILD"])
        self.assertIn("linking needs libcudnn.so, and %s/lib has none" %
                      os.path.join(self.root, "versions", "9.19.0.98-cuda13"), build["reason"])

    def test_no_compiler_is_a_skip_with_the_reason(self):
        doc, build = self.verify(env={"CC": "/nonexistent/cc"})
        self.assertEqual(build["status"], "skip")
        self.assertIn("no C compiler: '/nonexistent/cc' was not found", build["reason"])

    def test_real_cudnn(self):
        lib, header = find_real_cudnn()
        if not lib:
            self.skipTest("no real cuDNN (/usr/local/cuda/lib/libcudnn.so.9)")
        path, manifest = FX.pack_from(lib, "9.19.0.0", 13, "zip", "--level", "0")
        self.ok("install", path, "--manifest", manifest)
        doc, build = self.verify()
        self.assertEqual(build["status"], "pass", build)
        self.assertIn("CUDNN_VERSION 91900, cudnnGetVersion() 91900", build["finding"])


if __name__ == "__main__":
    unittest.main()

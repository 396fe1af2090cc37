"""The tests' archives, from one place: what tests/fixtures/mkcudnn.py
packs (once per run, on first use, into one scratch folder per suite), the
fake cuDNN builds of tests/fake/variants.txt that CMake made into
CUDNNCTL_FAKE_DIR packed as releases, hostile archives and the TLS files of
the tests' server.  Used by the Linux CLI suites (tests/cli), the mirror of
tests/ansible and tests/action (fake_mirror.py) and the Wine suites.

Each ctest entry is a process of its own, and most pack the same few
archives: with CUDNNCTL_FIXTURE_CACHE (a folder; ctest sets one in the build
tree) a pack is made once per build and each process gets a copy of its
own, so that no test can change another's.  The key is what makes the
archive: mkcudnn.py's bytes, its arguments and, for a fake variant, the
name, size and time of each library it packs."""
import collections
import hashlib
import os
import shutil
import tempfile

from cctltest import MKCUDNN, REPO, mkcudnn_hostile, mkcudnn_pack
from redist_server import ensure_tls_files

VARIANTS_FILE = os.path.join(REPO, "tests", "fake", "variants.txt")

# code: cudnnGetVersion(); file: the version in the files (the release it
# packs as by default); cudart: {"linux"|"windows": cudnnGetCudartVersion()
# or None where it is not built}; special: as variants.txt says
Variant = collections.namedtuple("Variant", "code file cudart special")

# key: (version, cuda, platform (None: the suite's), format, mkcudnn pack args)
PACKS = {
    # the CLI suites (tests/cli/clitest.py)
    "v9_txz": ("9.19.0.99", 13, None, "tar.xz", []),
    "v9_zip": ("9.19.0.99", 13, None, "zip", []),
    # the same in xz blocks of 8 KiB: decoded on several threads
    "v9_txz_blocks": ("9.19.0.99", 13, None, "tar.xz", ["--xz-block-size", "8KiB"]),
    "v9c12_txz": ("9.19.0.99", 12, None, "tar.xz", []),
    "v914_txz": ("9.14.0.99", 12, None, "tar.xz", []),
    "v8_zip": ("8.9.7.99", 12, None, "zip", ["--layout", "v8"]),
    "v8_txz": ("8.9.7.99", 12, None, "tar.xz", ["--layout", "v8", "--flat"]),
    "old_tgz": ("8.9.7.98", 12, None, "tgz", ["--layout", "old-cuda-prefix"]),
    "incomplete": ("9.19.0.99", 13, None, "tar.xz", ["--omit", "lib/libcudnn_cnn.so.9.19.0"]),
    "windows": ("9.19.0.99", 13, "windows-x86_64", "zip", []),
    "linux": ("9.19.0.99", 13, "linux-x86_64", "tar.xz", []),  # for the Wine suite
    # the download suite's mirror (tests/cli/test_download.py)
    "c12": ("9.90.0.1", 12, None, "tar.xz", ["--fake-size", 65536]),
    "c13": ("9.90.0.1", 13, None, "tar.xz", ["--fake-size", 65536]),
    "win": ("9.90.0.1", 13, "windows-x86_64", "zip", ["--fake-size", 4096]),
    "zip13": ("9.92.0.1", 13, None, "zip", ["--fake-size", 65536]),  # tests/cli/test_stream.py
    "new": ("9.90.1.2", 12, None, "tar.xz", ["--fake-size", 4096]),
    "only13": ("9.91.0.3", 13, None, "tar.xz", ["--fake-size", 4096]),
    # a tar.xz of many xz blocks, streamed (tests/cli/test_stream.py)
    "blocks13": ("9.93.0.1", 13, None, "tar.xz", ["--fake-size", 65536,
                                                  "--xz-block-size", "8KiB"]),
}


def read_variants(path=VARIANTS_FILE):
    """{variant: Variant} of tests/fake/variants.txt."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split()
            if len(cols) != 6:
                raise ValueError("%s:%d: not 6 columns" % (path, n))
            name, code, fver, linux, windows, special = cols
            cudart = {k: None if v == "-" else int(v)
                      for k, v in (("linux", linux), ("windows", windows))}
            out[name] = Variant(int(code), fver, cudart, special)
    return out


def os_of(platform):
    return "windows" if platform.startswith("windows") else "linux"


class Fixtures:
    """One suite's fixtures: platform is what it installs (the default of
    pack and fake), fake_dir the build's tests/fake folder, parent where the
    scratch folder goes (default: the system's temporary folder)."""

    def __init__(self, platform, fake_dir=None, parent=None):
        self.platform = platform
        self.fake_dir = fake_dir or os.path.join(
            REPO, "build-win" if os_of(platform) == "windows" else "build", "tests", "fake")
        self.parent = parent
        self.dir = None
        self.cache = {}
        self.variants = read_variants()

    def base(self):
        """The scratch folder (made on first use)."""
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="cctl-fixtures-", dir=self.parent)
        return self.dir

    def cleanup(self):
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
            self.cache = {}

    def _made(self, out, what, make, inputs=None):
        """Runs make(folder) to fill the new folder out, through the folder
        CUDNNCTL_FIXTURE_CACHE when it is set: what (with mkcudnn.py's
        bytes, and the files of the folder inputs) is the key."""
        shared = os.environ.get("CUDNNCTL_FIXTURE_CACHE")
        if not shared:
            os.makedirs(out)
            make(out)
            return
        h = hashlib.sha256()
        with open(MKCUDNN, "rb") as f:
            h.update(f.read())
        h.update(repr([str(a) for a in what]).encode())
        if inputs:
            for name in sorted(os.listdir(inputs)):
                st = os.stat(os.path.join(inputs, name))
                h.update(repr((name, st.st_size, st.st_mtime_ns)).encode())
        done = os.path.join(shared, h.hexdigest()[:32])
        if not os.path.isdir(done):
            os.makedirs(shared, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix=".new-", dir=shared)
            try:
                make(tmp)
                os.rename(tmp, done)  # whole, or another process's is there
            except OSError:
                if not os.path.isdir(done):
                    raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(done, out)

    def _packed(self, out, manifest_name, args, inputs=None):
        """(archive, manifest) of mkcudnn_pack(out, manifest_name, *args)."""
        self._made(out, ("pack", manifest_name) + tuple(args),
                   lambda d: mkcudnn_pack(d, manifest_name, *args), inputs)
        archive = [n for n in os.listdir(out) if n != manifest_name]
        assert len(archive) == 1, (out, archive)
        return os.path.join(out, archive[0]), os.path.join(out, manifest_name)

    # -- archives mkcudnn.py makes up
    def pack(self, key):
        """(archive, manifest) of a PACKS entry."""
        if key not in self.cache:
            version, cuda, platform, fmt, extra = PACKS[key]
            out = os.path.join(self.base(), key)
            self.cache[key] = self._packed(out, "redistrib_%s.json" % key, (
                "--version", version, "--cuda", cuda, "--platform",
                platform or self.platform, "--format", fmt, *extra))
        return self.cache[key]

    def release(self, key):
        """(archive, version, platform, cuda) of a PACKS entry, as a mirror
        lists it (redist_server.build_mirror)."""
        version, cuda, platform, _, _ = PACKS[key]
        return self.pack(key)[0], version, platform or self.platform, str(cuda)

    # -- the fake cuDNN builds
    def variant_dir(self, variant):
        """The build's folder of a variant (its libraries)."""
        return os.path.join(self.fake_dir, variant)

    def dll(self, variant, part=""):
        return os.path.join(self.variant_dir(variant), "cudnn%s64_9.dll" % part)

    def have(self, variant):
        """Whether the build made the variant for this platform."""
        first = ("cudnn64_9.dll" if os_of(self.platform) == "windows"
                 else "libcudnn.so.%s" % ".".join(self.variants[variant].file.split(".")[:3]))
        return os.path.isfile(os.path.join(self.variant_dir(variant), first))

    def fake(self, variant, version=None, cuda=None, platform=None, fmt=None):
        """(archive, manifest) of a variant packed as a release: by default
        the version in its files, the CUDA major of its cudart for the
        platform, a zip for Windows and a tar.xz for Linux."""
        return self._fake(variant, version, cuda, platform, fmt)[0]

    def fake_release(self, variant, version=None, cuda=None, platform=None, fmt=None):
        """(archive, version, platform, cuda) of fake's archive, as a mirror
        lists it."""
        (archive, _), *rest = self._fake(variant, version, cuda, platform, fmt)
        return (archive, *rest)

    def _fake(self, variant, version, cuda, platform, fmt):
        v = self.variants[variant]
        platform = platform or self.platform
        version = version or v.file
        if cuda is None:
            cuda = v.cudart[os_of(platform)] // 1000
        fmt = fmt or ("zip" if os_of(platform) == "windows" else "tar.xz")
        key = ("fake", variant, version, str(cuda), platform, fmt)
        if key not in self.cache:
            out = os.path.join(self.base(), "fake-%s-%s-cuda%s-%s-%s" % (
                variant, version, cuda, platform, fmt))
            self.cache[key] = self._packed(out, "redistrib_fake.json", (
                "--from", self.variant_dir(variant), "--version", version, "--cuda", cuda,
                "--platform", platform, "--format", fmt), inputs=self.variant_dir(variant))
        return self.cache[key], version, platform, str(cuda)

    def pack_from(self, src, version, cuda, fmt="zip", *extra):
        """(archive, manifest) of the libraries in the folder src (a real
        cuDNN's lib/, headers from ../include) packed as a release, once."""
        key = ("from", os.path.realpath(src), version, str(cuda), fmt, extra)
        if key not in self.cache:
            out = os.path.join(self.base(), "from-%d" % len(self.cache))
            self.cache[key] = mkcudnn_pack(out, "redistrib_from.json", "--from", src,
                                           "--version", version, "--cuda", cuda,
                                           "--platform", self.platform, "--format", fmt, *extra)
        return self.cache[key]

    # -- the rest
    def hostile(self, kind, fmt="zip"):
        """A hostile archive of mkcudnn.py's kind, in a format."""
        key = ("hostile", kind, fmt)
        if key not in self.cache:
            name = "hostile-%s.%s" % (kind, fmt)
            out = os.path.join(self.base(), "hostile", name)
            self._made(out, key, lambda d: mkcudnn_hostile(kind, os.path.join(d, name)))
            self.cache[key] = os.path.join(out, name)
        return self.cache[key]

    def tls(self):
        """The folder of the tests' CA and server certificate."""
        return os.path.dirname(ensure_tls_files(os.path.join(self.base(), "tls"))[0])


# verify --python's probe: run by the interpreter under test as
#   python -c <this> FRAMEWORK MAIN[,MAIN...] OPS
# in a process of its own (one per framework, with a time limit).  MAIN:
# the platform's main cuDNN library of each major, newest first
# (libcudnn.so.9,libcudnn.so.8 or cudnn64_9.dll,cudnn64_8.dll), OPS: the
# newest one's ops library; both from cudnnctl's platform table.  It
# imports the framework, makes it load cuDNN the cheapest way the framework
# allows, then lists the cuDNN libraries mapped into this process and asks
# each for cudnnGetVersion; then makes each load its sub-libraries (its
# version checks, as the first convolution would) and lists those too.
# Prints tab-separated lines:
#   absent | skip WHY | version V | location DIR | built N | error TEXT |
#   lib N PATH | sub PATH
import os
import sys


def say(*fields):
    # UTF-8 whatever the console's code page (a path with a non-ASCII name)
    line = "\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields) + "\n"
    sys.stdout.buffer.write(line.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()


def load_dll(name, winmode=0, share=False):
    """Loads a library the way a framework's own C++ code does: on Windows
    LoadLibraryExW with the standard search (PATH included; ctypes' default
    since Python 3.8 leaves PATH out), LOAD_WITH_ALTERED_SEARCH_PATH (8)
    for a full path; elsewhere dlopen (RTLD_GLOBAL with share)."""
    import ctypes
    if sys.platform == "win32":
        return ctypes.CDLL(name, winmode=winmode)
    return ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL if share else ctypes.DEFAULT_MODE)


def mapped():
    paths = []
    if sys.platform == "win32":
        import ctypes
        from ctypes import wintypes
        psapi = ctypes.WinDLL("psapi")
        k32 = ctypes.WinDLL("kernel32")
        # handles are 64-bit: without these, ctypes passes 32-bit ints
        k32.GetCurrentProcess.restype = wintypes.HANDLE
        k32.GetCurrentProcess.argtypes = []
        psapi.EnumProcessModules.restype = wintypes.BOOL
        psapi.EnumProcessModules.argtypes = [wintypes.HANDLE,
                                             ctypes.POINTER(wintypes.HMODULE),
                                             wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
        k32.GetModuleFileNameW.restype = wintypes.DWORD
        k32.GetModuleFileNameW.argtypes = [wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]
        mods = (wintypes.HMODULE * 4096)()
        need = wintypes.DWORD()
        if not psapi.EnumProcessModules(k32.GetCurrentProcess(), mods, ctypes.sizeof(mods),
                                        ctypes.byref(need)):
            raise OSError("EnumProcessModules failed (error %d)" % ctypes.GetLastError())
        count = min(need.value // ctypes.sizeof(wintypes.HMODULE), len(mods))
        for m in mods[:count]:
            buf = ctypes.create_unicode_buffer(32768)
            if k32.GetModuleFileNameW(m, buf, 32768):
                paths.append(buf.value)
    else:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    paths.append(parts[5].strip())
    mains, subs = [], []
    for p in paths:
        b = os.path.basename(p).lower()
        # libcudnn.so.9 is mapped as its file, libcudnn.so.9.19.0
        main = any(b == m or b.startswith(m + ".") for m in MAINS)
        # a sub-library is named as its main one with _PART after the
        # stem: libcudnn_ops.so.9, cudnn_ops64_9.dll
        sub = not main and any(b.startswith(s + "_") for s in STEMS)
        if main and p not in mains:
            mains.append(p)
        elif sub and p not in subs:
            subs.append(p)
    return mains, subs


# cuDNN 9's, then 8.x's: each makes the main library load a sub-library
CHECKS = ("cudnnGraphVersionCheck", "cudnnOpsVersionCheck", "cudnnCnnVersionCheck",
          "cudnnAdvVersionCheck", "cudnnOpsInferVersionCheck", "cudnnOpsTrainVersionCheck",
          "cudnnCnnInferVersionCheck", "cudnnCnnTrainVersionCheck",
          "cudnnAdvInferVersionCheck", "cudnnAdvTrainVersionCheck")


def load_sublibraries(path):
    import ctypes
    try:
        lib = ctypes.CDLL(path)
    except Exception:
        return
    for name in CHECKS:
        try:
            getattr(lib, name)()
        except Exception:
            pass


def version_of(path):
    import ctypes
    try:
        f = ctypes.CDLL(path).cudnnGetVersion
        f.restype = ctypes.c_size_t
        return int(f())
    except Exception:
        return 0


def load_torch():
    import torch
    say("version", torch.__version__)
    say("location", os.path.dirname(torch.__file__))
    say("built", torch.backends.cudnn.version() or 0)


def load_onnxruntime():
    import onnxruntime
    say("version", onnxruntime.__version__)
    say("location", os.path.dirname(onnxruntime.__file__))
    if hasattr(onnxruntime, "preload_dlls"):
        onnxruntime.preload_dlls(cuda=False, cudnn=True, msvc=False)
    if not mapped()[0]:
        # what a CUDA session does: its provider library, which needs
        # cuDNN, loaded as the loader finds it
        capi = os.path.join(os.path.dirname(onnxruntime.__file__), "capi")
        name = ("onnxruntime_providers_cuda.dll" if sys.platform == "win32"
                else "libonnxruntime_providers_cuda.so")
        if os.path.exists(os.path.join(capi, name)):
            load_dll(os.path.join(capi, "onnxruntime_providers_shared.dll"
                                  if sys.platform == "win32"
                                  else "libonnxruntime_providers_shared.so"), 8,
                     share=True)
            load_dll(os.path.join(capi, name), 8)
        else:
            load_dll(MAINS[0])


def load_ctranslate2():
    import ctranslate2
    say("version", ctranslate2.__version__)
    say("location", os.path.dirname(ctranslate2.__file__))
    load_dll(MAINS[0])
    load_dll(OPS)


def load_cupy():
    import cupy
    say("version", cupy.__version__)
    say("location", os.path.dirname(cupy.__file__))
    try:  # CuPy 8 to 13
        from cupy_backends.cuda.libs import cudnn
    except ImportError:
        try:
            from cupy.cuda import cudnn
        except ImportError:
            say("skip", "CuPy %s has no cuDNN module (CuPy 14 removed it): it "
                "loads no cuDNN" % cupy.__version__)
            return
    loaded = cudnn.getVersion()  # loads it
    say("built", getattr(cudnn, "get_build_version", lambda: loaded)())


def load_tensorflow():
    import tensorflow
    say("version", tensorflow.__version__)
    say("location", os.path.dirname(tensorflow.__file__))
    info = tensorflow.sysconfig.get_build_info()
    say("built", info.get("cudnn_version", ""))
    tensorflow.config.list_physical_devices("GPU")


def load_jax():
    import jax
    say("version", jax.__version__)
    say("location", os.path.dirname(jax.__file__))
    jax.devices()


# Each framework verify --python knows (FRAMEWORKS in verify-python.c lists
# the same names; tests/check-frameworks.py fails when they differ).
LOADERS = {"torch": load_torch, "onnxruntime": load_onnxruntime, "ctranslate2": load_ctranslate2, "cupy": load_cupy, "tensorflow": load_tensorflow, "jax": load_jax}


fw = sys.argv[1]
MAINS = [m.lower() for m in sys.argv[2].split(",")] if len(sys.argv) > 2 else []
OPS = sys.argv[3] if len(sys.argv) > 3 else ""
# the main libraries' stems (libcudnn, cudnn): what their sub-libraries'
# names begin with
STEMS = sorted({m.split(".")[0].split("64")[0] for m in MAINS})
if fw == "--list":
    say(*LOADERS)
    sys.exit(0)
if fw not in LOADERS:
    say("error", "the probe has no loader for '%s'" % fw)
    sys.exit(0)
try:
    __import__(fw)
except ImportError:
    say("absent")
    sys.exit(0)
except Exception as e:
    say("error", "import %s: %s: %s" % (fw, type(e).__name__, e))
try:
    LOADERS[fw]()
except Exception as e:
    say("error", "%s: %s" % (type(e).__name__, e))
mains, _ = mapped()
for p in mains:
    say("lib", version_of(p), p)
for p in mains:
    load_sublibraries(p)
for p in mapped()[1]:
    say("sub", p)

/*
 * The platform table: what cudnnctl knows about each platform of NVIDIA's
 * manifests and each cuDNN major, in one place.  Archive scanning,
 * install, the version checks and verify all read it; a new platform, a
 * new major or a new run-time dependency is a row here.
 *
 * What must be present comes from here only for what the loader needs
 * (the libraries below); everything else an archive holds is checked
 * against the archive's own file list (the install record), so a library
 * added in a minor release (cudnn_engines_tensor_ir64_9.dll) needs no row.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

static const char *const linux8[] = {
	"libcudnn.so.8",           "libcudnn_adv_infer.so.8",
	"libcudnn_adv_train.so.8", "libcudnn_cnn_infer.so.8",
	"libcudnn_cnn_train.so.8", "libcudnn_ops_infer.so.8",
	"libcudnn_ops_train.so.8", NULL
};
static const char *const linux9[] = {
	"libcudnn.so.9",
	"libcudnn_adv.so.9",
	"libcudnn_cnn.so.9",
	"libcudnn_engines_precompiled.so.9",
	"libcudnn_engines_runtime_compiled.so.9",
	"libcudnn_graph.so.9",
	"libcudnn_heuristic.so.9",
	"libcudnn_ops.so.9",
	NULL
};
static const char *const win8[] = {
	"cudnn64_8.dll",           "cudnn_adv_infer64_8.dll",
	"cudnn_adv_train64_8.dll", "cudnn_cnn_infer64_8.dll",
	"cudnn_cnn_train64_8.dll", "cudnn_ops_infer64_8.dll",
	"cudnn_ops_train64_8.dll", NULL
};
static const char *const win9[] = {
	"cudnn64_9.dll",
	"cudnn_adv64_9.dll",
	"cudnn_cnn64_9.dll",
	"cudnn_engines_precompiled64_9.dll",
	"cudnn_engines_runtime_compiled64_9.dll",
	"cudnn_graph64_9.dll",
	"cudnn_heuristic64_9.dll",
	"cudnn_ops64_9.dll",
	NULL
};

static const struct cctl_libset linux_libs[] = {
	{ 8, linux8 }, { 9, linux9 }, { 0, NULL }
};
static const struct cctl_libset win_libs[] = {
	{ 8, win8 }, { 9, win9 }, { 0, NULL }
};

#define CUBLAS_FIX                                                             \
	"install cuBLAS for CUDA {cuda} (the CUDA toolkit, or pip install "   \
	"nvidia-cublas-cu{cuda}) and put the folder that holds it on the "     \
	"search path"
#define NVRTC_FIX                                                              \
	"install NVRTC for CUDA {cuda} (the CUDA toolkit, or pip install "    \
	"nvidia-cuda-nvrtc-cu{cuda}) and put the folder that holds it on the " \
	"search path"

/* What cuDNN loads on Linux beyond its DT_NEEDED entries, which the
 * dependencies stage reads from the files themselves. */
static const struct cctl_dep linux_deps[] = {
	{ "libcublasLt.so.%d", 0, 0, NULL, NULL, 0, "cuBLASLt", CUBLAS_FIX, NULL },
	{ "libnvrtc.so.%d", 12, 0, NULL, NULL, 0, "NVRTC", NVRTC_FIX, NULL },
	{ "libnvrtc.so.11.2", 11, 11, NULL, NULL, 0, "NVRTC", NVRTC_FIX, NULL },
	{ NULL, 0, 0, NULL, NULL, 0, NULL, NULL, NULL }
};

/* What cuDNN loads on Windows beyond its imports.  zlibwapi.dll: NVIDIA's
 * 8.x install guide names it; that 9.0 and 9.1 need it too is inferred
 * (conda-forge: "statically linked since 9.2"), so it is decided from the
 * DLLs themselves. */
static const struct cctl_dep win_deps[] = {
	{ "cublasLt64_%d.dll", 0, 0, NULL, NULL, 0, "cuBLASLt", CUBLAS_FIX, NULL },
	{ "nvrtc64_%d0_0.dll", 12, 0, NULL, NULL, 0, "NVRTC", NVRTC_FIX, NULL },
	{ "nvrtc64_112_0.dll", 11, 11, NULL, NULL, 0, "NVRTC", NVRTC_FIX, NULL },
	{ "zlibwapi.dll", 0, 0, "8.3", "9.2", 1, "zlib (ZLIB_WINAPI build)",
	  "zlibwapi.dll is not in NVIDIA's archive: get the x64 zlibwapi.dll "
	  "of zlib 1.2 (the one NVIDIA's cuDNN install guide links) and put it "
	  "next to {main} in {libdir}, or in a folder on PATH",
	  "NVIDIA documents it for 8.x; for 9.0 and 9.1 it is inferred "
	  "(conda-forge: zlib is linked in since 9.2)" },
	{ "msvcp140.dll", 0, 0, NULL, NULL, 0, "Visual C++ runtime",
	  "install the Microsoft Visual C++ Redistributable (x64)", NULL },
	{ "vcruntime140.dll", 0, 0, NULL, NULL, 0, "Visual C++ runtime",
	  "install the Microsoft Visual C++ Redistributable (x64)", NULL },
	{ "vcruntime140_1.dll", 0, 0, NULL, NULL, 0, "Visual C++ runtime",
	  "install the Microsoft Visual C++ Redistributable (x64)", NULL },
	{ NULL, 0, 0, NULL, NULL, 0, NULL, NULL, NULL }
};

/* env and exec put the install first on these (activate.c); env.sh on
 * the first three.  The build systems' lists: CMake's find_package and
 * pkg-config find the files buildcfg.c writes; cl.exe and link.exe read
 * INCLUDE and LIB. */
static const struct cctl_env_dir linux_env[] = {
	{ "LD_LIBRARY_PATH", "lib", NULL, 0 },
	{ "LIBRARY_PATH", "lib", NULL, 0 },
	{ "CPATH", "include", NULL, 0 },
	{ "CMAKE_PREFIX_PATH", "", NULL, 0 },
	{ "PKG_CONFIG_PATH", "lib/pkgconfig", NULL, 0 },
	{ NULL, NULL, NULL, 0 }
};
#define WIN_ENV(name, libs)                                                    \
	static const struct cctl_env_dir name[] = {                           \
		{ "PATH", "bin", NULL, 0 },                                    \
		{ "CMAKE_PREFIX_PATH", "", NULL, 0 },                          \
		{ "PKG_CONFIG_PATH", "lib/pkgconfig", NULL, 0 },               \
		{ "INCLUDE", "include", NULL, 1 },                             \
		{ "LIB", "lib", libs, 1 },                                     \
		{ NULL, NULL, NULL, 0 }                                        \
	}
/* the import library: lib\x64 from 8.8.0, lib before */
WIN_ENV(win_x64_env, "lib/x64");
WIN_ENV(win_arm64_env, "lib/arm64");

/* Drivers each CUDA major's builds need (NVIDIA's support matrix, as
 * ../shared/FACTS.md gives it): CUDA 11, 12; NULL where not known. */
static const char *const linux_min_driver[] = { "450.80.02", "525.60.13",
						NULL };
static const char *const win_min_driver[] = { "452.39", "527.41", NULL };

/* libcurl reads the proxy variables; on Windows http-win.c takes them
 * too, else the system's settings (automatic, then the WinHTTP ones) */
#define LINUX_PROXY                                                            \
	"behind a proxy, set HTTPS_PROXY=http://HOST:PORT (and NO_PROXY for "  \
	"the hosts reached directly)"
#define WIN_PROXY                                                              \
	"behind a proxy, set HTTPS_PROXY=http://HOST:PORT (and NO_PROXY), "  \
	"or the system's proxy (Settings > Network & internet > Proxy, or "   \
	"netsh winhttp set proxy HOST:PORT)"

#define LINUX(name, arch)                                                      \
	{ name, 0, "lib", NULL, "LD_LIBRARY_PATH", "libcuda.so.1",            \
	  "libcudnn*.so.%d", linux_libs,                                       \
	  linux_deps, linux_env, CCTL_SHELL_SH, "eval \"$(", ")\"",          \
	  "libcudart.so.%d", "/usr/local/cuda", "nvcc", linux_min_driver,      \
	  "$CUDNNCTL_ROOT, /opt/cudnn as root, else ~/.local/share/cudnn",     \
	  "/opt/cudnn or ~/.local/share/cudnn", LINUX_PROXY, 0, arch }
/* x64 zips keep the DLLs in bin\x64 from 9.23, arm64 ones in bin\arm64 */
#define WINDOWS(name, alt, env, machine, arch)                                 \
	{ name, 1, "bin", alt, "PATH", "nvcuda.dll", "cudnn*64_%d.dll",         \
	  win_libs, win_deps,                                                  \
	  env, CCTL_SHELL_POWERSHELL, "", " | Invoke-Expression",          \
	  "cudart64_%d.dll", NULL, "nvcc.exe", win_min_driver,                 \
	  "%CUDNNCTL_ROOT%, else %SystemDrive%\\cudnn", "C:\\cudnn", WIN_PROXY, \
	  machine, arch }

static const struct cctl_platform platforms[] = {
	LINUX("linux-x86_64", "x86_64"),
	LINUX("linux-sbsa", "aarch64"),
	LINUX("linux-aarch64", "aarch64"),
	LINUX("linux-ppc64le", "ppc64le"),
	WINDOWS("windows-x86_64", "bin/x64", win_x64_env, 0x8664, "x64"),
	WINDOWS("windows-arm64", "bin/arm64", win_arm64_env, 0xAA64, "arm64"),
};

const char *const cctl_layout_top[] = { "bin", "include", "lib", "LICENSE",
					NULL };
const char *const cctl_layout_renames[][2] = { { "lib64", "lib" },
					       { NULL, NULL } };

char *cctl__subst_d(const char *fmt, int v)
{
	const char *d = strstr(fmt, "%d");
	if (!d)
		return cctl_xstrdup(fmt);
	return cctl_xstrfmt("%.*s%d%s", (int)(d - fmt), fmt, v, d + 2);
}

static int ascii_caseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

static const struct cctl_platform *host_override;

const char *cctl_host_platform(void)
{
	const char *native;
	if (host_override)
		return host_override->name;
	native = cctl_os_native_platform();
	return cctl_platform_find(native) ? native : CCTL_OS_PLATFORM;
}

const struct cctl_platform *cctl_platform_process(void)
{
	return cctl_platform_find(CCTL_OS_PLATFORM);
}

int cctl_platform_set_host(struct cctl_ctx *ctx, const char *name)
{
	const struct cctl_platform *p = cctl_platform_find(name);
	if (!p || p->windows != cctl_platform_process()->windows) {
		cctl__error(ctx, CCTL_EUSAGE,
			    "--platform '%s' is not a platform of this operating "
			    "system",
			    name ? name : "");
		cctl__hint(ctx, "%s", cctl_platform_process()->windows
					      ? "use windows-x86_64 or windows-arm64"
					      : "use linux-x86_64, linux-sbsa, "
						"linux-aarch64 or linux-ppc64le");
		return CCTL_EUSAGE;
	}
	host_override = p;
	return 0;
}

const struct cctl_platform *cctl_platform_find(const char *name)
{
	for (size_t i = 0; name && i < CCTL_ARRAY_SIZE(platforms); i++)
		if (!strcmp(platforms[i].name, name))
			return &platforms[i];
	return NULL;
}

/* What NVIDIA's support matrices and release notes say of the oldest GPU
 * each build runs on; docs/research/cudnn-gpu-minimums.md has the rows,
 * footnotes and what could not be confirmed.  On an older GPU cudnnCreate
 * still succeeds and only the first kernel fails, so verify checks this
 * in the driver stage. */
static const struct cctl_gpu_floor gpu_floors[] = {
	{ 805, 809, 0, 50, "Maxwell (5.0)", NULL,
	  "NVIDIA cuDNN 8.9.5 and 8.9.6 support matrices" },
	{ 900, 910, 0, 50, "Maxwell (5.0)", NULL,
	  "NVIDIA cuDNN 9.0.0, 9.5.1 and 9.10.2 support matrices" },
	{ 911, 9999, 12, 75, "Turing (7.5)", "9.10.2 --cuda 12",
	  "NVIDIA cuDNN 9.17.0 support matrix (CUDA 12.x: 7.5 to 12.0); 9.11 "
	  "to 9.16 from the 9.11.0 release notes as pytorch/pytorch#162574 "
	  "cites them" },
	{ 911, 9999, 13, 75, "Turing (7.5)", "9.10.2 --cuda 12",
	  "NVIDIA cuDNN 9.17.0 support matrix (CUDA 13.x: 7.5 to 12.0)" },
	{ 911, 9999, 0, 50, "Maxwell (5.0)", NULL,
	  "NVIDIA cuDNN 9.0.0 to 9.10.2 support matrices (no cuDNN 9 "
	  "supports an older GPU)" },
};

const struct cctl_gpu_floor *cctl_gpu_floor(long v, int cuda)
{
	int mm = v >= 10000 ? (int)(v / 10000 * 100 + v % 10000 / 100)
			    : (int)(v / 1000 * 100 + v % 1000 / 100);
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(gpu_floors); i++) {
		const struct cctl_gpu_floor *f = &gpu_floors[i];
		if (mm >= f->from && mm <= f->to && (!f->cuda || f->cuda == cuda))
			return f;
	}
	return NULL;
}

char *cctl__real_path(const char *path)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	if (cctl_os_realpath(NULL, path, &b)) {
		cctl_buf_reset(&b);
		cctl_buf_adds(&b, path);
	}
	return cctl_buf_detach(&b);
}

char *cctl__lib_dir(const struct cctl_platform *p, const char *dir)
{
	if (p->lib_alt) {
		char *alt = cctl_path_join(dir, p->lib_alt, NULL);
		struct cctl_os_stat st;
		if (!cctl_os_stat(NULL, alt, &st) && st.type == CCTL_OS_DIR)
			return alt;
		free(alt);
	}
	return cctl_path_join(dir, p->lib_dir, NULL);
}

const struct cctl_platform *cctl_platform_host(void)
{
	return cctl_platform_find(cctl_host_platform());
}

const char *const *cctl_platform_libraries(const struct cctl_platform *p,
					   int major)
{
	for (const struct cctl_libset *l = p ? p->libsets : NULL; l && l->major;
	     l++)
		if (l->major == major)
			return l->names;
	return NULL;
}

const char *cctl_platform_main_library(const struct cctl_platform *p,
				       int major)
{
	const char *const *libs = cctl_platform_libraries(p, major);
	return libs ? libs[0] : NULL;
}

const char *cctl_platform_min_driver(const struct cctl_platform *p, int cuda)
{
	int i = cuda - 11;
	for (int k = 0; p && p->min_driver && k <= i; k++)
		if (!p->min_driver[k])
			return NULL;
	return p && p->min_driver && i >= 0 ? p->min_driver[i] : NULL;
}

int cctl_platform_is_library(const struct cctl_platform *p, int major,
			     const char *base_name)
{
	const char *star = strchr(p->lib_glob, '*');
	char *suffix = cctl__subst_d(star + 1, major);
	size_t pre = (size_t)(star - p->lib_glob), n = strlen(base_name),
	       sn = strlen(suffix);
	int ok = n >= pre + sn && !strncmp(base_name, p->lib_glob, pre) &&
		 (p->windows ? ascii_caseeq(base_name + n - sn, suffix)
			     : !strcmp(base_name + n - sn, suffix));
	free(suffix);
	return ok;
}

int cctl_dep_applies(const struct cctl_dep *dep, const char *version, int cuda)
{
	if ((dep->cuda_min && cuda < dep->cuda_min) ||
	    (dep->cuda_max && cuda > dep->cuda_max))
		return 0;
	if (!version)
		return !dep->since && !dep->before;
	return (!dep->since || cctl_version_cmp(version, dep->since) >= 0) &&
	       (!dep->before || cctl_version_cmp(version, dep->before) < 0);
}

char *cctl_dep_file(const struct cctl_dep *dep, int cuda)
{
	return cctl__subst_d(dep->file, cuda);
}

char *cctl_dep_fix(const struct cctl_dep *dep, int cuda, const char *libdir,
		   const char *main_library)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	for (const char *p = dep->fix; *p;) {
		if (!strncmp(p, "{cuda}", 6)) {
			cctl_buf_addf(&b, "%d", cuda);
			p += 6;
		} else if (!strncmp(p, "{libdir}", 8)) {
			cctl_buf_adds(&b, libdir ? libdir : "cuDNN's folder");
			p += 8;
		} else if (!strncmp(p, "{main}", 6)) {
			cctl_buf_adds(&b, main_library ? main_library : "cuDNN");
			p += 6;
		} else {
			cctl_buf_addch(&b, *p++);
		}
	}
	return cctl_buf_detach(&b);
}

/*
 * A fake cuDNN library for the failure paths of `cudnnctl verify`.  It
 * exports the entry points verify resolves and returns the values it was
 * built with (FAKE_VERSION, FAKE_CUDART).  Built as the main library and as
 * each sub-library; it never stands in for a claim about real cuDNN.
 *
 * Built with FAKE_CONV (the "gpu" variant), cudnnCreate succeeds and the
 * convolution API computes on the CPU, on the "device" pointers of the
 * fake driver (tests/fake/fake-cuda.c), which are host memory: with both,
 * verify's create and convolution stages run their whole course on a
 * machine without a GPU, so that the tests can choose which GPU fails.
 */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* dladdr */
#endif
#include <stddef.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 91900
#endif
#ifndef FAKE_CUDART
#define FAKE_CUDART 13010
#endif

#if defined(_WIN32)
#define FAKE_API __declspec(dllexport)
#else
#define FAKE_API __attribute__((visibility("default")))
#endif

#ifdef FAKE_NAMES_ZLIB
/* a library cuDNN would load by name (LoadLibrary("zlibwapi.dll")) */
FAKE_API const char *fake_loads_by_name(void)
{
	return "zlibwapi.dll";
}
#endif

#ifdef FAKE_NEEDS_ABSENT
/* links against a library the tests then leave out */
extern int cctl_absent_symbol(void);
FAKE_API int fake_uses_absent(void)
{
	return cctl_absent_symbol();
}
#endif

FAKE_API size_t cudnnGetVersion(void)
{
	return FAKE_VERSION;
}

FAKE_API size_t cudnnGetCudartVersion(void)
{
	return FAKE_CUDART;
}

FAKE_API const char *cudnnGetErrorString(int status)
{
	return status ? "CUDNN_STATUS_NOT_INITIALIZED (fake)" : "CUDNN_STATUS_SUCCESS";
}

#ifndef FAKE_CONV
FAKE_API int cudnnCreate(void **handle)
{
	*handle = NULL;
	return 1001; /* CUDNN_STATUS_NOT_INITIALIZED */
}
#else
#include <stdlib.h>

#define BAD_PARAM 2000 /* CUDNN_STATUS_BAD_PARAM */

static int handle_token;

FAKE_API int cudnnCreate(void **handle)
{
	*handle = &handle_token;
	return 0;
}

struct dims {
	int n, c, h, w;           /* tensor; filter: k, c, r, s */
	int pad_h, pad_w, u, v;   /* convolution */
};

static int make(void **d)
{
	return (*d = calloc(1, sizeof(struct dims))) ? 0 : 1; /* ALLOC_FAILED */
}

static int set4(void *d, int n, int c, int h, int w)
{
	struct dims *x = d;
	if (!x || n <= 0 || c <= 0 || h <= 0 || w <= 0)
		return BAD_PARAM;
	x->n = n;
	x->c = c;
	x->h = h;
	x->w = w;
	return 0;
}

static int drop(void *d)
{
	free(d);
	return 0;
}

FAKE_API int cudnnCreateTensorDescriptor(void **d) { return make(d); }
FAKE_API int cudnnCreateFilterDescriptor(void **d) { return make(d); }
FAKE_API int cudnnCreateConvolutionDescriptor(void **d) { return make(d); }
FAKE_API int cudnnDestroyTensorDescriptor(void *d) { return drop(d); }
FAKE_API int cudnnDestroyFilterDescriptor(void *d) { return drop(d); }
FAKE_API int cudnnDestroyConvolutionDescriptor(void *d) { return drop(d); }

FAKE_API int cudnnSetTensor4dDescriptor(void *d, int format, int type, int n,
					int c, int h, int w)
{
	return format || type ? BAD_PARAM : set4(d, n, c, h, w); /* NCHW, float */
}

FAKE_API int cudnnSetFilter4dDescriptor(void *d, int type, int format, int k,
					int c, int r, int s)
{
	return format || type ? BAD_PARAM : set4(d, k, c, r, s);
}

FAKE_API int cudnnSetConvolution2dDescriptor(void *d, int pad_h, int pad_w,
					     int u, int v, int dil_h, int dil_w,
					     int mode, int type)
{
	struct dims *x = d;
	if (!x || u <= 0 || v <= 0 || dil_h != 1 || dil_w != 1 || mode != 1 || type)
		return BAD_PARAM;
	x->pad_h = pad_h;
	x->pad_w = pad_w;
	x->u = u;
	x->v = v;
	return 0;
}

FAKE_API int cudnnSetConvolutionMathType(void *d, int math)
{
	(void)d;
	(void)math;
	return 0;
}

FAKE_API int cudnnGetConvolution2dForwardOutputDim(void *cd, void *xd, void *wd,
						   int *n, int *c, int *h, int *w)
{
	struct dims *conv = cd, *x = xd, *f = wd;
	if (x->c != f->c)
		return BAD_PARAM;
	*n = x->n;
	*c = f->n;
	*h = (x->h + 2 * conv->pad_h - f->h) / conv->u + 1;
	*w = (x->w + 2 * conv->pad_w - f->w) / conv->v + 1;
	return 0;
}

FAKE_API int cudnnGetConvolutionForwardWorkspaceSize(void *h, void *xd, void *wd,
						     void *cd, void *yd, int algo,
						     size_t *size)
{
	(void)h, (void)xd, (void)wd, (void)cd, (void)yd, (void)algo;
	*size = 0;
	return 0;
}

/* Cross-correlation, NCHW, on the CPU. */
FAKE_API int cudnnConvolutionForward(void *h, const void *alpha, void *xd,
				     const void *xp, void *wd, const void *wp,
				     void *cd, int algo, void *ws, size_t wss,
				     const void *beta, void *yd, void *yp)
{
	const struct dims *x = xd, *f = wd, *conv = cd, *y = yd;
	const float *in = xp, *flt = wp;
	float *out = yp, a = *(const float *)alpha, b = *(const float *)beta;
	(void)h, (void)algo, (void)ws, (void)wss;
	if (y->n != x->n || y->c != f->n || x->c != f->c)
		return BAD_PARAM;
	for (int n = 0; n < y->n; n++)
		for (int k = 0; k < y->c; k++)
			for (int i = 0; i < y->h; i++)
				for (int j = 0; j < y->w; j++) {
					double acc = 0;
					for (int c = 0; c < x->c; c++)
						for (int p = 0; p < f->h; p++)
							for (int q = 0; q < f->w; q++) {
								int yi = i * conv->u + p - conv->pad_h;
								int xj = j * conv->v + q - conv->pad_w;
								if (yi < 0 || yi >= x->h || xj < 0 ||
								    xj >= x->w)
									continue;
								acc += (double)in[((n * x->c + c) * x->h + yi) * x->w + xj] *
								       flt[((k * f->c + c) * f->h + p) * f->w + q];
							}
					float *o = &out[((n * y->c + k) * y->h + i) * y->w + j];
					*o = (float)(a * acc + (b != 0.0f ? b * *o : 0.0f));
				}
	return 0;
}
#endif

FAKE_API int cudnnDestroy(void *handle)
{
	(void)handle;
	return 0;
}

/*
 * The sub-library version checks cuDNN 9's main library exports
 * (cudnnOpsVersionCheck...): as the real one, the main library (FAKE_MAIN)
 * loads the sub-library by name (the loader's search: LD_LIBRARY_PATH, or
 * PATH on Windows, before its own folder's RUNPATH) and fails when it is
 * missing or reports another version; a sub-library answers for itself.
 */
#define FAKE_SUBLIBRARY_LOADING_FAILED 4002
#define FAKE_SUBLIBRARY_VERSION_MISMATCH 4001
#ifdef FAKE_MAIN
#ifdef _WIN32
#include <windows.h>
/* beside itself first, then by name (the loader's search) */
static void *fake_open(const char *part)
{
	char name[64], path[MAX_PATH + 64];
	HMODULE self = NULL, h;
	size_t i = 0;
	DWORD n;
	for (const char *p = "cudnn"; *p; p++)
		name[i++] = *p;
	for (; *part && i < 40; part++)
		name[i++] = *part;
	for (const char *p = "64_9.dll"; *p; p++)
		name[i++] = *p;
	name[i] = 0;
	GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
				   GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
			   (LPCSTR)(void *)fake_open, &self);
	n = GetModuleFileNameA(self, path, MAX_PATH);
	if (n && n < MAX_PATH) {
		char *sep = path + n;
		while (sep > path && sep[-1] != '\\' && sep[-1] != '/')
			sep--;
		for (i = 0; name[i]; i++)
			sep[i] = name[i];
		sep[i] = 0;
		if ((h = LoadLibraryA(path)))
			return (void *)h;
	}
	return (void *)LoadLibraryA(name);
}
static void *fake_sym(void *h, const char *name)
{
	return (void *)GetProcAddress((HMODULE)h, name);
}
#else
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* The loader's order for a library cuDNN 9 loads by name, spelled out:
 * LD_LIBRARY_PATH, then its own folder (RUNPATH $ORIGIN), then the cache
 * and the default folders.  Spelled out because a dlopen by name counts
 * the RUNPATH of its caller, and a sanitizer's dlopen interceptor is the
 * caller in the sanitizer build. */
static void *fake_open(const char *part)
{
	char name[64], path[4096];
	const char *list = getenv("LD_LIBRARY_PATH");
	Dl_info self;
	void *h;
	snprintf(name, sizeof(name), "libcudnn%s.so.9", part);
	while (list && *list) {
		size_t n = strcspn(list, ":");
		if (n && n < sizeof(path) - sizeof(name) - 2) {
			snprintf(path, sizeof(path), "%.*s/%s", (int)n, list, name);
			if ((h = dlopen(path, RTLD_NOW)))
				return h;
		}
		list += n + (list[n] ? 1 : 0);
	}
	if (dladdr((void *)fake_open, &self) && self.dli_fname) {
		const char *slash = strrchr(self.dli_fname, '/');
		if (slash && (size_t)(slash - self.dli_fname) < sizeof(path) - sizeof(name) - 2) {
			snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - self.dli_fname),
				 self.dli_fname, name);
			if ((h = dlopen(path, RTLD_NOW)))
				return h;
		}
	}
	return dlopen(name, RTLD_NOW);
}
static void *fake_sym(void *h, const char *name)
{
	return dlsym(h, name);
}
#endif
static int fake_check(const char *part)
{
	void *h = fake_open(part);
	size_t (*ver)(void);
	if (!h)
		return FAKE_SUBLIBRARY_LOADING_FAILED;
	*(void **)&ver = fake_sym(h, "cudnnGetVersion");
	if (!ver || ver() != FAKE_VERSION)
		return FAKE_SUBLIBRARY_VERSION_MISMATCH;
	return 0;
}
FAKE_API int cudnnGraphVersionCheck(void) { return fake_check("_graph"); }
FAKE_API int cudnnOpsVersionCheck(void) { return fake_check("_ops"); }
FAKE_API int cudnnCnnVersionCheck(void) { return fake_check("_cnn"); }
FAKE_API int cudnnAdvVersionCheck(void) { return fake_check("_adv"); }
#endif

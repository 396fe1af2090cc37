/*
 * verify's stages that load code: cuDNN itself (load), then the driver and
 * the GPU (driver, create, convolution).  See verify.c for the runner.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify-internal.h"

/* ------------------------------------------------------------- 5: load */

#define CCTL__RESOLVE(req, ret, name, params)                                  \
	if (!(*(void **)&api->name = cctl_os_dl_sym(handle, #name)) && req &&  \
	    !missing)                                                          \
		missing = #name;

static const char *resolve_cudnn(void *handle, struct cctl_cudnn_api *api)
{
	const char *missing = NULL;
	CCTL_CUDNN_FUNCS(CCTL__RESOLVE)
	return missing;
}

static const char *resolve_cuda(void *handle, struct cctl_cuda_api *api)
{
	const char *missing = NULL;
	CCTL_CUDA_FUNCS(CCTL__RESOLVE)
	return missing;
}

void cctl__stage_load(struct run *r)
{
	struct cctl_buf loaded = CCTL_BUF_INIT;
	const char *path = r->v->library, *missing;
	char got[32];
	int want_major, want_minor, want_patch;

	if (cctl_os_dl_open(r->ctx, path, &r->cudnn)) {
		cctl__fail(r, "see the dependencies stage; reinstall this version",
		     "%s", cctl__msg(r->ctx));
		return;
	}
	if (!cctl_os_dl_path(r->ctx, r->cudnn, &loaded))
		r->v->loaded = cctl_xstrdup(loaded.buf);
	if ((missing = resolve_cudnn(r->cudnn, &r->dnn))) {
		cctl__fail(r, "reinstall cuDNN: this is not a complete cuDNN library",
		     "%s does not export %s", path, missing);
		goto out;
	}
	r->v->cudnn_version = (long)r->dnn.cudnnGetVersion();
	r->v->cudart_version = (long)r->dnn.cudnnGetCudartVersion();
	cctl_decode_cudnn_version(r->v->cudnn_version, got, sizeof(got));
	cctl__finding(r, "%s: cuDNN %s (%ld), CUDA runtime %ld.%ld (%ld)",
		r->v->loaded ? r->v->loaded : path, got, r->v->cudnn_version,
		r->v->cudart_version / 1000, r->v->cudart_version % 1000 / 10,
		r->v->cudart_version);
	if (r->v->expected_version &&
	    sscanf(r->v->expected_version, "%d.%d.%d", &want_major, &want_minor,
		   &want_patch) == 3) {
		char want[32];
		snprintf(want, sizeof(want), "%d.%d.%d", want_major, want_minor,
			 want_patch);
		if (strcmp(want, got))
			cctl__fail(r,
			     "a new process loads another cuDNN than the one "
			     "installed: see the locate stage",
			     "loaded cuDNN %s, expected %s", got, want);
	}
	if (r->v->expected_cuda && r->v->cudart_version / 1000 != r->v->expected_cuda)
		cctl__fail(r, "install the build of cuDNN for your CUDA major",
		     "the library is built for CUDA %ld, expected CUDA %d",
		     r->v->cudart_version / 1000, r->v->expected_cuda);
	if (!r->v->expected_cuda)
		r->v->expected_cuda = (int)(r->v->cudart_version / 1000);
out:
	cctl_buf_release(&loaded);
}

/* ----------------------------------------------------------- 6: driver */

static const char *cu_error(struct run *r, int rc)
{
	const char *s = NULL;
	if (r->cu.cuGetErrorString && r->cu.cuGetErrorString(rc, &s) == 0 && s)
		return s;
	return "CUDA error";
}

/* The GPU against the oldest one the loaded build runs on (the table in
 * platform.c): below it cudnnCreate still succeeds and the first kernel
 * fails with a status that names nothing useful. */
static void gpu_fitness(struct run *r, const char *name)
{
	const struct cctl_gpu_floor *f =
		cctl_gpu_floor(r->v->cudnn_version, r->v->expected_cuda);
	int cc = r->v->cc_major * 10 + r->v->cc_minor;
	char got[32], next[512];
	if (!f || cc >= f->min_cc)
		return;
	cctl_decode_cudnn_version(r->v->cudnn_version, got, sizeof(got));
	snprintf(next, sizeof(next),
		 "cudnnctl install %s: the newest cuDNN that supports compute "
		 "capability %d.%d (source: %s)",
		 f->older ? f->older : "", r->v->cc_major, r->v->cc_minor, f->source);
	if (f->older)
		cctl__fail(r, next,
			   "GPU 0 (%s) has compute capability %d.%d; cuDNN %s for "
			   "CUDA %d runs on %s and newer only",
			   name, r->v->cc_major, r->v->cc_minor, got,
			   r->v->expected_cuda, f->names);
	else
		cctl__fail(r, "use a GPU of that compute capability or newer",
			   "GPU 0 (%s) has compute capability %d.%d; cuDNN %s runs on "
			   "%s and newer only (source: %s)",
			   name, r->v->cc_major, r->v->cc_minor, got, f->names,
			   f->source);
}

/* Sets r->stop when the GPU stages cannot go on. */
void cctl__stage_driver(struct run *r)
{
	const char *driver = r->plat->driver;
	enum cctl_stage here = r->current, next = (enum cctl_stage)(here + 1);
	char no_driver[128];
	const char *missing;
	char name[256] = "";
	size_t mem = 0;
	int rc, count = 0, version = 0, need;

	snprintf(no_driver, sizeof(no_driver), "no NVIDIA driver (%s not found)",
		 driver);
	if (cctl_os_dl_open(r->ctx, driver, &r->cuda)) {
		if (r->o->require_gpu) {
			cctl__fail(r, "install the NVIDIA driver", "no NVIDIA driver: %s",
			     cctl__msg(r->ctx));
			r->v->stage[r->current].code = CCTL_EVERIFY_NOGPU;
		}
		cctl__skip_rest(r, r->o->require_gpu ? next : here, no_driver);
		if (r->o->require_gpu)
			cctl__finding(r, "no driver");
		r->stop = 1;
		return;
	}
	if ((missing = resolve_cuda(r->cuda, &r->cu))) {
		cctl__fail(r, "update the NVIDIA driver", "%s does not export %s",
		     driver, missing);
		r->stop = 1;
		return;
	}
	rc = r->cu.cuInit(0);
	if (rc == CCTL_CUDA_ERROR_NO_DEVICE || (!rc && !r->cu.cuDeviceGetCount(&count) && !count)) {
		if (r->o->require_gpu) {
			cctl__fail(r, "check nvidia-smi; the driver sees no GPU",
			     "the driver found no GPU");
			r->v->stage[r->current].code = CCTL_EVERIFY_NOGPU;
			cctl__finding(r, "no GPU");
			cctl__skip_rest(r, next, "no GPU");
		} else {
			cctl__skip_rest(r, here, "the driver found no GPU");
		}
		r->stop = 1;
		return;
	}
	if (rc) {
		cctl__fail(r, "check nvidia-smi; reinstall or update the driver",
		     "cuInit failed: %s (%d)", cu_error(r, rc), rc);
		r->stop = 1;
		return;
	}
	r->cu.cuDriverGetVersion(&version);
	r->v->driver_version = version;
	r->cu.cuDeviceGetCount(&count);
	r->v->gpu_count = count;
	r->cu.cuDeviceGet(&r->dev, 0);
	r->cu.cuDeviceGetName(name, sizeof(name) - 1, r->dev);
	r->cu.cuDeviceGetAttribute(&r->v->cc_major, CCTL_CU_ATTR_CC_MAJOR, r->dev);
	r->cu.cuDeviceGetAttribute(&r->v->cc_minor, CCTL_CU_ATTR_CC_MINOR, r->dev);
	r->cu.cuDeviceTotalMem_v2(&mem, r->dev);
	r->v->gpu_name = cctl_xstrdup(name);
	r->v->gpu_memory = mem;
	cctl__finding(r, "driver supports CUDA %d.%d; %d GPU%s, using 0: %s "
		   "(compute %d.%d, %.0f GiB)",
		version / 1000, version % 1000 / 10, count, count == 1 ? "" : "s",
		name, r->v->cc_major, r->v->cc_minor,
		(double)mem / (1024.0 * 1024 * 1024));
	need = r->v->expected_cuda;
	if (need && version / 1000 < need)
		cctl__fail(r, "update the NVIDIA driver to one for this CUDA major (see "
			"NVIDIA's support matrix)",
		     "the driver supports CUDA %d.%d, cuDNN was built for CUDA %d",
		     version / 1000, version % 1000 / 10, need);
	gpu_fitness(r, name);
}

/* ----------------------------------------------------------- 7: create */

static const char *dnn_error(struct run *r, int st)
{
	const char *s = r->dnn.cudnnGetErrorString
				? r->dnn.cudnnGetErrorString(st)
				: NULL;
	return s ? s : "cuDNN error";
}

void cctl__stage_create(struct run *r)
{
	cctl_CUcontext cu_ctx = NULL;
	int rc, st;
	/* the primary context, so the driver API buffers of the next stage
	 * and cuDNN's own runtime share it */
	if ((rc = r->cu.cuDevicePrimaryCtxRetain(&cu_ctx, r->dev)) ||
	    (rc = r->cu.cuCtxSetCurrent(cu_ctx))) {
		cctl__fail(r, "check nvidia-smi", "cannot make a CUDA context: %s (%d)",
		     cu_error(r, rc), rc);
		return;
	}
	st = r->dnn.cudnnCreate(&r->handle);
	if (st) {
		r->handle = NULL;
		cctl__fail(r, "see the dependencies stage; check the driver",
		     "cudnnCreate returned %s (%d)", dnn_error(r, st), st);
		return;
	}
	cctl__finding(r, "cudnnCreate succeeded");
}

/* ------------------------------------------------------ 8: convolution */

enum { CN = 1, CC = 3, CH = 32, CW = 32, CK = 8, CR = 3, CS = 3 };

static uint64_t rng_state;

static float rnd(void)
{
	/* xorshift64*: fresh inputs each run, no libc state touched */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (float)((double)((rng_state * 2685821657736338717ull) >> 11) /
			       (double)(1ull << 53) * 2.0 -
		       1.0);
}

static void conv_reference(const float *x, const float *w, float *y)
{
	for (int k = 0; k < CK; k++)
		for (int i = 0; i < CH; i++)
			for (int j = 0; j < CW; j++) {
				double acc = 0;
				for (int c = 0; c < CC; c++)
					for (int p = 0; p < CR; p++)
						for (int q = 0; q < CS; q++) {
							int yi = i + p - 1, xj = j + q - 1;
							if (yi < 0 || yi >= CH || xj < 0 ||
							    xj >= CW)
								continue;
							acc += (double)x[(c * CH + yi) * CW + xj] *
							       w[((k * CC + c) * CR + p) * CS + q];
						}
				y[(k * CH + i) * CW + j] = (float)acc;
			}
}

/* The convolution's descriptors and device buffers. */
struct conv {
	cctl_cudnnTensorDesc xd, yd;
	cctl_cudnnFilterDesc wd;
	cctl_cudnnConvDesc cd;
	cctl_CUdeviceptr dx, dw, dy, dws;
	size_t ws;
	const char *step; /* the call that failed */
	int st, rc;       /* its cuDNN status or CUDA result */
};

static float x[CN * CC * CH * CW], w[CK * CC * CR * CS];
static float y[CN * CK * CH * CW], ref[CN * CK * CH * CW];

#define DNN(call)                                                              \
	do {                                                                   \
		c->step = #call;                                               \
		if ((c->st = r->dnn.call) != CCTL_CUDNN_STATUS_SUCCESS)        \
			return -1;                                             \
	} while (0)
#define CU(call)                                                               \
	do {                                                                   \
		c->step = #call;                                               \
		if ((c->rc = r->cu.call) != CCTL_CUDA_SUCCESS)                 \
			return -1;                                             \
	} while (0)

/* 1x3x32x32 input, 8 3x3 filters, padding 1: the output is 1x8x32x32. */
static int conv_describe(struct run *r, struct conv *c)
{
	int n, k, h, wo;
	DNN(cudnnCreateTensorDescriptor(&c->xd));
	DNN(cudnnSetTensor4dDescriptor(c->xd, CCTL_CUDNN_TENSOR_NCHW,
				       CCTL_CUDNN_DATA_FLOAT, CN, CC, CH, CW));
	DNN(cudnnCreateFilterDescriptor(&c->wd));
	DNN(cudnnSetFilter4dDescriptor(c->wd, CCTL_CUDNN_DATA_FLOAT,
				       CCTL_CUDNN_TENSOR_NCHW, CK, CC, CR, CS));
	DNN(cudnnCreateConvolutionDescriptor(&c->cd));
	DNN(cudnnSetConvolution2dDescriptor(c->cd, 1, 1, 1, 1, 1, 1,
					    CCTL_CUDNN_CROSS_CORRELATION,
					    CCTL_CUDNN_DATA_FLOAT));
	/* plain FP32 arithmetic: TF32 tensor cores would miss 1e-5 */
	DNN(cudnnSetConvolutionMathType(c->cd, CCTL_CUDNN_FMA_MATH));
	DNN(cudnnGetConvolution2dForwardOutputDim(c->cd, c->xd, c->wd, &n, &k,
						  &h, &wo));
	if (n != CN || k != CK || h != CH || wo != CW) {
		cctl__fail(r, "reinstall cuDNN",
			   "output shape %dx%dx%dx%d, expected 1x8x32x32", n, k, h,
			   wo);
		return 1;
	}
	DNN(cudnnCreateTensorDescriptor(&c->yd));
	DNN(cudnnSetTensor4dDescriptor(c->yd, CCTL_CUDNN_TENSOR_NCHW,
				       CCTL_CUDNN_DATA_FLOAT, CN, CK, CH, CW));
	DNN(cudnnGetConvolutionForwardWorkspaceSize(
		r->handle, c->xd, c->wd, c->cd, c->yd,
		CCTL_CUDNN_FWD_ALGO_IMPLICIT_GEMM, &c->ws));
	return 0;
}

/* Copies the inputs over, runs the convolution, computes the CPU
 * reference meanwhile and copies the result back. */
static int conv_run(struct run *r, struct conv *c)
{
	float alpha = 1.0f, beta = 0.0f;
	CU(cuMemAlloc_v2(&c->dx, sizeof(x)));
	CU(cuMemAlloc_v2(&c->dw, sizeof(w)));
	CU(cuMemAlloc_v2(&c->dy, sizeof(y)));
	if (c->ws)
		CU(cuMemAlloc_v2(&c->dws, c->ws));
	CU(cuMemcpyHtoD_v2(c->dx, x, sizeof(x)));
	CU(cuMemcpyHtoD_v2(c->dw, w, sizeof(w)));
	CU(cuMemcpyHtoD_v2(c->dy, y, sizeof(y))); /* NaN: unwritten stays NaN */
	DNN(cudnnConvolutionForward(r->handle, &alpha, c->xd,
				    (void *)(uintptr_t)c->dx, c->wd,
				    (void *)(uintptr_t)c->dw, c->cd,
				    CCTL_CUDNN_FWD_ALGO_IMPLICIT_GEMM,
				    (void *)(uintptr_t)c->dws, c->ws, &beta,
				    c->yd, (void *)(uintptr_t)c->dy));
	/* the CPU reference runs while the GPU works */
	conv_reference(x, w, ref);
	CU(cuCtxSynchronize());
	CU(cuMemcpyDtoH_v2(y, c->dy, sizeof(y)));
	return 0;
}

#undef DNN
#undef CU

/* The result against the CPU reference. */
static void conv_judge(struct run *r)
{
	double max_diff = 0, max_ref = 0;
	size_t unwritten = 0;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(y); i++) {
		double d, a = ref[i] < 0 ? -ref[i] : ref[i];
		if (isnan(y[i])) {
			unwritten++;
			continue;
		}
		d = y[i] - ref[i];
		d = d < 0 ? -d : d;
		if (d > max_diff)
			max_diff = d;
		if (a > max_ref)
			max_ref = a;
	}
	r->v->algorithm = "IMPLICIT_GEMM";
	r->v->max_rel_error = max_ref > 0 ? max_diff / max_ref : max_diff;
	cctl__finding(r, "1x3x32x32 * 8x3x3x3 float32, IMPLICIT_GEMM: max "
			 "relative error %.2g against the CPU",
		      r->v->max_rel_error);
	if (unwritten)
		cctl__fail(r, "reinstall cuDNN; check the driver",
			   "%zu of %zu output values were never written",
			   unwritten, CCTL_ARRAY_SIZE(y));
	else if (!(r->v->max_rel_error < 1e-5))
		cctl__fail(r, "reinstall cuDNN; check the driver and the GPU",
			   "the result differs from the CPU reference (relative "
			   "error %.3g, limit 1e-5)",
			   r->v->max_rel_error);
}

static void conv_free(struct run *r, struct conv *c)
{
	cctl_CUdeviceptr *bufs[] = { &c->dx, &c->dw, &c->dy, &c->dws };
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(bufs); i++)
		if (*bufs[i])
			r->cu.cuMemFree_v2(*bufs[i]);
	if (c->xd)
		r->dnn.cudnnDestroyTensorDescriptor(c->xd);
	if (c->yd)
		r->dnn.cudnnDestroyTensorDescriptor(c->yd);
	if (c->wd)
		r->dnn.cudnnDestroyFilterDescriptor(c->wd);
	if (c->cd)
		r->dnn.cudnnDestroyConvolutionDescriptor(c->cd);
}

void cctl__stage_conv(struct run *r)
{
	struct conv c;
	int ret;

	if (!r->dnn.cudnnConvolutionForward || !r->dnn.cudnnSetTensor4dDescriptor ||
	    !r->dnn.cudnnGetConvolutionForwardWorkspaceSize ||
	    !r->dnn.cudnnSetConvolutionMathType) {
		cctl__fail(r, "reinstall cuDNN", "the library lacks the convolution API");
		return;
	}
	memset(&c, 0, sizeof(c));
	rng_state = (uint64_t)(cctl_os_now_ms() * 1000.0) * 0x9e3779b97f4a7c15ull | 1;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(x); i++)
		x[i] = rnd();
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(w); i++)
		w[i] = rnd();
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(y); i++)
		y[i] = NAN;
	ret = conv_describe(r, &c);
	if (!ret)
		ret = conv_run(r, &c);
	if (!ret) {
		conv_judge(r);
	} else if (ret < 0) {
		/* the function's name, without the arguments */
		int n = (int)strcspn(c.step, "(");
		cctl__finding(r, "%.*s failed", n, c.step);
		if (c.rc)
			cctl__fail(r, "check nvidia-smi and the driver",
				   "%.*s returned %s (%d)", n, c.step,
				   cu_error(r, c.rc), c.rc);
		else
			cctl__fail(r, "check the dependencies stage (a missing "
				      "sub-library such as libcudnn_cnn or "
				      "cuBLASLt shows up only here); reinstall "
				      "cuDNN",
				   "%.*s returned %s (%d)", n, c.step,
				   dnn_error(r, c.st), c.st);
	}
	conv_free(r, &c);
}

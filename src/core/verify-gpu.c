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

/*
 * The fix for a load that failed because a library needs a newer C or C++
 * runtime than the system's: glibc says "version `GLIBC_2.33' not found
 * (required by /usr/lib/libstdc++.so.6)".  NULL for any other failure.
 */
static char *too_old_runtime(const char *msg)
{
	const char *v = strstr(msg, "version `"), *end, *by;
	char *ver, *fix;
	size_t n;

	if (!v || !(end = strstr(v += 9, "' not found")))
		return NULL;
	n = (size_t)(end - v);
	ver = cctl_xmalloc(n + 1);
	memcpy(ver, v, n);
	ver[n] = '\0';
	by = strstr(end, "(required by ");
	by = by ? by + 13 : "a library";
	n = strcspn(by, ")");
	if (!strncmp(ver, "GLIBC_", 6))
		fix = cctl_xstrfmt("%.*s needs glibc %s, newer than this system's: this "
				   "cuDNN build needs a newer distribution (cuDNN 9 needs "
				   "glibc 2.27 or later; each library can need more); "
				   "install an older cuDNN, or run where glibc is newer",
				   (int)n, by, ver + 6);
	else if (!strncmp(ver, "GLIBCXX_", 8) || !strncmp(ver, "CXXABI_", 7))
		fix = cctl_xstrfmt("%.*s needs %s from a newer C++ runtime "
				   "(libstdc++) than the one the loader found: put a "
				   "newer libstdc++.so.6 first (a newer GCC's, or "
				   "conda's libstdcxx-ng), or install an older cuDNN",
				   (int)n, by, ver);
	else
		fix = cctl_xstrfmt("%.*s needs symbol version %s, which the library "
				   "it was built against has and the one found here "
				   "lacks: see the dependencies stage",
				   (int)n, by, ver);
	free(ver);
	return fix;
}

void cctl__stage_load(struct run *r)
{
	struct cctl_buf loaded = CCTL_BUF_INIT;
	const char *path = r->v->library, *missing;
	char got[32];
	int want_major, want_minor, want_patch;

	if (cctl_os_dl_open(r->ctx, path, &r->cudnn)) {
		char *fix = too_old_runtime(cctl__msg(r->ctx));
		cctl__fail(r, fix ? fix : "see the dependencies stage; reinstall this version",
		     "%s", cctl__msg(r->ctx));
		free(fix);
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
	cctl__check_sublibraries(r);
out:
	cctl_buf_release(&loaded);
}

/* ----------------------------------------------------------- 6: driver */

/* The driver's name of a result ("CUDA_ERROR_OUT_OF_MEMORY") and its
 * description, as "NAME: description" or whichever the driver gives. */
static const char *cu_error(struct run *r, int rc, char *buf, size_t n)
{
	const char *name = NULL, *desc = NULL;
	if (r->cu.cuGetErrorName && r->cu.cuGetErrorName(rc, &name))
		name = NULL;
	if (r->cu.cuGetErrorString && r->cu.cuGetErrorString(rc, &desc))
		desc = NULL;
	if (name && desc)
		snprintf(buf, n, "%s: %s", name, desc);
	else
		snprintf(buf, n, "%s", name ? name : desc ? desc : "CUDA error");
	return buf;
}

/* The GPU against the oldest one the loaded build runs on (the table in
 * platform.c): below it cudnnCreate still succeeds and the first kernel
 * fails with a status that names nothing useful.  r is the GPU's run. */
static void gpu_fitness(struct run *r)
{
	const struct cctl_gpu *g = r->gpu;
	const struct cctl_gpu_floor *f =
		cctl_gpu_floor(r->v->cudnn_version, r->v->expected_cuda);
	int cc = g->cc_major * 10 + g->cc_minor;
	char got[32], next[512];
	if (!f || cc >= f->min_cc)
		return;
	cctl_decode_cudnn_version(r->v->cudnn_version, got, sizeof(got));
	snprintf(next, sizeof(next),
		 "cudnnctl install %s: the newest cuDNN that supports compute "
		 "capability %d.%d (source: %s)",
		 f->older ? f->older : "", g->cc_major, g->cc_minor, f->source);
	if (f->older)
		cctl__fail(r, next,
			   "compute capability %d.%d; cuDNN %s for CUDA %d runs on "
			   "%s and newer only",
			   g->cc_major, g->cc_minor, got, r->v->expected_cuda,
			   f->names);
	else
		cctl__fail(r, "use a GPU of that compute capability or newer",
			   "compute capability %d.%d; cuDNN %s runs on %s and newer "
			   "only (source: %s)",
			   g->cc_major, g->cc_minor, got, f->names, f->source);
}

/* The GPUs --device names (NULL: the first; "all"; "0,2"), into v->gpus.
 * Fails the stage for a number the driver does not have. */
static int pick_gpus(struct run *r, int count)
{
	const char *spec = r->o->devices, *p;
	struct cctl_verify *v = r->v;
	if (!spec || !strcmp(spec, "all")) {
		int n = spec ? count : 1;
		v->gpus = cctl_xcalloc((size_t)n, sizeof(*v->gpus));
		for (int i = 0; i < n; i++)
			v->gpus[v->ngpus++].index = i;
		return 0;
	}
	v->gpus = cctl_xcalloc(strlen(spec) / 2 + 1, sizeof(*v->gpus));
	for (p = spec; *p;) {
		char *end;
		long i = strtol(p, &end, 10);
		int seen = 0;
		if (end == p || (*end && *end != ',') || i < 0 || i >= count) {
			cctl__fail(r, "pick GPUs the driver lists (nvidia-smi -L), "
				      "or --device all",
				   "no GPU %.*s: the driver sees %d (0-%d)",
				   (int)strcspn(p, ","), p, count, count - 1);
			return -1;
		}
		for (size_t k = 0; k < v->ngpus; k++)
			seen |= v->gpus[k].index == (int)i;
		if (!seen)
			v->gpus[v->ngpus++].index = (int)i;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static void format_uuid(const cctl_CUuuid *u, char out[48])
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	snprintf(out, 48,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* What the driver says of one GPU, and its fitness, into its own run. */
static void describe_gpu(struct run *d)
{
	struct cctl_gpu *g = d->gpu;
	char name[256] = "";
	size_t mem = 0;
	cctl_CUuuid u;
	d->current = CCTL_STAGE_DRIVER;
	d->cu.cuDeviceGet(&d->dev, g->index);
	d->cu.cuDeviceGetName(name, sizeof(name) - 1, d->dev);
	d->cu.cuDeviceGetAttribute(&g->cc_major, CCTL_CU_ATTR_CC_MAJOR, d->dev);
	d->cu.cuDeviceGetAttribute(&g->cc_minor, CCTL_CU_ATTR_CC_MINOR, d->dev);
	d->cu.cuDeviceTotalMem_v2(&mem, d->dev);
	g->name = cctl_xstrdup(name);
	g->memory = mem;
	if (d->cu.cuDeviceGetUuid_v2 && !d->cu.cuDeviceGetUuid_v2(&u, d->dev))
		format_uuid(&u, g->uuid);
	cctl__finding(d, "%s (compute %d.%d, %.0f GiB)", name, g->cc_major,
		      g->cc_minor, (double)mem / (1024.0 * 1024 * 1024));
	gpu_fitness(d);
}

/* The GPUs' results of stage s in its own row: every GPU's problems,
 * named; the stage fails when one GPU failed, and the run goes on for the
 * others as long as one passed. */
static void gather(struct run *r, enum cctl_stage s)
{
	struct cctl_verify *v = r->v;
	size_t ran = 0, passed = 0;
	for (size_t k = 0; k < v->ngpus; k++) {
		const struct cctl_gpu *g = &v->gpus[k];
		const struct cctl_stage_result *st = &g->stage[s];
		if (st->status == CCTL_SKIP)
			continue;
		ran++;
		passed += st->status != CCTL_FAIL;
		for (size_t i = 0; i < st->nnotes; i++)
			cctl__judge(r, st->notes[i].status, st->notes[i].next,
				    "GPU %d (%s): %s", g->index, g->name,
				    st->notes[i].reason);
	}
	if (v->ngpus > 1 && s != CCTL_STAGE_DRIVER)
		cctl__finding(r, "%zu of %zu GPUs passed", passed, v->ngpus);
	else if (v->ngpus == 1 && s != CCTL_STAGE_DRIVER)
		cctl__finding(r, "%s", v->gpus[0].stage[s].finding
					       ? v->gpus[0].stage[s].finding
					       : "");
	if (passed && passed < ran)
		r->go_on = 1;
}

/* Sets r->stop when the GPU stages cannot go on. */
void cctl__stage_driver(struct run *r)
{
	const char *driver = r->plat->driver;
	enum cctl_stage here = r->current, next = (enum cctl_stage)(here + 1);
	struct cctl_verify *v = r->v;
	struct cctl_buf list = CCTL_BUF_INIT;
	char no_driver[128], err[256];
	const char *missing;
	int rc, count = 0, version = 0, need;

	snprintf(no_driver, sizeof(no_driver), "no NVIDIA driver (%s not found)",
		 driver);
	if (cctl_os_dl_open(r->ctx, driver, &r->cuda)) {
		if (r->o->require_gpu) {
			cctl__fail(r, "install the NVIDIA driver", "no NVIDIA driver: %s",
			     cctl__msg(r->ctx));
			v->stage[r->current].code = CCTL_EVERIFY_NOGPU;
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
			v->stage[r->current].code = CCTL_EVERIFY_NOGPU;
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
		     "cuInit failed: %s (%d)", cu_error(r, rc, err, sizeof(err)), rc);
		r->stop = 1;
		return;
	}
	r->cu.cuDriverGetVersion(&version);
	v->driver_version = version;
	r->cu.cuDeviceGetCount(&count);
	v->gpu_count = count;
	if (pick_gpus(r, count)) {
		r->stop = 1;
		return;
	}
	r->devs = cctl_xcalloc(v->ngpus, sizeof(*r->devs));
	for (size_t k = 0; k < v->ngpus; k++) {
		struct run *d = &r->devs[k];
		*d = *r;
		d->devs = NULL;
		d->gpu = &v->gpus[k];
		d->stages = v->gpus[k].stage;
		describe_gpu(d);
		cctl_buf_addf(&list, "%s%d", k ? "," : "", v->gpus[k].index);
	}
	v->gpu_name = cctl_xstrdup(v->gpus[0].name);
	v->cc_major = v->gpus[0].cc_major;
	v->cc_minor = v->gpus[0].cc_minor;
	v->gpu_memory = v->gpus[0].memory;
	r->dev = r->devs[0].dev;
	if (v->ngpus == 1)
		cctl__finding(r, "driver supports CUDA %d.%d; %d GPU%s, using %d: %s",
			      version / 1000, version % 1000 / 10, count,
			      count == 1 ? "" : "s", v->gpus[0].index,
			      v->gpus[0].stage[here].finding);
	else
		cctl__finding(r, "driver supports CUDA %d.%d; %d GPUs, using %s",
			      version / 1000, version % 1000 / 10, count, list.buf);
	cctl_buf_release(&list);
	need = v->expected_cuda;
	if (need && version / 1000 < need) {
		cctl__fail(r, "update the NVIDIA driver to one for this CUDA major (see "
			"NVIDIA's support matrix)",
		     "the driver supports CUDA %d.%d, cuDNN was built for CUDA %d",
		     version / 1000, version % 1000 / 10, need);
		return;
	}
	gather(r, here);
}

/* ----------------------------------------------------------- 7: create */

static const char *dnn_error(struct run *r, int st)
{
	const char *s = r->dnn.cudnnGetErrorString
				? r->dnn.cudnnGetErrorString(st)
				: NULL;
	return s ? s : "cuDNN error";
}

/* Free memory the check needs on a GPU: its buffers are small, but cuDNN
 * loads its kernels into the context and allocates as it goes. */
#define NEED_FREE (256ull << 20)

/* One GPU's create stage, on its own thread. */
static void create_on(struct run *d)
{
	size_t free_b = 0, total_b = 0;
	char err[256];
	int rc, st;
	/* the primary context, so the driver API buffers of the next stage
	 * and cuDNN's own runtime share it */
	if ((rc = d->cu.cuDevicePrimaryCtxRetain(&d->cu_ctx, d->dev))) {
		d->cu_ctx = NULL;
		cctl__fail(d, "check nvidia-smi: another process may hold the GPU "
			      "in exclusive mode, or the GPU has failed",
			   "cannot make a CUDA context: %s (%d)",
			   cu_error(d, rc, err, sizeof(err)), rc);
		return;
	}
	if ((rc = d->cu.cuCtxSetCurrent(d->cu_ctx))) {
		cctl__fail(d, "check nvidia-smi", "cannot use the CUDA context: %s (%d)",
			   cu_error(d, rc, err, sizeof(err)), rc);
		return;
	}
	if (d->cu.cuMemGetInfo_v2 && !d->cu.cuMemGetInfo_v2(&free_b, &total_b)) {
		d->gpu->free_memory = free_b;
		if (free_b < NEED_FREE) {
			cctl__fail(d, "free GPU memory (nvidia-smi lists the "
				      "processes that hold it)",
				   "%.0f MiB free of %.0f MiB; the check needs %llu MiB",
				   (double)free_b / 1048576.0, (double)total_b / 1048576.0,
				   NEED_FREE >> 20);
			return;
		}
	}
	st = d->dnn.cudnnCreate(&d->handle);
	if (st) {
		d->handle = NULL;
		cctl__fail(d, "see the dependencies stage; check the driver",
		     "cudnnCreate returned %s (%d)", dnn_error(d, st), st);
		return;
	}
	cctl__finding(d, "cudnnCreate succeeded");
}

/* Runs fn on every GPU whose previous stage passed, one thread each,
 * timing each; skips the others. */
static void on_each_gpu(struct run *r, void (*fn)(void *))
{
	enum cctl_stage s = r->current;
	struct cctl_os_thread **t = cctl_xcalloc(r->v->ngpus, sizeof(*t));
	for (size_t k = 0; k < r->v->ngpus; k++) {
		struct run *d = &r->devs[k];
		d->current = s;
		if (d->stages[s - 1].status == CCTL_FAIL ||
		    d->stages[s - 1].status == CCTL_SKIP) {
			char why[96];
			snprintf(why, sizeof(why), "not run: the %s stage failed "
				 "on this GPU", cctl_stage_name(s - 1));
			cctl__skip_rest(d, s, why);
			continue;
		}
		if (!(t[k] = cctl_os_thread_start(fn, d)))
			fn(d);
	}
	for (size_t k = 0; k < r->v->ngpus; k++)
		if (t[k])
			cctl_os_thread_join(t[k]);
	free(t);
	gather(r, s);
}

static void timed(struct run *d, void (*stage)(struct run *))
{
	double t0 = cctl_os_now_ms();
	struct cctl_stage_result *st = &d->stages[d->current];
	stage(d);
	st->ms = cctl_os_now_ms() - t0;
	if (!st->finding)
		st->finding = cctl_xstrdup("");
}

static void create_main(void *arg)
{
	timed(arg, create_on);
}

void cctl__stage_create(struct run *r)
{
	on_each_gpu(r, create_main);
	r->handle = r->devs[0].handle;
}

void cctl__gpus_done(struct run *r)
{
	if (!r->devs)
		return;
	for (size_t k = 0; k < r->v->ngpus; k++) {
		struct run *d = &r->devs[k];
		if (d->handle && !d->cu.cuCtxSetCurrent(d->cu_ctx))
			d->dnn.cudnnDestroy(d->handle);
		if (d->cu_ctx)
			d->cu.cuDevicePrimaryCtxRelease_v2(d->dev);
	}
	free(r->devs);
	r->devs = NULL;
}

/* ------------------------------------------------------ 8: convolution */

enum { CN = 1, CC = 3, CH = 32, CW = 32, CK = 8, CR = 3, CS = 3 };

static float rnd(uint64_t *state)
{
	/* xorshift64*: fresh inputs each run, no libc state touched */
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return (float)((double)((*state * 2685821657736338717ull) >> 11) /
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

/* One GPU's convolution: descriptors, device buffers, host data. */
struct conv {
	cctl_cudnnTensorDesc xd, yd;
	cctl_cudnnFilterDesc wd;
	cctl_cudnnConvDesc cd;
	cctl_CUdeviceptr dx, dw, dy, dws;
	size_t ws;
	const char *step; /* the call that failed */
	int st, rc;       /* its cuDNN status or CUDA result */
	float x[CN * CC * CH * CW], w[CK * CC * CR * CS];
	float y[CN * CK * CH * CW], ref[CN * CK * CH * CW];
};

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
	CU(cuMemAlloc_v2(&c->dx, sizeof(c->x)));
	CU(cuMemAlloc_v2(&c->dw, sizeof(c->w)));
	CU(cuMemAlloc_v2(&c->dy, sizeof(c->y)));
	if (c->ws)
		CU(cuMemAlloc_v2(&c->dws, c->ws));
	CU(cuMemcpyHtoD_v2(c->dx, c->x, sizeof(c->x)));
	CU(cuMemcpyHtoD_v2(c->dw, c->w, sizeof(c->w)));
	CU(cuMemcpyHtoD_v2(c->dy, c->y, sizeof(c->y))); /* NaN: unwritten stays NaN */
	DNN(cudnnConvolutionForward(r->handle, &alpha, c->xd,
				    (void *)(uintptr_t)c->dx, c->wd,
				    (void *)(uintptr_t)c->dw, c->cd,
				    CCTL_CUDNN_FWD_ALGO_IMPLICIT_GEMM,
				    (void *)(uintptr_t)c->dws, c->ws, &beta,
				    c->yd, (void *)(uintptr_t)c->dy));
	/* the CPU reference runs while the GPU works */
	conv_reference(c->x, c->w, c->ref);
	CU(cuCtxSynchronize());
	CU(cuMemcpyDtoH_v2(c->y, c->dy, sizeof(c->y)));
	return 0;
}

#undef DNN
#undef CU

/* The result against the CPU reference. */
static void conv_judge(struct run *r, const struct conv *c)
{
	double max_diff = 0, max_ref = 0;
	size_t unwritten = 0;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(c->y); i++) {
		double d, a = c->ref[i] < 0 ? -c->ref[i] : c->ref[i];
		if (isnan(c->y[i])) {
			unwritten++;
			continue;
		}
		d = c->y[i] - c->ref[i];
		d = d < 0 ? -d : d;
		if (d > max_diff)
			max_diff = d;
		if (a > max_ref)
			max_ref = a;
	}
	r->gpu->algorithm = "IMPLICIT_GEMM";
	r->gpu->max_rel_error = max_ref > 0 ? max_diff / max_ref : max_diff;
	cctl__finding(r, "1x3x32x32 * 8x3x3x3 float32, IMPLICIT_GEMM: max "
			 "relative error %.2g against the CPU",
		      r->gpu->max_rel_error);
	if (unwritten)
		cctl__fail(r, "reinstall cuDNN; check the driver",
			   "%zu of %zu output values were never written",
			   unwritten, CCTL_ARRAY_SIZE(c->y));
	else if (!(r->gpu->max_rel_error < 1e-5))
		cctl__fail(r, "reinstall cuDNN; check the driver and the GPU",
			   "the result differs from the CPU reference (relative "
			   "error %.3g, limit 1e-5)",
			   r->gpu->max_rel_error);
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

/* One GPU's convolution, on its own thread. */
static void conv_on(struct run *d)
{
	struct conv *c;
	uint64_t seed;
	char err[256];
	int ret;

	if ((ret = d->cu.cuCtxSetCurrent(d->cu_ctx))) {
		cctl__fail(d, "check nvidia-smi", "cannot use the CUDA context: %s (%d)",
			   cu_error(d, ret, err, sizeof(err)), ret);
		return;
	}
	c = cctl_xcalloc(1, sizeof(*c));
	seed = ((uint64_t)(cctl_os_now_ms() * 1000.0) + (uint64_t)d->gpu->index) *
		       0x9e3779b97f4a7c15ull | 1;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(c->x); i++)
		c->x[i] = rnd(&seed);
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(c->w); i++)
		c->w[i] = rnd(&seed);
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(c->y); i++)
		c->y[i] = NAN;
	ret = conv_describe(d, c);
	if (!ret)
		ret = conv_run(d, c);
	if (!ret) {
		conv_judge(d, c);
	} else if (ret < 0) {
		/* the function's name, without the arguments */
		int n = (int)strcspn(c->step, "(");
		cctl__finding(d, "%.*s failed", n, c->step);
		if (c->rc)
			cctl__fail(d, "check nvidia-smi and the driver's log (an "
				      "Xid or ECC error means the GPU needs "
				      "service)",
				   "%.*s returned %s (%d)", n, c->step,
				   cu_error(d, c->rc, err, sizeof(err)), c->rc);
		else
			cctl__fail(d, "check the dependencies stage (a missing "
				      "sub-library such as libcudnn_cnn or "
				      "cuBLASLt shows up only here); reinstall "
				      "cuDNN",
				   "%.*s returned %s (%d)", n, c->step,
				   dnn_error(d, c->st), c->st);
	}
	conv_free(d, c);
	free(c);
}

static void conv_main(void *arg)
{
	timed(arg, conv_on);
}

void cctl__stage_conv(struct run *r)
{
	if (!r->dnn.cudnnConvolutionForward || !r->dnn.cudnnSetTensor4dDescriptor ||
	    !r->dnn.cudnnGetConvolutionForwardWorkspaceSize ||
	    !r->dnn.cudnnSetConvolutionMathType) {
		cctl__fail(r, "reinstall cuDNN", "the library lacks the convolution API");
		return;
	}
	on_each_gpu(r, conv_main);
	r->v->algorithm = r->v->gpus[0].algorithm;
	r->v->max_rel_error = r->v->gpus[0].max_rel_error;
}

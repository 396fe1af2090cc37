/*
 * What verify's three files share: the state of one run, the helpers that
 * record what a stage found, and the stage functions the stage table
 * (CCTL_STAGE_MAP in cudnnctl.h) names.
 *
 *   verify.c       the runner: picks what is checked, runs the stages in
 *                  order, stops at the first failure
 *   verify-host.c  locate, files, version, dependencies (nothing loaded)
 *   verify-gpu.c   load, driver, create, convolution
 */
#ifndef CUDNNCTL_VERIFY_INTERNAL_H
#define CUDNNCTL_VERIFY_INTERNAL_H

#include "../platform/os.h"
#include "gpu-api.h"
#include "internal.h"

/* State shared by the stages of one run. */
struct run {
	int go_on; /* the current stage failed, but later ones are safe */
	int stop;  /* the current stage passed, but the later ones cannot run */
	int foreign; /* the DLLs are right for the install's platform, but
			this process cannot load them (arm64 DLLs, x64 exe) */
	struct cctl_ctx *ctx;
	const struct cctl_verify_opts *o;
	struct cctl_verify *v;
	const struct cctl_root *root;
	struct cctl_install rec; /* the install checked, when there is one */
	int have_rec;
	int major;               /* cuDNN major looked for */
	const struct cctl_platform *plat; /* this machine's layout facts */
	char *dir;               /* folder of the install, or of the library */
	char *libdir;            /* where its libraries are */
	char *lib_path;          /* library search list of a new process;
				    NULL: as stored for new sessions (Windows) */
	char *session;           /* that stored list, for the checks */
	void *cudnn;             /* loaded main library */
	void *cuda;              /* loaded driver library */
	struct cctl_cudnn_api dnn;
	struct cctl_cuda_api cu;
	cctl_cudnnHandle handle;
	int dev;
	enum cctl_stage current;
	double t0;
	/* where findings go: v->stage, or for a GPU's own run its stage[] */
	struct cctl_stage_result *stages;
	/* the GPU stages: one run per GPU of v->gpus (a copy of this one
	 * with gpu, dev, handle and cu_ctx its own), each on its own thread */
	struct cctl_gpu *gpu;
	struct run *devs;
	cctl_CUcontext cu_ctx; /* the GPU's primary context, once retained */
};

/* What the current stage found (replaces an earlier finding). */
void cctl__finding(struct run *r, const char *fmt, ...) CCTL_FORMAT(2, 3);
/* Adds a note of status st (CCTL_WARN or CCTL_FAIL) with its own fix
 * (next, may be NULL) to the current stage, and raises the stage's status
 * to st.  A failure also sets the stage's exit code. */
void cctl__judge(struct run *r, enum cctl_status st, const char *next,
		 const char *fmt, ...) CCTL_FORMAT(4, 5);
#define cctl__fail(r, next, ...) cctl__judge(r, CCTL_FAIL, next, __VA_ARGS__)
/* Marks the stages from `from` on as skipped, for `why`. */
void cctl__skip_rest(struct run *r, enum cctl_stage from, const char *why);

/* The load stage's second half (verify-libs.c): cuDNN made to load every
 * sub-library through its version checks, then every cuDNN library
 * mapped into this process judged against the main one's folder and
 * version. */
void cctl__check_sublibraries(struct run *r);

/* Ends the GPU stages: every GPU's cuDNN handle destroyed and primary
 * context released (verify-gpu.c). */
void cctl__gpus_done(struct run *r);

/* Path helpers of the stages. */
char *cctl__dir_of(const char *path);
/* A file, or a link that leads to one. */
int cctl__file_exists(const char *path);
int cctl__same_file(const char *a, const char *b);
/* True when the PATH-style list holds dir as one of its entries. */
int cctl__path_has(const char *list, const char *dir);

#define CCTL__STAGE_FN(id, fn, name, code, gpu) void cctl__stage_##fn(struct run *r);
CCTL_STAGE_MAP(CCTL__STAGE_FN)
#undef CCTL__STAGE_FN

#endif

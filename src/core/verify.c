/*
 * cudnnctl verify: will a new process find the cuDNN meant, load it with
 * all its dependencies, and run a convolution on the GPU?
 *
 * The stages are the rows of CCTL_STAGE_MAP (cudnnctl.h), each timed:
 * locate, files, version, dependencies (verify-host.c), load, driver,
 * create, convolution (verify-gpu.c).  This file is the runner.  The first
 * failure stops the run (a later stage would only repeat it, or crash on a
 * damaged file); the stages after it are reported as skipped with that
 * reason.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify-internal.h"

const char *cctl_status_name(enum cctl_status s)
{
	static const char *const names[] = { "pass", "warn", "fail", "skip" };
	return s <= CCTL_SKIP ? names[s] : "?";
}

void cctl_decode_cudnn_version(long v, char *out, size_t n)
{
	if (v >= 10000) /* 9.x and later: MAJOR*10000 + MINOR*100 + PATCH */
		snprintf(out, n, "%ld.%ld.%ld", v / 10000, v % 10000 / 100,
			 v % 100);
	else /* 8.x: MAJOR*1000 + MINOR*100 + PATCH */
		snprintf(out, n, "%ld.%ld.%ld", v / 1000, v % 1000 / 100, v % 100);
}

/* ------------------------------------------------- what a stage found */

void cctl__finding(struct run *r, const char *fmt, ...)
{
	struct cctl_stage_result *s = &r->stages[r->current];
	struct cctl_buf b = CCTL_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	cctl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(s->finding);
	s->finding = cctl_buf_detach(&b);
}

void cctl__judge(struct run *r, enum cctl_status st, const char *next,
		 const char *fmt, ...)
{
	struct cctl_stage_result *s = &r->stages[r->current];
	struct cctl_stage_note *note;
	struct cctl_buf b = CCTL_BUF_INIT;
	enum cctl_status top = CCTL_PASS;
	va_list ap;

	s->notes = cctl_xrealloc(s->notes, (s->nnotes + 1) * sizeof(*s->notes));
	note = &s->notes[s->nnotes++];
	note->status = st;
	va_start(ap, fmt);
	cctl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	note->reason = cctl_buf_detach(&b);
	note->next = next ? cctl_xstrdup(next) : NULL;

	/* the stage says what its worst notes say; its fix is the one of the
	 * first of them, so a hint always belongs to the problem it follows */
	for (size_t i = 0; i < s->nnotes; i++)
		if (s->notes[i].status > top)
			top = s->notes[i].status;
	free(s->next);
	s->next = NULL;
	for (size_t i = 0; i < s->nnotes; i++) {
		if (s->notes[i].status != top)
			continue;
		cctl_buf_addf(&b, "%s%s", b.len ? "; " : "", s->notes[i].reason);
		if (!s->next && s->notes[i].next)
			s->next = cctl_xstrdup(s->notes[i].next);
	}
	free(s->reason);
	s->reason = cctl_buf_detach(&b);
	s->status = top;
	if (top == CCTL_FAIL && !s->code)
		s->code = cctl_stage_code(r->current);
}

static void skip_one(struct run *r, enum cctl_stage i, const char *why)
{
	struct cctl_stage_result *s = &r->stages[i];
	s->status = CCTL_SKIP;
	free(s->reason);
	s->reason = cctl_xstrdup(why);
	if (!s->finding)
		s->finding = cctl_xstrdup("not run");
}

void cctl__skip_rest(struct run *r, enum cctl_stage from, const char *why)
{
	for (int i = from; i < CCTL_STAGE_COUNT; i++)
		skip_one(r, (enum cctl_stage)i, why);
}

/* ------------------------------------------------------------- paths */

char *cctl__dir_of(const char *path)
{
	const char *s = cctl__last_sep(path);
	return s ? cctl_xstrfmt("%.*s", (int)(s - path), path) : cctl_xstrdup(".");
}

int cctl__file_exists(const char *path)
{
	struct cctl_buf real = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	int ok;
	ok = !cctl_os_realpath(NULL, path, &real) &&
	     !cctl_os_stat(NULL, real.buf, &st) && st.type == CCTL_OS_FILE;
	cctl_buf_release(&real);
	return ok;
}

int cctl__same_file(const char *a, const char *b)
{
	struct cctl_buf ra = CCTL_BUF_INIT, rb = CCTL_BUF_INIT;
	int same;
	same = !cctl_os_realpath(NULL, a, &ra) &&
	       !cctl_os_realpath(NULL, b, &rb) && !strcmp(ra.buf, rb.buf);
	cctl_buf_release(&ra);
	cctl_buf_release(&rb);
	return same;
}

int cctl__path_has(const char *list, const char *dir)
{
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	size_t len = strlen(dir);
	while (list && *list) {
		size_t n = strcspn(list, sep);
		if (n == len && !strncmp(list, dir, n))
			return 1;
		list += n + (list[n] ? 1 : 0);
	}
	return 0;
}

/* ----------------------------------------------------------- the target */

/* The install's own folders and the search list a new process gets
 * with it (r->have_rec). */
static void install_paths(struct run *r, const char *env_path)
{
	/* the install's own platform (an arm64 build checked by an x64
	 * cudnnctl.exe): its folders and its DLLs' machine */
	const struct cctl_platform *own = cctl_platform_find(r->rec.platform);
	if (own && own->windows == r->plat->windows && own != r->plat) {
		/* install took it as this machine's (it checks, or --platform
		 * said so): the search a new process does is that machine's */
		cctl_platform_set_host(NULL, own->name);
		r->plat = own;
	}
	r->v->id = cctl_xstrdup(r->rec.id);
	r->v->expected_version = cctl_xstrdup(r->rec.version);
	r->v->expected_cuda = r->rec.cuda;
	r->major = atoi(r->rec.version);
	/* the version's own folder: `current` leads there, or (where it
	 * cannot be a link) names it */
	r->dir = cctl_path_join(r->root->path, "versions", r->rec.id, NULL);
	/* Windows 9.23 and later keep the DLLs in bin/x64 (bin/arm64) */
	r->libdir = cctl__lib_dir(r->plat, r->dir);
	/* what a new shell gets: env.sh puts current/lib first, the system
	 * mode leaves the list to ld.so.conf.d */
	if (r->session) {
		/* judged from the registry, in lib_search */
		if (!r->rec.active)
			r->lib_path = cctl__path_list_prepend(r->libdir, r->session);
	} else if (!r->rec.active) {
		/* as it would be once switched to */
		r->lib_path = cctl__path_list_prepend(r->libdir, env_path);
	} else if (!cctl__activation_is_system(r->root)) {
		/* a shell that sourced env.sh is what new shells get (with
		 * whatever the user's profile added after it); one opened
		 * before the change gets env.sh applied */
		char *cur = cctl_path_join(r->root->path, "current",
					   r->plat->lib_dir, NULL);
		struct cctl_os_stat st;
		if (cctl_os_stat(NULL, cur, &st) || st.type != CCTL_OS_DIR) {
			/* `current` names the version (Windows without
			 * junctions): what CUDNN_PATH and PATH get */
			free(cur);
			cur = cctl_xstrdup(r->libdir);
		}
		if (cctl__path_has(env_path, cur))
			r->lib_path = cctl_xstrdup(env_path);
		else
			r->lib_path = cctl__path_list_prepend(cur, env_path);
		free(cur);
	}
}

/* The install asked for, else the active one, into r->rec. */
static int find_install(struct run *r)
{
	char *active = NULL;
	int ret;
	if (r->o->version) {
		if ((ret = cctl_store_find(r->ctx, r->root, r->o->version,
					   r->o->cuda, &r->rec)))
			return ret;
		r->have_rec = 1;
		return 0;
	}
	if ((ret = cctl_store_active(r->ctx, r->root, &active)))
		return ret;
	if (active && !(ret = cctl_store_find(r->ctx, r->root, active, 0, &r->rec)))
		r->have_rec = 1;
	free(active);
	return ret;
}

/* Decides what is checked: the install asked for, the active one, or
 * whatever the loader finds. */
static int pick_target(struct run *r)
{
	const char *env_path = cctl_os_getenv(cctl_platform_host()->lib_var);
	struct cctl_buf sess = CCTL_BUF_INIT;
	int ret;

	r->plat = cctl_platform_host();
	/* Windows: a new process takes PATH from the registry */
	if (!cctl_os_session_path(NULL, &sess))
		r->session = cctl_buf_detach(&sess);
	cctl_buf_release(&sess);
	if (r->root && (ret = find_install(r)))
		return ret;
	if (r->have_rec && r->session && cctl__activation_is_ci(r->root)) {
		/* activated in CI mode: the registry was left alone, later
		 * steps get the folder from the pipeline, as below */
		free(r->session);
		r->session = NULL;
	}
	if (r->have_rec)
		install_paths(r, env_path);
	if (!r->lib_path && !r->session)
		r->lib_path = cctl_xstrdup(env_path ? env_path : "");
	return 0;
}

/* ---------------------------------------------------------------- run */

static void stage_clear(struct cctl_stage_result *s)
{
	free(s->finding);
	free(s->reason);
	s->finding = s->reason = NULL;
	s->status = CCTL_PASS;
}

static void begin(struct run *r, enum cctl_stage s)
{
	r->current = s;
	r->t0 = cctl_os_now_ms();
}

/* Ends a stage; returns 1 when the run goes on. */
static int end(struct run *r)
{
	struct cctl_stage_result *s = &r->v->stage[r->current];
	char why[128];
	int go_on = r->go_on;
	r->go_on = 0; /* only ever for the stage that set it */
	s->ms = cctl_os_now_ms() - r->t0;
	if (!s->finding)
		s->finding = cctl_xstrdup("");
	if (s->status != CCTL_FAIL || go_on)
		return 1;
	snprintf(why, sizeof(why), "not run: the %s stage failed",
		 cctl_stage_name(r->current));
	if (r->current + 1 < CCTL_STAGE_COUNT)
		cctl__skip_rest(r, r->current + 1, why);
	return 0;
}

static const struct {
	const char *name;
	int code;
	int needs_gpu;
	void (*fn)(struct run *r);
} stages[CCTL_STAGE_COUNT] = {
#define CCTL__STAGE_ROW(id, fn, name, code, gpu)                               \
	[CCTL_STAGE_##id] = { name, CCTL_E##code, gpu, cctl__stage_##fn },
	CCTL_STAGE_MAP(CCTL__STAGE_ROW)
#undef CCTL__STAGE_ROW
};

const char *cctl_stage_name(enum cctl_stage s)
{
	return s < CCTL_STAGE_COUNT ? stages[s].name : "?";
}

int cctl_stage_code(enum cctl_stage s)
{
	return s < CCTL_STAGE_COUNT ? stages[s].code : CCTL_EFAIL;
}

int cctl_stage_needs_gpu(enum cctl_stage s)
{
	return s < CCTL_STAGE_COUNT && stages[s].needs_gpu;
}

int cctl_verify(struct cctl_ctx *ctx, const struct cctl_root *root,
		const struct cctl_verify_opts *o, struct cctl_verify *v)
{
	struct run r;
	double start = cctl_os_now_ms();
	int ret = 0;

	memset(v, 0, sizeof(*v));
	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	r.o = o;
	r.v = v;
	r.root = root;
	r.stages = v->stage;
	if ((ret = pick_target(&r)))
		goto out;
	for (int i = 0, stopped = 0; i < CCTL_STAGE_COUNT; i++) {
		if (stopped) {
			/* the build stage (last) needs the library loaded, not
			 * the GPU: it runs whatever the GPU stages did (and,
			 * not asked for, says so whatever came before) */
			enum cctl_status load = v->stage[CCTL_STAGE_LOAD].status;
			if (i != CCTL_STAGE_BUILD ||
			    (o->build && (load == CCTL_FAIL || load == CCTL_SKIP)))
				continue;
			stage_clear(&v->stage[i]);
		}
		if (stages[i].needs_gpu && o->no_gpu) {
			skip_one(&r, (enum cctl_stage)i, "--no-gpu");
			continue;
		}
		if (i == CCTL_STAGE_LOAD && r.foreign) {
			/* the files, versions and imports were read; loading
			 * them takes a process of their architecture */
			char why[200];
			snprintf(why, sizeof(why),
				 "not run: %s DLLs load only in an %s process, "
				 "and this cudnnctl is %s",
				 r.plat->arch, r.plat->arch,
				 cctl_platform_process()->arch);
			cctl__skip_rest(&r, (enum cctl_stage)i, why);
			break;
		}
		begin(&r, (enum cctl_stage)i);
		stages[i].fn(&r);
		if (!end(&r) || r.stop)
			stopped = 1;
	}
	for (int i = 0; i < CCTL_STAGE_COUNT; i++)
		if (v->stage[i].status == CCTL_FAIL) {
			ret = v->stage[i].code ? v->stage[i].code : CCTL_EFAIL;
			cctl__error(ctx, ret, "%s: %s", cctl_stage_name(i),
				    v->stage[i].reason ? v->stage[i].reason : "");
			if (v->stage[i].next)
				cctl__hint(ctx, "%s", v->stage[i].next);
			break;
		}
out:
	cctl__gpus_done(&r);
	/* the libraries stay mapped: cuDNN and the driver start threads
	 * that do not expect to be unloaded before exit */
	if (r.have_rec)
		cctl_install_release(&r.rec);
	free(r.dir);
	free(r.libdir);
	free(r.lib_path);
	free(r.session);
	v->total_ms = cctl_os_now_ms() - start;
	return ret;
}

static void stages_release(struct cctl_stage_result *stage)
{
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		struct cctl_stage_result *s = &stage[i];
		free(s->finding);
		free(s->reason);
		free(s->next);
		for (size_t k = 0; k < s->nnotes; k++) {
			free(s->notes[k].reason);
			free(s->notes[k].next);
		}
		free(s->notes);
	}
}

void cctl_verify_release(struct cctl_verify *v)
{
	stages_release(v->stage);
	for (size_t i = 0; i < v->ncopies; i++) {
		free(v->copies[i].path);
		free(v->copies[i].origin);
	}
	free(v->copies);
	for (size_t i = 0; i < v->nlibs; i++) {
		free(v->libs[i].path);
		free(v->libs[i].version);
		free(v->libs[i].origin);
	}
	free(v->libs);
	free(v->id);
	free(v->expected_version);
	free(v->library);
	free(v->loaded);
	free(v->gpu_name);
	for (size_t g = 0; g < v->ngpus; g++) {
		free(v->gpus[g].name);
		stages_release(v->gpus[g].stage);
	}
	free(v->gpus);
	memset(v, 0, sizeof(*v));
}

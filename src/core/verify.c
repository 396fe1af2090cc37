/*
 * cudnnctl verify: will a new process find the cuDNN meant, load it with
 * all its dependencies, and run a convolution on the GPU?
 *
 * Eight stages, each timed: locate, files, version, dependencies, load,
 * driver, create, convolution.  The first failure stops the run (a later
 * stage would only repeat it, or crash on a damaged file); the stages after
 * it are reported as skipped with that reason.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "gpu-api.h"
#include "internal.h"

static const char *const stage_names[CCTL_STAGE_COUNT] = {
	"locate", "files", "version", "dependencies",
	"load",   "driver", "create", "convolution"
};

const char *cctl_stage_name(enum cctl_stage s)
{
	return s < CCTL_STAGE_COUNT ? stage_names[s] : "?";
}

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

/* State shared by the stages of one run. */
struct run {
	int go_on; /* the current stage failed, but later ones are safe */
	int stop;  /* the current stage passed, but the later ones cannot run */
	struct cctl_ctx *ctx;
	const struct cctl_verify_opts *o;
	struct cctl_verify *v;
	const struct cctl_root *root;
	struct cctl_install rec; /* the install checked, when there is one */
	int have_rec;
	int major;               /* cuDNN major looked for */
	char *platform;
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
};

static void set_str(char **dst, const char *fmt, va_list ap)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	cctl_buf_vaddf(&b, fmt, ap);
	free(*dst);
	*dst = cctl_buf_detach(&b);
}

static void finding(struct run *r, const char *fmt, ...) CCTL_FORMAT(2, 3);
static void finding(struct run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_str(&r->v->stage[r->current].finding, fmt, ap);
	va_end(ap);
}

/* Raises the stage's status to `st` (pass < warn < fail) with a reason;
 * a later reason of the same level is appended. */
static void judge(struct run *r, enum cctl_status st, const char *next,
		  const char *fmt, ...) CCTL_FORMAT(4, 5);
static void judge(struct run *r, enum cctl_status st, const char *next,
		  const char *fmt, ...)
{
	struct cctl_stage_result *s = &r->v->stage[r->current];
	struct cctl_buf b = CCTL_BUF_INIT;
	va_list ap;
	if (st < s->status && s->status != CCTL_SKIP)
		return;
	if (st == s->status && s->reason)
		cctl_buf_addf(&b, "%s; ", s->reason);
	va_start(ap, fmt);
	cctl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(s->reason);
	s->reason = cctl_buf_detach(&b);
	if (next) {
		free(s->next);
		s->next = cctl_xstrdup(next);
	}
	s->status = st;
}

static const int stage_codes[CCTL_STAGE_COUNT] = {
	CCTL_EVERIFY_LOCATE, CCTL_EVERIFY_FILES,  CCTL_EVERIFY_VERSION,
	CCTL_EVERIFY_DEPS,   CCTL_EVERIFY_LOAD,   CCTL_EVERIFY_DRIVER,
	CCTL_EVERIFY_CREATE, CCTL_EVERIFY_CONV
};

static void fail(struct run *r, const char *next, const char *fmt, ...)
	CCTL_FORMAT(3, 4);
static void fail(struct run *r, const char *next, const char *fmt, ...)
{
	struct cctl_stage_result *s = &r->v->stage[r->current];
	struct cctl_buf b = CCTL_BUF_INIT;
	va_list ap;
	if (s->status == CCTL_FAIL && s->reason)
		cctl_buf_addf(&b, "%s; ", s->reason);
	va_start(ap, fmt);
	cctl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(s->reason);
	s->reason = cctl_buf_detach(&b);
	if (next && !s->next)
		s->next = cctl_xstrdup(next);
	s->status = CCTL_FAIL;
	if (!s->code)
		s->code = stage_codes[r->current];
}

static void skip_rest(struct run *r, enum cctl_stage from, const char *why)
{
	for (int i = from; i < CCTL_STAGE_COUNT; i++) {
		struct cctl_stage_result *s = &r->v->stage[i];
		s->status = CCTL_SKIP;
		free(s->reason);
		s->reason = cctl_xstrdup(why);
		if (!s->finding)
			s->finding = cctl_xstrdup("not run");
	}
}

/* ------------------------------------------------------------- naming */

static int is_windows(const struct run *r)
{
	return !strncmp(r->platform, "windows", 7);
}

/* "libcudnn.so.9" / "cudnn64_9.dll" */
static char *main_library(const struct run *r, int major)
{
	return is_windows(r) ? cctl_xstrfmt("cudnn64_%d.dll", major)
			     : cctl_xstrfmt("libcudnn.so.%d", major);
}

static char *join(const char *a, const char *b)
{
	return cctl_path_join(a, b, NULL);
}

static char *dir_of(const char *path)
{
	const char *s = cctl__last_sep(path);
	return s ? cctl_xstrfmt("%.*s", (int)(s - path), path) : cctl_xstrdup(".");
}

/* A file, or a link that leads to one. */
static int file_exists(struct run *r, const char *path)
{
	struct cctl_buf real = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	struct cctl_ctx quiet;
	int ok;
	cctl_ctx_init(&quiet);
	(void)r;
	ok = !cctl_os_realpath(&quiet, path, &real) &&
	     !cctl_os_stat(&quiet, real.buf, &st) && st.type == CCTL_OS_FILE;
	cctl_buf_release(&real);
	return ok;
}

static int same_file(const char *a, const char *b)
{
	struct cctl_buf ra = CCTL_BUF_INIT, rb = CCTL_BUF_INIT;
	struct cctl_ctx quiet;
	int same;
	cctl_ctx_init(&quiet);
	same = !cctl_os_realpath(&quiet, a, &ra) &&
	       !cctl_os_realpath(&quiet, b, &rb) && !strcmp(ra.buf, rb.buf);
	cctl_buf_release(&ra);
	cctl_buf_release(&rb);
	return same;
}

static int path_has(const char *list, const char *dir)
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

/* Decides what is checked: the install asked for, the active one, or
 * whatever the loader finds. */
static int pick_target(struct run *r)
{
	struct cctl_ctx *ctx = r->ctx;
	const char *env_path = cctl_os_getenv(CCTL_OS_LIB_VAR);
	char *active = NULL;
	int ret = 0;

	r->platform = cctl_xstrdup(cctl_host_platform());
	{
		/* Windows: a new process takes PATH from the registry */
		struct cctl_buf sess = CCTL_BUF_INIT;
		struct cctl_ctx quiet;
		cctl_ctx_init(&quiet);
		if (!cctl_os_session_path(&quiet, &sess))
			r->session = cctl_buf_detach(&sess);
		cctl_buf_release(&sess);
	}
	if (r->root) {
		if (r->o->version) {
			if ((ret = cctl_store_find(ctx, r->root, r->o->version,
						   r->o->cuda, &r->rec)))
				return ret;
			r->have_rec = 1;
		} else {
			if ((ret = cctl_store_active(ctx, r->root, &active)))
				return ret;
			if (active) {
				ret = cctl_store_find(ctx, r->root, active, 0, &r->rec);
				if (ret)
					goto out;
				r->have_rec = 1;
			}
		}
	}
	if (r->have_rec) {
		r->v->id = cctl_xstrdup(r->rec.id);
		r->v->expected_version = cctl_xstrdup(r->rec.version);
		r->v->expected_cuda = r->rec.cuda;
		r->major = atoi(r->rec.version);
		/* the version's own folder: `current` leads there, or (where
		 * it cannot be a link) names it */
		r->dir = cctl_path_join(r->root->path, "versions", r->rec.id,
				       NULL);
		r->libdir = join(r->dir, CCTL_OS_LIB_DIR);
		if (is_windows(r)) {
			/* 9.23 and later keep the DLLs in bin/x64 */
			char *x64 = join(r->libdir, "x64");
			struct cctl_os_stat st;
			struct cctl_ctx quiet;
			cctl_ctx_init(&quiet);
			if (!cctl_os_stat(&quiet, x64, &st) && st.type == CCTL_OS_DIR) {
				free(r->libdir);
				r->libdir = x64;
			} else {
				free(x64);
			}
		}
		/* what a new shell gets: env.sh puts current/lib first, the
		 * system mode leaves the list to ld.so.conf.d */
		if (r->session) {
			/* judged from the registry, in lib_search */
			if (!r->rec.active)
				r->lib_path = cctl__path_list_prepend(r->libdir, r->session);
		} else if (!r->rec.active) {
			/* as it would be once switched to */
			r->lib_path = cctl__path_list_prepend(r->libdir, env_path);
		} else if (!cctl__activation_is_system(r->root)) {
			/* a shell that sourced env.sh is what new shells get
			 * (with whatever the user's profile added after it);
			 * one opened before the change gets env.sh applied */
			char *cur = cctl_path_join(r->root->path, "current",
						   CCTL_OS_LIB_DIR, NULL);
			if (path_has(env_path, cur))
				r->lib_path = cctl_xstrdup(env_path);
			else
				r->lib_path = cctl__path_list_prepend(cur, env_path);
			free(cur);
		}
	}
	if (!r->lib_path && !r->session)
		r->lib_path = cctl_xstrdup(env_path ? env_path : "");
out:
	free(active);
	return ret;
}

/* ----------------------------------------------------------- 1: locate */

static void copy_hits(struct run *r, const struct cctl_lib_hits *h)
{
	r->v->copies = cctl_xcalloc(h->n ? h->n : 1, sizeof(*r->v->copies));
	for (size_t i = 0; i < h->n; i++) {
		r->v->copies[i].path = cctl_xstrdup(h->v[i].path);
		r->v->copies[i].origin = cctl_xstrdup(h->v[i].origin);
	}
	r->v->ncopies = h->n;
}

static void check_mixed_majors(struct run *r)
{
	for (size_t i = 0; i < r->v->ncopies; i++) {
		char *dir = dir_of(r->v->copies[i].path);
		for (int m = 7; m <= 10; m++) {
			char *other, *path;
			if (m == r->major)
				continue;
			other = main_library(r, m);
			path = join(dir, other);
			if (file_exists(r, path))
				judge(r, CCTL_WARN,
				      "keep one cuDNN major per folder; move the "
				      "other files out",
				      "'%s' holds files of cuDNN %d and %d", dir,
				      r->major, m);
			free(other);
			free(path);
		}
		free(dir);
	}
}

/* Entries of the search list that look meant for cuDNN but lack it (the
 * cuDNN 9 installer's bin without its 12.x subfolder). */
static void check_empty_entries(struct run *r, const char *name)
{
	const char *p = r->lib_path ? r->lib_path : r->session;
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	while (p && *p) {
		size_t n = strcspn(p, sep);
		char *dir = cctl_xstrfmt("%.*s", (int)n, p);
		char *path = join(dir, name);
		int cudnnish = 0;
		for (char *c = dir; *c; c++)
			if (!strncmp(c, "cudnn", 5) || !strncmp(c, "CUDNN", 5))
				cudnnish = 1;
		if (n && cudnnish && !file_exists(r, path))
			judge(r, CCTL_WARN,
			      "point the entry at the folder that holds the "
			      "library",
			      "search-path entry '%s' has no %s", dir, name);
		free(dir);
		free(path);
		p += n + (p[n] ? 1 : 0);
	}
}

/* "eval $(cudnnctl env)", naming the root when it is not the default. */
static const char *env_hint(struct run *r)
{
	static char hint[512];
	struct cctl_ctx quiet;
	char *def = NULL;
	cctl_ctx_init(&quiet);
#ifdef _WIN32
	const char *pre = "", *post = " | Invoke-Expression";
#else
	const char *pre = "eval \"$(", *post = ")\"";
#endif
	if (!cctl_root_default(&quiet, &def) && def && r->root &&
	    strcmp(def, r->root->path))
		snprintf(hint, sizeof(hint),
			 "open a new shell, or run: %scudnnctl env --root %s%s",
			 pre, r->root->path, post);
	else
		snprintf(hint, sizeof(hint),
			 "open a new shell, or run: %scudnnctl env%s", pre, post);
	free(def);
	return hint;
}

static void stage_locate(struct run *r)
{
	struct cctl_lib_hits hits = { 0 }, now = { 0 };
	char *name = NULL, *want = NULL;
	const char *env_path = cctl_os_getenv(CCTL_OS_LIB_VAR);
	int ret;

	if (!r->major) {
		/* no install: the newest major the loader finds */
		for (int m = 9; m >= 8 && !hits.n; m--) {
			free(name);
			name = main_library(r, m);
			cctl_lib_hits_release(&hits);
			if ((ret = cctl_os_lib_search(r->ctx, name, r->lib_path,
						      NULL, &hits))) {
				fail(r, NULL, "%s", r->ctx->msg);
				goto out;
			}
			r->major = m;
		}
	} else {
		name = main_library(r, r->major);
		if ((ret = cctl_os_lib_search(r->ctx, name, r->lib_path, NULL,
					      &hits))) {
			fail(r, NULL, "%s", r->ctx->msg);
			goto out;
		}
	}
	copy_hits(r, &hits);
	if (!hits.n && r->have_rec) {
		want = join(r->libdir, name);
		if (file_exists(r, want)) {
			finding(r, "%s is there but cannot be loaded", want);
			fail(r, "reinstall this version from NVIDIA's archive for "
				"this machine",
			     "%s is not a shared library for this machine", want);
			goto out;
		}
	}
	if (!hits.n) {
		finding(r, "no copy of %s", name);
		fail(r,
		     r->have_rec ? "run cudnnctl switch VERSION, or reinstall"
				 : "install cuDNN: cudnnctl install ARCHIVE",
		     "a new process finds no %s", name);
		goto out;
	}
	r->v->library = cctl_xstrdup(hits.v[0].path);
	if (hits.n > 1)
		finding(r, "%s (%s); %zu copies", hits.v[0].path,
			hits.v[0].origin, hits.n);
	else
		finding(r, "%s (%s)", hits.v[0].path, hits.v[0].origin);
	if (r->have_rec) {
		free(want);
		want = join(r->libdir, name);
		if (!r->rec.active)
			judge(r, CCTL_WARN, "run cudnnctl switch to make it active",
			      "%s is not the active install; checked as if it "
			      "were",
			      r->rec.id);
		if (!same_file(hits.v[0].path, want))
			judge(r, CCTL_WARN,
			      "remove that copy, or its folder from the search "
			      "path, so the install comes first",
			      "shadowed: a new process loads %s (%s) before the "
			      "install's %s",
			      hits.v[0].path, hits.v[0].origin, want);
	} else {
		/* judge the library against the files beside it */
		r->libdir = dir_of(hits.v[0].path);
		r->dir = dir_of(r->libdir);
	}
	check_mixed_majors(r);
	check_empty_entries(r, name);

	/* this shell, as opposed to a new one */
	if (r->have_rec && r->rec.active &&
	    !(env_path && r->lib_path && !strcmp(env_path, r->lib_path))) {
		struct cctl_ctx quiet;
		cctl_ctx_init(&quiet);
		if (!cctl_os_lib_search(&quiet, name, env_path, NULL, &now) &&
		    (!now.n || strcmp(now.v[0].path, hits.v[0].path)))
			judge(r, CCTL_WARN, env_hint(r),
			      "this shell was set up before the change: it "
			      "finds %s",
			      now.n ? now.v[0].path : "no cuDNN");
	}
out:
	cctl_lib_hits_release(&hits);
	cctl_lib_hits_release(&now);
	free(name);
	free(want);
}

/* ------------------------------------------------------------ 2: files */

static void check_header(struct run *r)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	struct cctl_ctx quiet;
	char *path = cctl_path_join(r->dir, "include/cudnn_version.h", NULL);
	char *v = NULL;
	cctl_ctx_init(&quiet);
	if (cctl_os_read_file(&quiet, path, &text)) {
		judge(r, CCTL_WARN, "reinstall to get the headers back",
		      "no %s", path);
		goto out;
	}
	v = cctl_parse_version_header(text.buf);
	if (!v) {
		judge(r, CCTL_WARN, NULL, "%s has no version", path);
	} else if (!r->v->expected_version) {
		r->v->expected_version = cctl_xstrdup(v);
	} else if (!cctl_version_has_prefix(r->v->expected_version, v)) {
		fail(r, "reinstall this version: cudnnctl uninstall, then install",
		     "include/cudnn_version.h says %s, the install is %s", v,
		     r->v->expected_version);
	}
out:
	free(v);
	free(path);
	cctl_buf_release(&text);
}

/* A required library's file name (any of its links or versions). */
static int is_required(const struct run *r, const char *rel)
{
	const char *const *libs = cctl_required_libraries(r->platform, r->major);
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	for (; libs && *libs; libs++)
		if (!strncmp(base, *libs, strlen(*libs)))
			return 1;
	return 0;
}

static void check_record(struct run *r)
{
	struct cctl_buf path = CCTL_BUF_INIT;
	size_t bad = 0;
	for (size_t i = 0; i < r->rec.nfiles; i++) {
		const struct cctl_file *f = &r->rec.files[i];
		struct cctl_os_stat st;
		char hex[65];
		cctl_buf_reset(&path);
		cctl_buf_adds(&path, r->dir);
		cctl_buf_addpath(&path, f->path);
		if (cctl_os_stat(r->ctx, path.buf, &st) || st.type == CCTL_OS_NONE) {
			if (!is_required(r, f->path))
				r->go_on = 0;
			if (bad++ < 3)
				fail(r, "reinstall this version", "%s is missing",
				     f->path);
			continue;
		}
		if (f->type != CCTL_ENTRY_FILE)
			continue;
		r->v->files_checked++;
		/* like git's index: trust a file whose size and times did not
		 * move since the install; hash the others */
		if (!r->o->full && st.type == CCTL_OS_FILE && st.size == f->size &&
		    st.mtime_ns == f->mtime_ns && st.ctime_ns == f->ctime_ns)
			continue;
		r->v->files_rehashed++;
		if (st.type != CCTL_OS_FILE || st.size != f->size ||
		    cctl_sha256_file(r->ctx, path.buf, hex, NULL) ||
		    strcmp(hex, f->sha256)) {
			/* never load a file that is not what was installed */
			r->go_on = 0;
			if (bad++ < 3)
				fail(r, "reinstall this version (cudnnctl uninstall, "
					"then install the archive again)",
				     "%s changed since it was installed", f->path);
		}
	}
	if (bad > 3)
		fail(r, NULL, "%zu files in all differ from the record", bad);
	cctl_buf_release(&path);
}

static void stage_files(struct run *r)
{
	const char *const *libs = cctl_required_libraries(r->platform, r->major);
	size_t have = 0, want = 0;
	for (; libs && *libs; libs++, want++) {
		char *path = join(r->libdir, *libs);
		if (file_exists(r, path))
			have++;
		else
			fail(r, "reinstall this version; the archive had it",
			     "%s is missing", path);
		/* a missing sub-library is safe to run past: the later stages
		 * show where it bites (cuDNN loads them lazily) */
		free(path);
	}
	r->go_on = 1;
	if (r->have_rec)
		check_record(r);
	{
		enum cctl_status before = r->v->stage[r->current].status;
		check_header(r);
		if (before != CCTL_FAIL &&
		    r->v->stage[r->current].status == CCTL_FAIL)
			r->go_on = 0;
	}
	if (r->have_rec)
		finding(r, "%zu/%zu libraries; %zu files checked against the install record "
			   "(%zu re-hashed)",
			have, want, r->v->files_checked, r->v->files_rehashed);
	else
		finding(r, "%zu/%zu libraries in %s; not installed by cudnnctl, "
			   "so no hashes to compare",
			have, want, r->libdir);
}

/* ---------------------------------------------------------- 3: version */

static void stage_version(struct run *r)
{
	struct cctl_buf real = CCTL_BUF_INIT;
	struct cctl_lib_info info;
	char *name = main_library(r, r->major);
	char *path = join(r->libdir, name);
	const char *base, *ver = NULL;

	memset(&info, 0, sizeof(info));
	if (cctl_os_realpath(r->ctx, path, &real)) {
		fail(r, NULL, "%s", r->ctx->msg);
		goto out;
	}
	base = strrchr(real.buf, '/');
	base = base ? base + 1 : real.buf;
	if (!is_windows(r) && !strncmp(base, "libcudnn.so.", 12))
		ver = base + 12; /* libcudnn.so.9.19.0 */
	if (cctl_os_lib_info(r->ctx, real.buf, &info)) {
		fail(r, "reinstall this version", "%s", r->ctx->msg);
		goto out;
	}
	if (!info.loadable)
		fail(r, "install the build for this machine's architecture",
		     "%s is not for this machine's architecture", real.buf);
	if (is_windows(r))
		finding(r, "%s: file version %s; expected %s", base,
			info.file_version ? info.file_version : "(none)",
			r->v->expected_version ? r->v->expected_version : "?");
	else
		finding(r, "%s: SONAME %s; expected %s", base,
			info.soname ? info.soname : "(none)",
			r->v->expected_version ? r->v->expected_version : "?");
	if (!is_windows(r) && info.soname && strcmp(info.soname, name))
		judge(r, CCTL_WARN, NULL, "SONAME %s, not %s", info.soname, name);
	if (ver && strchr(ver, '.') && r->v->expected_version &&
	    !cctl_version_has_prefix(r->v->expected_version, ver) &&
	    !cctl_version_has_prefix(ver, r->v->expected_version))
		judge(r, CCTL_WARN, NULL, "the file name says %s", ver);
out:
	cctl_lib_info_release(&info);
	cctl_buf_release(&real);
	free(name);
	free(path);
}

/* ----------------------------------------------------- 4: dependencies */

struct dep_seen {
	char **names;
	size_t n;
};

static int seen(struct dep_seen *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return 1;
	s->names = cctl_xrealloc(s->names, (s->n + 1) * sizeof(char *));
	s->names[s->n++] = cctl_xstrdup(name);
	return 0;
}

static const char *how_to_get(const char *name, int cuda)
{
	(void)cuda;
	if (!strncmp(name, "libcublas", 9) || !strncmp(name, "cublas", 6))
		return "install cuBLAS of the same CUDA major (the CUDA toolkit, or "
		       "pip install nvidia-cublas-cuNN) and put its lib folder on "
		       "the search path";
	if (!strncmp(name, "libnvrtc", 8) || !strncmp(name, "nvrtc", 5))
		return "install NVRTC of the same CUDA major (the CUDA toolkit, or "
		       "pip install nvidia-cuda-nvrtc-cuNN)";
	if (!strncmp(name, "libz.", 5) || !strncmp(name, "zlib", 4))
		return "install zlib (Debian/Ubuntu: apt install zlib1g; Windows: "
		       "zlibwapi.dll next to cudnn64_8.dll)";
	if (!strncmp(name, "libcudnn", 8) || !strncmp(name, "cudnn", 5))
		return "reinstall this cuDNN version: the archive has it";
	if (!strncmp(name, "msvcp", 5) || !strncmp(name, "vcruntime", 9))
		return "install the Microsoft Visual C++ Redistributable (x64)";
	return "install the package that provides it";
}

static void resolve_dep(struct run *r, const char *lib, const char *dep,
			const char *const *runpath, int required,
			size_t *found, size_t *missing)
{
	struct cctl_lib_hits h = { 0 };
	if (cctl_os_lib_search(r->ctx, dep, r->lib_path, runpath, &h) || !h.n) {
		(*missing)++;
		if (required)
			fail(r, how_to_get(dep, r->v->expected_cuda),
			     "%s needs %s, which the loader cannot find", lib, dep);
		else
			judge(r, CCTL_WARN, how_to_get(dep, r->v->expected_cuda),
			      "%s loads %s at run time; it cannot be found", lib,
			      dep);
	} else {
		(*found)++;
	}
	cctl_lib_hits_release(&h);
}

static void stage_deps(struct run *r)
{
	const char *const *libs = cctl_required_libraries(r->platform, r->major);
	struct dep_seen s = { 0 };
	const char *const *runpath = NULL;
	struct cctl_lib_info keep;
	size_t found = 0, missing = 0, nlibs = 0;
	int cuda = r->v->expected_cuda;

	memset(&keep, 0, sizeof(keep));
	for (; libs && *libs; libs++) {
		struct cctl_lib_info info;
		char *path = join(r->libdir, *libs);
		if (!file_exists(r, path)) {
			free(path); /* reported by the files stage */
			continue;
		}
		if (cctl_os_lib_info(r->ctx, path, &info)) {
			fail(r, "reinstall this version", "%s", r->ctx->msg);
			free(path);
			continue;
		}
		nlibs++;
		/* os.h wants the runpath NULL-terminated */
		info.runpath = cctl_xrealloc(info.runpath,
					     (info.nrunpath + 1) * sizeof(char *));
		info.runpath[info.nrunpath] = NULL;
		for (size_t i = 0; i < info.nneeded; i++) {
			if (seen(&s, info.needed[i]))
				continue;
			resolve_dep(r, *libs, info.needed[i],
				    (const char *const *)info.runpath, 1, &found,
				    &missing);
		}
		/* the runtime loads below resolve like a dlopen from the
		 * sub-libraries, through their RUNPATH */
		if (info.nrunpath && !keep.nrunpath) {
			keep = info;
			memset(&info, 0, sizeof(info));
		}
		cctl_lib_info_release(&info);
		free(path);
	}
	if (keep.nrunpath)
		runpath = (const char *const *)keep.runpath;
	if (cuda && !is_windows(r)) {
		char *blas = cctl_xstrfmt("libcublasLt.so.%d", cuda);
		char *rtc = cuda >= 12 ? cctl_xstrfmt("libnvrtc.so.%d", cuda)
				       : cctl_xstrdup("libnvrtc.so.11.2");
		if (!seen(&s, blas))
			resolve_dep(r, "cuDNN", blas, runpath, 0, &found, &missing);
		if (!seen(&s, rtc))
			resolve_dep(r, "cuDNN", rtc, runpath, 0, &found, &missing);
		free(blas);
		free(rtc);
	}
	if (cuda && is_windows(r)) {
		/* what cuDNN loads on Windows beyond its imports */
		char *rt[6];
		size_t k = 0;
		int zlib = cctl_version_cmp(r->v->expected_version
						    ? r->v->expected_version
						    : "9.2",
					    "8.3") >= 0 &&
			   cctl_version_cmp(r->v->expected_version
						    ? r->v->expected_version
						    : "9.2",
					    "9.2") < 0;
		rt[k++] = cctl_xstrfmt("cublasLt64_%d.dll", cuda);
		rt[k++] = cuda >= 12 ? cctl_xstrfmt("nvrtc64_%d0_0.dll", cuda)
				     : cctl_xstrdup("nvrtc64_112_0.dll");
		if (zlib) /* 8.3 to 9.1 need zlibwapi.dll; 9.2 links zlib in */
			rt[k++] = cctl_xstrdup("zlibwapi.dll");
		rt[k++] = cctl_xstrdup("msvcp140.dll");
		rt[k++] = cctl_xstrdup("vcruntime140.dll");
		rt[k++] = cctl_xstrdup("vcruntime140_1.dll");
		for (size_t i = 0; i < k; i++) {
			if (!seen(&s, rt[i]))
				resolve_dep(r, "cuDNN", rt[i], runpath,
					    !strncmp(rt[i], "zlib", 4), &found,
					    &missing);
			free(rt[i]);
		}
	}
	finding(r, "%zu libraries need %zu others: %zu found, %zu missing", nlibs,
		found + missing, found, missing);
	for (size_t i = 0; i < s.n; i++)
		free(s.names[i]);
	free(s.names);
	cctl_lib_info_release(&keep);
}

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

static void stage_load(struct run *r)
{
	struct cctl_buf loaded = CCTL_BUF_INIT;
	const char *path = r->v->library, *missing;
	char got[32];
	int want_major, want_minor, want_patch;

	if (cctl_os_dl_open(r->ctx, path, &r->cudnn)) {
		fail(r, "see the dependencies stage; reinstall this version",
		     "%s", r->ctx->msg);
		return;
	}
	if (!cctl_os_dl_path(r->ctx, r->cudnn, &loaded))
		r->v->loaded = cctl_xstrdup(loaded.buf);
	if ((missing = resolve_cudnn(r->cudnn, &r->dnn))) {
		fail(r, "reinstall cuDNN: this is not a complete cuDNN library",
		     "%s does not export %s", path, missing);
		goto out;
	}
	r->v->cudnn_version = (long)r->dnn.cudnnGetVersion();
	r->v->cudart_version = (long)r->dnn.cudnnGetCudartVersion();
	cctl_decode_cudnn_version(r->v->cudnn_version, got, sizeof(got));
	finding(r, "%s: cuDNN %s (%ld), CUDA runtime %ld.%ld (%ld)",
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
			fail(r,
			     "a new process loads another cuDNN than the one "
			     "installed: see the locate stage",
			     "loaded cuDNN %s, expected %s", got, want);
	}
	if (r->v->expected_cuda && r->v->cudart_version / 1000 != r->v->expected_cuda)
		fail(r, "install the build of cuDNN for your CUDA major",
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

/* Sets r->stop when the GPU stages cannot go on. */
static void stage_driver(struct run *r)
{
	const char *driver = is_windows(r) ? "nvcuda.dll" : "libcuda.so.1";
	const char *missing;
	char name[256] = "";
	size_t mem = 0;
	int rc, count = 0, version = 0, need;

	if (cctl_os_dl_open(r->ctx, driver, &r->cuda)) {
		if (r->o->require_gpu) {
			fail(r, "install the NVIDIA driver", "no NVIDIA driver: %s",
			     r->ctx->msg);
			r->v->stage[r->current].code = CCTL_EVERIFY_NOGPU;
		}
		skip_rest(r, r->o->require_gpu ? CCTL_STAGE_CREATE
					       : CCTL_STAGE_DRIVER,
			  is_windows(r) ? "no NVIDIA driver (nvcuda.dll not found)"
					: "no NVIDIA driver (libcuda.so.1 not found)");
		if (r->o->require_gpu)
			finding(r, "no driver");
		r->stop = 1;
		return;
	}
	if ((missing = resolve_cuda(r->cuda, &r->cu))) {
		fail(r, "update the NVIDIA driver", "%s does not export %s",
		     driver, missing);
		r->stop = 1;
		return;
	}
	rc = r->cu.cuInit(0);
	if (rc == CCTL_CUDA_ERROR_NO_DEVICE || (!rc && !r->cu.cuDeviceGetCount(&count) && !count)) {
		if (r->o->require_gpu) {
			fail(r, "check nvidia-smi; the driver sees no GPU",
			     "the driver found no GPU");
			r->v->stage[r->current].code = CCTL_EVERIFY_NOGPU;
			finding(r, "no GPU");
			skip_rest(r, CCTL_STAGE_CREATE, "no GPU");
		} else {
			skip_rest(r, CCTL_STAGE_DRIVER, "the driver found no GPU");
		}
		r->stop = 1;
		return;
	}
	if (rc) {
		fail(r, "check nvidia-smi; reinstall or update the driver",
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
	finding(r, "driver supports CUDA %d.%d; %d GPU%s, using 0: %s "
		   "(compute %d.%d, %.0f GiB)",
		version / 1000, version % 1000 / 10, count, count == 1 ? "" : "s",
		name, r->v->cc_major, r->v->cc_minor,
		(double)mem / (1024.0 * 1024 * 1024));
	need = r->v->expected_cuda;
	if (need && version / 1000 < need)
		fail(r, "update the NVIDIA driver to one for this CUDA major (see "
			"NVIDIA's support matrix)",
		     "the driver supports CUDA %d.%d, cuDNN was built for CUDA %d",
		     version / 1000, version % 1000 / 10, need);
	if (r->major >= 9 && r->v->cc_major < 5)
		fail(r, "use a GPU of compute capability 5.0 or newer, or cuDNN 8",
		     "cuDNN %d does not support compute capability %d.%d", r->major,
		     r->v->cc_major, r->v->cc_minor);
}

/* ----------------------------------------------------------- 7: create */

static const char *dnn_error(struct run *r, int st)
{
	const char *s = r->dnn.cudnnGetErrorString
				? r->dnn.cudnnGetErrorString(st)
				: NULL;
	return s ? s : "cuDNN error";
}

static void stage_create(struct run *r)
{
	cctl_CUcontext cu_ctx = NULL;
	int rc, st;
	/* the primary context, so the driver API buffers of the next stage
	 * and cuDNN's own runtime share it */
	if ((rc = r->cu.cuDevicePrimaryCtxRetain(&cu_ctx, r->dev)) ||
	    (rc = r->cu.cuCtxSetCurrent(cu_ctx))) {
		fail(r, "check nvidia-smi", "cannot make a CUDA context: %s (%d)",
		     cu_error(r, rc), rc);
		return;
	}
	st = r->dnn.cudnnCreate(&r->handle);
	if (st) {
		r->handle = NULL;
		fail(r, "see the dependencies stage; check the driver",
		     "cudnnCreate returned %s (%d)", dnn_error(r, st), st);
		return;
	}
	finding(r, "cudnnCreate succeeded");
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

static void stage_conv(struct run *r)
{
	static float x[CN * CC * CH * CW], w[CK * CC * CR * CS];
	static float y[CN * CK * CH * CW], ref[CN * CK * CH * CW];
	cctl_cudnnTensorDesc xd = NULL, yd = NULL;
	cctl_cudnnFilterDesc wd = NULL;
	cctl_cudnnConvDesc cd = NULL;
	cctl_CUdeviceptr dx = 0, dw = 0, dy = 0, dws = 0;
	size_t ws = 0, unwritten = 0;
	float alpha = 1.0f, beta = 0.0f;
	double max_diff = 0, max_ref = 0;
	int n, c, h, wo, st = 0, rc = 0;
	const char *step = "";

	if (!r->dnn.cudnnConvolutionForward || !r->dnn.cudnnSetTensor4dDescriptor ||
	    !r->dnn.cudnnGetConvolutionForwardWorkspaceSize ||
	    !r->dnn.cudnnSetConvolutionMathType) {
		fail(r, "reinstall cuDNN", "the library lacks the convolution API");
		return;
	}
	rng_state = (uint64_t)(cctl_os_now_ms() * 1000.0) * 0x9e3779b97f4a7c15ull | 1;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(x); i++)
		x[i] = rnd();
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(w); i++)
		w[i] = rnd();
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(y); i++)
		y[i] = NAN;

#define DNN(call)                                                              \
	do {                                                                   \
		step = #call;                                                  \
		if ((st = r->dnn.call) != CCTL_CUDNN_STATUS_SUCCESS)           \
			goto dnn_failed;                                       \
	} while (0)
#define CU(call)                                                               \
	do {                                                                   \
		step = #call;                                                  \
		if ((rc = r->cu.call) != CCTL_CUDA_SUCCESS)                    \
			goto cu_failed;                                        \
	} while (0)

	DNN(cudnnCreateTensorDescriptor(&xd));
	DNN(cudnnSetTensor4dDescriptor(xd, CCTL_CUDNN_TENSOR_NCHW,
				       CCTL_CUDNN_DATA_FLOAT, CN, CC, CH, CW));
	DNN(cudnnCreateFilterDescriptor(&wd));
	DNN(cudnnSetFilter4dDescriptor(wd, CCTL_CUDNN_DATA_FLOAT,
				       CCTL_CUDNN_TENSOR_NCHW, CK, CC, CR, CS));
	DNN(cudnnCreateConvolutionDescriptor(&cd));
	DNN(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1,
					    CCTL_CUDNN_CROSS_CORRELATION,
					    CCTL_CUDNN_DATA_FLOAT));
	/* plain FP32 arithmetic: TF32 tensor cores would miss 1e-5 */
	DNN(cudnnSetConvolutionMathType(cd, CCTL_CUDNN_FMA_MATH));
	DNN(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &n, &c, &h, &wo));
	if (n != CN || c != CK || h != CH || wo != CW) {
		fail(r, "reinstall cuDNN", "output shape %dx%dx%dx%d, expected "
					   "1x8x32x32", n, c, h, wo);
		goto out;
	}
	DNN(cudnnCreateTensorDescriptor(&yd));
	DNN(cudnnSetTensor4dDescriptor(yd, CCTL_CUDNN_TENSOR_NCHW,
				       CCTL_CUDNN_DATA_FLOAT, CN, CK, CH, CW));
	DNN(cudnnGetConvolutionForwardWorkspaceSize(
		r->handle, xd, wd, cd, yd, CCTL_CUDNN_FWD_ALGO_IMPLICIT_GEMM, &ws));
	CU(cuMemAlloc_v2(&dx, sizeof(x)));
	CU(cuMemAlloc_v2(&dw, sizeof(w)));
	CU(cuMemAlloc_v2(&dy, sizeof(y)));
	if (ws)
		CU(cuMemAlloc_v2(&dws, ws));
	CU(cuMemcpyHtoD_v2(dx, x, sizeof(x)));
	CU(cuMemcpyHtoD_v2(dw, w, sizeof(w)));
	CU(cuMemcpyHtoD_v2(dy, y, sizeof(y))); /* NaN: unwritten stays NaN */
	DNN(cudnnConvolutionForward(r->handle, &alpha, xd, (void *)(uintptr_t)dx,
				    wd, (void *)(uintptr_t)dw, cd,
				    CCTL_CUDNN_FWD_ALGO_IMPLICIT_GEMM,
				    (void *)(uintptr_t)dws, ws, &beta, yd,
				    (void *)(uintptr_t)dy));
	/* the CPU reference runs while the GPU works */
	conv_reference(x, w, ref);
	CU(cuCtxSynchronize());
	CU(cuMemcpyDtoH_v2(y, dy, sizeof(y)));

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
	finding(r, "1x3x32x32 * 8x3x3x3 float32, IMPLICIT_GEMM: max relative "
		   "error %.2g against the CPU",
		r->v->max_rel_error);
	if (unwritten)
		fail(r, "reinstall cuDNN; check the driver",
		     "%zu of %zu output values were never written", unwritten,
		     CCTL_ARRAY_SIZE(y));
	else if (!(r->v->max_rel_error < 1e-5))
		fail(r, "reinstall cuDNN; check the driver and the GPU",
		     "the result differs from the CPU reference (relative error "
		     "%.3g, limit 1e-5)",
		     r->v->max_rel_error);
	goto out;

dnn_failed:
	finding(r, "%s failed", step);
	fail(r, "check the dependencies stage (a missing sub-library such as "
		"libcudnn_cnn or cuBLASLt shows up only here); reinstall cuDNN",
	     "%s returned %s (%d)", step, dnn_error(r, st), st);
	goto out;
cu_failed:
	finding(r, "%s failed", step);
	fail(r, "check nvidia-smi and the driver", "%s returned %s (%d)", step,
	     cu_error(r, rc), rc);
out:
#undef DNN
#undef CU
	if (dx)
		r->cu.cuMemFree_v2(dx);
	if (dw)
		r->cu.cuMemFree_v2(dw);
	if (dy)
		r->cu.cuMemFree_v2(dy);
	if (dws)
		r->cu.cuMemFree_v2(dws);
	if (xd)
		r->dnn.cudnnDestroyTensorDescriptor(xd);
	if (yd)
		r->dnn.cudnnDestroyTensorDescriptor(yd);
	if (wd)
		r->dnn.cudnnDestroyFilterDescriptor(wd);
	if (cd)
		r->dnn.cudnnDestroyConvolutionDescriptor(cd);
}

/* ---------------------------------------------------------------- run */

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
		skip_rest(r, r->current + 1, why);
	return 0;
}

static void (*const stage_fns[CCTL_STAGE_COUNT])(struct run *) = {
	stage_locate, stage_files,  stage_version, stage_deps,
	stage_load,   stage_driver, stage_create,  stage_conv,
};

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
	if ((ret = pick_target(&r)))
		goto out;
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		if (i == CCTL_STAGE_DRIVER && o->no_gpu) {
			skip_rest(&r, CCTL_STAGE_DRIVER, "--no-gpu");
			break;
		}
		begin(&r, (enum cctl_stage)i);
		stage_fns[i](&r);
		if (!end(&r) || r.stop)
			break;
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
	if (r.handle)
		r.dnn.cudnnDestroy(r.handle);
	if (r.cuda && r.cu.cuDevicePrimaryCtxRelease_v2 && r.v->gpu_count)
		r.cu.cuDevicePrimaryCtxRelease_v2(r.dev);
	/* the libraries stay mapped: cuDNN and the driver start threads
	 * that do not expect to be unloaded before exit */
	if (r.have_rec)
		cctl_install_release(&r.rec);
	free(r.platform);
	free(r.dir);
	free(r.libdir);
	free(r.lib_path);
	free(r.session);
	v->total_ms = cctl_os_now_ms() - start;
	return ret;
}

void cctl_verify_release(struct cctl_verify *v)
{
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		free(v->stage[i].finding);
		free(v->stage[i].reason);
		free(v->stage[i].next);
	}
	for (size_t i = 0; i < v->ncopies; i++) {
		free(v->copies[i].path);
		free(v->copies[i].origin);
	}
	free(v->copies);
	free(v->id);
	free(v->expected_version);
	free(v->library);
	free(v->loaded);
	free(v->gpu_name);
	memset(v, 0, sizeof(*v));
}

/*
 * verify --app PROGRAM: which cuDNN a program (an .exe or .dll, an ELF
 * executable or shared library) needs, and what the loader will give it.
 *
 * The program's imports, and those of the libraries in its own folder,
 * name the cuDNN generation (cudnn64_8 / cudnn64_9, libcudnn.so.8 / .so.9)
 * and the CUDA majors (cudart64_12, cublasLt64_13, libcublasLt.so.12...).
 * Each cuDNN library is resolved as the loader will for that program
 * (Windows: its folder, the system folders, a new process's PATH; Linux:
 * LD_LIBRARY_PATH, its RUNPATH, the ld.so cache) and judged against the
 * active install: a copy in the program's folder that overrides it, a
 * generation the active install cannot give, a library found nowhere.  A
 * program that names cuDNN in its bytes but not in its imports loads it
 * at run time (LoadLibrary, dlopen), and is said to.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"
#include "verify-internal.h"

#define MAX_FOLDER_LIBS 256

static const char *base_of(const char *path)
{
	const char *s = cctl__last_sep(path);
	return s ? s + 1 : path;
}

static int ci_cmp(const char *a, const char *b)
{
	for (; *a && tolower((unsigned char)*a) == tolower((unsigned char)*b); a++, b++)
		;
	return tolower((unsigned char)*a) - tolower((unsigned char)*b);
}

static int has_prefix_ci(const char *s, const char *p)
{
	for (; *p; s++, p++)
		if (tolower((unsigned char)*s) != tolower((unsigned char)*p))
			return 0;
	return 1;
}

/* The major a library name carries, and whether it is cuDNN's (1) or
 * CUDA's (2); 0 for neither.  cudnn_ops64_9.dll, cudart64_12.dll,
 * cudart64_110.dll (CUDA 11.0) / libcudnn_ops.so.9, libcublasLt.so.12. */
static int classify(const struct cctl_platform *p, const char *name, int *major)
{
	static const char *const cuda[] = { "cudart", "cublaslt", "cublas", NULL };
	const char *b = base_of(name);
	size_t n = strlen(b);
	int kind = 0, m = 0;
	if (p->windows) {
		const char *us = strrchr(b, '_');
		if (n < 5 || !us || ci_cmp(b + n - 4, ".dll"))
			return 0;
		if (has_prefix_ci(b, "cudnn"))
			kind = 1;
		for (int i = 0; cuda[i] && !kind; i++)
			if (has_prefix_ci(b, cuda[i]) && has_prefix_ci(b + strlen(cuda[i]), "64_"))
				kind = 2;
		m = atoi(us + 1);
		if (m >= 100)
			m /= 10; /* cudart64_110.dll */
	} else {
		const char *so = strstr(b, ".so.");
		if (!so)
			return 0;
		if (!strncmp(b, "libcudnn", 8))
			kind = 1;
		for (int i = 0; cuda[i] && !kind; i++) {
			char pre[32];
			snprintf(pre, sizeof(pre), "lib%s.so.", cuda[i]);
			if (has_prefix_ci(b, pre))
				kind = 2;
		}
		m = atoi(so + 4);
	}
	if (!kind || m <= 0)
		return 0;
	*major = m;
	return kind;
}

static void add_import(struct cctl_app *a, const char *name, const char *by,
		       int kind, int major, int runtime)
{
	struct cctl_app_import *im;
	for (size_t i = 0; i < a->n; i++)
		if (!ci_cmp(a->v[i].name, name))
			return; /* the first importer is named */
	a->v = cctl_xrealloc(a->v, (a->n + 1) * sizeof(*a->v));
	im = &a->v[a->n++];
	memset(im, 0, sizeof(*im));
	im->name = cctl_xstrdup(name);
	im->by = cctl_xstrdup(by);
	im->cudnn = kind == 1;
	im->major = major;
	im->runtime = runtime;
	if (kind == 1 && (!a->cudnn_major || major > a->cudnn_major))
		a->cudnn_major = major;
	if (kind == 2) {
		int seen = 0;
		for (size_t i = 0; i < a->ncuda; i++)
			seen |= a->cuda[i] == major;
		if (!seen && a->ncuda < sizeof(a->cuda) / sizeof(*a->cuda))
			a->cuda[a->ncuda++] = major;
	}
}

static void read_imports(const struct cctl_platform *p, struct cctl_app *a,
			 const char *file, struct cctl_lib_info *keep)
{
	struct cctl_lib_info info;
	if (cctl_os_lib_info(NULL, file, &info))
		return;
	for (size_t i = 0; i < info.nneeded; i++) {
		int major, kind = classify(p, info.needed[i], &major);
		if (kind)
			add_import(a, info.needed[i], file, kind, major, 0);
	}
	if (keep)
		*keep = info;
	else
		cctl_lib_info_release(&info);
}

/* The cuDNN main library names in the file's bytes ("cudnn64_9.dll",
 * "libcudnn.so.9"): what a program that loads cuDNN at run time asks
 * for.  Read in blocks, so a 1 GB provider library costs no 1 GB. */
static void scan_names(const struct cctl_platform *p, struct cctl_app *a,
		       const char *file)
{
	const char *pat = p->windows ? "cudnn64_" : "libcudnn.so.";
	size_t pl = strlen(pat), keep = 0;
	char *buf = cctl_xmalloc((1 << 20) + 64);
	int fd;
	if (cctl_os_open_read(NULL, file, &fd)) {
		free(buf);
		return;
	}
	for (;;) {
		size_t got = 0, len;
		if (cctl_os_read(NULL, fd, file, buf + keep, 1 << 20, &got) || !got)
			break;
		len = keep + got;
		for (size_t i = 0; i + pl + 1 < len; i++) {
			char name[32];
			int major;
			size_t k;
			if (tolower((unsigned char)buf[i]) != pat[0] ||
			    !has_prefix_ci(buf + i, pat) || !isdigit((unsigned char)buf[i + pl]))
				continue;
			for (k = 0; k < sizeof(name) - 1 && i + k < len &&
				    (isalnum((unsigned char)buf[i + k]) || buf[i + k] == '.' ||
				     buf[i + k] == '_');
			     k++)
				name[k] = buf[i + k];
			name[k] = 0;
			if (classify(p, name, &major) == 1)
				add_import(a, name, file, 1, major, 1);
		}
		/* a name cut at the block's end is read whole next time */
		keep = len < 64 ? len : 64;
		memmove(buf, buf + len - keep, keep);
	}
	cctl_os_close(fd);
	free(buf);
}

/* The libraries of the program's own folder (they load with it). */
static void folder_libs(const struct cctl_platform *p, struct cctl_app *a,
			const char *dir)
{
	char **names = NULL;
	size_t n = 0, read = 0;
	if (cctl_os_listdir(NULL, dir, &names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		const char *b = names[i];
		size_t bl = strlen(b);
		int lib = p->windows ? bl > 4 && !ci_cmp(b + bl - 4, ".dll")
				     : strstr(b, ".so") != NULL;
		char *path = cctl_path_join(dir, b, NULL);
		if (lib && read++ < MAX_FOLDER_LIBS && strcmp(path, a->program))
			read_imports(p, a, path, NULL);
		free(path);
		free(names[i]);
	}
	free(names);
}

/* path lies in dir (links not followed; case ignored on Windows) */
static int in_dir(const struct cctl_platform *p, const char *path, const char *dir)
{
	size_t n = strlen(dir);
	const char *sep;
	if (strlen(path) <= n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p->windows ? tolower((unsigned char)path[i]) != tolower((unsigned char)dir[i])
			       : path[i] != dir[i])
			return 0;
	sep = path + n;
	return *sep == '/' || *sep == '\\';
}

struct ctx_app {
	const struct cctl_platform *p;
	const struct cctl_root *root;
	char *versions;    /* <root>/versions, links resolved; NULL: no root */
	char *current;     /* <root>/current */
	char *active;      /* the active id, or NULL */
	int active_major;
	char *dir;         /* the program's folder */
	char *dir_real;
	char **runpath;    /* the program's RUNPATH (Linux), or its folder */
};

/* Where the loader finds one cuDNN library for the program. */
static void resolve(struct ctx_app *c, struct cctl_app_import *im)
{
	struct cctl_lib_hits hits;
	/* Windows: NULL, a new process's PATH (the registry's) */
	const char *lib_path = NULL;
	if (!c->p->windows) {
		lib_path = cctl_os_getenv(c->p->lib_var);
		lib_path = lib_path ? lib_path : "";
	}
	if (cctl_os_lib_search(NULL, im->name, lib_path,
			       (const char *const *)c->runpath, &hits))
		return;
	for (size_t i = 0; i < hits.n; i++) {
		char *r;
		/* cudnnctl.exe's own folder is no folder of the program's */
		if (!strcmp(hits.v[i].origin, "application folder"))
			continue;
		r = cctl__real_path(hits.v[i].path);
		im->resolved = cctl_xstrdup(hits.v[i].path);
		/* its own: beside it (Windows), or where its RUNPATH leads */
		im->in_program_dir = !strcmp(hits.v[i].origin, "DLL folder") ||
				     !strcmp(hits.v[i].origin, "RUNPATH");
		im->origin = cctl_xstrdup(!strcmp(hits.v[i].origin, "DLL folder")
						  ? "the program's folder"
					  : !strcmp(hits.v[i].origin, "RUNPATH")
						  ? "the program's RUNPATH"
						  : hits.v[i].origin);
		/* one of cudnnctl's versions (through current or not) */
		im->cudnnctl = c->versions && (in_dir(c->p, r, c->versions) ||
					       in_dir(c->p, hits.v[i].path, c->current));
		free(r);
		break;
	}
	cctl_lib_hits_release(&hits);
}

static void judge_import(struct ctx_app *c, struct cctl_app *a,
			 struct cctl_app_import *im)
{
	const char *prog = a->program;
	int cuda = a->ncuda ? a->cuda[0] : 0;
	char cudaopt[16] = "";
	if (cuda)
		snprintf(cudaopt, sizeof(cudaopt), " --cuda %d", cuda);
	if (!im->resolved) {
		im->status = CCTL_FAIL;
		im->finding = cctl_xstrfmt("%s (cuDNN %d) is found nowhere the loader "
					   "looks for %s",
					   im->name, im->major, prog);
		im->next = cctl_xstrfmt("cudnnctl install %d%s, then run it with "
					"cudnnctl exec %d -- %s",
					im->major, cudaopt, im->major, prog);
	} else if (c->active && c->active_major != im->major) {
		im->status = CCTL_FAIL;
		im->finding = cctl_xstrfmt("needs cuDNN %d (%s); the active install is %s, "
					   "and %s gets %s (%s)",
					   im->major, im->name, c->active, prog,
					   im->resolved, im->origin);
		im->next = cctl_xstrfmt("cudnnctl install %d%s --no-activate, then "
					"cudnnctl exec %d -- %s",
					im->major, cudaopt, im->major, prog);
	} else if (im->in_program_dir && c->active && !im->cudnnctl) {
		im->status = CCTL_WARN;
		im->finding = cctl_xstrfmt("%s gets its own copy, %s (%s), not cudnnctl's "
					   "%s",
					   prog, im->resolved, im->origin, c->active);
		im->next = cctl_xstrdup(
			c->p->windows ? "that copy wins for this program whatever is "
					"active: remove it from the program's folder to "
					"use cudnnctl's"
				      : "the program's RUNPATH leads there, before "
					"cudnnctl's: remove that copy, or build without "
					"that RUNPATH entry");
	} else if (c->active && !im->cudnnctl) {
		im->status = CCTL_WARN;
		im->finding = cctl_xstrfmt("%s gets %s (%s), not cudnnctl's active %s",
					   prog, im->resolved, im->origin, c->active);
		im->next = cctl_xstrfmt("run it as cudnnctl exec -- %s, or put cudnnctl's "
					"first for every program (%s)",
					prog, c->p->windows ? "cudnnctl switch"
							    : "eval \"$(cudnnctl env)\"");
	} else {
		im->status = CCTL_PASS;
		im->finding = cctl_xstrfmt("%s gets %s (%s)", prog, im->resolved,
					   im->origin);
	}
}

static void app_state(struct ctx_app *c, const struct cctl_root *r,
		      const char *program, struct cctl_lib_info *info)
{
	memset(c, 0, sizeof(*c));
	c->p = cctl_platform_host();
	c->root = r;
	if (r) {
		char *v = cctl_path_join(r->path, "versions", NULL);
		c->versions = cctl__real_path(v);
		c->current = cctl_path_join(r->path, "current", NULL);
		free(v);
		if (!cctl_store_active(NULL, r, &c->active) && c->active)
			c->active_major = atoi(c->active);
	}
	c->dir = cctl__dir_of(program);
	c->dir_real = cctl__real_path(c->dir);
	c->runpath = cctl_xcalloc(info->nrunpath + 2, sizeof(*c->runpath));
	if (c->p->windows) {
		c->runpath[0] = cctl_xstrdup(c->dir); /* the program's folder first */
	} else {
		for (size_t i = 0; i < info->nrunpath; i++)
			c->runpath[i] = cctl_xstrdup(info->runpath[i]);
	}
}

static void app_state_release(struct ctx_app *c)
{
	for (size_t i = 0; c->runpath && c->runpath[i]; i++)
		free(c->runpath[i]);
	free(c->runpath);
	free(c->versions);
	free(c->current);
	free(c->active);
	free(c->dir);
	free(c->dir_real);
}

int cctl_verify_app(struct cctl_ctx *ctx, const struct cctl_root *r,
		    const char *program, struct cctl_app *a)
{
	const struct cctl_platform *p = cctl_platform_host();
	struct cctl_lib_info info;
	struct ctx_app c;
	size_t fails = 0, warns = 0, cudnn = 0;
	int ret;

	memset(a, 0, sizeof(*a));
	if ((ret = cctl_os_lib_info(ctx, program, &info))) {
		cctl__hint(ctx, "give the program's file: an .exe or .dll, an ELF "
				"executable or shared library");
		return ret;
	}
	a->program = cctl_xstrdup(program);
	app_state(&c, r, program, &info);
	for (size_t i = 0; i < info.nneeded; i++) {
		int major, kind = classify(p, info.needed[i], &major);
		if (kind)
			add_import(a, info.needed[i], program, kind, major, 0);
	}
	cctl_lib_info_release(&info);
	folder_libs(p, a, c.dir);
	if (!a->cudnn_major) { /* not in the imports: at run time? */
		scan_names(p, a, program);
		a->runtime_load = a->cudnn_major != 0;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (!a->v[i].cudnn)
			continue;
		cudnn++;
		resolve(&c, &a->v[i]);
		judge_import(&c, a, &a->v[i]);
		fails += a->v[i].status == CCTL_FAIL;
		warns += a->v[i].status == CCTL_WARN;
	}
	a->result = fails ? CCTL_FAIL : warns ? CCTL_WARN : cudnn ? CCTL_PASS : CCTL_SKIP;
	if (!cudnn)
		a->finding = cctl_xstrdup("uses no cuDNN: none in its imports, those of "
					  "its folder's libraries, or its own bytes");
	else
		a->finding = cctl_xstrfmt("needs cuDNN %d%s%s", a->cudnn_major,
					  a->runtime_load ? ", loaded at run time (by name, "
							    "not in its imports)"
							  : "",
					  fails	  ? ": it will not get it"
					  : warns ? ": it gets another copy than cudnnctl's"
						  : "");
	app_state_release(&c);
	return 0;
}

static int is_main(const struct cctl_platform *p, const char *path)
{
	const char *b = base_of(path);
	return p->windows ? has_prefix_ci(b, "cudnn64_") : !strncmp(b, "libcudnn.so.", 12);
}

static void judge_run(const struct cctl_platform *p, struct ctx_app *c,
		      struct cctl_app *a)
{
	const char *main = NULL;
	char *main_dir = NULL;
	size_t foreign = 0;
	for (size_t i = 0; i < a->nloaded && !main; i++)
		if (is_main(p, a->loaded[i].path))
			main = a->loaded[i].path;
	if (!a->nloaded) {
		a->run_result = a->cudnn_major ? CCTL_WARN : CCTL_PASS;
		a->run_finding = cctl_xstrfmt("it loaded no cuDNN in its run (exit status "
					      "%d)%s",
					      a->run_status,
					      a->cudnn_major ? ": give it arguments that reach "
							       "cuDNN (cudnnctl verify --app P "
							       "--run -- ARGS)"
							     : "");
		return;
	}
	main_dir = main ? cctl__dir_of(main) : NULL;
	if (main_dir) {
		char *r = cctl__real_path(main_dir);
		free(main_dir);
		main_dir = r;
	}
	for (size_t i = 0; i < a->nloaded; i++) {
		struct cctl_loaded_lib *l = &a->loaded[i];
		char *d = cctl__dir_of(l->path), *rd = cctl__real_path(d);
		int same = main_dir && !ci_cmp(rd, main_dir) &&
			   (p->windows || !strcmp(rd, main_dir));
		l->origin = cctl_xstrdup(same ? "the main library's folder" : rd);
		if (!same && main) {
			l->foreign = 1;
			foreign++;
			if (!a->run_next)
				a->run_next = cctl_xstrfmt(
					"%s came from %s, not from %s beside %s: take that "
					"folder off %s, or delete the cuDNN copy there",
					base_of(l->path), rd, main_dir, base_of(main),
					p->lib_var);
		}
		free(d);
		free(rd);
	}
	if (foreign) {
		a->run_result = CCTL_FAIL;
		a->run_finding = cctl_xstrfmt("it loaded %zu cuDNN libraries, %zu from "
					      "another folder than %s's",
					      a->nloaded, foreign, base_of(main));
	} else {
		int ours = c->versions && (in_dir(p, main_dir, c->versions) ||
					   in_dir(p, main, c->current));
		a->run_result = CCTL_PASS;
		a->run_finding = cctl_xstrfmt("it loaded %zu cuDNN libraries, all from %s%s",
					      a->nloaded, main_dir ? main_dir : "?",
					      ours ? " (cudnnctl's)" : "");
	}
	free(main_dir);
}

int cctl_verify_app_run(struct cctl_ctx *ctx, const struct cctl_root *r,
			const char *const *argv, struct cctl_app *a)
{
	const struct cctl_platform *p = cctl_platform_host();
	const char *t = cctl_os_getenv("CUDNNCTL_APP_TIMEOUT");
	long timeout_s = t ? atol(t) : 60;
	char *tmp = cctl_os_temp_dir(), *leaf = cctl__unique_leaf("cudnnctl-app-");
	char *dir = cctl_path_join(tmp, leaf, NULL), **loaded = NULL;
	struct cctl_lib_info none;
	struct ctx_app c;
	size_t n = 0;
	int ret;

	free(tmp);
	free(leaf);
	if (timeout_s <= 0 || timeout_s > 86400)
		timeout_s = 60;
	if ((ret = cctl_os_mkdir(ctx, dir))) {
		free(dir);
		return ret;
	}
	a->output = cctl_path_join(dir, "output.txt", NULL);
	free(dir);
	if ((ret = cctl_os_run_traced(ctx, argv, (unsigned)timeout_s * 1000u, a->output,
				      &loaded, &n, &a->run_status)))
		return ret;
	a->ran = 1;
	for (size_t i = 0; i < n; i++) {
		struct cctl_loaded_lib *l;
		int major;
		if (classify(p, loaded[i], &major) == 1) {
			a->loaded = cctl_xrealloc(a->loaded, (a->nloaded + 1) * sizeof(*l));
			l = &a->loaded[a->nloaded++];
			memset(l, 0, sizeof(*l));
			l->path = loaded[i];
		} else {
			free(loaded[i]);
		}
	}
	free(loaded);
	memset(&none, 0, sizeof(none));
	app_state(&c, r, a->program ? a->program : argv[0], &none);
	judge_run(p, &c, a);
	app_state_release(&c);
	return 0;
}

void cctl_app_release(struct cctl_app *a)
{
	for (size_t i = 0; i < a->nloaded; i++) {
		free(a->loaded[i].path);
		free(a->loaded[i].version);
		free(a->loaded[i].origin);
	}
	free(a->loaded);
	free(a->output);
	free(a->run_finding);
	free(a->run_next);
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].name);
		free(a->v[i].by);
		free(a->v[i].resolved);
		free(a->v[i].origin);
		free(a->v[i].finding);
		free(a->v[i].next);
	}
	free(a->v);
	free(a->program);
	free(a->finding);
	memset(a, 0, sizeof(*a));
}

/*
 * The load stage's second half: where every cuDNN sub-library comes from.
 *
 * cuDNN 9's main library loads its sub-libraries later, by name, so the
 * loader's search decides them (LD_LIBRARY_PATH before the main library's
 * RUNPATH $ORIGIN on Linux; PATH for a DLL missing beside cudnn64_9.dll):
 * a main library from one folder can run with sub-libraries from another
 * copy, which fails only at the first convolution.  The version checks
 * the main library exports make it load each sub-library now; then every
 * cuDNN library mapped into this process is listed with its folder,
 * version and where it came from, and one from another folder or of
 * another version than the main library is a failure naming it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "verify-internal.h"

/* 9.x, then 8.x's (each sub-library exports its own too) */
static const char *const checks[] = {
	"cudnnGraphVersionCheck",    "cudnnOpsVersionCheck",
	"cudnnCnnVersionCheck",      "cudnnAdvVersionCheck",
	"cudnnOpsInferVersionCheck", "cudnnOpsTrainVersionCheck",
	"cudnnCnnInferVersionCheck", "cudnnCnnTrainVersionCheck",
	"cudnnAdvInferVersionCheck", "cudnnAdvTrainVersionCheck",
	NULL
};

static const char *base_of(const char *path)
{
	const char *s = cctl__last_sep(path);
	return s ? s + 1 : path;
}

/* a equals b, ignoring ASCII case where the platform's file names do */
static int name_eq(const struct cctl_platform *p, const char *a, const char *b,
		   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int x = (unsigned char)a[i], y = (unsigned char)b[i];
		if (p->windows)
			x = tolower(x), y = tolower(y);
		if (x != y)
			return 0;
		if (!x)
			return 1;
	}
	return 1;
}

static int is_cudnn(const struct cctl_platform *p, const char *path)
{
	const char *b = base_of(path);
	size_t n = strlen(b);
	if (p->windows)
		return n > 9 && name_eq(p, b, "cudnn", 5) &&
		       name_eq(p, b + n - 4, ".dll", 4);
	return !strncmp(b, "libcudnn", 8) && strstr(b, ".so") != NULL;
}

static int same_dir(const struct cctl_platform *p, const char *a, const char *b)
{
	return strlen(a) == strlen(b) && name_eq(p, a, b, strlen(a));
}

char *cctl__lib_file_version(const struct cctl_platform *p, const char *path)
{
	struct cctl_buf real = CCTL_BUF_INIT;
	char *v = NULL;
	int a, b, c;
	if (p->windows) {
		struct cctl_lib_info info;
		if (!cctl_os_lib_info(NULL, path, &info) && info.file_version &&
		    sscanf(info.file_version, "%d.%d.%d", &a, &b, &c) == 3)
			v = cctl_xstrfmt("%d.%d.%d", a, b, c);
		cctl_lib_info_release(&info);
	} else if (!cctl_os_realpath(NULL, path, &real)) {
		const char *so = strstr(base_of(real.buf), ".so.");
		if (so && sscanf(so + 4, "%d.%d.%d", &a, &b, &c) == 3)
			v = cctl_xstrfmt("%d.%d.%d", a, b, c);
	}
	cctl_buf_release(&real);
	return v;
}

/* The folder of path, links resolved. */
static char *real_dir(const char *path)
{
	char *r = cctl__real_path(path), *dir = cctl__dir_of(r);
	free(r);
	return dir;
}

/* Which entry of the loader's list holds dir: "LD_LIBRARY_PATH entry 2
 * (/opt/b)", or NULL. */
static char *list_entry(const struct cctl_platform *p, const char *dir)
{
	const char *list = cctl_os_getenv(p->lib_var);
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	int i = 0;
	while (list && *list) {
		size_t n = strcspn(list, sep);
		char *e = cctl_xstrfmt("%.*s", (int)n, list), *er = cctl__real_path(e);
		int same = n && same_dir(p, er, dir);
		free(er);
		i++;
		if (same) {
			char *out = cctl_xstrfmt("entry %d of %s", i, p->lib_var);
			free(e);
			return out;
		}
		free(e);
		list += n + (list[n] ? 1 : 0);
	}
	return NULL;
}

/* Calls every version check the main library exports (each loads its
 * sub-library); the failures' status codes in st[] (0: passed or not
 * exported). */
static void run_checks(struct run *r, cctl_cudnnStatus st[])
{
	for (size_t i = 0; checks[i]; i++) {
		cctl_cudnnStatus (*fn)(void);
		*(void **)&fn = cctl_os_dl_sym(r->cudnn, checks[i]);
		st[i] = fn ? fn() : 0;
	}
}

/* soft: the only foreign libraries are another version's of this root,
 * checked as if this one were active (a warning, as that is) */
static void judge_checks(struct run *r, const cctl_cudnnStatus st[], int soft)
{
	for (size_t i = 0; checks[i]; i++) {
		if (!st[i])
			continue;
		cctl__judge(r, soft ? CCTL_WARN : CCTL_FAIL,
			    "see the libraries listed: each must come from the "
			    "main library's folder (reinstall the version if one "
			    "is missing there)",
			    "%s() failed: %s (status %d): a sub-library is missing "
			    "or of another version",
			    checks[i],
			    r->dnn.cudnnGetErrorString
				    ? r->dnn.cudnnGetErrorString(st[i])
				    : "?",
			    (int)st[i]);
	}
}

/* 0: from the main library's folder, of its version; 1: another
 * version's of this root while a non-active one is checked (a warning);
 * 2: from elsewhere, or of another release (a failure). */
static int judge_lib(struct run *r, struct cctl_loaded_lib *l,
		     const char *main_dir, const char *main_version,
		     const char *main_name)
{
	int bad = 0;
	char *dir = real_dir(l->path);
	char *root = r->root ? cctl__real_path(r->root->path) : NULL;
	size_t rl = root ? strlen(root) : 0;
	if (!same_dir(r->plat, dir, main_dir) && r->have_rec && !r->rec.active &&
	    root && strlen(dir) > rl && name_eq(r->plat, dir, root, rl) &&
	    (dir[rl] == '/' || dir[rl] == '\\')) {
		/* checked as if it were active: this shell's search path names
		 * the active version, whose sub-libraries a program loading
		 * this one by its path gets */
		char *fix = cctl_xstrfmt("run programs with it through cudnnctl exec %s "
					 "(its own folder first), or switch to it",
					 r->rec.id);
		l->foreign = bad = 1;
		cctl__judge(r, CCTL_WARN, fix,
			    "%s came from %s (%s), another version of this root: "
			    "%s is not the active one",
			    base_of(l->path), dir, l->origin, r->rec.id);
		free(fix);
	} else if (!same_dir(r->plat, dir, main_dir)) {
		char *fix = cctl_xstrfmt(
			"take that folder off %s, or delete the cuDNN copy in it; "
			"cudnnctl exec runs a program with the install's folder "
			"first",
			r->plat->lib_var);
		l->foreign = 1;
		bad = 2;
		cctl__fail(r, fix, "%s was loaded from %s (%s), not from %s "
				   "beside %s",
			   base_of(l->path), dir, l->origin, main_dir, main_name);
		free(fix);
	} else if (l->version && main_version && strcmp(l->version, main_version)) {
		l->foreign = 1;
		bad = 2;
		cctl__fail(r, "reinstall this version: its folder mixes releases",
			   "%s is cuDNN %s, the main library %s", l->path,
			   l->version, main_version);
	}
	free(root);
	free(dir);
	return bad;
}

void cctl__check_sublibraries(struct run *r)
{
	const struct cctl_platform *p = r->plat;
	const char *main = r->v->loaded ? r->v->loaded : r->v->library;
	char **paths = NULL, *main_dir, *main_version;
	cctl_cudnnStatus st[sizeof(checks) / sizeof(*checks)];
	size_t n = 0, foreign = 0;
	int worst = 0;

	/* test hook: the load stage as it was before this check, so that the
	 * GPU host's run can show what the convolution does with a mixed set
	 * (tests/gpu/sublibs.sh) */
	if (cctl_os_getenv("CUDNNCTL_TEST_NO_SUBLIBRARY_CHECK"))
		return;
	run_checks(r, st);
	if (cctl_os_loaded_libraries(NULL, &paths, &n)) {
		judge_checks(r, st, 0);
		return;
	}
	main_dir = real_dir(main);
	main_version = cctl__lib_file_version(p, main);
	for (size_t i = 0; i < n; i++) {
		struct cctl_loaded_lib *l;
		char *dir;
		if (!is_cudnn(p, paths[i]))
			continue;
		r->v->libs = cctl_xrealloc(r->v->libs, (r->v->nlibs + 1) * sizeof(*l));
		l = &r->v->libs[r->v->nlibs++];
		memset(l, 0, sizeof(*l));
		l->path = cctl_xstrdup(paths[i]);
		l->version = cctl__lib_file_version(p, paths[i]);
		dir = real_dir(paths[i]);
		l->origin = same_dir(p, dir, main_dir)
				    ? cctl_xstrdup("the main library's folder")
				    : list_entry(p, dir);
		if (!l->origin)
			l->origin = cctl_xstrdup(p->windows ? "a system folder"
							    : "the loader's cache or a "
							      "system folder");
		free(dir);
		{
			int bad = judge_lib(r, l, main_dir, main_version, base_of(main));
			worst = bad > worst ? bad : worst;
		}
		foreign += (size_t)l->foreign;
	}
	judge_checks(r, st, worst == 1);
	if (r->v->nlibs) {
		struct cctl_stage_result *s = &r->stages[r->current];
		char *f = cctl_xstrfmt("%s; %zu cuDNN libraries loaded, %s", s->finding,
				       r->v->nlibs,
				       foreign ? "some from elsewhere"
					       : "all from its folder");
		cctl__finding(r, "%s", f);
		free(f);
	}
	free(main_dir);
	free(main_version);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/*
 * verify --python: which cuDNN each framework of a Python environment
 * really loads.  The probe (pyprobe.py, compiled in) runs under the
 * interpreter once per framework, in a process of its own with a time
 * limit, so that one framework that crashes or hangs hides nothing else;
 * it reports tab-separated lines, judged here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"
#include "verify-internal.h"

extern const char cctl__pyprobe[];

static char *xstrndup(const char *s, size_t n)
{
	char *d = cctl_xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static const char *const frameworks[] = { "torch", "onnxruntime", "ctranslate2",
					  "cupy", "tensorflow", "jax" };

/* The probe's library names, from the platform table: the main library
 * of each major, newest first, comma-separated, and the newest major's
 * ops library (what a framework that loads sub-libraries by name loads). */
static void probe_names(struct cctl_buf *mains, const char **ops)
{
	const struct cctl_libset *l = cctl_platform_host()->libsets;
	size_t n = 0;
	*ops = "";
	while (l[n].major)
		n++;
	for (size_t i = n; i-- > 0;) {
		cctl_buf_addf(mains, "%s%s", mains->len ? "," : "", l[i].names[0]);
		for (size_t k = 0; i == n - 1 && l[i].names[k]; k++)
			if (!**ops && strstr(l[i].names[k], "_ops"))
				*ops = l[i].names[k];
	}
}

/* The interpreter: the active virtual or conda environment's, else the
 * one on PATH. */
static char *pick_interpreter(const char *given)
{
	const int win = cctl_platform_host()->windows;
	const char *env = cctl_os_getenv("VIRTUAL_ENV");
	if (given)
		return cctl_xstrdup(given);
	if (!env)
		env = cctl_os_getenv("CONDA_PREFIX");
	if (env)
		return win ? cctl_path_join(env, cctl_os_getenv("VIRTUAL_ENV") ? "Scripts"
									 : "",
					    "python.exe", NULL)
			   : cctl_path_join(env, "bin", "python", NULL);
	return cctl_xstrdup(win ? "python" : "python3");
}

/* The first n bytes of a and b are the same file name's; on Windows in any
 * case (C:\\Users vs c:\\users: a module's name is spelled as it was
 * loaded, in PATH's spelling). */
static int same_name(const char *a, const char *b, size_t n)
{
	const int win = cctl_platform_host()->windows;
	for (size_t i = 0; i < n; i++)
		if (win ? tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])
			: a[i] != b[i])
			return 0;
	return 1;
}

/* path is inside dir */
static int starts_with_dir(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;
	return n && strlen(path) > n && same_name(path, dir, n) &&
	       (path[n] == '/' || path[n] == '\\');
}

static char *origin_of(struct cctl_framework *f, struct cctl_framework_lib *l,
		       const struct cctl_root *r, const char *active)
{
	if (strstr(l->path, "/nvidia/cudnn/") || strstr(l->path, "\\nvidia\\cudnn\\"))
		return cctl_xstrdup("pip nvidia-cudnn wheel");
	if (starts_with_dir(l->path, f->location))
		return cctl_xstrfmt("bundled with %s", f->name);
	if (r) {
		char *cur = cctl_path_join(r->path, "current", NULL);
		char *versions = cctl_path_join(r->path, "versions", NULL);
		char *act = active ? cctl_path_join(r->path, "versions", active, NULL) : NULL;
		char *o = NULL;
		l->active = starts_with_dir(l->path, cur) || (act && starts_with_dir(l->path, act));
		if (l->active)
			o = cctl_xstrdup("cudnnctl, the active version");
		else if (starts_with_dir(l->path, versions))
			o = cctl_xstrdup("cudnnctl, not the active version");
		free(cur);
		free(versions);
		free(act);
		if (o)
			return o;
	}
	return cctl_xstrdup("another copy on this system");
}

static void parse(struct cctl_framework *f, const char *text)
{
	while (*text) {
		size_t len = strcspn(text, "\n"), end = len;
		char *line, *tab;
		while (end && text[end - 1] == '\r') /* a child writing text mode */
			end--;
		line = xstrndup(text, end);
		tab = strchr(line, '\t');
		char *v = tab ? tab + 1 : line + strlen(line);
		if (tab)
			*tab = '\0';
		if (!strcmp(line, "absent")) {
			f->present = 0;
		} else if (!strcmp(line, "skip")) {
			free(f->skip);
			f->skip = cctl_xstrdup(v);
		} else if (!strcmp(line, "version")) {
			free(f->version);
			f->version = cctl_xstrdup(v);
		} else if (!strcmp(line, "location")) {
			free(f->location);
			f->location = cctl_xstrdup(v);
		} else if (!strcmp(line, "built")) {
			f->built = atol(v);
		} else if (!strcmp(line, "error") && !f->error) {
			f->error = cctl_xstrdup(v);
		} else if (!strcmp(line, "sub") && *v) {
			f->subs = cctl_xrealloc(f->subs, (f->nsubs + 1) * sizeof(*f->subs));
			f->subs[f->nsubs++] = cctl_xstrdup(v);
		} else if (!strcmp(line, "lib")) {
			char *path = strchr(v, '\t');
			if (path) {
				struct cctl_framework_lib *l;
				f->libs = cctl_xrealloc(f->libs, (f->nlibs + 1) * sizeof(*l));
				l = &f->libs[f->nlibs++];
				memset(l, 0, sizeof(*l));
				l->version = atol(v);
				l->path = cctl_xstrdup(path + 1);
			}
		}
		free(line);
		text += len + (text[len] ? 1 : 0);
	}
}

/* The library a loader's message is about: the path or name before
 * ": cannot open shared object file" / ": undefined symbol", or a .dll
 * name (Windows messages put it first); NULL when it names none. */
static char *lib_in(const char *msg, const char *marker)
{
	const char *end = strstr(msg, marker), *start;
	if (!end)
		return NULL;
	start = end;
	while (start > msg && start[-1] != ' ' && start[-1] != '\'' && start[-1] != '"')
		start--;
	return end > start ? xstrndup(start, (size_t)(end - start)) : NULL;
}

static const char *base(const char *p)
{
	const char *s = cctl__last_sep(p);
	return s ? s + 1 : p;
}

/* What provides name, when it is one of the libraries cuDNN needs beside
 * its own (cuBLASLt, NVRTC, zlibwapi, the VC++ runtime): the platform
 * table's fix, for the CUDA major the name carries; NULL otherwise. */
static char *provider_of(const char *name)
{
	const struct cctl_platform *plat = cctl_platform_host();
	const char *main_lib = cctl_platform_main_library(plat, 9);
	for (const struct cctl_dep *d = plat->deps; d->file; d++) {
		for (int cuda = 11; cuda <= 13; cuda++) {
			char *file = cctl_dep_file(d, cuda), *fix = NULL;
			if (strlen(name) == strlen(file) && same_name(name, file, strlen(file)))
				fix = cctl_dep_fix(d, cuda, "cuDNN's folder", main_lib);
			free(file);
			if (fix)
				return fix;
		}
	}
	return NULL;
}

/* The hint for a failed load, from the loader's message. */
static char *load_hint(const char *msg)
{
	char *lib, *hint = NULL, *fix;
	if ((lib = lib_in(msg, ": cannot open shared object file")) &&
	    (fix = provider_of(base(lib)))) {
		hint = cctl_xstrfmt("%s, which cuDNN needs, cannot be found: %s", base(lib), fix);
		free(fix);
	} else if (lib) {
		hint = strstr(lib, "cudnn")
			       ? cctl_xstrfmt("%s is missing from the cuDNN this framework "
					      "finds on the search path: cudnnctl verify names "
					      "what the install lacks; reinstall it",
					      base(lib))
			       : cctl_xstrfmt("%s, which cuDNN needs, cannot be found: install "
					      "it (cudnnctl verify's dependencies stage names the "
					      "package) and put its folder on the search path",
					      base(lib));
	} else if ((lib = lib_in(msg, ": undefined symbol"))) {
		hint = cctl_xstrfmt("%s came from another cuDNN (%s) than the one loaded "
				    "first: the copy on the search path lacks it, so the "
				    "loader took another; two builds are mixed. Reinstall the "
				    "first one whole (cudnnctl verify says what it lacks)",
				    base(lib), lib);
	} else if ((lib = lib_in(msg, "' (or one of its dependencies)")) &&
		   (fix = provider_of(base(lib)))) {
		hint = cctl_xstrfmt("%s, which cuDNN needs, cannot be found: %s", base(lib), fix);
		free(fix);
	} else if (lib) {
		/* Python 3.8+ on Windows, error 126: the DLL or one it imports */
		hint = cctl_xstrfmt("%s or a DLL it needs cannot be found (Windows says the "
				    "same of both): cudnnctl verify's dependencies stage names "
				    "a missing one (cuBLASLt, zlibwapi); if %s itself is "
				    "missing, install cuDNN with cudnnctl and open a new "
				    "terminal so that PATH has it",
				    base(lib), base(lib));
	} else if (strstr(msg, "[WinError 127]") || strstr(msg, "procedure could not be found")) {
		hint = cctl_xstrdup("a cuDNN DLL lacks a function another one needs: two cuDNN "
				    "builds are mixed on PATH; cudnnctl verify lists the copies");
	} else if (strstr(msg, "cudnn") && (strstr(msg, "126") || strstr(msg, "not be found") ||
					   strstr(msg, "Could not locate"))) {
		hint = cctl_xstrdup("a cuDNN DLL or one it needs (cuBLASLt, zlibwapi) is not "
				    "on PATH: run cudnnctl verify, whose dependencies stage "
				    "names it");
	}
	free(lib);
	return hint;
}

/* The folder of path, its links resolved (as is when it cannot be). */
static char *real_dir(const char *path)
{
	char *r = cctl__real_path(path), *dir = cctl__dir_of(r);
	free(r);
	return dir;
}

/* Windows folders compare without case */
static int same_folder(const char *a, const char *b)
{
	int win = cctl_platform_host()->windows;
	for (; *a && *b; a++, b++)
		if (win ? tolower((unsigned char)*a) != tolower((unsigned char)*b)
			: *a != *b)
			return 0;
	return *a == *b;
}

static const char *base_name(const char *path)
{
	const char *s = cctl__last_sep(path);
	return s ? s + 1 : path;
}

/* A sub-library mapped from another folder than the main library's
 * (links resolved), or NULL. */
static const char *sub_elsewhere(const struct cctl_framework *f)
{
	char *main = real_dir(f->libs[0].path);
	const char *other = NULL;
	for (size_t i = 0; i < f->nsubs && !other; i++) {
		char *d = real_dir(f->subs[i]);
		if (!same_folder(d, main))
			other = f->subs[i];
		free(d);
	}
	free(main);
	return other;
}

static void judge(struct cctl_framework *f, const char *active_version, int timeout_s)
{
	const char *foreign;
	char ver[32] = "";
	if (!f->present) {
		f->result = CCTL_SKIP;
		f->finding = cctl_xstrdup("not installed in this interpreter");
		return;
	}
	if (f->skip && !f->error && !f->nlibs && f->status == 0) {
		f->result = CCTL_SKIP;
		f->finding = cctl_xstrdup(f->skip);
		return;
	}
	if (f->status == -1) {
		f->result = CCTL_FAIL;
		f->finding = cctl_xstrfmt("did not finish in %d s (hung while loading)", timeout_s);
		f->hint = cctl_xstrdup("run it alone to see where it stops: python -c 'import ...'");
		return;
	}
	if (f->status >= 128 && f->status != 127) {
		f->result = CCTL_FAIL;
		f->finding = f->status & 0x100 && f->status < 0x200
				     ? cctl_xstrfmt("crashed (exception 0xC00000%02X) while loading cuDNN",
						    f->status & 0xff)
				     : cctl_xstrfmt("crashed (signal %d) while loading cuDNN",
						    f->status - 128);
		f->hint = cctl_xstrdup("a crash in loading is often two cuDNN builds in one "
				       "process: see the libraries it had mapped");
		return;
	}
	if (f->error) {
		f->result = CCTL_FAIL;
		f->finding = cctl_xstrdup(f->error);
		f->hint = load_hint(f->error);
		return;
	}
	if (!f->nlibs) {
		f->result = CCTL_WARN;
		f->finding = cctl_xstrdup("imported; no cuDNN was loaded (it may load cuDNN only "
					  "with a GPU)");
		return;
	}
	cctl_decode_cudnn_version(f->libs[0].version, ver, sizeof(ver));
	f->result = CCTL_PASS;
	f->finding = cctl_xstrfmt("loads %s (cuDNN %s), %s", f->libs[0].path, ver,
				  f->libs[0].origin);
	if ((foreign = sub_elsewhere(f))) {
		/* cuDNN loads its sub-libraries by name: the search path gave
		 * this process another copy's (an incomplete wheel, a stale
		 * copy on LD_LIBRARY_PATH or PATH) */
		char *dir = real_dir(f->libs[0].path);
		char *there = real_dir(foreign);
		f->result = CCTL_FAIL;
		free(f->finding);
		f->finding = cctl_xstrfmt("cuDNN libraries from two folders: %s from %s, "
					  "%s from %s",
					  base_name(f->libs[0].path), dir,
					  base_name(foreign), there);
		f->hint = cctl_xstrfmt("a framework's cuDNN must come whole from one folder: "
				       "complete %s, or take %s off the search path",
				       dir, there);
		free(dir);
		free(there);
	} else if (f->nlibs > 1) {
		f->result = CCTL_WARN;
		f->hint = cctl_xstrfmt("%zu copies of cuDNN in one process: they can crash or "
				       "give wrong results; remove all but one from its search",
				       f->nlibs);
	} else if (!f->libs[0].active && strncmp(f->libs[0].origin, "bundled", 7) &&
		   strncmp(f->libs[0].origin, "pip", 3) && active_version) {
		f->result = CCTL_WARN;
		f->hint = cctl_xstrfmt("it does not use cudnnctl's active %s: put that first on "
				       "the search path (cudnnctl env)",
				       active_version);
	} else if (!f->libs[0].active) {
		f->hint = cctl_xstrdup("it uses its own cuDNN, not cudnnctl's: that is fine");
	}
}

int cctl_verify_python(struct cctl_ctx *ctx, const struct cctl_root *r,
		       const char *interpreter, char **used,
		       struct cctl_framework **out, size_t *n)
{
	const char *t = cctl_os_getenv("CUDNNCTL_PYTHON_TIMEOUT");
	int timeout_s = t && atoi(t) > 0 ? atoi(t) : 120, status = 0, ret;
	char *py = pick_interpreter(interpreter), *active = NULL;
	struct cctl_framework *f;
	struct cctl_buf o = CCTL_BUF_INIT, mains = CCTL_BUF_INIT;
	const char *ops, *check[] = { py, "-c", "import sys; print(sys.version)", NULL };

	*out = NULL;
	*n = 0;
	*used = py;
	if ((ret = cctl_os_run_capture(ctx, check, 60000, &o, NULL, &status)))
		return ret;
	cctl_buf_release(&o);
	if (status) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND, "cannot run the Python interpreter '%s' "
						       "(status %d)",
				  py, status);
		if (status == 9009 && cctl_platform_host()->windows)
			/* the App Installer's python.exe, which only opens the Store */
			cctl__hint(ctx, "'%s' is the Microsoft Store's placeholder, not a Python: "
					"give the interpreter (verify --python C:\\path\\to\\python.exe) "
					"or activate the environment first",
				   py);
		else
			cctl__hint(ctx, "give the interpreter (verify --python PATH) or activate "
					"the virtual or conda environment first");
		return ret;
	}
	if (r && cctl_store_active(NULL, r, &active))
		active = NULL;
	f = cctl_xcalloc(CCTL_ARRAY_SIZE(frameworks), sizeof(*f));
	probe_names(&mains, &ops);
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(frameworks); i++) {
		const char *argv[] = { py, "-c", cctl__pyprobe, frameworks[i], mains.buf,
				       ops, NULL };
		struct cctl_buf err = CCTL_BUF_INIT;
		double t0 = cctl_os_now_ms();
		f[i].name = frameworks[i];
		f[i].present = 1;
		if ((ret = cctl_os_run_capture(ctx, argv, (unsigned)timeout_s * 1000u, &o,
					       &err, &f[i].status))) {
			cctl_buf_release(&err);
			break;
		}
		parse(&f[i], o.buf ? o.buf : "");
		if (!f[i].error && f[i].status && f[i].status != -1 && f[i].status < 128 &&
		    err.len) {
			/* an exit with a message (a loader error before Python) */
			size_t k = err.len;
			while (k && (err.buf[k - 1] == '\n' || err.buf[k - 1] == '\r'))
				k--;
			f[i].error = xstrndup(err.buf, k);
		}
		for (size_t k = 0; k < f[i].nlibs; k++)
			f[i].libs[k].origin = origin_of(&f[i], &f[i].libs[k], r, active);
		f[i].ms = cctl_os_now_ms() - t0;
		judge(&f[i], active, timeout_s);
		cctl_buf_reset(&o);
		cctl_buf_release(&err);
	}
	cctl_buf_release(&o);
	cctl_buf_release(&mains);
	free(active);
	*out = f;
	*n = CCTL_ARRAY_SIZE(frameworks);
	return ret;
}

void cctl_frameworks_release(struct cctl_framework *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].version);
		free(f[i].location);
		free(f[i].error);
		free(f[i].finding);
		free(f[i].hint);
		free(f[i].skip);
		for (size_t k = 0; k < f[i].nlibs; k++) {
			free(f[i].libs[k].path);
			free(f[i].libs[k].origin);
		}
		free(f[i].libs);
		for (size_t k = 0; k < f[i].nsubs; k++)
			free(f[i].subs[k]);
		free(f[i].subs);
	}
	free(f);
}

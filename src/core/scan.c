/*
 * cudnnctl scan: every cuDNN copy in the places copies are found (the
 * loader's search path of a new process, the CUDA toolkits, System32, the
 * NVIDIA installer's folders, conda environments, the site-packages of
 * the Python interpreters on PATH, the system's library folders, this
 * root), and with --deep in whole trees, walked under a time limit.  Each
 * folder's cuDNN libraries make one copy per major; scan-owner.c says
 * whose each is, its version and CUDA major.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"
#include "verify-internal.h"

struct scan {
	struct cctl_ctx *ctx;
	const struct cctl_platform *p;
	const struct cctl_root *root;
	struct cctl_scan *out;
	char **seen; /* folders looked at, links resolved */
	size_t nseen;
	char *lib_path;  /* the search list a new process gets */
	double deadline; /* of --deep's walk, in cctl_os_now_ms */
	char **pys;      /* the interpreters asked, links resolved */
	size_t npys;
};

static int seen_before(struct scan *s, const char *dir)
{
	char *real = cctl__real_path(dir);
	for (size_t i = 0; i < s->nseen; i++)
		if (cctl__same_file(s->seen[i], real) || !strcmp(s->seen[i], real)) {
			free(real);
			return 1;
		}
	s->seen = cctl_xrealloc(s->seen, (s->nseen + 1) * sizeof(*s->seen));
	s->seen[s->nseen++] = real;
	return 0;
}

static int is_dir(const char *path)
{
	struct cctl_os_stat st;
	if (cctl_os_stat(NULL, path, &st))
		return 0;
	if (st.type == CCTL_OS_LINK) {
		char *real = cctl__real_path(path);
		int d = strcmp(real, path) && is_dir(real);
		free(real);
		return d;
	}
	return st.type == CCTL_OS_DIR;
}

/* The cuDNN libraries of major in names, as a new array of copies. */
static void add_copy(struct scan *s, const char *dir, const char *place,
		     int major, char **names, size_t n)
{
	struct cctl_copy *c;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += cctl_platform_is_library(s->p, major, names[i]);
	if (!k)
		return;
	s->out->v = cctl_xrealloc(s->out->v, (s->out->n + 1) * sizeof(*s->out->v));
	c = &s->out->v[s->out->n++];
	memset(c, 0, sizeof(*c));
	c->dir = cctl_xstrdup(dir);
	c->place = cctl_xstrdup(place);
	c->major = major;
	c->files = cctl_xcalloc(k, sizeof(*c->files));
	for (size_t i = 0; i < n; i++)
		if (cctl_platform_is_library(s->p, major, names[i]))
			c->files[c->nfiles++] = cctl_xstrdup(names[i]);
}

/* One folder: a copy for each major whose libraries it holds. */
static void look(struct scan *s, const char *dir, const char *place)
{
	char **names = NULL;
	size_t n = 0, before = s->out->n;
	if (!dir || !*dir || !is_dir(dir) || seen_before(s, dir))
		return;
	s->out->places++;
	if (cctl_os_listdir(NULL, dir, &names, &n))
		return;
	for (const struct cctl_libset *l = s->p->libsets; l->major; l++)
		add_copy(s, dir, place, l->major, names, n);
	if (s->out->n - before > 1)
		for (size_t i = before; i < s->out->n; i++)
			s->out->v[i].mixed = cctl_xstrdup("8.x and 9.x");
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void look_sub(struct scan *s, const char *dir, const char *sub,
		     const char *place)
{
	char *d;
	if (!dir || !*dir)
		return;
	d = *sub ? cctl_path_join(dir, sub, NULL) : cctl_xstrdup(dir);
	look(s, d, place);
	free(d);
}

/* Every subfolder of dir whose name starts with prefix: each's sub. */
static void look_glob(struct scan *s, const char *dir, const char *prefix,
		      const char *const *subs, const char *place)
{
	char **names = NULL;
	size_t n = 0;
	if (!dir || cctl_os_listdir(NULL, dir, &names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(names[i], prefix, strlen(prefix))) {
			char *d = cctl_path_join(dir, names[i], NULL);
			for (const char *const *sub = subs; *sub; sub++)
				look_sub(s, d, *sub, place);
			free(d);
		}
		free(names[i]);
	}
	free(names);
}

/* ------------------------------------------------------------ places */

/* The search list a new process gets: Windows, the registry's PATH;
 * POSIX, LD_LIBRARY_PATH with the active version's folder first where
 * env.sh puts it there. */
static char *new_process_path(struct scan *s)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	const char *env = cctl_os_getenv(s->p->lib_var);
	char *cur;
	if (!cctl_os_session_path(NULL, &b) && b.buf)
		return cctl_buf_detach(&b);
	cctl_buf_release(&b);
	if (!s->out->active_dir || cctl__activation_is_system(s->root))
		return cctl_xstrdup(env ? env : "");
	cur = cctl_path_join(s->root->path, "current", s->p->lib_dir, NULL);
	if (cctl__path_has(env, cur) || cctl__path_has(env, s->out->active_dir)) {
		free(cur);
		return cctl_xstrdup(env);
	}
	{
		char *l = cctl__path_list_prepend(cur, env);
		free(cur);
		return l;
	}
}

static void look_list(struct scan *s, const char *list, const char *what)
{
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	int i = 0;
	while (list && *list) {
		size_t n = strcspn(list, sep);
		char *e = cctl_xstrfmt("%.*s", (int)n, list);
		char *place = cctl_xstrfmt("%s entry %d", what, ++i);
		look(s, e, place);
		free(place);
		free(e);
		list += n + (list[n] ? 1 : 0);
	}
}

/* The folders where the loader finds each major's main library. */
static void look_loader(struct scan *s)
{
	for (const struct cctl_libset *l = s->p->libsets; l->major; l++) {
		struct cctl_lib_hits h = { 0 };
		if (!cctl_os_lib_search(NULL, l->names[0], s->lib_path, NULL, &h))
			for (size_t i = 0; i < h.n; i++) {
				char *dir = cctl__dir_of(h.v[i].path);
				look(s, dir, h.v[i].origin);
				free(dir);
			}
		cctl_lib_hits_release(&h);
	}
}

static const char *const win_toolkit_subs[] = { "bin", "bin\\x64", NULL };
static const char *const posix_toolkit_subs[] = {
	"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib", NULL
};

/* CUDA_PATH, CUDA_PATH_V12_4, CUDA_HOME, and the toolkits' usual
 * folders. */
static void look_toolkits(struct scan *s)
{
	const char *const *subs = s->p->windows ? win_toolkit_subs : posix_toolkit_subs;
	const char *vars[] = { "CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", NULL };
	char **names = NULL;
	size_t n = 0;
	for (const char *const *v = vars; *v; v++)
		for (const char *const *sub = subs; *sub; sub++) {
			char *place = cctl_xstrfmt("CUDA toolkit (%s)", *v);
			look_sub(s, cctl_os_getenv(*v), *sub, place);
			free(place);
		}
	cctl_os_env_names("CUDA_PATH_V", &names, &n);
	for (size_t i = 0; i < n; i++) {
		char *place = cctl_xstrfmt("CUDA toolkit (%s)", names[i]);
		for (const char *const *sub = subs; *sub; sub++)
			look_sub(s, cctl_os_getenv(names[i]), *sub, place);
		free(place);
		free(names[i]);
	}
	free(names);
	if (s->p->windows) {
		const char *pf = cctl_os_getenv("ProgramFiles");
		char *dir = pf ? cctl_path_join(pf, "NVIDIA GPU Computing Toolkit",
						"CUDA", NULL)
			       : NULL;
		look_glob(s, dir, "v", subs, "CUDA toolkit");
		free(dir);
	} else {
		look_glob(s, "/usr/local", "cuda", subs, "CUDA toolkit");
		look_glob(s, "/opt", "cuda", subs, "CUDA toolkit");
	}
}

/* NVIDIA's cuDNN installer: Program Files\NVIDIA\CUDNN\v9.x\bin\12.x
 * (later bin\12.x\x64), and the bin it puts on PATH. */
static void look_installer(struct scan *s)
{
	const char *pf = cctl_os_getenv("ProgramFiles");
	char *top = pf ? cctl_path_join(pf, "NVIDIA", "CUDNN", NULL) : NULL, **vs = NULL;
	size_t nv = 0;
	if (!top || cctl_os_listdir(NULL, top, &vs, &nv)) {
		free(top);
		return;
	}
	for (size_t i = 0; i < nv; i++) {
		char *bin = cctl_path_join(top, vs[i], "bin", NULL);
		const char *const subs[] = { "", "x64", "arm64", NULL };
		look(s, bin, "NVIDIA cuDNN installer");
		look_glob(s, bin, "", subs, "NVIDIA cuDNN installer");
		free(bin);
		free(vs[i]);
	}
	free(vs);
	free(top);
}

static void look_system(struct scan *s)
{
	if (s->p->windows) {
		const char *sys = cctl_os_getenv("SystemRoot");
		look_sub(s, sys, "System32", "System32");
		look_sub(s, sys, "SysWOW64", "SysWOW64");
		look_installer(s);
	} else {
		const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu",
					     "/usr/lib/aarch64-linux-gnu",
					     "/usr/lib64", "/usr/lib", "/usr/local/lib",
					     "/lib/x86_64-linux-gnu", NULL };
		for (const char *const *d = dirs; *d; d++)
			look(s, *d, "system library folder");
	}
}

/* ------------------------------------------------------------ python */

static const char *const framework_dirs[] = {
	"nvidia/cudnn/lib", "nvidia/cudnn/bin", "nvidia/cudnn/bin/x64",
	"torch/lib", "paddle/libs", NULL
};

static void look_site(struct scan *s, const char *site, const char *place)
{
	for (const char *const *f = framework_dirs; *f; f++) {
		char *sub = cctl_xstrdup(*f);
		if (s->p->windows)
			for (char *c = sub; *c; c++)
				*c = *c == '/' ? '\\' : *c;
		look_sub(s, site, sub, place);
		free(sub);
	}
}

/* Each prefix/lib/python3.X/{site,dist}-packages (Windows:
 * prefix\Lib\site-packages). */
static void look_prefix(struct scan *s, const char *prefix, const char *place)
{
	char *lib, **names = NULL;
	size_t n = 0;
	if (s->p->windows) {
		lib = cctl_path_join(prefix, "Lib", "site-packages", NULL);
		look_site(s, lib, place);
		free(lib);
		return;
	}
	lib = cctl_path_join(prefix, "lib", NULL);
	if (!cctl_os_listdir(NULL, lib, &names, &n))
		for (size_t i = 0; i < n; i++) {
			if (!strncmp(names[i], "python3", 7)) {
				char *site = cctl_path_join(lib, names[i], "site-packages", NULL);
				look_site(s, site, place);
				free(site);
				site = cctl_path_join(lib, names[i], "dist-packages", NULL);
				look_site(s, site, place);
				free(site);
			}
			free(names[i]);
		}
	free(names);
	free(lib);
}

/* An interpreter's site-packages, from where it lies (running each would
 * cost a tenth of a second or more): its prefix (bin/.., or on Windows its
 * folder, Scripts\.. in a venv), as found (a venv's python is a link to
 * the base interpreter) and with links resolved; for /usr also
 * /usr/local (Debian's pip). */
static void look_interpreter(struct scan *s, const char *exe)
{
	char *place = cctl_xstrfmt("site-packages of %s", exe);
	char *real = cctl__real_path(exe);
	for (int k = 0; k < 2; k++) {
		char *dir = cctl__dir_of(k ? real : exe), *prefix;
		const char *base = dir ? cctl__last_sep(dir) : NULL;
		int scripts = base && !strcmp(base + 1, "Scripts");
		if (!dir)
			continue;
		prefix = s->p->windows && !scripts ? cctl_xstrdup(dir) : cctl__dir_of(dir);
		if (prefix) {
			look_prefix(s, prefix, place);
			if (!s->p->windows && !strcmp(prefix, "/usr"))
				look_prefix(s, "/usr/local", place);
		}
		free(prefix);
		free(dir);
	}
	free(real);
	free(place);
}

/* pyenv's interpreters: $PYENV_ROOT (else ~/.pyenv)/versions/X (PATH
 * has only its shims). */
static void look_pyenv(struct scan *s)
{
	const char *root = cctl_os_getenv("PYENV_ROOT");
	char *home = cctl_home_dir(), *dir, **names = NULL;
	size_t n = 0;
	dir = root && *root ? cctl_path_join(root, "versions", NULL)
	      : home	    ? cctl_path_join(home, ".pyenv", "versions", NULL)
			    : NULL;
	if (dir && !cctl_os_listdir(NULL, dir, &names, &n))
		for (size_t i = 0; i < n; i++) {
			char *prefix = cctl_path_join(dir, names[i], NULL);
			look_prefix(s, prefix, "pyenv interpreter");
			free(prefix);
			free(names[i]);
		}
	free(names);
	free(dir);
	free(home);
}

/* The user's own site-packages: ~/.local/lib/python3.X/site-packages;
 * Windows %APPDATA%\Python\Python3XX\site-packages. */
static void look_user_site(struct scan *s)
{
	char *home = cctl_home_dir(), *dir = NULL, **names = NULL;
	const char *appdata = cctl_os_getenv("APPDATA");
	size_t n = 0;
	if (!s->p->windows) {
		if (home) {
			char *local = cctl_path_join(home, ".local", NULL);
			look_prefix(s, local, "user site-packages");
			free(local);
		}
	} else if (appdata && (dir = cctl_path_join(appdata, "Python", NULL)) &&
		   !cctl_os_listdir(NULL, dir, &names, &n)) {
		for (size_t i = 0; i < n; i++) {
			char *site = cctl_path_join(dir, names[i], "site-packages", NULL);
			look_site(s, site, "user site-packages");
			free(site);
			free(names[i]);
		}
	}
	free(names);
	free(dir);
	free(home);
}

/* One interpreter, once (by its real path). */
static void try_python(struct scan *s, const char *exe)
{
	char *real;
	if (!cctl__file_exists(exe) || strstr(exe, "WindowsApps"))
		return;
	real = cctl__real_path(exe);
	for (size_t i = 0; i < s->npys; i++)
		if (!strcmp(s->pys[i], real)) {
			free(real);
			return;
		}
	s->pys = cctl_xrealloc(s->pys, (s->npys + 1) * sizeof(*s->pys));
	s->pys[s->npys++] = real;
	look_interpreter(s, exe);
}

static void look_pythons(struct scan *s)
{
	const char *path = cctl_os_getenv("PATH");
	const char *const names[] = { s->p->windows ? "python.exe" : "python3",
				      s->p->windows ? "python3.exe" : "python", NULL };
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	while (path && *path) {
		size_t n = strcspn(path, sep);
		char *dir = cctl_xstrfmt("%.*s", (int)n, path);
		for (const char *const *nm = names; n && *nm; nm++) {
			char *exe = cctl_path_join(dir, *nm, NULL);
			try_python(s, exe);
			free(exe);
		}
		free(dir);
		path += n + (path[n] ? 1 : 0);
	}
	if (!s->p->windows)
		look_pyenv(s);
	look_user_site(s);
	for (size_t i = 0; i < s->npys; i++)
		free(s->pys[i]);
	free(s->pys);
	s->pys = NULL;
	s->npys = 0;
}

/* ------------------------------------------------------------- conda */

static void look_conda_env(struct scan *s, const char *prefix)
{
	const char *const subs[] = { "site-packages", NULL };
	char *lib;
	if (!prefix || !*prefix)
		return;
	if (s->p->windows) {
		look_sub(s, prefix, "Library\\bin", "conda environment");
		lib = cctl_path_join(prefix, "Lib", "site-packages", NULL);
		look_site(s, lib, "conda environment");
	} else {
		look_sub(s, prefix, "lib", "conda environment");
		lib = cctl_path_join(prefix, "lib", NULL);
		{
			char **names = NULL;
			size_t n = 0;
			if (!cctl_os_listdir(NULL, lib, &names, &n))
				for (size_t i = 0; i < n; i++) {
					if (!strncmp(names[i], "python3", 7)) {
						char *site = cctl_path_join(lib, names[i],
									    subs[0], NULL);
						look_site(s, site, "conda environment");
						free(site);
					}
					free(names[i]);
				}
			free(names);
		}
	}
	free(lib);
}

/* CONDA_PREFIX, and every environment conda's environments.txt names. */
static void look_conda(struct scan *s)
{
	char *home = cctl_home_dir(), *list;
	struct cctl_buf text = CCTL_BUF_INIT;
	look_conda_env(s, cctl_os_getenv("CONDA_PREFIX"));
	if (!home)
		return;
	list = cctl_path_join(home, ".conda", "environments.txt", NULL);
	if (cctl__file_exists(list) && !cctl_os_read_file(NULL, list, &text) && text.buf)
		for (char *line = text.buf, *next; *line; line = next) {
			next = line + strcspn(line, "\n");
			if (*next)
				*next++ = 0;
			line[strcspn(line, "\r")] = 0;
			/* a path, nothing else: the file is the user's */
			if (cctl_os_is_absolute(line))
				look_conda_env(s, line);
		}
	cctl_buf_release(&text);
	free(list);
	free(home);
}

/* ------------------------------------------------------------ --deep */

static void walk(struct scan *s, const char *dir, int depth)
{
	char **names = NULL;
	size_t n = 0;
	if (cctl_os_now_ms() > s->deadline) {
		s->out->deep_cut = 1;
		return;
	}
	look(s, dir, "--deep");
	if (depth > 24 || cctl_os_listdir(NULL, dir, &names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		char *sub = cctl_path_join(dir, names[i], NULL);
		struct cctl_os_stat st;
		/* links are not followed: a tree may lead to itself */
		if (!s->out->deep_cut && !cctl_os_stat(NULL, sub, &st) &&
		    st.type == CCTL_OS_DIR)
			walk(s, sub, depth + 1);
		free(sub);
		free(names[i]);
	}
	free(names);
}

/* ------------------------------------------------------------- ranks */

/* Where a new process finds each copy's main library, and whether before
 * the active version's. */
static void rank(struct scan *s)
{
	for (const struct cctl_libset *l = s->p->libsets; l->major; l++) {
		struct cctl_lib_hits h = { 0 };
		size_t active = (size_t)-1;
		if (cctl_os_lib_search(NULL, l->names[0], s->lib_path, NULL, &h))
			continue;
		for (size_t i = 0; s->out->active_dir && i < h.n; i++) {
			char *d = cctl__dir_of(h.v[i].path);
			if (active == (size_t)-1 && cctl__same_file(d, s->out->active_dir))
				active = i;
			free(d);
		}
		for (size_t k = 0; k < s->out->n; k++) {
			struct cctl_copy *c = &s->out->v[k];
			if (c->major != l->major)
				continue;
			for (size_t i = 0; i < h.n && !c->search_rank; i++) {
				char *d = cctl__dir_of(h.v[i].path);
				if (cctl__same_file(d, c->dir)) {
					c->search_rank = (int)i + 1;
					c->before_active = active != (size_t)-1 && i < active;
				}
				free(d);
			}
		}
		cctl_lib_hits_release(&h);
	}
}

/* ------------------------------------------------------------- entry */

static void look_root(struct scan *s)
{
	char *versions, **ids = NULL, *active = NULL;
	size_t n = 0;
	if (!s->root)
		return;
	if (!cctl_store_active(NULL, s->root, &active) && active) {
		char *d = cctl_path_join(s->root->path, "versions", active, NULL);
		s->out->active_dir = cctl__lib_dir(s->p, d);
		free(d);
	}
	free(active);
	versions = cctl_path_join(s->root->path, "versions", NULL);
	if (!cctl_os_listdir(NULL, versions, &ids, &n))
		for (size_t i = 0; i < n; i++) {
			if (ids[i][0] != '.') {
				char *d = cctl_path_join(versions, ids[i], NULL);
				char *lib = cctl__lib_dir(s->p, d);
				look(s, lib, "cudnnctl root");
				free(lib);
				free(d);
			}
			free(ids[i]);
		}
	free(ids);
	free(versions);
}

int cctl_scan(struct cctl_ctx *ctx, const struct cctl_root *root,
	      const struct cctl_scan_opts *o, struct cctl_scan *out)
{
	struct scan s;
	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.p = cctl_platform_host();
	s.root = root;
	s.out = out;
	look_root(&s);
	s.lib_path = new_process_path(&s);
	look_system(&s);
	look_list(&s, s.lib_path, s.p->lib_var);
	look_loader(&s);
	look_toolkits(&s);
	look_conda(&s);
	look_pythons(&s);
	s.deadline = cctl_os_now_ms() + 1000.0 * (o && o->deep_seconds > 0 ? o->deep_seconds : 60);
	for (size_t i = 0; o && i < o->ndeep; i++)
		walk(&s, o->deep[i], 0);
	rank(&s);
	for (size_t i = 0; i < out->n; i++)
		cctl__copy_describe(&out->v[i], root, out->active_dir);
	cctl__copy_packages(out->v, out->n, 0);
	for (size_t i = 0; i < s.nseen; i++)
		free(s.seen[i]);
	free(s.seen);
	free(s.lib_path);
	return 0;
}

void cctl__copy_release(struct cctl_copy *c)
{
	free(c->dir);
	free(c->place);
	free(c->version);
	free(c->version_from);
	for (size_t k = 0; k < c->nfiles; k++)
		free(c->files[k]);
	free(c->files);
	free(c->missing);
	free(c->mixed);
	free(c->owner_name);
	free(c->remove_with);
	memset(c, 0, sizeof(*c));
}

void cctl_scan_release(struct cctl_scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		cctl__copy_release(&s->v[i]);
	free(s->v);
	free(s->active_dir);
	memset(s, 0, sizeof(*s));
}

/*
 * verify's host checks: the stages that need no GPU and load nothing
 * (locate, files, version, dependencies).  See verify.c for the runner.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify-internal.h"

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
		char *dir = cctl__dir_of(r->v->copies[i].path);
		for (const struct cctl_libset *l = r->plat->libsets; l->major; l++) {
			const char *other = l->names[0];
			char *path;
			if (l->major == r->major)
				continue;
			path = cctl_path_join(dir, other, NULL);
			if (cctl__file_exists(path))
				cctl__judge(r, CCTL_WARN,
				      "keep one cuDNN major per folder; move the "
				      "other files out",
				      "'%s' holds files of cuDNN %d and %d", dir,
				      r->major, l->major);
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
		char *path = cctl_path_join(dir, name, NULL);
		int cudnnish = 0;
		for (char *c = dir; *c; c++)
			if (!strncmp(c, "cudnn", 5) || !strncmp(c, "CUDNN", 5))
				cudnnish = 1;
		if (n && cudnnish && !cctl__file_exists(path))
			cctl__judge(r, CCTL_WARN,
			      "point the entry at the folder that holds the "
			      "library",
			      "search-path entry '%s' has no %s", dir, name);
		free(dir);
		free(path);
		p += n + (p[n] ? 1 : 0);
	}
}

/* The next step for a copy a new process finds before the install's,
 * fit for where it is (free()). */
static char *shadow_fix(struct run *r, const struct cctl_lib_hit *h)
{
	const char *o = h->origin;
	char *dir = cctl__dir_of(h->path);
	char *fix;
	if (r->root && cctl_path_within(r->root->path, h->path))
		/* cudnnctl's own other version: the search path and
		 * `current` disagree */
		fix = cctl_xstrfmt("it is cudnnctl's own %s, which the search "
				   "path still names instead of the active "
				   "install: cudnnctl switch %s repairs it",
				   dir, r->rec.id);
	else if (!strcmp(o, "System32") || !strcmp(o, "Windows folder"))
		fix = cctl_xstrfmt("every program finds it there first: delete "
				   "it as administrator (del \"%s\"), or rename "
				   "it to %s.bak",
				   h->path, h->path);
	else if (!strcmp(o, "machine PATH"))
		fix = cctl_xstrfmt("the machine PATH comes before the user's: "
				   "take %s out of the machine PATH (as "
				   "administrator), or activate the install for "
				   "the machine: cudnnctl switch %s --scope machine",
				   dir, r->rec.id);
	else if (!strcmp(o, "application folder"))
		fix = cctl_xstrdup("a program finds the copy beside it first: "
				   "remove it from that folder");
	else
		fix = cctl_xstrfmt("remove that copy, or %s from the search "
				   "path, so the install comes first",
				   dir);
	free(dir);
	return fix;
}

/* PATH entries in quotes: cmd.exe strips the quotes when it looks for a
 * program, the DLL loader does not, so no DLL is found there. */
static void quoted_entries(struct run *r)
{
	struct cctl_buf path = CCTL_BUF_INIT;
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	if (!cctl_os_session_path(NULL, &path) && path.buf)
		for (const char *p = path.buf; *p;) {
			size_t n = strcspn(p, sep);
			if (n && *p == '"')
				cctl__judge(r, CCTL_WARN,
					    "remove the quotes from that PATH entry",
					    "the PATH entry %.*s is in quotes: "
					    "programs are found there, but no DLL "
					    "is (the loader does not strip them)",
					    (int)n, p);
			p += n + (p[n] ? 1 : 0);
		}
	cctl_buf_release(&path);
}

/* The main library's name for the install's major, or else for the
 * newest major the loader finds, with the copies found; NULL after a
 * failure. */
static const char *find_library(struct run *r, struct cctl_lib_hits *hits)
{
	const char *name = NULL;
	size_t nsets = 0;
	while (r->plat->libsets[nsets].major)
		nsets++;
	for (size_t i = nsets; i-- > 0 && !hits->n;) {
		const struct cctl_libset *l = &r->plat->libsets[i];
		if (r->major && l->major != r->major)
			continue;
		name = l->names[0];
		cctl_lib_hits_release(hits);
		if (cctl_os_lib_search(r->ctx, name, r->lib_path, NULL, hits)) {
			cctl__fail(r, NULL, "%s", cctl__msg(r->ctx));
			return NULL;
		}
		r->major = l->major;
	}
	if (!name)
		cctl__fail(r, "install cuDNN 8 or 9",
			   "cudnnctl does not know the libraries of cuDNN %d",
			   r->major);
	return name;
}

/* No copy on the search path of a new process: why, and what to run. */
static void not_found(struct run *r, const char *name)
{
	struct cctl_install *v = NULL;
	size_t n = 0;
	char *fix = NULL;
	if (r->have_rec) {
		struct cctl_lib_info info;
		char *want = cctl_path_join(r->libdir, name, NULL);
		int exists = cctl__file_exists(want);
		memset(&info, 0, sizeof(info));
		if (exists && !cctl_os_lib_info(NULL, want, &info)) {
			/* a good library the search path does not name (an
			 * edit, a restore): switch puts it back */
			fix = cctl_xstrfmt("cudnnctl switch %s puts the install "
					   "back on the search path",
					   r->rec.id);
			cctl_lib_info_release(&info);
			cctl__finding(r, "no copy of %s on the search path", name);
			cctl__fail(r, fix,
				   "a new process does not find %s: the %s a new "
				   "process gets does not name %s",
				   want, r->plat->lib_var, r->libdir);
		} else if (exists) {
			cctl__finding(r, "%s is there but cannot be loaded", want);
			cctl__fail(r, "reinstall this version from NVIDIA's archive for "
				      "this machine",
				   "%s is not a shared library for this machine", want);
		}
		free(want);
		if (exists) {
			free(fix);
			return;
		}
	}
	/* installed but none active (after deactivate): switch, not
	 * install */
	if (!r->have_rec && r->root && !cctl_store_list(NULL, r->root, &v, &n) && n)
		fix = cctl_xstrfmt("no version is active: cudnnctl switch %s makes "
				   "one so (cudnnctl list shows the others)",
				   v[n - 1].id);
	cctl_install_list_release(v, n);
	cctl__finding(r, "no copy of %s", name);
	cctl__fail(r,
		   fix ? fix
		       : r->have_rec ? "run cudnnctl switch VERSION, or reinstall"
				     : "install cuDNN: cudnnctl install ARCHIVE",
		   "a new process finds no %s", name);
	free(fix);
}

/* The install is the copy a new process loads: every copy ahead of it
 * gets its own why and fix. */
static void check_shadows(struct run *r, const struct cctl_lib_hits *hits,
			  const char *name)
{
	char *want = cctl_path_join(r->libdir, name, NULL);
	if (!r->rec.active)
		cctl__judge(r, CCTL_WARN, "run cudnnctl switch to make it active",
			    "%s is not the active install; checked as if it were",
			    r->rec.id);
	for (size_t i = 0; i < hits->n; i++) {
		char *fix;
		if (cctl__same_file(hits->v[i].path, want))
			break;
		fix = shadow_fix(r, &hits->v[i]);
		cctl__judge(r, CCTL_WARN, fix,
			    "shadowed: a new process loads %s (%s) before the "
			    "install's %s",
			    hits->v[i].path, hits->v[i].origin, want);
		free(fix);
	}
	free(want);
}

/* This shell, as opposed to a new one: set up before the change? */
static void check_this_shell(struct run *r, const char *name, const char *found)
{
	struct cctl_lib_hits now = { 0 };
	const char *env_path = cctl_os_getenv(r->plat->lib_var);
	if (!r->have_rec || !r->rec.active ||
	    (env_path && r->lib_path && !strcmp(env_path, r->lib_path)))
		return;
	if (!cctl_os_lib_search(NULL, name, env_path, NULL, &now) &&
	    (!now.n || strcmp(now.v[0].path, found))) {
		char *apply = cctl_env_command(r->root);
		int ci = cctl__activation_is_ci(r->root);
		char *hint = ci ? cctl_xstrfmt("on GitHub Actions and Azure "
					       "Pipelines the job's later steps "
					       "get it; elsewhere run: %s",
					       apply)
				: cctl_xstrfmt("open a new shell, or run: %s", apply);
		cctl__judge(r, CCTL_WARN, hint,
			    ci ? "activated in CI mode, and this step's "
				 "environment lacks it: it finds %s"
			       : "this shell was set up before the change: "
				 "it finds %s",
			    now.n ? now.v[0].path : "no cuDNN");
		free(hint);
		free(apply);
	}
	cctl_lib_hits_release(&now);
}

void cctl__stage_locate(struct run *r)
{
	struct cctl_lib_hits hits = { 0 };
	const char *name = find_library(r, &hits);

	if (!name)
		goto out;
	copy_hits(r, &hits);
	quoted_entries(r);
	if (!hits.n) {
		not_found(r, name);
		goto out;
	}
	r->v->library = cctl_xstrdup(hits.v[0].path);
	if (hits.n > 1)
		cctl__finding(r, "%s (%s); %zu copies", hits.v[0].path,
			      hits.v[0].origin, hits.n);
	else
		cctl__finding(r, "%s (%s)", hits.v[0].path, hits.v[0].origin);
	if (r->have_rec) {
		check_shadows(r, &hits, name);
	} else {
		/* judge the library against the files beside it */
		r->libdir = cctl__dir_of(hits.v[0].path);
		r->dir = cctl__dir_of(r->libdir);
	}
	check_mixed_majors(r);
	check_empty_entries(r, name);
	check_this_shell(r, name, hits.v[0].path);
out:
	cctl_lib_hits_release(&hits);
}

/* ------------------------------------------------------------ 2: files */

static void check_header(struct run *r)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *path = cctl_path_join(r->dir, "include/cudnn_version.h", NULL);
	char *v = NULL;
	if (cctl_os_read_file(NULL, path, &text)) {
		cctl__judge(r, CCTL_WARN, "reinstall to get the headers back",
		      "no %s", path);
		goto out;
	}
	v = cctl_parse_version_header(text.buf);
	if (!v) {
		cctl__judge(r, CCTL_WARN, NULL, "%s has no version", path);
	} else if (!r->v->expected_version) {
		r->v->expected_version = cctl_xstrdup(v);
	} else if (!cctl_version_has_prefix(r->v->expected_version, v)) {
		cctl__fail(r, "reinstall this version: cudnnctl uninstall, then install",
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
	const char *const *libs = cctl_platform_libraries(r->plat, r->major);
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
				cctl__fail(r, "reinstall this version", "%s is missing",
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
				cctl__fail(r, "reinstall this version (cudnnctl uninstall, "
					"then install the archive again)",
				     "%s changed since it was installed", f->path);
		}
	}
	if (bad > 3)
		cctl__fail(r, NULL, "%zu files in all differ from the record", bad);
	cctl_buf_release(&path);
}

void cctl__stage_files(struct run *r)
{
	const char *const *libs = cctl_platform_libraries(r->plat, r->major);
	size_t have = 0, want = 0;
	for (; libs && *libs; libs++, want++) {
		char *path = cctl_path_join(r->libdir, *libs, NULL);
		if (cctl__file_exists(path))
			have++;
		else
			cctl__fail(r, "reinstall this version; the archive had it",
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
		cctl__finding(r, "%zu/%zu libraries; %zu files checked against the install record "
			   "(%zu re-hashed)",
			have, want, r->v->files_checked, r->v->files_rehashed);
	else
		cctl__finding(r, "%zu/%zu libraries in %s; not installed by cudnnctl, "
			   "so no hashes to compare",
			have, want, r->libdir);
}

/* ---------------------------------------------------------- 3: version */

void cctl__stage_version(struct run *r)
{
	struct cctl_buf real = CCTL_BUF_INIT;
	struct cctl_lib_info info;
	const char *name = cctl_platform_main_library(r->plat, r->major);
	const char *so = strstr(name, ".so.");
	char *path = cctl_path_join(r->libdir, name, NULL);
	const char *base, *ver = NULL;

	memset(&info, 0, sizeof(info));
	if (cctl_os_realpath(r->ctx, path, &real)) {
		cctl__fail(r, NULL, "%s", cctl__msg(r->ctx));
		goto out;
	}
	base = cctl__last_sep(real.buf);
	base = base ? base + 1 : real.buf;
	/* libcudnn.so.9.19.0: the version after the name's ".so." */
	if (so && !strncmp(base, name, (size_t)(so - name) + 4))
		ver = base + (so - name) + 4;
	if (cctl_os_lib_info(r->ctx, real.buf, &info)) {
		cctl__fail(r, "reinstall this version", "%s", cctl__msg(r->ctx));
		goto out;
	}
	if (!info.loadable && r->plat->pe_machine &&
	    info.machine == r->plat->pe_machine) {
		/* right for the install, not for this process: what can be
		 * read is checked, the loading stages are not run */
		char next[96];
		snprintf(next, sizeof(next),
			 "run the stages that load it with an %s cudnnctl.exe",
			 r->plat->arch);
		r->foreign = 1;
		cctl__judge(r, CCTL_WARN, next,
			    "%s is an %s DLL: only an %s process loads it (this "
			    "cudnnctl is %s)",
			    base, r->plat->arch, r->plat->arch,
			    cctl_platform_process()->arch);
	} else if (!info.loadable) {
		cctl__fail(r, "install the build for this machine's architecture",
			   "%s is not for this machine's architecture", real.buf);
	}
	if (r->plat->windows)
		cctl__finding(r, "%s: file version %s; expected %s", base,
			info.file_version ? info.file_version : "(none)",
			r->v->expected_version ? r->v->expected_version : "?");
	else
		cctl__finding(r, "%s: SONAME %s; expected %s", base,
			info.soname ? info.soname : "(none)",
			r->v->expected_version ? r->v->expected_version : "?");
	if (!r->plat->windows && info.soname && strcmp(info.soname, name))
		cctl__judge(r, CCTL_WARN, NULL, "SONAME %s, not %s", info.soname, name);
	if (ver && strchr(ver, '.') && r->v->expected_version &&
	    !cctl_version_has_prefix(r->v->expected_version, ver) &&
	    !cctl_version_has_prefix(ver, r->v->expected_version))
		cctl__judge(r, CCTL_WARN, NULL, "the file name says %s", ver);
out:
	cctl_lib_info_release(&info);
	cctl_buf_release(&real);
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

/* The fix for a missing library: the platform table's, for what cuDNN
 * needs beside its own files. */
static char *how_to_get(struct run *r, const char *name)
{
	const char *main_lib = cctl_platform_main_library(r->plat, r->major);
	int cuda = r->v->expected_cuda;
	for (const struct cctl_dep *d = r->plat->deps; d->file; d++) {
		char *file = cctl_dep_file(d, cuda);
		int same = !strcmp(file, name);
		free(file);
		if (same)
			return cctl_dep_fix(d, cuda, r->libdir, main_lib);
	}
	if (cctl_platform_is_library(r->plat, r->major, name))
		return cctl_xstrfmt("reinstall cuDNN %s: its archive has %s",
				    r->v->expected_version
					    ? r->v->expected_version
					    : "",
				    name);
	if (!strncmp(name, "libz.", 5))
		return cctl_xstrdup("install zlib (Debian/Ubuntu: apt install "
				    "zlib1g)");
	return cctl_xstrfmt("install the package that provides %s", name);
}

static void resolve_dep(struct run *r, const char *lib, const char *dep,
			const char *const *runpath, int required,
			size_t *found, size_t *missing)
{
	struct cctl_lib_hits h = { 0 };
	if (cctl_os_lib_search(r->ctx, dep, r->lib_path, runpath, &h) || !h.n) {
		char *fix = how_to_get(r, dep);
		(*missing)++;
		if (required)
			cctl__fail(r, fix,
				   "%s needs %s, which the loader cannot find",
				   lib, dep);
		else
			cctl__judge(r, CCTL_WARN, fix,
				    "%s loads %s at run time; it cannot be found",
				    lib, dep);
		free(fix);
	} else {
		(*found)++;
	}
	cctl_lib_hits_release(&h);
}

#define NAMES_SCAN_MAX (1ull << 30) /* bigger libraries are not read */

/* Whether the bytes of path hold name (ASCII or UTF-16LE, any case): a
 * library that loads it by name.  -1 when it cannot be read (or is past
 * NAMES_SCAN_MAX). */
static int file_names(const char *path, const char *name)
{
	size_t n = strlen(name), got, keep = 0;
	unsigned char *buf;
	struct cctl_os_stat st;
	int fd, hit = 0;
	if (cctl_os_stat(NULL, path, &st) || st.type != CCTL_OS_FILE ||
	    st.size > NAMES_SCAN_MAX || cctl_os_open_read(NULL, path, &fd))
		return -1;
	buf = cctl_xmalloc((1u << 20) + 2 * n);
	while (!hit && !cctl_os_read(NULL, fd, path, buf + keep, 1u << 20, &got) &&
	       got) {
		size_t len = keep + got;
		for (size_t i = 0; !hit && i + n <= len; i++) {
			size_t k = 0, w = 0;
			while (k < n && tolower(buf[i + k]) == tolower((unsigned char)name[k]))
				k++;
			while (w < n && i + 2 * w + 1 < len &&
			       tolower(buf[i + 2 * w]) == tolower((unsigned char)name[w]) &&
			       !buf[i + 2 * w + 1])
				w++;
			hit = k == n || w == n;
		}
		/* a name across two reads: the tail comes again */
		keep = len < 2 * n ? len : 2 * n;
		memmove(buf, buf + len - keep, keep);
	}
	free(buf);
	cctl_os_close(fd);
	return hit;
}

/* Whether one of libs names name: 1, 0 (all read, none does), or -1 (not
 * all could be read, and none that could does). */
static int libs_name(struct run *r, const struct dep_seen *libs, const char *name)
{
	int unknown = 0;
	for (size_t k = 0; k < libs->n; k++) {
		char *path = cctl_path_join(r->libdir, libs->names[k], NULL);
		int got = cctl__file_exists(path) ? file_names(path, name) : 0;
		free(path);
		if (got > 0)
			return 1;
		unknown |= got < 0;
	}
	return unknown ? -1 : 0;
}

/* A library no document says this cuDNN needs, and none of its libraries
 * cudnnctl could read names: a warning when it cannot be found. */
static void resolve_inferred(struct run *r, const char *dep, const char *why,
			     const char *const *runpath, size_t *found,
			     size_t *missing)
{
	struct cctl_lib_hits h = { 0 };
	if (cctl_os_lib_search(r->ctx, dep, r->lib_path, runpath, &h) || !h.n) {
		char *fix = how_to_get(r, dep);
		(*missing)++;
		cctl__judge(r, CCTL_WARN, fix,
			    "%s cannot be found; cudnnctl cannot tell whether "
			    "this cuDNN loads it (a library it could not read): "
			    "%s",
			    dep, why);
		free(fix);
	} else {
		(*found)++;
	}
	cctl_lib_hits_release(&h);
}

/* The libraries whose imports are checked: those the table lists for the
 * major, then any other cuDNN library of that major the install's record
 * holds in the library folder (a sub-library added in a minor release). */
static void list_libraries(struct run *r, struct dep_seen *out)
{
	const char *const *libs = cctl_platform_libraries(r->plat, r->major);
	size_t skip = strlen(r->dir) + 1;
	for (; libs && *libs; libs++)
		seen(out, *libs);
	for (size_t i = 0; r->have_rec && i < r->rec.nfiles; i++) {
		const struct cctl_file *f = &r->rec.files[i];
		char *full = cctl_path_join(r->dir, f->path, NULL);
		char *dir = cctl__dir_of(full);
		const char *base = cctl__last_sep(full);
		base = base ? base + 1 : full;
		if (strlen(r->libdir) >= skip && !strcmp(dir, r->libdir) &&
		    cctl_platform_is_library(r->plat, r->major, base))
			seen(out, base);
		free(dir);
		free(full);
	}
}

/* What the libraries import (DT_NEEDED, PE imports); returns the RUNPATH
 * the run-time loads below resolve through (cctl_lib_info_release it). */
static void check_imports(struct run *r, const struct dep_seen *libs,
			  struct dep_seen *s, struct cctl_lib_info *keep,
			  size_t *found, size_t *missing, size_t *nlibs)
{
	for (size_t k = 0; k < libs->n; k++) {
		struct cctl_lib_info info;
		char *path = cctl_path_join(r->libdir, libs->names[k], NULL);
		if (!cctl__file_exists(path)) {
			free(path); /* reported by the files stage */
			continue;
		}
		if (cctl_os_lib_info(r->ctx, path, &info)) {
			cctl__fail(r, "reinstall this version", "%s", cctl__msg(r->ctx));
			free(path);
			continue;
		}
		(*nlibs)++;
		/* os.h wants the runpath NULL-terminated */
		info.runpath = cctl_xrealloc(info.runpath,
					     (info.nrunpath + 1) * sizeof(char *));
		info.runpath[info.nrunpath] = NULL;
		for (size_t i = 0; i < info.nneeded; i++) {
			if (seen(s, info.needed[i]))
				continue;
			resolve_dep(r, libs->names[k], info.needed[i],
				    (const char *const *)info.runpath, 1, found,
				    missing);
		}
		/* the runtime loads below resolve like a dlopen from the
		 * sub-libraries, through their RUNPATH */
		if (info.nrunpath && !keep->nrunpath) {
			*keep = info;
			memset(&info, 0, sizeof(info));
		}
		cctl_lib_info_release(&info);
		free(path);
	}
}

void cctl__stage_deps(struct run *r)
{
	struct dep_seen libs = { 0 }, s = { 0 };
	struct cctl_lib_info keep;
	size_t found = 0, missing = 0, nlibs = 0;
	int cuda = r->v->expected_cuda;

	memset(&keep, 0, sizeof(keep));
	list_libraries(r, &libs);
	check_imports(r, &libs, &s, &keep, &found, &missing, &nlibs);
	/* what cuDNN loads beyond its imports: each its own line and fix */
	for (const struct cctl_dep *d = r->plat->deps; cuda && d->file; d++) {
		char *file;
		if (!cctl_dep_applies(d, r->v->expected_version, cuda))
			continue;
		file = cctl_dep_file(d, cuda);
		if (!seen(&s, file)) {
			const char *const *rp =
				keep.nrunpath ? (const char *const *)keep.runpath
					      : NULL;
			/* needed as documented; or, where that is inferred,
			 * when a library names it */
			int named = d->inferred ? libs_name(r, &libs, file) : 1;
			if (named > 0)
				resolve_dep(r, "cuDNN", file, rp, d->at_load,
					    &found, &missing);
			else if (named < 0)
				resolve_inferred(r, file, d->inferred, rp, &found,
						 &missing);
		}
		free(file);
	}
	cctl__finding(r, "%zu libraries need %zu others: %zu found, %zu missing",
		      nlibs, found + missing, found, missing);
	for (size_t i = 0; i < s.n; i++)
		free(s.names[i]);
	free(s.names);
	for (size_t i = 0; i < libs.n; i++)
		free(libs.names[i]);
	free(libs.names);
	cctl_lib_info_release(&keep);
}

/*
 * What scan says of each copy: its version, read from the library itself
 * (Linux: the file name the links lead to, libcudnn_ops.so.9.1.0;
 * Windows: the DLL's FileVersion; else the release string cuDNN 9 keeps
 * in its graph library, "cudnn_version_9_19_0_56_"), else from a
 * cudnn_version.h beside it or a wheel's metadata; its CUDA major; the
 * libraries a complete set has and it lacks; releases mixed in the
 * folder; and whose it is.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"
#include "verify-internal.h"

const char *cctl_owner_name(enum cctl_owner o)
{
	static const char *const names[] = {
#define X(name, word) word,
		CCTL_OWNER_MAP(X)
#undef X
	};
	return (size_t)o < sizeof(names) / sizeof(*names) ? names[o] : "unknown";
}

#define MARKER "cudnn_version_"
#define MARKER_SCAN_MAX (64u << 20) /* bigger files are not read */

/* "9.19.0" from the "cudnn_version_9_19_0_56_" string of cuDNN 9's graph
 * library, or NULL. */
static char *marker_version(const char *path)
{
	struct cctl_os_stat st;
	size_t keep = 0, got, mn = strlen(MARKER), chunk = 1u << 20;
	unsigned char *buf;
	char *v = NULL;
	int fd;
	if (cctl_os_stat(NULL, path, &st) || st.type != CCTL_OS_FILE ||
	    st.size > MARKER_SCAN_MAX || cctl_os_open_read(NULL, path, &fd))
		return NULL;
	buf = cctl_xmalloc(chunk + 64);
	while (!v && !cctl_os_read(NULL, fd, path, buf + keep, chunk, &got) && got) {
		size_t len = keep + got;
		for (size_t i = 0; !v && i + mn + 8 <= len; i++) {
			int a, b, c, n = 0;
			char tail[40];
			if (buf[i] != 'c' || memcmp(buf + i, MARKER, mn))
				continue;
			memcpy(tail, buf + i + mn, sizeof(tail) - 1);
			tail[sizeof(tail) - 1] = 0;
			if (sscanf(tail, "%d_%d_%d%n", &a, &b, &c, &n) == 3 && n && a >= 8 &&
			    a < 100 && b >= 0 && c >= 0)
				v = cctl_xstrfmt("%d.%d.%d", a, b, c);
		}
		keep = len < 64 ? len : 64;
		memmove(buf, buf + len - keep, keep);
	}
	free(buf);
	cctl_os_close(fd);
	return v;
}

/* A cudnn_version.h beside the libraries: <dir>/../include, or
 * <dir>/../../include for bin/x64. */
static char *header_version(const char *dir)
{
	char *up = cctl__dir_of(dir), *v = NULL;
	for (int k = 0; k < 2 && up && !v; k++) {
		char *h = cctl_path_join(up, "include", "cudnn_version.h", NULL), *next;
		struct cctl_buf text = CCTL_BUF_INIT;
		if (cctl__file_exists(h) && !cctl_os_read_file(NULL, h, &text) && text.buf)
			v = cctl_parse_version_header(text.buf);
		cctl_buf_release(&text);
		free(h);
		next = cctl__dir_of(up);
		free(up);
		up = next;
	}
	free(up);
	return v;
}

/* 12 from "cuda-12", "cuda12", "cuda_12", "-cu12", "\v12.4", "\12.x". */
static int cuda_from_text(const char *s)
{
	for (const char *p = s; *p; p++) {
		const char *d = NULL;
		if (!strncmp(p, "cuda", 4) || !strncmp(p, "CUDA", 4))
			d = p + 4 + (p[4] == '-' || p[4] == '_');
		else if ((!strncmp(p, "cu", 2)) && p > s && (p[-1] == '-' || p[-1] == '_'))
			d = p + 2;
		else if ((*p == 'v' || *p == 'V') && p > s && (p[-1] == '\\' || p[-1] == '/'))
			d = p + 1;
		else if (isdigit((unsigned char)*p) && p > s &&
			 (p[-1] == '\\' || p[-1] == '/') && strstr(p, ".x") == p + 2)
			d = p;
		if (d && isdigit((unsigned char)d[0]) && isdigit((unsigned char)d[1]) &&
		    !isdigit((unsigned char)d[2])) {
			int v = (d[0] - '0') * 10 + d[1] - '0';
			if (v >= 10 && v <= 19)
				return v;
		}
	}
	return 0;
}

/* Windows: the CUDA major of the cuBLAS, runtime or NVRTC a DLL imports
 * (cublasLt64_12.dll). */
static int cuda_from_imports(const char *dir, char **files, size_t n)
{
	static const char *const libs[] = { "cublaslt64_", "cublas64_", "cudart64_",
					    "nvrtc64_", NULL };
	for (size_t i = 0; i < n; i++) {
		struct cctl_lib_info info;
		char *path = cctl_path_join(dir, files[i], NULL);
		int cuda = 0;
		memset(&info, 0, sizeof(info));
		if (!cctl_os_lib_info(NULL, path, &info))
			for (size_t k = 0; k < info.nneeded && !cuda; k++)
				for (const char *const *l = libs; *l && !cuda; l++) {
					size_t ln = strlen(*l);
					const char *nm = info.needed[k];
					int ok = 1;
					for (size_t j = 0; j < ln && ok; j++)
						ok = tolower((unsigned char)nm[j]) == (*l)[j];
					if (ok && isdigit((unsigned char)nm[ln]) &&
					    isdigit((unsigned char)nm[ln + 1]))
						cuda = (nm[ln] - '0') * 10 + nm[ln + 1] - '0';
				}
		cctl_lib_info_release(&info);
		free(path);
		if (cuda)
			return cuda;
	}
	return 0;
}

/* Each file's own version: the copy's (the main library's, else the
 * first that says), and the others it is mixed with. */
static void versions(const struct cctl_platform *p, struct cctl_copy *c)
{
	char *seen[2] = { NULL, NULL };
	for (size_t i = 0; i < c->nfiles; i++) {
		char *path = cctl_path_join(c->dir, c->files[i], NULL);
		char *v = cctl__lib_file_version(p, path);
		free(path);
		if (!v)
			continue;
		if (!seen[0])
			seen[0] = v;
		else if (strcmp(seen[0], v) && !seen[1])
			seen[1] = v;
		else
			free(v);
	}
	if (seen[0]) {
		const char *main = cctl_platform_main_library(p, c->major);
		char *mp = main ? cctl_path_join(c->dir, main, NULL) : NULL;
		char *mv = mp && cctl__file_exists(mp) ? cctl__lib_file_version(p, mp) : NULL;
		free(mp);
		c->version = mv ? mv : cctl_xstrdup(seen[0]);
		c->version_from = cctl_xstrdup(p->windows ? "FileVersion" : "file name");
	}
	if (seen[1] && !c->mixed)
		c->mixed = cctl_xstrfmt("%s and %s", seen[0], seen[1]);
	free(seen[0]);
	free(seen[1]);
}

static int same_name(const struct cctl_platform *p, const char *a, const char *b)
{
	if (!p->windows)
		return !strcmp(a, b);
	for (; *a && tolower((unsigned char)*a) == tolower((unsigned char)*b); a++, b++)
		;
	return !*a && !*b;
}

/* The complete set's libraries this copy lacks. */
static void missing(const struct cctl_platform *p, struct cctl_copy *c)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	for (const char *const *l = cctl_platform_libraries(p, c->major); l && *l; l++) {
		int have = 0;
		for (size_t i = 0; i < c->nfiles && !have; i++)
			have = same_name(p, c->files[i], *l);
		if (!have)
			cctl_buf_addf(&b, "%s%s", b.len ? ", " : "", *l);
	}
	c->missing = b.len ? cctl_buf_detach(&b) : NULL;
	cctl_buf_release(&b);
}

/* The site-packages folder a path lies in ("…/site-packages"), and the
 * package folder under it ("torch", "nvidia"); NULL when none. */
static char *site_of(const char *dir, char **pkg)
{
	const char *names[] = { "site-packages", "dist-packages", NULL };
	*pkg = NULL;
	for (const char *const *nm = names; *nm; nm++) {
		const char *at = strstr(dir, *nm);
		size_t n = strlen(*nm);
		if (at && (at[n] == '/' || at[n] == '\\')) {
			const char *p = at + n + 1;
			*pkg = cctl_xstrfmt("%.*s", (int)strcspn(p, "/\\"), p);
			return cctl_xstrfmt("%.*s", (int)(at + n - dir), dir);
		}
	}
	return NULL;
}

/* nvidia-cudnn-cu12's dist-info in site: "nvidia-cudnn-cu12 9.1.0.70",
 * with the pip command that removes it. */
static void wheel(struct cctl_copy *c, const char *site)
{
	char **names = NULL;
	size_t n = 0;
	if (!cctl_os_listdir(NULL, site, &names, &n))
		for (size_t i = 0; i < n; i++) {
			const char *nm = names[i], *dash;
			size_t len = strlen(nm);
			if (!c->owner_name && !strncmp(nm, "nvidia_cudnn_cu", 15) &&
			    len > 10 && !strcmp(nm + len - 10, ".dist-info") &&
			    (dash = strchr(nm, '-'))) {
				char *pkg = cctl_xstrfmt("%.*s", (int)(dash - nm), nm);
				for (char *q = pkg; *q; q++)
					*q = *q == '_' ? '-' : *q;
				c->owner_name = cctl_xstrfmt("%s %.*s", pkg,
							     (int)(nm + len - 10 - dash - 1),
							     dash + 1);
				c->remove_with = cctl_xstrfmt("pip uninstall %s", pkg);
				if (!c->cuda)
					c->cuda = cuda_from_text(pkg);
				if (!c->version) {
					int a, b, d;
					if (sscanf(dash + 1, "%d.%d.%d", &a, &b, &d) == 3) {
						c->version = cctl_xstrfmt("%d.%d.%d", a, b, d);
						c->version_from = cctl_xstrdup("wheel metadata");
					}
				}
				free(pkg);
			}
			free(names[i]);
		}
	free(names);
	if (!c->owner_name) {
		c->owner_name = cctl_xstrdup("nvidia-cudnn");
		c->remove_with = cctl_xstrdup("pip uninstall nvidia-cudnn-cu12 (or -cu11, -cu13)");
	}
}

/* A conda environment's prefix (it has conda-meta/) at dir/.. or
 * dir/../.. (Library\bin), or NULL. */
static char *conda_prefix(const char *dir)
{
	char *up = cctl__dir_of(dir);
	for (int k = 0; k < 2 && up; k++) {
		char *meta = cctl_path_join(up, "conda-meta", NULL), *next;
		struct cctl_os_stat st;
		int is = !cctl_os_stat(NULL, meta, &st) && st.type == CCTL_OS_DIR;
		free(meta);
		if (is)
			return up;
		next = cctl__dir_of(up);
		free(up);
		up = next;
	}
	free(up);
	return NULL;
}

static void owner(struct cctl_copy *c, const struct cctl_root *root)
{
	const struct cctl_platform *p = cctl_platform_host();
	const char *pf = cctl_os_getenv("ProgramFiles");
	char *pkg = NULL, *site = site_of(c->dir, &pkg), *conda;
	char *installer = p->windows && pf ? cctl_path_join(pf, "NVIDIA", "CUDNN", NULL) : NULL;
	char *versions = root ? cctl_path_join(root->path, "versions", NULL) : NULL;
	char *real = cctl__real_path(c->dir), *rv = versions ? cctl__real_path(versions) : NULL;
	/* through links too: <root>/current/lib is versions/<id>/lib */
	if (versions && (cctl_path_within(versions, c->dir) || cctl_path_within(rv, real))) {
		c->owner = CCTL_OWNER_CUDNNCTL;
	} else if (site && pkg && !strcmp(pkg, "nvidia")) {
		c->owner = CCTL_OWNER_WHEEL;
		wheel(c, site);
	} else if (site && pkg) {
		c->owner = CCTL_OWNER_FRAMEWORK;
		c->owner_name = cctl_xstrdup(pkg);
	} else if ((conda = conda_prefix(c->dir))) {
		c->owner = CCTL_OWNER_CONDA;
		c->owner_name = conda;
		c->remove_with = cctl_xstrfmt("conda remove -p %s cudnn", conda);
	} else if (installer && cctl_path_within(installer, c->dir)) {
		char *name, *cmd;
		c->owner = CCTL_OWNER_INSTALLER;
		if (!cctl_os_uninstall_entry("cuDNN", &name, &cmd)) {
			/* its entry in Settings > Apps, and what that runs */
			c->owner_name = name;
			c->remove_with = cctl_xstrfmt("uninstall \"%s\" in Settings > Apps "
						      "(it runs %s)", name, cmd);
			free(cmd);
		} else {
			c->owner_name = cctl_xstrdup("NVIDIA cuDNN");
			c->remove_with = cctl_xstrdup("uninstall \"NVIDIA cuDNN\" in Settings > "
						      "Apps (or Programs and Features)");
		}
	} else {
		c->owner = CCTL_OWNER_UNKNOWN;
	}
	free(installer);
	free(versions);
	free(rv);
	free(real);
	free(site);
	free(pkg);
}

void cctl__copy_describe(struct cctl_copy *c, const struct cctl_root *root,
			 const char *active_dir)
{
	const struct cctl_platform *p = cctl_platform_host();
	c->active = active_dir && cctl__same_file(active_dir, c->dir);
	versions(p, c);
	if (!c->version && c->major >= 9) {
		const char *graph = p->windows ? "cudnn_graph64_9.dll" : "libcudnn_graph.so.9";
		char *g = cctl_path_join(c->dir, graph, NULL);
		if ((c->version = marker_version(g)))
			c->version_from = cctl_xstrdup("library");
		free(g);
	}
	if (!c->version && (c->version = header_version(c->dir)))
		c->version_from = cctl_xstrdup("cudnn_version.h");
	missing(p, c);
	if (p->windows)
		c->cuda = cuda_from_imports(c->dir, c->files, c->nfiles);
	if (!c->cuda)
		c->cuda = cuda_from_text(c->dir);
	owner(c, root);
}

/* ---------------------------------------------------------- packages */

/* The files asked about: each unknown copy's main library (else its
 * first), as found and with its links resolved (merged /usr: dpkg may
 * know /lib/x86_64-linux-gnu/... or /usr/lib/...). */
static size_t ask_list(struct cctl_copy *v, size_t n, const char ***argv,
		       size_t lead, char ***owned, size_t **copy)
{
	size_t k = lead;
	*owned = NULL;
	*copy = NULL;
	for (size_t i = 0; i < n; i++) {
		struct cctl_copy *c = &v[i];
		const char *main = cctl_platform_main_library(cctl_platform_host(), c->major);
		char *path, *real;
		if (c->owner != CCTL_OWNER_UNKNOWN || !c->nfiles)
			continue;
		path = cctl_path_join(c->dir, main && same_name(cctl_platform_host(), main,
								 c->files[0]) ? main : c->files[0],
				      NULL);
		real = cctl__real_path(path);
		for (int r = 0; r < 2; r++) {
			char *one = r ? real : path;
			if (r && !strcmp(real, path)) {
				free(real);
				break;
			}
			*argv = cctl_xrealloc(*argv, (k + 2) * sizeof(**argv));
			*owned = cctl_xrealloc(*owned, (k + 1) * sizeof(**owned));
			*copy = cctl_xrealloc(*copy, (k + 1) * sizeof(**copy));
			(*argv)[k] = one;
			(*owned)[k] = one;
			(*copy)[k++] = i;
		}
	}
	return k;
}

static void set_package(struct cctl_copy *c, const char *name, int rpm)
{
	if (c->owner == CCTL_OWNER_PACKAGE)
		return;
	c->owner = CCTL_OWNER_PACKAGE;
	c->owner_name = cctl_xstrdup(name);
	c->owner_name[strcspn(c->owner_name, rpm ? "\n" : ":,")] = 0;
	c->remove_with = cctl_xstrfmt(rpm ? "dnf remove %s" : "apt remove %s",
				      c->owner_name);
	if (!c->cuda)
		c->cuda = cuda_from_text(c->owner_name);
}


/* Quick: the file lists of the packages whose name says cudnn
 * (libcudnn9-cuda-12, cudnn9-cuda-12, nvidia-cudnn), read directly;
 * dpkg-query reads every package's and takes half a second. */
static void dpkg_lists(struct cctl_copy *v, char **files, size_t *copy, size_t lead,
		       size_t k)
{
	/* DPKG_ADMINDIR: dpkg's own variable for another database */
	const char *admin = cctl_os_getenv("DPKG_ADMINDIR");
	char **names = NULL, *info;
	size_t n = 0;
	info = cctl_path_join(admin && cctl_os_is_absolute(admin) ? admin : "/var/lib/dpkg",
			      "info", NULL);
	if (cctl_os_listdir(NULL, info, &names, &n)) {
		free(info);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		struct cctl_buf text = CCTL_BUF_INIT;
		char *path;
		if (!strstr(names[i], "cudnn") || len < 6 || strcmp(names[i] + len - 5, ".list")) {
			free(names[i]);
			continue;
		}
		path = cctl_path_join(info, names[i], NULL);
		names[i][len - 5] = 0;
		if (!cctl_os_read_file(NULL, path, &text) && text.buf)
			for (char *line = text.buf, *next; *line; line = next) {
				next = line + strcspn(line, "\n");
				if (*next)
					*next++ = 0;
				for (size_t j = lead; j < k; j++)
					if (!strcmp(line, files[j]))
						set_package(&v[copy[j]], names[i], 0);
			}
		cctl_buf_release(&text);
		free(path);
		free(names[i]);
	}
	free(names);
	free(info);
}

void cctl__copy_packages(struct cctl_copy *v, size_t n, int thorough)
{
	const char **argv = cctl_xcalloc(3, sizeof(*argv));
	char **files = NULL;
	size_t *copy = NULL, k;
	struct cctl_buf out = CCTL_BUF_INIT, err = CCTL_BUF_INIT;
	int status;
	if (cctl_platform_host()->windows) {
		free(argv);
		return;
	}
	argv[0] = "dpkg-query";
	argv[1] = "-S";
	k = ask_list(v, n, &argv, 2, &files, &copy);
	if (k > 2 && !thorough) {
		dpkg_lists(v, files, copy, 2, k);
	} else if (k > 2) {
		argv[k] = NULL;
		/* "libcudnn9-cuda-12:amd64: /usr/lib/.../libcudnn.so.9" per
		 * file owned (exit 1 when one is not) */
		int asked = !cctl_os_run_capture(NULL, argv, 10000, &out, &err, &status) &&
			    status >= 0 && status <= 1;
		if (asked && out.buf)
			for (char *line = out.buf, *next; *line; line = next) {
				char *at = strstr(line, ": /");
				next = line + strcspn(line, "\n");
				if (*next)
					*next++ = 0;
				for (size_t i = 2; at && i < k; i++)
					if (!strcmp(at + 2, files[i]))
						set_package(&v[copy[i]], line, 0);
			}
		cctl_buf_reset(&out);
		/* rpm: one line per file, the package or "... not owned" */
		argv[0] = "rpm";
		argv[1] = "-qf";
		argv = cctl_xrealloc(argv, (k + 3) * sizeof(*argv));
		memmove(argv + 4, argv + 2, (k - 2) * sizeof(*argv));
		argv[2] = "--qf";
		argv[3] = "%{NAME}\n";
		argv[k + 2] = NULL;
		if (!asked && !cctl_os_run_capture(NULL, argv, 10000, &out, &err, &status) &&
		    status >= 0 && status <= 1 && out.buf) {
			size_t i = 2;
			for (char *line = out.buf, *next; *line && i < k; line = next, i++) {
				next = line + strcspn(line, "\n");
				if (*next)
					*next++ = 0;
				if (*line && !strchr(line, ' '))
					set_package(&v[copy[i]], line, 1);
			}
		}
	}
	for (size_t i = 2; i < k; i++)
		free(files[i]);
	free(files);
	free(copy);
	free(argv);
	cctl_buf_release(&out);
	cctl_buf_release(&err);
}

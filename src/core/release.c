/*
 * Which release "install 9.1" means on this machine: the newest one whose
 * version starts with 9.1, for this platform, built for the CUDA major
 * this machine can use.
 *
 * The CUDA major: --cuda N wins.  Else that of an installed CUDA toolkit
 * (CUDA_PATH, the nvcc on PATH, the platform's usual folder, a CUDA
 * runtime library the loader finds) when the driver can run it; else the newest one the
 * driver supports that the release offers; with neither (a CI runner),
 * the release's only one, or --cuda is needed.  A driver too old for the
 * chosen build is refused before anything is downloaded.
 *
 * Test hooks: CUDNNCTL_TEST_CUDA_DRIVER (cuDriverGetVersion's value, or
 * "none") and CUDNNCTL_TEST_CUDA_TOOLKIT (a CUDA major, or "none") stand
 * in for what the machine has.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

int cctl_is_folder(const char *arg)
{
	struct cctl_os_stat st;
	return !cctl_os_stat(NULL, arg, &st) && st.type == CCTL_OS_DIR;
}

int cctl_is_archive_arg(const char *arg)
{
	static const char *const ext[] = { ".zip", ".tar.xz", ".tar.gz",
					   ".tar.bz2", ".tgz", ".txz" };
	struct cctl_os_stat st;
	size_t n = strlen(arg);
	if (!cctl_os_stat(NULL, arg, &st) && st.type != CCTL_OS_NONE &&
	    st.type != CCTL_OS_DIR)
		return 1;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(ext); i++)
		if (n >= strlen(ext[i]) && !strcmp(arg + n - strlen(ext[i]), ext[i]))
			return 1;
	return 0;
}

/* ------------------------------------------------------ this machine */

/* "12.4.1" in version.json, or "v12.4" / "cuda-12.4" in a path: 12. */
static int major_in(const char *text, const char *after)
{
	const char *p = after ? strstr(text, after) : text;
	if (!p)
		return 0;
	for (; *p; p++)
		if (isdigit((unsigned char)*p) &&
		    (p == text || !isalnum((unsigned char)p[-1]) || p[-1] == 'v') &&
		    strchr(p, '.'))
			return atoi(p);
	return 0;
}

static int toolkit_in(const char *dir, char *from, size_t nfrom)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *json = cctl_path_join(dir, "version.json", NULL);
	int major = 0;
	/* {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, ...} */
	if (!cctl_os_read_file(NULL, json, &text) && text.buf) {
		const char *cuda = strstr(text.buf, "\"cuda\"");
		major = cuda ? major_in(cuda, "\"version\"") : 0;
	}
	if (major)
		snprintf(from, nfrom, "%s", json);
	cctl_buf_release(&text);
	free(json);
	return major;
}

/* The toolkit of the nvcc found on PATH: its folder's version.json. */
static int toolkit_of_nvcc(const struct cctl_platform *p, char *from,
			   size_t nfrom)
{
	const char *path = cctl_os_getenv("PATH");
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	int major = 0;
	while (path && *path && !major) {
		size_t n = strcspn(path, sep);
		char *dir = cctl_xstrfmt("%.*s", (int)n, path);
		char *exe = cctl_path_join(dir, p->nvcc, NULL);
		struct cctl_os_stat st;
		if (n && !cctl_os_stat(NULL, exe, &st) && st.type != CCTL_OS_NONE) {
			char *top = cctl_path_join(dir, "..", NULL);
			major = toolkit_in(top, from, nfrom);
			free(top);
		}
		free(exe);
		free(dir);
		path += n + (path[n] ? 1 : 0);
	}
	return major;
}

static void probe_toolkit(struct cctl_cuda_env *e)
{
	const struct cctl_platform *p = cctl_platform_host();
	const char *cuda_path = cctl_os_getenv("CUDA_PATH");
	const char *test = cctl_os_getenv("CUDNNCTL_TEST_CUDA_TOOLKIT");
	if (test) {
		e->toolkit = atoi(test); /* "none": 0 */
		snprintf(e->toolkit_from, sizeof(e->toolkit_from),
			 "CUDNNCTL_TEST_CUDA_TOOLKIT");
		return;
	}
	if (cuda_path && *cuda_path) {
		e->toolkit = toolkit_in(cuda_path, e->toolkit_from,
					sizeof(e->toolkit_from));
		if (!e->toolkit && (e->toolkit = major_in(cuda_path, NULL)))
			snprintf(e->toolkit_from, sizeof(e->toolkit_from),
				 "CUDA_PATH=%s", cuda_path);
		if (e->toolkit)
			return;
	}
	if ((e->toolkit = toolkit_of_nvcc(p, e->toolkit_from,
					  sizeof(e->toolkit_from))))
		return;
	if (p->toolkit_dir &&
	    (e->toolkit = toolkit_in(p->toolkit_dir, e->toolkit_from,
				     sizeof(e->toolkit_from))))
		return;
	/* a CUDA runtime the loader finds: the newest major */
	for (int major = 14; major >= 11 && !e->toolkit; major--) {
		struct cctl_lib_hits h = { 0 };
		char *name = cctl__subst_d(p->cudart, major);
		if (!cctl_os_lib_search(NULL, name, cctl_os_getenv(p->lib_var),
					NULL, &h) &&
		    h.n) {
			e->toolkit = major;
			snprintf(e->toolkit_from, sizeof(e->toolkit_from), "%s",
				 h.v[0].path);
		}
		cctl_lib_hits_release(&h);
		free(name);
	}
}

typedef int(CCTL_GPU_CALL *driver_version_fn)(int *);

static void probe_driver(struct cctl_cuda_env *e)
{
	const char *test = cctl_os_getenv("CUDNNCTL_TEST_CUDA_DRIVER");
	driver_version_fn fn;
	void *h = NULL;
	int v = 0;
	if (test) {
		e->driver = atoi(test); /* "none": 0 */
		return;
	}
	if (cctl_os_dl_open(NULL, cctl_platform_host()->driver, &h))
		return;
	/* the driver stays loaded: verify uses it next */
	*(void **)&fn = cctl_os_dl_sym(h, "cuDriverGetVersion");
	if (fn && !fn(&v))
		e->driver = v;
}

void cctl_cuda_env_probe(struct cctl_cuda_env *e)
{
	memset(e, 0, sizeof(*e));
	probe_toolkit(e);
	probe_driver(e);
}

/* --------------------------------------------------------- the release */

const struct cctl_release *cctl_release_newest(const struct cctl_manifest *m,
					       const char *prefix,
					       const char *platform, int cuda)
{
	const struct cctl_release *best = NULL;
	for (size_t i = 0; i < m->n; i++) {
		const struct cctl_release *r = &m->v[i];
		int c;
		if (strcmp(r->platform, platform) || (cuda && r->cuda != cuda) ||
		    !cctl_version_has_prefix(r->version, prefix))
			continue;
		c = best ? cctl_version_cmp(r->version, best->version) : 1;
		/* the same build twice (9.27.0's windows-arm64 _cuda13 and
		 * _cuda13.4): the plain name */
		if (c > 0 || (!c && r->cuda == best->cuda &&
			      strlen(r->file_name) < strlen(best->file_name)))
			best = r;
	}
	return best;
}

/* The CUDA majors a version offers on a platform, as a bit set. */
static unsigned offered(const struct cctl_manifest *m, const char *version,
			const char *platform)
{
	unsigned set = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].platform, platform) &&
		    !strcmp(m->v[i].version, version) && m->v[i].cuda > 0 &&
		    m->v[i].cuda < 32)
			set |= 1u << m->v[i].cuda;
	return set;
}

static int list_cudas(unsigned set, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (int c = 0; c < 32; c++)
		if (set & (1u << c))
			len += (size_t)snprintf(out + len, n - len, "%s%d",
						len ? ", " : "", c);
	return (int)len;
}

/* Decides the CUDA major when --cuda is not given. */
static int choose_cuda(struct cctl_ctx *ctx, const struct cctl_release *top,
		       unsigned set, const struct cctl_cuda_env *env, int *cuda,
		       char *why, size_t nwhy)
{
	int driver = env->driver / 1000;
	char list[64];
	list_cudas(set, list, sizeof(list));
	if (env->toolkit && (set & (1u << env->toolkit)) &&
	    (!driver || env->toolkit <= driver)) {
		*cuda = env->toolkit;
		snprintf(why, nwhy, "the CUDA %d toolkit (%s)", env->toolkit,
			 env->toolkit_from);
		return 0;
	}
	for (int c = driver; driver && c > 0; c--)
		if (set & (1u << c)) {
			*cuda = c;
			snprintf(why, nwhy,
				 "the newest CUDA major of cuDNN %s that the "
				 "driver supports (CUDA %d.%d)",
				 top->version, driver, env->driver % 1000 / 10);
			return 0;
		}
	if (driver) {
		cctl__error(ctx, CCTL_EDRIVER,
			    "the NVIDIA driver supports CUDA %d.%d, older than "
			    "every build of cuDNN %s (CUDA %s)",
			    driver, env->driver % 1000 / 10, top->version, list);
		cctl__hint(ctx, "update the NVIDIA driver, or install an older "
				"cuDNN");
		return CCTL_EDRIVER;
	}
	if (set && !(set & (set - 1))) {
		*cuda = top->cuda;
		snprintf(why, nwhy, "the only build of cuDNN %s", top->version);
		return 0;
	}
	cctl__error(ctx, CCTL_EUSAGE,
		    "cannot tell which CUDA build of cuDNN %s this machine "
		    "needs: no NVIDIA driver and no CUDA toolkit found, and it is "
		    "built for CUDA %s",
		    top->version, list);
	cctl__hint(ctx, "pass --cuda N");
	return CCTL_EUSAGE;
}

int cctl_release_choose(struct cctl_ctx *ctx, const struct cctl_manifest *m,
			const char *version, const char *platform, int cuda,
			const struct cctl_cuda_env *env,
			const struct cctl_release **out, char *why, size_t nwhy)
{
	const struct cctl_release *top = cctl_release_newest(m, version, platform, cuda);
	int ret;

	*out = NULL;
	if (!top) {
		cctl__error(ctx, CCTL_ENORELEASE,
			    "no cuDNN release matches %s%s%.0d for %s in the "
			    "%zu archives cudnnctl knows",
			    version, cuda ? " for CUDA " : "", cuda, platform,
			    m->n);
		cctl__hint(ctx, "cudnnctl list --available shows them; cudnnctl "
				"manifests update fetches newer manifests");
		return CCTL_ENORELEASE;
	}
	if (cuda) {
		snprintf(why, nwhy, "--cuda %d", cuda);
	} else {
		unsigned set = offered(m, top->version, platform);
		if ((ret = choose_cuda(ctx, top, set, env, &cuda, why, nwhy)))
			return ret;
		top = cctl_release_newest(m, top->version, platform, cuda);
	}
	if (env->driver && env->driver / 1000 < cuda) {
		const char *min = cctl_platform_min_driver(
			cctl_platform_find(platform), cuda);
		cctl__error(ctx, CCTL_EDRIVER,
			    "cuDNN %s for CUDA %d needs a driver for CUDA %d%s%s%s; "
			    "this one supports CUDA %d.%d",
			    top->version, cuda, cuda, min ? " (" : "",
			    min ? min : "", min ? " or newer)" : "",
			    env->driver / 1000, env->driver % 1000 / 10);
		cctl__hint(ctx, "update the NVIDIA driver, or choose an older "
				"build with --cuda N");
		return CCTL_EDRIVER;
	}
	*out = top;
	return 0;
}

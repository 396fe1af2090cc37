/*
 * In use: the running programs that have a cuDNN library loaded, named
 * before uninstall or quarantine takes the file away (they refuse while
 * one runs) and after a switch (they keep the old version until they
 * restart).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

int cctl_lib_users(struct cctl_ctx *ctx, const char *const *files, size_t n,
		   struct cctl_lib_user **v, size_t *nv)
{
	return cctl_os_lib_users(ctx, files, n, v, nv);
}

void cctl_lib_users_release(struct cctl_lib_user *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].program);
		free(v[i].service);
		free(v[i].file);
	}
	free(v);
}

char *cctl_install_lib_dir(const char *version_dir)
{
	return cctl__lib_dir(cctl_platform_host(), version_dir);
}

/* Whether base is a cuDNN library of any major this build knows, or
 * (Linux) a file behind one's links: libcudnn_ops.so.9.1.0, libcudnn.so. */
int cctl__is_cudnn_file(const struct cctl_platform *p, const char *base)
{
	if (!p->windows && !strncmp(base, "libcudnn", 8) && strstr(base, ".so"))
		return 1;
	for (const struct cctl_libset *l = p->libsets; l->major; l++)
		if (cctl_platform_is_library(p, l->major, base))
			return 1;
	return 0;
}

int cctl_lib_files_in(struct cctl_ctx *ctx, const char *dir, char ***v, size_t *n)
{
	const struct cctl_platform *p = cctl_platform_host();
	char **names = NULL;
	size_t nn = 0;
	int ret;
	*v = NULL;
	*n = 0;
	if ((ret = cctl_os_listdir(ctx, dir, &names, &nn)))
		return ret;
	for (size_t i = 0; i < nn; i++) {
		if (cctl__is_cudnn_file(p, names[i])) {
			*v = cctl_xrealloc(*v, (*n + 1) * sizeof(**v));
			(*v)[(*n)++] = cctl_path_join(dir, names[i], NULL);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

/* "pid 4242 (/usr/bin/python3), pid 17 (svchost.exe, service Foo)". */
static void name_users(struct cctl_buf *b, const struct cctl_lib_user *v, size_t n)
{
	for (size_t i = 0; i < n && i < 5; i++) {
		cctl_buf_addf(b, "%spid %ld (%s", i ? ", " : "", v[i].pid, v[i].program);
		if (v[i].service)
			cctl_buf_addf(b, ", service %s", v[i].service);
		cctl_buf_addch(b, ')');
	}
	if (n > 5)
		cctl_buf_addf(b, " and %zu more", n - 5);
}

int cctl_check_not_in_use(struct cctl_ctx *ctx, const char *const *files,
			  size_t n, const char *what)
{
	struct cctl_lib_user *v = NULL;
	struct cctl_buf b = CCTL_BUF_INIT;
	size_t nv = 0;
	int ret, service = 0;
	if (!n || cctl_os_lib_users(NULL, files, n, &v, &nv) || !nv) {
		cctl_lib_users_release(v, nv);
		return 0; /* what cannot be looked into is not in the way */
	}
	name_users(&b, v, nv);
	for (size_t i = 0; i < nv; i++)
		service |= v[i].service != NULL;
	ret = cctl__error(ctx, CCTL_EINUSE,
			  "cannot %s: %s %s loaded by %s; nothing was changed",
			  what, v[0].file ? v[0].file : "its libraries",
			  v[0].file ? "is" : "are", b.buf);
	cctl__hint(ctx, "%s, then run it again; --force does it anyway (%s)",
		   service ? "stop the service first" : "close those programs",
		   cctl_platform_host()->windows
			   ? "a loaded DLL is moved to the root's trash and "
			     "deleted once it is free"
			   : "the programs keep the files they have open");
	cctl_buf_release(&b);
	cctl_lib_users_release(v, nv);
	return ret;
}

/*
 * The cache as a user sees it: what is in it, emptying it, and copying an
 * archive out of it (download --output).  The layout is fetch.c's.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "fetch.h"
#include "internal.h"

char *cctl_fetch_source(const struct cctl_fetch_opts *o,
			const struct cctl_release *r)
{
	struct cctl__source s;
	char *path;
	cctl__source_open(&s, o);
	path = cctl__source_path(NULL, &s, r->relative_path);
	cctl__source_close(&s);
	return path;
}

static void add(struct cctl_cache_entry **v, size_t *n, const char *kind,
		const char *name, uint64_t size)
{
	*v = cctl_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n].kind = kind;
	(*v)[*n].name = cctl_xstrdup(name);
	(*v)[(*n)++].size = size;
}

/* The length of the archive's name in a partial download's name:
 * "NAME.part", or one range of it, "NAME.START.part" (fetch-ranges.c). */
static size_t part_base(const char *name)
{
	size_t n = strlen(name) - 5, d = n;
	while (d && name[d - 1] >= '0' && name[d - 1] <= '9')
		d--;
	return d < n && d > 1 && name[d - 1] == '.' ? d - 1 : n;
}

/* A name cudnnctl gives a file in archives/: a release's archive
 * ("cudnn-<platform>-<version>_cuda<N>-archive.zip" or ".tar.xz", as the
 * manifest names it), or its partial download (".part", or a range of
 * it, ".START.part"). */
static int archive_name(const char *name)
{
	size_t n = strlen(name);
	if (cctl__ends_with(name, ".part"))
		n = part_base(name);
	if (strncmp(name, "cudnn-", 6) ||
	    !((n > 4 && !strncmp(name + n - 4, ".zip", 4)) ||
	      (n > 7 && !strncmp(name + n - 7, ".tar.xz", 7))))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return 0;
	return 1;
}

/* The files cudnnctl made in one cache folder (none when it does not
 * exist).  A folder that is a link is not the cache's own: it is left
 * alone (a mistaken --cache ~ must not empty ~/archives through it), as
 * is every name cudnnctl does not make. */
static void scan(struct cctl_ctx *ctx, const char *cache, const char *sub,
		 struct cctl_cache_entry **v, size_t *n)
{
	char *dir = cctl_path_join(cache, sub, NULL), **names = NULL;
	struct cctl_os_stat ds;
	size_t k = 0;
	if (cctl_os_stat(NULL, dir, &ds) || ds.type != CCTL_OS_DIR) {
		if (ds.type == CCTL_OS_LINK || ds.type == CCTL_OS_FILE ||
		    ds.type == CCTL_OS_OTHER)
			cctl__warn(ctx, "'%s' is not a folder cudnnctl made (%s): "
					"left alone",
				   dir, ds.type == CCTL_OS_LINK ? "a link"
							       : "not a folder");
		free(dir);
		return;
	}
	if (!cctl_os_listdir(NULL, dir, &names, &k))
		for (size_t i = 0; i < k; i++) {
			char *path = cctl_path_join(dir, names[i], NULL);
			struct cctl_os_stat st;
			int ours = !strcmp(sub, "manifests")
					   ? cctl__manifest_name_at(names[i]) ==
						     strlen(names[i])
					   : archive_name(names[i]);
			if (ours && !cctl_os_stat(NULL, path, &st) &&
			    st.type == CCTL_OS_FILE)
				add(v, n,
				    !strcmp(sub, "manifests")  ? "manifest"
				    : cctl__ends_with(names[i], ".part") ? "partial"
								  : "archive",
				    names[i], st.size);
			free(path);
			free(names[i]);
		}
	free(names);
	free(dir);
}

/* Archives, then partial downloads, then manifests; by the versions in
 * their names (9.2 before 9.10). */
static int cmp_entry(const void *pa, const void *pb)
{
	const struct cctl_cache_entry *a = pa, *b = pb;
	int ka = !strcmp(a->kind, "manifest") ? 2 : !strcmp(a->kind, "partial");
	int kb = !strcmp(b->kind, "manifest") ? 2 : !strcmp(b->kind, "partial");
	return ka != kb ? ka - kb : cctl_natural_cmp(a->name, b->name);
}

int cctl_cache_list(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		    struct cctl_cache_entry **v, size_t *n)
{
	char *cache = NULL;
	int ret;
	*v = NULL;
	*n = 0;
	if ((ret = cctl_fetch_cache_dir(ctx, o, &cache)))
		return ret;
	scan(ctx, cache, "archives", v, n);
	scan(ctx, cache, "manifests", v, n);
	if (*n > 1) /* qsort takes no NULL, even for nothing */
		qsort(*v, *n, sizeof(**v), cmp_entry);
	free(cache);
	return 0;
}

void cctl_cache_list_release(struct cctl_cache_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* Removes one archive (or partial download) unless another process holds
 * its lock; 1 when it is gone. */
static int remove_archive(const char *dir, const char *name)
{
	char *base = cctl_path_join(dir, name, NULL), *lockp, *path;
	void *lock = NULL;
	int gone = 0;
	if (cctl__ends_with(name, ".part"))
		base[strlen(base) - strlen(name) + part_base(name)] = '\0';
	lockp = cctl_xstrfmt("%s.lock", base);
	path = cctl_path_join(dir, name, NULL);
	if (!cctl_os_lock(NULL, lockp, "cache clean", NULL, &lock)) {
		gone = !cctl_os_unlink(NULL, path);
		cctl_os_unlock(lock);
		cctl_os_unlink(NULL, lockp);
	}
	free(path);
	free(lockp);
	free(base);
	return gone;
}

int cctl_cache_clean(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		     uint64_t *freed, size_t *kept)
{
	struct cctl_cache_entry *v = NULL;
	size_t n = 0;
	char *cache = NULL, *archives, *manifests;
	int ret;
	*freed = 0;
	*kept = 0;
	if ((ret = cctl_cache_list(ctx, o, &v, &n)) ||
	    (ret = cctl_fetch_cache_dir(ctx, o, &cache)))
		goto out;
	archives = cctl_path_join(cache, "archives", NULL);
	manifests = cctl_path_join(cache, "manifests", NULL);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].kind, "manifest")) {
			if (remove_archive(archives, v[i].name))
				*freed += v[i].size;
			else
				++*kept;
		} else {
			char *p = cctl_path_join(manifests, v[i].name, NULL);
			if (!cctl_os_unlink(NULL, p))
				*freed += v[i].size;
			else
				++*kept;
			free(p);
		}
	}
	free(archives);
	free(manifests);
out:
	cctl_cache_list_release(v, n);
	free(cache);
	return ret;
}

int cctl_fetch_export(struct cctl_ctx *ctx, const char *path, const char *dir,
		      const struct cctl_release *r, char **out)
{
	const char *base = cctl__last_sep(path);
	struct cctl_sha256 *h = NULL;
	char *dst, *tmp, hex[65];
	unsigned char *buf = NULL;
	uint64_t copied = 0;
	size_t got;
	int in = -1, fd = -1, ret;

	base = base ? base + 1 : path;
	dst = cctl_path_join(dir, base, NULL);
	tmp = cctl_xstrfmt("%s.part", dst);
	*out = NULL;
	if ((ret = cctl__check_within(ctx, dir, dst, "copy of the archive")) ||
	    (ret = cctl_os_mkdirs(ctx, dir)) ||
	    (ret = cctl_os_open_read(ctx, path, &in)) ||
	    (ret = cctl_os_open_write(ctx, tmp, 0, &fd)))
		goto out;
	buf = cctl_xmalloc(1 << 20);
	h = cctl_sha256_new();
	while (!(ret = cctl_os_read(ctx, in, path, buf, 1 << 20, &got)) && got &&
	       !(ret = cctl_os_write_all(ctx, fd, tmp, buf, got))) {
		cctl_sha256_update(h, buf, got);
		copied += got;
	}
	cctl_sha256_final(h, hex);
	cctl_os_close(fd);
	fd = -1;
	/* the copy is what was verified, or nothing: the file in the cache
	 * could have been replaced since (a shared cache) */
	if (!ret && (copied != r->size || strcmp(hex, r->sha256))) {
		ret = cctl__error(ctx, CCTL_EMISMATCH,
				  "'%s' changed after it was verified: the copy "
				  "has %llu bytes and sha256 %s, the manifest "
				  "says %llu bytes and %s; no copy was made",
				  path, (unsigned long long)copied, hex,
				  (unsigned long long)r->size, r->sha256);
		cctl__hint(ctx, "check who else can write the cache, then run "
				"the command again (it fetches the archive anew)");
		cctl_os_unlink(NULL, path);
	}
	if (!ret && !(ret = cctl_os_rename(ctx, tmp, dst)))
		*out = cctl_xstrdup(dst);
out:
	if (ret)
		cctl_os_unlink(NULL, tmp);
	if (fd >= 0)
		cctl_os_close(fd);
	cctl_os_close(in);
	free(buf);
	free(tmp);
	free(dst);
	return ret;
}

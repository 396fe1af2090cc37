/*
 * Extracting a scanned archive: the normalised tree written under dest
 * with libarchive's secure options on, each file hashed on the way, each
 * header checked against the scan.  A tar the scan unpacked is only moved
 * into place (archive-unpack.c); a zip goes to the workers of
 * extract-parallel.c; any other tar (one whose unpacking was given up) is
 * extracted here on one thread, the archive hashed again as it is read
 * unless a guard or a private copy (cctl_archive_seal) says no one could
 * change it.
 */
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "archive-internal.h"

int cctl__entry_matches(const struct cctl__aent *ae, const struct cctl_entry *e)
{
	switch (e->type) {
	case CCTL_ENTRY_HARDLINK:
		return ae->hardlink != NULL; /* its target is set from the scan */
	case CCTL_ENTRY_FILE:
		return !ae->hardlink && ae->kind == CCTL__AK_FILE &&
		       (!ae->size_set || ae->size == e->size);
	case CCTL_ENTRY_DIR:
		return !ae->hardlink && ae->kind == CCTL__AK_DIR;
	case CCTL_ENTRY_SYMLINK:
		return !ae->hardlink && ae->kind == CCTL__AK_SYMLINK &&
		       ae->symlink && !strcmp(ae->symlink, e->link);
	}
	return 0;
}

int cctl__archive_changed(struct cctl_ctx *ctx, const struct cctl_archive *a,
			  const char *path)
{
	if (!path)
		cctl__error(ctx, CCTL_EBADARCHIVE,
			    "'%s' changed while it was being read; nothing was "
			    "installed",
			    a->file);
	else
		cctl__error(ctx, CCTL_EBADARCHIVE,
			    "'%s' changed while it was being read (entry "
			    "'%s'); nothing was installed",
			    a->file, path);
	cctl__hint(ctx, "make sure nothing writes to the archive, then run the "
			"command again");
	return CCTL_EBADARCHIVE;
}

int cctl__entry_place(const struct cctl_entry *e, const char *dest,
		      struct cctl_buf *path, struct cctl_buf *link)
{
	cctl_buf_reset(path);
	cctl_buf_adds(path, dest);
	cctl_buf_addpath(path, e->path);
	if (e->type == CCTL_ENTRY_HARDLINK) {
		cctl_buf_reset(link);
		cctl_buf_adds(link, dest);
		cctl_buf_addpath(link, e->link);
	}
	if (e->type == CCTL_ENTRY_DIR)
		return 0755;
	if (e->type == CCTL_ENTRY_FILE)
		return (e->mode & 0111) ? 0755 : 0644;
	return -1;
}

int cctl__make_parent(struct cctl_ctx *ctx, const char *path)
{
	char *dir = cctl_xstrdup(path);
	char *slash = strrchr(dir, CCTL_OS_DIR_SEP);
	struct cctl_os_stat st;
	int ret = 0;
	if (slash && slash != dir) {
		*slash = '\0';
		if (!(ret = cctl_os_stat(ctx, dir, &st)) && st.type == CCTL_OS_NONE)
			ret = cctl_os_mkdirs(ctx, dir);
	}
	free(dir);
	return ret;
}

/* Creates the reader's current entry e under dest. */
static int write_header(struct cctl_ctx *ctx, struct cctl__aw *aw,
			struct cctl__ar *ar, const struct cctl_entry *e,
			const char *dest, struct cctl_buf *path,
			struct cctl_buf *link)
{
	int perm = cctl__entry_place(e, dest, path, link);
	cctl_os_kill_point();
	return cctl__aw_header(ctx, aw, ar, path->buf,
			       e->type == CCTL_ENTRY_HARDLINK ? link->buf : NULL,
			       perm);
}

void cctl__extracted_hash(struct cctl_archive *a)
{
	/* the scan's, as no one else could change the file; nothing when
	 * the guard broke, as the file hashed again now would say nothing
	 * of what was read before (it could have been changed and put
	 * back) */
	if (cctl_archive_trusted(a)) {
		memcpy(a->extract_sha256, a->scan_sha256, sizeof(a->scan_sha256));
	} else {
		a->guard_lost = 1;
		a->extract_sha256[0] = '\0';
	}
}

/* Copies an entry's data to disk; its hash is finished on q's thread
 * (e->sha256 is written once q is drained). */
static int copy_data(struct cctl_ctx *ctx, struct cctl_archive *a,
		     struct cctl__ar *ar, struct cctl__aw *aw,
		     struct cctl_entry *e, const char *path, uint64_t *done,
		     struct cctl__hashq *q)
{
	struct cctl_sha256 *h = cctl_sha256_new();
	uint64_t scanned = e->size;
	const void *block;
	size_t size;
	int64_t offset;
	int ret;

	e->size = 0;
	while (!(ret = cctl__ar_block(ctx, ar, &block, &size, &offset))) {
		if ((ret = cctl__interrupt(ctx)))
			break;
		cctl__hashq_update(q, h, block, size);
		if ((ret = cctl__aw_data(ctx, aw, block, size, offset, path)))
			break;
		e->size += size;
		*done += size;
		cctl__progress(ctx, CCTL_PHASE_EXTRACT, *done, a->total_size);
	}
	cctl__hashq_final(q, h, e->sha256);
	if (ret < 0)
		return ret;
	if (e->size != scanned)
		return cctl__error(ctx, CCTL_EBADARCHIVE,
				   "'%s' changed while it was being read (entry "
				   "'%s'); nothing was installed",
				   a->file, e->path);
	return 0;
}

/* Every entry of ar, checked against the scan and written under dest. */
static int extract_entries(struct cctl_ctx *ctx, struct cctl_archive *a,
			   struct cctl__ar *ar, struct cctl__aw *aw,
			   const char *dest, struct cctl__hashq *q)
{
	struct cctl_buf path = CCTL_BUF_INIT, link = CCTL_BUF_INIT;
	struct cctl__aent ae;
	uint64_t done = 0;
	size_t i = 0;
	int ret;
	while (!(ret = cctl__ar_next(ctx, ar, &ae))) {
		struct cctl_entry *e;
		if (i >= a->n || !ae.name || strcmp(ae.name, a->v[i].name)) {
			ret = cctl__archive_changed(ctx, a, NULL);
			break;
		}
		e = &a->v[i++];
		if (!cctl__entry_matches(&ae, e)) {
			ret = cctl__archive_changed(ctx, a, e->path);
			break;
		}
		if (!*e->path)
			continue; /* the dropped top folder itself */
		if ((ret = write_header(ctx, aw, ar, e, dest, &path, &link)) ||
		    (e->type == CCTL_ENTRY_FILE &&
		     (ret = copy_data(ctx, a, ar, aw, e, path.buf, &done, q))) ||
		    (ret = cctl__aw_finish(ctx, aw, path.buf)))
			break;
	}
	cctl_buf_release(&path);
	cctl_buf_release(&link);
	if (ret < 0)
		return ret;
	return i != a->n ? cctl__archive_changed(ctx, a, NULL) : 0;
}

static int extract(struct cctl_ctx *ctx, struct cctl_archive *a,
		   const char *dest)
{
	struct cctl__ar *ar = NULL;
	struct cctl__aw *aw;
	struct cctl__reader *rd = cctl_xcalloc(1, sizeof(*rd));
	struct cctl__hashq *q;
	int ret;

	if ((ret = cctl__reader_open(ctx, a, rd, CCTL__READ_ARCHIVE, &ar))) {
		cctl__reader_drop(rd);
		free(rd);
		/* the scan read it: unreadable now is another file */
		return ret == CCTL_EBADARCHIVE ? cctl__archive_changed(ctx, a, NULL)
					       : ret;
	}
	if (rd->h && (a->guard || a->copy_fd >= 0) && !a->rehash)
		/* no one writes it (or a broken guard says so): hashed once is
		 * enough */
		cctl__reader_drop(rd);
	/* the archive and every file are hashed on a second thread while
	 * this one inflates and writes */
	rd->q = q = cctl__hashq_new();
	aw = cctl__aw_new();
	ret = extract_entries(ctx, a, ar, aw, dest, q);
	if (!ret && !rd->h)
		cctl__extracted_hash(a);
	else if (!ret && a->rehash && !cctl_archive_trusted(a))
		cctl__extracted_hash(a); /* the guard broke: not proven */
	else if (!ret)
		ret = cctl__reader_finish(ctx, rd, a->file, a->extract_sha256, NULL);
	cctl__aw_free(aw);
	cctl__ar_free(ar);
	/* every queued hash done, every e->sha256 written, the thread gone */
	cctl__hashq_free(q);
	cctl__reader_drop(rd);
	free(rd);
	return ret;
}

/* Whether the archive can be extracted by several workers: a zip (a tar
 * is read through once). */
static int parallel_ok(const struct cctl_archive *a)
{
	unsigned char m[4];
	size_t n = 0;
	return !cctl_os_pread(NULL, a->fd, NULL, m, sizeof(m), 0, &n) && n == 4 &&
	       !memcmp(m, "PK\x03\x04", 4);
}

unsigned cctl_archive_default_jobs(struct cctl_ctx *ctx)
{
	const char *env = cctl_os_getenv("CUDNNCTL_JOBS");
	unsigned n = cctl_os_ncpu();
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (!*end && v >= 1 && v <= CCTL__MAX_JOBS)
			return (unsigned)v;
		cctl__warn(ctx, "CUDNNCTL_JOBS='%s' is not a number from 1 to %d; "
				"using %u",
			   env, CCTL__MAX_JOBS,
			   n > CCTL__DEFAULT_JOBS ? CCTL__DEFAULT_JOBS : n);
	}
	return n > CCTL__DEFAULT_JOBS ? CCTL__DEFAULT_JOBS : n;
}

int cctl_archive_trusted(const struct cctl_archive *a)
{
	return a->unpacked || a->copy_fd >= 0 ||
	       (a->guard && cctl_os_guard_held(a->guard));
}

#define SEAL_BLOCK (1u << 20)

int cctl_archive_seal(struct cctl_ctx *ctx, struct cctl_archive *a,
		      const char *dir)
{
	struct cctl_sha256 *h;
	unsigned char *buf;
	uint64_t off = 0;
	char hex[65];
	size_t n;
	int fd, ret;
	if (a->copy_fd >= 0)
		return 0;
	if ((ret = cctl_os_open_temp(ctx, dir, &fd)))
		return ret;
	h = cctl_sha256_new();
	buf = cctl_xmalloc(SEAL_BLOCK);
	while (!(ret = cctl_os_pread(ctx, a->fd, a->file, buf, SEAL_BLOCK, off,
				     &n)) && n) {
		if ((ret = cctl__interrupt(ctx)))
			break;
		cctl_sha256_update(h, buf, n);
		if ((ret = cctl_os_write_all(ctx, fd, dir, buf, n)))
			break;
		off += n;
	}
	cctl_sha256_final(h, hex);
	free(buf);
	if (ret == CCTL_ENOSPACE)
		cctl__hint(ctx, "free some space or choose another root with "
				"--root");
	if (!ret && (off != a->file_size || strcmp(hex, a->scan_sha256))) {
		ret = cctl__error(ctx, CCTL_EBADARCHIVE,
				  "'%s' changed after it was checked (sha256 %s, "
				  "then %s); nothing was installed",
				  a->file, a->scan_sha256, hex);
		cctl__hint(ctx, "make sure nothing writes to the archive (keep "
				"archives in a folder only you can write), then "
				"run the command again");
	}
	if (ret) {
		cctl_os_close(fd);
		return ret;
	}
	/* from here on the copy is the archive: no one else can write it */
	a->copy_fd = a->fd = fd;
	cctl_os_guard_end(a->guard);
	a->guard = NULL;
	a->guard_lost = 0;
	a->rehash = 0;
	a->copy_size += off;
	return 0;
}

int cctl_archive_extract(struct cctl_ctx *ctx, struct cctl_archive *a,
			 const char *dest)
{
	void *loc = cctl_os_utf8_locale_enter();
	unsigned jobs = a->jobs ? a->jobs : cctl_archive_default_jobs(ctx);
	int ret;
	if (jobs > CCTL__MAX_JOBS)
		jobs = CCTL__MAX_JOBS;
	if (a->unpacked)
		ret = cctl__unpack_place(ctx, a, dest);
	else if (jobs > 1 && parallel_ok(a))
		ret = cctl__extract_parallel(ctx, a, dest, jobs);
	else
		ret = extract(ctx, a, dest);
	cctl_os_utf8_locale_leave(loc);
	return ret;
}

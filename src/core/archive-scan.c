/*
 * The scan of a cuDNN archive: every header read and checked, the whole
 * file hashed, before anything is extracted.  One unsafe entry refuses
 * the archive (entries.c says which and why); include/cudnn_version.h is
 * kept for the version check.  The entries found are what the extraction
 * (extract.c, extract-parallel.c) then writes, and checks again as it
 * reads them.
 */
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "archive-internal.h"
#include "entries.h"

#define VERSION_H "include/cudnn_version.h"

/* The entry's kind and link target, from what the archive says. */
static int entry_kind(struct cctl_ctx *ctx, struct cctl_archive *a,
		      const struct cctl__aent *ae, struct cctl_entry *e,
		      struct cctl_buf *norm)
{
	const char *t = ae->symlink;
	unsigned cp;
	if (ae->hardlink) {
		e->type = CCTL_ENTRY_HARDLINK;
		if (cctl__bad_chars(ae->hardlink, &cp))
			return cctl__refuse(ctx, a->file, e->name,
				      "is a hard link with an unreadable target");
		if (cctl__normalise(ctx, a->file, ae->hardlink, norm))
			return cctl__refuse(ctx, a->file, e->name,
				      "is a hard link that points outside the "
				      "archive");
		e->link = cctl_xstrdup(norm->buf);
	} else if (ae->kind == CCTL__AK_FILE) {
		e->type = CCTL_ENTRY_FILE;
		e->size = ae->size;
	} else if (ae->kind == CCTL__AK_DIR) {
		e->type = CCTL_ENTRY_DIR;
	} else if (ae->kind == CCTL__AK_SYMLINK) {
		e->type = CCTL_ENTRY_SYMLINK;
		if (!t || !*t || cctl__bad_chars(t, &cp))
			return cctl__refuse(ctx, a->file, e->name,
				      "is a link with an unreadable target");
		if (t[0] == '/' || t[0] == '\\' || strchr(t, ':'))
			return cctl__refuse(ctx, a->file, e->name,
				      "is a link that points outside the "
				      "archive");
		e->link = cctl_xstrdup(t);
	} else {
		return cctl__refuse(ctx, a->file, e->name,
			      "is a device, FIFO or socket, not a file");
	}
	return 0;
}

static int add_entry(struct cctl_ctx *ctx, struct cctl_archive *a,
		     const struct cctl__aent *ae, struct cctl_buf *norm,
		     struct cctl_entry **out)
{
	const char *name = ae->name;
	struct cctl_entry *e;
	int ret;

	*out = NULL;
	if (!name || !*name)
		return cctl__refuse(ctx, a->file, "(undecodable)",
			      "has a name that cannot be decoded in this "
			      "locale or is empty");
	if ((ret = cctl__entry_name_check(ctx, a->file, name, norm)))
		return ret;
	if (a->n >= CCTL__MAX_ENTRIES)
		return cctl__refuse(ctx, a->file, name, "is one entry too many");

	if (a->n % 64 == 0)
		a->v = cctl_xrealloc(a->v, (a->n + 64) * sizeof(*a->v));
	e = &a->v[a->n];
	memset(e, 0, sizeof(*e));
	e->name = cctl_xstrdup(name);
	e->path = cctl_xstrdup(norm->buf);
	e->mode = ae->perm;
	e->mtime = ae->mtime;
	e->mtime_nsec = ae->mtime_nsec;
	a->n++;
	if ((ret = entry_kind(ctx, a, ae, e, norm)))
		return ret;
	*out = e;
	return 0;
}

/* What one scan holds while it reads. */
struct scan {
	struct cctl__scan_in in;
	struct cctl_buf norm, version_h, vh_path;
};

/* Reads the rest of the current entry into out (when out is not NULL) or
 * counts it into *size. */
static int scan_data(struct cctl_ctx *ctx, struct scan *s,
		     struct cctl_buf *out, uint64_t *size)
{
	char chunk[65536];
	size_t got;
	int ret;
	while (!(ret = cctl__ar_read(ctx, s->in.ar, chunk, sizeof(chunk), &got)) &&
	       got) {
		if (out)
			cctl_buf_add(out, chunk, got);
		else
			*size += (uint64_t)got;
	}
	return ret;
}

/* One entry: checked and added; a regular file unpacked when the scan
 * unpacks; include/cudnn_version.h kept (under at most two top folders:
 * the shortest path wins); a size the header does not give is counted. */
static int scan_entry(struct cctl_ctx *ctx, struct cctl_archive *a,
		      struct scan *s, const struct cctl__aent *ae)
{
	struct cctl_entry *e;
	struct cctl_buf *keep = NULL;
	size_t plen, vlen = strlen(VERSION_H);
	int ret, taken = 0;
	if ((ret = cctl__interrupt(ctx)) ||
	    (ret = add_entry(ctx, a, ae, &s->norm, &e)))
		return ret;
	plen = strlen(e->path);
	if (e->type == CCTL_ENTRY_FILE && e->size < (1 << 20) && plen >= vlen &&
	    !strcmp(e->path + plen - vlen, VERSION_H) &&
	    (!s->vh_path.len || plen < s->vh_path.len)) {
		keep = &s->version_h;
		cctl_buf_reset(keep);
		cctl_buf_reset(&s->vh_path);
		cctl_buf_adds(&s->vh_path, e->path);
	}
	if (e->type == CCTL_ENTRY_FILE && s->in.uz && !keep)
		ret = cctl__unzip_add(ctx, s->in.uz, a, a->n - 1, &taken);
	else if (e->type == CCTL_ENTRY_FILE && s->in.up)
		ret = cctl__unpack_file(ctx, s->in.up, s->in.ar, a, a->n - 1, keep,
					&taken);
	if (ret)
		return ret;
	if (!taken && keep && (ret = scan_data(ctx, s, keep, NULL)))
		return ret;
	if (!taken && e->type == CCTL_ENTRY_FILE && e->size == 0 &&
	    !ae->size_set && (ret = scan_data(ctx, s, NULL, &e->size)))
		return ret;
	a->total_size += e->size;
	cctl__progress(ctx, CCTL_PHASE_SCAN, cctl__scan_in_pos(&s->in),
		       s->in.file_size);
	return 0;
}

/* Every entry, then the hash of the whole file and the checks of the
 * tree; cudnn_version.h kept when it is where the layout has it. */
static int scan_all(struct cctl_ctx *ctx, struct cctl_archive *a,
		    struct scan *s)
{
	struct cctl__aent ae;
	size_t prefix_len;
	int ret;
	while (!(ret = cctl__ar_next(ctx, s->in.ar, &ae)))
		if ((ret = scan_entry(ctx, a, s, &ae)))
			return ret;
	if (ret < 0)
		return ret;
	ret = cctl__unzip_end(ctx, s->in.uz, a, 0);
	s->in.uz = NULL;
	if (ret)
		return ret;
	cctl__scan_in_reads_done(&s->in);
	if ((ret = cctl__reader_finish(ctx, s->in.rd, a->file, a->scan_sha256,
				       &a->file_size)))
		return ret;
	if (!a->n)
		return cctl__error(ctx, CCTL_EBADARCHIVE, "'%s' is empty", a->file);
	if ((ret = cctl__entries_normalise(ctx, a)))
		return ret;
	prefix_len = strlen(a->prefix);
	if (s->vh_path.len && s->vh_path.len - prefix_len == strlen(VERSION_H) &&
	    !strncmp(s->vh_path.buf, a->prefix, prefix_len))
		a->version_h = cctl_buf_detach(&s->version_h);
	return 0;
}

static int scan(struct cctl_ctx *ctx, int fd, struct cctl__feed *feed,
		const char *file, const char *unpack_dir, unsigned jobs,
		struct cctl_archive *a)
{
	struct scan s = { .norm = CCTL_BUF_INIT, .version_h = CCTL_BUF_INIT,
			  .vh_path = CCTL_BUF_INIT };
	int ret;

	memset(a, 0, sizeof(*a));
	a->file = cctl_xstrdup(file);
	a->fd = fd;
	a->feed = feed;
	a->copy_fd = -1;
	a->jobs = jobs;
	a->guard = cctl_os_guard_begin(fd, file);
	if (!(ret = cctl__scan_in_open(ctx, a, unpack_dir, &s.in)))
		ret = scan_all(ctx, a, &s);
	ret = cctl__scan_in_close(a, &s.in, ret);
	cctl_buf_release(&s.norm);
	cctl_buf_release(&s.version_h);
	cctl_buf_release(&s.vh_path);
	return ret;
}

int cctl_archive_scan(struct cctl_ctx *ctx, int fd, const char *file,
		      const char *unpack_dir, unsigned jobs,
		      struct cctl_archive *a)
{
	void *loc = cctl_os_utf8_locale_enter();
	int ret = scan(ctx, fd, NULL, file, unpack_dir, jobs, a);
	cctl_os_utf8_locale_leave(loc);
	return ret;
}

int cctl__archive_scan_fed(struct cctl_ctx *ctx, struct cctl__feed *feed,
			   const char *file, const char *unpack_dir,
			   unsigned jobs, struct cctl_archive *a)
{
	void *loc = cctl_os_utf8_locale_enter();
	int ret = scan(ctx, -1, feed, file, unpack_dir, jobs, a);
	cctl_os_utf8_locale_leave(loc);
	/* the extraction reads the file in the cache (cctl__archive_refile) */
	a->feed = NULL;
	return ret;
}

const struct cctl_entry *cctl_archive_find(const struct cctl_archive *a,
					   const char *path)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].path, path))
			return &a->v[i];
	return NULL;
}

void cctl_archive_release(struct cctl_archive *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].name);
		free(a->v[i].path);
		free(a->v[i].link);
	}
	free(a->v);
	free(a->file);
	free(a->prefix);
	free(a->version_h);
	if (a->unpacked)
		cctl_os_rmtree(NULL, a->unpacked);
	free(a->unpacked);
	cctl_os_close(a->copy_fd);
	cctl_os_guard_end(a->guard);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->copy_fd = -1;
}

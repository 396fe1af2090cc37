/*
 * An archive read while it downloads (feed.h).  The download tells where
 * each span of the archive lies (NAME.part, or a range's own file) and
 * how much of it is written; the reader asks for bytes at an offset and
 * waits until the span that holds them has them.  The reader's files are
 * opened, read and closed under the feed's lock, and the download closes
 * them through the feed before it truncates, deletes or renames one, so
 * that on Windows, too, no open handle stands in its way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "feed.h"
#include "internal.h"

struct span {
	uint64_t start;
	uint64_t have; /* bytes from start on, on the disk */
	uint64_t base; /* the archive's offset of the file's byte 0 */
	uint64_t served; /* one past the last byte given to the reader */
	char *path;
	int fd;        /* the reader's, or -1 */
};

struct cctl__feed {
	struct cctl_os_sync *sync;
	uint64_t size;
	uint64_t tail; /* cctl__feed_want_tail's; set before the download */
	struct span s[CCTL__FEED_SPANS];
	size_t n;
	int ended;
	int ret;
	int restarted; /* bytes given to the reader were taken back */
	char *part;    /* cctl__feed_set_part's */
	int hashes;    /* the reader hashes the archive for the fetch */
	int told;      /* the reader said its digest, or that none comes */
	char digest[65]; /* "" when none */
};

struct cctl__feed *cctl__feed_new(uint64_t size)
{
	struct cctl__feed *f = cctl_xcalloc(1, sizeof(*f));
	if (!(f->sync = cctl_os_sync_new())) {
		free(f);
		return NULL;
	}
	f->size = size;
	return f;
}

void cctl__feed_set_part(struct cctl__feed *f, const char *path)
{
	free(f->part);
	f->part = path ? cctl_xstrdup(path) : NULL;
}

const char *cctl__feed_part(const struct cctl__feed *f)
{
	return f ? f->part : NULL;
}

static void span_close(struct span *s)
{
	if (s->fd >= 0)
		cctl_os_close(s->fd);
	s->fd = -1;
}

static void clear_locked(struct cctl__feed *f)
{
	for (size_t k = 0; k < f->n; k++) {
		span_close(&f->s[k]);
		free(f->s[k].path);
	}
	f->n = 0;
}

void cctl__feed_free(struct cctl__feed *f)
{
	if (!f)
		return;
	clear_locked(f);
	cctl_os_sync_free(f->sync);
	free(f->part);
	free(f);
}

void cctl__feed_clear(struct cctl__feed *f)
{
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	clear_locked(f);
	cctl_os_sync_unlock(f->sync);
}

static struct span *find(struct cctl__feed *f, uint64_t start)
{
	for (size_t k = 0; k < f->n; k++)
		if (f->s[k].start == start)
			return &f->s[k];
	return NULL;
}

void cctl__feed_span(struct cctl__feed *f, uint64_t start, const char *path,
		     uint64_t have)
{
	struct span *s;
	size_t k;
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	if (!(s = find(f, start)) && f->n < CCTL__FEED_SPANS) {
		for (k = f->n; k > 0 && f->s[k - 1].start > start; k--)
			f->s[k] = f->s[k - 1];
		s = &f->s[k];
		f->n++;
		s->path = NULL;
		s->fd = -1;
		s->served = 0;
	}
	if (s) {
		span_close(s);
		free(s->path);
		s->path = cctl_xstrdup(path);
		s->start = s->base = start;
		s->have = have;
	}
	cctl_os_sync_broadcast(f->sync);
	cctl_os_sync_unlock(f->sync);
}

void cctl__feed_have(struct cctl__feed *f, uint64_t start, uint64_t have)
{
	struct span *s;
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	if ((s = find(f, start)))
		s->have = have;
	cctl_os_sync_broadcast(f->sync);
	cctl_os_sync_unlock(f->sync);
}

void cctl__feed_forget(struct cctl__feed *f, const char *path)
{
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	for (size_t k = 0; k < f->n; k++)
		if (!strcmp(f->s[k].path, path)) {
			span_close(&f->s[k]);
			f->s[k].have = 0;
		}
	cctl_os_sync_unlock(f->sync);
}

void cctl__feed_restart(struct cctl__feed *f, const char *path)
{
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	for (size_t k = 0; k < f->n; k++)
		if (!strcmp(f->s[k].path, path) && f->s[k].served > f->s[k].start)
			f->restarted = 1;
	cctl_os_sync_broadcast(f->sync);
	cctl_os_sync_unlock(f->sync);
	cctl__feed_forget(f, path);
}

void cctl__feed_keep(struct cctl__feed *f, const char *path, uint64_t have)
{
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	for (size_t k = 0; k < f->n; k++)
		if (f->s[k].served > have)
			f->restarted = 1;
	clear_locked(f);
	cctl_os_sync_unlock(f->sync);
	cctl__feed_span(f, 0, path, have);
}

int cctl__feed_restarted(struct cctl__feed *f)
{
	int r;
	cctl_os_sync_lock(f->sync);
	r = f->restarted;
	cctl_os_sync_unlock(f->sync);
	return r;
}

void cctl__feed_moved(struct cctl__feed *f, uint64_t start, const char *path)
{
	struct span *s;
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	if ((s = find(f, start))) {
		size_t k = (size_t)(s - f->s);
		span_close(s);
		free(s->path);
		s->path = cctl_xstrdup(path);
		s->base = 0;
		s->have = (k + 1 < f->n ? f->s[k + 1].start : f->size) - start;
	}
	cctl_os_sync_broadcast(f->sync);
	cctl_os_sync_unlock(f->sync);
}

int cctl__feed_rename(struct cctl_ctx *ctx, struct cctl__feed *f,
		      const char *from, const char *to)
{
	int ret;
	if (!f)
		return cctl_os_rename(ctx, from, to);
	cctl_os_sync_lock(f->sync);
	for (size_t k = 0; k < f->n; k++)
		if (!strcmp(f->s[k].path, from))
			span_close(&f->s[k]);
	if (!(ret = cctl_os_rename(ctx, from, to)))
		for (size_t k = 0; k < f->n; k++)
			if (!strcmp(f->s[k].path, from)) {
				free(f->s[k].path);
				f->s[k].path = cctl_xstrdup(to);
			}
	cctl_os_sync_unlock(f->sync);
	return ret;
}

void cctl__feed_end(struct cctl__feed *f, int ret)
{
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	f->ended = 1;
	f->ret = ret;
	if (ret)
		for (size_t k = 0; k < f->n; k++)
			span_close(&f->s[k]);
	cctl_os_sync_broadcast(f->sync);
	cctl_os_sync_unlock(f->sync);
}

uint64_t cctl__feed_size(const struct cctl__feed *f)
{
	return f->size;
}

void cctl__feed_want_tail(struct cctl__feed *f, uint64_t bytes)
{
	f->tail = bytes < f->size ? bytes : 0;
}

uint64_t cctl__feed_tail(const struct cctl__feed *f)
{
	return f ? f->tail : 0;
}

/* The span holding pos, with bytes there; else NULL. */
static struct span *ready(struct cctl__feed *f, uint64_t pos)
{
	for (size_t k = f->n; k-- > 0;)
		if (f->s[k].start <= pos)
			return pos < f->s[k].start + f->s[k].have ? &f->s[k] : NULL;
	return NULL;
}

/* Whether bytes from to to are all on the disk, in one span or several
 * (a download taken up again cuts the rest of each range into pieces). */
static int on_disk(struct cctl__feed *f, uint64_t from, uint64_t to)
{
	struct span *s;
	while (from < to && (s = ready(f, from)))
		from = s->start + s->have;
	return from >= to;
}

int cctl__feed_wait_end(struct cctl__feed *f, uint64_t need, uint64_t prefix)
{
	int got = 0;
	if (!need || need > f->size)
		return 0;
	if (prefix > f->size)
		prefix = f->size;
	cctl_os_sync_lock(f->sync);
	for (;;) {
		if (on_disk(f, f->size - need, f->size)) {
			got = 1;
			break;
		}
		if (f->restarted || f->ended || on_disk(f, 0, prefix))
			break;
		cctl_os_sync_wait(f->sync);
	}
	cctl_os_sync_unlock(f->sync);
	return got;
}

int cctl__feed_read(struct cctl_ctx *ctx, struct cctl__feed *f, uint64_t pos,
		    void *buf, size_t len, size_t *got)
{
	struct span *s;
	int ret = 0;
	*got = 0;
	if (pos >= f->size || !len)
		return 0;
	cctl_os_sync_lock(f->sync);
	while (!f->restarted && !(s = ready(f, pos)) && !f->ended)
		cctl_os_sync_wait(f->sync);
	if (f->restarted) {
		ret = cctl__error(ctx, CCTL_EMISMATCH,
				  "the download of the archive started again "
				  "after some of it had been read");
	} else if (!s) {
		/* a download that ended well has every byte in a span: one
		 * missing is a fault of the fetch, not a wait */
		ret = cctl__error(ctx, f->ret ? f->ret : CCTL_EIO,
				  "the download of the archive stopped before "
				  "byte %llu",
				  (unsigned long long)pos);
	} else {
		uint64_t left = s->start + s->have - pos;
		if (len > left)
			len = (size_t)left;
		if (s->fd < 0)
			ret = cctl_os_open_read(ctx, s->path, &s->fd);
		if (!ret)
			ret = cctl_os_pread(ctx, s->fd, s->path, buf, len,
					    pos - s->base, got);
		/* the download said the bytes were written: a short read is
		 * a file changed under both */
		if (!ret && *got != len)
			ret = cctl__error(ctx, CCTL_EMISMATCH,
					  "'%s' is shorter than what was "
					  "written to it",
					  s->path);
		if (!ret && pos + len > s->served)
			s->served = pos + len;
	}
	cctl_os_sync_unlock(f->sync);
	return ret;
}

void cctl__feed_reader_hashes(struct cctl__feed *f)
{
	f->hashes = 1;
}

int cctl__feed_hashed_by_reader(const struct cctl__feed *f)
{
	return f && f->hashes;
}

void cctl__feed_digest(struct cctl__feed *f, const char *hex)
{
	if (!f)
		return;
	cctl_os_sync_lock(f->sync);
	if (!f->told) {
		f->told = 1;
		snprintf(f->digest, sizeof(f->digest), "%s",
			 hex && strlen(hex) == 64 ? hex : "");
	}
	cctl_os_sync_broadcast(f->sync);
	cctl_os_sync_unlock(f->sync);
}

int cctl__feed_wait_digest(struct cctl__feed *f, char hex[65])
{
	int have;
	if (!f || !f->hashes)
		return 0;
	cctl_os_sync_lock(f->sync);
	while (!f->told)
		cctl_os_sync_wait(f->sync);
	have = f->digest[0] && !f->restarted;
	if (have)
		memcpy(hex, f->digest, 65);
	cctl_os_sync_unlock(f->sync);
	return have;
}

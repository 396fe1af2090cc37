/*
 * Reading cuDNN archives: the file read (and hashed) in order, and a
 * compressed tar decompressed once.  The scan reads a tar.xz (tar.gz,
 * tar.bz2) through a "raw" reader that undoes the compression (or
 * liblzma's decoder on several threads, xz.c); the scan writes each of
 * the tar's files as it goes (archive-unpack.c), so that the extraction
 * only moves them into place.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "archive-internal.h"
#include "feed.h"

/* Reads the next block at the file's position into r->buf, hashing what
 * comes in order; -1 on a read error (r->io_code says which). */
static int reader_next(struct cctl__reader *r, size_t *n)
{
	if ((r->io_code = r->feed ? cctl__feed_read(r->ctx, r->feed,
						    (uint64_t)r->pos, r->buf,
						    sizeof(r->buf), n)
				  : cctl_os_read(r->ctx, r->fd, r->name, r->buf,
						 sizeof(r->buf), n)))
		return -1;
	if (r->h && !r->follow && r->pos <= r->hashed && r->pos + (int64_t)*n > r->hashed) {
		int64_t skip = r->hashed - r->pos;
		cctl__hashq_update(r->q, r->h, r->buf + skip, *n - (size_t)skip);
		r->hashed = r->pos + (int64_t)*n;
	}
	r->pos += (int64_t)*n;
	return 0;
}

static int rd_read(void *ud, const void **out, size_t *n, int *err,
		   const char **why)
{
	struct cctl__reader *r = ud;
	if (reader_next(r, n)) {
		*err = EIO;
		*why = "read error";
		return -1;
	}
	*out = r->buf;
	return 0;
}

/* The xz decoder's input: the file, read and hashed in order. */
static int xz_fill(void *ud, const void **buf, size_t *len)
{
	struct cctl__reader *r = ud;
	if (reader_next(r, len))
		return -1;
	*buf = r->buf;
	return 0;
}

static int rd_seek(void *ud, int64_t off, int whence, int64_t *pos)
{
	struct cctl__reader *r = ud;
	if (r->feed) {
		int64_t size = (int64_t)cctl__feed_size(r->feed);
		int64_t at = whence == SEEK_SET ? off
			     : whence == SEEK_CUR ? r->pos + off : size + off;
		if (at < 0) {
			r->io_code = cctl__error(r->ctx, CCTL_EIO, "cannot seek "
								   "in '%s'",
						 r->name);
			return -1;
		}
		r->pos = *pos = at;
		return 0;
	}
	if ((r->io_code = cctl_os_seek(r->ctx, r->fd, r->name, off, whence, pos)))
		return -1;
	r->pos = *pos;
	return 0;
}

static int64_t rd_skip(void *ud, int64_t n)
{
	struct cctl__reader *r = ud;
	int64_t p;
	if (r->feed) {
		int64_t size = (int64_t)cctl__feed_size(r->feed);
		if (n > size - r->pos)
			n = size - r->pos > 0 ? size - r->pos : 0;
		r->pos += n;
		return n;
	}
	if (cctl_os_seek(NULL, r->fd, r->name, n, SEEK_CUR, &p))
		return 0; /* libarchive reads through instead */
	r->pos = p;
	return n;
}

/* A positional reader of the file or of its feed, for the extraction
 * workers (extract-parallel.c, archive-unzip.c). */
static int pr_read(void *ud, const void **out, size_t *n, int *err,
		   const char **why)
{
	struct cctl__preader *r = ud;
	r->io_code = r->feed ? cctl__feed_read(r->ctx, r->feed, r->pos, r->buf,
					       sizeof(r->buf), n)
			     : cctl_os_pread(r->ctx, r->fd, r->name, r->buf,
					     sizeof(r->buf), r->pos, n);
	if (r->io_code) {
		*err = EIO;
		*why = "read error";
		return -1;
	}
	r->pos += *n;
	*out = r->buf;
	return 0;
}

static int pr_seek(void *ud, int64_t off, int whence, int64_t *pos)
{
	struct cctl__preader *r = ud;
	int64_t base = whence == SEEK_SET   ? 0
		       : whence == SEEK_CUR ? (int64_t)r->pos
					    : (int64_t)r->size;
	if (base + off < 0)
		return -1;
	r->pos = (uint64_t)(base + off);
	*pos = (int64_t)r->pos;
	return 0;
}

static int64_t pr_skip(void *ud, int64_t n)
{
	struct cctl__preader *r = ud;
	if ((uint64_t)n > r->size - r->pos)
		n = (int64_t)(r->size - r->pos);
	r->pos += (uint64_t)n;
	return n;
}

int cctl__preader_open(struct cctl_ctx *ctx, const struct cctl_archive *a,
		       struct cctl__feed *feed, struct cctl__preader *r,
		       unsigned formats, struct cctl__ar **out)
{
	struct cctl__asrc src = { r, pr_read, pr_seek, pr_skip, &r->io_code };
	memset(r, 0, offsetof(struct cctl__preader, buf));
	r->fd = a->fd;
	r->feed = feed;
	r->name = a->file;
	r->ctx = ctx;
	r->size = feed ? cctl__feed_size(feed) : a->file_size;
	return cctl__ar_open(ctx, formats, &src, a->file, out);
}

/*
 * A zip read as it downloads, whose members the workers unpack: the scan
 * reads only the headers, and the whole file is hashed by a thread that
 * reads the feed from its start to its end as the bytes come, so that the
 * hash is there when the download ends.
 */
struct cctl__follow {
	struct cctl_os_thread *t;
	struct cctl__feed *feed;
	struct cctl_sha256 *h;
	struct cctl__resume *res; /* told the digest at its checkpoints */
	uint64_t done;
	int ret;
	struct cctl_ctx ctx;
	unsigned char buf[1 << 20];
};

static void follow_main(void *arg)
{
	struct cctl__follow *f = arg;
	size_t n, want;
	if (f->res)
		cctl__resume_at(f->res, f->done, f->h);
	for (;;) {
		want = sizeof(f->buf);
		if (f->res && cctl__resume_next(f->res, f->done) - f->done < want)
			want = (size_t)(cctl__resume_next(f->res, f->done) - f->done);
		if ((f->ret = cctl__feed_read(&f->ctx, f->feed, f->done, f->buf,
					      want, &n)) ||
		    !n)
			break;
		cctl_sha256_update(f->h, f->buf, n);
		f->done += n;
		if (f->res)
			cctl__resume_at(f->res, f->done, f->h);
	}
	cctl__resume_ended(f->res);
}

/* r's hash is made by a thread of its own, which tells res (when not
 * NULL) its digest at each checkpoint; nothing when none starts. */
static void follow_start(struct cctl__reader *r, struct cctl__resume *res)
{
	struct cctl__follow *f = cctl_xcalloc(1, sizeof(*f));
	cctl__hashq_drain(r->q); /* h holds what the reader read */
	f->feed = r->feed;
	f->h = r->h;
	f->res = res;
	f->done = (uint64_t)r->hashed; /* (what opening the reader read) */
	cctl_ctx_init(&f->ctx);
	if (!(f->t = cctl_os_thread_start(follow_main, f))) {
		free(f);
		cctl__resume_ended(res); /* no checkpoint comes */
		return;
	}
	r->follow = f;
}

/* Waits for the thread: r has hashed what it read; its failure, said in
 * ctx. */
static int follow_end(struct cctl_ctx *ctx, struct cctl__reader *r)
{
	struct cctl__follow *f = r->follow;
	int ret;
	if (!f)
		return 0;
	cctl_os_thread_join(f->t);
	r->follow = NULL;
	r->hashed = (int64_t)f->done;
	if ((ret = f->ret))
		cctl__error(ctx, ret, "%s", f->ctx.msg);
	free(f);
	return ret;
}

int cctl__reader_finish(struct cctl_ctx *ctx, struct cctl__reader *r,
			const char *file, char hex[65], uint64_t *size)
{
	size_t n;
	int ret;
	cctl__hashq_drain(r->q); /* what was queued comes first */
	if ((ret = follow_end(ctx, r)))
		return ret;
	ret = r->feed ? 0
		      : cctl_os_seek(ctx, r->fd, file, r->hashed, SEEK_SET, NULL);
	while (!ret &&
	       !(ret = r->feed ? cctl__feed_read(ctx, r->feed,
						 (uint64_t)r->hashed, r->buf,
						 sizeof(r->buf), &n)
			       : cctl_os_read(ctx, r->fd, file, r->buf,
					      sizeof(r->buf), &n)) &&
	       n) {
		cctl_sha256_update(r->h, r->buf, n);
		r->hashed += (int64_t)n;
	}
	cctl_sha256_final(r->h, hex);
	r->h = NULL;
	if (size)
		*size = (uint64_t)r->hashed;
	/* the fetch takes this hash of a download for its own (feed.h) */
	if (!ret && r->feed && (uint64_t)r->hashed == cctl__feed_size(r->feed))
		cctl__feed_digest(r->feed, hex);
	return ret;
}

void cctl__reader_drop(struct cctl__reader *r)
{
	char ignore[65];
	if (!r)
		return;
	follow_end(NULL, r);
	if (!r->h)
		return;
	cctl__feed_digest(r->feed, NULL); /* none comes */
	cctl_sha256_final(r->h, ignore);
	r->h = NULL;
}

/* r reads fd (a's file, for messages), or feed, from its start, hashing
 * it. */
static int reader_init(struct cctl_ctx *ctx, struct cctl__reader *r, int fd,
		       struct cctl__feed *feed, const char *file, int hash)
{
	memset(r, 0, offsetof(struct cctl__reader, buf));
	r->fd = fd;
	r->feed = feed;
	r->ctx = ctx;
	r->name = file;
	r->h = hash ? cctl_sha256_new() : NULL;
	return feed ? 0 : cctl_os_seek(ctx, fd, file, 0, SEEK_SET, NULL);
}

/* Bytes of a's file at off: its descriptor's, or its feed's. */
static int archive_pread(const struct cctl_archive *a, void *buf, size_t len,
			 uint64_t off, size_t *got)
{
	size_t n;
	int ret;
	if (!a->feed)
		return cctl_os_pread(NULL, a->fd, NULL, buf, len, off, got);
	/* the feed gives what is on the disk, which may be less */
	for (*got = 0; *got < len; *got += n)
		if ((ret = cctl__feed_read(NULL, a->feed, off + *got,
					   (char *)buf + *got, len - *got, &n)))
			return ret;
		else if (!n)
			break;
	return 0;
}

int cctl__reader_open(struct cctl_ctx *ctx, struct cctl_archive *a,
		      struct cctl__reader *r, enum cctl__read_kind how,
		      struct cctl__ar **out)
{
	static const unsigned formats[] = {
		[CCTL__READ_ARCHIVE] = CCTL__AR_FILTERS | CCTL__AR_ZIP | CCTL__AR_TAR,
		[CCTL__READ_RAW] = CCTL__AR_FILTERS | CCTL__AR_RAW,
	};
	struct cctl__asrc src = { r, rd_read, rd_seek, rd_skip, &r->io_code };
	int ret;
	*out = NULL;
	if ((ret = reader_init(ctx, r, a->fd, a->feed, a->file, 1)))
		return ret;
	return cctl__ar_open(ctx, formats[how], &src, a->file, out);
}

/* True when the whole file is compressed (xz, gzip, bzip2): a tar.xz and
 * the like, which the scan must decompress from end to end. */
static int compressed_whole(const struct cctl_archive *a)
{
	unsigned char m[6] = { 0 };
	size_t n = 0;
	if (archive_pread(a, m, sizeof(m), 0, &n))
		n = 0;
	if (n < 3)
		return 0;
	return cctl__xz_magic(m, n) || (m[0] == 0x1f && m[1] == 0x8b) ||
	       !memcmp(m, "BZh", 3);
}

/* True when the file begins as a zip does (a local file header). */
static int zip_start(const struct cctl_archive *a)
{
	unsigned char m[4] = { 0 };
	size_t n = 0;
	return !archive_pread(a, m, sizeof(m), 0, &n) && n == sizeof(m) &&
	       !memcmp(m, "PK\3\4", 4);
}

/*
 * Where more than one job may run, a tar.xz file of several xz blocks
 * whose index at its end says where they are has them decoded by xz.c's
 * workers (blocks mode, xz_blocks), the scan reading the file and the
 * decoded bytes on the caller's thread and the file's hash on another.
 * Otherwise a tar.xz (also one still downloading: the thread then waits on
 * the feed for each block, and a download always ends the feed, so the
 * thread's stop cannot wait forever) decodes on a thread of its own, a few
 * slots ahead of the scan, which parses, checks and unpacks the tar on the
 * caller's thread; the file's own hash goes to a third (the reader's hash
 * queue).  A file of one xz block (no thread can split one) is decoded by
 * that one thread alone, which is then all of the scan's time; blocks of
 * a download that liblzma's threads can take (THREAD_MEMLIMIT, xz.c) are
 * decoded by them, and the thread only hands their output on.  Measured
 * in docs/benchmarks.md.  The decoding thread reads the file through the
 * reader alone until it is stopped, and describes its failures in a
 * context of its own, copied to the caller's when the scan reaches them.
 */
#define AHEAD_SLOTS 8
#define AHEAD_SLOT (256u << 10)

struct ahead {
	struct cctl_os_sync *sync;
	struct cctl_os_thread *thread;
	struct cctl__xz *xz;
	struct cctl__reader *rd;
	struct cctl_ctx *caller; /* rd's context, given back at the stop */
	struct cctl_ctx ctx;     /* the decoding thread's */
	unsigned char *slots;    /* AHEAD_SLOTS of AHEAD_SLOT bytes */
	size_t len[AHEAD_SLOTS];
	size_t head, count;      /* slots[head] is the next to read */
	int held;                /* slots[head] is being read */
	int eof, failed, stop;
	const char *why;         /* of the failure; NULL: the reader's */
	int nomem;
	int64_t pos;             /* the file's bytes read for what is decoded */
};

static void ahead_run(void *arg)
{
	struct ahead *d = arg;
	cctl_os_sync_lock(d->sync);
	for (;;) {
		size_t slot;
		long n;
		while (d->count == AHEAD_SLOTS && !d->stop)
			cctl_os_sync_wait(d->sync);
		if (d->stop)
			break;
		/* the slot after the counted ones: the reader pops from the
		 * head, which leaves head + count as it is */
		slot = (d->head + d->count) % AHEAD_SLOTS;
		cctl_os_sync_unlock(d->sync);
		n = cctl__xz_read(d->xz, d->slots + slot * AHEAD_SLOT, AHEAD_SLOT);
		cctl_os_sync_lock(d->sync);
		if (n <= 0) {
			d->failed = n < 0;
			d->eof = !n;
			d->why = n < 0 ? cctl__xz_error(d->xz) : NULL;
			d->nomem = n < 0 && cctl__xz_nomem(d->xz);
			cctl_os_sync_broadcast(d->sync);
			break;
		}
		d->len[slot] = (size_t)n;
		d->count++;
		d->pos = d->rd->pos;
		cctl_os_sync_broadcast(d->sync);
	}
	cctl_os_sync_unlock(d->sync);
}

/* NULL where no thread can be had: the caller's thread decodes. */
static struct ahead *ahead_start(struct cctl__xz *xz, struct cctl__reader *rd)
{
	struct ahead *d = cctl_xcalloc(1, sizeof(*d));
	d->xz = xz;
	d->rd = rd;
	d->caller = rd->ctx;
	cctl_ctx_init(&d->ctx);
	d->slots = cctl_xmalloc((size_t)AHEAD_SLOTS * AHEAD_SLOT);
	if ((d->sync = cctl_os_sync_new())) {
		rd->ctx = &d->ctx;
		if (!(d->thread = cctl_os_thread_start(ahead_run, d)))
			rd->ctx = d->caller;
	}
	if (!d->thread) {
		cctl_os_sync_free(d->sync);
		free(d->slots);
		free(d);
		return NULL;
	}
	return d;
}

/* The next decoded bytes: their count, 0 at the end, -1 on a failure
 * (the reader's described in ctx).  *out stays valid until the next
 * call. */
static long ahead_read(struct ahead *d, struct cctl_ctx *ctx, const void **out,
		       int *err, const char **why)
{
	long n = 0;
	cctl_os_sync_lock(d->sync);
	if (d->held) {
		d->head = (d->head + 1) % AHEAD_SLOTS;
		d->count--;
		d->held = 0;
		cctl_os_sync_broadcast(d->sync);
	}
	while (!d->count && !d->eof && !d->failed)
		cctl_os_sync_wait(d->sync);
	if (d->count) {
		*out = d->slots + d->head * AHEAD_SLOT;
		n = (long)d->len[d->head];
		d->held = 1;
	} else if (d->failed) {
		n = -1;
	}
	cctl_os_sync_unlock(d->sync);
	if (n < 0) {
		*why = d->why;
		*err = d->nomem ? ENOMEM : EIO;
		if (!d->why && d->ctx.code) { /* the reader said what */
			cctl__error(ctx, d->ctx.code, "%s", d->ctx.msg);
			if (d->ctx.hint[0])
				cctl__hint(ctx, "%s", d->ctx.hint);
			if (ctx)
				ctx->oserr = d->ctx.oserr;
		}
	}
	return n;
}

/* Ends the decoding thread: the reader is the caller's again. */
static void ahead_stop(struct ahead *d)
{
	if (!d || !d->thread)
		return;
	cctl_os_sync_lock(d->sync);
	d->stop = 1;
	cctl_os_sync_broadcast(d->sync);
	cctl_os_sync_unlock(d->sync);
	cctl_os_thread_join(d->thread);
	d->thread = NULL;
	d->rd->ctx = d->caller;
}

static void ahead_free(struct ahead *d)
{
	if (!d)
		return;
	ahead_stop(d);
	cctl_os_sync_free(d->sync);
	free(d->slots);
	free(d);
}

/* The tar reader of an unpacking scan reads the decompressed stream of
 * the raw reader. */
struct cctl__untar {
	struct cctl__ar *raw;  /* libarchive's decompression (gzip, bzip2) */
	struct cctl__xz *xz;   /* or liblzma's, on several threads (xz) */
	struct ahead *ahead;   /* xz's decoding on a thread of its own */
	struct cctl_ctx *ctx;
	unsigned char buf[1 << 16];
};

static int untar_read(void *ud, const void **out, size_t *len, int *err,
		      const char **why)
{
	struct cctl__untar *s = ud;
	const void *at = s->buf;
	long long n;
	if (s->ahead) {
		if ((n = ahead_read(s->ahead, s->ctx, &at, err, why)) < 0)
			return -1;
	} else if (cctl__xz_blocks_threads(s->xz)) {
		if ((n = cctl__xz_next(s->xz, &at)) < 0) {
			*why = cctl__xz_error(s->xz);
			*err = cctl__xz_nomem(s->xz) ? ENOMEM : EIO;
			return -1;
		}
	} else if (s->xz) {
		if ((n = cctl__xz_read(s->xz, s->buf, sizeof(s->buf))) < 0) {
			*why = cctl__xz_error(s->xz);
			*err = cctl__xz_nomem(s->xz) ? ENOMEM : EIO;
			return -1;
		}
	} else if ((n = cctl__ar_read_quiet(s->raw, s->buf, sizeof(s->buf), err,
					    why)) < 0) {
		if (!*why)
			*why = "cannot decompress";
		return -1;
	}
	*out = at;
	*len = (size_t)n;
	return 0;
}

/* Threads for decoding an xz file: 0 when it is not one (libarchive
 * decodes it); 1 for a stream of one block, which no thread can split
 * (read from the index at the end of the file; a file whose index cannot
 * be read gets the threads, the decoder copes either way).  *ahead is set
 * when more than one job may run: the decoding runs on a thread of its
 * own (struct ahead). */
static unsigned xz_threads(struct cctl_ctx *ctx, const struct cctl_archive *a,
			   uint64_t size, int *ahead)
{
	unsigned char m[12], *index;
	size_t n = 0;
	uint64_t isize, blocks = 0;
	unsigned jobs;
	*ahead = 0;
	if (archive_pread(a, m, 6, 0, &n) || !cctl__xz_magic(m, n))
		return 0;
	jobs = a->jobs ? a->jobs : cctl_archive_default_jobs(ctx);
	*ahead = jobs > 1;
	/* (as it downloads, the index at the end is not there yet) */
	if (jobs == 1 || a->feed || size < 12 + 6 ||
	    cctl_os_pread(NULL, a->fd, NULL, m, 12, size - 12, &n) || n != 12 ||
	    !(isize = cctl__xz_index_size(m)) || isize > (1u << 20) ||
	    isize > size - 12 - 6)
		return jobs;
	index = cctl_xmalloc((size_t)isize);
	if (!cctl_os_pread(NULL, a->fd, NULL, index, (size_t)isize,
			   size - 12 - isize, &n) && n == isize)
		blocks = cctl__xz_block_count(index, (size_t)isize);
	free(index);
	return blocks == 1 ? 1 : jobs;
}

#define XZ_FEED_WAIT (8u << 20)

/* Our own decoding of a file's xz blocks on up to jobs threads (xz.c's
 * blocks mode), the file read through rd; NULL where it cannot be (a file
 * still downloading, whose index is not there yet; one block; blocks too
 * big): liblzma's decoder then. */
static struct cctl__xz *xz_blocks(const struct cctl_archive *a, unsigned jobs,
				  uint64_t size, struct cctl__reader *rd)
{
	unsigned char head[12 + 1024], foot[12], *tail;
	size_t n = 0, hn = 0;
	uint64_t isize, have = size;
	struct cctl__xz *x = NULL;
	if (jobs < 2 || size < 2 * 12 + 8)
		return NULL;
	/* as it downloads: only when its end, fetched as a range of its own,
	 * comes before the first sixteenth (at most 8 MiB) from byte 0 does
	 * (one connection: liblzma's decoder, which needs no index, starts
	 * at once); and only from those last bytes */
	if (a->feed && (!(have = cctl__feed_tail(a->feed)) ||
			!cctl__feed_wait_end(a->feed, have,
					     size / 16 < XZ_FEED_WAIT ? size / 16
								      : XZ_FEED_WAIT)))
		return NULL;
	if (archive_pread(a, foot, 12, size - 12, &n) || n != 12 ||
	    !(isize = cctl__xz_index_size(foot)) || isize > (1u << 20) ||
	    isize > size - 2 * 12 || isize + 12 > have ||
	    archive_pread(a, head, sizeof(head), 0, &hn))
		return NULL;
	tail = cctl_xmalloc((size_t)isize + 12);
	if (!archive_pread(a, tail, (size_t)isize + 12, size - 12 - isize, &n) &&
	    n == isize + 12)
		x = cctl__xz_blocks_new(jobs, head, hn, tail, n, size, xz_fill, rd);
	free(tail);
	return x;
}

/* Opens the tar inside a compressed file. */
static int open_untar(struct cctl_ctx *ctx, struct cctl_archive *a,
		      struct cctl__reader *rd, struct cctl__untar *sp,
		      unsigned xz_threads, int ahead, uint64_t size,
		      struct cctl__ar **out)
{
	struct cctl__asrc src = { sp, untar_read, NULL, NULL, &rd->io_code };
	struct cctl__aent ae;
	int ret;
	*out = NULL;
	sp->ctx = ctx;
	if (xz_threads) {
		/* liblzma's own decoder, on several threads, reads the file
		 * through rd (which hashes it) */
		if ((ret = reader_init(ctx, rd, a->fd, a->feed, a->file, 1)))
			return ret;
		/* the blocks on threads of ours, read on the caller's thread,
		 * the file's hash on another */
		if (xz_threads > 1 && (sp->xz = xz_blocks(a, xz_threads, size, rd))) {
			rd->q = cctl__hashq_new();
			return cctl__ar_open(ctx, CCTL__AR_TAR, &src, a->file, out);
		}
		if (!(sp->xz = cctl__xz_new(xz_threads, xz_fill, rd)))
			return cctl__error(ctx, CCTL_ENOMEM, "cannot start the xz "
							     "decoder: out of memory");
		/* decoding on a thread of its own; the file's hash on
		 * another */
		if (ahead) {
			rd->q = cctl__hashq_new(); /* before the thread uses rd */
			sp->ahead = ahead_start(sp->xz, rd);
		}
	} else {
		if ((ret = cctl__reader_open(ctx, a, rd, CCTL__READ_RAW, &sp->raw)))
			return ret;
		if ((ret = cctl__ar_next(ctx, sp->raw, &ae)) == CCTL__AR_END)
			return cctl__error(ctx, CCTL_EBADARCHIVE,
					   "cannot read '%s': no data", a->file);
		if (ret)
			return ret;
	}
	return cctl__ar_open(ctx, CCTL__AR_TAR, &src, a->file, out);
}

int cctl__scan_in_open(struct cctl_ctx *ctx, struct cctl_archive *a,
		       const char *unpack_dir, struct cctl__scan_in *s)
{
	struct cctl_os_stat st;
	unsigned threads;
	int ret, ahead;
	s->rd = cctl_xcalloc(1, sizeof(*s->rd));
	if (a->feed)
		s->file_size = cctl__feed_size(a->feed);
	else if (cctl_os_stat(ctx, a->file, &st) == 0)
		s->file_size = st.size;
	if (!unpack_dir || !compressed_whole(a)) {
		/* a zip read as it downloads is unpacked too: the feed never
		 * takes back a byte it gave (it stops the scan instead), so
		 * what a member was read as is what the fetch hashes, in
		 * whatever order the directory names the members; from a file,
		 * the extraction reads it again under the file's guard */
		unsigned jobs = a->jobs ? a->jobs : cctl_archive_default_jobs(ctx);
		int zip = unpack_dir && a->feed && zip_start(a);
		/* its members on workers, one at least (kept for a resume of
		 * the download), its hash on a thread of its own */
		if (unpack_dir && a->feed &&
		    (ret = cctl__unpack_begin(ctx, unpack_dir,
					      zip ? cctl__feed_part(a->feed) : NULL,
					      s->file_size, &s->up)))
			return ret;
		if (zip)
			s->uz = cctl__unzip_start(a, s->up, jobs);
		ret = cctl__reader_open(ctx, a, s->rd, CCTL__READ_ARCHIVE, &s->ar);
		if (!ret && s->uz)
			follow_start(s->rd, cctl__unpack_resume(s->up));
		s->progress = s->ar;
		return ret;
	}
	if ((ret = cctl__unpack_begin(ctx, unpack_dir, NULL, 0, &s->up)))
		return ret;
	s->sp = cctl_xcalloc(1, sizeof(*s->sp));
	threads = xz_threads(ctx, a, s->file_size, &ahead);
	ret = open_untar(ctx, a, s->rd, s->sp, threads, ahead, s->file_size, &s->ar);
	s->progress = s->sp->raw; /* NULL for xz: the reader's position */
	return ret;
}

int cctl__scan_in_close(struct cctl_archive *a, struct cctl__scan_in *s,
			int ret)
{
	struct cctl__untar *sp = s->sp;
	cctl__unzip_end(NULL, s->uz, a, ret ? ret : CCTL_EFAIL);
	s->uz = NULL;
	cctl__ar_free(s->ar);
	if (sp) {
		cctl__ar_free(sp->raw);
		ahead_free(sp->ahead);
		cctl__xz_free(sp->xz);
	}
	cctl__hashq_free(s->rd->q); /* what it holds is hashed first */
	s->rd->q = NULL;
	cctl__reader_drop(s->rd);
	free(s->rd);
	free(sp);
	/* the files it wrote are the extraction's, unless it failed */
	cctl__unpack_end(s->up, ret ? NULL : a);
	return ret;
}

void cctl__scan_in_reads_done(struct cctl__scan_in *s)
{
	if (s->sp)
		ahead_stop(s->sp->ahead);
}

uint64_t cctl__scan_in_pos(const struct cctl__scan_in *s)
{
	struct ahead *d = s->sp ? s->sp->ahead : NULL;
	int64_t pos;
	if (s->progress)
		return cctl__ar_consumed(s->progress);
	if (!d || !d->thread)
		return (uint64_t)s->rd->pos;
	cctl_os_sync_lock(d->sync);
	pos = d->pos;
	cctl_os_sync_unlock(d->sync);
	return (uint64_t)pos;
}

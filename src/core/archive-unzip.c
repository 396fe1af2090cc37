/*
 * A zip read as it downloads, its members unpacked by workers while the
 * bytes arrive.  The scan walks the headers in the archive's order (each
 * local header as soon as it is in) and hands each regular file to the
 * workers, then goes on to the next header without reading the member's
 * data.  A worker reads the feed through a libarchive reader of its own,
 * walks forward to the member, checks its header against the scan's, and
 * inflates it into the staging folder under the entry's index, as the
 * scan would (archive-unpack.c), waiting on the feed wherever the bytes
 * have not come yet.  The archive's own hash is the reader's, which reads
 * the feed in order on a thread of its own (archive-read.c).
 *
 * The workers never touch the scan's entries (the scan grows that array
 * as it reads): each member they are given is a copy of what they need,
 * and what they find is put into the entries by cctl__unzip_end, on the
 * scan's thread, once they have stopped.  The bytes they read are the
 * ones the scan read and the fetch hashed: the feed never takes back a
 * byte it gave (it fails every read instead, cctl__feed_restarted).
 */
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "archive-internal.h"
#include "entries.h"
#include "feed.h"

#define MAX_WORKERS 8 /* more would only wait on the same download */

/* A member handed to the workers. */
struct member {
	struct member *next;
	size_t idx;
	char *name;
	uint64_t size;
	unsigned mode;
	char sha256[65];
};

struct zworker {
	struct cctl__unzip *z;
	struct cctl_os_thread *t;
	struct cctl__aw *aw; /* made on the scan's thread: libarchive sets umask */
	struct cctl_ctx ctx;
	struct cctl__preader rd;
	struct cctl__ar *ar;
	size_t next; /* index of the entry the next header is */
	struct cctl_buf path;
};

struct cctl__unzip {
	const struct cctl_archive *a; /* its file's name (read only) */
	const char *file; /* the archive, for messages */
	struct cctl__feed *feed;
	struct cctl__unpack *u;
	struct cctl_os_sync *sync;
	struct member *head, **tail;
	struct member *pending; /* the first not taken yet */
	unsigned running, busy, n;
	int closed; /* no more members come */
	int stop;   /* a failure: no new work */
	struct cctl_ctx err; /* the first worker failure */
	struct zworker w[MAX_WORKERS];
};

/* Moves w's reader to the member's header (reopening it when it is past
 * it) and checks it against the scan's. */
static int walk_to(struct zworker *w, const struct member *m,
		   struct cctl__aent *ae)
{
	struct cctl__unzip *z = w->z;
	struct cctl_entry e;
	int ret;
	if (w->ar && w->next > m->idx) {
		cctl__ar_free(w->ar);
		w->ar = NULL;
	}
	if (!w->ar) {
		if ((ret = cctl__preader_open(&w->ctx, z->a, z->feed, &w->rd,
					      CCTL__AR_ZIP, &w->ar)))
			return ret;
		w->next = 0;
	}
	do {
		if ((ret = cctl__ar_next(&w->ctx, w->ar, ae)))
			return ret == CCTL__AR_END ? CCTL_EBADARCHIVE : ret;
	} while (w->next++ != m->idx);
	memset(&e, 0, sizeof(e));
	e.type = CCTL_ENTRY_FILE;
	e.size = m->size;
	if (!ae->name || strcmp(ae->name, m->name) || !cctl__entry_matches(ae, &e))
		return cctl__error(&w->ctx, CCTL_EBADARCHIVE,
				   "'%s' changed while it was being read; "
				   "nothing was installed",
				   z->file);
	return 0;
}

/* One member inflated into the staging folder. */
static int unpack_one(struct zworker *w, struct member *m)
{
	struct cctl__resume *res = cctl__unpack_resume(w->z->u);
	struct cctl__aent ae;
	uint64_t size;
	int ret;
	cctl__unpack_path(w->z->u, m->idx, &w->path);
	/* as the try before of this download wrote it, or inflated */
	if (res && cctl__resume_take(res, w->path.buf, m->idx, m->name, m->size,
				     m->sha256))
		return 0;
	if ((ret = walk_to(w, m, &ae)))
		return ret;
	if ((ret = cctl__unpack_write(&w->ctx, w->z->u, w->aw, w->ar, w->z->file,
				      w->path.buf, m->mode, 0, NULL, m->sha256,
				      &size)))
		return ret;
	if (size != m->size)
		return cctl__refuse(&w->ctx, w->z->file, m->name,
				    "holds another number of bytes than its "
				    "header says");
	if (res) /* (its bytes all lie before what the reader has read) */
		cctl__resume_wrote(res, m->idx, m->name, size, w->rd.pos,
				   m->sha256);
	return 0;
}

static void worker_main(void *arg)
{
	struct zworker *w = arg;
	struct cctl__unzip *z = w->z;
	void *loc = cctl_os_utf8_locale_enter();
	cctl_os_sync_lock(z->sync);
	for (;;) {
		struct member *m;
		int ret;
		while (!z->stop && !z->pending && !z->closed)
			cctl_os_sync_wait(z->sync);
		if (z->stop || !z->pending)
			break;
		m = z->pending;
		z->pending = m->next;
		z->busy++;
		cctl_os_sync_unlock(z->sync);
		ret = unpack_one(w, m);
		cctl_os_sync_lock(z->sync);
		z->busy--;
		if (ret && !z->stop) {
			z->stop = ret;
			z->err = w->ctx;
		}
		cctl_os_sync_broadcast(z->sync);
	}
	z->running--;
	cctl_os_sync_broadcast(z->sync);
	cctl_os_sync_unlock(z->sync);
	cctl_os_utf8_locale_leave(loc);
}

struct cctl__unzip *cctl__unzip_start(struct cctl_archive *a,
				      struct cctl__unpack *u, unsigned jobs)
{
	struct cctl__unzip *z;
	/* --jobs 1 too: one worker, so that what it unpacked is kept for a
	 * resume (the scan only walks the headers) */
	if (!jobs || !a->feed)
		return NULL;
	z = cctl_xcalloc(1, sizeof(*z));
	if (!(z->sync = cctl_os_sync_new())) {
		free(z);
		return NULL;
	}
	z->a = a;
	z->file = a->file;
	z->feed = a->feed;
	z->u = u;
	z->tail = &z->head;
	z->n = jobs < MAX_WORKERS ? jobs : MAX_WORKERS;
	for (unsigned i = 0; i < z->n; i++) {
		struct zworker *w = &z->w[i];
		w->z = z;
		w->aw = cctl__aw_new();
		cctl_ctx_init(&w->ctx);
		w->path = (struct cctl_buf)CCTL_BUF_INIT;
	}
	cctl_os_sync_lock(z->sync);
	for (unsigned i = 0; i < z->n; i++)
		if ((z->w[i].t = cctl_os_thread_start(worker_main, &z->w[i])))
			z->running++;
	cctl_os_sync_unlock(z->sync);
	if (!z->running) {
		cctl__unzip_end(NULL, z, a, CCTL_EFAIL);
		return NULL;
	}
	return z;
}

/* The first worker failure, said in ctx; 0 when none. */
static int failure(struct cctl_ctx *ctx, struct cctl__unzip *z)
{
	int ret = z->stop;
	if (ret && z->err.code) {
		ret = z->err.code;
		cctl__error(ctx, ret, "%s", z->err.msg);
		if (z->err.hint[0])
			cctl__hint(ctx, "%s", z->err.hint);
		if (ctx)
			ctx->oserr = z->err.oserr;
	}
	return ret;
}

/* Waits (with the lock held) until the workers have done all they were
 * given, or one failed, or (all) they have stopped; an interrupt stops
 * them. */
static int drain(struct cctl_ctx *ctx, struct cctl__unzip *z, int all)
{
	int ret = 0;
	while (all ? z->running > 0
		   : !z->stop && z->running && (z->pending || z->busy)) {
		cctl_os_sync_wait(z->sync);
		if (!z->stop && !ret && (ret = cctl__interrupted(ctx))) {
			z->stop = ret;
			cctl_os_sync_broadcast(z->sync);
		}
	}
	return ret ? ret : failure(ctx, z);
}

int cctl__unzip_add(struct cctl_ctx *ctx, struct cctl__unzip *z,
		    struct cctl_archive *a, size_t idx, int *taken)
{
	const struct cctl_entry *e = &a->v[idx];
	struct member *m;
	int ret = 0;
	*taken = 0;
	cctl_os_sync_lock(z->sync);
	if ((ret = failure(ctx, z))) {
		cctl_os_sync_unlock(z->sync);
		return ret;
	}
	if (!cctl__unpack_reserve(z->u, e->size)) {
		/* no room: what was written goes once no worker writes */
		ret = drain(ctx, z, 0);
		cctl_os_sync_unlock(z->sync);
		if (!ret)
			cctl__unpack_give_up(z->u);
		return ret;
	}
	m = cctl_xcalloc(1, sizeof(*m));
	m->idx = idx;
	m->name = cctl_xstrdup(e->name);
	m->size = e->size;
	m->mode = e->mode;
	*z->tail = m;
	z->tail = &m->next;
	if (!z->pending)
		z->pending = m;
	*taken = 1;
	cctl_os_sync_broadcast(z->sync);
	cctl_os_sync_unlock(z->sync);
	return 0;
}

int cctl__unzip_end(struct cctl_ctx *ctx, struct cctl__unzip *z,
		    struct cctl_archive *a, int ret)
{
	struct member *m, *next;
	if (!z)
		return ret;
	cctl_os_sync_lock(z->sync);
	z->closed = 1;
	if (ret || !ctx)
		z->stop = ret ? ret : CCTL_EFAIL;
	cctl_os_sync_broadcast(z->sync);
	if (!ret && ctx && !(ret = drain(ctx, z, 0)))
		ret = drain(ctx, z, 1);
	else
		drain(NULL, z, 1);
	cctl_os_sync_unlock(z->sync);
	for (unsigned i = 0; i < z->n; i++) {
		struct zworker *w = &z->w[i];
		if (w->t)
			cctl_os_thread_join(w->t);
		cctl__ar_free(w->ar);
		cctl__aw_free(w->aw);
		cctl_buf_release(&w->path);
	}
	for (m = z->head; m; m = next) {
		next = m->next;
		if (!ret)
			memcpy(a->v[m->idx].sha256, m->sha256, sizeof(m->sha256));
		free(m->name);
		free(m);
	}
	cctl_os_sync_free(z->sync);
	free(z);
	return ret;
}

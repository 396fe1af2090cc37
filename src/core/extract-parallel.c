/*
 * A zip is extracted by several workers:
 * the directories first on this thread, then the regular files, handed
 * out largest first, each worker with its own reader over the same file
 * (pread, its own position) and its own writer, hashing what it writes;
 * then the links, which need their targets.  The archive is hashed again
 * on a thread of its own when nothing vouches for it.  Every reader checks
 * each header it passes against the scan, as the extraction on one thread
 * (extract.c) does.
 */
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "archive-internal.h"

#define PROGRESS_STEP (4u << 20) /* workers wake the main thread this often */

/* One reader's walk through the entries, checking each against the scan. */
struct walk {
	struct cctl__preader rd;
	struct cctl__ar *ar;
	size_t next; /* index of the entry the next header is */
};

/* Moves w to entry idx (reopening when it is behind) and checks it. */
static int walk_to(struct cctl_ctx *ctx, const struct cctl_archive *a,
		   struct walk *w, size_t idx, struct cctl__aent *ae)
{
	int ret;
	if (w->ar && w->next > idx) {
		cctl__ar_free(w->ar);
		w->ar = NULL;
	}
	if (!w->ar) {
		/* the scan read it: unreadable now is another file */
		if ((ret = cctl__preader_open(ctx, a, NULL, &w->rd,
					      CCTL__AR_ZIP | CCTL__AR_TAR, &w->ar)))
			return ret == CCTL_EBADARCHIVE
				       ? cctl__archive_changed(ctx, a, NULL)
				       : ret;
		w->next = 0;
	}
	for (;;) {
		if ((ret = cctl__ar_next(ctx, w->ar, ae)))
			return ret == CCTL__AR_END ? cctl__archive_changed(ctx, a, NULL)
						     : ret;
		if (w->next >= a->n || !ae->name ||
		    strcmp(ae->name, a->v[w->next].name))
			return cctl__archive_changed(ctx, a, NULL);
		if (w->next++ == idx)
			break;
	}
	return cctl__entry_matches(ae, &a->v[idx])
		       ? 0
		       : cctl__archive_changed(ctx, a, a->v[idx].path);
}

struct pjob {
	struct cctl_archive *a;
	const char *dest;
	struct cctl_os_sync *sync;
	size_t *order; /* indices of the regular files, largest first */
	size_t norder, taken;
	unsigned running;
	uint64_t done;
	int stop;              /* a failure or an interrupt: no new work */
	struct cctl_ctx err;   /* the first worker failure */
};

struct pworker {
	struct pjob *job;
	struct cctl__aw *aw; /* made on the main thread: libarchive sets umask */
	struct walk walk;
	struct cctl_ctx ctx;
	struct cctl_buf path, link;
};

/* Adds n bytes to the job's progress; 1 when the work is to stop. */
static int worker_progress(struct pjob *j, uint64_t n)
{
	int stop;
	cctl_os_sync_lock(j->sync);
	if ((j->done + n) / PROGRESS_STEP != j->done / PROGRESS_STEP)
		cctl_os_sync_broadcast(j->sync);
	j->done += n;
	stop = j->stop;
	cctl_os_sync_unlock(j->sync);
	return stop;
}

/* One regular file written by cudnnctl, where the OS layer has a size
 * hint worth giving (cctl_os_prealloc): created new with its size
 * reserved, written in order, its time set as libarchive's writer would. */
static int write_own(struct pworker *w, struct cctl_entry *e,
		     const struct cctl__aent *ae)
{
	struct pjob *j = w->job;
	struct cctl_archive *a = j->a;
	struct cctl_sha256 *h;
	const void *block;
	size_t size;
	int64_t offset;
	uint64_t written = 0;
	int r, fd, ret;

	/* (libarchive's writer makes missing parents too) */
	if ((ret = cctl__make_parent(&w->ctx, w->path.buf)) ||
	    (ret = cctl_os_create_sized(&w->ctx, w->path.buf, e->size, &fd)))
		return ret;
	h = cctl_sha256_new();
	while (!(r = cctl__ar_block(&w->ctx, w->walk.ar, &block, &size, &offset))) {
		/* a zip member's blocks come in order, without holes */
		if (offset != (int64_t)written) {
			ret = cctl__archive_changed(&w->ctx, a, e->path);
			break;
		}
		cctl_sha256_update(h, block, size);
		if ((ret = cctl_os_write_all(&w->ctx, fd, w->path.buf, block, size)))
			break;
		written += size;
		if (worker_progress(j, size)) {
			ret = CCTL_EINTERRUPTED; /* the main thread says why */
			break;
		}
	}
	cctl_sha256_final(h, e->sha256);
	if (!ret && r < 0)
		ret = r;
	if (!ret && written != e->size)
		ret = cctl__archive_changed(&w->ctx, a, e->path);
	if (ret) {
		cctl_os_close(fd);
		return ret;
	}
	return cctl_os_close_timed(&w->ctx, fd, w->path.buf, ae->mtime,
				   ae->mtime_nsec);
}

/* Extracts one regular file, hashing what it writes. */
static int extract_file(struct pworker *w, size_t idx)
{
	struct pjob *j = w->job;
	struct cctl_archive *a = j->a;
	struct cctl_entry *e = &a->v[idx];
	struct cctl__aent ae;
	struct cctl_sha256 *h;
	const void *block;
	size_t size;
	int64_t offset;
	uint64_t scanned = e->size, written = 0;
	int perm, r, ret;

	if ((ret = walk_to(&w->ctx, a, &w->walk, idx, &ae)))
		return ret;
	perm = cctl__entry_place(e, j->dest, &w->path, &w->link);
	cctl_os_kill_point();
	if (cctl_os_prealloc())
		return write_own(w, e, &ae);
	if ((ret = cctl__aw_header(&w->ctx, w->aw, w->walk.ar, w->path.buf, NULL,
				   perm)))
		return ret;
	h = cctl_sha256_new();
	while (!(r = cctl__ar_block(&w->ctx, w->walk.ar, &block, &size, &offset))) {
		cctl_sha256_update(h, block, size);
		if ((ret = cctl__aw_data(&w->ctx, w->aw, block, size, offset,
					 w->path.buf)))
			break;
		written += size;
		if (worker_progress(j, size)) {
			ret = CCTL_EINTERRUPTED; /* the main thread says why */
			break;
		}
	}
	cctl_sha256_final(h, e->sha256);
	if (ret)
		return ret;
	if (r < 0)
		return r;
	if (written != scanned)
		return cctl__archive_changed(&w->ctx, a, e->path);
	return cctl__aw_finish(&w->ctx, w->aw, w->path.buf);
}

static void worker_main(void *arg)
{
	struct pworker *w = arg;
	struct pjob *j = w->job;
	void *loc = cctl_os_utf8_locale_enter();
	for (;;) {
		size_t idx;
		int ret;
		cctl_os_sync_lock(j->sync);
		if (j->stop || j->taken == j->norder) {
			cctl_os_sync_unlock(j->sync);
			break;
		}
		idx = j->order[j->taken++];
		cctl_os_sync_unlock(j->sync);
		if ((ret = extract_file(w, idx))) {
			cctl_os_sync_lock(j->sync);
			if (!j->stop) {
				j->stop = ret;
				j->err = w->ctx;
			}
			cctl_os_sync_unlock(j->sync);
			break;
		}
	}
	cctl_os_sync_lock(j->sync);
	j->running--;
	cctl_os_sync_broadcast(j->sync);
	cctl_os_sync_unlock(j->sync);
	cctl_os_utf8_locale_leave(loc);
}

static int cmp_size_desc(const void *x, const void *y, void *ud)
{
	const struct cctl_archive *a = ud;
	uint64_t sx = a->v[*(const size_t *)x].size, sy = a->v[*(const size_t *)y].size;
	return sx < sy ? 1 : sx > sy ? -1 : (*(const size_t *)x > *(const size_t *)y) -
						   (*(const size_t *)x < *(const size_t *)y);
}

/* Insertion sort with a context (qsort_r is not portable); a few hundred
 * entries. */
static void sort_order(size_t *v, size_t n, const struct cctl_archive *a)
{
	for (size_t i = 1; i < n; i++) {
		size_t x = v[i], k = i;
		while (k && cmp_size_desc(&v[k - 1], &x, (void *)a) > 0) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = x;
	}
}

/* Directories (first) or links (last) on this thread, in archive order. */
static int extract_serial(struct cctl_ctx *ctx, struct cctl_archive *a,
			  const char *dest, struct cctl__aw *aw, int links)
{
	struct walk w;
	struct cctl__aent ae;
	struct cctl_buf path = CCTL_BUF_INIT, link = CCTL_BUF_INIT;
	int ret = 0;
	memset(&w, 0, sizeof(w));
	for (size_t i = 0; i < a->n && !ret; i++) {
		const struct cctl_entry *e = &a->v[i];
		int perm, mine = links ? e->type == CCTL_ENTRY_SYMLINK ||
						 e->type == CCTL_ENTRY_HARDLINK
				       : e->type == CCTL_ENTRY_DIR;
		if (!mine || !*e->path)
			continue;
		if ((ret = cctl__interrupt(ctx)) || (ret = walk_to(ctx, a, &w, i, &ae)))
			break;
		perm = cctl__entry_place(e, dest, &path, &link);
		cctl_os_kill_point();
		if (!(ret = cctl__aw_header(ctx, aw, w.ar, path.buf,
					    e->type == CCTL_ENTRY_HARDLINK ? link.buf
									   : NULL,
					    perm)))
			ret = cctl__aw_finish(ctx, aw, path.buf);
	}
	cctl__ar_free(w.ar);
	cctl_buf_release(&path);
	cctl_buf_release(&link);
	return ret;
}

/* Waits for the workers, reporting progress and passing on an interrupt. */
static int wait_workers(struct cctl_ctx *ctx, struct pjob *j)
{
	int ret = 0, stopped;
	/* said when it begins and when it ends, however fast the workers
	 * are: workers done before this thread got here gave no event at
	 * all, and CI mode showed no extract line (a flaky test) */
	cctl__progress(ctx, CCTL_PHASE_EXTRACT, 0, j->a->total_size);
	cctl_os_sync_lock(j->sync);
	while (j->running) {
		uint64_t done;
		cctl_os_sync_wait(j->sync);
		done = j->done;
		cctl_os_sync_unlock(j->sync);
		cctl__progress(ctx, CCTL_PHASE_EXTRACT, done, j->a->total_size);
		if (!ret && (ret = cctl__interrupt(ctx))) {
			cctl_os_sync_lock(j->sync);
			if (!j->stop)
				j->stop = ret;
			cctl_os_sync_unlock(j->sync);
		}
		cctl_os_sync_lock(j->sync);
	}
	stopped = j->stop;
	cctl_os_sync_unlock(j->sync);
	if (!ret && !stopped)
		cctl__progress(ctx, CCTL_PHASE_EXTRACT, j->a->total_size,
			       j->a->total_size);
	return ret;
}

/* The archive hashed again, on its own thread while the workers run,
 * when nothing guards it. */
struct rehash {
	const struct cctl_archive *a;
	char hex[65];
	uint64_t size;
	int ret;
	struct cctl_ctx ctx;
	unsigned char buf[1 << 16];
};

static void rehash_main(void *arg)
{
	struct rehash *rh = arg;
	struct cctl_sha256 *h = cctl_sha256_new();
	size_t n;
	rh->size = 0;
	while (!(rh->ret = cctl_os_pread(&rh->ctx, rh->a->fd, rh->a->file, rh->buf,
					 sizeof(rh->buf), rh->size, &n)) && n) {
		cctl_sha256_update(h, rh->buf, n);
		rh->size += n;
	}
	cctl_sha256_final(h, rh->hex);
}

/* The regular files, by the workers (or this thread when none starts). */
static int run_workers(struct cctl_ctx *ctx, struct pjob *j,
		       struct pworker *w, unsigned jobs)
{
	struct cctl_os_thread **t = cctl_xcalloc(jobs, sizeof(*t));
	int ret;
	for (unsigned i = 0; i < jobs; i++)
		w[i].aw = cctl__aw_new();
	cctl_os_sync_lock(j->sync);
	for (unsigned i = 0; i < jobs; i++)
		if ((t[i] = cctl_os_thread_start(worker_main, &w[i])))
			j->running++;
	cctl_os_sync_unlock(j->sync);
	if (!j->running) { /* no thread at all: this one does the work */
		j->running = 1;
		worker_main(&w[0]);
	}
	ret = wait_workers(ctx, j);
	for (unsigned i = 0; i < jobs; i++)
		if (t[i])
			cctl_os_thread_join(t[i]);
	free(t);
	if (!ret && j->stop) {
		/* a worker's failure, as it described it */
		ret = j->err.code ? j->err.code : j->stop;
		cctl__error(ctx, ret, "%s", j->err.msg);
		if (j->err.hint[0])
			cctl__hint(ctx, "%s", j->err.hint);
		ctx->oserr = j->err.oserr;
	}
	return ret;
}

/* The files, with the archive hashed again beside them when nothing
 * vouches for it; then the links; then the archive's hash. */
static int extract_files(struct cctl_ctx *ctx, struct cctl_archive *a,
			 const char *dest, struct pjob *j, struct pworker *w,
			 unsigned jobs, struct cctl__aw *aw)
{
	struct rehash *rh = NULL;
	struct cctl_os_thread *ht = NULL;
	int ret;
	if ((!a->guard || a->rehash) && a->copy_fd < 0) {
		/* else the scan's hash stands, or the broken guard says */
		rh = cctl_xcalloc(1, sizeof(*rh));
		rh->a = a;
		ht = cctl_os_thread_start(rehash_main, rh);
	}
	ret = run_workers(ctx, j, w, jobs);
	if (ht)
		cctl_os_thread_join(ht);
	else if (rh)
		rehash_main(rh); /* no thread to spare */
	if (!ret)
		ret = extract_serial(ctx, a, dest, aw, 1);
	if (!ret && !rh)
		cctl__extracted_hash(a);
	else if (!ret && a->rehash && !cctl_archive_trusted(a))
		cctl__extracted_hash(a); /* the guard broke: not proven */
	else if (!ret && (ret = rh->ret))
		cctl__error(ctx, rh->ret, "%s", rh->ctx.msg);
	else if (!ret)
		memcpy(a->extract_sha256, rh->hex, sizeof(rh->hex));
	free(rh);
	return ret;
}

int cctl__extract_parallel(struct cctl_ctx *ctx, struct cctl_archive *a,
			   const char *dest, unsigned jobs)
{
	struct pjob j;
	struct pworker *w;
	struct cctl__aw *aw = cctl__aw_new();
	int ret;

	memset(&j, 0, sizeof(j));
	j.a = a;
	j.dest = dest;
	j.order = cctl_xcalloc(a->n + 1, sizeof(size_t));
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].type == CCTL_ENTRY_FILE)
			j.order[j.norder++] = i;
	sort_order(j.order, j.norder, a);
	if (jobs > j.norder)
		jobs = j.norder ? (unsigned)j.norder : 1;
	w = cctl_xcalloc(jobs, sizeof(*w));
	for (unsigned i = 0; i < jobs; i++) {
		w[i].job = &j;
		w[i].path = (struct cctl_buf)CCTL_BUF_INIT;
		w[i].link = (struct cctl_buf)CCTL_BUF_INIT;
	}
	if (!(ret = extract_serial(ctx, a, dest, aw, 0))) {
		if (!(j.sync = cctl_os_sync_new()))
			ret = cctl__error(ctx, CCTL_EFAIL,
					  "cannot start the extraction threads");
		else
			ret = extract_files(ctx, a, dest, &j, w, jobs, aw);
	}
	for (unsigned i = 0; i < jobs; i++) {
		cctl__aw_free(w[i].aw);
		cctl__ar_free(w[i].walk.ar);
		cctl_buf_release(&w[i].path);
		cctl_buf_release(&w[i].link);
	}
	/* last: it sets the directories' times */
	cctl__aw_free(aw);
	if (j.sync)
		cctl_os_sync_free(j.sync);
	free(w);
	free(j.order);
	return ret;
}

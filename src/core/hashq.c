/*
 * Hashing on a second thread.  The extraction inflates and writes while
 * this thread hashes what it read and what it wrote: SHA-256 was about a
 * third of the CPU time of a zip install on one thread.
 *
 * Blocks are copied into a ring of SLOTS buffers and hashed in the order
 * they were given; a "final" job finishes a hash into its hex buffer.  The
 * producer waits only for a free slot, the hashing thread only for a job,
 * so neither can wait for the other forever.  Where no thread can be
 * started, or q is NULL, everything is hashed at once in the caller's
 * thread.
 */
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

#define SLOTS 8
#define SLOT_SIZE (1 << 16)

struct job {
	struct cctl_sha256 *h;
	char *hex; /* non-NULL: finish h into it */
	size_t len;
	unsigned char data[SLOT_SIZE];
};

struct cctl__hashq {
	struct cctl_os_sync *sync;
	struct cctl_os_thread *thread;
	struct job *jobs;
	size_t head, count; /* jobs[head] is the next to hash */
	int stop;
};

static void run_job(struct job *j)
{
	if (j->hex)
		cctl_sha256_final(j->h, j->hex);
	else
		cctl_sha256_update(j->h, j->data, j->len);
}

static void worker(void *arg)
{
	struct cctl__hashq *q = arg;
	cctl_os_sync_lock(q->sync);
	for (;;) {
		while (!q->count && !q->stop)
			cctl_os_sync_wait(q->sync);
		if (!q->count)
			break; /* stopped, and nothing left */
		/* jobs[head] stays counted (so not reused) while it runs */
		cctl_os_sync_unlock(q->sync);
		run_job(&q->jobs[q->head]);
		cctl_os_sync_lock(q->sync);
		q->head = (q->head + 1) % SLOTS;
		q->count--;
		cctl_os_sync_broadcast(q->sync);
	}
	cctl_os_sync_unlock(q->sync);
}

struct cctl__hashq *cctl__hashq_new(void)
{
	struct cctl__hashq *q = cctl_xcalloc(1, sizeof(*q));
	q->sync = cctl_os_sync_new();
	if (q->sync) {
		q->jobs = cctl_xmalloc(SLOTS * sizeof(*q->jobs));
		q->thread = cctl_os_thread_start(worker, q);
	}
	if (!q->thread) {
		cctl_os_sync_free(q->sync);
		free(q->jobs);
		q->sync = NULL;
		q->jobs = NULL;
	}
	return q;
}

/* A free slot, waited for; the caller fills it, then queue() counts it. */
static struct job *slot(struct cctl__hashq *q)
{
	struct job *j;
	cctl_os_sync_lock(q->sync);
	while (q->count == SLOTS)
		cctl_os_sync_wait(q->sync);
	/* not the one the worker may be running: count < SLOTS */
	j = &q->jobs[(q->head + q->count) % SLOTS];
	cctl_os_sync_unlock(q->sync);
	return j;
}

static void queue(struct cctl__hashq *q)
{
	cctl_os_sync_lock(q->sync);
	q->count++;
	cctl_os_sync_broadcast(q->sync);
	cctl_os_sync_unlock(q->sync);
}

void cctl__hashq_update(struct cctl__hashq *q, struct cctl_sha256 *h,
			const void *data, size_t len)
{
	const unsigned char *p = data;
	if (!q || !q->thread) {
		cctl_sha256_update(h, data, len);
		return;
	}
	while (len) {
		struct job *j = slot(q);
		j->h = h;
		j->hex = NULL;
		j->len = len < SLOT_SIZE ? len : SLOT_SIZE;
		memcpy(j->data, p, j->len);
		p += j->len;
		len -= j->len;
		queue(q);
	}
}

void cctl__hashq_final(struct cctl__hashq *q, struct cctl_sha256 *h,
		       char hex[65])
{
	struct job *j;
	if (!q || !q->thread) {
		cctl_sha256_final(h, hex);
		return;
	}
	j = slot(q);
	j->h = h;
	j->hex = hex;
	j->len = 0;
	queue(q);
}

void cctl__hashq_drain(struct cctl__hashq *q)
{
	if (!q || !q->thread)
		return;
	cctl_os_sync_lock(q->sync);
	while (q->count)
		cctl_os_sync_wait(q->sync);
	cctl_os_sync_unlock(q->sync);
}

void cctl__hashq_free(struct cctl__hashq *q)
{
	if (!q)
		return;
	if (q->thread) {
		cctl_os_sync_lock(q->sync);
		q->stop = 1;
		cctl_os_sync_broadcast(q->sync);
		cctl_os_sync_unlock(q->sync);
		cctl_os_thread_join(q->thread); /* after the last job */
		cctl_os_sync_free(q->sync);
		free(q->jobs);
	}
	free(q);
}

/*
 * The members of a zip unpacked as it downloads, kept for the next try
 * when the download stops where it can be resumed (a kill, a power cut, a
 * network that gives up: NAME.part stays in the cache).  Their folder is
 * versions/.resume-<the first 16 hex digits of the SHA-256 of the .part's
 * path> instead of a .staging- one, with a journal of what is in it:
 *
 *   cudnnctl-resume 1 <step> <size>   the archive's size, the checkpoints'
 *   part <path>                       the .part it belongs to
 *   h <k> <sha256>                    the SHA-256 of the archive's first
 *                                     k * step bytes
 *   m <idx> <size> <end> <sha256> <name>
 *                                     entry idx, written whole from bytes
 *                                     that all lie before offset end
 *
 * The thread that hashes the archive in order (archive-read.c) writes an h
 * line at each checkpoint, a worker an m line once its file is closed.
 * The next try takes entry idx from the folder instead of inflating it
 * again only when the journal names it with the same name and size as the
 * scan reads now, its own hash of the archive at the first checkpoint at
 * or past end is the one the journal has (the bytes the member came from
 * are the bytes this try verifies), and the file hashes as its m line says
 * (one torn by a power cut, or changed, does not).  Anything else is
 * inflated again.  The journal is written anew by each try, with the
 * members it kept, so that it never mixes two tries' checkpoints.
 *
 * The folder lives as long as its .part: a sweep (store.c) removes one
 * whose .part is gone, and acquire.c removes it when a download ends
 * without one (verified, refused, interrupted) or starts again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "archive-internal.h"
#include "internal.h"

#define JOURNAL "journal"
#define MAGIC "cudnnctl-resume 1 "
#define MAX_JOURNAL (8u << 20)
#define CHECKPOINTS 128 /* about: every size/128 bytes, at least 64 KiB */

struct kept {
	int have;
	uint64_t size, end;
	char sha256[65];
	char *name;
};

struct cctl__resume {
	char *dir, *journal;
	int fd; /* the journal, appended to; -1 once a write failed */
	uint64_t step, size;
	size_t nk; /* checkpoints: k * step for k in 1..nk, each < size */
	struct cctl_os_sync *sync;
	/* the try before's */
	struct kept *old;
	size_t nold;
	char (*was)[65]; /* [k]: its digest at checkpoint k, "" when none */
	/* this try's */
	size_t reached;  /* checkpoints the hash has passed */
	char *agree;     /* [k]: 1 when this try's digest is the same */
	int ended;       /* the hash stopped: no more checkpoints */
	uint64_t kept_files, kept_bytes;
};

char *cctl__resume_leaf(const char *part)
{
	struct cctl_sha256 *h = cctl_sha256_new();
	char hex[65];
	cctl_sha256_update(h, part, strlen(part));
	cctl_sha256_final(h, hex);
	hex[16] = '\0';
	return cctl_xstrfmt(".resume-%s", hex);
}

/* A decimal number of at most 19 digits ending at a space (or the end
 * when last): *s moves past it. */
static int number(const char **s, uint64_t *v, int last)
{
	const char *p = *s;
	uint64_t n = 0;
	int digits = 0;
	while (*p >= '0' && *p <= '9' && digits < 19) {
		n = n * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (!digits || (last ? *p != '\0' : *p != ' '))
		return -1;
	*v = n;
	*s = last ? p : p + 1;
	return 0;
}

static int hex64(const char **s, char out[65], int last)
{
	const char *p = *s;
	for (int i = 0; i < 64; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return -1;
	if (last ? p[64] != '\0' : p[64] != ' ')
		return -1;
	memcpy(out, p, 64);
	out[64] = '\0';
	*s = last ? p + 64 : p + 65;
	return 0;
}

/* One h or m line of the try before; -1 for one that is not well-formed
 * (a line torn by a power cut: the rest is not read). */
static int take_line(struct cctl__resume *r, const char *s)
{
	uint64_t idx, size, end;
	char sha[65];
	if (s[0] == 'h' && s[1] == ' ') {
		s += 2;
		if (number(&s, &idx, 0) || hex64(&s, sha, 1) || !idx || idx > r->nk)
			return -1;
		memcpy(r->was[idx], sha, sizeof(sha));
		return 0;
	}
	if (s[0] != 'm' || s[1] != ' ')
		return -1;
	s += 2;
	if (number(&s, &idx, 0) || number(&s, &size, 0) || number(&s, &end, 0) ||
	    hex64(&s, sha, 0) || !*s || idx >= CCTL__MAX_ENTRIES || end > r->size ||
	    size > ((uint64_t)1 << 50))
		return -1;
	if (idx >= r->nold) {
		size_t n = (size_t)idx + 1;
		r->old = cctl_xrealloc(r->old, n * sizeof(*r->old));
		memset(r->old + r->nold, 0, (n - r->nold) * sizeof(*r->old));
		r->nold = n;
	}
	free(r->old[idx].name);
	r->old[idx] = (struct kept){ .have = 1, .size = size, .end = end,
				     .name = cctl_xstrdup(s) };
	memcpy(r->old[idx].sha256, sha, sizeof(sha));
	return 0;
}

/* The journal of the try before, when it is this download's: 1 read, 0
 * not (none, another's, not one at all). */
static int load(struct cctl__resume *r, const char *part)
{
	struct cctl_buf text = CCTL_BUF_INIT, head = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	char *line, *nl;
	int ok = 0;
	if (cctl_os_stat(NULL, r->journal, &st) || st.type != CCTL_OS_FILE ||
	    st.size > MAX_JOURNAL || cctl_os_read_file(NULL, r->journal, &text))
		goto out;
	cctl_buf_addf(&head, MAGIC "%llu %llu\npart %s\n",
		      (unsigned long long)r->step, (unsigned long long)r->size,
		      part);
	if (text.len < head.len || memcmp(text.buf, head.buf, head.len))
		goto out;
	ok = 1;
	for (line = text.buf + head.len; (nl = memchr(line, '\n',
						      text.len - (size_t)(line - text.buf)));
	     line = nl + 1) {
		*nl = '\0';
		if (take_line(r, line))
			break;
	}
out:
	cctl_buf_release(&text);
	cctl_buf_release(&head);
	return ok;
}

static void journal_add(struct cctl__resume *r, const char *line, size_t n)
{
	if (r->fd >= 0 && cctl_os_write_all(NULL, r->fd, r->journal, line, n)) {
		cctl_os_close(r->fd);
		r->fd = -1; /* the next try inflates what is not journalled */
	}
}

int cctl__resume_open(struct cctl_ctx *ctx, const char *parent,
		      const char *part, uint64_t size, struct cctl__resume **out)
{
	struct cctl__resume *r;
	struct cctl_os_stat st;
	struct cctl_buf head = CCTL_BUF_INIT;
	char *leaf;
	int ret;
	*out = NULL;
	if (strchr(part, '\n') || strchr(part, '\r') || !size)
		return 0; /* unpacked in a staging folder */
	r = cctl_xcalloc(1, sizeof(*r));
	leaf = cctl__resume_leaf(part);
	r->dir = cctl_path_join(parent, leaf, NULL);
	free(leaf);
	r->journal = cctl_path_join(r->dir, JOURNAL, NULL);
	r->size = size;
	r->step = size / CHECKPOINTS > (64u << 10) ? size / CHECKPOINTS : 64u << 10;
	r->nk = (size_t)((size - 1) / r->step);
	r->was = cctl_xcalloc(r->nk + 1, sizeof(*r->was));
	r->agree = cctl_xcalloc(r->nk + 1, 1);
	r->fd = -1;
	if ((ret = cctl_os_stat(ctx, r->dir, &st)))
		goto fail;
	if (st.type != CCTL_OS_DIR || !load(r, part)) {
		/* none, or not this download's: a fresh folder */
		if ((st.type != CCTL_OS_NONE && (ret = cctl_os_rmtree(ctx, r->dir))) ||
		    (ret = cctl_os_mkdir(ctx, r->dir)))
			goto fail;
	}
	/* written anew: this try's checkpoints and members only */
	cctl_buf_addf(&head, MAGIC "%llu %llu\npart %s\n",
		      (unsigned long long)r->step, (unsigned long long)size, part);
	if ((ret = cctl_os_open_write(ctx, r->journal, 0, &r->fd)))
		goto fail;
	journal_add(r, head.buf, head.len);
	cctl_buf_release(&head);
	if (!(r->sync = cctl_os_sync_new())) {
		ret = CCTL_EFAIL;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	cctl_buf_release(&head);
	cctl__resume_close(r);
	return ret;
}

const char *cctl__resume_dir(const struct cctl__resume *r)
{
	return r->dir;
}

uint64_t cctl__resume_next(const struct cctl__resume *r, uint64_t done)
{
	uint64_t k = done / r->step + 1;
	return k <= r->nk ? k * r->step : UINT64_MAX;
}

void cctl__resume_at(struct cctl__resume *r, uint64_t done,
		     const struct cctl_sha256 *h)
{
	char hex[65], line[96];
	size_t k = (size_t)(done / r->step);
	if (!k || k > r->nk || done % r->step)
		return;
	cctl__sha256_peek(h, hex);
	snprintf(line, sizeof(line), "h %zu %s\n", k, hex);
	cctl_os_sync_lock(r->sync);
	journal_add(r, line, strlen(line));
	r->agree[k] = !strcmp(r->was[k], hex);
	r->reached = k;
	cctl_os_sync_broadcast(r->sync);
	cctl_os_sync_unlock(r->sync);
}

void cctl__resume_ended(struct cctl__resume *r)
{
	if (!r)
		return;
	cctl_os_sync_lock(r->sync);
	r->ended = 1;
	cctl_os_sync_broadcast(r->sync);
	cctl_os_sync_unlock(r->sync);
}

/* Appends m's line; with the lock held. */
static void add_member(struct cctl__resume *r, size_t idx, const char *name,
		       uint64_t size, uint64_t end, const char *sha256)
{
	struct cctl_buf line = CCTL_BUF_INIT;
	if (strchr(name, '\n') || strchr(name, '\r'))
		return; /* (not journalled: inflated again) */
	cctl_buf_addf(&line, "m %zu %llu %llu %s %s\n", idx,
		      (unsigned long long)size, (unsigned long long)end, sha256,
		      name);
	journal_add(r, line.buf, line.len);
	cctl_buf_release(&line);
}

void cctl__resume_wrote(struct cctl__resume *r, size_t idx, const char *name,
			uint64_t size, uint64_t end, const char *sha256)
{
	cctl_os_sync_lock(r->sync);
	add_member(r, idx, name, size, end, sha256);
	cctl_os_sync_unlock(r->sync);
}

int cctl__resume_take(struct cctl__resume *r, const char *path, size_t idx,
		      const char *name, uint64_t size, char sha256[65])
{
	const struct kept *o = idx < r->nold ? &r->old[idx] : NULL;
	struct cctl_os_stat st;
	char hex[65];
	uint64_t got = 0;
	size_t k;
	int agree;
	if (!o || !o->have || o->size != size || strcmp(o->name, name))
		goto again;
	k = (size_t)((o->end + r->step - 1) / r->step);
	if (!k)
		k = 1;
	if (k > r->nk || !r->was[k][0])
		goto again;
	cctl_os_sync_lock(r->sync);
	while (r->reached < k && !r->ended)
		cctl_os_sync_wait(r->sync);
	agree = r->reached >= k && r->agree[k];
	cctl_os_sync_unlock(r->sync);
	if (!agree || cctl_os_stat(NULL, path, &st) || st.type != CCTL_OS_FILE ||
	    st.size != size || cctl_sha256_file(NULL, path, hex, &got) ||
	    got != size || strcmp(hex, o->sha256))
		goto again;
	memcpy(sha256, hex, sizeof(hex));
	cctl_os_sync_lock(r->sync);
	add_member(r, idx, name, size, o->end, hex);
	r->kept_files++;
	r->kept_bytes += size;
	cctl_os_sync_unlock(r->sync);
	return 1;
again:
	/* whatever is there goes: the writer makes the file anew */
	cctl_os_unlink(NULL, path);
	return 0;
}

void cctl__resume_detach(struct cctl__resume *r)
{
	if (!r)
		return;
	cctl_os_sync_lock(r->sync);
	if (r->fd >= 0)
		cctl_os_close(r->fd);
	r->fd = -1;
	cctl_os_sync_unlock(r->sync);
}

void cctl__resume_kept(const struct cctl__resume *r, uint64_t *files,
		       uint64_t *bytes)
{
	*files = r ? r->kept_files : 0;
	*bytes = r ? r->kept_bytes : 0;
}

void cctl__resume_close(struct cctl__resume *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		cctl_os_close(r->fd);
	for (size_t i = 0; i < r->nold; i++)
		free(r->old[i].name);
	free(r->old);
	free(r->was);
	free(r->agree);
	if (r->sync)
		cctl_os_sync_free(r->sync);
	free(r->dir);
	free(r->journal);
	free(r);
}

int cctl__resume_orphan(const char *folder)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	char *journal = cctl_path_join(folder, JOURNAL, NULL), *part, *nl;
	int orphan = 1;
	if (!cctl_os_stat(NULL, journal, &st) && st.type == CCTL_OS_FILE &&
	    st.size <= MAX_JOURNAL && !cctl_os_read_file(NULL, journal, &text) &&
	    text.len > strlen(MAGIC) && !memcmp(text.buf, MAGIC, strlen(MAGIC)) &&
	    (part = memchr(text.buf, '\n', text.len)) &&
	    !strncmp(part + 1, "part ", 5) &&
	    (nl = strchr(part + 6, '\n'))) {
		*nl = '\0';
		part += 6;
		/* a .part of that name, and this folder the one it gets */
		if (!cctl_os_stat(NULL, part, &st) && st.type == CCTL_OS_FILE) {
			char *leaf = cctl__resume_leaf(part);
			const char *sep = cctl__last_sep(folder);
			orphan = strcmp(sep ? sep + 1 : folder, leaf) != 0;
			free(leaf);
		}
	}
	cctl_buf_release(&text);
	free(journal);
	return orphan;
}

void cctl__resume_drop(const char *parent, const char *part)
{
	char *leaf = cctl__resume_leaf(part);
	char *dir = cctl_path_join(parent, leaf, NULL);
	cctl_os_rmtree(NULL, dir);
	free(dir);
	free(leaf);
}

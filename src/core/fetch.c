/*
 * Getting a release's archive into the cache: from the cache itself when
 * it is there and right, else from the mirror (HTTP or HTTPS through the
 * OS layer's cctl_os_http_get, or a folder), hashed as the bytes arrive,
 * resumed after a broken connection, and kept only when its size and
 * SHA-256 are the manifest's.
 *
 *   <cache>/archives/NAME        verified archives
 *   <cache>/archives/NAME.part   a download in progress (resumed from)
 *   <cache>/archives/NAME.lock   held while a process fetches NAME
 *   <cache>/manifests/           manifests fetched from the mirror
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "feed.h"
#include "fetch.h"
#include "internal.h"

#define LOCK_WAIT_MS (60u * 60u * 1000u) /* another process's download */

int cctl__fetch_timeout(const struct cctl_fetch_opts *o, int stall)
{
	const char *env = cctl_os_getenv("CUDNNCTL_TIMEOUT");
	int set = o ? (stall ? o->stall_s : o->connect_s) : 0;
	if (set > 0)
		return set;
	if (env && atoi(env) > 0 && atoi(env) <= 3600)
		return atoi(env);
	return 30;
}

void cctl__pace_begin(struct cctl__pace *p, const char *url, int stall_s,
		      int deadline_s)
{
	p->url = url;
	p->stall_s = stall_s;
	p->window_ms = cctl_os_now_ms();
	p->window_bytes = 0;
	p->deadline_s = deadline_s;
	p->deadline_ms = deadline_s > 0 ? p->window_ms + deadline_s * 1000.0 : 0;
}

int cctl__pace_check(struct cctl_ctx *ctx, struct cctl__pace *p, size_t len)
{
	double now, span;
	if (p->stall_s <= 0)
		return 0; /* not a network transfer (a folder mirror's copy) */
	now = cctl_os_now_ms();
	span = now - p->window_ms;
	p->window_bytes += len;
	if (p->deadline_ms && now > p->deadline_ms)
		return cctl__error(ctx, CCTL_ENETWORK,
				   "'%s' took too long: not finished after %d s",
				   p->url, p->deadline_s);
	if (span < p->stall_s * 1000.0)
		return 0;
	if ((double)p->window_bytes < CCTL__MIN_RATE * span / 1000.0)
		return cctl__error(ctx, CCTL_ENETWORK,
				   "'%s' is too slow: %llu bytes in the last "
				   "%.0f s, under %d bytes a second",
				   p->url, (unsigned long long)p->window_bytes,
				   span / 1000.0, CCTL__MIN_RATE);
	p->window_ms = now;
	p->window_bytes = 0;
	return 0;
}

const char *cctl_fetch_mirror(const struct cctl_fetch_opts *o)
{
	const char *env = cctl_os_getenv("CUDNNCTL_MIRROR");
	if (o && o->mirror && *o->mirror)
		return o->mirror;
	return env && *env ? env : CCTL_DEFAULT_MIRROR;
}

int cctl_fetch_cache_dir(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
			 char **dir)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	const char *env = cctl_os_getenv("CUDNNCTL_CACHE");
	int ret = 0;
	if (o && o->cache && *o->cache)
		cctl_buf_adds(&b, o->cache);
	else if (env && *env)
		cctl_buf_adds(&b, env);
	else
		ret = cctl_os_cache_dir(ctx, &b);
	*dir = ret ? NULL : cctl_buf_detach(&b);
	cctl_buf_release(&b);
	return ret;
}

void cctl__source_open(struct cctl__source *s, const struct cctl_fetch_opts *o)
{
	const char *m = cctl_fetch_mirror(o);
	size_t n = strlen(m);
	s->name = m;
	s->kind = !strncmp(m, "https://", 8)  ? CCTL__SRC_HTTPS
		  : !strncmp(m, "http://", 7) ? CCTL__SRC_HTTP
					      : CCTL__SRC_FOLDER;
	if (s->kind != CCTL__SRC_FOLDER)
		s->root = cctl_xstrfmt("%s%s", m, n && m[n - 1] == '/' ? "" : "/");
	else
		s->root = cctl_xstrdup(!strncmp(m, "file://", 7) ? m + 7 : m);
}

void cctl__source_close(struct cctl__source *s)
{
	free(s->root);
	s->root = NULL;
}

char *cctl__source_path(struct cctl_ctx *ctx, const struct cctl__source *s,
			const char *rel)
{
	char *path = s->kind != CCTL__SRC_FOLDER
			     ? cctl_xstrfmt("%s%s", s->root, rel)
			     : cctl_path_join(s->root, rel, NULL);
	if (*rel && cctl__check_within(ctx, s->root, path, "file on the mirror")) {
		free(path);
		return NULL;
	}
	return path;
}

/* Waits for the lock of one archive in the cache. */
static int take_lock(struct cctl_ctx *ctx, const char *path, void **lock)
{
	unsigned waited = 0;
	int ret;
	while ((ret = cctl_os_lock(NULL, path, "download", NULL, lock)) == CCTL_ELOCKED &&
	       waited < LOCK_WAIT_MS) {
		if (!waited)
			cctl__warn(ctx, "waiting for another cudnnctl that "
					"fetches the same archive ('%s')",
				   path);
		if (cctl__interrupt(ctx))
			return CCTL_EINTERRUPTED;
		cctl_os_sleep_ms(200);
		waited += 200;
	}
	return ret ? cctl_os_lock(ctx, path, "download", NULL, lock) : 0;
}

/* ------------------------------------------------------- one transfer */

static int part_reset(struct cctl__part *p)
{
	char ignore[65];
	int ret;
	if (p->fd >= 0)
		cctl_os_close(p->fd);
	p->fd = -1;
	if (p->h)
		cctl_sha256_final(p->h, ignore);
	/* (a reader going along hashes it for the fetch: feed.h) */
	p->h = p->ranged || cctl__feed_hashed_by_reader(p->feed) ? NULL
								 : cctl_sha256_new();
	p->have = 0;
	cctl__feed_restart(p->feed, p->path);
	if ((ret = cctl_os_open_write(p->ctx, p->path, 0, &p->fd)))
		p->failed = ret;
	else
		cctl__feed_span(p->feed, p->base, p->path, 0);
	return ret;
}

/* Takes up a NAME.part left by a broken download: its bytes are hashed
 * once (a range's are not, nor those a reader going along hashes), and
 * the download goes on from its end. */
int cctl__part_open(struct cctl__part *p)
{
	struct cctl_os_stat st;
	unsigned char *buf;
	size_t got;
	int fd = -1, ret;

	if (cctl_os_stat(NULL, p->path, &st) || st.type != CCTL_OS_FILE ||
	    !st.size || st.size > p->total)
		return part_reset(p);
	if (p->ranged || cctl__feed_hashed_by_reader(p->feed)) {
		p->have = st.size;
		goto append;
	}
	if ((ret = cctl_os_open_read(p->ctx, p->path, &fd)))
		return ret;
	p->h = cctl_sha256_new();
	buf = cctl_xmalloc(1 << 20);
	while (!(ret = cctl_os_read(p->ctx, fd, p->path, buf, 1 << 20, &got)) &&
	       got) {
		cctl_sha256_update(p->h, buf, got);
		p->have += got;
	}
	free(buf);
	cctl_os_close(fd);
	if (ret || p->have != st.size)
		return part_reset(p);
append:
	/* one that cannot be appended to as a file of its own (a hard link
	 * another user made to a file of ours) is started afresh: replaced,
	 * never written through */
	if (cctl_os_open_write(NULL, p->path, 1, &p->fd))
		return part_reset(p);
	cctl__feed_span(p->feed, p->base, p->path, p->have);
	return 0;
}

/* The server's Content-Length against the manifest's size, before any
 * byte: a whole file of another size, or a range that goes past the end,
 * is not the manifest's file (one that says more than it then sends
 * shows as a cut, one that says less as a short range). */
static int length_refused(struct cctl__part *p, int status, int64_t length,
			  uint64_t start)
{
	if (length < 0 || (status == 200 ? (uint64_t)length == p->size
					 : (uint64_t)length <= p->size - start))
		return 0;
	if (status == 200)
		cctl__error(p->ctx, CCTL_EMISMATCH,
			    "the server says '%s' is %llu bytes; the manifest "
			    "gives %llu",
			    p->url, (unsigned long long)length,
			    (unsigned long long)p->size);
	else
		cctl__error(p->ctx, CCTL_EMISMATCH,
			    "the server says its part of '%s' from byte %llu "
			    "is %llu bytes, past the %llu the manifest gives",
			    p->url, (unsigned long long)start,
			    (unsigned long long)length,
			    (unsigned long long)p->size);
	cctl__hint(p->ctx, "the mirror serves another file than NVIDIA's; "
			   "check --mirror");
	return p->failed = CCTL_EMISMATCH;
}

static int on_start(void *ud, int status, int64_t length, uint64_t start)
{
	struct cctl__part *p = ud;
	p->started = 1;
	p->status = status;
	cctl__pace_begin(&p->pace, p->url, p->stall_s, 0);
	if (status >= 400)
		return 0;
	if ((status == 200 || (status == 206 && start <= p->size)) &&
	    length_refused(p, status, length, start))
		return p->failed;
	if (status == 206 && start == p->base + p->have) {
		if (p->ranges && !p->base)
			cctl__ranges_go(p->ranges);
		return 0;
	}
	/* a range after the first answered with the whole file or another
	 * part: the download goes on over one connection */
	if (p->base) {
		p->norange = 1;
		return p->failed = CCTL_ENETWORK;
	}
	/* the first range, answered with the whole file: it takes it all */
	if (p->ranges) {
		p->norange = 1;
		p->end = 0;
		p->total = p->size;
	}
	/* asked for the rest and got the whole file (200), or another part:
	 * start again from zero */
	if (p->have && (status != 206 || start != p->have)) {
		p->restarts++;
		return part_reset(p);
	}
	return 0;
}

static int on_data(void *ud, const void *data, size_t len)
{
	struct cctl__part *p = ud;
	int ret;
	if ((ret = cctl__interrupt(p->ctx))) {
		p->failed = ret;
		return ret;
	}
	/* too slow: given up on as a stall is, and tried again */
	if ((ret = cctl__pace_check(p->ctx, &p->pace, len)))
		return ret;
	if (p->have + len > p->total) {
		p->failed = CCTL_EMISMATCH;
		if (p->end)
			return cctl__error(p->ctx, CCTL_EMISMATCH,
					   "the server sends more than the "
					   "bytes %llu-%llu asked for of '%s'",
					   (unsigned long long)p->base,
					   (unsigned long long)p->end - 1,
					   p->url);
		return cctl__error(p->ctx, CCTL_EMISMATCH,
				   "the server sends more than the %llu bytes "
				   "the manifest gives for '%s'",
				   (unsigned long long)p->total, p->path);
	}
	if ((ret = cctl_os_write_all(p->ctx, p->fd, p->path, data, len))) {
		p->failed = ret;
		return ret;
	}
	if (p->h)
		cctl_sha256_update(p->h, data, len);
	p->have += len;
	p->received += len;
	cctl__feed_have(p->feed, p->base, p->have);
	if (p->ranges) {
		if ((ret = cctl__ranges_count(p, len)))
			return p->failed = ret;
	} else
		cctl__progress(p->ctx, CCTL_PHASE_DOWNLOAD, p->have, p->total);
	return 0;
}

void cctl__unreachable_hint(struct cctl_ctx *ctx)
{
	if (!ctx || ctx->code != CCTL_ENETWORK || ctx->hint[0])
		return;
	cctl__hint(ctx, "no answer from the host: %s; or use a mirror this "
			"machine reaches (--mirror URL|DIR, or CUDNNCTL_MIRROR); "
			"or, with no network, --offline installs what the cache "
			"holds (cudnnctl cache list)",
		   cctl_platform_host()->proxy_help);
}

/* The first wait before a retry, in ms: 500, doubled after each try that
 * got no byte further (at most 8 s); CUDNNCTL_TEST_BACKOFF_MS (a test
 * hook, 1 to 500) makes it shorter, so that the tests of the retries do
 * not wait for them. */
static unsigned backoff_ms(void)
{
	const char *env = cctl_os_getenv("CUDNNCTL_TEST_BACKOFF_MS");
	int v = env ? atoi(env) : 0;
	return v >= 1 && v <= 500 ? (unsigned)v : 500;
}

int cctl__part_download(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
			const char *url, struct cctl__part *p,
			struct cctl_fetch_result *res)
{
	const struct cctl_os_http_sink sink = { on_start, on_data, p };
	int retries = o && o->retries > 0 ? o->retries : 5;
	int connect_s = cctl__fetch_timeout(o, 0);
	int stall_s = cctl__fetch_timeout(o, 1);
	unsigned base = backoff_ms(), delay = base, wait;
	int ret;

	res->resumed_at = p->have;
	p->url = url;
	p->stall_s = stall_s;
	for (int attempt = 0;; attempt++) {
		uint64_t before = p->have;
		p->started = 0;
		p->status = 0;
		res->attempts++;
		ret = cctl_os_http_get(ctx, url, p->base + p->have, p->end,
				       connect_s, stall_s, &sink);
		/* every byte asked for is in, though the transfer ended
		 * short of a Content-Length that promised more: done (the
		 * hash decides), not asked again past the end */
		if (ret == CCTL_ENETWORK && !p->failed && p->started &&
		    p->have == p->total)
			ret = 0;
		if (!ret || p->failed || ret != CCTL_ENETWORK)
			break;
		/* a Ctrl+C aborts the transfer (the OS layer's wait ends) */
		if (cctl_os_interrupted()) {
			ret = cctl__interrupt(ctx);
			break;
		}
		/* no answer at all: the host is not there; a transfer that
		 * broke or an answer of 5xx (or 408, 429) is worth another
		 * try, another 4xx (403 from a proxy, say) is not */
		if (!p->started || attempt >= retries ||
		    (p->status >= 400 && p->status < 500 && p->status != 408 &&
		     p->status != 429))
			break;
		wait = p->have > before ? base : delay;
		cctl__warn(ctx, "%s; trying again in %.1f s from byte %llu",
			   cctl__msg(ctx), wait / 1000.0,
			   (unsigned long long)(p->base + p->have));
		cctl_os_sleep_ms(wait);
		if (p->have == before && delay < 16 * base)
			delay *= 2;
	}
	res->downloaded = p->received;
	if (ret == CCTL_ENETWORK && !p->failed && !p->started)
		cctl__unreachable_hint(ctx);
	return p->failed ? p->failed : ret;
}

/* Copies a folder mirror's file into the part. */
static int copy_in(struct cctl_ctx *ctx, const char *src, struct cctl__part *p)
{
	unsigned char *buf;
	size_t got;
	int fd = -1, ret;
	if ((ret = part_reset(p)) || (ret = cctl_os_open_read(ctx, src, &fd)))
		return ret;
	buf = cctl_xmalloc(1 << 20);
	while (!(ret = cctl_os_read(ctx, fd, src, buf, 1 << 20, &got)) && got &&
	       !(ret = on_data(p, buf, got)))
		;
	free(buf);
	cctl_os_close(fd);
	p->received = p->have;
	return ret;
}

/* The part is the archive: renamed into place; else it is deleted. */
static int part_finish(struct cctl_ctx *ctx, struct cctl__part *p, const char *src,
		       const struct cctl_release *r, const char *path)
{
	char hex[65] = "";
	int ret;
	cctl_os_close(p->fd);
	p->fd = -1;
	if (p->h) {
		cctl_sha256_final(p->h, hex);
		p->h = NULL;
	} else if (p->have == r->size && !cctl__feed_wait_digest(p->feed, hex)) {
		/* the reader going along stopped before the end (or was given
		 * bytes that came again): hashed here, from the file */
		if ((ret = cctl__interrupted(ctx)) ||
		    (ret = cctl_sha256_file(ctx, p->path, hex, NULL))) {
			cctl__part_abandon(p, ret);
			return ret;
		}
	}
	if (p->have == r->size && !strcmp(hex, r->sha256))
		return cctl__feed_rename(ctx, p->feed, p->path, path);
	cctl__feed_forget(p->feed, p->path);
	cctl_os_unlink(NULL, p->path);
	if (p->have != r->size)
		cctl__error(ctx, CCTL_EMISMATCH,
			    "size mismatch for '%s': expected %llu bytes (%s), "
			    "got %llu; the download was deleted",
			    src, (unsigned long long)r->size, r->source,
			    (unsigned long long)p->have);
	else
		cctl__error(ctx, CCTL_EMISMATCH,
			    "sha256 mismatch for '%s': expected %s (%s), got "
			    "%s; the download was deleted",
			    src, r->sha256, r->source, hex);
	cctl__hint(ctx, "the mirror serves another file than NVIDIA's; check "
			"--mirror, or run again to download it anew");
	return CCTL_EMISMATCH;
}

/* A failed fetch: the part is closed first (Windows cannot delete an open
 * file), then deleted when its bytes are wrong (never resumed) or when
 * there are none (a 404, a host that does not answer: nothing to resume,
 * and cache list would show an empty partial download). */
void cctl__part_abandon(struct cctl__part *p, int ret)
{
	if (p->fd >= 0)
		cctl_os_close(p->fd);
	p->fd = -1;
	cctl__feed_forget(p->feed, p->path);
	/* interrupted: the user stopped it, and it leaves nothing behind */
	if (ret == CCTL_EMISMATCH || ret == CCTL_EINTERRUPTED || !p->have)
		cctl_os_unlink(NULL, p->path);
}

/* ------------------------------------------------------------- the cache */

/* A cached copy: right (1), absent (0), or wrong and removed (0). */
static int cached_ok(struct cctl_ctx *ctx, const char *path,
		     const struct cctl_release *r, int check_hash)
{
	struct cctl_os_stat st;
	char hex[65];
	if (cctl_os_stat(NULL, path, &st) || st.type == CCTL_OS_NONE)
		return 0;
	if (st.type == CCTL_OS_FILE && st.size == r->size &&
	    (!check_hash ||
	     (!cctl_sha256_file(ctx, path, hex, NULL) && !strcmp(hex, r->sha256))))
		return 1;
	cctl__warn(ctx, "'%s' in the cache is not %s's archive (wrong %s); "
			"removed, fetching it again",
		   path, r->version, st.size != r->size ? "size" : "sha256");
	cctl_os_unlink(NULL, path);
	return 0;
}

static int fetch_locked(struct cctl_ctx *ctx, const struct cctl__source *mirror,
			const struct cctl_fetch_opts *o,
			const struct cctl_release *r, int check_hash,
			struct cctl__part *p, struct cctl_fetch_result *res)
{
	char *src = NULL;
	int ret;

	if (cached_ok(ctx, res->path, r, check_hash)) {
		res->cached = 1;
		return 0;
	}
	if (o && o->offline) {
		cctl__error(ctx, CCTL_ENETWORK,
			    "'%s' is not in the cache and --offline forbids "
			    "downloading it",
			    r->file_name);
		cctl__hint(ctx, "run cudnnctl download %s --cuda %d on a machine "
				"with network, and copy its cache or use "
				"--mirror DIR",
			   r->version, r->cuda);
		return CCTL_ENETWORK;
	}
	if (!(src = cctl__source_path(ctx, mirror, r->relative_path)))
		return ctx ? ctx->code : CCTL_EFAIL;
	if (mirror->kind != CCTL__SRC_FOLDER) {
		int handled = 0;
		res->url = cctl_xstrdup(src);
		ret = cctl__part_open(p);
		/* a complete part whose rename was cut short needs no bytes;
		 * the ranges appended to it may be left (a kill before the
		 * last one's file was deleted) */
		if (!ret && p->have < r->size)
			ret = cctl__ranges_fetch(ctx, o, src, res->path, p, res,
						 &handled);
		else if (!ret)
			cctl__ranges_drop(res->path);
		/* a whole answer that brought fewer bytes than asked for (a
		 * server that caps a range's size) is asked again from its
		 * end, as long as each brings bytes */
		for (uint64_t before = 0; !ret && !handled && p->have < r->size &&
					  (before != p->have || !res->attempts);) {
			before = p->have;
			ret = cctl__part_download(ctx, o, src, p, res);
		}
	} else {
		struct cctl_os_stat st;
		/* as an HTTP mirror's 404 */
		if (!cctl_os_stat(NULL, src, &st) && st.type == CCTL_OS_NONE)
			ret = cctl__error(ctx, CCTL_ENOTFOUND,
					  "cannot fetch '%s': the mirror has no "
					  "such file",
					  src);
		else
			ret = copy_in(ctx, src, p);
		res->attempts = 1;
		res->downloaded = p->received;
	}
	if (!ret)
		ret = part_finish(ctx, p, src, r, res->path);
	else
		cctl__part_abandon(p, ret);
	free(src);
	return ret;
}

int cctl_fetch_archive(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		       const struct cctl_release *r, int check_hash,
		       struct cctl_fetch_result *res)
{
	struct cctl__source mirror;
	int ret;
	cctl__source_open(&mirror, o);
	ret = cctl__fetch_from(ctx, &mirror, o, r, check_hash, res, NULL);
	cctl__source_close(&mirror);
	return ret;
}

int cctl__fetch_from(struct cctl_ctx *ctx, const struct cctl__source *mirror,
		     const struct cctl_fetch_opts *o,
		     const struct cctl_release *r, int check_hash,
		     struct cctl_fetch_result *res, struct cctl__feed *feed)
{
	struct cctl__part p;
	char *cache = NULL, *dir = NULL, *lockp = NULL, *partp = NULL;
	void *lock = NULL;
	int ret;

	memset(res, 0, sizeof(*res));
	memset(&p, 0, sizeof(p));
	p.fd = -1;
	if ((ret = cctl_fetch_cache_dir(ctx, o, &cache)))
		return ret;
	dir = cctl_path_join(cache, "archives", NULL);
	if ((ret = cctl_os_mkdirs(ctx, dir)))
		goto out;
	res->path = cctl_path_join(dir, r->file_name, NULL);
	if ((ret = cctl__check_within(ctx, dir, res->path,
				      "archive in the cache")))
		goto out;
	lockp = cctl_xstrfmt("%s.lock", res->path);
	partp = cctl_xstrfmt("%s.part", res->path);
	if ((ret = take_lock(ctx, lockp, &lock)))
		goto out;
	p.ctx = ctx;
	p.path = partp;
	p.total = p.size = r->size;
	p.feed = feed;
	ret = fetch_locked(ctx, mirror, o, r, check_hash, &p, res);
out:
	if (p.fd >= 0)
		cctl_os_close(p.fd);
	if (p.h) {
		char ignore[65];
		cctl_sha256_final(p.h, ignore);
	}
	if (lock)
		cctl_os_unlock(lock);
	free(cache);
	free(dir);
	free(lockp);
	free(partp);
	return ret;
}

void cctl_fetch_result_release(struct cctl_fetch_result *res)
{
	free(res->path);
	free(res->url);
	memset(res, 0, sizeof(*res));
}

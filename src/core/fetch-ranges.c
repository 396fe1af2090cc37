/*
 * One archive over several connections at once (fetch.h:
 * cctl__ranges_fetch): the archive is cut into ranges, each fetched with a
 * Range request of its own, on a thread of its own, retried and resumed on
 * its own (cctl__part_download, as a whole download is).
 *
 *   <cache>/archives/NAME.part         range 0, hashed as it arrives
 *                                      (unless a reader going along
 *                                      hashes the archive: feed.h)
 *   <cache>/archives/NAME.START.part   the range from byte START to the
 *                                      next range's START (or the end)
 *
 * Each file is only ever appended to, so whatever stops the process leaves
 * each range resumable from its own end; the next run takes the ranges
 * from the names it finds.  Once every range is in, they are appended to
 * NAME.part in order, hashed as they are read, and deleted one by one, so
 * the whole archive's SHA-256 is still computed over its bytes in order.
 * The other connections start only once the first range's answer shows
 * that the server honours Range (206 with the asked-for start); a server
 * that answers 200 gets one connection, as before.
 *
 * Each connection takes the next range not yet taken, and the command's
 * own thread joins them once range 0 is in.  For a plain download there
 * are as many ranges as connections.  An install that reads the archive
 * as it arrives (feed.h) reads it in order, so its archive is cut into
 * up to FEED_PIECES pieces of at least 4 MiB, taken in order: the bytes it
 * can use then come at the whole link's rate, not at one connection's, and
 * in steps of a piece, not of one per connection.  A resumed
 * one has the unfetched rest of each range cut the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "feed.h"
#include "fetch.h"
#include "internal.h"

#define MAX_RANGES (CCTL__FEED_SPANS - 1) /* each a span of the feed */
#define MAX_CONNECTIONS 16
#define MIN_RANGE (16u << 20) /* smaller archives: one connection */
/* An archive read as it arrives: cut into this many pieces, of at least
 * a quarter of MIN_RANGE, so that the bytes the reader can use grow in
 * small steps (docs/benchmarks-download.md, "smaller pieces") */
#define FEED_PIECES 48

struct range {
	struct cctl__part p;
	struct cctl_ctx ctx; /* its own: two threads never share a message */
	struct cctl_fetch_result res;
	struct cctl__ranges *rs;
	char *path;
	int ret;
	int done;
	int main;  /* fetched on the command's thread (set by that thread) */
};

struct cctl__ranges {
	struct cctl_ctx *ctx;
	const struct cctl_fetch_opts *o;
	const char *url;
	struct cctl__part *p0;
	struct range r[MAX_RANGES]; /* r[0] is unused: range 0 is p0 */
	size_t n;
	size_t order[MAX_RANGES]; /* the ranges after 0, in the order taken */
	size_t next;              /* order's next not taken (under sync) */
	struct cctl_os_thread *w[MAX_RANGES];
	size_t nw;                /* the connections' threads */
	size_t busy;              /* those still taking ranges (under sync) */
	struct cctl_os_sync *sync;
	uint64_t have; /* bytes of all ranges (under sync) */
	struct cctl_buf warnings; /* the ranges' warnings, a line each, for
				     the command's thread to pass on */
	int going;     /* the other ranges were started */
	int stop;      /* range 0 failed: the others end too */
	int failed;    /* a range failed, or was answered whole: no more are
			  taken (under sync) */
	size_t joined; /* ranges 1 to joined are appended to NAME.part */
};

/* --connections N, else $CUDNNCTL_CONNECTIONS, else 4; at most
 * MAX_CONNECTIONS. */
static size_t connections(const struct cctl_fetch_opts *o)
{
	const char *env = cctl_os_getenv("CUDNNCTL_CONNECTIONS");
	long v = o && o->connections > 0 ? o->connections : env ? atol(env) : 0;
	if (v <= 0)
		v = 4;
	return v > MAX_CONNECTIONS ? MAX_CONNECTIONS : (size_t)v;
}

/* The smallest range worth a connection of its own; the test hook
 * CUDNNCTL_TEST_RANGE_MIN (1 to 16 MiB) makes it smaller, so that the
 * tests' small archives are fetched in ranges. */
static uint64_t range_min(void)
{
	const char *env = cctl_os_getenv("CUDNNCTL_TEST_RANGE_MIN");
	long v = env ? atol(env) : 0;
	return v >= 1 && v <= (long)MIN_RANGE ? (uint64_t)v : MIN_RANGE;
}

/* The smallest piece of an archive read as it arrives. */
static uint64_t piece_min(void)
{
	return range_min() / 4 ? range_min() / 4 : 1;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A range file's name "BASE.X.part" (X not empty: not NAME.part). */
static int range_name(const char *name, const char *base)
{
	size_t nb = strlen(base), n = strlen(name);
	return n > nb + 6 && !strncmp(name, base, nb) && name[nb] == '.' &&
	       !strcmp(name + n - 5, ".part");
}

/* The start of a range file "BASE.START.part": 1 to size - 1 in decimal
 * without a leading zero; else 0 (not one cudnnctl would have made). */
static uint64_t range_start(const char *name, const char *base, uint64_t size)
{
	size_t nb = strlen(base), end = strlen(name) - 5;
	uint64_t v = 0;
	if (end - nb - 1 > 19 || name[nb + 1] == '0')
		return 0;
	for (size_t i = nb + 1; i < end; i++) {
		if (name[i] < '0' || name[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	return v < size ? v : 0;
}

/*
 * The ranges an earlier run left for archive: their starts, sorted, and
 * their number.  When one cannot be taken up (a start past the end, a
 * name cudnnctl does not make, more than MAX_RANGES), or with drop, all
 * are deleted and the download starts afresh: 0.
 */
static size_t list_ranges(const char *archive, uint64_t size,
			  uint64_t *starts, int drop)
{
	const char *sep = strrchr(archive, '/'), *bsep = strrchr(archive, '\\');
	char *dir, **names = NULL;
	size_t k = 0, n = 0, bad = (size_t)drop;

	if (bsep && (!sep || bsep > sep))
		sep = bsep;
	if (!sep)
		return 0;
	dir = cctl_xstrfmt("%.*s", (int)(sep - archive), archive);
	if (cctl_os_listdir(NULL, dir, &names, &k))
		k = 0;
	for (size_t i = 0; i < k; i++) {
		uint64_t s;
		if (!range_name(names[i], sep + 1))
			continue;
		if ((s = range_start(names[i], sep + 1, size)) && n + 1 < MAX_RANGES)
			starts[n++] = s;
		else
			bad++;
	}
	qsort(starts, n, sizeof(*starts), by_value);
	for (size_t i = 0; i < k; i++) {
		if (bad && range_name(names[i], sep + 1)) {
			char *path = cctl_path_join(dir, names[i], NULL);
			cctl_os_unlink(NULL, path);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	free(dir);
	return bad ? 0 : n;
}

static size_t leftover(const char *archive, uint64_t size, uint64_t *starts)
{
	return list_ranges(archive, size, starts, 0);
}

void cctl__ranges_drop(const char *archive)
{
	uint64_t starts[MAX_RANGES];
	list_ranges(archive, UINT64_MAX, starts, 1);
}

/* ------------------------------------------------------------ the ranges */

/* A range's warning ("...; trying again in 0.5 s from byte N"): queued,
 * and passed on by the command's own thread (ranges_wait), which is the
 * one that may call the caller's callbacks. */
static void range_warning(void *ud, const char *msg)
{
	struct range *g = ud;
	cctl_os_sync_lock(g->rs->sync);
	cctl_buf_addf(&g->rs->warnings, "%s\n", msg);
	cctl_os_sync_unlock(g->rs->sync);
}

/* Passes the queued warnings on to the command's context. */
static void pass_warnings(struct cctl__ranges *rs)
{
	struct cctl_buf w;
	char *line, *nl;
	cctl_os_sync_lock(rs->sync);
	w = rs->warnings;
	cctl_buf_init(&rs->warnings);
	cctl_os_sync_unlock(rs->sync);
	for (line = w.buf; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = 0;
		cctl__warn(rs->ctx, "%s", line);
	}
	cctl_buf_release(&w);
}

/* One range, with what a server that caps the size of a range sends:
 * a whole, valid answer with fewer bytes than asked for is asked again
 * from its end, as long as each answer brings bytes. */
static int fetch_range(struct cctl_ctx *ctx, struct cctl__ranges *rs,
		       struct cctl__part *p, struct cctl_fetch_result *res)
{
	uint64_t before;
	int ret;
	do {
		before = p->have;
		ret = cctl__part_download(ctx, rs->o, rs->url, p, res);
	} while (!ret && !p->norange && p->have < p->total && p->have > before);
	if (!ret && !p->norange && p->have < p->total)
		ret = cctl__error(ctx, CCTL_ENETWORK,
				  "cannot download '%s': the server sent none "
				  "of the bytes %llu-%llu asked for",
				  rs->url, (unsigned long long)(p->base + p->have),
				  (unsigned long long)(p->end - 1));
	return ret;
}

/* The next range to fetch, or NULL: none left, or one failed.  One
 * complete already (resumed) is only marked done. */
static struct range *take(struct cctl__ranges *rs, int on_main)
{
	struct range *g = NULL;
	cctl_os_sync_lock(rs->sync);
	while (!g && !rs->stop && !rs->failed && rs->next + 1 < rs->n) {
		struct range *c = &rs->r[rs->order[rs->next++]];
		if (c->p.have >= c->p.total)
			c->done = 1;
		else
			g = c;
	}
	cctl_os_sync_unlock(rs->sync);
	if (g) /* this thread's alone from here on */
		g->main = on_main;
	return g;
}

/* One connection's work: ranges, one after the other, until none is left. */
static void work(struct cctl__ranges *rs, int on_main)
{
	struct range *g;
	while ((g = take(rs, on_main))) {
		int ret = fetch_range(&g->ctx, rs, &g->p, &g->res);
		cctl_os_sync_lock(rs->sync);
		g->ret = ret;
		g->done = 1;
		if (ret || g->p.norange)
			rs->failed = 1;
		cctl_os_sync_broadcast(rs->sync);
		cctl_os_sync_unlock(rs->sync);
	}
}

static void connection_main(void *arg)
{
	struct cctl__ranges *rs = arg;
	work(rs, 0);
	cctl_os_sync_lock(rs->sync);
	rs->busy--;
	cctl_os_sync_broadcast(rs->sync);
	cctl_os_sync_unlock(rs->sync);
}

/* The other connections: range 0's is the command's thread, which takes
 * ranges too once range 0 is in (and all of them when no thread starts). */
/* Threads for the connections, up to want of them in all, none more than
 * there are ranges left to take. */
static void add_connections(struct cctl__ranges *rs, size_t want)
{
	size_t left;
	cctl_os_sync_lock(rs->sync);
	left = rs->n - 1 - rs->next;
	cctl_os_sync_unlock(rs->sync);
	if (want > rs->nw + left)
		want = rs->nw + left;
	while (rs->nw < want) {
		struct cctl_os_thread *t;
		cctl_os_sync_lock(rs->sync);
		rs->busy++;
		cctl_os_sync_unlock(rs->sync);
		if (!(t = cctl_os_thread_start(connection_main, rs))) {
			cctl_os_sync_lock(rs->sync);
			rs->busy--;
			cctl_os_sync_unlock(rs->sync);
			break;
		}
		rs->w[rs->nw++] = t;
	}
}

/* The other connections, once range 0's answer honours Range; range 0's
 * own is the command's thread until range 0 is in (ranges_take_in). */
void cctl__ranges_go(struct cctl__ranges *rs)
{
	if (rs->going)
		return;
	rs->going = 1;
	add_connections(rs, connections(rs->o) - 1);
}

int cctl__ranges_count(struct cctl__part *p, size_t len)
{
	struct cctl__ranges *rs = p->ranges;
	uint64_t have;
	int stop;
	cctl_os_sync_lock(rs->sync);
	have = rs->have += len;
	stop = rs->stop;
	cctl_os_sync_unlock(rs->sync);
	/* on the command's own thread: range 0, or a range it took after
	 * (a range's part is its struct's first member) */
	if (p == rs->p0 || ((struct range *)(void *)p)->main) {
		if (p != rs->p0)
			pass_warnings(rs);
		cctl__progress(rs->ctx, CCTL_PHASE_DOWNLOAD, have, p->size);
	}
	return stop && p->base ? CCTL_ENETWORK : 0;
}

/* The ranges after range 0: each file taken up or made. */
static int ranges_open(struct cctl__ranges *rs, const char *archive,
		       const uint64_t *starts, size_t n)
{
	struct cctl__part *p0 = rs->p0;
	int ret;
	rs->n = n;
	rs->have = p0->have;
	for (size_t k = 1; k < n; k++) {
		struct range *g = &rs->r[k];
		g->rs = rs;
		cctl_ctx_init(&g->ctx);
		g->ctx.on_warning = range_warning;
		g->ctx.ud = g;
		g->path = cctl_xstrfmt("%s.%llu.part", archive,
				       (unsigned long long)starts[k]);
		g->p.ctx = &g->ctx;
		g->p.path = g->path;
		g->p.fd = -1;
		g->p.ranged = 1;
		g->p.base = starts[k];
		g->p.end = k + 1 < n ? starts[k + 1] : p0->size;
		g->p.total = g->p.end - g->p.base;
		g->p.size = p0->size;
		g->p.ranges = rs;
		g->p.feed = p0->feed;
		if ((ret = cctl__part_open(&g->p)))
			return cctl__error(rs->ctx, ret, "%s", g->ctx.msg);
		rs->have += g->p.have;
	}
	return 0;
}

/* Waits for the other connections, saying how far the download is. */
static void ranges_wait(struct cctl__ranges *rs)
{
	for (;;) {
		size_t busy;
		uint64_t have;
		cctl_os_sync_lock(rs->sync);
		busy = rs->busy;
		have = rs->have;
		cctl_os_sync_unlock(rs->sync);
		pass_warnings(rs);
		cctl__progress(rs->ctx, CCTL_PHASE_DOWNLOAD, have, rs->p0->size);
		if (!busy)
			break;
		cctl_os_sleep_ms(100);
	}
	for (size_t k = 0; k < rs->nw; k++)
		cctl_os_thread_join(rs->w[k]);
	rs->nw = 0;
	pass_warnings(rs);
}

/* Appends range k to NAME.part, hashing it, and deletes its file. */
static int append_range(struct cctl__ranges *rs, size_t k, unsigned char *buf)
{
	struct cctl__part *p0 = rs->p0;
	struct range *g = &rs->r[k];
	size_t got;
	int fd = -1, ret;
	cctl_os_close(g->p.fd);
	g->p.fd = -1;
	if ((ret = cctl_os_open_read(rs->ctx, g->path, &fd)))
		return ret;
	if (!p0->h) { /* nothing to hash here: the kernel may copy it */
		uint64_t done;
		ret = cctl_os_copy_fast(rs->ctx, fd, g->path, p0->fd, p0->path,
					g->p.total, &done);
		p0->have += done;
	}
	while (!ret && !(ret = cctl_os_read(rs->ctx, fd, g->path, buf, 1 << 20, &got)) &&
	       got &&
	       !(ret = cctl_os_write_all(rs->ctx, p0->fd, p0->path, buf, got))) {
		if (p0->h)
			cctl_sha256_update(p0->h, buf, got);
		p0->have += got;
	}
	cctl_os_close(fd);
	if (!ret && p0->have != g->p.end)
		ret = cctl__error(rs->ctx, CCTL_EMISMATCH,
				  "'%s' changed while it was appended", g->path);
	if (!ret) {
		/* a reader going along reads it in NAME.part now */
		cctl__feed_moved(p0->feed, g->p.base, p0->path);
		cctl_os_unlink(NULL, g->path);
	}
	return ret ? ret : cctl__interrupt(rs->ctx);
}

/* Whether range k is in (waiting for it with wait, saying how far the
 * download is meanwhile); 0 once one failed. */
static int range_in(struct cctl__ranges *rs, size_t k, int wait)
{
	struct range *g = &rs->r[k];
	int in;
	cctl_os_sync_lock(rs->sync);
	while (wait && !g->done && !rs->failed && !rs->stop) {
		uint64_t have = rs->have;
		cctl_os_sync_unlock(rs->sync);
		pass_warnings(rs);
		cctl__progress(rs->ctx, CCTL_PHASE_DOWNLOAD, have, rs->p0->size);
		cctl_os_sleep_ms(10);
		cctl_os_sync_lock(rs->sync);
	}
	in = g->done && !g->ret && !g->p.norange;
	cctl_os_sync_unlock(rs->sync);
	return in;
}

/*
 * Appends the ranges to NAME.part in order, each once it is in (waiting
 * for it with wait), from the first not yet appended on, until one is
 * missing.  The command's thread does this while the other connections
 * fetch, so that the copy and the hash are done by the time the last range
 * is in; a failure of its own stops them.
 */
static int ranges_join(struct cctl__ranges *rs, int wait)
{
	unsigned char *buf = cctl_xmalloc(1 << 20);
	int ret = 0;
	while (!ret && rs->joined + 1 < rs->n && range_in(rs, rs->joined + 1, wait))
		if (!(ret = append_range(rs, rs->joined + 1, buf)))
			rs->joined++;
	free(buf);
	if (ret) {
		cctl_os_sync_lock(rs->sync);
		rs->stop = 1;
		cctl_os_sync_unlock(rs->sync);
	}
	return ret;
}

/* Once range 0 is in, on the command's thread: a connection in its place,
 * then the ranges appended as they come in (or, with no thread to fetch
 * them, fetched here first). */
static int ranges_take_in(struct cctl__ranges *rs)
{
	add_connections(rs, connections(rs->o));
	if (!rs->nw)
		work(rs, 1);
	return ranges_join(rs, 1);
}

/* The first failure: range 0's, else the first range's, its message
 * copied; each range file closed, and deleted when its bytes are wrong,
 * the command was stopped, or it is empty. */
static int ranges_fail(struct cctl__ranges *rs, int ret0)
{
	int ret = ret0;
	for (size_t k = 1; k < rs->n; k++) {
		struct range *g = &rs->r[k];
		if (!ret && g->ret) {
			ret = cctl__error(rs->ctx, g->ret, "%s", g->ctx.msg);
			if (g->ctx.hint[0])
				cctl__hint(rs->ctx, "%s", g->ctx.hint);
		}
	}
	for (size_t k = 1; k < rs->n && !ret; k++)
		if (!rs->r[k].done) /* none failed, so each was taken */
			ret = cctl__error(rs->ctx, CCTL_ENETWORK,
					  "the range of '%s' from byte %llu was "
					  "never fetched",
					  rs->url,
					  (unsigned long long)rs->r[k].p.base);
	for (size_t k = 1; k < rs->n; k++)
		cctl__part_abandon(&rs->r[k].p, ret);
	return ret;
}

static void ranges_free(struct cctl__ranges *rs, struct cctl_fetch_result *res)
{
	for (size_t k = 1; k < rs->n; k++) {
		struct range *g = &rs->r[k];
		if (g->p.fd >= 0)
			cctl_os_close(g->p.fd);
		res->attempts += g->res.attempts;
		res->downloaded += g->p.received;
		free(g->path);
	}
	if (rs->sync)
		cctl_os_sync_free(rs->sync);
	cctl_buf_release(&rs->warnings);
	free(rs);
}

/* Back to one connection: the range files deleted, range 0 unbounded. */
static void one_connection(struct cctl__ranges *rs)
{
	cctl__feed_keep(rs->p0->feed, rs->p0->path, rs->p0->have);
	for (size_t k = 1; k < rs->n; k++) {
		struct range *g = &rs->r[k];
		if (g->p.fd >= 0)
			cctl_os_close(g->p.fd);
		g->p.fd = -1;
		cctl_os_unlink(NULL, g->path);
	}
	rs->p0->end = 0;
	rs->p0->total = rs->p0->size;
	rs->p0->ranges = NULL;
}

/* The size of a piece of an archive read as it arrives. */
static uint64_t piece_size(uint64_t size)
{
	uint64_t v = size / (MAX_RANGES - 1);
	return v > range_min() ? v : range_min();
}

/*
 * A download read as it arrives, taken up again: the rest of each range
 * after the bytes its file holds is cut into pieces of its own (the range
 * then ends where its file does), earliest first, as far as MAX_RANGES
 * allows.  The new number of ranges.
 */
static size_t split_rests(const char *archive, const struct cctl__part *p0,
			  uint64_t *starts, size_t n)
{
	uint64_t out[MAX_RANGES], piece = piece_size(p0->size);
	size_t m = 0;
	for (size_t k = 0; k < n; k++) {
		uint64_t end = k + 1 < n ? starts[k + 1] : p0->size;
		uint64_t at = p0->have;
		if (k) {
			struct cctl_os_stat st;
			char *path = cctl_xstrfmt("%s.%llu.part", archive,
						  (unsigned long long)starts[k]);
			at = starts[k];
			if (!cctl_os_stat(NULL, path, &st) &&
			    st.type == CCTL_OS_FILE)
				at += st.size;
			free(path);
		}
		out[m++] = starts[k];
		if (at <= starts[k]) /* nothing held: its first piece is its own */
			at = starts[k] + piece;
		while (at + range_min() <= end && m + (n - k - 1) < MAX_RANGES) {
			out[m++] = at;
			at += piece;
		}
	}
	memcpy(starts, out, m * sizeof(*out));
	return m;
}

/*
 * The n pieces of the rest bytes from from on, for a reader going along
 * (starts[1] to starts[n - 1]): the first ones small, a quarter of the
 * smallest range and growing by a third, as long as that is less than an
 * equal share of what is left, the others equal.  All start at once and
 * the reader needs them in order, so equal pieces would have it wait for
 * the first one at a connection's share of the link
 * (docs/benchmarks-download.md, "pieces in order").
 */
static void ramp(uint64_t from, uint64_t rest, size_t n, uint64_t *starts)
{
	uint64_t at = from, end = from + rest, s = piece_min();
	size_t k = 1;
	for (; k < n && s < (end - at) / (n - k + 1); k++, s += s / 3) {
		at += s;
		starts[k] = at;
	}
	for (size_t left = n - k + 1, j = 1; k < n; k++, j++)
		starts[k] = at + j * ((end - at) / left);
}

/*
 * Where the ranges start: those an earlier run left, else the rest of the
 * archive after what NAME.part holds cut into one range per connection,
 * or, for a reader going along, into pieces; their number, 1 for one
 * connection.
 */
static size_t plan(const char *archive, struct cctl__part *p0,
		   const struct cctl_fetch_opts *o, uint64_t *starts)
{
	size_t want = connections(o), n = leftover(archive, p0->size, starts + 1);
	/* (one connection asked for: the caller deletes what was left) */
	uint64_t rest = p0->size - p0->have, chunk;
	uint64_t least = p0->feed ? piece_min() : range_min();

	uint64_t tail = cctl__feed_tail(p0->feed);

	starts[0] = 0;
	if (n)
		return p0->feed && want > 1 ? split_rests(archive, p0, starts, n + 1)
					    : n + 1;
	/* a reader that needs the end first (a zip's central directory)
	 * gets it as a range of its own, taken first */
	if (tail && want > 1 && rest > tail + range_min())
		rest -= tail;
	else
		tail = 0;
	if (p0->feed && want > 1)
		want = FEED_PIECES - (tail != 0);
	for (n = want; n > 1 && rest / n < least; n--)
		;
	if (n < 2 && !tail)
		return 1;
	if (p0->feed && n > 1) {
		ramp(p0->have, rest, n, starts);
	} else {
		chunk = rest / n;
		for (size_t k = 1; k < n; k++)
			starts[k] = p0->have + k * chunk;
	}
	if (tail)
		starts[n++] = p0->size - tail;
	return n;
}

/* The order the ranges after 0 are taken in: a tail the reader needs
 * first (feed.h), then the rest from the start on. */
static void ranges_order(struct cctl__ranges *rs)
{
	uint64_t tail = cctl__feed_tail(rs->p0->feed);
	size_t m = 0, last = rs->n - 1, first = 0;
	if (tail && last > 1 && rs->r[last].p.base == rs->p0->size - tail)
		rs->order[m++] = first = last;
	for (size_t k = 1; k < rs->n; k++)
		if (k != first)
			rs->order[m++] = k;
}

/* NAME.part cut to size bytes, and taken up again. */
static int cut_back(struct cctl__part *p0, uint64_t size)
{
	char ignore[65];
	int ret;
	/* before the cut, a reader going along stops reading it (and closes
	 * it): it was told of the bytes past size, and would read short; it
	 * gets them again, the same, from the range's own file */
	cctl__feed_forget(p0->feed, p0->path);
	ret = cctl_os_truncate(p0->ctx, p0->fd, p0->path, size);
	cctl_os_close(p0->fd);
	p0->fd = -1;
	if (p0->h)
		cctl_sha256_final(p0->h, ignore);
	p0->h = NULL;
	p0->have = 0;
	return ret ? ret : cctl__part_open(p0);
}

int cctl__ranges_fetch(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		       const char *url, const char *archive,
		       struct cctl__part *p0, struct cctl_fetch_result *res,
		       int *handled)
{
	uint64_t starts[MAX_RANGES];
	struct cctl__ranges *rs;
	size_t n = plan(archive, p0, o, starts);
	int ret = 0, ret0 = 0, norange = 0;

	*handled = 0;
	if (n == 1)
		return 0;
	rs = cctl_xcalloc(1, sizeof(*rs));
	rs->ctx = ctx;
	rs->o = o;
	rs->url = url;
	rs->p0 = p0;
	cctl_buf_init(&rs->warnings);
	for (size_t k = 0; k < MAX_RANGES; k++)
		rs->r[k].p.fd = -1;
	if (connections(o) < 2 || !(rs->sync = cctl_os_sync_new())) {
		/* --connections 1 with ranges left, or no threads: one
		 * connection from what NAME.part holds */
		rs->n = n;
		for (size_t k = 1; k < n; k++)
			rs->r[k].path = cctl_xstrfmt("%s.%llu.part", archive,
						     (unsigned long long)starts[k]);
		one_connection(rs);
		ranges_free(rs, res);
		return 0;
	}
	/* an append to NAME.part cut short: the first range left holds the
	 * bytes NAME.part has past its start, so NAME.part is cut back there
	 * (and hashed again) */
	if (p0->have > starts[1] && (ret = cut_back(p0, starts[1])))
		goto out;
	if ((ret = ranges_open(rs, archive, starts, n)))
		goto out;
	ranges_order(rs);
	*handled = 1;
	p0->end = p0->total = starts[1];
	p0->ranges = rs;
	if (p0->have < p0->total)
		ret0 = fetch_range(ctx, rs, p0, res);
	else
		cctl__ranges_go(rs);
	if (ret0 || p0->norange) {
		cctl_os_sync_lock(rs->sync);
		rs->stop = 1;
		cctl_os_sync_unlock(rs->sync);
	} else {
		ret = ranges_take_in(rs);
	}
	ranges_wait(rs);
	for (size_t k = 1; k < n; k++)
		norange |= rs->r[k].p.norange;
	if (p0->norange) {
		/* range 0 took the whole file over one connection */
		one_connection(rs);
		ret = ret0;
	} else if (norange && !ret0 && !ret) {
		/* what NAME.part holds so far goes on over one connection */
		one_connection(rs);
		*handled = 0;
	} else if ((ret = ranges_fail(rs, ret0 ? ret0 : ret)) == 0) {
		p0->ranges = NULL;
		p0->end = 0;
		p0->total = p0->size;
		ret = ranges_join(rs, 0);
		if (!ret && p0->have != p0->size)
			ret = cctl__error(ctx, CCTL_ENETWORK,
					  "cannot download '%s': its ranges "
					  "end at byte %llu",
					  url, (unsigned long long)p0->have);
	}
out:
	p0->ranges = NULL;
	p0->end = 0;
	p0->total = p0->size;
	ranges_free(rs, res);
	return ret;
}

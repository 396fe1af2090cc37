/*
 * xz decoding on several threads: the only file that uses liblzma
 * directly.  A tar.xz may hold several xz blocks (xz -T writes them).  A
 * file on the disk whose index says so has its blocks decoded by threads
 * of ours, each block as a whole (blocks mode, below); a file still
 * downloading, by the multi-threaded decoder of liblzma (5.4 and later).
 * A stream of one block is decoded on one thread, the caller's
 * (archive-read.c calls from a thread of its own, ahead of the scan, and
 * reads the decoded tar into libarchive through its callbacks).
 */
#include <stdlib.h>
#include <string.h>

#include <lzma.h>

#include "../platform/os.h"
#include "internal.h"

/* liblzma's threaded decoder (for a tar.xz still downloading, whose index
 * is not there yet): above this, it gives up threads rather than memory,
 * each thread holding a whole block and its input.  Measured (2026-11-30, peak RSS
 * of a whole install of a tar.xz of 3 MiB blocks, xz -T -1): 40 MiB let
 * 8 threads take the install to 79 MB; 28 MiB keeps it at 54 MB with 4 or
 * 16 jobs, under the 64 MB the install promises.  Blocks of xz -T -6
 * (24 MiB) decode on one thread within this limit (two would need about
 * 180 MB: xz -dc -T2 takes 184 MB). */
#define THREAD_MEMLIMIT (28u << 20)

struct blocks;

struct cctl__xz {
	lzma_stream s;
	cctl__xz_fill_fn fill;
	void *ud;
	int in_eof, done;
	const char *err;
	int nomem; /* the error was liblzma's out of memory */
	struct blocks *b; /* blocks mode: the blocks and their threads */
};

int cctl__xz_magic(const void *buf, size_t n)
{
	return n >= 6 && !memcmp(buf, "\xfd" "7zXZ\0", 6);
}

struct cctl__xz *cctl__xz_new(unsigned threads, cctl__xz_fill_fn fill,
			      void *ud)
{
	struct cctl__xz *x = cctl_xcalloc(1, sizeof(*x));
	lzma_mt mt;
	lzma_ret r;
	x->s = (lzma_stream)LZMA_STREAM_INIT;
	x->fill = fill;
	x->ud = ud;
	memset(&mt, 0, sizeof(mt));
	mt.flags = LZMA_CONCATENATED;
	mt.threads = threads;
	mt.memlimit_threading = THREAD_MEMLIMIT;
	mt.memlimit_stop = UINT64_MAX;
	/* one thread: the plain decoder, which keeps no block buffers */
	r = threads > 1 ? lzma_stream_decoder_mt(&x->s, &mt) : LZMA_PROG_ERROR;
	if (r != LZMA_OK)
		r = lzma_stream_decoder(&x->s, UINT64_MAX, LZMA_CONCATENATED);
	if (r != LZMA_OK) {
		free(x);
		return NULL;
	}
	return x;
}

static const char *why(lzma_ret r)
{
	switch (r) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_FORMAT_ERROR:
		return "not in the xz format";
	case LZMA_OPTIONS_ERROR:
		return "unsupported xz options";
	case LZMA_DATA_ERROR:
		return "the compressed data is damaged";
	case LZMA_BUF_ERROR:
		return "the compressed data ends too soon";
	default:
		return "xz decoding failed";
	}
}

uint64_t cctl__xz_index_size(const void *footer)
{
	lzma_stream_flags f;
	if (lzma_stream_footer_decode(&f, footer) != LZMA_OK)
		return 0;
	return f.backward_size;
}

uint64_t cctl__xz_block_count(const void *index, size_t n)
{
	lzma_index *idx = NULL;
	uint64_t memlimit = 16u << 20, count;
	size_t pos = 0;
	if (lzma_index_buffer_decode(&idx, &memlimit, NULL, index, &pos, n) !=
	    LZMA_OK)
		return 0;
	count = lzma_index_block_count(idx);
	lzma_index_end(idx, NULL);
	return count;
}

long cctl__xz_read(struct cctl__xz *x, void *out, size_t cap)
{
	x->s.next_out = out;
	x->s.avail_out = cap;
	while (x->s.avail_out && !x->done) {
		lzma_ret r;
		if (!x->s.avail_in && !x->in_eof) {
			const void *in;
			size_t n;
			if (x->fill(x->ud, &in, &n)) {
				x->err = NULL; /* the reader said what */
				return -1;
			}
			x->s.next_in = in;
			x->s.avail_in = n;
			x->in_eof = !n;
		}
		r = lzma_code(&x->s, x->in_eof ? LZMA_FINISH : LZMA_RUN);
		if (r == LZMA_STREAM_END) {
			x->done = 1;
		} else if (r != LZMA_OK) {
			x->err = why(r);
			x->nomem = r == LZMA_MEM_ERROR;
			return -1;
		}
	}
	return (long)(cap - x->s.avail_out);
}

const char *cctl__xz_error(const struct cctl__xz *x)
{
	return x->err;
}

int cctl__xz_nomem(const struct cctl__xz *x)
{
	return x->nomem;
}

static void blocks_free(struct blocks *bs);

void cctl__xz_free(struct cctl__xz *x)
{
	if (!x)
		return;
	blocks_free(x->b);
	lzma_end(&x->s);
	free(x);
}

/*
 * Blocks mode.  A file's index (at its end, read before the decoding)
 * gives each block's place and sizes, so that each can be decoded on its
 * own, as xz -dc -T does.  liblzma's threaded decoder holds a whole
 * block's input and output for each thread within its memory limit: for
 * xz -6's blocks (24 MiB, which cuDNN's libraries barely compress) two
 * threads took 132 MB.  Here a block's input and output are in chunks
 * of a pool, given back as they are decoded and as they are read, so that
 * two workers take about 105 MB in all (docs/benchmarks.md).
 *
 * The caller's thread reads the file in order through fill (which hashes
 * it) and hands each block's bytes to the workers a chunk at a time, as
 * many blocks ahead of the one it reads as workers_for allows: a worker
 * starts on a block once its first chunk is in, so that a file still
 * downloading is decoded as its bytes arrive, not a block behind them
 * (measured in docs/benchmarks-download.md); it reads the decoded bytes
 * in order, each block's as they come.  At the end it reads the index and
 * the footer again and checks that they are the bytes the plan was made
 * from, and that the file ends there: what was decoded is what was
 * hashed, the whole file.  A block's failure is told when the reading
 * gets to it, after the bytes decoded before it.
 */
/* The memory the blocks may take, as workers_for estimates it. */
#define BLOCKS_MEMLIMIT (100u << 20)
#define MAX_WORKERS 16
#define CHUNK ((size_t)1 << 20)

struct xblock {
	uint64_t in_size, unpadded, out_size;
	unsigned char **in;  /* the input in chunks: the caller's, then the worker's */
	unsigned char **out; /* the output in chunks, made by the worker */
	size_t nin, nout;
	uint64_t filled;     /* bytes decoded (the lock's) */
	size_t ready;        /* chunks of in read by the caller (the lock's) */
	int cut;             /* the caller could not read the rest (the lock's) */
	int state;           /* 1 decoded, -1 failed (the lock's) */
	const char *err;
	int nomem;
};

struct blocks {
	struct cctl_os_sync *sync;
	struct cctl_os_thread *w[MAX_WORKERS];
	unsigned nw;
	lzma_check check;
	struct xblock *v;
	size_t n;
	size_t cur;          /* the block being read */
	size_t alive;        /* blocks sent and not read, at most */
	size_t sent;         /* blocks handed to the workers */
	size_t taken;        /* ... and taken by one (the lock's) */
	uint64_t consumed;   /* bytes of v[cur] read */
	size_t given;        /* what the last call gave, not yet counted */
	int stop;            /* the lock's */
	int started;         /* the stream header was read */
	unsigned char head[LZMA_STREAM_HEADER_SIZE];
	unsigned char *tail; /* the index and the footer */
	size_t tail_len;
	const unsigned char *pin; /* fill's bytes not taken yet */
	size_t pin_len;
	unsigned char *pool; /* chunks free for use again (the lock's) */
};

static size_t chunk_len(uint64_t size, size_t i)
{
	uint64_t left = size - (uint64_t)i * CHUNK;
	return left < CHUNK ? (size_t)left : CHUNK;
}

static size_t chunks(uint64_t size)
{
	return (size_t)((size + CHUNK - 1) / CHUNK);
}

/*
 * The chunks of input and output, all of CHUNK bytes, go back to a pool
 * when done with and are taken from there again, whichever thread took
 * them: freed to malloc, each thread's arena kept its own high water
 * (measured, xz -6's blocks on two workers: 106 MB with malloc and free,
 * 82 MB with the pool, and a third of the system time).  A free chunk
 * holds the pointer to the next.
 */
static void put_locked(struct blocks *bs, unsigned char *p)
{
	if (!p)
		return;
	memcpy(p, &bs->pool, sizeof(bs->pool));
	bs->pool = p;
}

static void put(struct blocks *bs, unsigned char *p)
{
	cctl_os_sync_lock(bs->sync);
	put_locked(bs, p);
	cctl_os_sync_unlock(bs->sync);
}

static unsigned char *get(struct blocks *bs)
{
	unsigned char *p;
	cctl_os_sync_lock(bs->sync);
	if ((p = bs->pool))
		memcpy(&bs->pool, p, sizeof(bs->pool));
	cctl_os_sync_unlock(bs->sync);
	return p ? p : malloc(CHUNK);
}

static void put_all_locked(struct blocks *bs, unsigned char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		put_locked(bs, v[i]);
	free(v);
}

/* The workers' decoding of b, each chunk of its input once the caller
 * has read it (a file still downloading: as its bytes arrive). */
static int decode_block(struct blocks *bs, struct xblock *b)
{
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	lzma_block blk;
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret r;
	unsigned char spare;
	uint64_t made = 0;
	size_t ci = 0, len0 = chunk_len(b->in_size, 0);
	int stop = 0;
	memset(&blk, 0, sizeof(blk));
	blk.version = 1;
	blk.check = bs->check;
	blk.filters = filters;
	blk.header_size = lzma_block_header_size_decode(b->in[0][0]);
	if (!b->in[0][0] || blk.header_size > len0 || blk.header_size >= b->in_size)
		return LZMA_DATA_ERROR;
	if ((r = lzma_block_header_decode(&blk, NULL, b->in[0])) != LZMA_OK)
		return r;
	r = lzma_block_compressed_size(&blk, b->unpadded);
	if (r == LZMA_OK && blk.uncompressed_size != LZMA_VLI_UNKNOWN &&
	    blk.uncompressed_size != b->out_size)
		r = LZMA_DATA_ERROR;
	blk.uncompressed_size = b->out_size;
	if (r == LZMA_OK)
		r = lzma_block_decoder(&s, &blk);
	for (size_t i = 0; filters[i].id != LZMA_VLI_UNKNOWN; i++)
		free(filters[i].options);
	if (r != LZMA_OK)
		return r;
	s.next_in = b->in[0] + blk.header_size;
	s.avail_in = len0 - blk.header_size;
	while (r == LZMA_OK && !stop) {
		size_t room;
		if (!s.avail_in && ci + 1 < b->nin) {
			cctl_os_sync_lock(bs->sync);
			while (b->ready <= ci + 1 && !b->cut && !bs->stop)
				cctl_os_sync_wait(bs->sync);
			stop = bs->stop;
			if (b->ready <= ci + 1) /* the rest never comes */
				r = LZMA_BUF_ERROR;
			put_locked(bs, b->in[ci]);
			b->in[ci++] = NULL;
			cctl_os_sync_unlock(bs->sync);
			if (stop || r != LZMA_OK)
				break;
			s.next_in = b->in[ci];
			s.avail_in = chunk_len(b->in_size, ci);
		}
		if (!s.avail_out) {
			size_t k = (size_t)(made / CHUNK);
			if (made < b->out_size) {
				if (!(b->out[k] = get(bs))) {
					r = LZMA_MEM_ERROR;
					break;
				}
				s.next_out = b->out[k];
				s.avail_out = chunk_len(b->out_size, k);
			} else { /* more than the index says: an error */
				s.next_out = &spare;
				s.avail_out = 1;
			}
		}
		room = s.avail_out;
		r = lzma_code(&s, ci + 1 == b->nin ? LZMA_FINISH : LZMA_RUN);
		if (s.next_out == &spare + 1) {
			r = LZMA_DATA_ERROR;
		} else if (room != s.avail_out) {
			made += room - s.avail_out;
			cctl_os_sync_lock(bs->sync);
			b->filled = made;
			stop = bs->stop;
			cctl_os_sync_broadcast(bs->sync);
			cctl_os_sync_unlock(bs->sync);
		}
	}
	lzma_end(&s);
	if (r == LZMA_STREAM_END)
		r = made == b->out_size ? LZMA_OK : LZMA_DATA_ERROR;
	return stop ? LZMA_OK : r;
}

static void worker(void *arg)
{
	struct blocks *bs = arg;
	cctl_os_sync_lock(bs->sync);
	for (;;) {
		struct xblock *b;
		lzma_ret r;
		while (!bs->stop && bs->taken == bs->sent)
			cctl_os_sync_wait(bs->sync);
		if (bs->stop)
			break;
		b = &bs->v[bs->taken++];
		cctl_os_sync_unlock(bs->sync);
		r = decode_block(bs, b);
		cctl_os_sync_lock(bs->sync);
		/* a block that failed early: its input is the caller's until
		 * the caller has read all of it (or could not) */
		while (b->ready < b->nin && !b->cut && !bs->stop)
			cctl_os_sync_wait(bs->sync);
		for (size_t i = 0; i < b->nin; i++) { /* what is left of it */
			put_locked(bs, b->in[i]);
			b->in[i] = NULL;
		}
		b->state = r == LZMA_OK ? 1 : -1;
		b->err = r == LZMA_OK ? NULL : why(r);
		b->nomem = r == LZMA_MEM_ERROR;
		cctl_os_sync_broadcast(bs->sync);
	}
	cctl_os_sync_unlock(bs->sync);
}

static void blocks_free(struct blocks *bs)
{
	if (!bs)
		return;
	cctl_os_sync_lock(bs->sync);
	bs->stop = 1;
	cctl_os_sync_broadcast(bs->sync);
	cctl_os_sync_unlock(bs->sync);
	for (unsigned i = 0; i < bs->nw; i++)
		cctl_os_thread_join(bs->w[i]);
	for (size_t i = 0; i < bs->n; i++) {
		put_all_locked(bs, bs->v[i].in, bs->v[i].nin);
		put_all_locked(bs, bs->v[i].out, bs->v[i].nout);
	}
	while (bs->pool) {
		unsigned char *p = bs->pool;
		memcpy(&bs->pool, p, sizeof(bs->pool));
		free(p);
	}
	cctl_os_sync_free(bs->sync);
	free(bs->v);
	free(bs->tail);
	free(bs);
}

/* The memory liblzma's decoder of the block whose header is at p takes,
 * UINT64_MAX when it is not a block header. */
static uint64_t block_memusage(const unsigned char *p, size_t n, lzma_check check)
{
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	lzma_block blk;
	uint64_t use;
	memset(&blk, 0, sizeof(blk));
	blk.version = 1;
	blk.check = check;
	blk.filters = filters;
	if (!n || !p[0] || (blk.header_size = lzma_block_header_size_decode(p[0])) > n ||
	    lzma_block_header_decode(&blk, NULL, p) != LZMA_OK)
		return UINT64_MAX;
	use = lzma_raw_decoder_memusage(filters);
	for (size_t i = 0; filters[i].id != LZMA_VLI_UNKNOWN; i++)
		free(filters[i].options);
	return use;
}

/* The blocks of the index in tail (index and footer), in bs; 0 when they
 * are not one stream of file_size bytes. */
static int read_index(struct blocks *bs, const unsigned char *tail, size_t tail_len,
		      uint64_t file_size, uint64_t *max_in, uint64_t *max_out)
{
	lzma_stream_flags ff;
	lzma_index *idx = NULL;
	lzma_index_iter it;
	uint64_t memlimit = 16u << 20, off = LZMA_STREAM_HEADER_SIZE;
	size_t pos = 0, i = 0;
	int ok = 1;
	if (lzma_stream_footer_decode(&ff, tail + tail_len - LZMA_STREAM_HEADER_SIZE) !=
		    LZMA_OK ||
	    ff.backward_size != tail_len - LZMA_STREAM_HEADER_SIZE ||
	    lzma_index_buffer_decode(&idx, &memlimit, NULL, tail, &pos,
				     tail_len - LZMA_STREAM_HEADER_SIZE) != LZMA_OK)
		return 0;
	if (lzma_index_stream_flags(idx, &ff) != LZMA_OK ||
	    lzma_index_file_size(idx) != file_size ||
	    (bs->n = (size_t)lzma_index_block_count(idx)) < 2 ||
	    bs->n > SIZE_MAX / sizeof(*bs->v)) {
		lzma_index_end(idx, NULL);
		return 0;
	}
	bs->v = cctl_xcalloc(bs->n, sizeof(*bs->v));
	*max_in = *max_out = 0;
	lzma_index_iter_init(&it, idx);
	while (ok && i < bs->n && !lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK)) {
		struct xblock *b = &bs->v[i++];
		b->in_size = it.block.total_size;
		b->unpadded = it.block.unpadded_size;
		b->out_size = it.block.uncompressed_size;
		ok = it.block.compressed_file_offset == off && b->in_size &&
		     b->out_size <= SIZE_MAX / 2;
		off += b->in_size;
		if (b->in_size > *max_in)
			*max_in = b->in_size;
		if (b->out_size > *max_out)
			*max_out = b->out_size;
	}
	lzma_index_end(idx, NULL);
	return ok && i == bs->n;
}

/* How many workers (at most want) and blocks in memory at once (*alive)
 * fit in BLOCKS_MEMLIMIT: each block at most the larger of its input and
 * its output (the input's chunks go back to the pool as the output's are
 * taken) and two chunks, each worker a decoder of dec bytes, and at least
 * one block more than the workers (sent while the one being read is
 * decoded already); small blocks get more, so that a worker seldom waits
 * for the scan to read a block before it gets the next. */
static unsigned workers_for(unsigned want, uint64_t max_in, uint64_t max_out,
			    uint64_t dec, size_t *alive)
{
	uint64_t block = (max_in > max_out ? max_in : max_out) + 2 * CHUNK;
	unsigned w = 0;
	if (dec == UINT64_MAX || block > BLOCKS_MEMLIMIT)
		return 0;
	while (w < want && (w + 2) * block + (w + 1) * dec <= BLOCKS_MEMLIMIT)
		w++;
	*alive = (size_t)((BLOCKS_MEMLIMIT - w * dec) / block);
	return w;
}

struct cctl__xz *cctl__xz_blocks_new(unsigned jobs, const void *head, size_t head_len,
				     const void *tail, size_t tail_len,
				     uint64_t file_size, cctl__xz_fill_fn fill, void *ud)
{
	struct blocks *bs;
	struct cctl__xz *x;
	lzma_stream_flags hf;
	uint64_t max_in, max_out, dec;
	unsigned want;
	if (jobs < 2 || head_len < LZMA_STREAM_HEADER_SIZE ||
	    tail_len < 2 * LZMA_STREAM_HEADER_SIZE ||
	    lzma_stream_header_decode(&hf, head) != LZMA_OK)
		return NULL;
	bs = cctl_xcalloc(1, sizeof(*bs));
	bs->check = hf.check;
	if (!read_index(bs, tail, tail_len, file_size, &max_in, &max_out)) {
		free(bs->v);
		free(bs);
		return NULL;
	}
	dec = block_memusage((const unsigned char *)head + LZMA_STREAM_HEADER_SIZE,
			     head_len - LZMA_STREAM_HEADER_SIZE, hf.check);
	want = workers_for(jobs < MAX_WORKERS ? jobs : MAX_WORKERS, max_in, max_out, dec,
			   &bs->alive);
	if (want > bs->n)
		want = (unsigned)bs->n;
	if (want < 2 || !(bs->sync = cctl_os_sync_new())) {
		free(bs->v);
		free(bs);
		return NULL;
	}
	memcpy(bs->head, head, sizeof(bs->head));
	bs->tail = cctl_xmalloc(tail_len);
	memcpy(bs->tail, tail, tail_len);
	bs->tail_len = tail_len;
	while (bs->nw < want && (bs->w[bs->nw] = cctl_os_thread_start(worker, bs)))
		bs->nw++;
	if (bs->nw < 2) {
		blocks_free(bs);
		return NULL;
	}
	x = cctl_xcalloc(1, sizeof(*x));
	x->s = (lzma_stream)LZMA_STREAM_INIT;
	x->fill = fill;
	x->ud = ud;
	x->b = bs;
	return x;
}

unsigned cctl__xz_blocks_threads(const struct cctl__xz *x)
{
	return x && x->b ? x->b->nw : 0;
}

/* The next n bytes of the file, through fill, to dst (NULL: compared
 * with cmp); -1 when they are not there (or not those). */
static int take(struct cctl__xz *x, unsigned char *dst, const unsigned char *cmp,
		size_t n)
{
	struct blocks *bs = x->b;
	while (n) {
		size_t k;
		if (!bs->pin_len) {
			const void *p;
			if (x->in_eof || x->fill(x->ud, &p, &bs->pin_len)) {
				x->err = x->in_eof ? why(LZMA_BUF_ERROR) : NULL;
				return -1;
			}
			bs->pin = p;
			x->in_eof = !bs->pin_len;
			continue;
		}
		k = n < bs->pin_len ? n : bs->pin_len;
		if (dst) {
			memcpy(dst, bs->pin, k);
			dst += k;
		} else if (memcmp(cmp, bs->pin, k)) {
			x->err = "the file changed while it was read";
			return -1;
		} else {
			cmp += k;
		}
		bs->pin += k;
		bs->pin_len -= k;
		n -= k;
	}
	return 0;
}

/* Reads block i's input and hands it to the workers: a worker may start
 * on it once its first chunk is in, and decodes each chunk as it comes. */
static int send_block(struct cctl__xz *x, size_t i)
{
	struct blocks *bs = x->b;
	struct xblock *b = &bs->v[i];
	b->nin = chunks(b->in_size);
	b->nout = chunks(b->out_size);
	b->in = calloc(b->nin, sizeof(*b->in));
	b->out = calloc(b->nout ? b->nout : 1, sizeof(*b->out));
	if (!b->in || !b->out)
		goto nomem;
	for (size_t k = 0; k < b->nin; k++) {
		size_t len = chunk_len(b->in_size, k);
		unsigned char *c = get(bs);
		if (!c)
			goto nomem;
		if (take(x, c, NULL, len)) {
			put(bs, c);
			goto cut;
		}
		cctl_os_sync_lock(bs->sync);
		b->in[k] = c;
		b->ready = k + 1;
		if (!k)
			bs->sent = i + 1;
		cctl_os_sync_broadcast(bs->sync);
		cctl_os_sync_unlock(bs->sync);
	}
	return 0;
nomem:
	x->err = why(LZMA_MEM_ERROR);
	x->nomem = 1;
cut:
	cctl_os_sync_lock(bs->sync);
	b->cut = 1;
	cctl_os_sync_broadcast(bs->sync);
	cctl_os_sync_unlock(bs->sync);
	return -1;
}

/* The end of the file: its index and footer as planned, then nothing. */
static long blocks_end(struct cctl__xz *x)
{
	struct blocks *bs = x->b;
	const void *p;
	size_t n;
	if (take(x, NULL, bs->tail, bs->tail_len))
		return -1;
	if (!bs->pin_len && !x->in_eof) {
		if (x->fill(x->ud, &p, &n)) {
			x->err = NULL;
			return -1;
		}
		bs->pin_len = n;
		x->in_eof = !n;
	}
	if (bs->pin_len) {
		x->err = "the file changed while it was read";
		return -1;
	}
	x->done = 1;
	return 0;
}

long cctl__xz_next(struct cctl__xz *x, const void **out)
{
	struct blocks *bs = x->b;
	struct xblock *b;
	long n = -1;
	if (x->done)
		return 0;
	if (x->err || (!bs->started && take(x, NULL, bs->head, sizeof(bs->head))))
		return -1;
	bs->started = 1;
	cctl_os_sync_lock(bs->sync);
	/* what the last call gave has been read: its chunks are done with */
	bs->consumed += bs->given;
	bs->given = 0;
	for (;;) {
		b = bs->cur < bs->n ? &bs->v[bs->cur] : NULL;
		if (b && b->state == 1 && bs->consumed == b->out_size) {
			put_all_locked(bs, b->out, b->nout);
			b->out = NULL;
			free(b->in);
			b->in = NULL;
			bs->cur++;
			bs->consumed = 0;
			continue;
		}
		if (bs->sent < bs->n && bs->sent < bs->cur + bs->alive) {
			size_t i = bs->sent;
			cctl_os_sync_unlock(bs->sync);
			if (send_block(x, i))
				return -1;
			cctl_os_sync_lock(bs->sync);
			continue;
		}
		if (!b) {
			cctl_os_sync_unlock(bs->sync);
			return blocks_end(x);
		}
		if (b->filled > bs->consumed) {
			size_t k = (size_t)(bs->consumed / CHUNK);
			size_t off = (size_t)(bs->consumed % CHUNK);
			uint64_t avail = b->filled - bs->consumed;
			size_t room = chunk_len(b->out_size, k) - off;
			if (k && b->out[k - 1]) { /* the chunk before is read */
				put_locked(bs, b->out[k - 1]);
				b->out[k - 1] = NULL;
			}
			*out = b->out[k] + off;
			n = (long)(avail < room ? avail : room);
			bs->given = (size_t)n;
			break;
		}
		if (b->state < 0) {
			x->err = b->err;
			x->nomem = b->nomem;
			break;
		}
		cctl_os_sync_wait(bs->sync);
	}
	cctl_os_sync_unlock(bs->sync);
	return n;
}

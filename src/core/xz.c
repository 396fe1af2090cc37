/*
 * xz decoding on several threads: the only file that uses liblzma
 * directly.  A tar.xz may hold several xz blocks (xz -T writes them); the
 * multi-threaded decoder of liblzma (5.4 and later) decodes them at once.
 * A stream of one block is decoded on one thread, the caller's
 * (archive-read.c calls from a thread of its own, ahead of the scan, and
 * reads the decoded tar into libarchive through its callbacks).
 */
#include <stdlib.h>
#include <string.h>

#include <lzma.h>

#include "internal.h"

/* Above this, the decoder gives up threads rather than memory: each
 * thread holds a whole block and its input.  Measured (2026-11-30, peak RSS
 * of a whole install of a tar.xz of 3 MiB blocks, xz -T -1): 40 MiB let
 * 8 threads take the install to 79 MB; 28 MiB keeps it at 54 MB with 4 or
 * 16 jobs, under the 64 MB the install promises.  Blocks of xz -T -6
 * (24 MiB) decode on one thread within this limit (two would need about
 * 180 MB: xz -dc -T2 takes 184 MB). */
#define THREAD_MEMLIMIT (28u << 20)

struct cctl__xz {
	lzma_stream s;
	cctl__xz_fill_fn fill;
	void *ud;
	int in_eof, done;
	const char *err;
	int nomem; /* the error was liblzma's out of memory */
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

void cctl__xz_free(struct cctl__xz *x)
{
	if (!x)
		return;
	lzma_end(&x->s);
	free(x);
}

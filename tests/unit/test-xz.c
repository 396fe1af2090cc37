/* Decoding a file's xz blocks on threads of its own (src/core/xz.c's
 * blocks mode): the very bytes of liblzma's one-thread decoder, however
 * the file's bytes come; blocks mode only where the index allows it; a
 * damaged block, and a file that changed between the plan (made from its
 * index) and the reading, are errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/core/internal.h"
#include "harness.h"

#define ONE "cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz"
#define MANY "multiblock.tar.xz" /* the same tar in blocks of 16 KiB */
#define BIG "bigblocks.xz" /* 8 MiB in blocks of 3 MiB, each > 1 MiB packed */

static const char *fixtures(void)
{
	const char *d = getenv("CCTL_FIXTURES");
	return d ? d : "fixtures";
}

static unsigned char *load(const char *name, size_t *n)
{
	char path[512];
	unsigned char *p = NULL;
	long size;
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", fixtures(), name);
	if (!(f = fopen(path, "rb")))
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (p = malloc((size_t)size)) && fread(p, 1, (size_t)size, f) != (size_t)size) {
		free(p);
		p = NULL;
	}
	*n = p ? (size_t)size : 0;
	fclose(f);
	return p;
}

/* The file's bytes as fill gives them: step at a time. */
struct mem {
	const unsigned char *p;
	size_t n, pos, step;
};

static int mem_fill(void *ud, const void **buf, size_t *len)
{
	struct mem *m = ud;
	size_t k = m->n - m->pos;
	*buf = m->p + m->pos;
	*len = k < m->step ? k : m->step;
	m->pos += *len;
	return 0;
}

/* The plan of f (n bytes, as the file on the disk is), read through m. */
static struct cctl__xz *plan(const unsigned char *f, size_t n, unsigned jobs,
			     struct mem *m)
{
	size_t tail = (size_t)cctl__xz_index_size(f + n - 12) + 12;
	return cctl__xz_blocks_new(jobs, f, n < 1036 ? n : 1036, f + n - tail, tail, n,
				   mem_fill, m);
}

/* The SHA-256 of all x decodes (blocks mode or not); the last count. */
static long decode(struct cctl__xz *x, char hex[65])
{
	static unsigned char buf[70000];
	struct cctl_sha256 *h = cctl_sha256_new();
	long n;
	for (;;) {
		const void *p = buf;
		n = cctl__xz_blocks_threads(x) ? cctl__xz_next(x, &p)
					       : cctl__xz_read(x, buf, sizeof(buf));
		if (n <= 0)
			break;
		cctl_sha256_update(h, p, (size_t)n);
	}
	cctl_sha256_final(h, hex);
	return n;
}

/* The plan of f (n bytes), then len bytes of file read through it, step
 * bytes at a time, on two workers: an error, err (NULL: any message). */
static void read_fails(const unsigned char *f, size_t n, const unsigned char *file,
		       size_t len, size_t step, const char *err)
{
	struct mem m = { file, len, 0, step };
	struct cctl__xz *x;
	char got[65];
	CHECK((x = plan(f, n, 2, &m)) != NULL);
	CHECK_INT(decode(x, got), -1);
	CHECK(cctl__xz_error(x) != NULL);
	if (err)
		CHECK_STR(cctl__xz_error(x), err);
	cctl__xz_free(x);
}

static void blocks_decode_as_one_block(void)
{
	static const size_t steps[] = { 1, 4096, 65536, (1u << 20) + 3 };
	static const unsigned jobs[] = { 2, 3, 4 };
	size_t n1, n;
	unsigned char *one = load(ONE, &n1), *many = load(MANY, &n);
	struct mem m1 = { one, n1, 0, 65536 };
	struct cctl__xz *x;
	char want[65], got[65];
	CHECK(one && many);
	CHECK((x = cctl__xz_new(1, mem_fill, &m1)) != NULL);
	CHECK_INT(decode(x, want), 0);
	cctl__xz_free(x);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
			struct mem m = { many, n, 0, steps[i] };
			CHECK((x = plan(many, n, jobs[j], &m)) != NULL);
			CHECK_INT(cctl__xz_blocks_threads(x), jobs[j]);
			CHECK_INT(decode(x, got), 0);
			CHECK_STR(got, want);
			CHECK_INT(m.pos, n); /* the whole file was read (and hashed) */
			cctl__xz_free(x);
		}
	}
	free(one);
	free(many);
}

static void blocks_only_where_they_can_be(void)
{
	size_t n1, n;
	unsigned char *one = load(ONE, &n1), *many = load(MANY, &n);
	struct mem m = { many, n, 0, 65536 };
	size_t tail;
	CHECK(one && many);
	CHECK(plan(one, n1, 4, &m) == NULL); /* one block: nothing to split */
	CHECK(plan(many, n, 1, &m) == NULL); /* one job */
	/* a size the index does not add up to (bytes after the stream) */
	tail = (size_t)cctl__xz_index_size(many + n - 12) + 12;
	CHECK(cctl__xz_blocks_new(2, many, 1036, many + n - tail, tail, n + 4, mem_fill,
				  &m) == NULL);
	CHECK(cctl__xz_blocks_new(2, many, 1036, many + n - tail + 1, tail - 1, n,
				  mem_fill, &m) == NULL);
	free(one);
	free(many);
}

static void a_damaged_block_is_an_error(void)
{
	size_t n;
	unsigned char *bad = load("multiblock-damaged.tar.xz", &n);
	CHECK(bad != NULL);
	/* (the index is whole: the plan is made) */
	read_fails(bad, n, bad, n, 65536, "the compressed data is damaged");
	free(bad);
}

/* What is read is checked against the plan: an index changed since, a
 * file grown or cut short. */
static void a_file_changed_since_the_plan_is_an_error(void)
{
	size_t n;
	unsigned char *many = load(MANY, &n), *copy;
	CHECK(many != NULL);
	CHECK((copy = calloc(1, n + 4)) != NULL);
	memcpy(copy, many, n);
	copy[n - 14] ^= 1; /* in the index */
	read_fails(many, n, copy, n, 4096, "the file changed while it was read");
	copy[n - 14] ^= 1;
	/* 4 bytes more; half of it */
	read_fails(many, n, copy, n + 4, 4096, "the file changed while it was read");
	read_fails(many, n, copy, n / 2, 4096, "the compressed data ends too soon");
	free(copy);
	free(many);
}

/* Blocks whose input is several of xz.c's chunks, which a worker decodes
 * one by one as the reading hands them over: the same bytes however the
 * file comes; a damaged byte in a block's second chunk, and a file that
 * ends within one, are errors. */
static void blocks_of_several_chunks(void)
{
	static const size_t steps[] = { 4096, 65536, (1u << 20) + 3, 1u << 30 };
	size_t n, nb;
	unsigned char *big = load(BIG, &n), *bad = load("bigblocks-damaged.xz", &nb);
	struct mem m1 = { big, n, 0, 65536 };
	struct cctl__xz *x;
	char want[65], got[65];
	CHECK(big && bad && nb == n);
	CHECK((x = cctl__xz_new(1, mem_fill, &m1)) != NULL);
	CHECK_INT(decode(x, want), 0);
	cctl__xz_free(x);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		for (unsigned jobs = 2; jobs <= 3; jobs++) {
			struct mem m = { big, n, 0, steps[i] };
			CHECK((x = plan(big, n, jobs, &m)) != NULL);
			CHECK_INT(cctl__xz_blocks_threads(x), jobs);
			CHECK_INT(decode(x, got), 0);
			CHECK_STR(got, want);
			CHECK_INT(m.pos, n);
			cctl__xz_free(x);
		}
	}
	read_fails(bad, n, bad, n, 4096, NULL);
	/* the file ends in the second chunk of its second block */
	read_fails(big, n, big, (2u << 20) + 4096, 4096, "the compressed data ends too soon");
	free(big);
	free(bad);
}

/* Freed after a first read, with the workers busy: no wait, no leak (the
 * sanitizer build). */
static void freed_half_way(void)
{
	size_t n;
	unsigned char *many = load(MANY, &n);
	struct mem m = { many, n, 0, 65536 };
	struct cctl__xz *x;
	const void *p;
	CHECK(many != NULL);
	CHECK((x = plan(many, n, 4, &m)) != NULL);
	CHECK(cctl__xz_next(x, &p) > 0);
	cctl__xz_free(x);
	free(many);
}

HARNESS_MAIN(TEST_ENTRY(blocks_decode_as_one_block),
	     TEST_ENTRY(blocks_only_where_they_can_be),
	     TEST_ENTRY(a_damaged_block_is_an_error),
	     TEST_ENTRY(a_file_changed_since_the_plan_is_an_error),
	     TEST_ENTRY(blocks_of_several_chunks),
	     TEST_ENTRY(freed_half_way))

/* Hashing on a second thread (src/core/hashq.c): the digests equal those
 * hashed in one thread, whatever the block sizes and however the blocks
 * of several hashes interleave. */
#include <stdio.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/core/internal.h"
#include "harness.h"

#define N 3
#define SIZE (3 << 20)

/* the bytes hashed; each test fills what it uses */
static unsigned char data[N][SIZE];

static void fill(unsigned char *buf, size_t n, unsigned seed)
{
	unsigned x = seed;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
}

static void interleaved_hashes_match(void)
{
	struct cctl__hashq *q = cctl__hashq_new();
	struct cctl_sha256 *h[N];
	char want[N][65], got[N][65];
	size_t off[N] = { 0 };
	/* odd sizes: smaller and larger than a slot, and empty */
	static const size_t step[] = { 1, 0, 65535, 65536, 65537, 200000, 7 };
	size_t s = 0;
	int left = N;

	fill(&data[0][0], sizeof(data), 12345);
	for (int k = 0; k < N; k++) {
		struct cctl_sha256 *one = cctl_sha256_new();
		cctl_sha256_update(one, data[k], SIZE);
		cctl_sha256_final(one, want[k]);
		h[k] = cctl_sha256_new();
	}
	while (left) {
		for (int k = 0; k < N; k++) {
			size_t n = step[s++ % (sizeof(step) / sizeof(step[0]))];
			if (off[k] == SIZE)
				continue;
			if (n > SIZE - off[k])
				n = SIZE - off[k];
			cctl__hashq_update(q, h[k], data[k] + off[k], n);
			off[k] += n;
			if (off[k] == SIZE) {
				cctl__hashq_final(q, h[k], got[k]);
				left--;
			}
		}
	}
	cctl__hashq_drain(q);
	for (int k = 0; k < N; k++)
		CHECK_STR(got[k], want[k]);
	cctl__hashq_free(q);
}

static void free_finishes_what_was_queued(void)
{
	struct cctl__hashq *q = cctl__hashq_new();
	struct cctl_sha256 *h = cctl_sha256_new(), *one = cctl_sha256_new();
	char want[65], got[65] = "";
	fill(data[0], SIZE, 54321);
	cctl_sha256_update(one, data[0], SIZE);
	cctl_sha256_final(one, want);
	cctl__hashq_update(q, h, data[0], SIZE);
	cctl__hashq_final(q, h, got);
	cctl__hashq_free(q); /* no drain first */
	CHECK_STR(got, want);
}

HARNESS_MAIN(TEST_ENTRY(interleaved_hashes_match),
	     TEST_ENTRY(free_finishes_what_was_queued))

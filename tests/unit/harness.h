/*
 * A small test harness: each unit-test program lists its tests in
 * HARNESS_MAIN(...), runs them all (or the ones named on the command line:
 * ctest runs each on its own) and exits 1 when one failed or a name is no
 * test, 77 when every one that ran was skipped.  Asserts print both
 * values.
 */
#ifndef CUDNNCTL_HARNESS_H
#define CUDNNCTL_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_failed;
static int harness_skipped;

/* Ends the test as skipped, saying why (a file system without leases): a
 * program whose selected tests were all skipped exits 77, which ctest's
 * SKIP_RETURN_CODE shows as skipped rather than passed. */
#define SKIP(...)                                                              \
	do {                                                                   \
		printf("# skipped: ");                                         \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		harness_skipped = 1;                                           \
		return;                                                        \
	} while (0)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, \
				__LINE__, #cond);                              \
			harness_failed = 1;                                    \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_INT(a, b)                                                        \
	do {                                                                   \
		long long va_ = (long long)(a), vb_ = (long long)(b);          \
		if (va_ != vb_) {                                              \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
				__FILE__, __LINE__, #a, #b, va_, vb_);         \
			harness_failed = 1;                                    \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *sa_ = (a), *sb_ = (b);                             \
		if (!sa_ || !sb_ || strcmp(sa_, sb_)) {                        \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, #a, #b,                    \
				sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");   \
			harness_failed = 1;                                    \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                            \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		if (!h_ || !strstr(h_, n_)) {                                  \
			fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", \
				__FILE__, __LINE__, h_ ? h_ : "(null)", n_);   \
			harness_failed = 1;                                    \
			return;                                                \
		}                                                              \
	} while (0)

struct harness_test {
	const char *name;
	void (*fn)(void);
};

#define TEST_ENTRY(fn) { #fn, fn }

static int harness_run(const struct harness_test *tests, size_t n, int argc,
		       char **argv)
{
	int failures = 0, ran = 0, skipped = 0;
	for (size_t i = 0; i < n; i++) {
		int selected = argc < 2;
		for (int a = 1; a < argc; a++)
			if (!strcmp(argv[a], tests[i].name))
				selected = 1;
		if (!selected)
			continue;
		harness_failed = 0;
		harness_skipped = 0;
		tests[i].fn();
		ran++;
		printf("%s %s%s\n", harness_failed ? "not ok" : "ok", tests[i].name,
		       harness_skipped && !harness_failed ? " # SKIP" : "");
		failures += harness_failed;
		skipped += harness_skipped && !harness_failed;
	}
	printf("%d/%d passed, %d skipped\n", ran - failures - skipped, ran,
	       skipped);
	if (failures || !ran)
		return 1; /* a name that is no test fails too */
	return skipped == ran ? 77 : 0;
}

#define HARNESS_MAIN(...)                                                      \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		static const struct harness_test tests[] = { __VA_ARGS__ };    \
		return harness_run(tests, sizeof(tests) / sizeof(tests[0]),    \
				   argc, argv);                                \
	}

#endif

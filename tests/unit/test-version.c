/* Versions, library sets, cudnn_version.h, SHA-256 and the error table. */
#include "cudnnctl/cudnnctl.h"
#include "harness.h"

static void version_compare(void)
{
	CHECK(cctl_version_cmp("9.10.0", "9.9.1") > 0);
	CHECK(cctl_version_cmp("8.9.7.29", "8.9.7") > 0);
	CHECK(cctl_version_cmp("9.1.0.70", "9.1.0.70") == 0);
	CHECK(cctl_version_cmp("8.9.7.29", "9.0.0.312") < 0);
}

static void version_prefix(void)
{
	CHECK(cctl_version_has_prefix("8.9.7.29", "8.9.7"));
	CHECK(cctl_version_has_prefix("8.9.7.29", "8"));
	CHECK(cctl_version_has_prefix("8.9.7.29", "8.9.7.29"));
	CHECK(!cctl_version_has_prefix("8.9.70.1", "8.9.7"));
	CHECK(!cctl_version_has_prefix("9.14.0.64", "9.1"));
	CHECK(!cctl_version_has_prefix("9.1.0", ""));
}

static void version_header(void)
{
	char *v = cctl_parse_version_header(
		"/* x */\n#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n"
		"#define  CUDNN_PATCHLEVEL\t0\n#define CUDNN_VERSION (x)\n");
	CHECK_STR(v, "9.19.0");
	free(v);
	CHECK(cctl_parse_version_header("#define CUDNN_MAJOR 9\n") == NULL);
	CHECK(cctl_parse_version_header(NULL) == NULL);
	/* CUDNN_MAJORX is not CUDNN_MAJOR */
	CHECK(cctl_parse_version_header("#define CUDNN_MAJORX 1\n#define CUDNN_MINOR 2\n"
					"#define CUDNN_PATCHLEVEL 3\n") == NULL);
}

static void library_sets(void)
{
	const char *const *l = cctl_platform_libraries(cctl_platform_find("windows-x86_64"), 9);
	size_t n = 0;
	CHECK(l != NULL);
	while (l[n])
		n++;
	CHECK_INT(n, 8);
	CHECK_STR(l[0], "cudnn64_9.dll");
	l = cctl_platform_libraries(cctl_platform_find("linux-x86_64"), 8);
	for (n = 0; l[n]; n++)
		;
	CHECK_INT(n, 7);
	CHECK_STR(l[6], "libcudnn_ops_train.so.8");
	CHECK(cctl_platform_libraries(cctl_platform_find("linux-x86_64"), 7) == NULL);
}

static void sha256_vectors(void)
{
	char hex[65];
	struct cctl_sha256 *h = cctl_sha256_new();
	cctl_sha256_final(h, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	h = cctl_sha256_new();
	cctl_sha256_update(h, "a", 1);
	cctl_sha256_update(h, "bc", 2);
	cctl_sha256_final(h, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void error_table(void)
{
	CHECK_INT(cctl_exit_status(0), 0);
	CHECK_INT(cctl_exit_status(CCTL_EUSAGE), 2);
	CHECK_INT(cctl_exit_status(CCTL_EMISMATCH), 5);
	CHECK_INT(cctl_exit_status(CCTL_EUNSAFE), 6);
	CHECK_STR(cctl_error_name(CCTL_ELOCKED), "ELOCKED");
	CHECK_STR(cctl_strerror(CCTL_ENOSPACE), "not enough free space");
	CHECK_INT(cctl_exit_status(-1), 1); /* unknown codes are failures */
	CHECK(CCTL_EFAIL < 0);
}

HARNESS_MAIN(TEST_ENTRY(version_compare), TEST_ENTRY(version_prefix),
	     TEST_ENTRY(version_header), TEST_ENTRY(library_sets),
	     TEST_ENTRY(sha256_vectors), TEST_ENTRY(error_table))

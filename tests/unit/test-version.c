/* Versions, library sets, cudnn_version.h, SHA-256 and the error table. */
#include "cudnnctl/cudnnctl.h"
#include "harness.h"

static void version_compare(void)
{
	CHECK(cctl_version_cmp("9.10.0", "9.9.1") > 0);
	CHECK(cctl_version_cmp("8.9.7.29", "8.9.7") > 0);
	CHECK(cctl_version_cmp("9.1.0.70", "9.1.0.70") == 0);
	CHECK(cctl_version_cmp("8.9.7.29", "9.0.0.312") < 0);
	/* every part numerically, as NVIDIA's releases run */
	CHECK(cctl_version_cmp("8.9.7.29", "9.1.0.70") < 0);
	CHECK(cctl_version_cmp("9.1.0.70", "9.2.0.82") < 0);
	CHECK(cctl_version_cmp("9.2.0.82", "9.10.2.21") < 0);
	CHECK(cctl_version_cmp("9.10.2.21", "9.27.0.42") < 0);
	CHECK(cctl_version_cmp("9.27.0.42", "9.3.0.75") > 0);
}

static void natural_compare(void)
{
	CHECK(cctl_natural_cmp("cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz",
			       "cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz") < 0);
	CHECK(cctl_natural_cmp("redistrib_9.27.0.json", "redistrib_9.3.0.json") > 0);
	CHECK(cctl_natural_cmp("a10", "a010") == 0);
	CHECK(cctl_natural_cmp("a", "a1") < 0);
	CHECK(cctl_natural_cmp("x_cuda11", "x_cuda12") < 0);
	CHECK(cctl_natural_cmp("", "") == 0);
	/* digit runs longer than any integer type */
	CHECK(cctl_natural_cmp("v99999999999999999999999", "v100000000000000000000000") < 0);
}

static void outside_values(void)
{
	CHECK(cctl_version_valid("9.1.0.70"));
	CHECK(cctl_version_valid("9"));
	CHECK(!cctl_version_valid("9.1.0.70.1"));
	CHECK(!cctl_version_valid("9/../x"));
	CHECK(!cctl_version_valid(""));
	CHECK(!cctl_version_valid(NULL));
	CHECK(cctl_id_valid("9.19.0.56-cuda13"));
	CHECK(!cctl_id_valid("9.19.0.56"));
	CHECK(!cctl_id_valid("../9.19.0.56-cuda13"));
	CHECK(!cctl_id_valid("9.19.0.56-cuda1234"));
	CHECK(!cctl_id_valid("9.19.0.56-cuda12x"));
	CHECK(cctl_relpath_valid("cudnn/linux-x86_64/a_cuda12-archive.tar.xz"));
	CHECK(cctl_relpath_valid("a.zip"));
	CHECK(!cctl_relpath_valid("../a.zip"));
	CHECK(!cctl_relpath_valid("a\\..\\b"));
	CHECK(!cctl_relpath_valid("C:a"));
	CHECK(!cctl_relpath_valid("/a"));
	CHECK(!cctl_relpath_valid("a/"));
	CHECK(!cctl_relpath_valid(""));
	CHECK(cctl_path_within("/opt/cudnn", "/opt/cudnn/versions/9.1-cuda12"));
	CHECK(cctl_path_within("/opt/cudnn/", "/opt/cudnn/x"));
	CHECK(cctl_path_within("C:\\cudnn", "C:\\cudnn\\versions\\x"));
	CHECK(!cctl_path_within("/opt/cudnn", "/opt/cudnn"));
	CHECK(!cctl_path_within("/opt/cudnn", "/opt/cudnn2/x"));
	CHECK(!cctl_path_within("/opt/cudnn", "/opt/cudnn/../etc"));
	CHECK(!cctl_path_within("/opt/cudnn", "/opt/cudnn/a/../../etc"));
	CHECK(!cctl_path_within("C:\\cudnn", "C:\\cudnn\\..\\Windows"));
	CHECK(!cctl_path_within("/opt/cudnn", "/opt/cudnn/a//b"));
	CHECK(!cctl_path_within("https://h/redist", "https://h/redist/../x"));
	CHECK(cctl_path_within("https://h/redist/", "https://h/redist/cudnn/x"));
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

HARNESS_MAIN(TEST_ENTRY(version_compare), TEST_ENTRY(natural_compare),
	     TEST_ENTRY(outside_values),
	     TEST_ENTRY(version_prefix),
	     TEST_ENTRY(version_header), TEST_ENTRY(library_sets),
	     TEST_ENTRY(sha256_vectors), TEST_ENTRY(error_table))

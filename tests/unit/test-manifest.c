/* Manifest parsing: both of NVIDIA's shapes, the built-in set, bad input. */
#include "cudnnctl/cudnnctl.h"
#include "harness.h"

static void builtin_has_known_archives(void)
{
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	const struct cctl_release *r;
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_manifest_load_builtin(&ctx, &m), 0);
	CHECK(m.n > 100);
	/* values from ../shared/FACTS.md */
	r = cctl_manifest_find_hash(
		&m, 708408517,
		"94fc17af8e83a26cc5d231ed23981b28c29c3fc2e87b1844ea3f46486f481df5");
	CHECK(r != NULL);
	CHECK_STR(r->version, "8.9.7.29");
	CHECK_STR(r->platform, "windows-x86_64");
	CHECK_INT(r->cuda, 12);
	r = cctl_manifest_find_hash(
		&m, 669629858,
		"3083b5bf20b0b2b29305de088e0b2cdbb78b5190655a27e8a7c596e47042eedf");
	CHECK(r != NULL);
	CHECK_STR(r->version, "9.1.0.70");
	CHECK_STR(r->file_name,
		  "cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip");
	/* the same hash with another size is no match */
	CHECK(cctl_manifest_find_hash(
		      &m, 669629857,
		      "3083b5bf20b0b2b29305de088e0b2cdbb78b5190655a27e8a7c596e47042eedf") ==
	      NULL);
	r = cctl_manifest_find_name(
		&m, "cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz");
	CHECK(r != NULL);
	CHECK_INT(r->cuda, 11);
	CHECK_INT(r->size, 860293208);
	cctl_manifest_release(&m);
}

static void builtin_deduplicates(void)
{
	/* redistrib_8.9.7.json and redistrib_8.9.7.29.json list the same
	 * archives: each is kept once */
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	size_t hits = 0;
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_manifest_load_builtin(&ctx, &m), 0);
	for (size_t i = 0; i < m.n; i++)
		if (!strcmp(m.v[i].sha256, "94fc17af8e83a26cc5d231ed23981b28c29c3fc2e87b1844ea3f46486f481df5"))
			hits++;
	CHECK_INT(hits, 1);
	cctl_manifest_release(&m);
}

static void flat_shape(void)
{
	static const char text[] =
		"{\"cudnn\": {\"version\": \"8.9.7.29\", \"name\": \"x\","
		" \"linux-x86_64\": {\"sha256\": "
		"\"475333625C7E42A7AF3CA0B2F7506A106E30C93B1AA0081CD9C13EFB6E21E3BB\","
		" \"size\": \"864984964\", \"md5\": \"x\","
		" \"relative_path\": \"cudnn/linux-x86_64/"
		"cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz\"}}}";
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_manifest_parse(&ctx, &m, text, sizeof(text) - 1, "flat"), 0);
	CHECK_INT(m.n, 1);
	CHECK_INT(m.v[0].cuda, 12);
	CHECK_INT(m.v[0].size, 864984964);
	/* stored lowercase */
	CHECK_STR(m.v[0].sha256,
		  "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb");
	cctl_manifest_release(&m);
}

static void nested_shape(void)
{
	static const char text[] =
		"{\"release_label\": \"9.9.9\", \"cudnn\": {\"version\": \"9.9.9.9\","
		" \"cuda_variant\": [\"12\", \"13\"],"
		" \"linux-x86_64\": {"
		"  \"cuda13\": {\"relative_path\": \"a/b-cuda13.tar.xz\", \"size\": 10,"
		"   \"sha256\": \"" "00000000000000000000000000000000"
		"00000000000000000000000000000001\"},"
		"  \"cuda12\": {\"relative_path\": \"a/b-cuda12.tar.xz\", \"size\": \"11\","
		"   \"sha256\": \"" "00000000000000000000000000000000"
		"00000000000000000000000000000002\"}}}}";
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_manifest_parse(&ctx, &m, text, sizeof(text) - 1, "nested"), 0);
	CHECK_INT(m.n, 2);
	/* in order of version, then CUDA major, whatever the file's order */
	CHECK_INT(m.v[1].cuda, 13);
	CHECK_INT(m.v[1].size, 10);
	CHECK_INT(m.v[0].cuda, 12);
	CHECK_STR(m.v[0].file_name, "b-cuda12.tar.xz");
	CHECK_STR(m.v[0].source, "nested");
	cctl_manifest_release(&m);
}

static void bad_manifests(void)
{
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	static const char not_json[] = "{\"cudnn\": ";
	static const char no_cudnn[] = "{\"cublas\": {\"version\": \"1\"}}";
	static const char bad_size[] =
		"{\"cudnn\": {\"version\": \"9\", \"linux-x86_64\": {\"cuda12\": "
		"{\"relative_path\": \"x\", \"size\": \"12a\", \"sha256\": \""
		"0000000000000000000000000000000000000000000000000000000000000000"
		"\"}}}}";
	static const char bad_sha[] =
		"{\"cudnn\": {\"version\": \"9\", \"linux-x86_64\": {\"cuda12\": "
		"{\"relative_path\": \"x\", \"size\": \"12\", \"sha256\": \"zz\"}}}}";
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_manifest_parse(&ctx, &m, not_json, sizeof(not_json) - 1,
				      "a.json"),
		  CCTL_EMANIFEST);
	CHECK_CONTAINS(ctx.msg, "'a.json' is not valid JSON");
	CHECK_INT(cctl_manifest_parse(&ctx, &m, no_cudnn, sizeof(no_cudnn) - 1,
				      "b.json"),
		  CCTL_EMANIFEST);
	CHECK_CONTAINS(ctx.msg, "not a cuDNN redistrib manifest");
	CHECK_INT(cctl_manifest_parse(&ctx, &m, bad_size, sizeof(bad_size) - 1,
				      "c.json"),
		  CCTL_EMANIFEST);
	CHECK_CONTAINS(ctx.msg, "lists no cuDNN archive");
	CHECK_CONTAINS(ctx.msg, "a size that is a number");
	CHECK_INT(cctl_manifest_parse(&ctx, &m, bad_sha, sizeof(bad_sha) - 1,
				      "d.json"),
		  CCTL_EMANIFEST);
	CHECK_INT(m.n, 0);
	CHECK_INT(cctl_manifest_load_file(&ctx, &m, "/nonexistent/x.json"),
		  CCTL_EMANIFEST);
	CHECK_CONTAINS(ctx.msg, "/nonexistent/x.json");
	cctl_manifest_release(&m);
}

/* What NVIDIA really writes: 9.27.0's windows-arm64 holds a cuda13 variant
 * and a second archive directly under the platform; cudnn_jit and
 * cudnn_samples sit beside cudnn; a malformed entry is left out (noted
 * with verbose), the rest kept. */
static int notes;
static void count_note(void *ud, const char *msg)
{
	(void)ud;
	(void)msg;
	notes++;
}

static void real_shapes(void)
{
	static const char text[] =
		"{\"cudnn\": {\"version\": \"9.27.0.42\", \"cuda_variant\": [\"13\"],"
		" \"windows-arm64\": {"
		"  \"cuda13\": {\"relative_path\": \"w/a_cuda13-archive.zip\","
		"   \"size\": \"5\", \"sha256\": \"" "00000000000000000000000000000000"
		"00000000000000000000000000000003\"},"
		"  \"relative_path\": \"w/a_cuda13.4-archive.zip\", \"size\": \"6\","
		"  \"sha256\": \"" "00000000000000000000000000000000"
		"00000000000000000000000000000004\"},"
		" \"linux-sbsa\": {\"cuda12\": {\"relative_path\": \"x\", \"size\": \"-1\","
		"  \"sha256\": \"" "00000000000000000000000000000000"
		"00000000000000000000000000000005\"}}},"
		" \"cudnn_jit\": {\"version\": \"9.27.0.42\", \"linux-x86_64\": {"
		"  \"cuda13\": {\"relative_path\": \"j\", \"size\": \"7\", \"sha256\": \""
		"0000000000000000000000000000000000000000000000000000000000000006\"}}}}";
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	cctl_ctx_init(&ctx);
	ctx.verbose = 1;
	ctx.on_warning = count_note;
	notes = 0;
	CHECK_INT(cctl_manifest_parse(&ctx, &m, text, sizeof(text) - 1, "r"), 0);
	CHECK_INT(m.n, 2);
	CHECK_INT(m.skipped, 1);
	CHECK_INT(notes, 1);
	/* one version, one CUDA major: by file name */
	CHECK_STR(m.v[1].file_name, "a_cuda13.4-archive.zip");
	CHECK_INT(m.v[1].cuda, 13);
	CHECK_STR(m.v[0].file_name, "a_cuda13-archive.zip");
	CHECK_STR(m.v[0].platform, "windows-arm64");
	cctl_manifest_release(&m);
}

/* Every manifest built in parses whole: no entry left out, and the newest
 * releases are there. */
static void builtin_complete(void)
{
	struct cctl_manifest m = { 0 };
	const struct cctl_release *r;
	int arm = 0;
	CHECK_INT(cctl_manifest_load_builtin(NULL, &m), 0);
	CHECK_INT(m.skipped, 0);
	r = cctl_manifest_find_name(
		&m, "cudnn-linux-x86_64-9.19.0.56_cuda12-archive.tar.xz");
	CHECK(r != NULL);
	CHECK_INT(r->size, 891163520); /* ../shared/FACTS.md */
	r = cctl_manifest_find_name(
		&m, "cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz");
	CHECK(r != NULL);
	CHECK_INT(r->size, 668344912);
	for (size_t i = 0; i < m.n; i++)
		arm += !strcmp(m.v[i].platform, "windows-arm64");
	CHECK_INT(arm, 2);
	cctl_manifest_release(&m);
}

/* One manifest with a value that would become a path or an id: refused
 * whole, naming the field and the value, and nothing of it kept. */
static int hostile(const char *version, const char *platform, const char *rel,
		   const char *size, struct cctl_ctx *ctx, struct cctl_manifest *m)
{
	char *text = cctl_xstrfmt(
		"{\"cudnn\": {\"version\": \"%s\", \"%s\": {\"cuda12\": {"
		"\"relative_path\": \"%s\", \"size\": \"%s\", \"sha256\": \""
		"0000000000000000000000000000000000000000000000000000000000000007"
		"\"}}}}",
		version, platform, rel, size);
	int ret;
	cctl_ctx_init(ctx);
	ret = cctl_manifest_parse(ctx, m, text, strlen(text), "evil.json");
	free(text);
	return ret;
}

static void hostile_values(void)
{
	static const char *const bad_versions[] = {
		"9/../../../../../../../tmp/escaped", "9.1.0.70/..", "..", "",
		"9.1.0.70.1", "9..1", "9.1.", ".9", "9.1a", "1234567.1", "9\\\\1",
		"9 1", "-9"
	};
	static const char *const bad_paths[] = {
		"../../../../etc/hostname", "cudnn/../../x.zip", "/etc/hostname",
		"cudnn\\\\..\\\\x.zip", "C:/x.zip", "c:x.zip", "cudnn//x.zip",
		"cudnn/./x.zip", "cudnn/x.zip/", "cudnn/x\\u0001.zip",
		"cudnn/x\\u00e9.zip", "..", "."
	};
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	/* one good manifest first: a refused one must not take it away */
	CHECK_INT(hostile("9.1.0.70", "linux-x86_64", "cudnn/a_cuda12.tar.xz",
			  "5", &ctx, &m), 0);
	CHECK_INT(m.n, 1);
	for (size_t i = 0; i < sizeof(bad_versions) / sizeof(bad_versions[0]); i++) {
		CHECK_INT(hostile(bad_versions[i], "linux-x86_64", "cudnn/b.tar.xz",
				  "5", &ctx, &m), CCTL_EMANIFEST);
		CHECK_CONTAINS(ctx.msg, "evil.json");
		CHECK_CONTAINS(ctx.msg, "cudnn.version");
		CHECK_INT(m.n, 1);
	}
	for (size_t i = 0; i < sizeof(bad_paths) / sizeof(bad_paths[0]); i++) {
		CHECK_INT(hostile("9.2.0.82", "linux-x86_64", bad_paths[i], "5",
				  &ctx, &m), CCTL_EMANIFEST);
		CHECK_CONTAINS(ctx.msg, "relative_path");
		CHECK_INT(m.n, 1);
	}
	/* a size no file can have (it wrapped to a small one before) */
	CHECK_INT(hostile("9.2.0.82", "linux-x86_64", "cudnn/b.tar.xz",
			  "18446744073709551621", &ctx, &m), CCTL_EMANIFEST);
	CHECK_CONTAINS(ctx.msg, "size");
	CHECK_INT(hostile("9.2.0.82", "linux-x86_64", "cudnn/b.tar.xz",
			  "9223372036854775808", &ctx, &m), CCTL_EMANIFEST);
	CHECK_INT(m.n, 1);
	/* an unknown platform can become no path: left out, not refused */
	CHECK_INT(hostile("9.2.0.82", "../../x", "cudnn/b.tar.xz", "5", &ctx,
			  &m), CCTL_EMANIFEST); /* nothing usable left */
	CHECK_CONTAINS(ctx.msg, "lists no cuDNN archive");
	CHECK_INT(m.n, 1);
	cctl_manifest_release(&m);
}

HARNESS_MAIN(TEST_ENTRY(real_shapes), TEST_ENTRY(builtin_complete),
	     TEST_ENTRY(hostile_values),
	     TEST_ENTRY(builtin_has_known_archives),
	     TEST_ENTRY(builtin_deduplicates), TEST_ENTRY(flat_shape),
	     TEST_ENTRY(nested_shape), TEST_ENTRY(bad_manifests))

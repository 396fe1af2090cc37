/* Scanning and extracting archives made by tests/fixtures/mkcudnn.py. */
#include <stdio.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"
#include "harness.h"

static const char *fixtures(void)
{
	const char *d = getenv("CCTL_FIXTURES");
	return d ? d : "fixtures";
}

static int scan(const char *name, struct cctl_ctx *ctx, struct cctl_archive *a)
{
	char path[512];
	int fd, ret;
	snprintf(path, sizeof(path), "%s/%s", fixtures(), name);
	cctl_ctx_init(ctx);
	if ((ret = cctl_os_open_read(ctx, path, &fd)))
		return ret;
	ret = cctl_archive_scan(ctx, fd, path, NULL, 0, a);
	if (ret)
		cctl_os_close(fd);
	return ret;
}

static void scan_v9_tar_xz(void)
{
	struct cctl_ctx ctx;
	struct cctl_archive a;
	const struct cctl_entry *e;
	char *v;
	CHECK_INT(scan("cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz", &ctx, &a), 0);
	CHECK_STR(a.prefix, "cudnn-linux-x86_64-9.19.0.56_cuda13-archive/");
	e = cctl_archive_find(&a, "lib/libcudnn.so.9");
	CHECK(e != NULL);
	CHECK_INT(e->type, CCTL_ENTRY_SYMLINK);
	CHECK_STR(e->link, "libcudnn.so.9.19.0");
	e = cctl_archive_find(&a, "lib/libcudnn_cnn.so.9.19.0");
	CHECK(e != NULL);
	CHECK_INT(e->type, CCTL_ENTRY_FILE);
	CHECK_INT(e->size, 4096);
	v = cctl_parse_version_header(a.version_h);
	CHECK_STR(v, "9.19.0");
	free(v);
	CHECK(a.total_size >= 8 * 4096);
	CHECK(a.longest_path == strlen("lib/libcudnn_engines_runtime_compiled.so.9.19.0"));
	cctl_os_close(a.fd);
	cctl_archive_release(&a);
}

static void scan_old_cuda_prefix(void)
{
	struct cctl_ctx ctx;
	struct cctl_archive a;
	CHECK_INT(scan("cudnn-11.0-linux-x64-v8.0.4.30.zip", &ctx, &a), 0);
	CHECK_STR(a.prefix, "cuda/");
	/* lib64/ of old Linux archives becomes lib/ */
	CHECK(cctl_archive_find(&a, "lib/libcudnn.so.8") != NULL);
	CHECK(cctl_archive_find(&a, "include/cudnn_version.h") != NULL);
	cctl_os_close(a.fd);
	cctl_archive_release(&a);
}

static void scan_windows_layout(void)
{
	struct cctl_ctx ctx;
	struct cctl_archive a;
	CHECK_INT(scan("cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip", &ctx, &a), 0);
	CHECK(cctl_archive_find(&a, "bin/cudnn64_9.dll") != NULL);
	CHECK(cctl_archive_find(&a, "lib/x64/cudnn.lib") != NULL);
	cctl_os_close(a.fd);
	cctl_archive_release(&a);
}

static void hostile_refused(void)
{
	static const struct {
		const char *file;
		int code;
		const char *says;
	} cases[] = {
		{ "hostile-dotdot.zip", CCTL_EUNSAFE, "'..'" },
		{ "hostile-dotdot.tar", CCTL_EUNSAFE, "'..'" },
		{ "hostile-dotdot-backslash.zip", CCTL_EUNSAFE, "'..'" },
		{ "hostile-absolute.zip", CCTL_EUNSAFE, "absolute" },
		{ "hostile-absolute-drive.zip", CCTL_EUNSAFE, "drive letter" },
		{ "hostile-control-char.zip", CCTL_EUNSAFE, "control character" },
		{ "hostile-zero-width.zip", CCTL_EUNSAFE, "U+200B" },
		{ "hostile-bom.zip", CCTL_EUNSAFE, "U+FEFF" },
		{ "hostile-non-ascii.zip", CCTL_EUNSAFE, "non-ASCII" },
		{ "hostile-symlink-escape.zip", CCTL_EUNSAFE, "outside" },
		{ "hostile-symlink-absolute.zip", CCTL_EUNSAFE, "outside" },
		{ "hostile-hardlink-escape.tar", CCTL_EUNSAFE, "outside" },
		{ "hostile-duplicate.zip", CCTL_EUNSAFE, "twice" },
		{ "hostile-duplicate-case.zip", CCTL_EUNSAFE, "case" },
		{ "hostile-device.tar", CCTL_EUNSAFE, "device" },
		{ "hostile-truncated.zip", CCTL_EBADARCHIVE, "cannot read" },
		{ "hostile-not-archive.zip", CCTL_EBADARCHIVE, "cannot read" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cctl_ctx ctx;
		struct cctl_archive a;
		int ret = scan(cases[i].file, &ctx, &a);
		if (ret != cases[i].code)
			fprintf(stderr, "%s: %s\n", cases[i].file, ctx.msg);
		CHECK_INT(ret, cases[i].code);
		CHECK_CONTAINS(ctx.msg, cases[i].says);
		cctl_os_close(a.fd);
		cctl_archive_release(&a);
	}
}

static void extract_hashes_files_with(unsigned jobs)
{
	struct cctl_ctx ctx;
	struct cctl_archive a;
	char dest[256], path[512], hex[65];
	const struct cctl_entry *e;
	struct cctl_os_stat st;
	snprintf(dest, sizeof(dest), "%s/extract-%ld", fixtures(), cctl_os_pid());
	CHECK_INT(scan("cudnn-linux-x86_64-8.9.7.99_cuda12-archive.zip", &ctx, &a), 0);
	CHECK_INT(cctl_os_rmtree(&ctx, dest), 0);
	CHECK_INT(cctl_os_mkdir(&ctx, dest), 0);
	a.jobs = jobs;
	CHECK_INT(cctl_archive_extract(&ctx, &a, dest), 0);
	CHECK_STR(a.extract_sha256, a.scan_sha256);
	for (size_t i = 0; i < a.n; i++) { /* every file hashed as written */
		if (a.v[i].type != CCTL_ENTRY_FILE || !*a.v[i].path)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dest, a.v[i].path);
		CHECK_INT(cctl_sha256_file(&ctx, path, hex, NULL), 0);
		CHECK_STR(a.v[i].sha256, hex);
	}
	e = cctl_archive_find(&a, "lib/libcudnn_ops_train.so.8.9.7");
	CHECK(e != NULL);
	snprintf(path, sizeof(path), "%s/%s", dest, e->path);
	CHECK_INT(cctl_sha256_file(&ctx, path, hex, NULL), 0);
	CHECK_STR(e->sha256, hex);
	snprintf(path, sizeof(path), "%s/lib/libcudnn.so.8", dest);
	CHECK_INT(cctl_os_stat(&ctx, path, &st), 0);
	CHECK_INT(st.type, CCTL_OS_LINK);
	/* the top folder is gone */
	snprintf(path, sizeof(path), "%s/%s", dest, "LICENSE");
	CHECK_INT(cctl_os_stat(&ctx, path, &st), 0);
	CHECK_INT(st.type, CCTL_OS_FILE);
	CHECK_INT(cctl_os_rmtree(&ctx, dest), 0);
	cctl_os_close(a.fd);
	cctl_archive_release(&a);
}

/* One worker (this thread), and several: the same files, the same hashes. */
static void extract_hashes_files(void)
{
	extract_hashes_files_with(1);
	if (!harness_failed)
		extract_hashes_files_with(4);
}

/* A zip rewritten between the scan and a parallel extraction: a file that
 * became a link is refused by the worker that meets it; other bytes of the
 * same size are extracted but the archive hashes differently, which the
 * install refuses. */
static void zip_rewritten_between_passes(void)
{
	static const char *evil[] = { "race-b.zip", "race-c.zip" };
	char victim[] = "/tmp/cctl-race-victim";
	for (int k = 0; k < 2; k++) {
		struct cctl_ctx ctx;
		struct cctl_archive a;
		struct cctl_buf good = CCTL_BUF_INIT, bad = CCTL_BUF_INIT;
		char path[512], dest[512], src[600];
		struct cctl_os_stat st;
		FILE *f;
		cctl_ctx_init(&ctx);
		snprintf(path, sizeof(path), "%s/race-copy-%ld.zip", fixtures(), cctl_os_pid());
		snprintf(dest, sizeof(dest), "%s/race-zdest-%ld", fixtures(), cctl_os_pid());
		snprintf(src, sizeof(src), "%s/race-a.zip", fixtures());
		CHECK_INT(cctl_os_read_file(&ctx, src, &good), 0);
		CHECK_INT(cctl_os_write_file_atomic(&ctx, path, good.buf, good.len), 0);
		snprintf(src, sizeof(src), "%s/%s", fixtures(), evil[k]);
		CHECK_INT(cctl_os_read_file(&ctx, src, &bad), 0);
		cctl_os_unlink(&ctx, victim);
		CHECK_INT(scan(path + strlen(fixtures()) + 1, &ctx, &a), 0);
		f = fopen(path, "wb"); /* the scan's descriptor reads the new bytes */
		CHECK(f != NULL);
		CHECK(fwrite(bad.buf, 1, bad.len, f) == bad.len);
		fclose(f);
		CHECK_INT(cctl_os_rmtree(&ctx, dest), 0);
		CHECK_INT(cctl_os_mkdir(&ctx, dest), 0);
		a.jobs = 3;
		if (k == 0) {
			CHECK_INT(cctl_archive_extract(&ctx, &a, dest), CCTL_EBADARCHIVE);
			CHECK_CONTAINS(ctx.msg, "changed while it was being read");
		} else {
			CHECK_INT(cctl_archive_extract(&ctx, &a, dest), 0);
			CHECK(strcmp(a.extract_sha256, a.scan_sha256) != 0);
		}
		CHECK_INT(cctl_os_stat(&ctx, victim, &st), 0);
		CHECK_INT(st.type, CCTL_OS_NONE);
		cctl_os_close(a.fd);
		cctl_archive_release(&a);
		cctl_os_rmtree(&ctx, dest);
		cctl_os_unlink(&ctx, path);
		cctl_buf_release(&good);
		cctl_buf_release(&bad);
	}
}

/* An archive rewritten between the scan and the extraction: the
 * extraction must refuse an entry that is not what the scan checked. */
static void rewritten_between_passes(void)
{
	struct cctl_ctx ctx;
	struct cctl_archive a;
	struct cctl_buf evil = CCTL_BUF_INIT;
	char path[512], dest[512], victim[] = "/tmp/cctl-race-victim";
	struct cctl_os_stat st;
	FILE *f;
	snprintf(path, sizeof(path), "%s/race-copy-%ld.tar", fixtures(), cctl_os_pid());
	snprintf(dest, sizeof(dest), "%s/race-dest-%ld", fixtures(), cctl_os_pid());
	{
		struct cctl_buf good = CCTL_BUF_INIT;
		char src[512];
		cctl_ctx_init(&ctx);
		snprintf(src, sizeof(src), "%s/race-a.tar", fixtures());
		CHECK_INT(cctl_os_read_file(&ctx, src, &good), 0);
		CHECK_INT(cctl_os_write_file_atomic(&ctx, path, good.buf, good.len), 0);
		cctl_buf_release(&good);
		snprintf(src, sizeof(src), "%s/race-b.tar", fixtures());
		CHECK_INT(cctl_os_read_file(&ctx, src, &evil), 0);
	}
	cctl_os_unlink(&ctx, victim);
	CHECK_INT(scan(path + strlen(fixtures()) + 1, &ctx, &a), 0);
	/* rewrite it in place: the scan's descriptor now reads the new bytes */
	f = fopen(path, "r+b");
	CHECK(f != NULL);
	CHECK(fwrite(evil.buf, 1, evil.len, f) == evil.len);
	fclose(f);
	CHECK_INT(cctl_os_rmtree(&ctx, dest), 0);
	CHECK_INT(cctl_os_mkdir(&ctx, dest), 0);
	CHECK_INT(cctl_archive_extract(&ctx, &a, dest), CCTL_EBADARCHIVE);
	CHECK_CONTAINS(ctx.msg, "changed while it was being read");
	CHECK_INT(cctl_os_stat(&ctx, victim, &st), 0);
	CHECK_INT(st.type, CCTL_OS_NONE);
	cctl_os_close(a.fd);
	cctl_archive_release(&a);
	cctl_os_rmtree(&ctx, dest);
	cctl_os_unlink(&ctx, path);
	cctl_buf_release(&evil);
}

/* A sealed archive is read from a private copy: the file rewritten after
 * the seal changes nothing that is extracted; one rewritten between the
 * scan and the seal is refused by the seal. */
static void sealed_archive_reads_the_copy(void)
{
	struct cctl_ctx ctx;
	struct cctl_buf good = CCTL_BUF_INIT, evil = CCTL_BUF_INIT;
	char path[512], dest[512], src[512], dir[512];
	snprintf(path, sizeof(path), "%s/seal-%ld.zip", fixtures(), cctl_os_pid());
	snprintf(dest, sizeof(dest), "%s/seal-dest-%ld", fixtures(), cctl_os_pid());
	snprintf(dir, sizeof(dir), "%s", fixtures());
	cctl_ctx_init(&ctx);
	snprintf(src, sizeof(src), "%s/race-a.zip", fixtures());
	CHECK_INT(cctl_os_read_file(&ctx, src, &good), 0);
	snprintf(src, sizeof(src), "%s/race-b.zip", fixtures());
	CHECK_INT(cctl_os_read_file(&ctx, src, &evil), 0);
	for (int late = 0; late < 2; late++) {
		struct cctl_archive a;
		int fd;
		CHECK_INT(cctl_os_write_file_atomic(&ctx, path, good.buf, good.len), 0);
		CHECK_INT(scan(path + strlen(fixtures()) + 1, &ctx, &a), 0);
		fd = a.fd; /* the seal reads the copy in its place */
		if (late)
			CHECK_INT(cctl_archive_seal(&ctx, &a, dir), 0);
		{
			FILE *f = fopen(path, "r+b");
			CHECK(f != NULL);
			CHECK(fwrite(evil.buf, 1, evil.len, f) == evil.len);
			fclose(f);
		}
		if (!late) {
			CHECK_INT(cctl_archive_seal(&ctx, &a, dir), CCTL_EBADARCHIVE);
			CHECK_CONTAINS(ctx.msg, "changed after it was checked");
			CHECK_INT(a.copy_fd, -1);
		} else {
			CHECK(cctl_archive_trusted(&a));
			CHECK_INT(cctl_os_rmtree(&ctx, dest), 0);
			CHECK_INT(cctl_os_mkdir(&ctx, dest), 0);
			a.jobs = 3;
			CHECK_INT(cctl_archive_extract(&ctx, &a, dest), 0);
			CHECK_STR(a.extract_sha256, a.scan_sha256);
			CHECK_INT(a.guard_lost, 0);
		}
		cctl_archive_release(&a);
		cctl_os_close(fd);
	}
	cctl_os_rmtree(&ctx, dest);
	cctl_os_unlink(&ctx, path);
	cctl_buf_release(&good);
	cctl_buf_release(&evil);
}

/* A tar.xz is decompressed once, its files unpacked by the scan into a
 * private folder that the extraction moves into place: the same archive
 * rewritten after the scan cannot change what is installed, and the
 * folder is gone once the archive is released. */
static void unpacked_extraction_reads_what_was_scanned(void)
{
	struct cctl_ctx ctx;
	struct cctl_archive a;
	struct cctl_buf good = CCTL_BUF_INIT, evil = CCTL_BUF_INIT;
	struct cctl_buf text = CCTL_BUF_INIT;
	char path[512], dest[512], spool[512], src[600];
	char victim[] = "/tmp/cctl-race-victim";
	char **names = NULL;
	size_t n = 1;
	struct cctl_os_stat st;
	int fd;
	FILE *f;
	cctl_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/spool-copy-%ld.tar.xz", fixtures(), cctl_os_pid());
	snprintf(dest, sizeof(dest), "%s/spool-dest-%ld", fixtures(), cctl_os_pid());
	snprintf(spool, sizeof(spool), "%s/spool-dir-%ld", fixtures(), cctl_os_pid());
	snprintf(src, sizeof(src), "%s/race-a.tar.xz", fixtures());
	CHECK_INT(cctl_os_read_file(&ctx, src, &good), 0);
	CHECK_INT(cctl_os_write_file_atomic(&ctx, path, good.buf, good.len), 0);
	snprintf(src, sizeof(src), "%s/race-b.tar.xz", fixtures());
	CHECK_INT(cctl_os_read_file(&ctx, src, &evil), 0);
	cctl_os_unlink(&ctx, victim);
	cctl_os_rmtree(&ctx, spool);
	CHECK_INT(cctl_os_mkdir(&ctx, spool), 0);

	CHECK_INT(cctl_os_open_read(&ctx, path, &fd), 0);
	CHECK_INT(cctl_archive_scan(&ctx, fd, path, spool, 0, &a), 0);
	CHECK(a.unpacked != NULL);
	CHECK_INT(cctl_os_listdir(&ctx, spool, &names, &n), 0);
	CHECK_INT(n, 1); /* the unpacked folder, swept if the process dies */
	CHECK(!strncmp(names[0], ".staging-", 9));
	free(names[0]);
	free(names);
	/* rewrite the archive in place: the scan's descriptor reads it */
	f = fopen(path, "wb");
	CHECK(f != NULL);
	CHECK(fwrite(evil.buf, 1, evil.len, f) == evil.len);
	fclose(f);
	CHECK_INT(cctl_os_rmtree(&ctx, dest), 0);
	CHECK_INT(cctl_os_mkdir(&ctx, dest), 0);
	CHECK_INT(cctl_archive_extract(&ctx, &a, dest), 0);
	CHECK_STR(a.extract_sha256, a.scan_sha256);
	/* what the scan read: lib/zz a file of 100 'x' */
	snprintf(src, sizeof(src), "%s/lib/zz", dest);
	CHECK_INT(cctl_os_read_file(&ctx, src, &text), 0);
	CHECK_INT(text.len, 100);
	CHECK_INT(cctl_os_stat(&ctx, victim, &st), 0);
	CHECK_INT(st.type, CCTL_OS_NONE);
	cctl_os_close(a.fd);
	cctl_archive_release(&a);
	CHECK(a.unpacked == NULL);
	CHECK_INT(cctl_os_listdir(&ctx, spool, &names, &n), 0);
	CHECK_INT(n, 0);
	cctl_os_rmtree(&ctx, dest);
	cctl_os_rmtree(&ctx, spool);
	cctl_os_unlink(&ctx, path);
	cctl_buf_release(&good);
	cctl_buf_release(&evil);
	cctl_buf_release(&text);
	free(names);
}

/* Scans name unpacking in dir and extracts it with jobs workers into
 * dest; 0 or the failing call's code. */
static int spool_install(const char *name, unsigned jobs, const char *dir,
			 const char *dest, struct cctl_ctx *ctx,
			 struct cctl_archive *a)
{
	char path[512];
	int fd, ret;
	snprintf(path, sizeof(path), "%s/%s", fixtures(), name);
	cctl_ctx_init(ctx);
	cctl_os_rmtree(ctx, dir);
	cctl_os_rmtree(ctx, dest);
	if ((ret = cctl_os_mkdir(ctx, dir)) || (ret = cctl_os_mkdir(ctx, dest)) ||
	    (ret = cctl_os_open_read(ctx, path, &fd)))
		return ret;
	if ((ret = cctl_archive_scan(ctx, fd, path, dir, jobs, a))) {
		cctl_os_close(fd);
		return ret;
	}
	return cctl_archive_extract(ctx, a, dest);
}

/* A tar.xz of many xz blocks decodes on several threads to the very files
 * of the same tar in one block; a damaged block is a damaged archive. */
static void multiblock_xz_on_threads(void)
{
	struct cctl_ctx ctx;
	struct cctl_archive one, many;
	char dir[512], dest[512];
	snprintf(dir, sizeof(dir), "%s/mb-spool-%ld", fixtures(), cctl_os_pid());
	snprintf(dest, sizeof(dest), "%s/mb-dest-%ld", fixtures(), cctl_os_pid());
	CHECK_INT(spool_install("cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz", 1,
				dir, dest, &ctx, &one), 0);
	CHECK_INT(spool_install("multiblock.tar.xz", 4, dir, dest, &ctx, &many), 0);
	CHECK(many.unpacked != NULL);
	CHECK_INT(many.n, one.n);
	CHECK(one.n > 5);
	for (size_t i = 0; i < one.n; i++) {
		CHECK_STR(many.v[i].path, one.v[i].path);
		CHECK_INT(many.v[i].size, one.v[i].size);
		CHECK_STR(many.v[i].sha256, one.v[i].sha256);
	}
	cctl_os_close(one.fd);
	cctl_os_close(many.fd);
	cctl_archive_release(&one);
	cctl_archive_release(&many);
	CHECK_INT(spool_install("multiblock-damaged.tar.xz", 4, dir, dest, &ctx, &many),
		  CCTL_EBADARCHIVE);
	CHECK_CONTAINS(ctx.msg, "multiblock-damaged.tar.xz");
	cctl_archive_release(&many);
	cctl_os_rmtree(&ctx, dir);
	cctl_os_rmtree(&ctx, dest);
}

/* Names that only look like Windows' reserved ones pass Windows' rules. */
static void windows_lookalike_names_pass(void)
{
	struct cctl_ctx ctx;
	struct cctl_archive a;
	CHECK_INT(scan("windows-names-ok.zip", &ctx, &a), 0);
	CHECK(cctl_archive_find(&a, "include/console.h") != NULL);
	CHECK(cctl_archive_find(&a, "lib/com10.txt") != NULL);
	CHECK(cctl_archive_find(&a, "lib/CONx") != NULL);
	CHECK(cctl_archive_find(&a, "lib/com/x.h") != NULL);
	cctl_os_close(a.fd);
	cctl_archive_release(&a);
}

HARNESS_MAIN(TEST_ENTRY(windows_lookalike_names_pass),
	     TEST_ENTRY(scan_v9_tar_xz), TEST_ENTRY(scan_old_cuda_prefix),
	     TEST_ENTRY(scan_windows_layout), TEST_ENTRY(hostile_refused),
	     TEST_ENTRY(extract_hashes_files), TEST_ENTRY(rewritten_between_passes),
	     TEST_ENTRY(zip_rewritten_between_passes),
	     TEST_ENTRY(sealed_archive_reads_the_copy),
	     TEST_ENTRY(multiblock_xz_on_threads),
	     TEST_ENTRY(unpacked_extraction_reads_what_was_scanned))

/*
 * The install pipeline's named steps (cudnnctl.h), one at a time, on the
 * archives tests/fixtures/make-unit-fixtures.sh builds: what identify
 * finds, what check refuses, what place writes and what release takes
 * back.  POSIX only (a temporary root and HOME).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"
#include "harness.h"

#define V9 "cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz"
#define V8 "cudnn-linux-x86_64-8.9.7.99_cuda12-archive.zip"

static char archive[512], manifest[512], root_path[256];

static const char *fixtures(void)
{
	const char *d = getenv("CCTL_FIXTURES");
	return d ? d : "fixtures";
}

/* A new root and HOME for each test; the manifest of the 9.19 fixture. */
static int setup(struct cctl_root *r, struct cctl_manifest *m,
		 const char *name)
{
	char home[300];
	snprintf(root_path, sizeof(root_path), "/tmp/cctl-install-XXXXXX");
	if (!mkdtemp(root_path))
		return -1;
	snprintf(home, sizeof(home), "%s/home", root_path);
	cctl_os_mkdir(NULL, home);
	setenv("HOME", home, 1);
	strcat(root_path, "/root");
	snprintf(archive, sizeof(archive), "%s/%s", fixtures(), name);
	snprintf(manifest, sizeof(manifest), "%s/v9.json", fixtures());
	memset(m, 0, sizeof(*m));
	if (cctl_manifest_load_file(NULL, m, manifest))
		return -1;
	return cctl_root_open(NULL, r, root_path, 1, 1);
}

static void teardown(struct cctl_root *r, struct cctl_manifest *m)
{
	char top[256];
	snprintf(top, sizeof(top), "%.*s", (int)(strlen(root_path) - 5),
		 root_path);
	cctl_root_close(r);
	cctl_manifest_release(m);
	cctl_os_rmtree(NULL, top);
}

static int exists(const char *rel)
{
	struct cctl_os_stat st;
	char *p = cctl_path_join(root_path, rel, NULL);
	int ok = !cctl_os_stat(NULL, p, &st) && st.type != CCTL_OS_NONE;
	free(p);
	return ok;
}

/* identify names the release by its hash and fills the record. */
static void identify_verified(void)
{
	struct cctl_root r = { 0 };
	struct cctl_manifest m;
	struct cctl_install_opts o = { 0 };
	struct cctl_install_job job;
	struct cctl_install_result res;
	struct cctl_ctx ctx;
	cctl_ctx_init(&ctx);
	CHECK_INT(setup(&r, &m, V9), 0);
	o.archive = archive;
	CHECK_INT(cctl_install_identify(&ctx, &r, &m, &o, &job, &res), 0);
	CHECK_STR(res.rec.id, "9.19.0.56-cuda13");
	CHECK_INT(res.rec.cuda, 13);
	CHECK_INT(res.rec.verified, 1);
	CHECK_STR(res.rec.platform, "linux-x86_64");
	CHECK(job.match != NULL && job.claimed == job.match);
	CHECK_STR(job.sha256, job.match->sha256);
	cctl_install_job_release(&job, 0);
	cctl_install_result_release(&res);
	CHECK(!exists("versions/9.19.0.56-cuda13"));
	teardown(&r, &m);
}

/* An archive no manifest knows stops at identify, with its code on the
 * context; --allow-unknown takes it from its header, unverified. */
static void identify_unknown(void)
{
	struct cctl_root r = { 0 };
	struct cctl_manifest m;
	struct cctl_install_opts o = { 0 };
	struct cctl_install_job job;
	struct cctl_install_result res;
	struct cctl_ctx ctx;
	cctl_ctx_init(&ctx);
	CHECK_INT(setup(&r, &m, V8), 0);
	o.archive = archive;
	CHECK_INT(cctl_install_identify(&ctx, &r, &m, &o, &job, &res),
		  CCTL_EUNKNOWN_ARCHIVE);
	CHECK_INT(ctx.code, CCTL_EUNKNOWN_ARCHIVE);
	CHECK_CONTAINS(ctx.msg, "matches none of the");
	cctl_install_job_release(&job, 1);
	cctl_install_result_release(&res);
	o.allow_unknown = 1;
	CHECK_INT(cctl_install_identify(NULL, &r, &m, &o, &job, &res), 0);
	CHECK_STR(res.rec.version, "8.9.7");
	CHECK_INT(res.rec.cuda, 12);
	CHECK_INT(res.rec.verified, 0);
	cctl_install_job_release(&job, 0);
	cctl_install_result_release(&res);
	teardown(&r, &m);
}

/* place writes the version and its record; a second identify + check of
 * the same archive finds it already there and ends the pipeline. */
static void place_then_already(void)
{
	struct cctl_root r = { 0 };
	struct cctl_manifest m;
	struct cctl_install_opts o = { 0 };
	struct cctl_install_job job;
	struct cctl_install_result res;
	struct cctl_install rec;
	CHECK_INT(setup(&r, &m, V9), 0);
	o.archive = archive;
	o.no_activate = 1;
	CHECK_INT(cctl_install_identify(NULL, &r, &m, &o, &job, &res), 0);
	CHECK_INT(cctl_install_check(NULL, &r, &job, &res), 0);
	CHECK_INT(res.already, 0);
	CHECK_INT(cctl_install_place(NULL, &job, &res), 0);
	CHECK(exists("versions/9.19.0.56-cuda13/lib/libcudnn.so.9"));
	CHECK(!exists("versions/.staging-0"));
	CHECK_INT(job.staged, 0);
	CHECK_INT(cctl_install_activate(NULL, &r, &job, &res), 0);
	CHECK_INT(res.activated, 1); /* the first install is always active */
	CHECK(exists("current"));
	cctl_install_job_release(&job, 0);
	CHECK(exists("versions/9.19.0.56-cuda13"));
	{
		char *dir = cctl_path_join(root_path, "versions",
					   "9.19.0.56-cuda13", NULL);
		CHECK_INT(cctl_record_read(NULL, dir, &rec), 0);
		free(dir);
		CHECK_STR(rec.archive_sha256, res.rec.archive_sha256);
		CHECK_INT(rec.nfiles, res.rec.nfiles);
		cctl_install_release(&rec);
	}
	cctl_install_result_release(&res);

	CHECK_INT(cctl_install_identify(NULL, &r, &m, &o, &job, &res), 0);
	CHECK_INT(cctl_install_check(NULL, &r, &job, &res), 0);
	CHECK_INT(res.already, 1);
	CHECK_INT(res.rec.active, 1);
	cctl_install_job_release(&job, 0);
	cctl_install_result_release(&res);
	teardown(&r, &m);
}

/* A folder of the same id from another archive is a conflict; a job
 * released as failed after place takes the version back out. */
static void conflict_and_rollback(void)
{
	struct cctl_root r = { 0 };
	struct cctl_manifest m;
	struct cctl_install_opts o = { 0 };
	struct cctl_install_job job;
	struct cctl_install_result res;
	struct cctl_ctx ctx;
	char *dir;
	cctl_ctx_init(&ctx);
	CHECK_INT(setup(&r, &m, V9), 0);
	o.archive = archive;
	dir = cctl_path_join(root_path, "versions", "9.19.0.56-cuda13", NULL);
	CHECK_INT(cctl_os_mkdirs(NULL, dir), 0);
	CHECK_INT(cctl_install_identify(&ctx, &r, &m, &o, &job, &res), 0);
	CHECK_INT(cctl_install_check(&ctx, &r, &job, &res), CCTL_EFAIL);
	CHECK_CONTAINS(ctx.msg, "already holds cuDNN 9.19.0.56-cuda13");
	cctl_install_job_release(&job, 1);
	cctl_install_result_release(&res);
	CHECK(exists("versions/9.19.0.56-cuda13")); /* not ours: kept */
	CHECK_INT(cctl_os_rmtree(NULL, dir), 0);
	free(dir);

	CHECK_INT(cctl_install_identify(NULL, &r, &m, &o, &job, &res), 0);
	CHECK_INT(cctl_install_check(NULL, &r, &job, &res), 0);
	CHECK_INT(cctl_install_place(NULL, &job, &res), 0);
	CHECK(exists("versions/9.19.0.56-cuda13/include/cudnn_version.h"));
	cctl_install_job_release(&job, 1); /* as if activation had failed */
	cctl_install_result_release(&res);
	CHECK(!exists("versions/9.19.0.56-cuda13"));
	teardown(&r, &m);
}

/* download --output copies what was verified, or nothing: a cached file
 * replaced after its check (a shared cache) is caught while copying. */
static void export_checks_the_copy(void)
{
	char dir[64] = "/tmp/cctl-export-XXXXXX", src[128], out_dir[128];
	struct cctl_release r;
	struct cctl_ctx ctx;
	char *out = NULL;
	FILE *f;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(src, sizeof(src), "%s/a.tar.xz", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	f = fopen(src, "wb");
	CHECK(f != NULL);
	fputs("abc", f);
	fclose(f);
	memset(&r, 0, sizeof(r));
	r.size = 3; /* sha256("abc") */
	snprintf(r.sha256, sizeof(r.sha256), "%s",
		 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_fetch_export(&ctx, src, out_dir, &r, &out), 0);
	CHECK(out != NULL);
	free(out);
	out = NULL;
	/* a 14-byte substitute */
	f = fopen(src, "wb");
	fputs("substituted!!\n", f);
	fclose(f);
	cctl_os_rmtree(NULL, out_dir);
	CHECK_INT(cctl_fetch_export(&ctx, src, out_dir, &r, &out), CCTL_EMISMATCH);
	CHECK(out == NULL);
	CHECK_CONTAINS(ctx.msg, "changed after it was verified");
	{
		char copy[160];
		struct cctl_os_stat st;
		snprintf(copy, sizeof(copy), "%s/a.tar.xz", out_dir);
		CHECK_INT(cctl_os_stat(NULL, copy, &st), 0);
		CHECK_INT(st.type, CCTL_OS_NONE);
		CHECK_INT(cctl_os_stat(NULL, src, &st), 0);
		CHECK_INT(st.type, CCTL_OS_NONE); /* the substitute is gone */
	}
	cctl_os_rmtree(NULL, dir);
}

/* ------------------------------------------------- install VERSION */

/* A folder mirror holding the 9.19 fixture where its manifest says, and
 * an empty cache, both under the test's folder: the fetch options. */
static void folder_mirror(struct cctl_fetch_opts *fo, char *mirror, char *cache,
			  size_t n)
{
	struct cctl_buf data = CCTL_BUF_INIT;
	char *dir, *dst;
	snprintf(mirror, n, "%.*s/mirror", (int)(strlen(root_path) - 5), root_path);
	snprintf(cache, n, "%.*s/cache", (int)(strlen(root_path) - 5), root_path);
	dir = cctl_path_join(mirror, "cudnn", "linux-x86_64", NULL);
	dst = cctl_path_join(dir, V9, NULL);
	cctl_os_mkdirs(NULL, dir);
	if (!cctl_os_read_file(NULL, archive, &data))
		cctl_os_write_file_atomic(NULL, dst, data.buf, data.len);
	cctl_buf_release(&data);
	free(dir);
	free(dst);
	memset(fo, 0, sizeof(*fo));
	fo->mirror = mirror;
	fo->cache = cache;
}

static char notice[1024];
static void keep_notice(void *ud, enum cctl_notice kind, const char *msg)
{
	(void)ud;
	if (kind == CCTL_NOTICE_RELEASE)
		snprintf(notice, sizeof(notice), "%s", msg);
}

/* "9.19" from a folder mirror, through the core alone: the release
 * chosen and said, the archive fetched into the cache, installed. */
static void version_from_folder_mirror(void)
{
	struct cctl_root r = { 0 };
	struct cctl_manifest m;
	struct cctl_fetch_opts fo;
	struct cctl_install_opts o = { 0 };
	struct cctl_install_result res = { 0 };
	struct cctl_fetch_result f = { 0 };
	const struct cctl_release *rel;
	char mirror[300], cache[300];
	struct cctl_ctx ctx;
	cctl_ctx_init(&ctx);
	ctx.on_notice = keep_notice;
	CHECK_INT(setup(&r, &m, V9), 0);
	folder_mirror(&fo, mirror, cache, sizeof(mirror));
	o.no_activate = 1;
	notice[0] = '\0';
	CHECK_INT(cctl_install_version(&ctx, &r, &m, &fo, "9.19", &o, &rel, &f, &res), 0);
	CHECK_STR(rel->version, "9.19.0.56");
	CHECK_CONTAINS(notice, "cuDNN 9.19.0.56 for CUDA 13 (linux-x86_64)");
	CHECK_STR(res.rec.id, "9.19.0.56-cuda13");
	CHECK_INT(res.rec.verified, 1);
	CHECK_INT(f.cached, 0);
	CHECK_CONTAINS(f.path, cache);
	CHECK(exists("versions/9.19.0.56-cuda13/lib/libcudnn.so.9"));
	cctl_install_result_release(&res);
	cctl_fetch_result_release(&f);
	/* a version no manifest has, and a mirror with none to add */
	CHECK_INT(cctl_install_version(&ctx, &r, &m, &fo, "9.42", &o, &rel, &f, &res),
		  CCTL_ENORELEASE);
	cctl_fetch_result_release(&f);
	teardown(&r, &m);
}

/* A cached copy of the right size but other bytes: taken by its size,
 * found wrong by the install's hash, fetched again from the mirror once,
 * and the right one installed and kept. */
static void version_refetched_over_tampered_cache(void)
{
	struct cctl_root r = { 0 };
	struct cctl_manifest m;
	struct cctl_fetch_opts fo;
	struct cctl_install_opts o = { 0 };
	struct cctl_install_result res = { 0 };
	struct cctl_fetch_result f = { 0 };
	const struct cctl_release *rel;
	char mirror[300], cache[300], hex[65];
	struct cctl_buf data = CCTL_BUF_INIT;
	char *dir, *cached;
	CHECK_INT(setup(&r, &m, V9), 0);
	folder_mirror(&fo, mirror, cache, sizeof(mirror));
	dir = cctl_path_join(cache, "archives", NULL);
	cached = cctl_path_join(dir, V9, NULL);
	cctl_os_mkdirs(NULL, dir);
	CHECK_INT(cctl_os_read_file(NULL, archive, &data), 0);
	data.buf[data.len / 2] ^= 0x55; /* same size, other bytes */
	CHECK_INT(cctl_os_write_file_atomic(NULL, cached, data.buf, data.len), 0);
	o.no_activate = 1;
	CHECK_INT(cctl_install_version(NULL, &r, &m, &fo, "9.19", &o, &rel, &f, &res), 0);
	CHECK_STR(res.rec.id, "9.19.0.56-cuda13");
	CHECK_INT(f.cached, 0); /* the second fetch, from the mirror */
	CHECK_INT(cctl_sha256_file(NULL, cached, hex, NULL), 0);
	CHECK_STR(hex, rel->sha256);
	cctl_install_result_release(&res);
	cctl_fetch_result_release(&f);
	cctl_buf_release(&data);
	free(dir);
	free(cached);
	teardown(&r, &m);
}

HARNESS_MAIN(TEST_ENTRY(identify_verified), TEST_ENTRY(identify_unknown),
	     TEST_ENTRY(place_then_already), TEST_ENTRY(conflict_and_rollback),
	     TEST_ENTRY(export_checks_the_copy),
	     TEST_ENTRY(version_from_folder_mirror),
	     TEST_ENTRY(version_refetched_over_tampered_cache))

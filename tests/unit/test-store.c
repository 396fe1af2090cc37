/* The install root: checks, records, finding versions by prefix. */
#include <stdio.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"
#include "harness.h"

static char root_path[256];

static void make_root(void)
{
	const char *tmp = getenv("TMPDIR");
	static int n;
	/* the process and a count: ctest runs each test function as a
	 * process of its own, side by side (rand() unseeded gave every one
	 * the same root) */
	snprintf(root_path, sizeof(root_path), "%s/cctl-store-%ld-%d",
		 tmp ? tmp : "/tmp", cctl_os_pid(), n++);
}

static void add_install(struct cctl_root *r, const char *version, int cuda)
{
	struct cctl_ctx ctx;
	struct cctl_install in;
	struct cctl_file f;
	char dir[512];
	char cmd[600];
	memset(&in, 0, sizeof(in));
	memset(&f, 0, sizeof(f));
	cctl_ctx_init(&ctx);
	in.id = cctl_xstrfmt("%s-cuda%d", version, cuda);
	in.version = (char *)version;
	in.cuda = cuda;
	in.platform = (char *)"linux-x86_64";
	in.installed_at = (char *)"2026-11-29T00:00:00Z";
	f.path = (char *)"lib/libcudnn.so.9";
	f.size = 42;
	strcpy(f.sha256, "ab");
	f.mtime_ns = 123456789012345678LL;
	in.files = &f;
	in.nfiles = 1;
	snprintf(dir, sizeof(dir), "%s/versions/%s", r->path, in.id);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	if (system(cmd) != 0)
		abort();
	if (cctl_record_write(&ctx, dir, &in))
		abort();
	free(in.id);
}

static void root_checks(void)
{
	struct cctl_ctx ctx;
	char longroot[300];
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_root_check(&ctx, "/opt/cudnn", 80), 0);
	CHECK_INT(cctl_root_check(&ctx, "/opt/my cudnn", 10), CCTL_EBADROOT);
	CHECK_CONTAINS(ctx.msg, "a space");
	CHECK(ctx.hint[0] != '\0');
	CHECK_INT(cctl_root_check(&ctx, "/opt/c\xc3\xbc" "dnn", 10), CCTL_EBADROOT);
	CHECK_CONTAINS(ctx.msg, "non-ASCII");
	CHECK_INT(cctl_root_check(&ctx, "/opt/$HOME", 10), CCTL_EBADROOT);
	memset(longroot, 'a', 150);
	longroot[0] = '/';
	longroot[150] = '\0';
	CHECK_INT(cctl_root_check(&ctx, longroot, 50), 0);
	CHECK_INT(cctl_root_check(&ctx, longroot, 51), CCTL_EBADROOT);
	CHECK_CONTAINS(ctx.msg, "201 characters");
}

static void record_roundtrip(void)
{
	struct cctl_ctx ctx;
	struct cctl_root r;
	struct cctl_install in;
	char dir[512];
	cctl_ctx_init(&ctx);
	make_root();
	CHECK_INT(cctl_root_open(&ctx, &r, root_path, 1, 1), 0);
	add_install(&r, "9.19.0.56", 13);
	snprintf(dir, sizeof(dir), "%s/versions/9.19.0.56-cuda13", r.path);
	CHECK_INT(cctl_record_read(&ctx, dir, &in), 0);
	CHECK_STR(in.id, "9.19.0.56-cuda13");
	CHECK_INT(in.cuda, 13);
	CHECK_INT(in.nfiles, 1);
	CHECK_STR(in.files[0].path, "lib/libcudnn.so.9");
	CHECK_INT(in.files[0].size, 42);
	CHECK_INT(in.files[0].mtime_ns, 123456789012345678LL);
	CHECK_INT(in.size, 42);
	cctl_install_release(&in);
	/* a second open of the root while the lock is held fails */
	{
		struct cctl_root r2;
		CHECK_INT(cctl_root_open(&ctx, &r2, root_path, 1, 1), CCTL_ELOCKED);
		CHECK_CONTAINS(ctx.msg, "in use");
	}
	CHECK_INT(cctl_os_rmtree(&ctx, r.path), 0);
	cctl_root_close(&r);
}

static void find_by_prefix(void)
{
	struct cctl_ctx ctx;
	struct cctl_root r;
	struct cctl_install in;
	cctl_ctx_init(&ctx);
	make_root();
	CHECK_INT(cctl_root_open(&ctx, &r, root_path, 1, 0), 0);
	add_install(&r, "9.14.0.64", 12);
	add_install(&r, "9.1.0.70", 12);
	add_install(&r, "8.9.7.29", 11);
	add_install(&r, "8.9.7.29", 12);

	CHECK_INT(cctl_store_find(&ctx, &r, "9.1", 0, &in), 0);
	CHECK_STR(in.id, "9.1.0.70-cuda12"); /* not 9.14 */
	cctl_install_release(&in);
	CHECK_INT(cctl_store_find(&ctx, &r, "9", 0, &in), CCTL_EAMBIGUOUS);
	CHECK_CONTAINS(ctx.msg, "9.1.0.70-cuda12, 9.14.0.64-cuda12");
	CHECK_INT(cctl_store_find(&ctx, &r, "8.9.7", 0, &in), CCTL_EAMBIGUOUS);
	CHECK_CONTAINS(ctx.msg, "8.9.7.29-cuda11, 8.9.7.29-cuda12");
	CHECK_INT(cctl_store_find(&ctx, &r, "8.9.7", 11, &in), 0);
	CHECK_STR(in.id, "8.9.7.29-cuda11");
	cctl_install_release(&in);
	CHECK_INT(cctl_store_find(&ctx, &r, "8.9.7.29-cuda12", 0, &in), 0);
	cctl_install_release(&in);
	CHECK_INT(cctl_store_find(&ctx, &r, "7", 0, &in), CCTL_ENOTFOUND);
	CHECK_CONTAINS(ctx.hint, "installed: 8.9.7.29-cuda11");
	CHECK_INT(cctl_os_rmtree(&ctx, r.path), 0);
	cctl_root_close(&r);
}

HARNESS_MAIN(TEST_ENTRY(root_checks), TEST_ENTRY(record_roundtrip),
	     TEST_ENTRY(find_by_prefix))

/* The Windows loader module: the PE reader on Windows' own DLLs (Wine's
 * under Wine) and on damaged files, and the DLL search order. */
#include <stdio.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"
#include "harness.h"

static char kernel32[1024];

static void search_finds_system32(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_hits h;
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_os_lib_search(&ctx, "kernel32.dll", "", NULL, &h), 0);
	CHECK(h.n >= 1);
	CHECK_STR(h.v[0].origin, "System32");
	snprintf(kernel32, sizeof(kernel32), "%s", h.v[0].path);
	cctl_lib_hits_release(&h);
	/* a name that is nowhere */
	CHECK_INT(cctl_os_lib_search(&ctx, "cctl-no-such.dll", "", NULL, &h), 0);
	CHECK_INT(h.n, 0);
	cctl_lib_hits_release(&h);
	/* a path is not a name */
	CHECK_INT(cctl_os_lib_search(&ctx, "a\\b.dll", NULL, NULL, &h), CCTL_EFAIL);
}

static void reads_a_system_dll(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_info info;
	cctl_ctx_init(&ctx);
	if (!kernel32[0])
		search_finds_system32();
	CHECK(kernel32[0] != '\0');
	CHECK_INT(cctl_os_lib_info(&ctx, kernel32, &info), 0);
	CHECK_INT(info.loadable, 1);
	CHECK(info.nneeded >= 1); /* kernel32 imports ntdll/kernelbase */
	CHECK(info.file_version != NULL);
	CHECK_INT(info.nrunpath, 1); /* its own folder: LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR */
	cctl_lib_info_release(&info);
}

static void refuses_damaged_files(void)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *says;
	} cases[] = {
		{ "", 0, "no MZ header" },
		{ "hello, world", 12, "no MZ header" },
		{ "MZ\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
		  "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\xff\xff\0\0",
		  64, "no PE header" },
	};
	const char *tmp = cctl_os_getenv("TEMP");
	char path[1024];
	snprintf(path, sizeof(path), "%s/cctl-test-pe-%ld.dll", tmp ? tmp : ".",
		 cctl_os_pid());
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cctl_ctx ctx;
		struct cctl_lib_info info;
		cctl_ctx_init(&ctx);
		CHECK_INT(cctl_os_write_file_atomic(&ctx, path, cases[i].bytes,
						    cases[i].len),
			  0);
		CHECK_INT(cctl_os_lib_info(&ctx, path, &info), CCTL_EFAIL);
		CHECK_CONTAINS(ctx.msg, cases[i].says);
	}
	{
		struct cctl_ctx ctx;
		cctl_ctx_init(&ctx);
		cctl_os_unlink(&ctx, path);
	}
}

HARNESS_MAIN(TEST_ENTRY(search_finds_system32), TEST_ENTRY(reads_a_system_dll),
	     TEST_ENTRY(refuses_damaged_files))

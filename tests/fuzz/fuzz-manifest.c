/* Fuzz target: NVIDIA manifest parsing (cJSON and the shape walk).  Every
 * entry it accepts must stay inside its folder once made into a path: the
 * install folder (versions/<version>-cuda<N>), the cache, a folder mirror
 * and a URL mirror.  A way out aborts, so the fuzzer reports it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cudnnctl/cudnnctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const char *base, const char *leaf_or_rel)
{
	char *p = cctl_path_join(base, leaf_or_rel, NULL);
	if (!cctl_path_within(base, p))
		abort();
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	cctl_ctx_init(&ctx);
	cctl_manifest_parse(&ctx, &m, (const char *)data, size, "fuzz");
	for (size_t i = 0; i < m.n; i++) {
		const struct cctl_release *r = &m.v[i];
		char *id = cctl_xstrfmt("%s-cuda%d", r->version, r->cuda);
		char *url;
		if (!cctl_id_valid(id) || !cctl_platform_find(r->platform))
			abort();
		inside("/root/versions", id);
		inside("/cache/archives", r->file_name);
		inside("/mirror", r->relative_path);
		url = cctl_xstrfmt("https://mirror/redist/%s", r->relative_path);
		if (!cctl_path_within("https://mirror/redist", url))
			abort();
		free(url);
		free(id);
		(void)cctl_manifest_find_name(&m, r->file_name);
	}
	cctl_manifest_release(&m);
	return 0;
}

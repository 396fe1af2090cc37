/* Fuzz target: NVIDIA manifest parsing (cJSON and the shape walk). */
#include <stddef.h>
#include <stdint.h>

#include "cudnnctl/cudnnctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cctl_ctx ctx;
	struct cctl_manifest m = { 0 };
	cctl_ctx_init(&ctx);
	cctl_manifest_parse(&ctx, &m, (const char *)data, size, "fuzz");
	for (size_t i = 0; i < m.n; i++)
		(void)cctl_manifest_find_name(&m, m.v[i].file_name);
	cctl_manifest_release(&m);
	return 0;
}

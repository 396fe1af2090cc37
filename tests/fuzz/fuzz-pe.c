/* Fuzz target: the PE reader of the Windows OS layer (src/platform/pe.c),
 * compiled on Linux, reading from memory. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/portable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	const uint8_t *data;
	size_t size;
};

static int mem_read_at(void *opaque, uint64_t off, void *buf, size_t n)
{
	const struct mem *m = opaque;
	/* pe.c promises to stay inside the file */
	if (off > m->size || n > m->size - off)
		abort();
	memcpy(buf, m->data + off, n);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct cctl_pe_source src = { mem_read_at, &m, size };
	struct cctl_lib_info info;
	const char *why = NULL;
	if (cctl_pe_read(&src, &info, &why)) {
		if (!why || info.needed || info.file_version)
			abort();
		return 0;
	}
	for (size_t i = 0; i < info.nneeded; i++)
		if (!info.needed[i][0] || strlen(info.needed[i]) > 259)
			abort();
	cctl_lib_info_release(&info);
	return 0;
}

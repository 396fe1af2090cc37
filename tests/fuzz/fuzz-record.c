/* Fuzz target: the install record reader (.cudnnctl-record), through a
 * file in a private folder as cctl_record_read reads it. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudnnctl/cudnnctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	char path[128];
	struct cctl_install in;
	FILE *f;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/cctl-fuzz-record-XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof(path), "%s/%s", dir, CCTL_RECORD_NAME);
	if (!(f = fopen(path, "wb")))
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	memset(&in, 0, sizeof(in));
	if (!cctl_record_read(NULL, dir, &in))
		cctl_install_release(&in);
	return 0;
}

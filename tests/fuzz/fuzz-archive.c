/* Fuzz target: the archive scan (every refusal rule) over libarchive. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cudnnctl/cudnnctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/cctl-fuzz-XXXXXX";
	struct cctl_ctx ctx;
	struct cctl_archive a;
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	unlink(path);
	if (write(fd, data, size) == (ssize_t)size) {
		cctl_ctx_init(&ctx);
		/* compressed tars go through the spool, in /tmp */
		if (!cctl_archive_scan(&ctx, fd, "fuzz.zip", "/tmp", 0, &a)) {
			char *v = cctl_parse_version_header(a.version_h);
			free(v);
		}
		cctl_archive_release(&a);
	}
	close(fd);
	return 0;
}

/* Fuzz target: the ELF reader of the verify stages (OS layer). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/cctl-fuzz-elf-XXXXXX";
	struct cctl_ctx ctx;
	struct cctl_lib_info info;
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		cctl_ctx_init(&ctx);
		if (!cctl_os_lib_info(&ctx, path, &info))
			cctl_lib_info_release(&info);
	}
	close(fd);
	unlink(path);
	return 0;
}

/* Helpers shared by the core files; not part of the public API. */
#ifndef CUDNNCTL_INTERNAL_H
#define CUDNNCTL_INTERNAL_H

#include "cudnnctl/cudnnctl.h"

/* Sets ctx->msg (and clears the hint) and returns code. */
int cctl__error(struct cctl_ctx *ctx, int code, const char *fmt, ...) CCTL_FORMAT(3, 4);
/* Sets the next step for the user on the last error. */
void cctl__hint(struct cctl_ctx *ctx, const char *fmt, ...) CCTL_FORMAT(2, 3);
void cctl__warn(struct cctl_ctx *ctx, const char *fmt, ...) CCTL_FORMAT(2, 3);
void cctl__progress(struct cctl_ctx *ctx, enum cctl_phase phase,
		    uint64_t done, uint64_t total);

#define CCTL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif

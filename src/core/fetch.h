/* What fetch.c, mirror.c and release.c share; not part of the API. */
#ifndef CUDNNCTL_FETCH_H
#define CUDNNCTL_FETCH_H

#include "cudnnctl/cudnnctl.h"

/* True for an http:// or https:// mirror, false for a folder. */
int cctl__mirror_is_url(const char *mirror);
/* The URL or path of rel (a manifest's relative_path, an index) on the
 * mirror (free()). */
char *cctl__mirror_path(const char *mirror, const char *rel);
/* Seconds to wait for a connection (stall 0) or for the next byte
 * (stall 1): the options', else $CUDNNCTL_TIMEOUT, else 30. */
int cctl__fetch_timeout(const struct cctl_fetch_opts *o, int stall);
/* A small file of the mirror (an index page, a manifest) into out, at
 * most max bytes. */
int cctl__mirror_get(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		     const char *rel, size_t max, struct cctl_buf *out);

/* After a download that got no answer at all (the host did not resolve
 * or connect): the next steps, a proxy, another mirror, or --offline with
 * what the cache holds, as the hint (unless the OS layer gave one). */
void cctl__unreachable_hint(struct cctl_ctx *ctx);

#endif

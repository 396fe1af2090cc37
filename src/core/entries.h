/*
 * The entry checks of entries.c, for archive.c: everything about an
 * archive's names and tree that needs no libarchive.  Each refusal is
 * CCTL_EUNSAFE with the entry named and "nothing was written".
 */
#ifndef CUDNNCTL_ENTRIES_H
#define CUDNNCTL_ENTRIES_H

#include "cudnnctl/cudnnctl.h"

/* Refuses the archive `file` for entry `name` (quoted) because `why`. */
int cctl__refuse(struct cctl_ctx *ctx, const char *file, const char *name,
		 const char *why);
/* Why a name is not plain printable ASCII ("a control character", ...),
 * or NULL; *cp gets the offending code point where there is one. */
const char *cctl__bad_chars(const char *s, unsigned *cp);
/* Normalises an entry name into norm ('/'-joined, relative, "." and empty
 * components dropped); refuses absolute names, drive letters and "..". */
int cctl__normalise(struct cctl_ctx *ctx, const char *file, const char *name,
		    struct cctl_buf *norm);
/* cctl__bad_chars, then cctl__normalise. */
int cctl__entry_name_check(struct cctl_ctx *ctx, const char *file,
			   const char *name, struct cctl_buf *norm);
/* Once every entry is read: the checks that need the whole tree, then the
 * wrapper folder dropped (a->prefix) and the layout's renames applied;
 * fills a->longest_path. */
int cctl__entries_normalise(struct cctl_ctx *ctx, struct cctl_archive *a);

#endif

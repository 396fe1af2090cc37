/*
 * libarchive behind a small interface (archive-lib.c, the only file that
 * uses it): readers over byte sources the caller supplies, the entries
 * they yield as plain values, and a disk writer with the secure options
 * on.  The scan (archive-scan.c), the extraction on one thread
 * (extract.c) and the parallel extraction (extract-parallel.c) are
 * written against it.
 *
 * Every function that fails reports the failure on ctx (naming `file`,
 * the archive, or the path written) and returns its CCTL_E* code; a
 * failure of the source itself (the caller's I/O error, kept in
 * *io_code) is what is returned when there is one.
 */
#ifndef CUDNNCTL_ARCHIVE_LIB_H
#define CUDNNCTL_ARCHIVE_LIB_H

#include <stddef.h>
#include <stdint.h>

#include "cudnnctl/cudnnctl.h"

/* What a reader understands. */
enum {
	CCTL__AR_FILTERS = 1, /* xz, gzip, bzip2 compression */
	CCTL__AR_ZIP = 2,
	CCTL__AR_TAR = 4,     /* tar and GNU tar */
	CCTL__AR_RAW = 8,     /* the decompressed stream as one entry */
};

/* Where a reader's bytes come from. */
struct cctl__asrc {
	void *ud;
	/* The next block (*n = 0 at the end): 0, or -1 with *err an errno
	 * value (EIO, ENOMEM) and *why saying what (or NULL). */
	int (*read)(void *ud, const void **buf, size_t *n, int *err,
		    const char **why);
	/* Moves to off from whence (SEEK_*), *pos the new offset; nonzero on
	 * a failure.  NULL: the source cannot seek. */
	int (*seek)(void *ud, int64_t off, int whence, int64_t *pos);
	/* Skips n bytes: the bytes skipped, 0 to have them read instead.
	 * NULL: always read. */
	int64_t (*skip)(void *ud, int64_t n);
	/* The source's own error code (a CCTL_E* the OS layer reported),
	 * 0 while there is none; NULL when it keeps none. */
	const int *io_code;
};

/* One entry as the archive describes it. */
enum cctl__akind { CCTL__AK_FILE, CCTL__AK_DIR, CCTL__AK_SYMLINK, CCTL__AK_OTHER };
struct cctl__aent {
	const char *name;     /* UTF-8 where the archive says, else its bytes */
	const char *hardlink; /* the target of a hard link, else NULL */
	const char *symlink;  /* the target of a symbolic link, else NULL */
	enum cctl__akind kind;
	int size_set;         /* the header gives the size */
	uint64_t size;
	unsigned perm;
	int64_t mtime;
	long mtime_nsec;
};

struct cctl__ar;
struct cctl__aw;

/* What cctl__ar_next and cctl__ar_block return at the end (failures are
 * the negative CCTL_E* codes). */
#define CCTL__AR_END 1

/* Opens a reader of `formats` over src; file names the archive in
 * messages (kept, not copied). */
int cctl__ar_open(struct cctl_ctx *ctx, unsigned formats,
		  const struct cctl__asrc *src, const char *file,
		  struct cctl__ar **out);
void cctl__ar_free(struct cctl__ar *r);
/* The next entry into *e (valid until the next call): 0, CCTL__AR_END,
 * or a failure's code. */
int cctl__ar_next(struct cctl_ctx *ctx, struct cctl__ar *r,
		  struct cctl__aent *e);
/* Up to len bytes of the current entry's data: *got = 0 at its end. */
int cctl__ar_read(struct cctl_ctx *ctx, struct cctl__ar *r, void *buf,
		  size_t len, size_t *got);
/* The same without reporting: -1 with *err (an errno value) and *why
 * on a failure, for a source that is another reader's data. */
long long cctl__ar_read_quiet(struct cctl__ar *r, void *buf, size_t len,
			      int *err, const char **why);
/* The current entry's next block, at offset *off: 0, CCTL__AR_END, or a
 * failure's code. */
int cctl__ar_block(struct cctl_ctx *ctx, struct cctl__ar *r,
		   const void **buf, size_t *n, int64_t *off);
/* Bytes the reader has taken from its source (its progress). */
uint64_t cctl__ar_consumed(struct cctl__ar *r);

/* A writer of entries to the disk: no "..", no writing through links, no
 * overwriting, times restored. */
struct cctl__aw *cctl__aw_new(void);
void cctl__aw_free(struct cctl__aw *w); /* also sets directories' times */
/* Creates the reader's current entry at path (a hard link to link when
 * link is not NULL) with permissions perm (unless perm < 0). */
int cctl__aw_header(struct cctl_ctx *ctx, struct cctl__aw *w,
		    struct cctl__ar *r, const char *path, const char *link,
		    int perm);
/* What cctl__aw_make creates without a reader: a folder, a symbolic link
 * to `target` or a hard link to the file `target` (a path as written). */
struct cctl__amake {
	enum cctl__akind kind; /* CCTL__AK_DIR, CCTL__AK_SYMLINK or CCTL__AK_FILE
				* (a hard link) */
	const char *path;
	const char *target;
	int perm;
	int64_t mtime;
	long mtime_nsec;
};
int cctl__aw_make(struct cctl_ctx *ctx, struct cctl__aw *w,
		  const struct cctl__amake *m);
int cctl__aw_data(struct cctl_ctx *ctx, struct cctl__aw *w, const void *buf,
		  size_t n, int64_t off, const char *path);
int cctl__aw_finish(struct cctl_ctx *ctx, struct cctl__aw *w,
		    const char *path);

#endif

/*
 * What the four parts of the archive code share: reading and spooling
 * (archive-read.c), the scan (archive-scan.c), the extraction on one
 * thread (extract.c) and by several workers (extract-parallel.c).  The
 * public interface is cctl_archive_* in cudnnctl.h; libarchive itself is
 * behind archive-lib.h.
 */
#ifndef CUDNNCTL_ARCHIVE_INTERNAL_H
#define CUDNNCTL_ARCHIVE_INTERNAL_H

#include "archive-lib.h"
#include "internal.h"

#define CCTL__MAX_JOBS 64     /* --jobs, CUDNNCTL_JOBS */
#define CCTL__DEFAULT_JOBS 16 /* at most, from the number of processors */

/*
 * The reader libarchive reads the archive file through: every byte that
 * comes by in file order goes into a SHA-256, so the pass that reads the
 * archive also hashes it; what the pass skipped or read out of order is
 * hashed at the end (cctl__reader_finish).
 */
struct cctl__reader {
	int fd;
	struct cctl__feed *feed; /* read in fd's place, or NULL */
	struct cctl_ctx *ctx; /* where a read or seek error of the file goes */
	const char *name;     /* the file, for that message */
	int io_code;    /* the code of such an error, else 0 */
	int64_t pos;    /* file offset of the next read */
	int64_t hashed; /* bytes [0, hashed) are in h (or queued for it) */
	struct cctl_sha256 *h;
	struct cctl__hashq *q; /* hashes on another thread, or NULL */
	unsigned char buf[1 << 16];
};

/* A reader of the archive file (hashing it), or of the spool (SPOOL: a
 * tar, not hashed). */
enum cctl__read_kind { CCTL__READ_ARCHIVE, CCTL__READ_RAW, CCTL__READ_SPOOL };

/* Opens a libarchive reader of a's file or spool through r, from its
 * start; on a failure r->h may be set (cctl__reader_drop frees it). */
int cctl__reader_open(struct cctl_ctx *ctx, struct cctl_archive *a,
		      struct cctl__reader *r, enum cctl__read_kind how,
		      struct cctl__ar **out);
/* Hashes what the pass did not read in order; writes the hex digest. */
int cctl__reader_finish(struct cctl_ctx *ctx, struct cctl__reader *r,
			const char *file, char hex[65], uint64_t *size);
/* Ends r's hash without a result. */
void cctl__reader_drop(struct cctl__reader *r);

/* What the scan reads: the archive itself, or the tar inside a
 * compressed file while it is copied to the spool (a->spool_fd). */
struct cctl__scan_in {
	struct cctl__ar *ar;       /* the entries */
	struct cctl__ar *progress; /* whose consumed bytes are the progress;
				    * NULL: rd->pos */
	struct cctl__reader *rd;   /* the file, hashed */
	struct cctl__spool *sp;    /* the decompressed copy, or NULL */
	uint64_t file_size;
};
/* Opens the archive for the scan: through a spool for a compressed tar
 * when spool_dir is given, else directly. */
int cctl__scan_in_open(struct cctl_ctx *ctx, struct cctl_archive *a,
		       const char *spool_dir, struct cctl__scan_in *s);
/* The scan has read all it needs: a thread reading the file for it
 * stops, so that the file's reader is the caller's alone. */
void cctl__scan_in_reads_done(struct cctl__scan_in *s);
/* The scan's progress: the file's bytes read for what it has seen. */
uint64_t cctl__scan_in_pos(const struct cctl__scan_in *s);
/* Frees what the scan read with; a failed write to the spool is what the
 * failure ret was, whichever read reported it.  Sets a->spool_size, or
 * closes the spool when it failed or was given up. */
int cctl__scan_in_close(struct cctl_ctx *ctx, struct cctl_archive *a,
			struct cctl__scan_in *s, const char *spool_dir, int ret);

/* The entry read now is the one the scan checked: same type, size and
 * link target.  The archive is read twice; a file swapped in between must
 * not smuggle in what the scan refused. */
int cctl__entry_matches(const struct cctl__aent *ae, const struct cctl_entry *e);
/* "'file' changed while it was being read" (naming the entry's path when
 * there is one): CCTL_EBADARCHIVE. */
int cctl__archive_changed(struct cctl_ctx *ctx, const struct cctl_archive *a,
			  const char *path);
/* The entry's path under dest (and its link's, for a hard link); the
 * permissions cudnnctl gives it, or -1 for the archive's. */
int cctl__entry_place(const struct cctl_entry *e, const char *dest,
		      struct cctl_buf *path, struct cctl_buf *link);
/* The archive's hash after an extraction that read a guarded file or a
 * private copy (see extract.c). */
void cctl__extracted_hash(struct cctl_archive *a);

/* A zip, or the spool of a tar.xz, extracted by `jobs` workers. */
int cctl__extract_parallel(struct cctl_ctx *ctx, struct cctl_archive *a,
			   const char *dest, unsigned jobs);

#endif

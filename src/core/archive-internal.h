/*
 * What the parts of the archive code share: reading (archive-read.c), the
 * scan (archive-scan.c) and the files it unpacks (archive-unpack.c), the
 * extraction on one thread (extract.c) and by several workers
 * (extract-parallel.c).  The
 * public interface is cctl_archive_* in cudnnctl.h; libarchive itself is
 * behind archive-lib.h.
 */
#ifndef CUDNNCTL_ARCHIVE_INTERNAL_H
#define CUDNNCTL_ARCHIVE_INTERNAL_H

#include "archive-lib.h"
#include "internal.h"

#define CCTL__MAX_JOBS 64     /* --jobs, CUDNNCTL_JOBS */
#define CCTL__DEFAULT_JOBS 16 /* at most, from the number of processors */
/* entries an archive may have (the scan refuses more); the resume
 * journal's member indexes are below it */
#define CCTL__MAX_ENTRIES 100000u

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
	/* a thread that reads the feed in order and hashes it, or NULL:
	 * the reads above then hash nothing */
	struct cctl__follow *follow;
	unsigned char buf[1 << 16];
};

/* A reader of the archive file (hashing it): its entries, or (RAW) the
 * decompressed stream as one. */
enum cctl__read_kind { CCTL__READ_ARCHIVE, CCTL__READ_RAW };

/* Opens a libarchive reader of a's file through r, from its
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
 * compressed file, whose files it unpacks as it goes. */
struct cctl__scan_in {
	struct cctl__ar *ar;       /* the entries */
	struct cctl__ar *progress; /* whose consumed bytes are the progress;
				    * NULL: rd->pos */
	struct cctl__reader *rd;   /* the file, hashed */
	struct cctl__untar *sp;    /* the decompression, or NULL */
	struct cctl__unpack *up;   /* where the files go, or NULL */
	struct cctl__unzip *uz;    /* the workers that write them, or NULL */
	uint64_t file_size;
};
/* A reader of an archive's file (or of its feed, while it downloads) at a
 * position of its own, for the extraction workers. */
struct cctl__preader {
	int fd;
	struct cctl__feed *feed;
	const char *name;
	struct cctl_ctx *ctx; /* where its failures are said */
	int io_code;
	uint64_t pos, size;
	unsigned char buf[1 << 16];
};
/* Opens r at the start of a's file (of feed, when that is not NULL) as a
 * libarchive reader of formats. */
int cctl__preader_open(struct cctl_ctx *ctx, const struct cctl_archive *a,
		       struct cctl__feed *feed, struct cctl__preader *r,
		       unsigned formats, struct cctl__ar **out);

/* Workers that unpack the regular files of a zip read as it downloads,
 * each as soon as the scan has read its header (archive-unzip.c). */
struct cctl__unzip;
/* Started for a, writing through u; NULL when no worker could start (the
 * scan unpacks on its own thread). */
struct cctl__unzip *cctl__unzip_start(struct cctl_archive *a,
				      struct cctl__unpack *u, unsigned jobs);
/* Hands entry idx (a regular file just read by the scan) to the workers;
 * *taken 0 when the unpacking is given up (or was).  A worker's failure
 * comes back from the next call. */
int cctl__unzip_add(struct cctl_ctx *ctx, struct cctl__unzip *z,
		    struct cctl_archive *a, size_t idx, int *taken);
/* Waits for the workers to finish all they were given and puts what they
 * found (each file's SHA-256) into a's entries; then frees z.  With ret
 * nonzero (or a NULL ctx), stops them and frees z without a word. */
int cctl__unzip_end(struct cctl_ctx *ctx, struct cctl__unzip *z,
		    struct cctl_archive *a, int ret);

/* Opens the archive for the scan: a compressed tar decompressed, its
 * files unpacked in a folder made in unpack_dir when that is given; else
 * read directly. */
int cctl__scan_in_open(struct cctl_ctx *ctx, struct cctl_archive *a,
		       const char *unpack_dir, struct cctl__scan_in *s);
/* The scan has read all it needs: a thread reading the file for it
 * stops, so that the file's reader is the caller's alone. */
void cctl__scan_in_reads_done(struct cctl__scan_in *s);
/* The scan's progress: the file's bytes read for what it has seen. */
uint64_t cctl__scan_in_pos(const struct cctl__scan_in *s);
/* Frees what the scan read with; returns ret.  When ret is 0 (and the
 * unpacking was not given up) a->unpacked is the folder of the files,
 * else that folder is removed. */
int cctl__scan_in_close(struct cctl_archive *a, struct cctl__scan_in *s,
			int ret);

/* The files of a compressed tar written as the scan reads them
 * (archive-unpack.c): into a fresh ".staging-" folder in dir; with part
 * (the NAME.part of a zip read as it downloads, of size bytes), into the
 * folder kept for that download (archive-resume.c), which outlives a
 * failure. */
int cctl__unpack_begin(struct cctl_ctx *ctx, const char *dir,
		       const char *part, uint64_t size,
		       struct cctl__unpack **out);
/* The folder's journal, or NULL for a staging folder. */
struct cctl__resume *cctl__unpack_resume(const struct cctl__unpack *u);

/* The members of a zip unpacked as it downloads, kept for the next try
 * (archive-resume.c; cctl__resume_orphan and _drop are in internal.h).
 * Opened (made, or taken up from the try before) in parent; *out NULL
 * when the download gets a staging folder instead. */
struct cctl__resume;
int cctl__resume_open(struct cctl_ctx *ctx, const char *parent,
		      const char *part, uint64_t size, struct cctl__resume **out);
const char *cctl__resume_dir(const struct cctl__resume *r);
/* The hash of the archive in order (archive-read.c): the next offset past
 * done where it tells its digest; then at done, h having hashed [0,done);
 * then that it stopped (no more checkpoints come). */
uint64_t cctl__resume_next(const struct cctl__resume *r, uint64_t done);
void cctl__resume_at(struct cctl__resume *r, uint64_t done,
		     const struct cctl_sha256 *h);
void cctl__resume_ended(struct cctl__resume *r);
/* A worker: 1 when entry idx (name, size) can be taken from path as the
 * try before wrote it (its sha256 set), which waits for the hash to
 * reach the checkpoint that vouches for it; else 0 and path is removed. */
int cctl__resume_take(struct cctl__resume *r, const char *path, size_t idx,
		      const char *name, uint64_t size, char sha256[65]);
/* Entry idx was written whole to its file from bytes before end. */
void cctl__resume_wrote(struct cctl__resume *r, size_t idx, const char *name,
			uint64_t size, uint64_t end, const char *sha256);
/* The journal closed (no more lines): before its folder is removed. */
void cctl__resume_detach(struct cctl__resume *r);
/* What was taken from the try before. */
void cctl__resume_kept(const struct cctl__resume *r, uint64_t *files,
		       uint64_t *bytes);
/* Frees r; the folder stays. */
void cctl__resume_close(struct cctl__resume *r);
/* Writes the reader's current entry (a regular file, a->v[idx]) to the
 * folder, hashing it into its sha256 and counting its size where the
 * header gives none; its bytes are also appended to keep when that is not
 * NULL.  *taken is 0 when the unpacking is given up (or was: the files
 * would not fit in the free space), and nothing of the entry was read. */
int cctl__unpack_file(struct cctl_ctx *ctx, struct cctl__unpack *u,
		      struct cctl__ar *ar, struct cctl_archive *a, size_t idx,
		      struct cctl_buf *keep, int *taken);
/* For the workers that unpack a zip as it downloads (archive-unzip.c).
 * Counts size bytes into what the folder will hold: 0 when they would not
 * fit (or the unpacking was given up), and nothing is counted. */
int cctl__unpack_reserve(struct cctl__unpack *u, uint64_t size);
/* What was written goes; the extraction reads the archive again.  No
 * worker may be writing into the folder. */
void cctl__unpack_give_up(struct cctl__unpack *u);
/* The file entry idx is unpacked as. */
void cctl__unpack_path(const struct cctl__unpack *u, size_t idx,
		       struct cctl_buf *path);
/* Writes ar's current entry (of file) to path with aw, with the
 * permissions mode's execute bits give, hashing it into sha256 and
 * counting *size; its bytes are appended to keep when that is not NULL.
 * hooks: the test hooks of cctl__interrupt run (the scan's thread). */
int cctl__unpack_write(struct cctl_ctx *ctx, const struct cctl__unpack *u,
		       struct cctl__aw *aw, struct cctl__ar *ar,
		       const char *file, const char *path, unsigned mode,
		       int hooks, struct cctl_buf *keep, char sha256[65],
		       uint64_t *size);
/* Ends the unpacking: with a (a scan that succeeded), a->unpacked and
 * a->unpacked_size are set unless it was given up; else the folder goes. */
void cctl__unpack_end(struct cctl__unpack *u, struct cctl_archive *a);
/* The extraction of an unpacked tar: the folders made under dest, the
 * files moved there, then the links. */
int cctl__unpack_place(struct cctl_ctx *ctx, struct cctl_archive *a,
		       const char *dest);

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
/* The folder of a file cudnnctl places itself, where the archive names
 * none: made, with its parents, only when it is missing (so that placing
 * a file into a folder already there changes nothing else on the disk). */
int cctl__make_parent(struct cctl_ctx *ctx, const char *path);
/* The archive's hash after an extraction that read a guarded file or a
 * private copy (see extract.c). */
void cctl__extracted_hash(struct cctl_archive *a);

/* A zip extracted by `jobs` workers. */
int cctl__extract_parallel(struct cctl_ctx *ctx, struct cctl_archive *a,
			   const char *dest, unsigned jobs);

#endif

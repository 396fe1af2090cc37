/*
 * Reading and extracting cuDNN archives: the only file that uses
 * libarchive.
 *
 * cctl_archive_scan reads every header and refuses the archive before
 * anything is extracted when one entry is unsafe; cctl_archive_extract
 * then writes the normalised tree with libarchive's secure options on,
 * hashing each file on the way.  Both read the whole file and hash it, so
 * that the archive identified is the one checked and the one extracted.
 * A compressed tar is decompressed once: the scan reads it through a
 * "raw" reader that undoes the compression and copies the tar it yields
 * to a private temporary file (the spool), which the extraction reads.
 */
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "../platform/os.h"
#include "entries.h"
#include "internal.h"

#define MAX_ENTRIES 100000
#define VERSION_H "include/cudnn_version.h"

static int lib_error(struct cctl_ctx *ctx, struct archive *ar, const char *file)
{
	const char *msg = archive_error_string(ar);
	if (archive_errno(ar) == ENOMEM) {
		/* not the file's fault: downloading it again would not help */
		cctl__error(ctx, CCTL_ENOMEM,
			    "out of memory while reading '%s'%s%s; nothing was "
			    "installed",
			    file, msg ? ": " : "", msg ? msg : "");
		cctl__hint(ctx, "close other programs, raise the memory limit "
				"(ulimit -v), or pass --jobs 1 to decompress on one "
				"thread");
		return CCTL_ENOMEM;
	}
	cctl__error(ctx, CCTL_EBADARCHIVE, "cannot read '%s': %s", file,
		    msg ? msg : "unrecognised format");
	cctl__hint(ctx, "the file is damaged or not a cuDNN zip/tar.xz; "
			"download it again");
	return CCTL_EBADARCHIVE;
}

/*
 * The reader libarchive reads the file through: every byte that comes by
 * in file order goes into a SHA-256, so the pass that reads the archive
 * also hashes it; what the pass skipped or read out of order is hashed at
 * the end (reader_finish).
 */
struct reader {
	int fd;
	struct cctl_ctx *ctx; /* where a read or seek error of the file goes */
	const char *name;     /* the file, for that message */
	int io_code;    /* the code of such an error, else 0 */
	int64_t pos;    /* file offset of the next read */
	int64_t hashed; /* bytes [0, hashed) are in h (or queued for it) */
	struct cctl_sha256 *h;
	struct cctl__hashq *q; /* hashes on another thread, or NULL */
	unsigned char buf[1 << 16];
};


/* Reads the next block at the file's position into r->buf, hashing what
 * comes in order; -1 on a read error (r->io_code says which). */
static int reader_next(struct reader *r, size_t *n)
{
	if ((r->io_code = cctl_os_read(r->ctx, r->fd, r->name, r->buf,
				       sizeof(r->buf), n)))
		return -1;
	if (r->h && r->pos <= r->hashed && r->pos + (int64_t)*n > r->hashed) {
		int64_t skip = r->hashed - r->pos;
		cctl__hashq_update(r->q, r->h, r->buf + skip, *n - (size_t)skip);
		r->hashed = r->pos + (int64_t)*n;
	}
	r->pos += (int64_t)*n;
	return 0;
}

static la_ssize_t rd_read(struct archive *ar, void *ud, const void **out)
{
	struct reader *r = ud;
	size_t n;
	if (reader_next(r, &n)) {
		archive_set_error(ar, EIO, "read error");
		return -1;
	}
	*out = r->buf;
	return (la_ssize_t)n;
}

/* The xz decoder's input: the file, read and hashed in order. */
static int xz_fill(void *ud, const void **buf, size_t *len)
{
	struct reader *r = ud;
	if (reader_next(r, len))
		return -1;
	*buf = r->buf;
	return 0;
}

static la_int64_t rd_seek(struct archive *ar, void *ud, la_int64_t off,
			  int whence)
{
	struct reader *r = ud;
	int64_t p;
	(void)ar;
	if ((r->io_code = cctl_os_seek(r->ctx, r->fd, r->name, off, whence, &p)))
		return ARCHIVE_FATAL;
	r->pos = p;
	return p;
}

static la_int64_t rd_skip(struct archive *ar, void *ud, la_int64_t n)
{
	struct reader *r = ud;
	int64_t p;
	(void)ar;
	if (cctl_os_seek(NULL, r->fd, r->name, n, SEEK_CUR, &p))
		return 0; /* libarchive reads through instead */
	r->pos = p;
	return n;
}

/* Hashes what the pass did not read in order; writes the hex digest. */
static int reader_finish(struct cctl_ctx *ctx, struct reader *r,
			 const char *file, char hex[65], uint64_t *size)
{
	size_t n;
	int ret;
	cctl__hashq_drain(r->q); /* what was queued comes first */
	ret = cctl_os_seek(ctx, r->fd, file, r->hashed, SEEK_SET, NULL);
	while (!ret && !(ret = cctl_os_read(ctx, r->fd, file, r->buf,
					    sizeof(r->buf), &n)) && n) {
		cctl_sha256_update(r->h, r->buf, n);
		r->hashed += (int64_t)n;
	}
	cctl_sha256_final(r->h, hex);
	r->h = NULL;
	if (size)
		*size = (uint64_t)r->hashed;
	return ret;
}

/* A reader of the archive file (hashing it), of its decompressed stream
 * (how: RAW), or of the spool (SPOOL: a tar, not hashed). */
enum reader_kind { READ_ARCHIVE, READ_RAW, READ_SPOOL };

/* A failure of libarchive's: the file's own read error when that is what
 * stopped it (an I/O error, not a bad archive), else libarchive's reason. */
static int read_error(struct cctl_ctx *ctx, struct archive *ar,
		      const struct reader *r, const char *file)
{
	if (r && r->io_code)
		return r->io_code; /* the OS layer said what */
	return lib_error(ctx, ar, file);
}

static int open_reader(struct cctl_ctx *ctx, struct cctl_archive *a,
		       struct reader *r, enum reader_kind how,
		       struct archive **out)
{
	struct archive *ar = archive_read_new();
	int ret;
	*out = NULL;
	int fd = how == READ_SPOOL ? a->spool_fd : a->fd;
	if (how != READ_SPOOL) {
		archive_read_support_filter_xz(ar);
		archive_read_support_filter_gzip(ar);
		archive_read_support_filter_bzip2(ar);
	}
	if (how == READ_RAW) {
		archive_read_support_format_raw(ar);
	} else {
		if (how == READ_ARCHIVE)
			archive_read_support_format_zip(ar);
		archive_read_support_format_tar(ar);
		archive_read_support_format_gnutar(ar);
	}
	memset(r, 0, offsetof(struct reader, buf));
	r->fd = fd;
	r->ctx = ctx;
	r->name = a->file;
	r->h = how == READ_SPOOL ? NULL : cctl_sha256_new();
	if ((ret = cctl_os_seek(ctx, fd, a->file, 0, SEEK_SET, NULL))) {
		archive_read_free(ar);
		return ret;
	}
	archive_read_set_callback_data(ar, r);
	archive_read_set_read_callback(ar, rd_read);
	archive_read_set_seek_callback(ar, rd_seek);
	archive_read_set_skip_callback(ar, rd_skip);
	if (archive_read_open1(ar) != ARCHIVE_OK) {
		ret = read_error(ctx, ar, r, a->file);
		archive_read_free(ar);
		return ret;
	}
	*out = ar;
	return 0;
}

/* True when the whole file is compressed (xz, gzip, bzip2): a tar.xz and
 * the like, which the scan must decompress from end to end. */
static int compressed_whole(int fd)
{
	unsigned char m[6] = { 0 };
	size_t n = 0;
	if (cctl_os_read(NULL, fd, NULL, m, sizeof(m), &n))
		n = 0;
	cctl_os_seek(NULL, fd, NULL, 0, SEEK_SET, NULL);
	if (n < 3)
		return 0;
	return cctl__xz_magic(m, n) || (m[0] == 0x1f && m[1] == 0x8b) ||
	       !memcmp(m, "BZh", 3);
}

/* The tar reader of a spooled scan reads the decompressed stream of the
 * raw reader and copies every block it gets to the spool. */
struct spool {
	struct archive *raw;   /* libarchive's decompression (gzip, bzip2) */
	struct cctl__xz *xz;   /* or liblzma's, on several threads (xz) */
	int fd;
	int write_code;   /* of a failed write to the spool, else 0 */
	int write_errno;  /* and the OS's error number */
	struct cctl_ctx *ctx;
	uint64_t written; /* bytes in the spool */
	uint64_t limit;   /* past this, the spool is given up */
	int abandoned;    /* given up: the extraction reads the archive */
	unsigned char buf[1 << 16];
};

static la_ssize_t spool_read(struct archive *ar, void *ud, const void **out)
{
	struct spool *s = ud;
	la_ssize_t n = s->xz ? (la_ssize_t)cctl__xz_read(s->xz, s->buf, sizeof(s->buf))
			     : archive_read_data(s->raw, s->buf, sizeof(s->buf));
	if (n < 0 && s->xz) {
		const char *msg = cctl__xz_error(s->xz);
		archive_set_error(ar, cctl__xz_nomem(s->xz) ? ENOMEM : EIO, "%s",
				  msg ? msg : "read error");
		return -1;
	}
	if (n < 0) {
		const char *msg = archive_error_string(s->raw);
		archive_set_error(ar, archive_errno(s->raw), "%s",
				  msg ? msg : "cannot decompress");
		return -1;
	}
	if (n > 0 && !s->abandoned && s->written + (uint64_t)n > s->limit)
		/* more than half the free space: the extraction could not fit
		 * beside it; read the archive twice instead, and let the
		 * free-space check speak */
		s->abandoned = 1;
	if (n > 0 && !s->abandoned) {
		if ((s->write_code = cctl_os_write_all(s->ctx, s->fd, "spool",
						       s->buf, (size_t)n))) {
			s->write_errno = s->ctx ? s->ctx->oserr : 0;
			archive_set_error(ar, EIO,
					  "cannot write its unpacked copy");
			return -1;
		}
		s->written += (uint64_t)n;
	}
	*out = s->buf;
	return n;
}

/* Opens the tar inside a compressed file, spooling it. */
static int open_spooled(struct cctl_ctx *ctx, struct cctl_archive *a,
			struct reader *rd, struct spool *sp, unsigned xz_threads,
			struct archive **out)
{
	struct archive *ar;
	struct archive_entry *ae;
	int ret;
	*out = NULL;
	sp->fd = a->spool_fd;
	sp->ctx = ctx;
	sp->write_code = 0;
	sp->write_errno = 0;
	sp->written = 0;
	sp->abandoned = 0;
	if (xz_threads) {
		/* liblzma's own decoder, on several threads, reads the file
		 * through rd (which hashes it) */
		memset(rd, 0, offsetof(struct reader, buf));
		rd->fd = a->fd;
		rd->ctx = ctx;
		rd->name = a->file;
		rd->h = cctl_sha256_new();
		if ((ret = cctl_os_seek(ctx, a->fd, a->file, 0, SEEK_SET, NULL)))
			return ret;
		if (!(sp->xz = cctl__xz_new(xz_threads, xz_fill, rd)))
			return cctl__error(ctx, CCTL_ENOMEM, "cannot start the xz "
							     "decoder: out of memory");
	} else {
		if ((ret = open_reader(ctx, a, rd, READ_RAW, &sp->raw)))
			return ret;
		if (archive_read_next_header(sp->raw, &ae) != ARCHIVE_OK)
			return read_error(ctx, sp->raw, rd, a->file);
	}
	ar = archive_read_new();
	archive_read_support_format_tar(ar);
	archive_read_support_format_gnutar(ar);
	archive_read_set_callback_data(ar, sp);
	archive_read_set_read_callback(ar, spool_read);
	if (archive_read_open1(ar) != ARCHIVE_OK) {
		ret = read_error(ctx, ar, rd, a->file);
		archive_read_free(ar);
		return ret;
	}
	*out = ar;
	return 0;
}

static const char *entry_name(struct archive_entry *e)
{
	const char *n = archive_entry_pathname_utf8(e);
	return n ? n : archive_entry_pathname(e);
}

static int add_entry(struct cctl_ctx *ctx, struct cctl_archive *a,
		     struct archive_entry *ae, struct cctl_buf *norm,
		     struct cctl_entry **out)
{
	const char *name = entry_name(ae);
	const char *why;
	unsigned cp;
	mode_t type = archive_entry_filetype(ae);
	const char *hl = archive_entry_hardlink(ae);
	struct cctl_entry *e;
	int ret;

	*out = NULL;
	if (!name || !*name)
		return cctl__refuse(ctx, a->file, "(undecodable)",
			      "has a name that cannot be decoded in this "
			      "locale or is empty");
	if ((ret = cctl__entry_name_check(ctx, a->file, name, norm)))
		return ret;
	if (a->n >= MAX_ENTRIES)
		return cctl__refuse(ctx, a->file, name, "is one entry too many");

	if (a->n % 64 == 0)
		a->v = cctl_xrealloc(a->v, (a->n + 64) * sizeof(*a->v));
	e = &a->v[a->n];
	memset(e, 0, sizeof(*e));
	e->name = cctl_xstrdup(name);
	e->path = cctl_xstrdup(norm->buf);
	e->mode = (unsigned)archive_entry_perm(ae);
	a->n++;

	if (hl) {
		e->type = CCTL_ENTRY_HARDLINK;
		if ((why = cctl__bad_chars(hl, &cp)))
			return cctl__refuse(ctx, a->file, name,
				      "is a hard link with an unreadable target");
		if ((ret = cctl__normalise(ctx, a->file, hl, norm)))
			return cctl__refuse(ctx, a->file, name,
				      "is a hard link that points outside the "
				      "archive");
		e->link = cctl_xstrdup(norm->buf);
	} else if (type == AE_IFREG) {
		e->type = CCTL_ENTRY_FILE;
		e->size = archive_entry_size_is_set(ae)
				  ? (uint64_t)archive_entry_size(ae)
				  : 0;
	} else if (type == AE_IFDIR) {
		e->type = CCTL_ENTRY_DIR;
	} else if (type == AE_IFLNK) {
		const char *t = archive_entry_symlink_utf8(ae);
		if (!t)
			t = archive_entry_symlink(ae);
		e->type = CCTL_ENTRY_SYMLINK;
		if (!t || !*t || cctl__bad_chars(t, &cp))
			return cctl__refuse(ctx, a->file, name,
				      "is a link with an unreadable target");
		if (t[0] == '/' || t[0] == '\\' || strchr(t, ':'))
			return cctl__refuse(ctx, a->file, name,
				      "is a link that points outside the "
				      "archive");
		e->link = cctl_xstrdup(t);
	} else {
		return cctl__refuse(ctx, a->file, name,
			      "is a device, FIFO or socket, not a file");
	}
	*out = e;
	return 0;
}

/* What one scan holds while it reads. */
struct scan {
	struct archive *ar;       /* the entries */
	struct archive *progress; /* the reader whose position is progress */
	struct reader *rd;
	struct spool *sp;         /* the decompressed copy, or NULL */
	uint64_t file_size;
	struct cctl_buf norm, version_h, vh_path;
};

/* Threads for decoding an xz file: 0 when it is not one (libarchive
 * decodes it); 1 for a stream of one block, which no thread can split
 * (read from the index at the end of the file; a file whose index cannot
 * be read gets the threads, the decoder copes either way). */
static unsigned xz_threads(struct cctl_ctx *ctx, const struct cctl_archive *a,
			   uint64_t size)
{
	unsigned char m[12], *index;
	size_t n = 0;
	uint64_t isize, blocks = 0;
	unsigned jobs;
	if (cctl_os_pread(NULL, a->fd, NULL, m, 6, 0, &n) || !cctl__xz_magic(m, n))
		return 0;
	jobs = a->jobs ? a->jobs : cctl_archive_default_jobs(ctx);
	if (jobs == 1 || size < 12 + 6 ||
	    cctl_os_pread(NULL, a->fd, NULL, m, 12, size - 12, &n) || n != 12 ||
	    !(isize = cctl__xz_index_size(m)) || isize > (1u << 20) ||
	    isize > size - 12 - 6)
		return jobs;
	index = cctl_xmalloc((size_t)isize);
	if (!cctl_os_pread(NULL, a->fd, NULL, index, (size_t)isize,
			   size - 12 - isize, &n) && n == isize)
		blocks = cctl__xz_block_count(index, (size_t)isize);
	free(index);
	return blocks == 1 ? 1 : jobs;
}

/* Opens the archive for the scan: through a spool for a compressed tar
 * when spool_dir is given, else directly. */
static int scan_open(struct cctl_ctx *ctx, struct cctl_archive *a,
		     const char *spool_dir, struct scan *s)
{
	struct cctl_os_stat st;
	uint64_t avail = 0;
	int ret;
	s->rd = cctl_xcalloc(1, sizeof(*s->rd));
	if (cctl_os_stat(ctx, a->file, &st) == 0)
		s->file_size = st.size;
	if (!spool_dir || !compressed_whole(a->fd)) {
		ret = open_reader(ctx, a, s->rd, READ_ARCHIVE, &s->ar);
		s->progress = s->ar;
		return ret;
	}
	if ((ret = cctl_os_open_temp(ctx, spool_dir, &a->spool_fd)))
		return ret;
	s->sp = cctl_xcalloc(1, sizeof(*s->sp));
	if (cctl_os_free_space(NULL, spool_dir, &avail))
		avail = 0; /* unknown: no spool */
	s->sp->limit = avail / 2;
	ret = open_spooled(ctx, a, s->rd, s->sp, xz_threads(ctx, a, s->file_size),
			   &s->ar);
	s->progress = s->sp->raw; /* NULL for xz: the reader's position */
	return ret;
}

/* Reads the rest of the current entry into out (when out is not NULL) or
 * counts it into *size. */
static int scan_data(struct cctl_ctx *ctx, struct cctl_archive *a,
		     struct scan *s, struct cctl_buf *out, uint64_t *size)
{
	char chunk[65536];
	la_ssize_t got;
	while ((got = archive_read_data(s->ar, chunk, sizeof(chunk))) > 0) {
		if (out)
			cctl_buf_add(out, chunk, (size_t)got);
		else
			*size += (uint64_t)got;
	}
	return got < 0 ? read_error(ctx, s->ar, s->rd, a->file) : 0;
}

/* One entry: checked and added; include/cudnn_version.h kept (under at
 * most two top folders: the shortest path wins); a size the header does
 * not give is counted. */
static int scan_entry(struct cctl_ctx *ctx, struct cctl_archive *a,
		      struct scan *s, struct archive_entry *ae)
{
	struct cctl_entry *e;
	size_t plen, vlen = strlen(VERSION_H);
	int ret;
	if ((ret = cctl__interrupt(ctx)) ||
	    (ret = add_entry(ctx, a, ae, &s->norm, &e)))
		return ret;
	plen = strlen(e->path);
	if (e->type == CCTL_ENTRY_FILE && e->size < (1 << 20) && plen >= vlen &&
	    !strcmp(e->path + plen - vlen, VERSION_H) &&
	    (!s->vh_path.len || plen < s->vh_path.len)) {
		cctl_buf_reset(&s->version_h);
		if ((ret = scan_data(ctx, a, s, &s->version_h, NULL)))
			return ret;
		cctl_buf_reset(&s->vh_path);
		cctl_buf_adds(&s->vh_path, e->path);
	}
	if (e->type == CCTL_ENTRY_FILE && e->size == 0 &&
	    !archive_entry_size_is_set(ae) &&
	    (ret = scan_data(ctx, a, s, NULL, &e->size)))
		return ret;
	a->total_size += e->size;
	cctl__progress(ctx, CCTL_PHASE_SCAN,
		       s->progress ? (uint64_t)archive_filter_bytes(s->progress, -1)
				   : (uint64_t)s->rd->pos,
		       s->file_size);
	return 0;
}

/* Frees what the scan held; a failed write to the spool is what the
 * failure was, whichever read reported it. */
static int scan_close(struct cctl_ctx *ctx, struct cctl_archive *a,
		      struct scan *s, const char *spool_dir, int ret)
{
	struct spool *sp = s->sp;
	if (ret && sp && sp->write_code) {
		ret = cctl__os_error(ctx, sp->write_code, sp->write_errno,
				     "cannot unpack '%s' in '%s': %s; nothing "
				     "was installed",
				     a->file, spool_dir, strerror(sp->write_errno));
		cctl__hint(ctx, "free some space or choose another root with "
				"--root");
	}
	if (s->ar)
		archive_read_free(s->ar);
	if (sp && sp->raw)
		archive_read_free(sp->raw);
	if (sp)
		cctl__xz_free(sp->xz);
	if (s->rd && s->rd->h) {
		char ignore[65];
		cctl_sha256_final(s->rd->h, ignore);
	}
	free(s->rd);
	if (sp && !sp->abandoned)
		a->spool_size = sp->written;
	if ((ret || (sp && sp->abandoned)) && a->spool_fd >= 0) {
		cctl_os_close(a->spool_fd);
		a->spool_fd = -1;
	}
	free(sp);
	cctl_buf_release(&s->norm);
	cctl_buf_release(&s->version_h);
	cctl_buf_release(&s->vh_path);
	return ret;
}

static int scan(struct cctl_ctx *ctx, int fd, const char *file,
		const char *spool_dir, unsigned jobs, struct cctl_archive *a)
{
	struct scan s = { .norm = CCTL_BUF_INIT, .version_h = CCTL_BUF_INIT,
			  .vh_path = CCTL_BUF_INIT };
	struct archive_entry *ae;
	size_t prefix_len;
	int r, ret;

	memset(a, 0, sizeof(*a));
	a->file = cctl_xstrdup(file);
	a->fd = fd;
	a->spool_fd = -1;
	a->copy_fd = -1;
	a->jobs = jobs;
	a->guard = cctl_os_guard_begin(fd, file);
	if ((ret = scan_open(ctx, a, spool_dir, &s)))
		goto out;
	while ((r = archive_read_next_header(s.ar, &ae)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN)
		if ((ret = scan_entry(ctx, a, &s, ae)))
			goto out;
	if (r != ARCHIVE_EOF) {
		ret = read_error(ctx, s.ar, s.rd, file);
		goto out;
	}
	if ((ret = reader_finish(ctx, s.rd, file, a->scan_sha256,
				 &a->file_size)))
		goto out;
	if (!a->n) {
		ret = cctl__error(ctx, CCTL_EBADARCHIVE, "'%s' is empty", file);
		goto out;
	}
	if ((ret = cctl__entries_normalise(ctx, a)))
		goto out;
	prefix_len = strlen(a->prefix);
	if (s.vh_path.len && s.vh_path.len - prefix_len == strlen(VERSION_H) &&
	    !strncmp(s.vh_path.buf, a->prefix, prefix_len))
		a->version_h = cctl_buf_detach(&s.version_h);
out:
	return scan_close(ctx, a, &s, spool_dir, ret);
}

const struct cctl_entry *cctl_archive_find(const struct cctl_archive *a,
					   const char *path)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].path, path))
			return &a->v[i];
	return NULL;
}

/* A failed write: out of space is its own error (exit 8). */
static int write_error(struct cctl_ctx *ctx, struct archive *aw,
		       const char *what, const char *path)
{
	int err = archive_errno(aw);
	if (err == ENOSPC) {
		cctl__os_error(ctx, CCTL_ENOSPACE, err,
			       "cannot %s '%s': no space left on the device",
			       what, path);
		cctl__hint(ctx, "free some space or choose another root with "
				"--root");
		return CCTL_ENOSPACE;
	}
	return cctl__os_error(ctx, CCTL_EIO, err > 0 ? err : 0,
			      "cannot %s '%s': %s", what, path,
			      err > 0 ? strerror(err) : archive_error_string(aw));
}

/* Copies an entry's data to disk; its hash is finished on q's thread
 * (e->sha256 is written once q is drained). */
static int copy_data(struct cctl_ctx *ctx, struct cctl_archive *a,
		     struct archive *ar, const struct reader *rd,
		     struct archive *aw, struct cctl_entry *e, uint64_t *done,
		     struct cctl__hashq *q)
{
	struct cctl_sha256 *h = cctl_sha256_new();
	const void *block;
	size_t size;
	la_int64_t offset;
	int r;

	e->size = 0;
	while ((r = archive_read_data_block(ar, &block, &size, &offset)) ==
	       ARCHIVE_OK) {
		int stop;
		if ((stop = cctl__interrupt(ctx))) {
			cctl__hashq_final(q, h, e->sha256);
			return stop;
		}
		cctl__hashq_update(q, h, block, size);
		if (archive_write_data_block(aw, block, size, offset) < ARCHIVE_OK) {
			cctl__hashq_final(q, h, e->sha256);
			return write_error(ctx, aw, "write", e->path);
		}
		e->size += size;
		*done += size;
		cctl__progress(ctx, CCTL_PHASE_EXTRACT, *done, a->total_size);
	}
	cctl__hashq_final(q, h, e->sha256);
	if (r != ARCHIVE_EOF)
		return read_error(ctx, ar, rd, a->file);
	return 0;
}

/* The entry read now is the one the scan checked: same type, size and
 * link target.  The archive is read twice; a file swapped in between must
 * not smuggle in what the scan refused. */
static int same_as_scanned(struct archive_entry *ae, const struct cctl_entry *e)
{
	const char *hl = archive_entry_hardlink(ae);
	mode_t type = archive_entry_filetype(ae);
	switch (e->type) {
	case CCTL_ENTRY_HARDLINK:
		return hl != NULL; /* its target is set from the scan */
	case CCTL_ENTRY_FILE:
		return !hl && type == AE_IFREG &&
		       (!archive_entry_size_is_set(ae) ||
			(uint64_t)archive_entry_size(ae) == e->size);
	case CCTL_ENTRY_DIR:
		return !hl && type == AE_IFDIR;
	case CCTL_ENTRY_SYMLINK: {
		const char *t = archive_entry_symlink_utf8(ae);
		if (!t)
			t = archive_entry_symlink(ae);
		return !hl && type == AE_IFLNK && t && !strcmp(t, e->link);
	}
	}
	return 0;
}

static int changed_error(struct cctl_ctx *ctx, const struct cctl_archive *a,
			 const char *path)
{
	if (!path)
		return cctl__error(ctx, CCTL_EBADARCHIVE,
				   "'%s' changed while it was being read", a->file);
	cctl__error(ctx, CCTL_EBADARCHIVE,
		    "'%s' changed while it was being read (entry '%s'); "
		    "nothing was installed",
		    a->file, path);
	cctl__hint(ctx, "make sure nothing writes to the archive, then run the "
			"command again");
	return CCTL_EBADARCHIVE;
}

/* The entry's path under dest and the permissions cudnnctl gives it. */
static void place_entry(struct archive_entry *ae, const struct cctl_entry *e,
			const char *dest, struct cctl_buf *path,
			struct cctl_buf *link)
{
	cctl_buf_reset(path);
	cctl_buf_adds(path, dest);
	cctl_buf_addpath(path, e->path);
	archive_entry_set_pathname_utf8(ae, path->buf);
	if (e->type == CCTL_ENTRY_HARDLINK) {
		cctl_buf_reset(link);
		cctl_buf_adds(link, dest);
		cctl_buf_addpath(link, e->link);
		archive_entry_set_hardlink_utf8(ae, link->buf);
	}
	if (e->type == CCTL_ENTRY_DIR)
		archive_entry_set_perm(ae, 0755);
	else if (e->type == CCTL_ENTRY_FILE)
		archive_entry_set_perm(ae, (e->mode & 0111) ? 0755 : 0644);
}

static void disk_options(struct archive *aw)
{
	archive_write_disk_set_options(aw, ARCHIVE_EXTRACT_TIME |
						   ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						   ARCHIVE_EXTRACT_SECURE_SYMLINKS |
						   ARCHIVE_EXTRACT_NO_OVERWRITE);
}

/* The archive hashed again, on its own thread while the workers run,
 * when nothing guards it. */
struct rehash {
	const struct cctl_archive *a;
	char hex[65];
	uint64_t size;
	int ret;
	struct cctl_ctx ctx;
	unsigned char buf[1 << 16];
};

static void rehash_main(void *arg)
{
	struct rehash *rh = arg;
	struct cctl_sha256 *h = cctl_sha256_new();
	size_t n;
	rh->size = 0;
	while (!(rh->ret = cctl_os_pread(&rh->ctx, rh->a->fd, rh->a->file, rh->buf,
					 sizeof(rh->buf), rh->size, &n)) && n) {
		cctl_sha256_update(h, rh->buf, n);
		rh->size += n;
	}
	cctl_sha256_final(h, rh->hex);
}

/* The archive's hash after an extraction that read a guarded file or a
 * private copy: the scan's while no one else could change it; nothing
 * when the guard broke, as the file hashed again now would say nothing of
 * what was read before (it could have been changed and put back). */
static void extracted_hash(struct cctl_archive *a)
{
	if (cctl_archive_trusted(a)) {
		memcpy(a->extract_sha256, a->scan_sha256, sizeof(a->scan_sha256));
	} else {
		a->guard_lost = 1;
		a->extract_sha256[0] = '\0';
	}
}

static int extract(struct cctl_ctx *ctx, struct cctl_archive *a,
		   const char *dest)
{
	struct archive *ar = NULL, *aw = NULL;
	struct archive_entry *ae;
	struct cctl_buf path = CCTL_BUF_INIT, link = CCTL_BUF_INIT;
	uint64_t done = 0;
	size_t i = 0;
	int r, ret = 0;
	struct reader *rd = cctl_xcalloc(1, sizeof(*rd));
	struct cctl__hashq *q;
	int spooled = a->spool_fd >= 0;

	if ((ret = open_reader(ctx, a, rd, spooled ? READ_SPOOL : READ_ARCHIVE,
			       &ar))) {
		if (rd->h) {
			char ignore[65];
			cctl_sha256_final(rd->h, ignore);
		}
		free(rd);
		return ret;
	}
	if (rd->h && (a->guard || a->copy_fd >= 0)) {
		/* no one writes it (or a broken guard says so): hashed once is
		 * enough */
		char ignore[65];
		cctl_sha256_final(rd->h, ignore);
		rd->h = NULL;
	}
	/* the archive and every file are hashed on a second thread while
	 * this one inflates and writes */
	rd->q = q = cctl__hashq_new();
	aw = archive_write_disk_new();
	disk_options(aw);
	while ((r = archive_read_next_header(ar, &ae)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		struct cctl_entry *e;
		const char *name = entry_name(ae);
		if (i >= a->n || !name || strcmp(name, a->v[i].name)) {
			ret = changed_error(ctx, a, NULL);
			goto out;
		}
		e = &a->v[i++];
		if (!same_as_scanned(ae, e)) {
			ret = changed_error(ctx, a, e->path);
			goto out;
		}
		if (!*e->path)
			continue; /* the dropped top folder itself */
		place_entry(ae, e, dest, &path, &link);
		cctl_os_kill_point();
		if (archive_write_header(aw, ae) < ARCHIVE_OK) {
			ret = write_error(ctx, aw, "create", path.buf);
			goto out;
		}
		if (e->type == CCTL_ENTRY_FILE) {
			uint64_t scanned = e->size;
			if ((ret = copy_data(ctx, a, ar, rd, aw, e, &done, q)))
				goto out;
			if (e->size != scanned) {
				ret = cctl__error(ctx, CCTL_EBADARCHIVE,
						  "'%s' changed while it was being "
						  "read (entry '%s'); nothing was "
						  "installed",
						  a->file, e->path);
				goto out;
			}
		}
		if (archive_write_finish_entry(aw) < ARCHIVE_OK) {
			ret = write_error(ctx, aw, "finish", path.buf);
			goto out;
		}
	}
	if (r != ARCHIVE_EOF)
		ret = read_error(ctx, ar, rd, a->file);
	else if (i != a->n)
		ret = changed_error(ctx, a, NULL);
	else if (spooled)
		/* the spool is the tar the scan decompressed while it hashed
		 * the file, written by this process alone: what was extracted
		 * is what was hashed */
		memcpy(a->extract_sha256, a->scan_sha256, sizeof(a->scan_sha256));
	else if (!rd->h)
		extracted_hash(a);
	else
		ret = reader_finish(ctx, rd, a->file, a->extract_sha256, NULL);
out:
	if (aw) {
		archive_write_close(aw);
		archive_write_free(aw);
	}
	archive_read_free(ar);
	/* every queued hash done, every e->sha256 written, the thread gone */
	cctl__hashq_free(q);
	if (rd->h) {
		char ignore[65];
		cctl_sha256_final(rd->h, ignore);
	}
	free(rd);
	cctl_buf_release(&path);
	cctl_buf_release(&link);
	return ret;
}

/* ------------------------------------------------- parallel extraction */

/*
 * A zip, or the spooled tar of a tar.xz, is extracted by several workers:
 * the directories first on this thread, then the regular files, handed
 * out largest first, each worker with its own reader over the same file
 * (pread, its own position) and its own writer, hashing what it writes;
 * then the links, which need their targets.  The archive is hashed again
 * on a thread of its own.  Every reader checks each header it passes
 * against the scan, as the single-threaded extraction does.
 */

#define MAX_JOBS 64     /* --jobs, CUDNNCTL_JOBS */
#define DEFAULT_JOBS 16 /* at most, from the number of processors */
#define PROGRESS_STEP (4u << 20) /* workers wake the main thread this often */

struct preader {
	int fd;
	const char *name;
	struct cctl_ctx *ctx;
	int io_code;
	uint64_t pos, size;
	unsigned char buf[1 << 16];
};

static la_ssize_t pr_read(struct archive *ar, void *ud, const void **out)
{
	struct preader *r = ud;
	size_t n;
	if ((r->io_code = cctl_os_pread(r->ctx, r->fd, r->name, r->buf,
					sizeof(r->buf), r->pos, &n))) {
		archive_set_error(ar, EIO, "read error");
		return -1;
	}
	r->pos += n;
	*out = r->buf;
	return (la_ssize_t)n;
}

static la_int64_t pr_seek(struct archive *ar, void *ud, la_int64_t off,
			  int whence)
{
	struct preader *r = ud;
	int64_t base = whence == SEEK_SET   ? 0
		       : whence == SEEK_CUR ? (int64_t)r->pos
					    : (int64_t)r->size;
	(void)ar;
	if (base + off < 0)
		return ARCHIVE_FATAL;
	r->pos = (uint64_t)(base + off);
	return (la_int64_t)r->pos;
}

static la_int64_t pr_skip(struct archive *ar, void *ud, la_int64_t n)
{
	struct preader *r = ud;
	(void)ar;
	r->pos += (uint64_t)n;
	return n;
}

/* Opens a reader of the zip or of the spool at its start. */
static int open_preader(struct cctl_ctx *ctx, const struct cctl_archive *a,
			struct preader *r, struct archive **out)
{
	struct archive *ar = archive_read_new();
	int spooled = a->spool_fd >= 0;
	memset(r, 0, offsetof(struct preader, buf));
	r->fd = spooled ? a->spool_fd : a->fd;
	r->name = a->file;
	r->ctx = ctx;
	r->size = spooled ? a->spool_size : a->file_size;
	if (!spooled)
		archive_read_support_format_zip(ar);
	archive_read_support_format_tar(ar);
	archive_read_support_format_gnutar(ar);
	archive_read_set_callback_data(ar, r);
	archive_read_set_read_callback(ar, pr_read);
	archive_read_set_seek_callback(ar, pr_seek);
	archive_read_set_skip_callback(ar, pr_skip);
	if (archive_read_open1(ar) != ARCHIVE_OK) {
		int ret = r->io_code ? r->io_code : lib_error(ctx, ar, a->file);
		archive_read_free(ar);
		*out = NULL;
		return ret;
	}
	*out = ar;
	return 0;
}

/* One reader's walk through the entries, checking each against the scan. */
struct walk {
	struct preader rd;
	struct archive *ar;
	size_t next; /* index of the entry the next header is */
};

/* Moves w to entry idx (reopening when it is behind) and checks it. */
static int walk_to(struct cctl_ctx *ctx, const struct cctl_archive *a,
		   struct walk *w, size_t idx, struct archive_entry **ae)
{
	int ret, r;
	if (w->ar && w->next > idx) {
		archive_read_free(w->ar);
		w->ar = NULL;
	}
	if (!w->ar) {
		if ((ret = open_preader(ctx, a, &w->rd, &w->ar)))
			return ret;
		w->next = 0;
	}
	for (;;) {
		const char *name;
		r = archive_read_next_header(w->ar, ae);
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return r == ARCHIVE_EOF ? changed_error(ctx, a, NULL)
						: read_error(ctx, w->ar, NULL, a->file);
		name = entry_name(*ae);
		if (w->next >= a->n || !name || strcmp(name, a->v[w->next].name))
			return changed_error(ctx, a, NULL);
		if (w->next++ == idx)
			break;
	}
	return same_as_scanned(*ae, &a->v[idx]) ? 0
						: changed_error(ctx, a, a->v[idx].path);
}

struct pjob {
	struct cctl_archive *a;
	const char *dest;
	struct cctl_os_sync *sync;
	size_t *order; /* indices of the regular files, largest first */
	size_t norder, taken;
	unsigned running;
	uint64_t done;
	int stop;              /* a failure or an interrupt: no new work */
	struct cctl_ctx err;   /* the first worker failure */
};

struct pworker {
	struct pjob *job;
	struct archive *aw; /* made on the main thread: libarchive sets umask */
	struct walk walk;
	struct cctl_ctx ctx;
	struct cctl_buf path, link;
};

/* Adds n bytes to the job's progress; 1 when the work is to stop. */
static int worker_progress(struct pjob *j, uint64_t n)
{
	int stop;
	cctl_os_sync_lock(j->sync);
	if ((j->done + n) / PROGRESS_STEP != j->done / PROGRESS_STEP)
		cctl_os_sync_broadcast(j->sync);
	j->done += n;
	stop = j->stop;
	cctl_os_sync_unlock(j->sync);
	return stop;
}

/* One regular file written by cudnnctl, where the OS layer has a size
 * hint worth giving (cctl_os_prealloc): created new with its size
 * reserved, written in order, its time set as libarchive's writer would. */
static int write_own(struct pworker *w, struct cctl_entry *e,
		     struct archive_entry *ae)
{
	struct pjob *j = w->job;
	struct cctl_archive *a = j->a;
	struct cctl_sha256 *h;
	const void *block;
	size_t size;
	la_int64_t offset;
	uint64_t written = 0;
	int r, fd, ret = 0;

	{
		/* its folder, where the archive names none (libarchive's writer
		 * makes missing parents too) */
		char *dir = cctl_xstrdup(w->path.buf);
		char *slash = strrchr(dir, CCTL_OS_DIR_SEP);
		if (slash && slash != dir) {
			*slash = '\0';
			ret = cctl_os_mkdirs(&w->ctx, dir);
		}
		free(dir);
		if (ret)
			return ret;
	}
	if ((ret = cctl_os_create_sized(&w->ctx, w->path.buf, e->size, &fd)))
		return ret;
	h = cctl_sha256_new();
	while ((r = archive_read_data_block(w->walk.ar, &block, &size,
					    &offset)) == ARCHIVE_OK) {
		/* a zip member's blocks come in order, without holes */
		if (offset != (la_int64_t)written) {
			ret = changed_error(&w->ctx, a, e->path);
			break;
		}
		cctl_sha256_update(h, block, size);
		if ((ret = cctl_os_write_all(&w->ctx, fd, w->path.buf, block, size)))
			break;
		written += size;
		if (worker_progress(j, size)) {
			ret = CCTL_EINTERRUPTED; /* the main thread says why */
			break;
		}
	}
	cctl_sha256_final(h, e->sha256);
	if (!ret && r != ARCHIVE_EOF)
		ret = read_error(&w->ctx, w->walk.ar, NULL, a->file);
	if (!ret && written != e->size)
		ret = changed_error(&w->ctx, a, e->path);
	if (ret) {
		cctl_os_close(fd);
		return ret;
	}
	return cctl_os_close_timed(&w->ctx, fd, w->path.buf, archive_entry_mtime(ae),
				   archive_entry_mtime_nsec(ae));
}

/* Extracts one regular file, hashing what it writes. */
static int extract_file(struct pworker *w, size_t idx)
{
	struct pjob *j = w->job;
	struct cctl_archive *a = j->a;
	struct cctl_entry *e = &a->v[idx];
	struct archive_entry *ae;
	struct cctl_sha256 *h;
	const void *block;
	size_t size;
	la_int64_t offset;
	uint64_t scanned = e->size, written = 0;
	int r, ret;

	if ((ret = walk_to(&w->ctx, a, &w->walk, idx, &ae)))
		return ret;
	place_entry(ae, e, j->dest, &w->path, &w->link);
	cctl_os_kill_point();
	if (cctl_os_prealloc())
		return write_own(w, e, ae);
	if (archive_write_header(w->aw, ae) < ARCHIVE_OK)
		return write_error(&w->ctx, w->aw, "create", w->path.buf);
	h = cctl_sha256_new();
	while ((r = archive_read_data_block(w->walk.ar, &block, &size,
					    &offset)) == ARCHIVE_OK) {
		cctl_sha256_update(h, block, size);
		if (archive_write_data_block(w->aw, block, size, offset) < ARCHIVE_OK) {
			cctl_sha256_final(h, e->sha256);
			return write_error(&w->ctx, w->aw, "write", w->path.buf);
		}
		written += size;
		if (worker_progress(j, size)) {
			cctl_sha256_final(h, e->sha256);
			return CCTL_EINTERRUPTED; /* the main thread says why */
		}
	}
	cctl_sha256_final(h, e->sha256);
	if (r != ARCHIVE_EOF)
		return read_error(&w->ctx, w->walk.ar, NULL, a->file);
	if (written != scanned)
		return changed_error(&w->ctx, a, e->path);
	if (archive_write_finish_entry(w->aw) < ARCHIVE_OK)
		return write_error(&w->ctx, w->aw, "finish", w->path.buf);
	return 0;
}

static void worker_main(void *arg)
{
	struct pworker *w = arg;
	struct pjob *j = w->job;
	void *loc = cctl_os_utf8_locale_enter();
	for (;;) {
		size_t idx;
		int ret;
		cctl_os_sync_lock(j->sync);
		if (j->stop || j->taken == j->norder) {
			cctl_os_sync_unlock(j->sync);
			break;
		}
		idx = j->order[j->taken++];
		cctl_os_sync_unlock(j->sync);
		if ((ret = extract_file(w, idx))) {
			cctl_os_sync_lock(j->sync);
			if (!j->stop) {
				j->stop = ret;
				j->err = w->ctx;
			}
			cctl_os_sync_unlock(j->sync);
			break;
		}
	}
	cctl_os_sync_lock(j->sync);
	j->running--;
	cctl_os_sync_broadcast(j->sync);
	cctl_os_sync_unlock(j->sync);
	cctl_os_utf8_locale_leave(loc);
}

static int cmp_size_desc(const void *x, const void *y, void *ud)
{
	const struct cctl_archive *a = ud;
	uint64_t sx = a->v[*(const size_t *)x].size, sy = a->v[*(const size_t *)y].size;
	return sx < sy ? 1 : sx > sy ? -1 : (*(const size_t *)x > *(const size_t *)y) -
						   (*(const size_t *)x < *(const size_t *)y);
}

/* Insertion sort with a context (qsort_r is not portable); a few hundred
 * entries. */
static void sort_order(size_t *v, size_t n, const struct cctl_archive *a)
{
	for (size_t i = 1; i < n; i++) {
		size_t x = v[i], k = i;
		while (k && cmp_size_desc(&v[k - 1], &x, (void *)a) > 0) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = x;
	}
}

/* Directories (first) or links (last) on this thread, in archive order. */
static int extract_serial(struct cctl_ctx *ctx, struct cctl_archive *a,
			  const char *dest, struct archive *aw, int links)
{
	struct walk w;
	struct archive_entry *ae;
	struct cctl_buf path = CCTL_BUF_INIT, link = CCTL_BUF_INIT;
	int ret = 0;
	memset(&w, 0, sizeof(w));
	for (size_t i = 0; i < a->n && !ret; i++) {
		const struct cctl_entry *e = &a->v[i];
		int mine = links ? e->type == CCTL_ENTRY_SYMLINK ||
					   e->type == CCTL_ENTRY_HARDLINK
				 : e->type == CCTL_ENTRY_DIR;
		if (!mine || !*e->path)
			continue;
		if ((ret = cctl__interrupt(ctx)) || (ret = walk_to(ctx, a, &w, i, &ae)))
			break;
		place_entry(ae, e, dest, &path, &link);
		cctl_os_kill_point();
		if (archive_write_header(aw, ae) < ARCHIVE_OK)
			ret = write_error(ctx, aw, "create", path.buf);
		else if (archive_write_finish_entry(aw) < ARCHIVE_OK)
			ret = write_error(ctx, aw, "finish", path.buf);
	}
	if (w.ar)
		archive_read_free(w.ar);
	cctl_buf_release(&path);
	cctl_buf_release(&link);
	return ret;
}

/* Waits for the workers, reporting progress and passing on an interrupt. */
static int wait_workers(struct cctl_ctx *ctx, struct pjob *j)
{
	int ret = 0, stopped;
	/* said when it begins and when it ends, however fast the workers
	 * are: workers done before this thread got here gave no event at
	 * all, and CI mode showed no extract line (a flaky test) */
	cctl__progress(ctx, CCTL_PHASE_EXTRACT, 0, j->a->total_size);
	cctl_os_sync_lock(j->sync);
	while (j->running) {
		uint64_t done;
		cctl_os_sync_wait(j->sync);
		done = j->done;
		cctl_os_sync_unlock(j->sync);
		cctl__progress(ctx, CCTL_PHASE_EXTRACT, done, j->a->total_size);
		if (!ret && (ret = cctl__interrupt(ctx))) {
			cctl_os_sync_lock(j->sync);
			if (!j->stop)
				j->stop = ret;
			cctl_os_sync_unlock(j->sync);
		}
		cctl_os_sync_lock(j->sync);
	}
	stopped = j->stop;
	cctl_os_sync_unlock(j->sync);
	if (!ret && !stopped)
		cctl__progress(ctx, CCTL_PHASE_EXTRACT, j->a->total_size,
			       j->a->total_size);
	return ret;
}

static int extract_parallel(struct cctl_ctx *ctx, struct cctl_archive *a,
			    const char *dest, unsigned jobs)
{
	struct pjob j;
	struct pworker *w;
	struct cctl_os_thread **t, *ht;
	struct rehash *rh = NULL;
	struct archive *aw = archive_write_disk_new();
	int ret, spooled = a->spool_fd >= 0;

	memset(&j, 0, sizeof(j));
	j.a = a;
	j.dest = dest;
	j.order = cctl_xcalloc(a->n + 1, sizeof(size_t));
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].type == CCTL_ENTRY_FILE)
			j.order[j.norder++] = i;
	sort_order(j.order, j.norder, a);
	if (jobs > j.norder)
		jobs = j.norder ? (unsigned)j.norder : 1;
	w = cctl_xcalloc(jobs, sizeof(*w));
	t = cctl_xcalloc(jobs, sizeof(*t));
	for (unsigned i = 0; i < jobs; i++) {
		w[i].job = &j;
		w[i].path = (struct cctl_buf)CCTL_BUF_INIT;
		w[i].link = (struct cctl_buf)CCTL_BUF_INIT;
	}
	disk_options(aw);
	if ((ret = extract_serial(ctx, a, dest, aw, 0)))
		goto out;
	if (!(j.sync = cctl_os_sync_new())) {
		ret = cctl__error(ctx, CCTL_EFAIL, "cannot start the extraction threads");
		goto out;
	}
	if (!spooled && !a->guard && a->copy_fd < 0) {
		/* else the scan's hash stands, or the broken guard says */
		rh = cctl_xcalloc(1, sizeof(*rh));
		rh->a = a;
	}
	ht = rh ? cctl_os_thread_start(rehash_main, rh) : NULL;
	for (unsigned i = 0; i < jobs; i++) {
		w[i].aw = archive_write_disk_new();
		disk_options(w[i].aw);
	}
	cctl_os_sync_lock(j.sync);
	for (unsigned i = 0; i < jobs; i++)
		if ((t[i] = cctl_os_thread_start(worker_main, &w[i])))
			j.running++;
	cctl_os_sync_unlock(j.sync);
	if (!j.running) { /* no thread at all: this one does the work */
		j.running = 1;
		worker_main(&w[0]);
	}
	ret = wait_workers(ctx, &j);
	for (unsigned i = 0; i < jobs; i++)
		if (t[i])
			cctl_os_thread_join(t[i]);
	if (ht)
		cctl_os_thread_join(ht);
	else if (rh)
		rehash_main(rh); /* no thread to spare */
	if (!ret && j.stop) {
		/* a worker's failure, as it described it */
		ret = j.stop;
		cctl__error(ctx, j.err.code ? j.err.code : ret, "%s", j.err.msg);
		if (j.err.hint[0])
			cctl__hint(ctx, "%s", j.err.hint);
		ctx->oserr = j.err.oserr;
		ret = j.err.code ? j.err.code : ret;
	}
	if (!ret)
		ret = extract_serial(ctx, a, dest, aw, 1);
	if (!ret && spooled)
		memcpy(a->extract_sha256, a->scan_sha256, sizeof(a->scan_sha256));
	else if (!ret && (a->guard || a->copy_fd >= 0))
		extracted_hash(a);
	else if (!ret && (ret = rh->ret))
		cctl__error(ctx, rh->ret, "%s", rh->ctx.msg);
	else if (!ret)
		memcpy(a->extract_sha256, rh->hex, sizeof(rh->hex));
out:
	for (unsigned i = 0; i < jobs; i++) {
		if (w[i].aw) {
			archive_write_close(w[i].aw);
			archive_write_free(w[i].aw);
		}
		if (w[i].walk.ar)
			archive_read_free(w[i].walk.ar);
		cctl_buf_release(&w[i].path);
		cctl_buf_release(&w[i].link);
	}
	/* last: it sets the directories' times */
	archive_write_close(aw);
	archive_write_free(aw);
	if (j.sync)
		cctl_os_sync_free(j.sync);
	free(rh);
	free(w);
	free(t);
	free(j.order);
	return ret;
}

/* Whether the archive can be extracted by several workers: a zip, or the
 * spool of a compressed tar (a tar.xz whose spool was given up is read
 * through once). */
static int parallel_ok(const struct cctl_archive *a)
{
	unsigned char m[4];
	size_t n = 0;
	if (a->spool_fd >= 0)
		return 1;
	return !cctl_os_pread(NULL, a->fd, NULL, m, sizeof(m), 0, &n) && n == 4 &&
	       !memcmp(m, "PK\x03\x04", 4);
}

unsigned cctl_archive_default_jobs(struct cctl_ctx *ctx)
{
	const char *env = cctl_os_getenv("CUDNNCTL_JOBS");
	unsigned n = cctl_os_ncpu();
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (!*end && v >= 1 && v <= MAX_JOBS)
			return (unsigned)v;
		cctl__warn(ctx, "CUDNNCTL_JOBS='%s' is not a number from 1 to %d; "
				"using %u",
			   env, MAX_JOBS, n > DEFAULT_JOBS ? DEFAULT_JOBS : n);
	}
	return n > DEFAULT_JOBS ? DEFAULT_JOBS : n;
}

int cctl_archive_scan(struct cctl_ctx *ctx, int fd, const char *file,
		      const char *spool_dir, unsigned jobs,
		      struct cctl_archive *a)
{
	void *loc = cctl_os_utf8_locale_enter();
	int ret = scan(ctx, fd, file, spool_dir, jobs, a);
	cctl_os_utf8_locale_leave(loc);
	return ret;
}

int cctl_archive_trusted(const struct cctl_archive *a)
{
	return a->spool_fd >= 0 || a->copy_fd >= 0 ||
	       (a->guard && cctl_os_guard_held(a->guard));
}

#define SEAL_BLOCK (1u << 20)

int cctl_archive_seal(struct cctl_ctx *ctx, struct cctl_archive *a,
		      const char *dir)
{
	struct cctl_sha256 *h;
	unsigned char *buf;
	uint64_t off = 0;
	char hex[65];
	size_t n;
	int fd, ret;
	if (a->copy_fd >= 0)
		return 0;
	if ((ret = cctl_os_open_temp(ctx, dir, &fd)))
		return ret;
	h = cctl_sha256_new();
	buf = cctl_xmalloc(SEAL_BLOCK);
	while (!(ret = cctl_os_pread(ctx, a->fd, a->file, buf, SEAL_BLOCK, off,
				     &n)) && n) {
		if ((ret = cctl__interrupt(ctx)))
			break;
		cctl_sha256_update(h, buf, n);
		if ((ret = cctl_os_write_all(ctx, fd, dir, buf, n)))
			break;
		off += n;
	}
	cctl_sha256_final(h, hex);
	free(buf);
	if (ret == CCTL_ENOSPACE)
		cctl__hint(ctx, "free some space or choose another root with "
				"--root");
	if (!ret && (off != a->file_size || strcmp(hex, a->scan_sha256))) {
		ret = cctl__error(ctx, CCTL_EBADARCHIVE,
				  "'%s' changed after it was checked (sha256 %s, "
				  "then %s); nothing was installed",
				  a->file, a->scan_sha256, hex);
		cctl__hint(ctx, "make sure nothing writes to the archive (keep "
				"archives in a folder only you can write), then "
				"run the command again");
	}
	if (ret) {
		cctl_os_close(fd);
		return ret;
	}
	/* from here on the copy is the archive: no one else can write it */
	a->copy_fd = a->fd = fd;
	cctl_os_guard_end(a->guard);
	a->guard = NULL;
	a->guard_lost = 0;
	a->spool_size += off;
	return 0;
}

int cctl_archive_extract(struct cctl_ctx *ctx, struct cctl_archive *a,
			 const char *dest)
{
	void *loc = cctl_os_utf8_locale_enter();
	unsigned jobs = a->jobs ? a->jobs : cctl_archive_default_jobs(ctx);
	int ret;
	if (jobs > MAX_JOBS)
		jobs = MAX_JOBS;
	ret = jobs > 1 && parallel_ok(a) ? extract_parallel(ctx, a, dest, jobs)
					 : extract(ctx, a, dest);
	cctl_os_utf8_locale_leave(loc);
	return ret;
}

void cctl_archive_release(struct cctl_archive *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].name);
		free(a->v[i].path);
		free(a->v[i].link);
	}
	free(a->v);
	free(a->file);
	free(a->prefix);
	free(a->version_h);
	cctl_os_close(a->spool_fd);
	cctl_os_close(a->copy_fd);
	cctl_os_guard_end(a->guard);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->spool_fd = -1;
	a->copy_fd = -1;
}

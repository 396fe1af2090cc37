/*
 * libarchive behind the interface of archive-lib.h: the only file that
 * uses it.  Nothing here knows what a cuDNN archive is; the readers'
 * bytes come from the caller (which hashes them), the entries go out as
 * plain values, and the writer is libarchive's disk writer with its secure
 * options on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "archive-lib.h"
#include "internal.h"

struct cctl__ar {
	struct archive *a;
	struct archive_entry *ae; /* the current entry */
	struct cctl__asrc src;
	const char *file;
};

struct cctl__aw {
	struct archive *a;
};

/* libarchive's reason for a failure of r. */
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

/* A failure of a reader: the source's own read error when that is what
 * stopped it (an I/O error, not a bad archive), else libarchive's reason. */
static int read_error(struct cctl_ctx *ctx, struct cctl__ar *r)
{
	if (r->src.io_code && *r->src.io_code)
		return *r->src.io_code; /* the OS layer said what */
	return lib_error(ctx, r->a, r->file);
}

static la_ssize_t cb_read(struct archive *a, void *ud, const void **out)
{
	struct cctl__ar *r = ud;
	const char *why = NULL;
	size_t n = 0;
	int err = EIO;
	if (r->src.read(r->src.ud, out, &n, &err, &why)) {
		archive_set_error(a, err, "%s", why ? why : "read error");
		return -1;
	}
	return (la_ssize_t)n;
}

static la_int64_t cb_seek(struct archive *a, void *ud, la_int64_t off,
			  int whence)
{
	struct cctl__ar *r = ud;
	int64_t pos;
	(void)a;
	if (r->src.seek(r->src.ud, off, whence, &pos))
		return ARCHIVE_FATAL;
	return pos;
}

static la_int64_t cb_skip(struct archive *a, void *ud, la_int64_t n)
{
	struct cctl__ar *r = ud;
	(void)a;
	return r->src.skip(r->src.ud, n);
}

int cctl__ar_open(struct cctl_ctx *ctx, unsigned formats,
		  const struct cctl__asrc *src, const char *file,
		  struct cctl__ar **out)
{
	struct cctl__ar *r = cctl_xcalloc(1, sizeof(*r));
	int ret;
	*out = NULL;
	r->a = archive_read_new();
	r->src = *src;
	r->file = file;
	if (formats & CCTL__AR_FILTERS) {
		archive_read_support_filter_xz(r->a);
		archive_read_support_filter_gzip(r->a);
		archive_read_support_filter_bzip2(r->a);
	}
	if (formats & CCTL__AR_RAW)
		archive_read_support_format_raw(r->a);
	/* a zip is read by its central directory, as Windows and 7-Zip read
	 * it, never by walking its local headers: libarchive's streaming zip
	 * reader, which takes over when the directory is not where the end
	 * record says, would install an archive other tools see otherwise */
	if ((formats & CCTL__AR_ZIP) && src->seek)
		archive_read_support_format_zip_seekable(r->a);
	if (formats & CCTL__AR_TAR) {
		archive_read_support_format_tar(r->a);
		archive_read_support_format_gnutar(r->a);
	}
	archive_read_set_callback_data(r->a, r);
	archive_read_set_read_callback(r->a, cb_read);
	if (src->seek)
		archive_read_set_seek_callback(r->a, cb_seek);
	if (src->skip)
		archive_read_set_skip_callback(r->a, cb_skip);
	if (archive_read_open1(r->a) != ARCHIVE_OK) {
		ret = read_error(ctx, r);
		cctl__ar_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void cctl__ar_free(struct cctl__ar *r)
{
	if (!r)
		return;
	archive_read_free(r->a);
	free(r);
}

int cctl__ar_next(struct cctl_ctx *ctx, struct cctl__ar *r,
		  struct cctl__aent *e)
{
	struct archive_entry *ae;
	int st = archive_read_next_header(r->a, &ae);
	mode_t type;
	if (st == ARCHIVE_EOF)
		return CCTL__AR_END;
	if (st != ARCHIVE_OK && st != ARCHIVE_WARN)
		return read_error(ctx, r);
	r->ae = ae;
	memset(e, 0, sizeof(*e));
	e->name = archive_entry_pathname_utf8(ae);
	if (!e->name)
		e->name = archive_entry_pathname(ae);
	e->hardlink = archive_entry_hardlink(ae);
	type = archive_entry_filetype(ae);
	e->kind = type == AE_IFREG   ? CCTL__AK_FILE
		  : type == AE_IFDIR ? CCTL__AK_DIR
		  : type == AE_IFLNK ? CCTL__AK_SYMLINK
				     : CCTL__AK_OTHER;
	if (e->kind == CCTL__AK_SYMLINK) {
		e->symlink = archive_entry_symlink_utf8(ae);
		if (!e->symlink)
			e->symlink = archive_entry_symlink(ae);
	}
	e->size_set = archive_entry_size_is_set(ae) != 0;
	e->size = e->size_set ? (uint64_t)archive_entry_size(ae) : 0;
	e->perm = (unsigned)archive_entry_perm(ae);
	e->mtime = (int64_t)archive_entry_mtime(ae);
	e->mtime_nsec = archive_entry_mtime_nsec(ae);
	return 0;
}

int cctl__ar_read(struct cctl_ctx *ctx, struct cctl__ar *r, void *buf,
		  size_t len, size_t *got)
{
	la_ssize_t n = archive_read_data(r->a, buf, len);
	*got = 0;
	if (n < 0)
		return read_error(ctx, r);
	*got = (size_t)n;
	return 0;
}

long long cctl__ar_read_quiet(struct cctl__ar *r, void *buf, size_t len,
			      int *err, const char **why)
{
	la_ssize_t n = archive_read_data(r->a, buf, len);
	if (n < 0) {
		*err = archive_errno(r->a);
		*why = archive_error_string(r->a);
		return -1;
	}
	return n;
}

int cctl__ar_block(struct cctl_ctx *ctx, struct cctl__ar *r,
		   const void **buf, size_t *n, int64_t *off)
{
	la_int64_t o;
	int st = archive_read_data_block(r->a, buf, n, &o);
	if (st == ARCHIVE_EOF)
		return CCTL__AR_END;
	if (st != ARCHIVE_OK)
		return read_error(ctx, r);
	*off = o;
	return 0;
}

uint64_t cctl__ar_consumed(struct cctl__ar *r)
{
	return (uint64_t)archive_filter_bytes(r->a, -1);
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

struct cctl__aw *cctl__aw_new(void)
{
	struct cctl__aw *w = cctl_xcalloc(1, sizeof(*w));
	w->a = archive_write_disk_new();
	archive_write_disk_set_options(w->a, ARCHIVE_EXTRACT_TIME |
						     ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						     ARCHIVE_EXTRACT_SECURE_SYMLINKS |
						     ARCHIVE_EXTRACT_NO_OVERWRITE);
	return w;
}

void cctl__aw_free(struct cctl__aw *w)
{
	if (!w)
		return;
	archive_write_close(w->a);
	archive_write_free(w->a);
	free(w);
}

int cctl__aw_header(struct cctl_ctx *ctx, struct cctl__aw *w,
		    struct cctl__ar *r, const char *path, const char *link,
		    int perm)
{
	archive_entry_set_pathname_utf8(r->ae, path);
	if (link)
		archive_entry_set_hardlink_utf8(r->ae, link);
	if (perm >= 0)
		archive_entry_set_perm(r->ae, (mode_t)perm);
	if (archive_write_header(w->a, r->ae) < ARCHIVE_OK)
		return write_error(ctx, w->a, "create", path);
	return 0;
}

int cctl__aw_make(struct cctl_ctx *ctx, struct cctl__aw *w,
		  const struct cctl__amake *m)
{
	struct archive_entry *e = archive_entry_new();
	int st;
	archive_entry_set_pathname_utf8(e, m->path);
	archive_entry_set_mtime(e, (time_t)m->mtime, m->mtime_nsec);
	if (m->kind == CCTL__AK_DIR) {
		archive_entry_set_filetype(e, AE_IFDIR);
	} else if (m->kind == CCTL__AK_SYMLINK) {
		archive_entry_set_filetype(e, AE_IFLNK);
		archive_entry_set_symlink_utf8(e, m->target);
	} else {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_hardlink_utf8(e, m->target);
	}
	archive_entry_set_perm(e, (mode_t)(m->perm >= 0 ? m->perm : 0777));
	st = archive_write_header(w->a, e);
	if (st >= ARCHIVE_OK)
		st = archive_write_finish_entry(w->a);
	archive_entry_free(e);
	return st < ARCHIVE_OK ? write_error(ctx, w->a, "create", m->path) : 0;
}

int cctl__aw_data(struct cctl_ctx *ctx, struct cctl__aw *w, const void *buf,
		  size_t n, int64_t off, const char *path)
{
	if (archive_write_data_block(w->a, buf, n, off) < ARCHIVE_OK)
		return write_error(ctx, w->a, "write", path);
	return 0;
}

int cctl__aw_finish(struct cctl_ctx *ctx, struct cctl__aw *w,
		    const char *path)
{
	if (archive_write_finish_entry(w->a) < ARCHIVE_OK)
		return write_error(ctx, w->a, "finish", path);
	return 0;
}

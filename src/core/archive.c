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
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "../platform/os.h"
#include "internal.h"

#define MAX_ENTRIES 100000
#define MAX_NAME 1024
#define VERSION_H "include/cudnn_version.h"

/* Printable rendering of an untrusted name: ASCII kept, the rest as
 * \xNN or U+XXXX. */
static void quote_name(struct cctl_buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned cp = 0;
		int len = 0;
		if (*p >= 0x20 && *p < 0x7f) {
			cctl_buf_addch(out, (char)*p++);
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf && (p[1] & 0xc0) == 0x80) {
			cp = ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu);
			len = 2;
		} else if (*p >= 0xe0 && *p <= 0xef && (p[1] & 0xc0) == 0x80 &&
			   (p[2] & 0xc0) == 0x80) {
			cp = ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) |
			     (p[2] & 0x3fu);
			len = 3;
		}
		if (len) {
			cctl_buf_addf(out, "<U+%04X>", cp);
			p += len;
		} else {
			cctl_buf_addf(out, "\\x%02x", *p++);
		}
	}
}

/* Unicode "format" characters that render as nothing. */
static int is_invisible(unsigned cp)
{
	return cp == 0xad || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2060 && cp <= 0x2064) || cp == 0xfeff ||
	       cp == 0x180e || cp == 0x061c;
}

/* Describes why a name is not plain printable ASCII, or NULL. */
static const char *bad_chars(const char *s, unsigned *cp_out)
{
	const unsigned char *p = (const unsigned char *)s;
	*cp_out = 0;
	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			*cp_out = *p;
			return "a control character";
		}
	}
	for (p = (const unsigned char *)s; *p; p++) {
		unsigned cp;
		if (*p < 0x80)
			continue;
		if (*p >= 0xe0 && *p <= 0xef && (p[1] & 0xc0) == 0x80 &&
		    (p[2] & 0xc0) == 0x80) {
			cp = ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) |
			     (p[2] & 0x3fu);
			if (is_invisible(cp)) {
				*cp_out = cp;
				return "an invisible format character";
			}
		} else if (*p == 0xc2 && p[1] == 0xad) {
			*cp_out = 0xad;
			return "an invisible format character";
		}
	}
	for (p = (const unsigned char *)s; *p; p++)
		if (*p >= 0x80)
			return "a non-ASCII character";
	return NULL;
}

static int refuse(struct cctl_ctx *ctx, const char *file, const char *name,
		  const char *why)
{
	struct cctl_buf q = CCTL_BUF_INIT;
	quote_name(&q, name);
	cctl__error(ctx, CCTL_EUNSAFE,
		    "refusing '%s': entry '%s' %s; nothing was written", file,
		    q.buf, why);
	cctl__hint(ctx, "this is not an archive as NVIDIA publishes it; "
			"download it again from NVIDIA");
	cctl_buf_release(&q);
	return CCTL_EUNSAFE;
}

/*
 * Normalises an entry name: both separators, "." and empty components
 * dropped.  Refuses absolute names, drive letters and "..".  On success
 * *out is the '/'-joined relative path (possibly empty).
 */
static int normalise(struct cctl_ctx *ctx, const char *file, const char *name,
		     struct cctl_buf *out)
{
	const char *p = name;
	cctl_buf_reset(out);
	if (name[0] == '/' || name[0] == '\\')
		return refuse(ctx, file, name, "has an absolute path");
	if (strchr(name, ':'))
		return refuse(ctx, file, name,
			      "has a drive letter or stream name (':')");
	while (*p) {
		size_t n = strcspn(p, "/\\");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return refuse(ctx, file, name,
				      "leads out of the folder ('..')");
		if (n && !(n == 1 && p[0] == '.')) {
			if (out->len)
				cctl_buf_addch(out, '/');
			cctl_buf_add(out, p, n);
		}
		p += n;
		if (*p)
			p++;
	}
	if (out->len > MAX_NAME)
		return refuse(ctx, file, name, "has a name that is too long");
	return 0;
}

/* Resolves a relative link target against the folder of `path`; returns
 * -1 when it climbs above the archive's top. */
static int resolve_link(const char *path, const char *target,
			struct cctl_buf *out)
{
	const char *slash = strrchr(path, '/');
	const char *p = target;
	cctl_buf_reset(out);
	if (slash)
		cctl_buf_add(out, path, (size_t)(slash - path));
	while (*p) {
		size_t n = strcspn(p, "/\\");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *cut;
			if (!out->len)
				return -1;
			cut = strrchr(out->buf, '/');
			out->len = cut ? (size_t)(cut - out->buf) : 0;
			out->buf[out->len] = '\0';
		} else if (n && !(n == 1 && p[0] == '.')) {
			if (out->len)
				cctl_buf_addch(out, '/');
			cctl_buf_add(out, p, n);
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int lib_error(struct cctl_ctx *ctx, struct archive *ar, const char *file)
{
	const char *msg = archive_error_string(ar);
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
	int io_err;     /* errno of a failed read or seek of the file, else 0 */
	int64_t pos;    /* file offset of the next read */
	int64_t hashed; /* bytes [0, hashed) are in h (or queued for it) */
	struct cctl_sha256 *h;
	struct cctl__hashq *q; /* hashes on another thread, or NULL */
	unsigned char buf[1 << 16];
};


static la_ssize_t rd_read(struct archive *ar, void *ud, const void **out)
{
	struct reader *r = ud;
	long n = cctl_os_read(r->fd, r->buf, sizeof(r->buf));
	if (n < 0) {
		r->io_err = errno;
		archive_set_error(ar, errno, "read error: %s", strerror(errno));
		return -1;
	}
	if (r->h && r->pos <= r->hashed && r->pos + n > r->hashed) {
		int64_t skip = r->hashed - r->pos;
		cctl__hashq_update(r->q, r->h, r->buf + skip, (size_t)(n - skip));
		r->hashed = r->pos + n;
	}
	r->pos += n;
	*out = r->buf;
	return n;
}

static la_int64_t rd_seek(struct archive *ar, void *ud, la_int64_t off,
			  int whence)
{
	struct reader *r = ud;
	int64_t p = cctl_os_seek(r->fd, off, whence);
	(void)ar;
	if (p < 0) {
		r->io_err = errno;
		return ARCHIVE_FATAL;
	}
	r->pos = p;
	return p;
}

static la_int64_t rd_skip(struct archive *ar, void *ud, la_int64_t n)
{
	struct reader *r = ud;
	int64_t p = cctl_os_seek(r->fd, n, SEEK_CUR);
	(void)ar;
	if (p < 0)
		return 0; /* libarchive reads through instead */
	r->pos = p;
	return n;
}

/* Hashes what the pass did not read in order; writes the hex digest. */
static int reader_finish(struct cctl_ctx *ctx, struct reader *r,
			 const char *file, char hex[65], uint64_t *size)
{
	long n;
	int ret = 0;
	cctl__hashq_drain(r->q); /* what was queued comes first */
	if (cctl_os_seek(r->fd, r->hashed, SEEK_SET) != r->hashed) {
		ret = cctl__error(ctx, CCTL_EIO, "cannot seek in '%s': %s", file,
				  strerror(errno));
	} else {
		while ((n = cctl_os_read(r->fd, r->buf, sizeof(r->buf))) > 0) {
			cctl_sha256_update(r->h, r->buf, (size_t)n);
			r->hashed += n;
		}
		if (n < 0)
			ret = cctl__error(ctx, CCTL_EIO, "cannot read '%s': %s", file,
					  strerror(errno));
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
	if (r && r->io_err)
		return cctl__os_error(ctx, r->io_err == ENOSPC ? CCTL_ENOSPACE
							       : CCTL_EIO,
				      r->io_err, "cannot read '%s': %s", file,
				      strerror(r->io_err));
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
	r->h = how == READ_SPOOL ? NULL : cctl_sha256_new();
	if (cctl_os_seek_start(fd) < 0) {
		int err = errno;
		archive_read_free(ar);
		return cctl__os_error(ctx, CCTL_EIO, err, "cannot seek in '%s': %s",
				      a->file, strerror(err));
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
	long n = cctl_os_read(fd, m, sizeof(m));
	cctl_os_seek_start(fd);
	if (n < 3)
		return 0;
	return (n == 6 && !memcmp(m, "\xfd" "7zXZ\0", 6)) ||
	       (m[0] == 0x1f && m[1] == 0x8b) || !memcmp(m, "BZh", 3);
}

/* The tar reader of a spooled scan reads the decompressed stream of the
 * raw reader and copies every block it gets to the spool. */
struct spool {
	struct archive *raw;
	int fd;
	int write_errno;  /* of a failed write to the spool, else 0 */
	uint64_t written; /* bytes in the spool */
	uint64_t limit;   /* past this, the spool is given up */
	int abandoned;    /* given up: the extraction reads the archive */
	unsigned char buf[1 << 16];
};

static la_ssize_t spool_read(struct archive *ar, void *ud, const void **out)
{
	struct spool *s = ud;
	la_ssize_t n = archive_read_data(s->raw, s->buf, sizeof(s->buf));
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
		if (cctl_os_write_all(s->fd, s->buf, (size_t)n) < 0) {
			s->write_errno = errno;
			archive_set_error(ar, errno,
					  "cannot write its unpacked copy: %s",
					  strerror(errno));
			return -1;
		}
		s->written += (uint64_t)n;
	}
	*out = s->buf;
	return n;
}

/* Opens the tar inside a compressed file, spooling it. */
static int open_spooled(struct cctl_ctx *ctx, struct cctl_archive *a,
			struct reader *rd, struct spool *sp, struct archive **out)
{
	struct archive *ar;
	struct archive_entry *ae;
	int ret;
	*out = NULL;
	sp->fd = a->spool_fd;
	sp->write_errno = 0;
	sp->written = 0;
	sp->abandoned = 0;
	if ((ret = open_reader(ctx, a, rd, READ_RAW, &sp->raw)))
		return ret;
	if (archive_read_next_header(sp->raw, &ae) != ARCHIVE_OK)
		return read_error(ctx, sp->raw, rd, a->file);
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

/* Case-insensitive ASCII comparison: Windows and macOS volumes fold case,
 * so "a.dll" and "A.dll" collide there. */
static int path_casecmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = tolower((unsigned char)*a), y = tolower((unsigned char)*b);
		if (x != y || !x)
			return x - y;
	}
}

static int cmp_entry_ptr(const void *pa, const void *pb)
{
	const struct cctl_entry *a = *(const struct cctl_entry *const *)pa;
	const struct cctl_entry *b = *(const struct cctl_entry *const *)pb;
	return path_casecmp(a->path, b->path);
}

static const struct cctl_entry *
find_sorted(struct cctl_entry **sorted, size_t n, const char *path)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = path_casecmp(path, sorted[mid]->path);
		if (!c)
			return sorted[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int is_layout_dir(const char *component, size_t n)
{
	static const char *const known[] = { "bin", "include", "lib", "LICENSE" };
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(known); i++)
		if (strlen(known[i]) == n && !strncmp(known[i], component, n))
			return 1;
	return 0;
}

/* All paths start with the same folder `first/`; returns its length. */
static size_t common_top(const struct cctl_archive *a, size_t skip)
{
	size_t n = 0;
	const char *first = NULL;
	for (size_t i = 0; i < a->n; i++) {
		const char *p;
		size_t len;
		if (strlen(a->v[i].path) <= skip)
			continue; /* a folder already dropped, such as the top */
		p = a->v[i].path + skip;
		len = strcspn(p, "/");
		if (!first) {
			first = p;
			n = len;
		} else if (len != n || strncmp(first, p, n)) {
			return 0;
		}
		if (!p[len] && a->v[i].type != CCTL_ENTRY_DIR)
			return 0; /* a file at the top, not a folder */
	}
	if (!first || is_layout_dir(first, n))
		return 0;
	return n;
}

static int in_folder(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Drops `skip` leading characters; old Linux archives' lib64/ becomes
 * lib/, where every cuDNN since 8.x keeps its libraries. */
static void strip_path(char *path, size_t skip, int lib64)
{
	size_t len = strlen(path);
	size_t cut = len < skip ? len : skip;
	memmove(path, path + cut, len - cut + 1);
	if (lib64 && in_folder(path, "lib64"))
		memmove(path + 3, path + 5, strlen(path + 5) + 1);
}

static void strip_prefix(struct cctl_archive *a, size_t skip)
{
	int has_lib = 0, lib64 = 0;
	for (size_t i = 0; i < a->n; i++) {
		const char *p = a->v[i].path + (strlen(a->v[i].path) < skip
							? strlen(a->v[i].path)
							: skip);
		/* any case: "Lib/" and a renamed "lib/" collide on Windows */
		has_lib |= (tolower((unsigned char)p[0]) == 'l' &&
			    tolower((unsigned char)p[1]) == 'i' &&
			    tolower((unsigned char)p[2]) == 'b' &&
			    (p[3] == '/' || !p[3]));
		lib64 |= in_folder(p, "lib64");
	}
	lib64 = lib64 && !has_lib;
	for (size_t i = 0; i < a->n; i++) {
		struct cctl_entry *e = &a->v[i];
		strip_path(e->path, skip, lib64);
		if (e->type == CCTL_ENTRY_HARDLINK && e->link)
			strip_path(e->link, skip, lib64);
	}
}

/*
 * True when the target of the link at `path`, walked component by
 * component, passes through an entry that is not a folder: another link
 * (whose own target would change where the walk goes: "sub -> ." makes
 * "sub/sub/../.." climb out while reading like it stays in) or a file.
 * The last component may be anything.
 */
static int through_link(struct cctl_entry **sorted, size_t n, const char *path,
			const char *target)
{
	struct cctl_buf cur = CCTL_BUF_INIT;
	const char *slash = strrchr(path, '/');
	const char *p = target;
	int bad = 0;
	if (slash)
		cctl_buf_add(&cur, path, (size_t)(slash - path));
	while (*p && !bad) {
		size_t len = strcspn(p, "/\\");
		int last = !p[len] || !p[len + strspn(p + len, "/\\")];
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *cut = strrchr(cur.buf, '/');
			cur.len = cut ? (size_t)(cut - cur.buf) : 0;
			cur.buf[cur.len] = '\0';
		} else if (len && !(len == 1 && p[0] == '.')) {
			const struct cctl_entry *e;
			if (cur.len)
				cctl_buf_addch(&cur, '/');
			cctl_buf_add(&cur, p, len);
			e = find_sorted(sorted, n, cur.buf);
			if (!last && e && e->type != CCTL_ENTRY_DIR)
				bad = 1;
		}
		p += len;
		p += strspn(p, "/\\");
	}
	cctl_buf_release(&cur);
	return bad;
}

/* Checks that need every entry: duplicates, links, entries below links. */
static int check_tree(struct cctl_ctx *ctx, struct cctl_archive *a,
		      size_t prefix_len)
{
	struct cctl_entry **sorted = cctl_xcalloc(a->n, sizeof(*sorted));
	struct cctl_buf tmp = CCTL_BUF_INIT;
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; i < a->n; i++)
		if (*a->v[i].path)
			sorted[n++] = &a->v[i];
	qsort(sorted, n, sizeof(*sorted), cmp_entry_ptr);
	for (size_t i = 1; i < n && !ret; i++)
		if (!path_casecmp(sorted[i - 1]->path, sorted[i]->path))
			ret = refuse(ctx, a->file, sorted[i]->name,
				     path_casecmp(sorted[i - 1]->name,
						  sorted[i]->name) ||
						     strcmp(sorted[i - 1]->name,
							    sorted[i]->name)
					     ? "collides with another entry that "
					       "differs only in case"
					     : "appears twice");
	for (size_t i = 0; i < n && !ret; i++) {
		struct cctl_entry *e = sorted[i];
		/* no entry may sit below a symbolic link */
		cctl_buf_reset(&tmp);
		cctl_buf_adds(&tmp, e->path);
		for (char *s = strrchr(tmp.buf, '/'); s && !ret;
		     s = strrchr(tmp.buf, '/')) {
			const struct cctl_entry *parent;
			*s = '\0';
			tmp.len = (size_t)(s - tmp.buf);
			parent = find_sorted(sorted, n, tmp.buf);
			if (parent && parent->type != CCTL_ENTRY_DIR)
				ret = refuse(ctx, a->file, e->name,
					     "lies below a link or file");
		}
		if (ret)
			break;
		if (e->type == CCTL_ENTRY_SYMLINK) {
			/* the target, resolved in the archive before the top
			 * folder is dropped, must stay below that folder */
			struct cctl_buf full = CCTL_BUF_INIT;
			cctl_buf_add(&full, a->prefix, prefix_len);
			cctl_buf_adds(&full, e->path);
			if (resolve_link(full.buf, e->link, &tmp) < 0 ||
			    strncmp(tmp.buf, a->prefix, prefix_len))
				ret = refuse(ctx, a->file, e->name,
					     "is a link that points outside "
					     "the archive");
			else if (through_link(sorted, n, e->path, e->link))
				ret = refuse(ctx, a->file, e->name,
					     "is a link whose target goes through "
					     "another link or a file");
			cctl_buf_release(&full);
		} else if (e->type == CCTL_ENTRY_HARDLINK) {
			const struct cctl_entry *t =
				find_sorted(sorted, n, e->link);
			/* exact case: the link is made to that very name */
			if (!t || t->type != CCTL_ENTRY_FILE ||
			    strcmp(t->path, e->link))
				ret = refuse(ctx, a->file, e->name,
					     "is a hard link to a file that is "
					     "not in the archive");
		}
	}
	cctl_buf_release(&tmp);
	free(sorted);
	return ret;
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
		return refuse(ctx, a->file, "(undecodable)",
			      "has a name that cannot be decoded in this "
			      "locale or is empty");
	if ((why = bad_chars(name, &cp))) {
		struct cctl_buf w = CCTL_BUF_INIT;
		cctl_buf_addf(&w, "has %s", why);
		if (cp)
			cctl_buf_addf(&w, " (U+%04X)", cp);
		ret = refuse(ctx, a->file, name, w.buf);
		cctl_buf_release(&w);
		return ret;
	}
	if ((ret = normalise(ctx, a->file, name, norm)))
		return ret;
	if (a->n >= MAX_ENTRIES)
		return refuse(ctx, a->file, name, "is one entry too many");

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
		if ((why = bad_chars(hl, &cp)))
			return refuse(ctx, a->file, name,
				      "is a hard link with an unreadable target");
		if ((ret = normalise(ctx, a->file, hl, norm)))
			return refuse(ctx, a->file, name,
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
		if (!t || !*t || bad_chars(t, &cp))
			return refuse(ctx, a->file, name,
				      "is a link with an unreadable target");
		if (t[0] == '/' || t[0] == '\\' || strchr(t, ':'))
			return refuse(ctx, a->file, name,
				      "is a link that points outside the "
				      "archive");
		e->link = cctl_xstrdup(t);
	} else {
		return refuse(ctx, a->file, name,
			      "is a device, FIFO or socket, not a file");
	}
	*out = e;
	return 0;
}

static int scan(struct cctl_ctx *ctx, int fd, const char *file,
		const char *spool_dir, struct cctl_archive *a)
{
	struct archive *ar = NULL, *progress;
	struct archive_entry *ae;
	struct cctl_buf norm = CCTL_BUF_INIT, version_h = CCTL_BUF_INIT;
	struct cctl_buf vh_path = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	struct reader *rd = cctl_xcalloc(1, sizeof(*rd));
	struct spool *sp = NULL;
	uint64_t file_size = 0;
	size_t top, prefix_len = 0;
	int r, ret = 0;

	memset(a, 0, sizeof(*a));
	a->file = cctl_xstrdup(file);
	a->fd = fd;
	a->spool_fd = -1;
	if (cctl_os_stat(ctx, file, &st) == 0)
		file_size = st.size;
	if (spool_dir && compressed_whole(fd)) {
		uint64_t avail = 0;
		if ((ret = cctl_os_open_temp(ctx, spool_dir, &a->spool_fd)))
			goto out;
		sp = cctl_xcalloc(1, sizeof(*sp));
		if (cctl_os_free_space(NULL, spool_dir, &avail))
			avail = 0; /* unknown: no spool */
		sp->limit = avail / 2;
		ret = open_spooled(ctx, a, rd, sp, &ar);
		progress = sp->raw;
	} else {
		ret = open_reader(ctx, a, rd, READ_ARCHIVE, &ar);
		progress = ar;
	}
	if (ret)
		goto out;

	while ((r = archive_read_next_header(ar, &ae)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		struct cctl_entry *e;
		size_t plen;
		if ((ret = add_entry(ctx, a, ae, &norm, &e)))
			goto out;
		plen = strlen(e->path);
		/* keep include/cudnn_version.h under at most two top folders */
		if (e->type == CCTL_ENTRY_FILE && e->size < (1 << 20) &&
		    plen >= strlen(VERSION_H) &&
		    !strcmp(e->path + plen - strlen(VERSION_H), VERSION_H) &&
		    (!vh_path.len || plen < vh_path.len)) {
			char chunk[8192];
			la_ssize_t got;
			cctl_buf_reset(&version_h);
			while ((got = archive_read_data(ar, chunk, sizeof(chunk))) > 0)
				cctl_buf_add(&version_h, chunk, (size_t)got);
			if (got < 0) {
				ret = read_error(ctx, ar, rd, file);
				goto out;
			}
			cctl_buf_reset(&vh_path);
			cctl_buf_adds(&vh_path, e->path);
		}
		if (e->type == CCTL_ENTRY_FILE && e->size == 0 &&
		    !archive_entry_size_is_set(ae)) {
			/* size unknown from the header: count the data */
			char chunk[65536];
			la_ssize_t got;
			while ((got = archive_read_data(ar, chunk, sizeof(chunk))) > 0)
				e->size += (uint64_t)got;
			if (got < 0) {
				ret = read_error(ctx, ar, rd, file);
				goto out;
			}
		}
		a->total_size += e->size;
		cctl__progress(ctx, CCTL_PHASE_SCAN,
			       (uint64_t)archive_filter_bytes(progress, -1),
			       file_size);
	}
	if (r != ARCHIVE_EOF) {
		ret = read_error(ctx, ar, rd, file);
		goto out;
	}
	if ((ret = reader_finish(ctx, rd, file, a->scan_sha256, &a->file_size)))
		goto out;
	if (!a->n) {
		ret = cctl__error(ctx, CCTL_EBADARCHIVE, "'%s' is empty", file);
		goto out;
	}

	/* drop the "cudnn-<platform>-<version>_cudaNN-archive/" top folder and
	 * the "cuda/" folder of old zips */
	a->prefix = cctl_xstrdup("");
	for (int level = 0; level < 2; level++) {
		char *p;
		top = common_top(a, prefix_len);
		if (!top)
			break;
		p = cctl_xstrfmt("%s%.*s/", a->prefix, (int)top,
				 a->v[0].path + prefix_len);
		/* every path starts with the same folder, so v[0]'s does */
		for (size_t i = 0; i < a->n; i++)
			if (*a->v[i].path) {
				free(p);
				p = cctl_xstrfmt("%s%.*s/", a->prefix, (int)top,
						 a->v[i].path + prefix_len);
				break;
			}
		free(a->prefix);
		a->prefix = p;
		prefix_len = strlen(p);
	}
	/* link checks see the archive as it is, so run them before the
	 * paths are shortened */
	if ((ret = check_tree(ctx, a, 0)))
		goto out;
	{
		/* symlink targets are checked against the kept tree */
		struct cctl_buf tmp = CCTL_BUF_INIT;
		for (size_t i = 0; i < a->n && !ret; i++) {
			struct cctl_entry *e = &a->v[i];
			if (e->type != CCTL_ENTRY_SYMLINK)
				continue;
			if (resolve_link(e->path, e->link, &tmp) < 0 ||
			    strncmp(tmp.buf, a->prefix, prefix_len))
				ret = refuse(ctx, file, e->name,
					     "is a link that points outside "
					     "the archive");
		}
		cctl_buf_release(&tmp);
		if (ret)
			goto out;
	}
	strip_prefix(a, prefix_len);
	for (size_t i = 0; i < a->n; i++) {
		size_t len = strlen(a->v[i].path);
		if (len > a->longest_path)
			a->longest_path = len;
	}
	if (vh_path.len && vh_path.len - prefix_len == strlen(VERSION_H) &&
	    !strncmp(vh_path.buf, a->prefix, prefix_len))
		a->version_h = cctl_buf_detach(&version_h);
out:
	if (ret && sp && sp->write_errno) {
		/* whichever read failed, it failed for want of room */
		ret = cctl__os_error(ctx, sp->write_errno == ENOSPC ? CCTL_ENOSPACE
								    : CCTL_EIO,
				     sp->write_errno, "cannot unpack '%s' in '%s': %s; nothing was "
				  "installed",
				  file, spool_dir, strerror(sp->write_errno));
		cctl__hint(ctx, "free some space or choose another root with "
				"--root");
	}
	if (ar)
		archive_read_free(ar);
	if (sp && sp->raw)
		archive_read_free(sp->raw);
	if (rd->h) {
		char ignore[65];
		cctl_sha256_final(rd->h, ignore);
	}
	free(rd);
	if (sp && !sp->abandoned)
		a->spool_size = sp->written;
	if ((ret || (sp && sp->abandoned)) && a->spool_fd >= 0) {
		cctl_os_close(a->spool_fd);
		a->spool_fd = -1;
	}
	free(sp);
	cctl_buf_release(&norm);
	cctl_buf_release(&version_h);
	cctl_buf_release(&vh_path);
	return ret;
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
	/* the archive and every file are hashed on a second thread while
	 * this one inflates and writes */
	rd->q = q = cctl__hashq_new();
	aw = archive_write_disk_new();
	archive_write_disk_set_options(aw, ARCHIVE_EXTRACT_TIME |
						   ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						   ARCHIVE_EXTRACT_SECURE_SYMLINKS |
						   ARCHIVE_EXTRACT_NO_OVERWRITE);
	while ((r = archive_read_next_header(ar, &ae)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		struct cctl_entry *e;
		const char *name = entry_name(ae);
		if (i >= a->n || !name || strcmp(name, a->v[i].name)) {
			ret = cctl__error(ctx, CCTL_EBADARCHIVE,
					  "'%s' changed while it was being read",
					  a->file);
			goto out;
		}
		e = &a->v[i++];
		if (!same_as_scanned(ae, e)) {
			ret = cctl__error(ctx, CCTL_EBADARCHIVE,
					  "'%s' changed while it was being read "
					  "(entry '%s'); nothing was installed",
					  a->file, e->path);
			cctl__hint(ctx, "make sure nothing writes to the archive, "
					"then run the command again");
			goto out;
		}
		if (!*e->path)
			continue; /* the dropped top folder itself */
		cctl_buf_reset(&path);
		cctl_buf_adds(&path, dest);
		cctl_buf_addpath(&path, e->path);
		archive_entry_set_pathname_utf8(ae, path.buf);
		if (e->type == CCTL_ENTRY_HARDLINK) {
			cctl_buf_reset(&link);
			cctl_buf_adds(&link, dest);
			cctl_buf_addpath(&link, e->link);
			archive_entry_set_hardlink_utf8(ae, link.buf);
		}
		if (e->type == CCTL_ENTRY_DIR)
			archive_entry_set_perm(ae, 0755);
		else if (e->type == CCTL_ENTRY_FILE)
			archive_entry_set_perm(ae, (e->mode & 0111) ? 0755 : 0644);
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
		ret = cctl__error(ctx, CCTL_EBADARCHIVE,
				  "'%s' changed while it was being read",
				  a->file);
	else if (spooled)
		/* the spool is the tar the scan decompressed while it hashed
		 * the file, written by this process alone: what was extracted
		 * is what was hashed */
		memcpy(a->extract_sha256, a->scan_sha256, sizeof(a->scan_sha256));
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

int cctl_archive_scan(struct cctl_ctx *ctx, int fd, const char *file,
		      const char *spool_dir, struct cctl_archive *a)
{
	void *loc = cctl_os_utf8_locale_enter();
	int ret = scan(ctx, fd, file, spool_dir, a);
	cctl_os_utf8_locale_leave(loc);
	return ret;
}

int cctl_archive_extract(struct cctl_ctx *ctx, struct cctl_archive *a,
			 const char *dest)
{
	void *loc = cctl_os_utf8_locale_enter();
	int ret = extract(ctx, a, dest);
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
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->spool_fd = -1;
}

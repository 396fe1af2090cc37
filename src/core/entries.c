/*
 * The checks of an archive's entries that need no libarchive: names
 * (control, invisible and other non-ASCII characters, absolute paths,
 * drive letters, ".."), the whole tree (duplicates, also by case; entries
 * below links; links leading out or through other links; hard links to
 * files not in the archive), and the normalisation that drops the
 * wrapper folder and applies the layout's renames (the platform table's
 * cctl_layout_top and cctl_layout_renames).  archive.c reads the entries
 * and calls these.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entries.h"
#include "internal.h"

#define MAX_NAME 1024

static int strncasecmp_ascii(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int x = tolower((unsigned char)a[i]), y = tolower((unsigned char)b[i]);
		if (x != y || !x)
			return x - y;
	}
	return 0;
}

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
const char *cctl__bad_chars(const char *s, unsigned *cp_out)
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

int cctl__refuse(struct cctl_ctx *ctx, const char *file, const char *name,
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
/* Windows' rules for one name component (on every platform: a root can
 * be shared with or copied to Windows): why it breaks one, or NULL.  A
 * trailing dot or space is dropped there ("x.dll." opens "x.dll"), a
 * device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with any extension and
 * in any case) opens the device, and <>"|?* cannot be in a name. */
static const char *windows_rule(const char *c, size_t n)
{
	static const char *const devices[] = { "CON", "PRN", "AUX", "NUL" };
	size_t base = 0;
	if (c[n - 1] == '.' || c[n - 1] == ' ')
		return "has a name ending in a dot or a space, which Windows "
		       "drops (another file would be written)";
	for (size_t i = 0; i < n; i++)
		if (strchr("<>\"|?*", c[i]))
			return "has a character Windows does not allow in a name "
			       "(<>\"|?*)";
	while (base < n && c[base] != '.')
		base++;
	while (base > 0 && c[base - 1] == ' ')
		base--;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(devices); i++)
		if (base == 3 && !strncasecmp_ascii(c, devices[i], 3))
			return "is named like a Windows device (CON, PRN, AUX, "
			       "NUL, COM0-9, LPT0-9)";
	if (base == 4 && (!strncasecmp_ascii(c, "COM", 3) ||
			  !strncasecmp_ascii(c, "LPT", 3)) &&
	    c[3] >= '0' && c[3] <= '9')
		return "is named like a Windows device (CON, PRN, AUX, NUL, "
		       "COM0-9, LPT0-9)";
	return NULL;
}

int cctl__normalise(struct cctl_ctx *ctx, const char *file, const char *name,
		     struct cctl_buf *out)
{
	const char *p = name;
	cctl_buf_reset(out);
	if (name[0] == '/' || name[0] == '\\')
		return cctl__refuse(ctx, file, name, "has an absolute path");
	if (strchr(name, ':'))
		return cctl__refuse(ctx, file, name,
			      "has a drive letter or stream name (':')");
	while (*p) {
		size_t n = strcspn(p, "/\\");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return cctl__refuse(ctx, file, name,
				      "leads out of the folder ('..')");
		if (n && !(n == 1 && p[0] == '.')) {
			const char *why = windows_rule(p, n);
			if (why)
				return cctl__refuse(ctx, file, name, why);
			if (out->len)
				cctl_buf_addch(out, '/');
			cctl_buf_add(out, p, n);
		}
		p += n;
		if (*p)
			p++;
	}
	if (out->len > MAX_NAME)
		return cctl__refuse(ctx, file, name, "has a name that is too long");
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

/* A top-level name of the layout itself (the platform table's), not a
 * wrapper folder. */
static int is_layout_dir(const char *component, size_t n)
{
	for (const char *const *k = cctl_layout_top; *k; k++)
		if (strlen(*k) == n && !strncmp(*k, component, n))
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

/* Drops `skip` leading characters, then renames a leading folder `from`
 * to `to` (NULL: none). */
static void strip_path(char *path, size_t skip, const char *from,
		       const char *to)
{
	size_t len = strlen(path);
	size_t cut = len < skip ? len : skip;
	memmove(path, path + cut, len - cut + 1);
	if (from && in_folder(path, from)) {
		size_t nf = strlen(from), nt = strlen(to);
		/* the names of the table only ever get shorter (lib64 -> lib) */
		memmove(path + nt, path + nf, strlen(path + nf) + 1);
		memcpy(path, to, nt);
	}
}

/* True when a path (after skip) is in folder dir, in any case: "Lib/" and
 * a renamed "lib/" collide on Windows. */
static int in_folder_nocase(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)p[i]) != tolower((unsigned char)dir[i]))
			return 0;
	return p[n] == '/' || !p[n];
}

/* Drops the wrapper folder and applies the layout's renames (old Linux
 * archives' lib64/ becomes lib/, where every cuDNN since 8.x keeps its
 * libraries) where the archive has no folder of the new name. */
static void strip_prefix(struct cctl_archive *a, size_t skip)
{
	const char *from = NULL, *to = NULL;
	for (size_t k = 0; cctl_layout_renames[k][0] && !from; k++) {
		int has_from = 0, has_to = 0;
		for (size_t i = 0; i < a->n; i++) {
			size_t len = strlen(a->v[i].path);
			const char *p = a->v[i].path + (len < skip ? len : skip);
			has_to |= in_folder_nocase(p, cctl_layout_renames[k][1]);
			has_from |= in_folder(p, cctl_layout_renames[k][0]);
		}
		if (has_from && !has_to) {
			from = cctl_layout_renames[k][0];
			to = cctl_layout_renames[k][1];
		}
	}
	for (size_t i = 0; i < a->n; i++) {
		struct cctl_entry *e = &a->v[i];
		strip_path(e->path, skip, from, to);
		if (e->type == CCTL_ENTRY_HARDLINK && e->link)
			strip_path(e->link, skip, from, to);
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
static int check_tree(struct cctl_ctx *ctx, struct cctl_archive *a)
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
			ret = cctl__refuse(ctx, a->file, sorted[i]->name,
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
				ret = cctl__refuse(ctx, a->file, e->name,
					     "lies below a link or file");
		}
		if (ret)
			break;
		if (e->type == CCTL_ENTRY_SYMLINK) {
			/* the target, resolved in the archive as it is, must
			 * stay inside it (cctl__entries_normalise checks it
			 * against the kept folder once that is known) */
			if (resolve_link(e->path, e->link, &tmp) < 0)
				ret = cctl__refuse(ctx, a->file, e->name,
						   "is a link that points outside "
						   "the archive");
			else if (through_link(sorted, n, e->path, e->link))
				ret = cctl__refuse(ctx, a->file, e->name,
						   "is a link whose target goes "
						   "through another link or a file");
		} else if (e->type == CCTL_ENTRY_HARDLINK) {
			const struct cctl_entry *t =
				find_sorted(sorted, n, e->link);
			/* exact case: the link is made to that very name */
			if (!t || t->type != CCTL_ENTRY_FILE ||
			    strcmp(t->path, e->link))
				ret = cctl__refuse(ctx, a->file, e->name,
					     "is a hard link to a file that is "
					     "not in the archive");
		}
	}
	cctl_buf_release(&tmp);
	free(sorted);
	return ret;
}

/* Drops the "cudnn-<platform>-<version>_cudaNN-archive/" top folder and
 * the "cuda/" folder of old zips, after the checks that need the archive
 * as it is. */
int cctl__entries_normalise(struct cctl_ctx *ctx, struct cctl_archive *a)
{
	struct cctl_buf tmp = CCTL_BUF_INIT;
	size_t top, prefix_len = 0;
	int ret = 0;

	a->prefix = cctl_xstrdup("");
	for (int level = 0; level < 2; level++) {
		const char *first = NULL;
		char *p;
		top = common_top(a, prefix_len);
		if (!top)
			break;
		/* every path starts with the same folder: take the first one
		 * that is not already dropped */
		for (size_t i = 0; i < a->n && !first; i++)
			if (strlen(a->v[i].path) > prefix_len)
				first = a->v[i].path + prefix_len;
		p = cctl_xstrfmt("%s%.*s/", a->prefix, (int)top, first);
		free(a->prefix);
		a->prefix = p;
		prefix_len = strlen(p);
	}
	/* link checks see the archive as it is, so run them before the
	 * paths are shortened */
	if ((ret = check_tree(ctx, a)))
		goto out;
	/* symlink targets are checked against the kept tree */
	for (size_t i = 0; i < a->n && !ret; i++) {
		struct cctl_entry *e = &a->v[i];
		if (e->type != CCTL_ENTRY_SYMLINK)
			continue;
		if (resolve_link(e->path, e->link, &tmp) < 0 ||
		    strncmp(tmp.buf, a->prefix, prefix_len))
			ret = cctl__refuse(ctx, a->file, e->name,
					   "is a link that points outside the "
					   "archive");
	}
	if (ret)
		goto out;
	strip_prefix(a, prefix_len);
	for (size_t i = 0; i < a->n; i++) {
		size_t len = strlen(a->v[i].path);
		if (len > a->longest_path)
			a->longest_path = len;
	}
out:
	cctl_buf_release(&tmp);
	return ret;
}

int cctl__entry_name_check(struct cctl_ctx *ctx, const char *file,
			   const char *name, struct cctl_buf *norm)
{
	unsigned cp;
	const char *why = cctl__bad_chars(name, &cp);
	if (why) {
		struct cctl_buf w = CCTL_BUF_INIT;
		int ret;
		cctl_buf_addf(&w, "has %s", why);
		if (cp)
			cctl_buf_addf(&w, " (U+%04X)", cp);
		ret = cctl__refuse(ctx, file, name, w.buf);
		cctl_buf_release(&w);
		return ret;
	}
	return cctl__normalise(ctx, file, name, norm);
}

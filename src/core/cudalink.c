/*
 * link-cuda / unlink-cuda: the active version's headers and libraries
 * placed into a CUDA toolkit's own folders, for old projects that look
 * only there.  Linux: symbolic links through <root>/current (include/,
 * lib64/), so a switch within a major carries them; Windows: copies
 * (bin, include, lib\x64).  A file that would be replaced is renamed
 * beside itself to <name>.cudnnctl-backup first, and put back by
 * unlink-cuda byte for byte.
 *
 * <root>/cuda-link records it all, and is written before each phase:
 *
 *   cudnnctl-cuda-link 1
 *   state placing|placed|removing
 *   relink 0|1              (removing: place the active version after)
 *   toolkit <folder>
 *   version <id>
 *   entry <l|c> <backup 0|1> <sha256|-> <dest> <src>   (tab-separated)
 *
 * A command that finds "placing" or "removing" (a kill, a power cut)
 * finishes it first: every step is idempotent (ours is recognised: a link
 * to src, or a file with src's hash), so a run cut anywhere is completed
 * by the next.  An error midway (not a kill) undoes what was placed, so
 * the toolkit is as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

#define RECORD "cuda-link"
#define MAGIC "cudnnctl-cuda-link 1"
#define BACKUP ".cudnnctl-backup"

struct entry {
	char kind;       /* 'l' link (POSIX), 'c' copy (Windows) */
	int backup;      /* dest held a file that is now dest + BACKUP */
	char sha256[65]; /* a copy's, "-" for a link */
	char *dest, *src;
};

struct links {
	char *state;   /* "placing", "placed", "removing" */
	int relink;
	char *toolkit, *version;
	struct entry *v;
	size_t n;
};

static void links_release(struct links *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].dest);
		free(l->v[i].src);
	}
	free(l->v);
	free(l->state);
	free(l->toolkit);
	free(l->version);
	memset(l, 0, sizeof(*l));
}

static char *record_path(const struct cctl_root *r)
{
	return cctl_path_join(r->path, RECORD, NULL);
}

static int write_record(struct cctl_ctx *ctx, const struct cctl_root *r,
			const struct links *l)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	char *path = record_path(r);
	int ret;
	cctl_buf_addf(&b, MAGIC "\nstate %s\nrelink %d\ntoolkit %s\nversion %s\n",
		      l->state, l->relink, l->toolkit, l->version);
	for (size_t i = 0; i < l->n; i++)
		cctl_buf_addf(&b, "entry %c\t%d\t%s\t%s\t%s\n", l->v[i].kind,
			      l->v[i].backup, l->v[i].sha256, l->v[i].dest,
			      l->v[i].src);
	ret = cctl_os_write_file_atomic(ctx, path, b.buf, b.len);
	cctl_buf_release(&b);
	free(path);
	return ret;
}

static void add(struct links *l, char kind, const char *sha, char *dest,
		char *src)
{
	struct entry *e;
	l->v = cctl_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	snprintf(e->sha256, sizeof(e->sha256), "%s", sha ? sha : "-");
	e->dest = dest;
	e->src = src;
}

/* A record line's entry, checked: dest inside the toolkit, src inside
 * the root, a known kind and a hash of hex digits. */
static int parse_entry(struct links *l, const struct cctl_root *r, char *line)
{
	char *f[5], *p = line;
	for (int i = 0; i < 5; i++) {
		f[i] = p;
		p = i < 4 ? strchr(p, '\t') : NULL;
		if (i < 4 && !p)
			return -1;
		if (p)
			*p++ = 0;
	}
	if ((strcmp(f[0], "l") && strcmp(f[0], "c")) ||
	    (strcmp(f[1], "0") && strcmp(f[1], "1")) ||
	    (strcmp(f[2], "-") && (strlen(f[2]) != 64 ||
				   f[2][strspn(f[2], "0123456789abcdef")])) ||
	    !cctl_path_within(l->toolkit, f[3]) || !cctl_path_within(r->path, f[4]))
		return -1;
	add(l, f[0][0], f[2], cctl_xstrdup(f[3]), cctl_xstrdup(f[4]));
	l->v[l->n - 1].backup = f[1][0] == '1';
	return 0;
}

/* 0 with l->state NULL when there is no record. */
static int read_record(struct cctl_ctx *ctx, const struct cctl_root *r,
		       struct links *l)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *path = record_path(r), *line, *next;
	struct cctl_os_stat st;
	int ret = 0, bad = 0;

	memset(l, 0, sizeof(*l));
	if ((ret = cctl_os_stat(ctx, path, &st)) || st.type == CCTL_OS_NONE)
		goto out;
	if ((ret = cctl_os_read_file(ctx, path, &text)))
		goto out;
	bad = strncmp(text.buf, MAGIC "\n", strlen(MAGIC) + 1) != 0;
	for (line = text.buf; !bad && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "state ", 6) && !l->state)
			l->state = cctl_xstrdup(line + 6);
		else if (!strncmp(line, "relink ", 7))
			l->relink = !strcmp(line + 7, "1");
		else if (!strncmp(line, "toolkit ", 8) && !l->toolkit)
			l->toolkit = cctl_xstrdup(line + 8);
		else if (!strncmp(line, "version ", 8) && !l->version)
			l->version = cctl_xstrdup(line + 8);
		else if (!strncmp(line, "entry ", 6))
			bad = !l->toolkit || parse_entry(l, r, line + 6);
		else if (strcmp(line, MAGIC))
			bad = 1;
	}
	if (!bad && (!l->state || !l->toolkit || !l->version ||
		     (strcmp(l->state, "placing") && strcmp(l->state, "placed") &&
		      strcmp(l->state, "removing"))))
		bad = 1;
	if (bad) {
		links_release(l);
		ret = cctl__error(ctx, CCTL_EFAIL, "'%s' is not a record cudnnctl "
						   "wrote; nothing was changed",
				  path);
		cctl__hint(ctx, "see what it names, put the toolkit's files back "
				"by hand (their backups end in " BACKUP "), then "
				"remove it");
	}
out:
	cctl_buf_release(&text);
	free(path);
	return ret;
}

/* Whether dest holds what the entry placed. */
static int ours(const struct entry *e)
{
	struct cctl_os_stat st;
	if (cctl_os_stat(NULL, e->dest, &st) || st.type == CCTL_OS_NONE)
		return 0;
	if (e->kind == 'l') {
		struct cctl_buf t = CCTL_BUF_INIT;
		int same = st.type == CCTL_OS_LINK &&
			   !cctl_os_readlink(NULL, e->dest, &t) && !strcmp(t.buf, e->src);
		cctl_buf_release(&t);
		return same;
	} else {
		char hex[65];
		return st.type == CCTL_OS_FILE &&
		       !cctl_sha256_file(NULL, e->dest, hex, NULL) &&
		       !strcmp(hex, e->sha256);
	}
}

static int exists(const char *path)
{
	struct cctl_os_stat st;
	return !cctl_os_stat(NULL, path, &st) && st.type != CCTL_OS_NONE;
}

/* Takes the entry's file out and puts back what it replaced; what is no
 * longer ours (changed since) is left where it is. */
static int take_out(struct cctl_ctx *ctx, const struct entry *e)
{
	char *bak = cctl_xstrfmt("%s" BACKUP, e->dest);
	int ret = 0;
	if (ours(e))
		ret = cctl_os_unlink(ctx, e->dest);
	if (!ret && e->backup && exists(bak) && !exists(e->dest))
		ret = cctl_os_rename(ctx, bak, e->dest);
	free(bak);
	return ret;
}

static int copy_file(struct cctl_ctx *ctx, const char *from, const char *to)
{
	char *tmp = cctl_xstrfmt("%s.cudnnctl-part", to);
	unsigned char *buf = cctl_xmalloc(1 << 20);
	int in = -1, out = -1, ret;
	size_t got;
	if (!(ret = cctl_os_open_read(ctx, from, &in)) &&
	    !(ret = cctl_os_open_write(ctx, tmp, 0, &out))) {
		while (!(ret = cctl_os_read(ctx, in, from, buf, 1 << 20, &got)) && got &&
		       !(ret = cctl_os_write_all(ctx, out, tmp, buf, got)))
			;
	}
	if (in >= 0)
		cctl_os_close(in);
	if (out >= 0)
		cctl_os_close(out);
	if (!ret)
		ret = cctl_os_rename(ctx, tmp, to);
	if (ret)
		cctl_os_unlink(NULL, tmp);
	free(buf);
	free(tmp);
	return ret;
}

/* Places the entry (idempotent: ours already is left). */
static int put_in(struct cctl_ctx *ctx, const struct entry *e)
{
	char *bak = cctl_xstrfmt("%s" BACKUP, e->dest);
	int ret = 0;
	if (ours(e))
		goto out;
	if (exists(e->dest)) {
		/* the toolkit's own file: kept beside itself, once */
		if (e->backup && !exists(bak))
			ret = cctl_os_rename(ctx, e->dest, bak);
		else
			ret = cctl_os_unlink(ctx, e->dest);
	}
	if (!ret)
		ret = e->kind == 'l' ? cctl_os_symlink(ctx, e->src, e->dest)
				     : copy_file(ctx, e->src, e->dest);
out:
	free(bak);
	return ret;
}

/* --------------------------------------------------------------- plan */

/* The toolkit folder a version file goes to, or NULL for one that is not
 * linked: the headers, the libraries (not Linux's fully versioned names,
 * which change with every release: the .so.N links carry them). */
static const char *dest_dir(const struct cctl_platform *p, const char *path,
			    const char *lib64)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);
	if (!strncmp(path, "include/", 8) && !strchr(path + 8, '/'))
		return !strncmp(base, "cudnn", 5) && n > 2 &&
				       !strcmp(base + n - 2, ".h")
			       ? "include"
			       : NULL;
	if (p->windows) {
		if (!strncmp(base, "cudnn", 5) && n > 4 &&
		    !strcmp(base + n - 4, ".dll"))
			return "bin";
		if (!strncmp(path, "lib/", 4) && !strncmp(base, "cudnn", 5) &&
		    n > 4 && !strcmp(base + n - 4, ".lib"))
			return "lib/x64";
		return NULL;
	}
	if (strncmp(path, "lib/", 4) || strchr(path + 4, '/') ||
	    strncmp(base, "libcudnn", 8))
		return NULL;
	{
		const char *so = strstr(base, ".so.");
		if (so && strchr(so + 4, '.'))
			return NULL; /* libcudnn.so.9.19.0 */
	}
	return lib64;
}

/* A toolkit's file there now is kept as a backup, unless it is one of
 * ours (placed before). */
static void mark_backups(struct links *l)
{
	for (size_t i = 0; i < l->n; i++)
		l->v[i].backup = exists(l->v[i].dest) && !ours(&l->v[i]);
}

static int plan(struct cctl_ctx *ctx, const struct cctl_root *r,
		const char *toolkit, const char *id, struct links *l)
{
	const struct cctl_platform *p = cctl_platform_host();
	char *vdir = cctl_path_join(r->path, "versions", id, NULL);
	char *cur = cctl_path_join(r->path, "current", NULL);
	const char *lib64 = "lib64";
	struct cctl_install rec;
	int ret;

	memset(l, 0, sizeof(*l));
	l->toolkit = cctl_xstrdup(toolkit);
	l->version = cctl_xstrdup(id);
	if ((ret = cctl_record_read(ctx, vdir, &rec)))
		goto out;
	if (!p->windows) {
		char *d = cctl_path_join(toolkit, "lib64", NULL);
		if (!exists(d))
			lib64 = "lib";
		free(d);
	}
	for (size_t i = 0; i < rec.nfiles; i++) {
		const struct cctl_file *f = &rec.files[i];
		const char *dir = dest_dir(p, f->path, lib64);
		const char *base = strrchr(f->path, '/') + 1;
		char *dest, *src;
		if (!dir || !cctl_relpath_valid(f->path) ||
		    (p->windows && f->type != CCTL_ENTRY_FILE))
			continue; /* Windows: copies of files only */
		dest = cctl_path_join(toolkit, dir, base, NULL);
		cctl_os_native_path(dest);
		src = cctl_path_join(p->windows ? vdir : cur, f->path, NULL);
		cctl_os_native_path(src);
		add(l, p->windows ? 'c' : 'l', p->windows ? f->sha256 : NULL,
		    dest, src);
	}
	cctl_install_release(&rec);
	mark_backups(l);
out:
	free(vdir);
	free(cur);
	if (ret)
		links_release(l);
	return ret;
}

/* Every folder the plan writes to exists and can be written, and no
 * backup name is taken by a file cudnnctl did not make: checked before
 * anything changes. */
static int check_writable(struct cctl_ctx *ctx, const struct links *l)
{
	for (size_t i = 0; i < l->n; i++) {
		char *dir = cctl_xstrdup(l->v[i].dest), *bak;
		char *sep = (char *)cctl__last_sep(dir);
		int fd = -1, ret = 0;
		*sep = 0;
		if (!exists(dir)) {
			ret = cctl__error(ctx, CCTL_ENOTFOUND,
					  "'%s' is not a CUDA toolkit: it has no "
					  "folder '%s'; nothing was placed",
					  l->toolkit, dir);
			cctl__hint(ctx, "name the toolkit's folder: cudnnctl "
					"link-cuda DIR (or set CUDA_PATH)");
		} else if (cctl_os_open_temp(NULL, dir, &fd)) {
			ret = cctl__error(ctx, CCTL_EFAIL,
					  "cannot write into '%s' (%s); nothing "
					  "was placed",
					  dir, "permission denied, or read-only");
			cctl__hint(ctx, "%s", cctl_platform_host()->windows
						      ? "run it as an administrator "
							"(the toolkit is in Program "
							"Files)"
						      : "run it as root (sudo), or "
							"as the toolkit's owner");
		} else {
			cctl_os_close(fd);
		}
		bak = cctl_xstrfmt("%s" BACKUP, l->v[i].dest);
		if (!ret && l->v[i].backup && exists(bak))
			ret = cctl__error(ctx, CCTL_EFAIL,
					  "'%s' is there already; nothing was "
					  "placed",
					  bak);
		free(bak);
		free(dir);
		if (ret)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------- phases */

static int remove_all(struct cctl_ctx *ctx, const struct links *l)
{
	int ret = 0;
	for (size_t i = l->n; i-- > 0 && !ret;)
		ret = take_out(ctx, &l->v[i]);
	return ret;
}

static int place(struct cctl_ctx *ctx, const struct cctl_root *r,
		 struct links *l)
{
	int ret;
	free(l->state);
	l->state = cctl_xstrdup("placing");
	l->relink = 0;
	mark_backups(l); /* what is there now: after a relink, the originals */
	if ((ret = write_record(ctx, r, l)))
		return ret;
	for (size_t i = 0; i < l->n && !ret; i++)
		ret = put_in(ctx, &l->v[i]);
	if (ret) { /* an error, not a kill: the toolkit as it was */
		char *path = record_path(r);
		if (!remove_all(NULL, l))
			cctl_os_unlink(NULL, path);
		free(path);
		return ret;
	}
	free(l->state);
	l->state = cctl_xstrdup("placed");
	return write_record(ctx, r, l);
}

/* Takes every entry out ("removing" first, so that a cut run is finished
 * by the next), then the record; relink: the active version is placed
 * after, in the same toolkit. */
static int unplace(struct cctl_ctx *ctx, const struct cctl_root *r,
		   struct links *l, int relink)
{
	char *path;
	int ret;
	free(l->state);
	l->state = cctl_xstrdup("removing");
	l->relink = relink;
	if ((ret = write_record(ctx, r, l)) || (ret = remove_all(ctx, l)))
		return ret;
	if (relink)
		return 0; /* place() writes the record over this one */
	path = record_path(r);
	ret = cctl_os_unlink(ctx, path);
	free(path);
	return ret;
}

/* The active version placed into toolkit; nothing active takes what is
 * there out. */
static int relink_active(struct cctl_ctx *ctx, const struct cctl_root *r,
			 const char *toolkit)
{
	struct links l;
	char *active = NULL, *path;
	int ret;
	if ((ret = cctl_store_active(ctx, r, &active)))
		return ret;
	if (!active) {
		path = record_path(r);
		ret = cctl_os_unlink(ctx, path);
		free(path);
		return ret;
	}
	if (!(ret = plan(ctx, r, toolkit, active, &l))) {
		ret = place(ctx, r, &l);
		links_release(&l);
	}
	free(active);
	return ret;
}

/* A run cut short (a kill, a power cut) is finished: "placing" places
 * the rest, "removing" takes the rest out (and relinks when it was a
 * refresh).  Every command that touches the toolkit's files calls it
 * first. */
static int recover(struct cctl_ctx *ctx, const struct cctl_root *r,
		   struct links *l)
{
	int ret;
	if ((ret = read_record(ctx, r, l)) || !l->state ||
	    !strcmp(l->state, "placed"))
		return ret;
	if (!strcmp(l->state, "placing")) {
		for (size_t i = 0; i < l->n && !ret; i++)
			ret = put_in(ctx, &l->v[i]);
		if (!ret) {
			free(l->state);
			l->state = cctl_xstrdup("placed");
			ret = write_record(ctx, r, l);
		}
		return ret;
	}
	if ((ret = remove_all(ctx, l)))
		return ret;
	if (l->relink) {
		char *toolkit = cctl_xstrdup(l->toolkit);
		links_release(l);
		ret = relink_active(ctx, r, toolkit);
		free(toolkit);
		return ret ? ret : read_record(ctx, r, l);
	}
	{
		char *path = record_path(r);
		ret = cctl_os_unlink(ctx, path);
		free(path);
	}
	links_release(l);
	return ret;
}

static void result(struct cctl_cuda_link *out, const struct links *l)
{
	memset(out, 0, sizeof(*out));
	out->toolkit = cctl_xstrdup(l->toolkit);
	out->version = cctl_xstrdup(l->version);
	out->files = l->n;
	for (size_t i = 0; i < l->n; i++)
		out->backups += l->v[i].backup;
}

char *cctl_cuda_toolkit_default(void)
{
	const char *cuda = cctl_os_getenv("CUDA_PATH");
	const char *dflt = cctl_platform_host()->toolkit_dir;
	return cuda ? cctl_xstrdup(cuda) : dflt ? cctl_xstrdup(dflt) : NULL;
}

int cctl_link_cuda(struct cctl_ctx *ctx, const struct cctl_root *r,
		   const char *toolkit, struct cctl_cuda_link *out)
{
	struct links l, now;
	char *active = NULL, *tk;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = recover(ctx, r, &now)))
		return ret;
	if (!toolkit && now.state)
		tk = cctl_xstrdup(now.toolkit);
	else if (!(tk = toolkit ? cctl_xstrdup(toolkit) : cctl_cuda_toolkit_default())) {
		links_release(&now);
		ret = cctl__error(ctx, CCTL_EUSAGE, "no CUDA toolkit named, and "
						    "CUDA_PATH is not set");
		cctl__hint(ctx, "cudnnctl link-cuda \"C:\\Program Files\\NVIDIA GPU "
				"Computing Toolkit\\CUDA\\v12.8\"");
		return ret;
	}
	{
		size_t n = strlen(tk);
		while (n > 1 && (tk[n - 1] == '/' || tk[n - 1] == '\\'))
			tk[--n] = 0;
	}
	if (now.state && strcmp(now.toolkit, tk)) {
		ret = cctl__error(ctx, CCTL_EFAIL,
				  "cuDNN is placed into '%s' already; one toolkit "
				  "at a time",
				  now.toolkit);
		cctl__hint(ctx, "cudnnctl unlink-cuda first");
		goto out;
	}
	if ((ret = cctl_store_active(ctx, r, &active)))
		goto out;
	if (!active) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND, "no cuDNN is active in '%s'",
				  r->path);
		cctl__hint(ctx, "cudnnctl switch VERSION first");
		goto out;
	}
	if ((ret = plan(ctx, r, tk, active, &l)))
		goto out;
	if (now.state) { /* again: what changed since is placed anew */
		if (!(ret = check_writable(ctx, &l)) &&
		    !(ret = unplace(ctx, r, &now, 1)))
			ret = place(ctx, r, &l);
	} else if (!(ret = check_writable(ctx, &l))) {
		ret = place(ctx, r, &l);
	}
	if (!ret)
		result(out, &l);
	links_release(&l);
out:
	free(active);
	free(tk);
	links_release(&now);
	return ret;
}

int cctl_unlink_cuda(struct cctl_ctx *ctx, const struct cctl_root *r,
		     struct cctl_cuda_link *out)
{
	struct links l;
	int ret;
	memset(out, 0, sizeof(*out));
	if ((ret = recover(ctx, r, &l)))
		return ret;
	if (!l.state)
		return cctl__error(ctx, CCTL_ENOTFOUND,
				   "nothing is placed into a CUDA toolkit from '%s'",
				   r->path);
	result(out, &l);
	ret = unplace(ctx, r, &l, 0);
	links_release(&l);
	return ret;
}

int cctl__cuda_link_refresh(struct cctl_ctx *ctx, const struct cctl_root *r)
{
	struct links l, want;
	char *active = NULL;
	int ret, same;
	if ((ret = recover(ctx, r, &l)) || !l.state)
		return ret;
	if ((ret = cctl_store_active(ctx, r, &active)))
		goto out;
	if (!active) { /* deactivated: the toolkit as it was */
		ret = unplace(ctx, r, &l, 0);
		goto out;
	}
	if ((ret = plan(ctx, r, l.toolkit, active, &want)))
		goto out;
	same = want.n == l.n && !strcmp(want.version, l.version);
	for (size_t i = 0; same && i < l.n; i++)
		same = !strcmp(want.v[i].dest, l.v[i].dest) &&
		       !strcmp(want.v[i].src, l.v[i].src) &&
		       !strcmp(want.v[i].sha256, l.v[i].sha256);
	if (!same && !(ret = unplace(ctx, r, &l, 1)))
		ret = place(ctx, r, &want);
	links_release(&want);
out:
	free(active);
	links_release(&l);
	return ret;
}

void cctl_cuda_link_release(struct cctl_cuda_link *l)
{
	free(l->toolkit);
	free(l->version);
	memset(l, 0, sizeof(*l));
}

/*
 * cudnnctl quarantine: hand-copied cuDNN files moved out of the loader's
 * way, with an undo.  Each quarantine is a folder <root>/quarantine/<id>/
 * holding the files and a record, written before anything moves:
 *
 *   cudnnctl-quarantine 1
 *   state moving|moved|restoring
 *   time <ISO 8601 UTC>
 *   file <size>\t<sha256|link>\t<owner>\t<path>\t<stored>\t<link target|->
 *
 * Where the root is on another volume the files are renamed in place
 * (<name>.cudnnctl-quarantined) instead.  Every move is one rename, so a
 * file is always in one place; a record found "moving" (a kill, a power
 * cut) is undone, one found "restoring" is finished, by the next command
 * (cctl__quarantine_recover), so no file is lost or left half-way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"
#include "verify-internal.h"

#define MAGIC "cudnnctl-quarantine 1"
#define SUFFIX ".cudnnctl-quarantined"

struct qrec {
	char *dir; /* <root>/quarantine/<id> */
	char *state;
	struct cctl_quarantine q;
	char **target; /* each file's link target, or NULL */
};

static void qrec_release(struct qrec *r)
{
	for (size_t i = 0; i < r->q.n; i++)
		free(r->target[i]);
	free(r->target);
	cctl_quarantine_release(&r->q);
	free(r->dir);
	free(r->state);
	memset(r, 0, sizeof(*r));
}

/* Hands r's quarantine over to dst and releases the rest of r. */
static void qrec_take(struct qrec *r, struct cctl_quarantine *dst)
{
	for (size_t i = 0; i < r->q.n; i++)
		free(r->target[i]);
	free(r->target);
	r->target = NULL;
	*dst = r->q;
	memset(&r->q, 0, sizeof(r->q));
	qrec_release(r);
}

void cctl_quarantine_release(struct cctl_quarantine *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->v[i].path);
		free(q->v[i].stored);
		free(q->v[i].owner);
	}
	free(q->v);
	free(q->id);
	free(q->time);
	memset(q, 0, sizeof(*q));
}

void cctl_quarantine_list_release(struct cctl_quarantine *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cctl_quarantine_release(&v[i]);
	free(v);
}

static char *top_of(const struct cctl_root *r)
{
	return cctl_path_join(r->path, "quarantine", NULL);
}

static int write_rec(struct cctl_ctx *ctx, const struct qrec *r)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	char *path = cctl_path_join(r->dir, "record", NULL);
	int ret;
	cctl_buf_addf(&b, MAGIC "\nstate %s\ntime %s\n", r->state, r->q.time);
	for (size_t i = 0; i < r->q.n; i++) {
		const struct cctl_quarantined *f = &r->q.v[i];
		cctl_buf_addf(&b, "file %llu\t%s\t%s\t%s\t%s\t%s\n",
			      (unsigned long long)f->size, f->sha256, f->owner, f->path,
			      f->stored, r->target[i] ? r->target[i] : "-");
	}
	ret = cctl_os_write_file_atomic(ctx, path, b.buf, b.len);
	cctl_buf_release(&b);
	free(path);
	return ret;
}

static void add_file(struct qrec *r, const char *path, const char *stored,
		     uint64_t size, const char *sha, const char *owner,
		     const char *target)
{
	struct cctl_quarantined *f;
	r->q.v = cctl_xrealloc(r->q.v, (r->q.n + 1) * sizeof(*r->q.v));
	r->target = cctl_xrealloc(r->target, (r->q.n + 1) * sizeof(*r->target));
	f = &r->q.v[r->q.n];
	memset(f, 0, sizeof(*f));
	f->path = cctl_xstrdup(path);
	f->stored = cctl_xstrdup(stored);
	f->size = size;
	snprintf(f->sha256, sizeof(f->sha256), "%s", sha);
	f->owner = cctl_xstrdup(owner);
	r->target[r->q.n++] = target && strcmp(target, "-") ? cctl_xstrdup(target) : NULL;
}

/* A record line's file, checked: absolute paths, stored inside the
 * quarantine folder or beside the file with the suffix, a hash. */
static int parse_file(struct qrec *r, char *line)
{
	char *f[6], *p = line, *in_place;
	int ok;
	for (int i = 0; i < 6; i++) {
		f[i] = p;
		p = i < 5 ? strchr(p, '\t') : NULL;
		if (i < 5 && !p)
			return -1;
		if (p)
			*p++ = 0;
	}
	in_place = cctl_xstrfmt("%s" SUFFIX, f[3]);
	ok = f[0][0] && !f[0][strspn(f[0], "0123456789")] &&
	     (!strcmp(f[1], "link") ||
	      (strlen(f[1]) == 64 && !f[1][strspn(f[1], "0123456789abcdef")])) &&
	     cctl_os_is_absolute(f[3]) &&
	     (cctl_path_within(r->dir, f[4]) || !strcmp(f[4], in_place));
	free(in_place);
	if (!ok)
		return -1;
	add_file(r, f[3], f[4], strtoull(f[0], NULL, 10), f[1], f[2], f[5]);
	return 0;
}

static int read_rec(struct cctl_ctx *ctx, const char *dir, const char *id,
		    struct qrec *r)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *path = cctl_path_join(dir, "record", NULL), *line, *next;
	int ret, bad;
	memset(r, 0, sizeof(*r));
	r->dir = cctl_xstrdup(dir);
	r->q.id = cctl_xstrdup(id);
	if ((ret = cctl_os_read_file(ctx, path, &text))) {
		free(path);
		qrec_release(r);
		return ret;
	}
	bad = !text.buf || strncmp(text.buf, MAGIC "\n", strlen(MAGIC) + 1);
	for (line = text.buf; !bad && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "state ", 6) && !r->state)
			r->state = cctl_xstrdup(line + 6);
		else if (!strncmp(line, "time ", 5) && !r->q.time)
			r->q.time = cctl_xstrdup(line + 5);
		else if (!strncmp(line, "file ", 5))
			bad = parse_file(r, line + 5);
		else if (strcmp(line, MAGIC))
			bad = 1;
	}
	if (!bad && (!r->state || !r->q.time ||
		     (strcmp(r->state, "moving") && strcmp(r->state, "moved") &&
		      strcmp(r->state, "restoring"))))
		bad = 1;
	cctl_buf_release(&text);
	if (bad)
		qrec_release(r);
	if (bad) {
		ret = cctl__error(ctx, CCTL_EFAIL, "'%s' is not a record cudnnctl "
						   "wrote; nothing was changed",
				  path);
		cctl__hint(ctx, "the files it names are in '%s'; put them back by "
				"hand, then remove the folder",
			   dir);
	}
	free(path);
	return ret;
}

static int exists(const char *path)
{
	struct cctl_os_stat st;
	return !cctl_os_stat(NULL, path, &st) && st.type != CCTL_OS_NONE;
}

/* Every file of r back where it was (those still stored), then the
 * record and the folder gone. */
static int put_back(struct cctl_ctx *ctx, struct qrec *r)
{
	int ret = 0;
	for (size_t i = r->q.n; i-- > 0 && !ret;) {
		const struct cctl_quarantined *f = &r->q.v[i];
		if (exists(f->stored) && !exists(f->path)) {
			char *dir = cctl__dir_of(f->path);
			if (!exists(dir))
				ret = cctl_os_mkdirs(ctx, dir);
			free(dir);
			if (!ret)
				ret = cctl_os_rename(ctx, f->stored, f->path);
		}
	}
	if (!ret)
		ret = cctl_os_rmtree(ctx, r->dir);
	return ret;
}

/* The ids of the quarantine folders, oldest first. */
static int ids(struct cctl_ctx *ctx, const struct cctl_root *r, char ***v, size_t *n)
{
	char *top = top_of(r);
	int ret = 0;
	*v = NULL;
	*n = 0;
	if (exists(top))
		ret = cctl_os_listdir(ctx, top, v, n);
	free(top);
	return ret;
}

int cctl__quarantine_recover(struct cctl_ctx *ctx, const struct cctl_root *r)
{
	char **v, *top = top_of(r);
	size_t n;
	int ret = ids(ctx, r, &v, &n);
	for (size_t i = 0; i < n; i++) {
		char *dir = cctl_path_join(top, v[i], NULL), *rec;
		struct qrec q;
		rec = cctl_path_join(dir, "record", NULL);
		if (!ret && !exists(rec)) {
			/* killed before its record: nothing moved yet */
			ret = cctl_os_rmtree(ctx, dir);
		} else if (!ret && !(ret = read_rec(ctx, dir, v[i], &q))) {
			if (strcmp(q.state, "moved")) {
				cctl__warn(ctx, "%s %s, cut short, %s",
					   !strcmp(q.state, "moving") ? "quarantine"
								      : "restore of",
					   v[i],
					   !strcmp(q.state, "moving") ? "was undone"
								      : "was finished");
				ret = put_back(ctx, &q);
			}
			qrec_release(&q);
		}
		free(rec);
		free(dir);
		free(v[i]);
	}
	free(v);
	free(top);
	return ret;
}

/* ------------------------------------------------------------- move */

/* The files named: a folder gives its cuDNN libraries; a file must be
 * one. */
static int expand(struct cctl_ctx *ctx, const char *const *paths, size_t n,
		  char ***files, size_t *nf)
{
	const struct cctl_platform *p = cctl_platform_host();
	*files = NULL;
	*nf = 0;
	for (size_t i = 0; i < n; i++) {
		struct cctl_os_stat st;
		struct cctl_buf ab = CCTL_BUF_INIT;
		char *abs, **in = NULL;
		size_t nin = 0;
		int ret = cctl_os_absolute(ctx, paths[i], &ab), lib = 0;
		abs = cctl_buf_detach(&ab);
		if (!ret && (ret = cctl_os_stat(ctx, abs, &st)))
			;
		else if (!ret && st.type == CCTL_OS_NONE)
			ret = cctl__error(ctx, CCTL_ENOTFOUND, "'%s' does not exist; "
							       "nothing was moved",
					  paths[i]);
		else if (!ret && st.type == CCTL_OS_DIR)
			ret = cctl_lib_files_in(ctx, abs, &in, &nin);
		if (!ret && st.type != CCTL_OS_DIR) {
			const char *base = cctl__last_sep(abs);
			base = base ? base + 1 : abs;
			lib = cctl__is_cudnn_file(p, base);
			if (!lib)
				ret = cctl__error(ctx, CCTL_EUSAGE,
						  "'%s' is not a cuDNN library; nothing "
						  "was moved",
						  paths[i]);
			else {
				in = cctl_xcalloc(1, sizeof(*in));
				in[nin++] = cctl_xstrdup(abs);
			}
		}
		free(abs);
		for (size_t k = 0; k < nin; k++) {
			*files = cctl_xrealloc(*files, (*nf + 1) * sizeof(**files));
			(*files)[(*nf)++] = in[k];
		}
		free(in);
		if (ret)
			return ret;
	}
	if (!*nf)
		return cctl__error(ctx, CCTL_ENOTFOUND,
				   "no cuDNN library in %s; nothing was moved", paths[0]);
	return 0;
}

/* The refusal of a file whose owner is not "copied by hand", or 0. */
static int refuse_owned(struct cctl_ctx *ctx, const struct cctl_copy *c,
			const char *file)
{
	int ret;
	if (c->owner == CCTL_OWNER_UNKNOWN)
		return 0;
	if (c->owner == CCTL_OWNER_FRAMEWORK || c->owner == CCTL_OWNER_WHEEL) {
		ret = cctl__error(ctx, CCTL_EOWNED,
				  "%s belongs to the Python %s %s: its copy of cuDNN "
				  "is the %s's business; nothing was moved",
				  file, cctl_owner_name(c->owner), c->owner_name,
				  cctl_owner_name(c->owner));
		cctl__hint(ctx, "%s%scudnnctl verify --python shows what it loads",
			   c->remove_with ? c->remove_with : "",
			   c->remove_with ? " removes it; " : "");
	} else if (c->owner == CCTL_OWNER_CUDNNCTL) {
		ret = cctl__error(ctx, CCTL_EOWNED,
				  "%s is one of cudnnctl's own installs; nothing was "
				  "moved",
				  file);
		cctl__hint(ctx, "cudnnctl uninstall VERSION removes it");
	} else {
		ret = cctl__error(ctx, CCTL_EOWNED,
				  "%s belongs to %s %s; nothing was moved", file,
				  c->owner == CCTL_OWNER_PACKAGE ? "the package"
				  : c->owner == CCTL_OWNER_CONDA ? "the conda environment"
								 : "the installer",
				  c->owner_name ? c->owner_name : "?");
		cctl__hint(ctx, "remove it with its owner's command: %s",
			   c->remove_with ? c->remove_with : "its uninstaller");
	}
	return ret;
}

/* Refuses the files whose owner is not "copied by hand": each judged
 * as a copy of its own, the package managers asked about all at once
 * (thoroughly: every package, not only those named *cudnn*). */
static int check_owners(struct cctl_ctx *ctx, const struct cctl_root *r,
			char **files, size_t n)
{
	const struct cctl_platform *p = cctl_platform_host();
	struct cctl_copy *c = cctl_xcalloc(n, sizeof(*c));
	int ret = 0;
	for (size_t i = 0; i < n; i++) {
		const char *base = cctl__last_sep(files[i]) + 1;
		c[i].dir = cctl__dir_of(files[i]);
		for (const struct cctl_libset *l = p->libsets; l->major; l++)
			if (!strncmp(base, l->names[0], strlen(l->names[0]) - 2))
				c[i].major = l->major;
		c[i].files = cctl_xcalloc(1, sizeof(*c[i].files));
		c[i].files[c[i].nfiles++] = cctl_xstrdup(base);
		cctl__copy_describe(&c[i], r, NULL);
	}
	cctl__copy_packages(c, n, 1);
	for (size_t i = 0; i < n; i++) {
		if (!ret)
			ret = refuse_owned(ctx, &c[i], files[i]);
		cctl__copy_release(&c[i]);
	}
	free(c);
	return ret;
}

static int check_writable(struct cctl_ctx *ctx, const char *file)
{
	char *dir = cctl__dir_of(file);
	int fd, ret = 0;
	if (cctl_os_open_temp(NULL, dir, &fd)) {
		ret = cctl__error(ctx, CCTL_EFAIL, "cannot move files out of '%s' "
						   "(permission denied, or read-"
						   "only); nothing was moved",
				  dir);
		cctl__hint(ctx, "%s", cctl_platform_host()->windows
					      ? "System32 and Program Files need an "
						"administrator: run it from an "
						"elevated prompt"
					      : "run it as root (sudo), or as the "
						"folder's owner");
	} else {
		cctl_os_close(fd);
	}
	free(dir);
	return ret;
}

/* The quarantine's folder, named after the time: 20261202T011500Z[-N]. */
static int make_dir(struct cctl_ctx *ctx, const struct cctl_root *r, struct qrec *q)
{
	char when[32], id[40], *top = top_of(r);
	size_t k = 0;
	int ret;
	cctl_os_utc_now(when);
	for (const char *c = when; *c && k < 20; c++)
		if (*c != '-' && *c != ':')
			id[k++] = *c;
	id[k] = 0;
	q->q.time = cctl_xstrdup(when);
	if ((ret = cctl_os_mkdirs(ctx, top))) {
		free(top);
		return ret;
	}
	for (int n = 1;; n++) {
		q->q.id = n == 1 ? cctl_xstrdup(id) : cctl_xstrfmt("%s-%d", id, n);
		q->dir = cctl_path_join(top, q->q.id, NULL);
		if (!exists(q->dir))
			break;
		free(q->q.id);
		free(q->dir);
	}
	free(top);
	return cctl_os_mkdir(ctx, q->dir);
}

/* Hashes and records each file (links by their target). */
static int plan(struct cctl_ctx *ctx, struct qrec *q, char **files, size_t n,
		int in_place)
{
	for (size_t i = 0; i < n; i++) {
		struct cctl_os_stat st;
		struct cctl_buf t = CCTL_BUF_INIT;
		char hex[65] = "link", *stored;
		const char *base = cctl__last_sep(files[i]);
		int ret = cctl_os_stat(ctx, files[i], &st);
		if (!ret && st.type == CCTL_OS_LINK)
			ret = cctl_os_readlink(ctx, files[i], &t);
		else if (!ret)
			ret = cctl_sha256_file(ctx, files[i], hex, NULL);
		if (ret) {
			cctl_buf_release(&t);
			return ret;
		}
		stored = in_place ? cctl_xstrfmt("%s" SUFFIX, files[i])
				  : cctl_xstrfmt("%s%c%zu-%s", q->dir, CCTL_OS_DIR_SEP, i + 1,
						 base + 1);
		add_file(q, files[i], stored, st.type == CCTL_OS_LINK ? 0 : st.size, hex,
			 "unknown", t.buf);
		free(stored);
		cctl_buf_release(&t);
	}
	return 0;
}

int cctl_quarantine_move(struct cctl_ctx *ctx, const struct cctl_root *r,
			 const char *const *paths, size_t n, int force,
			 struct cctl_quarantine *out)
{
	char **files = NULL;
	size_t nf = 0, moved = 0;
	struct qrec q;
	int ret, in_place;
	memset(&q, 0, sizeof(q));
	memset(out, 0, sizeof(*out));
	if ((ret = cctl__quarantine_recover(ctx, r)) ||
	    (ret = expand(ctx, paths, n, &files, &nf)))
		goto out;
	if (!ret)
		ret = check_owners(ctx, r, files, nf);
	for (size_t i = 0; i < nf && !ret; i++)
		ret = check_writable(ctx, files[i]);
	if (!ret && !force)
		ret = cctl_check_not_in_use(ctx, (const char *const *)files, nf, "quarantine");
	if (ret || (ret = make_dir(ctx, r, &q)))
		goto out;
	in_place = cctl_os_same_volume(q.dir, files[0]) == 0;
	q.state = cctl_xstrdup("moving");
	if ((ret = plan(ctx, &q, files, nf, in_place)) || (ret = write_rec(ctx, &q)))
		goto undo;
	for (; moved < q.q.n && !ret; moved++)
		if (exists(q.q.v[moved].stored))
			ret = cctl__error(ctx, CCTL_EFAIL, "'%s' is there already",
					  q.q.v[moved].stored);
		else
			ret = cctl_os_rename(ctx, q.q.v[moved].path, q.q.v[moved].stored);
	if (ret)
		goto undo;
	free(q.state);
	q.state = cctl_xstrdup("moved");
	if ((ret = write_rec(ctx, &q)))
		goto undo;
	qrec_take(&q, out);
	goto out;
undo:
	/* an error (not a kill): what moved goes back, nothing is left */
	{
		struct cctl_ctx quiet;
		cctl_ctx_init(&quiet);
		put_back(&quiet, &q);
	}
out:
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	qrec_release(&q);
	return ret;
}

/* ------------------------------------------------------- list, restore */

typedef int (*rec_fn)(struct cctl_ctx *ctx, struct qrec *q, void *ud);

/* fn on each quarantine's record (only: that id; NULL or "all": every
 * one), after a cut-short one is recovered; *found counts them. */
static int each_record(struct cctl_ctx *ctx, const struct cctl_root *r,
		       const char *only, rec_fn fn, void *ud, size_t *found)
{
	char **names, *top = top_of(r);
	size_t nn;
	int ret;
	*found = 0;
	if ((ret = cctl__quarantine_recover(ctx, r)) || (ret = ids(ctx, r, &names, &nn))) {
		free(top);
		return ret;
	}
	for (size_t i = 0; i < nn; i++) {
		char *dir = cctl_path_join(top, names[i], NULL);
		struct qrec q;
		if (!ret && (!only || !strcmp(only, "all") || !strcmp(only, names[i])) &&
		    !(ret = read_rec(ctx, dir, names[i], &q))) {
			++*found;
			ret = fn(ctx, &q, ud);
			qrec_release(&q);
		}
		free(dir);
		free(names[i]);
	}
	free(names);
	free(top);
	return ret;
}

struct taken {
	struct cctl_quarantine *v;
	size_t n;
};

static int take(struct cctl_ctx *ctx, struct qrec *q, void *ud)
{
	struct taken *t = ud;
	(void)ctx;
	t->v = cctl_xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	qrec_take(q, &t->v[t->n++]);
	return 0;
}

int cctl_quarantine_list(struct cctl_ctx *ctx, const struct cctl_root *r,
			 struct cctl_quarantine **v, size_t *n)
{
	struct taken t = { NULL, 0 };
	size_t found;
	int ret = each_record(ctx, r, NULL, take, &t, &found);
	*v = t.v;
	*n = t.n;
	return ret;
}

/* Nothing is in the way, and every stored file is as it was moved. */
static int check_restore(struct cctl_ctx *ctx, struct qrec *q, void *ud)
{
	(void)ud;
	for (size_t i = 0; i < q->q.n; i++) {
		const struct cctl_quarantined *f = &q->q.v[i];
		struct cctl_buf t = CCTL_BUF_INIT;
		char hex[65];
		int changed;
		if (exists(f->path))
			return cctl__error(ctx, CCTL_EFAIL,
					   "cannot restore %s: a file is there again; "
					   "nothing was restored",
					   f->path);
		if (!strcmp(f->sha256, "link"))
			changed = cctl_os_readlink(NULL, f->stored, &t) || !q->target[i] ||
				  strcmp(t.buf, q->target[i]);
		else
			changed = cctl_sha256_file(NULL, f->stored, hex, NULL) ||
				  strcmp(hex, f->sha256);
		cctl_buf_release(&t);
		if (changed)
			return cctl__error(ctx, CCTL_EFAIL,
					   "%s was changed or removed in the "
					   "quarantine (SHA-256 or link target "
					   "differs); nothing was restored",
					   f->stored);
	}
	return 0;
}

/* The record says "restoring" first, so that a kill midway is finished
 * by the next command. */
static int restore_one(struct cctl_ctx *ctx, struct qrec *q, void *ud)
{
	int ret;
	free(q->state);
	q->state = cctl_xstrdup("restoring");
	if (!(ret = write_rec(ctx, q)) && !(ret = put_back(ctx, q)))
		ret = take(ctx, q, ud);
	return ret;
}

int cctl_quarantine_restore(struct cctl_ctx *ctx, const struct cctl_root *r,
			    const char *id, struct cctl_quarantine **v, size_t *n)
{
	struct taken t = { NULL, 0 };
	size_t found;
	/* every one checked before any is restored: all or nothing */
	int ret = each_record(ctx, r, id, check_restore, NULL, &found);
	if (!ret && found)
		ret = each_record(ctx, r, id, restore_one, &t, &found);
	*v = t.v;
	*n = t.n;
	if (!ret && !found && strcmp(id, "all")) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND, "no quarantine '%s' in %s",
				  id, r->path);
		cctl__hint(ctx, "cudnnctl quarantine --list shows them");
	}
	return ret;
}

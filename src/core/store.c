/*
 * The install root: its location and checks, its lock, the install
 * records and the list of installed versions.
 *
 *   <root>/.lock                  held while a command changes the root
 *   <root>/versions/<id>/         one install; <id> is "<version>-cuda<N>"
 *   <root>/versions/<id>/.cudnnctl-record   what was installed, file by file
 *   <root>/current                link to versions/<id>, the active one
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

#define ROOT_MAX_PATH 200
#define RECORD_MAGIC "cudnnctl-record 1"

int cctl_root_default(struct cctl_ctx *ctx, char **path)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	const char *env = cctl_os_getenv("CUDNNCTL_ROOT");
	int ret = 0;

	*path = NULL;
	if (env)
		cctl_buf_adds(&b, env);
	else
		ret = cctl_os_default_root(ctx, &b);
	if (!ret)
		*path = cctl_buf_detach(&b);
	cctl_buf_release(&b);
	return ret;
}

int cctl_root_check(struct cctl_ctx *ctx, const char *path, size_t longest)
{
	size_t len = strlen(path);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		const char *why = NULL;
		if (*p >= 0x80)
			why = "a non-ASCII character";
		else if (*p == ' ')
			why = "a space";
		else if (*p < 0x20 || *p == 0x7f)
			why = "a control character";
		else if (strchr("'\"`$!&;|<>*?()[]{}#%^=", *p))
			why = "a character that shells treat specially";
		else if (*p == ':' &&
			 !(CCTL_OS_DIR_SEP == '\\' && p == (const unsigned char *)path + 1))
			/* it splits LD_LIBRARY_PATH (POSIX), and names an
			 * NTFS stream past a drive letter (Windows) */
			why = "a ':' (it would split the library search path)";
		else if (*p == '-' && (p == (const unsigned char *)path ||
				       p[-1] == '/' || p[-1] == '\\'))
			why = "a part starting with '-' (commands take it for an "
			      "option)";
		if (why && *p == ' ' && cctl_platform_host()->windows) {
			/* loading cuDNN from such a folder works (NVIDIA's
			 * installer uses Program Files): the rule is cudnnctl's */
			cctl__error(ctx, CCTL_EBADROOT,
				    "install root '%s' has a space; cudnnctl keeps "
				    "its roots free of spaces so that the commands "
				    "it prints and the build scripts that name the "
				    "root need no quoting",
				    path);
			goto suggest;
		}
		if (why) {
			cctl__error(ctx, CCTL_EBADROOT,
				    "install root '%s' has %s; cuDNN and the "
				    "tools that load it need a short ASCII path",
				    path, why);
			goto suggest;
		}
	}
	if (len + longest > ROOT_MAX_PATH) {
		cctl__error(ctx, CCTL_EBADROOT,
			    "install root '%s' is too long: its longest file "
			    "would have %zu characters, over the %d allowed",
			    path, len + longest, ROOT_MAX_PATH);
		goto suggest;
	}
	return 0;
suggest:
	cctl__hint(ctx, "choose a short root such as %s with --root or "
			"CUDNNCTL_ROOT",
		   cctl_platform_host()->root_example);
	return CCTL_EBADROOT;
}

/* The highest folder of path that does not exist yet. */
static char *highest_missing(const char *path)
{
	char *p = cctl_xstrdup(path), *top = cctl_xstrdup(path);
	for (;;) {
		struct cctl_os_stat st;
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
		if (cctl_os_stat(NULL, p, &st) || st.type != CCTL_OS_NONE)
			break;
		free(top);
		top = cctl_xstrdup(p);
	}
	free(p);
	return top;
}

/* Bytes of the files under path (links not followed). */
static uint64_t tree_size(const char *path)
{
	struct cctl_os_stat st;
	char **names = NULL;
	size_t n = 0;
	uint64_t sum = 0;
	if (cctl_os_stat(NULL, path, &st))
		return 0;
	if (st.type != CCTL_OS_DIR)
		return st.type == CCTL_OS_FILE ? st.size : 0;
	if (cctl_os_listdir(NULL, path, &names, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char *sub = cctl_path_join(path, names[i], NULL);
		sum += tree_size(sub);
		free(sub);
		free(names[i]);
	}
	free(names);
	return sum;
}

/* What commands killed before they could clean up left in versions/ (a
 * staging folder, a version being removed): whoever holds the lock owns
 * the root, so no live process owns them.  Removed, with a word on the
 * space freed; one that cannot be removed is left and said, and blocks
 * nothing (new ones get new names). */
static void sweep_leftovers(struct cctl_ctx *ctx, const struct cctl_root *r)
{
	char *dir = cctl_path_join(r->path, "versions", NULL), **names = NULL;
	size_t n = 0, removed = 0;
	uint64_t freed = 0;
	if (!cctl_os_listdir(NULL, dir, &names, &n))
		for (size_t i = 0; i < n; i++) {
			char *sub = cctl_path_join(dir, names[i], NULL);
			/* (a .resume- folder lives as long as its .part) */
			if (!strncmp(names[i], ".staging-", 9) ||
			    !strncmp(names[i], ".trash-", 7) ||
			    (!strncmp(names[i], ".resume-", 8) &&
			     cctl__resume_orphan(sub))) {
				uint64_t size = tree_size(sub);
				if (!cctl_os_rmtree(NULL, sub)) {
					removed++;
					freed += size;
				} else {
					cctl__warn(ctx, "cannot remove '%s', left "
							"by an interrupted command; "
							"remove it by hand",
						   sub);
				}
			}
			free(sub);
			free(names[i]);
		}
	if (removed) {
		char size[32];
		cctl_format_size(size, sizeof(size), freed);
		cctl__warn(ctx, "removed %zu folder%s left in '%s' by interrupted "
				"commands (%s freed)",
			   removed, removed == 1 ? "" : "s", dir, size);
	}
	free(names);
	free(dir);
}

/* The root's lock, waiting up to wait_ms for another cudnnctl to let it
 * go (saying once who holds it, doing what); a holder that died let it
 * go when it died. */
static int lock_root(struct cctl_ctx *ctx, const char *path, long wait_ms,
		     const char *doing, void **lock)
{
	struct cctl_buf holder = CCTL_BUF_INIT;
	double start = cctl_os_now_ms();
	int said = 0, ret;
	for (;;) {
		struct cctl_ctx why;
		cctl_ctx_init(&why);
		ret = cctl_os_lock(&why, path, doing, &holder, lock);
		if (ret != CCTL_ELOCKED) {
			if (ret)
				cctl__os_error(ctx, ret, why.oserr, "%s", why.msg);
			break;
		}
		if (cctl_os_now_ms() - start >= (double)wait_ms) {
			if (!wait_ms) {
				cctl__error(ctx, ret, "%s", why.msg);
				cctl__hint(ctx, "wait for it to finish, or pass "
						"--wait SECONDS to wait for it");
			} else {
				cctl__error(ctx, ret,
					    "install root is still in use after "
					    "%ld s: '%s' is held by %s",
					    wait_ms / 1000, path,
					    holder.len ? holder.buf : "another cudnnctl");
				cctl__hint(ctx, "wait for it to finish, or pass a "
						"longer --wait SECONDS");
			}
			break;
		}
		if (!said++)
			cctl__warn(ctx, "waiting for %s to finish with this root "
					"(up to %ld s; --wait SECONDS)",
				   holder.len ? holder.buf : "another cudnnctl",
				   wait_ms / 1000);
		if ((ret = cctl__interrupt(ctx)))
			break;
		cctl_os_sleep_ms(100);
	}
	cctl_buf_release(&holder);
	return ret;
}

int cctl_root_open(struct cctl_ctx *ctx, struct cctl_root *r,
		   const char *path, int create, int lock)
{
	return cctl_root_open_wait(ctx, r, path, create, lock, 0, NULL);
}

int cctl_root_open_wait(struct cctl_ctx *ctx, struct cctl_root *r,
			const char *path, int create, int lock, long wait_ms,
			const char *doing)
{
	struct cctl_buf abs = CCTL_BUF_INIT, sub = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	int ret;

	memset(r, 0, sizeof(*r));
	if ((ret = cctl_os_absolute(ctx, path, &sub)))
		goto out;
	/* links on the way resolved once: a linked HOME (Fedora Atomic's
	 * /home -> var/home) or a root that is a link to a folder; what is
	 * extracted below it must meet none (libarchive refuses to write
	 * through a link) */
	cctl_os_resolve(sub.buf, &abs);
	cctl_buf_reset(&sub);
	/* the longest path cudnnctl itself makes below the root */
	if ((ret = cctl_root_check(ctx, abs.buf, 60)))
		goto out;
	if ((ret = cctl_os_stat(ctx, abs.buf, &st)))
		goto out;
	if (st.type == CCTL_OS_NONE && !create) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND,
				  "install root '%s' does not exist", abs.buf);
		cctl__hint(ctx, "install cuDNN first: cudnnctl install VERSION "
				"or ARCHIVE (or pass --root)");
		goto out;
	}
	if (st.type != CCTL_OS_NONE && st.type != CCTL_OS_DIR) {
		ret = cctl__error(ctx, CCTL_EBADROOT,
				  "install root '%s' is not a folder", abs.buf);
		goto out;
	}
	/* one another user can change is refused for work, named when read */
	if ((ret = cctl__root_trusted(ctx, abs.buf, create || lock, 0)))
		goto out;
	if (create) {
		struct cctl_os_stat vs;
		if (st.type == CCTL_OS_NONE)
			r->created_top = highest_missing(abs.buf);
		cctl_buf_adds(&sub, abs.buf);
		cctl_buf_addpath(&sub, "versions");
		if ((ret = cctl_os_stat(ctx, sub.buf, &vs)))
			goto out;
		r->created_versions = vs.type == CCTL_OS_NONE;
		if ((ret = cctl_os_mkdirs(ctx, sub.buf)))
			goto out;
	}
	r->path = cctl_buf_detach(&abs);
	if (lock) {
		struct cctl_os_stat ls;
		cctl_buf_reset(&sub);
		cctl_buf_adds(&sub, r->path);
		cctl_buf_addpath(&sub, ".lock");
		r->created_lock = !cctl_os_stat(ctx, sub.buf, &ls) &&
				  ls.type == CCTL_OS_NONE;
		if ((ret = lock_root(ctx, sub.buf, wait_ms, doing, &r->lock))) {
			free(r->path);
			free(r->created_top);
			r->path = r->created_top = NULL;
		} else {
			sweep_leftovers(ctx, r);
			/* a quarantine or restore cut short: every file back in
			 * one place */
			if (cctl__quarantine_recover(ctx, r))
				cctl__warn(ctx, "%s", cctl__msg(ctx));
		}
	}
out:
	cctl_buf_release(&abs);
	cctl_buf_release(&sub);
	return ret;
}

char *cctl__unique_leaf(const char *prefix)
{
	static unsigned counter;
	unsigned x = (unsigned)(cctl_os_now_ms() * 1000.0) ^
		     (unsigned)(uintptr_t)&counter ^ (++counter * 2654435761u);
	return cctl_xstrfmt("%s%ld-%08x", prefix, cctl_os_pid(), x);
}

void cctl_root_close(struct cctl_root *r)
{
	cctl_os_unlock(r->lock);
	free(r->path);
	free(r->created_top);
	memset(r, 0, sizeof(*r));
}

static int is_empty_dir(const char *path)
{
	char **names = NULL;
	size_t n = 0;
	int empty;
	empty = !cctl_os_listdir(NULL, path, &names, &n) && !n;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return empty;
}

void cctl_root_discard(struct cctl_root *r)
{
	struct cctl_buf sub = CCTL_BUF_INIT;

	if (!r->path)
		goto out;
	cctl_buf_adds(&sub, r->path);
	cctl_buf_addpath(&sub, "versions");
	if (r->created_versions && is_empty_dir(sub.buf))
		cctl_os_rmtree(NULL, sub.buf);
	cctl_os_unlock(r->lock);
	r->lock = NULL;
	if (r->created_lock) {
		cctl_buf_reset(&sub);
		cctl_buf_adds(&sub, r->path);
		cctl_buf_addpath(&sub, ".lock");
		cctl_os_unlink(NULL, sub.buf);
	}
	if (r->created_top) {
		/* the root, then each parent made for it, while empty */
		char *p = cctl_xstrdup(r->path);
		size_t top = strlen(r->created_top);
		while (strlen(p) >= top && is_empty_dir(p)) {
			char *slash;
			cctl_os_rmtree(NULL, p);
			slash = strrchr(p, '/');
			if (!slash)
				break;
			*slash = '\0';
		}
		free(p);
	}
out:
	cctl_buf_release(&sub);
	cctl_root_close(r);
}

/* ---------------------------------------------------------------- records */

static char type_char(enum cctl_entry_type t)
{
	switch (t) {
	case CCTL_ENTRY_DIR: return 'd';
	case CCTL_ENTRY_SYMLINK: return 'l';
	case CCTL_ENTRY_HARDLINK: return 'h';
	default: return 'f';
	}
}

int cctl_record_write(struct cctl_ctx *ctx, const char *dir,
		      const struct cctl_install *in)
{
	struct cctl_buf b = CCTL_BUF_INIT, path = CCTL_BUF_INIT;
	int ret;

	cctl_buf_addf(&b, "%s\n", RECORD_MAGIC);
	cctl_buf_addf(&b, "id\t%s\n", in->id);
	cctl_buf_addf(&b, "version\t%s\n", in->version);
	cctl_buf_addf(&b, "cuda\t%d\n", in->cuda);
	cctl_buf_addf(&b, "platform\t%s\n", in->platform);
	cctl_buf_addf(&b, "verified\t%d\n", in->verified);
	cctl_buf_addf(&b, "archive\t%s\n", in->archive ? in->archive : "");
	cctl_buf_addf(&b, "archive-sha256\t%s\n", in->archive_sha256);
	cctl_buf_addf(&b, "manifest\t%s\n", in->manifest ? in->manifest : "");
	cctl_buf_addf(&b, "installed-at\t%s\n", in->installed_at);
	for (size_t i = 0; i < in->nfiles; i++) {
		const struct cctl_file *f = &in->files[i];
		cctl_buf_addf(&b, "file\t%c\t%llu\t%s\t%lld\t%lld\t%s\t%s\n",
			      type_char(f->type), (unsigned long long)f->size,
			      f->type == CCTL_ENTRY_FILE ? f->sha256 : "-",
			      (long long)f->mtime_ns, (long long)f->ctime_ns,
			      f->path, f->link ? f->link : "");
	}
	cctl_buf_adds(&path, dir);
	cctl_buf_addpath(&path, CCTL_RECORD_NAME);
	ret = cctl_os_write_file_atomic(ctx, path.buf, b.buf, b.len);
	cctl_buf_release(&b);
	cctl_buf_release(&path);
	return ret;
}

/* A record field read again (a damaged or edited record) replaces the
 * first. */
static void set_field(char **dst, const char *value)
{
	free(*dst);
	*dst = cctl_xstrdup(value);
}

/* Splits a line at tabs in place; returns the number of fields. */
static size_t split_tabs(char *line, char **f, size_t max)
{
	size_t n = 0;
	while (n < max) {
		f[n++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

/* The values of a record that become paths or ids are what cudnnctl
 * writes: an edited or planted record is refused, naming the field. */
static int record_check(struct cctl_ctx *ctx, const char *path,
			const struct cctl_install *in)
{
	const char *field = NULL, *value = NULL;
	char cuda[16];
	snprintf(cuda, sizeof(cuda), "%d", in->cuda);
	if (!cctl_id_valid(in->id))
		field = "id", value = in->id;
	else if (!cctl_version_valid(in->version))
		field = "version", value = in->version;
	else if (!cctl_cuda_valid(in->cuda))
		field = "cuda", value = cuda;
	else if (!cctl_platform_find(in->platform))
		field = "platform", value = in->platform;
	for (size_t i = 0; !field && i < in->nfiles; i++)
		if (!cctl_relpath_valid(in->files[i].path))
			field = "file", value = in->files[i].path;
	if (!field)
		return 0;
	cctl__error(ctx, CCTL_EFAIL,
		    "install record '%s' is damaged: its %s is '%.200s'", path,
		    field, value);
	cctl__hint(ctx, "cudnnctl did not write that; reinstall the version "
			"(cudnnctl uninstall --force ID, then install)");
	return CCTL_EFAIL;
}

/* Far above any real record (9.x: about 30 lines, 8 kB) */
#define RECORD_MAX (64u << 20)

int cctl_record_read(struct cctl_ctx *ctx, const char *dir,
		     struct cctl_install *in)
{
	struct cctl_buf b = CCTL_BUF_INIT, path = CCTL_BUF_INIT;
	size_t alloc = 0;
	char *line, *next;
	int ret;

	memset(in, 0, sizeof(*in));
	cctl_buf_adds(&path, dir);
	cctl_buf_addpath(&path, CCTL_RECORD_NAME);
	{
		/* a record is a regular file cudnnctl wrote: not a link, a
		 * FIFO (it would hang the read) or a huge file */
		struct cctl_os_stat st;
		if ((ret = cctl_os_stat(ctx, path.buf, &st)))
			goto out;
		if (st.type != CCTL_OS_NONE &&
		    (st.type != CCTL_OS_FILE || st.size > RECORD_MAX)) {
			ret = cctl__error(ctx, CCTL_EFAIL,
					  "'%s' is not an install record cudnnctl "
					  "wrote (a link, a special file, or over "
					  "64 MB)",
					  path.buf);
			goto out;
		}
	}
	if ((ret = cctl_os_read_file(ctx, path.buf, &b)))
		goto out;
	if (strncmp(b.buf, RECORD_MAGIC "\n", strlen(RECORD_MAGIC) + 1)) {
		ret = cctl__error(ctx, CCTL_EFAIL,
				  "'%s' is not a cudnnctl install record",
				  path.buf);
		goto out;
	}
	for (line = b.buf + strlen(RECORD_MAGIC) + 1; *line; line = next) {
		char *f[8] = { NULL };
		size_t n;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		n = split_tabs(line, f, 8);
		if (n < 2)
			continue;
		if (!strcmp(f[0], "id"))
			set_field(&in->id, f[1]);
		else if (!strcmp(f[0], "version"))
			set_field(&in->version, f[1]);
		else if (!strcmp(f[0], "cuda"))
			in->cuda = atoi(f[1]);
		else if (!strcmp(f[0], "platform"))
			set_field(&in->platform, f[1]);
		else if (!strcmp(f[0], "verified"))
			in->verified = atoi(f[1]);
		else if (!strcmp(f[0], "archive"))
			set_field(&in->archive, f[1]);
		else if (!strcmp(f[0], "archive-sha256"))
			snprintf(in->archive_sha256, sizeof(in->archive_sha256),
				 "%s", f[1]);
		else if (!strcmp(f[0], "manifest") && *f[1])
			set_field(&in->manifest, f[1]);
		else if (!strcmp(f[0], "installed-at"))
			set_field(&in->installed_at, f[1]);
		else if (!strcmp(f[0], "file") && n >= 8) {
			struct cctl_file *fl;
			if (in->nfiles == alloc) {
				alloc = alloc ? 2 * alloc : 32;
				in->files = cctl_xrealloc(in->files,
							  alloc * sizeof(*fl));
			}
			fl = &in->files[in->nfiles++];
			memset(fl, 0, sizeof(*fl));
			fl->type = f[1][0] == 'd'   ? CCTL_ENTRY_DIR
				   : f[1][0] == 'l' ? CCTL_ENTRY_SYMLINK
				   : f[1][0] == 'h' ? CCTL_ENTRY_HARDLINK
						    : CCTL_ENTRY_FILE;
			fl->size = strtoull(f[2], NULL, 10);
			snprintf(fl->sha256, sizeof(fl->sha256), "%s", f[3]);
			fl->mtime_ns = strtoll(f[4], NULL, 10);
			fl->ctime_ns = strtoll(f[5], NULL, 10);
			fl->path = cctl_xstrdup(f[6]);
			fl->link = *f[7] ? cctl_xstrdup(f[7]) : NULL;
			if (fl->type == CCTL_ENTRY_FILE)
				in->size += fl->size;
		}
	}
	if (!in->id || !in->version || !in->platform) {
		ret = cctl__error(ctx, CCTL_EFAIL,
				  "install record '%s' is incomplete", path.buf);
		cctl_install_release(in);
	} else if ((ret = record_check(ctx, path.buf, in))) {
		cctl_install_release(in);
	}
out:
	cctl_buf_release(&b);
	cctl_buf_release(&path);
	return ret;
}

void cctl_install_release(struct cctl_install *in)
{
	for (size_t i = 0; i < in->nfiles; i++) {
		free(in->files[i].path);
		free(in->files[i].link);
	}
	free(in->files);
	free(in->id);
	free(in->version);
	free(in->platform);
	free(in->archive);
	free(in->manifest);
	free(in->installed_at);
	memset(in, 0, sizeof(*in));
}

void cctl_install_list_release(struct cctl_install *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cctl_install_release(&v[i]);
	free(v);
}

/* ------------------------------------------------------------------ lists */

int cctl_store_active(struct cctl_ctx *ctx, const struct cctl_root *r,
		      char **id)
{
	struct cctl_buf link = CCTL_BUF_INIT, target = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	const char *slash;
	int ret;

	*id = NULL;
	cctl_buf_adds(&link, r->path);
	cctl_buf_addpath(&link, "current");
	if ((ret = cctl_os_stat(ctx, link.buf, &st)) || st.type == CCTL_OS_NONE)
		goto out;
	ret = cctl_os_readlink(ctx, link.buf, &target);
	if (ret == CCTL_ENOTFOUND) {
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	while (target.len && (target.buf[target.len - 1] == '/' ||
			      target.buf[target.len - 1] == '\\'))
		target.buf[--target.len] = '\0';
	slash = strrchr(target.buf, '/');
	if (!slash)
		slash = strrchr(target.buf, '\\');
	*id = cctl_xstrdup(slash ? slash + 1 : target.buf);
out:
	cctl_buf_release(&link);
	cctl_buf_release(&target);
	return ret;
}

static int cmp_install(const void *pa, const void *pb)
{
	const struct cctl_install *a = pa, *b = pb;
	int c = cctl_version_cmp(a->version, b->version);
	return c ? c : a->cuda - b->cuda;
}

/* Whether another cudnnctl holds the root's lock now (its staging folder
 * is then work under way, not a leftover). */
static int root_busy(const char *root)
{
	char *path = cctl_path_join(root, ".lock", NULL);
	struct cctl_os_stat st;
	void *lock = NULL;
	int busy = 0;
	if (!cctl_os_stat(NULL, path, &st) && st.type != CCTL_OS_NONE) {
		busy = cctl_os_lock(NULL, path, "list", NULL, &lock) != 0;
		cctl_os_unlock(lock);
	}
	free(path);
	return busy;
}

int cctl_store_list(struct cctl_ctx *ctx, const struct cctl_root *r,
		    struct cctl_install **out, size_t *n)
{
	struct cctl_buf dir = CCTL_BUF_INIT, sub = CCTL_BUF_INIT;
	char **names = NULL, *active = NULL;
	size_t nnames = 0, leftovers = 0;
	int ret;

	*out = NULL;
	*n = 0;
	cctl_buf_adds(&dir, r->path);
	cctl_buf_addpath(&dir, "versions");
	if ((ret = cctl_store_active(ctx, r, &active)))
		goto out;
	{
		struct cctl_os_stat st;
		if ((ret = cctl_os_stat(ctx, dir.buf, &st)) ||
		    st.type != CCTL_OS_DIR)
			goto out;
	}
	if ((ret = cctl_os_listdir(ctx, dir.buf, &names, &nnames)))
		goto out;
	*out = cctl_xcalloc(nnames ? nnames : 1, sizeof(**out));
	for (size_t i = 0; i < nnames; i++) {
		struct cctl_install *in = &(*out)[*n];
		struct cctl_ctx why;
		if (names[i][0] == '.') {
			/* staging and trash folders */
			leftovers += !strncmp(names[i], ".staging-", 9) ||
				     !strncmp(names[i], ".trash-", 7);
			continue;
		}
		cctl_buf_reset(&sub);
		cctl_buf_adds(&sub, dir.buf);
		cctl_buf_addpath(&sub, names[i]);
		cctl_ctx_init(&why);
		if (cctl_record_read(&why, sub.buf, in)) {
			cctl__warn(ctx, "ignoring '%s': %s", sub.buf, why.msg);
			continue;
		}
		if (strcmp(in->id, names[i])) {
			cctl__warn(ctx, "ignoring '%s': its record is that of "
					"'%.200s'",
				   sub.buf, in->id);
			cctl_install_release(in);
			continue;
		}
		in->active = active && !strcmp(active, names[i]);
		(*n)++;
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_install);
	if (leftovers && !r->lock && !root_busy(r->path))
		cctl__warn(ctx, "'%s' holds %zu folder%s left by an interrupted "
				"command; the next install, switch or uninstall "
				"removes %s",
			   dir.buf, leftovers, leftovers == 1 ? "" : "s",
			   leftovers == 1 ? "it" : "them");
out:
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(active);
	cctl_buf_release(&dir);
	cctl_buf_release(&sub);
	return ret;
}

int cctl_store_find(struct cctl_ctx *ctx, const struct cctl_root *r,
		    const char *prefix, int cuda, struct cctl_install *out)
{
	struct cctl_install *v = NULL;
	struct cctl_buf choices = CCTL_BUF_INIT;
	size_t n = 0, hits = 0, hit = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = cctl_store_list(ctx, r, &v, &n)))
		return ret;
	for (size_t i = 0; i < n; i++) {
		int match = !strcmp(v[i].id, prefix) ||
			    cctl_version_has_prefix(v[i].version, prefix);
		if (!match || (cuda > 0 && v[i].cuda != cuda))
			continue;
		cctl_buf_addf(&choices, "%s%s", hits ? ", " : "", v[i].id);
		hit = i;
		hits++;
	}
	if (hits == 1) {
		*out = v[hit];
		memset(&v[hit], 0, sizeof(v[hit]));
	} else if (!hits) {
		struct cctl_buf all = CCTL_BUF_INIT;
		char variant[32] = "";
		if (cuda > 0)
			snprintf(variant, sizeof(variant), " (cuda%d)", cuda);
		for (size_t i = 0; i < n; i++)
			cctl_buf_addf(&all, "%s%s", i ? ", " : "", v[i].id);
		ret = cctl__error(ctx, CCTL_ENOTFOUND,
				  "cuDNN %s%s is not installed in '%s'", prefix,
				  variant, r->path);
		/* the command that would get it, then what there is */
		if (n)
			cctl__hint(ctx, "cudnnctl install %s%s%.0d gets it; "
					"installed: %s",
				   prefix, cuda > 0 ? " --cuda " : "", cuda,
				   all.buf);
		else
			cctl__hint(ctx, "nothing is installed there; cudnnctl "
					"install %s%s%.0d gets it",
				   prefix, cuda > 0 ? " --cuda " : "", cuda);
		cctl_buf_release(&all);
	} else {
		ret = cctl__error(ctx, CCTL_EAMBIGUOUS,
				  "'%s' matches %zu installs: %s", prefix, hits,
				  choices.buf);
		cctl__hint(ctx, "give a longer version or --cuda N");
	}
	cctl_install_list_release(v, n);
	cctl_buf_release(&choices);
	return ret;
}

/*
 * A compressed tar installed in one pass.  As the scan reads each regular
 * file, its bytes go straight to a private folder (a ".staging-" one in
 * versions/, swept like any other when a process dies), under the entry's
 * index for a name, hashed on the way: no name from the archive is used
 * before the checks of the whole tree (duplicates, case, links) have run
 * at the end of the scan, so no entry can clash with another or reach
 * through a link.  Once the hash, the checks and the manifest have said
 * yes, cctl__unpack_place makes the folders under the staging folder,
 * moves each file to its place and makes the links last, through
 * libarchive's secure writer as the extraction of a zip does.
 *
 * The whole-tree checks are the same as for a two-pass install; what
 * changes is that the tar is decompressed once and its files written
 * once, while the scan reads it (or while it downloads).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "archive-internal.h"
#include "entries.h"

/* Left free whatever the archive: past it the unpacking is given up, the
 * archive read twice and the free-space check has its say. */
#define ROOM_MARGIN (64u << 20)

struct cctl__unpack {
	char *parent; /* versions/, for messages */
	char *dir;
	struct cctl__aw *aw; /* made on this thread: libarchive sets umask */
	struct cctl_buf path;
	uint64_t written; /* bytes of the files in dir */
	uint64_t limit;   /* what may be written */
	int abandoned;
	struct cctl__resume *res; /* the folder is kept for a resume */
};

int cctl__unpack_begin(struct cctl_ctx *ctx, const char *dir,
		       const char *part, uint64_t size,
		       struct cctl__unpack **out)
{
	struct cctl__unpack *u = cctl_xcalloc(1, sizeof(*u));
	uint64_t avail = 0;
	int ret;
	*out = NULL;
	if (part && (ret = cctl__resume_open(ctx, dir, part, size, &u->res))) {
		free(u);
		return ret;
	}
	if (u->res) {
		u->dir = cctl_xstrdup(cctl__resume_dir(u->res));
	} else {
		char *leaf = cctl__unique_leaf(".staging-");
		u->dir = cctl_path_join(dir, leaf, NULL);
		free(leaf);
		if ((ret = cctl_os_mkdir(ctx, u->dir))) {
			free(u->dir);
			free(u);
			return ret;
		}
	}
	u->parent = cctl_xstrdup(dir);
	if (cctl_os_free_space(NULL, dir, &avail))
		avail = 0; /* unknown: read twice */
	u->limit = avail > ROOM_MARGIN ? avail - ROOM_MARGIN : 0;
	u->path = (struct cctl_buf)CCTL_BUF_INIT;
	u->aw = cctl__aw_new();
	*out = u;
	return 0;
}

/* The files would not fit: what was written goes now (its room is the
 * install's), and the extraction reads the archive again. */
void cctl__unpack_give_up(struct cctl__unpack *u)
{
	if (u->abandoned)
		return;
	u->abandoned = 1;
	cctl__aw_free(u->aw);
	u->aw = NULL;
	cctl__resume_detach(u->res);
	cctl_os_rmtree(NULL, u->dir);
}

struct cctl__resume *cctl__unpack_resume(const struct cctl__unpack *u)
{
	return u && !u->abandoned ? u->res : NULL;
}

/* Appends a block at offset off of the entry to keep (a hole as zeros). */
static void keep_block(struct cctl_buf *keep, const void *block, size_t n,
		       int64_t off)
{
	while (keep->len < (size_t)off)
		cctl_buf_addch(keep, '\0');
	cctl_buf_add(keep, block, n);
}

/* A file of the archive could not be written: said as the install's
 * failure, naming the archive and the folder. */
static int write_failed(struct cctl_ctx *ctx, const struct cctl__unpack *u,
			const char *file, int code)
{
	int err = ctx ? ctx->oserr : 0;
	char why[256];
	snprintf(why, sizeof(why), "%s", err ? strerror(err) : cctl__msg(ctx));
	cctl__os_error(ctx, code, err,
		       "cannot unpack '%s' in '%s': %s; nothing was installed",
		       file, u->parent, why);
	cctl__hint(ctx, "free some space or choose another root with --root");
	return code;
}

/* The entry's blocks, written, hashed and counted into *size; *wrote is
 * set when a write failed (not a read).  Only the scan's own thread runs
 * the test hooks (hooks): the workers' calls would come in no set order. */
static int write_blocks(struct cctl_ctx *ctx, struct cctl__aw *aw,
			struct cctl__ar *ar, const char *path, int hooks,
			struct cctl_buf *keep, char sha256[65], uint64_t *size,
			int *wrote)
{
	struct cctl_sha256 *h = cctl_sha256_new();
	const void *block;
	size_t n;
	int64_t off;
	int ret = 0, r;
	while (!(r = cctl__ar_block(ctx, ar, &block, &n, &off))) {
		if ((ret = hooks ? cctl__interrupt(ctx) : cctl__interrupted(ctx)))
			break;
		if (keep)
			keep_block(keep, block, n, off);
		cctl_sha256_update(h, block, n);
		if ((ret = cctl__aw_data(ctx, aw, block, n, off, path))) {
			*wrote = 1;
			break;
		}
		*size += n;
	}
	cctl_sha256_final(h, sha256);
	if (r == 0)
		return ret;
	return r < 0 ? r : 0;
}

void cctl__unpack_path(const struct cctl__unpack *u, size_t idx,
		       struct cctl_buf *path)
{
	char name[32];
	snprintf(name, sizeof(name), "%zu", idx);
	cctl_buf_reset(path);
	cctl_buf_adds(path, u->dir);
	cctl_buf_addpath(path, name);
}

int cctl__unpack_write(struct cctl_ctx *ctx, const struct cctl__unpack *u,
		       struct cctl__aw *aw, struct cctl__ar *ar,
		       const char *file, const char *path, unsigned mode,
		       int hooks, struct cctl_buf *keep, char sha256[65],
		       uint64_t *size)
{
	int ret, wrote = 0;
	*size = 0;
	cctl_os_kill_point();
	if ((ret = cctl__aw_header(ctx, aw, ar, path, NULL,
				   (mode & 0111) ? 0755 : 0644)))
		return write_failed(ctx, u, file, ret);
	if ((ret = write_blocks(ctx, aw, ar, path, hooks, keep, sha256, size,
				&wrote)))
		return wrote ? write_failed(ctx, u, file, ret) : ret;
	if ((ret = cctl__aw_finish(ctx, aw, path)))
		return write_failed(ctx, u, file, ret);
	return 0;
}

int cctl__unpack_reserve(struct cctl__unpack *u, uint64_t size)
{
	if (u->abandoned || u->written > u->limit || size > u->limit - u->written)
		return 0;
	u->written += size;
	return 1;
}

int cctl__unpack_file(struct cctl_ctx *ctx, struct cctl__unpack *u,
		      struct cctl__ar *ar, struct cctl_archive *a, size_t idx,
		      struct cctl_buf *keep, int *taken)
{
	struct cctl_entry *e = &a->v[idx];
	uint64_t size = 0;
	int ret;

	*taken = 0;
	if (u->abandoned)
		return 0;
	if (!cctl__unpack_reserve(u, e->size)) {
		cctl__unpack_give_up(u);
		return 0;
	}
	*taken = 1;
	cctl__unpack_path(u, idx, &u->path);
	if (u->res) /* (a file left by the try before is made anew) */
		cctl_os_unlink(NULL, u->path.buf);
	if ((ret = cctl__unpack_write(ctx, u, u->aw, ar, a->file, u->path.buf,
				      e->mode, 1, keep, e->sha256, &size)))
		return ret;
	u->written += size - e->size;
	if (!e->size)
		e->size = size; /* a header without one, or an empty file */
	else if (size != e->size)
		return cctl__refuse(ctx, a->file, e->name,
				    "holds another number of bytes than its "
				    "header says");
	return 0;
}

void cctl__unpack_end(struct cctl__unpack *u, struct cctl_archive *a)
{
	if (!u)
		return;
	cctl__aw_free(u->aw);
	if (a)
		cctl__resume_kept(u->res, &a->kept_files, &a->kept_bytes);
	cctl__resume_close(u->res);
	if (a && !u->abandoned) {
		a->unpacked = u->dir;
		a->unpacked_size = u->written;
		u->dir = NULL;
	} else if (!u->abandoned && !u->res) {
		/* (a resume's folder stays until its .part goes: acquire.c) */
		cctl_os_rmtree(NULL, u->dir);
	}
	free(u->dir);
	free(u->parent);
	cctl_buf_release(&u->path);
	free(u);
}

/* The file unpacked as entry idx moved to path (its folder made when the
 * archive names none: a folder that is there already is left alone, so
 * that each file is one change to the disk). */
static int move_file(struct cctl_ctx *ctx, const struct cctl_archive *a,
		     size_t idx, struct cctl_buf *from, const char *path)
{
	char name[32];
	int ret;
	if ((ret = cctl__make_parent(ctx, path)))
		return ret;
	snprintf(name, sizeof(name), "%zu", idx);
	cctl_buf_reset(from);
	cctl_buf_adds(from, a->unpacked);
	cctl_buf_addpath(from, name);
	return cctl_os_rename(ctx, from->buf, path);
}

/* Which of the three passes places e: folders, files, links. */
static int pass_of(const struct cctl_entry *e)
{
	return e->type == CCTL_ENTRY_DIR ? 0 : e->type == CCTL_ENTRY_FILE ? 1 : 2;
}

/* A folder or a link, made as the archive describes it. */
static int make_entry(struct cctl_ctx *ctx, struct cctl__aw *aw,
		      const struct cctl_entry *e, const char *path,
		      const char *link, int perm)
{
	struct cctl__amake m;
	m.kind = e->type == CCTL_ENTRY_DIR	   ? CCTL__AK_DIR
		 : e->type == CCTL_ENTRY_SYMLINK ? CCTL__AK_SYMLINK
						 : CCTL__AK_FILE;
	m.path = path;
	m.target = e->type == CCTL_ENTRY_HARDLINK ? link : e->link;
	m.perm = perm >= 0 ? perm : (int)(e->mode & 07777);
	m.mtime = e->mtime;
	m.mtime_nsec = e->mtime_nsec;
	return cctl__aw_make(ctx, aw, &m);
}

int cctl__unpack_place(struct cctl_ctx *ctx, struct cctl_archive *a,
		       const char *dest)
{
	struct cctl_buf path = CCTL_BUF_INIT, link = CCTL_BUF_INIT;
	struct cctl_buf from = CCTL_BUF_INIT;
	struct cctl__aw *aw = cctl__aw_new();
	int ret = 0;

	cctl__progress(ctx, CCTL_PHASE_EXTRACT, 0, a->total_size);
	for (int pass = 0; pass < 3 && !ret; pass++)
		for (size_t i = 0; i < a->n && !ret; i++) {
			const struct cctl_entry *e = &a->v[i];
			int perm;
			if (!*e->path || pass_of(e) != pass)
				continue; /* (the dropped top folder itself) */
			if ((ret = cctl__interrupt(ctx)))
				break;
			perm = cctl__entry_place(e, dest, &path, &link);
			if (pass != 1) /* (a rename is a kill point itself) */
				cctl_os_kill_point();
			ret = pass == 1 ? move_file(ctx, a, i, &from, path.buf)
					: make_entry(ctx, aw, e, path.buf, link.buf,
						     perm);
		}
	/* last: it sets the folders' times */
	cctl__aw_free(aw);
	cctl_buf_release(&path);
	cctl_buf_release(&link);
	cctl_buf_release(&from);
	if (ret)
		return ret;
	/* what was placed is what the scan wrote as it hashed the file */
	memcpy(a->extract_sha256, a->scan_sha256, sizeof(a->scan_sha256));
	cctl__progress(ctx, CCTL_PHASE_EXTRACT, a->total_size, a->total_size);
	return 0;
}

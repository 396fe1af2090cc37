/*
 * Install by version: which release a prefix means (the manifests
 * updated once from the mirror when nothing known matches), its archive
 * into the cache, the install, and one more fetch when the cached copy
 * turns out wrong.  The CLI's install VERSION, download VERSION and list
 * --available call these; fetch.c, mirror.c and release.c do the parts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "feed.h"
#include "fetch.h"
#include "internal.h"

/* Nothing known matches: what `manifests update` does, once.  Returns 1
 * when it added manifests; why, when it could not read them, stays in
 * *failed (failed->code 0 otherwise). */
static int update_once(struct cctl_ctx *ctx, const struct cctl__source *src,
		       const struct cctl_fetch_opts *o, struct cctl_manifest *m,
		       struct cctl_ctx *failed)
{
	size_t added = 0, refused = 0;
	cctl_ctx_init(failed);
	if (ctx) {
		failed->on_warning = ctx->on_warning;
		failed->ud = ctx->ud;
		failed->verbose = ctx->verbose;
	}
	if (o && o->offline)
		return 0;
	/* a failure is named by the error that follows (unread_mirror) */
	if (!cctl__manifests_update_from(failed, src, o, m, &added, &refused) &&
	    added)
		cctl__notice(ctx, CCTL_NOTICE_MANIFESTS,
			     "fetched %zu new manifest%s from %s", added,
			     added == 1 ? "" : "s", src->name);
	return added ? 1 : 0;
}

/* No release matched, and the mirror's manifests, which could hold it,
 * were not read: that is the cause to name, with its ways out (not
 * "manifests update", which fails the same way). */
static int unread_mirror(struct cctl_ctx *ctx, const struct cctl__source *src,
			 const struct cctl_ctx *failed, const char *version)
{
	const char *mirror = src->name;
	char known[1024];
	snprintf(known, sizeof(known), "%.1000s", cctl__msg(ctx));
	if (failed->code == CCTL_EMANIFEST && src->kind == CCTL__SRC_HTTP) {
		cctl__error(ctx, CCTL_ENORELEASE,
			    "%s; the mirror '%.700s' may have it, but its "
			    "manifests were not read: they are taken only over "
			    "HTTPS or from a folder, not plain HTTP",
			    known, mirror);
		cctl__hint(ctx, "use the mirror over https://, or as a folder "
				"(--mirror DIR), or pass the manifest of cuDNN %.64s "
				"(--manifest redistrib_X.Y.Z.json, from NVIDIA or the "
				"mirror's admin): its archives may then come over "
				"plain HTTP",
			   version);
	} else {
		cctl__error(ctx, CCTL_ENORELEASE,
			    "%s; the mirror's manifests, which may have it, "
			    "could not be read: %.900s",
			    known, failed->msg);
		cctl__hint(ctx, "%s",
			   *failed->hint ? failed->hint
					 : "pass the release's manifest with "
					   "--manifest redistrib_X.Y.Z.json, or use "
					   "another mirror (--mirror URL|DIR)");
	}
	return CCTL_ENORELEASE;
}

/* cctl_release_find from the source the operation chose. */
static int find_from(struct cctl_ctx *ctx, const struct cctl__source *src,
		     const struct cctl_fetch_opts *o, struct cctl_manifest *m,
		     const char *version, const char *platform, int cuda,
		     const struct cctl_release **r)
{
	struct cctl_cuda_env env;
	struct cctl_ctx failed;
	char why[768];
	int ret;

	memset(&env, 0, sizeof(env));
	/* what this machine has says nothing about another platform */
	if (!strcmp(platform, cctl_host_platform()))
		cctl_cuda_env_probe(&env);
	ret = cctl_release_choose(ctx, m, version, platform, cuda, &env, r, why,
				  sizeof(why));
	if (ret == CCTL_ENORELEASE) {
		if (update_once(ctx, src, o, m, &failed))
			ret = cctl_release_choose(ctx, m, version, platform, cuda,
						  &env, r, why, sizeof(why));
		else if (failed.code)
			ret = unread_mirror(ctx, src, &failed, version);
	}
	if (ret)
		return ret;
	cctl__notice(ctx, CCTL_NOTICE_RELEASE, "cuDNN %s for CUDA %d (%s): %s",
		     (*r)->version, (*r)->cuda, (*r)->platform, why);
	return 0;
}

int cctl_release_find(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		      struct cctl_manifest *m, const char *version,
		      const char *platform, int cuda,
		      const struct cctl_release **r)
{
	struct cctl__source src;
	int ret;
	cctl__source_open(&src, o);
	ret = find_from(ctx, &src, o, m, version, platform, cuda, r);
	cctl__source_close(&src);
	return ret;
}

/* ------------------------------------------- extraction as it arrives */

/* The end of a zip fetched first: its central directory (a few KB for
 * cuDNN's, which have about a hundred entries) and its end record. */
#define ZIP_TAIL (1u << 20)
#define XZ_TAIL (64u << 10) /* an index of thousands of blocks, and the footer */

/* The scan of an archive as it downloads, on a thread of its own: its
 * own context, whose warnings wait for the command's thread. */
struct streamed {
	struct cctl_ctx ctx;
	struct cctl_buf warnings;
	struct cctl_root *root;
	const struct cctl_manifest *m;
	struct cctl_install_opts io;
	struct cctl__feed *feed;
	struct cctl_install_job job;
	struct cctl_install_result res;
	int ret;
};

static void streamed_warning(void *ud, const char *msg)
{
	struct streamed *s = ud;
	cctl_buf_addf(&s->warnings, "%s\n", msg);
}

static void streamed_main(void *arg)
{
	struct streamed *s = arg;
	s->ret = cctl__install_identify_fed(&s->ctx, s->root, s->m, &s->io,
					    s->feed, &s->job, &s->res);
	/* the fetch waits for the scan's hash of the archive: if it has
	 * none by now, none comes (the fetch then hashes the file) */
	cctl__feed_digest(s->feed, NULL);
}

/* Passes the scan's warnings, and its failure, to the command's ctx. */
static int streamed_say(struct cctl_ctx *ctx, struct streamed *s)
{
	char *line = s->warnings.buf, *nl;
	for (; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = 0;
		cctl__warn(ctx, "%s", line);
	}
	cctl_buf_release(&s->warnings);
	if (!s->ret)
		return 0;
	cctl__error(ctx, s->ret, "%s", s->ctx.msg);
	if (s->ctx.hint[0])
		cctl__hint(ctx, "%s", s->ctx.hint);
	return s->ret;
}

/* Whether the archive is read as it downloads, each of its files written
 * as the scan reads it: yes (a zip too since its members are unpacked as
 * they arrive: docs/benchmarks-download.md), except with
 * CUDNNCTL_STREAM=0, when the archive is in the cache already (or
 * --offline), or without threads.  *path is where the fetch puts it. */
static struct cctl__feed *stream_feed(const struct cctl_fetch_opts *o,
				      const struct cctl_release *r, char **path)
{
	const char *env = cctl_os_getenv("CUDNNCTL_STREAM");
	struct cctl_os_stat st;
	char *cache = NULL;
	*path = NULL;
	if ((env && !strcmp(env, "0")) || (o && o->offline) ||
	    cctl_fetch_cache_dir(NULL, o, &cache))
		return NULL;
	*path = cctl_path_join(cache, "archives", r->file_name, NULL);
	free(cache);
	if (cctl_os_stat(NULL, *path, &st) || st.type != CCTL_OS_NONE)
		return NULL;
	return cctl__feed_new(r->size);
}

/* The members a try before had unpacked from the same download, which
 * this one took instead of inflating them again (archive-resume.c). */
static void say_kept(struct cctl_ctx *ctx, const struct cctl_archive *a,
		     int ret)
{
	char size[32];
	if (ret || !a->kept_files)
		return;
	cctl_format_size(size, sizeof(size), a->kept_bytes);
	cctl__notice(ctx, CCTL_NOTICE_RESUME,
		     "resumed: %llu file%s (%s) unpacked before the download "
		     "stopped were kept",
		     (unsigned long long)a->kept_files,
		     a->kept_files == 1 ? "" : "s", size);
}

/* The folder of what was unpacked goes with the .part (verified and
 * renamed, refused, interrupted, or started again); one whose .part stays
 * is the next try's. */
static void drop_kept(const struct cctl_root *root, const char *part)
{
	struct cctl_os_stat st;
	char *vdir;
	if (!cctl_os_stat(NULL, part, &st) && st.type == CCTL_OS_FILE)
		return;
	vdir = cctl_path_join(root->path, "versions", NULL);
	cctl__resume_drop(vdir, part);
	free(vdir);
}

/*
 * The fetch on this thread, the scan (and the files of a tar.xz unpacked
 * as it goes) on another, reading each byte once it is on the disk.  The
 * rest of the install (check, extraction into staging, rename into place)
 * starts only once the download is whole and verified; a failed
 * or stopped download, or a scan that refuses the archive, leaves only
 * what a failed download leaves.  *handled 0: not streamed.
 */
static int install_streamed(struct cctl_ctx *ctx, struct cctl_root *root,
			    const struct cctl_manifest *m,
			    const struct cctl__source *src,
			    const struct cctl_fetch_opts *o,
			    const struct cctl_release *r,
			    struct cctl_install_opts *io,
			    struct cctl_fetch_result *f,
			    struct cctl_install_result *res, int *handled)
{
	struct streamed *s;
	struct cctl_os_thread *t;
	char *path, *part;
	int ret;

	*handled = 0;
	s = cctl_xcalloc(1, sizeof(*s));
	if (!(s->feed = stream_feed(o, r, &path))) {
		free(path);
		free(s);
		return 0;
	}
	cctl_ctx_init(&s->ctx);
	s->ctx.on_warning = streamed_warning;
	s->ctx.ud = s;
	cctl_buf_init(&s->warnings);
	s->root = root;
	s->m = m;
	s->io = *io;
	s->io.archive = path;
	s->io.cuda = r->cuda;
	/* a zip is read from its central directory at the end on, and what
	 * it unpacked is kept for a resume as long as the .part is */
	part = cctl_xstrfmt("%s.part", path);
	if (cctl__ends_with(r->file_name, ".zip")) {
		cctl__feed_want_tail(s->feed, r->size / 8 < ZIP_TAIL ? r->size / 8
								  : ZIP_TAIL);
		cctl__feed_set_part(s->feed, part);
	} else if (cctl__ends_with(r->file_name, ".tar.xz")) {
		/* its index at the end first: its blocks then decode on threads
		 * of ours as they arrive (archive-read.c, xz_blocks) */
		cctl__feed_want_tail(s->feed, r->size / 8 < XZ_TAIL ? r->size / 8
								 : XZ_TAIL);
	}
	/* the scan hashes the archive as it reads it: the fetch does not */
	cctl__feed_reader_hashes(s->feed);
	if (!(t = cctl_os_thread_start(streamed_main, s))) {
		cctl__feed_free(s->feed);
		free(part);
		free(path);
		free(s);
		return 0;
	}
	*handled = 1;
	ret = cctl__fetch_from(ctx, src, o, r, 0, f, s->feed);
	if (!ret && f->cached) { /* another cudnnctl fetched it meanwhile */
		cctl__feed_keep(s->feed, f->path, 0);
		cctl__feed_span(s->feed, 0, f->path, r->size);
	}
	cctl__feed_end(s->feed, ret);
	cctl_os_thread_join(t);
	io->archive = f->path;
	io->cuda = r->cuda;
	if (!ret && cctl__feed_restarted(s->feed)) {
		/* the scan was given bytes the download then fetched again,
		 * which need not be the ones verified: all it made goes, and
		 * the verified file is installed as a cached one is */
		cctl__install_finish(ctx, root, &s->job, &s->res, CCTL_EMISMATCH);
		cctl_install_result_release(&s->res);
		ret = cctl_install_archive(ctx, root, m, io, res);
	} else {
		/* what the scan said counts only when the fetch succeeded (a
		 * failed fetch is what stopped it): its warnings, then its
		 * error */
		if (!ret && !(ret = streamed_say(ctx, s)))
			ret = cctl__install_refile(ctx, &s->job);
		say_kept(ctx, &s->job.a, ret);
		*res = s->res;
		ret = cctl__install_finish(ctx, root, &s->job, res, ret);
	}
	drop_kept(root, part);
	cctl_buf_release(&s->warnings);
	cctl__feed_free(s->feed);
	free(part);
	free(path);
	free(s);
	return ret;
}

int cctl_install_version(struct cctl_ctx *ctx, struct cctl_root *root,
			 struct cctl_manifest *m,
			 const struct cctl_fetch_opts *o, const char *version,
			 struct cctl_install_opts *io,
			 const struct cctl_release **r,
			 struct cctl_fetch_result *f,
			 struct cctl_install_result *res)
{
	struct cctl__source src; /* chosen once: every part reads this one */
	int ret, handled;
	*r = NULL;
	cctl__source_open(&src, o);
	if ((ret = find_from(ctx, &src, o, m, version, cctl_host_platform(),
			     io->cuda, r)))
		goto out;
	ret = install_streamed(ctx, root, m, &src, o, *r, io, f, res, &handled);
	if (handled)
		goto out;
	if ((ret = cctl__fetch_from(ctx, &src, o, *r, 0, f, NULL)))
		goto out;
	io->archive = f->path;
	io->cuda = (*r)->cuda;
	ret = cctl_install_archive(ctx, root, m, io, res);
	if (ret == CCTL_EMISMATCH && f->cached) {
		/* checked by size only: hashed now, and wrong; once more from
		 * the mirror, hashed as it arrives */
		cctl_install_result_release(res);
		cctl__warn(ctx, "%s", cctl__msg(ctx));
		cctl_fetch_result_release(f);
		if (!(ret = cctl__fetch_from(ctx, &src, o, *r, 1, f, NULL))) {
			io->archive = f->path;
			ret = cctl_install_archive(ctx, root, m, io, res);
		}
	}
out:
	cctl__source_close(&src);
	return ret;
}

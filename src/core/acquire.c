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

#include "fetch.h"
#include "internal.h"

/* Nothing known matches: what `manifests update` does, once.  Returns 1
 * when it added manifests; why, when it could not read them, stays in
 * *failed (failed->code 0 otherwise). */
static int update_once(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		       struct cctl_manifest *m, struct cctl_ctx *failed)
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
	if (!cctl_manifests_update(failed, o, m, &added, &refused) && added)
		cctl__notice(ctx, CCTL_NOTICE_MANIFESTS,
			     "fetched %zu new manifest%s from %s", added,
			     added == 1 ? "" : "s", cctl_fetch_mirror(o));
	return added ? 1 : 0;
}

/* No release matched, and the mirror's manifests, which could hold it,
 * were not read: that is the cause to name, with its ways out (not
 * "manifests update", which fails the same way). */
static int unread_mirror(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
			 const struct cctl_ctx *failed, const char *version)
{
	const char *mirror = cctl_fetch_mirror(o);
	char known[1024];
	snprintf(known, sizeof(known), "%.1000s", cctl__msg(ctx));
	if (failed->code == CCTL_EMANIFEST && !strncmp(mirror, "http://", 7)) {
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

int cctl_release_find(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		      struct cctl_manifest *m, const char *version,
		      const char *platform, int cuda,
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
		if (update_once(ctx, o, m, &failed))
			ret = cctl_release_choose(ctx, m, version, platform, cuda,
						  &env, r, why, sizeof(why));
		else if (failed.code)
			ret = unread_mirror(ctx, o, &failed, version);
	}
	if (ret)
		return ret;
	cctl__notice(ctx, CCTL_NOTICE_RELEASE, "cuDNN %s for CUDA %d (%s): %s",
		     (*r)->version, (*r)->cuda, (*r)->platform, why);
	return 0;
}

int cctl_install_version(struct cctl_ctx *ctx, struct cctl_root *root,
			 struct cctl_manifest *m,
			 const struct cctl_fetch_opts *o, const char *version,
			 struct cctl_install_opts *io,
			 const struct cctl_release **r,
			 struct cctl_fetch_result *f,
			 struct cctl_install_result *res)
{
	int ret;
	*r = NULL;
	if ((ret = cctl_release_find(ctx, o, m, version, cctl_host_platform(),
				     io->cuda, r)) ||
	    (ret = cctl_fetch_archive(ctx, o, *r, 0, f)))
		return ret;
	io->archive = f->path;
	io->cuda = (*r)->cuda;
	ret = cctl_install_archive(ctx, root, m, io, res);
	if (ret == CCTL_EMISMATCH && f->cached) {
		/* checked by size only: hashed now, and wrong; once more from
		 * the mirror, hashed as it arrives */
		cctl_install_result_release(res);
		cctl__warn(ctx, "%s", cctl__msg(ctx));
		cctl_fetch_result_release(f);
		if (!(ret = cctl_fetch_archive(ctx, o, *r, 1, f))) {
			io->archive = f->path;
			ret = cctl_install_archive(ctx, root, m, io, res);
		}
	}
	return ret;
}

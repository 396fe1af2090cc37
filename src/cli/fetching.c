/* What install VERSION, download and list --available share: the fetch
 * options, the manifests, and choosing the release. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A version or prefix: digits and dots, starting with a digit. */
int check_version_arg(struct cli *cli, struct cli_args *a)
{
	const char *v = a->pos[0];
	if (!v || *v < '0' || *v > '9' || v[strspn(v, "0123456789.")])
		return cli_usage_error(cli, "'%s' is not a cuDNN version (9, "
					    "9.1, 9.1.0.70)",
				       v ? v : "");
	if (a->platform && !cctl_platform_find(a->platform))
		return cli_usage_error(cli, "unknown platform '%s'", a->platform);
	return 0;
}

int check_manifests(struct cli *cli, struct cli_args *a)
{
	if (strcmp(a->pos[0], "update"))
		return cli_usage_error(cli, "unknown 'manifests' action '%s'",
				       a->pos[0]);
	return 0;
}

int check_cache(struct cli *cli, struct cli_args *a)
{
	if (strcmp(a->pos[0], "list") && strcmp(a->pos[0], "clean"))
		return cli_usage_error(cli, "unknown 'cache' action '%s'",
				       a->pos[0]);
	return 0;
}

void cli_fetch_opts(const struct cli_args *a, struct cctl_fetch_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mirror = a->mirror;
	o->cache = a->cache;
	o->offline = a->offline;
}

int cli_load_manifests(struct cli *cli, const struct cli_args *a,
		       const struct cctl_fetch_opts *o, struct cctl_manifest *m)
{
	int ret;
	if ((ret = cctl_manifest_load_builtin(&cli->ctx, m)) ||
	    (ret = cctl_manifest_load_cached(&cli->ctx, o, m)))
		return ret;
	for (int i = 0; i < a->manifests.n; i++) {
		const char *f = a->manifests.v[i];
		if ((ret = !strncmp(f, "https://", 8) || !strncmp(f, "http://", 7)
				   ? cctl_manifest_load_url(&cli->ctx, o, m, f)
				   : cctl_manifest_load_file(&cli->ctx, m, f)))
			return ret;
	}
	return 0;
}

/* Nothing known matches: what `manifests update` does, once.  Returns 1
 * when it added manifests; why, when it could not read them, stays in
 * *failed (failed->code 0 otherwise). */
static int update_once(struct cli *cli, const struct cctl_fetch_opts *o,
		       struct cctl_manifest *m, struct cctl_ctx *failed)
{
	size_t added = 0, refused = 0;
	int ret;
	cctl_ctx_init(failed);
	failed->on_warning = cli->ctx.on_warning;
	failed->ud = cli->ctx.ud;
	failed->verbose = cli->ctx.verbose;
	if (o->offline)
		return 0;
	/* a failure is named by the error that follows (unread_mirror) */
	ret = cctl_manifests_update(failed, o, m, &added, &refused);
	if (!ret && added)
		fprintf(stderr, "cudnnctl: note: fetched %zu new manifest%s "
				"from %s\n",
			added, added == 1 ? "" : "s", cctl_fetch_mirror(o));
	return added ? 1 : 0;
}

/* No release matched, and the mirror's manifests, which could hold it,
 * were not read: that is the cause to name, with its ways out (not
 * "manifests update", which fails the same way). */
static int unread_mirror(struct cli *cli, const struct cctl_fetch_opts *o,
			 const struct cctl_ctx *failed, const char *version)
{
	const char *mirror = cctl_fetch_mirror(o);
	char known[1024];
	snprintf(known, sizeof(known), "%.1000s", cli->ctx.msg);
	cli->ctx.code = CCTL_ENORELEASE;
	cli->ctx.oserr = 0;
	if (failed->code == CCTL_EMANIFEST && !strncmp(mirror, "http://", 7)) {
		snprintf(cli->ctx.msg, sizeof(cli->ctx.msg),
			 "%s; the mirror '%.700s' may have it, but its "
			 "manifests were not read: they are taken only over "
			 "HTTPS or from a folder, not plain HTTP",
			 known, mirror);
		snprintf(cli->ctx.hint, sizeof(cli->ctx.hint),
			 "use the mirror over https://, or as a folder "
			 "(--mirror DIR), or pass the manifest of cuDNN %.64s "
			 "(--manifest redistrib_X.Y.Z.json, from NVIDIA or the "
			 "mirror's admin): its archives may then come over "
			 "plain HTTP",
			 version);
	} else {
		snprintf(cli->ctx.msg, sizeof(cli->ctx.msg),
			 "%s; the mirror's manifests, which may have it, "
			 "could not be read: %.900s",
			 known, failed->msg);
		snprintf(cli->ctx.hint, sizeof(cli->ctx.hint), "%s",
			 *failed->hint ? failed->hint
				       : "pass the release's manifest with "
					 "--manifest redistrib_X.Y.Z.json, or use "
					 "another mirror (--mirror URL|DIR)");
	}
	return CCTL_ENORELEASE;
}

int cli_choose_release(struct cli *cli, const struct cli_args *a,
		       const struct cctl_fetch_opts *o, struct cctl_manifest *m,
		       const char *version, const char *platform,
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
	ret = cctl_release_choose(&cli->ctx, m, version, platform, a->cuda,
				  &env, r, why, sizeof(why));
	if (ret == CCTL_ENORELEASE) {
		if (update_once(cli, o, m, &failed))
			ret = cctl_release_choose(&cli->ctx, m, version, platform,
						  a->cuda, &env, r, why,
						  sizeof(why));
		else if (failed.code)
			ret = unread_mirror(cli, o, &failed, version);
	}
	if (ret)
		return ret;
	if (!a->quiet)
		fprintf(stderr, "cudnnctl: cuDNN %s for CUDA %d (%s): %s\n",
			(*r)->version, (*r)->cuda, (*r)->platform, why);
	return 0;
}

void cli_fetch_json(struct cctl_buf *b, const struct cctl_release *r,
		    const char *url, const struct cctl_fetch_result *f)
{
	json_kstr(b, "name", r->file_name);
	json_kstr(b, "version", r->version);
	json_kint(b, "cuda", r->cuda);
	json_kstr(b, "platform", r->platform);
	json_kint(b, "size", (long long)r->size);
	json_kstr(b, "sha256", r->sha256);
	json_kstr(b, "manifest", r->source);
	json_kstr(b, "url", url);
	if (!f)
		return;
	json_kstr(b, "path", f->path);
	json_kbool(b, "cached", f->cached);
	json_kint(b, "downloaded", (long long)f->downloaded);
	json_kint(b, "resumed_at", (long long)f->resumed_at);
	json_kint(b, "requests", f->attempts);
}

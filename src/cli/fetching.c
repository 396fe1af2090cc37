/* What install VERSION, download and list --available share: the fetch
 * options, the manifests, and choosing the release. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A version or prefix: digits and dots, starting with a digit. */
int check_download(struct cli *cli, struct cli_args *a)
{
	int ret;
	if ((ret = cli_pinned_arg(cli, a, "download")))
		return ret;
	return check_version_arg(cli, a);
}

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
	o->connections = a->connections;
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

int cli_choose_release(struct cli *cli, const struct cli_args *a,
		       const struct cctl_fetch_opts *o, struct cctl_manifest *m,
		       const char *version, const char *platform,
		       const struct cctl_release **r)
{
	return cctl_release_find(&cli->ctx, o, m, version, platform, a->cuda, r);
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

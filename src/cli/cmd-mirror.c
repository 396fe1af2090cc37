/*
 * cudnnctl mirror sync DIR: a site's mirror in NVIDIA's layout
 * (src/core/sync.c), reported a line per file, or as one JSON document
 * with --json (what a cron job keeps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int check_mirror(struct cli *cli, struct cli_args *a)
{
	if (strcmp(a->pos[0], "sync"))
		return cli_usage_error(cli, "unknown 'mirror' action '%s'",
				       a->pos[0]);
	for (int i = 0; i < a->cudas.n; i++) {
		char *end;
		long v = strtol(a->cudas.v[i], &end, 10);
		if (*end || v < 1 || v > 99)
			return cli_usage_error(cli, "--cuda needs a CUDA major "
						    "(11, 12, 13), not '%s'",
					       a->cudas.v[i]);
	}
	return 0;
}

static void report_json(struct cli *cli, const struct cctl_sync_opts *so,
			const struct cctl_fetch_opts *fo,
			const struct cctl_sync_result *res)
{
	struct cctl_buf *b = cli_result(cli);
	json_kstr(b, "dir", so->dir);
	json_kstr(b, "from", cctl_fetch_mirror(fo));
	json_kbool(b, "dry_run", so->dry_run);
	json_kint(b, "failed", (long long)res->failed);
	json_kint(b, "downloaded", (long long)res->fetched_bytes);
	json_karr(b, "files");
	for (size_t i = 0; i < res->n; i++) {
		const struct cctl_sync_item *it = &res->v[i];
		json_obj(b);
		json_kstr(b, "name", it->name);
		json_kstr(b, "state", it->state);
		json_kint(b, "size", (long long)it->size);
		if (it->msg)
			json_kstr(b, "error", it->msg);
		json_end(b, '}');
	}
	json_end(b, ']');
}

int cmd_mirror(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_sync_opts so;
	struct cctl_sync_result res;
	struct cctl_fetch_opts fo;
	int cudas[32];
	int ret;

	(void)root;
	memset(&so, 0, sizeof(so));
	cli_fetch_opts(a, &fo);
	if (a->from)
		fo.mirror = a->from;
	so.dir = a->pos[1];
	so.versions = a->versions.v;
	so.nversions = (size_t)a->versions.n;
	so.platforms = a->platforms.v;
	so.nplatforms = (size_t)a->platforms.n;
	for (int i = 0; i < a->cudas.n; i++)
		cudas[i] = atoi(a->cudas.v[i]);
	so.cudas = cudas;
	so.ncudas = (size_t)a->cudas.n;
	so.manifests = a->manifests.v;
	so.nmanifests = (size_t)a->manifests.n;
	so.prune = a->prune;
	so.dry_run = a->dry_run;
	ret = cctl_mirror_sync(&cli->ctx, &fo, &so, &res);
	cli_progress_done(cli);
	if (cli->json) {
		/* a cron job keeps the report of every file, failed or not */
		cli->result_on_failure = 1;
		report_json(cli, &so, &fo, &res);
	} else {
		for (size_t i = 0; i < res.n; i++)
			printf("%-11s %s\n", res.v[i].state, res.v[i].name);
		if (!ret)
			printf("%s: %zu file%s in step with %s\n", so.dir, res.n,
			       res.n == 1 ? "" : "s", cctl_fetch_mirror(&fo));
	}
	cctl_sync_result_release(&res);
	return ret ? cli_fail(cli, ret) : 0;
}

/* cudnnctl install ARCHIVE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_result(const struct cctl_root *root,
			 const struct cctl_install_result *res)
{
	char *dir = cctl_path_join(root->path, "versions", res->rec.id, NULL);
	if (res->already) {
		printf("cuDNN %s is already installed in %s; nothing changed\n",
		       res->rec.id, dir);
	} else {
		char size[32];
		cctl_format_size(size, sizeof(size), res->rec.size);
		printf("installed cuDNN %s for CUDA %d (%s) into %s\n",
		       res->rec.version, res->rec.cuda,
		       res->rec.verified ? "sha256 verified" : "UNVERIFIED", dir);
		printf("  %zu files, %s", res->rec.nfiles, size);
		if (res->rec.verified)
			printf(", matched %s", res->rec.manifest);
		printf("\n");
		if (res->activated) {
			char *apply = cctl_env_command(root);
			printf("active: %s%s%s (new shells; this one: %s)\n",
			       res->previous ? res->previous : "",
			       res->previous ? " -> " : "", res->rec.id, apply);
			free(apply);
		} else {
			printf("active: %s (unchanged; cudnnctl switch %s to "
			       "use the new one)\n",
			       res->previous, res->rec.version);
		}
	}
	free(dir);
}

static void json_result(struct cctl_buf *b, const struct cctl_root *root,
			const char *archive,
			const struct cctl_install_result *res)
{
	char *path = cctl_path_join(root->path, "versions", res->rec.id, NULL);
	json_kstr(b, "id", res->rec.id);
	json_kstr(b, "version", res->rec.version);
	json_kint(b, "cuda", res->rec.cuda);
	json_kstr(b, "platform", res->rec.platform);
	json_kbool(b, "verified", res->rec.verified);
	json_kstr(b, "manifest", res->rec.manifest);
	json_kstr(b, "archive", archive);
	json_kstr(b, "sha256", res->rec.archive_sha256);
	json_kstr(b, "root", root->path);
	json_kstr(b, "path", path);
	json_kbool(b, "already_installed", res->already);
	json_kint(b, "files", (long long)res->rec.nfiles);
	json_kint(b, "size", (long long)res->rec.size);
	json_kbool(b, "activated", res->activated);
	json_kstr(b, "previous", res->previous);
	free(path);
}

int cmd_install(struct cli *cli, const struct cli_args *a,
		struct cctl_root *root)
{
	struct cctl_manifest m = { 0 };
	struct cctl_install_opts o;
	struct cctl_install_result res;
	int ret;

	memset(&res, 0, sizeof(res));
	if ((ret = cctl_manifest_load_builtin(&cli->ctx, &m)))
		goto out;
	for (int i = 0; i < a->manifests.n; i++)
		if ((ret = cctl_manifest_load_file(&cli->ctx, &m,
						   a->manifests.v[i])))
			goto out;
	memset(&o, 0, sizeof(o));
	o.archive = a->pos[0];
	o.allow_unknown = a->allow_unknown;
	o.cuda = a->cuda;
	o.no_activate = a->no_activate;
	o.act_flags = a->act_flags;
	if ((ret = cctl_install_archive(&cli->ctx, root, &m, &o, &res)))
		goto out;
	cli_progress_done(cli);
	/* then verify (CLI_VERIFY_AFTER) checks this version */
	cli->verify_version = cctl_xstrdup(res.rec.id);
	if (cli->json)
		json_result(cli_result(cli), root, a->pos[0], &res);
	else
		print_result(root, &res);
out:
	cctl_install_result_release(&res);
	cctl_manifest_release(&m);
	return ret ? cli_fail(cli, ret) : 0;
}

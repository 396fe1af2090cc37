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

int cmd_install(int argc, char **argv, struct cli *cli)
{
	struct cli_list manifests = { { 0 }, 0 };
	int allow_unknown = 0, cuda = 0, no_activate = 0, system = 0;
	int no_verify = 0, no_gpu = 0;
	const char *scope = NULL;
	unsigned act_flags = 0;
	const struct cli_opt opts[] = {
		{ "--manifest", OPT_LIST, &manifests },
		{ "--allow-unknown", OPT_FLAG, &allow_unknown },
		{ "--cuda", OPT_INT, &cuda },
		{ "--no-activate", OPT_FLAG, &no_activate },
		{ "--system", OPT_FLAG, &system },
		{ "--scope", OPT_STR, &scope },
		{ "--no-verify", OPT_FLAG, &no_verify },
		{ "--no-gpu", OPT_FLAG, &no_gpu },
		{ NULL, OPT_FLAG, NULL },
	};
	const char *pos[1];
	struct cctl_manifest m = { 0 };
	struct cctl_root root = { 0 };
	struct cctl_install_opts o;
	struct cctl_install_result res;
	struct cctl_buf verify_json = CCTL_BUF_INIT;
	int npos, done, status = 0, ret;

	memset(&res, 0, sizeof(res));
	cli->usage = "cudnnctl install ARCHIVE [--root DIR] [--manifest FILE]... "
		     "[--allow-unknown] [--cuda N] [--no-activate] "
		     "[--system | --scope user|machine] "
		     "[--no-verify] [--no-gpu] [--json]";
	if ((status = cli_parse(cli, argc, argv, opts, pos, 1, 1, &npos, &done)) ||
	    done)
		return status;
	if (cli->quiet || cli->json)
		cli->progress = 0;
	if ((status = cli_parse_scope(cli, scope, system, &act_flags)))
		return status;

	if ((ret = cctl_manifest_load_builtin(&cli->ctx, &m)))
		goto fail;
	for (int i = 0; i < manifests.n; i++)
		if ((ret = cctl_manifest_load_file(&cli->ctx, &m, manifests.v[i])))
			goto fail;
	if ((ret = cli_open_root(cli, &root, 1, 1)))
		goto fail;

	memset(&o, 0, sizeof(o));
	o.archive = pos[0];
	o.allow_unknown = allow_unknown;
	o.cuda = cuda;
	o.no_activate = no_activate;
	o.act_flags = act_flags;
	if ((ret = cctl_install_archive(&cli->ctx, &root, &m, &o, &res)))
		goto fail;
	cli_progress_done(cli);
	if (!no_verify) {
		struct cctl_verify_opts vo;
		memset(&vo, 0, sizeof(vo));
		vo.version = res.rec.id;
		vo.no_gpu = no_gpu;
		if (!cli->json)
			print_result(&root, &res);
		if (!cli->json)
			printf("\n");
		status = cli_run_verify(cli, &root, &vo, NULL,
					cli->json ? &verify_json : NULL);
		if (!cli->json)
			goto done;
	}

	if (cli->json) {
		struct cctl_buf b = CCTL_BUF_INIT;
		char *path = cctl_path_join(root.path, "versions", res.rec.id,
					    NULL);
		cctl_buf_addch(&b, '{');
		json_kstr(&b, "command", "install");
		json_kbool(&b, "ok", status == 0);
		json_kstr(&b, "id", res.rec.id);
		json_kstr(&b, "version", res.rec.version);
		json_kint(&b, "cuda", res.rec.cuda);
		json_kstr(&b, "platform", res.rec.platform);
		json_kbool(&b, "verified", res.rec.verified);
		json_kstr(&b, "manifest", res.rec.manifest);
		json_kstr(&b, "archive", pos[0]);
		json_kstr(&b, "sha256", res.rec.archive_sha256);
		json_kstr(&b, "root", root.path);
		json_kstr(&b, "path", path);
		json_kbool(&b, "already_installed", res.already);
		json_kint(&b, "files", (long long)res.rec.nfiles);
		json_kint(&b, "size", (long long)res.rec.size);
		json_kbool(&b, "activated", res.activated);
		json_kstr(&b, "previous", res.previous);
		cctl_buf_adds(&b, ",\"verify\":");
		cctl_buf_adds(&b, verify_json.len ? verify_json.buf : "null");
		cctl_buf_addch(&b, '}');
		json_emit(&b);
		cctl_buf_release(&b);
		free(path);
	} else if (no_verify) {
		print_result(&root, &res);
	}
done:
	cctl_buf_release(&verify_json);
	cctl_install_result_release(&res);
	cctl_root_close(&root);
	cctl_manifest_release(&m);
	return status;
fail:
	status = cli_fail(cli, ret);
	cctl_buf_release(&verify_json);
	cctl_install_result_release(&res);
	cctl_root_discard(&root);
	cctl_manifest_release(&m);
	return status;
}

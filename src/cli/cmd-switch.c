/* cudnnctl switch VERSION [--cuda N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_switch(int argc, char **argv, struct cli *cli)
{
	int cuda = 0, system = 0, no_verify = 0, no_gpu = 0;
	const char *scope = NULL;
	unsigned act_flags = 0;
	int npos, done, status, ret;
	const struct cli_opt opts[] = {
		{ "--cuda", OPT_INT, &cuda },
		{ "--system", OPT_FLAG, &system },
		{ "--scope", OPT_STR, &scope },
		{ "--no-verify", OPT_FLAG, &no_verify },
		{ "--no-gpu", OPT_FLAG, &no_gpu },
		{ NULL, OPT_FLAG, NULL },
	};
	const char *pos[1];
	struct cctl_root root = { 0 };
	char *from = NULL, *to = NULL;
	struct cctl_buf verify_json = CCTL_BUF_INIT;

	cli->usage = "cudnnctl switch VERSION [--cuda N] [--scope user|machine] "
		     "[--no-verify] [--no-gpu] "
		     "[--root DIR] [--json]";
	if ((status = cli_parse(cli, argc, argv, opts, pos, 1, 1, &npos, &done)) ||
	    done)
		return status;
	if ((status = cli_parse_scope(cli, scope, system, &act_flags)))
		return status;
	if ((ret = cli_open_root(cli, &root, 0, 1)) ||
	    (ret = cctl_switch(&cli->ctx, &root, pos[0], cuda,
			       act_flags, &from, &to))) {
		status = cli_fail(cli, ret);
		goto out;
	}
	if (!cli->json) {
		if (from && !strcmp(from, to))
			printf("cuDNN %s is already active\n", to);
		else
			printf("switched cuDNN: %s -> %s\n", from ? from : "(none)",
			       to);
	}
	if (!no_verify) {
		struct cctl_verify_opts vo;
		memset(&vo, 0, sizeof(vo));
		vo.no_gpu = no_gpu;
		if (!cli->json)
			printf("\n");
		status = cli_run_verify(cli, &root, &vo, NULL,
					cli->json ? &verify_json : NULL);
	}
	if (cli->json) {
		struct cctl_buf b = CCTL_BUF_INIT;
		cctl_buf_addch(&b, '{');
		json_kstr(&b, "command", "switch");
		json_kbool(&b, "ok", status == 0);
		json_kstr(&b, "from", from);
		json_kstr(&b, "to", to);
		json_kbool(&b, "changed", !from || strcmp(from, to));
		cctl_buf_adds(&b, ",\"verify\":");
		cctl_buf_adds(&b, verify_json.len ? verify_json.buf : "null");
		cctl_buf_addch(&b, '}');
		json_emit(&b);
		cctl_buf_release(&b);
	}
out:
	cctl_buf_release(&verify_json);
	free(from);
	free(to);
	cctl_root_close(&root);
	return status;
}

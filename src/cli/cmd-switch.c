/* cudnnctl switch VERSION [--cuda N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_switch(int argc, char **argv, struct cli *cli)
{
	int cuda = 0, system = 0, npos, done, status, ret;
	const struct cli_opt opts[] = {
		{ "--cuda", OPT_INT, &cuda },
		{ "--system", OPT_FLAG, &system },
		{ NULL, OPT_FLAG, NULL },
	};
	const char *pos[1];
	struct cctl_root root = { 0 };
	char *from = NULL, *to = NULL;

	cli->usage = "cudnnctl switch VERSION [--cuda N] [--root DIR] [--json]";
	if ((status = cli_parse(cli, argc, argv, opts, pos, 1, 1, &npos, &done)) ||
	    done)
		return status;
	if ((ret = cli_open_root(cli, &root, 0, 1)) ||
	    (ret = cctl_switch(&cli->ctx, &root, pos[0], cuda,
			       system ? CCTL_ACT_SYSTEM : 0, &from, &to))) {
		status = cli_fail(cli, ret);
		goto out;
	}
	if (cli->json) {
		struct cctl_buf b = CCTL_BUF_INIT;
		cctl_buf_addch(&b, '{');
		json_kstr(&b, "command", "switch");
		json_kbool(&b, "ok", 1);
		json_kstr(&b, "from", from);
		json_kstr(&b, "to", to);
		json_kbool(&b, "changed", !from || strcmp(from, to));
		cctl_buf_addch(&b, '}');
		json_emit(&b);
		cctl_buf_release(&b);
	} else if (from && !strcmp(from, to)) {
		printf("cuDNN %s is already active\n", to);
	} else {
		printf("switched cuDNN: %s -> %s\n", from ? from : "(none)", to);
	}
out:
	free(from);
	free(to);
	cctl_root_close(&root);
	return status;
}

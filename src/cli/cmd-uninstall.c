/* cudnnctl uninstall VERSION [--force] */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cmd_uninstall(int argc, char **argv, struct cli *cli)
{
	int cuda = 0, force = 0, npos, done, status, ret;
	const struct cli_opt opts[] = {
		{ "--cuda", OPT_INT, &cuda },
		{ "--force", OPT_FLAG, &force },
		{ NULL, OPT_FLAG, NULL },
	};
	const char *pos[1];
	struct cctl_root root = { 0 };
	char *id = NULL;

	cli->usage = "cudnnctl uninstall VERSION [--cuda N] [--force] "
		     "[--root DIR] [--json]";
	if ((status = cli_parse(cli, argc, argv, opts, pos, 1, 1, &npos, &done)) ||
	    done)
		return status;
	if ((ret = cli_open_root(cli, &root, 0, 1)) ||
	    (ret = cctl_uninstall(&cli->ctx, &root, pos[0], cuda, force, &id))) {
		status = cli_fail(cli, ret);
		goto out;
	}
	if (cli->json) {
		struct cctl_buf b = CCTL_BUF_INIT;
		cctl_buf_addch(&b, '{');
		json_kstr(&b, "command", "uninstall");
		json_kbool(&b, "ok", 1);
		json_kstr(&b, "removed", id);
		cctl_buf_addch(&b, '}');
		json_emit(&b);
		cctl_buf_release(&b);
	} else {
		printf("removed cuDNN %s from %s\n", id, root.path);
	}
out:
	free(id);
	cctl_root_close(&root);
	return status;
}

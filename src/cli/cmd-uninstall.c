/* cudnnctl uninstall VERSION [--force] */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cmd_uninstall(struct cli *cli, const struct cli_args *a,
		  struct cctl_root *root)
{
	char *id = NULL;
	int ret;

	if ((ret = cctl_uninstall(&cli->ctx, root, a->pos[0], a->cuda, a->force,
				  &id)))
		return cli_fail(cli, ret);
	cli->changed = 1;
	if (cli->json)
		json_kstr(cli_result(cli), "removed", id);
	else
		printf("removed cuDNN %s from %s\n", id, root->path);
	free(id);
	return 0;
}

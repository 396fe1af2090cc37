/* cudnnctl link-cuda [TOOLKIT] and cudnnctl unlink-cuda */
#include <stdio.h>

#include "cli.h"

static void say(struct cli *cli, const struct cctl_root *root,
		const struct cctl_cuda_link *l, int placed)
{
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kstr(b, "toolkit", l->toolkit);
		json_kstr(b, "version", l->version);
		json_kint(b, "files", (long long)l->files);
		json_kint(b, "backups", (long long)l->backups);
		return;
	}
	if (placed)
		printf("placed cuDNN %s into %s: %zu files (%s), %zu of the "
		       "toolkit's own kept beside them as *.cudnnctl-backup; "
		       "switch keeps them in step, cudnnctl unlink-cuda undoes it\n",
		       l->version, l->toolkit, l->files,
		       cctl_platform_host()->windows ? "copies"
						     : "links through current",
		       l->backups);
	else
		printf("took cuDNN %s out of %s: %zu files removed, %zu of the "
		       "toolkit's own put back (%s is as before link-cuda)\n",
		       l->version, l->toolkit, l->files, l->backups, l->toolkit);
	(void)root;
}

int cmd_link_cuda(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_cuda_link l;
	int ret;
	if ((ret = cctl_link_cuda(&cli->ctx, root, a->npos ? a->pos[0] : NULL, &l)))
		return cli_fail(cli, ret);
	cli->changed = 1;
	say(cli, root, &l, 1);
	cctl_cuda_link_release(&l);
	return 0;
}

int cmd_unlink_cuda(struct cli *cli, const struct cli_args *a,
		    struct cctl_root *root)
{
	struct cctl_cuda_link l;
	int ret;
	(void)a;
	if ((ret = cctl_unlink_cuda(&cli->ctx, root, &l)))
		return cli_fail(cli, ret);
	cli->changed = 1;
	say(cli, root, &l, 0);
	cctl_cuda_link_release(&l);
	return 0;
}

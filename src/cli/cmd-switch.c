/* cudnnctl switch VERSION [--cuda N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_switch(struct cli *cli, const struct cli_args *a,
	       struct cctl_root *root)
{
	char *from = NULL, *to = NULL, *back = NULL;
	const char *want = a->pos[0];
	int ret;

	/* switch -: back to the version active before this one (history) */
	if (!strcmp(want, "-")) {
		if ((ret = cctl_history_previous(&cli->ctx, root, &back)))
			return cli_fail(cli, ret);
		want = back;
	}
	ret = cctl_switch(&cli->ctx, root, want, a->cuda, a->act_flags, &from, &to);
	free(back);
	if (ret)
		return cli_fail(cli, ret);
	cli->changed = !from || strcmp(from, to);
	/* then verify (CLI_VERIFY_AFTER) checks the active version */
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kstr(b, "from", from);
		json_kstr(b, "to", to);
		json_kbool(b, "changed", !from || strcmp(from, to));
	} else if (from && !strcmp(from, to)) {
		printf("cuDNN %s is already active\n", to);
	} else {
		printf("switched cuDNN: %s -> %s\n", from ? from : "(none)", to);
	}
	cli_ci_publish(cli, root, to, !from || strcmp(from, to));
	free(from);
	free(to);
	return 0;
}

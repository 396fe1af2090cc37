/* cudnnctl path restore [--scope user|machine] */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int scope_flags(struct cli *cli, struct cli_args *a)
{
	a->act_flags = a->system ? CCTL_ACT_SYSTEM : 0;
	if (!a->scope || !strcmp(a->scope, "user"))
		return 0;
	if (!strcmp(a->scope, "machine")) {
		a->act_flags = CCTL_ACT_SYSTEM;
		return 0;
	}
	return cli_usage_error(cli, "unknown scope '%s': use user or machine",
			       a->scope);
}

/* install and switch: in CI mode the user's profiles and registry stay
 * as they are unless --persist */
int check_scope(struct cli *cli, struct cli_args *a)
{
	int ret = scope_flags(cli, a);
	/* install --platform: this machine's, when cudnnctl cannot tell */
	if (!ret && a->platform) {
		struct cctl_ctx why;
		cctl_ctx_init(&why);
		if (cctl_platform_set_host(&why, a->platform))
			return cli_usage_error(cli, "%s (%s)", why.msg, why.hint);
	}
	if (!ret && cli->ci && !a->persist)
		a->act_flags |= CCTL_ACT_NO_PERSIST;
	return ret;
}

int check_path(struct cli *cli, struct cli_args *a)
{
	int ret;
	if (strcmp(a->pos[0], "restore"))
		return cli_usage_error(cli, "unknown 'path' action '%s'",
				       a->pos[0]);
	if (!(ret = scope_flags(cli, a)) && a->force)
		a->act_flags |= CCTL_ACT_FORCE;
	return ret;
}

int cmd_path(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	const char *scope = a->act_flags & CCTL_ACT_SYSTEM ? "machine" : "user";
	int ret;

	if ((ret = cctl_path_restore(&cli->ctx, root, a->act_flags)))
		return cli_fail(cli, ret);
	cli->changed = 1;
	if (cli->json)
		json_kstr(cli_result(cli), "restored", scope);
	else
		printf("restored the %s PATH as it was before cudnnctl first "
		       "changed it; the root is not active now\n",
		       scope);
	return 0;
}

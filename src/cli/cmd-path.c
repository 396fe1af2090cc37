/* cudnnctl path restore [--scope user|machine] */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_parse_scope(struct cli *cli, const char *scope, int system,
		    unsigned *flags)
{
	*flags = system ? CCTL_ACT_SYSTEM : 0;
	if (!scope || !strcmp(scope, "user"))
		return 0;
	if (!strcmp(scope, "machine")) {
		*flags = CCTL_ACT_SYSTEM;
		return 0;
	}
	return cli_usage_error(cli, "unknown scope '%s': use user or machine",
			       scope);
}

int cmd_path(int argc, char **argv, struct cli *cli)
{
	const char *scope = NULL;
	const struct cli_opt opts[] = {
		{ "--scope", OPT_STR, &scope },
		{ NULL, OPT_FLAG, NULL },
	};
	const char *pos[1];
	struct cctl_root root = { 0 };
	unsigned flags;
	int npos, done, status, ret;

	cli->usage = "cudnnctl path restore [--scope user|machine] [--root DIR] "
		     "[--json]";
	if ((status = cli_parse(cli, argc, argv, opts, pos, 1, 1, &npos, &done)) ||
	    done)
		return status;
	if (strcmp(pos[0], "restore"))
		return cli_usage_error(cli, "unknown 'path' action '%s'", pos[0]);
	if ((status = cli_parse_scope(cli, scope, 0, &flags)))
		return status;
	if ((ret = cli_open_root(cli, &root, 0, 1)) ||
	    (ret = cctl_path_restore(&cli->ctx, &root, flags))) {
		status = cli_fail(cli, ret);
		goto out;
	}
	if (cli->json)
		printf("{\"command\":\"path\",\"ok\":true,\"restored\":\"%s\"}\n",
		       flags ? "machine" : "user");
	else
		printf("restored the %s PATH saved before cudnnctl first changed "
		       "it\n",
		       flags ? "machine" : "user");
out:
	cctl_root_close(&root);
	return status;
}

/* cudnnctl exec [VERSION] [--cuda N] -- COMMAND [ARGS...] */
#include "cli.h"

int check_exec(struct cli *cli, struct cli_args *a)
{
	if (!a->rest)
		return cli_usage_error(cli, "'exec' needs '--' and a command: "
					    "cudnnctl exec [VERSION] -- COMMAND "
					    "[ARGS...]");
	if (!a->nrest)
		return cli_usage_error(cli, "'exec' needs a command after '--'");
	if (a->json)
		return cli_usage_error(cli, "'exec' takes no --json: what it "
					    "prints is the command's");
	return 0;
}

int cmd_exec(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_pin pin;
	int ret, status = 0;
	/* the version: VERSION, CUDNNCTL_VERSION, a pin file, the active */
	if ((ret = cctl_pin_choose(&cli->ctx, a->npos ? a->pos[0] : NULL, a->cuda,
				   &pin)))
		return cli_fail(cli, ret);
	/* POSIX: returns only when the command could not be started */
	if ((ret = cctl_exec(&cli->ctx, root, pin.version, pin.cuda,
			     (const char *const *)a->rest, &status))) {
		ret = cli_fail(cli, ret);
		cli_pin_note(&pin);
	} else {
		ret = status;
	}
	cctl_pin_release(&pin);
	return ret;
}

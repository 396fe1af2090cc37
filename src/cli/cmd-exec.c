/* cudnnctl exec [VERSION] [--cuda N] [--install] -- COMMAND [ARGS...] */
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

/* Whether VERSION (cuda) is installed in root (NULL: no root yet). */
static int installed(const struct cctl_root *root, const char *version, int cuda)
{
	struct cctl_install in;
	if (!root || cctl_store_find(NULL, root, version, cuda, &in))
		return 0;
	cctl_install_release(&in);
	return 1;
}

int cmd_exec(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_root fresh;
	struct cctl_pin pin;
	int ret, status = 0, opened = 0;
	/* the version: VERSION, CUDNNCTL_VERSION, a pin file, the active */
	if ((ret = cctl_pin_choose(&cli->ctx, a->npos ? a->pos[0] : NULL, a->cuda,
				   &pin)))
		return cli_fail(cli, ret);
	if (a->install && pin.version && !installed(root, pin.version, pin.cuda)) {
		if ((ret = cli_install_first(cli, a, pin.version, pin.cuda)))
			goto failed;
		if (!root) { /* the install made it */
			if ((ret = cli_open_root(cli, &fresh, 0, 0)))
				goto failed;
			root = &fresh;
			opened = 1;
		}
	}
	if (!root) {
		ret = cli->root_error;
		goto failed;
	}
	/* POSIX: returns only when the command could not be started */
	if ((ret = cctl_exec(&cli->ctx, root, pin.version, pin.cuda,
			     (const char *const *)a->rest, &status)))
		goto failed;
	ret = status;
	goto out;
failed:
	status = ret;
	ret = cli_fail(cli, ret);
	if (status == CCTL_ENOTFOUND && !a->install && pin.version)
		cli_say("hint", "or let exec install it first: cudnnctl exec "
				"--install %s%s%.0d -- ...",
			pin.version, pin.cuda ? " --cuda " : "", pin.cuda);
	cli_pin_note(&pin);
out:
	if (opened)
		cctl_root_close(&fresh);
	cctl_pin_release(&pin);
	return ret;
}

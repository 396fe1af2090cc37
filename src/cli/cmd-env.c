/* cudnnctl env [--shell sh|powershell|cmd] [--version V] and cudnnctl deactivate */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	enum cctl_shell shell;
} shells[] = {
	{ "sh", CCTL_SHELL_SH },
	{ "bash", CCTL_SHELL_SH },
	{ "zsh", CCTL_SHELL_SH },
	{ "powershell", CCTL_SHELL_POWERSHELL },
	{ "pwsh", CCTL_SHELL_POWERSHELL },
	{ "cmd", CCTL_SHELL_CMD },
};

/* The shell `env` writes for without --shell: this platform's. */
const char *env_default_shell(void)
{
	enum cctl_shell shell = cctl_platform_host()->shell;
	for (size_t i = 0; i < sizeof(shells) / sizeof(*shells); i++)
		if (shells[i].shell == shell)
			return shells[i].name;
	return "sh";
}

int check_env(struct cli *cli, struct cli_args *a)
{
	a->shell_kind = cctl_platform_host()->shell;
	if (!a->shell)
		return 0;
	for (size_t i = 0; i < sizeof(shells) / sizeof(*shells); i++)
		if (!strcmp(a->shell, shells[i].name)) {
			a->shell_kind = shells[i].shell;
			return 0;
		}
	return cli_usage_error(cli, "unknown shell '%s': use sh, powershell or "
				    "cmd",
			       a->shell);
}

int cmd_env(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_buf out = CCTL_BUF_INIT;
	int ret;

	if ((ret = cctl_env_render_version(&cli->ctx, root, a->env_version, a->cuda,
					   a->shell_kind, &out))) {
		cctl_buf_release(&out);
		return cli_fail(cli, ret);
	}
	if (cli->json) {
		struct cctl_env_var vars[CCTL_ENV_MAX];
		struct cctl_buf *b = cli_result(cli);
		char *id = NULL;
		size_t n;
		json_kobj(b, "set");
		if (!(a->env_version ? cctl_exec_env(&cli->ctx, root, a->env_version,
						     a->cuda, vars, &n, &id)
				     : cctl_env_vars(&cli->ctx, root, vars, &n))) {
			for (size_t i = 0; i < n; i++)
				json_kstr(b, vars[i].name, vars[i].value);
			cctl_env_vars_release(vars, n);
		}
		free(id);
		json_end(b, '}');
	} else {
		fwrite(out.buf, 1, out.len, stdout);
	}
	cctl_buf_release(&out);
	return 0;
}

int cmd_deactivate(struct cli *cli, const struct cli_args *a,
		   struct cctl_root *root)
{
	int ret;
	(void)a;
	if ((ret = cctl_deactivate(&cli->ctx, root)))
		return cli_fail(cli, ret);
	if (cli->json)
		cli_result(cli);
	else
		printf("deactivated: new shells no longer get cuDNN from %s; the "
		       "installed versions are kept\n",
		       root->path);
	return 0;
}

/* cudnnctl env [--shell sh|powershell|cmd] and cudnnctl deactivate */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_env(int argc, char **argv, struct cli *cli)
{
	const char *shell_name = NULL;
	const struct cli_opt opts[] = {
		{ "--shell", OPT_STR, &shell_name },
		{ NULL, OPT_FLAG, NULL },
	};
	enum cctl_shell shell = cctl_platform_host()->shell;
	struct cctl_root root = { 0 };
	struct cctl_buf out = CCTL_BUF_INIT;
	int npos, done, status, ret;

	cli->usage = "cudnnctl env [--shell sh|powershell|cmd] [--root DIR] [--json]";
	if ((status = cli_parse(cli, argc, argv, opts, NULL, 0, 0, &npos, &done)) ||
	    done)
		return status;
	if (!shell_name) {
		/* this platform's shell */
	} else if (!strcmp(shell_name, "sh") || !strcmp(shell_name, "bash") ||
		   !strcmp(shell_name, "zsh")) {
		shell = CCTL_SHELL_SH;
	} else if (!strcmp(shell_name, "powershell") ||
		   !strcmp(shell_name, "pwsh")) {
		shell = CCTL_SHELL_POWERSHELL;
	} else if (!strcmp(shell_name, "cmd")) {
		shell = CCTL_SHELL_CMD;
	} else {
		return cli_usage_error(cli, "unknown shell '%s': use sh, "
					    "powershell or cmd",
				       shell_name);
	}
	if ((ret = cli_open_root(cli, &root, 0, 0)) ||
	    (ret = cctl_env_render(&cli->ctx, &root, shell, &out))) {
		status = cli_fail(cli, ret);
		goto out;
	}
	if (cli->json) {
		struct cctl_env_var vars[CCTL_ENV_MAX];
		struct cctl_buf b = CCTL_BUF_INIT;
		size_t n;
		cctl_buf_adds(&b, "{\"command\":\"env\",\"ok\":true,\"set\":{");
		if (!cctl_env_vars(&cli->ctx, &root, vars, &n)) {
			for (size_t i = 0; i < n; i++)
				json_kstr(&b, vars[i].name, vars[i].value);
			cctl_env_vars_release(vars, n);
		}
		cctl_buf_adds(&b, "}}");
		json_emit(&b);
		cctl_buf_release(&b);
	} else {
		fwrite(out.buf, 1, out.len, stdout);
	}
out:
	cctl_buf_release(&out);
	cctl_root_close(&root);
	return status;
}

int cmd_deactivate(int argc, char **argv, struct cli *cli)
{
	struct cctl_root root = { 0 };
	int npos, done, status, ret;

	cli->usage = "cudnnctl deactivate [--root DIR] [--json]";
	if ((status = cli_parse(cli, argc, argv, NULL, NULL, 0, 0, &npos, &done)) ||
	    done)
		return status;
	if ((ret = cli_open_root(cli, &root, 0, 1)) ||
	    (ret = cctl_deactivate(&cli->ctx, &root))) {
		status = cli_fail(cli, ret);
		goto out;
	}
	if (cli->json)
		printf("{\"command\":\"deactivate\",\"ok\":true}\n");
	else
		printf("deactivated: new shells no longer get cuDNN from %s; the "
		       "installed versions are kept\n",
		       root.path);
out:
	cctl_root_close(&root);
	return status;
}

/* cudnnctl switch VERSION [--cuda N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The running programs that keep the version switched from loaded
 * until they restart; NULL when none (or none can be seen). */
static struct cctl_lib_user *keep_old(const struct cctl_root *root, const char *from,
				      size_t *n)
{
	char *dir = cctl_path_join(root->path, "versions", from, NULL);
	char *lib = cctl_install_lib_dir(dir), **files = NULL;
	struct cctl_lib_user *v = NULL;
	size_t nf = 0;
	*n = 0;
	if (!cctl_lib_files_in(NULL, lib, &files, &nf) &&
	    cctl_lib_users(NULL, (const char *const *)files, nf, &v, n))
		*n = 0;
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	free(lib);
	free(dir);
	return v;
}

void cli_still_loaded(struct cli *cli, const struct cctl_root *root, const char *from)
{
	size_t n = 0;
	struct cctl_lib_user *v = from ? keep_old(root, from, &n) : NULL;
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_karr(b, "still_loaded_by");
		for (size_t i = 0; i < n; i++) {
			json_obj(b);
			json_kint(b, "pid", v[i].pid);
			json_kstr(b, "program", v[i].program);
			json_kstr(b, "service", v[i].service);
			json_end(b, '}');
		}
		json_end(b, ']');
	} else {
		for (size_t i = 0; i < n; i++)
			printf("  pid %ld (%s%s%s) keeps %s loaded until it restarts%s\n",
			       v[i].pid, v[i].program, v[i].service ? ", service " : "",
			       v[i].service ? v[i].service : "", from,
			       v[i].service ? ": restart the service" : "");
	}
	cctl_lib_users_release(v, n);
}

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
		cli_still_loaded(cli, root, cli->changed ? from : NULL);
	} else if (from && !strcmp(from, to)) {
		printf("cuDNN %s is already active\n", to);
	} else {
		printf("switched cuDNN: %s -> %s\n", from ? from : "(none)", to);
		cli_still_loaded(cli, root, from);
	}
	cli_ci_publish(cli, root, to, !from || strcmp(from, to));
	free(from);
	free(to);
	return 0;
}

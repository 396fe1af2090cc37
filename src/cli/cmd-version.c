/* cudnnctl version [--json]: with --json also the exit codes and the
 * verify stages, so that scripts and the tests need no copies of them. */
#include <stdio.h>

#include "cli.h"

int cmd_version(struct cli *cli, const struct cli_args *a,
		struct cctl_root *root)
{
	struct cctl_buf *b;
	(void)a;
	(void)root;
	if (!cli->json) {
		printf("cudnnctl %s\n", CCTL_VERSION);
		return 0;
	}
	b = cli_result(cli);
	json_kstr(b, "version", CCTL_VERSION);
	json_kstr(b, "platform", cctl_host_platform());
	json_kobj(b, "exit_codes");
	for (int c = CCTL_ERROR_FIRST; c < CCTL_ERROR_END; c++)
		json_kint(b, cctl_error_name(c) + 1, cctl_exit_status(c));
	json_end(b, '}');
	json_karr(b, "verify_stages");
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		json_obj(b);
		json_kstr(b, "name", cctl_stage_name((enum cctl_stage)i));
		json_kint(b, "exit_code",
			  cctl_exit_status(cctl_stage_code((enum cctl_stage)i)));
		json_kbool(b, "needs_gpu", cctl_stage_needs_gpu((enum cctl_stage)i));
		json_end(b, '}');
	}
	json_end(b, ']');
	return 0;
}

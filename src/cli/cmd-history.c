/* cudnnctl history [-n N] [--json]: <root>/history.jsonl, newest last. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cmd_history(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_history_entry *v;
	size_t n, skipped, first;
	int ret;

	if ((ret = cctl_history_read(&cli->ctx, root, &v, &n, &skipped)))
		return cli_fail(cli, ret);
	/* damaged lines: the core's warning says how many */
	first = a->last > 0 && (size_t)a->last < n ? n - (size_t)a->last : 0;
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kint(b, "skipped", (long long)skipped);
		json_karr(b, "changes");
		for (size_t i = first; i < n; i++) {
			const struct cctl_history_entry *e = &v[i];
			json_obj(b);
			json_kstr(b, "time", e->time);
			json_kstr(b, "user", e->user);
			json_kstr(b, "host", e->host);
			json_kstr(b, "command", e->command);
			json_kstr(b, "args", e->args);
			json_kstr(b, "from", e->from);
			json_kstr(b, "to", e->to);
			json_kstr(b, "sha256", e->sha256);
			json_kbool(b, "ok", e->ok);
			json_kint(b, "exit_status", e->exit_status);
			json_end(b, '}');
		}
		json_end(b, ']');
	} else if (!n) {
		printf("no changes recorded in %s yet\n", root->path);
	} else {
		printf("%-20s %-12s %-24s %-24s %s\n", "TIME", "USER", "FROM", "TO", "COMMAND");
		for (size_t i = first; i < n; i++) {
			const struct cctl_history_entry *e = &v[i];
			printf("%-20s %-12s %-24s %-24s %s%s\n", e->time,
			       e->user ? e->user : "?", e->from ? e->from : "-",
			       e->to ? e->to : "-", e->args ? e->args : e->command,
			       e->ok ? "" : " [failed]");
		}
	}
	cctl_history_release(v, n);
	return 0;
}

/* cudnnctl verify --app PROGRAM: which cuDNN a program needs and gets. */
#include <stdio.h>

#include "cli.h"

static const char *status_word(enum cctl_status s)
{
	return cctl_status_name(s);
}

int cli_verify_app(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_app app;
	int ret, status = 0, missing = 0;

	if ((ret = cctl_verify_app(&cli->ctx, root, a->app, &app)))
		return cli_fail(cli, ret);
	for (size_t i = 0; i < app.n; i++)
		if (app.v[i].cudnn && app.v[i].status == CCTL_FAIL)
			missing |= app.v[i].resolved == NULL;
	if (app.result == CCTL_FAIL)
		status = cctl_exit_status(missing ? CCTL_EVERIFY_LOCATE : CCTL_EVERIFY_LOAD);
	if (cli->json) {
		struct cctl_buf b = CCTL_BUF_INIT;
		json_obj(&b);
		json_kstr(&b, "command", "verify");
		json_kbool(&b, "ok", status == 0);
		json_kint(&b, "exit_status", status);
		json_kstr(&b, "program", app.program);
		json_kstr(&b, "status", status_word(app.result));
		json_kstr(&b, "finding", app.finding);
		json_kint(&b, "cudnn_major", app.cudnn_major);
		json_kbool(&b, "runtime_load", app.runtime_load);
		json_karr(&b, "cuda_majors");
		for (size_t i = 0; i < app.ncuda; i++) {
			json_item(&b);
			cctl_buf_addf(&b, "%d", app.cuda[i]);
		}
		json_end(&b, ']');
		json_karr(&b, "libraries");
		for (size_t i = 0; i < app.n; i++) {
			const struct cctl_app_import *im = &app.v[i];
			json_obj(&b);
			json_kstr(&b, "name", im->name);
			json_kstr(&b, "needed_by", im->by);
			json_kstr(&b, "kind", im->cudnn ? "cudnn" : "cuda");
			json_kint(&b, "major", im->major);
			json_kbool(&b, "runtime", im->runtime);
			if (im->cudnn) {
				json_kstr(&b, "status", status_word(im->status));
				json_kstr(&b, "resolved", im->resolved);
				json_kstr(&b, "origin", im->origin);
				json_kbool(&b, "cudnnctl", im->cudnnctl);
				json_kstr(&b, "finding", im->finding);
				json_kstr(&b, "next", im->next);
			}
			json_end(&b, '}');
		}
		json_end(&b, ']');
		json_end(&b, '}');
		json_emit(&b);
		cctl_buf_release(&b);
	} else {
		printf("program: %s\n", app.program);
		if (app.ncuda) {
			printf("CUDA:    ");
			for (size_t i = 0; i < app.ncuda; i++)
				printf("%s%d", i ? ", " : "", app.cuda[i]);
			printf(" (cudart, cuBLAS)\n");
		}
		for (size_t i = 0; i < app.n; i++) {
			const struct cctl_app_import *im = &app.v[i];
			if (!im->cudnn)
				continue;
			printf("%-28s %-5s %s%s\n", im->name, status_word(im->status),
			       im->finding, im->runtime ? " [loaded at run time]" : "");
			if (im->next)
				printf("%34s fix: %s\n", "", im->next);
		}
		printf("verdict: %s\n", app.finding);
	}
	cctl_app_release(&app);
	return status;
}

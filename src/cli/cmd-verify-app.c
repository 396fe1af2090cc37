/* cudnnctl verify --app PROGRAM: which cuDNN a program needs and gets. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static const char *status_word(enum cctl_status s)
{
	return cctl_status_name(s);
}

static void app_json(const struct cctl_app *a, int status)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	json_obj(&b);
	json_kstr(&b, "command", "verify");
	json_kbool(&b, "ok", status == 0);
	json_kint(&b, "exit_status", status);
	json_kstr(&b, "program", a->program);
	json_kstr(&b, "status", status_word(a->result));
	json_kstr(&b, "finding", a->finding);
	json_kint(&b, "cudnn_major", a->cudnn_major);
	json_kbool(&b, "runtime_load", a->runtime_load);
	json_karr(&b, "cuda_majors");
	for (size_t i = 0; i < a->ncuda; i++) {
		json_item(&b);
		cctl_buf_addf(&b, "%d", a->cuda[i]);
	}
	json_end(&b, ']');
	json_karr(&b, "libraries");
	for (size_t i = 0; i < a->n; i++) {
		const struct cctl_app_import *im = &a->v[i];
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
	if (a->ran) {
		json_kobj(&b, "run");
		json_kint(&b, "exit_status", a->run_status);
		json_kstr(&b, "output", a->output);
		json_kstr(&b, "status", status_word(a->run_result));
		json_kstr(&b, "finding", a->run_finding);
		json_kstr(&b, "next", a->run_next);
		json_karr(&b, "loaded");
		for (size_t i = 0; i < a->nloaded; i++) {
			json_obj(&b);
			json_kstr(&b, "path", a->loaded[i].path);
			json_kstr(&b, "origin", a->loaded[i].origin);
			json_kbool(&b, "foreign", a->loaded[i].foreign);
			json_end(&b, '}');
		}
		json_end(&b, ']');
		json_end(&b, '}');
	}
	json_end(&b, '}');
	json_emit(&b);
	cctl_buf_release(&b);
}

static void app_text(const struct cctl_app *a)
{
	printf("program: %s\n", a->program);
	if (a->ncuda) {
		printf("CUDA:    ");
		for (size_t i = 0; i < a->ncuda; i++)
			printf("%s%d", i ? ", " : "", a->cuda[i]);
		printf(" (cudart, cuBLAS)\n");
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct cctl_app_import *im = &a->v[i];
		if (!im->cudnn)
			continue;
		printf("%-28s %-5s %s%s\n", im->name, status_word(im->status),
		       im->finding, im->runtime ? " [loaded at run time]" : "");
		if (im->next)
			printf("%34s fix: %s\n", "", im->next);
	}
	if (a->ran) {
		printf("run:     %s (exit status %d; its output: %s)\n",
		       a->run_finding, a->run_status, a->output);
		for (size_t i = 0; i < a->nloaded; i++)
			printf("  %-5s %s\n", a->loaded[i].foreign ? "fail" : "pass",
			       a->loaded[i].path);
		if (a->run_next)
			printf("  fix: %s\n", a->run_next);
	}
	if (a->ran && a->run_result == CCTL_FAIL)
		printf("verdict: NOT READY: %s; %s\n", a->finding, a->run_finding);
	else
		printf("verdict: %s\n", a->finding);
}

int cli_verify_app(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_app app;
	int ret, status = 0, missing = 0;

	if ((ret = cctl_verify_app(&cli->ctx, root, a->app, &app)))
		return cli_fail(cli, ret);
	if (a->run) {
		const char **argv = cctl_xcalloc((size_t)a->nrest + 2, sizeof(*argv));
		argv[0] = a->app;
		for (int i = 0; i < a->nrest; i++)
			argv[i + 1] = a->rest[i];
		ret = cctl_verify_app_run(&cli->ctx, root, argv, &app);
		free(argv);
		if (ret) {
			cctl_app_release(&app);
			return cli_fail(cli, ret);
		}
		if (app.run_result == CCTL_FAIL)
			app.result = CCTL_FAIL;
	}
	for (size_t i = 0; i < app.n; i++)
		if (app.v[i].cudnn && app.v[i].status == CCTL_FAIL)
			missing |= app.v[i].resolved == NULL;
	if (app.result == CCTL_FAIL)
		status = cctl_exit_status(missing ? CCTL_EVERIFY_LOCATE : CCTL_EVERIFY_LOAD);
	if (cli->json)
		app_json(&app, status);
	else
		app_text(&app);
	cctl_app_release(&app);
	return status;
}

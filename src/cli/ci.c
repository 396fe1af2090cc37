/* CI mode: which pipelines turn it on, and what cudnnctl hands them after
 * an install or a switch (GitHub Actions' GITHUB_ENV, GITHUB_PATH,
 * GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files; Azure Pipelines' logging
 * commands), so that the pipeline's later steps find the install. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int truthy(const char *v)
{
	return v && *v && strcmp(v, "0") && strcmp(v, "false") &&
	       strcmp(v, "False") && strcmp(v, "FALSE");
}

int cli_ci_detect(void)
{
	return truthy(cctl_getenv("CI")) ||
	       truthy(cctl_getenv("GITHUB_ACTIONS")) ||
	       truthy(cctl_getenv("TF_BUILD"));
}

/* Appends what b holds to the file a GitHub variable names (the runner
 * reads it after the step; other steps append too); nothing when the
 * variable is unset.  *err: 3 when it is set but cannot be written. */
static void gh_flush(const char *var, const struct cctl_buf *b, int *err)
{
	const char *path = cctl_getenv(var);
	struct cctl_ctx c;
	if (!path || !*path || !b->len)
		return;
	cctl_ctx_init(&c);
	/* LF line ends, as runners write */
	if (cctl_append_file(&c, path, b->buf, b->len)) {
		cli_say("error", "cannot write %s: %s", var, c.msg);
		*err = cctl_exit_status(CCTL_EIO);
	}
}

static int gh_wanted(const char *var)
{
	const char *path = cctl_getenv(var);
	return path && *path;
}

/* NAME=value, or NAME<<EOF form when the value has a line break */
static void gh_set(struct cctl_buf *f, const char *name, const char *value)
{
	if (!strchr(value, '\n'))
		cctl_buf_addf(f, "%s=%s\n", name, value);
	else
		cctl_buf_addf(f, "%s<<cudnnctl_EOF\n%s\ncudnnctl_EOF\n", name, value);
}

int cli_ci_publish(struct cli *cli, const struct cctl_root *root,
		   const char *id, int changed)
{
	struct cctl_env_var vars[CCTL_ENV_MAX];
	const char *cuda = strstr(id, "-cuda");
	struct cctl_buf envb = CCTL_BUF_INIT, pathb = CCTL_BUF_INIT,
			outb = CCTL_BUF_INIT;
	struct cctl_buf *env, *path, *out;
	/* Azure reads logging commands from stdout; JSON keeps it for itself */
	FILE *azure = truthy(cctl_getenv("TF_BUILD")) ? (cli->json ? stderr : stdout)
							  : NULL;
	size_t n = 0;
	int err = 0;

	if (!cli->ci)
		return 0;
	if (cctl_env_vars(&cli->ctx, root, vars, &n))
		return cli_fail(cli, cli->ctx.code);
	env = gh_wanted("GITHUB_ENV") ? &envb : NULL;
	path = gh_wanted("GITHUB_PATH") ? &pathb : NULL;
	out = gh_wanted("GITHUB_OUTPUT") ? &outb : NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = vars[i].name;
		if (!strcmp(name, "PATH")) {
			/* the folder itself: the runner puts it first */
			const char *dir = vars[i].first;
			if (dir && path)
				cctl_buf_addf(path, "%s\n", dir);
			if (dir && azure)
				fprintf(azure, "##vso[task.prependpath]%s\n", dir);
			continue;
		}
		if (env)
			gh_set(env, name, vars[i].value);
		if (azure)
			fprintf(azure, "##vso[task.setvariable variable=%s]%s\n", name,
				vars[i].value);
	}
	/* later cudnnctl commands of the job (verify, switch) use this root */
	if (env)
		gh_set(env, "CUDNNCTL_ROOT", root->path);
	if (azure)
		fprintf(azure, "##vso[task.setvariable variable=CUDNNCTL_ROOT]%s\n", root->path);
	if (out) {
		cctl_buf_addf(out, "cudnn-id=%s\n", id);
		cctl_buf_addf(out, "cudnn-version=%.*s\n",
			      cuda ? (int)(cuda - id) : (int)strlen(id), id);
		cctl_buf_addf(out, "cuda=%s\n", cuda ? cuda + 5 : "");
		gh_set(out, "cudnn-path", vars[0].value);
		cctl_buf_addf(out, "changed=%s\n", changed ? "true" : "false");
	}
	if (azure) {
		fprintf(azure, "##vso[task.setvariable variable=cudnn_version;isOutput=true]%.*s\n",
			cuda ? (int)(cuda - id) : (int)strlen(id), id);
		fflush(azure);
	}
	gh_flush("GITHUB_ENV", &envb, &err);
	gh_flush("GITHUB_PATH", &pathb, &err);
	gh_flush("GITHUB_OUTPUT", &outb, &err);
	cctl_buf_release(&envb);
	cctl_buf_release(&pathb);
	cctl_buf_release(&outb);
	cctl_env_vars_release(vars, n);
	if (err)
		cli->ci_status = err;
	return err;
}

/* A table cell: | and line breaks would end it */
static void md_cell(struct cctl_buf *f, const char *s)
{
	for (; s && *s; s++)
		if (*s == '|')
			cctl_buf_adds(f, "\\|");
		else if (*s == '\n' || *s == '\r')
			cctl_buf_addch(f, ' ');
		else
			cctl_buf_addch(f, *s);
}

static void md_row(struct cctl_buf *f, const char *label, const struct cctl_stage_result *s)
{
	cctl_buf_adds(f, "| ");
	md_cell(f, label);
	cctl_buf_addf(f, " | %s | ", cctl_status_name(s->status));
	if (s->status == CCTL_SKIP)
		cctl_buf_adds(f, "-");
	else
		cctl_buf_addf(f, "%.1f", s->ms);
	cctl_buf_adds(f, " | ");
	md_cell(f, s->status == CCTL_PASS || !s->reason ? s->finding : s->reason);
	if (s->next && s->status == CCTL_FAIL) {
		cctl_buf_adds(f, "<br>fix: ");
		md_cell(f, s->next);
	}
	cctl_buf_adds(f, " |\n");
}

void cli_ci_summary(struct cli *cli, const struct cctl_verify *v, int status)
{
	int err = 0;
	struct cctl_buf sb = CCTL_BUF_INIT, *f = &sb;
	char ver[32] = "";
	if (!cli->ci || !gh_wanted("GITHUB_STEP_SUMMARY"))
		return;
	if (v->cudnn_version)
		cctl_decode_cudnn_version(v->cudnn_version, ver, sizeof(ver));
	cctl_buf_addf(f, "### cudnnctl verify: %s\n\n",
		status ? "NOT READY" : "ready");
	if (*ver)
		cctl_buf_addf(f, "cuDNN %s for CUDA %d%s%s\n\n", ver, v->expected_cuda,
			v->gpu_name ? " on " : "", v->gpu_name ? v->gpu_name : "");
	cctl_buf_adds(f, "| stage | status | ms | finding |\n|---|---|---|---|\n");
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		int several = v->ngpus > 1 && cctl_stage_needs_gpu((enum cctl_stage)i) &&
			      v->stage[i].status != CCTL_SKIP;
		md_row(f, cctl_stage_name(i), &v->stage[i]);
		for (size_t g = 0; several && g < v->ngpus; g++) {
			char label[64];
			snprintf(label, sizeof(label), "%s, GPU %d", cctl_stage_name(i),
				 v->gpus[g].index);
			md_row(f, label, &v->gpus[g].stage[i]);
		}
	}
	cctl_buf_addf(f, "\nTotal %.0f ms.\n\n", v->total_ms);
	gh_flush("GITHUB_STEP_SUMMARY", &sb, &err);
	cctl_buf_release(&sb);
	if (err)
		cli->ci_status = err;
}

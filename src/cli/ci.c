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

/* The file a GitHub variable names, opened to append; NULL when unset.
 * *err: 3 when it is set but cannot be written. */
static FILE *gh_file(const char *var, int *err)
{
	const char *path = cctl_getenv(var);
	FILE *f;
	if (!path || !*path)
		return NULL;
	if (!(f = fopen(path, "ab"))) { /* LF line ends, as runners write */
		fprintf(stderr, "cudnnctl: error: cannot write %s ('%s')\n", var, path);
		*err = 3;
	}
	return f;
}

static void gh_close(FILE *f, const char *var, int *err)
{
	if (f && fclose(f)) {
		fprintf(stderr, "cudnnctl: error: cannot write %s ('%s')\n", var,
			cctl_getenv(var));
		*err = 3;
	}
}

/* NAME=value, or NAME<<EOF form when the value has a line break */
static void gh_set(FILE *f, const char *name, const char *value)
{
	if (!strchr(value, '\n'))
		fprintf(f, "%s=%s\n", name, value);
	else
		fprintf(f, "%s<<cudnnctl_EOF\n%s\ncudnnctl_EOF\n", name, value);
}

int cli_ci_publish(struct cli *cli, const struct cctl_root *root,
		   const char *id, int changed)
{
	const struct cctl_platform *p = cctl_platform_host();
	struct cctl_env_var vars[CCTL_ENV_MAX];
	const char *cuda = strstr(id, "-cuda");
	FILE *env, *path, *out;
	/* Azure reads logging commands from stdout; JSON keeps it for itself */
	FILE *azure = truthy(cctl_getenv("TF_BUILD")) ? (cli->json ? stderr : stdout)
							  : NULL;
	size_t n = 0;
	int err = 0;

	if (!cli->ci)
		return 0;
	if (cctl_env_vars(&cli->ctx, root, vars, &n))
		return cli_fail(cli, cli->ctx.code);
	env = gh_file("GITHUB_ENV", &err);
	path = gh_file("GITHUB_PATH", &err);
	out = gh_file("GITHUB_OUTPUT", &err);
	for (size_t i = 0; i < n; i++) {
		const char *name = vars[i].name;
		if (!strcmp(name, "PATH")) {
			/* the folder itself: the runner puts it first */
			char *dir = NULL;
			for (const struct cctl_env_dir *e = p->env; e->var; e++)
				if (!strcmp(e->var, "PATH"))
					dir = cctl_path_join(vars[0].value, e->dir, NULL);
			if (dir) {
				cctl_native_path(dir);
				if (path)
					fprintf(path, "%s\n", dir);
				if (azure)
					fprintf(azure, "##vso[task.prependpath]%s\n", dir);
			}
			free(dir);
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
		fprintf(out, "cudnn-id=%s\n", id);
		fprintf(out, "cudnn-version=%.*s\n",
			cuda ? (int)(cuda - id) : (int)strlen(id), id);
		fprintf(out, "cuda=%s\n", cuda ? cuda + 5 : "");
		gh_set(out, "cudnn-path", vars[0].value);
		fprintf(out, "changed=%s\n", changed ? "true" : "false");
	}
	if (azure) {
		fprintf(azure, "##vso[task.setvariable variable=cudnn_version;isOutput=true]%.*s\n",
			cuda ? (int)(cuda - id) : (int)strlen(id), id);
		fflush(azure);
	}
	gh_close(env, "GITHUB_ENV", &err);
	gh_close(path, "GITHUB_PATH", &err);
	gh_close(out, "GITHUB_OUTPUT", &err);
	cctl_env_vars_release(vars, n);
	if (err)
		cli->ci_status = err;
	return err;
}

/* A table cell: | and line breaks would end it */
static void md_cell(FILE *f, const char *s)
{
	for (; s && *s; s++)
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else
			fputc(*s, f);
}

static void md_row(FILE *f, const char *label, const struct cctl_stage_result *s)
{
	fputs("| ", f);
	md_cell(f, label);
	fprintf(f, " | %s | ", cctl_status_name(s->status));
	if (s->status == CCTL_SKIP)
		fputs("-", f);
	else
		fprintf(f, "%.1f", s->ms);
	fputs(" | ", f);
	md_cell(f, s->status == CCTL_PASS || !s->reason ? s->finding : s->reason);
	if (s->next && s->status == CCTL_FAIL) {
		fputs("<br>fix: ", f);
		md_cell(f, s->next);
	}
	fputs(" |\n", f);
}

void cli_ci_summary(struct cli *cli, const struct cctl_verify *v, int status)
{
	int err = 0;
	FILE *f;
	char ver[32] = "";
	if (!cli->ci || !(f = gh_file("GITHUB_STEP_SUMMARY", &err))) {
		if (err)
			cli->ci_status = err;
		return;
	}
	if (v->cudnn_version)
		cctl_decode_cudnn_version(v->cudnn_version, ver, sizeof(ver));
	fprintf(f, "### cudnnctl verify: %s\n\n",
		status ? "NOT READY" : "ready");
	if (*ver)
		fprintf(f, "cuDNN %s for CUDA %d%s%s\n\n", ver, v->expected_cuda,
			v->gpu_name ? " on " : "", v->gpu_name ? v->gpu_name : "");
	fputs("| stage | status | ms | finding |\n|---|---|---|---|\n", f);
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
	fprintf(f, "\nTotal %.0f ms.\n\n", v->total_ms);
	gh_close(f, "GITHUB_STEP_SUMMARY", &err);
	if (err)
		cli->ci_status = err;
}

/* cudnnctl verify [VERSION]: the staged check, as a table, JSON or JUnit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void xml_escape(struct cctl_buf *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': cctl_buf_adds(f, "&lt;"); break;
		case '>': cctl_buf_adds(f, "&gt;"); break;
		case '&': cctl_buf_adds(f, "&amp;"); break;
		case '"': cctl_buf_adds(f, "&quot;"); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n')
				cctl_buf_addch(f, *s);
		}
	}
}

/* A report replaces the one a last run left (rename does not replace a
 * file on Windows: the OS layer's writer does). */
static int write_report(const char *path, const struct cctl_buf *b)
{
	struct cctl_ctx c;
	cctl_ctx_init(&c);
	if (!cctl_write_file(&c, path, b->buf ? b->buf : "", b->len))
		return 0;
	cli_say("error", "cannot write the JUnit report: %s", c.msg);
	cli_say("hint", "give --junit a file in a folder that exists and can "
			"be written");
	return cctl_exit_status(CCTL_EIO);
}

static void junit_case(struct cctl_buf *f, const char *name,
		       const struct cctl_stage_result *s)
{
	cctl_buf_addf(f, "  <testcase classname=\"cudnnctl.verify\" name=\"%s\" "
		   "time=\"%.4f\">\n",
		name, s->ms / 1000.0);
	if (s->status == CCTL_FAIL) {
		cctl_buf_adds(f, "    <failure message=\"");
		xml_escape(f, s->reason);
		cctl_buf_adds(f, "\">");
		for (size_t k = 0; k < s->nnotes; k++) {
			xml_escape(f, k ? "\n" : "");
			xml_escape(f, cctl_status_name(s->notes[k].status));
			xml_escape(f, ": ");
			xml_escape(f, s->notes[k].reason);
			if (s->notes[k].next) {
				xml_escape(f, "\n  fix: ");
				xml_escape(f, s->notes[k].next);
			}
		}
		cctl_buf_adds(f, "</failure>\n");
	} else if (s->status == CCTL_SKIP) {
		cctl_buf_adds(f, "    <skipped message=\"");
		xml_escape(f, s->reason);
		cctl_buf_adds(f, "\"/>\n");
	}
	cctl_buf_adds(f, "    <system-out>");
	xml_escape(f, s->finding);
	for (size_t k = 0; s->status == CCTL_WARN && k < s->nnotes; k++) {
		cctl_buf_adds(f, "\nwarning: ");
		xml_escape(f, s->notes[k].reason);
		if (s->notes[k].next) {
			cctl_buf_adds(f, "\n  fix: ");
			xml_escape(f, s->notes[k].next);
		}
	}
	cctl_buf_adds(f, "</system-out>\n  </testcase>\n");
}

/* Whether stage i has a row per GPU (several GPUs, a GPU stage that ran). */
static int per_gpu(const struct cctl_verify *v, int i)
{
	return v->ngpus > 1 && cctl_stage_needs_gpu((enum cctl_stage)i) &&
	       v->stage[i].status != CCTL_SKIP;
}

/* One test case per stage; with several GPUs, one per GPU stage per GPU
 * ("7-create-gpu1"). */
static int write_junit(const char *path,
		       const struct cctl_verify *v)
{
	int failures = 0, skipped = 0, tests = 0, ret;
	struct cctl_buf out = CCTL_BUF_INIT, *f = &out;
	for (int i = 0; i < CCTL_STAGE_COUNT; i++)
		for (size_t g = 0; g < (per_gpu(v, i) ? v->ngpus : 1); g++) {
			const struct cctl_stage_result *s =
				per_gpu(v, i) ? &v->gpus[g].stage[i] : &v->stage[i];
			tests++;
			failures += s->status == CCTL_FAIL;
			skipped += s->status == CCTL_SKIP;
		}
	cctl_buf_addf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<testsuites>\n<testsuite name=\"cudnnctl verify\" tests=\"%d\" "
		   "failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
		tests, failures, skipped, v->total_ms / 1000.0);
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		char name[64];
		if (!per_gpu(v, i)) {
			snprintf(name, sizeof(name), "%d-%s", i + 1, cctl_stage_name(i));
			junit_case(f, name, &v->stage[i]);
			continue;
		}
		for (size_t g = 0; g < v->ngpus; g++) {
			snprintf(name, sizeof(name), "%d-%s-gpu%d", i + 1,
				 cctl_stage_name(i), v->gpus[g].index);
			junit_case(f, name, &v->gpus[g].stage[i]);
		}
	}
	cctl_buf_adds(f, "</testsuite>\n</testsuites>\n");
	ret = write_report(path, &out);
	cctl_buf_release(&out);
	return ret;
}

static void json_stage(struct cctl_buf *b, int i, const struct cctl_stage_result *s)
{
	json_kstr(b, "stage", cctl_stage_name(i));
	json_kstr(b, "status", cctl_status_name(s->status));
	json_knum(b, "ms", s->ms, 3, 0, 1);
	json_kstr(b, "finding", s->finding);
	json_kstr(b, "reason", s->reason);
	json_kstr(b, "next", s->next);
}

static void json_gpus(struct cctl_buf *b, const struct cctl_verify *v)
{
	json_karr(b, "gpus");
	for (size_t g = 0; g < v->ngpus; g++) {
		const struct cctl_gpu *gpu = &v->gpus[g];
		char cc[32];
		int ok = 1;
		json_obj(b);
		json_kint(b, "index", gpu->index);
		json_kstr(b, "name", gpu->name);
		json_kstr(b, "uuid", gpu->uuid[0] ? gpu->uuid : NULL);
		snprintf(cc, sizeof(cc), "%d.%d", gpu->cc_major, gpu->cc_minor);
		json_kstr(b, "compute_capability", cc);
		json_kint(b, "memory", (long long)gpu->memory);
		if (gpu->free_memory)
			json_kint(b, "free_memory", (long long)gpu->free_memory);
		else
			json_kraw(b, "free_memory", NULL);
		json_kstr(b, "algorithm", gpu->algorithm);
		json_knum(b, "max_rel_error", gpu->max_rel_error, 3, 1,
			  gpu->algorithm != NULL);
		for (int i = 0; i < CCTL_STAGE_COUNT; i++)
			if (cctl_stage_needs_gpu((enum cctl_stage)i))
				ok &= gpu->stage[i].status != CCTL_FAIL &&
				      gpu->stage[i].finding;
		json_kbool(b, "ok", ok);
		json_karr(b, "stages");
		for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
			if (!cctl_stage_needs_gpu((enum cctl_stage)i) ||
			    !gpu->stage[i].finding)
				continue;
			json_obj(b);
			json_stage(b, i, &gpu->stage[i]);
			json_end(b, '}');
		}
		json_end(b, ']');
		json_end(b, '}');
	}
	json_end(b, ']');
}

void cli_verify_json(struct cctl_buf *out, const struct cctl_verify *v,
		     int status)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	char ver[32] = "", cc[32];
	json_obj(&b);
	json_kstr(&b, "command", "verify");
	json_kbool(&b, "ok", status == 0);
	json_kint(&b, "exit_status", status);
	json_kstr(&b, "install", v->id);
	json_kstr(&b, "expected_version", v->expected_version);
	json_kint(&b, "expected_cuda", v->expected_cuda);
	json_kstr(&b, "library", v->library);
	json_kstr(&b, "loaded", v->loaded);
	if (v->cudnn_version)
		cctl_decode_cudnn_version(v->cudnn_version, ver, sizeof(ver));
	json_kstr(&b, "cudnn_version", v->cudnn_version ? ver : NULL);
	json_kint(&b, "cudnn_version_code", v->cudnn_version);
	json_kint(&b, "cudart_version", v->cudart_version);
	json_kint(&b, "driver_version", v->driver_version);
	json_kint(&b, "gpu_count", v->gpu_count);
	json_kstr(&b, "gpu", v->gpu_name);
	snprintf(cc, sizeof(cc), "%d.%d", v->cc_major, v->cc_minor);
	json_kstr(&b, "compute_capability", v->gpu_name ? cc : NULL);
	json_kstr(&b, "algorithm", v->algorithm);
	json_knum(&b, "max_rel_error", v->max_rel_error, 3, 1, v->algorithm != NULL);
	json_gpus(&b, v);
	json_knum(&b, "total_ms", v->total_ms, 2, 0, 1);
	json_karr(&b, "copies");
	for (size_t i = 0; i < v->ncopies; i++) {
		json_obj(&b);
		json_kstr(&b, "path", v->copies[i].path);
		json_kstr(&b, "origin", v->copies[i].origin);
		json_end(&b, '}');
	}
	json_end(&b, ']');
	json_karr(&b, "libraries");
	for (size_t i = 0; i < v->nlibs; i++) {
		json_obj(&b);
		json_kstr(&b, "path", v->libs[i].path);
		json_kstr(&b, "version", v->libs[i].version);
		json_kstr(&b, "origin", v->libs[i].origin);
		json_kbool(&b, "foreign", v->libs[i].foreign);
		json_end(&b, '}');
	}
	json_end(&b, ']');
	json_karr(&b, "stages");
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		const struct cctl_stage_result *s = &v->stage[i];
		json_obj(&b);
		json_stage(&b, i, s);
		json_karr(&b, "notes");
		for (size_t k = 0; k < s->nnotes; k++) {
			json_obj(&b);
			json_kstr(&b, "status", cctl_status_name(s->notes[k].status));
			json_kstr(&b, "reason", s->notes[k].reason);
			json_kstr(&b, "next", s->notes[k].next);
			json_end(&b, '}');
		}
		json_end(&b, ']');
		json_end(&b, '}');
	}
	json_end(&b, ']');
	json_end(&b, '}');
	cctl_buf_add(out, b.buf, b.len);
	cctl_buf_release(&b);
}

static void print_row(struct cctl_buf *o, const char *label, const struct cctl_stage_result *s,
		      int timed)
{
	/* a stage that failed before it found anything says why */
	const char *what = s->finding && *s->finding ? s->finding
			   : s->reason			 ? s->reason
							 : "";
	if (s->status == CCTL_SKIP)
		cctl_buf_addf(o, "%-13s %-6s %9s  %s\n", label, "skip", "-",
		       s->reason ? s->reason : "");
	else if (timed)
		cctl_buf_addf(o, "%-13s %-6s %9.1f  %s\n", label, cctl_status_name(s->status),
		       s->ms, what);
	else
		cctl_buf_addf(o, "%-13s %-6s %9s  %s\n", label, cctl_status_name(s->status),
		       "", what);
}

/* The GPUs that failed, each with the first stage it failed and why. */
static int print_failed_gpus(struct cctl_buf *o, const struct cctl_verify *v)
{
	int n = 0;
	for (size_t g = 0; g < v->ngpus; g++)
		for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
			const struct cctl_stage_result *s = &v->gpus[g].stage[i];
			if (!cctl_stage_needs_gpu((enum cctl_stage)i) ||
			    s->status != CCTL_FAIL)
				continue;
			cctl_buf_addf(o, "  GPU %d (%s): %s: %s\n", v->gpus[g].index,
			       v->gpus[g].name, cctl_stage_name(i),
			       s->reason ? s->reason : "");
			n++;
			break;
		}
	return n;
}

void cli_verify_table(struct cctl_buf *o, const struct cctl_verify *v, int status)
{
	char ver[32] = "";
	cctl_buf_addf(o, "%-13s %-6s %9s  %s\n", "STAGE", "STATUS", "MS", "FINDING");
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		const struct cctl_stage_result *s = &v->stage[i];
		print_row(o, cctl_stage_name(i), s, 1);
		/* with several GPUs, a row for each under the stage's */
		for (size_t g = 0; per_gpu(v, i) && g < v->ngpus; g++) {
			char label[32];
			snprintf(label, sizeof(label), "  GPU %d", v->gpus[g].index);
			print_row(o, label, &v->gpus[g].stage[i], i != CCTL_STAGE_DRIVER);
		}
		if (s->status != CCTL_WARN && s->status != CCTL_FAIL)
			continue;
		/* every problem on its own line, with its own fix */
		for (size_t k = 0; k < s->nnotes; k++) {
			const struct cctl_stage_note *n = &s->notes[k];
			cctl_buf_addf(o, "%-13s %-6s %9s    %s: %s\n", "", "", "",
			       n->status == s->status ? "why" : "warn",
			       n->reason);
			if (n->next)
				cctl_buf_addf(o, "%-13s %-6s %9s    fix: %s\n", "", "", "",
				       n->next);
		}
	}
	if (v->cudnn_version)
		cctl_decode_cudnn_version(v->cudnn_version, ver, sizeof(ver));
	if (status) {
		int i = 0;
		while (i < CCTL_STAGE_COUNT && v->stage[i].status != CCTL_FAIL)
			i++;
		if (i < CCTL_STAGE_COUNT && cctl_stage_needs_gpu((enum cctl_stage)i) &&
		    v->ngpus > 1) {
			size_t bad = 0;
			for (size_t g = 0; g < v->ngpus; g++)
				for (int k = 0; k < CCTL_STAGE_COUNT; k++)
					if (v->gpus[g].stage[k].status == CCTL_FAIL &&
					    cctl_stage_needs_gpu((enum cctl_stage)k)) {
						bad++;
						break;
					}
			cctl_buf_addf(o, "verdict: NOT READY: %zu of %zu GPUs failed (%.0f ms)\n",
			       bad, v->ngpus, v->total_ms);
			print_failed_gpus(o, v);
		} else if (i < CCTL_STAGE_COUNT) {
			cctl_buf_addf(o, "verdict: NOT READY: the %s stage failed (%.0f ms)\n",
			       cctl_stage_name(i), v->total_ms);
			if (cctl_stage_needs_gpu((enum cctl_stage)i))
				print_failed_gpus(o, v);
		}
	} else if (v->stage[CCTL_STAGE_CONV].status != CCTL_SKIP && v->ngpus > 1) {
		cctl_buf_addf(o, "verdict: ready: cuDNN %s for CUDA %d ran a convolution on "
		       "%zu GPUs (%.0f ms):",
		       ver, v->expected_cuda, v->ngpus, v->total_ms);
		for (size_t g = 0; g < v->ngpus; g++)
			cctl_buf_addf(o, "%s %d (%s)", g ? "," : "", v->gpus[g].index,
			       v->gpus[g].name);
		cctl_buf_addch(o, '\n');
	} else if (v->stage[CCTL_STAGE_CONV].status != CCTL_SKIP) {
		cctl_buf_addf(o, "verdict: ready: cuDNN %s for CUDA %d ran a convolution on "
		       "%s (%.0f ms)\n",
		       ver, v->expected_cuda, v->gpu_name ? v->gpu_name : "the GPU",
		       v->total_ms);
	} else {
		cctl_buf_addf(o, "verdict: loads: cuDNN %s for CUDA %d loads; GPU stages "
		       "skipped: %s (%.0f ms)\n",
		       ver, v->expected_cuda,
		       v->stage[CCTL_STAGE_DRIVER].reason
			       ? v->stage[CCTL_STAGE_DRIVER].reason
			       : "",
		       v->total_ms);
	}
}

static void frameworks_table(const struct cctl_framework *f, size_t n, const char *py)
{
	printf("\nPython: %s\n%-24s %-6s %9s  %-8s %s\n", py, "FRAMEWORK", "STATUS", "MS",
	       "BUILT", "FINDING");
	for (size_t i = 0; i < n; i++) {
		char label[64], built[32] = "-";
		snprintf(label, sizeof(label), "%s%s%s", f[i].name, f[i].version ? " " : "",
			 f[i].version ? f[i].version : "");
		if (f[i].built)
			cctl_decode_cudnn_version(f[i].built, built, sizeof(built));
		printf("%-24s %-6s %9.1f  %-8s %s\n", label, cctl_status_name(f[i].result),
		       f[i].ms, built, f[i].finding ? f[i].finding : "");
		for (size_t k = 1; k < f[i].nlibs; k++)
			printf("%-24s %-6s %9s  %-8s also %s (%s)\n", "", "", "", "",
			       f[i].libs[k].path, f[i].libs[k].origin);
		if (f[i].hint)
			printf("%-24s %-6s %9s  %-8s %s: %s\n", "", "", "", "",
			       f[i].result == CCTL_FAIL || f[i].result == CCTL_WARN ? "fix" : "note",
			       f[i].hint);
	}
}

static void frameworks_json(struct cctl_buf *b, const struct cctl_framework *f, size_t n,
			    const char *py)
{
	json_kstr(b, "interpreter", py);
	json_karr(b, "frameworks");
	for (size_t i = 0; i < n; i++) {
		json_obj(b);
		json_kstr(b, "name", f[i].name);
		json_kbool(b, "installed", f[i].present);
		json_kstr(b, "version", f[i].version);
		json_kstr(b, "location", f[i].location);
		json_kint(b, "built_with", f[i].built);
		json_kstr(b, "status", cctl_status_name(f[i].result));
		json_kint(b, "exit_status", f[i].status);
		json_knum(b, "ms", f[i].ms, 1, 0, 1);
		json_kstr(b, "finding", f[i].finding);
		json_kstr(b, "error", f[i].error);
		json_kstr(b, "hint", f[i].hint);
		json_karr(b, "loaded");
		for (size_t k = 0; k < f[i].nlibs; k++) {
			char v[32] = "";
			json_obj(b);
			json_kstr(b, "path", f[i].libs[k].path);
			if (f[i].libs[k].version)
				cctl_decode_cudnn_version(f[i].libs[k].version, v, sizeof(v));
			json_kstr(b, "version", *v ? v : NULL);
			json_kstr(b, "origin", f[i].libs[k].origin);
			json_kbool(b, "cudnnctl_active", f[i].libs[k].active);
			json_end(b, '}');
		}
		json_end(b, ']');
		json_karr(b, "sublibraries");
		for (size_t k = 0; k < f[i].nsubs; k++) {
			json_item(b);
			json_str(b, f[i].subs[k]);
		}
		json_end(b, ']');
		json_end(b, '}');
	}
	json_end(b, ']');
}

int cli_run_verify(struct cli *cli, struct cctl_root *root,
		   const struct cctl_verify_opts *o, const char *junit,
		   struct cctl_buf *json_out)
{
	struct cctl_verify v;
	int ret, status;
	ret = cctl_verify(&cli->ctx, root, o, &v);
	status = cctl_exit_status(ret);
	if (v.stage[CCTL_STAGE_LOCATE].finding || !ret) {
		if (json_out) {
			cli_verify_json(json_out, &v, status);
		} else if (cli->json) {
			struct cctl_buf b = CCTL_BUF_INIT;
			cli_verify_json(&b, &v, status);
			json_emit(&b);
			cctl_buf_release(&b);
		} else {
			struct cctl_buf b = CCTL_BUF_INIT;
			cli_verify_table(&b, &v, status);
			fwrite(b.buf, 1, b.len, stdout);
			cctl_buf_release(&b);
		}
		if (ret) {
			cli_say("error", "%s", cli->ctx.msg);
			if (cli->ctx.hint[0])
				cli_say("hint", "%s", cli->ctx.hint);
		}
	} else if (json_out) {
		/* failed before the stages */
		cli_say("error", "%s", cli->ctx.msg);
		json_obj(json_out);
		json_kbool(json_out, "ok", 0);
		json_kint(json_out, "exit_status", status);
		json_end(json_out, '}');
	} else {
		status = cli_fail(cli, ret);
	}
	if (junit && v.stage[CCTL_STAGE_LOCATE].finding &&
	    write_junit(junit, &v) && !status)
		status = cctl_exit_status(CCTL_EIO);
	if (v.stage[CCTL_STAGE_LOCATE].finding)
		cli_ci_summary(cli, &v, status);
	cctl_verify_release(&v);
	return status;
}

int check_verify(struct cli *cli, struct cli_args *a)
{
	if (a->no_gpu && a->require_gpu)
		return cli_usage_error(cli, "--no-gpu and --require-gpu "
					    "contradict each other");
	if (a->app && (a->python || a->npos || a->build))
		return cli_usage_error(cli, "--app PROGRAM goes alone: not with "
					    "--python, --build or a VERSION");
	if ((a->run && !a->app) || (a->rest && !a->run))
		return cli_usage_error(cli, "--run, and arguments after --, go with "
					    "--app PROGRAM");
	if (a->no_gpu && a->device)
		return cli_usage_error(cli, "--no-gpu and --device contradict "
					    "each other");
	if (a->device && strcmp(a->device, "all")) {
		const char *p = a->device;
		for (;;) {
			if (*p < '0' || *p > '9')
				return cli_usage_error(
					cli, "--device takes GPU numbers separated "
					     "by commas (0,2) or 'all', not '%s'",
					a->device);
			while (*p >= '0' && *p <= '9')
				p++;
			if (!*p)
				break;
			if (*p++ != ',')
				p = ""; /* not a digit: the error above */
		}
	}
	return 0;
}

/* verify --python [INTERPRETER]: the frameworks, a process each. */
static int verify_python(struct cli *cli, const struct cli_args *a,
			 struct cctl_root *root)
{
	struct cctl_framework *f = NULL;
	size_t n = 0;
	char *py = NULL;
	int ret = cctl_verify_python(&cli->ctx, root, a->pos[0], &py, &f, &n), status = 0;
	if (ret) {
		free(py);
		cctl_frameworks_release(f, n);
		return cli_fail(cli, ret);
	}
	for (size_t i = 0; i < n; i++)
		if (f[i].result == CCTL_FAIL)
			status = cctl_exit_status(CCTL_EVERIFY_LOAD);
	if (cli->json) {
		struct cctl_buf b = CCTL_BUF_INIT;
		json_obj(&b);
		json_kstr(&b, "command", "verify");
		json_kbool(&b, "ok", status == 0);
		json_kint(&b, "exit_status", status);
		frameworks_json(&b, f, n, py);
		json_end(&b, '}');
		json_emit(&b);
		cctl_buf_release(&b);
	} else {
		frameworks_table(f, n, py);
	}
	if (a->junit) {
		struct cctl_buf jb = CCTL_BUF_INIT, *jf = &jb;
		int fails = 0, skips = 0;
		for (size_t i = 0; i < n; i++) {
			fails += f[i].result == CCTL_FAIL;
			skips += f[i].result == CCTL_SKIP;
		}
		cctl_buf_addf(jf, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
				  "<testsuite name=\"cudnnctl verify --python\" tests=\"%zu\" "
				  "failures=\"%d\" errors=\"0\" skipped=\"%d\">\n",
			      n, fails, skips);
		for (size_t i = 0; i < n; i++) {
			cctl_buf_addf(jf, "  <testcase classname=\"cudnnctl.verify.python\" "
					  "name=\"%s\" time=\"%.4f\">\n",
				      f[i].name, f[i].ms / 1000.0);
			if (f[i].result == CCTL_FAIL || f[i].result == CCTL_SKIP) {
				cctl_buf_adds(jf, f[i].result == CCTL_FAIL
							  ? "    <failure message=\""
							  : "    <skipped message=\"");
				xml_escape(jf, f[i].finding);
				cctl_buf_adds(jf, "\"/>\n");
			}
			cctl_buf_adds(jf, "    <system-out>");
			xml_escape(jf, f[i].finding);
			if (f[i].hint) {
				cctl_buf_adds(jf, "\n");
				xml_escape(jf, f[i].hint);
			}
			cctl_buf_adds(jf, "</system-out>\n  </testcase>\n");
		}
		cctl_buf_adds(jf, "</testsuite>\n</testsuites>\n");
		if (write_report(a->junit, &jb) && !status)
			status = cctl_exit_status(CCTL_EIO);
		cctl_buf_release(&jb);
	}
	free(py);
	cctl_frameworks_release(f, n);
	return status;
}

/* verify in a pinned folder: says which version it checks, and when the
 * active one (what new processes get) is another, the way to run with the
 * pinned one. */
static void pin_differs_note(struct cli *cli, const struct cctl_root *root,
			     const struct cctl_pin *pin)
{
	struct cctl_install in;
	char *active = NULL;
	memset(&in, 0, sizeof(in));
	if (cctl_store_active(NULL, root, &active) ||
	    cctl_store_find(NULL, root, pin->version, pin->cuda, &in)) {
		free(active);
		return; /* verify itself says what is wrong */
	}
	if (!cli->quiet)
		cli_say("note", "verifying %s, as %s asks", in.id, pin->source);
	if (!active || strcmp(active, in.id))
		cli_say("note", "new processes get %s (the active version); "
				"cudnnctl exec -- COMMAND runs one with %s, "
				"cudnnctl switch %s makes it the active one",
			active ? active : "no cuDNN", in.id, in.id);
	cctl_install_release(&in);
	free(active);
}

int cmd_verify(struct cli *cli, const struct cli_args *a,
	       struct cctl_root *root)
{
	struct cctl_verify_opts o;

	if (a->python)
		return verify_python(cli, a, root);
	if (a->app)
		return cli_verify_app(cli, a, root);

	/* without a root, whatever cuDNN the loader finds; but not when a
	 * root or a version was asked for (CLI_ROOT_OPTIONAL) */
	if (!root && (a->pos[0] || cli->root_arg))
		return cli_fail(cli, cli->root_error);
	memset(&o, 0, sizeof(o));
	o.version = a->pos[0];
	o.cuda = a->cuda;
	o.no_gpu = a->no_gpu;
	o.require_gpu = a->require_gpu;
	o.full = a->full;
	o.build = a->build;
	o.devices = a->device;
	if (!o.version && root) {
		/* in a pinned folder: the version it asks for */
		struct cctl_pin pin;
		int ret, status;
		if ((ret = cctl_pin_choose(&cli->ctx, NULL, a->cuda, &pin)))
			return cli_fail(cli, ret);
		if (pin.version) {
			pin_differs_note(cli, root, &pin);
			o.version = pin.version;
			o.cuda = pin.cuda;
		}
		status = cli_run_verify(cli, root, &o, a->junit, NULL);
		cctl_pin_release(&pin);
		return status;
	}
	return cli_run_verify(cli, root, &o, a->junit, NULL);
}

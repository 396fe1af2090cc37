/* cudnnctl verify [VERSION]: the staged check, as a table, JSON or JUnit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void xml_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n')
				fputc(*s, f);
		}
	}
}

static int write_junit(const char *path,
		       const struct cctl_verify *v)
{
	int failures = 0, skipped = 0;
	char *tmp = cctl_xstrfmt("%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "cudnnctl: error: cannot write '%s'\n", tmp);
		free(tmp);
		return 3;
	}
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		failures += v->stage[i].status == CCTL_FAIL;
		skipped += v->stage[i].status == CCTL_SKIP;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<testsuites>\n<testsuite name=\"cudnnctl verify\" tests=\"%d\" "
		   "failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
		CCTL_STAGE_COUNT, failures, skipped, v->total_ms / 1000.0);
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		const struct cctl_stage_result *s = &v->stage[i];
		fprintf(f, "  <testcase classname=\"cudnnctl.verify\" name=\"%d-%s\" "
			   "time=\"%.4f\">\n",
			i + 1, cctl_stage_name(i), s->ms / 1000.0);
		if (s->status == CCTL_FAIL) {
			fputs("    <failure message=\"", f);
			xml_escape(f, s->reason);
			fputs("\">", f);
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
			fputs("</failure>\n", f);
		} else if (s->status == CCTL_SKIP) {
			fputs("    <skipped message=\"", f);
			xml_escape(f, s->reason);
			fputs("\"/>\n", f);
		}
		fputs("    <system-out>", f);
		xml_escape(f, s->finding);
		for (size_t k = 0; s->status == CCTL_WARN && k < s->nnotes; k++) {
			fputs("\nwarning: ", f);
			xml_escape(f, s->notes[k].reason);
			if (s->notes[k].next) {
				fputs("\n  fix: ", f);
				xml_escape(f, s->notes[k].next);
			}
		}
		fputs("</system-out>\n  </testcase>\n", f);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "cudnnctl: error: cannot write '%s'\n", path);
		remove(tmp);
		free(tmp);
		return 3;
	}
	free(tmp);
	return 0;
}

void cli_verify_json(struct cctl_buf *out, const struct cctl_verify *v,
		     int status)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	char ver[32] = "";
	cctl_buf_addch(&b, '{');
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
	cctl_buf_adds(&b, ",\"compute_capability\":");
	if (v->gpu_name)
		cctl_buf_addf(&b, "\"%d.%d\"", v->cc_major, v->cc_minor);
	else
		cctl_buf_adds(&b, "null");
	json_kstr(&b, "algorithm", v->algorithm);
	cctl_buf_adds(&b, ",\"max_rel_error\":");
	if (v->algorithm)
		cctl_buf_addf(&b, "%.3g", v->max_rel_error);
	else
		cctl_buf_adds(&b, "null");
	cctl_buf_addf(&b, ",\"total_ms\":%.2f,\"copies\":[", v->total_ms);
	for (size_t i = 0; i < v->ncopies; i++) {
		cctl_buf_adds(&b, i ? ",{" : "{");
		json_kstr(&b, "path", v->copies[i].path);
		json_kstr(&b, "origin", v->copies[i].origin);
		cctl_buf_addch(&b, '}');
	}
	cctl_buf_adds(&b, "],\"stages\":[");
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		const struct cctl_stage_result *s = &v->stage[i];
		cctl_buf_adds(&b, i ? ",{" : "{");
		json_kstr(&b, "stage", cctl_stage_name(i));
		json_kstr(&b, "status", cctl_status_name(s->status));
		cctl_buf_addf(&b, ",\"ms\":%.3f", s->ms);
		json_kstr(&b, "finding", s->finding);
		json_kstr(&b, "reason", s->reason);
		json_kstr(&b, "next", s->next);
		cctl_buf_adds(&b, ",\"notes\":[");
		for (size_t k = 0; k < s->nnotes; k++) {
			cctl_buf_adds(&b, k ? ",{" : "{");
			json_kstr(&b, "status", cctl_status_name(s->notes[k].status));
			json_kstr(&b, "reason", s->notes[k].reason);
			json_kstr(&b, "next", s->notes[k].next);
			cctl_buf_addch(&b, '}');
		}
		cctl_buf_adds(&b, "]}");
	}
	cctl_buf_adds(&b, "]}");
	cctl_buf_add(out, b.buf, b.len);
	cctl_buf_release(&b);
}

static void print_table(const struct cctl_verify *v, int status)
{
	char ver[32] = "";
	printf("%-13s %-6s %9s  %s\n", "STAGE", "STATUS", "MS", "FINDING");
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		const struct cctl_stage_result *s = &v->stage[i];
		if (s->status == CCTL_SKIP)
			printf("%-13s %-6s %9s  %s\n", cctl_stage_name(i), "skip",
			       "-", s->reason ? s->reason : "");
		else
			printf("%-13s %-6s %9.1f  %s\n", cctl_stage_name(i),
			       cctl_status_name(s->status), s->ms,
			       s->finding ? s->finding : "");
		if (s->status != CCTL_WARN && s->status != CCTL_FAIL)
			continue;
		/* every problem on its own line, with its own fix */
		for (size_t k = 0; k < s->nnotes; k++) {
			const struct cctl_stage_note *n = &s->notes[k];
			printf("%-13s %-6s %9s    %s: %s\n", "", "", "",
			       n->status == s->status ? "why" : "warn",
			       n->reason);
			if (n->next)
				printf("%-13s %-6s %9s    fix: %s\n", "", "", "",
				       n->next);
		}
	}
	if (v->cudnn_version)
		cctl_decode_cudnn_version(v->cudnn_version, ver, sizeof(ver));
	if (status) {
		for (int i = 0; i < CCTL_STAGE_COUNT; i++)
			if (v->stage[i].status == CCTL_FAIL) {
				printf("verdict: NOT READY: the %s stage failed (%.0f ms)\n",
				       cctl_stage_name(i), v->total_ms);
				break;
			}
	} else if (v->stage[CCTL_STAGE_CONV].status != CCTL_SKIP) {
		printf("verdict: ready: cuDNN %s for CUDA %d ran a convolution on "
		       "%s (%.0f ms)\n",
		       ver, v->expected_cuda, v->gpu_name ? v->gpu_name : "the GPU",
		       v->total_ms);
	} else {
		printf("verdict: loads: cuDNN %s for CUDA %d loads; GPU stages "
		       "skipped: %s (%.0f ms)\n",
		       ver, v->expected_cuda,
		       v->stage[CCTL_STAGE_DRIVER].reason
			       ? v->stage[CCTL_STAGE_DRIVER].reason
			       : "",
		       v->total_ms);
	}
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
			print_table(&v, status);
		}
		if (ret) {
			fprintf(stderr, "cudnnctl: error: %s\n", cli->ctx.msg);
			if (cli->ctx.hint[0])
				fprintf(stderr, "cudnnctl: hint: %s\n", cli->ctx.hint);
		}
	} else if (json_out) {
		/* failed before the stages */
		fprintf(stderr, "cudnnctl: error: %s\n", cli->ctx.msg);
		cctl_buf_addf(json_out, "{\"ok\":false,\"exit_status\":%d}", status);
	} else {
		status = cli_fail(cli, ret);
	}
	if (junit && v.stage[CCTL_STAGE_LOCATE].finding &&
	    write_junit(junit, &v) && !status)
		status = 3;
	cctl_verify_release(&v);
	return status;
}

int check_verify(struct cli *cli, struct cli_args *a)
{
	if (a->no_gpu && a->require_gpu)
		return cli_usage_error(cli, "--no-gpu and --require-gpu "
					    "contradict each other");
	return 0;
}

int cmd_verify(struct cli *cli, const struct cli_args *a,
	       struct cctl_root *root)
{
	struct cctl_verify_opts o;

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
	return cli_run_verify(cli, root, &o, a->junit, NULL);
}

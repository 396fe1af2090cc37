/* cudnnctl doctor: one screen for a bug report - the system, cudnnctl,
 * the root and what it holds, where a new process finds cuDNN and why,
 * the driver and GPUs, and the verify table; the home folder shown as ~
 * unless --no-redact. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The first occurrence of needle (n bytes) in s; letters compared without
 * regard to case with icase (Windows: C:\Users\J and c:\users\j are one
 * folder). */
static const char *find(const char *s, const char *needle, size_t n, int icase)
{
	for (; *s; s++) {
		size_t k = 0;
		while (k < n && s[k] &&
		       (icase ? tolower((unsigned char)s[k]) ==
					tolower((unsigned char)needle[k])
			      : s[k] == needle[k]))
			k++;
		if (k == n)
			return s;
	}
	return NULL;
}

/* Every occurrence of home as a whole path prefix becomes "~"; in JSON
 * text, home as JSON writes it (each '\' doubled). */
static void redact(struct cctl_buf *b, const char *home, int json)
{
	struct cctl_buf out = CCTL_BUF_INIT, form = CCTL_BUF_INIT;
	int icase = cctl_platform_host()->windows;
	size_t n = home ? strlen(home) : 0;
	const char *p = b->buf;
	while (n > 1 && (home[n - 1] == '/' || home[n - 1] == '\\'))
		n--;
	if (n < 2) /* "/" or nothing: redacting would hide every path */
		return;
	for (size_t i = 0; i < n; i++) {
		if (json && home[i] == '\\')
			cctl_buf_addch(&form, '\\');
		cctl_buf_addch(&form, home[i]);
	}
	n = form.len;
	while (*p) {
		const char *hit = find(p, form.buf, n, icase);
		char after;
		if (!hit)
			break;
		after = hit[n];
		cctl_buf_add(&out, p, (size_t)(hit - p));
		if (after == '/' || after == '\\' || after == '\0' ||
		    strchr(" \t\n'\":;,)", after))
			cctl_buf_addch(&out, '~');
		else
			cctl_buf_add(&out, hit, n);
		p = hit + n;
	}
	cctl_buf_adds(&out, p);
	cctl_buf_release(b);
	cctl_buf_release(&form);
	*b = out;
}

/* "verdict: ready" and the statuses, coloured for a terminal. */
static void colour(struct cctl_buf *b)
{
	static const struct {
		const char *word, *sgr;
	} marks[] = { { " pass ", "32" }, { " warn ", "33" }, { " fail ", "31" },
		      { "NOT READY", "1;31" }, { "verdict: ready", "1;32" } };
	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		struct cctl_buf out = CCTL_BUF_INIT;
		const char *p = b->buf, *hit;
		size_t n = strlen(marks[m].word);
		while ((hit = strstr(p, marks[m].word))) {
			cctl_buf_add(&out, p, (size_t)(hit - p));
			cctl_buf_addf(&out, "\033[%sm%s\033[0m", marks[m].sgr, marks[m].word);
			p = hit + n;
		}
		cctl_buf_adds(&out, p);
		cctl_buf_release(b);
		*b = out;
	}
}

static const char *mode_name(const struct cctl_root *root)
{
	const char *m = cctl_activation_mode(root);
	return !m			? "none (no version activated yet)"
	       : !strcmp(m, "system") ? "system (ld.so.conf.d, or the machine PATH)"
	       : !strcmp(m, "ci")     ? "ci (nothing persisted: CI mode)"
				      : "user (shell profiles, or the user PATH)";
}

/* The library search variable of this process, an entry a line: the ones
 * before cuDNN's decide. */
static void text_search_var(struct cctl_buf *b, const struct cctl_platform *p,
			    const char *var)
{
	cctl_buf_addf(b, "%s of this process, first to last:", p->lib_var);
	if (var && *var) {
		const char *e = var;
		while (*e) {
			size_t len = strcspn(e, p->windows ? ";" : ":");
			cctl_buf_addf(b, "\n  %.*s", (int)len, e);
			e += len + (e[len] ? 1 : 0);
		}
		cctl_buf_addch(b, '\n');
	} else {
		cctl_buf_adds(b, " (not set)\n");
	}
}

/* The driver and the GPUs, or why they were not looked at. */
static void text_driver(struct cctl_buf *b, const struct cctl_verify *v,
			int no_gpu)
{
	if (v->driver_version) {
		cctl_buf_addf(b, "driver:     supports CUDA %d.%d; %d GPU%s\n",
			      v->driver_version / 1000, v->driver_version % 1000 / 10,
			      v->gpu_count, v->gpu_count == 1 ? "" : "s");
		for (size_t g = 0; g < v->ngpus; g++)
			cctl_buf_addf(b, "  GPU %d: %s (compute %d.%d, %.0f GiB)%s%s\n",
				      v->gpus[g].index, v->gpus[g].name,
				      v->gpus[g].cc_major, v->gpus[g].cc_minor,
				      (double)v->gpus[g].memory / (1024.0 * 1024 * 1024),
				      v->gpus[g].uuid[0] ? " " : "", v->gpus[g].uuid);
	} else {
		cctl_buf_addf(b, "driver:     %s\n",
			      no_gpu ? "not looked at (--no-gpu)"
			      : v->stage[CCTL_STAGE_DRIVER].reason
				      ? v->stage[CCTL_STAGE_DRIVER].reason
				      : "not reached (an earlier stage failed)");
	}
}

int cmd_doctor(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	const struct cctl_platform *p = cctl_platform_host();
	struct cctl_buf b = CCTL_BUF_INIT;
	struct cctl_verify_opts vo;
	struct cctl_verify v;
	struct cctl_install *inst = NULL;
	struct cctl_scan scan;
	char *sys = cctl_system_describe(), *home = cctl_home_dir();
	const char *var = cctl_getenv(p->lib_var);
	size_t n = 0;
	int status;

	if (root && cctl_store_list(&cli->ctx, root, &inst, &n))
		n = 0;
	memset(&vo, 0, sizeof(vo));
	vo.no_gpu = a->no_gpu;
	vo.devices = a->no_gpu ? NULL : "all";
	status = cctl_exit_status(cctl_verify(&cli->ctx, root, &vo, &v));
	if (cctl_scan(NULL, root, NULL, &scan))
		memset(&scan, 0, sizeof(scan));

	if (cli->json) {
		struct cctl_buf *r = cli_result(cli);
		json_kstr(r, "cudnnctl", CCTL_VERSION);
		json_kstr(r, "platform", cctl_host_platform());
		json_kstr(r, "system", sys);
		json_kstr(r, "root", root ? root->path : NULL);
		json_karr(r, "installed");
		for (size_t i = 0; i < n; i++) {
			json_obj(r);
			json_kstr(r, "id", inst[i].id);
			json_kbool(r, "active", inst[i].active);
			json_kbool(r, "verified", inst[i].verified);
			json_end(r, '}');
		}
		json_end(r, ']');
		json_kstr(r, "search_path_var", p->lib_var);
		json_kstr(r, "search_path", var);
		json_key(r, "verify");
		cli_verify_json(r, &v, status);
		json_kobj(r, "scan");
		cli_scan_json(r, &scan);
		json_end(r, '}');
		if (!a->no_redact)
			redact(r, home, 1);
		goto out;
	}
	cctl_buf_addf(&b, "cudnnctl doctor: paste all of it into the report%s\n\n",
		      a->no_redact ? "" : " (the home folder is shown as ~)");
	cctl_buf_addf(&b, "cudnnctl:   %s (%s)\n", CCTL_VERSION, cctl_host_platform());
	cctl_buf_addf(&b, "system:     %s\n", sys);
	if (root)
		cctl_buf_addf(&b, "root:       %s, mode %s\n", root->path, mode_name(root));
	else
		cctl_buf_addf(&b, "root:       none (%s)\n",
			      cli->root_arg ? cli->root_arg : "the default does not exist");
	cctl_buf_adds(&b, "installed: ");
	for (size_t i = 0; i < n; i++)
		cctl_buf_addf(&b, "%s %s (%s%s)", i ? "," : "", inst[i].id,
			      inst[i].verified ? "verified" : "unverified",
			      inst[i].active ? ", active" : "");
	cctl_buf_adds(&b, n ? "\n" : " none\n");
	text_search_var(&b, p, var);
	cctl_buf_adds(&b, "cuDNN a new process can find, in the loader's order:\n");
	for (size_t i = 0; i < v.ncopies; i++)
		cctl_buf_addf(&b, "  %zu. %s (%s)\n", i + 1, v.copies[i].path, v.copies[i].origin);
	if (!v.ncopies)
		cctl_buf_adds(&b, "  none\n");
	cctl_buf_adds(&b, "cuDNN copies on this machine (cudnnctl scan):\n");
	cli_scan_text(&b, &scan);
	text_driver(&b, &v, a->no_gpu);
	cctl_buf_adds(&b, "\nverify:\n");
	if (v.stage[CCTL_STAGE_LOCATE].finding)
		cli_verify_table(&b, &v, status);
	else
		cctl_buf_addf(&b, "  could not start: %s\n", cli->ctx.msg);
	if (!a->no_redact)
		redact(&b, home, 0);
	if (cctl_terminal(1) == 2 && !(cctl_getenv("NO_COLOR") && *cctl_getenv("NO_COLOR")))
		colour(&b);
	fwrite(b.buf, 1, b.len, stdout);
out:
	cctl_verify_release(&v);
	cctl_scan_release(&scan);
	cctl_install_list_release(inst, n);
	cctl_buf_release(&b);
	free(sys);
	free(home);
	return 0;
}

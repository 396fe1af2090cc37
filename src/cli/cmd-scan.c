/* cudnnctl scan [--deep DIR...] and cudnnctl quarantine PATH... | --list
 * | --restore ID|all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *ordinal(int n, char buf[16])
{
	const char *sfx = n % 100 >= 11 && n % 100 <= 13 ? "th"
			  : n % 10 == 1			  ? "st"
			  : n % 10 == 2			  ? "nd"
			  : n % 10 == 3			  ? "rd"
							  : "th";
	snprintf(buf, 16, "%d%s", n, sfx);
	return buf;
}

void cli_scan_text(struct cctl_buf *b, const struct cctl_scan *s)
{
	char ord[16];
	for (size_t i = 0; i < s->n; i++) {
		const struct cctl_copy *c = &s->v[i];
		cctl_buf_addf(b, "%s\n    cuDNN %s", c->dir,
			      c->version ? c->version : "of unknown version");
		if (!c->version)
			cctl_buf_addf(b, " (major %d)", c->major);
		else
			cctl_buf_addf(b, " (from the %s)", c->version_from);
		if (c->cuda)
			cctl_buf_addf(b, ", CUDA %d", c->cuda);
		cctl_buf_addf(b, ", %zu librar%s%s\n", c->nfiles, c->nfiles == 1 ? "y" : "ies",
			      c->active ? ", cudnnctl's active version" : "");
		cctl_buf_addf(b, "    owner: %s", cctl_owner_name(c->owner));
		if (c->owner_name)
			cctl_buf_addf(b, " %s", c->owner_name);
		if (c->owner == CCTL_OWNER_UNKNOWN)
			cctl_buf_adds(b, " (copied by hand: cudnnctl quarantine moves it aside)");
		else if (c->remove_with)
			cctl_buf_addf(b, " (removed with: %s)", c->remove_with);
		cctl_buf_addch(b, '\n');
		if (c->search_rank)
			cctl_buf_addf(b, "    a new process finds it %s%s\n",
				      ordinal(c->search_rank, ord),
				      c->before_active ? ", BEFORE cudnnctl's active version"
						       : "");
		if (c->missing)
			cctl_buf_addf(b, "    incomplete: lacks %s\n", c->missing);
		if (c->mixed)
			cctl_buf_addf(b, "    MIXED: the folder holds %s libraries\n", c->mixed);
		cctl_buf_addf(b, "    looked at as: %s\n", c->place);
	}
	cctl_buf_addf(b, "%zu cuDNN cop%s in %zu folders looked at%s\n", s->n,
		      s->n == 1 ? "y" : "ies", s->places,
		      s->deep_cut ? "; the --deep walk stopped at its time limit" : "");
}

void cli_scan_json(struct cctl_buf *b, const struct cctl_scan *s)
{
	json_kint(b, "places", (long long)s->places);
	json_kbool(b, "deep_cut", s->deep_cut);
	json_karr(b, "copies");
	for (size_t i = 0; i < s->n; i++) {
		const struct cctl_copy *c = &s->v[i];
		json_obj(b);
		json_kstr(b, "dir", c->dir);
		json_kstr(b, "place", c->place);
		json_kint(b, "major", c->major);
		json_kstr(b, "version", c->version);
		json_kstr(b, "version_from", c->version_from);
		if (c->cuda)
			json_kint(b, "cuda", c->cuda);
		else
			json_kraw(b, "cuda", "null");
		json_karr(b, "files");
		for (size_t k = 0; k < c->nfiles; k++) {
			json_item(b);
			json_str(b, c->files[k]);
		}
		json_end(b, ']');
		json_kbool(b, "complete", !c->missing);
		json_kstr(b, "missing", c->missing);
		json_kstr(b, "mixed", c->mixed);
		json_kstr(b, "owner", cctl_owner_name(c->owner));
		json_kstr(b, "owner_name", c->owner_name);
		json_kstr(b, "remove_with", c->remove_with);
		json_kint(b, "search_rank", c->search_rank);
		json_kbool(b, "before_active", c->before_active);
		json_kbool(b, "active", c->active);
		json_end(b, '}');
	}
	json_end(b, ']');
}

int cmd_scan(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_scan_opts o;
	struct cctl_scan s;
	int ret;
	memset(&o, 0, sizeof(o));
	o.deep = (const char *const *)a->deep.v;
	o.ndeep = a->deep.n;
	o.deep_seconds = a->time_limit;
	if ((ret = cctl_scan(&cli->ctx, root, &o, &s)))
		return cli_fail(cli, ret);
	if (cli->json) {
		cli_scan_json(cli_result(cli), &s);
	} else {
		struct cctl_buf b = CCTL_BUF_INIT;
		cli_scan_text(&b, &s);
		fwrite(b.buf, 1, b.len, stdout);
		cctl_buf_release(&b);
	}
	cctl_scan_release(&s);
	return 0;
}

/* ------------------------------------------------------------ quarantine */

int check_quarantine(struct cli *cli, struct cli_args *a)
{
	int ways = (a->npos > 0) + a->list + (a->restore != NULL);
	if (ways != 1)
		return cli_usage_error(cli, "quarantine takes PATH..., --list or "
					    "--restore ID|all (one of them)");
	return 0;
}

static void quarantine_json(struct cctl_buf *b, const struct cctl_quarantine *q)
{
	json_obj(b);
	json_kstr(b, "id", q->id);
	json_kstr(b, "time", q->time);
	json_karr(b, "files");
	for (size_t k = 0; k < q->n; k++) {
		json_obj(b);
		json_kstr(b, "path", q->v[k].path);
		json_kstr(b, "stored", q->v[k].stored);
		json_kint(b, "size", (long long)q->v[k].size);
		json_kstr(b, "sha256", q->v[k].sha256);
		json_end(b, '}');
	}
	json_end(b, ']');
	json_end(b, '}');
}

static void quarantine_text(const struct cctl_quarantine *q, const char *verb)
{
	printf("%s %s (%s):\n", verb, q->id, q->time);
	for (size_t k = 0; k < q->n; k++)
		printf("  %s\n    %s %s\n", q->v[k].path, strcmp(verb, "restored") ? "->" : "<-",
		       q->v[k].stored);
}

int cmd_quarantine(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_quarantine *v = NULL, one;
	size_t n = 0;
	int ret;
	const char *verb = a->restore ? "restored" : a->list ? "quarantine" : "quarantined";
	if (a->restore)
		ret = cctl_quarantine_restore(&cli->ctx, root, a->restore, &v, &n);
	else if (a->list)
		ret = cctl_quarantine_list(&cli->ctx, root, &v, &n);
	else if (!(ret = cctl_quarantine_move(&cli->ctx, root, a->pos, (size_t)a->npos,
					      a->force, &one))) {
		v = cctl_xcalloc(1, sizeof(*v));
		v[n++] = one;
	}
	if (ret)
		return cli_fail(cli, ret);
	cli->changed = !a->list && n;
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_karr(b, a->list ? "quarantines" : a->restore ? "restored" : "quarantined");
		for (size_t i = 0; i < n; i++)
			quarantine_json(b, &v[i]);
		json_end(b, ']');
	} else {
		for (size_t i = 0; i < n; i++)
			quarantine_text(&v[i], verb);
		if (!n)
			printf("%s\n", a->list ? "nothing is in quarantine"
					       : "nothing was in quarantine");
		else if (!a->list && !a->restore)
			printf("undo with: cudnnctl quarantine --restore %s\n", v[0].id);
	}
	cctl_quarantine_list_release(v, n);
	return 0;
}

/* cudnnctl list [--available] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What the releases of list --available are marked with. */
struct marks {
	struct cctl_cache_entry *cached;
	size_t ncached;
	struct cctl_install *installed;
	size_t ninstalled;
};

static void marks_load(struct cli *cli, const struct cctl_fetch_opts *fo,
		       struct marks *k)
{
	struct cctl_root root = { 0 };
	memset(k, 0, sizeof(*k));
	if (cctl_cache_list(NULL, fo, &k->cached, &k->ncached))
		k->ncached = 0;
	/* the root only when it is there: listing creates nothing */
	if (!cli_open_root(cli, &root, 0, 0)) {
		if (cctl_store_list(NULL, &root, &k->installed, &k->ninstalled))
			k->ninstalled = 0;
		cctl_root_close(&root);
	}
	cli->ctx.msg[0] = cli->ctx.hint[0] = '\0';
}

static void marks_release(struct marks *k)
{
	cctl_cache_list_release(k->cached, k->ncached);
	cctl_install_list_release(k->installed, k->ninstalled);
}

static int is_cached(const struct marks *k, const struct cctl_release *r)
{
	for (size_t i = 0; i < k->ncached; i++)
		if (!strcmp(k->cached[i].kind, "archive") &&
		    !strcmp(k->cached[i].name, r->file_name))
			return 1;
	return 0;
}

static int is_installed(const struct marks *k, const struct cctl_release *r)
{
	for (size_t i = 0; i < k->ninstalled; i++)
		if (!strcmp(k->installed[i].archive_sha256, r->sha256))
			return 1;
	return 0;
}

static int list_available(struct cli *cli, const struct cli_args *a)
{
	struct cctl_manifest m = { 0 };
	struct cctl_fetch_opts fo;
	struct marks k;
	const char *platform = cctl_host_platform();
	struct cctl_buf *b = cli->json ? cli_result(cli) : NULL;
	int ret;

	cli_fetch_opts(a, &fo);
	memset(&k, 0, sizeof(k));
	if ((ret = cli_load_manifests(cli, a, &fo, &m)))
		goto out;
	marks_load(cli, &fo, &k);
	if (b) {
		json_kstr(b, "platform", platform);
		json_karr(b, "available");
	} else {
		printf("%-12s %-5s %10s  %-19s %s\n", "VERSION", "CUDA", "SIZE",
		       "STATUS", "ARCHIVE");
	}
	for (size_t i = 0; i < m.n; i++) {
		const struct cctl_release *r = &m.v[i];
		int cached = is_cached(&k, r), installed = is_installed(&k, r);
		char size[32], status[32];
		if (strcmp(r->platform, platform))
			continue;
		if (b) {
			json_obj(b);
			json_kstr(b, "version", r->version);
			json_kint(b, "cuda", r->cuda);
			json_kint(b, "size", (long long)r->size);
			json_kstr(b, "sha256", r->sha256);
			json_kstr(b, "relative_path", r->relative_path);
			json_kstr(b, "manifest", r->source);
			json_kbool(b, "cached", cached);
			json_kbool(b, "installed", installed);
			json_end(b, '}');
		} else {
			cctl_format_size(size, sizeof(size), r->size);
			snprintf(status, sizeof(status), "%s%s%s",
				 installed ? "installed" : "",
				 installed && cached ? ", " : "",
				 cached ? "cached" : "");
			printf("%-12s %-5d %10s  %-19s %s\n", r->version, r->cuda,
			       size, status, r->file_name);
		}
	}
	if (b)
		json_end(b, ']');
	else if (!cli->quiet && m.n)
		/* the built-in manifests are exact copies; those at hand end
		 * before NVIDIA's newest and miss some releases */
		cli_say("note",
			"releases newer than %s, and any missing here, come from "
			"'cudnnctl manifests update' (NVIDIA's manifests, over "
			"HTTPS) or a mirror (--mirror URL|DIR, --manifest FILE)",
			m.v[m.n - 1].version);
out:
	marks_release(&k);
	cctl_manifest_release(&m);
	return ret ? cli_fail(cli, ret) : 0;
}

int cmd_list(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_install *v = NULL;
	size_t n = 0;
	char *root_shown = NULL;
	const char *shown;
	int ret;

	if (a->available)
		return list_available(cli, a);
	if (!root) {
		/* no root yet (CLI_ROOT_OPTIONAL): nothing installed */
		if (cli->root_arg)
			root_shown = cctl_xstrdup(cli->root_arg);
		else if (cctl_root_default(&cli->ctx, &root_shown))
			root_shown = NULL;
	} else if ((ret = cctl_store_list(&cli->ctx, root, &v, &n))) {
		return cli_fail(cli, ret);
	}
	shown = root ? root->path : root_shown;
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kstr(b, "root", shown);
		json_karr(b, "installed");
		for (size_t i = 0; i < n; i++) {
			json_obj(b);
			json_kstr(b, "id", v[i].id);
			json_kstr(b, "version", v[i].version);
			json_kint(b, "cuda", v[i].cuda);
			json_kstr(b, "platform", v[i].platform);
			json_kint(b, "size", (long long)v[i].size);
			json_kint(b, "files", (long long)v[i].nfiles);
			json_kbool(b, "active", v[i].active);
			json_kbool(b, "verified", v[i].verified);
			json_kstr(b, "archive", v[i].archive);
			json_kstr(b, "installed_at", v[i].installed_at);
			json_end(b, '}');
		}
		json_end(b, ']');
	} else if (!n) {
		printf("no cuDNN installed in %s\n", shown ? shown : "the root");
	} else {
		printf("  %-16s %-5s %10s  %s\n", "VERSION", "CUDA", "SIZE",
		       "STATUS");
		for (size_t i = 0; i < n; i++) {
			char size[32];
			cctl_format_size(size, sizeof(size), v[i].size);
			printf("%c %-16s %-5d %10s  %s%s\n", v[i].active ? '*' : ' ',
			       v[i].version, v[i].cuda, size,
			       v[i].verified ? "verified" : "unverified",
			       v[i].active ? ", active" : "");
		}
	}
	free(root_shown);
	cctl_install_list_release(v, n);
	return 0;
}

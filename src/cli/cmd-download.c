/* cudnnctl download VERSION, cudnnctl manifests update, cudnnctl cache
 * list|clean: releases fetched and kept without installing them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_download(struct cli *cli, const struct cli_args *a,
		 struct cctl_root *root)
{
	struct cctl_manifest m = { 0 };
	struct cctl_fetch_opts fo;
	struct cctl_fetch_result f;
	const struct cctl_release *r;
	const char *platform = a->platform ? a->platform : cctl_host_platform();
	char *url = NULL, *out = NULL;
	int ret;

	(void)root;
	memset(&f, 0, sizeof(f));
	cli_fetch_opts(a, &fo);
	if ((ret = cli_load_manifests(cli, a, &fo, &m)) ||
	    (ret = cli_choose_release(cli, a, &fo, &m, a->pos[0], platform, &r)))
		goto out;
	url = cctl_fetch_source(&fo, r);
	if (a->dry_run) {
		/* what a CI cache key needs, before any byte is fetched */
		if (cli->json)
			cli_fetch_json(cli_result(cli), r, url, NULL);
		else
			printf("%s\n  %llu bytes, sha256 %s\n  from %s\n",
			       r->file_name, (unsigned long long)r->size,
			       r->sha256, url);
		goto out;
	}
	if ((ret = cctl_fetch_archive(&cli->ctx, &fo, r, 1, &f)))
		goto out;
	cli_progress_done(cli);
	if (a->output &&
	    (ret = cctl_fetch_export(&cli->ctx, f.path, a->output, r, &out)))
		goto out;
	if (out) {
		free(f.path);
		f.path = out;
		out = NULL;
	}
	if (cli->json) {
		cli_fetch_json(cli_result(cli), r, url, &f);
	} else {
		char size[32];
		cctl_format_size(size, sizeof(size), r->size);
		printf("%s %s (sha256 verified, %s)\n  %s\n",
		       f.cached ? "cached" : "downloaded", r->file_name, size,
		       f.path);
	}
out:
	free(url);
	free(out);
	cctl_fetch_result_release(&f);
	cctl_manifest_release(&m);
	return ret ? cli_fail(cli, ret) : 0;
}

int cmd_manifests(struct cli *cli, const struct cli_args *a,
		  struct cctl_root *root)
{
	struct cctl_manifest m = { 0 };
	struct cctl_fetch_opts fo;
	size_t before, added = 0, refused = 0;
	int ret;

	(void)root;
	cli_fetch_opts(a, &fo);
	if ((ret = cli_load_manifests(cli, a, &fo, &m)))
		goto out;
	before = m.n;
	if ((ret = cctl_manifests_update(&cli->ctx, &fo, &m, &added, &refused)))
		goto out;
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kstr(b, "mirror", cctl_fetch_mirror(&fo));
		json_kint(b, "added", (long long)added);
		json_kint(b, "refused", (long long)refused);
		json_kint(b, "new_archives", (long long)(m.n - before));
		json_kint(b, "archives", (long long)m.n);
	} else {
		printf("%zu new manifest%s from %s (%zu new archives; %zu known "
		       "in all)%s\n",
		       added, added == 1 ? "" : "s", cctl_fetch_mirror(&fo),
		       m.n - before, m.n, refused ? "; some were refused, see "
						    "the warnings"
						  : "");
	}
out:
	cctl_manifest_release(&m);
	return ret ? cli_fail(cli, ret) : 0;
}

int cmd_cache(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_fetch_opts fo;
	struct cctl_cache_entry *v = NULL;
	size_t n = 0;
	uint64_t freed = 0;
	size_t kept = 0;
	char *dir = NULL;
	int clean = !strcmp(a->pos[0], "clean"), ret;

	(void)root;
	cli_fetch_opts(a, &fo);
	if ((ret = cctl_fetch_cache_dir(&cli->ctx, &fo, &dir)) ||
	    (ret = clean ? cctl_cache_clean(&cli->ctx, &fo, &freed, &kept)
			 : cctl_cache_list(&cli->ctx, &fo, &v, &n)))
		goto out;
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kstr(b, "cache", dir);
		if (clean) {
			json_kint(b, "freed", (long long)freed);
			json_kint(b, "kept", (long long)kept);
		} else {
			json_karr(b, "entries");
			for (size_t i = 0; i < n; i++) {
				json_obj(b);
				json_kstr(b, "kind", v[i].kind);
				json_kstr(b, "name", v[i].name);
				json_kint(b, "size", (long long)v[i].size);
				json_end(b, '}');
			}
			json_end(b, ']');
		}
	} else if (clean) {
		char size[32];
		cctl_format_size(size, sizeof(size), freed);
		if (kept)
			printf("cleaned %s: %s freed; kept %zu file%s another "
			       "cudnnctl is using (a download under way)\n",
			       dir, size, kept, kept == 1 ? "" : "s");
		else
			printf("emptied %s: %s freed\n", dir, size);
	} else if (!n) {
		printf("the cache %s is empty\n", dir);
	} else {
		printf("%-9s %10s  %s   (in %s)\n", "KIND", "SIZE", "NAME", dir);
		for (size_t i = 0; i < n; i++) {
			char size[32];
			cctl_format_size(size, sizeof(size), v[i].size);
			printf("%-9s %10s  %s\n", v[i].kind, size, v[i].name);
		}
	}
out:
	cctl_cache_list_release(v, n);
	free(dir);
	return ret ? cli_fail(cli, ret) : 0;
}

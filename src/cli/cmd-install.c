/* cudnnctl install ARCHIVE | VERSION: an archive given by path, or the
 * release for VERSION fetched into the cache first; both through the same
 * install steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_result(struct cli *cli, const struct cctl_root *root,
			 const struct cctl_install_result *res, int ci_only)
{
	char *dir = cctl_path_join(root->path, "versions", res->rec.id, NULL);
	if (res->already) {
		printf("cuDNN %s is already installed in %s; nothing changed\n",
		       res->rec.id, dir);
	} else {
		char size[32];
		cctl_format_size(size, sizeof(size), res->rec.size);
		printf("installed cuDNN %s for CUDA %d (%s) into %s\n",
		       res->rec.version, res->rec.cuda,
		       res->rec.verified ? "sha256 verified" : "UNVERIFIED", dir);
		printf("  %zu files, %s", res->rec.nfiles, size);
		if (res->rec.verified)
			printf(", matched %s", res->rec.manifest);
		printf("\n");
		if (res->activated && ci_only) {
			printf("active: %s%s%s (for this job's later steps; shell "
			       "profiles left alone: --persist changes them)\n",
			       res->previous ? res->previous : "",
			       res->previous ? " -> " : "", res->rec.id);
		} else if (res->activated) {
			char *apply = cctl_env_command(root);
			printf("active: %s%s%s (new shells; this one: %s)\n",
			       res->previous ? res->previous : "",
			       res->previous ? " -> " : "", res->rec.id, apply);
			free(apply);
			if (res->previous && strcmp(res->previous, res->rec.id))
				cli_still_loaded(cli, root, res->previous);
		} else {
			/* the id: a version alone is ambiguous once two CUDA
			 * builds of it are installed */
			printf("active: %s (unchanged; cudnnctl switch %s to "
			       "use the new one)\n",
			       res->previous, res->rec.id);
		}
	}
	free(dir);
}

/* Whether the command changed anything: a new install, or another
 * version made active. */
static int install_changed(const struct cctl_install_result *res)
{
	return !res->already ||
	       (res->activated && (!res->previous || strcmp(res->previous, res->rec.id)));
}

static void json_result(struct cctl_buf *b, const struct cctl_root *root,
			const char *archive,
			const struct cctl_install_result *res)
{
	char *path = cctl_path_join(root->path, "versions", res->rec.id, NULL);
	json_kstr(b, "id", res->rec.id);
	json_kstr(b, "version", res->rec.version);
	json_kint(b, "cuda", res->rec.cuda);
	json_kstr(b, "platform", res->rec.platform);
	json_kbool(b, "verified", res->rec.verified);
	json_kstr(b, "manifest", res->rec.manifest);
	json_kstr(b, "archive", archive);
	json_kstr(b, "sha256", res->rec.archive_sha256);
	json_kstr(b, "root", root->path);
	json_kstr(b, "path", path);
	json_kbool(b, "already_installed", res->already);
	json_kbool(b, "changed", install_changed(res));
	json_kint(b, "files", (long long)res->rec.nfiles);
	json_kint(b, "size", (long long)res->rec.size);
	json_kbool(b, "activated", res->activated);
	json_kstr(b, "previous", res->previous);
	free(path);
}

/* install VERSION: cctl_install_version, and what it fetched in JSON. */
static int install_version(struct cli *cli, const struct cli_args *a,
			   struct cctl_root *root, struct cctl_manifest *m,
			   struct cctl_install_opts *o,
			   struct cctl_install_result *res,
			   struct cctl_fetch_result *f)
{
	struct cctl_fetch_opts fo;
	const struct cctl_release *r;
	int ret;

	cli_fetch_opts(a, &fo);
	ret = cctl_install_version(&cli->ctx, root, m, &fo, a->pos[0], o, &r, f, res);
	if (!ret && cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kobj(b, "download");
		cli_fetch_json(b, r, f->url, f);
		json_end(b, '}');
	}
	return ret;
}

int cli_install_first(struct cli *cli, const struct cli_args *a,
		      const char *version, int cuda)
{
	struct cctl_manifest m = { 0 };
	struct cctl_fetch_opts fo;
	struct cctl_install_opts o;
	struct cctl_install_result res;
	struct cctl_fetch_result f;
	const struct cctl_release *r;
	struct cctl_root root;
	int ret;

	memset(&res, 0, sizeof(res));
	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	o.archive = version;
	o.cuda = cuda;
	o.no_activate = 1;
	o.jobs = 0;
	cli_fetch_opts(a, &fo);
	/* the root locked for the install only: not while the command runs */
	if ((ret = cli_open_root(cli, &root, 1, 1)))
		return ret;
	if (!(ret = cli_load_manifests(cli, a, &fo, &m)))
		ret = cctl_install_version(&cli->ctx, &root, &m, &fo, version, &o,
					   &r, &f, &res);
	cli_progress_done(cli);
	if (!ret && !cli->quiet)
		cli_say("note", "installed %s into %s (nothing else changed) for "
				"the command",
			res.rec.id, root.path);
	if (ret)
		cctl_root_discard(&root);
	else
		cctl_root_close(&root);
	cctl_install_result_release(&res);
	cctl_fetch_result_release(&f);
	cctl_manifest_release(&m);
	return ret;
}

/* install with no argument: the version CUDNNCTL_VERSION or the nearest
 * pin file asks for (a CI job: checkout, cudnnctl install, cudnnctl exec
 * -- make test). */
int cli_pinned_arg(struct cli *cli, struct cli_args *a, const char *what)
{
	static char version[64];
	struct cctl_pin pin;
	int ret;

	if (a->npos)
		return 0;
	if ((ret = cctl_pin_choose(&cli->ctx, NULL, a->cuda, &pin)))
		return cli_fail(cli, ret);
	if (!pin.version)
		return cli_usage_error(cli, "'%s' needs %s VERSION (or a "
					    ".cudnn-version here or above, or "
					    "CUDNNCTL_VERSION)",
				       what, strcmp(what, "install") ? "a"
								   : "an archive or a");
	snprintf(version, sizeof(version), "%s", pin.version);
	a->pos[a->npos++] = version;
	a->cuda = pin.cuda;
	if (!a->quiet && !a->json)
		cli_say("note", "%s %s%s%.0d, as %s asks",
			strcmp(what, "install") ? "downloading" : "installing",
			version, pin.cuda ? " for CUDA " : "", pin.cuda, pin.source);
	cctl_pin_release(&pin);
	return 0;
}

int check_install(struct cli *cli, struct cli_args *a)
{
	int ret;
	if ((ret = cli_pinned_arg(cli, a, "install")))
		return ret;
	return check_scope(cli, a);
}

int cmd_install(struct cli *cli, const struct cli_args *a,
		struct cctl_root *root)
{
	struct cctl_manifest m = { 0 };
	struct cctl_fetch_opts fo;
	struct cctl_install_opts o;
	struct cctl_install_result res;
	struct cctl_fetch_result f;
	int by_version = !cctl_is_archive_arg(a->pos[0]), ret;

	if (by_version && cctl_is_folder(a->pos[0])) {
		/* an extracted archive is not a version number either */
		cli->ctx.code = CCTL_EUSAGE;
		cli->ctx.oserr = 0;
		snprintf(cli->ctx.msg, sizeof(cli->ctx.msg),
			 "'%.900s' is a folder: cudnnctl installs the .zip or "
			 ".tar.xz NVIDIA publishes, as downloaded (it checks its "
			 "SHA-256)",
			 a->pos[0]);
		snprintf(cli->ctx.hint, sizeof(cli->ctx.hint),
			 "give the archive itself, or a version to download "
			 "(cudnnctl install 9.1)");
		return cli_fail(cli, CCTL_EUSAGE);
	}
	memset(&res, 0, sizeof(res));
	memset(&f, 0, sizeof(f));
	cli_fetch_opts(a, &fo);
	if ((ret = cli_load_manifests(cli, a, &fo, &m)))
		goto out;
	memset(&o, 0, sizeof(o));
	o.archive = a->pos[0];
	o.allow_unknown = a->allow_unknown;
	o.cuda = a->cuda;
	o.no_activate = a->no_activate;
	o.act_flags = a->act_flags;
	o.jobs = (unsigned)a->jobs;
	if (by_version)
		ret = install_version(cli, a, root, &m, &o, &res, &f);
	else
		ret = cctl_install_archive(&cli->ctx, root, &m, &o, &res);
	if (ret)
		goto out;
	cli_progress_done(cli);
	/* then verify (CLI_VERIFY_AFTER) checks this version */
	cli->verify_version = cctl_xstrdup(res.rec.id);
	snprintf(cli->history_sha, sizeof(cli->history_sha), "%s", res.rec.archive_sha256);
	cli->changed = install_changed(&res);
	if (cli->json) {
		json_result(cli_result(cli), root, o.archive, &res);
		cli_still_loaded(cli, root,
				 res.activated && res.previous && strcmp(res.previous, res.rec.id)
					 ? res.previous
					 : NULL);
	} else
		print_result(cli, root, &res, !!(o.act_flags & CCTL_ACT_NO_PERSIST));
	if (res.activated || res.rec.active)
		ret = cli_ci_publish(cli, root, res.rec.id, install_changed(&res));
	if (ret)
		ret = 0; /* said; the exit status is cli->ci_status */
out:
	cctl_install_result_release(&res);
	cctl_fetch_result_release(&f);
	cctl_manifest_release(&m);
	return ret ? cli_fail(cli, ret) : 0;
}

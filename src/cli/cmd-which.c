/* cudnnctl which [VERSION] [--cuda N] and cudnnctl pin VERSION [--cuda N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What the error of a version that is not installed leaves out: which
 * pin asked for it. */
void cli_pin_note(const struct cctl_pin *pin)
{
	if (pin->file || (pin->source && !strcmp(pin->source, "CUDNNCTL_VERSION")))
		cli_say("note", "%s asks for %s%s%.0d", pin->source, pin->version,
			pin->cuda ? " for CUDA " : "", pin->cuda);
}

int cmd_which(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_pin pin;
	struct cctl_install in;
	char *active = NULL;
	int ret;

	if ((ret = cctl_pin_choose(&cli->ctx, a->npos ? a->pos[0] : NULL, a->cuda,
				   &pin)))
		return cli_fail(cli, ret);
	if (!pin.version) {
		if ((ret = cctl_store_active(&cli->ctx, root, &active)))
			goto fail;
		if (!active) {
			snprintf(cli->ctx.msg, sizeof(cli->ctx.msg),
				 "no version applies here: no pin file from here "
				 "up, no CUDNNCTL_VERSION, nothing active in '%s'",
				 root->path);
			snprintf(cli->ctx.hint, sizeof(cli->ctx.hint),
				 "cudnnctl pin VERSION writes ./.cudnn-version; "
				 "cudnnctl switch VERSION activates one");
			ret = CCTL_EFAIL;
			goto fail;
		}
	}
	memset(&in, 0, sizeof(in));
	if ((ret = cctl_store_find(&cli->ctx, root, active ? active : pin.version,
				   pin.cuda, &in))) {
		if (ret == CCTL_ENOTFOUND)
			ret = CCTL_EFAIL; /* which: exit 1, not installed */
		goto fail;
	}
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kstr(b, "id", in.id);
		json_kstr(b, "asked", active ? active : pin.version);
		json_kint(b, "cuda", pin.cuda);
		json_kstr(b, "source", pin.source);
		json_kstr(b, "file", pin.file);
		json_kbool(b, "installed", 1);
	} else {
		printf("%s, set by %s\n", in.id, pin.source);
	}
	cctl_install_release(&in);
	free(active);
	cctl_pin_release(&pin);
	return 0;
fail:
	ret = cli_fail(cli, ret);
	cli_pin_note(&pin);
	free(active);
	cctl_pin_release(&pin);
	return ret;
}

int cmd_pin(struct cli *cli, const struct cli_args *a, struct cctl_root *root)
{
	struct cctl_manifest m = { 0 };
	struct cctl_fetch_opts fo;
	const struct cctl_release *r = NULL;
	const char *platform = a->platform ? a->platform : cctl_host_platform();
	char *path = NULL;
	int ret;

	(void)root;
	/* a version some manifest knows (built in, cached, or fetched once),
	 * for any CUDA major unless --cuda says one */
	cli_fetch_opts(a, &fo);
	if ((ret = cli_load_manifests(cli, a, &fo, &m)))
		goto fail;
	r = cctl_release_newest(&m, a->pos[0], platform, a->cuda);
	if (!r && (ret = cli_choose_release(cli, a, &fo, &m, a->pos[0], platform, &r)))
		goto fail;
	if ((ret = cctl_pin_write(&cli->ctx, a->pos[0], a->cuda, &path)))
		goto fail;
	if (cli->json) {
		struct cctl_buf *b = cli_result(cli);
		json_kstr(b, "file", path);
		json_kstr(b, "version", a->pos[0]);
		json_kint(b, "cuda", a->cuda);
		json_kstr(b, "newest", r->version);
	} else {
		printf("pinned cuDNN %s%s%.0d in %s (the newest such release: %s)\n",
		       a->pos[0], a->cuda ? " for CUDA " : "", a->cuda, path, r->version);
	}
	free(path);
	cctl_manifest_release(&m);
	return 0;
fail:
	cctl_manifest_release(&m);
	return cli_fail(cli, ret);
}

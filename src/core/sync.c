/*
 * mirror sync (cudnnctl.h: cctl_mirror_sync): a folder in NVIDIA's redist
 * layout that cudnnctl, the action and the Ansible role take as --mirror,
 * as a folder, a file share or behind any web server.
 *
 *   <dir>/redistrib_<v>.json        NVIDIA's bytes, for each version chosen
 *   <dir>/cudnn/<platform>/<name>   the archives they name, verified
 *   <dir>/index.html                links to both (what a web server shows
 *                                   at / and cudnnctl reads for manifests)
 *   <dir>/.cudnnctl-sync/           the fetches in progress (a cache)
 *
 * A manifest is taken only when it agrees with the built-in ones (and the
 * --manifest files): no other size or hash for an archive they name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "fetch.h"
#include "internal.h"

#define MAX_MANIFEST_TEXT (4u << 20)

/* ------------------------------------------------------------ versions */

/* Compares version v, cut to as many components as bound has, with bound:
 * "9.20.0.48" against "9.20" is equal, so ">=9.20" takes 9.20's releases
 * and ">9.20" does not. */
static int cmp_cut(const char *v, const char *bound)
{
	char cut[64];
	size_t dots = 0, n = 0;
	for (const char *p = bound; *p; p++)
		dots += *p == '.';
	while (v[n] && n + 1 < sizeof(cut) && !(v[n] == '.' && !dots--))
		n++;
	snprintf(cut, sizeof(cut), "%.*s", (int)n, v);
	return cctl_version_cmp(cut, bound);
}

/* A version number "9", "9.20", "9.20.0.48": digits and single dots. */
static int number_ok(const char *s, size_t n)
{
	if (!n || s[0] == '.' || s[n - 1] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] == '.' && s[i + 1] != '.')))
			return 0;
	return n < 32;
}

/* One condition of a term ("9.19", ">=9.20"): 1 when v meets it, 0 when
 * not, -1 when it is not one. */
static int condition(const char *c, size_t n, const char *v)
{
	char num[32];
	size_t op = 0;
	int r;
	while (op < n && strchr("<>=", c[op]))
		op++;
	if (op > 2 || !number_ok(c + op, n - op))
		return -1;
	memcpy(num, c + op, n - op);
	num[n - op] = 0;
	r = cmp_cut(v, num);
	if (!op) /* a prefix: 9.1 takes 9.1.x, not 9.10 */
		return !r;
	if (op == 1)
		return c[0] == '<' ? r < 0 : c[0] == '>' ? r > 0 : !r;
	if (c[1] != '=')
		return -1;
	return c[0] == '<' ? r <= 0 : c[0] == '>' ? r >= 0 : -1;
}

/* A term: "all", or conditions separated by commas or spaces, all of
 * which v meets (1); 0; -1 for a term that is not one. */
static int term(const char *t, const char *v)
{
	int all = 1, seen = 0;
	if (!strcmp(t, "all"))
		return 1;
	while (*t) {
		size_t n = strcspn(t, ", ");
		if (n) {
			int r = condition(t, n, v);
			if (r < 0)
				return -1;
			all &= r;
			seen = 1;
		}
		t += n + (t[n] != 0);
	}
	return seen ? all : -1;
}

static int chosen(const struct cctl_sync_opts *so, const struct cctl_release *r)
{
	int ok = 0;
	for (size_t i = 0; i < so->nversions; i++)
		ok |= term(so->versions[i], r->version) == 1;
	if (!ok)
		return 0;
	if (so->nplatforms) {
		ok = 0;
		for (size_t i = 0; i < so->nplatforms; i++)
			ok |= !strcmp(so->platforms[i], r->platform);
	}
	if (ok && so->ncudas) {
		ok = 0;
		for (size_t i = 0; i < so->ncudas; i++)
			ok |= so->cudas[i] == r->cuda;
	}
	return ok;
}

static int check_terms(struct cctl_ctx *ctx, const struct cctl_sync_opts *so)
{
	if (!so->nversions)
		return cctl__error(ctx, CCTL_EUSAGE,
				   "mirror sync needs the versions to keep: "
				   "--versions all, a prefix such as 9.19, or "
				   "a range such as '>=9.20,<10' (repeatable)");
	for (size_t i = 0; i < so->nversions; i++)
		if (term(so->versions[i], "0") < 0)
			return cctl__error(ctx, CCTL_EUSAGE,
					   "--versions '%s' is not a version "
					   "prefix (9.19), a range ('>=9.20,<10') "
					   "or 'all'",
					   so->versions[i]);
	return 0;
}

/* ------------------------------------------------------------ results */

static struct cctl_sync_item *item(struct cctl_sync_result *res,
				   const char *name, const char *state,
				   uint64_t size)
{
	struct cctl_sync_item *it;
	res->v = cctl_xrealloc(res->v, (res->n + 1) * sizeof(*res->v));
	it = &res->v[res->n++];
	memset(it, 0, sizeof(*it));
	it->name = cctl_xstrdup(name);
	it->state = state;
	it->size = size;
	return it;
}

static void failed(struct cctl_ctx *ctx, struct cctl_sync_result *res,
		   const char *name, int code, int *first)
{
	struct cctl_sync_item *it = item(res, name, "failed", 0);
	it->code = code;
	it->msg = cctl_xstrdup(cctl__msg(ctx));
	res->failed++;
	if (!*first)
		*first = code;
}

void cctl_sync_result_release(struct cctl_sync_result *res)
{
	for (size_t i = 0; i < res->n; i++) {
		free(res->v[i].name);
		free(res->v[i].msg);
	}
	free(res->v);
	memset(res, 0, sizeof(*res));
}

/* ------------------------------------------------------------ manifests */

/* The manifests taken: each name and text, in the order read. */
struct texts {
	char **name;
	struct cctl_buf *text;
	char *kept; /* the mirror's own copy, the source's did not come */
	size_t n;
};

static void texts_add(struct texts *t, const char *name, struct cctl_buf *text)
{
	t->name = cctl_xrealloc(t->name, (t->n + 1) * sizeof(*t->name));
	t->text = cctl_xrealloc(t->text, (t->n + 1) * sizeof(*t->text));
	t->kept = cctl_xrealloc(t->kept, t->n + 1);
	t->kept[t->n] = 0;
	t->name[t->n] = cctl_xstrdup(name);
	t->text[t->n++] = *text;
	memset(text, 0, sizeof(*text));
}

static void texts_release(struct texts *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->name[i]);
		cctl_buf_release(&t->text[i]);
	}
	free(t->name);
	free(t->text);
	free(t->kept);
}

static const char *base_name(const char *path)
{
	const char *s = cctl__last_sep(path);
	return s ? s + 1 : path;
}

/* Whether manifest `name` names a release the filters choose. */
static int manifest_chosen(const struct cctl_manifest *m,
			   const struct cctl_sync_opts *so, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].source, name) && chosen(so, &m->v[i]))
			return 1;
	return 0;
}

/* A manifest the source lists but did not give this time (an error, or
 * bytes that disagree with what m holds): the mirror's own copy, when it
 * has one that agrees, is kept and stands for it, so that the releases it
 * names stay chosen (and unpruned) and in the index.  The failure itself
 * is the caller's to count. */
static void keep_own(struct cctl_ctx *ctx, const struct cctl_sync_opts *so,
		     const char *name, struct cctl_manifest *m, struct texts *t,
		     struct cctl_sync_result *res)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *path = cctl_path_join(so->dir, name, NULL);
	cctl_native_path(path);
	if (!cctl_os_read_file(NULL, path, &text) &&
	    cctl__manifest_take(ctx, m, name, text.buf ? text.buf : "",
				text.len)) {
		if (manifest_chosen(m, so, name))
			item(res, name, "kept", text.len);
		texts_add(t, name, &text);
		t->kept[t->n - 1] = 1;
	}
	cctl_buf_release(&text);
	free(path);
}

/* The --manifest files, and the source's manifests over HTTPS or from a
 * folder, each added to m when it agrees with what m holds. */
static int read_manifests(struct cctl_ctx *ctx, const struct cctl__source *src,
			  const struct cctl_fetch_opts *o,
			  const struct cctl_sync_opts *so, struct cctl_manifest *m,
			  struct texts *t, struct cctl_sync_result *res,
			  int *first)
{
	char **names = NULL;
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; i < so->nmanifests; i++) {
		struct cctl_buf text = CCTL_BUF_INIT;
		const char *name = base_name(so->manifests[i]);
		if (strstr(so->manifests[i], "://"))
			return cctl__error(ctx, CCTL_EUSAGE,
					   "--manifest '%s': mirror sync takes "
					   "manifests as files (it writes their "
					   "bytes); an HTTPS source's come with "
					   "--from",
					   so->manifests[i]);
		if (cctl__manifest_name_at(name) != strlen(name))
			return cctl__error(ctx, CCTL_EUSAGE,
					   "--manifest '%s': mirror sync keeps "
					   "NVIDIA's names (redistrib_<version>"
					   ".json)",
					   so->manifests[i]);
		if ((ret = cctl_os_read_file(ctx, so->manifests[i], &text)))
			return ret;
		if (cctl__manifest_take(ctx, m, name, text.buf ? text.buf : "",
					text.len))
			texts_add(t, name, &text);
		cctl_buf_release(&text);
	}
	if (src->kind == CCTL__SRC_HTTP) {
		if (!so->nmanifests)
			ret = cctl__error(ctx, CCTL_EMANIFEST,
					  "manifests are taken only over HTTPS or "
					  "from a folder, not from '%s'",
					  src->name);
		if (ret)
			cctl__hint(ctx, "sync from an HTTPS mirror or a "
					"folder, or give the manifests as files "
					"(--manifest FILE)");
		return ret;
	}
	if (!(ret = cctl__mirror_manifests(ctx, src, o, &names, &n))) {
		for (size_t i = 0; i < n && !ret; i++) {
			struct cctl_buf text = CCTL_BUF_INIT;
			int got = cctl__source_get(ctx, src, o, names[i],
						   MAX_MANIFEST_TEXT, &text);
			if (got == CCTL_EINTERRUPTED) {
				ret = got;
			} else if (got) {
				/* a cron job hears of it; the site keeps its copy */
				failed(ctx, res, names[i], got, first);
				keep_own(ctx, so, names[i], m, t, res);
			} else if (cctl__manifest_take(ctx, m, names[i],
						       text.buf ? text.buf : "",
						       text.len)) {
				texts_add(t, names[i], &text);
			} else {
				keep_own(ctx, so, names[i], m, t, res);
			}
			cctl_buf_release(&text);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* Writes a chosen manifest's bytes unless the file holds them already. */
static int write_manifest(struct cctl_ctx *ctx, const struct cctl_sync_opts *so,
			  const char *name, const struct cctl_buf *text,
			  struct cctl_sync_result *res)
{
	struct cctl_buf have = CCTL_BUF_INIT;
	char *path = cctl_path_join(so->dir, name, NULL);
	int same, ret = 0;
	same = !cctl_os_read_file(NULL, path, &have) && have.len == text->len &&
	       (!text->len || !memcmp(have.buf, text->buf, text->len));
	if (same)
		item(res, name, "present", text->len);
	else if (so->dry_run)
		item(res, name, "would fetch", text->len);
	else if (!(ret = cctl_os_write_file_atomic(ctx, path, text->buf,
						   text->len)))
		item(res, name, "written", text->len);
	cctl_buf_release(&have);
	free(path);
	return ret;
}

/* ------------------------------------------------------------- archives */

/* The archive of r at <dir>/<relative_path>: there and right, or fetched
 * through the sync's own cache and renamed into place. */
static int sync_archive(struct cctl_ctx *ctx, const struct cctl__source *src,
			const struct cctl_fetch_opts *o,
			const struct cctl_sync_opts *so, const struct cctl_release *r,
			struct cctl_sync_result *res, int *first)
{
	struct cctl_fetch_result fr;
	struct cctl_fetch_opts fo = *o;
	struct cctl_os_stat st;
	char *dest = cctl_path_join(so->dir, r->relative_path, NULL);
	char *cache = cctl_path_join(so->dir, ".cudnnctl-sync", NULL);
	char hex[65];
	int ret;

	cctl_native_path(dest);
	if ((ret = cctl__check_within(ctx, so->dir, dest, "archive of the mirror")))
		goto fail;
	if (!cctl_os_stat(NULL, dest, &st) && st.type == CCTL_OS_FILE &&
	    st.size == r->size && !cctl_sha256_file(ctx, dest, hex, NULL) &&
	    !strcmp(hex, r->sha256)) {
		item(res, r->relative_path, "present", r->size);
		goto out;
	}
	if (so->dry_run) {
		item(res, r->relative_path, "would fetch", r->size);
		goto out;
	}
	fo.cache = cache;
	if ((ret = cctl__fetch_from(ctx, src, &fo, r, 1, &fr, NULL))) {
		cctl_fetch_result_release(&fr);
		goto fail;
	}
	{
		char *parent = cctl_xstrdup(dest);
		char *sep = (char *)cctl__last_sep(parent);
		*sep = 0;
		ret = cctl_os_mkdirs(ctx, parent);
		free(parent);
	}
	if (!ret)
		ret = cctl_os_rename(ctx, fr.path, dest);
	res->fetched_bytes += fr.downloaded;
	cctl_fetch_result_release(&fr);
	if (ret)
		goto fail;
	item(res, r->relative_path, "fetched", r->size);
	goto out;
fail:
	failed(ctx, res, r->relative_path, ret, first);
out:
	free(dest);
	free(cache);
	return ret;
}

/* ---------------------------------------------------------------- prune */

static int kept(const struct cctl_manifest *m, const struct cctl_sync_opts *so,
		const char *rel)
{
	for (size_t i = 0; i < m->n; i++)
		if (chosen(so, &m->v[i]) && !strcmp(m->v[i].relative_path, rel))
			return 1;
	return 0;
}

static void prune_one(struct cctl_ctx *ctx, const struct cctl_sync_opts *so,
		      const char *rel, struct cctl_sync_result *res, int *first)
{
	char *path = cctl_path_join(so->dir, rel, NULL);
	struct cctl_os_stat st;
	int ret;
	cctl_native_path(path);
	if (!cctl_os_stat(NULL, path, &st) && st.type == CCTL_OS_FILE) {
		if (so->dry_run)
			item(res, rel, "would prune", st.size);
		else if ((ret = cctl_os_unlink(ctx, path)))
			failed(ctx, res, rel, ret, first);
		else
			item(res, rel, "pruned", st.size);
	}
	free(path);
}

/* Removes what cudnnctl would write and the filters no longer choose:
 * redistrib_*.json at the top, cudnn-*-archive.* under cudnn/<platform>/. */
static void prune(struct cctl_ctx *ctx, const struct cctl_manifest *m,
		  const struct cctl_sync_opts *so, const struct texts *t,
		  struct cctl_sync_result *res, int *first)
{
	char **names = NULL, **plats = NULL, *cudnn;
	size_t n = 0, np = 0;
	if (!cctl_os_listdir(NULL, so->dir, &names, &n))
		for (size_t i = 0; i < n; i++) {
			int keep = 0;
			if (cctl__manifest_name_at(names[i]) != strlen(names[i]))
				continue;
			for (size_t j = 0; j < t->n; j++)
				keep |= !strcmp(t->name[j], names[i]) &&
					manifest_chosen(m, so, names[i]);
			if (!keep)
				prune_one(ctx, so, names[i], res, first);
		}
	cudnn = cctl_path_join(so->dir, "cudnn", NULL);
	if (!cctl_os_listdir(NULL, cudnn, &plats, &np))
		for (size_t i = 0; i < np; i++) {
			char *pd = cctl_path_join(cudnn, plats[i], NULL), **files = NULL;
			size_t nf = 0;
			if (!cctl_os_listdir(NULL, pd, &files, &nf))
				for (size_t j = 0; j < nf; j++) {
					char *rel = cctl_xstrfmt("cudnn/%s/%s", plats[i],
								 files[j]);
					size_t len = strlen(files[j]);
					int ours = !strncmp(files[j], "cudnn-", 6) &&
						   (cctl__ends_with(files[j], "-archive.zip") ||
						    cctl__ends_with(files[j], "-archive.tar.xz"));
					if (ours && len && !kept(m, so, rel))
						prune_one(ctx, so, rel, res, first);
					free(rel);
					free(files[j]);
				}
			free(files);
			free(pd);
		}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	for (size_t i = 0; i < np; i++)
		free(plats[i]);
	free(names);
	free(plats);
	free(cudnn);
}

/* ---------------------------------------------------------- index page */

/* <dir>/index.html: a link to each manifest and archive the mirror has,
 * as a web server's folder listing would give them (cudnnctl reads the
 * manifests' links from it). */
static int write_index(struct cctl_ctx *ctx, const struct cctl_sync_opts *so,
		       const struct cctl_sync_result *res)
{
	struct cctl_buf page = CCTL_BUF_INIT;
	char *path = cctl_path_join(so->dir, "index.html", NULL);
	int ret;
	cctl_buf_addf(&page, "<!DOCTYPE html>\n<html><head><title>cuDNN mirror"
			     "</title></head><body>\n<h1>cuDNN mirror</h1>\n"
			     "<p>Written by cudnnctl mirror sync.</p>\n<ul>\n");
	for (size_t i = 0; i < res->n; i++) {
		const struct cctl_sync_item *it = &res->v[i];
		if (strcmp(it->state, "present") && strcmp(it->state, "fetched") &&
		    strcmp(it->state, "written") && strcmp(it->state, "kept"))
			continue;
		/* the names are a manifest's, checked: no '<', '"' or '&' */
		cctl_buf_addf(&page, "<li><a href=\"%s\">%s</a> %llu</li>\n",
			      it->name, it->name, (unsigned long long)it->size);
	}
	cctl_buf_addf(&page, "</ul>\n</body></html>\n");
	ret = cctl_os_write_file_atomic(ctx, path, page.buf, page.len);
	cctl_buf_release(&page);
	free(path);
	return ret;
}

/* ------------------------------------------------------------ the sync */

int cctl_mirror_sync(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		     const struct cctl_sync_opts *so, struct cctl_sync_result *res)
{
	struct cctl__source src; /* chosen once: every read of the sync's */
	struct cctl_manifest m = { 0 };
	struct texts t = { 0 };
	int ret, first = 0;

	memset(res, 0, sizeof(*res));
	if ((ret = check_terms(ctx, so)))
		return ret;
	if (o && o->offline)
		return cctl__error(ctx, CCTL_ENETWORK,
				   "--offline: nothing can be synced");
	cctl__source_open(&src, o);
	if ((ret = cctl_os_mkdirs(ctx, so->dir)) ||
	    (ret = cctl_manifest_load_builtin(ctx, &m)) ||
	    (ret = read_manifests(ctx, &src, o, so, &m, &t, res, &first)))
		goto out;
	for (size_t i = 0; i < t.n; i++)
		if (!t.kept[i] && manifest_chosen(&m, so, t.name[i]) &&
		    (ret = write_manifest(ctx, so, t.name[i], &t.text[i], res)))
			failed(ctx, res, t.name[i], ret, &first);
	for (size_t i = 0; i < m.n && !cctl__interrupt(ctx); i++) {
		const struct cctl_release *r = &m.v[i];
		int dup = 0, from_synced = 0;
		if (!chosen(so, r))
			continue;
		for (size_t j = 0; j < t.n; j++)
			from_synced |= !strcmp(t.name[j], r->source);
		for (size_t j = 0; j < i; j++)
			dup |= chosen(so, &m.v[j]) &&
			       !strcmp(m.v[j].relative_path, r->relative_path);
		/* a built-in manifest the source does not offer is not NVIDIA's
		 * layout of this mirror: its archives are left out */
		if (dup || !from_synced)
			continue;
		if (sync_archive(ctx, &src, o, so, r, res, &first) == CCTL_EINTERRUPTED)
			break;
	}
	if (cctl_os_interrupted()) {
		ret = cctl__interrupt(ctx);
		goto out;
	}
	if (so->prune)
		prune(ctx, &m, so, &t, res, &first);
	if (!so->dry_run && (ret = write_index(ctx, so, res)))
		goto out;
	ret = first;
	if (ret) /* the message of the first failure, for the caller */
		for (size_t i = 0; i < res->n; i++)
			if (res->v[i].code == ret) {
				cctl__error(ctx, ret, "%s", res->v[i].msg);
				break;
			}
out:
	cctl__source_close(&src);
	texts_release(&t);
	cctl_manifest_release(&m);
	return ret;
}

/*
 * The mirror's manifests: reading its index page, fetching the
 * redistrib_*.json files that are new, and keeping those that can be
 * trusted in the cache (<cache>/manifests/).
 *
 * Built-in manifests are trusted.  A fetched one is taken only over HTTPS
 * or from a folder, and only when it gives no other size or SHA-256 for an
 * archive that a manifest already known names: the hash of everything
 * installed comes from a manifest that came over an authenticated channel.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "fetch.h"
#include "internal.h"

#define MAX_INDEX (4u << 20)
#define MAX_MANIFEST (4u << 20)

#define MAX_NEW 32          /* new manifests fetched by one update */
#define SMALL_DEADLINE_S 120 /* an index page or a manifest, whole */
#define UPDATE_DEADLINE_S 600 /* one update, all its manifests */

/* Names: appended as they come, then sorted and made unique once
 * (names_sort): an index page of 190,000 names takes milliseconds, not a
 * quadratic minute. */
struct names {
	char **v;
	size_t n;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_sort(struct names *s)
{
	size_t k = 0;
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_name);
	for (size_t i = 0; i < s->n; i++) {
		if (k && !strcmp(s->v[k - 1], s->v[i]))
			free(s->v[i]);
		else
			s->v[k++] = s->v[i];
	}
	s->n = k;
}

/* In s, once sorted. */
static int names_has(const struct names *s, const char *name)
{
	return s->n && bsearch(&name, s->v, s->n, sizeof(*s->v), cmp_name);
}

static void names_add(struct names *s, const char *name)
{
	if (s->n % 64 == 0)
		s->v = cctl_xrealloc(s->v, (s->n + 64) * sizeof(*s->v));
	s->v[s->n++] = cctl_xstrdup(name);
}

static void names_release(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* "redistrib_9.1.0.json": digits and dots between the prefix and the
 * extension, nothing else (no path, no query). */
size_t cctl__manifest_name_at(const char *p)
{
	size_t n = strlen("redistrib_"), digits = 0;
	if (strncmp(p, "redistrib_", n) || !isdigit((unsigned char)p[n]))
		return 0;
	while (isdigit((unsigned char)p[n + digits]) || p[n + digits] == '.')
		digits++;
	if (p[n + digits - 1] != '.' || strncmp(p + n + digits, "json", 4) ||
	    isalnum((unsigned char)p[n + digits + 4]))
		return 0;
	return n + digits + 4;
}

/* The manifest names an index page links (or any text names). */
static void scan_index(const char *text, struct names *out)
{
	/* one pass, no strstr: a sanitizer's strstr measures the rest of the
	 * text at every call (quadratic on a 4 MB page) */
	for (const char *p = text; (p = strchr(p, 'r')); p++) {
		size_t n = strncmp(p, "redistrib_", 10) ? 0
							: cctl__manifest_name_at(p);
		if (n && n < 64) {
			char name[64];
			memcpy(name, p, n);
			name[n] = '\0';
			names_add(out, name);
		}
	}
}

struct grow {
	struct cctl_buf *out;
	size_t max;
	struct cctl_ctx *ctx;
	const char *url;
	int answered;
	struct cctl__pace pace;
};

static int grow_start(void *ud, int status, int64_t length, uint64_t start)
{
	struct grow *g = ud;
	(void)status, (void)length, (void)start;
	g->answered = 1;
	return 0;
}

static int grow_data(void *ud, const void *data, size_t len)
{
	struct grow *g = ud;
	int ret;
	if ((ret = cctl__interrupt(g->ctx)) ||
	    (ret = cctl__pace_check(g->ctx, &g->pace, len)))
		return ret;
	if (g->out->len + len > g->max)
		return cctl__error(g->ctx, CCTL_EMANIFEST,
				   "'%s' is larger than %zu bytes: not an index "
				   "page or a manifest",
				   g->url, g->max);
	cctl_buf_add(g->out, data, len);
	return 0;
}

/* A small file (an index page, a manifest) over HTTP(S), at most max
 * bytes. */
static int get_small(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		     const char *url, size_t max, struct cctl_buf *out)
{
	struct grow g = { out, max, ctx, url, 0, { 0 } };
	const struct cctl_os_http_sink sink = { grow_start, grow_data, &g };
	int ret;
	/* the whole file within its deadline, at the minimum rate all along
	 * (from the request on: the headers count) */
	cctl__pace_begin(&g.pace, url, cctl__fetch_timeout(o, 1),
			 SMALL_DEADLINE_S);
	ret = cctl_os_http_get(ctx, url, 0, 0, cctl__fetch_timeout(o, 0),
			       cctl__fetch_timeout(o, 1), &sink);
	if (ret == CCTL_ENETWORK && cctl_os_interrupted())
		ret = cctl__interrupt(ctx);
	if (ret == CCTL_ENETWORK && !g.answered)
		cctl__unreachable_hint(ctx);
	return ret;
}

int cctl_manifest_load_url(struct cctl_ctx *ctx,
			   const struct cctl_fetch_opts *o,
			   struct cctl_manifest *m, const char *url)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	int ret;
	if (strncmp(url, "https://", 8)) {
		cctl__error(ctx, CCTL_EMANIFEST,
			    "manifest '%s' refused: manifests are taken only "
			    "over HTTPS or from a file",
			    url);
		cctl__hint(ctx, "give its https:// address, or download it and "
				"pass the file (--manifest FILE)");
		return CCTL_EMANIFEST;
	}
	if (o && o->offline) {
		cctl__error(ctx, CCTL_ENETWORK,
			    "--offline: the manifest '%s' cannot be fetched", url);
		cctl__hint(ctx, "download it and pass the file (--manifest FILE)");
		return CCTL_ENETWORK;
	}
	if (!(ret = get_small(ctx, o, url, MAX_MANIFEST, &text)))
		ret = cctl_manifest_parse(ctx, m, text.buf ? text.buf : "",
					  text.len, url);
	cctl_buf_release(&text);
	return ret;
}

int cctl__source_get(struct cctl_ctx *ctx, const struct cctl__source *s,
		     const struct cctl_fetch_opts *o, const char *rel, size_t max,
		     struct cctl_buf *out)
{
	char *src = cctl__source_path(ctx, s, rel);
	int ret;
	if (!src)
		return ctx ? ctx->code : CCTL_EFAIL;
	if (s->kind != CCTL__SRC_FOLDER)
		ret = get_small(ctx, o, src, max, out);
	else
		ret = cctl_os_read_file(ctx, src, out);
	free(src);
	return ret;
}

/* The manifests the mirror offers: linked from its index page, or the
 * files of a folder mirror. */
static int mirror_names(struct cctl_ctx *ctx, const struct cctl__source *s,
			const struct cctl_fetch_opts *o, struct names *out)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	int ret;
	if (s->kind != CCTL__SRC_FOLDER) {
		if (!(ret = cctl__source_get(ctx, s, o, "", MAX_INDEX, &text)))
			scan_index(text.buf ? text.buf : "", out);
	} else {
		char **files = NULL;
		size_t n = 0;
		char *dir = cctl__source_path(ctx, s, "");
		ret = cctl_os_listdir(ctx, dir, &files, &n);
		for (size_t i = 0; i < n; i++) {
			if (cctl__manifest_name_at(files[i]) == strlen(files[i]))
				names_add(out, files[i]);
			free(files[i]);
		}
		free(files);
		free(dir);
	}
	cctl_buf_release(&text);
	names_sort(out);
	return ret;
}

int cctl__mirror_manifests(struct cctl_ctx *ctx, const struct cctl__source *s,
			   const struct cctl_fetch_opts *o, char ***names,
			   size_t *n)
{
	struct names offered = { 0 };
	int ret = mirror_names(ctx, s, o, &offered);
	*names = offered.v;
	*n = offered.n;
	return ret;
}

static char *manifests_dir(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o)
{
	char *cache = NULL, *dir;
	if (cctl_fetch_cache_dir(ctx, o, &cache))
		return NULL;
	dir = cctl_path_join(cache, "manifests", NULL);
	free(cache);
	return dir;
}

/* The archives of `add` that `known` gives another size or hash for. */
static const struct cctl_release *conflict(const struct cctl_manifest *known,
					   const struct cctl_manifest *add,
					   const struct cctl_release **with)
{
	for (size_t i = 0; i < add->n; i++)
		for (size_t k = 0; k < known->n; k++) {
			const struct cctl_release *a = &add->v[i], *b = &known->v[k];
			if (!strcmp(a->file_name, b->file_name) &&
			    (a->size != b->size || strcmp(a->sha256, b->sha256))) {
				*with = b;
				return a;
			}
		}
	return NULL;
}

/* Parses text as manifest `name` and adds it to m unless it disagrees
 * with what m already knows; 1 when added. */
static int take(struct cctl_ctx *ctx, struct cctl_manifest *m,
		const char *name, const char *text, size_t len)
{
	struct cctl_manifest one = { 0 };
	const struct cctl_release *bad, *with = NULL;
	int ok = 0;
	if (cctl_manifest_parse(ctx, &one, text, len, name)) {
		cctl__warn(ctx, "%s; left out", cctl__msg(ctx));
	} else if ((bad = conflict(m, &one, &with))) {
		cctl__warn(ctx,
			   "manifest '%s' gives '%s' as %llu bytes, sha256 %s; "
			   "%s says %llu bytes, sha256 %s: left out",
			   name, bad->file_name, (unsigned long long)bad->size,
			   bad->sha256, with->source,
			   (unsigned long long)with->size, with->sha256);
	} else {
		ok = !cctl_manifest_parse(ctx, m, text, len, name);
	}
	cctl_manifest_release(&one);
	return ok;
}

int cctl__manifest_take(struct cctl_ctx *ctx, struct cctl_manifest *m,
			const char *name, const char *text, size_t len)
{
	return take(ctx, m, name, text, len);
}

int cctl_manifest_load_cached(struct cctl_ctx *ctx,
			      const struct cctl_fetch_opts *o,
			      struct cctl_manifest *m)
{
	char *dir = manifests_dir(NULL, o), **files = NULL;
	size_t n = 0;
	struct cctl_os_stat st;
	if (!dir || cctl_os_stat(NULL, dir, &st) || st.type != CCTL_OS_DIR ||
	    cctl_os_listdir(NULL, dir, &files, &n)) {
		free(dir);
		return 0; /* nothing fetched yet */
	}
	for (size_t i = 0; i < n; i++) {
		struct cctl_buf text = CCTL_BUF_INIT;
		char *path = cctl_path_join(dir, files[i], NULL);
		if (cctl__manifest_name_at(files[i]) == strlen(files[i]) &&
		    !cctl_os_read_file(NULL, path, &text))
			take(ctx, m, files[i], text.buf ? text.buf : "", text.len);
		cctl_buf_release(&text);
		free(path);
		free(files[i]);
	}
	free(files);
	free(dir);
	return 0;
}

/* Built in, or fetched before. */
static void known_names(const char *dir, struct names *out)
{
	char **files = NULL;
	size_t n = 0;
	const char *b;
	for (size_t i = 0; (b = cctl__builtin_manifest_name(i)); i++)
		names_add(out, b);
	if (dir && !cctl_os_listdir(NULL, dir, &files, &n))
		for (size_t i = 0; i < n; i++) {
			names_add(out, files[i]);
			free(files[i]);
		}
	free(files);
	names_sort(out);
}

/* Fetches one new manifest; kept in the cache when it is taken (1), else
 * 0; -1 when interrupted. */
static int fetch_one(struct cctl_ctx *ctx, const struct cctl__source *s,
		     const struct cctl_fetch_opts *o, const char *dir,
		     const char *name, struct cctl_manifest *m)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *path = NULL;
	int ret, kept = 0;
	if ((ret = cctl__source_get(ctx, s, o, name, MAX_MANIFEST, &text))) {
		if (ret == CCTL_EINTERRUPTED) {
			cctl_buf_release(&text);
			return -1;
		}
		cctl__warn(ctx, "%s; left out", cctl__msg(ctx));
	} else if (take(ctx, m, name, text.buf ? text.buf : "", text.len)) {
		path = cctl_path_join(dir, name, NULL);
		kept = !cctl_os_mkdirs(ctx, dir) &&
		       !cctl_os_write_file_atomic(ctx, path, text.buf, text.len);
	}
	free(path);
	cctl_buf_release(&text);
	return kept;
}

/* Newest first: "redistrib_9.10.0.json" before "redistrib_9.9.0.json". */
static int cmp_newest(const void *a, const void *b)
{
	return cctl_natural_cmp(*(char *const *)b, *(char *const *)a);
}

/* Fetches the offered manifests that are not known: the newest MAX_NEW
 * of them, within UPDATE_DEADLINE_S, until a Ctrl+C. */
static int fetch_new(struct cctl_ctx *ctx, const struct cctl__source *s,
		     const struct cctl_fetch_opts *o, const char *dir,
		     const struct names *offered,
		     const struct names *known, struct cctl_manifest *m,
		     size_t *added, size_t *refused)
{
	struct names todo = { 0 };
	double start = cctl_os_now_ms();
	int ret = 0;
	for (size_t i = 0; i < offered->n; i++)
		if (!names_has(known, offered->v[i]))
			names_add(&todo, offered->v[i]);
	if (todo.n > 1)
		qsort(todo.v, todo.n, sizeof(*todo.v), cmp_newest);
	if (todo.n > MAX_NEW)
		cctl__warn(ctx, "the mirror offers %zu manifests cudnnctl does "
				"not know; fetching the newest %d (run the command "
				"again for more)",
			   todo.n, MAX_NEW);
	for (size_t i = 0; i < todo.n && i < MAX_NEW; i++) {
		int got;
		if ((ret = cctl__interrupt(ctx)))
			break;
		if (cctl_os_now_ms() - start > UPDATE_DEADLINE_S * 1000.0) {
			cctl__warn(ctx, "stopped after %d s with %zu manifests not "
					"fetched (run the command again for them)",
				   UPDATE_DEADLINE_S,
				   (todo.n < MAX_NEW ? todo.n : MAX_NEW) - i);
			break;
		}
		if ((got = fetch_one(ctx, s, o, dir, todo.v[i], m)) < 0) {
			ret = ctx ? ctx->code : CCTL_EINTERRUPTED;
			break;
		}
		if (got)
			(*added)++;
		else
			(*refused)++;
	}
	names_release(&todo);
	return ret;
}

int cctl_manifests_update(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
			  struct cctl_manifest *m, size_t *added,
			  size_t *refused)
{
	struct cctl__source mirror;
	int ret;
	cctl__source_open(&mirror, o);
	ret = cctl__manifests_update_from(ctx, &mirror, o, m, added, refused);
	cctl__source_close(&mirror);
	return ret;
}

int cctl__manifests_update_from(struct cctl_ctx *ctx,
				const struct cctl__source *mirror,
				const struct cctl_fetch_opts *o,
				struct cctl_manifest *m, size_t *added,
				size_t *refused)
{
	struct names offered = { 0 }, known = { 0 };
	char *dir = NULL;
	int ret;

	*added = *refused = 0;
	if (o && o->offline)
		return cctl__error(ctx, CCTL_ENETWORK,
				   "--offline: the mirror's manifests cannot be "
				   "read");
	if (mirror->kind == CCTL__SRC_HTTP) {
		cctl__error(ctx, CCTL_EMANIFEST,
			    "manifests are taken only over HTTPS or from a "
			    "folder, not from '%s'",
			    mirror->name);
		cctl__hint(ctx, "use an https:// mirror or a folder; archives "
				"may come over plain HTTP once a manifest vouches "
				"for them (--manifest FILE)");
		return CCTL_EMANIFEST;
	}
	if (!(dir = manifests_dir(ctx, o)))
		return ctx ? ctx->code : CCTL_EFAIL;
	if ((ret = mirror_names(ctx, mirror, o, &offered)))
		goto out;
	known_names(dir, &known);
	ret = fetch_new(ctx, mirror, o, dir, &offered, &known, m, added, refused);
out:
	names_release(&offered);
	names_release(&known);
	free(dir);
	return ret;
}

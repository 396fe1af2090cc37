/*
 * PATH values as the Windows registry holds them (portable.h): splitting
 * into entries, comparing entries as Windows does, taking out a root's
 * entries and putting the active one first.  Pure string logic, compiled on
 * every platform for the unit tests and the fuzz target; env-win.c does
 * the registry.
 */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "../core/internal.h"
#include "portable.h"

static int is_sep(wchar_t c)
{
	return c == L'\\' || c == L'/';
}

/* Case-insensitive comparison of n characters, '/' and '\' alike. */
static int path_ieq(const wchar_t *a, const wchar_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		wchar_t x = a[i] == L'/' ? L'\\' : a[i];
		wchar_t y = b[i] == L'/' ? L'\\' : b[i];
		if (x != y && towlower((wint_t)x) != towlower((wint_t)y))
			return 0;
	}
	return 1;
}

static size_t trim_seps(const wchar_t *s, size_t n)
{
	while (n && is_sep(s[n - 1]))
		n--;
	return n;
}

int cctl_pathvalue_same(const wchar_t *a, size_t na, const wchar_t *b,
			size_t nb)
{
	na = trim_seps(a, na);
	nb = trim_seps(b, nb);
	return na == nb && path_ieq(a, b, na);
}

int cctl_pathvalue_ours(const wchar_t *e, size_t n, const wchar_t *root)
{
	size_t rl = trim_seps(root, wcslen(root));
	/* an empty root (or "\\") is no root: it would claim "\\versions\\" */
	if (!rl || n <= rl || !path_ieq(e, root, rl) || !is_sep(e[rl]))
		return 0;
	e += rl + 1;
	n -= rl + 1;
	return (n >= 11 && path_ieq(e, L"current\\bin", 11)) ||
	       (n >= 9 && path_ieq(e, L"versions\\", 9));
}

/* An entry is root's, or a copy of add: as written, or as Windows
 * expands it (%SystemDrive%\cudnn\current\bin is ours too). */
static int matches(const wchar_t *p, size_t n, const struct cctl_pathvalue_edit *e,
		   int *is_add)
{
	wchar_t *x = e->expand && wmemchr(p, L'%', n) ? e->expand(p, n) : NULL;
	size_t alen = e->add ? wcslen(e->add) : 0;
	int ours = cctl_pathvalue_ours(p, n, e->root) ||
		   (x && cctl_pathvalue_ours(x, wcslen(x), e->root));
	*is_add = e->add && (cctl_pathvalue_same(p, n, e->add, alen) ||
			     (x && cctl_pathvalue_same(x, wcslen(x), e->add, alen)));
	free(x);
	return ours;
}

/* Whether an entry lies under folder (as written or expanded). */
static int entry_under(const wchar_t *p, size_t n, const wchar_t *folder,
		       wchar_t *(*expand)(const wchar_t *, size_t))
{
	wchar_t *x = expand && wmemchr(p, L'%', n) ? expand(p, n) : NULL;
	wchar_t *raw = cctl_xcalloc(n + 1, sizeof(wchar_t));
	int under;
	memcpy(raw, p, n * sizeof(wchar_t));
	under = cctl_pathvalue_under(x ? x : raw, folder);
	free(raw);
	free(x);
	return under;
}

wchar_t *cctl_pathvalue_edit(const wchar_t *old, const struct cctl_pathvalue_edit *e)
{
	size_t cap = (old ? wcslen(old) : 0) + (e->add ? wcslen(e->add) : 0) + 2;
	size_t alen = e->add ? wcslen(e->add) : 0, len = 0, kept = 0, at = 0;
	size_t items = 0;
	wchar_t *out = cctl_xcalloc(cap, sizeof(wchar_t));
	const wchar_t **pv = cctl_xcalloc(cap, sizeof(*pv));
	size_t *nv = cctl_xcalloc(cap, sizeof(*nv));
	/* every other entry as it was, empty ones too (a trailing ';' is an
	 * empty last entry) */
	for (const wchar_t *p = old && *old ? old : NULL; p;) {
		size_t n = wcscspn(p, L";");
		int is_add;
		if (!matches(p, n, e, &is_add) && !is_add) {
			pv[kept] = p;
			nv[kept++] = n;
			/* add goes after the last entry under e->after, else
			 * first */
			if (e->after && n && entry_under(p, n, e->after, e->expand))
				at = kept;
		}
		p = p[n] ? p + n + 1 : NULL;
	}
	for (size_t i = 0; i <= kept; i++) {
		if (i == at && e->add) {
			if (items++)
				out[len++] = L';';
			memcpy(out + len, e->add, alen * sizeof(wchar_t));
			len += alen;
		}
		if (i == kept)
			break;
		if (items++)
			out[len++] = L';';
		memcpy(out + len, pv[i], nv[i] * sizeof(wchar_t));
		len += nv[i];
	}
	out[len] = 0;
	free(pv);
	free(nv);
	return out;
}

wchar_t *cctl_pathvalue_rebuild(const wchar_t *old, const wchar_t *root,
				const wchar_t *add)
{
	const struct cctl_pathvalue_edit e = { root, add, NULL, NULL };
	return cctl_pathvalue_edit(old, &e);
}

int cctl_pathvalue_longest(const wchar_t *v, const wchar_t *at[3],
			   size_t len[3])
{
	int count = 0;
	for (int i = 0; i < 3; i++) {
		at[i] = NULL;
		len[i] = 0;
	}
	for (const wchar_t *p = v; *p;) {
		size_t n = wcscspn(p, L";");
		for (int i = 0; i < 3; i++)
			if (n > len[i]) {
				for (int j = 2; j > i; j--) {
					len[j] = len[j - 1];
					at[j] = at[j - 1];
				}
				len[i] = n;
				at[i] = p;
				if (count < 3)
					count++;
				break;
			}
		p += n + (p[n] ? 1 : 0);
	}
	return count;
}

int cctl_pathvalue_under(const wchar_t *value, const wchar_t *root)
{
	size_t rl = trim_seps(root, wcslen(root)), vl = wcslen(value);
	return rl && vl >= rl && path_ieq(value, root, rl) &&
	       (is_sep(value[rl]) || !value[rl]);
}

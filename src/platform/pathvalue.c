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

wchar_t *cctl_pathvalue_rebuild(const wchar_t *old, const wchar_t *root,
				const wchar_t *add)
{
	size_t cap = (old ? wcslen(old) : 0) + (add ? wcslen(add) : 0) + 2;
	size_t alen = add ? wcslen(add) : 0, len = alen;
	wchar_t *out = cctl_xcalloc(cap, sizeof(wchar_t));
	if (add)
		memcpy(out, add, alen * sizeof(wchar_t));
	for (const wchar_t *p = old; p && *p;) {
		size_t n = wcscspn(p, L";");
		if (n && !cctl_pathvalue_ours(p, n, root) &&
		    !(add && cctl_pathvalue_same(p, n, add, alen))) {
			if (len)
				out[len++] = L';';
			memcpy(out + len, p, n * sizeof(wchar_t));
			len += n;
		}
		p += n + (p[n] ? 1 : 0);
	}
	out[len] = 0;
	return out;
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

/* Fuzz target: the PATH value logic of the Windows OS layer
 * (src/platform/pathvalue.c), compiled on Linux.  The input is an old PATH
 * value, a root and the entry to add, separated by newlines (no third line:
 * nothing to add, as in deactivate).  Besides memory errors it checks what
 * the registry code relies on: the added entry comes first, every other
 * entry is one of the old ones in the old order, none of the root's are
 * left, no entry is empty, and doing it twice changes nothing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/portable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next newline-separated part as a wide string (bytes as code points,
 * NUL bytes skipped); NULL when there is none. */
static wchar_t *part(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nl;
	wchar_t *w;
	size_t n = 0;
	if (!*p)
		return NULL;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	w = calloc((size_t)((nl ? nl : end) - *p) + 1, sizeof(wchar_t));
	if (!w)
		abort();
	for (const uint8_t *q = *p; q < (nl ? nl : end); q++)
		if (*q)
			w[n++] = (wchar_t)*q;
	*p = nl ? nl + 1 : NULL;
	return w;
}

/* v is exactly old's entries less root's and add's copies, in order,
 * empty ones too (a trailing ';' is an empty last entry). */
static void check_rest(const wchar_t *v, const wchar_t *old,
		       const wchar_t *root, const wchar_t *add)
{
	size_t cap = wcslen(old) + 1, len = 0, kept = 0;
	wchar_t *want = calloc(cap, sizeof(wchar_t));
	if (!want)
		abort();
	for (const wchar_t *q = *old ? old : NULL; q;) {
		size_t n = wcscspn(q, L";");
		wchar_t *e = calloc(n + 1, sizeof(wchar_t));
		if (!e)
			abort();
		wmemcpy(e, q, n);
		/* an entry of the root's is under the root */
		if (cctl_pathvalue_ours(q, n, root) && !cctl_pathvalue_under(e, root))
			abort();
		if (!cctl_pathvalue_ours(q, n, root) &&
		    !(add && cctl_pathvalue_same(q, n, add, wcslen(add)))) {
			if (kept++)
				want[len++] = L';';
			wmemcpy(want + len, q, n);
			len += n;
		}
		free(e);
		q = q[n] ? q + n + 1 : NULL;
	}
	if (wcscmp(v, want))
		abort();
	free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	wchar_t *old = part(&p, end), *root = part(&p, end), *add = part(&p, end);
	wchar_t *once, *twice, *removed;
	const wchar_t *at[3];
	size_t len[3], alen;
	int count;

	if (!root || !old)
		goto out;
	if (add && (wcschr(add, L';') || !*add)) {
		free(add);
		add = NULL;
	}
	alen = add ? wcslen(add) : 0;
	once = cctl_pathvalue_rebuild(old, root, add);
	if (add && (wcsncmp(once, add, alen) || (once[alen] && once[alen] != L';')))
		abort();
	check_rest(add ? once + alen + (once[alen] ? 1 : 0) : once, old, root, add);
	twice = cctl_pathvalue_rebuild(once, root, add);
	if (wcscmp(once, twice))
		abort();
	removed = cctl_pathvalue_rebuild(once, root, NULL);
	for (const wchar_t *q = removed; *q;) {
		size_t n = wcscspn(q, L";");
		if (cctl_pathvalue_ours(q, n, root))
			abort();
		q += n + (q[n] ? 1 : 0);
	}
	count = cctl_pathvalue_longest(old, at, len);
	for (int i = 0; i < count; i++)
		if (!len[i] || at[i] < old || at[i] + len[i] > old + wcslen(old) ||
		    (i && len[i] > len[i - 1]))
			abort();
	free(once);
	free(twice);
	free(removed);
out:
	free(old);
	free(root);
	free(add);
	return 0;
}

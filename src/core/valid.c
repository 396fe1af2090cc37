/*
 * What a value from outside (a manifest, an index page, an install
 * record) must look like before it becomes part of a path or an id, and
 * the last check before a path is read or written: that it lies inside
 * the folder it was made for.
 *
 * Both separators count on every platform: a manifest written for
 * Windows is read on Linux and the other way round.
 */
#include <string.h>

#include "internal.h"

#define MAX_VERSION_PART 6 /* digits: NVIDIA's builds run to 3 (9.0.0.312) */
#define MAX_RELPATH 512

static int is_sep(char c)
{
	return c == '/' || c == '\\';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int cctl_version_valid(const char *v)
{
	int parts = 0;
	if (!v)
		return 0;
	for (;;) {
		size_t n = 0;
		while (is_digit(v[n]))
			n++;
		if (!n || n > MAX_VERSION_PART)
			return 0;
		v += n;
		if (++parts > 4)
			return 0;
		if (!*v)
			return 1;
		if (*v++ != '.')
			return 0;
	}
}

int cctl_cuda_valid(long cuda)
{
	return cuda >= 1 && cuda <= 999;
}

int cctl_id_valid(const char *id)
{
	const char *dash = id ? strrchr(id, '-') : NULL;
	char version[64];
	size_t n;
	if (!dash || strncmp(dash, "-cuda", 5) || !is_digit(dash[5]))
		return 0;
	for (const char *p = dash + 5; *p; p++)
		if (!is_digit(*p) || p - (dash + 5) >= 3)
			return 0;
	n = (size_t)(dash - id);
	if (n >= sizeof(version))
		return 0;
	memcpy(version, id, n);
	version[n] = '\0';
	return cctl_version_valid(version);
}

int cctl_relpath_valid(const char *p)
{
	size_t len = p ? strlen(p) : 0;
	if (!len || len > MAX_RELPATH || is_sep(p[0]))
		return 0;
	for (const char *c = p; *c; c++) {
		unsigned char u = (unsigned char)*c;
		/* controls, DEL, non-ASCII, '\' and ':' (a drive letter, an
		 * NTFS stream): none in NVIDIA's paths */
		if (u < 0x20 || u >= 0x7f || *c == '\\' || *c == ':')
			return 0;
	}
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");
		if (!n || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += n;
		if (*c && !*++c)
			return 0; /* a trailing '/' names a folder */
	}
	return 1;
}

int cctl_path_within(const char *base, const char *path)
{
	size_t n = base ? strlen(base) : 0;
	const char *rest;
	if (!n || !path || strncmp(path, base, n))
		return 0;
	rest = path + n;
	if (!is_sep(base[n - 1])) {
		if (!is_sep(*rest))
			return 0; /* "/opt/cudnn2" is not inside "/opt/cudnn" */
		rest++;
	}
	if (!*rest)
		return 0;
	while (*rest) {
		size_t k = 0;
		while (rest[k] && !is_sep(rest[k]))
			k++;
		if (!k || (k == 1 && rest[0] == '.') ||
		    (k == 2 && rest[0] == '.' && rest[1] == '.'))
			return 0;
		rest += k;
		if (*rest)
			rest++;
		if (!*rest && is_sep(rest[-1]))
			return 0;
	}
	return 1;
}

int cctl__check_within(struct cctl_ctx *ctx, const char *base,
		       const char *path, const char *what)
{
	if (cctl_path_within(base, path))
		return 0;
	cctl__error(ctx, CCTL_EMANIFEST, "%s '%s' is not inside '%s': refused",
		    what, path, base);
	cctl__hint(ctx, "the manifest or record that named it is damaged or "
			"hostile; use NVIDIA's own redistrib_*.json");
	return CCTL_EMANIFEST;
}

int cctl__ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

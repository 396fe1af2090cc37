/* Version strings and the small process-wide helpers. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

void cctl_process_init(void)
{
	cctl_os_process_init();
}

void cctl_process_done(void)
{
	cctl_os_process_done();
}

_Noreturn void cctl_process_exit(int status)
{
	cctl_os_exit(status);
}

int cctl_isatty(int fd)
{
	return cctl_os_isatty(fd);
}

int cctl_terminal(int fd)
{
	return cctl_os_terminal(fd);
}

const char *cctl_getenv(const char *name)
{
	return cctl_os_getenv(name);
}

void cctl_native_path(char *path)
{
	cctl_os_native_path(path);
}

char *cctl_system_describe(void)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	cctl_os_describe(&b);
	return cctl_buf_detach(&b);
}

char *cctl_home_dir(void)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	if (cctl_os_home(NULL, &b)) {
		cctl_buf_release(&b);
		return NULL;
	}
	return cctl_buf_detach(&b);
}

int cctl_write_file(struct cctl_ctx *ctx, const char *path, const void *data,
		    size_t len)
{
	return cctl_os_write_file_atomic(ctx, path, data, len);
}

int cctl_append_file(struct cctl_ctx *ctx, const char *path, const void *data,
		     size_t len)
{
	return cctl_os_append_file(ctx, path, data, len);
}

void cctl__lock_holder(const char *text, struct cctl_buf *out)
{
	size_t n = 0, k;
	if (!out)
		return;
	cctl_buf_reset(out);
	while (n < 12 && isdigit((unsigned char)text[n]))
		n++;
	if (!n || (text[n] && text[n] != '\n'))
		return;
	cctl_buf_addf(out, "process %.*s", (int)n, text);
	if (text[n] != '\n')
		return;
	text += n + 1;
	for (k = 0; k < 120 && text[k] >= 0x20 && text[k] < 0x7f; k++)
		;
	if (k)
		cctl_buf_addf(out, " (%.*s)", (int)k, text);
}

double cctl_now_ms(void)
{
	return cctl_os_now_ms();
}

int cctl__cuda_from_name(const char *name)
{
	/* "..._cuda12-archive", "...-cuda11-archive", "cuda12": the last */
	const char *p = name;
	int found = 0;
	while ((p = strstr(p, "cuda"))) {
		p += 4;
		if (isdigit((unsigned char)*p))
			found = atoi(p);
	}
	return found;
}

const char *cctl__last_sep(const char *path)
{
	const char *s = strrchr(path, '/');
	const char *b = CCTL_OS_DIR_SEP == '\\' ? strrchr(path, '\\') : NULL;
	if (b && (!s || b > s))
		s = b;
	return s;
}

int cctl_version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		unsigned long x = strtoul(a, (char **)&a, 10);
		unsigned long y = strtoul(b, (char **)&b, 10);
		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		else if (*a)
			return *b ? strcmp(a, b) : 1;
		if (*b == '.')
			b++;
		else if (*b)
			return -1;
	}
	return 0;
}

int cctl_natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *x, *y;
			size_t nx, ny;
			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (x = a; isdigit((unsigned char)*x); x++)
				;
			for (y = b; isdigit((unsigned char)*y); y++)
				;
			nx = (size_t)(x - a);
			ny = (size_t)(y - b);
			/* no overflow: a longer run (leading zeros gone) is larger */
			if (nx != ny)
				return nx < ny ? -1 : 1;
			for (; a < x; a++, b++)
				if (*a != *b)
					return *a < *b ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

int cctl_version_has_prefix(const char *version, const char *prefix)
{
	size_t n = strlen(prefix);
	if (!n || strncmp(version, prefix, n))
		return 0;
	return version[n] == '\0' || version[n] == '.' || version[n] == '-';
}

static int define_value(const char *text, const char *name, long *out)
{
	const char *p = text;
	size_t n = strlen(name);
	while ((p = strstr(p, "#define"))) {
		p += 7;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, name, n) || (p[n] != ' ' && p[n] != '\t'))
			continue;
		p += n;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		*out = strtol(p, NULL, 10);
		return 0;
	}
	return -1;
}

char *cctl_parse_version_header(const char *text)
{
	long major, minor, patch;
	if (!text || define_value(text, "CUDNN_MAJOR", &major) ||
	    define_value(text, "CUDNN_MINOR", &minor) ||
	    define_value(text, "CUDNN_PATCHLEVEL", &patch))
		return NULL;
	return cctl_xstrfmt("%ld.%ld.%ld", major, minor, patch);
}

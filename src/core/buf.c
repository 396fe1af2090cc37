/* Growable strings (buf.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnnctl/buf.h"
#include "../platform/os.h"

char cctl_buf_empty_[1];

static void oom(void)
{
	/* Allocation failure is not recoverable in a command-line tool. */
	abort();
}

void *cctl_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *cctl_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *cctl_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *cctl_xstrdup(const char *s)
{
	size_t n;
	char *p;
	if (!s)
		return NULL;
	n = strlen(s) + 1;
	p = cctl_xmalloc(n);
	memcpy(p, s, n);
	return p;
}

char *cctl_xstrfmt(const char *fmt, ...)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	cctl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	return cctl_buf_detach(&b);
}

void cctl_buf_init(struct cctl_buf *b)
{
	b->buf = cctl_buf_empty_;
	b->len = 0;
	b->alloc = 0;
}

void cctl_buf_release(struct cctl_buf *b)
{
	if (b->alloc)
		free(b->buf);
	cctl_buf_init(b);
}

char *cctl_buf_detach(struct cctl_buf *b)
{
	char *s = b->alloc ? b->buf : cctl_xstrdup("");
	cctl_buf_init(b);
	return s;
}

void cctl_buf_reset(struct cctl_buf *b)
{
	b->len = 0;
	if (b->alloc)
		b->buf[0] = '\0';
}

void cctl_buf_grow(struct cctl_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->alloc)
		return;
	if (need < 2 * b->alloc)
		need = 2 * b->alloc;
	if (need < 64)
		need = 64;
	if (!b->alloc) {
		b->buf = cctl_xmalloc(need);
		b->buf[0] = '\0';
	} else {
		b->buf = cctl_xrealloc(b->buf, need);
	}
	b->alloc = need;
}

void cctl_buf_add(struct cctl_buf *b, const void *data, size_t len)
{
	cctl_buf_grow(b, len);
	memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
}

void cctl_buf_adds(struct cctl_buf *b, const char *s)
{
	cctl_buf_add(b, s, strlen(s));
}

void cctl_buf_addch(struct cctl_buf *b, char c)
{
	cctl_buf_add(b, &c, 1);
}

void cctl_buf_vaddf(struct cctl_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	cctl_buf_grow(b, (size_t)n);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void cctl_buf_addf(struct cctl_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cctl_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void cctl_buf_addpath(struct cctl_buf *b, const char *component)
{
	if (b->len && b->buf[b->len - 1] != '/' && b->buf[b->len - 1] != '\\')
		cctl_buf_addch(b, CCTL_OS_DIR_SEP);
	for (; *component; component++)
		cctl_buf_addch(b, *component == '/' ? CCTL_OS_DIR_SEP : *component);
}

char *cctl_path_join(const char *first, ...)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	const char *part;
	va_list ap;
	cctl_buf_adds(&b, first);
	va_start(ap, first);
	while ((part = va_arg(ap, const char *)))
		cctl_buf_addpath(&b, part);
	va_end(ap);
	return cctl_buf_detach(&b);
}

void cctl_format_size(char *out, size_t n, uint64_t bytes)
{
	unsigned long long b = (unsigned long long)bytes;
	if (b >= (1ull << 30))
		snprintf(out, n, "%.2f GB", (double)b / (1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(out, n, "%.1f MB", (double)b / (1ull << 20));
	else if (b >= 1024)
		snprintf(out, n, "%.1f kB", (double)b / 1024);
	else
		snprintf(out, n, "%llu B", b);
}

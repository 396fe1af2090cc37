/*
 * Growable NUL-terminated byte strings, after git's strbuf.
 *
 * A buffer set up with CCTL_BUF_INIT (or cctl_buf_init) is always valid:
 * ->buf points at a NUL-terminated string, the empty one when nothing was
 * added.  Adding aborts only on allocation failure of the process (the
 * allocator is considered infallible here, as in git); everything else is
 * plain memory.  cctl_buf_release frees the storage and re-initialises;
 * cctl_buf_detach hands the string to the caller, who frees it with free().
 */
#ifndef CUDNNCTL_BUF_H
#define CUDNNCTL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* printf-style checking; mingw-w64 builds use its C99 printf
 * (__USE_MINGW_ANSI_STDIO), whose format family is gnu_printf. */
#if defined(__MINGW32__)
#define CCTL_FORMAT(a, b) __attribute__((format(gnu_printf, a, b)))
#elif defined(__GNUC__)
#define CCTL_FORMAT(a, b) __attribute__((format(printf, a, b)))
#else
#define CCTL_FORMAT(a, b)
#endif
#if defined(__GNUC__)
#define CCTL_SENTINEL __attribute__((sentinel))
#else
#define CCTL_SENTINEL
#endif

struct cctl_buf {
	char *buf;
	size_t len;
	size_t alloc;
};

extern char cctl_buf_empty_[];
#define CCTL_BUF_INIT { cctl_buf_empty_, 0, 0 }

void cctl_buf_init(struct cctl_buf *b);
void cctl_buf_release(struct cctl_buf *b);
char *cctl_buf_detach(struct cctl_buf *b);
void cctl_buf_reset(struct cctl_buf *b);
void cctl_buf_grow(struct cctl_buf *b, size_t extra);
void cctl_buf_add(struct cctl_buf *b, const void *data, size_t len);
void cctl_buf_adds(struct cctl_buf *b, const char *s);
void cctl_buf_addch(struct cctl_buf *b, char c);
void cctl_buf_addf(struct cctl_buf *b, const char *fmt, ...) CCTL_FORMAT(2, 3);
void cctl_buf_vaddf(struct cctl_buf *b, const char *fmt, va_list ap)
	CCTL_FORMAT(2, 0);
/* Joins with the platform's separator ('\\' on Windows, where a '/' in
 * component becomes '\\' too), adding none when b is empty or ends with
 * one. */
void cctl_buf_addpath(struct cctl_buf *b, const char *component);
/* first, then each further argument up to NULL, joined as by
 * cctl_buf_addpath; free() the result. */
char *cctl_path_join(const char *first, ...) CCTL_SENTINEL;

/* Duplicates a string or aborts; cctl_xstrdup(NULL) returns NULL. */
char *cctl_xstrdup(const char *s);
void *cctl_xmalloc(size_t n);
void *cctl_xcalloc(size_t n, size_t size);
void *cctl_xrealloc(void *p, size_t n);
char *cctl_xstrfmt(const char *fmt, ...) CCTL_FORMAT(1, 2);

/* A size for people: "1.23 GB", "12.3 MB", "4.0 kB", "12 B". */
void cctl_format_size(char *out, size_t n, uint64_t bytes);

#endif

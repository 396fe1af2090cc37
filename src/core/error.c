/* The error table (error.h) and the context's message helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

static const struct {
	int code;
	int status;
	const char *name;
	const char *text;
} table[] = {
#define CCTL__ROW(name, status, text) { CCTL_E##name, status, "E" #name, text },
	CCTL_ERRNO_MAP(CCTL__ROW)
#undef CCTL__ROW
};

static int find(int code)
{
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(table); i++)
		if (table[i].code == code)
			return (int)i;
	return -1;
}

const char *cctl_strerror(int code)
{
	int i = find(code);
	if (code == 0)
		return "success";
	return i < 0 ? "unknown error" : table[i].text;
}

int cctl_exit_status(int code)
{
	int i = find(code);
	if (code == 0)
		return 0;
	return i < 0 ? 1 : table[i].status;
}

const char *cctl_error_name(int code)
{
	int i = find(code);
	if (code == 0)
		return "OK";
	return i < 0 ? "EUNKNOWN" : table[i].name;
}

void cctl_ctx_init(struct cctl_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
}

/* The one place a failure is written down. */
static int set_error(struct cctl_ctx *ctx, int code, int oserr, const char *fmt,
		     va_list ap) CCTL_FORMAT(4, 0);
static int set_error(struct cctl_ctx *ctx, int code, int oserr, const char *fmt,
		     va_list ap)
{
	if (!ctx)
		return code;
	vsnprintf(ctx->msg, sizeof(ctx->msg), fmt, ap);
	ctx->hint[0] = '\0';
	ctx->code = code;
	ctx->oserr = oserr;
	return code;
}

int cctl__error(struct cctl_ctx *ctx, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	code = set_error(ctx, code, 0, fmt, ap);
	va_end(ap);
	return code;
}

void cctl__hint(struct cctl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	if (!ctx)
		return;
	va_start(ap, fmt);
	vsnprintf(ctx->hint, sizeof(ctx->hint), fmt, ap);
	va_end(ap);
}

void cctl__warn(struct cctl_ctx *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (!ctx || !ctx->on_warning)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->on_warning(ctx->ud, msg);
}

void cctl__note(struct cctl_ctx *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (!ctx || !ctx->verbose || !ctx->on_warning)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->on_warning(ctx->ud, msg);
}

void cctl__notice(struct cctl_ctx *ctx, enum cctl_notice kind,
		  const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (!ctx || !ctx->on_notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->on_notice(ctx->ud, kind, msg);
}

void cctl__progress(struct cctl_ctx *ctx, enum cctl_phase phase,
		    uint64_t done, uint64_t total)
{
	struct cctl_progress ev = { phase, done, total };
	if (ctx && ctx->on_progress)
		ctx->on_progress(ctx->ud, &ev);
}

int cctl__os_error(struct cctl_ctx *ctx, int code, int oserr, const char *fmt,
		   ...)
{
	va_list ap;
	va_start(ap, fmt);
	code = set_error(ctx, code, oserr, fmt, ap);
	va_end(ap);
	return code;
}

/* Test hooks, read once: CUDNNCTL_TEST_INTERRUPT_AT=N raises an interrupt
 * at the Nth point where the work checks for one; CUDNNCTL_TEST_PAUSE_AT=
 * N:FILE creates FILE there and waits (60 s at most) for an interrupt sent
 * from outside, or for FILE to be removed, so that a test can deliver a
 * real Ctrl+C or signal, or change a file, at a known point; N+:FILE
 * pauses so at the Nth point and at every one after it (with --jobs 1:
 * the counter is not shared between threads). */
static void test_hooks(void)
{
	/* atomic: the extraction workers and the download's ranges come here
	 * from threads of their own (each reads the same variables, so which
	 * one sets them up first does not matter) */
	static _Atomic long calls, at = -1, pause_at = -1;
	static _Atomic int pause_on;
	static const char *_Atomic pause_file;
	long call;
	if (at < 0) {
		const char *env = cctl_os_getenv("CUDNNCTL_TEST_PAUSE_AT");
		char *end = NULL;
		long pat = env ? strtol(env, &end, 10) : 0;
		if (pat > 0 && *end == '+') {
			pause_on = 1;
			end++;
		}
		if (pat > 0 && *end == ':' && end[1])
			pause_file = end + 1;
		else
			pat = 0;
		pause_at = pat;
		env = cctl_os_getenv("CUDNNCTL_TEST_INTERRUPT_AT");
		at = env ? atol(env) : 0;
	}
	if (at <= 0 && pause_at <= 0)
		return;
	call = ++calls;
	if (call == at)
		cctl_os_raise_interrupt();
	if ((call == pause_at || (pause_on && pause_at > 0 && call > pause_at)) &&
	    !cctl_os_write_file_atomic(NULL, pause_file, "paused\n", 7))
		for (int i = 0; i < 6000 && !cctl_os_interrupted(); i++) {
			struct cctl_os_stat st;
			if (!cctl_os_stat(NULL, pause_file, &st) &&
			    st.type == CCTL_OS_NONE)
				break;
			cctl_os_sleep_ms(10);
		}
}

int cctl__interrupt(struct cctl_ctx *ctx)
{
	test_hooks();
	return cctl__interrupted(ctx);
}

int cctl__interrupted(struct cctl_ctx *ctx)
{
	if (!cctl_os_interrupted())
		return 0;
	cctl__error(ctx, CCTL_EINTERRUPTED,
		    "interrupted: stopped and put back what was under way");
	cctl__hint(ctx, "run the command again to do it");
	return CCTL_EINTERRUPTED;
}

const char *cctl__msg(const struct cctl_ctx *ctx)
{
	return ctx ? ctx->msg : "";
}

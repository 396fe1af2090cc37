/* Messages, errors, the progress bar and JSON output. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void json_str(struct cctl_buf *b, const char *s)
{
	cctl_buf_addch(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		switch (*p) {
		case '"': cctl_buf_adds(b, "\\\""); break;
		case '\\': cctl_buf_adds(b, "\\\\"); break;
		case '\n': cctl_buf_adds(b, "\\n"); break;
		case '\t': cctl_buf_adds(b, "\\t"); break;
		case '\r': cctl_buf_adds(b, "\\r"); break;
		default:
			if (*p < 0x20)
				cctl_buf_addf(b, "\\u%04x", *p);
			else
				cctl_buf_addch(b, (char)*p);
		}
	}
	cctl_buf_addch(b, '"');
}

void json_item(struct cctl_buf *b)
{
	char last = b->len ? b->buf[b->len - 1] : '\0';
	if (last && last != '{' && last != '[' && last != ':' && last != ',')
		cctl_buf_addch(b, ',');
}

void json_key(struct cctl_buf *b, const char *key)
{
	json_item(b);
	json_str(b, key);
	cctl_buf_addch(b, ':');
}

void json_kobj(struct cctl_buf *b, const char *key)
{
	json_key(b, key);
	cctl_buf_addch(b, '{');
}

void json_karr(struct cctl_buf *b, const char *key)
{
	json_key(b, key);
	cctl_buf_addch(b, '[');
}

void json_obj(struct cctl_buf *b)
{
	json_item(b);
	cctl_buf_addch(b, '{');
}

void json_end(struct cctl_buf *b, char close)
{
	cctl_buf_addch(b, close);
}

void json_knum(struct cctl_buf *b, const char *key, double v, int digits,
	       int general, int set)
{
	json_key(b, key);
	if (!set)
		cctl_buf_adds(b, "null");
	else if (general)
		cctl_buf_addf(b, "%.*g", digits, v);
	else
		cctl_buf_addf(b, "%.*f", digits, v);
}

void json_kstr(struct cctl_buf *b, const char *key, const char *s)
{
	json_key(b, key);
	if (s)
		json_str(b, s);
	else
		cctl_buf_adds(b, "null");
}

void json_kint(struct cctl_buf *b, const char *key, long long v)
{
	json_key(b, key);
	cctl_buf_addf(b, "%lld", v);
}

void json_kbool(struct cctl_buf *b, const char *key, int v)
{
	json_key(b, key);
	cctl_buf_adds(b, v ? "true" : "false");
}

void json_kraw(struct cctl_buf *b, const char *key, const char *raw)
{
	json_key(b, key);
	cctl_buf_adds(b, raw && *raw ? raw : "null");
}

void json_emit(struct cctl_buf *b)
{
	fwrite(b->buf, 1, b->len, stdout);
	fputc('\n', stdout);
}

void cli_say(const char *kind, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (kind)
		fprintf(stderr, "cudnnctl: %s: %s\n", kind, msg);
	else
		fprintf(stderr, "cudnnctl: %s\n", msg);
}

/* The error object of a failed command (on stdout with --json):
 * {"code":..., "exit_status":..., "message":..., "hint":..., "os_error":...} */
static void error_object(struct cctl_buf *b, int code, int status,
			 const char *msg, const char *hint, int oserr)
{
	json_obj(b);
	json_kstr(b, "code", cctl_error_name(code));
	json_kint(b, "exit_status", status);
	json_kstr(b, "message", msg);
	json_kstr(b, "hint", hint);
	/* the OS's own error number (errno, or GetLastError() on Windows)
	 * when an OS call failed, for scripts that tell causes apart */
	if (oserr)
		json_kint(b, "os_error", oserr);
	else
		json_kraw(b, "os_error", NULL);
	json_end(b, '}');
}

static void error_json(struct cli *cli, int code, int status, const char *msg,
		       const char *hint, int oserr)
{
	struct cctl_buf b = CCTL_BUF_INIT, e = CCTL_BUF_INIT;
	if (cli->result_on_failure && cli->has_result) {
		cctl_buf_release(&cli->error);
		error_object(&cli->error, code, status, msg, hint, oserr);
		return; /* the dispatcher prints it inside the result */
	}
	error_object(&e, code, status, msg, hint, oserr);
	json_obj(&b);
	json_kstr(&b, "command", cli->cmd);
	json_kbool(&b, "ok", 0);
	json_kraw(&b, "error", e.buf);
	json_end(&b, '}');
	json_emit(&b);
	cctl_buf_release(&e);
	cctl_buf_release(&b);
}

int cli_usage_error(struct cli *cli, const char *fmt, ...)
{
	struct cctl_buf usage = CCTL_BUF_INIT;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_usage(&usage, cli->command, 1);
	cli_say("error", "%s", msg);
	fprintf(stderr, "usage: %s\n", usage.buf);
	if (cli->json) {
		cctl_buf_reset(&usage);
		cli_usage(&usage, cli->command, 0);
		error_json(cli, CCTL_EUSAGE, cctl_exit_status(CCTL_EUSAGE), msg,
			   usage.buf, 0);
	}
	cctl_buf_release(&usage);
	return cctl_exit_status(CCTL_EUSAGE);
}

int cli_fail(struct cli *cli, int code)
{
	int status = cctl_exit_status(code);
	cli_progress_done(cli);
	cli_say("error", "%s", cli->ctx.msg[0] ? cli->ctx.msg : cctl_strerror(code));
	if (cli->ctx.hint[0])
		cli_say("hint", "%s", cli->ctx.hint);
	if (cli->json)
		error_json(cli, code, status, cli->ctx.msg,
			   cli->ctx.hint[0] ? cli->ctx.hint : NULL,
			   cli->ctx.code == code ? cli->ctx.oserr : 0);
	return status;
}

struct cctl_buf *cli_result(struct cli *cli)
{
	cli->has_result = 1;
	return &cli->result;
}

int cli_open_root(struct cli *cli, struct cctl_root *r, int create, int lock)
{
	char *path = NULL;
	int ret;
	if (cli->root_arg)
		path = cctl_xstrdup(cli->root_arg);
	else if ((ret = cctl_root_default(&cli->ctx, &path)))
		return ret;
	ret = cctl_root_open_wait(&cli->ctx, r, path, create, lock,
				  cli->wait_ms, cli->doing);
	free(path);
	return ret;
}

static const char *phase_name(enum cctl_phase p)
{
	switch (p) {
	case CCTL_PHASE_HASH: return "sha256 ";
	case CCTL_PHASE_SCAN: return "check  ";
	case CCTL_PHASE_EXTRACT: return "extract";
	case CCTL_PHASE_DOWNLOAD: return "download";
	default: return "record ";
	}
}

void cli_progress_done(struct cli *cli)
{
	if (cli->bar_phase >= 0 && !cli->ci) {
		if (cli->escapes)
			fputs("\r\033[K", stderr);
		else /* no escapes: spaces over the line */
			fprintf(stderr, "\r%*s\r", cli->bar_len, "");
		fflush(stderr);
	}
	cli->bar_phase = -1;
}

void cli_progress(void *ud, const struct cctl_progress *ev)
{
	struct cli *cli = ud;
	double now = cctl_now_ms();
	char done[32], total[32], rate[32], left[32] = "";
	double bps;
	int width = 30, fill;

	if (!cli->progress || ev->phase == CCTL_PHASE_RECORD)
		return;
	if (cli->ci) {
		/* CI logs keep every line: one when a phase begins, then one
		 * every 5 s */
		if ((int)ev->phase == cli->bar_phase && now - cli->ci_last < 5000)
			return;
		cli->bar_phase = (int)ev->phase;
		cli->ci_last = now;
		cctl_format_size(done, sizeof(done), ev->done);
		cctl_format_size(total, sizeof(total), ev->total);
		cli_say(NULL, "%.*s %s / %s (%d%%)",
			(int)strcspn(phase_name(ev->phase), " "),
			phase_name(ev->phase), done, total,
			ev->total ? (int)((double)ev->done * 100.0 / (double)ev->total)
				  : 0);
		fflush(stderr);
		return;
	}
	if ((int)ev->phase != cli->bar_phase) {
		cli_progress_done(cli);
		cli->bar_phase = (int)ev->phase;
		cli->bar_start = now;
		cli->bar_last = 0;
		cli->bar_first = ev->done;
	}
	/* at most ten redraws a second, and always the last one */
	if (now - cli->bar_last < 100 && ev->done != ev->total)
		return;
	cli->bar_last = now;
	fill = ev->total ? (int)((double)ev->done / (double)ev->total * width) : 0;
	if (fill > width)
		fill = width;
	cctl_format_size(done, sizeof(done), ev->done);
	cctl_format_size(total, sizeof(total), ev->total);
	/* the rate of this run: bytes since the phase began */
	bps = now > cli->bar_start && ev->done >= cli->bar_first
		      ? (double)(ev->done - cli->bar_first) * 1000.0 /
				(now - cli->bar_start)
		      : 0;
	cctl_format_size(rate, sizeof(rate), (uint64_t)bps);
	if (bps > 0 && ev->total > ev->done && now - cli->bar_start > 1000) {
		double s = (double)(ev->total - ev->done) / bps;
		snprintf(left, sizeof(left), "  %d:%02d left", (int)(s / 60),
			 (int)s % 60);
	}
	{
		char line[256];
		int len = snprintf(line, sizeof(line), "%-8s [%.*s%*s] %s / %s  %s/s%s",
				   phase_name(ev->phase), fill,
				   "##############################", width - fill, "",
				   done, total, rate, left);
		if (len < 0)
			len = 0;
		if (cli->escapes)
			fprintf(stderr, "\r%s\033[K", line);
		else /* a shorter line than the last: spaces over the rest */
			fprintf(stderr, "\r%s%*s", line,
				cli->bar_len > len ? cli->bar_len - len : 0, "");
		if (len > cli->bar_len)
			cli->bar_len = len;
	}
	fflush(stderr);
}

void cli_notice(void *ud, enum cctl_notice kind, const char *msg)
{
	struct cli *cli = ud;
	if (kind == CCTL_NOTICE_RELEASE && cli->quiet)
		return;
	cli_progress_done(cli);
	cli_say(kind == CCTL_NOTICE_RELEASE ? NULL : "note", "%s", msg);
}

void cli_warning(void *ud, const char *msg)
{
	struct cli *cli = ud;
	cli_progress_done(cli);
	cli_say("warning", "%s", msg);
}

/* For test_http_wine.py: one cctl_os_http_get (http-win.c, WinHTTP) with
 * the body written to a file, and what the sink saw and the call returned
 * printed one "key=value" a line:
 *
 *   httpget URL OFFSET[-END] OUT [CONNECT_S [STALL_S [STOP_AFTER]]]
 *
 *   END: one past the last byte asked for (a bounded range)
 *
 *   start=STATUS LENGTH START   once, from on_start
 *   bytes=N                     what on_data got in all
 *   blocks=N                    how many calls of on_data
 *   order=ok                    on_start at most once, before any data
 *                               (else what went wrong)
 *   rc=NAME                     "OK" or the code's name ("ENETWORK")
 *   oserr=N                     the OS error on the context
 *   ms=N                        how long the call took
 *   msg=TEXT                    the context's message
 *
 * STOP_AFTER: on_data returns 4242 once that many bytes arrived (the
 * sink's own stop).  The exit status is the code's (0 for OK), 4242's
 * lowest byte for the sink's value, 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"

#define SINK_STOP 4242

struct seen {
	FILE *out;
	int started, data_first;
	unsigned long long bytes, blocks, stop_after;
};

static int on_start(void *ud, int status, int64_t length, uint64_t start)
{
	struct seen *s = ud;
	s->started++;
	printf("start=%d %lld %llu\n", status, (long long)length,
	       (unsigned long long)start);
	return 0;
}

static int on_data(void *ud, const void *data, size_t len)
{
	struct seen *s = ud;
	if (!s->started)
		s->data_first = 1;
	if (fwrite(data, 1, len, s->out) != len)
		return CCTL_EIO;
	s->bytes += len;
	s->blocks++;
	if (s->stop_after && s->bytes >= s->stop_after)
		return SINK_STOP;
	return 0;
}

int main(int argc, char **argv)
{
	struct seen s;
	struct cctl_ctx ctx;
	struct cctl_os_http_sink sink = {on_start, on_data, &s};
	int connect_s = 10, stall_s = 10, rc;
	unsigned long long offset, end;
	char *rest;
	double t;

	if (argc < 4 || argc > 7) {
		fprintf(stderr, "usage: httpget URL OFFSET[-END] OUT [CONNECT_S "
				"[STALL_S [STOP_AFTER]]]\n");
		return 2;
	}
	memset(&s, 0, sizeof(s));
	if (argc > 4)
		connect_s = atoi(argv[4]);
	if (argc > 5)
		stall_s = atoi(argv[5]);
	if (argc > 6)
		s.stop_after = strtoull(argv[6], NULL, 10);
	if (!(s.out = fopen(argv[3], "wb"))) {
		perror(argv[3]);
		return 2;
	}
	cctl_ctx_init(&ctx);
	t = cctl_now_ms();
	offset = strtoull(argv[2], &rest, 10);
	end = *rest == '-' ? strtoull(rest + 1, NULL, 10) : 0;
	rc = cctl_os_http_get(&ctx, argv[1], offset, end, connect_s, stall_s,
			      &sink);
	t = cctl_now_ms() - t;
	fclose(s.out);
	printf("bytes=%llu\nblocks=%llu\n", s.bytes, s.blocks);
	if (s.data_first)
		printf("order=data-before-start\n");
	else if (s.started > 1)
		printf("order=start-called-%d-times\n", s.started);
	else
		printf("order=ok\n");
	printf("rc=%s\noserr=%d\nms=%.0f\nmsg=%s\n",
	       rc == SINK_STOP ? "SINK_STOP" : rc ? cctl_error_name(rc) : "OK",
	       ctx.oserr, t, ctx.msg);
	fflush(stdout);
	return rc == SINK_STOP ? SINK_STOP & 0xff : cctl_exit_status(rc);
}

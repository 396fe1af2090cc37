/*
 * HTTP and HTTPS downloads on Linux (os.h: cctl_os_http_get) with libcurl:
 * the only file that uses it.  The distribution's libcurl brings HTTP/2,
 * the proxy variables (HTTPS_PROXY, NO_PROXY) and the system's CA store;
 * CURL_CA_BUNDLE names another CA file, as it does for the curl tool (a
 * company's TLS-inspecting proxy, a test server).  A libcurl that knows no
 * CA store of its own (the release binary's, built for every
 * distribution) is given the first bundle found where distributions keep
 * one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "../../core/internal.h"
#include "posix.h"

/* The state of one transfer, shared by libcurl's callbacks. */
struct xfer {
	CURL *h;
	const struct cctl_os_http_sink *sink;
	int started;      /* on_start was called */
	long status;      /* of the last response (after redirects) */
	uint64_t start;   /* Content-Range start of a 206 */
	int64_t length;   /* Content-Length of the body, -1 when not given */
	uint64_t got;     /* body bytes passed on */
	int stop;         /* the sink's nonzero value */
	const char *cas;  /* the trusted CAs' file or folder; NULL: none found */
	double stall_ms;  /* no byte for this long is a stall */
	double last_ms;   /* when the last byte came (or the transfer began) */
	curl_off_t last_now; /* bytes then */
	int stalled;      /* on_progress ended the transfer for a stall */
	/* the body's bytes not yet passed on: libcurl hands them over 16 KiB
	 * at a time, the sink takes them in blocks of up to HOLD */
	unsigned char *hold;
	size_t held;
	double passed_ms; /* when bytes were last passed on */
};

/* The most bytes held back from the sink; they are passed on when that
 * many came, when HOLD_MS went by since the last were (a slow link), and
 * when the transfer ends however it ends. */
#define HOLD (512u << 10)
#define HOLD_MS 50.0

/* The proxy libcurl takes for url from the environment, or NULL (NO_PROXY
 * is not looked at: this only words the message of a failure). */
static const char *proxy_for(const char *url)
{
	static const char *const https[] = { "https_proxy", "HTTPS_PROXY",
					     "all_proxy", "ALL_PROXY", NULL };
	/* libcurl reads http_proxy in lower case only */
	static const char *const http[] = { "http_proxy", "all_proxy",
					    "ALL_PROXY", NULL };
	for (const char *const *v = strncmp(url, "https:", 6) ? http : https;
	     *v; v++) {
		const char *p = getenv(*v);
		if (p && *p)
			return p;
	}
	return NULL;
}

/* A failure the proxy made: its words, and what to check. */
static int proxy_refused(struct cctl_ctx *ctx, const char *url, long code,
			 const char *how)
{
	cctl__error(ctx, CCTL_ENETWORK,
		    "cannot download '%s': the proxy refused it (HTTP %ld %s)",
		    url, code, how);
	cctl__hint(ctx, "check the proxy in %s: its address, its user and "
			"password (http://USER:PASSWORD@HOST:PORT), and that it "
			"lets this machine reach the host; NO_PROXY lists the "
			"hosts reached without it",
		   strncmp(url, "https:", 6) ? "http_proxy" : "HTTPS_PROXY");
	return CCTL_ENETWORK;
}

static int say_start(struct xfer *x)
{
	curl_off_t len = -1;
	long status = 0;
	x->started = 1;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	x->status = status;
	if (curl_easy_getinfo(x->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len) ||
	    len < 0)
		len = -1;
	x->length = (int64_t)len;
	if (status != 206)
		x->start = 0;
	if (x->sink->on_start)
		x->stop = x->sink->on_start(x->sink->ud, (int)status, x->length,
					    x->start);
	return x->stop;
}

/* Each header line of each response (redirects included): a new status
 * line starts a new response; Content-Range gives a 206's start. */
static size_t on_header(char *line, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	if (len >= 5 && !strncmp(line, "HTTP/", 5)) {
		x->start = 0;
	} else if (len > 14 && !strncasecmp(line, "Content-Range:", 14)) {
		const char *p = line + 14;
		unsigned long long s;
		while (*p == ' ' || *p == '\t')
			p++;
		if (sscanf(p, "bytes %llu-", &s) == 1)
			x->start = (uint64_t)s;
	}
	return len;
}

/* n bytes to the sink: 0, or its nonzero value (x->stop). */
static int give(struct xfer *x, const void *data, size_t n)
{
	if (!n || x->stop)
		return x->stop;
	if (x->sink->on_data && (x->stop = x->sink->on_data(x->sink->ud, data, n)))
		return x->stop;
	x->got += n;
	return 0;
}

/* The held bytes to the sink. */
static int pass_on(struct xfer *x)
{
	size_t n = x->held;
	x->held = 0;
	x->passed_ms = cctl_os_now_ms();
	return give(x, x->hold, n);
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	if (!x->started && say_start(x))
		return 0; /* the sink stopped it: libcurl aborts */
	if (x->status >= 400)
		return len; /* an error page: not the file */
	if (x->held + len > HOLD && pass_on(x))
		return 0;
	if (len > HOLD) /* (libcurl's blocks are smaller) */
		return give(x, data, len) ? 0 : len;
	memcpy(x->hold + x->held, data, len);
	x->held += len;
	if (x->held == HOLD && pass_on(x))
		return 0;
	return len;
}

/* Called about once a second, and as bytes come: a Ctrl+C (the flag the
 * interrupt handler sets) ends a transfer that is waiting for bytes, and
 * so does a stall: no byte for stall_s seconds.  (libcurl's own low-speed
 * check averages over its last five seconds, so a burst of bytes before a
 * stall would hide it for that long whatever stall_s says.) */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = ud;
	double now = cctl_os_now_ms();
	(void)dltotal;
	(void)ultotal;
	(void)ulnow;
	if (cctl_os_interrupted())
		return 1;
	if (x->held && now - x->passed_ms >= HOLD_MS && pass_on(x))
		return 1;
	if (dlnow != x->last_now) {
		x->last_now = dlnow;
		x->last_ms = now;
	} else if (now - x->last_ms > x->stall_ms) {
		x->stalled = 1;
		return 1;
	}
	return 0;
}

/* curl_global_init once for the process, whichever thread comes first:
 * the parallel ranges of one download each run a transfer of their own */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

/* One cache of connections (and of TLS sessions and names) for all the
 * process's transfers, so that the pieces a connection takes one after
 * another go over the one connection, not a new one (and a new TLS
 * handshake) each; NULL: each transfer has its own, as before. */
static CURLSH *shared;
static pthread_mutex_t shared_mu[CURL_LOCK_DATA_LAST];

static void shared_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *ud)
{
	(void)h, (void)a, (void)ud;
	pthread_mutex_lock(&shared_mu[d]);
}

static void shared_unlock(CURL *h, curl_lock_data d, void *ud)
{
	(void)h, (void)ud;
	pthread_mutex_unlock(&shared_mu[d]);
}

static void curl_init(void)
{
	if ((curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT)))
		return;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(shared_mu); i++)
		pthread_mutex_init(&shared_mu[i], NULL);
	if (!(shared = curl_share_init()))
		return;
	if (curl_share_setopt(shared, CURLSHOPT_LOCKFUNC, shared_lock) ||
	    curl_share_setopt(shared, CURLSHOPT_UNLOCKFUNC, shared_unlock) ||
	    curl_share_setopt(shared, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) ||
	    curl_share_setopt(shared, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) ||
	    curl_share_setopt(shared, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT)) {
		curl_share_cleanup(shared);
		shared = NULL;
	}
}

static int curl_ready(struct cctl_ctx *ctx)
{
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc)
		return cctl__error(ctx, CCTL_ENETWORK,
				   "cannot start libcurl (out of memory?)");
	return 0;
}

static int is_https(const char *url)
{
	return !strncasecmp(url, "https://", 8);
}

/*
 * Where distributions keep their bundle of trusted CAs as one PEM file,
 * the most common first.  The release binary's OpenSSL, built with
 * /etc/ssl as its folder, would look only at /etc/ssl/cert.pem and
 * /etc/ssl/certs/HASH.0, which hold nothing on RHEL or Fedora.
 */
static const char *const ca_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",               /* Debian, Ubuntu, Arch */
	"/etc/pki/tls/certs/ca-bundle.crt",                 /* RHEL, Fedora, Amazon Linux */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* RHEL 7 and later */
	"/etc/ssl/ca-bundle.pem",                           /* openSUSE, SLES */
	"/etc/ssl/cert.pem",                                /* Alpine */
};

static int readable(const char *path)
{
	return path && *path && !access(path, R_OK);
}

/* libcurl's own CA file or folder when it has one and it is there. */
static const char *own_store(CURL *h)
{
#if LIBCURL_VERSION_NUM >= 0x075400
	char *own = NULL;
	if (!curl_easy_getinfo(h, CURLINFO_CAINFO, &own) && readable(own))
		return own;
	own = NULL;
	if (!curl_easy_getinfo(h, CURLINFO_CAPATH, &own) && readable(own))
		return own;
#else
	(void)h;
#endif
	return NULL;
}

/*
 * Gives libcurl its trusted CAs and says which: what CURL_CA_BUNDLE names;
 * else libcurl's own store where it is there (a distribution's libcurl);
 * else OpenSSL's SSL_CERT_FILE or SSL_CERT_DIR; else the first bundle of
 * the list above.  NULL: none was found.
 */
static const char *set_cas(CURL *h)
{
	const char *ca = cctl_os_getenv("CURL_CA_BUNDLE");
	size_t i;

	if (ca && *ca) {
		curl_easy_setopt(h, CURLOPT_CAINFO, ca);
		return ca;
	}
	if ((ca = own_store(h)))
		return ca;
	if (readable(ca = cctl_os_getenv("SSL_CERT_FILE"))) {
		curl_easy_setopt(h, CURLOPT_CAINFO, ca);
		return ca;
	}
	if (readable(ca = cctl_os_getenv("SSL_CERT_DIR"))) {
		curl_easy_setopt(h, CURLOPT_CAPATH, ca);
		return ca;
	}
	for (i = 0; i < CCTL_ARRAY_SIZE(ca_bundles); i++)
		if (readable(ca_bundles[i])) {
			curl_easy_setopt(h, CURLOPT_CAINFO, ca_bundles[i]);
			return ca_bundles[i];
		}
	return NULL;
}

/* Which CAs a certificate was checked against, and how to add one. */
static void ca_hint(struct cctl_ctx *ctx, const char *cas)
{
	struct cctl_buf looked = CCTL_BUF_INIT;

	if (cas) {
		cctl__hint(ctx, "the certificate was checked against the CAs "
				"in '%s'; for a server or a company proxy with "
				"its own CA, set CURL_CA_BUNDLE to a file that "
				"holds it",
			   cas);
		return;
	}
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(ca_bundles); i++)
		cctl_buf_addf(&looked, "%s%s", i ? ", " : "", ca_bundles[i]);
	cctl__hint(ctx, "no file of trusted CAs was found (looked for %s); "
			"set CURL_CA_BUNDLE to the system's",
		   looked.buf);
	cctl_buf_release(&looked);
}

static CURL *new_handle(struct xfer *x, const char *url, uint64_t offset,
			uint64_t end, int connect_s, int stall_s, char *range,
			size_t nrange)
{
	CURL *h = curl_easy_init();
	if (!h)
		return NULL;
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (shared)
		curl_easy_setopt(h, CURLOPT_SHARE, shared);
	/* an https:// URL is not followed down to http:// (as WinHTTP's
	 * default policy does): what was asked over HTTPS, a manifest above
	 * all, must not arrive over plain HTTP */
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR,
			 is_https(url) ? "https" : "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS,
			 is_https(url) ? CURLPROTO_HTTPS
				       : CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "cudnnctl/" CCTL_VERSION);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)connect_s);
	/* a stall: under one byte a second for stall_s seconds */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)stall_s);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	/* bytes handed on in blocks of up to 512 KiB, not 16: each block is
	 * a write, a feed's wake-up and a count under the ranges' lock
	 * (docs/benchmarks-download.md, "libcurl's receive buffer") */
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, (long)HOLD);
	curl_easy_setopt(h, CURLOPT_FAILONERROR, 0L);
	x->cas = set_cas(h);
	if (end > offset) {
		snprintf(range, nrange, "%llu-%llu", (unsigned long long)offset,
			 (unsigned long long)(end - 1));
		curl_easy_setopt(h, CURLOPT_RANGE, range);
	} else if (offset) {
		snprintf(range, nrange, "%llu-", (unsigned long long)offset);
		curl_easy_setopt(h, CURLOPT_RANGE, range);
	}
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	x->stall_ms = stall_s * 1000.0;
	x->last_ms = cctl_os_now_ms();
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	return h;
}

int cctl_os_http_get(struct cctl_ctx *ctx, const char *url, uint64_t offset,
		     uint64_t end, int connect_s, int stall_s,
		     const struct cctl_os_http_sink *sink)
{
	struct xfer x;
	char range[48];
	const char *to = NULL; /* where a refused redirect leads */
	long connect = 0;      /* a proxy's answer to CONNECT */
	CURLcode rc;
	int ret;

	if ((ret = curl_ready(ctx)))
		return ret;
	memset(&x, 0, sizeof(x));
	x.sink = sink;
	x.length = -1;
	x.hold = cctl_xmalloc(HOLD);
	x.passed_ms = cctl_os_now_ms();
	x.h = new_handle(&x, url, offset, end, connect_s, stall_s, range,
			 sizeof(range));
	if (!x.h) {
		free(x.hold);
		return cctl__error(ctx, CCTL_ENETWORK,
				   "cannot download '%s': libcurl has no handle",
				   url);
	}
	rc = curl_easy_perform(x.h);
	/* what came before the end, a cut or a stall is the sink's too */
	if (!cctl_os_interrupted())
		pass_on(&x);
	if (x.stop) {
		ret = x.stop;
	} else if (x.stalled) {
		ret = cctl__error(ctx, CCTL_ENETWORK,
				  "cannot download '%s': no byte came for %d s",
				  url, stall_s);
		cctl__hint(ctx, "the connection stalled; running the command "
				"again resumes the download");
	} else if (rc == CURLE_OK && !x.started && say_start(&x)) {
		ret = x.stop; /* an empty body: the sink still sees the start */
	} else if (rc == CURLE_UNSUPPORTED_PROTOCOL && is_https(url) &&
		   !curl_easy_getinfo(x.h, CURLINFO_EFFECTIVE_URL, &to) && to &&
		   !is_https(to)) {
		ret = cctl__error(ctx, CCTL_ENETWORK,
				  "cannot download '%s': the server redirects "
				  "it to '%s', not over HTTPS",
				  url, to);
	} else if (rc != CURLE_OK &&
		   !curl_easy_getinfo(x.h, CURLINFO_HTTP_CONNECTCODE, &connect) &&
		   connect >= 300) {
		ret = proxy_refused(ctx, url, connect, "to CONNECT");
	} else if (rc != CURLE_OK) {
		ret = cctl__error(ctx, CCTL_ENETWORK, "cannot download '%s': %s",
				  url, curl_easy_strerror(rc));
		if (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR ||
		    rc == CURLE_OPERATION_TIMEDOUT)
			cctl__hint(ctx, "the connection broke; running the "
					"command again resumes the download");
		else if (rc == CURLE_PEER_FAILED_VERIFICATION ||
			 rc == CURLE_SSL_CACERT_BADFILE)
			ca_hint(ctx, x.cas);
	} else if (x.status == 404 || x.status == 410) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND,
				  "cannot download '%s': the server has no such "
				  "file (HTTP %ld)",
				  url, x.status);
	} else if (x.status == 407 ||
		   (x.status == 403 && strncmp(url, "https:", 6) && proxy_for(url))) {
		/* a plain-HTTP request goes to the proxy itself */
		ret = proxy_refused(ctx, url, x.status,
				    x.status == 407 ? "Proxy Authentication "
						      "Required"
						    : "Forbidden");
	} else if (x.status >= 400) {
		ret = cctl__error(ctx, CCTL_ENETWORK,
				  "cannot download '%s': the server answered "
				  "HTTP %ld",
				  url, x.status);
	} else if (x.length >= 0 && x.got != (uint64_t)x.length) {
		ret = cctl__error(ctx, CCTL_ENETWORK,
				  "cannot download '%s': the connection was cut "
				  "after %llu of %lld bytes",
				  url, (unsigned long long)x.got,
				  (long long)x.length);
	}
	curl_easy_cleanup(x.h);
	free(x.hold);
	return ret;
}

/*
 * Downloads (os.h: cctl_os_http_get) for Windows with WinHTTP, a system
 * DLL: the system's proxy settings, its certificate store and its TLS.
 * One synchronous GET: WinHttpCrackUrl, WinHttpConnect/OpenRequest,
 * SendRequest and ReceiveResponse, then the body block by block through
 * WinHttpQueryDataAvailable and WinHttpReadData into the sink.  The
 * session (WinHttpOpen) is the process's, one for http:// and one for
 * https://, made by the first GET and kept: WinHTTP keeps a session's
 * connections alive, so the ranges a thread fetches one after another
 * go over one connection (and one TLS handshake), as libcurl's shared
 * connections do on Linux (http-posix.c).
 *
 * WinHTTP ends the body of a connection the server cut with a read of 0
 * bytes and no error, exactly as it ends a complete one (seen under Wine;
 * /work/shared/FACTS.md): the bytes received are compared with what the
 * response announced (Content-Length, or the range of a 206), and fewer
 * is CCTL_ENETWORK.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <winhttp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../core/internal.h"
#include "../os.h"
#include "win.h"

#define BLOCK (256 * 1024)
/* Longest timeout taken, in seconds (a day): the milliseconds fit a DWORD. */
#define MAX_TIMEOUT_S 86400

struct get {
	struct cctl_ctx *ctx;
	const char *url;
	HINTERNET session, connect, request;
	int connect_s, stall_s; /* as taken: 1 s to a day */
	DWORD connect_ms;
	ULONGLONG resolving; /* when the current name lookup began */
	DWORD secure;        /* WINHTTP_CALLBACK_STATUS_FLAG_* of a TLS failure */
	const char *proxy_var; /* the variable naming the proxy used, or NULL */
};

/* ------------------------------------------------------------ messages */

/* Texts of the WinHTTP and Winsock codes a download meets, for where the
 * system has no text for them (Wine has none). */
static const struct {
	DWORD code;
	const char *text;
} winhttp_texts[] = {
	{ERROR_WINHTTP_TIMEOUT, "the operation timed out"},
	{ERROR_WINHTTP_INTERNAL_ERROR, "an internal error occurred in WinHTTP"},
	{ERROR_WINHTTP_INVALID_URL, "the URL is invalid"},
	{ERROR_WINHTTP_UNRECOGNIZED_SCHEME,
	 "the URL does not use a recognized protocol (http or https)"},
	{ERROR_WINHTTP_NAME_NOT_RESOLVED, "the server name could not be resolved"},
	{ERROR_WINHTTP_OPERATION_CANCELLED, "the operation was cancelled"},
	{ERROR_WINHTTP_CANNOT_CONNECT,
	 "a connection with the server could not be established"},
	{ERROR_WINHTTP_CONNECTION_ERROR,
	 "the connection with the server was reset or terminated"},
	{ERROR_WINHTTP_RESEND_REQUEST, "the request must be sent again"},
	{ERROR_WINHTTP_SECURE_CERT_DATE_INVALID,
	 "the server's certificate has expired or is not yet valid"},
	{ERROR_WINHTTP_SECURE_CERT_CN_INVALID,
	 "the server's certificate is for another name"},
	{ERROR_WINHTTP_SECURE_INVALID_CA,
	 "the server's certificate was issued by an authority that is not trusted"},
	{ERROR_WINHTTP_SECURE_CERT_REV_FAILED,
	 "the revocation of the server's certificate could not be checked"},
	{ERROR_WINHTTP_INVALID_SERVER_RESPONSE,
	 "the server's response could not be parsed"},
	{ERROR_WINHTTP_REDIRECT_FAILED,
	 "the redirect failed (from https to http, or too many)"},
	{ERROR_WINHTTP_SECURE_CHANNEL_ERROR,
	 "an error occurred in the secure channel"},
	{ERROR_WINHTTP_SECURE_INVALID_CERT, "the server's certificate is invalid"},
	{ERROR_WINHTTP_SECURE_CERT_REVOKED,
	 "the server's certificate has been revoked"},
	{ERROR_WINHTTP_SECURE_FAILURE,
	 "the secure connection failed (the server's certificate or TLS)"},
	{ERROR_WINHTTP_SECURE_CERT_WRONG_USAGE,
	 "the server's certificate is not valid for this use"},
	/* Wine ends a timed-out receive with the socket's error */
	{WSAETIMEDOUT, "the operation timed out"},
	{WSAECONNRESET, "the connection was reset by the server"},
	{WSAECONNABORTED, "the connection was aborted"},
	{WSAECONNREFUSED, "the server refused the connection"},
	{WSAENETUNREACH, "the network is unreachable"},
	{WSAEHOSTUNREACH, "the host is unreachable"},
};

/* The system's text for err, with its number, as cctl_win_message gives
 * it: WinHTTP's own codes (12000-12999) are in winhttp.dll's message
 * table, which FormatMessage reads only when it is given the module. */
static void http_message(DWORD err, char *out, size_t n)
{
	DWORD flags = FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS;
	HMODULE mod = NULL;
	wchar_t buf[512];
	DWORD len;
	char *s;

	if (err >= WINHTTP_ERROR_BASE && err <= WINHTTP_ERROR_BASE + 999 &&
	    (mod = GetModuleHandleW(L"winhttp.dll")))
		flags |= FORMAT_MESSAGE_FROM_HMODULE;
	len = FormatMessageW(flags, mod, err, 0, buf, 512, NULL);
	while (len && (buf[len - 1] == L'\n' || buf[len - 1] == L'\r' ||
		       buf[len - 1] == L'.' || buf[len - 1] == L' '))
		buf[--len] = 0;
	if (len) {
		s = cctl_win_narrow(buf);
		snprintf(out, n, "%s (%lu)", s, (unsigned long)err);
		free(s);
		return;
	}
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(winhttp_texts); i++)
		if (winhttp_texts[i].code == err) {
			snprintf(out, n, "%s (%lu)", winhttp_texts[i].text,
				 (unsigned long)err);
			return;
		}
	snprintf(out, n, "WinHTTP error %lu", (unsigned long)err);
}

/* What was wrong with the server's certificate, from the flags of the
 * secure-failure notification. */
static const struct {
	DWORD flag;
	const char *text;
} secure_texts[] = {
	{WINHTTP_CALLBACK_STATUS_FLAG_INVALID_CA,
	 "its certificate was issued by an authority that is not trusted"},
	{WINHTTP_CALLBACK_STATUS_FLAG_CERT_CN_INVALID,
	 "its certificate is for another name"},
	{WINHTTP_CALLBACK_STATUS_FLAG_CERT_DATE_INVALID,
	 "its certificate has expired or is not yet valid"},
	{WINHTTP_CALLBACK_STATUS_FLAG_CERT_REVOKED,
	 "its certificate has been revoked"},
	{WINHTTP_CALLBACK_STATUS_FLAG_CERT_REV_FAILED,
	 "the revocation of its certificate could not be checked"},
	{WINHTTP_CALLBACK_STATUS_FLAG_CERT_WRONG_USAGE,
	 "its certificate is not for a server"},
	{WINHTTP_CALLBACK_STATUS_FLAG_INVALID_CERT,
	 "its certificate is invalid"},
	{WINHTTP_CALLBACK_STATUS_FLAG_SECURITY_CHANNEL_ERROR,
	 "the secure channel failed"},
};

/* ", the server: <what>; <what>" for the flags, or "". */
static void secure_detail(DWORD flags, char *out, size_t n)
{
	size_t len = 0;
	out[0] = 0;
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(secure_texts); i++) {
		if (!(flags & secure_texts[i].flag) || len + 1 >= n)
			continue;
		snprintf(out + len, n - len, "%s%s", len ? "; " : " (the server: ",
			 secure_texts[i].text);
		len += strlen(out + len);
	}
	if (len && len + 1 < n)
		snprintf(out + len, n - len, ")");
}

static int is_timeout(DWORD err)
{
	return err == ERROR_WINHTTP_TIMEOUT || err == WSAETIMEDOUT;
}

/* "cannot download 'URL': [pre: ]<the system's text>[post]", with the
 * OS error and the code on the context: a URL WinHTTP cannot take is a
 * usage error, memory is memory, anything else the network's (worth a
 * retry). */
static int fail(struct get *g, DWORD err, const char *pre, const char *post)
{
	char msg[600];
	int code = CCTL_ENETWORK;
	if (err == ERROR_WINHTTP_INVALID_URL ||
	    err == ERROR_WINHTTP_UNRECOGNIZED_SCHEME)
		code = CCTL_EUSAGE;
	else if (err == ERROR_NOT_ENOUGH_MEMORY || err == ERROR_OUTOFMEMORY)
		code = CCTL_ENOMEM;
	http_message(err, msg, sizeof(msg));
	return cctl__os_error(g->ctx, code, (int)err,
			      "cannot download '%s': %s%s%s%s", g->url,
			      pre ? pre : "", pre ? ": " : "", msg,
			      post ? post : "");
}

/* ------------------------------------------------------------ headers */

/* A response header as text into buf (n characters); 0 when absent. */
static int query_text(struct get *g, DWORD what, wchar_t *buf, DWORD n)
{
	DWORD bytes = n * sizeof(wchar_t);
	if (WinHttpQueryHeaders(g->request, what, WINHTTP_HEADER_NAME_BY_INDEX,
				buf, &bytes, WINHTTP_NO_HEADER_INDEX))
		return 1;
	buf[0] = 0;
	return 0;
}

/* Decimal digits at *p (spaces before them skipped) into *v; moves *p past
 * them.  0 when there are none or they overflow. */
static int parse_u64(const wchar_t **p, uint64_t *v)
{
	const wchar_t *s = *p;
	uint64_t x = 0;
	while (*s == L' ' || *s == L'\t')
		s++;
	if (*s < L'0' || *s > L'9')
		return 0;
	for (; *s >= L'0' && *s <= L'9'; s++) {
		if (x > (UINT64_MAX - 9) / 10)
			return 0;
		x = x * 10 + (uint64_t)(*s - L'0');
	}
	*p = s;
	*v = x;
	return 1;
}

/* Content-Length: *length, or -1 when the response has none.  0, or 1 when
 * it is there but not a number. */
static int content_length(struct get *g, int64_t *length)
{
	wchar_t buf[64];
	const wchar_t *p = buf;
	uint64_t v;
	*length = -1;
	if (!query_text(g, WINHTTP_QUERY_CONTENT_LENGTH, buf, 64))
		return 0;
	if (!parse_u64(&p, &v) || v > INT64_MAX)
		return 1;
	while (*p == L' ' || *p == L'\t')
		p++;
	if (*p)
		return 1;
	*length = (int64_t)v;
	return 0;
}

/* Content-Range of a 206, "bytes FIRST-LAST/TOTAL" (TOTAL may be "*"):
 * *first and *last.  0 when absent or not of that form. */
static int content_range(struct get *g, uint64_t *first, uint64_t *last)
{
	wchar_t buf[128];
	const wchar_t *p = buf;
	if (!query_text(g, WINHTTP_QUERY_CONTENT_RANGE, buf, 128))
		return 0;
	while (*p == L' ')
		p++;
	if (_wcsnicmp(p, L"bytes", 5))
		return 0;
	p += 5;
	if (!parse_u64(&p, first) || *p++ != L'-' || !parse_u64(&p, last) ||
	    *last < *first)
		return 0;
	return 1;
}

/* The status line's reason ("Not Found"), printable ASCII only. */
static void status_text(struct get *g, char *out, size_t n)
{
	wchar_t buf[128];
	size_t j = 0;
	query_text(g, WINHTTP_QUERY_STATUS_TEXT, buf, 128);
	for (size_t i = 0; buf[i] && j + 1 < n; i++)
		out[j++] = buf[i] >= 0x20 && buf[i] < 0x7f ? (char)buf[i] : '?';
	out[j] = 0;
}

/* ------------------------------------------------------------ timeouts */

/* The notifications asked for (they come in synchronous mode too, on
 * this thread):
 * - resolving and connecting share connect_ms.  WinHttpSetTimeouts gives
 *   each of them the whole of it, so once the name is resolved the
 *   connect timeout is cut down to what is left (Wine reads it after the
 *   notification; where a system reads it earlier, or sends none, each
 *   step keeps its own limit);
 * - a TLS failure's flags say what was wrong with the certificate (not
 *   sent by Wine 8), for the message. */
static void CALLBACK on_status(HINTERNET h, DWORD_PTR context, DWORD status,
			       LPVOID info, DWORD len)
{
	struct get *g = (struct get *)context;
	ULONGLONG spent;
	DWORD left;
	if (!g)
		return;
	if (status == WINHTTP_CALLBACK_STATUS_SECURE_FAILURE) {
		if (info && len >= sizeof(DWORD))
			g->secure |= *(const DWORD *)info;
		return;
	}
	if (status == WINHTTP_CALLBACK_STATUS_RESOLVING_NAME) {
		/* again for each host a redirect leads to */
		g->resolving = GetTickCount64();
		left = g->connect_ms;
	} else if (status == WINHTTP_CALLBACK_STATUS_NAME_RESOLVED &&
		   g->resolving) {
		spent = GetTickCount64() - g->resolving;
		left = spent < g->connect_ms ? g->connect_ms - (DWORD)spent : 1;
	} else {
		return;
	}
	WinHttpSetOption(h, WINHTTP_OPTION_CONNECT_TIMEOUT, &left, sizeof(left));
}

static int timeout_s(int s)
{
	return s < 1 ? 1 : s > MAX_TIMEOUT_S ? MAX_TIMEOUT_S : s;
}

/* ------------------------------------------------------------ the GET */

static wchar_t *put_u64(wchar_t *out, uint64_t v)
{
	wchar_t digits[24];
	size_t n = 0;
	do {
		digits[n++] = (wchar_t)(L'0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*out++ = digits[--n];
	return out;
}

/* "Range: bytes=OFFSET-", or "Range: bytes=OFFSET-LAST" for an end */
static void range_header(wchar_t *out, uint64_t offset, uint64_t end)
{
	wcscpy(out, L"Range: bytes=");
	out = put_u64(out + wcslen(out), offset);
	*out++ = L'-';
	if (end > offset)
		out = put_u64(out, end - 1);
	*out = 0;
}

/* A proxy variable as WinHTTP takes a named proxy: "HOST:PORT" out of
 * "http://HOST:PORT/" (credentials are not passed on); NULL when unset. */
static wchar_t *proxy_from_env(const char *const *vars, const char **used)
{
	for (; *vars; vars++) {
		const char *v = cctl_os_getenv(*vars), *at;
		char *host;
		wchar_t *w;
		size_t n;
		if (!v || !*v)
			continue;
		if (strstr(v, "://"))
			v = strstr(v, "://") + 3;
		if ((at = strrchr(v, '@')))
			v = at + 1;
		n = strcspn(v, "/");
		host = cctl_xstrfmt("%.*s", (int)n, v);
		w = cctl_win_wide(host);
		free(host);
		*used = *vars;
		return w;
	}
	return NULL;
}

/* NO_PROXY ("a.example,.b.example,10.0.0.1") as WinHTTP's bypass list
 * ("a.example;*.b.example;10.0.0.1"); NULL when unset. */
static wchar_t *bypass_from_env(void)
{
	const char *v = cctl_os_getenv("NO_PROXY");
	struct cctl_buf b = CCTL_BUF_INIT;
	wchar_t *w;
	if (!v || !*v)
		return NULL;
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ", ");
		if (n) {
			if (b.len)
				cctl_buf_addch(&b, ';');
			if (*p == '.')
				cctl_buf_addch(&b, '*');
			cctl_buf_add(&b, p, n);
		}
		p += n;
		while (*p == ',' || *p == ' ')
			p++;
	}
	w = cctl_win_wide(b.buf ? b.buf : "");
	cctl_buf_release(&b);
	return w;
}

/* The session.  HTTPS_PROXY (or HTTP_PROXY for http://, ALL_PROXY), when
 * set, is used as a named proxy, NO_PROXY its bypass list, as curl, git
 * and pip on Windows take them (NO_PROXY=* : none); else the system's
 * proxy settings: the automatic ones (WinHTTP's own settings, then the
 * user's, then auto-discovery) where this WinHTTP has them (Windows 8.1),
 * else WinHTTP's own (netsh winhttp set proxy). */
static HINTERNET open_session(int https, const char **var)
{
	static const wchar_t agent[] = L"cudnnctl/" CCTL_VERSION;
	static const char *const for_https[] = { "HTTPS_PROXY", "ALL_PROXY",
						 NULL };
	static const char *const for_http[] = { "HTTP_PROXY", "ALL_PROXY",
						NULL };
	const char *no = cctl_os_getenv("NO_PROXY");
	wchar_t *named = no && !strcmp(no, "*")
				 ? NULL
				 : proxy_from_env(https ? for_https : for_http, var);
	HINTERNET s;
	if (named) {
		wchar_t *bypass = bypass_from_env();
		s = WinHttpOpen(agent, WINHTTP_ACCESS_TYPE_NAMED_PROXY, named,
				bypass ? bypass : WINHTTP_NO_PROXY_BYPASS, 0);
		free(bypass);
		free(named);
		return s;
	}
	s = WinHttpOpen(agent, WINHTTP_ACCESS_TYPE_AUTOMATIC_PROXY,
			WINHTTP_NO_PROXY_NAME, WINHTTP_NO_PROXY_BYPASS, 0);
	if (!s)
		s = WinHttpOpen(agent, WINHTTP_ACCESS_TYPE_DEFAULT_PROXY,
				WINHTTP_NO_PROXY_NAME, WINHTTP_NO_PROXY_BYPASS,
				0);
	return s;
}

/* The process's session for https (1) or http (0), made once, with the
 * variable naming its proxy; NULL, with the error in *err, when none can
 * be made (the next GET tries again). */
static HINTERNET shared_session(int https, const char **var, DWORD *err)
{
	static SRWLOCK lock = SRWLOCK_INIT;
	static HINTERNET sessions[2];
	static const char *vars[2];
	HINTERNET s;
	AcquireSRWLockExclusive(&lock);
	if (!sessions[https] &&
	    !(sessions[https] = open_session(https, &vars[https])))
		*err = GetLastError();
	s = sessions[https];
	*var = vars[https];
	ReleaseSRWLockExclusive(&lock);
	return s;
}

/* Sends the request and reads the response's headers. */
static int send_request(struct get *g, const URL_COMPONENTS *uc,
			uint64_t offset, uint64_t end)
{
	DWORD stall_ms = (DWORD)g->stall_s * 1000;
	DWORD_PTR self = (DWORD_PTR)g;
	wchar_t *host = NULL, *object = NULL, range[64];
	char pre[64], post[400];
	size_t olen;
	int ret = 0;

	DWORD why = 0;

	if (!(g->session = shared_session(uc->nScheme == INTERNET_SCHEME_HTTPS,
					  &g->proxy_var, &why)))
		return fail(g, why, NULL, NULL);

	host = cctl_xcalloc(uc->dwHostNameLength + 1, sizeof(wchar_t));
	memcpy(host, uc->lpszHostName, uc->dwHostNameLength * sizeof(wchar_t));
	/* the path and the query, without a fragment: "/" when empty */
	olen = uc->dwUrlPathLength + uc->dwExtraInfoLength;
	object = cctl_xcalloc(olen + 2, sizeof(wchar_t));
	if (uc->dwUrlPathLength && uc->lpszUrlPath)
		memcpy(object, uc->lpszUrlPath,
		       uc->dwUrlPathLength * sizeof(wchar_t));
	if (uc->dwExtraInfoLength && uc->lpszExtraInfo)
		memcpy(object + uc->dwUrlPathLength, uc->lpszExtraInfo,
		       uc->dwExtraInfoLength * sizeof(wchar_t));
	if (wcschr(object, L'#'))
		*wcschr(object, L'#') = 0;
	if (!object[0])
		wcscpy(object, L"/");

	if (!(g->connect = WinHttpConnect(g->session, host, uc->nPort, 0)) ||
	    !(g->request = WinHttpOpenRequest(
		      g->connect, L"GET", object, NULL, WINHTTP_NO_REFERER,
		      WINHTTP_DEFAULT_ACCEPT_TYPES,
		      uc->nScheme == INTERNET_SCHEME_HTTPS ? WINHTTP_FLAG_SECURE
							   : 0))) {
		ret = fail(g, GetLastError(), NULL, NULL);
		goto out;
	}
	/* no byte for stall_s: sending, the response's headers, each read
	 * (the request's own: the session is shared) */
	if (!WinHttpSetTimeouts(g->request, (int)g->connect_ms,
				(int)g->connect_ms, (int)stall_ms,
				(int)stall_ms)) {
		ret = fail(g, GetLastError(), NULL, NULL);
		goto out;
	}
	WinHttpSetOption(g->request, WINHTTP_OPTION_RECEIVE_RESPONSE_TIMEOUT,
			 &stall_ms, sizeof(stall_ms));
	WinHttpSetOption(g->request, WINHTTP_OPTION_CONTEXT_VALUE, &self,
			 sizeof(self));
	WinHttpSetStatusCallback(g->request, on_status,
				 WINHTTP_CALLBACK_FLAG_RESOLVE_NAME |
					 WINHTTP_CALLBACK_FLAG_SECURE_FAILURE,
				 0);
	if (offset || end) {
		range_header(range, offset, end);
		if (!WinHttpAddRequestHeaders(g->request, range, (DWORD)-1,
					      WINHTTP_ADDREQ_FLAG_ADD |
						      WINHTTP_ADDREQ_FLAG_REPLACE)) {
			ret = fail(g, GetLastError(), NULL, NULL);
			goto out;
		}
	}
	if (!WinHttpSendRequest(g->request, WINHTTP_NO_ADDITIONAL_HEADERS, 0,
				WINHTTP_NO_REQUEST_DATA, 0, 0, 0)) {
		DWORD err = GetLastError();
		snprintf(pre, sizeof(pre), "no connection within %d s",
			 g->connect_s);
		secure_detail(g->secure, post, sizeof(post));
		ret = fail(g, err, is_timeout(err) ? pre : NULL, post);
	} else if (!WinHttpReceiveResponse(g->request, NULL)) {
		DWORD err = GetLastError();
		snprintf(pre, sizeof(pre), "no answer for %d s", g->stall_s);
		ret = fail(g, err, is_timeout(err) ? pre : NULL, NULL);
	}
out:
	free(host);
	free(object);
	return ret;
}

/* The body into the sink; length: what the response announced, or -1. */
static int read_body(struct get *g, int64_t length,
		     const struct cctl_os_http_sink *sink)
{
	char *buf = cctl_xmalloc(BLOCK);
	char pre[64], post[96];
	uint64_t got = 0;
	int ret = 0;

	for (;;) {
		DWORD avail = 0, n = 0;
		if (!WinHttpQueryDataAvailable(g->request, &avail) ||
		    (avail && !WinHttpReadData(g->request, buf,
					       avail < BLOCK ? avail : BLOCK, &n))) {
			DWORD err = GetLastError();
			snprintf(pre, sizeof(pre), "no data for %d s",
				 g->stall_s);
			if (length >= 0)
				snprintf(post, sizeof(post),
					 ", after %llu of %lld bytes",
					 (unsigned long long)got,
					 (long long)length);
			else
				snprintf(post, sizeof(post),
					 ", after %llu bytes",
					 (unsigned long long)got);
			ret = fail(g, err, is_timeout(err) ? pre : NULL, post);
			goto out;
		}
		if (!n) /* the end, or a cut: the same to WinHTTP */
			break;
		got += n;
		if ((ret = sink->on_data(sink->ud, buf, n)))
			goto out;
	}
	if (length >= 0 && got < (uint64_t)length)
		ret = cctl__error(g->ctx, CCTL_ENETWORK,
				  "cannot download '%s': the connection was cut "
				  "after %llu of %lld bytes",
				  g->url, (unsigned long long)got,
				  (long long)length);
out:
	free(buf);
	return ret;
}

/* The URL's parts; only http: and https: with a host. */
static int crack_url(struct get *g, const wchar_t *wurl, URL_COMPONENTS *uc)
{
	memset(uc, 0, sizeof(*uc));
	uc->dwStructSize = sizeof(*uc);
	uc->dwHostNameLength = (DWORD)-1;
	uc->dwUrlPathLength = (DWORD)-1;
	uc->dwExtraInfoLength = (DWORD)-1;
	if (!WinHttpCrackUrl(wurl, 0, 0, uc))
		return fail(g, GetLastError(), NULL, NULL);
	if ((uc->nScheme != INTERNET_SCHEME_HTTP &&
	     uc->nScheme != INTERNET_SCHEME_HTTPS) ||
	    !uc->dwHostNameLength)
		return fail(g, uc->dwHostNameLength
				       ? ERROR_WINHTTP_UNRECOGNIZED_SCHEME
				       : ERROR_WINHTTP_INVALID_URL,
			    NULL, NULL);
	return 0;
}

/* An answer that is an error: the proxy's refusal, or the server's. */
static int status_error(struct get *g, DWORD status)
{
	char reason[128];
	if (status == 407 ||
	    (status == 403 && g->proxy_var && strncmp(g->url, "https:", 6))) {
		/* a plain-HTTP request goes to the proxy itself */
		status_text(g, reason, sizeof(reason));
		cctl__error(g->ctx, CCTL_ENETWORK,
			    "cannot download '%s': the proxy refused it "
			    "(HTTP %lu%s%s)",
			    g->url, (unsigned long)status, reason[0] ? " " : "",
			    reason);
		cctl__hint(g->ctx, "check the proxy in %s (or the system's proxy "
				   "settings): its address, and that it lets this "
				   "machine reach the host; NO_PROXY lists the hosts "
				   "reached without it",
			   g->proxy_var ? g->proxy_var : "HTTPS_PROXY");
		return CCTL_ENETWORK;
	}
	if (status >= 400) {
		/* worded as http-posix.c words it, with the reason phrase */
		status_text(g, reason, sizeof(reason));
		if (status == 404 || status == 410)
			return cctl__error(g->ctx, CCTL_ENOTFOUND,
					   "cannot download '%s': the server has "
					   "no such file (HTTP %lu%s%s)",
					   g->url, (unsigned long)status,
					   reason[0] ? " " : "", reason);
		return cctl__error(g->ctx, CCTL_ENETWORK,
				   "cannot download '%s': the server answered "
				   "HTTP %lu%s%s",
				   g->url, (unsigned long)status,
				   reason[0] ? " " : "", reason);
	}
	return 0;
}

int cctl_os_http_get(struct cctl_ctx *ctx, const char *url, uint64_t offset,
		     uint64_t end, int connect_s, int stall_s,
		     const struct cctl_os_http_sink *sink)
{
	struct get g;
	URL_COMPONENTS uc;
	wchar_t *wurl = cctl_win_wide(url);
	DWORD status = 0, size = sizeof(status);
	int64_t length;
	uint64_t start = 0, first, last;
	int ret;

	memset(&g, 0, sizeof(g));
	g.ctx = ctx;
	g.url = url;
	g.connect_s = timeout_s(connect_s);
	g.stall_s = timeout_s(stall_s);
	g.connect_ms = (DWORD)g.connect_s * 1000;

	if ((ret = crack_url(&g, wurl, &uc)))
		goto out;
	if ((ret = send_request(&g, &uc, offset, end)))
		goto out;

	if (!WinHttpQueryHeaders(g.request,
				 WINHTTP_QUERY_STATUS_CODE |
					 WINHTTP_QUERY_FLAG_NUMBER,
				 WINHTTP_HEADER_NAME_BY_INDEX, &status, &size,
				 WINHTTP_NO_HEADER_INDEX)) {
		ret = fail(&g, GetLastError(), NULL, NULL);
		goto out;
	}
	if (content_length(&g, &length) && status < 400) {
		ret = cctl__error(ctx, CCTL_ENETWORK,
				  "cannot download '%s': the server sent an "
				  "invalid Content-Length", url);
		goto out;
	}
	if (status == 206) {
		if (!content_range(&g, &first, &last)) {
			ret = cctl__error(ctx, CCTL_ENETWORK,
					  "cannot download '%s': the server "
					  "answered 206 without a valid "
					  "Content-Range", url);
			goto out;
		}
		start = first;
		/* the range says how long the body is where nothing else
		 * does */
		if (length < 0 && last - first < INT64_MAX)
			length = (int64_t)(last - first + 1);
	}
	/* on_start is optional (the index and manifest reads have none) */
	if (sink->on_start &&
	    (ret = sink->on_start(sink->ud, (int)status, length, start)))
		goto out;
	if ((ret = status_error(&g, status)))
		goto out;
	ret = read_body(&g, length, sink);
out:
	/* the request first: closing it ends whatever it still has open */
	if (g.request) {
		WinHttpSetStatusCallback(g.request, NULL, 0, 0);
		WinHttpCloseHandle(g.request);
	}
	if (g.connect)
		WinHttpCloseHandle(g.connect);
	free(wurl);
	return ret;
}

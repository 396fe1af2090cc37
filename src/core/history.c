/*
 * <root>/history.jsonl: one line per change to the root (install, switch,
 * uninstall, deactivate, path restore, link-cuda...), appended under the
 * root lock in one write and flushed: UTC time, user, host, the command
 * line, the active version before and after, the archive's SHA-256, the
 * result and exit status.  Lines are flat JSON objects of strings,
 * numbers, booleans and nulls, written here; reading them back takes only
 * that shape, and a line that is not (damaged, cut by a power loss) is
 * skipped and counted, never fatal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

#define HISTORY "history.jsonl"

static void json_string(struct cctl_buf *b, const char *s)
{
	if (!s) {
		cctl_buf_adds(b, "null");
		return;
	}
	cctl_buf_addch(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			cctl_buf_addf(b, "\\%c", c);
		else if (c < 0x20)
			cctl_buf_addf(b, "\\u%04x", c);
		else
			cctl_buf_addch(b, (char)c);
	}
	cctl_buf_addch(b, '"');
}

int cctl_history_append(struct cctl_ctx *ctx, const struct cctl_root *r,
			const struct cctl_history_entry *e)
{
	struct cctl_buf line = CCTL_BUF_INIT, user = CCTL_BUF_INIT,
			host = CCTL_BUF_INIT;
	char when[32], *path = cctl_path_join(r->path, HISTORY, NULL);
	int ret;

	cctl_os_utc_now(when);
	cctl_os_identity(&user, &host);
	cctl_buf_adds(&line, "{\"time\":");
	json_string(&line, when);
	cctl_buf_adds(&line, ",\"user\":");
	json_string(&line, user.len ? user.buf : NULL);
	cctl_buf_adds(&line, ",\"host\":");
	json_string(&line, host.len ? host.buf : NULL);
	cctl_buf_adds(&line, ",\"command\":");
	json_string(&line, e->command);
	cctl_buf_adds(&line, ",\"args\":");
	json_string(&line, e->args);
	cctl_buf_adds(&line, ",\"from\":");
	json_string(&line, e->from);
	cctl_buf_adds(&line, ",\"to\":");
	json_string(&line, e->to);
	cctl_buf_adds(&line, ",\"sha256\":");
	json_string(&line, e->sha256 && *e->sha256 ? e->sha256 : NULL);
	cctl_buf_addf(&line, ",\"ok\":%s,\"exit_status\":%d}\n", e->ok ? "true" : "false",
		      e->exit_status);
	ret = cctl_os_append_file(ctx, path, line.buf, line.len);
	cctl_buf_release(&line);
	cctl_buf_release(&user);
	cctl_buf_release(&host);
	free(path);
	return ret;
}

/* ------------------------------------------------------------ reading */

/* A JSON string at *p (after its opening quote) into out; 0, or -1 when
 * it is not one. */
static int parse_string(const char **p, struct cctl_buf *out)
{
	const char *s = *p;
	for (; *s && *s != '"'; s++) {
		if ((unsigned char)*s < 0x20)
			return -1;
		if (*s != '\\') {
			cctl_buf_addch(out, *s);
			continue;
		}
		switch (*++s) {
		case '"': case '\\': case '/': cctl_buf_addch(out, *s); break;
		case 'n': cctl_buf_addch(out, '\n'); break;
		case 't': cctl_buf_addch(out, '\t'); break;
		case 'r': cctl_buf_addch(out, '\r'); break;
		case 'b': cctl_buf_addch(out, '\b'); break;
		case 'f': cctl_buf_addch(out, '\f'); break;
		case 'u': {
			unsigned v;
			if (sscanf(s + 1, "%4x", &v) != 1 || v > 0x7f)
				return -1; /* only the control characters we write */
			cctl_buf_addch(out, (char)v);
			s += 4;
			break;
		}
		default:
			return -1;
		}
	}
	if (*s != '"')
		return -1;
	*p = s + 1;
	return 0;
}

static char **field(struct cctl_history_entry *e, const char *key)
{
	static const char *const names[] = { "time", "user", "host", "command",
					     "args", "from", "to", "sha256" };
	char **slots[] = { &e->time, &e->user, &e->host, &e->command,
			   &e->args, &e->from, &e->to, &e->sha256 };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(names[i], key))
			return slots[i];
	return NULL;
}

static void entry_release(struct cctl_history_entry *e)
{
	free(e->time);
	free(e->user);
	free(e->host);
	free(e->command);
	free(e->args);
	free(e->from);
	free(e->to);
	free(e->sha256);
	memset(e, 0, sizeof(*e));
}

/* One line: a flat object; 0, or -1 (e left empty). */
static int parse_line(const char *p, struct cctl_history_entry *e)
{
	struct cctl_buf key = CCTL_BUF_INIT, val = CCTL_BUF_INIT;
	int ret = -1;
	memset(e, 0, sizeof(*e));
	if (*p++ != '{')
		goto out;
	while (*p == '"') {
		char **slot;
		p++;
		cctl_buf_reset(&key);
		cctl_buf_reset(&val);
		if (parse_string(&p, &key) || *p++ != ':')
			goto out;
		slot = field(e, key.buf);
		if (*p == '"') {
			p++;
			if (parse_string(&p, &val))
				goto out;
			if (slot && !*slot)
				*slot = cctl_xstrdup(val.buf);
		} else if (!strncmp(p, "null", 4)) {
			p += 4;
		} else if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
			if (!strcmp(key.buf, "ok"))
				e->ok = *p == 't';
			p += *p == 't' ? 4 : 5;
		} else if ((*p >= '0' && *p <= '9') || *p == '-') {
			char *end;
			long v = strtol(p, &end, 10);
			if (!strcmp(key.buf, "exit_status"))
				e->exit_status = (int)v;
			p = end;
		} else {
			goto out;
		}
		if (*p == ',')
			p++;
		else if (*p != '}')
			goto out;
	}
	ret = *p == '}' && !p[1] && e->time && e->command ? 0 : -1;
out:
	if (ret)
		entry_release(e);
	cctl_buf_release(&key);
	cctl_buf_release(&val);
	return ret;
}

int cctl_history_read(struct cctl_ctx *ctx, const struct cctl_root *r,
		      struct cctl_history_entry **v, size_t *n, size_t *skipped)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *path = cctl_path_join(r->path, HISTORY, NULL), *line, *next;
	struct cctl_os_stat st;
	int ret;

	*v = NULL;
	*n = *skipped = 0;
	if ((ret = cctl_os_stat(ctx, path, &st)) || st.type == CCTL_OS_NONE ||
	    (ret = cctl_os_read_file(ctx, path, &text)))
		goto out;
	for (line = text.buf; line && *line; line = next) {
		struct cctl_history_entry e;
		if ((next = strchr(line, '\n')))
			*next++ = 0;
		if (!*line)
			continue;
		if (parse_line(line, &e)) {
			(*skipped)++;
			continue;
		}
		*v = cctl_xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = e;
	}
	if (*skipped)
		cctl__warn(ctx, "%s: %zu damaged line%s skipped", path, *skipped,
			   *skipped == 1 ? "" : "s");
out:
	cctl_buf_release(&text);
	free(path);
	return ret;
}

void cctl_history_release(struct cctl_history_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		entry_release(&v[i]);
	free(v);
}

int cctl_history_previous(struct cctl_ctx *ctx, const struct cctl_root *r,
			  char **id)
{
	struct cctl_history_entry *v;
	char *active = NULL;
	size_t n, skipped;
	int ret;

	*id = NULL;
	if ((ret = cctl_store_active(ctx, r, &active)) ||
	    (ret = cctl_history_read(ctx, r, &v, &n, &skipped)))
		goto out;
	/* the last change that made the active version active */
	for (size_t i = n; i-- > 0 && !*id;) {
		const struct cctl_history_entry *e = &v[i];
		if (e->ok && e->from && e->to && active && !strcmp(e->to, active) &&
		    strcmp(e->from, e->to))
			*id = cctl_xstrdup(e->from);
	}
	cctl_history_release(v, n);
	if (!*id) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND,
				  "no earlier active version in %s's history",
				  r->path);
		cctl__hint(ctx, "cudnnctl history shows what changed; cudnnctl "
				"switch VERSION names one");
	}
out:
	free(active);
	return ret;
}

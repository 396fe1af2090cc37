/*
 * Which version applies here: the command line, CUDNNCTL_VERSION, the
 * nearest .cudnn-version (found by walking up from the current folder), or
 * the active version, in that order; and writing a .cudnn-version.
 *
 * A pin file holds one version line, "9.10" or "9.10 cuda12" (a version
 * prefix and optionally the CUDA major); '#' starts a comment, blank lines
 * are skipped.  Anything else is refused, naming the file and the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

#define PIN_NAME ".cudnn-version"
#define PIN_MAX 4096 /* a pin file is one line: more is not one */

static int is_sep(char c)
{
	return c == '/' || (cctl_platform_host()->windows && c == '\\');
}

/* dir's parent, in place; 0 when dir is a top folder ("/", "C:\"). */
static int to_parent(char *dir)
{
	size_t n = strlen(dir);
	if ((n == 1 && is_sep(dir[0])) || (n == 3 && dir[1] == ':' && is_sep(dir[2])))
		return 0;
	while (n > 1 && is_sep(dir[n - 1]))
		n--;
	while (n > 0 && !is_sep(dir[n - 1]))
		n--;
	if (n == 0)
		return 0;
	/* keep the separator of a top folder */
	if (n == 1 || (n == 3 && dir[1] == ':'))
		dir[n] = 0;
	else
		dir[n - 1] = 0;
	return 1;
}

static int bad_pin(struct cctl_ctx *ctx, const char *file, int line,
		   const char *why)
{
	int ret = cctl__error(ctx, CCTL_EUSAGE, "'%s' line %d: %s", file, line, why);
	cctl__hint(ctx, "a pin file holds one line such as \"9.10\" or \"9.10 "
			"cuda12\"; cudnnctl pin VERSION writes one");
	return ret;
}

/* The next word of *p (blanks between words), NUL-ended in place; NULL at
 * the end. */
static char *next_word(char **p)
{
	char *w = *p + strspn(*p, " \t\r"), *end;
	if (!*w)
		return NULL;
	end = w + strcspn(w, " \t\r");
	*p = *end ? end + 1 : end;
	*end = 0;
	return w;
}

/* The version line of a pin file's text into pin. */
static int parse_pin(struct cctl_ctx *ctx, const char *file, char *text,
		     struct cctl_pin *pin)
{
	int line = 0;
	for (char *p = text, *next; p && *p; p = next) {
		char *hash, *ver, *cuda, *extra;
		next = strchr(p, '\n');
		if (next)
			*next++ = 0;
		line++;
		if ((hash = strchr(p, '#')))
			*hash = 0;
		ver = next_word(&p);
		if (!ver)
			continue;
		if (pin->version)
			return bad_pin(ctx, file, line, "a second version line");
		cuda = next_word(&p);
		extra = cuda ? next_word(&p) : NULL;
		if (!cctl_version_valid(ver))
			return bad_pin(ctx, file, line, "not a version (digits and "
							"dots: 9.10, 9.10.2.21)");
		if (cuda) {
			char *end;
			long c = strncmp(cuda, "cuda", 4) ? 0 : strtol(cuda + 4, &end, 10);
			if (!c || *end || !cctl_cuda_valid(c))
				return bad_pin(ctx, file, line, "after the version, "
								"only the CUDA major "
								"(cuda12)");
			pin->cuda = (int)c;
		}
		if (extra)
			return bad_pin(ctx, file, line, "more than a version and a "
							"CUDA major");
		pin->version = cctl_xstrdup(ver);
	}
	if (!pin->version)
		return bad_pin(ctx, file, line ? line : 1, "no version line");
	return 0;
}

int cctl_pin_find(struct cctl_ctx *ctx, const char *dir, struct cctl_pin *pin)
{
	struct cctl_buf at = CCTL_BUF_INIT, file = CCTL_BUF_INIT,
			text = CCTL_BUF_INIT;
	int ret;

	memset(pin, 0, sizeof(*pin));
	if ((ret = cctl_os_absolute(ctx, dir ? dir : ".", &at)))
		goto out;
	for (;;) {
		struct cctl_os_stat st;
		cctl_buf_reset(&file);
		cctl_buf_adds(&file, at.buf);
		cctl_buf_addpath(&file, PIN_NAME);
		cctl_os_native_path(file.buf);
		if (!cctl_os_stat(NULL, file.buf, &st) && st.type != CCTL_OS_NONE)
			break;
		if (!to_parent(at.buf))
			goto out; /* none: ret 0, pin->file NULL */
	}
	if ((ret = cctl_os_read_file(ctx, file.buf, &text)))
		goto out;
	if (text.len > PIN_MAX || memchr(text.buf, 0, text.len)) {
		ret = bad_pin(ctx, file.buf, 1, "not a one-line text file");
		goto out;
	}
	if ((ret = parse_pin(ctx, file.buf, text.buf, pin)))
		goto out;
	pin->file = cctl_buf_detach(&file);
	pin->source = pin->file;
out:
	if (ret)
		cctl_pin_release(pin);
	cctl_buf_release(&at);
	cctl_buf_release(&file);
	cctl_buf_release(&text);
	return ret;
}

int cctl_pin_choose(struct cctl_ctx *ctx, const char *version, int cuda,
		    struct cctl_pin *pin)
{
	const char *env = cctl_os_getenv("CUDNNCTL_VERSION");
	memset(pin, 0, sizeof(*pin));
	if (version) {
		pin->version = cctl_xstrdup(version);
		pin->cuda = cuda;
		pin->source = "the command line";
		return 0;
	}
	if (env && *env) {
		if (!cctl_version_valid(env) && !cctl_id_valid(env)) {
			int ret = cctl__error(ctx, CCTL_EUSAGE,
					      "CUDNNCTL_VERSION is '%.100s', not a "
					      "version (9.10, 9.10.2.21)",
					      env);
			cctl__hint(ctx, "set it to a version, or unset it");
			return ret;
		}
		pin->version = cctl_xstrdup(env);
		pin->cuda = cuda;
		pin->source = "CUDNNCTL_VERSION";
		return 0;
	}
	{
		int ret = cctl_pin_find(ctx, NULL, pin);
		if (ret || pin->version) {
			if (!ret && cuda)
				pin->cuda = cuda; /* --cuda over the file's */
			return ret;
		}
	}
	pin->source = "the active version";
	return 0;
}

void cctl_pin_release(struct cctl_pin *pin)
{
	free(pin->version);
	free(pin->file);
	memset(pin, 0, sizeof(*pin));
}

int cctl_pin_write(struct cctl_ctx *ctx, const char *version, int cuda,
		   char **path)
{
	struct cctl_buf at = CCTL_BUF_INIT, text = CCTL_BUF_INIT;
	int ret;

	*path = NULL;
	if (!cctl_version_valid(version) || (cuda && !cctl_cuda_valid(cuda)))
		return cctl__error(ctx, CCTL_EUSAGE, "'%s' is not a version",
				   version);
	if ((ret = cctl_os_absolute(ctx, ".", &at)))
		goto out;
	cctl_buf_addpath(&at, PIN_NAME);
	cctl_os_native_path(at.buf);
	cctl_buf_adds(&text, "# the cuDNN this project uses (cudnnctl which, "
			     "cudnnctl exec -- COMMAND)\n");
	cctl_buf_adds(&text, version);
	if (cuda)
		cctl_buf_addf(&text, " cuda%d", cuda);
	cctl_buf_addch(&text, '\n');
	if ((ret = cctl_os_write_file_atomic(ctx, at.buf, text.buf, text.len)))
		goto out;
	*path = cctl_buf_detach(&at);
out:
	cctl_buf_release(&at);
	cctl_buf_release(&text);
	return ret;
}

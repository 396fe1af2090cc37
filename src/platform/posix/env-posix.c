/*
 * Persistent activation on POSIX: <root>/env.sh, the guarded line that
 * sources it from ~/.profile and ~/.bashrc, or (--system) an ld.so.conf.d
 * file and ldconfig.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "../os.h"

#define MARK "# added by cudnnctl"

static const char env_sh[] =
	"# Written by cudnnctl: puts the active cuDNN on the search paths.\n"
	"# Sourced from ~/.profile and ~/.bashrc; `cudnnctl deactivate` "
	"undoes it.\n"
	"CUDNN_PATH='%s/current'\n"
	"export CUDNN_PATH\n"
	"_cudnnctl_prepend() {\n"
	"    _cudnnctl_new=$2\n"
	"    eval \"_cudnnctl_old=\\${$1-}\"\n"
	"    _cudnnctl_ifs=$IFS\n"
	"    IFS=:\n"
	"    set -f\n"
	"    for _cudnnctl_d in $_cudnnctl_old; do\n"
	"        if [ -n \"$_cudnnctl_d\" ] && [ \"$_cudnnctl_d\" != \"$2\" ]; "
	"then\n"
	"            _cudnnctl_new=\"$_cudnnctl_new:$_cudnnctl_d\"\n"
	"        fi\n"
	"    done\n"
	"    set +f\n"
	"    IFS=$_cudnnctl_ifs\n"
	"    eval \"$1=\\$_cudnnctl_new\"\n"
	"    export \"$1\"\n"
	"}\n"
	"_cudnnctl_prepend LD_LIBRARY_PATH \"$CUDNN_PATH/lib\"\n"
	"_cudnnctl_prepend LIBRARY_PATH \"$CUDNN_PATH/lib\"\n"
	"_cudnnctl_prepend CPATH \"$CUDNN_PATH/include\"\n"
	"unset -f _cudnnctl_prepend\n"
	"unset _cudnnctl_new _cudnnctl_old _cudnnctl_ifs _cudnnctl_d\n";

static char *profile_line(const char *root)
{
	return cctl_xstrfmt("[ -f '%s/env.sh' ] && . '%s/env.sh' " MARK, root,
			    root);
}

/* The file a dotfile link points at, so that the link survives (also a
 * link to a file that does not exist yet). */
static char *real_target(const char *path)
{
	char resolved[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	if (realpath(path, resolved))
		return cctl_xstrdup(resolved);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		const char *slash = strrchr(path, '/');
		target[n] = '\0';
		if (target[0] == '/' || !slash)
			return cctl_xstrdup(target);
		return cctl_xstrfmt("%.*s/%s", (int)(slash - path), path, target);
	}
	return cctl_xstrdup(path);
}

/* Adds (add=1) or removes (add=0) `line` in the file, keeping every other
 * line as it was. */
static int edit_profile(struct cctl_ctx *ctx, const char *path,
			const char *line, int add)
{
	struct cctl_buf old = CCTL_BUF_INIT, out = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	char *target = real_target(path);
	int ret, found = 0, changed = 0;
	const char *p;

	if ((ret = cctl_os_stat(ctx, target, &st)))
		goto out;
	if (st.type == CCTL_OS_NONE && !add)
		goto out;
	if (st.type != CCTL_OS_NONE &&
	    (ret = cctl_os_read_file(ctx, target, &old)))
		goto out;
	/* by length, not by NUL: every other byte of the file is kept */
	for (p = old.buf; p < old.buf + old.len;) {
		size_t left = (size_t)(old.buf + old.len - p);
		const char *nl = memchr(p, '\n', left);
		size_t n = nl ? (size_t)(nl - p) : left;
		int same = n == strlen(line) && !memcmp(p, line, n);
		if (same)
			found = 1;
		if (same && !add) {
			changed = 1;
		} else {
			cctl_buf_add(&out, p, n);
			if (nl || add)
				cctl_buf_addch(&out, '\n');
		}
		p += n + (nl ? 1 : 0);
	}
	if (add && !found) {
		cctl_buf_addf(&out, "%s\n", line);
		changed = 1;
	}
	if (changed &&
	    (ret = cctl_os_write_file_atomic(ctx, target, out.buf, out.len)) &&
	    ctx && (ctx->oserr == EROFS || ctx->oserr == EACCES ||
		    ctx->oserr == EPERM))
		/* a profile that is a link into a read-only store (Nix's
		 * home-manager) or otherwise not to be changed */
		cctl__hint(ctx, "'%s' cannot be changed here (read-only, or "
				"managed by a tool such as home-manager): %s the "
				"line %s in your shell set-up yourself, and run "
				"with --ci to leave profiles alone (eval \"$(cudnnctl "
				"env)\" then sets up a shell)",
			   path, add ? "add" : "remove", line);
out:
	free(target);
	cctl_buf_release(&old);
	cctl_buf_release(&out);
	return ret;
}

static const char *ldconf_dir(void)
{
	const char *d = cctl_os_getenv("CUDNNCTL_LDCONF_DIR");
	return d ? d : "/etc/ld.so.conf.d";
}

static int run_ldconfig(struct cctl_ctx *ctx)
{
	const char *cmd = cctl_os_getenv("CUDNNCTL_LDCONFIG");
	const char *argv[] = { cmd ? cmd : "ldconfig", NULL };
	return cctl_os_run(ctx, argv);
}

/* A file as it was before cctl_os_env_persist touched it. */
struct saved_file {
	char *path;
	int existed;
	struct cctl_buf text;
};

static void save(struct saved_file *s, const char *path)
{
	struct cctl_os_stat st;
	s->path = real_target(path);
	cctl_buf_init(&s->text);
	s->existed = !cctl_os_stat(NULL, s->path, &st) &&
		     st.type != CCTL_OS_NONE &&
		     !cctl_os_read_file(NULL, s->path, &s->text);
}

static void put_back(struct saved_file *s)
{
	struct cctl_os_stat st;
	if (s->existed) {
		struct cctl_buf now = CCTL_BUF_INIT;
		if (cctl_os_read_file(NULL, s->path, &now) ||
		    now.len != s->text.len ||
		    memcmp(now.buf, s->text.buf, now.len))
			cctl_os_write_file_atomic(NULL, s->path, s->text.buf,
						  s->text.len);
		cctl_buf_release(&now);
	} else if (!cctl_os_stat(NULL, s->path, &st) &&
		   st.type == CCTL_OS_FILE) {
		cctl_os_unlink(NULL, s->path);
	}
}

static void forget(struct saved_file *s)
{
	free(s->path);
	cctl_buf_release(&s->text);
}

static int persist(struct cctl_ctx *ctx, const char *root, unsigned flags)
{
	struct cctl_buf path = CCTL_BUF_INIT, text = CCTL_BUF_INIT;
	char *line = NULL;
	int ret;

	cctl_buf_addf(&path, "%s/env.sh", root);
	cctl_buf_addf(&text, env_sh, root);
	if ((ret = cctl_os_write_file_atomic(ctx, path.buf, text.buf, text.len)))
		goto out;
	if (flags & CCTL_ACT_SYSTEM) {
		if (!cctl_os_is_admin()) {
			ret = cctl__error(ctx, CCTL_EACTIVATE,
					  "--system changes %s for every user "
					  "and needs root",
					  ldconf_dir());
			cctl__hint(ctx, "run it with sudo, or leave out --system "
					"to activate for your user only");
			goto out;
		}
		cctl_buf_reset(&path);
		cctl_buf_addf(&path, "%s/cudnnctl.conf", ldconf_dir());
		cctl_buf_reset(&text);
		cctl_buf_addf(&text, "# written by cudnnctl\n%s/current/lib\n",
			      root);
		if ((ret = cctl_os_write_file_atomic(ctx, path.buf, text.buf,
						     text.len)) ||
		    (ret = run_ldconfig(ctx)))
			goto out;
	} else {
		const char *files[] = { ".profile", ".bashrc" };
		line = profile_line(root);
		for (size_t i = 0; i < CCTL_ARRAY_SIZE(files) && !ret; i++) {
			cctl_buf_reset(&path);
			if ((ret = cctl_os_home(ctx, &path)))
				break;
			cctl_buf_addpath(&path, files[i]);
			ret = edit_profile(ctx, path.buf, line, 1);
		}
	}
out:
	free(line);
	cctl_buf_release(&path);
	cctl_buf_release(&text);
	return ret;
}

int cctl_os_path_restore(struct cctl_ctx *ctx, const char *root,
			 unsigned flags)
{
	(void)root;
	(void)flags;
	cctl__error(ctx, CCTL_EUSAGE,
		    "'path restore' is for Windows, where cudnnctl edits PATH in "
		    "the registry");
	cctl__hint(ctx, "on Linux, cudnnctl deactivate removes the shell set-up");
	return CCTL_EUSAGE;
}

int cctl_os_path_retire(struct cctl_ctx *ctx, const char *root,
			unsigned flags)
{
	(void)ctx, (void)root, (void)flags;
	return 0;
}

int cctl_os_session_path(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	(void)out;
	return cctl__error(ctx, CCTL_ENOTFOUND,
			   "new processes take their library path from the "
			   "environment");
}

int cctl_os_env_persist(struct cctl_ctx *ctx, const char *root,
			const char *active_dir, unsigned flags)
{
	struct saved_file saved[4];
	struct cctl_buf path = CCTL_BUF_INIT;
	size_t n = 0;
	int ret;

	/* remember every file this may change, to put them back on failure */
	cctl_buf_addf(&path, "%s/env.sh", root);
	save(&saved[n++], path.buf);
	cctl_buf_reset(&path);
	cctl_buf_addf(&path, "%s/cudnnctl.conf", ldconf_dir());
	save(&saved[n++], path.buf);
	for (int i = 0; i < 2; i++) {
		cctl_buf_reset(&path);
		if (cctl_os_home(NULL, &path))
			break;
		cctl_buf_addpath(&path, i ? ".bashrc" : ".profile");
		save(&saved[n++], path.buf);
	}
	/* env.sh names <root>/current: symbolic links always work here */
	(void)active_dir;
	ret = persist(ctx, root, flags);
	for (size_t i = 0; i < n; i++) {
		if (ret)
			put_back(&saved[i]);
		forget(&saved[i]);
	}
	cctl_buf_release(&path);
	return ret;
}

int cctl_os_env_unpersist(struct cctl_ctx *ctx, const char *root)
{
	struct cctl_buf path = CCTL_BUF_INIT, conf = CCTL_BUF_INIT;
	const char *files[] = { ".profile", ".bashrc" };
	char *line = profile_line(root);
	struct cctl_os_stat st;
	int ret = 0;

	for (size_t i = 0; i < CCTL_ARRAY_SIZE(files) && !ret; i++) {
		cctl_buf_reset(&path);
		if ((ret = cctl_os_home(ctx, &path)))
			break;
		cctl_buf_addpath(&path, files[i]);
		ret = edit_profile(ctx, path.buf, line, 0);
	}
	/* the system file is ours only when it names this root */
	cctl_buf_reset(&path);
	cctl_buf_addf(&path, "%s/cudnnctl.conf", ldconf_dir());
	if (!ret && !(ret = cctl_os_stat(ctx, path.buf, &st)) &&
	    st.type == CCTL_OS_FILE &&
	    !(ret = cctl_os_read_file(ctx, path.buf, &conf))) {
		char *want = cctl_xstrfmt("\n%s/current/lib\n", root);
		if (strstr(conf.buf, want) &&
		    !(ret = cctl_os_unlink(ctx, path.buf)))
			ret = run_ldconfig(ctx);
		free(want);
	}
	cctl_buf_reset(&path);
	cctl_buf_addf(&path, "%s/env.sh", root);
	if (!ret)
		ret = cctl_os_unlink(ctx, path.buf);
	free(line);
	cctl_buf_release(&path);
	cctl_buf_release(&conf);
	return ret;
}

/*
 * Activation: <root>/current names the active install; the OS layer makes
 * new shells see it (env.sh and profile lines on POSIX, the registry PATH
 * on Windows).  switch retargets `current` only, so nothing else changes
 * after the first activation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

#define MODE_FILE "activation"

/* Whether the mode file says `mode` ("system", "ci", "user"). */
static int mode_is(const struct cctl_root *r, const char *mode)
{
	struct cctl_buf path = CCTL_BUF_INIT, text = CCTL_BUF_INIT;
	size_t n = strlen(mode);
	int is;
	cctl_buf_adds(&path, r->path);
	cctl_buf_addpath(&path, MODE_FILE);
	is = !cctl_os_read_file(NULL, path.buf, &text) && text.len > n &&
	     !strncmp(text.buf, mode, n) && text.buf[n] == '\n';
	cctl_buf_release(&path);
	cctl_buf_release(&text);
	return is;
}

const char *cctl_activation_mode(const struct cctl_root *r)
{
	static const char *const modes[] = { "system", "ci", "user" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (mode_is(r, modes[i]))
			return modes[i];
	return NULL;
}

int cctl__activation_is_ci(const struct cctl_root *r)
{
	return mode_is(r, "ci");
}

int cctl__activation_is_system(const struct cctl_root *r)
{
	return mode_is(r, "system");
}

static int set_current(struct cctl_ctx *ctx, const struct cctl_root *r,
		       const char *id, int *emulated)
{
	struct cctl_buf link = CCTL_BUF_INIT, target = CCTL_BUF_INIT;
	int ret, ignored;
	cctl_buf_adds(&link, r->path);
	cctl_buf_addpath(&link, "current");
	if (id) {
		cctl_buf_addf(&target, "versions/%s", id);
		ret = cctl_os_link_dir(ctx, link.buf, target.buf,
				       emulated ? emulated : &ignored);
	} else {
		ret = cctl_os_unlink(ctx, link.buf);
	}
	cctl_buf_release(&link);
	cctl_buf_release(&target);
	return ret;
}

int cctl_activate(struct cctl_ctx *ctx, const struct cctl_root *r,
		  const char *id, unsigned flags)
{
	struct cctl_buf mode = CCTL_BUF_INIT;
	char *previous = NULL, *active_dir = NULL;
	int ret, emulated = 0;

	if ((ret = cctl_store_active(ctx, r, &previous)))
		goto out;
	if (cctl__activation_is_system(r))
		flags |= CCTL_ACT_SYSTEM;
	/* the machine's configuration is asked for, or already in use: it
	 * follows `current` only through ldconfig */
	if (flags & CCTL_ACT_SYSTEM)
		flags &= ~(unsigned)CCTL_ACT_NO_PERSIST;
	/* every process's library path is to name it: only the administrator
	 * may be able to change any folder on the way */
	if ((flags & CCTL_ACT_SYSTEM) &&
	    ((r->created_top &&
	      (ret = cctl_os_protect_machine_root(ctx, r->created_top))) ||
	     (ret = cctl__root_trusted(ctx, r->path, 1, 1))))
		goto out;
	if ((ret = set_current(ctx, r, id, &emulated)))
		goto out;
	/* new processes use `current`, or where it cannot be a link, the
	 * version's own folder */
	if (emulated)
		active_dir = cctl_path_join(r->path, "versions", id, NULL);
	else
		active_dir = cctl_path_join(r->path, "current", NULL);
	if (!(flags & CCTL_ACT_NO_PERSIST) &&
	    (ret = cctl_os_env_persist(ctx, r->path, active_dir,
				       flags & CCTL_ACT_SYSTEM))) {
		set_current(NULL, r, previous, NULL); /* put it back */
		if (ret != CCTL_EACTIVATE && ctx) {
			char msg[2048], hint[sizeof(ctx->hint)];
			snprintf(msg, sizeof(msg), "%s", cctl__msg(ctx));
			snprintf(hint, sizeof(hint), "%s", ctx->hint);
			ret = cctl__error(ctx, CCTL_EACTIVATE,
					  "cannot activate %s: %s", id, msg);
			if (hint[0])
				cctl__hint(ctx, "%s", hint);
		}
		goto out;
	}
	cctl_buf_adds(&mode, r->path);
	cctl_buf_addpath(&mode, MODE_FILE);
	/* "ci": nothing persisted; the pipeline's later steps get the
	 * variables from the CLI (verify judges new processes by that) */
	{
		const char *m = flags & CCTL_ACT_SYSTEM	  ? "system\n"
				: flags & CCTL_ACT_NO_PERSIST ? "ci\n"
							      : "user\n";
		ret = cctl_os_write_file_atomic(ctx, mode.buf, m, strlen(m));
	}
	if (ret) {
		set_current(NULL, r, previous, NULL); /* put it back */
		goto out;
	}
	/* what link-cuda placed into a toolkit follows */
	ret = cctl__cuda_link_refresh(ctx, r);
out:
	free(previous);
	free(active_dir);
	cctl_buf_release(&mode);
	return ret;
}

int cctl_deactivate(struct cctl_ctx *ctx, const struct cctl_root *r)
{
	struct cctl_buf mode = CCTL_BUF_INIT;
	int ret;
	if ((ret = cctl_os_env_unpersist(ctx, r->path)))
		goto out;
	if ((ret = set_current(ctx, r, NULL, NULL)))
		goto out;
	cctl_buf_adds(&mode, r->path);
	cctl_buf_addpath(&mode, MODE_FILE);
	if (!(ret = cctl_os_unlink(ctx, mode.buf)))
		ret = cctl__cuda_link_refresh(ctx, r); /* nothing active: out */
out:
	cctl_buf_release(&mode);
	return ret;
}

int cctl_path_restore(struct cctl_ctx *ctx, const struct cctl_root *r,
		      unsigned flags)
{
	int ret = cctl_os_path_restore(ctx, r->path, flags);
	/* nothing names the root now: it is not active either; the saved
	 * value goes last (a restore cut short can be run again) */
	if (!ret)
		ret = cctl_deactivate(ctx, r);
	return ret ? ret : cctl_os_path_retire(ctx, r->path, flags);
}

char *cctl__path_list_prepend(const char *dir, const char *list)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	char sep[2] = { CCTL_OS_PATH_SEP, 0 };
	cctl_buf_adds(&b, dir);
	while (list && *list) {
		size_t n = strcspn(list, sep);
		if (n && (n != strlen(dir) || strncmp(list, dir, n))) {
			cctl_buf_addch(&b, CCTL_OS_PATH_SEP);
			cctl_buf_add(&b, list, n);
		}
		list += n + (list[n] ? 1 : 0);
	}
	return cctl_buf_detach(&b);
}

/* Value of a PATH-like variable with dir first and its other copies
 * dropped. */
static void prepended(struct cctl_buf *out, const char *var, const char *dir)
{
	char *v = cctl__path_list_prepend(dir, cctl_os_getenv(var));
	cctl_buf_adds(out, v);
	free(v);
}

static void emit(struct cctl_buf *out, enum cctl_shell shell, const char *var,
		 const char *value)
{
	switch (shell) {
	case CCTL_SHELL_POWERSHELL:
		cctl_buf_addf(out, "$env:%s = '", var);
		for (const char *p = value; *p; p++) {
			if (*p == '\'')
				cctl_buf_addch(out, '\'');
			cctl_buf_addch(out, *p);
		}
		cctl_buf_adds(out, "'\n");
		break;
	case CCTL_SHELL_CMD:
		cctl_buf_addf(out, "set \"%s=%s\"\n", var, value);
		break;
	default:
		cctl_buf_addf(out, "export %s='", var);
		for (const char *p = value; *p; p++) {
			if (*p == '\'')
				cctl_buf_adds(out, "'\\''");
			else
				cctl_buf_addch(out, *p);
		}
		cctl_buf_adds(out, "'\n");
	}
}

/* The variables that put the install in folder dir first: CUDNN_PATH,
 * then each list variable of the platform with its folder first. */
/* What build systems read for the install's folder itself: PyTorch,
 * cudnn-frontend and CMake projects (CUDNN_PATH, CUDNN_ROOT), ONNX
 * Runtime's build (CUDNN_HOME), TensorFlow's configure
 * (CUDNN_INSTALL_PATH).  CUDNN_PATH first: CI mode's cudnn-path output. */
static const char *const plain_vars[] = { "CUDNN_PATH", "CUDNN_ROOT",
					  "CUDNN_HOME", "CUDNN_INSTALL_PATH" };

/* dir/e->dir, or dir/e->alt where that is a folder */
static void env_dir(struct cctl_buf *sub, const char *dir,
		    const struct cctl_env_dir *e)
{
	struct cctl_os_stat st;
	cctl_buf_reset(sub);
	cctl_buf_adds(sub, dir);
	if (e->alt) {
		cctl_buf_addpath(sub, e->alt);
		cctl_os_native_path(sub->buf);
		if (!cctl_os_stat(NULL, sub->buf, &st) && st.type == CCTL_OS_DIR)
			return;
		cctl_buf_reset(sub);
		cctl_buf_adds(sub, dir);
	}
	if (*e->dir)
		cctl_buf_addpath(sub, e->dir);
	cctl_os_native_path(sub->buf);
}

static void env_vars_at(const char *dir, int exec,
			struct cctl_env_var vars[CCTL_ENV_MAX], size_t *n)
{
	const struct cctl_platform *p = cctl_platform_host();
	struct cctl_buf sub = CCTL_BUF_INIT, val = CCTL_BUF_INIT;
	size_t i;

	*n = 0;
	for (i = 0; i < sizeof(plain_vars) / sizeof(*plain_vars); i++) {
		vars[*n].name = plain_vars[i];
		vars[*n].first = NULL;
		vars[(*n)++].value = cctl_xstrdup(dir);
	}
	for (const struct cctl_env_dir *e = p->env; e->var && *n < CCTL_ENV_MAX;
	     e++) {
		if (e->exec_only && !exec)
			continue;
		if (!strcmp(e->dir, p->lib_dir)) {
			/* where the libraries are: bin/x64 from 9.23 on */
			char *lib = cctl__lib_dir(p, dir);
			cctl_buf_reset(&sub);
			cctl_buf_adds(&sub, lib);
			cctl_os_native_path(sub.buf);
			free(lib);
		} else {
			env_dir(&sub, dir, e);
		}
		prepended(&val, e->var, sub.buf);
		vars[*n].name = e->var;
		vars[*n].first = cctl_xstrdup(sub.buf);
		vars[(*n)++].value = cctl_buf_detach(&val);
	}
	cctl_buf_release(&sub);
	cctl_buf_release(&val);
}

int cctl_env_vars(struct cctl_ctx *ctx, const struct cctl_root *r,
		  struct cctl_env_var vars[CCTL_ENV_MAX], size_t *n)
{
	struct cctl_buf cur = CCTL_BUF_INIT;
	char *active = NULL;
	int ret;

	*n = 0;
	if ((ret = cctl_store_active(ctx, r, &active)))
		goto out;
	if (!active) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND,
				  "no cuDNN is active in '%s'", r->path);
		cctl__hint(ctx, "run cudnnctl switch VERSION (cudnnctl list "
				"shows what is installed)");
		goto out;
	}
	cctl_buf_adds(&cur, r->path);
	cctl_buf_addpath(&cur, "current");
	{
		/* where `current` is a pointer file (Windows without
		 * junctions), processes use the version's folder */
		struct cctl_os_stat st;
		if (!cctl_os_stat(ctx, cur.buf, &st) && st.type == CCTL_OS_FILE) {
			cctl_buf_reset(&cur);
			cctl_buf_adds(&cur, r->path);
			cctl_buf_addpath(&cur, "versions");
			cctl_buf_addpath(&cur, active);
		}
	}
	cctl_os_native_path(cur.buf);
	env_vars_at(cur.buf, 0, vars, n);
out:
	free(active);
	cctl_buf_release(&cur);
	return ret;
}

int cctl_exec_env(struct cctl_ctx *ctx, const struct cctl_root *r,
		  const char *prefix, int cuda,
		  struct cctl_env_var vars[CCTL_ENV_MAX], size_t *n, char **id)
{
	struct cctl_install in;
	char *active = NULL, *dir;
	int ret;

	*n = 0;
	*id = NULL;
	if (!prefix) {
		if ((ret = cctl_store_active(ctx, r, &active)))
			return ret;
		if (!active) {
			ret = cctl__error(ctx, CCTL_ENOTFOUND,
					  "no VERSION given and no cuDNN is "
					  "active in '%s'",
					  r->path);
			cctl__hint(ctx, "name one: cudnnctl exec VERSION -- "
					"COMMAND (cudnnctl list shows what is "
					"installed)");
			return ret;
		}
		prefix = active;
	}
	ret = cctl_store_find(ctx, r, prefix, cuda, &in);
	free(active);
	if (ret)
		return ret;
	/* the version's own folder, whatever `current` names */
	dir = cctl_path_join(r->path, "versions", in.id, NULL);
	cctl_os_native_path(dir);
	env_vars_at(dir, 1, vars, n);
	free(dir);
	*id = in.id;
	in.id = NULL;
	cctl_install_release(&in);
	return 0;
}

void cctl_env_vars_release(struct cctl_env_var *vars, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(vars[i].value);
		free(vars[i].first);
	}
}

char *cctl_env_command(const struct cctl_root *r)
{
	const struct cctl_platform *p = cctl_platform_host();
	char *def = NULL, *cmd;
	if (r && !cctl_root_default(NULL, &def) && def && strcmp(def, r->path))
		cmd = cctl_xstrfmt("%scudnnctl env --root %s%s", p->env_pre,
				   r->path, p->env_post);
	else
		cmd = cctl_xstrfmt("%scudnnctl env%s", p->env_pre, p->env_post);
	free(def);
	return cmd;
}

int cctl_env_render(struct cctl_ctx *ctx, const struct cctl_root *r,
		    enum cctl_shell shell, struct cctl_buf *out)
{
	return cctl_env_render_version(ctx, r, NULL, 0, shell, out);
}

int cctl_env_render_version(struct cctl_ctx *ctx, const struct cctl_root *r,
			    const char *version, int cuda, enum cctl_shell shell,
			    struct cctl_buf *out)
{
	struct cctl_env_var vars[CCTL_ENV_MAX];
	size_t n;
	char *id = NULL;
	int ret = version ? cctl_exec_env(ctx, r, version, cuda, vars, &n, &id)
			  : cctl_env_vars(ctx, r, vars, &n);
	free(id);
	for (size_t i = 0; !ret && i < n; i++)
		emit(out, shell, vars[i].name, vars[i].value);
	cctl_env_vars_release(vars, n);
	return ret;
}

int cctl_exec(struct cctl_ctx *ctx, const struct cctl_root *r,
	      const char *prefix, int cuda, const char *const *argv, int *status)
{
	struct cctl_env_var vars[CCTL_ENV_MAX];
	size_t n;
	char *id;
	int ret;

	*status = 0;
	if ((ret = cctl_exec_env(ctx, r, prefix, cuda, vars, &n, &id)))
		return ret;
	ret = cctl_os_exec(ctx, argv, vars, n, status);
	cctl_env_vars_release(vars, n);
	free(id);
	return ret;
}

int cctl_switch(struct cctl_ctx *ctx, struct cctl_root *r, const char *prefix,
		int cuda, unsigned act_flags, char **from, char **to)
{
	struct cctl_install in;
	int ret;

	*from = *to = NULL;
	if ((ret = cctl_store_active(ctx, r, from)))
		return ret;
	if ((ret = cctl_store_find(ctx, r, prefix, cuda, &in)))
		goto out;
	if ((ret = cctl_activate(ctx, r, in.id, act_flags)) == 0) {
		*to = in.id;
		in.id = NULL;
	}
	cctl_install_release(&in);
out:
	if (ret) { /* nothing is handed back on failure */
		free(*from);
		*from = NULL;
	}
	return ret;
}

/* uninstall refuses while a running program holds one of the version's
 * libraries (--force goes on). */
static int not_in_use(struct cctl_ctx *ctx, const char *dir, const char *id)
{
	char *lib = cctl__lib_dir(cctl_platform_host(), dir), **files = NULL,
	     *what = cctl_xstrfmt("uninstall %s", id);
	size_t n = 0;
	int ret = 0;
	if (!cctl_lib_files_in(NULL, lib, &files, &n))
		ret = cctl_check_not_in_use(ctx, (const char *const *)files, n, what);
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	free(lib);
	free(what);
	return ret;
}

int cctl_uninstall(struct cctl_ctx *ctx, struct cctl_root *r,
		   const char *prefix, int cuda, int force, char **id)
{
	struct cctl_buf dir = CCTL_BUF_INIT, trash = CCTL_BUF_INIT;
	struct cctl_install in;
	int ret;

	*id = NULL;
	if ((ret = cctl_store_find(ctx, r, prefix, cuda, &in))) {
		/* a version folder whose record is damaged or gone is no
		 * install, but it blocks installing that version again:
		 * --force with its whole id removes it, whatever it holds */
		struct cctl_os_stat st;
		char *d;
		if (ret != CCTL_ENOTFOUND || !force || !cctl_id_valid(prefix))
			return ret;
		d = cctl_path_join(r->path, "versions", prefix, NULL);
		if (cctl_os_stat(NULL, d, &st) || st.type != CCTL_OS_DIR) {
			free(d);
			return ret;
		}
		free(d);
		memset(&in, 0, sizeof(in));
		in.id = cctl_xstrdup(prefix);
		{
			char *active = NULL;
			if (!cctl_store_active(NULL, r, &active) && active)
				in.active = !strcmp(active, prefix);
			free(active);
		}
		cctl__warn(ctx, "versions/%s has no usable install record; "
				"removing the folder as it is",
			   prefix);
	}
	if (in.active && !force) {
		ret = cctl__error(ctx, CCTL_EACTIVE,
				  "%s is the active cuDNN; nothing was removed",
				  in.id);
		cctl__hint(ctx, "switch to another version first, or pass "
				"--force to remove it and leave none active");
		goto out;
	}
	cctl_buf_adds(&dir, r->path);
	cctl_buf_addpath(&dir, "versions");
	cctl_buf_adds(&trash, dir.buf);
	cctl_buf_addpath(&dir, in.id);
	if (!force && (ret = not_in_use(ctx, dir.buf, in.id)))
		goto out;
	{
		char *leaf = cctl__unique_leaf(".trash-");
		cctl_buf_addpath(&trash, leaf);
		free(leaf);
	}
	/* the active one: `current` and the shell set-up go first, so that a
	 * crash leaves the version installed and inactive (the next run
	 * finishes), never `current` or a profile naming a version that is
	 * gone */
	if (in.active && (ret = cctl_deactivate(ctx, r)))
		goto out;
	/* then the rename: a crash midway leaves a hidden folder (swept by
	 * the next command), never a half-removed version */
	if ((ret = cctl_os_rename(ctx, dir.buf, trash.buf)))
		goto out;
	ret = cctl_os_rmtree(ctx, trash.buf);
	if (ret && force) {
		/* Windows: a DLL a running program holds can be renamed, not
		 * deleted; the next command's sweep deletes it once free */
		cctl__warn(ctx, "%s; '%s' is deleted by a later cudnnctl "
				"command once no program holds it",
			   cctl__msg(ctx), trash.buf);
		ret = 0;
	}
	/* nothing is active now: the shell set-up goes too (also when a run
	 * killed before this point had already taken `current` away) */
	if (!ret) {
		char *still = NULL;
		if (!cctl_store_active(NULL, r, &still) && !still)
			ret = cctl_deactivate(ctx, r);
		free(still);
	}
	if (!ret) {
		*id = in.id;
		in.id = NULL;
	}
out:
	cctl_install_release(&in);
	cctl_buf_release(&dir);
	cctl_buf_release(&trash);
	return ret;
}

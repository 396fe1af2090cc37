/* Activation through the core API (src/core/activate.c with the POSIX
 * layer, src/platform/posix/env-posix.c): <root>/current, env.sh, the
 * guarded line in ~/.profile and ~/.bashrc, the environment of an active
 * install, and deactivation.  Each test makes its own root and HOME in a
 * fresh temporary folder and points HOME (and the ld.so.conf.d folder) at
 * it, so nothing outside that folder is touched.  POSIX only. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"
#include "harness.h"

#define ID_A "9.19.0.56-cuda13"
#define ID_B "9.14.0.64-cuda12"

/* the user's own lines: odd bytes, a CR, a tab, UTF-8, and a cudnnctl
 * line of another root, none of which activation may change */
static const char user_profile[] =
	"# my profile\n"
	"export EDITOR=vi\n"
	"PATH=$HOME/bin:$PATH\r\n"
	"\tumask 022 # J\xc3\xb6rg\n"
	"\n"
	"[ -f '/elsewhere/cudnn/env.sh' ] && . '/elsewhere/cudnn/env.sh' "
	"# added by cudnnctl\n";
static const char user_bashrc[] = "# my bashrc\nalias ll='ls -l'\n";

struct fx {
	char tmp[PATH_MAX / 2];
	char home[PATH_MAX];
	char root_arg[PATH_MAX];
	struct cctl_root r;
	int open;
};

static char *path_of(const char *dir, const char *rel)
{
	return cctl_path_join(dir, rel, NULL);
}

/* The file's bytes (NUL-terminated), or NULL when it cannot be read. */
static char *slurp(const char *path)
{
	struct cctl_ctx ctx;
	struct cctl_buf b = CCTL_BUF_INIT;
	cctl_ctx_init(&ctx);
	if (cctl_os_read_file(&ctx, path, &b)) {
		cctl_buf_release(&b);
		return NULL;
	}
	return cctl_buf_detach(&b);
}

static int spill(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* <root>/current's target, "" when it is no symbolic link */
static void current_target(const struct fx *f, char *out, size_t n)
{
	char *link = path_of(f->r.path, "current");
	ssize_t len = readlink(link, out, n - 1);
	out[len > 0 ? len : 0] = '\0';
	free(link);
}

static int add_version(const struct fx *f, const char *id, const char *version,
		       int cuda)
{
	struct cctl_ctx ctx;
	struct cctl_install in;
	char *versions = path_of(f->r.path, "versions");
	char *dir = path_of(versions, id);
	char *lib = path_of(dir, "lib");
	int ret;
	memset(&in, 0, sizeof(in));
	cctl_ctx_init(&ctx);
	in.id = (char *)id;
	in.version = (char *)version;
	in.cuda = cuda;
	in.platform = (char *)"linux-x86_64";
	in.verified = 1;
	in.installed_at = (char *)"2026-01-01T00:00:00Z";
	ret = mkdir(dir, 0755) || mkdir(lib, 0755) ||
	      cctl_record_write(&ctx, dir, &in);
	if (ret)
		fprintf(stderr, "cannot make %s: %s %s\n", dir, strerror(errno),
			ctx.msg);
	free(versions);
	free(dir);
	free(lib);
	return ret;
}

/* A temporary folder holding HOME (the user's .profile and .bashrc) and
 * an open install root with two versions; nothing active. */
static int setup(struct fx *f)
{
	struct cctl_ctx ctx;
	const char *tmp = getenv("TMPDIR");
	char *p;
	int ret;

	memset(f, 0, sizeof(*f));
	cctl_ctx_init(&ctx);
	snprintf(f->tmp, sizeof(f->tmp), "%s/cctl-activate-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->tmp)) {
		perror(f->tmp);
		f->tmp[0] = '\0';
		return -1;
	}
	snprintf(f->home, sizeof(f->home), "%s/home", f->tmp);
	snprintf(f->root_arg, sizeof(f->root_arg), "%s/root", f->tmp);
	if (mkdir(f->home, 0755) < 0)
		return -1;
	p = path_of(f->home, ".profile");
	ret = spill(p, user_profile);
	free(p);
	p = path_of(f->home, ".bashrc");
	ret = ret || spill(p, user_bashrc);
	free(p);
	if (ret)
		return -1;
	/* profiles go to this HOME; a --system file would go here too */
	p = path_of(f->tmp, "ld.so.conf.d");
	ret = setenv("HOME", f->home, 1) || setenv("CUDNNCTL_LDCONF_DIR", p, 1);
	free(p);
	if (ret)
		return -1;
	if (cctl_root_open(&ctx, &f->r, f->root_arg, 1, 1)) {
		fprintf(stderr, "cctl_root_open: %s\n", ctx.msg);
		return -1;
	}
	f->open = 1;
	return add_version(f, ID_A, "9.19.0.56", 13) ||
	       add_version(f, ID_B, "9.14.0.64", 12);
}

static void teardown(struct fx *f)
{
	struct cctl_ctx ctx;
	cctl_ctx_init(&ctx);
	if (f->open)
		cctl_root_close(&f->r);
	if (f->tmp[0] && cctl_os_rmtree(&ctx, f->tmp))
		fprintf(stderr, "cannot remove %s: %s\n", f->tmp, ctx.msg);
}

/* Runs body on a fresh fixture and removes it whatever body checked. */
static void with_fixture(void (*body)(struct fx *f))
{
	struct fx f;
	if (setup(&f) == 0)
		body(&f);
	else
		harness_failed = 1;
	teardown(&f);
}

/* The line that sources <root>/env.sh (env-posix.c) */
static char *profile_line(const struct fx *f)
{
	return cctl_xstrfmt("[ -f '%s/env.sh' ] && . '%s/env.sh' # added by cudnnctl",
			    f->r.path, f->r.path);
}

/* ~/name is byte for byte the user's text, followed by our line once when
 * ours. */
static void check_dotfile(const struct fx *f, const char *name,
			  const char *user, int ours)
{
	char *path = path_of(f->home, name);
	char *text = slurp(path);
	char *line = profile_line(f);
	char *want = cctl_xstrfmt("%s%s%s", user, ours ? line : "", ours ? "\n" : "");
	int same = text && !strcmp(text, want);
	if (!same)
		fprintf(stderr, "%s:\n--- got ---\n%s--- want ---\n%s---\n", path,
			text ? text : "(unreadable)\n", want);
	free(path);
	free(text);
	free(line);
	free(want);
	CHECK(same);
}

/* ~/.profile and ~/.bashrc: the user's lines, and ours once when ours */
static void check_profiles(const struct fx *f, int ours)
{
	check_dotfile(f, ".profile", user_profile, ours);
	check_dotfile(f, ".bashrc", user_bashrc, ours);
}

/* <root>/current is a symbolic link to versions/<id>, and the store says
 * that id, and only it, is active. */
static void check_active(const struct fx *f, const char *id)
{
	struct cctl_ctx ctx;
	char target[PATH_MAX], want[PATH_MAX], active_id[PATH_MAX] = "";
	char *active = NULL;
	struct cctl_install *list = NULL;
	size_t n = 0, nactive = 0;

	cctl_ctx_init(&ctx);
	current_target(f, target, sizeof(target));
	snprintf(want, sizeof(want), "versions/%s", id);
	CHECK_STR(target, want);
	CHECK_INT(cctl_store_active(&ctx, &f->r, &active), 0);
	snprintf(active_id, sizeof(active_id), "%s", active ? active : "(none)");
	free(active);
	CHECK_STR(active_id, id);
	CHECK_INT(cctl_store_list(&ctx, &f->r, &list, &n), 0);
	active_id[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (list[i].active) {
			nactive++;
			snprintf(active_id, sizeof(active_id), "%s", list[i].id);
		}
	cctl_install_list_release(list, n);
	CHECK_INT(n, 2);
	CHECK_INT(nactive, 1);
	CHECK_STR(active_id, id);
}

/* ------------------------------------------------------------------ tests */

static void activate_body(struct fx *f)
{
	struct cctl_ctx ctx;
	char *env_sh = path_of(f->r.path, "env.sh"), *text, *want;
	int has;

	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_activate(&ctx, &f->r, ID_A, 0), 0);
	check_active(f, ID_A);
	text = slurp(env_sh);
	free(env_sh);
	want = cctl_xstrfmt("\nCUDNN_PATH='%s/current'\n", f->r.path);
	has = text && strstr(text, want) &&
	      strstr(text, "LD_LIBRARY_PATH \"$CUDNN_PATH/lib\"");
	if (!has)
		fprintf(stderr, "env.sh:\n%s\nlacks %s", text ? text : "(none)",
			want);
	free(text);
	free(want);
	CHECK(has);
	check_profiles(f, 1);

	/* the same again: still one line each */
	CHECK_INT(cctl_activate(&ctx, &f->r, ID_A, 0), 0);
	check_active(f, ID_A);
	check_profiles(f, 1);

	/* the other version: current follows, the profiles stay as they are */
	CHECK_INT(cctl_activate(&ctx, &f->r, ID_B, 0), 0);
	check_active(f, ID_B);
	check_profiles(f, 1);
}

static void activate_writes_current_env_sh_and_one_profile_line(void)
{
	with_fixture(activate_body);
}

static void switch_body(struct fx *f)
{
	struct cctl_ctx ctx;
	char *from = NULL, *to = NULL;
	int ret, got_to;

	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_activate(&ctx, &f->r, ID_A, 0), 0);
	/* by version prefix, as `cudnnctl switch 9.14` */
	ret = cctl_switch(&ctx, &f->r, "9.14", 0, 0, &from, &to);
	if (ret)
		fprintf(stderr, "cctl_switch: %s\n", ctx.msg);
	CHECK_INT(ret, 0);
	ret = strcmp(from ? from : "", ID_A) || strcmp(to ? to : "", ID_B);
	if (ret)
		fprintf(stderr, "switch: %s -> %s\n", from ? from : "(null)",
			to ? to : "(null)");
	free(from);
	free(to);
	CHECK_INT(ret, 0);
	check_active(f, ID_B);
	check_profiles(f, 1);
	/* a version that is not installed changes nothing */
	ret = cctl_switch(&ctx, &f->r, "8", 0, 0, &from, &to);
	got_to = to != NULL;
	free(from);
	free(to);
	CHECK_INT(ret, CCTL_ENOTFOUND);
	CHECK(!got_to);
	check_active(f, ID_B);
	check_profiles(f, 1);
}

static void switching_retargets_current(void)
{
	with_fixture(switch_body);
}

static const char *var(struct cctl_env_var *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].value;
	return NULL;
}

/* cctl_env_render's text for shell holds every one of the lines (which it
 * frees). */
static int renders(const struct fx *f, enum cctl_shell shell, char **lines,
		   size_t n)
{
	struct cctl_ctx ctx;
	struct cctl_buf out = CCTL_BUF_INIT;
	int ok;
	cctl_ctx_init(&ctx);
	ok = !cctl_env_render(&ctx, &f->r, shell, &out);
	if (!ok)
		fprintf(stderr, "cctl_env_render: %s\n", ctx.msg);
	for (size_t i = 0; i < n; i++) {
		if (ok && !strstr(out.buf, lines[i])) {
			fprintf(stderr, "shell %d: lacks \"%s\":\n%s", (int)shell,
				lines[i], out.buf);
			ok = 0;
		}
		free(lines[i]);
	}
	cctl_buf_release(&out);
	return ok;
}

static void env_body(struct fx *f)
{
	struct cctl_ctx ctx;
	struct cctl_env_var v[CCTL_ENV_MAX];
	char cur[PATH_MAX / 2], lib[PATH_MAX], inc[PATH_MAX], ld[3 * PATH_MAX];
	char want_ld[3 * PATH_MAX], want_lib[3 * PATH_MAX];
	size_t n = 0;
	int ret, ok;

	cctl_ctx_init(&ctx);
	snprintf(cur, sizeof(cur), "%s/current", f->r.path);
	snprintf(lib, sizeof(lib), "%s/lib", cur);
	snprintf(inc, sizeof(inc), "%s/include", cur);
	/* nothing active yet: nothing to print, and a hint */
	ret = cctl_env_vars(&ctx, &f->r, v, &n);
	if (!ret)
		cctl_env_vars_release(v, n);
	CHECK_INT(ret, CCTL_ENOTFOUND);
	CHECK_CONTAINS(ctx.msg, "no cuDNN is active");
	CHECK(ctx.hint[0] != '\0');

	CHECK_INT(cctl_activate(&ctx, &f->r, ID_A, 0), 0);
	/* this process's paths: the install's folder goes first and its other
	 * copy goes, the rest stays in order; a value with a quote; none */
	snprintf(ld, sizeof(ld), "/opt/x/lib:%s:/usr/lib", lib);
	CHECK_INT(setenv("LD_LIBRARY_PATH", ld, 1), 0);
	CHECK_INT(setenv("LIBRARY_PATH", "/it's", 1), 0);
	CHECK_INT(unsetenv("CPATH"), 0);
	CHECK_INT(unsetenv("CMAKE_PREFIX_PATH"), 0);
	CHECK_INT(unsetenv("PKG_CONFIG_PATH"), 0);
	snprintf(want_ld, sizeof(want_ld), "%s:/opt/x/lib:/usr/lib", lib);
	snprintf(want_lib, sizeof(want_lib), "%s:/it's", lib);

	CHECK_INT(cctl_env_vars(&ctx, &f->r, v, &n), 0);
	ok = n == 9 && var(v, n, "CUDNN_PATH") && !strcmp(var(v, n, "CUDNN_PATH"), cur) &&
	     var(v, n, "CUDNN_ROOT") && !strcmp(var(v, n, "CUDNN_ROOT"), cur) &&
	     var(v, n, "CMAKE_PREFIX_PATH") &&
	     !strcmp(var(v, n, "CMAKE_PREFIX_PATH"), cur) &&
	     var(v, n, "LD_LIBRARY_PATH") &&
	     !strcmp(var(v, n, "LD_LIBRARY_PATH"), want_ld) &&
	     var(v, n, "LIBRARY_PATH") && !strcmp(var(v, n, "LIBRARY_PATH"), want_lib) &&
	     var(v, n, "CPATH") && !strcmp(var(v, n, "CPATH"), inc);
	for (size_t i = 0; !ok && i < n; i++)
		fprintf(stderr, "  %s=%s\n", v[i].name, v[i].value);
	cctl_env_vars_release(v, n);
	CHECK(ok);

	/* what `eval "$(cudnnctl env)"` runs: one export each, quoted;
	 * PowerShell doubles the quote */
	{
		char *sh[] = {
			cctl_xstrfmt("export CUDNN_PATH='%s'\n", cur),
			cctl_xstrfmt("export LD_LIBRARY_PATH='%s'\n", want_ld),
			cctl_xstrfmt("export LIBRARY_PATH='%s:/it'\\''s'\n", lib),
			cctl_xstrfmt("export CPATH='%s'\n", inc),
		};
		char *ps[] = {
			cctl_xstrfmt("$env:CUDNN_PATH = '%s'\n", cur),
			cctl_xstrfmt("$env:LIBRARY_PATH = '%s:/it''s'\n", lib),
		};
		int sh_ok = renders(f, CCTL_SHELL_SH, sh, sizeof(sh) / sizeof(*sh));
		int ps_ok = renders(f, CCTL_SHELL_POWERSHELL, ps, sizeof(ps) / sizeof(*ps));
		CHECK(sh_ok);
		CHECK(ps_ok);
	}
}

static void env_puts_the_active_install_first(void)
{
	const char *keep[] = { "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH",
			       "CMAKE_PREFIX_PATH", "PKG_CONFIG_PATH" };
	char *saved[5];
	for (int i = 0; i < 5; i++)
		saved[i] = getenv(keep[i]) ? cctl_xstrdup(getenv(keep[i])) : NULL;
	with_fixture(env_body);
	for (int i = 0; i < 5; i++) {
		if (saved[i])
			setenv(keep[i], saved[i], 1);
		else
			unsetenv(keep[i]);
		free(saved[i]);
	}
}

static void deactivate_body(struct fx *f)
{
	struct cctl_ctx ctx;
	char *cur = path_of(f->r.path, "current");
	char *env_sh = path_of(f->r.path, "env.sh");
	char *versions = path_of(f->r.path, "versions");
	char *a = path_of(versions, ID_A), *b = path_of(versions, ID_B);
	char *active = NULL;
	int gone, kept;

	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_activate(&ctx, &f->r, ID_A, 0), 0);
	CHECK_INT(cctl_activate(&ctx, &f->r, ID_B, 0), 0);
	check_profiles(f, 1);
	CHECK_INT(cctl_deactivate(&ctx, &f->r), 0);
	check_profiles(f, 0);
	gone = !exists(cur) && !exists(env_sh);
	kept = exists(a) && exists(b);
	CHECK_INT(cctl_store_active(&ctx, &f->r, &active), 0);
	CHECK(active == NULL);
	/* once more: nothing left to remove, nothing else changes */
	CHECK_INT(cctl_deactivate(&ctx, &f->r), 0);
	check_profiles(f, 0);
	free(cur);
	free(env_sh);
	free(versions);
	free(a);
	free(b);
	CHECK(gone);
	CHECK(kept);
}

static void deactivate_leaves_the_user_lines_byte_for_byte(void)
{
	with_fixture(deactivate_body);
}

HARNESS_MAIN(TEST_ENTRY(activate_writes_current_env_sh_and_one_profile_line),
	     TEST_ENTRY(switching_retargets_current),
	     TEST_ENTRY(env_puts_the_active_install_first),
	     TEST_ENTRY(deactivate_leaves_the_user_lines_byte_for_byte))

/*
 * The OS layer (os.h) for POSIX, handing the process to another program
 * (cudnnctl exec), and running one traced (verify --app --run).  The rest
 * of the layer is os-posix.c's and its
 * siblings' (see os-posix.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "posix.h"

void cctl_os_setenv(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

char *cctl_os_temp_dir(void)
{
	const char *t = getenv("TMPDIR");
	size_t n;
	if (!t || t[0] != '/')
		t = "/tmp";
	n = strlen(t);
	while (n > 1 && t[n - 1] == '/')
		n--;
	return cctl_xstrfmt("%.*s", (int)n, t);
}

int cctl_os_exec(struct cctl_ctx *ctx, const char *const *argv,
		 const struct cctl_env_var *vars, size_t n, int *status)
{
	const char *path;
	sigset_t none;
	int err;

	*status = 0;
	for (size_t i = 0; i < n; i++)
		if (setenv(vars[i].name, vars[i].value, 1))
			return cctl__posix_error(ctx, errno, "set", vars[i].name);
	fflush(stdout);
	fflush(stderr);
	/* the command gets no blocked signal of cudnnctl's (its caught ones
	 * go back to their defaults with the exec itself) */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(argv[0], (char *const *)argv);
	err = errno;
	path = getenv("PATH");
	if (err == ENOENT && !strchr(argv[0], '/'))
		return cctl__error(ctx, CCTL_ENOCOMMAND,
				   "'%s' was not found in any folder of PATH (%s)",
				   argv[0], path && *path ? path : "empty");
	if (err == ENOENT)
		return cctl__error(ctx, CCTL_ENOCOMMAND, "'%s' does not exist",
				   argv[0]);
	return cctl__error(ctx, CCTL_ECANNOTRUN, "cannot run '%s': %s", argv[0],
			   strerror(err));
}

/* The paths of the "calling init: PATH" lines of glibc's LD_DEBUG=files
 * report, each once, appended to *v. */
static void read_ld_report(const char *file, char ***v, size_t *n)
{
	FILE *f = fopen(file, "r");
	char line[4096];
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "calling init: "), *end;
		int seen = 0;
		if (!p)
			continue;
		p += strlen("calling init: ");
		if ((end = strchr(p, '\n')))
			*end = 0;
		if (*p != '/')
			continue;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = !strcmp((*v)[i], p);
		if (seen)
			continue;
		*v = cctl_xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = cctl_xstrdup(p);
	}
	fclose(f);
}

int cctl_os_run_traced(struct cctl_ctx *ctx, const char *const *argv,
		       unsigned timeout_ms, const char *out_path, char ***loaded,
		       size_t *n, int *status)
{
	char *report = cctl_xstrfmt("%s.ld", out_path);
	double deadline = cctl_os_now_ms() + timeout_ms;
	int st = 0, timed_out = 0, fd;
	pid_t pid;

	*loaded = NULL;
	*n = 0;
	*status = 127;
	if ((fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		int e = errno;
		free(report);
		return cctl__posix_error(ctx, e, "write", out_path);
	}
	if ((pid = fork()) < 0) {
		int e = errno;
		close(fd);
		free(report);
		return cctl__posix_error(ctx, e, "start", argv[0]);
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		setpgid(0, 0); /* a timeout ends its children too */
		if (null >= 0)
			dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("LD_DEBUG", "files", 1);
		setenv("LD_DEBUG_OUTPUT", report, 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fd);
	setpgid(pid, pid);
	for (;;) {
		pid_t got = waitpid(pid, &st, WNOHANG);
		if (got == pid || (got < 0 && errno != EINTR))
			break;
		if (cctl_os_now_ms() >= deadline) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		cctl_os_sleep_ms(20);
	}
	if (timed_out)
		*status = -1;
	else if (WIFEXITED(st))
		*status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*status = 128 + WTERMSIG(st);
	{
		/* LD_DEBUG_OUTPUT gets the process id appended: one file per
		 * process, in the order of their ids */
		char *dir = cctl_xstrdup(report), *base = strrchr(dir, '/');
		char **names = NULL;
		size_t nn = 0;
		*base++ = 0;
		if (!cctl_os_listdir(NULL, dir, &names, &nn)) {
			for (size_t i = 0; i < nn; i++) {
				if (!strncmp(names[i], base, strlen(base)) &&
				    names[i][strlen(base)] == '.') {
					char *f = cctl_xstrfmt("%s/%s", dir, names[i]);
					read_ld_report(f, loaded, n);
					unlink(f);
					free(f);
				}
				free(names[i]);
			}
			free(names);
		}
		free(dir);
	}
	free(report);
	return 0;
}

void cctl_os_identity(struct cctl_buf *user, struct cctl_buf *host)
{
	struct passwd *pw = getpwuid(getuid());
	char name[256];
	if (pw && pw->pw_name)
		cctl_buf_adds(user, pw->pw_name);
	if (!gethostname(name, sizeof(name))) {
		name[sizeof(name) - 1] = 0;
		cctl_buf_adds(host, name);
	}
}

/*
 * The OS layer (os.h) for POSIX, handing the process to another program
 * (cudnnctl exec).  The rest of the layer is os-posix.c's and its
 * siblings' (see os-posix.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * The OS layer (os.h) for POSIX: what scan and the in-use checks ask of
 * the machine.  The running programs that hold a library come from
 * /proc/PID/maps (a file is matched by device and inode, or by its path
 * where a layered file system reports another device); the environment's
 * variable names from environ.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "posix.h"

extern char **environ;

int cctl_os_env_names(const char *prefix, char ***names, size_t *n)
{
	size_t len = strlen(prefix);
	*names = NULL;
	*n = 0;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || strncmp(*e, prefix, len))
			continue;
		*names = cctl_xrealloc(*names, (*n + 1) * sizeof(**names));
		(*names)[(*n)++] = cctl_xstrfmt("%.*s", (int)(eq - *e), *e);
	}
	return 0;
}

int cctl_os_same_volume(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) || stat(b, &sb))
		return -1;
	return sa.st_dev == sb.st_dev;
}

int cctl_os_uninstall_entry(const char *words, char **name, char **command)
{
	(void)words;
	*name = *command = NULL;
	return CCTL_ENOTFOUND;
}

struct target {
	dev_t dev;
	ino_t ino;
	char *real; /* the path with links resolved, or NULL */
	const char *file;
};

static char *program_of(const char *pid)
{
	char link[64], buf[4096];
	ssize_t n;
	FILE *f;
	snprintf(link, sizeof(link), "/proc/%s/exe", pid);
	if ((n = readlink(link, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = 0;
		return cctl_xstrdup(buf);
	}
	snprintf(link, sizeof(link), "/proc/%s/comm", pid);
	if ((f = fopen(link, "r")) && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		fclose(f);
		return cctl_xstrdup(buf);
	}
	if (f)
		fclose(f);
	return cctl_xstrdup("?");
}

/* The target a line of a maps file maps, or -1. */
static long maps_line(char *line, const struct target *t, size_t n)
{
	unsigned maj, min;
	unsigned long long ino;
	int off = 0;
	char *path;
	if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &ino, &off) < 3 ||
	    !ino)
		return -1;
	path = line + off;
	path[strcspn(path, "\n")] = 0;
	for (size_t i = 0; i < n; i++) {
		if ((ino_t)ino != t[i].ino)
			continue;
		if (makedev(maj, min) == t[i].dev ||
		    (t[i].real && !strncmp(path, t[i].real, strlen(t[i].real)) &&
		     (!path[strlen(t[i].real)] || path[strlen(t[i].real)] == ' ')))
			return (long)i;
	}
	return -1;
}

static void scan_process(const char *pid, const struct target *t, size_t n,
			 struct cctl_lib_user **v, size_t *nv)
{
	char name[64], line[8192];
	unsigned char *seen = cctl_xcalloc(n ? n : 1, 1);
	FILE *f;
	snprintf(name, sizeof(name), "/proc/%s/maps", pid);
	if (!(f = fopen(name, "r"))) {
		free(seen);
		return; /* gone, or another user's */
	}
	while (fgets(line, sizeof(line), f)) {
		long i = maps_line(line, t, n);
		struct cctl_lib_user *u;
		if (i < 0 || seen[i])
			continue;
		seen[i] = 1;
		*v = cctl_xrealloc(*v, (*nv + 1) * sizeof(**v));
		u = &(*v)[(*nv)++];
		u->pid = atol(pid);
		u->program = program_of(pid);
		u->service = NULL;
		u->file = cctl_xstrdup(t[i].file);
	}
	fclose(f);
	free(seen);
}

int cctl_os_lib_users(struct cctl_ctx *ctx, const char *const *files, size_t n,
		      struct cctl_lib_user **v, size_t *nv)
{
	struct target *t = cctl_xcalloc(n ? n : 1, sizeof(*t));
	size_t nt = 0;
	char self[32];
	DIR *d;
	struct dirent *e;

	*v = NULL;
	*nv = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(files[i], &st) || !S_ISREG(st.st_mode))
			continue;
		t[nt].dev = st.st_dev;
		t[nt].ino = st.st_ino;
		t[nt].real = realpath(files[i], NULL);
		t[nt++].file = files[i];
	}
	if (!nt || !(d = opendir("/proc"))) {
		int err = nt ? errno : 0;
		for (size_t i = 0; i < nt; i++)
			free(t[i].real);
		free(t);
		return err ? cctl__posix_error(ctx, err, "list", "/proc") : 0;
	}
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	while ((e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]) && strcmp(e->d_name, self))
			scan_process(e->d_name, t, nt, v, nv);
	closedir(d);
	for (size_t i = 0; i < nt; i++)
		free(t[i].real);
	free(t);
	return 0;
}

/* The OS layer (os.h) for POSIX systems: processes, the environment,
 * paths, descriptors, threads, time.  Files and folders are fs-posix.c's,
 * shared libraries loader-posix.c's and image-posix.c's. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "posix.h"

int cctl__posix_error(struct cctl_ctx *ctx, int err, const char *what,
		      const char *path)
{
	return cctl__os_error(ctx, err == ENOSPC ? CCTL_ENOSPACE : CCTL_EIO, err,
			      "cannot %s '%s': %s", what, path, strerror(err));
}

void cctl_os_kill_point(void)
{
	static long calls, at = -1;
	if (at < 0) {
		const char *env = getenv("CUDNNCTL_TEST_KILL_AT");
		at = env ? atol(env) : 0;
	}
	/* extraction workers reach kill points from several threads */
	if (at > 0 && __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST) == at)
		kill(getpid(), SIGKILL);
}

int cctl_os_run(struct cctl_ctx *ctx, const char *const *argv)
{
	int status;
	pid_t pid = fork();
	if (pid < 0)
		return cctl__posix_error(ctx, errno, "start", argv[0]);
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return cctl__posix_error(ctx, errno, "wait for", argv[0]);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return cctl__error(ctx, CCTL_EFAIL, "'%s' failed (status %d)",
				   argv[0],
				   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

#define CAPTURE_MAX (1u << 20)

int cctl_os_run_capture(struct cctl_ctx *ctx, const char *const *argv,
			unsigned timeout_ms, struct cctl_buf *out,
			struct cctl_buf *err, int *status)
{
	int po[2], pe[2], st = 0, open_fds = 2, timed_out = 0;
	double deadline = cctl_os_now_ms() + timeout_ms;
	struct cctl_buf *bufs[2] = { out, err };
	pid_t pid;

	*status = 127;
	if (pipe(po))
		return cctl__posix_error(ctx, errno, "start", argv[0]);
	if (pipe(pe)) {
		close(po[0]);
		close(po[1]);
		return cctl__posix_error(ctx, errno, "start", argv[0]);
	}
	if ((pid = fork()) < 0) {
		int e = errno;
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		return cctl__posix_error(ctx, e, "start", argv[0]);
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		setpgid(0, 0); /* its own group: a timeout ends its children too */
		if (null >= 0)
			dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid);
	close(po[1]);
	close(pe[1]);
	{
		struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		char buf[65536];
		while (open_fds) {
			double left = deadline - cctl_os_now_ms();
			int n;
			if (left <= 0) {
				timed_out = 1;
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
				break;
			}
			n = poll(fds, 2, left > 1000 ? 1000 : (int)left + 1);
			if (n < 0 && errno != EINTR)
				break;
			for (int i = 0; n > 0 && i < 2; i++) {
				ssize_t got;
				if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				got = read(fds[i].fd, buf, sizeof(buf));
				if (got > 0) {
					if (bufs[i] && bufs[i]->len < CAPTURE_MAX)
						cctl_buf_add(bufs[i], buf, (size_t)got);
				} else if (got == 0 || errno != EINTR) {
					close(fds[i].fd);
					fds[i].fd = -1;
					open_fds--;
				}
			}
		}
		for (int i = 0; i < 2; i++)
			if (fds[i].fd >= 0)
				close(fds[i].fd);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		*status = -1;
	else if (WIFEXITED(st))
		*status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*status = 128 + WTERMSIG(st);
	return 0;
}

const char *cctl_os_getenv(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

int cctl_os_home(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	const char *home = cctl_os_getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || !*home)
		return cctl__error(ctx, CCTL_EFAIL,
				   "cannot find the home folder: HOME is not set");
	if (home[0] != '/') {
		/* profiles and roots would land under whatever folder this
		 * command happens to run in */
		cctl__error(ctx, CCTL_EUSAGE,
			    "HOME='%s' is not an absolute path", home);
		cctl__hint(ctx, "set HOME to your home folder's full path (or "
				"pass --root and --cache)");
		return CCTL_EUSAGE;
	}
	cctl_buf_adds(out, home);
	return 0;
}

int cctl_os_default_root(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	const char *xdg = cctl_os_getenv("XDG_DATA_HOME");
	int ret;
	if (cctl_os_is_admin()) {
		cctl_buf_adds(out, "/opt/cudnn");
	} else if (xdg && cctl_os_is_absolute(xdg)) {
		cctl_buf_adds(out, xdg);
		cctl_buf_addpath(out, "cudnn");
	} else {
		if ((ret = cctl_os_home(ctx, out)))
			return ret;
		cctl_buf_addpath(out, ".local/share/cudnn");
	}
	return 0;
}

int cctl_os_is_admin(void)
{
	return geteuid() == 0;
}

int cctl_os_is_absolute(const char *path)
{
	return path[0] == '/';
}

int cctl_os_absolute(struct cctl_ctx *ctx, const char *path,
		     struct cctl_buf *out)
{
	char cwd[4096];
	if (cctl_os_is_absolute(path)) {
		cctl_buf_adds(out, path);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return cctl__posix_error(ctx, errno, "find", "the current folder");
		cctl_buf_adds(out, cwd);
		if (strcmp(path, "."))
			cctl_buf_addpath(out, path);
	}
	/* drop trailing slashes, but keep "/" */
	while (out->len > 1 && out->buf[out->len - 1] == '/')
		out->buf[--out->len] = '\0';
	return 0;
}

int cctl_os_resolve(const char *abs, struct cctl_buf *out)
{
	char *p = cctl_xstrdup(abs), *real = NULL;
	size_t n = strlen(p);
	/* the longest part that exists, resolved; the rest as given */
	while (!(real = realpath(p, NULL)) && (errno == ENOENT) && n > 1) {
		char *s = strrchr(p, '/');
		n = s && s > p ? (size_t)(s - p) : 1;
		p[n] = '\0';
	}
	if (!real) {
		cctl_buf_adds(out, abs);
	} else {
		const char *rest = abs + n;
		cctl_buf_adds(out, real);
		if (out->len > 1 && *rest)
			cctl_buf_adds(out, rest);
		else if (*rest)
			cctl_buf_adds(out, rest + (*rest == '/'));
	}
	free(real);
	free(p);
	return 0;
}

int cctl_os_open_temp(struct cctl_ctx *ctx, const char *dir, int *fd)
{
	char *path = cctl_xstrfmt("%s/.tmp-%ld-XXXXXX", dir, (long)getpid());
	int ret = 0;
	*fd = mkostemp(path, O_CLOEXEC);
	if (*fd < 0)
		ret = cctl__posix_error(ctx, errno, "create a file in", dir);
	else
		unlink(path); /* the descriptor keeps it until closed */
	free(path);
	return ret;
}

int cctl_os_write_all(struct cctl_ctx *ctx, int fd, const char *name,
		      const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cctl__posix_error(ctx, n ? errno : EIO, "write", name);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cctl_os_copy_fast(struct cctl_ctx *ctx, int in, const char *in_name, int out,
		      const char *out_name, uint64_t len, uint64_t *done)
{
	/* copy_file_range refuses a descriptor opened to append: the flag is
	 * off meanwhile, and the copy goes to the file's end itself */
	int flags = fcntl(out, F_GETFL), ret = 0;
	*done = 0;
	if (flags < 0 || (flags & O_APPEND && fcntl(out, F_SETFL, flags & ~O_APPEND) < 0))
		return 0;
	if (lseek(out, 0, SEEK_END) < 0)
		len = 0;
	while (*done < len) {
		uint64_t left = len - *done;
		ssize_t n = copy_file_range(in, NULL, out, NULL,
					    left < (1u << 30) ? (size_t)left : (1u << 30), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
			      errno == EOPNOTSUPP || errno == EBADF || errno == EPERM))
			break; /* not here: the caller copies the rest */
		if (n < 0) {
			ret = cctl__posix_error(ctx, errno, "copy to", out_name);
			break;
		}
		if (!n) /* in ends: the caller's read says so */
			break;
		*done += (uint64_t)n;
	}
	if (flags & O_APPEND && fcntl(out, F_SETFL, flags) < 0 && !ret)
		ret = cctl__posix_error(ctx, errno, "append to", out_name);
	(void)in_name;
	return ret;
}

struct cctl_os_sync {
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct cctl_os_sync *cctl_os_sync_new(void)
{
	struct cctl_os_sync *s = cctl_xmalloc(sizeof(*s));
	if (pthread_mutex_init(&s->mu, NULL)) {
		free(s);
		return NULL;
	}
	if (pthread_cond_init(&s->cv, NULL)) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		return NULL;
	}
	return s;
}

void cctl_os_sync_free(struct cctl_os_sync *s)
{
	if (!s)
		return;
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void cctl_os_sync_lock(struct cctl_os_sync *s)
{
	pthread_mutex_lock(&s->mu);
}

void cctl_os_sync_unlock(struct cctl_os_sync *s)
{
	pthread_mutex_unlock(&s->mu);
}

void cctl_os_sync_wait(struct cctl_os_sync *s)
{
	pthread_cond_wait(&s->cv, &s->mu);
}

void cctl_os_sync_broadcast(struct cctl_os_sync *s)
{
	pthread_cond_broadcast(&s->cv);
}

struct cctl_os_thread {
	pthread_t id;
	void (*fn)(void *);
	void *arg;
};

static void *thread_main(void *p)
{
	struct cctl_os_thread *t = p;
	t->fn(t->arg);
	return NULL;
}

struct cctl_os_thread *cctl_os_thread_start(void (*fn)(void *), void *arg)
{
	struct cctl_os_thread *t = cctl_xmalloc(sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	if (pthread_create(&t->id, NULL, thread_main, t)) {
		free(t);
		return NULL;
	}
	return t;
}

void cctl_os_thread_join(struct cctl_os_thread *t)
{
	if (!t)
		return;
	pthread_join(t->id, NULL);
	free(t);
}

int cctl_os_open_read(struct cctl_ctx *ctx, const char *path, int *fd)
{
	struct stat s;
	/* O_NONBLOCK: a FIFO would hold open() until someone writes it */
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return cctl__posix_error(ctx, errno, "open", path);
	if (fstat(*fd, &s) == 0 && S_ISREG(s.st_mode) &&
	    fcntl(*fd, F_SETFL, O_RDONLY) < 0) {
		int err = errno;
		close(*fd);
		*fd = -1;
		return cctl__posix_error(ctx, err, "open", path);
	}
	if (fstat(*fd, &s) == 0 && !S_ISREG(s.st_mode)) {
		close(*fd);
		*fd = -1;
		return cctl__error(ctx, CCTL_EIO, "cannot read '%s': not a file",
				   path);
	}
	return 0;
}

int cctl_os_prealloc(void)
{
	return 0; /* libarchive's writer; ext4 and xfs allocate in extents */
}

int cctl_os_create_sized(struct cctl_ctx *ctx, const char *path,
			 uint64_t size, int *fd)
{
	(void)size;
	*fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return *fd < 0 ? cctl__posix_error(ctx, errno, "create", path) : 0;
}

int cctl_os_close_timed(struct cctl_ctx *ctx, int fd, const char *path,
			int64_t sec, long nsec)
{
	struct timespec t[2];
	int err = 0;
	t[0].tv_sec = t[1].tv_sec = (time_t)sec;
	t[0].tv_nsec = t[1].tv_nsec = nsec;
	if (futimens(fd, t))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	return err ? cctl__posix_error(ctx, err, "finish", path) : 0;
}

int cctl_os_open_write(struct cctl_ctx *ctx, const char *path, int append,
		       int *fd)
{
	struct stat s;
	if (!append) {
		/* a new file in its place: what another user planted there
		 * (a link to a file of ours, a FIFO) goes, untouched */
		if (unlink(path) < 0 && errno != ENOENT)
			return cctl__posix_error(ctx, errno, "replace", path);
		*fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			   0644);
		return *fd < 0 ? cctl__posix_error(ctx, errno, "create", path) : 0;
	}
	/* O_NONBLOCK: a FIFO would hold open() until someone reads it */
	*fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0 && errno == EWOULDBLOCK && lstat(path, &s) == 0 &&
	    S_ISREG(s.st_mode))
		/* a regular file under another process's read lease: with
		 * O_NONBLOCK the open fails instead of breaking it */
		*fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		return cctl__posix_error(ctx, errno == ELOOP ? ENOTSUP : errno,
					 "append to", path);
	if (fstat(*fd, &s) < 0 || !S_ISREG(s.st_mode) || s.st_nlink != 1 ||
	    fcntl(*fd, F_SETFL, O_WRONLY | O_APPEND) < 0) {
		close(*fd);
		*fd = -1;
		return cctl__error(ctx, CCTL_EIO,
				   "refusing to write '%s': not a regular file of "
				   "its own (a link, a FIFO or a hard link)",
				   path);
	}
	return 0;
}

void cctl_os_sleep_ms(unsigned ms)
{
	struct timespec t = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

int cctl_os_cache_dir(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	const char *xdg = cctl_os_getenv("XDG_CACHE_HOME");
	int ret;
	if (xdg && cctl_os_is_absolute(xdg)) {
		cctl_buf_adds(out, xdg);
		cctl_buf_addpath(out, "cudnnctl");
		return 0;
	}
	if ((ret = cctl_os_home(ctx, out)))
		return ret;
	cctl_buf_addpath(out, ".cache/cudnnctl");
	return 0;
}

int cctl_os_read(struct cctl_ctx *ctx, int fd, const char *name, void *buf,
		 size_t len, size_t *got)
{
	ssize_t n;
	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	*got = n > 0 ? (size_t)n : 0;
	return n < 0 ? cctl__posix_error(ctx, errno, "read", name) : 0;
}

int cctl_os_truncate(struct cctl_ctx *ctx, int fd, const char *name,
		     uint64_t size)
{
	int r;
	cctl_os_kill_point();
	do
		r = ftruncate(fd, (off_t)size);
	while (r < 0 && errno == EINTR);
	return r < 0 ? cctl__posix_error(ctx, errno, "truncate", name) : 0;
}

int cctl_os_pread(struct cctl_ctx *ctx, int fd, const char *name, void *buf,
		  size_t len, uint64_t off, size_t *got)
{
	ssize_t n;
	do
		n = pread(fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	*got = n > 0 ? (size_t)n : 0;
	return n < 0 ? cctl__posix_error(ctx, errno, "read", name) : 0;
}

/* The read lease of cctl_os_guard_begin.  A writer's open(2) breaks it:
 * the kernel signals SIGIO and holds the open until the lease is given up
 * (lease-break-time, 45 s by default), so the handler gives it up at once
 * and remembers. */
static volatile sig_atomic_t lease_fd = -1, lease_broken;

static void on_lease_break(int sig)
{
	int saved = errno;
	(void)sig;
	lease_broken = 1;
	if (lease_fd >= 0)
		fcntl(lease_fd, F_SETLEASE, F_UNLCK);
	errno = saved;
}

void *cctl_os_guard_begin(int fd, const char *path)
{
	static int token;
	struct sigaction sa;
	(void)path;
	if (fd < 0 || lease_fd >= 0)
		return NULL;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_lease_break;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGIO, &sa, NULL))
		return NULL;
	lease_broken = 0;
	lease_fd = fd;
	/* EAGAIN: open for writing somewhere; EACCES: not ours; EINVAL: no
	 * leases on this file system or fs.leases-enable=0 */
	if (fcntl(fd, F_SETLEASE, F_RDLCK)) {
		lease_fd = -1;
		return NULL;
	}
	return &token;
}

int cctl_os_guard_held(void *guard)
{
	return guard && lease_fd >= 0 && !lease_broken &&
	       fcntl(lease_fd, F_GETLEASE) == F_RDLCK;
}

void cctl_os_guard_end(void *guard)
{
	int fd = lease_fd;
	if (!guard || fd < 0)
		return;
	lease_fd = -1;
	fcntl(fd, F_SETLEASE, F_UNLCK);
}

void cctl_os_describe(struct cctl_buf *out)
{
	struct cctl_buf rel = CCTL_BUF_INIT;
	struct utsname u;
	const char *name = NULL;
	size_t n = 0;
	if (!cctl_os_read_file(NULL, "/etc/os-release", &rel)) {
		const char *p = strstr(rel.buf, "PRETTY_NAME=");
		if (p && (p == rel.buf || p[-1] == '\n')) {
			name = p + 12;
			if (*name == '"')
				name++;
			n = strcspn(name, "\"\n");
		}
	}
	if (name)
		cctl_buf_add(out, name, n);
	else
		cctl_buf_adds(out, "unknown system");
	if (!uname(&u))
		cctl_buf_addf(out, "; %s %s %s", u.sysname, u.release, u.machine);
	cctl_buf_release(&rel);
}

unsigned cctl_os_ncpu(void)
{
	long n;
#ifdef CPU_COUNT
	cpu_set_t set;
	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
#endif
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

int cctl_os_seek(struct cctl_ctx *ctx, int fd, const char *name,
		 int64_t offset, int whence, int64_t *pos)
{
	off_t p = lseek(fd, (off_t)offset, whence);
	if (p < 0)
		return cctl__posix_error(ctx, errno, "seek in", name);
	if (pos)
		*pos = (int64_t)p;
	return 0;
}

void cctl_os_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

int cctl_os_realpath(struct cctl_ctx *ctx, const char *path,
		     struct cctl_buf *out)
{
	char resolved[PATH_MAX];
	if (!realpath(path, resolved))
		return cctl__posix_error(ctx, errno, "resolve", path);
	cctl_buf_adds(out, resolved);
	return 0;
}

struct utf8_locale {
	locale_t mine;
	locale_t old;
};

void *cctl_os_utf8_locale_enter(void)
{
	struct utf8_locale *s;
	locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (!l)
		return NULL;
	s = cctl_xmalloc(sizeof(*s));
	s->mine = l;
	s->old = uselocale(l);
	return s;
}

void cctl_os_utf8_locale_leave(void *state)
{
	struct utf8_locale *s = state;
	if (!s)
		return;
	uselocale(s->old);
	freelocale(s->mine);
	free(s);
}

void cctl_os_native_path(char *path)
{
	(void)path; /* '/' already */
}

void cctl_os_unblock(const char *path)
{
	(void)path; /* no zone marks on POSIX file systems */
}

int cctl_os_terminal(int fd)
{
	const char *term = getenv("TERM");
	if (!isatty(fd))
		return 0;
	return term && !strcmp(term, "dumb") ? 1 : 2;
}

int cctl_os_isatty(int fd)
{
	return isatty(fd);
}

long cctl_os_pid(void)
{
	return (long)getpid();
}

void cctl_os_utc_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double cctl_os_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *cctl_os_native_platform(void)
{
	return CCTL_OS_PLATFORM;
}

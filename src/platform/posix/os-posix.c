/* The OS layer (os.h) for POSIX systems. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "../os.h"

static int os_error(struct cctl_ctx *ctx, int err, const char *what,
		    const char *path)
{
	return cctl__os_error(ctx, err == ENOSPC ? CCTL_ENOSPACE : CCTL_EIO, err,
			      "cannot %s '%s': %s", what, path, strerror(err));
}

static int64_t ts_ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int cctl_os_stat(struct cctl_ctx *ctx, const char *path,
		 struct cctl_os_stat *st)
{
	struct stat s;
	memset(st, 0, sizeof(*st));
	if (lstat(path, &s) < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			st->type = CCTL_OS_NONE;
			return 0;
		}
		return os_error(ctx, errno, "stat", path);
	}
	if (S_ISREG(s.st_mode))
		st->type = CCTL_OS_FILE;
	else if (S_ISDIR(s.st_mode))
		st->type = CCTL_OS_DIR;
	else if (S_ISLNK(s.st_mode))
		st->type = CCTL_OS_LINK;
	else
		st->type = CCTL_OS_OTHER;
	st->size = (uint64_t)s.st_size;
	st->mtime_ns = ts_ns(s.st_mtim);
	st->ctime_ns = ts_ns(s.st_ctim);
	return 0;
}

int cctl_os_mkdir(struct cctl_ctx *ctx, const char *path)
{
	struct stat s;
	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno == EEXIST && stat(path, &s) == 0 && S_ISDIR(s.st_mode))
		return 0;
	return os_error(ctx, errno, "create folder", path);
}

int cctl_os_mkdirs(struct cctl_ctx *ctx, const char *path)
{
	char *p = cctl_xstrdup(path);
	int ret = 0;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		ret = cctl_os_mkdir(ctx, p);
		*s = '/';
		if (ret)
			goto out;
	}
	ret = cctl_os_mkdir(ctx, p);
out:
	free(p);
	return ret;
}

static int rmtree_at(struct cctl_ctx *ctx, int dirfd, const char *name,
		     const char *shown)
{
	struct stat s;
	int fd, ret = 0;
	DIR *d;
	struct dirent *e;

	if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : os_error(ctx, errno, "stat", shown);
	if (!S_ISDIR(s.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return os_error(ctx, errno, "remove", shown);
		return 0;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return os_error(ctx, errno, "open folder", shown);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return os_error(ctx, errno, "open folder", shown);
	}
	while (!ret && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		ret = rmtree_at(ctx, fd, e->d_name, shown);
	}
	closedir(d);
	if (!ret && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		ret = os_error(ctx, errno, "remove folder", shown);
	return ret;
}

int cctl_os_rmtree(struct cctl_ctx *ctx, const char *path)
{
	return rmtree_at(ctx, AT_FDCWD, path, path);
}

int cctl_os_unlink(struct cctl_ctx *ctx, const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return os_error(ctx, errno, "remove", path);
	return 0;
}

int cctl_os_rename(struct cctl_ctx *ctx, const char *from, const char *to)
{
	if (rename(from, to) < 0) {
		int err = errno;
		return cctl__os_error(ctx, CCTL_EIO, err,
				      "cannot rename '%s' to '%s': %s", from, to,
				      strerror(err));
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cctl_os_listdir(struct cctl_ctx *ctx, const char *path, char ***names,
		    size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *e;
	size_t alloc = 0;

	*names = NULL;
	*n = 0;
	if (!d)
		return os_error(ctx, errno, "list folder", path);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*names = cctl_xrealloc(*names, alloc * sizeof(char *));
		}
		(*names)[(*n)++] = cctl_xstrdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(char *), cmp_names);
	return 0;
}

int cctl_os_read_file(struct cctl_ctx *ctx, const char *path,
		      struct cctl_buf *out)
{
	char tmp[65536];
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return os_error(ctx, errno, "open", path);
	while ((got = read(fd, tmp, sizeof(tmp))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			close(fd);
			return os_error(ctx, err, "read", path);
		}
		cctl_buf_add(out, tmp, (size_t)got);
	}
	close(fd);
	return 0;
}

int cctl_os_write_file_atomic(struct cctl_ctx *ctx, const char *path,
			      const void *data, size_t len)
{
	char *lock = cctl_xstrfmt("%s.lock", path);
	const char *p = data;
	struct stat old;
	int ret = 0, fd;

	/* never through a link planted at <path>.lock; a stale one from a
	 * crash is replaced */
	fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST && unlink(lock) == 0)
		fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0644);
	if (fd < 0) {
		ret = os_error(ctx, errno, "create", lock);
		goto out;
	}
	if (stat(path, &old) == 0) {
		/* a replaced file keeps its permissions and owner */
		if (fchmod(fd, old.st_mode & 07777) < 0)
			ret = os_error(ctx, errno, "set permissions of", lock);
		if (geteuid() == 0 && (old.st_uid != 0 || old.st_gid != 0) &&
		    fchown(fd, old.st_uid, old.st_gid) < 0 && !ret)
			ret = os_error(ctx, errno, "set owner of", lock);
	}
	while (len && !ret) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			ret = os_error(ctx, errno, "write", lock);
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (!ret && fsync(fd) < 0)
		ret = os_error(ctx, errno, "sync", lock);
	if (close(fd) < 0 && !ret)
		ret = os_error(ctx, errno, "write", lock);
	if (!ret && rename(lock, path) < 0)
		ret = os_error(ctx, errno, "replace", path);
	if (ret)
		unlink(lock);
out:
	free(lock);
	return ret;
}

int cctl_os_free_space(struct cctl_ctx *ctx, const char *path,
		       uint64_t *bytes)
{
	struct statvfs v;
	if (statvfs(path, &v) < 0)
		return os_error(ctx, errno, "query free space of", path);
	*bytes = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
	return 0;
}

int cctl_os_lock(struct cctl_ctx *ctx, const char *path, void **handle)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	char pid[32];
	*handle = NULL;
	if (fd < 0)
		return os_error(ctx, errno, "create lock file", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		char held[32] = "";
		ssize_t got = read(fd, held, sizeof(held) - 1);
		close(fd);
		if (err == EWOULDBLOCK) {
			held[got > 0 ? got : 0] = '\0';
			held[strcspn(held, "\n")] = '\0';
			cctl__error(ctx, CCTL_ELOCKED,
				    "install root is in use: '%s' is held by "
				    "process %s",
				    path, *held ? held : "(unknown)");
			cctl__hint(ctx, "wait for the other cudnnctl to finish, "
					"then run the command again");
			return CCTL_ELOCKED;
		}
		return os_error(ctx, err, "lock", path);
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && write(fd, pid, strlen(pid)) < 0) {
		/* the pid is only informative */
	}
	*handle = (void *)(intptr_t)(fd + 1);
	return 0;
}

void cctl_os_unlock(void *handle)
{
	if (handle)
		close((int)(intptr_t)handle - 1);
}

int cctl_os_link_dir(struct cctl_ctx *ctx, const char *link,
		     const char *target, int *emulated)
{
	char *tmp = cctl_xstrfmt("%s.new-%ld", link, (long)getpid());
	int ret = 0;
	*emulated = 0;
	unlink(tmp);
	if (symlink(target, tmp) < 0) {
		ret = os_error(ctx, errno, "create link", tmp);
		goto out;
	}
	if (rename(tmp, link) < 0) {
		ret = os_error(ctx, errno, "replace link", link);
		unlink(tmp);
	}
out:
	free(tmp);
	return ret;
}

int cctl_os_readlink(struct cctl_ctx *ctx, const char *link,
		     struct cctl_buf *out)
{
	char tmp[4096];
	ssize_t n = readlink(link, tmp, sizeof(tmp) - 1);
	if (n < 0) {
		if (errno == ENOENT || errno == EINVAL)
			return cctl__error(ctx, CCTL_ENOTFOUND,
					   "'%s' is not a link", link);
		return os_error(ctx, errno, "read link", link);
	}
	cctl_buf_add(out, tmp, (size_t)n);
	return 0;
}

int cctl_os_run(struct cctl_ctx *ctx, const char *const *argv)
{
	int status;
	pid_t pid = fork();
	if (pid < 0)
		return os_error(ctx, errno, "start", argv[0]);
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return os_error(ctx, errno, "wait for", argv[0]);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return cctl__error(ctx, CCTL_EFAIL, "'%s' failed (status %d)",
				   argv[0],
				   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
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
	if (!home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return cctl__error(ctx, CCTL_EFAIL,
				   "cannot find the home folder: HOME is not set");
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
			return os_error(ctx, errno, "find", "the current folder");
		cctl_buf_adds(out, cwd);
		if (strcmp(path, "."))
			cctl_buf_addpath(out, path);
	}
	/* drop trailing slashes, but keep "/" */
	while (out->len > 1 && out->buf[out->len - 1] == '/')
		out->buf[--out->len] = '\0';
	return 0;
}

int cctl_os_open_temp(struct cctl_ctx *ctx, const char *dir, int *fd)
{
	char *path = cctl_xstrfmt("%s/.tmp-%ld-XXXXXX", dir, (long)getpid());
	int ret = 0;
	*fd = mkostemp(path, O_CLOEXEC);
	if (*fd < 0)
		ret = os_error(ctx, errno, "create a file in", dir);
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
			return os_error(ctx, n ? errno : EIO, "write", name);
		p += n;
		len -= (size_t)n;
	}
	return 0;
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
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return os_error(ctx, errno, "open", path);
	if (fstat(*fd, &s) == 0 && !S_ISREG(s.st_mode)) {
		close(*fd);
		*fd = -1;
		return cctl__error(ctx, CCTL_EIO, "cannot read '%s': not a file",
				   path);
	}
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
	return n < 0 ? os_error(ctx, errno, "read", name) : 0;
}

int cctl_os_seek(struct cctl_ctx *ctx, int fd, const char *name,
		 int64_t offset, int whence, int64_t *pos)
{
	off_t p = lseek(fd, (off_t)offset, whence);
	if (p < 0)
		return os_error(ctx, errno, "seek in", name);
	if (pos)
		*pos = (int64_t)p;
	return 0;
}

void cctl_os_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

int cctl_os_dl_open(struct cctl_ctx *ctx, const char *path, void **handle)
{
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) {
		const char *why = dlerror();
		return cctl__error(ctx, CCTL_EFAIL, "cannot load '%s': %s", path,
				   why ? why : "unknown reason");
	}
	return 0;
}

void *cctl_os_dl_sym(void *handle, const char *name)
{
	return dlsym(handle, name);
}

int cctl_os_dl_path(struct cctl_ctx *ctx, void *handle, struct cctl_buf *out)
{
	struct link_map *map = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name)
		return cctl__error(ctx, CCTL_EFAIL,
				   "cannot tell which file was loaded: %s",
				   dlerror());
	cctl_buf_adds(out, map->l_name);
	return 0;
}

void cctl_os_dl_close(void *handle)
{
	if (handle)
		dlclose(handle);
}

int cctl_os_realpath(struct cctl_ctx *ctx, const char *path,
		     struct cctl_buf *out)
{
	char resolved[PATH_MAX];
	if (!realpath(path, resolved))
		return os_error(ctx, errno, "resolve", path);
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

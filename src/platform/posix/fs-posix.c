/* The OS layer (os.h) for POSIX systems: files, folders, locks and links. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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
#include "posix.h"

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
		return cctl__posix_error(ctx, errno, "stat", path);
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

/* A group of which this user is the only member, named as the user: a
 * "user private group" (Fedora, Debian's adduser), whose write bit gives
 * no one else anything. */
static int private_group(gid_t gid)
{
	struct passwd *pw = getpwuid(geteuid());
	struct group *gr = getgrgid(gid);
	if (!pw || !gr || pw->pw_gid != gid || strcmp(gr->gr_name, pw->pw_name))
		return 0;
	for (char **m = gr->gr_mem; m && *m; m++)
		if (strcmp(*m, pw->pw_name))
			return 0;
	return 1;
}

int cctl_os_foreign_writable(const char *path, int admin_only, int *sticky,
			     struct cctl_buf *why)
{
	struct stat s;
	uid_t me = geteuid();
	*sticky = 0;
	if (lstat(path, &s))
		return 0;
	if (s.st_uid != 0 && (admin_only || s.st_uid != me)) {
		struct passwd *pw = getpwuid(s.st_uid);
		if (pw)
			cctl_buf_addf(why, "is owned by '%s' (uid %ld)", pw->pw_name,
				      (long)s.st_uid);
		else
			cctl_buf_addf(why, "is owned by uid %ld", (long)s.st_uid);
		return 1;
	}
	if (S_ISLNK(s.st_mode) || !(s.st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	if (S_ISDIR(s.st_mode) && (s.st_mode & S_ISVTX)) {
		*sticky = 1;
		return 0;
	}
	if (!(s.st_mode & S_IWOTH) && !admin_only && private_group(s.st_gid))
		return 0;
	cctl_buf_addf(why, "can be written by %s (mode %03o)",
		      (s.st_mode & S_IWOTH) ? "every user" : "its group",
		      (unsigned)(s.st_mode & 0777));
	return 1;
}

int cctl_os_protect_machine_root(struct cctl_ctx *ctx, const char *path)
{
	if (chmod(path, 0755) < 0)
		return cctl__posix_error(ctx, errno, "set the mode of", path);
	return 0;
}

int cctl_os_mkdir(struct cctl_ctx *ctx, const char *path)
{
	struct stat s;
	cctl_os_kill_point();
	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno == EEXIST && stat(path, &s) == 0 && S_ISDIR(s.st_mode))
		return 0;
	return cctl__posix_error(ctx, errno, "create folder", path);
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
		return errno == ENOENT ? 0 : cctl__posix_error(ctx, errno, "stat", shown);
	cctl_os_kill_point();
	if (!S_ISDIR(s.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return cctl__posix_error(ctx, errno, "remove", shown);
		return 0;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return cctl__posix_error(ctx, errno, "open folder", shown);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return cctl__posix_error(ctx, errno, "open folder", shown);
	}
	while (!ret && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		ret = rmtree_at(ctx, fd, e->d_name, shown);
	}
	closedir(d);
	if (!ret && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		ret = cctl__posix_error(ctx, errno, "remove folder", shown);
	return ret;
}

int cctl_os_rmtree(struct cctl_ctx *ctx, const char *path)
{
	return rmtree_at(ctx, AT_FDCWD, path, path);
}

int cctl_os_unlink(struct cctl_ctx *ctx, const char *path)
{
	cctl_os_kill_point();
	if (unlink(path) < 0 && errno != ENOENT)
		return cctl__posix_error(ctx, errno, "remove", path);
	return 0;
}

int cctl_os_symlink(struct cctl_ctx *ctx, const char *target, const char *link)
{
	cctl_os_kill_point();
	if (symlink(target, link) < 0) {
		int err = errno;
		return cctl__os_error(ctx, err == EACCES || err == EPERM || err == EROFS
						   ? CCTL_EFAIL
						   : CCTL_EIO,
				      err, "cannot make the link '%s': %s", link,
				      strerror(err));
	}
	return 0;
}

int cctl_os_rename(struct cctl_ctx *ctx, const char *from, const char *to)
{
	cctl_os_kill_point();
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
		return cctl__posix_error(ctx, errno, "list folder", path);
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
		return cctl__posix_error(ctx, errno, "open", path);
	while ((got = read(fd, tmp, sizeof(tmp))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			close(fd);
			return cctl__posix_error(ctx, err, "read", path);
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
	cctl_os_kill_point();

	/* never through a link planted at <path>.lock; a stale one from a
	 * crash is replaced */
	fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST && unlink(lock) == 0)
		fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0644);
	if (fd < 0) {
		ret = cctl__posix_error(ctx, errno, "create", lock);
		goto out;
	}
	if (stat(path, &old) == 0) {
		/* a replaced file keeps its permissions and owner */
		if (fchmod(fd, old.st_mode & 07777) < 0)
			ret = cctl__posix_error(ctx, errno, "set permissions of", lock);
		if (geteuid() == 0 && (old.st_uid != 0 || old.st_gid != 0) &&
		    fchown(fd, old.st_uid, old.st_gid) < 0 && !ret)
			ret = cctl__posix_error(ctx, errno, "set owner of", lock);
	}
	while (len && !ret) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			ret = cctl__posix_error(ctx, errno, "write", lock);
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (!ret && fsync(fd) < 0)
		ret = cctl__posix_error(ctx, errno, "sync", lock);
	if (close(fd) < 0 && !ret)
		ret = cctl__posix_error(ctx, errno, "write", lock);
	if (!ret)
		cctl_os_kill_point();
	if (!ret && rename(lock, path) < 0)
		ret = cctl__posix_error(ctx, errno, "replace", path);
	if (ret)
		unlink(lock);
out:
	free(lock);
	return ret;
}

int cctl_os_append_file(struct cctl_ctx *ctx, const char *path,
			const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	int ret;
	if (fd < 0)
		return cctl__posix_error(ctx, errno, "open", path);
	ret = cctl_os_write_all(ctx, fd, path, data, len);
	/* on the disk when this returns (a history line, a CI runner's
	 * file); a file system without fsync (a pipe) is no error */
	if (!ret && fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
		ret = cctl__posix_error(ctx, errno, "flush", path);
	if (close(fd) < 0 && !ret)
		ret = cctl__posix_error(ctx, errno, "write", path);
	return ret;
}

int cctl_os_free_space(struct cctl_ctx *ctx, const char *path,
		       uint64_t *bytes)
{
	struct statvfs v;
	if (statvfs(path, &v) < 0)
		return cctl__posix_error(ctx, errno, "query free space of", path);
	*bytes = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
	return 0;
}

int cctl_os_lock(struct cctl_ctx *ctx, const char *path, const char *doing,
		 struct cctl_buf *holder, void **handle)
{
	/* never through a link, never a FIFO (O_NONBLOCK: its open would
	 * wait), a regular file of one link or refused: a lock file planted
	 * by another user must not have us truncate its target */
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      0644);
	struct cctl_buf me = CCTL_BUF_INIT;
	struct stat s;
	*handle = NULL;
	if (fd < 0 && errno == ELOOP) {
		cctl__error(ctx, CCTL_EIO,
			    "refusing lock file '%s': it is a symbolic link, "
			    "which cudnnctl never makes",
			    path);
		cctl__hint(ctx, "look at where it points and who made it, then "
				"remove it (rm '%s')",
			   path);
		return CCTL_EIO;
	}
	if (fd < 0)
		return cctl__posix_error(ctx, errno, "create lock file", path);
	if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode) || s.st_nlink != 1) {
		close(fd);
		cctl__error(ctx, CCTL_EIO,
			    "refusing lock file '%s': not a regular file of its "
			    "own (a FIFO, a device or a hard link)",
			    path);
		cctl__hint(ctx, "remove it (rm '%s'); cudnnctl makes a new one",
			   path);
		return CCTL_EIO;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		char held[256];
		ssize_t got = pread(fd, held, sizeof(held) - 1, 0);
		close(fd);
		if (err == EWOULDBLOCK) {
			held[got > 0 ? got : 0] = '\0';
			cctl__lock_holder(held, holder);
			cctl__error(ctx, CCTL_ELOCKED,
				    "install root is in use: '%s' is held by %s",
				    path, holder && holder->len ? holder->buf
								: "another process");
			cctl__hint(ctx, "wait for the other cudnnctl to finish, "
					"then run the command again");
			return CCTL_ELOCKED;
		}
		return cctl__posix_error(ctx, err, "lock", path);
	}
	/* who holds it and doing what: informative only */
	cctl_buf_addf(&me, "%ld\n%s\n", (long)getpid(), doing ? doing : "");
	if (ftruncate(fd, 0) == 0 && pwrite(fd, me.buf, me.len, 0) < 0) {
		/* nothing lost: the lock is the flock, not the text */
	}
	cctl_buf_release(&me);
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
	cctl_os_kill_point();
	unlink(tmp);
	if (symlink(target, tmp) < 0) {
		ret = cctl__posix_error(ctx, errno, "create link", tmp);
		goto out;
	}
	cctl_os_kill_point();
	if (rename(tmp, link) < 0) {
		ret = cctl__posix_error(ctx, errno, "replace link", link);
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
		return cctl__posix_error(ctx, errno, "read link", link);
	}
	cctl_buf_add(out, tmp, (size_t)n);
	return 0;
}


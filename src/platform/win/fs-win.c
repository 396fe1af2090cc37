/*
 * The OS layer (os.h) for Windows: files, folders, locks, and directory
 * junctions (with the pointer file where a volume cannot hold one).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <winioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <wctype.h>

#include "../../core/internal.h"
#include "../os.h"
#include "win.h"

/* --------------------------------------------------------------- files */

/* 100 ns units since 1601 as ns since 1970 (as 1601-based ns it would
 * overflow 64 bits for any date after 1893) */
static int64_t filetime_ns(LARGE_INTEGER t)
{
	return ((int64_t)t.QuadPart - 116444736000000000LL) * 100;
}

int cctl_os_resolve(const char *abs, struct cctl_buf *out)
{
	cctl_buf_adds(out, abs);
	return 0;
}

int cctl_os_stat(struct cctl_ctx *ctx, const char *path,
		 struct cctl_os_stat *st)
{
	wchar_t *w = cctl_win_wpath(path);
	FILE_BASIC_INFO bi;
	LARGE_INTEGER size;
	HANDLE h;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	h = CreateFileW(w, FILE_READ_ATTRIBUTES,
			FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			NULL, OPEN_EXISTING,
			FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
			NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD err = GetLastError();
		if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ||
		    err == ERROR_INVALID_NAME)
			st->type = CCTL_OS_NONE;
		else
			ret = cctl_win_error(ctx, err, "stat", path);
		goto out;
	}
	if (!GetFileInformationByHandleEx(h, FileBasicInfo, &bi, sizeof(bi))) {
		ret = cctl_win_error(ctx, GetLastError(), "stat", path);
		CloseHandle(h);
		goto out;
	}
	if (bi.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
		st->type = CCTL_OS_LINK;
	else if (bi.FileAttributes & FILE_ATTRIBUTE_DIRECTORY)
		st->type = CCTL_OS_DIR;
	else
		st->type = CCTL_OS_FILE;
	if (st->type == CCTL_OS_FILE && GetFileSizeEx(h, &size))
		st->size = (uint64_t)size.QuadPart;
	st->mtime_ns = filetime_ns(bi.LastWriteTime);
	st->ctime_ns = filetime_ns(bi.ChangeTime);
	CloseHandle(h);
out:
	free(w);
	return ret;
}

int cctl_os_mkdir(struct cctl_ctx *ctx, const char *path)
{
	cctl_os_kill_point();
	wchar_t *w = cctl_win_wpath(path);
	int ret = 0;
	if (!CreateDirectoryW(w, NULL)) {
		DWORD err = GetLastError();
		DWORD attr = GetFileAttributesW(w);
		if (!(err == ERROR_ALREADY_EXISTS && attr != INVALID_FILE_ATTRIBUTES &&
		      (attr & FILE_ATTRIBUTE_DIRECTORY)))
			ret = cctl_win_error(ctx, err, "create folder", path);
	}
	free(w);
	return ret;
}

int cctl_os_mkdirs(struct cctl_ctx *ctx, const char *path)
{
	char *p = cctl_xstrdup(path);
	char *s = p;
	int ret = 0;
	/* skip "C:\" and "\\server\share\" */
	if (s[0] && s[1] == ':')
		s += 2;
	else if ((s[0] == '\\' || s[0] == '/') && (s[1] == '\\' || s[1] == '/')) {
		s += 2;
		s += strcspn(s, "\\/");
		if (*s)
			s += 1 + strcspn(s + 1, "\\/");
	}
	for (s = s + 1; *s; s++) {
		char c = *s;
		if (c != '/' && c != '\\')
			continue;
		*s = '\0';
		ret = cctl_os_mkdir(ctx, p);
		*s = c;
		if (ret)
			goto out;
	}
	ret = cctl_os_mkdir(ctx, p);
out:
	free(p);
	return ret;
}

static int remove_one(struct cctl_ctx *ctx, const wchar_t *w, DWORD attr,
		      const char *shown)
{
	cctl_os_kill_point();
	if (attr & FILE_ATTRIBUTE_READONLY)
		SetFileAttributesW(w, attr & ~(DWORD)FILE_ATTRIBUTE_READONLY);
	if (attr & FILE_ATTRIBUTE_DIRECTORY) {
		/* a junction is removed as the folder it is, never followed */
		if (!RemoveDirectoryW(w) && GetLastError() != ERROR_FILE_NOT_FOUND)
			return cctl_win_error(ctx, GetLastError(), "remove folder",
					      shown);
	} else if (!DeleteFileW(w) && GetLastError() != ERROR_FILE_NOT_FOUND) {
		return cctl_win_error(ctx, GetLastError(), "remove", shown);
	}
	return 0;
}

static int rmtree_w(struct cctl_ctx *ctx, const wchar_t *w, const char *shown)
{
	DWORD attr = GetFileAttributesW(w);
	WIN32_FIND_DATAW fd;
	HANDLE h;
	size_t len;
	wchar_t *pat;
	int ret = 0;

	if (attr == INVALID_FILE_ATTRIBUTES)
		return 0;
	if (!(attr & FILE_ATTRIBUTE_DIRECTORY) ||
	    (attr & FILE_ATTRIBUTE_REPARSE_POINT))
		return remove_one(ctx, w, attr, shown);
	len = wcslen(w);
	pat = cctl_xmalloc((len + 3) * sizeof(wchar_t));
	memcpy(pat, w, len * sizeof(wchar_t));
	wcscpy(pat + len, L"\\*");
	h = FindFirstFileW(pat, &fd);
	free(pat);
	if (h != INVALID_HANDLE_VALUE) {
		do {
			wchar_t *child;
			size_t n;
			if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
				continue;
			n = wcslen(fd.cFileName);
			child = cctl_xmalloc((len + n + 2) * sizeof(wchar_t));
			memcpy(child, w, len * sizeof(wchar_t));
			child[len] = L'\\';
			memcpy(child + len + 1, fd.cFileName, (n + 1) * sizeof(wchar_t));
			ret = rmtree_w(ctx, child, shown);
			free(child);
		} while (!ret && FindNextFileW(h, &fd));
		FindClose(h);
	}
	if (!ret)
		ret = remove_one(ctx, w, attr, shown);
	return ret;
}

int cctl_os_rmtree(struct cctl_ctx *ctx, const char *path)
{
	wchar_t *w = cctl_win_wpath(path);
	int ret = rmtree_w(ctx, w, path);
	free(w);
	return ret;
}

int cctl_os_unlink(struct cctl_ctx *ctx, const char *path)
{
	cctl_os_kill_point();
	wchar_t *w = cctl_win_wpath(path);
	DWORD attr = GetFileAttributesW(w);
	int ret = 0;
	if (attr != INVALID_FILE_ATTRIBUTES)
		ret = remove_one(ctx, w, attr, path);
	free(w);
	return ret;
}

int cctl_os_symlink(struct cctl_ctx *ctx, const char *target, const char *link)
{
	(void)target;
	return cctl__error(ctx, CCTL_EFAIL, "cannot make the link '%s': cudnnctl "
					    "copies on Windows",
			   link);
}

int cctl_os_rename(struct cctl_ctx *ctx, const char *from, const char *to)
{
	cctl_os_kill_point();
	wchar_t *wf = cctl_win_wpath(from), *wt = cctl_win_wpath(to);
	int ret = 0;
	if (!MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
		/* the code first: FormatMessageW may change GetLastError() */
		DWORD err = GetLastError();
		char msg[600];
		cctl_win_message(err, msg, sizeof(msg));
		ret = cctl__os_error(ctx, CCTL_EIO, (int)err,
				     "cannot rename '%s' to '%s': %s", from, to,
				     msg);
	}
	free(wf);
	free(wt);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cctl_os_listdir(struct cctl_ctx *ctx, const char *path, char ***names,
		    size_t *n)
{
	char *pat = cctl_xstrfmt("%s\\*", path);
	wchar_t *w = cctl_win_wpath(pat);
	WIN32_FIND_DATAW fd;
	size_t alloc = 0;
	HANDLE h;

	*names = NULL;
	*n = 0;
	h = FindFirstFileW(w, &fd);
	free(w);
	free(pat);
	if (h == INVALID_HANDLE_VALUE) {
		if (GetLastError() == ERROR_FILE_NOT_FOUND)
			return 0;
		return cctl_win_error(ctx, GetLastError(), "list folder", path);
	}
	do {
		if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
			continue;
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*names = cctl_xrealloc(*names, alloc * sizeof(char *));
		}
		(*names)[(*n)++] = cctl_win_narrow(fd.cFileName);
	} while (FindNextFileW(h, &fd));
	FindClose(h);
	if (*n)
		qsort(*names, *n, sizeof(char *), cmp_names);
	return 0;
}

int cctl_os_read_file(struct cctl_ctx *ctx, const char *path,
		      struct cctl_buf *out)
{
	wchar_t *w = cctl_win_wpath(path);
	HANDLE h = CreateFileW(w, GENERIC_READ,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			       NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	char tmp[65536];
	DWORD got;
	int ret = 0;
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return cctl_win_error(ctx, GetLastError(), "open", path);
	for (;;) {
		if (!ReadFile(h, tmp, sizeof(tmp), &got, NULL)) {
			ret = cctl_win_error(ctx, GetLastError(), "read", path);
			break;
		}
		if (!got)
			break;
		cctl_buf_add(out, tmp, got);
	}
	CloseHandle(h);
	return ret;
}

const char *cctl_win_not_regular(HANDLE h)
{
	BY_HANDLE_FILE_INFORMATION fi;
	if (GetFileType(h) != FILE_TYPE_DISK)
		return "not a file on a disk (a pipe or a device)";
	if (!GetFileInformationByHandle(h, &fi))
		return "a file whose kind cannot be read";
	if (fi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
		return "a link (a reparse point), which cudnnctl never makes";
	if (fi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
		return "a folder";
	if (fi.nNumberOfLinks != 1)
		return "a file with other hard links";
	return NULL;
}

HANDLE cctl_win_open_own(struct cctl_ctx *ctx, const char *path, DWORD access,
			 DWORD share, DWORD disposition, const char *what)
{
	wchar_t *w = cctl_win_wpath(path);
	const char *why;
	HANDLE h = CreateFileW(w, access, share, NULL, disposition,
			       FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
			       NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE) {
		cctl_win_error(ctx, GetLastError(), what, path);
		return h;
	}
	if ((why = cctl_win_not_regular(h))) {
		CloseHandle(h);
		cctl__error(ctx, CCTL_EIO, "refusing to %s '%s': it is %s", what,
			    path, why);
		cctl__hint(ctx, "look at what it is and who made it, then remove "
				"it (del \"%s\"); cudnnctl makes a new one",
			   path);
		return INVALID_HANDLE_VALUE;
	}
	return h;
}

/* All of data to h, in chunks WriteFile takes; name is for the message. */
static int write_handle(struct cctl_ctx *ctx, HANDLE h, const void *data,
			size_t len, const char *name)
{
	const char *p = data;
	while (len) {
		DWORD chunk = len > (1u << 30) ? (1u << 30) : (DWORD)len, put;
		if (!WriteFile(h, p, chunk, &put, NULL))
			return cctl_win_error(ctx, GetLastError(), "write", name);
		p += put;
		len -= put;
	}
	return 0;
}

int cctl_os_write_file_atomic(struct cctl_ctx *ctx, const char *path,
			      const void *data, size_t len)
{
	char *lock = cctl_xstrfmt("%s.lock", path);
	wchar_t *wl = cctl_win_wpath(lock), *wp = cctl_win_wpath(path);
	HANDLE h;
	int ret = 0;

	/* whatever is at the temporary name goes (a link: itself, not its
	 * target), and the file is made anew */
	DeleteFileW(wl);
	h = cctl_win_open_own(ctx, lock, GENERIC_WRITE, 0, CREATE_NEW, "create");
	if (h == INVALID_HANDLE_VALUE) {
		ret = ctx ? ctx->code : CCTL_EIO;
		goto out;
	}
	ret = write_handle(ctx, h, data, len, lock);
	if (!ret && !FlushFileBuffers(h))
		ret = cctl_win_error(ctx, GetLastError(), "write", lock);
	CloseHandle(h);
	if (!ret && !MoveFileExW(wl, wp,
				 MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		ret = cctl_win_error(ctx, GetLastError(), "replace", path);
	if (ret)
		DeleteFileW(wl);
out:
	free(wl);
	free(wp);
	free(lock);
	return ret;
}

int cctl_os_append_file(struct cctl_ctx *ctx, const char *path,
			const void *data, size_t len)
{
	int ret;
	/* FILE_APPEND_DATA alone: every write lands at the end, whoever
	 * else appends */
	HANDLE h = cctl_win_open_own(ctx, path, FILE_APPEND_DATA | SYNCHRONIZE,
				     FILE_SHARE_READ | FILE_SHARE_WRITE |
					     FILE_SHARE_DELETE,
				     OPEN_ALWAYS, "append to");
	if (h == INVALID_HANDLE_VALUE)
		return ctx ? ctx->code : CCTL_EIO;
	ret = write_handle(ctx, h, data, len, path);
	if (!ret)
		FlushFileBuffers(h); /* on the disk when this returns */
	if (!CloseHandle(h) && !ret)
		ret = cctl_win_error(ctx, GetLastError(), "write", path);
	return ret;
}

int cctl_os_free_space(struct cctl_ctx *ctx, const char *path,
		       uint64_t *bytes)
{
	wchar_t *w = cctl_win_wpath(path);
	ULARGE_INTEGER avail;
	int ret = 0;
	if (!GetDiskFreeSpaceExW(w, &avail, NULL, NULL))
		ret = cctl_win_error(ctx, GetLastError(), "query free space of",
				     path);
	else
		*bytes = avail.QuadPart;
	free(w);
	return ret;
}

int cctl_os_lock(struct cctl_ctx *ctx, const char *path, const char *doing,
		 struct cctl_buf *holder, void **handle)
{
	struct cctl_buf me = CCTL_BUF_INIT;
	OVERLAPPED ov;
	HANDLE h;
	DWORD put;

	*handle = NULL;
	/* never through a link, a regular file of its own or refused: a
	 * lock file planted by another user must not have us write into
	 * its target */
	h = cctl_win_open_own(ctx, path, GENERIC_READ | GENERIC_WRITE,
			      FILE_SHARE_READ | FILE_SHARE_WRITE |
				      FILE_SHARE_DELETE,
			      OPEN_ALWAYS, "use the lock file");
	if (h == INVALID_HANDLE_VALUE)
		return ctx ? ctx->code : CCTL_EIO;
	memset(&ov, 0, sizeof(ov));
	if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0,
			1, 0, &ov)) {
		DWORD err = GetLastError();
		if (err == ERROR_LOCK_VIOLATION || err == ERROR_IO_PENDING) {
			/* the lock covers byte 0; the holder's text is after it */
			char held[256];
			DWORD got = 0;
			OVERLAPPED at;
			memset(&at, 0, sizeof(at));
			at.Offset = 1;
			if (!ReadFile(h, held, sizeof(held) - 1, &got, &at))
				got = 0;
			held[got] = '\0';
			CloseHandle(h);
			cctl__lock_holder(held, holder);
			cctl__error(ctx, CCTL_ELOCKED,
				    "install root is in use: '%s' is held by %s",
				    path, holder && holder->len ? holder->buf
								: "another cudnnctl");
			cctl__hint(ctx, "wait for the other cudnnctl to finish, "
					"then run the command again");
			return CCTL_ELOCKED;
		}
		CloseHandle(h);
		return cctl_win_error(ctx, err, "lock", path);
	}
	/* the pid and what it does go after the locked byte: informative */
	cctl_buf_addf(&me, "%lu\n%s\n", (unsigned long)GetCurrentProcessId(),
		      doing ? doing : "");
	SetFilePointer(h, 1, NULL, FILE_BEGIN);
	if (WriteFile(h, me.buf, (DWORD)me.len, &put, NULL))
		SetEndOfFile(h); /* nothing of a longer earlier text */
	cctl_buf_release(&me);
	*handle = h;
	return 0;
}

void cctl_os_unlock(void *handle)
{
	if (handle)
		CloseHandle((HANDLE)handle);
}

/* ----------------------------------------------------------- junctions */

#define POINTER_MAGIC "cudnnctl-link "

/* The REPARSE_DATA_BUFFER of a mount point (MS-FSCC 2.1.2.5), declared
 * here because mingw's headers keep it in the DDK. */
struct mount_point {
	DWORD tag;
	WORD data_len;
	WORD reserved;
	WORD subst_off, subst_len, print_off, print_len;
	WCHAR path[1];
};
#define MOUNT_POINT_HEADER offsetof(struct mount_point, path)

void *cctl_win_junction_data(const wchar_t *target, size_t *size)
{
	size_t tl, subst, print;
	struct mount_point *mp;

	/* "\\?\C:\x" is "C:\x"; anything but a drive-letter path is refused
	 * (a junction cannot point to a network share) */
	if (!wcsncmp(target, L"\\\\?\\", 4))
		target += 4;
	tl = wcslen(target);
	if (tl < 3 || !iswalpha(target[0]) || target[1] != L':' ||
	    target[2] != L'\\' || wcschr(target, L'/'))
		return NULL;
	subst = (4 + tl) * sizeof(WCHAR);
	print = tl * sizeof(WCHAR);
	*size = MOUNT_POINT_HEADER + subst + print + 2 * sizeof(WCHAR);
	if (*size > MAXIMUM_REPARSE_DATA_BUFFER_SIZE)
		return NULL;
	mp = cctl_xcalloc(1, *size);
	mp->tag = IO_REPARSE_TAG_MOUNT_POINT;
	/* the length counts what follows the first 8 bytes */
	mp->data_len = (WORD)(*size - 8);
	mp->subst_off = 0;
	mp->subst_len = (WORD)subst;
	mp->print_off = (WORD)(subst + sizeof(WCHAR)); /* after the NUL */
	mp->print_len = (WORD)print;
	memcpy(mp->path, L"\\??\\", 4 * sizeof(WCHAR));
	memcpy(mp->path + 4, target, tl * sizeof(WCHAR));
	memcpy(mp->path + 4 + tl + 1, target, tl * sizeof(WCHAR));
	return mp;
}

wchar_t *cctl_win_junction_parse(const void *data, size_t size)
{
	struct mount_point mp;
	const char *names;
	size_t off, len, room;
	wchar_t *t;

	if (size < MOUNT_POINT_HEADER)
		return NULL;
	memcpy(&mp, data, MOUNT_POINT_HEADER);
	if (mp.tag != IO_REPARSE_TAG_MOUNT_POINT ||
	    (size_t)mp.data_len + 8 > size || mp.data_len < 8)
		return NULL;
	names = (const char *)data + MOUNT_POINT_HEADER;
	room = (size_t)mp.data_len - 8;
	/* the print name, or where a tool left it empty, the substitute
	 * name less its "\??\" */
	off = mp.print_off;
	len = mp.print_len;
	if (!len) {
		off = mp.subst_off;
		len = mp.subst_len;
	}
	if (!len || off + len > room || (off | len) % sizeof(WCHAR))
		return NULL;
	t = cctl_xcalloc(len / sizeof(WCHAR) + 1, sizeof(WCHAR));
	memcpy(t, names + off, len);
	if (!mp.print_len && !wcsncmp(t, L"\\??\\", 4))
		memmove(t, t + 4, (wcslen(t + 4) + 1) * sizeof(WCHAR));
	return t;
}

static int make_junction(const wchar_t *link, const wchar_t *target)
{
	size_t size;
	void *data = cctl_win_junction_data(target, &size);
	DWORD ret_len;
	HANDLE h;
	BOOL ok;

	if (!data || !CreateDirectoryW(link, NULL)) {
		free(data);
		return -1;
	}
	h = CreateFileW(link, GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
			FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
			NULL);
	ok = h != INVALID_HANDLE_VALUE &&
	     DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, data, (DWORD)size, NULL,
			     0, &ret_len, NULL);
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	free(data);
	if (!ok ||
	    !(GetFileAttributesW(link) & FILE_ATTRIBUTE_REPARSE_POINT)) {
		RemoveDirectoryW(link);
		return -1;
	}
	return 0;
}

/* The target of a junction, or NULL. */
static char *junction_target(const wchar_t *link)
{
	union {
		struct mount_point mp; /* for the alignment */
		char raw[MAXIMUM_REPARSE_DATA_BUFFER_SIZE];
	} buf;
	DWORD got;
	HANDLE h = CreateFileW(link, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
			       OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS |
				       FILE_FLAG_OPEN_REPARSE_POINT,
			       NULL);
	wchar_t *t;
	char *s;
	BOOL ok;
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	ok = DeviceIoControl(h, FSCTL_GET_REPARSE_POINT, NULL, 0, &buf,
			     sizeof(buf), &got, NULL);
	CloseHandle(h);
	if (!ok || !(t = cctl_win_junction_parse(buf.raw, got)))
		return NULL;
	s = cctl_win_narrow(t);
	free(t);
	return s;
}

int cctl_os_link_dir(struct cctl_ctx *ctx, const char *link,
		     const char *target, int *emulated)
{
	char *dir = cctl_xstrdup(link), *slash, *abs_target, *tmp, *old;
	wchar_t *wt, *wtmp, *wlink, *wold, *full;
	DWORD n;
	int ret = 0;

	*emulated = 0;
	slash = strrchr(dir, '/');
	if (!slash || (strrchr(dir, '\\') && strrchr(dir, '\\') > slash))
		slash = strrchr(dir, '\\');
	if (slash)
		*slash = '\0';
	abs_target = cctl_path_join(dir, target, NULL);
	wt = cctl_win_wpath(abs_target);
	/* an absolute target: a junction's is resolved from the root */
	n = GetFullPathNameW(wt, 0, NULL, NULL);
	full = cctl_xcalloc(n ? n : 1, sizeof(wchar_t));
	if (!n || GetFullPathNameW(wt, n, full, NULL) >= n)
		full[0] = 0; /* no junction: the pointer file below */
	tmp = cctl_xstrfmt("%s.new-%lu", link, (unsigned long)GetCurrentProcessId());
	old = cctl_xstrfmt("%s.old-%lu", link, (unsigned long)GetCurrentProcessId());
	wtmp = cctl_win_wpath(tmp);
	wlink = cctl_win_wpath(link);
	wold = cctl_win_wpath(old);
	rmtree_w(ctx, wtmp, tmp);

	if (make_junction(wtmp, full) != 0) {
		/* no junctions here (FAT, network drive, Wine): a pointer file */
		struct cctl_buf text = CCTL_BUF_INIT;
		DWORD attr = GetFileAttributesW(wlink);
		*emulated = 1;
		cctl_buf_addf(&text, POINTER_MAGIC "%s\n", target);
		if (attr != INVALID_FILE_ATTRIBUTES &&
		    (attr & FILE_ATTRIBUTE_DIRECTORY))
			remove_one(ctx, wlink, attr, link);
		ret = cctl_os_write_file_atomic(ctx, link, text.buf, text.len);
		cctl_buf_release(&text);
		goto out;
	}
	/* swap: the old link aside, the new one in, the old one gone */
	if (GetFileAttributesW(wlink) != INVALID_FILE_ATTRIBUTES) {
		DWORD attr = GetFileAttributesW(wlink);
		if (!(attr & FILE_ATTRIBUTE_DIRECTORY)) {
			/* a pointer file from an earlier emulated link */
			DeleteFileW(wlink);
		} else if (!MoveFileExW(wlink, wold, 0)) {
			ret = cctl_win_error(ctx, GetLastError(), "replace link", link);
			RemoveDirectoryW(wtmp);
			goto out;
		}
	}
	if (!MoveFileExW(wtmp, wlink, 0)) {
		ret = cctl_win_error(ctx, GetLastError(), "replace link", link);
		MoveFileExW(wold, wlink, 0);
		RemoveDirectoryW(wtmp);
		goto out;
	}
	RemoveDirectoryW(wold);
out:
	free(dir);
	free(abs_target);
	free(wt);
	free(full);
	free(tmp);
	free(old);
	free(wtmp);
	free(wlink);
	free(wold);
	return ret;
}

int cctl_os_readlink(struct cctl_ctx *ctx, const char *link,
		     struct cctl_buf *out)
{
	wchar_t *w = cctl_win_wpath(link);
	DWORD attr = GetFileAttributesW(w);
	int ret = 0;
	if (attr == INVALID_FILE_ATTRIBUTES) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND, "'%s' does not exist", link);
	} else if (attr & FILE_ATTRIBUTE_REPARSE_POINT) {
		char *t = junction_target(w);
		if (t)
			cctl_buf_adds(out, t);
		else
			ret = cctl__error(ctx, CCTL_ENOTFOUND,
					  "'%s' is not a junction", link);
		free(t);
	} else if (!(attr & FILE_ATTRIBUTE_DIRECTORY)) {
		struct cctl_buf text = CCTL_BUF_INIT;
		size_t m = strlen(POINTER_MAGIC);
		if (!cctl_os_read_file(ctx, link, &text) &&
		    !strncmp(text.buf, POINTER_MAGIC, m)) {
			cctl_buf_add(out, text.buf + m,
				     strcspn(text.buf + m, "\r\n"));
		} else {
			ret = cctl__error(ctx, CCTL_ENOTFOUND, "'%s' is not a link",
					  link);
		}
		cctl_buf_release(&text);
	} else {
		ret = cctl__error(ctx, CCTL_ENOTFOUND, "'%s' is not a link", link);
	}
	free(w);
	return ret;
}


/*
 * The OS layer (os.h) for Windows: UTF-8 at the interface, UTF-16 at the
 * Windows API.  This file: strings, the environment, paths, descriptors,
 * threads, time.  Running programs is proc-win.c's; files, folders, locks
 * and junctions fs-win.c's; file DACLs acl-win.c's; the registry
 * env-win.c's; DLLs loader-win.c's; images image-win.c's; downloads
 * http-win.c's: together the only code that includes <windows.h>.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <winioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <share.h>
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

/* ------------------------------------------------------------ strings */

wchar_t *cctl_win_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
	wchar_t *w = cctl_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(wchar_t));
	if (n <= 0) {
		w[0] = 0;
		return w;
	}
	MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
	return w;
}

wchar_t *cctl_win_wpath(const char *s)
{
	wchar_t *w = cctl_win_wide(s);
	for (wchar_t *p = w; *p; p++)
		if (*p == L'/')
			*p = L'\\';
	return w;
}

char *cctl_win_narrow(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	char *s = cctl_xmalloc((size_t)(n > 0 ? n : 1));
	if (n <= 0) {
		s[0] = 0;
		return s;
	}
	WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
	return s;
}

void cctl_win_message(DWORD err, char *out, size_t n)
{
	wchar_t buf[512];
	DWORD len = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM |
					   FORMAT_MESSAGE_IGNORE_INSERTS,
				   NULL, err, 0, buf, 512, NULL);
	char *s;
	while (len && (buf[len - 1] == L'\n' || buf[len - 1] == L'\r' ||
		       buf[len - 1] == L'.' || buf[len - 1] == L' '))
		buf[--len] = 0;
	if (!len) {
		snprintf(out, n, "Windows error %lu", (unsigned long)err);
		return;
	}
	s = cctl_win_narrow(buf);
	snprintf(out, n, "%s (%lu)", s, (unsigned long)err);
	free(s);
}

int cctl_win_error(struct cctl_ctx *ctx, DWORD err, const char *what,
		   const char *path)
{
	char msg[600];
	cctl_win_message(err, msg, sizeof(msg));
	return cctl__os_error(ctx,
			   err == ERROR_DISK_FULL || err == ERROR_HANDLE_DISK_FULL
				   ? CCTL_ENOSPACE
				   : CCTL_EIO,
			   (int)err, "cannot %s '%s': %s", what, path, msg);
}

/* Values handed out by cctl_os_getenv stay valid for the process. */
struct env_cache {
	char *name;
	char *value;
	struct env_cache *next;
};
static struct env_cache *env_cache;

const char *cctl_os_getenv(const char *name)
{
	wchar_t *wn = cctl_win_wide(name), *wv;
	DWORD n = GetEnvironmentVariableW(wn, NULL, 0);
	struct env_cache *c;
	char *v;
	if (!n) {
		free(wn);
		return NULL;
	}
	wv = cctl_xmalloc(n * sizeof(wchar_t));
	GetEnvironmentVariableW(wn, wv, n);
	v = cctl_win_narrow(wv);
	free(wn);
	free(wv);
	if (!*v) {
		free(v);
		return NULL;
	}
	for (c = env_cache; c; c = c->next)
		if (!strcmp(c->name, name) && !strcmp(c->value, v)) {
			free(v);
			return c->value;
		}
	c = cctl_xmalloc(sizeof(*c));
	c->name = cctl_xstrdup(name);
	c->value = v;
	c->next = env_cache;
	env_cache = c;
	return v;
}

int cctl_os_home(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	const char *home = cctl_os_getenv("USERPROFILE");
	if (!home)
		return cctl__error(ctx, CCTL_EFAIL,
				   "cannot find the home folder: USERPROFILE is "
				   "not set");
	cctl_buf_adds(out, home);
	return 0;
}

int cctl_os_default_root(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	const char *drive = cctl_os_getenv("SystemDrive");
	(void)ctx;
	cctl_buf_addf(out, "%s\\cudnn", drive ? drive : "C:");
	return 0;
}

int cctl_os_is_admin(void)
{
	HANDLE token;
	TOKEN_ELEVATION elev;
	DWORD got;
	int admin = 0;
	if (OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) {
		if (GetTokenInformation(token, TokenElevation, &elev, sizeof(elev),
					&got))
			admin = elev.TokenIsElevated != 0;
		CloseHandle(token);
	}
	return admin;
}

int cctl_os_is_absolute(const char *path)
{
	return (((path[0] >= 'A' && path[0] <= 'Z') ||
		 (path[0] >= 'a' && path[0] <= 'z')) &&
		path[1] == ':' && (path[2] == '\\' || path[2] == '/')) ||
	       ((path[0] == '\\' || path[0] == '/') &&
		(path[1] == '\\' || path[1] == '/'));
}

int cctl_os_absolute(struct cctl_ctx *ctx, const char *path,
		     struct cctl_buf *out)
{
	wchar_t *w = cctl_win_wpath(path), full[MAX_PATH * 4];
	char *s;
	DWORD n = GetFullPathNameW(w, MAX_PATH * 4, full, NULL);
	free(w);
	if (!n || n >= MAX_PATH * 4)
		return cctl_win_error(ctx, GetLastError(), "find the full path of",
				      path);
	s = cctl_win_narrow(full);
	cctl_buf_adds(out, s);
	free(s);
	while (out->len > 3 && (out->buf[out->len - 1] == '\\' ||
				out->buf[out->len - 1] == '/'))
		out->buf[--out->len] = '\0';
	return 0;
}

int cctl_os_realpath(struct cctl_ctx *ctx, const char *path,
		     struct cctl_buf *out)
{
	wchar_t *w = cctl_win_wpath(path), full[MAX_PATH * 4];
	HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE |
					     FILE_SHARE_DELETE,
			       NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS,
			       NULL);
	DWORD n;
	char *s;
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return cctl_win_error(ctx, GetLastError(), "resolve", path);
	n = GetFinalPathNameByHandleW(h, full, MAX_PATH * 4, FILE_NAME_NORMALIZED);
	CloseHandle(h);
	if (!n || n >= MAX_PATH * 4)
		return cctl_win_error(ctx, GetLastError(), "resolve", path);
	s = cctl_win_narrow(wcsncmp(full, L"\\\\?\\", 4) ? full : full + 4);
	cctl_buf_adds(out, s);
	free(s);
	return 0;
}

/* ------------------------------------------------------- descriptors */

int cctl_os_open_read(struct cctl_ctx *ctx, const char *path, int *fd)
{
	wchar_t *w = cctl_win_wpath(path);
	struct _stat64 st;
	*fd = _wopen(w, _O_RDONLY | _O_BINARY | _O_NOINHERIT);
	free(w);
	if (*fd < 0) {
		int err = errno;
		return cctl__os_error(ctx, CCTL_EIO, err, "cannot open '%s': %s",
				      path, strerror(err));
	}
	if (_fstat64(*fd, &st) == 0 && !(st.st_mode & _S_IFREG)) {
		_close(*fd);
		*fd = -1;
		return cctl__error(ctx, CCTL_EIO, "cannot read '%s': not a file",
				   path);
	}
	return 0;
}

int cctl_os_prealloc(void)
{
	return 1;
}

int cctl_os_create_sized(struct cctl_ctx *ctx, const char *path,
			 uint64_t size, int *fd)
{
	wchar_t *w = cctl_win_wpath(path);
	HANDLE h = CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_NEW,
			       FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	*fd = -1;
	if (h == INVALID_HANDLE_VALUE)
		return cctl_win_error(ctx, GetLastError(), "create", path);
	if (size) {
		/* the clusters reserved now, freed at close where unused */
		FILE_ALLOCATION_INFO ai;
		ai.AllocationSize.QuadPart = (LONGLONG)size;
		SetFileInformationByHandle(h, FileAllocationInfo, &ai, sizeof(ai));
	}
	if ((*fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_BINARY)) < 0) {
		CloseHandle(h);
		return cctl__error(ctx, CCTL_EIO, "cannot create '%s': out of "
						  "descriptors", path);
	}
	return 0;
}

int cctl_os_close_timed(struct cctl_ctx *ctx, int fd, const char *path,
			int64_t sec, long nsec)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	/* 100 ns since 1601 */
	ULONGLONG t = (ULONGLONG)(sec * 10000000LL + nsec / 100) + 116444736000000000ULL;
	FILETIME ft;
	DWORD err = 0;
	ft.dwLowDateTime = (DWORD)t;
	ft.dwHighDateTime = (DWORD)(t >> 32);
	if (!SetFileTime(h, NULL, &ft, &ft))
		err = GetLastError();
	if (_close(fd) && !err)
		err = ERROR_WRITE_FAULT;
	return err ? cctl_win_error(ctx, err, "finish", path) : 0;
}

int cctl_os_open_write(struct cctl_ctx *ctx, const char *path, int append,
		       int *fd)
{
	HANDLE h;
	*fd = -1;
	if (!append) {
		/* a new file in place of whatever was there (a link goes,
		 * its target untouched) */
		wchar_t *w = cctl_win_wpath(path);
		DeleteFileW(w);
		free(w);
	}
	h = cctl_win_open_own(ctx, path, GENERIC_WRITE, FILE_SHARE_READ,
			      append ? OPEN_ALWAYS : CREATE_NEW, "write");
	if (h == INVALID_HANDLE_VALUE)
		return ctx ? ctx->code : CCTL_EIO;
	if ((append && SetFilePointer(h, 0, NULL, FILE_END) ==
			       INVALID_SET_FILE_POINTER &&
	     GetLastError() != NO_ERROR) ||
	    (*fd = _open_osfhandle((intptr_t)h,
				   _O_WRONLY | _O_BINARY |
					   (append ? _O_APPEND : 0))) < 0) {
		CloseHandle(h);
		*fd = -1;
		return cctl__error(ctx, CCTL_EIO, "cannot write '%s'", path);
	}
	return 0;
}

void cctl_os_kill_point(void)
{
	static volatile LONG calls;
	static long at = -1;
	if (at < 0) {
		const char *env = cctl_os_getenv("CUDNNCTL_TEST_KILL_AT");
		at = env ? atol(env) : 0;
	}
	/* extraction workers reach kill points from several threads */
	if (at > 0 && InterlockedIncrement(&calls) == at)
		TerminateProcess(GetCurrentProcess(), 137);
}

void cctl_os_sleep_ms(unsigned ms)
{
	Sleep(ms);
}

int cctl_os_cache_dir(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	const char *local = cctl_os_getenv("LOCALAPPDATA");
	if (!local || !*local)
		return cctl__error(ctx, CCTL_EFAIL,
				   "cannot find the cache folder: LOCALAPPDATA is "
				   "not set");
	cctl_buf_adds(out, local);
	cctl_buf_addpath(out, "cudnnctl");
	cctl_buf_addpath(out, "cache");
	return 0;
}

int cctl_os_open_temp(struct cctl_ctx *ctx, const char *dir, int *fd)
{
	static long counter;
	DWORD err = 0;
	*fd = -1;
	for (int tries = 0; tries < 100; tries++) {
		char *path = cctl_xstrfmt("%s\\.tmp-%lu-%ld", dir,
					  (unsigned long)GetCurrentProcessId(),
					  ++counter);
		wchar_t *w = cctl_win_wpath(path);
		/* shared with nobody, gone when closed or when the process
		 * ends */
		HANDLE h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, 0, NULL,
				       CREATE_NEW,
				       FILE_ATTRIBUTE_TEMPORARY |
					       FILE_FLAG_DELETE_ON_CLOSE,
				       NULL);
		err = GetLastError();
		free(w);
		free(path);
		if (h != INVALID_HANDLE_VALUE) {
			*fd = _open_osfhandle((intptr_t)h, _O_RDWR | _O_BINARY);
			if (*fd < 0) {
				err = ERROR_TOO_MANY_OPEN_FILES;
				CloseHandle(h);
			}
			break;
		}
		if (err != ERROR_FILE_EXISTS)
			break;
	}
	if (*fd < 0)
		return cctl_win_error(ctx, err, "create a file in", dir);
	return 0;
}

/* A C runtime call on a descriptor failed: errno says why. */
static int crt_error(struct cctl_ctx *ctx, int err, const char *what,
		     const char *name)
{
	return cctl__os_error(ctx, err == ENOSPC ? CCTL_ENOSPACE : CCTL_EIO, err,
			      "cannot %s '%s': %s", what, name, strerror(err));
}

int cctl_os_write_all(struct cctl_ctx *ctx, int fd, const char *name,
		      const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		unsigned chunk = len > 0x40000000u ? 0x40000000u : (unsigned)len;
		int n = _write(fd, p, chunk);
		if (n <= 0)
			return crt_error(ctx, n ? errno : EIO, "write", name);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

struct cctl_os_sync {
	SRWLOCK mu;
	CONDITION_VARIABLE cv;
};

struct cctl_os_sync *cctl_os_sync_new(void)
{
	struct cctl_os_sync *s = cctl_xmalloc(sizeof(*s));
	InitializeSRWLock(&s->mu);
	InitializeConditionVariable(&s->cv);
	return s;
}

void cctl_os_sync_free(struct cctl_os_sync *s)
{
	free(s); /* SRW locks and condition variables need no clean-up */
}

void cctl_os_sync_lock(struct cctl_os_sync *s)
{
	AcquireSRWLockExclusive(&s->mu);
}

void cctl_os_sync_unlock(struct cctl_os_sync *s)
{
	ReleaseSRWLockExclusive(&s->mu);
}

void cctl_os_sync_wait(struct cctl_os_sync *s)
{
	SleepConditionVariableSRW(&s->cv, &s->mu, INFINITE, 0);
}

void cctl_os_sync_broadcast(struct cctl_os_sync *s)
{
	WakeAllConditionVariable(&s->cv);
}

struct cctl_os_thread {
	HANDLE h;
	void (*fn)(void *);
	void *arg;
};

static DWORD WINAPI thread_main(LPVOID p)
{
	struct cctl_os_thread *t = p;
	t->fn(t->arg);
	return 0;
}

struct cctl_os_thread *cctl_os_thread_start(void (*fn)(void *), void *arg)
{
	struct cctl_os_thread *t = cctl_xmalloc(sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	t->h = CreateThread(NULL, 0, thread_main, t, 0, NULL);
	if (!t->h) {
		free(t);
		return NULL;
	}
	return t;
}

void cctl_os_thread_join(struct cctl_os_thread *t)
{
	if (!t)
		return;
	WaitForSingleObject(t->h, INFINITE);
	CloseHandle(t->h);
	free(t);
}

int cctl_os_read(struct cctl_ctx *ctx, int fd, const char *name, void *buf,
		 size_t len, size_t *got)
{
	int n = _read(fd, buf, len > 0x40000000u ? 0x40000000u : (unsigned)len);
	*got = n > 0 ? (size_t)n : 0;
	return n < 0 ? crt_error(ctx, errno, "read", name) : 0;
}

int cctl_os_copy_fast(struct cctl_ctx *ctx, int in, const char *in_name, int out,
		      const char *out_name, uint64_t len, uint64_t *done)
{
	/* no copy within the kernel between two descriptors: the caller's */
	(void)ctx, (void)in, (void)in_name, (void)out, (void)out_name, (void)len;
	*done = 0;
	return 0;
}

int cctl_os_truncate(struct cctl_ctx *ctx, int fd, const char *name,
		     uint64_t size)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	LARGE_INTEGER at;
	cctl_os_kill_point();
	at.QuadPart = (LONGLONG)size;
	if (!SetFilePointerEx(h, at, NULL, FILE_BEGIN) || !SetEndOfFile(h))
		return cctl_win_error(ctx, GetLastError(), "truncate", name);
	return 0;
}

int cctl_os_pread(struct cctl_ctx *ctx, int fd, const char *name, void *buf,
		  size_t len, uint64_t off, size_t *got)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	OVERLAPPED ov;
	DWORD n = 0;
	memset(&ov, 0, sizeof(ov));
	ov.Offset = (DWORD)off;
	ov.OffsetHigh = (DWORD)(off >> 32);
	*got = 0;
	if (!ReadFile(h, buf, len > 0x40000000u ? 0x40000000u : (DWORD)len, &n,
		      &ov)) {
		DWORD err = GetLastError();
		if (err != ERROR_HANDLE_EOF)
			return cctl_win_error(ctx, err, "read", name);
	}
	*got = n;
	return 0;
}

/* A second handle on the file that shares reading only: while it is open
 * no one can open the file for writing, rename or delete it, and it could
 * not be opened if anyone had it open for writing.  It must be the file of
 * fd, not one put at its path since. */
void *cctl_os_guard_begin(int fd, const char *path)
{
	HANDLE mine = fd >= 0 ? (HANDLE)_get_osfhandle(fd) : INVALID_HANDLE_VALUE;
	BY_HANDLE_FILE_INFORMATION a, b;
	wchar_t *w;
	HANDLE h;
	if (mine == INVALID_HANDLE_VALUE || !path)
		return NULL;
	w = cctl_win_wpath(path);
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	if (!GetFileInformationByHandle(mine, &a) ||
	    !GetFileInformationByHandle(h, &b) ||
	    a.dwVolumeSerialNumber != b.dwVolumeSerialNumber ||
	    a.nFileIndexHigh != b.nFileIndexHigh ||
	    a.nFileIndexLow != b.nFileIndexLow) {
		CloseHandle(h);
		return NULL;
	}
	return h;
}

int cctl_os_guard_held(void *guard)
{
	return guard != NULL; /* writers are refused while it is open */
}

void cctl_os_guard_end(void *guard)
{
	if (guard)
		CloseHandle(guard);
}

/* The product name and release from the registry, the build from
 * RtlGetVersion (GetVersionEx answers what the manifest claims). */
void cctl_os_describe(struct cctl_buf *out)
{
	static const wchar_t key[] = L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion";
	static const wchar_t *names[] = { L"ProductName", L"DisplayVersion" };
	typedef LONG(WINAPI * rtl_fn)(OSVERSIONINFOW *);
	HMODULE nt = GetModuleHandleW(L"ntdll.dll");
	rtl_fn rtl = nt ? (rtl_fn)(void (*)(void))GetProcAddress(nt, "RtlGetVersion") : NULL;
	OSVERSIONINFOW vi;
	SYSTEM_INFO si;
	int any = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		wchar_t buf[128];
		DWORD bytes = sizeof(buf);
		if (RegGetValueW(HKEY_LOCAL_MACHINE, key, names[i], RRF_RT_REG_SZ, NULL,
				 buf, &bytes) == ERROR_SUCCESS) {
			char *s = cctl_win_narrow(buf);
			cctl_buf_addf(out, "%s%s", any ? " " : "", s ? s : "");
			free(s);
			any = 1;
		}
	}
	if (!any)
		cctl_buf_adds(out, "Windows");
	memset(&vi, 0, sizeof(vi));
	vi.dwOSVersionInfoSize = sizeof(vi);
	if (rtl && rtl(&vi) == 0)
		cctl_buf_addf(out, " (%lu.%lu, build %lu)", (unsigned long)vi.dwMajorVersion,
			      (unsigned long)vi.dwMinorVersion,
			      (unsigned long)vi.dwBuildNumber);
	GetNativeSystemInfo(&si);
	cctl_buf_adds(out, si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64 ? "; x64"
			   : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "; arm64"
										: "; other");
}

unsigned cctl_os_ncpu(void)
{
	/* 0 when it fails: Wine 10 without /sys (a chroot) says 0 where
	 * GetSystemInfo still counts the processors */
	DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	if (!n) {
		SYSTEM_INFO si;
		GetSystemInfo(&si);
		n = si.dwNumberOfProcessors;
	}
	return n ? (unsigned)n : 1;
}

int cctl_os_seek(struct cctl_ctx *ctx, int fd, const char *name,
		 int64_t offset, int whence, int64_t *pos)
{
	__int64 p = _lseeki64(fd, offset, whence);
	if (p < 0)
		return crt_error(ctx, errno, "seek in", name);
	if (pos)
		*pos = (int64_t)p;
	return 0;
}

void cctl_os_close(int fd)
{
	if (fd >= 0)
		_close(fd);
}

void *cctl_os_utf8_locale_enter(void)
{
	return NULL; /* libarchive keeps Windows names in UTF-16 */
}

void cctl_os_utf8_locale_leave(void *state)
{
	(void)state;
}

void cctl_os_native_path(char *path)
{
	for (; *path; path++)
		if (*path == '/')
			*path = '\\';
}

void cctl_os_unblock(const char *path)
{
	char *stream = cctl_xstrfmt("%s:Zone.Identifier", path);
	wchar_t *w = cctl_win_wpath(stream);
	DeleteFileW(w); /* absent is the usual case */
	free(w);
	free(stream);
}


long cctl_os_pid(void)
{
	return (long)GetCurrentProcessId();
}

void cctl_os_utc_now(char out[32])
{
	SYSTEMTIME t;
	GetSystemTime(&t);
	snprintf(out, 32, "%04u-%02u-%02uT%02u:%02u:%02uZ", t.wYear, t.wMonth,
		 t.wDay, t.wHour, t.wMinute, t.wSecond);
}

double cctl_os_now_ms(void)
{
	static LARGE_INTEGER freq;
	LARGE_INTEGER now;
	if (!freq.QuadPart)
		QueryPerformanceFrequency(&freq);
	QueryPerformanceCounter(&now);
	return (double)now.QuadPart * 1000.0 / (double)freq.QuadPart;
}

/* IsWow64Process2 (Windows 10 1709) gives the machine's own architecture
 * even to an emulated process: an x64 cudnnctl.exe on an arm64 PC learns
 * it runs there.  Resolved at run time: older Windows and Wine 8 lack
 * it, and then the build's platform is the answer. */
typedef BOOL(WINAPI *wow64_2_fn)(HANDLE, USHORT *, USHORT *);

const char *cctl_os_native_platform(void)
{
	HMODULE k = GetModuleHandleW(L"kernel32.dll");
	wow64_2_fn f = NULL;
	USHORT process = 0, native = 0;
	if (k) {
		FARPROC p = GetProcAddress(k, "IsWow64Process2");
		memcpy(&f, &p, sizeof(f));
	}
	if (!f || !f(GetCurrentProcess(), &process, &native))
		return CCTL_OS_PLATFORM;
	switch (native) {
	case 0xAA64: /* IMAGE_FILE_MACHINE_ARM64 */
		return "windows-arm64";
	case 0x8664: /* IMAGE_FILE_MACHINE_AMD64 */
		return "windows-x86_64";
	default:
		return CCTL_OS_PLATFORM;
	}
}

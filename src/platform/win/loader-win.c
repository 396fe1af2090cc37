/*
 * Shared libraries (os.h) on Windows: the DLL search order of a new
 * process, loading with LoadLibraryExW by full path, and the process's
 * own set-up (DLL search locked down, error pop-ups off, the console's
 * code page).  Reading a DLL file is image-win.c's.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <tlhelp32.h>

#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../core/internal.h"
#include "../os.h"
#include "win.h"


/* --------------------------------------------------------------- search */

/* A DLL a new process of this machine loads: a 64-bit one of this
 * process's architecture or of the machine's (an arm64 PC runs arm64
 * processes, and x64 ones under emulation). */
static int loadable(const char *path)
{
	struct cctl_lib_info info;
	unsigned want = cctl_platform_host()->pe_machine;
	int ok;
	if (cctl_os_lib_info(NULL, path, &info))
		return 0;
	ok = info.loadable || (want && info.machine == want);
	cctl_lib_info_release(&info);
	return ok;
}

static void add_hit(struct cctl_lib_hits *h, const char *dir, const char *name,
		    const char *origin)
{
	char *path = cctl_xstrfmt("%s\\%s", dir, name);
	wchar_t *w = cctl_win_wpath(path), full[MAX_PATH * 4];
	char *canon;
	DWORD attr = GetFileAttributesW(w);
	if (attr == INVALID_FILE_ATTRIBUTES || (attr & FILE_ATTRIBUTE_DIRECTORY) ||
	    !loadable(path))
		goto out;
	if (!GetFullPathNameW(w, MAX_PATH * 4, full, NULL))
		goto out;
	canon = cctl_win_narrow(full);
	for (size_t i = 0; i < h->n; i++)
		if (!_stricmp(h->v[i].path, canon)) {
			free(canon);
			goto out;
		}
	h->v = cctl_xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
	h->v[h->n].path = canon;
	h->v[h->n].origin = cctl_xstrdup(origin);
	h->n++;
out:
	free(path);
	free(w);
}

static void add_list(struct cctl_lib_hits *h, const char *list,
		     const char *name, const char *origin)
{
	while (list && *list) {
		size_t n = strcspn(list, ";");
		if (n) {
			char *dir = cctl_xstrfmt("%.*s", (int)n, list);
			/* as the loader does: a quoted entry names no folder
			 * (cmd.exe strips the quotes when it looks for a
			 * program, LoadLibrary does not; verify warns) */
			if (dir[0] != '"')
				add_hit(h, dir, name, origin);
			free(dir);
		}
		list += n + (list[n] ? 1 : 0);
	}
}

static char *wdir_narrow(UINT (WINAPI *get)(LPWSTR, UINT))
{
	wchar_t buf[MAX_PATH * 2];
	UINT n = get(buf, MAX_PATH * 2);
	return n ? cctl_win_narrow(buf) : NULL;
}

int cctl_os_lib_search(struct cctl_ctx *ctx, const char *name,
		       const char *lib_path, const char *const *runpath,
		       struct cctl_lib_hits *out)
{
	wchar_t exe[MAX_PATH * 2], cwd[MAX_PATH * 2];
	char *s;

	memset(out, 0, sizeof(*out));
	if (strpbrk(name, "/\\"))
		return cctl__error(ctx, CCTL_EFAIL, "'%s' is a path, not a name",
				   name);
	for (size_t i = 0; runpath && runpath[i]; i++)
		add_hit(out, runpath[i], name, "DLL folder");
	/* the standard search order of a desktop application */
	if (GetModuleFileNameW(NULL, exe, MAX_PATH * 2)) {
		wchar_t *slash = wcsrchr(exe, L'\\');
		if (slash)
			*slash = 0;
		s = cctl_win_narrow(exe);
		add_hit(out, s, name, "application folder");
		free(s);
	}
	if ((s = wdir_narrow(GetSystemDirectoryW))) {
		add_hit(out, s, name, "System32");
		free(s);
	}
	if ((s = wdir_narrow(GetWindowsDirectoryW))) {
		add_hit(out, s, name, "Windows folder");
		free(s);
	}
	if (GetCurrentDirectoryW(MAX_PATH * 2, cwd)) {
		s = cctl_win_narrow(cwd);
		add_hit(out, s, name, "current folder");
		free(s);
	}
	if (lib_path) {
		add_list(out, lib_path, name, "PATH");
	} else {
		/* what a new process gets: machine PATH, then user PATH */
		struct cctl_buf m = CCTL_BUF_INIT, u = CCTL_BUF_INIT;
		cctl_os_session_path_parts(ctx, &m, &u);
		add_list(out, m.buf, name, "machine PATH");
		add_list(out, u.buf, name, "user PATH");
		cctl_buf_release(&m);
		cctl_buf_release(&u);
	}
	return 0;
}

void cctl_lib_hits_release(struct cctl_lib_hits *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].path);
		free(h->v[i].origin);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* -------------------------------------------------------------- loading */

int cctl_os_dl_open(struct cctl_ctx *ctx, const char *path, void **handle)
{
	wchar_t *w = cctl_win_wpath(path);
	/* by full path, dependencies next to the DLL then the system's; PATH
	 * and the current folder are not searched */
	DWORD flags = cctl_os_is_absolute(path)
			      ? LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
					LOAD_LIBRARY_SEARCH_DEFAULT_DIRS
			      : LOAD_LIBRARY_SEARCH_DEFAULT_DIRS;
	*handle = LoadLibraryExW(w, NULL, flags);
	free(w);
	if (!*handle) {
		char msg[600];
		cctl_win_message(GetLastError(), msg, sizeof(msg));
		return cctl__error(ctx, CCTL_EFAIL, "cannot load '%s': %s", path,
				   msg);
	}
	return 0;
}

void *cctl_os_dl_sym(void *handle, const char *name)
{
	FARPROC f = GetProcAddress((HMODULE)handle, name);
	void *p;
	memcpy(&p, &f, sizeof(p));
	return p;
}

int cctl_os_loaded_libraries(struct cctl_ctx *ctx, char ***paths, size_t *n)
{
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, 0);
	MODULEENTRY32W me;
	*paths = NULL;
	*n = 0;
	if (snap == INVALID_HANDLE_VALUE)
		return cctl_win_error(ctx, GetLastError(), "list", "the loaded DLLs");
	me.dwSize = sizeof(me);
	for (BOOL ok = Module32FirstW(snap, &me); ok; ok = Module32NextW(snap, &me)) {
		*paths = cctl_xrealloc(*paths, (*n + 1) * sizeof(**paths));
		(*paths)[(*n)++] = cctl_win_narrow(me.szExePath);
	}
	CloseHandle(snap);
	return 0;
}

int cctl_os_dl_path(struct cctl_ctx *ctx, void *handle, struct cctl_buf *out)
{
	wchar_t buf[MAX_PATH * 4];
	char *s;
	DWORD n = GetModuleFileNameW((HMODULE)handle, buf, MAX_PATH * 4);
	if (!n || n >= MAX_PATH * 4)
		return cctl_win_error(ctx, GetLastError(), "name", "a loaded DLL");
	s = cctl_win_narrow(buf);
	cctl_buf_adds(out, s);
	free(s);
	return 0;
}

static UINT console_cp; /* the console's code page before, if changed */
static volatile LONG interrupted, finished;

/* Ctrl+C, Ctrl+Break: the work stops and cleans up; a second one ends the
 * process at once.  Closing the window, logging off, shutting down: the
 * process ends when this returns, so it waits (a few seconds at most)
 * for the work to clean up.  The console's code page goes back either
 * way. */
static BOOL WINAPI on_console_event(DWORD event)
{
	if (InterlockedExchange(&interrupted, 1)) {
		if (console_cp)
			SetConsoleOutputCP(console_cp);
		cctl_os_exit(130);
	}
	if (event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT)
		return TRUE;
	for (int i = 0; i < 40 && !finished; i++)
		Sleep(100);
	if (console_cp)
		SetConsoleOutputCP(console_cp);
	return TRUE;
}

int cctl_os_interrupted(void)
{
	return interrupted != 0;
}

void cctl_os_raise_interrupt(void)
{
	on_console_event(CTRL_C_EVENT);
}

static UINT initial_error_mode;

/* Ctrl+C and Ctrl+Break while a child of cudnnctl exec runs: its to act
 * on (it gets them too); closing the console ends cudnnctl, and the job
 * object the child with it. */
static BOOL WINAPI leave_to_child(DWORD event)
{
	return event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT;
}

void cctl_win_console_to_child(void)
{
	cctl_os_process_done();
	SetConsoleCtrlHandler(on_console_event, FALSE);
	SetConsoleCtrlHandler(leave_to_child, TRUE);
	SetErrorMode(initial_error_mode); /* children inherit it */
}

void cctl_os_process_init(void)
{
	UINT cp = GetConsoleOutputCP(); /* 0: no console */
	/* no error pop-ups for a DLL that fails to load; cudnnctl's own DLL
	 * search skips the current folder and PATH */
	initial_error_mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
	SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
	/* cudnnctl writes UTF-8; the console belongs to the user's shell,
	 * so its code page is put back by cctl_os_process_done */
	if (cp && cp != CP_UTF8 && SetConsoleOutputCP(CP_UTF8))
		console_cp = cp;
	SetConsoleCtrlHandler(on_console_event, TRUE);
}

/* The console modes cctl_os_terminal changed, to put back: stdout's and
 * stderr's. */
static HANDLE vt_handle[2];
static DWORD vt_mode[2];

int cctl_os_isatty(int fd)
{
	HANDLE h = fd >= 0 ? (HANDLE)_get_osfhandle(fd) : INVALID_HANDLE_VALUE;
	DWORD mode;
	/* _isatty says yes to NUL and every character device: only a
	 * console has a mode */
	return h != INVALID_HANDLE_VALUE && GetConsoleMode(h, &mode);
}

int cctl_os_terminal(int fd)
{
	HANDLE h = fd >= 0 ? (HANDLE)_get_osfhandle(fd) : INVALID_HANDLE_VALUE;
	DWORD mode;
	if (h == INVALID_HANDLE_VALUE || !GetConsoleMode(h, &mode))
		return 0;
	if (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING)
		return 2;
	/* older consoles (before Windows 10 1511) refuse it: plain \r
	 * redraws then, no escapes */
	if (!SetConsoleMode(h, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING))
		return 1;
	if ((fd == 1 || fd == 2) && !vt_handle[fd - 1]) {
		vt_handle[fd - 1] = h;
		vt_mode[fd - 1] = mode;
	}
	return 2;
}

_Noreturn void cctl_os_exit(int status)
{
	TerminateProcess(GetCurrentProcess(), (UINT)status);
	_Exit(status); /* not reached */
}

void cctl_os_process_done(void)
{
	InterlockedExchange(&finished, 1);
	for (int i = 0; i < 2; i++)
		if (vt_handle[i]) {
			fflush(i ? stderr : stdout);
			SetConsoleMode(vt_handle[i], vt_mode[i]);
			vt_handle[i] = NULL;
		}
	if (console_cp) {
		fflush(stdout);
		fflush(stderr);
		SetConsoleOutputCP(console_cp);
		console_cp = 0;
	}
}

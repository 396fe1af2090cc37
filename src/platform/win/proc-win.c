/*
 * The OS layer (os.h) for Windows, running programs: a command line quoted
 * the way CommandLineToArgvW and the Microsoft C runtime undo it,
 * CreateProcessW, and a child's output captured through a pipe.  The rest
 * of the layer is os-win.c's and its siblings' (see os-win.c).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/internal.h"
#include "../os.h"
#include "win.h"

static void quote_arg(struct cctl_buf *b, const char *a)
{
	/* the quoting CommandLineToArgvW undoes */
	size_t slashes = 0;
	if (*a && !strpbrk(a, " \t\"")) {
		cctl_buf_adds(b, a);
		return;
	}
	cctl_buf_addch(b, '"');
	for (; *a; a++) {
		if (*a == '\\') {
			slashes++;
			continue;
		}
		for (size_t i = 0; i < slashes * (*a == '"' ? 2 : 1); i++)
			cctl_buf_addch(b, '\\');
		slashes = 0;
		if (*a == '"')
			cctl_buf_addch(b, '\\');
		cctl_buf_addch(b, *a);
	}
	for (size_t i = 0; i < slashes * 2; i++)
		cctl_buf_addch(b, '\\');
	cctl_buf_addch(b, '"');
}

/* argv as the command line CreateProcessW takes. */
static wchar_t *command_line(const char *const *argv)
{
	struct cctl_buf cmd = CCTL_BUF_INIT;
	wchar_t *w;
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			cctl_buf_addch(&cmd, ' ');
		quote_arg(&cmd, argv[i]);
	}
	w = cctl_win_wide(cmd.buf);
	cctl_buf_release(&cmd);
	return w;
}

/* argv[0] as CreateProcessW would find it (with ".exe" when it has no
 * extension): the program's folder, the current one, the system folders,
 * then PATH (free()); NULL when it is nowhere. */
static wchar_t *find_program(const char *name)
{
	wchar_t *w = cctl_win_wide(name), *found = malloc(32768 * sizeof(wchar_t));
	DWORD n = found ? SearchPathW(NULL, w, L".exe", 32768, found, NULL) : 0;
	free(w);
	if (!n || n >= 32768) {
		free(found);
		return NULL;
	}
	return found;
}

/* The standard handles, inheritable, for a child that shares them. */
static void share_std_handles(STARTUPINFOW *si)
{
	HANDLE *h[3] = { &si->hStdInput, &si->hStdOutput, &si->hStdError };
	DWORD ids[3] = { STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE };
	for (int i = 0; i < 3; i++) {
		*h[i] = GetStdHandle(ids[i]);
		if (*h[i] && *h[i] != INVALID_HANDLE_VALUE)
			SetHandleInformation(*h[i], HANDLE_FLAG_INHERIT,
					     HANDLE_FLAG_INHERIT);
	}
	si->dwFlags |= STARTF_USESTDHANDLES;
}

void cctl_os_setenv(const char *name, const char *value)
{
	wchar_t *k = cctl_win_wide(name), *v = value ? cctl_win_wide(value) : NULL;
	SetEnvironmentVariableW(k, v);
	free(k);
	free(v);
}

char *cctl_os_temp_dir(void)
{
	wchar_t w[MAX_PATH + 2];
	DWORD n = GetTempPathW(MAX_PATH + 1, w);
	char *s;
	size_t len;
	if (!n || n > MAX_PATH + 1)
		return cctl_xstrdup("C:\\Windows\\Temp");
	s = cctl_win_narrow(w);
	len = strlen(s);
	while (len > 3 && (s[len - 1] == '\\' || s[len - 1] == '/'))
		s[--len] = 0;
	return s;
}

int cctl_os_exec(struct cctl_ctx *ctx, const char *const *argv,
		 const struct cctl_env_var *vars, size_t n, int *status)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	HANDLE job;
	wchar_t *app, *cmd;
	DWORD code = 1;

	*status = 0;
	for (size_t i = 0; i < n; i++) {
		wchar_t *k = cctl_win_wide(vars[i].name), *v = cctl_win_wide(vars[i].value);
		BOOL ok = SetEnvironmentVariableW(k, v);
		free(k);
		free(v);
		if (!ok)
			return cctl_win_error(ctx, GetLastError(), "set", vars[i].name);
	}
	if (!(app = find_program(argv[0]))) {
		const char *path = cctl_os_getenv("PATH");
		return cctl__error(ctx, CCTL_ENOCOMMAND,
				   "'%s' was not found in the folder of cudnnctl.exe, "
				   "the current folder, the system folders or any "
				   "folder of PATH (%s)",
				   argv[0], path && *path ? path : "empty");
	}
	cmd = command_line(argv);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	share_std_handles(&si);
	fflush(stdout);
	fflush(stderr);
	cctl_win_console_to_child();
	if (!CreateProcessW(app, cmd, NULL, NULL, TRUE,
			    CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT, NULL, NULL,
			    &si, &pi)) {
		char msg[256];
		int ret;
		cctl_win_message(GetLastError(), msg, sizeof(msg));
		ret = cctl__error(ctx, CCTL_ECANNOTRUN, "cannot run '%s': %s", argv[0], msg);
		free(app);
		free(cmd);
		return ret;
	}
	/* a job that ends the command (and what it started) when cudnnctl
	 * ends, killed or not; where cudnnctl's own job forbids it, the
	 * command runs without */
	job = CreateJobObjectW(NULL, NULL);
	memset(&li, 0, sizeof(li));
	li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
	if (job && (!SetInformationJobObject(job, JobObjectExtendedLimitInformation,
					     &li, sizeof(li)) ||
		    !AssignProcessToJobObject(job, pi.hProcess))) {
		CloseHandle(job);
		job = NULL;
	}
	ResumeThread(pi.hThread);
	WaitForSingleObject(pi.hProcess, INFINITE);
	GetExitCodeProcess(pi.hProcess, &code);
	*status = (int)code;
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	/* the job stays open until cudnnctl exits: closing it would end what
	 * the command left running before cudnnctl has passed on its status */
	(void)job;
	free(app);
	free(cmd);
	return 0;
}

int cctl_os_run(struct cctl_ctx *ctx, const char *const *argv)
{
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	wchar_t *w;
	DWORD code = 1;
	int ret = 0;

	w = command_line(argv);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!CreateProcessW(NULL, w, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
		ret = cctl_win_error(ctx, GetLastError(), "start", argv[0]);
	} else {
		WaitForSingleObject(pi.hProcess, INFINITE);
		GetExitCodeProcess(pi.hProcess, &code);
		CloseHandle(pi.hProcess);
		CloseHandle(pi.hThread);
		if (code)
			ret = cctl__error(ctx, CCTL_EFAIL, "'%s' failed (status %lu)",
					  argv[0], (unsigned long)code);
	}
	free(w);
	return ret;
}

#define CAPTURE_MAX (1u << 20)

int cctl_os_run_capture(struct cctl_ctx *ctx, const char *const *argv,
			unsigned timeout_ms, struct cctl_buf *out,
			struct cctl_buf *err, int *status)
{
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	HANDLE rd[2] = { NULL, NULL }, wr[2] = { NULL, NULL }, nul;
	struct cctl_buf *bufs[2] = { out, err };
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	ULONGLONG deadline = GetTickCount64() + timeout_ms;
	DWORD code = 0;
	wchar_t *w;
	int open_pipes = 2, timed_out = 0, ret = 0;

	*status = 127;
	for (int i = 0; i < 2; i++)
		if (!CreatePipe(&rd[i], &wr[i], &sa, 0) ||
		    !SetHandleInformation(rd[i], HANDLE_FLAG_INHERIT, 0)) {
			ret = cctl_win_error(ctx, GetLastError(), "start", argv[0]);
			goto out;
		}
	nul = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
			  OPEN_EXISTING, 0, NULL);
	w = command_line(argv);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = nul;
	si.hStdOutput = wr[0];
	si.hStdError = wr[1];
	if (!CreateProcessW(NULL, w, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL,
			    &si, &pi)) {
		/* why, for whoever looks (status 127 is the answer) */
		if (ctx)
			ctx->oserr = (int)GetLastError();
		free(w);
		if (nul != INVALID_HANDLE_VALUE)
			CloseHandle(nul);
		goto out; /* could not start: status 127 */
	}
	free(w);
	if (nul != INVALID_HANDLE_VALUE)
		CloseHandle(nul);
	CloseHandle(wr[0]);
	CloseHandle(wr[1]);
	wr[0] = wr[1] = NULL;
	while (open_pipes) {
		int idle = 1;
		if (GetTickCount64() >= deadline) {
			timed_out = 1;
			TerminateProcess(pi.hProcess, 1);
			break;
		}
		for (int i = 0; i < 2; i++) {
			DWORD avail = 0, got = 0;
			char buf[65536];
			if (!rd[i])
				continue;
			if (!PeekNamedPipe(rd[i], NULL, 0, NULL, &avail, NULL)) {
				/* the child closed it: what it wrote last may still
				 * be in the pipe (Wine says so before it is read),
				 * so read until ReadFile says the pipe is empty */
				while (ReadFile(rd[i], buf, sizeof(buf), &got, NULL) && got)
					if (bufs[i] && bufs[i]->len < CAPTURE_MAX)
						cctl_buf_add(bufs[i], buf, got);
				CloseHandle(rd[i]);
				rd[i] = NULL;
				open_pipes--;
				continue;
			}
			if (!avail)
				continue;
			idle = 0;
			if (ReadFile(rd[i], buf, avail < sizeof(buf) ? avail : sizeof(buf),
				     &got, NULL) && got && bufs[i] && bufs[i]->len < CAPTURE_MAX)
				cctl_buf_add(bufs[i], buf, got);
		}
		if (idle)
			Sleep(5);
	}
	WaitForSingleObject(pi.hProcess, 10000);
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hProcess);
	CloseHandle(pi.hThread);
	*status = timed_out ? -1 : code >= 0xC0000000u ? (int)(0x100 | (code & 0xff)) : (int)code;
out:
	for (int i = 0; i < 2; i++) {
		if (rd[i])
			CloseHandle(rd[i]);
		if (wr[i])
			CloseHandle(wr[i]);
	}
	return ret;
}


/* The file behind a DLL's handle, without the \\?\ prefix; NULL when
 * Windows will not say. */
static char *handle_path(HANDLE h)
{
	wchar_t buf[MAX_PATH * 4];
	DWORD n;
	if (!h)
		return NULL;
	n = GetFinalPathNameByHandleW(h, buf, MAX_PATH * 4, FILE_NAME_NORMALIZED);
	if (!n || n >= MAX_PATH * 4)
		return NULL;
	return cctl_win_narrow(!wcsncmp(buf, L"\\\\?\\", 4) ? buf + 4 : buf);
}

static void add_loaded(char ***v, size_t *n, char *path)
{
	for (size_t i = 0; i < *n; i++)
		if (!_stricmp((*v)[i], path)) {
			free(path);
			return;
		}
	*v = cctl_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = path;
}

int cctl_os_run_traced(struct cctl_ctx *ctx, const char *const *argv,
		       unsigned timeout_ms, const char *out_path, char ***loaded,
		       size_t *n, int *status)
{
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	ULONGLONG deadline = GetTickCount64() + timeout_ms;
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	HANDLE out, nul;
	wchar_t *w, *app;
	DWORD code = 0;
	int done = 0, timed_out = 0;

	*loaded = NULL;
	*n = 0;
	*status = 127;
	w = cctl_win_wpath(out_path);
	out = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ, &sa, CREATE_ALWAYS,
			  FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (out == INVALID_HANDLE_VALUE)
		return cctl_win_error(ctx, GetLastError(), "write", out_path);
	if (!(app = find_program(argv[0]))) {
		CloseHandle(out);
		return 0; /* not found: status 127 */
	}
	nul = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
			  OPEN_EXISTING, 0, NULL);
	w = command_line(argv);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = nul;
	si.hStdOutput = out;
	si.hStdError = out;
	if (!CreateProcessW(app, w, NULL, NULL, TRUE,
			    DEBUG_ONLY_THIS_PROCESS | CREATE_NO_WINDOW, NULL, NULL, &si,
			    &pi)) {
		free(w);
		free(app);
		CloseHandle(out);
		if (nul != INVALID_HANDLE_VALUE)
			CloseHandle(nul);
		return 0;
	}
	free(w);
	free(app);
	CloseHandle(out);
	if (nul != INVALID_HANDLE_VALUE)
		CloseHandle(nul);
	while (!done) {
		DEBUG_EVENT ev;
		DWORD cont = DBG_CONTINUE;
		if (GetTickCount64() >= deadline) {
			timed_out = 1;
			TerminateProcess(pi.hProcess, 1);
			deadline = (ULONGLONG)-1; /* and wait for its exit event */
		}
		if (!WaitForDebugEvent(&ev, 100))
			continue;
		switch (ev.dwDebugEventCode) {
		case CREATE_PROCESS_DEBUG_EVENT:
			if (ev.u.CreateProcessInfo.hFile)
				CloseHandle(ev.u.CreateProcessInfo.hFile);
			break;
		case LOAD_DLL_DEBUG_EVENT: {
			char *p = handle_path(ev.u.LoadDll.hFile);
			if (p)
				add_loaded(loaded, n, p);
			if (ev.u.LoadDll.hFile)
				CloseHandle(ev.u.LoadDll.hFile);
			break;
		}
		case EXCEPTION_DEBUG_EVENT:
			/* the loader's first breakpoint is ours to pass; the
			 * program's own exceptions are its to handle */
			if (ev.u.Exception.ExceptionRecord.ExceptionCode != EXCEPTION_BREAKPOINT)
				cont = DBG_EXCEPTION_NOT_HANDLED;
			break;
		case EXIT_PROCESS_DEBUG_EVENT:
			code = ev.u.ExitProcess.dwExitCode;
			done = 1;
			break;
		default:
			break;
		}
		ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, cont);
	}
	WaitForSingleObject(pi.hProcess, 10000);
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	*status = timed_out ? -1 : code >= 0xC0000000u ? (int)(0x100 | (code & 0xff)) : (int)code;
	return 0;
}

void cctl_os_identity(struct cctl_buf *user, struct cctl_buf *host)
{
	wchar_t w[256];
	DWORD n = 256;
	char *s;
	if (GetUserNameW(w, &n) && (s = cctl_win_narrow(w))) {
		cctl_buf_adds(user, s);
		free(s);
	}
	n = 256;
	if (GetComputerNameExW(ComputerNameDnsHostname, w, &n) && (s = cctl_win_narrow(w))) {
		cctl_buf_adds(host, s);
		free(s);
	}
}

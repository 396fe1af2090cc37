/*
 * For the Wine tests of cudnnctl exec: prints, as UTF-8 lines, each
 * argument as the Microsoft C runtime parsed its command line
 * ("arg <text>"), then the CUDNN_* variables exec sets and the first
 * folder of each list it extends ("PATH1 <folder>"); reads its
 * standard input through to the end when the first argument is "stdin"
 * ("stdin <bytes>"), and exits with N when one argument is "exit=N".
 * "wait=FILE": writes FILE (its Windows process id) once its console
 * control handler is in place, then waits: a Ctrl+C prints "ctrl-c" and
 * exits with 42; nothing else ends it (the job-object test kills
 * cudnnctl under it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#include <windows.h>

static void say(const char *what, const wchar_t *w)
{
	char buf[32768];
	int n = WideCharToMultiByte(CP_UTF8, 0, w ? w : L"(unset)", -1, buf,
				    (int)sizeof(buf), NULL, NULL);
	printf("%s %s\n", what, n > 0 ? buf : "(unconvertible)");
}

static const wchar_t *const plain[] = { L"CUDNN_PATH", L"CUDNN_ROOT",
					 L"CUDNN_HOME", L"CUDNN_INSTALL_PATH",
					 NULL };
static const wchar_t *const lists[] = { L"PATH", L"INCLUDE", L"LIB",
					L"CMAKE_PREFIX_PATH",
					L"PKG_CONFIG_PATH", NULL };

static volatile LONG got_ctrl_c;

static BOOL WINAPI on_ctrl(DWORD type)
{
	if (type != CTRL_C_EVENT)
		return FALSE;
	InterlockedExchange(&got_ctrl_c, 1);
	return TRUE;
}

static int wait_for_ctrl_c(const wchar_t *marker)
{
	FILE *f;
	SetConsoleCtrlHandler(on_ctrl, TRUE);
	if (!(f = _wfopen(marker, L"w")))
		return 3;
	fprintf(f, "%lu\n", GetCurrentProcessId());
	fclose(f);
	while (!InterlockedCompareExchange(&got_ctrl_c, 0, 0))
		Sleep(20);
	printf("ctrl-c\n");
	fflush(stdout);
	return 42;
}

int wmain(int argc, wchar_t **argv)
{
	static wchar_t value[32768];
	int code = 0;
	for (int i = 1; i < argc; i++) {
		say("arg", argv[i]);
		if (!wcsncmp(argv[i], L"exit=", 5))
			code = _wtoi(argv[i] + 5);
	}
	for (const wchar_t *const *v = plain; *v; v++) {
		char name[64];
		snprintf(name, sizeof(name), "%ls", *v);
		say(name, GetEnvironmentVariableW(*v, value, 32768) ? value : NULL);
	}
	for (const wchar_t *const *v = lists; *v; v++) {
		char name[64];
		snprintf(name, sizeof(name), "%ls1", *v);
		if (GetEnvironmentVariableW(*v, value, 32768)) {
			wchar_t *semi = wcschr(value, L';');
			if (semi)
				*semi = 0;
			say(name, value);
		}
	}
	if (argc > 1 && !wcsncmp(argv[1], L"wait=", 5)) {
		fflush(stdout);
		return wait_for_ctrl_c(argv[1] + 5);
	}
	if (argc > 1 && !wcscmp(argv[1], L"stdin")) {
		char in[256];
		size_t n = fread(in, 1, sizeof(in) - 1, stdin);
		in[n] = 0;
		printf("stdin %s\n", in);
	}
	fflush(stdout);
	return code;
}

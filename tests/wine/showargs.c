/*
 * For the Wine tests of cudnnctl exec: prints, as UTF-8 lines, each
 * argument as the Microsoft C runtime parsed its command line
 * ("arg <text>"), then CUDNN_PATH and the first folder of PATH; reads its
 * standard input through to the end when the first argument is "stdin"
 * ("stdin <bytes>"), and exits with N when one argument is "exit=N".
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

int wmain(int argc, wchar_t **argv)
{
	static wchar_t value[32768];
	int code = 0;
	for (int i = 1; i < argc; i++) {
		say("arg", argv[i]);
		if (!wcsncmp(argv[i], L"exit=", 5))
			code = _wtoi(argv[i] + 5);
	}
	say("CUDNN_PATH",
	    GetEnvironmentVariableW(L"CUDNN_PATH", value, 32768) ? value : NULL);
	if (GetEnvironmentVariableW(L"PATH", value, 32768)) {
		wchar_t *semi = wcschr(value, L';');
		if (semi)
			*semi = 0;
		say("PATH1", value);
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

/*
 * A stand-in for python.exe in the Wine tests of verify --python (no
 * Windows Python runs here).  It is not Python: it checks that the probe
 * arrived whole through CreateProcess's command line, then does with the
 * real Windows loader what the probe does with ctypes, as a fixture file
 * says, and answers in the probe's line format:
 *
 *   python.exe -c CODE            (the interpreter check) a version line
 *   python.exe -c PROBE FRAMEWORK MAINS OPS reads %FAKEPY_DIR%\FRAMEWORK.txt:
 *       no file         "absent"
 *       load NAME       LoadLibraryW(NAME): the standard search, PATH
 *                       included; on error 126 the line Python 3.8+
 *                       prints, and no more loads
 *       crash           ends with STATUS_ACCESS_VIOLATION, as a crash does
 *       hang            sleeps for ever
 *       any other line  printed as it is (version, location, built, skip)
 *     then one "lib VERSION PATH" line per cudnn64_*.dll mapped into the
 *     process (EnumProcessModules), asking each for cudnnGetVersion.
 *
 * FAKEPY_PROBE names a file with the probe's text: a FRAMEWORK run whose
 * CODE differs prints an error line saying where.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>
#include <psapi.h>

static void put_utf8(const wchar_t *w)
{
	char buf[4 * MAX_PATH * 4];
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, (int)sizeof(buf), NULL, NULL);
	if (n > 0)
		fputs(buf, stdout);
}

static wchar_t *slurp(const wchar_t *path, size_t *len)
{
	FILE *f = _wfopen(path, L"rb");
	char *bytes;
	wchar_t *w;
	long n;
	int wn;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	bytes = malloc((size_t)n + 1);
	if (fread(bytes, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	wn = MultiByteToWideChar(CP_UTF8, 0, bytes, (int)n, NULL, 0);
	w = calloc((size_t)wn + 1, sizeof(*w));
	MultiByteToWideChar(CP_UTF8, 0, bytes, (int)n, w, wn);
	free(bytes);
	*len = (size_t)wn;
	return w;
}

static void list_cudnn(void)
{
	HMODULE mods[1024];
	DWORD need = 0;
	if (!EnumProcessModules(GetCurrentProcess(), mods, sizeof(mods), &need))
		return;
	for (DWORD i = 0; i < need / sizeof(HMODULE) && i < 1024; i++) {
		wchar_t path[MAX_PATH * 4];
		const wchar_t *b;
		size_t (*get)(void);
		if (!GetModuleFileNameW(mods[i], path, MAX_PATH * 4))
			continue;
		b = wcsrchr(path, L'\\');
		b = b ? b + 1 : path;
		if (_wcsnicmp(b, L"cudnn64_", 8) || !wcsstr(b, L".dll"))
			continue;
		get = (size_t(*)(void))(void (*)(void))GetProcAddress(mods[i], "cudnnGetVersion");
		printf("lib\t%u\t", get ? (unsigned)get() : 0u);
		put_utf8(path);
		printf("\n");
	}
}

int wmain(int argc, wchar_t **argv)
{
	wchar_t fixture[MAX_PATH * 4];
	const wchar_t *dir = _wgetenv(L"FAKEPY_DIR"), *probe = _wgetenv(L"FAKEPY_PROBE");
	char line[4096];
	FILE *f;

	if (argc == 3 && !wcscmp(argv[1], L"-c")) {
		printf("3.12.0 (a stand-in for python.exe in cudnnctl's tests)\n");
		return 0;
	}
	/* the probe's run: -c PROBE FRAMEWORK MAINS OPS (the library names
	 * are the probe's business, not this stand-in's) */
	if (argc != 6 || wcscmp(argv[1], L"-c")) {
		fprintf(stderr, "fakepython: usage: python.exe -c CODE [FRAMEWORK "
				"MAINS OPS]\n");
		return 2;
	}
	if (probe) {
		size_t n = 0, i = 0;
		wchar_t *want = slurp(probe, &n);
		while (want && i < n && argv[2][i] == want[i])
			i++;
		if (!want || i != n || argv[2][i]) {
			printf("error\tthe probe arrived changed at character %u of %u\n",
			       (unsigned)i, (unsigned)n);
			return 0;
		}
		free(want);
	}
	_snwprintf(fixture, MAX_PATH * 4, L"%ls\\%ls.txt", dir ? dir : L".", argv[3]);
	fixture[MAX_PATH * 4 - 1] = 0;
	if (!(f = _wfopen(fixture, L"r"))) {
		printf("absent\n");
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!strncmp(line, "load ", 5)) {
			wchar_t name[MAX_PATH * 4];
			MultiByteToWideChar(CP_UTF8, 0, line + 5, -1, name, MAX_PATH * 4);
			if (!LoadLibraryW(name)) {
				DWORD e = GetLastError();
				if (e == ERROR_MOD_NOT_FOUND)
					printf("error\tFileNotFoundError: Could not find module '%s' "
					       "(or one of its dependencies). Try using the full "
					       "path with constructor syntax.\n",
					       line + 5);
				else
					printf("error\tOSError: [WinError %lu] loading %s\n",
					       (unsigned long)e, line + 5);
				break;
			}
		} else if (!strcmp(line, "crash")) {
			fflush(stdout);
			ExitProcess(0xC0000005u);
		} else if (!strcmp(line, "hang")) {
			fflush(stdout);
			Sleep(INFINITE);
		} else {
			printf("%s\n", line);
		}
	}
	fclose(f);
	list_cudnn();
	return 0;
}

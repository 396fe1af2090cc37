/*
 * For the Wine tests of the in-use checks: loads the DLL named by its
 * argument with LoadLibraryW, prints "ready <its Windows process id>",
 * then holds it until its standard input ends.  Exit 2: it could not be
 * loaded.
 */
#include <stdio.h>
#include <wchar.h>

#include <windows.h>

int wmain(int argc, wchar_t **argv)
{
	HMODULE h;
	char buf[256];
	if (argc != 2)
		return 2;
	h = LoadLibraryW(argv[1]);
	if (!h) {
		printf("cannot load: error %lu\n", (unsigned long)GetLastError());
		return 2;
	}
	printf("ready %lu\n", (unsigned long)GetCurrentProcessId());
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	FreeLibrary(h);
	return 0;
}

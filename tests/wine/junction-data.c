/* For the NTFS check in test_wine.py: the reparse data cudnnctl writes for
 * a junction, and the target it reads from reparse data, through the
 * functions fs-win.c uses.
 *
 *   junction-data make TARGET   prints the data as hex
 *   junction-data read HEX      prints the target the data names
 *   junction-data probe DIR     whether this system makes and follows a
 *                               junction: DIR\link to DIR\target, set
 *                               with FSCTL_SET_REPARSE_POINT, then
 *                               DIR\link\file opened; prints
 *                               "set=ok|ERROR" and "follow=ok|ERROR"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/platform/win/win.h"

static int probe(const char *dir)
{
	wchar_t *w = cctl_win_wide(dir), link[1024], target[1024], file[1100];
	size_t size;
	unsigned char *d;
	DWORD got, err = 0;
	HANDLE h;
	CreateDirectoryW(w, NULL);
	swprintf(link, 1024, L"%ls\\link", w);
	swprintf(target, 1024, L"%ls\\target", w);
	free(w);
	CreateDirectoryW(target, NULL);
	swprintf(file, 1100, L"%ls\\file", target);
	h = CreateFileW(file, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
	if (h == INVALID_HANDLE_VALUE || !WriteFile(h, "x", 1, &got, NULL))
		return 1;
	CloseHandle(h);
	d = cctl_win_junction_data(target, &size);
	if (!d || !CreateDirectoryW(link, NULL))
		return 1;
	h = CreateFileW(link, GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
			FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
			NULL);
	if (h == INVALID_HANDLE_VALUE ||
	    !DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, d, (DWORD)size, NULL, 0,
			     &got, NULL))
		err = GetLastError();
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	free(d);
	if (err)
		printf("set=%lu\n", err);
	else
		printf("set=ok\n");
	swprintf(file, 1100, L"%ls\\file", link);
	h = CreateFileW(file, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0,
			NULL);
	if (h == INVALID_HANDLE_VALUE) {
		printf("follow=%lu\n", GetLastError());
	} else {
		printf("follow=ok\n");
		CloseHandle(h);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "probe"))
		return probe(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "make")) {
		wchar_t *target = cctl_win_wide(argv[2]);
		size_t size;
		unsigned char *d = cctl_win_junction_data(target, &size);
		free(target);
		if (!d)
			return 1;
		for (size_t i = 0; i < size; i++)
			printf("%02x", d[i]);
		printf("\n");
		free(d);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "read")) {
		size_t n = strlen(argv[2]) / 2;
		unsigned char *d = malloc(n ? n : 1);
		wchar_t *t;
		char *s;
		for (size_t i = 0; i < n; i++)
			if (sscanf(argv[2] + 2 * i, "%2hhx", &d[i]) != 1)
				return 2;
		t = cctl_win_junction_parse(d, n);
		free(d);
		if (!t)
			return 1;
		s = cctl_win_narrow(t);
		printf("%s\n", s);
		free(s);
		free(t);
		return 0;
	}
	fprintf(stderr, "usage: junction-data make TARGET | read HEX | probe DIR\n");
	return 2;
}

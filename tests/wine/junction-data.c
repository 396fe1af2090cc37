/* For the NTFS check in test_wine.py: the reparse data cudnnctl writes for
 * a junction, and the target it reads from reparse data, through the
 * functions fs-win.c uses.
 *
 *   junction-data make TARGET   prints the data as hex
 *   junction-data read HEX      prints the target the data names
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/platform/win/win.h"

int main(int argc, char **argv)
{
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
	fprintf(stderr, "usage: junction-data make TARGET | read HEX\n");
	return 2;
}

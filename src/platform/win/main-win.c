/* wmain: the arguments arrive as UTF-16 and go on as UTF-8. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdlib.h>

#include "win.h"

int cctl_cli_main(int argc, char **argv);

int wmain(int argc, wchar_t **wargv)
{
	char **argv = calloc((size_t)argc + 1, sizeof(char *));
	int status;
	if (!argv)
		return 3;
	for (int i = 0; i < argc; i++)
		argv[i] = cctl_win_narrow(wargv[i]);
	/* the console shows UTF-8 while cudnnctl runs (cctl_process_init) */
	status = cctl_cli_main(argc, argv);
	cctl_process_done();
	return status;
}

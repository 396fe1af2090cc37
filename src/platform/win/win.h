/* Helpers shared by the Windows files of the OS layer. */
#ifndef CUDNNCTL_WIN_H
#define CUDNNCTL_WIN_H

#include <windows.h>

#include "cudnnctl/cudnnctl.h"

/* UTF-8 to UTF-16 (free() the result); _wpath also turns '/' into '\'. */
wchar_t *cctl_win_wide(const char *s);
wchar_t *cctl_win_wpath(const char *s);
/* UTF-16 to UTF-8 (free() the result). */
char *cctl_win_narrow(const wchar_t *w);
/* The system's text for err, with its number. */
void cctl_win_message(DWORD err, char *out, size_t n);
/* Sets "cannot <what> '<path>': <system text>" and returns the code. */
int cctl_win_error(struct cctl_ctx *ctx, DWORD err, const char *what,
		   const char *path);

/* NULL when h is a regular file of its own on a disk; else what it is
 * ("a link (reparse point)", "a folder", "a file with other hard links",
 * "not a file on a disk": a pipe or a device). */
const char *cctl_win_not_regular(HANDLE h);
/* Opens path to write (CreateFileW's access, share mode and disposition)
 * without following a link at its name (FILE_FLAG_OPEN_REPARSE_POINT),
 * and refuses what is not a regular file of its own: "refusing to
 * <what> '<path>': ..." (CCTL_EIO).  INVALID_HANDLE_VALUE on failure,
 * the error set. */
HANDLE cctl_win_open_own(struct cctl_ctx *ctx, const char *path, DWORD access,
			 DWORD share, DWORD disposition, const char *what);

/* A directory junction's reparse data (REPARSE_DATA_BUFFER, tag
 * IO_REPARSE_TAG_MOUNT_POINT) pointing to target, an absolute "C:\..." path
 * ("\\?\" allowed); NULL for any other kind of path.  free() it. */
void *cctl_win_junction_data(const wchar_t *target, size_t *size);
/* The target a junction's reparse data names (its print name, else its
 * substitute name less "\??\"); NULL when the data is not a well-formed
 * mount point.  free() it. */
wchar_t *cctl_win_junction_parse(const void *data, size_t size);

/* Before a program of the user's starts in this console (cudnnctl exec):
 * the console's code page and modes, the error mode and the Ctrl+C
 * handling go back to what they were before cudnnctl, but that Ctrl+C and
 * Ctrl+Break are left to that program (cudnnctl waits for it). */
void cctl_win_console_to_child(void);

/* The machine and user PATH values from the registry, expanded. */
int cctl_os_session_path_parts(struct cctl_ctx *ctx, struct cctl_buf *machine,
			       struct cctl_buf *user);

#endif

/*
 * Reading a DLL file on Windows (os.h: cctl_os_lib_info): the file through
 * the PE reader of pe.c (the machine, the import table and VERSIONINFO),
 * and the folder its imports are looked for in first.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../core/internal.h"
#include "../os.h"
#include "../portable.h"
#include "win.h"

static int file_read_at(void *opaque, uint64_t off, void *buf, size_t n)
{
	OVERLAPPED ov;
	DWORD got = 0;
	memset(&ov, 0, sizeof(ov));
	ov.Offset = (DWORD)off;
	ov.OffsetHigh = (DWORD)(off >> 32);
	return ReadFile((HANDLE)opaque, buf, (DWORD)n, &got, &ov) && got == n ? 0
									       : -1;
}

int cctl_os_lib_info(struct cctl_ctx *ctx, const char *path,
		     struct cctl_lib_info *out)
{
	wchar_t *w = cctl_win_wpath(path);
	struct cctl_pe_source src;
	LARGE_INTEGER size;
	const char *why;
	HANDLE h;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
			OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return cctl_win_error(ctx, GetLastError(), "open", path);
	if (!GetFileSizeEx(h, &size)) {
		ret = cctl_win_error(ctx, GetLastError(), "read", path);
		goto out;
	}
	src.read_at = file_read_at;
	src.opaque = h;
	src.size = (uint64_t)size.QuadPart;
	if (cctl_pe_read(&src, out, &why)) {
		ret = cctl__error(ctx, CCTL_EFAIL, "'%s' is not a usable DLL: %s",
				  path, why);
		goto out;
	}
	/* loaded with LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR, a DLL's imports are
	 * looked for next to it first */
	{
		char *dir = cctl_xstrdup(path), *slash = strrchr(dir, '/');
		char *bs = strrchr(dir, '\\');
		if (bs && (!slash || bs > slash))
			slash = bs;
		if (slash)
			*slash = '\0';
		out->runpath = cctl_xcalloc(2, sizeof(char *));
		out->runpath[0] = slash ? dir : cctl_xstrdup(".");
		if (!slash)
			free(dir);
		out->nrunpath = 1;
	}
out:
	CloseHandle(h);
	return ret;
}

void cctl_lib_info_release(struct cctl_lib_info *info)
{
	for (size_t i = 0; i < info->nneeded; i++)
		free(info->needed[i]);
	for (size_t i = 0; i < info->nrunpath; i++)
		free(info->runpath[i]);
	free(info->needed);
	free(info->runpath);
	free(info->soname);
	free(info->file_version);
	memset(info, 0, sizeof(*info));
}


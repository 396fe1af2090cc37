/*
 * The OS layer (os.h) on Windows: what scan and the in-use checks ask of
 * the machine.  The programs that hold a DLL come from the Restart
 * Manager (rstrtmgr.dll, loaded when needed: it names applications and
 * services), then from each process's module list (Toolhelp), which
 * also sees what the Restart Manager does not report.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <tlhelp32.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../core/internal.h"
#include "../os.h"
#include "win.h"

int cctl_os_env_names(const char *prefix, char ***names, size_t *n)
{
	wchar_t *block = GetEnvironmentStringsW(), *wp = cctl_win_wide(prefix);
	size_t len = wcslen(wp);
	*names = NULL;
	*n = 0;
	for (const wchar_t *e = block; e && *e; e += wcslen(e) + 1) {
		const wchar_t *eq = wcschr(e + 1, L'='); /* "=C:" entries */
		wchar_t *name;
		if (!eq || _wcsnicmp(e, wp, len))
			continue;
		name = cctl_xcalloc((size_t)(eq - e) + 1, sizeof(*name));
		memcpy(name, e, (size_t)(eq - e) * sizeof(*name));
		*names = cctl_xrealloc(*names, (*n + 1) * sizeof(**names));
		(*names)[(*n)++] = cctl_win_narrow(name);
		free(name);
	}
	if (block)
		FreeEnvironmentStringsW(block);
	free(wp);
	return 0;
}

/* The volume a path is on ("C:\", a mount point), or NULL. */
static wchar_t *volume_of(const char *path)
{
	wchar_t *w = cctl_win_wpath(path), *vol = cctl_xcalloc(MAX_PATH + 1, sizeof(*vol));
	BOOL ok = GetVolumePathNameW(w, vol, MAX_PATH);
	free(w);
	if (!ok) {
		free(vol);
		return NULL;
	}
	return vol;
}

int cctl_os_same_volume(const char *a, const char *b)
{
	wchar_t *va = volume_of(a), *vb = volume_of(b);
	int same = va && vb ? !_wcsicmp(va, vb) : -1;
	free(va);
	free(vb);
	return same;
}

/* ----------------------------------------------------- uninstall entry */

/* A REG_SZ value of an open key (free()), or NULL. */
static wchar_t *reg_string(HKEY key, const wchar_t *name)
{
	DWORD size = 0;
	wchar_t *v;
	if (RegGetValueW(key, NULL, name, RRF_RT_REG_SZ, NULL, NULL, &size) != ERROR_SUCCESS ||
	    !size || size > 65536)
		return NULL;
	v = cctl_xcalloc(size / sizeof(*v) + 1, sizeof(*v));
	if (RegGetValueW(key, NULL, name, RRF_RT_REG_SZ, NULL, v, &size) != ERROR_SUCCESS) {
		free(v);
		return NULL;
	}
	return v;
}

int cctl_os_uninstall_entry(const char *words, char **name, char **command)
{
	static const wchar_t path[] = L"SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall";
	HKEY hives[] = { HKEY_LOCAL_MACHINE, HKEY_CURRENT_USER }, top;
	wchar_t *want = cctl_win_wide(words);
	*name = *command = NULL;
	for (size_t h = 0; h < 2 && !*name; h++) {
		wchar_t sub[256];
		if (RegOpenKeyExW(hives[h], path, 0, KEY_READ, &top) != ERROR_SUCCESS)
			continue;
		for (DWORD i = 0; !*name; i++) {
			DWORD len = 256;
			HKEY key;
			wchar_t *dn, *un;
			if (RegEnumKeyExW(top, i, sub, &len, NULL, NULL, NULL, NULL) != ERROR_SUCCESS)
				break;
			if (RegOpenKeyExW(top, sub, 0, KEY_READ, &key) != ERROR_SUCCESS)
				continue;
			dn = reg_string(key, L"DisplayName");
			un = reg_string(key, L"UninstallString");
			/* "NVIDIA cuDNN 9.1": the words in any case */
			if (dn && un) {
				wchar_t *lo = _wcsdup(dn), *lw = _wcsdup(want);
				_wcslwr(lo);
				_wcslwr(lw);
				if (wcsstr(lo, lw)) {
					*name = cctl_win_narrow(dn);
					*command = cctl_win_narrow(un);
				}
				free(lo);
				free(lw);
			}
			free(dn);
			free(un);
			RegCloseKey(key);
		}
		RegCloseKey(top);
	}
	free(want);
	return *name ? 0 : CCTL_ENOTFOUND;
}

/* ------------------------------------------------------ Restart Manager */

/* restartmanager.h's, which mingw-w64 does not ship everywhere. */
#define RM_SESSION_KEY_LEN 16
#define CCH_RM_SESSION_KEY (RM_SESSION_KEY_LEN * 2)
#define CCH_RM_MAX_APP_NAME 255
#define CCH_RM_MAX_SVC_NAME 63
struct rm_unique_process {
	DWORD pid;
	FILETIME start;
};
struct rm_process_info {
	struct rm_unique_process process;
	WCHAR app_name[CCH_RM_MAX_APP_NAME + 1];
	WCHAR service[CCH_RM_MAX_SVC_NAME + 1];
	DWORD app_type;
	DWORD app_status;
	DWORD session;
	BOOL restartable;
};
typedef DWORD(WINAPI *rm_start_fn)(DWORD *, DWORD, WCHAR *);
typedef DWORD(WINAPI *rm_end_fn)(DWORD);
typedef DWORD(WINAPI *rm_register_fn)(DWORD, UINT, LPCWSTR *, UINT, void *,
				      UINT, LPCWSTR *);
typedef DWORD(WINAPI *rm_list_fn)(DWORD, UINT *, UINT *,
				  struct rm_process_info *, DWORD *);

static void add_user(struct cctl_lib_user **v, size_t *nv, DWORD pid,
		     const wchar_t *program, const wchar_t *service,
		     const char *file)
{
	struct cctl_lib_user *u;
	for (size_t i = 0; i < *nv; i++)
		if ((*v)[i].pid == (long)pid) {
			if (service && *service && !(*v)[i].service)
				(*v)[i].service = cctl_win_narrow(service);
			if (file && !(*v)[i].file)
				(*v)[i].file = cctl_xstrdup(file);
			return;
		}
	*v = cctl_xrealloc(*v, (*nv + 1) * sizeof(**v));
	u = &(*v)[(*nv)++];
	u->pid = (long)pid;
	u->program = cctl_win_narrow(program && *program ? program : L"?");
	u->service = service && *service ? cctl_win_narrow(service) : NULL;
	u->file = cctl_xstrdup(file);
}

/* What the Restart Manager says holds the files (not which one); nothing
 * when it cannot say. */
static void restart_manager(wchar_t **w, size_t n, struct cctl_lib_user **v,
			    size_t *nv)
{
	HMODULE rm = LoadLibraryExW(L"rstrtmgr.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
	rm_start_fn start;
	rm_end_fn end;
	rm_register_fn reg;
	rm_list_fn list;
	WCHAR key[CCH_RM_SESSION_KEY + 1] = { 0 };
	DWORD session, reasons;
	UINT need = 0, have = 0;
	struct rm_process_info *info = NULL;
	if (!rm)
		return;
	start = (rm_start_fn)(void (*)(void))GetProcAddress(rm, "RmStartSession");
	end = (rm_end_fn)(void (*)(void))GetProcAddress(rm, "RmEndSession");
	reg = (rm_register_fn)(void (*)(void))GetProcAddress(rm, "RmRegisterResources");
	list = (rm_list_fn)(void (*)(void))GetProcAddress(rm, "RmGetList");
	if (!start || !end || !reg || !list || start(&session, 0, key)) {
		FreeLibrary(rm);
		return;
	}
	if (!reg(session, (UINT)n, (LPCWSTR *)w, 0, NULL, 0, NULL) &&
	    list(session, &need, &have, NULL, &reasons) == ERROR_MORE_DATA && need) {
		have = need;
		info = cctl_xcalloc(need, sizeof(*info));
		if (!list(session, &need, &have, info, &reasons))
			for (UINT i = 0; i < have; i++)
				add_user(v, nv, info[i].process.pid, info[i].app_name,
					 info[i].service, NULL);
		free(info);
	}
	end(session);
	FreeLibrary(rm);
}

/* ----------------------------------------------------------- modules */

static void modules_of(DWORD pid, wchar_t **w, size_t n, const char *const *files,
		       struct cctl_lib_user **v, size_t *nv)
{
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, pid);
	MODULEENTRY32W me;
	if (snap == INVALID_HANDLE_VALUE)
		return; /* gone, protected, or another user's */
	me.dwSize = sizeof(me);
	for (BOOL ok = Module32FirstW(snap, &me); ok; ok = Module32NextW(snap, &me))
		for (size_t i = 0; i < n; i++)
			if (!_wcsicmp(me.szExePath, w[i])) {
				wchar_t exe[MAX_PATH] = L"?";
				HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION,
						       FALSE, pid);
				DWORD len = MAX_PATH;
				if (p && !QueryFullProcessImageNameW(p, 0, exe, &len))
					wcscpy(exe, L"?");
				if (p)
					CloseHandle(p);
				add_user(v, nv, pid, exe, NULL, files[i]);
			}
	CloseHandle(snap);
}

int cctl_os_lib_users(struct cctl_ctx *ctx, const char *const *files, size_t n,
		      struct cctl_lib_user **v, size_t *nv)
{
	wchar_t **w = cctl_xcalloc(n ? n : 1, sizeof(*w));
	HANDLE snap;
	PROCESSENTRY32W pe;
	DWORD self = GetCurrentProcessId();

	*v = NULL;
	*nv = 0;
	for (size_t i = 0; i < n; i++) {
		wchar_t *p = cctl_win_wpath(files[i]);
		DWORD len = GetFullPathNameW(p, 0, NULL, NULL);
		w[i] = cctl_xcalloc(len + 1, sizeof(**w));
		if (!len || !GetFullPathNameW(p, len + 1, w[i], NULL))
			wcscpy(w[i], p);
		free(p);
	}
	if (n)
		restart_manager(w, n, v, nv);
	snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
	if (snap == INVALID_HANDLE_VALUE) {
		for (size_t i = 0; i < n; i++)
			free(w[i]);
		free(w);
		return cctl_win_error(ctx, GetLastError(), "list", "the processes");
	}
	pe.dwSize = sizeof(pe);
	for (BOOL ok = Process32FirstW(snap, &pe); ok && n; ok = Process32NextW(snap, &pe))
		if (pe.th32ProcessID && pe.th32ProcessID != self)
			modules_of(pe.th32ProcessID, w, n, files, v, nv);
	CloseHandle(snap);
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
	/* the Restart Manager lists this process too when it holds one */
	for (size_t i = 0; i < *nv; i++)
		if ((*v)[i].pid == (long)self) {
			free((*v)[i].program);
			free((*v)[i].service);
			free((*v)[i].file);
			(*v)[i--] = (*v)[--*nv];
		}
	return 0;
}

/*
 * Persistent activation on Windows: the user PATH (machine PATH with
 * --scope machine) and CUDNN_PATH in the registry.
 *
 * PATH is read without expanding (REG_EXPAND_SZ entries such as
 * %SystemRoot%\system32 stay as they are), split into whole entries,
 * compared case-insensitively with trailing '\' trimmed, written back as
 * REG_EXPAND_SZ with the terminating NUL counted, read back and compared,
 * and WM_SETTINGCHANGE is broadcast.  Every other entry is kept as it was,
 * empty ones too; an entry is cudnnctl's as written or as expanded
 * (%SystemDrive%\cudnn\...).  In the machine PATH the entry goes after the
 * %SystemRoot% ones.  The raw value and its type are kept in
 * <root>/path-backup-<scope>.txt before the first change, and a CUDNN_PATH
 * of someone else's in <root>/cudnn-path-backup-<scope>.txt; `cudnnctl path
 * restore` and deactivate put them back.  One cudnnctl at a time reads,
 * changes and writes the environment (a named mutex).  setx is never used:
 * it cuts values at 1024 characters.
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

#define PATH_LIMIT 2047 /* what the old Environment Variables dialog takes */

static const wchar_t user_key[] = L"Environment";
static const wchar_t machine_key[] =
	L"SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment";

struct scope {
	HKEY hive;
	const wchar_t *key;
	const char *name; /* "user" / "machine" */
};

static struct scope scope_of(unsigned flags)
{
	struct scope s = { HKEY_CURRENT_USER, user_key, "user" };
	if (flags & CCTL_ACT_SYSTEM) {
		s.hive = HKEY_LOCAL_MACHINE;
		s.key = machine_key;
		s.name = "machine";
	}
	return s;
}

/* A registry value as stored: missing is exists=0. */
struct reg_value {
	int exists;
	DWORD type;
	wchar_t *data; /* NUL-terminated for string types */
	DWORD bytes;
};

static void value_release(struct reg_value *v)
{
	free(v->data);
	memset(v, 0, sizeof(*v));
}

static int open_key(struct cctl_ctx *ctx, const struct scope *s, REGSAM sam,
		    HKEY *key)
{
	LONG rc = RegCreateKeyExW(s->hive, s->key, 0, NULL, 0, sam, NULL, key,
				  NULL);
	if (rc == ERROR_ACCESS_DENIED) {
		cctl__error(ctx, CCTL_EACTIVATE,
			    "changing the %s environment needs administrator "
			    "rights",
			    s->name);
		cctl__hint(ctx, "run from an elevated prompt, or leave out "
				"--scope machine to change your user PATH only");
		return CCTL_EACTIVATE;
	}
	if (rc != ERROR_SUCCESS)
		return cctl_win_error(ctx, (DWORD)rc, "open the registry key",
				      s->name);
	return 0;
}

static int read_value(struct cctl_ctx *ctx, HKEY key, const wchar_t *name,
		      struct reg_value *v)
{
	DWORD bytes = 0, type = 0;
	LONG rc;
	memset(v, 0, sizeof(*v));
	/* RegQueryValueExW never expands: %VAR% entries come back as
	 * stored */
	rc = RegQueryValueExW(key, name, NULL, &type, NULL, &bytes);
	if (rc == ERROR_FILE_NOT_FOUND)
		return 0;
	if (rc != ERROR_SUCCESS)
		return cctl_win_error(ctx, (DWORD)rc, "read", "PATH");
	v->data = cctl_xcalloc(bytes / sizeof(wchar_t) + 2, sizeof(wchar_t));
	rc = RegQueryValueExW(key, name, NULL, &type, (BYTE *)v->data, &bytes);
	if (rc != ERROR_SUCCESS) {
		value_release(v);
		return cctl_win_error(ctx, (DWORD)rc, "read", "PATH");
	}
	v->exists = 1;
	v->type = type;
	v->bytes = bytes;
	return 0;
}

static int is_string(const struct reg_value *v)
{
	return v->type == REG_SZ || v->type == REG_EXPAND_SZ;
}

/* Every registry change is a kill point for the tests. */
static void delete_value(HKEY key, const wchar_t *name)
{
	cctl_os_kill_point();
	RegDeleteValueW(key, name);
}

static int write_string(struct cctl_ctx *ctx, HKEY key, const wchar_t *name,
			DWORD type, const wchar_t *text)
{
	/* the byte count includes the terminating NUL */
	DWORD bytes = (DWORD)((wcslen(text) + 1) * sizeof(wchar_t));
	struct reg_value back;
	LONG rc;
	cctl_os_kill_point();
	rc = RegSetValueExW(key, name, 0, type, (const BYTE *)text, bytes);
	int ret;
	if (rc != ERROR_SUCCESS)
		return cctl_win_error(ctx, (DWORD)rc, "write", "PATH");
	if ((ret = read_value(ctx, key, name, &back)))
		return ret;
	ret = !back.exists || back.type != type || wcscmp(back.data, text)
		      ? cctl__error(ctx, CCTL_EACTIVATE,
				    "the registry did not keep the new PATH")
		      : 0;
	value_release(&back);
	return ret;
}

static void broadcast(void)
{
	DWORD_PTR result;
	SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0,
			    (LPARAM)L"Environment", SMTO_ABORTIFHUNG, 5000,
			    &result);
}

static int save_backup(struct cctl_ctx *ctx, const char *root,
		       const struct scope *s, const struct reg_value *v);

/* One cudnnctl at a time edits the environment: two changing the PATH
 * for different roots at once lost one's entry (each read the value before
 * the other wrote it).  NULL when no mutex can be had: then it goes on. */
static HANDLE env_lock(void)
{
	HANDLE m = CreateMutexW(NULL, FALSE, L"Global\\cudnnctl-environment");
	DWORD w;
	if (!m)
		m = CreateMutexW(NULL, FALSE, L"Local\\cudnnctl-environment");
	if (!m)
		return NULL;
	w = WaitForSingleObject(m, 120000);
	if (w != WAIT_OBJECT_0 && w != WAIT_ABANDONED) {
		CloseHandle(m);
		return NULL;
	}
	return m;
}

static void env_unlock(HANDLE m)
{
	if (m) {
		ReleaseMutex(m);
		CloseHandle(m);
	}
}

/* An entry as Windows expands it (%VAR%), for cctl_pathvalue_edit. */
static wchar_t *expand_entry(const wchar_t *e, size_t n)
{
	wchar_t *raw = cctl_xcalloc(n + 1, sizeof(wchar_t)), *out = NULL;
	DWORD need;
	memcpy(raw, e, n * sizeof(wchar_t));
	need = ExpandEnvironmentStringsW(raw, NULL, 0);
	if (need) {
		out = cctl_xcalloc(need + 1, sizeof(wchar_t));
		if (!ExpandEnvironmentStringsW(raw, out, need)) {
			free(out);
			out = NULL;
		}
	}
	free(raw);
	return out;
}

/* %SystemRoot% ("C:\Windows"): in the machine PATH cudnnctl's entry goes
 * after the entries under it, so that no folder of the root comes before
 * the system's own (free()). */
static wchar_t *system_root(void)
{
	wchar_t buf[MAX_PATH + 1];
	UINT n = GetSystemWindowsDirectoryW(buf, MAX_PATH);
	return n && n < MAX_PATH ? _wcsdup(buf) : NULL;
}

static wchar_t *edited(const wchar_t *old, const wchar_t *root,
		       const wchar_t *add, const struct scope *s)
{
	wchar_t *sys = add && s->hive == HKEY_LOCAL_MACHINE ? system_root() : NULL;
	const struct cctl_pathvalue_edit e = { root, add, sys, expand_entry };
	wchar_t *v = cctl_pathvalue_edit(old, &e);
	free(sys);
	return v;
}

/* <root>\<what>-backup-<scope>.txt: "missing", "other", or the type and the
 * raw value. */
static char *backup_file(const char *root, const char *what,
			 const struct scope *s)
{
	return cctl_xstrfmt("%s\\%s-backup-%s.txt", root, what, s->name);
}

static void backup_text(struct cctl_buf *text, const struct reg_value *v)
{
	if (!v->exists) {
		cctl_buf_adds(text, "missing\n");
	} else if (is_string(v)) {
		char *u = cctl_win_narrow(v->data);
		cctl_buf_addf(text, "%s\n%s", v->type == REG_SZ ? "REG_SZ"
								: "REG_EXPAND_SZ",
			      u);
		free(u);
	} else {
		cctl_buf_adds(text, "other\n");
	}
}

/* A CUDNN_PATH that is not this root's, about to be replaced: kept (the
 * first one only), and said. */
static int save_cudnn_path(struct cctl_ctx *ctx, const char *root,
			   const struct scope *s, const struct reg_value *v,
			   const wchar_t *wroot)
{
	char *path = backup_file(root, "cudnn-path", s), *u;
	struct cctl_buf text = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	int ret = 0;
	if (!v->exists || !is_string(v) || cctl_pathvalue_under(v->data, wroot) ||
	    cctl_os_stat(NULL, path, &st) || st.type != CCTL_OS_NONE)
		goto out;
	backup_text(&text, v);
	if ((ret = cctl_os_write_file_atomic(ctx, path, text.buf, text.len)))
		goto out;
	u = cctl_win_narrow(v->data);
	cctl__warn(ctx, "the %s CUDNN_PATH was '%s'; cudnnctl saved it and puts "
			"it back on deactivate and path restore",
		   s->name, u ? u : "");
	free(u);
out:
	free(path);
	cctl_buf_release(&text);
	return ret;
}

/* CUDNN_PATH when it is this root's: the saved one put back, else none. */
static void restore_cudnn_path(const char *root, const struct scope *s,
			       HKEY key, const wchar_t *wroot)
{
	struct reg_value cur = { 0 };
	char *path = backup_file(root, "cudnn-path", s);
	struct cctl_buf text = CCTL_BUF_INIT;
	if (read_value(NULL, key, L"CUDNN_PATH", &cur) || !cur.exists ||
	    !is_string(&cur) || !cctl_pathvalue_under(cur.data, wroot))
		goto out;
	if (!cctl_os_read_file(NULL, path, &text) && text.buf &&
	    (!strncmp(text.buf, "REG_SZ\n", 7) ||
	     !strncmp(text.buf, "REG_EXPAND_SZ\n", 14))) {
		int sz = !strncmp(text.buf, "REG_SZ\n", 7);
		wchar_t *w = cctl_win_wide(text.buf + (sz ? 7 : 14));
		cctl_os_kill_point();
		if (RegSetValueExW(key, L"CUDNN_PATH", 0, sz ? REG_SZ : REG_EXPAND_SZ,
				   (const BYTE *)w,
				   (DWORD)((wcslen(w) + 1) * sizeof(wchar_t))) ==
		    ERROR_SUCCESS)
			cctl_os_unlink(NULL, path);
		free(w);
	} else {
		delete_value(key, L"CUDNN_PATH");
	}
out:
	value_release(&cur);
	free(path);
	cctl_buf_release(&text);
}

/* The three longest entries of v, to say what makes PATH too long. */
static void longest_entries(const wchar_t *v, char *out, size_t n)
{
	const wchar_t *at[3];
	size_t len[3];
	int count = cctl_pathvalue_longest(v, at, len);
	out[0] = '\0';
	for (int i = 0; i < count; i++) {
		wchar_t *e = cctl_xcalloc(len[i] + 1, sizeof(wchar_t));
		char *u;
		size_t used = strlen(out);
		memcpy(e, at[i], len[i] * sizeof(wchar_t));
		u = cctl_win_narrow(e);
		snprintf(out + used, n - used, "%s'%s' (%zu)", i ? ", " : "", u,
			 len[i]);
		free(u);
		free(e);
	}
}

static int save_backup(struct cctl_ctx *ctx, const char *root,
		       const struct scope *s, const struct reg_value *v)
{
	char *path = backup_file(root, "path", s);
	struct cctl_buf text = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	int ret;
	if ((ret = cctl_os_stat(ctx, path, &st)) || st.type != CCTL_OS_NONE)
		goto out; /* only the state before the first change is kept */
	backup_text(&text, v);
	ret = cctl_os_write_file_atomic(ctx, path, text.buf, text.len);
out:
	free(path);
	cctl_buf_release(&text);
	return ret;
}

static wchar_t *root_w(const char *root)
{
	return cctl_win_wpath(root);
}

/* The folder of an install's DLLs when it is not bin: bin\x64 (9.23 and
 * later) or bin\arm64 (windows-arm64), this machine's first; NULL for
 * bin itself (free()). */
static char *dll_dir(const char *active_dir)
{
	const char *alts[] = { cctl_platform_host()->lib_alt,
			       cctl_platform_find("windows-x86_64")->lib_alt,
			       cctl_platform_find("windows-arm64")->lib_alt };
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(alts); i++) {
		struct cctl_os_stat st;
		char *d;
		if (!alts[i])
			continue;
		d = cctl_path_join(active_dir, alts[i], NULL);
		if (!cctl_os_stat(NULL, d, &st) && st.type == CCTL_OS_DIR)
			return d;
		free(d);
	}
	return NULL;
}

int cctl_os_env_persist(struct cctl_ctx *ctx, const char *root,
			const char *active_dir, unsigned flags)
{
	struct scope s = scope_of(flags);
	struct reg_value path = { 0 }, cudnn = { 0 };
	char *bin = cctl_path_join(active_dir, "bin", NULL);
	char *bin64 = dll_dir(active_dir);
	wchar_t *wroot = root_w(root), *wbin, *wdir = cctl_win_wpath(active_dir);
	wchar_t *next = NULL;
	HKEY key = NULL;
	HANDLE lock = env_lock();
	int ret;

	wbin = cctl_win_wpath(bin64 ? bin64 : bin);
	if ((ret = open_key(ctx, &s, KEY_READ | KEY_WRITE, &key)))
		goto out;
	if ((ret = read_value(ctx, key, L"Path", &path)) ||
	    (ret = read_value(ctx, key, L"CUDNN_PATH", &cudnn)))
		goto out;
	if (path.exists && !is_string(&path)) {
		cctl__warn(ctx,
			   "the %s PATH in the registry is not a string (type "
			   "%lu); it was left untouched, so new processes will "
			   "not find cuDNN through it",
			   s.name, (unsigned long)path.type);
	} else {
		next = edited(path.exists ? path.data : NULL, wroot, wbin, &s);
		if (wcslen(next) > PATH_LIMIT) {
			char longest[700];
			/* the entries to shorten: not cudnnctl's own */
			wchar_t *others = edited(path.exists ? path.data : NULL,
						 wroot, NULL, &s);
			longest_entries(others, longest, sizeof(longest));
			free(others);
			ret = cctl__error(ctx, CCTL_EACTIVATE,
					  "the %s PATH would have %zu characters, "
					  "over the %d that Windows' dialogs and "
					  "many tools handle; nothing was changed",
					  s.name, wcslen(next), PATH_LIMIT);
			cctl__hint(ctx, "shorten PATH first; its longest entries: "
					"%s",
				   longest);
			goto out;
		}
		if ((ret = save_backup(ctx, root, &s, &path)))
			goto out;
		if (!path.exists || wcscmp(path.data, next)) {
			if ((ret = write_string(ctx, key, L"Path", REG_EXPAND_SZ,
						next)))
				goto restore;
			/* the same install was active already: what changed
			 * was a repair, and "already active" alone would hide
			 * it */
			if (cudnn.exists && is_string(&cudnn) &&
			    !wcscmp(cudnn.data, wdir))
				cctl__warn(ctx, "the %s PATH did not have the active "
						"install first (an edit, another "
						"installer?): put it back",
					   s.name);
		}
	}
	if (!cudnn.exists || wcscmp(cudnn.data, wdir)) {
		if ((ret = save_cudnn_path(ctx, root, &s, &cudnn, wroot)) ||
		    (ret = write_string(ctx, key, L"CUDNN_PATH", REG_SZ, wdir)))
			goto restore;
	}
	broadcast();
	goto out;
restore:
	/* put back what was there */
	if (path.exists && is_string(&path))
		RegSetValueExW(key, L"Path", 0, path.type, (const BYTE *)path.data,
			       path.bytes);
	if (cudnn.exists)
		RegSetValueExW(key, L"CUDNN_PATH", 0, cudnn.type,
			       (const BYTE *)cudnn.data, cudnn.bytes);
	else
		delete_value(key, L"CUDNN_PATH");
out:
	if (key)
		RegCloseKey(key);
	env_unlock(lock);
	value_release(&path);
	value_release(&cudnn);
	free(next);
	free(bin);
	free(bin64);
	free(wroot);
	free(wbin);
	free(wdir);
	return ret;
}

static int unpersist_scope(struct cctl_ctx *ctx, const char *root,
			   unsigned flags)
{
	struct scope s = scope_of(flags);
	struct reg_value path = { 0 }, cudnn = { 0 };
	wchar_t *wroot = root_w(root), *next = NULL;
	HKEY key = NULL;
	HANDLE lock = env_lock();
	LONG rc;
	int ret, ours;

	/* read first: a scope that names nothing of this root needs no
	 * write access (a user's prompt and the machine's environment) */
	rc = RegOpenKeyExW(s.hive, s.key, 0, KEY_READ, &key);
	if (rc != ERROR_SUCCESS) {
		ret = 0; /* no key: nothing of ours can be there */
		goto out;
	}
	if ((ret = read_value(ctx, key, L"Path", &path)) ||
	    (ret = read_value(ctx, key, L"CUDNN_PATH", &cudnn)))
		goto out;
	if (path.exists && is_string(&path))
		next = edited(path.data, wroot, NULL, &s);
	ours = (next && wcscmp(next, path.data)) ||
	       (cudnn.exists && is_string(&cudnn) &&
		cctl_pathvalue_under(cudnn.data, wroot));
	RegCloseKey(key);
	key = NULL;
	if (!ours)
		goto out;
	/* it names this root: changed, or told why not (the machine's
	 * environment from a prompt that is not elevated) */
	if ((ret = open_key(ctx, &s, KEY_READ | KEY_WRITE, &key))) {
		if (ret == CCTL_EACTIVATE) {
			cctl__error(ctx, CCTL_EACTIVATE,
				    "the %s environment names '%s', and "
				    "changing it needs administrator rights",
				    s.name, root);
			cctl__hint(ctx, "run the command again from an "
					"elevated prompt");
		}
		goto out;
	}
	if (next && !*next && *path.data) {
		/* ours was the only entry: no PATH is the same as an empty
		 * one, and the usual state before cudnnctl */
		delete_value(key, L"Path");
	} else if (next && wcscmp(next, path.data) &&
		   (ret = write_string(ctx, key, L"Path", path.type, next))) {
		goto out;
	}
	/* CUDNN_PATH is ours when it names a folder of this root: the one
	 * it replaced comes back */
	restore_cudnn_path(root, &s, key, wroot);
	broadcast();
out:
	if (key)
		RegCloseKey(key);
	env_unlock(lock);
	value_release(&path);
	value_release(&cudnn);
	free(next);
	free(wroot);
	return ret;
}

/* Both scopes, each when it names this root: the machine's first (the one
 * that may lack the rights, so that a refusal changes nothing), whether
 * or not the process is elevated.  Before, only when it was: a
 * deactivate from a prompt that was not elevated said "deactivated" and
 * left the machine PATH naming the version. */
int cctl_os_env_unpersist(struct cctl_ctx *ctx, const char *root)
{
	int ret = unpersist_scope(ctx, root, CCTL_ACT_SYSTEM);
	return ret ? ret : unpersist_scope(ctx, root, 0);
}

/* The entries of a that b lacks (compared as Windows does), "'x', 'y'". */
static void entries_missing(const wchar_t *a, const wchar_t *b,
			    struct cctl_buf *out)
{
	for (const wchar_t *p = a; p && *p;) {
		size_t n = wcscspn(p, L";");
		int found = 0;
		for (const wchar_t *q = b; q && *q && !found;) {
			size_t m = wcscspn(q, L";");
			found = m && cctl_pathvalue_same(p, n, q, m);
			q += m + (q[m] ? 1 : 0);
		}
		if (n && !found) {
			wchar_t *e = cctl_xcalloc(n + 1, sizeof(wchar_t));
			char *u;
			memcpy(e, p, n * sizeof(wchar_t));
			u = cctl_win_narrow(e);
			cctl_buf_addf(out, "%s'%s'", out->len ? ", " : "", u ? u : "");
			free(u);
			free(e);
		}
		p += n + (p[n] ? 1 : 0);
	}
}

int cctl_os_path_restore(struct cctl_ctx *ctx, const char *root,
			 unsigned flags)
{
	struct scope s = scope_of(flags);
	char *file = backup_file(root, "path", &s);
	struct cctl_buf text = CCTL_BUF_INIT, added = CCTL_BUF_INIT;
	struct reg_value today = { 0 };
	wchar_t *wroot = root_w(root), *saved = NULL, *cleaned = NULL;
	HANDLE lock = NULL;
	HKEY key = NULL;
	DWORD saved_type = REG_EXPAND_SZ;
	char *nl;
	int ret;

	if ((ret = cctl_os_read_file(ctx, file, &text))) {
		ret = cctl__error(ctx, CCTL_ENOTFOUND,
				  "no backup of the %s PATH in '%s': cudnnctl "
				  "never changed it from this root",
				  s.name, root);
		goto out;
	}
	lock = env_lock();
	if ((ret = open_key(ctx, &s, KEY_READ | KEY_WRITE, &key)) ||
	    (ret = read_value(ctx, key, L"Path", &today)))
		goto out;
	nl = strchr(text.buf, '\n');
	if (!strncmp(text.buf, "other", 5) || !nl ||
	    (today.exists && !is_string(&today))) {
		/* a PATH that was not a string was never touched */
		goto done;
	}
	if (strncmp(text.buf, "missing", 7)) {
		saved = cctl_win_wide(nl + 1);
		if (!strncmp(text.buf, "REG_SZ\n", 7))
			saved_type = REG_SZ;
	}
	/* today's value less this root's entries: what other installers
	 * added since stays */
	cleaned = edited(today.exists ? today.data : NULL, wroot, NULL, &s);
	entries_missing(cleaned, saved, &added);
	if (added.len && !(flags & CCTL_ACT_FORCE)) {
		cctl__warn(ctx, "kept the entries added to the %s PATH since "
				"cudnnctl first changed it: %s (--force puts the "
				"saved value back exactly, without them)",
			   s.name, added.buf);
		if (!*cleaned)
			delete_value(key, L"Path");
		else if ((ret = write_string(ctx, key, L"Path",
					     today.exists ? today.type : REG_EXPAND_SZ,
					     cleaned)))
			goto out;
	} else {
		if (added.len)
			cctl__warn(ctx, "dropped the entries added to the %s PATH "
					"since cudnnctl first changed it: %s",
				   s.name, added.buf);
		/* nothing else changed: the saved value, byte for byte */
		if (!saved)
			delete_value(key, L"Path");
		else if ((ret = write_string(ctx, key, L"Path", saved_type, saved)))
			goto out;
	}
done:
	restore_cudnn_path(root, &s, key, wroot);
	broadcast();
out:
	if (key)
		RegCloseKey(key);
	env_unlock(lock);
	value_release(&today);
	free(file);
	free(wroot);
	free(saved);
	free(cleaned);
	cctl_buf_release(&text);
	cctl_buf_release(&added);
	return ret;
}

int cctl_os_path_retire(struct cctl_ctx *ctx, const char *root,
			unsigned flags)
{
	struct scope s = scope_of(flags);
	char *file = backup_file(root, "path", &s);
	int ret = cctl_os_unlink(ctx, file);
	free(file);
	return ret;
}

static void append_expanded(struct cctl_buf *out, const wchar_t *raw)
{
	DWORD n = ExpandEnvironmentStringsW(raw, NULL, 0);
	wchar_t *w = cctl_xcalloc(n + 1, sizeof(wchar_t));
	char *u;
	ExpandEnvironmentStringsW(raw, w, n + 1);
	u = cctl_win_narrow(w);
	if (out->len && *u)
		cctl_buf_addch(out, ';');
	cctl_buf_adds(out, u);
	free(u);
	free(w);
}

int cctl_os_session_path_parts(struct cctl_ctx *ctx, struct cctl_buf *machine,
			       struct cctl_buf *user)
{
	struct scope ms = scope_of(CCTL_ACT_SYSTEM), us = scope_of(0);
	struct reg_value v;
	HKEY key;
	(void)ctx;
	if (RegOpenKeyExW(ms.hive, ms.key, 0, KEY_READ, &key) == ERROR_SUCCESS) {
		if (!read_value(ctx, key, L"Path", &v) && v.exists && is_string(&v))
			append_expanded(machine, v.data);
		value_release(&v);
		RegCloseKey(key);
	}
	if (RegOpenKeyExW(us.hive, us.key, 0, KEY_READ, &key) == ERROR_SUCCESS) {
		if (!read_value(ctx, key, L"Path", &v) && v.exists && is_string(&v))
			append_expanded(user, v.data);
		value_release(&v);
		RegCloseKey(key);
	}
	return 0;
}

int cctl_os_session_path(struct cctl_ctx *ctx, struct cctl_buf *out)
{
	struct cctl_buf m = CCTL_BUF_INIT, u = CCTL_BUF_INIT;
	cctl_os_session_path_parts(ctx, &m, &u);
	cctl_buf_add(out, m.buf, m.len);
	if (m.len && u.len)
		cctl_buf_addch(out, ';');
	cctl_buf_add(out, u.buf, u.len);
	cctl_buf_release(&m);
	cctl_buf_release(&u);
	return 0;
}

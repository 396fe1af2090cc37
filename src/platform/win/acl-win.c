/*
 * Who may write a folder of a machine-wide root (Windows): its DACL read
 * and judged, and the DACL cudnnctl gives a root it makes for the machine.
 *
 * A folder an administrator creates under C:\ inherits "Authenticated
 * Users: Modify": any local user could then put a DLL where every user's
 * and SYSTEM's programs look (the C:\PythonXY hole).  A machine root gets
 * a protected DACL instead: Administrators and SYSTEM full control, Users
 * read and execute, inherited by everything below.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include <stdlib.h>
#include <string.h>

#include "../../core/internal.h"
#include "../os.h"
#include "win.h"

#define MACHINE_ROOT_SDDL                                                      \
	L"D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)"

/* Rights that change what is in a folder or who may. */
#define WRITE_RIGHTS                                                           \
	(FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA |                  \
	 FILE_WRITE_ATTRIBUTES | FILE_DELETE_CHILD | DELETE | WRITE_DAC |      \
	 WRITE_OWNER | GENERIC_WRITE | GENERIC_ALL)

/* The account this process runs as (an administrator: the machine's
 * environment key let it write), or NULL (free()). */
static PSID process_user(void)
{
	HANDLE tok;
	DWORD n = 0;
	TOKEN_USER *tu;
	PSID sid = NULL;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return NULL;
	GetTokenInformation(tok, TokenUser, NULL, 0, &n);
	tu = n ? cctl_xmalloc(n) : NULL;
	if (tu && GetTokenInformation(tok, TokenUser, tu, n, &n)) {
		DWORD len = GetLengthSid(tu->User.Sid);
		sid = cctl_xmalloc(len);
		CopySid(len, sid, tu->User.Sid);
	}
	free(tu);
	CloseHandle(tok);
	return sid;
}

/* The administrator's own: SYSTEM, Administrators, TrustedInstaller,
 * CREATOR OWNER (it stands for whoever creates a file, who needed another
 * right to do so), and the administrator running this. */
static int admin_sid(PSID sid)
{
	static PSID me;
	static int asked;
	static const WELL_KNOWN_SID_TYPE ok[] = { WinLocalSystemSid,
						  WinBuiltinAdministratorsSid,
						  WinCreatorOwnerSid };
	LPWSTR text = NULL;
	int yes = 0;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (IsWellKnownSid(sid, ok[i]))
			return 1;
	if (!asked++)
		me = process_user();
	if (me && EqualSid(sid, me))
		return 1;
	if (ConvertSidToStringSidW(sid, &text)) {
		yes = !wcscmp(text, L"S-1-5-80-956008885-3418522649-1831038044-"
				    L"1853292631-2271478464");
		LocalFree(text);
	}
	return yes;
}

static void sid_name(PSID sid, struct cctl_buf *out)
{
	wchar_t name[256], domain[256];
	DWORD nn = 256, dn = 256;
	SID_NAME_USE use;
	LPWSTR text = NULL;
	if (LookupAccountSidW(NULL, sid, name, &nn, domain, &dn, &use)) {
		char *n = cctl_win_narrow(name), *d = cctl_win_narrow(domain);
		cctl_buf_addf(out, "'%s%s%s'", d && *d ? d : "", d && *d ? "\\" : "",
			      n ? n : "");
		free(n);
		free(d);
	} else if (ConvertSidToStringSidW(sid, &text)) {
		char *t = cctl_win_narrow(text);
		cctl_buf_addf(out, "'%s'", t ? t : "?");
		free(t);
		LocalFree(text);
	} else {
		cctl_buf_adds(out, "an unknown account");
	}
}

int cctl_os_foreign_writable(const char *path, int admin_only, int *sticky,
			     struct cctl_buf *why)
{
	wchar_t *w;
	PSECURITY_DESCRIPTOR sd = NULL;
	PACL dacl = NULL;
	PSID owner = NULL;
	BOOL present, defaulted;
	DWORD rc;
	int foreign = 0;
	*sticky = 0;
	/* a user's own root is the user's: only the machine's is judged */
	if (!admin_only)
		return 0;
	w = cctl_win_wpath(path);
	rc = GetNamedSecurityInfoW(w, SE_FILE_OBJECT,
				   DACL_SECURITY_INFORMATION |
					   OWNER_SECURITY_INFORMATION,
				   &owner, NULL, &dacl, NULL, &sd);
	free(w);
	if (rc != ERROR_SUCCESS)
		return 0; /* missing, or nothing to read it with */
	if (owner && !admin_sid(owner)) {
		cctl_buf_adds(why, "is owned by ");
		sid_name(owner, why);
		foreign = 1;
	} else if (!GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted) ||
		   !present || !dacl) {
		cctl_buf_adds(why, "has no access list: every user can write it");
		foreign = 1;
	} else {
		for (DWORD i = 0; i < dacl->AceCount && !foreign; i++) {
			ACE_HEADER *h;
			ACCESS_ALLOWED_ACE *a;
			if (!GetAce(dacl, i, (void **)&h) ||
			    h->AceType != ACCESS_ALLOWED_ACE_TYPE ||
			    (h->AceFlags & INHERIT_ONLY_ACE))
				continue;
			a = (ACCESS_ALLOWED_ACE *)h;
			if (!(a->Mask & WRITE_RIGHTS) || admin_sid(&a->SidStart))
				continue;
			cctl_buf_adds(why, "can be written by ");
			sid_name(&a->SidStart, why);
			cctl_buf_addf(why, " (access mask 0x%lx)",
				      (unsigned long)a->Mask);
			foreign = 1;
		}
	}
	LocalFree(sd);
	return foreign;
}

int cctl_os_protect_machine_root(struct cctl_ctx *ctx, const char *path)
{
	PSECURITY_DESCRIPTOR sd = NULL;
	PACL dacl = NULL;
	BOOL present, defaulted;
	wchar_t *w;
	DWORD rc;
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(
		    MACHINE_ROOT_SDDL, SDDL_REVISION_1, &sd, NULL) ||
	    !GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted))
		return cctl_win_error(ctx, GetLastError(), "make the access list for",
				      path);
	w = cctl_win_wpath(path);
	/* protected: nothing inherited from C:\; what is below inherits */
	rc = SetNamedSecurityInfoW(w, SE_FILE_OBJECT,
				   DACL_SECURITY_INFORMATION |
					   PROTECTED_DACL_SECURITY_INFORMATION,
				   NULL, NULL, dacl, NULL);
	free(w);
	LocalFree(sd);
	if (rc != ERROR_SUCCESS)
		return cctl_win_error(ctx, rc, "set who may write", path);
	return 0;
}

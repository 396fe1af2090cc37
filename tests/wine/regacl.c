/* For test_wine.py: reads and sets the DACL of a key under
 * HKEY_LOCAL_MACHINE, as SDDL, so that a test can take away the write
 * access an administrator has (Wine checks registry ACLs); and of a file
 * or folder (the DACL cudnnctl gives a machine-wide root).
 *
 *   regacl get KEY          prints the DACL, e.g. D:(A;;KA;;;BA)
 *   regacl set KEY SDDL     replaces it
 *   regacl getfile PATH     prints a file's or folder's DACL
 *   regacl setfile PATH SDDL  replaces it (protected when SDDL says P)
 */
#include <aclapi.h>
#include <windows.h>
#include <sddl.h>
#include <stdio.h>

static int file_acl(int argc, wchar_t **argv)
{
	PSECURITY_DESCRIPTOR sd = NULL;
	PACL dacl = NULL;
	BOOL present, defaulted;
	DWORD rc;
	if (argc == 3 && !wcscmp(argv[1], L"getfile")) {
		LPWSTR text;
		rc = GetNamedSecurityInfoW(argv[2], SE_FILE_OBJECT,
					   DACL_SECURITY_INFORMATION, NULL, NULL,
					   &dacl, NULL, &sd);
		if (rc != ERROR_SUCCESS ||
		    !ConvertSecurityDescriptorToStringSecurityDescriptorW(
			    sd, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &text,
			    NULL)) {
			fprintf(stderr, "regacl: getfile failed: %lu\n", rc);
			return 1;
		}
		wprintf(L"%ls\n", text);
		LocalFree(text);
		LocalFree(sd);
		return 0;
	}
	if (argc == 4 && !wcscmp(argv[1], L"setfile")) {
		SECURITY_DESCRIPTOR_CONTROL ctl = 0;
		DWORD rev;
		if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(
			    argv[3], SDDL_REVISION_1, &sd, NULL) ||
		    !GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted)) {
			fprintf(stderr, "regacl: bad SDDL\n");
			return 1;
		}
		GetSecurityDescriptorControl(sd, &ctl, &rev);
		rc = SetNamedSecurityInfoW(argv[2], SE_FILE_OBJECT,
					   DACL_SECURITY_INFORMATION |
						   ((ctl & SE_DACL_PROTECTED)
							    ? PROTECTED_DACL_SECURITY_INFORMATION
							    : UNPROTECTED_DACL_SECURITY_INFORMATION),
					   NULL, NULL, dacl, NULL);
		LocalFree(sd);
		if (rc != ERROR_SUCCESS) {
			fprintf(stderr, "regacl: setfile failed: %lu\n", rc);
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "usage: regacl getfile PATH | setfile PATH SDDL\n");
	return 2;
}

int wmain(int argc, wchar_t **argv)
{
	HKEY key;
	LONG rc;
	int ret = 2;

	if (argc < 3)
		goto usage;
	if (!wcscmp(argv[1], L"getfile") || !wcscmp(argv[1], L"setfile"))
		return file_acl(argc, argv);
	rc = RegOpenKeyExW(HKEY_LOCAL_MACHINE, argv[2], 0,
			   READ_CONTROL | WRITE_DAC, &key);
	if (rc != ERROR_SUCCESS) {
		fprintf(stderr, "regacl: cannot open the key: error %ld\n", rc);
		return 1;
	}
	if (argc == 3 && !wcscmp(argv[1], L"get")) {
		static char sd[8192];
		DWORD n = sizeof(sd);
		LPWSTR text;
		ret = 1;
		rc = RegGetKeySecurity(key, DACL_SECURITY_INFORMATION, sd, &n);
		if (rc == ERROR_SUCCESS &&
		    ConvertSecurityDescriptorToStringSecurityDescriptorW(
			    sd, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &text,
			    NULL)) {
			wprintf(L"%ls\n", text);
			LocalFree(text);
			ret = 0;
		}
	} else if (argc == 4 && !wcscmp(argv[1], L"set")) {
		PSECURITY_DESCRIPTOR sd;
		ret = 1;
		if (ConvertStringSecurityDescriptorToSecurityDescriptorW(
			    argv[3], SDDL_REVISION_1, &sd, NULL)) {
			rc = RegSetKeySecurity(key, DACL_SECURITY_INFORMATION, sd);
			ret = rc != ERROR_SUCCESS;
			LocalFree(sd);
		}
	}
	RegCloseKey(key);
	if (ret == 1)
		fprintf(stderr, "regacl: %ls failed\n", argv[1]);
	if (ret != 2)
		return ret;
usage:
	fprintf(stderr, "usage: regacl get KEY | set KEY SDDL\n");
	return 2;
}

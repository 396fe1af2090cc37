/* For the HTTPS tests under Wine: puts a CA certificate into the current
 * user's Root store through CryptoAPI, the way certutil -user -addstore
 * does, or takes it out.  The user's store, not the local machine's: Wine
 * 10's WinHTTP builds its chains without the local machine's Root store
 * (a blob in HKLM's store key, which Wine 8 honoured, and the same added
 * through CryptoAPI both fail there with "couldn't find issuer"), where
 * Windows' user Root store takes in the machine's.  (Windows asks the
 * user to confirm an addition to their Root store; Wine does not.)
 *
 *   rootca add FILE.pem      adds it (replacing the same certificate)
 *   rootca remove FILE.pem   deletes it; absent is fine
 */
#include <windows.h>
#include <wincrypt.h>
#include <stdio.h>
#include <string.h>

static BYTE *read_der(const wchar_t *path, DWORD *n)
{
	static char pem[65536];
	BYTE *der;
	DWORD got = 0;
	HANDLE h = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ, NULL,
			       OPEN_EXISTING, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	if (!ReadFile(h, pem, sizeof(pem) - 1, &got, NULL))
		got = 0;
	CloseHandle(h);
	pem[got] = 0;
	*n = 0;
	if (!got || !CryptStringToBinaryA(pem, got, CRYPT_STRING_BASE64HEADER,
					  NULL, n, NULL, NULL))
		return NULL;
	der = HeapAlloc(GetProcessHeap(), 0, *n);
	if (der && !CryptStringToBinaryA(pem, got, CRYPT_STRING_BASE64HEADER,
					 der, n, NULL, NULL))
		der = NULL;
	return der;
}

int wmain(int argc, wchar_t **argv)
{
	HCERTSTORE store;
	PCCERT_CONTEXT cert, found;
	BYTE *der;
	DWORD n;
	BOOL ok;
	if (argc != 3 || (wcscmp(argv[1], L"add") && wcscmp(argv[1], L"remove"))) {
		fprintf(stderr, "usage: rootca add|remove FILE.pem\n");
		return 2;
	}
	if (!(der = read_der(argv[2], &n))) {
		fprintf(stderr, "rootca: cannot read a PEM certificate (%lu)\n",
			GetLastError());
		return 1;
	}
	store = CertOpenStore(CERT_STORE_PROV_SYSTEM_W, 0, 0,
			      CERT_SYSTEM_STORE_CURRENT_USER, L"Root");
	if (!store) {
		fprintf(stderr, "rootca: cannot open the Root store (%lu)\n",
			GetLastError());
		return 1;
	}
	if (!wcscmp(argv[1], L"add")) {
		ok = CertAddEncodedCertificateToStore(store, X509_ASN_ENCODING,
						      der, n,
						      CERT_STORE_ADD_REPLACE_EXISTING,
						      NULL);
	} else {
		ok = (cert = CertCreateCertificateContext(X509_ASN_ENCODING, der,
							  n)) != NULL;
		found = ok ? CertFindCertificateInStore(store, X509_ASN_ENCODING, 0,
							CERT_FIND_EXISTING, cert, NULL)
			   : NULL;
		if (found)
			ok = CertDeleteCertificateFromStore(found);
		if (cert)
			CertFreeCertificateContext(cert);
	}
	if (!ok)
		fprintf(stderr, "rootca: %ls failed (%lu)\n", argv[1], GetLastError());
	CertCloseStore(store, 0);
	return ok ? 0 : 1;
}

#!/bin/sh
# Authenticode-signs a Windows program in place, on Linux: what signtool
# sign /fd SHA256 does on Windows, with osslsigncode (Debian's package).
#
# Usage: scripts/sign-windows.sh EXE
#   CUDNNCTL_SIGN_PFX        the code-signing certificate with its key and
#                            chain (PKCS#12)
#   CUDNNCTL_SIGN_PASSWORD   its password (may be empty); never on a
#                            command line (a file only this user reads)
#   CUDNNCTL_SIGN_TIMESTAMP  an RFC 3161 timestamp server's URL (optional:
#                            without one the signature is valid only while
#                            the certificate is)
# scripts/release.sh calls it when CUDNNCTL_SIGN_PFX is set. EXE is
# replaced only by a signed copy that osslsigncode has read back; on any
# failure it is left as it was and the exit status is 1.
set -eu
exe=${1:?usage: scripts/sign-windows.sh EXE}
pfx=${CUDNNCTL_SIGN_PFX:?scripts/sign-windows.sh: CUDNNCTL_SIGN_PFX names no certificate}
say() { echo "sign-windows: $*" >&2; }
[ -f "$exe" ] || { say "no file '$exe'"; exit 1; }
[ -r "$pfx" ] || { say "cannot read the certificate '$pfx' (CUDNNCTL_SIGN_PFX)"; exit 1; }
if ! command -v osslsigncode >/dev/null; then
	[ "$(id -u)" = 0 ] || { say "osslsigncode not found (apt-get install osslsigncode)"; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq osslsigncode >/dev/null ||
		{ say "cannot install osslsigncode"; exit 1; }
fi
work=$(mktemp -d "$(dirname "$exe")/.sign.XXXXXX")
trap 'rm -rf "$work"' EXIT
umask 077
printf '%s' "${CUDNNCTL_SIGN_PASSWORD:-}" >"$work/pass"
if ! osslsigncode sign -pkcs12 "$pfx" -readpass "$work/pass" -h sha256 \
	-n cudnnctl -i https://github.com/cudnnctl/cudnnctl \
	${CUDNNCTL_SIGN_TIMESTAMP:+-ts "$CUDNNCTL_SIGN_TIMESTAMP"} \
	-in "$exe" -out "$work/signed.exe" >"$work/log" 2>&1; then
	sed 's/^/sign-windows: /' "$work/log" >&2
	say "signing '$exe' failed (the certificate, its password?); it is unsigned"
	exit 1
fi
# read back: one signature, over this file's digest (the chain's trust is
# the verifier's business)
if ! osslsigncode extract-signature -in "$work/signed.exe" -out "$work/sig" >/dev/null 2>&1; then
	say "the signed copy of '$exe' holds no signature"
	exit 1
fi
chmod 755 "$work/signed.exe"
mv "$work/signed.exe" "$exe"
say "signed '$exe'"

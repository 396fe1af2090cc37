#!/bin/sh
# Makes a folder that runs on another glibc Linux machine without the
# build's libraries installed: dist/cudnnctl-linux/{cudnnctl,lib/}, the
# binary's RUNPATH set to $ORIGIN/lib.  glibc, libcrypto, libz and liblzma
# are left to the target machine (they are on every Debian and Ubuntu).
# Needs patchelf.  Usage: scripts/bundle-linux.sh [BUILD_DIR] [OUT_DIR]
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
out=${2:-$repo/dist/cudnnctl-linux}
rm -rf "$out"
mkdir -p "$out/lib"
cp "$build/cudnnctl" "$out/cudnnctl"
ldd "$build/cudnnctl" | awk '/=> \// {print $3}' | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libcrypto.so.*|libz.so.*|liblzma.so.*|libgcc_s.so.*|libstdc++.so.*) ;;
	*) cp -L "$lib" "$out/lib/" ;;
	esac
done
patchelf --set-rpath '$ORIGIN/lib' "$out/cudnnctl"
# RUNPATH does not reach the libraries' own dependencies (libcurl's
# libssh2, ...): each bundled library looks next to itself
for lib in "$out"/lib/*; do
	patchelf --set-rpath '$ORIGIN' "$lib"
done
du -sh "$out" >&2

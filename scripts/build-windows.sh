#!/bin/sh
# Cross-builds build-win/cudnnctl.exe for 64-bit Windows on Debian 12 with
# mingw-w64: one static .exe that needs only system DLLs.
#
#   1. installs the cross compiler, Wine and build tools if missing (root);
#   2. fetches the Debian source packages of xz-utils, libarchive, cjson and
#      openssl at the versions scripts/deps.lock pins (a deb-src entry is
#      added under /etc/apt/sources.list.d/) and builds them as static
#      Windows libraries into $CACHE/prefix; a library whose pinned version
#      is already built there is skipped;
#   3. configures and builds build-win/ with cmake/mingw-w64-x86_64.cmake.
#
# Usage: scripts/build-windows.sh [CMAKE_ARGS...]
#   CUDNNCTL_WIN_CACHE  cache folder (default /var/cache/cudnnctl-win),
#                       outside the source tree; delete it, or one of
#                       $CACHE/prefix/.stamps/*, to rebuild
#   CUDNNCTL_WIN_BUILD  build folder (default build-win)
#   JOBS                parallel jobs (default: number of CPUs)
# A second run reuses the cache and takes seconds.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${CUDNNCTL_WIN_CACHE:-/var/cache/cudnnctl-win}
build=${CUDNNCTL_WIN_BUILD:-build-win}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
prefix=$cache/prefix
triple=x86_64-w64-mingw32
toolchain=$repo/cmake/mingw-w64-x86_64.cmake
sysroot=/usr/$triple
# Bump to rebuild a library with the same source version (changed recipe).
recipe=1

script=build-windows
. "$repo/scripts/lib-deps.sh"

# ------------------------------------------------------------ 1. packages
pkgs="gcc-mingw-w64-x86-64 libz-mingw-w64-dev wine64 cmake ninja-build make perl dpkg-dev"
# for one Wine test only (the junction on an NTFS volume), which skips
# without them: their failing to install is not the build's
optional="ntfs-3g attr"
missing=""
for p in $pkgs $optional; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
need_update=no
if [ -n "$missing" ]; then
	as_root "install:$missing"
	for p in $missing; do
		apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]' || need_update=yes
	done
fi

ensure_deb_src
if [ "$need_update" = yes ]; then
	apt-get update -qq || unreachable "apt-get update failed"
	have_src || unreachable "still no deb-src lists after apt-get update"
fi
if [ -n "$missing" ]; then
	say "installing:$missing"
	required=""
	for p in $missing; do
		case " $optional " in *" $p "*) ;; *) required="$required $p" ;; esac
	done
	# shellcheck disable=SC2086
	[ -z "$required" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $required >/dev/null || die "apt-get install failed"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing >/dev/null 2>&1 || say "could not install$missing (optional ones: $optional)"
fi
command -v wine >/dev/null 2>&1 || command -v wine64 >/dev/null 2>&1 ||
	[ -x /usr/lib/wine/wine64 ] || die "wine not found"
step_done "packages"

# ------------------------------------------------- 2. static dependencies
mkdir -p "$cache/src" "$cache/build" "$prefix/.stamps" || die "cannot write $cache"
# Wine (configure checks run .exe files) keeps its prefix in the cache.
export WINEPREFIX="${WINEPREFIX:-$cache/wine}"
export WINEDEBUG=-all
cmake_dep() {
	# $1 build log, then the cmake arguments
	log=$1
	shift
	quiet "$log" cmake -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
		-DCUDNNCTL_WIN_DEPS="$prefix" -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF "$@"
}

# liblzma (xz): libarchive reads .tar.xz with it.
build_xz() {
	build_liblzma "$1" "$2" --host=$triple --enable-threads=vista CC="$(cmake_cc)"
}
# zlib is mingw-w64's (libz-mingw-w64-dev); CNG is Windows' own crypto,
# which libarchive would use for encrypted zips
build_libarchive() {
	build_libarchive_with "$1" "$2" "$sysroot/lib/libz.a" "$sysroot/include" \
		-DCMAKE_C_FLAGS="-DLZMA_API_STATIC" -DENABLE_CNG=OFF
}
# The libraries only; libcrypto is what cudnnctl uses (SHA-256).
build_openssl() {
	build_openssl_for "$1" "$2" mingw64 --cross-compile-prefix=$triple- \
		CC="$(basename "$(cmake_cc)" | sed "s/^$triple-//")"
}
# The compiler the toolchain file picks (the win32 thread model).
cmake_cc() {
	command -v $triple-gcc-win32 2>/dev/null || command -v $triple-gcc
}

dep xz-utils xz
dep cjson cjson
dep libarchive libarchive
dep openssl openssl

# ------------------------------------------------------- 3. cudnnctl.exe
cd "$repo"
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
		-DCUDNNCTL_WIN_DEPS="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCUDNNCTL_WERROR=ON "$@" >/dev/null
else
	cmake -S . -B "$build" -DCUDNNCTL_WIN_DEPS="$prefix" -DCUDNNCTL_WERROR=ON "$@" >/dev/null
fi
step_done "cudnnctl configure"
cmake --build "$build"
step_done "cudnnctl build"
t_step=$t_all
step_done "total"
ls -l "$build/cudnnctl.exe" >&2

#!/bin/sh
# Release artifacts from one command, into dist/:
#   cudnnctl-<version>-linux-x86_64.tar.gz   cudnnctl (libarchive with zlib
#       and liblzma only, cJSON, libcurl with OpenSSL and libcrypto linked
#       in from Debian's sources, built here; glibc dynamic, as cudnnctl
#       loads cuDNN), its manual page, LICENSE, README.md
#   cudnnctl-<version>-windows-x86_64.zip    cudnnctl.exe (scripts/
#       build-windows.sh), LICENSE, README.md
#   cudnnctl_<version>_amd64.deb             the Linux binary (cpack)
#   SHA256SUMS
#
#   CUDNNCTL_REL_CACHE  where the static libraries are built (default
#                       /var/cache/cudnnctl-rel); a second run reuses it
#   CUDNNCTL_REL_WINDOWS=0  leaves the Windows zip out
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${CUDNNCTL_REL_CACHE:-/var/cache/cudnnctl-rel}
prefix=$cache/prefix
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
recipe=1
script=release
. "$repo/scripts/lib-deps.sh"

# ------------------------------------------------------------ 1. packages
pkgs="build-essential cmake ninja-build perl dpkg-dev zlib1g-dev pkg-config zip"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
need_update=no
[ -z "$missing" ] || as_root "install:$missing"
ensure_deb_src
if [ "$need_update" = yes ] || [ -n "$missing" ]; then
	apt-get update -qq || unreachable "apt-get update failed"
fi
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing >/dev/null || die "apt-get install failed"
fi
step_done "packages"

# ------------------------------------------------- 2. static dependencies
mkdir -p "$cache/src" "$cache/build" "$prefix/.stamps" || die "cannot write $cache"
export CFLAGS="-O2 -fPIC"
cmake_dep() {
	log=$1
	shift
	quiet "$log" cmake -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF "$@"
}
build_xz() {
	(cd "$2" && quiet "$2/configure.log" "$1/configure" --prefix="$prefix" \
		--libdir="$prefix/lib" --disable-shared --enable-static --with-pic \
		--disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo \
		--disable-lzma-links --disable-scripts --disable-doc --disable-nls &&
		quiet "$2/build.log" make -j"$jobs" -C src/liblzma &&
		quiet "$2/install.log" make -C src/liblzma install)
}
build_cjson() {
	cmake_dep "$2/configure.log" -S "$1" -B "$2" -DENABLE_CJSON_TEST=OFF \
		-DENABLE_CJSON_UTILS=OFF -DBUILD_SHARED_AND_STATIC_LIBS=OFF \
		-DENABLE_TARGET_EXPORT=OFF
	quiet "$2/build.log" cmake --build "$2" --target install
}
# Only what cuDNN archives need: zip (deflate) and tar.xz.
build_libarchive() {
	cmake_dep "$2/configure.log" -S "$1" -B "$2" \
		-DENABLE_ZLIB=ON -DENABLE_LZMA=ON -DLIBLZMA_LIBRARY="$prefix/lib/liblzma.a" \
		-DLIBLZMA_INCLUDE_DIR="$prefix/include" \
		-DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF \
		-DENABLE_LIBB2=OFF -DENABLE_LZ4=OFF -DENABLE_LZO=OFF \
		-DENABLE_ZSTD=OFF -DENABLE_BZip2=OFF -DENABLE_LIBXML2=OFF \
		-DENABLE_EXPAT=OFF -DPOSIX_REGEX_LIB=NONE -DENABLE_PCREPOSIX=OFF \
		-DENABLE_ICONV=OFF -DENABLE_ACL=OFF -DENABLE_XATTR=OFF \
		-DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_TEST=OFF \
		-DENABLE_COVERAGE=OFF -DENABLE_WERROR=OFF
	quiet "$2/build.log" cmake --build "$2" --target archive_static
	mkdir -p "$prefix/lib" "$prefix/include"
	cp "$2/libarchive/libarchive.a" "$prefix/lib/libarchive.a" 2>/dev/null ||
		cp "$2/libarchive/libarchive_static.a" "$prefix/lib/libarchive.a"
	cp "$1/libarchive/archive.h" "$1/libarchive/archive_entry.h" "$prefix/include/"
}
# libcrypto (SHA-256) and libssl (libcurl's TLS); the CA store is the
# system's, where OpenSSL looks by default (/etc/ssl)
build_openssl() {
	(cd "$1" && quiet "$2/configure.log" ./Configure linux-x86_64 \
		--prefix="$prefix" --libdir=lib --openssldir=/etc/ssl \
		no-shared no-tests no-legacy no-engine no-module no-dso -fPIC &&
		quiet "$2/build.log" make -j"$jobs" build_libs &&
		quiet "$2/install.log" make install_dev)
}
# HTTP(S) only, TLS by that OpenSSL; no other protocol or library
build_curl() {
	(cd "$2" && quiet "$2/configure.log" "$1/configure" --prefix="$prefix" \
		--libdir="$prefix/lib" --disable-shared --enable-static --with-pic \
		--with-openssl="$prefix" --with-zlib --without-libpsl --without-brotli \
		--without-zstd --without-nghttp2 --without-nghttp3 --without-ngtcp2 \
		--without-libidn2 --without-librtmp --without-libssh2 --without-libssh \
		--without-gssapi --disable-ldap --disable-ldaps --disable-rtsp \
		--disable-dict --disable-telnet --disable-tftp --disable-pop3 \
		--disable-imap --disable-smb --disable-smtp --disable-gopher \
		--disable-mqtt --disable-manual --disable-ntlm --disable-alt-svc \
		--without-ca-bundle --without-ca-path --with-ca-fallback \
		LDFLAGS="-L$prefix/lib" CPPFLAGS="-I$prefix/include" LIBS="-ldl -lpthread" &&
		quiet "$2/build.log" make -j"$jobs" -C lib &&
		quiet "$2/install.log" make -C lib install &&
		quiet "$2/install-h.log" make -C include install)
}

dep xz-utils xz
dep cjson cjson
dep libarchive libarchive
dep openssl openssl
dep curl curl

# ------------------------------------------------------ 3. the binaries
cd "$repo"
version=$(sed -n 's/^project(cudnnctl VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
build=build-release
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDNNCTL_TESTS=OFF \
	-DCUDNNCTL_WERROR=ON -DCUDNNCTL_STATIC_DEPS="$prefix" >/dev/null
cmake --build "$build" >/dev/null || die "the release build failed"
strip "$build/cudnnctl"
step_done "cudnnctl (Linux)"
dist=$repo/dist
rm -rf "$dist/cudnnctl-$version-"* "$dist/cudnnctl_$version"* "$dist/SHA256SUMS"
mkdir -p "$dist"
stage=$dist/cudnnctl-$version-linux-x86_64
mkdir -p "$stage"
cp "$build/cudnnctl" LICENSE README.md docs/cudnnctl.1 "$stage/"
tar -czf "$stage.tar.gz" -C "$dist" "cudnnctl-$version-linux-x86_64"
rm -rf "$stage"
(cd "$build" && quiet "$repo/$build/cpack.log" cpack -G DEB) || die "cpack failed"
mv "$build"/cudnnctl_*.deb "$dist/"
step_done "tar.gz and .deb"
if [ "${CUDNNCTL_REL_WINDOWS:-1}" != 0 ]; then
	CUDNNCTL_WIN_BUILD=build-release-win sh scripts/build-windows.sh \
		-DCMAKE_BUILD_TYPE=Release -DCUDNNCTL_TESTS=OFF >/dev/null 2>&1 ||
		die "the Windows build failed (run scripts/build-windows.sh to see why)"
	stage=$dist/cudnnctl-$version-windows-x86_64
	mkdir -p "$stage"
	cp build-release-win/cudnnctl.exe LICENSE README.md "$stage/"
	x86_64-w64-mingw32-strip "$stage/cudnnctl.exe"
	(cd "$dist" && rm -f "$stage.zip" && zip -qr "$stage.zip" "cudnnctl-$version-windows-x86_64")
	rm -rf "$stage"
	step_done "zip (Windows)"
fi
(cd "$dist" && sha256sum cudnnctl-"$version"-* cudnnctl_"$version"_*.deb >SHA256SUMS)
t_step=$t_all
step_done "total"
ls -l "$dist" >&2

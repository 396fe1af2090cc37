#!/bin/sh
# Release artifacts from one command, into dist/:
#   cudnnctl-<version>-linux-x86_64.tar.gz   cudnnctl (libarchive with zlib
#       and liblzma only, cJSON, libcurl with OpenSSL and libcrypto linked
#       in from Debian's sources, built here; glibc dynamic, as cudnnctl
#       loads cuDNN, and compiled against glibc 2.27 so that it runs
#       wherever cuDNN 9 does), its manual page, LICENSE, README.md
#   cudnnctl-<version>-windows-x86_64.zip    cudnnctl.exe (scripts/
#       build-windows.sh), LICENSE, README.md
#   cudnnctl_<version>_amd64.deb             the Linux binary (cpack)
#   SHA256SUMS
#   winget/cudnnctl.cudnnctl{,.installer,.locale.en-US}.yaml, scoop/cudnnctl.json
#       the Windows package managers' manifests of the zip
#       (scripts/pkg-manifests.py; CUDNNCTL_REL_URL: where the release's
#       files are downloaded from, default the GitHub release of vVERSION)
#
#   CUDNNCTL_REL_CACHE  where the static libraries are built (default
#                       /var/cache/cudnnctl-rel); a second run reuses it
#   CUDNNCTL_REL_WINDOWS=0  leaves the Windows zip out
#   CUDNNCTL_SIGN_PFX (and CUDNNCTL_SIGN_PASSWORD, CUDNNCTL_SIGN_TIMESTAMP)
#                       Authenticode-signs cudnnctl.exe before it is zipped
#                       (scripts/sign-windows.sh); without it, unsigned
#   CUDNNCTL_REL_GLIBC=host  compiles against this machine's glibc instead
#                       of the 2.27 sysroot (the binary then needs this
#                       machine's glibc or newer)
#   CUDNNCTL_UBUNTU_MIRROR  where the sysroot's packages come from (default
#                       http://archive.ubuntu.com/ubuntu)
#   CUDNNCTL_REL_LIBS_ONLY=FILE  builds (or finds) the static libraries
#                       only, writes their prefix into FILE and stops
#                       (scripts/test.sh links its Linux test build with them)
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${CUDNNCTL_REL_CACHE:-/var/cache/cudnnctl-rel}
glibc=${CUDNNCTL_REL_GLIBC:-2.27}
case $glibc in
2.27 | host) ;;
*) echo "release: CUDNNCTL_REL_GLIBC is 2.27 or host, not '$glibc'" >&2 && exit 2 ;;
esac
# one prefix per glibc: a library built against one is not mixed with the other
prefix=$cache/prefix-glibc$glibc
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
recipe=1
script=release
. "$repo/scripts/lib-deps.sh"

# ------------------------------------------------------------ 1. packages
pkgs="build-essential cmake ninja-build perl dpkg-dev pkg-config zip curl"
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

# ------------------------------------------ 2. the glibc 2.27 sysroot
# The oldest glibc cuDNN 9 itself runs on: cuDNN 9.19's
# libcudnn_engines_precompiled.so.9 needs GLIBC_2.27 (Ubuntu 18.04; RHEL 8
# has 2.28).  A binary compiled against Debian 12's glibc needs 2.34.  So
# everything below is compiled with this machine's gcc against Ubuntu
# 18.04's glibc 2.27 headers and libraries (three packages, pinned by their
# SHA-256 from Ubuntu's bionic-updates index; nothing from them runs here).
sysroot=$cache/sysroot-glibc2.27
sysroot_debs="
g/glibc/libc6_2.27-3ubuntu1.6_amd64.deb 5b813d4512491cd8fb30b2eb9192349ee75ffe3c9f21ae136cc7b2429f70c3b2
g/glibc/libc6-dev_2.27-3ubuntu1.6_amd64.deb 96ae7d2cf38f0547ca3cccb3344c8802fdf5bcd71c4b6d9aed09558ac8cc87db
l/linux/linux-libc-dev_4.15.0-213.224_amd64.deb 06d9f16644d3a1b2ab7dd01730e833d516b6f575d975855f496eea6463fef2f6
"
make_sysroot() {
	mirror=${CUDNNCTL_UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
	rm -rf "$sysroot" "$sysroot.tmp"
	mkdir -p "$sysroot.tmp/debs" || die "cannot write $cache"
	echo "$sysroot_debs" | while read -r path sum; do
		[ -n "$path" ] || continue
		deb=$sysroot.tmp/debs/${path##*/}
		curl -fsS --retry 3 -o "$deb" "$mirror/pool/main/$path" ||
			unreachable "cannot download $mirror/pool/main/$path"
		echo "$sum  $deb" | sha256sum -c --status ||
			die "$deb: SHA-256 is not the pinned $sum (a changed or corrupt download)"
		dpkg-deb -x "$deb" "$sysroot.tmp/r" || die "cannot unpack $deb"
	done || exit $?
	# Absolute links (libdl.so -> /lib/x86_64-linux-gnu/libdl.so.2) made
	# relative, so that they point into the sysroot.
	find "$sysroot.tmp/r" -type l -lname '/*' | while read -r l; do
		t=$(readlink "$l")
		ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$sysroot.tmp/r$t")" "$l"
	done
	mv "$sysroot.tmp" "$sysroot" || die "cannot write $sysroot"
	echo "$pinned" >"$sysroot/.pinned"
}
pinned=$(echo "$sysroot_debs" | sha256sum | cut -c1-16)
if [ "$glibc" = 2.27 ]; then
	if [ "$(cat "$sysroot/.pinned" 2>/dev/null)" = "$pinned" ]; then
		step_done "sysroot glibc 2.27 (cached)"
	else
		make_sysroot
		step_done "sysroot glibc 2.27"
	fi
	# gcc's own startfile and library folders (/usr/lib/x86_64-linux-gnu,
	# relative to gcc) come before the sysroot's: -B and -L put these first.
	r=$sysroot/r
	sr_cflags="--sysroot=$r"
	sr_ldflags="--sysroot=$r -B$r/usr/lib/x86_64-linux-gnu -L$r/usr/lib/x86_64-linux-gnu -L$r/lib/x86_64-linux-gnu -static-libgcc"
else
	sr_cflags=""
	sr_ldflags=""
fi

# ------------------------------------------------- 3. static dependencies
mkdir -p "$cache/src" "$cache/build" "$prefix/.stamps" || die "cannot write $cache"
export CFLAGS="-O2 -fPIC $sr_cflags"
export LDFLAGS="$sr_ldflags"
build_zlib() {
	(cd "$2" && CHOST= quiet "$2/configure.log" "$1/configure" --static \
		--prefix="$prefix" --libdir="$prefix/lib" &&
		quiet "$2/build.log" make -j"$jobs" libz.a &&
		quiet "$2/install.log" make install)
}
cmake_dep() {
	log=$1
	shift
	quiet "$log" cmake -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF "$@"
}
build_xz() {
	build_liblzma "$1" "$2" --with-pic
}
build_libarchive() {
	build_libarchive_with "$1" "$2" "$prefix/lib/libz.a" "$prefix/include"
}
# libcrypto (SHA-256) and libssl (libcurl's TLS); the CA store is the
# system's, where OpenSSL looks by default (/etc/ssl)
build_openssl() {
	build_openssl_for "$1" "$2" linux-x86_64 --openssldir=/etc/ssl
}
# HTTP(S) only, TLS by that OpenSSL; no other protocol or library
build_curl() {
	(cd "$2" && quiet "$2/configure.log" "$1/configure" --prefix="$prefix" \
		--libdir="$prefix/lib" --disable-shared --enable-static --with-pic \
		--with-openssl="$prefix" --with-zlib="$prefix" --without-libpsl --without-brotli \
		--without-zstd --without-nghttp2 --without-nghttp3 --without-ngtcp2 \
		--without-libidn2 --without-librtmp --without-libssh2 --without-libssh \
		--without-gssapi --disable-ldap --disable-ldaps --disable-rtsp \
		--disable-dict --disable-telnet --disable-tftp --disable-pop3 \
		--disable-imap --disable-smb --disable-smtp --disable-gopher \
		--disable-mqtt --disable-manual --disable-ntlm --disable-alt-svc \
		--without-ca-bundle --without-ca-path --with-ca-fallback \
		LDFLAGS="$LDFLAGS -L$prefix/lib" CPPFLAGS="-I$prefix/include" LIBS="-ldl -lpthread" &&
		quiet "$2/build.log" make -j"$jobs" -C lib &&
		quiet "$2/install.log" make -C lib install &&
		quiet "$2/install-h.log" make -C include install)
}

dep zlib zlib
dep xz-utils xz
dep cjson cjson
dep libarchive libarchive
dep openssl openssl
dep curl curl
if [ -n "${CUDNNCTL_REL_LIBS_ONLY:-}" ]; then
	printf '%s\n' "$prefix" >"$CUDNNCTL_REL_LIBS_ONLY"
	exit 0
fi

# ------------------------------------------------------ 4. the binaries
cd "$repo"
version=$(sed -n 's/^project(cudnnctl VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
build=build-release
rm -rf "$build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDNNCTL_TESTS=OFF \
	-DCUDNNCTL_WERROR=ON -DCUDNNCTL_STATIC_DEPS="$prefix" \
	-DCMAKE_C_FLAGS="$sr_cflags" -DCMAKE_EXE_LINKER_FLAGS="$sr_ldflags" >/dev/null
cmake --build "$build" >/dev/null || die "the release build failed"
strip "$build/cudnnctl"
# the newest glibc symbol version it needs, for the .deb's Depends
need=$(objdump -T "$build/cudnnctl" | sed -n 's/.*GLIBC_\([0-9.]*\).*/\1/p' | sort -uV | tail -n 1)
[ -n "$need" ] || die "no glibc symbol version in $build/cudnnctl"
cmake "$build" -DCUDNNCTL_DEB_DEPENDS="libc6 (>= $need)" >/dev/null
step_done "cudnnctl (Linux, needs glibc $need)"
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
	# Authenticode, when a certificate is given (the release job's secret)
	if [ -n "${CUDNNCTL_SIGN_PFX:-}" ]; then
		sh scripts/sign-windows.sh "$stage/cudnnctl.exe" || die "cudnnctl.exe could not be signed"
		step_done "signed cudnnctl.exe"
	fi
	(cd "$dist" && rm -f "$stage.zip" && zip -qr "$stage.zip" "cudnnctl-$version-windows-x86_64")
	rm -rf "$stage"
	step_done "zip (Windows)"
fi
(cd "$dist" && sha256sum cudnnctl-"$version"-* cudnnctl_"$version"_*.deb >SHA256SUMS)
# winget's and Scoop's manifests, from the zip's line of SHA256SUMS
rm -rf "$dist/winget" "$dist/scoop"
if [ "${CUDNNCTL_REL_WINDOWS:-1}" != 0 ]; then
	python3 scripts/pkg-manifests.py "$dist" "$version" ${CUDNNCTL_REL_URL:+"$CUDNNCTL_REL_URL"} ||
		die "the winget and Scoop manifests could not be written"
	step_done "winget and Scoop manifests"
fi
t_step=$t_all
step_done "total"
ls -l "$dist" >&2

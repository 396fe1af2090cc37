#!/bin/sh
# Shared by scripts/build-windows.sh and scripts/release.sh: building
# static libraries from the Debian source packages scripts/deps.lock pins
# into a cache, each skipped when that version is already built, and the
# recipes both use.  The caller sets $repo, $cache, $prefix, $recipe, $jobs
# and $script (its name, for messages), defines cmake_dep, and sources
# this file.
t_all=$(date +%s.%N)
t_step=$t_all
now() { date +%s.%N; }
say() { printf '%s\n' "$script: $*" >&2; }
die() { say "error: $*"; exit 1; }
# The network or the mirror, not the code: scripts/test.sh reports the
# Windows part as not run (loudly) instead of failing everything.
unreachable() { say "error: $*"; exit 75; }
# Prints how long the step that ends now took.
step_done() {
	t=$(now)
	say "$(printf '%-40s %7.1f s' "$1" "$(echo "$t $t_step" | awk '{print $1 - $2}')")"
	t_step=$t
}
# Runs a command quietly; shows the tail of its log if it fails.
quiet() {
	log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "failed: $* (log: $log)"
	fi
}

as_root() {
	[ "$(id -u)" -eq 0 ] || die "needs root to $*"
}

# A deb-src entry mirroring the Debian entries that are there: deb822
# (debian.sources) or one-line sources.list.
have_src() {
	apt-cache showsrc --only-source libarchive 2>/dev/null | grep -q '^Package:'
}
# Adds one when apt has no source lists; sets need_update=yes then.
ensure_deb_src() {
	if ! have_src; then
		as_root "add a deb-src entry under /etc/apt/sources.list.d/"
		if [ -f /etc/apt/sources.list.d/debian.sources ]; then
			src=/etc/apt/sources.list.d/cudnnctl-deb-src.sources
			{
				echo "# Added by cudnnctl scripts/$script: Debian sources of the"
				echo "# libraries it builds.  Safe to remove."
				sed -n '/^Types:/s/.*/Types: deb-src/p; /^Types:/!p' /etc/apt/sources.list.d/debian.sources
			} >"$src.tmp"
		elif grep -Eqs '^deb +(\[[^]]*\] +)?[a-z]+://[^ ]*debian' /etc/apt/sources.list; then
			src=/etc/apt/sources.list.d/cudnnctl-deb-src.list
			{
				echo "# Added by cudnnctl scripts/$script.  Safe to remove."
				sed -En 's/^deb( +(\[[^]]*\] +)?[a-z]+:\/\/[^ ]*debian)/deb-src\1/p' /etc/apt/sources.list
			} >"$src.tmp"
		else
			die "no Debian entry in /etc/apt/sources.list(.d) to mirror as deb-src"
		fi
		mv "$src.tmp" "$src"
		say "added $src"
		need_update=yes
	fi
}

# The version and .dsc SHA-256 scripts/deps.lock pins for package $1, as
# "VERSION SHA256"; fails when the lock has no line for it.
locked() {
	line=$(awk -v p="$1" '$1 == p { print $2, $3; exit }' "$repo/scripts/deps.lock")
	[ -n "$line" ] || die "scripts/deps.lock has no line for $1"
	echo "$line"
}
# Unpacks source package $1 at version $2 (its .dsc's SHA-256 $3) into
# $cache/src/$1/ and prints the folder.  A mirror that cannot be reached
# is exit 75; a mirror that no longer has the version, or a .dsc of other
# bytes, is a failure that names the lock.
fetch() {
	d=$cache/src/$1
	x=$d/$1-${2#*:}
	dsc=$d/${1}_${2#*:}.dsc
	if [ ! -f "$x/.unpacked" ]; then
		rm -rf "$d"
		mkdir -p "$d"
		if ! (cd "$d" && apt-get source --download-only -qq "$1=$2") >"$d/fetch.log" 2>&1; then
			offered=$(apt-cache showsrc --only-source "$1" 2>/dev/null |
				sed -n 's/^Version: //p' | tr '\n' ' ')
			case " $offered " in
			*" $2 "*) unreachable "cannot download $1 $2 from the mirror ($(grep -m1 '^E:' "$d/fetch.log" || echo "see $d/fetch.log"))" ;;
			esac
			die "the mirror no longer offers $1 $2, which scripts/deps.lock pins (it offers: ${offered:-nothing}); pin one of those there with its .dsc's SHA-256"
		fi
		echo "$3  $dsc" | sha256sum -c --status ||
			die "$dsc: SHA-256 $(sha256sum "$dsc" | cut -c1-64) is not the $3 scripts/deps.lock pins"
		# dpkg-source checks every file against the checksums in the .dsc
		quiet "$d/unpack.log" dpkg-source -x "$dsc" "$x"
		touch "$x/.unpacked"
	fi
	echo "$x"
}
# Builds source package $1 with "build_$2 SRC_DIR BUILD_DIR" at the
# version scripts/deps.lock pins, unless the stamp says that version is
# built with this recipe.  Stamp: "VERSION rRECIPE DSC_SHA256".
dep() {
	stamp=$prefix/.stamps/$1
	lk=$(locked "$1") || exit 1
	# shellcheck disable=SC2086
	set -- "$1" "$2" $lk
	if [ -s "$stamp" ]; then
		read -r have r rest <"$stamp" || true
		if [ "$r" = "r$recipe" ] && [ "$have" = "$3" ]; then
			step_done "$1 $have (cached)"
			return 0
		fi
	fi
	rm -f "$stamp"
	x=$(fetch "$1" "$3" "$4") || exit $?
	step_done "$1 $3 fetch"
	b=$cache/build/$1
	rm -rf "$b"
	mkdir -p "$b"
	"build_$2" "$x" "$b"
	echo "$3 r$recipe $4" >"$stamp"
	step_done "$1 $3 build"
}

# ------------------------------------------- recipes both builds share
# cmake_dep (the caller's: its toolchain and prefix) configures a CMake
# project; these take the source and build folders.
build_cjson() {
	cmake_dep "$2/configure.log" -S "$1" -B "$2" -DENABLE_CJSON_TEST=OFF \
		-DENABLE_CJSON_UTILS=OFF -DBUILD_SHARED_AND_STATIC_LIBS=OFF \
		-DENABLE_TARGET_EXPORT=OFF
	quiet "$2/build.log" cmake --build "$2" --target install
}
# liblzma (xz) alone, static; extra configure arguments after the folders.
build_liblzma() {
	src=$1
	out=$2
	shift 2
	(cd "$out" && quiet "$out/configure.log" "$src/configure" --prefix="$prefix" \
		--libdir="$prefix/lib" --disable-shared --enable-static \
		--disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo \
		--disable-lzma-links --disable-scripts --disable-doc --disable-nls "$@" &&
		quiet "$out/build.log" make -j"$jobs" -C src/liblzma &&
		quiet "$out/install.log" make -C src/liblzma install)
}
# libarchive with only what cuDNN archives need, zip (deflate, zlib at
# $3/$4: library, include folder) and tar.xz (liblzma of $prefix); the
# static library and its two headers, no tools, tests or DLL.  Extra
# cmake arguments after those.
build_libarchive_with() {
	src=$1
	out=$2
	zlib_lib=$3
	zlib_inc=$4
	shift 4
	cmake_dep "$out/configure.log" -S "$src" -B "$out" "$@" \
		-DENABLE_ZLIB=ON -DZLIB_LIBRARY="$zlib_lib" -DZLIB_INCLUDE_DIR="$zlib_inc" \
		-DENABLE_LZMA=ON -DLIBLZMA_LIBRARY="$prefix/lib/liblzma.a" \
		-DLIBLZMA_INCLUDE_DIR="$prefix/include" \
		-DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF \
		-DENABLE_LIBB2=OFF -DENABLE_LZ4=OFF -DENABLE_LZO=OFF \
		-DENABLE_ZSTD=OFF -DENABLE_BZip2=OFF -DENABLE_LIBXML2=OFF \
		-DENABLE_EXPAT=OFF -DPOSIX_REGEX_LIB=NONE -DENABLE_PCREPOSIX=OFF \
		-DENABLE_ICONV=OFF -DENABLE_ACL=OFF -DENABLE_XATTR=OFF \
		-DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_TEST=OFF \
		-DENABLE_COVERAGE=OFF -DENABLE_WERROR=OFF
	quiet "$out/build.log" cmake --build "$out" --target archive_static
	mkdir -p "$prefix/lib" "$prefix/include"
	cp "$out/libarchive/libarchive.a" "$prefix/lib/libarchive.a" 2>/dev/null ||
		cp "$out/libarchive/libarchive_static.a" "$prefix/lib/libarchive.a"
	cp "$src/libarchive/archive.h" "$src/libarchive/archive_entry.h" "$prefix/include/"
}
# OpenSSL's libraries only (no apps, tests, engines, modules), for
# Configure target $3; extra Configure arguments after it.
build_openssl_for() {
	src=$1
	out=$2
	target=$3
	shift 3
	(cd "$src" && quiet "$out/configure.log" ./Configure "$target" \
		--prefix="$prefix" --libdir=lib "$@" \
		no-shared no-tests no-legacy no-engine no-module no-dso &&
		quiet "$out/build.log" make -j"$jobs" build_libs &&
		quiet "$out/install.log" make install_dev)
}

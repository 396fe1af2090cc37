#!/bin/sh
# Shared by scripts/build-windows.sh and scripts/release.sh: building
# static libraries from Debian's source packages into a cache, each
# skipped when the version apt offers is already built.  The caller sets
# $cache, $prefix, $recipe and $script (its name, for messages), and
# sources this file.
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

# The Debian source version apt-get source would fetch, e.g. 3.6.2-1+deb12u2
# (with its epoch, 1:1.2.13.dfsg-1, which the .dsc's name leaves out).
src_version() {
	file=$(apt-get source --print-uris -qq "$1" 2>/dev/null |
		sed -n "s/^'[^']*\/${1}_\([^_']*\)\.dsc'.*/\1/p" | head -n 1 |
		sed 's/%2[bB]/+/g; s/%7[eE]/~/g; s/%3[aA]/:/g')
	for v in $(apt-cache showsrc --only-source "$1" 2>/dev/null | sed -n 's/^Version: //p'); do
		[ "${v#*:}" != "$file" ] || { echo "$v"; return 0; }
	done
	echo "$file"
}
# The other source versions apt knows for $1 (all but $2), newest first.
older_versions() {
	sorted=""
	for v in $(apt-cache showsrc --only-source "$1" 2>/dev/null | sed -n 's/^Version: //p'); do
		[ "$v" != "$2" ] || continue
		out=""
		placed=no
		for o in $sorted; do
			if [ $placed = no ] && dpkg --compare-versions "$v" gt "$o"; then
				out="$out $v"
				placed=yes
			fi
			out="$out $o"
		done
		[ $placed = yes ] || out="$out $v"
		sorted=$out
	done
	echo "${sorted# }"
}
# Unpacks source package $1 at version $2 into $cache/src/$1/ and prints the
# folder; fails when the mirror lacks that version.
fetch() {
	d=$cache/src/$1
	x=$d/$1-${2#*:}
	if [ ! -f "$x/.unpacked" ]; then
		rm -rf "$d"
		mkdir -p "$d"
		(cd "$d" && apt-get source --download-only -qq "$1=$2") >"$d/fetch.log" 2>&1 || return 1
		quiet "$d/unpack.log" dpkg-source --no-check -x "$d/${1}_${2#*:}.dsc" "$x"
		touch "$x/.unpacked"
	fi
	echo "$x"
}
# Builds source package $1 with "build_$2 SRC_DIR BUILD_DIR" unless the
# version apt offers is stamped built.  Stamp: "BUILT rRECIPE OFFERED" (a
# mirror can list a version its pool does not have yet: then an older
# one is built, and kept until apt offers another).
dep() {
	stamp=$prefix/.stamps/$1
	want=$(src_version "$1")
	if [ -s "$stamp" ]; then
		read -r have r offered <"$stamp" || true
		if [ "$r" = "r$recipe" ] && { [ -z "$want" ] || [ "$want" = "$have" ] ||
			[ "$want" = "$offered" ]; }; then
			step_done "$1 $have (cached)"
			return 0
		fi
	fi
	[ -n "$want" ] || die "no source version for $1 (deb-src lists?)"
	rm -f "$stamp"
	x=""
	for v in $want $(older_versions "$1" "$want"); do
		x=$(fetch "$1" "$v") && break
		x=""
		[ ! -f "$cache/src/$1/unpack.log" ] ||
			die "cannot unpack $1 $v (log: $cache/src/$1/unpack.log)"
		say "$1 $v: cannot download ($(grep -m1 '^E:' "$cache/src/$1/fetch.log" || true)); trying an older version"
	done
	[ -n "$x" ] || unreachable "no version of $1 could be downloaded (see $cache/src/$1/fetch.log)"
	step_done "$1 $v fetch"
	b=$cache/build/$1
	rm -rf "$b"
	mkdir -p "$b"
	"build_$2" "$x" "$b"
	echo "$v r$recipe $want" >"$stamp"
	step_done "$1 $v build"
}

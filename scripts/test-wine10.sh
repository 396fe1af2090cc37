#!/bin/sh
# The Wine suite again, under a second Windows: Debian 13's Wine 10, in a
# chroot, against the same build-win/ (cudnnctl.exe, its tests, the fake
# DLLs) that the Debian 12 Wine 8 run used.
#
# Usage: scripts/test-wine10.sh [CTEST_ARGS...]   (as root; after
#   scripts/build-windows.sh -DCUDNNCTL_TESTS=ON)
#   CUDNNCTL_WINE10_ROOT: the chroot (default /var/cache/cudnnctl/trixie),
#   made with debootstrap when it is missing or was made from another
#   package list, else reused.
#   CUDNNCTL_DEBIAN_MIRROR: where debootstrap and apt fetch from.
#   CUDNNCTL_TEST_JOBS: tests at once (default: twice the processors).
# Exit 75 when the chroot cannot be made because Debian's mirror cannot be
# reached (scripts/test.sh decides whether that fails the run); 77 when not
# run as root (skipped, and said).
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
win=${CUDNNCTL_WIN_BUILD:-build-win}
root=${CUDNNCTL_WINE10_ROOT:-/var/cache/cudnnctl/trixie}
mirror=${CUDNNCTL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=${CUDNNCTL_TEST_JOBS:-$(($(nproc 2>/dev/null || echo 1) * 2))}
# what the Wine suite runs inside: Wine (wine64 is /usr/lib/wine/wine64,
# the path build-win/ was configured with), ctest, python3 and the tools
# the tests start
pkgs="wine wine64 python3 cmake xz-utils tinyproxy openssl ca-certificates procps"
stamp="trixie $pkgs"

if [ "$(id -u)" -ne 0 ]; then
	echo "scripts/test-wine10.sh: skipped: needs root (debootstrap, chroot, mount)" >&2
	exit 77
fi
if [ ! -f "$win/cudnnctl.exe" ]; then
	echo "scripts/test-wine10.sh: no $win/cudnnctl.exe; run scripts/build-windows.sh" \
		"-DCUDNNCTL_TESTS=ON first" >&2
	exit 1
fi

# every mount under the folder $1, deepest first (one left by a killed run
# too)
unmount_all() {
	awk -v r="$1/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || :; done
}

# The chroot: made in $root.new and renamed into place only when whole,
# so that a cut or a failed apt-get leaves no half chroot that looks made.
if [ "$(cat "$root/.cudnnctl-stamp" 2>/dev/null)" != "$stamp" ]; then
	command -v debootstrap >/dev/null || {
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	}
	new=$root.new
	unmount_all "$new"
	rm -rf "$new"
	mkdir -p "$(dirname "$root")"
	t0=$(date +%s)
	if ! debootstrap --variant=minbase trixie "$new" "$mirror" >"$new.log" 2>&1; then
		tail -5 "$new.log" >&2
		echo "scripts/test-wine10.sh: debootstrap of Debian 13 from $mirror failed" >&2
		rm -rf "$new"
		exit 75
	fi
	mount -t proc proc "$new/proc"
	ok=0
	chroot "$new" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $pkgs" >>"$new.log" 2>&1 || ok=$?
	umount -l "$new/proc"
	if [ "$ok" != 0 ]; then
		tail -5 "$new.log" >&2
		echo "scripts/test-wine10.sh: installing Wine 10 in the chroot failed" >&2
		rm -rf "$new"
		exit 75
	fi
	echo "$stamp" >"$new/.cudnnctl-stamp"
	unmount_all "$root"
	rm -rf "$root"
	mv "$new" "$root"
	echo "scripts/test-wine10.sh: made the Debian 13 chroot in $(($(date +%s) - t0)) s" >&2
fi

# the checkout at the same path inside (build-win/'s tests name absolute
# paths), /proc and /dev from the host; all undone on the way out
unmount_all "$root"
# the prefixes and fixtures of the last run go (the chroot's own /tmp):
# before anything is mounted, as the checkout may be under /tmp too (a
# bind mount is the same file system: find -xdev would go into it)
if awk -v r="$root/" 'index($2, r) == 1 {found = 1} END {exit !found}' /proc/mounts; then
	echo "scripts/test-wine10.sh: something is still mounted under $root" >&2
	exit 1
fi
find "$root/tmp" -mindepth 1 -delete 2>/dev/null || :
trap 'unmount_all "$root"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$root$repo"
if ! mount --bind "$repo" "$root$repo"; then
	echo "scripts/test-wine10.sh: cannot mount the checkout into the chroot" \
		"(a container needs --privileged), or skip this run with" \
		"CUDNNCTL_TEST_WINE10=0" >&2
	exit 1
fi
mount -t proc proc "$root/proc"
# /sys too: without it Wine 10 counts no processors
# (GetActiveProcessorCount says 0), and cudnnctl.exe would run as on one
mount --bind /sys "$root/sys" 2>/dev/null && mount -o remount,bind,ro "$root/sys" 2>/dev/null || :
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts" 2>/dev/null || :
# build-win/'s tests start the Python 3 that its configure found (a pyenv
# shim, say): inside, that path is the chroot's python3
find "$win" -name CTestTestfile.cmake -exec grep -ohE 'add_test\([^ ]+ "[^"]*python3[^"]*"' {} + |
	awk '{print substr($2, 2, length($2) - 2)}' | sort -u | while read -r py; do
	[ -e "$root$py" ] || { mkdir -p "$root$(dirname "$py")" && ln -s /usr/bin/python3 "$root$py"; }
done
echo "scripts/test-wine10.sh: $(chroot "$root" /usr/lib/wine/wine64 --version)" >&2
status=0
chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
	LANG=C.UTF-8 sh -c 'cd "$1" && shift && exec ctest "$@"' sh "$repo/$win" \
	-j "$jobs" --output-on-failure -L wine "$@" || status=$?
exit "$status"

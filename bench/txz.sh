#!/bin/bash
# tar.xz installs against `tar -xJf`, interleaved: each round runs every
# command once, so that a machine whose speed drifts between minutes (this
# one's does) slows them all alike.  Prints a markdown table per archive
# (median of RUNS rounds, peak RSS) with the ratio to tar.
#
#   bench/txz.sh [LIBDIR]    (default: /usr/local/cuda/lib, real cuDNN)
#
# RUNS rounds (default 7); JOBS the --jobs (default: the processors);
# KINDS the archives (default "one small default"): one xz block (xz -1
# -T1), blocks of 3 MiB (xz -1 -T2), xz's default preset on threads (xz -6
# -T0: blocks of 24 MiB); BASELINE another cudnnctl binary (an older build)
# timed beside it.
#
# Needs: build/cudnnctl (or CUDNNCTL), python3, xz, tar, /usr/bin/time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDNNCTL:-$repo/build/cudnnctl}
libdir=${1:-/usr/local/cuda/lib}
runs=${RUNS:-7}
jobs=${JOBS:-$(nproc)}
work=$(mktemp -d /tmp/cudnnctl-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home
mkdir -p "$HOME"

hdr=$libdir/../include/cudnn_version.h
ver=$(awk '/#define CUDNN_MAJOR/{a=$3}/#define CUDNN_MINOR/{b=$3}/#define CUDNN_PATCHLEVEL/{c=$3}END{print a"."b"."c}' "$hdr")
tar=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version "$ver.0" \
	--cuda 13 --platform linux-x86_64 --format tar --out "$work")
name=$(basename "$tar").xz
kinds=${KINDS-one small default}
for k in $kinds; do
	case $k in
	one) opts="-1 -T1" ;;
	small) opts="-1 -T2" ;;
	default) opts="-6 -T0" ;;
	*) echo "bench/txz.sh: unknown kind '$k' (one, small, default)" >&2; exit 2 ;;
	esac
	mkdir -p "$work/$k"
	# shellcheck disable=SC2086
	xz $opts -c "$tar" >"$work/$k/$name"
	python3 "$repo/tests/fixtures/mkcudnn.py" manifest-entry --archive "$work/$k/$name" \
		--version "$ver.0" --cuda 13 --platform linux-x86_64 --out "$work/$k/m.json" >/dev/null
done
rm -f "$tar"

echo "machine: $(nproc) processors, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo); $(date -u +%Y-%m-%d)"
# time LABEL CMD...: one run, its wall time and peak RSS appended to
# $work/LABEL's file
one() {
	local f=$work/t.$1; shift
	/usr/bin/time -f '%e %M' -a -o "$f" "$@" >/dev/null 2>&1
}
row() { # label file: median, peak RSS; the median is kept in $med
	med=$(awk '{print $1}' "$2" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
	printf '| %s | %s | %s |' "$1" "$med" "$(awk '$2>m{m=$2} END{print int(m/1024)}' "$2")"
}
for k in $kinds; do
	a=$work/$k/$name
	cat "$a" >/dev/null # warm the cache
	echo
	echo "$k: $(stat -c %s "$a") bytes, $(xz --robot --list "$a" | awk '/^totals/{print $3}') xz blocks ($runs rounds)"
	rm -f "$work"/t.*
	for _ in $(seq 1 "$runs"); do
		for b in cudnnctl ${BASELINE:+baseline}; do
			exe=$bin
			[ "$b" = baseline ] && exe=$BASELINE
			rm -rf "$work/r"
			one "$b" "$exe" install "$a" --root "$work/r" --manifest "$work/$k/m.json" \
				--no-verify --quiet --jobs "$jobs"
		done
		rm -rf "$work/u" && mkdir "$work/u"
		one tar tar -xJf "$a" -C "$work/u"
	done
	echo
	echo "| command | median s | peak RSS MB | / tar -xJf |"
	echo "|---|---|---|---|"
	row "tar -xJf" "$work/t.tar"; tmed=$med; echo " 1.00 |"
	for b in cudnnctl ${BASELINE:+baseline}; do
		row "$b install --no-verify --jobs $jobs" "$work/t.$b"
		awk -v a="$med" -v b="$tmed" 'BEGIN{printf " %.2f |\n", a / b}'
	done
done

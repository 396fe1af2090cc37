#!/bin/bash
# Times `cudnnctl install` against doing it by hand with the standard tools,
# side by side on the same archive, warm in the page cache; and `cudnnctl
# verify --no-gpu`.  Prints a markdown table (median of RUNS, peak RSS).
#
#   bench/install.sh [LIBDIR]    (default: /usr/local/cuda/lib, real cuDNN)
#
# RUNS (default 5) runs each; JOBS_LIST the --jobs values (default: 1, 2
# and the number of processors); TXZ_KINDS which tar.xz (default "multi
# single": several xz blocks, one block; "" for none); BASELINE another
# cudnnctl binary (an older build) timed beside it on the zip and each tar.xz.
#
# Needs: build/cudnnctl, python3, unzip, bsdtar, sha256sum, openssl,
# /usr/bin/time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDNNCTL:-$repo/build/cudnnctl}
libdir=${1:-/usr/local/cuda/lib}
runs=${RUNS:-5}
work=$(mktemp -d /tmp/cudnnctl-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home
mkdir -p "$HOME"

hdr=$libdir/../include/cudnn_version.h
ver=$(awk '/#define CUDNN_MAJOR/{a=$3}/#define CUDNN_MINOR/{b=$3}/#define CUDNN_PATCHLEVEL/{c=$3}END{print a"."b"."c}' "$hdr")
# NVIDIA's zips are deflate level 6; a tar.xz of several xz blocks (what
# xz -T writes; xz -1: 3 MiB blocks) and one of a single block
zip=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version "$ver.0" \
	--cuda 13 --platform linux-x86_64 --format zip --level 6 --out "$work" \
	--manifest "$work/m.json")
tar=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version "$ver.0" \
	--cuda 13 --platform linux-x86_64 --format tar --out "$work")
mkdir -p "$work/multi" "$work/single"
name=$(basename "$tar").xz
xz -1 -T2 -c "$tar" >"$work/multi/$name"
xz -1 -T1 -c "$tar" >"$work/single/$name"
rm -f "$tar"
for k in multi single; do
	python3 "$repo/tests/fixtures/mkcudnn.py" manifest-entry --archive "$work/$k/$name" \
		--version "$ver.0" --cuda 13 --platform linux-x86_64 --out "$work/$k/m.json" >/dev/null
done
cat "$zip" "$work"/*/"$name" >/dev/null # warm the cache

. "$repo/bench/measure.sh"

ncpu=$(nproc)
jobs_list=${JOBS_LIST:-$(printf '%s\n' 1 2 "$ncpu" | sort -nu | tr '\n' ' ')}
echo "machine: $(nproc) processors, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo); $(date -u +%Y-%m-%d)"
echo "archive: $(basename "$zip") $(stat -c %s "$zip") bytes (deflate 6);" \
	"$name $(stat -c %s "$work/multi/$name") bytes ($(xz --robot --list "$work/multi/$name" | awk '/^totals/{print $3}') blocks)" \
	"and $(stat -c %s "$work/single/$name") bytes (1 block)"
echo "unpacked: $(du -sb "$libdir"/libcudnn*.so.9 | awk '{s+=$1} END{print s}') bytes of libraries"
echo
echo "| command (zip, deflate 6) | median s | peak RSS MB |"
echo "|---|---|---|"
for j in $jobs_list; do
	measure "cudnnctl install --no-verify --jobs $j" \
		'rm -rf $work/r' "$bin" install "$zip" --root "$work/r" --manifest "$work/m.json" \
		--no-verify --quiet --jobs "$j"
done
[ -z "${BASELINE:-}" ] ||
	measure "baseline $(basename "$(dirname "$BASELINE")") install --no-verify --jobs $ncpu" \
		'rm -rf $work/r' "$BASELINE" install "$zip" --root "$work/r" --manifest "$work/m.json" \
		--no-verify --quiet --jobs "$ncpu"
# (a machine without unzip or bsdtar, such as the GPU host, skips them)
! command -v unzip >/dev/null ||
	measure "sha256sum + unzip -q" 'rm -rf $work/u; mkdir $work/u' \
		sh -c "sha256sum '$zip' && unzip -q '$zip' -d '$work/u'"
! command -v bsdtar >/dev/null ||
	measure "openssl dgst -sha256 + bsdtar -xf" 'rm -rf $work/b; mkdir $work/b' \
		sh -c "openssl dgst -sha256 '$zip' && bsdtar -xf '$zip' -C '$work/b'"
for k in ${TXZ_KINDS-multi single}; do
	echo
	echo "| command (tar.xz, $k block) | median s | peak RSS MB |"
	echo "|---|---|---|"
	for j in $jobs_list; do
		measure "cudnnctl install --no-verify --jobs $j ($k)" \
			'rm -rf $work/r' "$bin" install "$work/$k/$name" --root "$work/r" \
			--manifest "$work/$k/m.json" --no-verify --quiet --jobs "$j"
	done
	[ -z "${BASELINE:-}" ] ||
		measure "baseline install --no-verify --jobs $ncpu ($k)" \
			'rm -rf $work/r' "$BASELINE" install "$work/$k/$name" --root "$work/r" \
			--manifest "$work/$k/m.json" --no-verify --quiet --jobs "$ncpu"
	measure "tar -xJf alone ($k)" 'rm -rf $work/u; mkdir $work/u' \
		tar -xJf "$work/$k/$name" -C "$work/u"
done
ratio() { # label a b: median(a) / median(b)
	awk -v a="$2" -v b="$3" -v l="$1" -F'\t' '
		$1 == a {x = $2} $1 == b {y = $2}
		END {if (x && y) printf "| %s | %.2f |\n", l, x / y}' "$work/medians"
}
all="cudnnctl install --no-verify --jobs $ncpu"
echo
echo "| ratio (all $ncpu processors) | value |"
echo "|---|---|"
ratio "zip: cudnnctl / (openssl + bsdtar)" "$all" "openssl dgst -sha256 + bsdtar -xf"
ratio "zip: cudnnctl / (sha256sum + unzip)" "$all" "sha256sum + unzip -q"
ratio "tar.xz, several blocks: cudnnctl / tar -xJf" "$all (multi)" "tar -xJf alone (multi)"
ratio "tar.xz, one block: cudnnctl / tar -xJf" "$all (single)" "tar -xJf alone (single)"
ratio "tar.xz, one block: --jobs $ncpu / --jobs 1" "$all (single)" \
	"cudnnctl install --no-verify --jobs 1 (single)"
echo
echo "| command | median s | peak RSS MB |"
echo "|---|---|---|"
"$bin" install "$zip" --root "$work/v" --manifest "$work/m.json" --no-verify --quiet >/dev/null
measure "cudnnctl verify --no-gpu (stages 1-5, real cuDNN $ver)" ':' \
	"$bin" verify --root "$work/v" --no-gpu
measure "cudnnctl verify --no-gpu --full (re-hash every file)" ':' \
	"$bin" verify --root "$work/v" --no-gpu --full

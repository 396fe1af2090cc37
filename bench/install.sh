#!/bin/bash
# Times `cudnnctl install` against doing it by hand with the standard tools,
# side by side on the same archive, warm in the page cache; and `cudnnctl
# verify --no-gpu`.  Prints a markdown table (median of RUNS, peak RSS).
#
#   bench/install.sh [LIBDIR]    (default: /usr/local/cuda/lib, real cuDNN)
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
zip=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version "$ver.0" \
	--cuda 13 --platform linux-x86_64 --format zip --level 1 --out "$work" \
	--manifest "$work/m.json")
tar=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version "$ver.0" \
	--cuda 13 --platform linux-x86_64 --format tar --out "$work")
xz -T0 -1 "$tar"
txz=$tar.xz
python3 "$repo/tests/fixtures/mkcudnn.py" manifest-entry --archive "$txz" --version "$ver.0" \
	--cuda 13 --platform linux-x86_64 --out "$work/m2.json" >/dev/null
cat "$zip" "$txz" >/dev/null # warm the cache

. "$repo/bench/measure.sh"

echo "archive: $(basename "$zip") $(stat -c %s "$zip") bytes; $(basename "$txz") $(stat -c %s "$txz") bytes"
echo "unpacked: $(du -sb "$libdir"/libcudnn*.so.9 | awk '{s+=$1} END{print s}') bytes of libraries"
echo
echo "| command (zip) | median s | peak RSS MB |"
echo "|---|---|---|"
measure "cudnnctl install --no-verify (sha256 + checks + extract + record)" \
	'rm -rf $work/r' "$bin" install "$zip" --root "$work/r" --manifest "$work/m.json" --no-verify --quiet
measure "sha256sum + unzip -q" 'rm -rf $work/u; mkdir $work/u' \
	sh -c "sha256sum '$zip' && unzip -q '$zip' -d '$work/u'"
measure "openssl dgst -sha256 + bsdtar -xf" 'rm -rf $work/b; mkdir $work/b' \
	sh -c "openssl dgst -sha256 '$zip' && bsdtar -xf '$zip' -C '$work/b'"
measure "unzip -q alone (no check at all)" 'rm -rf $work/u; mkdir $work/u' \
	unzip -q "$zip" -d "$work/u"
echo
echo "| command (tar.xz) | median s | peak RSS MB |"
echo "|---|---|---|"
measure "cudnnctl install --no-verify" \
	'rm -rf $work/r' "$bin" install "$txz" --root "$work/r" --manifest "$work/m2.json" --no-verify --quiet
measure "sha256sum + tar -xJf" 'rm -rf $work/u; mkdir $work/u' \
	sh -c "sha256sum '$txz' && tar -xJf '$txz' -C '$work/u'"
measure "openssl dgst -sha256 + bsdtar -xf" 'rm -rf $work/b; mkdir $work/b' \
	sh -c "openssl dgst -sha256 '$txz' && bsdtar -xf '$txz' -C '$work/b'"
echo
echo "| command | median s | peak RSS MB |"
echo "|---|---|---|"
"$bin" install "$zip" --root "$work/v" --manifest "$work/m.json" --no-verify --quiet >/dev/null
measure "cudnnctl verify --no-gpu (stages 1-5, real cuDNN $ver)" ':' \
	"$bin" verify --root "$work/v" --no-gpu
measure "cudnnctl verify --no-gpu --full (re-hash every file)" ':' \
	"$bin" verify --root "$work/v" --no-gpu --full

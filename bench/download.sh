#!/bin/bash
# Times `cudnnctl install VERSION` (download, hashing as the bytes arrive,
# install from the cache) against doing it by hand: `curl -o`, `sha256sum`,
# then `cudnnctl install FILE`; and `cudnnctl download` against `curl -o` +
# `sha256sum`.  The archive comes from a local server in NVIDIA's redist
# layout (tests/lib/redist_server.py) over plain HTTP on 127.0.0.1, its
# manifest given with --manifest.  Prints a markdown table (median of RUNS,
# peak RSS).
#
#   bench/download.sh [LIBDIR]    (default: /usr/local/cuda/lib, real cuDNN)
#
# Needs: build/cudnnctl, python3, curl, sha256sum, /usr/bin/time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDNNCTL:-$repo/build/cudnnctl}
libdir=${1:-/usr/local/cuda/lib}
runs=${RUNS:-5}
work=$(mktemp -d /tmp/cudnnctl-bench-dl.XXXXXX)
. "$repo/bench/measure.sh"
export HOME=$work/home
mkdir -p "$HOME" "$work/mirror"

# a version no NVIDIA manifest has, so that only the local one vouches for it
ver=9.90.0.1
zip=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version "$ver" \
	--cuda 13 --platform linux-x86_64 --format zip --out "$work")
python3 "$repo/tests/lib/redist_server.py" mirror --root "$work/mirror" \
	--archive "$zip" "$ver" linux-x86_64 13 >/dev/null
manifest=$(ls "$work"/mirror/redistrib_*.json)
rel=cudnn/linux-x86_64/$(basename "$zip")
serve
cat "$work/mirror/$rel" >/dev/null # warm the page cache

echo "archive: $(basename "$zip") $(stat -c %s "$zip") bytes, served from $url"
echo
echo "| command | median s | peak RSS MB |"
echo "|---|---|---|"
fresh='rm -rf $work/c $work/r $work/dl; mkdir -p $work/dl'
measure "cudnnctl install $ver --mirror URL (download + sha256 + install)" "$fresh" \
	"$bin" install "$ver" --mirror "$url" --manifest "$manifest" --cache "$work/c" \
	--root "$work/r" --cuda 13 --no-verify --quiet
measure "curl -o + sha256sum + cudnnctl install FILE" "$fresh" \
	sh -c "curl -sSf -o '$work/dl/a.zip' '$url$rel' && sha256sum '$work/dl/a.zip' &&
	       mv '$work/dl/a.zip' '$work/dl/$(basename "$zip")' &&
	       '$bin' install '$work/dl/$(basename "$zip")' --manifest '$manifest' \
	       --root '$work/r' --no-verify --quiet"
measure "cudnnctl download $ver (download + sha256 into the cache)" "$fresh" \
	"$bin" download "$ver" --mirror "$url" --manifest "$manifest" --cache "$work/c" \
	--cuda 13 --quiet
measure "curl -o + sha256sum" "$fresh" \
	sh -c "curl -sSf -o '$work/dl/a.zip' '$url$rel' && sha256sum '$work/dl/a.zip'"
"$bin" download "$ver" --mirror "$url" --manifest "$manifest" --cache "$work/c" \
	--cuda 13 --quiet >/dev/null
measure "cudnnctl install $ver from the cache (server not needed)" 'rm -rf $work/r' \
	"$bin" install "$ver" --offline --manifest "$manifest" --cache "$work/c" \
	--root "$work/r" --cuda 13 --no-verify --quiet

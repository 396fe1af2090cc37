#!/bin/bash
# Times `cudnnctl download VERSION` over several connections against curl's
# one, side by side in one run, from the tests' server
# (tests/lib/redist_server.py) on 127.0.0.1 with real cuDNN files packed
# into a zip: once with every connection capped at RATE bytes a second (a
# CDN's per-connection shaping; default 25 MB/s), once uncapped (loopback),
# and once with all connections together held to 100 MB/s (the link as the
# limit), where install VERSION is timed too, against install FILE.
# Prints a markdown table (median of RUNS, peak RSS) and the ratios.
#
#   bench/ranges.sh [LIBDIR]    (default: /usr/local/cuda/lib, real cuDNN)
#
# Needs: build/cudnnctl, python3, curl, sha256sum, /usr/bin/time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDNNCTL:-$repo/build/cudnnctl}
libdir=${1:-/usr/local/cuda/lib}
runs=${RUNS:-3}
rate=${RATE:-25000000}
work=$(mktemp -d /tmp/cudnnctl-bench-rg.XXXXXX)
. "$repo/bench/measure.sh"
export HOME=$work/home
mkdir -p "$HOME" "$work/mirror"

ver=9.90.0.1
zip=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version "$ver" \
	--cuda 13 --platform linux-x86_64 --format zip --out "$work")
python3 "$repo/tests/lib/redist_server.py" mirror --root "$work/mirror" \
	--archive "$zip" "$ver" linux-x86_64 13 >/dev/null
manifest=$(ls "$work"/mirror/redistrib_*.json)
rel=cudnn/linux-x86_64/$(basename "$zip")
size=$(stat -c %s "$zip")

cat "$work/mirror/$rel" >/dev/null # warm the page cache

fresh='rm -rf $work/c $work/dl; mkdir -p $work/dl'
row() { # label-suffix connections
	measure "cudnnctl download $ver --connections $2$1" "$fresh" \
		"$bin" download "$ver" --mirror "$url" --manifest "$manifest" \
		--cache "$work/c" --cuda 13 --connections "$2" --quiet
}
curl_row() { # label-suffix
	measure "curl -o$1" "$fresh" curl -sSf -o "$work/dl/a.zip" "$url$rel"
	measure "curl -o + sha256sum$1" "$fresh" \
		sh -c "curl -sSf -o '$work/dl/a.zip' '$url$rel' && sha256sum '$work/dl/a.zip'"
}

echo "archive: $(basename "$zip") $size bytes, $(nproc) cores, $(date -u +%F)"
echo
report_header
serve --fault "{\"kind\":\"slow\",\"path\":\"*\",\"count\":null,\"rate\":$rate}"
capped=" (each connection at most $rate B/s)"
curl_row "$capped"
row "$capped" 1
row "$capped" 4
row "$capped" 8
serve
curl_row " (loopback, uncapped)"
row " (loopback, uncapped)" 1
row " (loopback, uncapped)" 4
# the link as the limit: at most 100 MB/s over all connections together
serve --rate-total 100000000
linked=" (all connections together at most 100 MB/s)"
measure "curl -o$linked" "$fresh" curl -sSf -o "$work/dl/a.zip" "$url$rel"
row "$linked" 4
measure "cudnnctl install $ver --connections 4$linked" 'rm -rf $work/c $work/r' \
	"$bin" install "$ver" --mirror "$url" --manifest "$manifest" --cache "$work/c" \
	--root "$work/r" --cuda 13 --connections 4 --no-verify --quiet
measure "cudnnctl install FILE (the zip on disk, no download)" 'rm -rf $work/r' \
	"$bin" install "$zip" --manifest "$manifest" --root "$work/r" --no-verify --quiet
echo
awk -F '\t' '{m[$1]=$2} END {
	c = " (each connection at most '"$rate"' B/s)"; u = " (loopback, uncapped)";
	l = " (all connections together at most 100 MB/s)";
	printf "capped: curl -o / cudnnctl --connections 4 = %.2f\n",
		m["curl -o" c] / m["cudnnctl download '"$ver"' --connections 4" c];
	printf "capped: curl -o / cudnnctl --connections 8 = %.2f\n",
		m["curl -o" c] / m["cudnnctl download '"$ver"' --connections 8" c];
	printf "uncapped: cudnnctl --connections 4 / curl -o + sha256sum = %.2f\n",
		m["cudnnctl download '"$ver"' --connections 4" u] / m["curl -o + sha256sum" u];
	printf "uncapped: cudnnctl --connections 4 / --connections 1 = %.2f\n",
		m["cudnnctl download '"$ver"' --connections 4" u] / m["cudnnctl download '"$ver"' --connections 1" u];
	printf "link-limited: cudnnctl download --connections 4 / curl -o = %.2f\n",
		m["cudnnctl download '"$ver"' --connections 4" l] / m["curl -o" l];
	printf "link-limited: cudnnctl install VERSION / curl -o = %.2f\n",
		m["cudnnctl install '"$ver"' --connections 4" l] / m["curl -o" l] }' \
	"$work/medians"

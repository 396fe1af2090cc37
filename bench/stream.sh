#!/bin/bash
# Times `cudnnctl install VERSION`, which reads the archive as it downloads,
# against `curl -o` of the same archive alone, against `install FILE` of
# the archive already on disk and against itself with CUDNNCTL_STREAM=0
# (download, then install), side by side in one run, from the tests'
# server (tests/lib/redist_server.py) on 127.0.0.1 with real cuDNN files
# packed into a zip and a tar.xz (one xz block, as mkcudnn's --from packs
# it): with all connections together held to 100 MB/s (the link as the
# limit), and uncapped (loopback); and the same files as xz's default
# preset makes a tar.xz on threads (xz -6 -T0: blocks of 24 MiB), with the
# link as the limit, for its peak memory while it streams.  Prints a markdown table (median of
# RUNS rounds, each running the four commands of a case once, so that a
# drifting machine slows them alike; peak RSS) and the ratios of issue
# 28's targets.
#
#   bench/stream.sh [LIBDIR]    (default: /usr/local/cuda/lib, real cuDNN)
#
# BASELINE=PATH (another build's cudnnctl, e.g. one from before the resume
# journal) adds loopback rows of the zip's install VERSION by it and by
# this build, interleaved, and their ratio: what a change costs.
#
# CASES (default: all of them): "zip txz mb loopback", the link-limited
# zip, tar.xz and xz -6 -T0 tar.xz, and the loopback zip.
#
# Needs: build/cudnnctl, python3, curl, /usr/bin/time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDNNCTL:-$repo/build/cudnnctl}
libdir=${1:-/usr/local/cuda/lib}
runs=${RUNS:-3}
work=$(mktemp -d /tmp/cudnnctl-bench-st.XXXXXX)
. "$repo/bench/measure.sh"
export HOME=$work/home
mkdir -p "$HOME" "$work/mirror"

# the same files as 9.90.0.1 in a zip and 9.91.0.1 in a tar.xz
zip=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version 9.90.0.1 \
	--cuda 13 --platform linux-x86_64 --format zip --out "$work")
txz=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version 9.91.0.1 \
	--cuda 13 --platform linux-x86_64 --format tar.xz --out "$work")
cases=" ${CASES:-zip txz mb loopback} "
# and as 9.92.0.1 in xz's multi-block tar.xz (xz -6 -T0), when measured
mb=$work/mb/cudnn-linux-x86_64-9.92.0.1_cuda13-archive.tar.xz
mkdir -p "$work/mb"
if [[ $cases == *" mb "* ]]; then
	mb=$(python3 "$repo/tests/fixtures/mkcudnn.py" pack --from "$libdir" --version 9.92.0.1 \
		--cuda 13 --platform linux-x86_64 --format tar --out "$work/mb")
	xz -6 -T0 "$mb"
	mb=$mb.xz
else
	cp "$txz" "$mb"
fi
python3 "$repo/tests/lib/redist_server.py" mirror --root "$work/mirror" \
	--archive "$zip" 9.90.0.1 linux-x86_64 13 \
	--archive "$txz" 9.91.0.1 linux-x86_64 13 \
	--archive "$mb" 9.92.0.1 linux-x86_64 13 >/dev/null
mzip=$work/mirror/redistrib_9.90.0.json
mtxz=$work/mirror/redistrib_9.91.0.json
mmb=$work/mirror/redistrib_9.92.0.json
cat "$zip" "$txz" "$mb" >/dev/null # warm the page cache

fresh='rm -rf $work/c $work/r $work/dl; mkdir -p $work/dl'
rows() { # kind version archive manifest label-suffix: RUNS rounds, interleaved
	local kind=$1 ver=$2 archive=$3 manifest=$4 sfx=$5 i
	local labels=("curl -o ($kind)$sfx" "install VERSION ($kind)$sfx"
		"install VERSION, CUDNNCTL_STREAM=0 ($kind)$sfx" "install FILE ($kind)$sfx")
	for i in $(seq 1 "$runs"); do
		once "${labels[0]}" "$fresh" curl -sSf -o "$work/dl/a" \
			"${url}cudnn/linux-x86_64/$(basename "$archive")"
		once "${labels[1]}" "$fresh" "$bin" install "$ver" \
			--mirror "$url" --manifest "$manifest" --cache "$work/c" --root "$work/r" \
			--cuda 13 --no-verify --quiet
		once "${labels[2]}" "$fresh" \
			env CUDNNCTL_STREAM=0 "$bin" install "$ver" --mirror "$url" \
			--manifest "$manifest" --cache "$work/c" --root "$work/r" --cuda 13 \
			--no-verify --quiet
		once "${labels[3]}" "$fresh" "$bin" install "$archive" \
			--manifest "$manifest" --root "$work/r" --no-verify --quiet
	done
	for i in "${labels[@]}"; do report "$i"; done
}

echo "zip: $(stat -c %s "$zip") bytes; tar.xz: $(stat -c %s "$txz") bytes;" \
	"xz -6 -T0: $(stat -c %s "$mb") bytes," \
	"$(xz --robot --list "$mb" | awk '/^totals/{print $3}') blocks;" \
	"$(nproc) cores, $(date -u +%F)"
echo
report_header
serve --rate-total 100000000
linked=", at most 100 MB/s"
[[ $cases != *" zip "* ]] || rows zip 9.90 "$zip" "$mzip" "$linked"
[[ $cases != *" txz "* ]] || rows tar.xz 9.91 "$txz" "$mtxz" "$linked"
[[ $cases != *" mb "* ]] || rows "tar.xz, xz -6 -T0" 9.92 "$mb" "$mmb" "$linked"
serve
[[ $cases != *" loopback "* ]] || rows zip 9.90 "$zip" "$mzip" ", loopback"
if [ -n "${BASELINE:-}" ]; then
	for i in $(seq 1 "$runs"); do
		for b in "$BASELINE" "$bin"; do
			once "install VERSION (zip), loopback, $b" "$fresh" "$b" install 9.90 \
				--mirror "$url" --manifest "$mzip" --cache "$work/c" --root "$work/r" \
				--cuda 13 --no-verify --quiet
		done
	done
	report "install VERSION (zip), loopback, $BASELINE"
	report "install VERSION (zip), loopback, $bin"
fi
echo
awk -F '\t' 'function q(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
	function mx(a, b) { return a > b ? a : b }
	{m[$1]=$2} END {
	l = ", at most 100 MB/s"; u = ", loopback";
	printf "link-limited zip: install VERSION / curl -o = %s (target 1.1)\n",
		q(m["install VERSION (zip)" l], m["curl -o (zip)" l]);
	printf "link-limited tar.xz: install VERSION / max(curl -o, install FILE) = %s (target 1.1)\n",
		q(m["install VERSION (tar.xz)" l], mx(m["curl -o (tar.xz)" l], m["install FILE (tar.xz)" l]));
	k = "(tar.xz, xz -6 -T0)";
	printf "link-limited tar.xz of xz -6 -T0: install VERSION / max(curl -o, install FILE) = %s (target 1.1)\n",
		q(m["install VERSION " k l], mx(m["curl -o " k l], m["install FILE " k l]));
	printf "loopback zip: install VERSION / install FILE = %s (target 1.2)\n",
		q(m["install VERSION (zip)" u], m["install FILE (zip)" u]);
	printf "streaming / CUDNNCTL_STREAM=0: zip %s, tar.xz %s, xz -6 -T0 %s (link-limited)\n",
		q(m["install VERSION (zip)" l], m["install VERSION, CUDNNCTL_STREAM=0 (zip)" l]),
		q(m["install VERSION (tar.xz)" l], m["install VERSION, CUDNNCTL_STREAM=0 (tar.xz)" l]),
		q(m["install VERSION " k l], m["install VERSION, CUDNNCTL_STREAM=0 " k l]) }' \
	"$work/medians"
if [ -n "${BASELINE:-}" ]; then
	awk -F '\t' -v b="install VERSION (zip), loopback, $BASELINE" \
		-v n="install VERSION (zip), loopback, $bin" '{m[$1]=$2} END {
		printf "loopback zip, this build / BASELINE: %.2f\n", m[n] / m[b] }' "$work/medians"
fi

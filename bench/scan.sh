#!/bin/bash
# Times `cudnnctl scan` (the known places) against the usual hunt for
# stray copies with the standard tools, side by side: `ldconfig -p` (the
# loader's cache only) and `find / -xdev` for libcudnn*, what people run
# (`where /R C:\ cudnn64_9.dll` on Windows).  Prints a markdown table
# (median of RUNS, peak RSS) and how many copies each found.
#
#   bench/scan.sh          RUNS (default 5); CUDNNCTL: the binary
#
# Needs: build/cudnnctl, find, ldconfig, /usr/bin/time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDNNCTL:-$repo/build/cudnnctl}
runs=${RUNS:-5}
work=$(mktemp -d /tmp/cudnnctl-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$repo/bench/measure.sh"

echo "| what | median s | peak RSS MiB |"
echo "|---|---|---|"
measure "cudnnctl scan" : "$bin" scan --json
measure "ldconfig -p (the cache only)" : sh -c 'ldconfig -p | grep libcudnn'
measure "find / -xdev -name 'libcudnn*'" : find / -xdev -name 'libcudnn*' -not -path '/proc/*'
echo
echo "folders with cuDNN found: cudnnctl scan $("$bin" scan --json |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["copies"]))');" \
	"find $(find / -xdev -name 'libcudnn*' -not -path '/proc/*' 2>/dev/null |
		xargs -r -n1 dirname | sort -u | wc -l)"

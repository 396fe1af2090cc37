#!/bin/sh
# Builds the fuzz targets with clang, libFuzzer and AddressSanitizer into
# build-fuzz/ and runs each for SECONDS (default 60) on a copy of its corpus.
#   tests/fuzz/run.sh [SECONDS]
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
cmake -S "$repo" -B "$repo/build-fuzz" -G Ninja -DCMAKE_C_COMPILER=clang \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDNNCTL_FUZZ=ON -DCUDNNCTL_WERROR=OFF \
	"-DCMAKE_C_FLAGS=-fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer" \
	"-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
cmake --build "$repo/build-fuzz" --target fuzz-manifest fuzz-archive fuzz-elf fuzz-record fuzz-pe \
	fuzz-pathvalue
for t in ${CUDNNCTL_FUZZ_TARGETS:-manifest archive elf record pe pathvalue}; do
	work=$repo/build-fuzz/corpus-$t
	mkdir -p "$work"
	cp -n "$repo/tests/fuzz/corpus/$t"/* "$work/" 2>/dev/null || true
	echo "fuzz-$t: ${secs}s"
	"$repo/build-fuzz/tests/fuzz/fuzz-$t" -max_total_time="$secs" -rss_limit_mb=2048 \
		-artifact_prefix="$repo/build-fuzz/crash-$t-" "$work" 2>&1 | tail -n 3
done

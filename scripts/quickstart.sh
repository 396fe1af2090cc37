#!/bin/sh
# The main job on an embedded default, from a fresh Debian machine:
# installs the build dependencies, builds cudnnctl, packs the cuDNN found on
# this machine (CUDNN_LIB, else /usr/local/cuda/lib*) into an archive with
# NVIDIA's layout and a manifest in NVIDIA's format, then installs it into
# a throwaway root (verified, then checked by `verify`) beside the small fake
# cuDNN 9.14 the tests build, lists them and switches between them.  Nothing outside the work folder and the build
# is changed: HOME points into the work folder for the demo.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${QUICKSTART_DIR:-/tmp/cudnnctl-quickstart}

sh "$repo/scripts/deps.sh"
sh "$repo/scripts/build.sh" >/dev/null
bin=$repo/build/cudnnctl
mk="python3 $repo/tests/fixtures/mkcudnn.py"

rm -rf "$work"
mkdir -p "$work/archives" "$work/home"
export HOME="$work/home"
unset CUDNNCTL_ROOT
root=$work/root

libdir=${CUDNN_LIB:-}
if [ -z "$libdir" ]; then
	for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
		if [ -e "$d/libcudnn.so.9" ] && [ -e "$d/../include/cudnn_version.h" ]; then
			libdir=$d
			break
		fi
	done
fi

step() { printf '\n$ %s\n' "$*"; "$@"; }

fake=$repo/build/tests/fake
if [ -n "$libdir" ]; then
	hdr=$libdir/../include/cudnn_version.h
	ver=$(awk '/#define CUDNN_MAJOR/{a=$3}/#define CUDNN_MINOR/{b=$3}/#define CUDNN_PATCHLEVEL/{c=$3}END{print a"."b"."c}' "$hdr")
	cuda=${CUDNN_CUDA:-$(ls "$libdir"/libcudart.so.* 2>/dev/null | sed -n 's/.*libcudart\.so\.\([0-9]*\).*/\1/p' | head -n1)}
	cuda=${cuda:-12}
	echo "packing the real cuDNN $ver from $libdir (CUDA $cuda) into an NVIDIA-layout zip..."
	real=$($mk pack --from "$libdir" --version "$ver.0" --cuda "$cuda" \
		--platform linux-x86_64 --format zip --out "$work/archives" \
		--manifest "$work/archives/redistrib_$ver.json")
else
	echo "no cuDNN found on this machine (set CUDNN_LIB=DIR to use one);"
	echo "packing the fake cuDNN 9.19 that the tests build instead"
	ver=9.19.0
	real=$($mk pack --from "$fake/good" --version "$ver.0" --cuda 13 \
		--platform linux-x86_64 --format tar.xz --out "$work/archives" \
		--manifest "$work/archives/redistrib_$ver.json")
fi
# a second version to switch to: the tests' fake cuDNN 9.14 (it answers
# cudnnGetVersion and little else; it is not real cuDNN)
old=$($mk pack --from "$fake/old" --version 9.14.0.99 --cuda 12 --platform linux-x86_64 \
	--format tar.xz --out "$work/archives" --manifest "$work/archives/redistrib_9.14.0.json")

step "$bin" install "$real" --root "$root" --manifest "$work/archives/redistrib_$ver.json"
step "$bin" install "$old" --root "$root" --manifest "$work/archives/redistrib_9.14.0.json" --no-activate
step "$bin" list --root "$root"
step "$bin" switch 9.14 --root "$root" --no-verify
step "$bin" switch "$ver" --root "$root"
step "$bin" env --root "$root"
printf '\n$ ls -l %s/current/lib | head\n' "$root"
ls -l "$root/current/lib" | head
echo
echo "quickstart: done; the demo root is $root (remove $work when finished)"

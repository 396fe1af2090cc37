#!/bin/bash
# The release binary (dist/cudnnctl-<version>-linux-x86_64.tar.gz from
# scripts/release.sh: glibc 2.27 sysroot, libraries linked in) on the GPU
# host: tests/gpu/e2e.sh with it (its files in $OUT/e2e), then verify
# --python against the image's Python with an install of the wheel's cuDNN
# active.  A summary in $OUT/release-run.txt, the frameworks in $OUT/py.json.
set -u
out=${OUT:-$(mktemp -d)}
log=$out/release-run.txt
mkdir -p /tmp/r "$out/e2e" && tar -xzf dist/cudnnctl-*-linux-x86_64.tar.gz -C /tmp/r --strip-components=1
B=/tmp/r/cudnnctl
step() { printf '\n$ %s\n' "$*" >>"$log"; "$@" >>"$log" 2>&1; echo "exit $?" >>"$log"; }
: >"$log"
step "$B" version
step ldd "$B"
step head -2 /etc/os-release
CUDNNCTL=$B E2E_OUT=$out/e2e E2E_RUNS=3 bash tests/gpu/e2e.sh >/dev/null 2>&1
echo "e2e.sh exit $?; $(grep -c '^PASS' "$out/e2e/e2e.log") PASS, $(grep -c '^FAIL' "$out/e2e/e2e.log") FAIL" >>"$log"
grep '^FAIL' "$out/e2e/e2e.log" >>"$log"
W=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
code=$(python3 -c "import ctypes; print(ctypes.CDLL('$W/libcudnn.so.9').cudnnGetVersion())")
v="$((code / 10000)).$((code % 10000 / 100)).$((code % 100))"
mkdir -p /tmp/py
t=$(python3 tests/fixtures/mkcudnn.py pack --from $W --version "$v" --cuda 13 \
	--platform linux-x86_64 --format tar.xz --out /tmp/py/a)
python3 tests/fixtures/mkcudnn.py manifest-entry --archive "$t" --version "$v" --cuda 13 \
	--platform linux-x86_64 --out /tmp/py/m.json >/dev/null
export HOME=/tmp/py/home
mkdir -p "$HOME"
step "$B" install "$t" --root /tmp/py/r --manifest /tmp/py/m.json --no-verify
export LD_LIBRARY_PATH=/tmp/py/r/current/lib
step "$B" verify --root /tmp/py/r --require-gpu
step "$B" verify --root /tmp/py/r --python /opt/torch/.venv/bin/python
"$B" verify --root /tmp/py/r --python /opt/torch/.venv/bin/python --json >"$out/py.json" 2>/dev/null
cat "$log"

#!/bin/bash
# Where cuDNN's sub-libraries come from, on the GPU host with its two real
# cuDNN builds: the torch wheel's (installed by cudnnctl, the release
# binary of dist/) and the system's 9.14 in /usr/lib/x86_64-linux-gnu.
#   1. verify --require-gpu --build: every sub-library from the install's
#      folder, the convolution, a program built with gcc against it;
#   2. the mixed case: 9.14's ops library, under the name 9.19's main
#      library asks the loader for, first on LD_LIBRARY_PATH: verify fails
#      at load, naming it, before any GPU stage;
#   3. the same mix with the check turned off (test hook): what the
#      convolution stage then does with it.
# A summary in $OUT/sublibs-run.txt, the JSON of 2 and 3 beside it.
set -u
out=${OUT:-$(mktemp -d)}
log=$out/sublibs-run.txt
mkdir -p /tmp/r && tar -xzf dist/cudnnctl-*-linux-x86_64.tar.gz -C /tmp/r --strip-components=1
B=/tmp/r/cudnnctl
step() { printf '\n$ %s\n' "$*" >>"$log"; "$@" >>"$log" 2>&1; echo "exit $?" >>"$log"; }
: >"$log"
W=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
S=/usr/lib/x86_64-linux-gnu
code=$(python3 -c "import ctypes; print(ctypes.CDLL('$W/libcudnn.so.9').cudnnGetVersion())")
v="$((code / 10000)).$((code % 10000 / 100)).$((code % 100))"
echo "wheel cuDNN $v; system: $(ls $S/libcudnn_ops.so.9.* 2>/dev/null)" >>"$log"
mkdir -p /tmp/py /tmp/mixed
t=$(python3 tests/fixtures/mkcudnn.py pack --from $W --version "$v" --cuda 13 \
	--platform linux-x86_64 --format tar.xz --out /tmp/py/a)
python3 tests/fixtures/mkcudnn.py manifest-entry --archive "$t" --version "$v" --cuda 13 \
	--platform linux-x86_64 --out /tmp/py/m.json >/dev/null
export HOME=/tmp/py/home
mkdir -p "$HOME"
R=/tmp/py/r
step "$B" install "$t" --root $R --manifest /tmp/py/m.json --no-verify
export LD_LIBRARY_PATH=$R/current/lib
step "$B" verify --root $R --require-gpu --build
ops=$(basename "$(readlink -f $R/current/lib/libcudnn_ops.so.9)")
cp "$(ls $S/libcudnn_ops.so.9.* | head -1)" /tmp/mixed/"$ops"
echo "planted: /tmp/mixed/$ops <- $(ls $S/libcudnn_ops.so.9.* | head -1)" >>"$log"
export LD_LIBRARY_PATH=/tmp/mixed:$R/current/lib
step "$B" verify --root $R --require-gpu
"$B" verify --root $R --require-gpu --json >"$out/mixed.json" 2>/dev/null
CUDNNCTL_TEST_NO_SUBLIBRARY_CHECK=1 step "$B" verify --root $R --require-gpu
CUDNNCTL_TEST_NO_SUBLIBRARY_CHECK=1 "$B" verify --root $R --require-gpu --json \
	>"$out/mixed-unchecked.json" 2>/dev/null
cat "$log"

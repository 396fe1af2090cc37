#!/bin/bash
# GPU end to end: packs each real cuDNN build found on this machine into an
# archive with NVIDIA's layout, name and manifest, installs them with
# cudnnctl into a fresh root, switches between them, runs `verify
# --require-gpu` after each switch, plants the failures users meet, and
# times `cudnnctl verify` next to a PyTorch one-liner doing the same
# convolution.
#
#   tests/gpu/e2e.sh [--quick]
#
# CUDNNCTL   the binary (default: build/cudnnctl, else dist/cudnnctl-linux)
# CUDNN_BUILDS  space-separated lib folders to use (default: searched)
# E2E_OUT    where the results go (default: $OUT or a temp folder)
# E2E_RUNS   timed runs of each command (default 7)
#
# Exits 0 when everything passed, 77 (skipped) on a machine without an
# NVIDIA driver and GPU, 1 otherwise.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${CUDNNCTL:-}
if [ -z "$bin" ]; then
	for b in "$repo/build/cudnnctl" "$repo/dist/cudnnctl-linux/cudnnctl"; do
		[ -x "$b" ] && bin=$b && break
	done
fi
results=${E2E_OUT:-${OUT:-$(mktemp -d)}}
runs=${E2E_RUNS:-7}
mk="python3 $repo/tests/fixtures/mkcudnn.py"
failures=0

say() { printf '%s\n' "$*" | tee -a "$results/e2e.log"; }
ok() { say "PASS: $*"; }
bad() { say "FAIL: $*"; failures=$((failures + 1)); }

mkdir -p "$results"
: >"$results/e2e.log"

if [ -z "$bin" ]; then
	say "SKIP: no cudnnctl binary (build it first: sh scripts/build.sh)"
	exit 77
fi
if ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
	say "SKIP: no NVIDIA driver on this machine (libcuda.so.1 does not load)"
	exit 77
fi
if ! python3 -c 'import ctypes,sys; c=ctypes.CDLL("libcuda.so.1"); n=ctypes.c_int(0); sys.exit(c.cuInit(0) or c.cuDeviceGetCount(ctypes.byref(n)) or n.value == 0)' 2>/dev/null; then
	say "SKIP: the NVIDIA driver sees no GPU"
	exit 77
fi

work=$(mktemp -d /tmp/cudnnctl-e2e.XXXXXX)
export HOME=$work/home
mkdir -p "$HOME" "$work/archives"
unset CUDNNCTL_ROOT
root=$work/root
# the library search path the test starts from: whatever the machine had,
# minus any cuDNN folder
base_ld=${LD_LIBRARY_PATH:-}

# ------------------------------------------------------------ the builds
find_builds() {
	if [ -n "${CUDNN_BUILDS:-}" ]; then
		printf '%s\n' $CUDNN_BUILDS
		return
	fi
	for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib \
		/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib \
		/usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64 /usr/local/cuda/lib; do
		[ -e "$d/libcudnn.so.9" ] && printf '%s\n' "$d"
	done
}

declare -a VERS CUDAS DIRS TARS ZIPS
while read -r dir; do
	[ -n "$dir" ] || continue
	codes=$(python3 -c "import ctypes; l=ctypes.CDLL('$dir/libcudnn.so.9'); print(l.cudnnGetVersion(), l.cudnnGetCudartVersion())") || continue
	read -r code cudart <<<"$codes"
	ver="$((code / 10000)).$((code % 10000 / 100)).$((code % 100))"
	cuda=$((cudart / 1000))
	build=0
	dist=$(ls -d "$dir"/../../../nvidia_cudnn_cu*-"$ver".*.dist-info 2>/dev/null | head -n1)
	[ -n "$dist" ] && build=$(basename "$dist" | sed -n "s/.*-$ver\.\([0-9]*\)\.dist-info/\1/p")
	full="$ver.${build:-0}"
	for v in "${VERS[@]:-}"; do [ "$v" = "$full" ] && continue 2; done
	VERS+=("$full"); CUDAS+=("$cuda"); DIRS+=("$dir")
done < <(find_builds)

if [ "${#VERS[@]}" -lt 1 ]; then
	say "SKIP: no cuDNN build found (set CUDNN_BUILDS)"
	exit 77
fi
say "cuDNN builds: $(for i in "${!VERS[@]}"; do printf '%s (cuda%s, %s)  ' "${VERS[$i]}" "${CUDAS[$i]}" "${DIRS[$i]}"; done)"
say "driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1)"

# ------------------------------------------------------------- pack them
t0=$(date +%s.%N)
for i in "${!VERS[@]}"; do
	v=${VERS[$i]} c=${CUDAS[$i]} d=${DIRS[$i]}
	name=cudnn-linux-x86_64-${v}_cuda${c}-archive
	tarf=$($mk pack --from "$d" --version "$v" --cuda "$c" --platform linux-x86_64 \
		--format tar --out "$work/archives") || { bad "pack $v"; continue; }
	xz -T0 -1 -f "$tarf" && tarf=$tarf.xz
	$mk manifest-entry --archive "$tarf" --version "$v" --cuda "$c" \
		--platform linux-x86_64 --out "$work/archives/redistrib_$v.json" >/dev/null
	zipf=$($mk pack --from "$d" --version "$v" --cuda "$c" --platform linux-x86_64 \
		--format zip --level 1 --out "$work/archives" \
		--manifest "$work/archives/redistrib_${v}_zip.json") || { bad "pack zip $v"; continue; }
	TARS+=("$tarf"); ZIPS+=("$zipf")
	[ "$(basename "$tarf")" = "$name.tar.xz" ] && ok "packed $name.tar.xz and .zip" || bad "archive name $(basename "$tarf")"
done
say "packing took $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"

manifests=()
for f in "$work"/archives/redistrib_*.json; do manifests+=(--manifest "$f"); done

# check a verify JSON: every stage passed (or warned, listed), version as expected
check_verify() { # label json expected-version(M.m.p)
	python3 - "$1" "$2" "$3" <<'PY' | tee -a "$results/e2e.log"
import json, sys
label, path, want = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"FAIL: {label}: no JSON ({e})"); sys.exit(1)
st = {s["stage"]: s for s in d["stages"]}
bad = [f'{k}={v["status"]}' for k, v in st.items() if v["status"] not in ("pass", "warn")]
warn = [f'{k}: {v["reason"]}' for k, v in st.items() if v["status"] == "warn"]
conv = st["convolution"]
okay = (not bad and d["exit_status"] == 0 and d["cudnn_version"] == want
        and conv["status"] == "pass" and d["max_rel_error"] is not None and d["max_rel_error"] < 1e-5)
print(("PASS" if okay else "FAIL") + f": {label}: loaded {d['cudnn_version']} (want {want}) "
      f"from {d['loaded']}; conv max rel err {d['max_rel_error']}; {d['gpu']}; "
      f"{'all stages passed' if not bad else 'not passed: ' + ', '.join(bad)}; total {d['total_ms']:.0f} ms")
for w in warn:
    print(f"  warn: {w}")
sys.exit(0 if okay else 1)
PY
}

mmp() { echo "$1" | cut -d. -f1-3; }

# --------------------------------------------- install, list, switch, verify
i0=0; i1=$(( ${#VERS[@]} > 1 ? 1 : 0 ))
A=${VERS[$i0]} B=${VERS[$i1]}
"$bin" install "${TARS[$i0]}" --root "$root" "${manifests[@]}" --no-verify --quiet >"$work/install1.txt" 2>&1 \
	&& ok "install $(basename "${TARS[$i0]}")" || { bad "install ${TARS[$i0]}"; cat "$work/install1.txt"; }
if [ "$i1" != "$i0" ]; then
	"$bin" install "${ZIPS[$i1]}" --root "$root" "${manifests[@]}" --no-activate --no-verify --quiet >"$work/install2.txt" 2>&1 \
		&& ok "install $(basename "${ZIPS[$i1]}") (zip, --no-activate)" || { bad "install ${ZIPS[$i1]}"; cat "$work/install2.txt"; }
fi
"$bin" list --root "$root" | tee -a "$results/e2e.log"
n=$("$bin" list --root "$root" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["installed"]))')
[ "$n" = "${#VERS[@]}" ] && ok "list shows $n installs" || bad "list shows $n installs"

# the order the issue asks for: B -> A -> B (9.14 -> 9.19 -> 9.14 on the H200 host)
seq=("$B" "$A" "$B")
for step in "${!seq[@]}"; do
	v=${seq[$step]}
	"$bin" switch "$v" --root "$root" --no-verify >>"$results/e2e.log" 2>&1 || bad "switch $v"
	# a new shell: sources env.sh
	( export LD_LIBRARY_PATH=$base_ld; . "$root/env.sh";
	  "$bin" verify --root "$root" --require-gpu --json --junit "$results/verify-$step.xml" >"$work/verify-$step.json" 2>"$work/verify-$step.err" )
	check_verify "switch to $v, verify" "$work/verify-$step.json" "$(mmp "$v")" || failures=$((failures + 1))
done
cp "$work/verify-1.json" "$results/verify-pass.json" 2>/dev/null
( export LD_LIBRARY_PATH=$base_ld; . "$root/env.sh"; "$bin" switch "$A" --root "$root" --no-verify >/dev/null; "$bin" verify --root "$root" --require-gpu ) >"$results/verify-pass.txt" 2>&1

# ------------------------------------------------------ planted failures
cur=$(readlink "$root/current")
libdir=$root/$cur/lib
expect_fail() { # label expected-exit expected-stage cmd...
	local label=$1 want=$2 stage=$3; shift 3
	"$@" >"$work/planted.json" 2>"$work/planted.err"
	local rc=$?
	python3 - "$label" "$rc" "$want" "$stage" "$work/planted.json" <<'PY' | tee -a "$results/e2e.log"
import json, sys
label, rc, want, stage, path = sys.argv[1:]
d = json.load(open(path))
st = {s["stage"]: s for s in d["stages"]}
okay = int(rc) == int(want) and st[stage]["status"] == "fail"
print(("PASS" if okay else "FAIL") + f": {label}: exit {rc} (want {want}); {stage}: {st[stage]['status']}: {st[stage]['reason']}")
for name in ("create", "convolution"):
    print(f"  {name}: {st[name]['status']}: {st[name]['reason'] or st[name]['finding']}")
sys.exit(0 if okay else 1)
PY
	[ "${PIPESTATUS[0]}" = 0 ] || failures=$((failures + 1))
}

if [ "$i1" != "$i0" ]; then
	# 1. shadowing: the other build earlier in LD_LIBRARY_PATH
	shadow=$work/shadow
	mkdir -p "$shadow"
	cp -a "${DIRS[$i1]}"/libcudnn*.so* "$shadow/"
	expect_fail "shadowing copy of $B earlier in LD_LIBRARY_PATH" 24 load \
		env LD_LIBRARY_PATH="$shadow:$root/current/lib${base_ld:+:$base_ld}" \
		"$bin" verify --root "$root" --require-gpu --json
fi

# 2. a removed sub-library: cudnnCreate still works, the convolution does not
sub=$(ls "$libdir"/libcudnn_cnn.so.9.* 2>/dev/null | head -n1)
if [ -n "$sub" ]; then
	mv "$sub" "$work/saved_cnn"
	expect_fail "removed $(basename "$sub")" 21 files \
		env LD_LIBRARY_PATH="$root/current/lib${base_ld:+:$base_ld}" \
		"$bin" verify --root "$root" --require-gpu --json
	python3 -c "
import json,sys; d=json.load(open('$work/planted.json')); st={s['stage']:s for s in d['stages']}
ok = st['create']['status']=='pass' and st['convolution']['status']=='fail'
print(('PASS' if ok else 'FAIL')+': removed sub-library: create '+st['create']['status']+', convolution '+st['convolution']['status'])
sys.exit(0 if ok else 1)" | tee -a "$results/e2e.log" || failures=$((failures + 1))
	mv "$work/saved_cnn" "$sub"
fi

# 3. one corrupted byte in a library
victim=$(ls "$libdir"/libcudnn_graph.so.9.* | head -n1)
cp -p "$victim" "$work/saved_graph"
python3 -c "
f=open('$victim','r+b'); f.seek(4096); b=f.read(1); f.seek(4096); f.write(bytes([b[0]^0xff])); f.close()"
expect_fail "one byte of $(basename "$victim") changed" 21 files \
	env LD_LIBRARY_PATH="$root/current/lib${base_ld:+:$base_ld}" \
	"$bin" verify --root "$root" --require-gpu --json
cp -p "$work/saved_graph" "$victim"

# ---------------------------------------------------- every GPU at once
ngpu=$(python3 -c 'import ctypes; c=ctypes.CDLL("libcuda.so.1"); n=ctypes.c_int(0); c.cuInit(0); c.cuDeviceGetCount(ctypes.byref(n)); print(n.value)')
( export LD_LIBRARY_PATH=$base_ld; . "$root/env.sh"
  "$bin" verify --root "$root" --require-gpu --device all --json --junit "$results/verify-all.xml" >"$work/verify-all.json" 2>"$work/verify-all.err"
  "$bin" verify --root "$root" --require-gpu --device all >"$results/verify-all.txt" 2>&1 )
python3 - "$work/verify-all.json" "$ngpu" "$results/verify-all.xml" <<'PY' | tee -a "$results/e2e.log"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
gpus = d["gpus"]
cases = [c.get("name") for c in ET.parse(sys.argv[3]).getroot().iter("testcase")]
okay = (d["exit_status"] == 0 and len(gpus) == n and all(g["ok"] for g in gpus)
        and all(g["max_rel_error"] is not None and g["max_rel_error"] < 1e-5 for g in gpus)
        and (n == 1 or sum("-gpu" in c for c in cases) == 3 * n))
print(("PASS" if okay else "FAIL") + f": verify --device all on {n} GPU(s): exit {d['exit_status']}; "
      + "; ".join(f"GPU {g['index']} {g['name']} {g['uuid']}: "
                  + ", ".join(f"{s['stage']} {s['status']} {s['ms']:.1f} ms" for s in g["stages"])
                  for g in gpus))
sys.exit(0 if okay else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] || failures=$((failures + 1))
if [ "$ngpu" -ge 2 ]; then
	# one GPU against all of them, interleaved runs; the devices work in
	# parallel, so the target is at most 1.3 times the one-GPU time
	python3 - "$bin" "$root" "$runs" "$results" "$base_ld" "$ngpu" <<'PY' | tee -a "$results/e2e.log"
import os, statistics, subprocess, sys, time
bin, root, runs, results, base_ld, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
env = dict(os.environ)
env["LD_LIBRARY_PATH"] = f"{root}/current/lib" + (":" + base_ld if base_ld else "")
cmds = {"cudnnctl verify --require-gpu (GPU 0)": [bin, "verify", "--root", root, "--require-gpu"],
        f"cudnnctl verify --require-gpu --device all ({n} GPUs)":
            [bin, "verify", "--root", root, "--require-gpu", "--device", "all"]}
times = {k: [] for k in cmds}
for i in range(runs + 1):
    for name, cmd in cmds.items():
        t = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i:
            times[name].append(time.perf_counter() - t)
        if p.returncode != 0:
            print(f"FAIL: timing run of {name} exited {p.returncode}")
with open(os.path.join(results, "timings-gpus.md"), "w") as f:
    f.write(f"| command | median of {runs} (s) | min | max |\n|---|---|---|---|\n")
    for name, t in times.items():
        f.write(f"| `{name}` | {statistics.median(t):.3f} | {min(t):.3f} | {max(t):.3f} |\n")
one, every = (statistics.median(t) for t in times.values())
print(open(os.path.join(results, "timings-gpus.md")).read())
print(f"NOTE: verify on {n} GPUs takes {every / one:.2f} of the one-GPU time (target 1.3)")
PY
fi

# ------------------------------------------------------------- timings
python3 - "$bin" "$root" "$runs" "$results" "$base_ld" <<'PY' | tee -a "$results/e2e.log"
import os, statistics, subprocess, sys, time
bin, root, runs, results, base_ld = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
env = dict(os.environ)
env["LD_LIBRARY_PATH"] = f"{root}/current/lib" + (":" + base_ld if base_ld else "")
py = ("import torch; x=torch.randn(1,3,32,32,device='cuda'); w=torch.randn(8,3,3,3,device='cuda'); "
      "y=torch.nn.functional.conv2d(x,w,padding=1); torch.cuda.synchronize(); print(float(y.abs().sum()))")
cmds = {
    "cudnnctl verify --require-gpu": [bin, "verify", "--root", root, "--require-gpu"],
    "cudnnctl verify --no-gpu": [bin, "verify", "--root", root, "--no-gpu"],
    "python3 -c 'import torch; ...conv2d...'": [sys.executable, "-c", py],
}
rows = []
for name, cmd in cmds.items():
    times = []
    for i in range(runs + 1):
        t = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
        if p.returncode != 0:
            print(f"FAIL: timing run of {name} exited {p.returncode}")
    rows.append((name, times[0], statistics.median(times[1:]), min(times[1:]), max(times[1:])))
with open(os.path.join(results, "timings.md"), "w") as f:
    f.write(f"| command | first run (s) | median of {runs} (s) | min | max |\n|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| `{r[0]}` | {r[1]:.3f} | {r[2]:.3f} | {r[3]:.3f} | {r[4]:.3f} |\n")
print(open(os.path.join(results, "timings.md")).read())
ratio = rows[0][2] / rows[2][2]
print(("PASS" if ratio <= 1 / 6 else "FAIL") + f": verify with its convolution takes {ratio:.3f} of the PyTorch one-liner's time (limit 1/6)")
PY
[ "${PIPESTATUS[0]}" = 0 ] || failures=$((failures + 1))
grep -q '^FAIL: verify with' "$results/e2e.log" && failures=$((failures + 1))

rm -rf "$work"
if [ "$failures" -gt 0 ]; then
	say "e2e: $failures check(s) failed"
	exit 1
fi
say "e2e: all checks passed"

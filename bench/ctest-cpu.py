#!/usr/bin/env python3
"""Each ctest entry's wall and CPU time (user + sys of its process tree,
os.wait4), the entries run JOBS at a time as `ctest -j JOBS` would run
them, from the commands ctest itself lists (`ctest --show-only=json-v1`).

Usage: bench/ctest-cpu.py BUILD_DIR [JOBS] [CTEST_ARGS...]
  e.g. bench/ctest-cpu.py build-static 4 -L "unit|cli"

Prints the entries by CPU time, the longest first, then the totals: the
suite's wall time and the sum of the entries' CPU. On N cores the suite
cannot take less than that CPU / N.
"""
import json
import os
import subprocess
import sys
import threading
import time


def entries(build, args):
    doc = subprocess.run(["ctest", "--show-only=json-v1"] + args, cwd=build,
                         capture_output=True, text=True, check=True).stdout
    out = []
    for t in json.loads(doc)["tests"]:
        if "command" not in t:
            continue
        env, cwd, setup = dict(os.environ), build, False
        for p in t.get("properties", []):
            if p["name"] == "FIXTURES_SETUP":
                setup = True
            if p["name"] == "ENVIRONMENT":
                env.update(v.split("=", 1) for v in p["value"])
            elif p["name"] == "WORKING_DIRECTORY":
                cwd = p["value"]
        out.append((t["name"], t["command"], env, cwd, setup))
    # what other entries need made first, as ctest does
    return [e for e in out if e[4]], [e for e in out if not e[4]]


def run_one(entry, results, lock):
    name, cmd, env, cwd, _ = entry
    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    with lock:
        results.append((name, time.monotonic() - start, ru.ru_utime + ru.ru_stime,
                        p.returncode))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    first, pending = entries(build, sys.argv[3:])
    results, lock, threads = [], threading.Lock(), []
    start = time.monotonic()
    for e in first:
        run_one(e, results, lock)
    while pending or threads:
        threads = [t for t in threads if t.is_alive()]
        while pending and len(threads) < jobs:
            t = threading.Thread(target=run_one, args=(pending.pop(0), results, lock))
            t.start()
            threads.append(t)
        time.sleep(0.05)
    wall = time.monotonic() - start
    results.sort(key=lambda r: -r[2])
    for name, w, cpu, rc in results:
        print("%-55s %7.1f s wall %7.1f s CPU%s" % (name, w, cpu, "" if rc == 0 else
                                                     "  FAILED (%d)" % rc))
    cpu = sum(r[2] for r in results)
    failed = sum(1 for r in results if r[3] != 0)
    print("%d entries, -j%d: %.1f s wall, %.1f s CPU in all, %d failed" %
          (len(results), jobs, wall, cpu, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The Wine prefix the wine-unit-* tests share, as a ctest fixture:

    python3 tests/wine/unitprefix.py up PREFIX     (FIXTURES_SETUP)
    python3 tests/wine/unitprefix.py down PREFIX   (FIXTURES_CLEANUP)
    python3 tests/wine/unitprefix.py template DIR  (FIXTURES_SETUP)

`up` starts one persistent wineserver for PREFIX and makes the prefix
(wineboot --init) before any unit test runs; `down` stops that server.
Without it the unit tests started side by side in a prefix that did not
exist yet, and one of them once died at once with "wine: chdir to
/tmp/wine-.../server-...: No such file or directory" (CI, 2026-12-02).
Debian's Wine puts each wineserver's socket in a mkdtemp folder named by
the file PREFIX/wineserver (Debian bug 903622), and clients and servers
starting together in a new prefix can name different folders.  With the
prefix made and one server up before the first test, no test starts one.

`template` makes, for the test files, the prefix each of their processes
copies (winetest.py's clone_prefix), in DIR.new, renamed to DIR when
finished, under the Wine of this run (so under Wine 10 in the chroot).

Environment: WINE (default /usr/lib/wine/wine64).  Exit 77 (ctest's
SKIP_RETURN_CODE) when Wine or its wineserver is missing.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shutil  # noqa: E402
import time  # noqa: E402
from winetest import TEMPLATE_READY, WINE, make_prefix, wineserver_path  # noqa: E402


def wine_env(prefix):
    env = {k: os.environ[k] for k in ("PATH", "HOME", "USER", "LOGNAME", "TMPDIR")
           if k in os.environ}
    env.update(WINEPREFIX=prefix, WINEDEBUG="-all", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               WINEDLLOVERRIDES="mscoree,mshtml=")
    return env


def run(args, env, log, timeout):
    # the daemons Wine leaves behind (wineserver, services.exe) must hold no
    # pipe of ctest's: everything goes to the log, stdin from /dev/null
    subprocess.run(args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                   timeout=timeout, check=True)


def up(prefix):
    server = wineserver_path()
    if not os.access(WINE, os.X_OK) or not server:
        print("unitprefix: Wine or its wineserver not found (WINE=%s)" % WINE)
        return 77
    env = wine_env(prefix)
    os.makedirs(prefix, exist_ok=True)
    logname = prefix.rstrip("/") + ".log"
    with open(logname, "wb") as log:
        try:
            # a server left by an earlier, killed run goes first; then one
            # that stays up until `down` (or 10 minutes after its last
            # client, should `down` never run)
            for arg in ("-k", "-w"):
                subprocess.run([server, arg], env=env, stdin=subprocess.DEVNULL,
                               stdout=log, stderr=log, timeout=60)
            run([server, "-p600"], env, log, 60)
            run([WINE, "wineboot", "--init"], env, log, 300)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            print("unitprefix: making the Wine prefix %s failed: %s (see %s)"
                  % (prefix, e, logname))
            return 1
    print("unitprefix: %s ready, one wineserver for the unit tests" % prefix)
    return 0


def down(prefix):
    server = wineserver_path()
    if not server:
        return 0
    env = wine_env(prefix)
    for arg in ("-k", "-w"):
        subprocess.run([server, arg], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    return 0


def template(folder):
    if not os.access(WINE, os.X_OK) or not wineserver_path():
        print("unitprefix: Wine or its wineserver not found (WINE=%s)" % WINE)
        return 77
    new = folder.rstrip("/") + ".new"
    for path in (new, folder):
        shutil.rmtree(path, ignore_errors=True)
    t = time.monotonic()
    prefix = os.path.join(new, "prefix")
    os.makedirs(prefix)
    env = wine_env(prefix)
    try:
        make_prefix(env, new)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        print("unitprefix: making the template prefix %s failed: %s (see %s)"
              % (prefix, e, os.path.join(new, "wineboot.log")))
        return 1
    version = subprocess.run([WINE, "--version"], env=env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL).stdout.strip()
    with open(os.path.join(prefix, TEMPLATE_READY), "w") as f:
        f.write(version + "\n")
    os.rename(new, folder)
    print("unitprefix: template prefix %s/prefix (%s) made in %.1f s"
          % (folder, version, time.monotonic() - t))
    return 0


def main(argv):
    if len(argv) != 3 or argv[1] not in ("up", "down", "template"):
        print("usage: unitprefix.py up|down PREFIX | template DIR", file=sys.stderr)
        return 2
    path = os.path.abspath(argv[2])
    return {"up": up, "down": down, "template": template}[argv[1]](path)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Writes docs/cudnnctl.1, the manual page, from what the binary says of
itself (`cudnnctl --help`, every `COMMAND --help`) and docs/exit-codes.md,
around the prose below.  tests/check-man.py runs it again and fails when
the committed page differs, or when an option is in one and not the other.

    python3 scripts/mkman.py [BINARY] [OUT]   (default: build/cudnnctl,
                                               docs/cudnnctl.1)
"""
import os
import re
import subprocess
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def esc(s):
    """Text for roff: backslashes, leading dots and quotes, hyphens."""
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", s, flags=re.M)


def md(s):
    """A line of Markdown from exit-codes.md as roff: `code`, **bold**."""
    s = esc(s)
    s = re.sub(r"`([^`]*)`", r"\\fB\1\\fR", s)
    return re.sub(r"\*\*([^*]*)\*\*", r"\\fB\1\\fR", s)


def run(binary, *args):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "GITHUB_ACTIONS", "TF_BUILD", "CUDNNCTL_ROOT")}
    return subprocess.run([binary] + list(args), capture_output=True, text=True,
                          env=env, check=True).stdout


def parse_options(text):
    """[(names, value, description)] of a help's option lists."""
    opts, cur = [], None
    for line in text.splitlines():
        m = re.match(r"^  (-\w, )?(--[a-z-]+)(?: (\S+))?(?:  +(\S.*))?$", line)
        if m:
            cur = [(m.group(1) or "") + m.group(2), m.group(3), m.group(4) or ""]
            opts.append(cur)
        elif cur and re.match(r"^ {24}\S", line):
            cur[2] = (cur[2] + " " + line.strip()).strip()
        else:
            cur = None
    return opts


def commands(binary):
    """[(name, usage arguments, summary)] from the top-level help."""
    out, section = [], None
    for line in run(binary, "--help").splitlines():
        if line == "commands:":
            section = True
            continue
        if section and not line.startswith("  "):
            break
        if section:
            # the arguments may be several words: "[VERSION] -- COMMAND"
            m = re.match(r"^  (\S+)((?: \S+)*)(?:  +(\S.*))?$", line)
            if m:
                out.append([m.group(1), m.group(2).strip(), m.group(3) or ""])
            else:
                out[-1][2] = (out[-1][2] + " " + line.strip()).strip()
    return out


PROSE_DESCRIPTION = """\
cudnnctl installs NVIDIA cuDNN from the zip or tar.xz NVIDIA ships, or by
version from NVIDIA's redist folder (or a mirror of it), proves the
install, and switches between versions. An archive is identified by its
SHA-256 against NVIDIA's manifests (built in, or fetched), every entry is
checked before anything is written, and it is extracted into a staging
folder that is renamed into place; the active version is a link (a junction
on Windows) named current, put on the library search path of new shells
(LD_LIBRARY_PATH through env.sh and the shell profiles on Linux; the user
or machine PATH on Windows). An interrupted or killed command leaves the
root and the environment as they were or as they will be, never half-way.
.PP
verify answers whether a new process finds, loads and can run the active
cuDNN, in eight timed stages: locate, files, version, dependencies, load,
driver, create and one convolution on the GPU, compared with a CPU
reference. install and switch end with it."""

PROSE_CI = """\
On when CI is set to anything but false or 0, or GITHUB_ACTIONS or TF_BUILD
is set; \\fB\\-\\-ci\\fR forces it. Progress is printed as plain lines, one
when a phase begins and one every 5 s. install and switch leave shell
profiles and the registry alone (\\fB\\-\\-persist\\fR changes them as outside
CI) and hand the active install to the job's later steps: GITHUB_ENV
(CUDNN_PATH; on Linux LD_LIBRARY_PATH, LIBRARY_PATH, CPATH), GITHUB_PATH
(the bin folder, Windows), GITHUB_OUTPUT (cudnn\\-id, cudnn\\-version, cuda,
cudnn\\-path, changed); on Azure Pipelines ##vso[task.prependpath] and
##vso[task.setvariable] lines. Every verify appends its table as Markdown
to GITHUB_STEP_SUMMARY."""

ENVIRONMENT = [
    ("CUDNNCTL_ROOT", "the default install root."),
    ("CUDNNCTL_MIRROR, CUDNNCTL_CACHE", "the default --mirror and --cache."),
    ("CUDNNCTL_JOBS", "the default --jobs of install (1 to 64)."),
    ("CUDNNCTL_TIMEOUT", "seconds a download waits for a connection, and for the next "
     "byte (default 30)."),
    ("CURL_CA_BUNDLE", "(Linux) a CA file to trust for HTTPS instead of the system's."),
    ("SSL_CERT_FILE, SSL_CERT_DIR", "(Linux) taken where libcurl has no CA store of its "
     "own (the release binary), before the usual places of distributions' CA files."),
    ("HTTPS_PROXY, NO_PROXY", "(Linux) proxies, as curl takes them; Windows uses the "
     "system's proxy settings."),
    ("CI, GITHUB_ACTIONS, TF_BUILD", "turn CI mode on (see CI MODE)."),
    ("GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY",
     "in CI mode, where the install is handed to the job's later steps."),
    ("NO_COLOR", "cudnnctl writes no colour in any case."),
]

FILES = [
    ("ROOT/versions/ID", "one installed version, with its record .cudnnctl\\-record "
     "(every file's size, SHA\\-256 and times)."),
    ("ROOT/current", "the active version (a link; a junction on Windows)."),
    ("ROOT/env.sh", "(Linux) what the shell profiles source."),
    ("~/.cache/cudnnctl", "the download cache: archives/ and manifests/ "
     "(%LOCALAPPDATA%\\ecudnnctl\\ecache on Windows)."),
]

EXAMPLES = [
    ("Install a downloaded archive, then check it:",
     ["cudnnctl install cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz",
      "cudnnctl verify"]),
    ("Install by version, from NVIDIA's redist folder, into the cache first:",
     ["cudnnctl install 9.10 --cuda 12"]),
    ("Check every GPU of a server, for a CI report:",
     ["cudnnctl verify --device all --require-gpu --junit verify.xml"]),
    ("Use the active version in this shell:", ['eval "$(cudnnctl env)"']),
]


def exit_codes():
    rows = []
    with open(os.path.join(REPO, "docs", "exit-codes.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\| (\d+) \| ([^|]+) \| ([^|]+) \|", line)
            if m:
                rows.append((m.group(1), m.group(2).strip(), m.group(3).strip()))
    return rows


def manual(binary):
    version = run(binary, "version").split()[-1]
    cmds = commands(binary)
    out = ['.\\" Made by scripts/mkman.py from cudnnctl --help and docs/exit-codes.md;',
           '.\\" edit those (or the prose in the script), then run it again.',
           '.TH CUDNNCTL 1 "" "cudnnctl %s" "User Commands"' % version,
           ".SH NAME",
           "cudnnctl \\- install, verify and switch NVIDIA cuDNN versions",
           ".SH SYNOPSIS"]
    for name, args, _ in cmds:
        out.append(".B cudnnctl %s" % name)
        out.append(".I %s" % esc(args) if args else "")
        out.append("[\\fIOPTIONS\\fR]")
        out.append(".br")
    out += [".B cudnnctl completions", ".I bash|zsh|powershell", ".br",
            ".B cudnnctl help", "[\\fICOMMAND\\fR]",
            ".SH DESCRIPTION", PROSE_DESCRIPTION, ".SH COMMANDS"]
    for name, args, summary in cmds:
        usage = run(binary, name, "--help")
        out.append(".SS %s" % esc(("%s %s" % (name, args)).strip()))
        out.append(esc(summary[0].upper() + summary[1:]) + ".")
        own = usage.split("options every command takes:")[0]
        for names, value, desc in parse_options(own):
            out.append(".TP")
            out.append("\\fB%s\\fR%s" % (esc(names), " \\fI%s\\fR" % esc(value) if value else ""))
            out.append(esc(desc))
    out += [".SS completions bash|zsh|powershell",
            "Print a completion script for the shell, made from the command table:",
            ".nf",
            '\\fBeval "$(cudnnctl completions bash)"\\fR',
            "\\fBcudnnctl completions zsh > ~/.zfunc/_cudnnctl\\fR",
            "\\fBcudnnctl completions powershell | Out\\-String | Invoke\\-Expression\\fR",
            ".fi",
            ".SH OPTIONS",
            "Every command takes these:"]
    common = run(binary, "version", "--help").split("options every command takes:")[1]
    for names, value, desc in parse_options(common):
        out.append(".TP")
        out.append("\\fB%s\\fR%s" % (esc(names), " \\fI%s\\fR" % esc(value) if value else ""))
        out.append(esc(desc))
    out += [".SH CI MODE", PROSE_CI, ".SH ENVIRONMENT"]
    for name, desc in ENVIRONMENT:
        out += [".TP", "\\fB%s\\fR" % esc(name), esc(desc)]
    out.append(".SH FILES")
    for name, desc in FILES:
        out += [".TP", "\\fI%s\\fR" % esc(name), desc]
    out += [".SH EXIT STATUS",
            "Stable numbers; \\fBcudnnctl version \\-\\-json\\fR lists them by name."]
    for status, code, meaning in exit_codes():
        out += [".TP", "\\fB%s\\fR %s" % (status, esc(code)), md(meaning)]
    out.append(".SH EXAMPLES")
    for what, lines in EXAMPLES:
        out += [".PP", esc(what), ".PP", ".nf", ".RS"]
        out += ["\\fB%s\\fR" % esc(line) for line in lines]
        out += [".RE", ".fi"]
    out += [".SH SEE ALSO",
            "docs/cudnnctl.md, docs/exit-codes.md and docs/fleets.md in cudnnctl's "
            "sources; \\fBldconfig\\fR(8), \\fBld.so\\fR(8)."]
    return "\n".join(line for line in out if line != "") + "\n"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build", "cudnnctl")
    dest = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "docs", "cudnnctl.1")
    text = manual(binary)
    if dest == "-":
        sys.stdout.write(text)
    else:
        with open(dest, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()

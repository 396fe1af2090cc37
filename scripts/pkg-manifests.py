#!/usr/bin/env python3
"""The Windows package managers' manifests of a release, from dist/:
winget's manifest set (version, installer, defaultLocale; schema 1.9.0)
in dist/winget/ and a Scoop manifest in dist/scoop/cudnnctl.json, both
with the Windows zip's URL and the SHA-256 that dist/SHA256SUMS gives
it.  The zip is a portable "zip" installer with cudnnctl.exe nested in
its top folder.  scripts/release.sh runs it after SHA256SUMS.

Usage: pkg-manifests.py DIST VERSION [URL_BASE]
  URL_BASE: where the release's files are downloaded from (default
  https://github.com/cudnnctl/cudnnctl/releases/download/vVERSION)
Stdlib only.
"""
import json
import os
import sys

ID = "cudnnctl.cudnnctl"
REPO = "https://github.com/cudnnctl/cudnnctl"
DESCRIPTION = ("Installs NVIDIA cuDNN from its zip or tar.xz, verified by SHA-256, "
               "sets up PATH, and proves it loads and runs a convolution")


def yaml_scalar(v):
    """A YAML scalar winget's parser reads back as the same string."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return json.dumps(v)  # a double-quoted YAML string is a JSON string


def yaml_dump(obj, indent=0):
    """The small subset of YAML the manifests need: maps, lists of maps,
    scalars."""
    pad = "  " * indent
    out = []
    for k, v in obj.items():
        if isinstance(v, dict):
            out.append("%s%s:" % (pad, k))
            out.append(yaml_dump(v, indent + 1))
        elif isinstance(v, list):
            out.append("%s%s:" % (pad, k))
            for item in v:
                if isinstance(item, dict):
                    body = yaml_dump(item, indent + 2).split("\n")
                    out.append("%s- %s" % (pad + "  ", body[0].strip()))
                    out.extend(body[1:])
                else:
                    out.append("%s- %s" % (pad + "  ", yaml_scalar(item)))
        else:
            out.append("%s%s: %s" % (pad, k, yaml_scalar(v)))
    return "\n".join(out)


def sums(dist):
    with open(os.path.join(dist, "SHA256SUMS"), encoding="utf-8") as f:
        return {line.split()[1].lstrip("*"): line.split()[0] for line in f if line.strip()}


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    dist, version = argv[1], argv[2]
    base = argv[3] if len(argv) == 4 else "%s/releases/download/v%s" % (REPO, version)
    zip_name = "cudnnctl-%s-windows-x86_64.zip" % version
    sha = sums(dist).get(zip_name)
    if not sha:
        print("pkg-manifests: %s is not in %s/SHA256SUMS" % (zip_name, dist), file=sys.stderr)
        return 1
    top = "cudnnctl-%s-windows-x86_64" % version
    url = "%s/%s" % (base.rstrip("/"), zip_name)
    header = "# yaml-language-server: $schema=https://aka.ms/winget-manifest.%s.1.9.0.schema.json\n"
    common = {"PackageIdentifier": ID, "PackageVersion": version}
    files = {
        ID + ".yaml": ("version", dict(common, DefaultLocale="en-US", ManifestType="version",
                                       ManifestVersion="1.9.0")),
        ID + ".installer.yaml": ("installer", dict(
            common, InstallerType="zip", NestedInstallerType="portable",
            NestedInstallerFiles=[{"RelativeFilePath": top + "\\cudnnctl.exe",
                                   "PortableCommandAlias": "cudnnctl"}],
            Commands=["cudnnctl"],
            Installers=[{"Architecture": "x64", "InstallerUrl": url,
                         "InstallerSha256": sha.upper()}],
            ManifestType="installer", ManifestVersion="1.9.0")),
        ID + ".locale.en-US.yaml": ("defaultLocale", dict(
            common, PackageLocale="en-US", Publisher="cudnnctl", PackageName="cudnnctl",
            PackageUrl=REPO, License="MIT", LicenseUrl=REPO + "/blob/main/LICENSE",
            ShortDescription=DESCRIPTION, Moniker="cudnnctl",
            Tags=["cudnn", "cuda", "nvidia", "gpu"],
            ManifestType="defaultLocale", ManifestVersion="1.9.0")),
    }
    wdir = os.path.join(dist, "winget")
    os.makedirs(wdir, exist_ok=True)
    for name, (kind, doc) in files.items():
        with open(os.path.join(wdir, name), "w", encoding="utf-8", newline="\n") as f:
            f.write(header % kind + yaml_dump(doc) + "\n")
    scoop = {
        "version": version,
        "description": DESCRIPTION,
        "homepage": REPO,
        "license": "MIT",
        "architecture": {"64bit": {"url": url, "hash": sha}},
        "extract_dir": top,
        "bin": "cudnnctl.exe",
        "checkver": "github",
        "autoupdate": {"architecture": {"64bit": {
            "url": "%s/releases/download/v$version/cudnnctl-$version-windows-x86_64.zip" % REPO}},
            "extract_dir": "cudnnctl-$version-windows-x86_64"},
    }
    sdir = os.path.join(dist, "scoop")
    os.makedirs(sdir, exist_ok=True)
    with open(os.path.join(sdir, "cudnnctl.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(scoop, f, indent=4)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

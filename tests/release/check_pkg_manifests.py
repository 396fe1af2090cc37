#!/usr/bin/env python3
"""Validates dist/winget/*.yaml and dist/scoop/cudnnctl.json against the
published schemas kept in tests/release/schemas/ (winget 1.9.0, Scoop; see
SOURCES.txt there), and checks that they name the Windows zip of
SHA256SUMS by URL, SHA-256 and nested file.  Needs PyYAML and jsonschema
(Debian: python3-yaml, python3-jsonschema).

Usage: check_pkg_manifests.py DIST VERSION      exit 0: valid
"""
import hashlib
import json
import os
import sys
import zipfile

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ID = "cudnnctl.cudnnctl"


def schema(name):
    with open(os.path.join(HERE, "schemas", name), encoding="utf-8") as f:
        return json.load(f)


def main(dist, version):
    zip_name = "cudnnctl-%s-windows-x86_64.zip" % version
    with open(os.path.join(dist, zip_name), "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(dist, "SHA256SUMS"), encoding="utf-8") as f:
        assert "%s  %s" % (sha, zip_name) in f.read(), "SHA256SUMS disagrees with the zip"
    docs = {}
    for kind, name in (("version", ID + ".yaml"), ("installer", ID + ".installer.yaml"),
                       ("defaultLocale", ID + ".locale.en-US.yaml")):
        with open(os.path.join(dist, "winget", name), encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        jsonschema.validate(doc, schema("manifest.%s.1.9.0.json" % kind))
        assert doc["PackageVersion"] == version and doc["ManifestType"] == kind, name
        docs[kind] = doc
    inst = docs["installer"]
    url = inst["Installers"][0]["InstallerUrl"]
    assert url.endswith("/v%s/%s" % (version, zip_name)), url
    assert inst["Installers"][0]["InstallerSha256"] == sha.upper()
    nested = inst["NestedInstallerFiles"][0]["RelativeFilePath"].replace("\\", "/")
    with zipfile.ZipFile(os.path.join(dist, zip_name)) as z:
        assert nested in z.namelist(), (nested, z.namelist())
    with open(os.path.join(dist, "scoop", "cudnnctl.json"), encoding="utf-8") as f:
        scoop = json.load(f)
    jsonschema.validate(scoop, schema("scoop.schema.json"))
    arch = scoop["architecture"]["64bit"]
    assert (arch["url"], arch["hash"], scoop["version"]) == (url, sha, version), scoop
    assert scoop["extract_dir"] + "/" + scoop["bin"] == nested, scoop
    assert "$version" in scoop["autoupdate"]["architecture"]["64bit"]["url"]
    print("winget and Scoop manifests of %s: valid, %s" % (version, sha))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

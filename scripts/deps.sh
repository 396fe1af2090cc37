#!/bin/sh
# Installs what building and testing cudnnctl needs on Debian/Ubuntu
# (with --test, also what only the tests use).
# Safe to run again: apt-get skips what is there.
set -eu
pkgs="build-essential cmake ninja-build pkg-config libarchive-dev liblzma-dev libcjson-dev libssl-dev libcurl4-openssl-dev libarchive-tools python3 xz-utils openssl curl clang"
# --test: what only the tests use (ansible-playbook for contrib/ansible,
# PyYAML to read action.yml, zsh for its completion script, groff for the
# manual page)
[ "${1:-}" = "--test" ] && pkgs="$pkgs ansible-core python3-yaml zsh groff-base"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "scripts/deps.sh: needs root to install:$missing" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

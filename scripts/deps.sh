#!/bin/sh
# Installs what building and testing cudnnctl needs on Debian/Ubuntu
# (with --test, also what only the tests use).
# Safe to run again: apt-get skips what is there.
set -eu
pkgs="build-essential cmake ninja-build pkg-config libarchive-dev liblzma-dev libcjson-dev libssl-dev libcurl4-openssl-dev libarchive-tools python3 xz-utils openssl curl clang"
# --test: what only the tests use (ansible-playbook for contrib/ansible,
# PyYAML to read action.yml, zsh for its completion script, groff for the
# manual page, tinyproxy for the download tests through a proxy,
# osslsigncode for the release's signing test)
[ "${1:-}" = "--test" ] && pkgs="$pkgs ansible-core python3-yaml python3-jsonschema zsh groff-base tinyproxy osslsigncode"
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
# --test: tree-sitter's PowerShell grammar (pinned, from the npm registry,
# no install scripts run) for tests/lint/ps-parse.mjs; where node or the
# registry is missing that test is skipped, and says so
npm_prefix=${CUDNNCTL_NODE_PREFIX:-/var/cache/cudnnctl-npm}
npm_pkgs="web-tree-sitter@0.25.10 tree-sitter-powershell@0.26.4"
if [ "${1:-}" = "--test" ] && command -v npm >/dev/null; then
	if [ "$(cat "$npm_prefix/.pinned" 2>/dev/null)" != "$npm_pkgs" ]; then
		mkdir -p "$npm_prefix" &&
			{ [ -f "$npm_prefix/package.json" ] ||
				echo '{"private": true}' >"$npm_prefix/package.json"; } &&
			# shellcheck disable=SC2086
			npm install --prefix "$npm_prefix" --no-audit --no-fund --ignore-scripts \
				--loglevel=error $npm_pkgs >/dev/null &&
			echo "$npm_pkgs" >"$npm_prefix/.pinned" ||
			echo "scripts/deps.sh: could not install $npm_pkgs from the npm registry:" \
				"the PowerShell syntax test will be skipped" >&2
	fi
fi

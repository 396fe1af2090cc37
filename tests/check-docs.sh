#!/bin/sh
# Fails when docs/exit-codes.md and the error table in error.h disagree.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
status=0
sed -n 's/^[[:space:]]*X(\([A-Z_]*\), \([0-9]*\),.*/\1 \2/p' "$repo/include/cudnnctl/error.h" >"${TMPDIR:-/tmp}/cctl-codes.$$"
while read -r name num; do
	if ! grep -Eq "^\| $num \| ([A-Z_]+ / )?E?$name( / E[A-Z_]+)? \|" "$repo/docs/exit-codes.md"; then
		echo "docs/exit-codes.md: no row for E$name (exit $num)" >&2
		status=1
	fi
done <"${TMPDIR:-/tmp}/cctl-codes.$$"
rm -f "${TMPDIR:-/tmp}/cctl-codes.$$"
exit $status

#!/bin/sh
# The whole test suite from a fresh checkout: dependencies, build, ctest.
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh
sh scripts/build.sh
cd build
ctest --output-on-failure "$@"

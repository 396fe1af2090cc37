#!/bin/sh
# Configures and builds cudnnctl into build/ (warnings are errors).
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDNNCTL_WERROR=ON >/dev/null
cmake --build build

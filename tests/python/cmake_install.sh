#!/usr/bin/env bash
# `cmake --install` of a build tree into a fresh prefix, then
# smoke_installed.py with that prefix's package directory on PYTHONPATH.
#
#   tests/python/cmake_install.sh CMAKE BUILD_DIR PREFIX PYTHON PACKAGE_DIR
#
# PACKAGE_DIR is CUNUMPY_PYTHON_INSTALL_DIR (relative to the prefix).
set -euo pipefail
cmake=$1
build=$2
prefix=$3
python=$4
package_dir=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$prefix"
if ! "$cmake" --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1; then
  cat "$prefix.log"
  exit 1
fi
cd "$prefix"
PYTHONPATH="$prefix/$package_dir" "$python" "$here/smoke_installed.py" "$prefix"

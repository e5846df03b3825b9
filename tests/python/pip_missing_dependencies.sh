#!/usr/bin/env bash
# `pip install .` on a machine without cunumpy's system libraries: pip runs
# the real build (scikit-build-core, CMake), with CMake's package search
# re-rooted into an empty directory (CMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY)
# and pkg-config looking only there, so Kokkos, toml++, nlohmann-json,
# libdw and pybind11 are not found; xxhash.h is looked for in that empty
# directory (CUNUMPY_XXHASH_INCLUDE_DIR), so it is not found either. pip
# must fail with cunumpy's one message listing each with its Debian
# package, and no CMake search trace.
#
#   tests/python/pip_missing_dependencies.sh PYTHON SOURCE_DIR WORK_DIR
set -euo pipefail
python=$1
source=$2
work=$3
rm -rf "$work"
mkdir -p "$work/empty"
"$python" -m venv --system-site-packages "$work/venv"
status=0
PKG_CONFIG_LIBDIR="$work/empty" "$work/venv/bin/python" -m pip install \
  --no-build-isolation --no-deps --disable-pip-version-check \
  --config-settings=build-dir="$work/build" \
  --config-settings=cmake.define.CMAKE_FIND_ROOT_PATH="$work/empty" \
  --config-settings=cmake.define.CMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY \
  --config-settings=cmake.define.CUNUMPY_XXHASH_INCLUDE_DIR="$work/empty" \
  "$source" >"$work/pip.log" 2>&1 || status=$?
cat "$work/pip.log"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[ "$status" -ne 0 ] || fail "pip install succeeded without the system libraries"
for expected in \
  "cunumpy cannot be built, missing:" \
  "- Kokkos 3.4 or newer: Debian package libtrilinos-kokkos-dev, or a Kokkos installed elsewhere with -DKokkos_ROOT=<prefix> (pip: -Ccmake.define.Kokkos_ROOT=<prefix>)" \
  "- toml++: Debian package libtomlplusplus-dev" \
  "- nlohmann-json 3: Debian package nlohmann-json3-dev" \
  "- xxHash 0.8 or newer (XXH3, for the redundant-copy advice): Debian package libxxhash-dev" \
  "- elfutils' libdw and libzstd (call sites): Debian packages libdw-dev libzstd-dev" \
  "- pybind11 2.10 or newer: Debian package pybind11-dev" \
  "apt-get install libtrilinos-kokkos-dev libtomlplusplus-dev nlohmann-json3-dev libxxhash-dev libdw-dev libzstd-dev pybind11-dev"; do
  grep -qF -- "$expected" "$work/pip.log" || fail "pip's output lacks: $expected"
done
# One message: not CMake's own error for a missing package, nor a call stack.
for unexpected in "Could not find a package configuration file" "Call Stack" \
  "CMAKE_PREFIX_PATH" "GoogleTest" "Google Benchmark"; do
  if grep -qF -- "$unexpected" "$work/pip.log"; then
    fail "pip's output has: $unexpected"
  fi
done
[ "$(grep -c "CMake Error" "$work/pip.log")" -eq 1 ] || fail "more than one CMake error"
echo "pip install without the system libraries: refused with one message"

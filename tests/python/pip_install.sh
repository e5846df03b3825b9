#!/usr/bin/env bash
# `pip install .` of the source tree into a fresh virtual environment (with
# the system site packages: numpy, pybind11, scikit-build-core; no network),
# then smoke_installed.py run there, outside the source and build trees.
#
#   tests/python/pip_install.sh PYTHON SOURCE_DIR WORK_DIR [BUILD_PLUGIN]
#
# With BUILD_PLUGIN (the build tree's plugin), two_installs.py then runs the
# installed module under the wheel's plugin and under that one.
set -euo pipefail
python=$1
source=$2
work=$3
build_plugin=${4:-}
rm -rf "$work"
mkdir -p "$work"
"$python" -m venv --system-site-packages "$work/venv"
venv_python="$work/venv/bin/python"
start=$SECONDS
if ! "$venv_python" -m pip install --no-build-isolation --no-deps \
  --disable-pip-version-check --config-settings=build-dir="$work/build" \
  "$source" >"$work/pip.log" 2>&1; then
  cat "$work/pip.log"
  exit 1
fi
echo "pip install took $((SECONDS - start)) s"
# The wheel needs libcunumpy, the module and the plugin only: no tests,
# examples, benchmarks or test tools were configured.
built=$(cmake --build "$work/build" --target help | grep -E -o \
  'cunumpy_tests|test_[a-z_]+|bench_[a-z_]+|example[a-z_]*|kp_[a-z_]+' |
  grep -v '^kp_cunumpy$' | sort -u || true)
if [ -n "$built" ]; then
  echo "FAIL: pip install configured targets the wheel does not need: $built" >&2
  exit 1
fi
cd "$work"
env -u PYTHONPATH "$venv_python" "$source/tests/python/smoke_installed.py" "$work/venv"
if [ -n "$build_plugin" ]; then
  env -u PYTHONPATH "$python" "$source/tests/python/two_installs.py" \
    "$work/venv/bin/python" "$build_plugin" "$work/two-installs"
fi

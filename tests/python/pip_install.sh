#!/usr/bin/env bash
# `pip install .` of the source tree into a fresh virtual environment (with
# the system site packages: numpy, pybind11, scikit-build-core; no network),
# then smoke_installed.py run there, outside the source and build trees.
#
#   tests/python/pip_install.sh PYTHON SOURCE_DIR WORK_DIR [BUILD_PLUGIN]
#
# With BUILD_PLUGIN (the build tree's plugin), two_installs.py then runs the
# installed module under the wheel's plugin and under that one. Last, in a
# copy of examples/python, the example kernels are built against the
# installed package and the Python examples run, with the commands of
# docs/python.md ("Your own Kokkos kernels"), which are this script's last
# lines (docs.code_blocks compares them).
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
# The wheel needs libcunumpy, the module, the plugin and the MPI parts
# only: no tests, examples, benchmarks or test tools were configured.
targets=$(cmake --build "$work/build" --target help)
built=$(echo "$targets" | grep -E -o \
  'cunumpy_tests|test_[a-z_]+|bench_[a-z_]+|example[a-z_]*|kp_[a-z_]+' |
  grep -v -E '^kp_cunumpy(_mpi_[a-z]+)?$' | sort -u || true)
if [ -n "$built" ]; then
  echo "FAIL: pip install configured targets the wheel does not need: $built" >&2
  exit 1
fi
# Each MPI part built ships beside the module's core, which loads it for
# budget.job_report and job_check under mpi4py.
for part in $(echo "$targets" | grep -E -o 'kp_cunumpy_mpi_[a-z]+' | sort -u); do
  if ! compgen -G "$work/venv/lib/python*/site-packages/cunumpy/lib$part.so" >/dev/null; then
    echo "FAIL: the wheel has no lib$part.so beside libcunumpy_core" >&2
    exit 1
  fi
done
cd "$work"
env -u PYTHONPATH "$venv_python" "$source/tests/python/smoke_installed.py" "$work/venv"
if [ -n "$build_plugin" ]; then
  env -u PYTHONPATH "$python" "$source/tests/python/two_installs.py" \
    "$work/venv/bin/python" "$build_plugin" "$work/two-installs"
fi

# As a user: the virtual environment active, in a directory of their own.
unset PYTHONPATH
# shellcheck disable=SC1091
source "$work/venv/bin/activate"
mkdir -p "$work/user/examples"
cp -r "$source/examples/python" "$work/user/examples/"
cd "$work/user"
start=$SECONDS
if [ "$(python3 -c 'import cunumpy; print(cunumpy.testing.has_fake_device)')" != True ]; then
  # Kokkos 4.3 and newer: no fake device to run the examples on.
  cmake -S examples/python -B build-kernels -Dcunumpy_DIR="$(python3 -m cunumpy --cmake-dir)"
  cmake --build build-kernels
  echo "example kernels built in $((SECONDS - start)) s; no fake device: not run"
  exit 0
fi
trap 'echo "example kernels and examples: $((SECONDS - start)) s"' EXIT
# Kokkos kernels for the examples, against the installed cunumpy:
cmake -S examples/python -B build-kernels -Dcunumpy_DIR="$(python3 -m cunumpy --cmake-dir)"
cmake --build build-kernels
PYTHONPATH=build-kernels python3 examples/python/quick_start.py --fake-device
PYTHONPATH=build-kernels python3 examples/python/time_loop.py --fake-device
PYTHONPATH=build-kernels python3 examples/python/spectrum.py --fake-device

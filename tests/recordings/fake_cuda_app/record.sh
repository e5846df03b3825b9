#!/usr/bin/env bash
# Records tests/programs/fake_cuda_app's runs (the CUDA traffic the H200
# showed, through the fake CUDA of tests/tools/fake_cuda.cpp) into this
# directory: <name>.jsonl, and the report the run wrote, <name>.report.json.
#
#   tests/recordings/fake_cuda_app/record.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
fake=$build/tests/plugin/fake_cuda
budget=$here/../../plugin/fake_cuda_budget.toml
cd "$here"
record() {
  local name=$1
  shift
  rm -f "$name.jsonl" "$name.report.json"
  env -u CUNUMPY_REPORT_FORMAT \
    KOKKOS_TOOLS_LIBS="$build/src/plugin/libkp_cunumpy.so" \
    KOKKOS_PROFILE_LIBRARY="$build/src/plugin/libkp_cunumpy.so" \
    LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    CUNUMPY_CUPTI_LIBRARY="$fake/libcupti.so" FAKE_CUPTI_REPLAY=1 \
    CUNUMPY_DEVICE_SPACES=FakeDevice CUNUMPY_BUDGET="$budget" \
    CUNUMPY_ON_VIOLATION=exit CUNUMPY_RECORD="$name.jsonl" \
    CUNUMPY_REPORT="$name.report.json" \
    "$build/tests/plugin/fake_cuda_app" --steps 5 "$@" >/dev/null 2>&1 ||
    [ $? -eq 3 ] # a broken budget
  echo "$name: $(wc -l <"$name.jsonl") lines"
}
record fake_cuda_app
record fake_cuda_app-pause --pause-ms 300
for option in raw-copy uvm-copy host-kernel-copy thrown-host-kernel \
  thrown-device-kernel raw-allocation header-size-elsewhere migration \
  reduce reduce-copy; do
  record "fake_cuda_app-$option" "--$option"
done

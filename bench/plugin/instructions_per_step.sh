#!/usr/bin/env bash
# Instructions per time step of examples/legacy_app (--size 64 --probes 3:
# the events of a step, a negligible kernel) with no tool, with the tests'
# minimal tool (the floor), with the plugin, and with each Kokkos tool given
# as NAME=PATH; counted by valgrind's callgrind (apt-get install valgrind)
# over 2000 and 4000 steps, the difference divided by 2000, so start-up and
# the report cancel out. Unlike a time, the count does not move with the
# machine's load. Both runs read the call sites from debug information once,
# and that cancels out too.
#
#   bench/plugin/instructions_per_step.sh [build] [NAME=PATH ...]
set -euo pipefail
build=${1:-build}
shift || true
program=$build/examples/legacy_app/legacy_app
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() { # steps, then environment assignments
  local steps=$1
  shift
  env -u KOKKOS_TOOLS_LIBS -u KOKKOS_PROFILE_LIBRARY "$@" valgrind \
    --tool=callgrind --callgrind-out-file=/dev/null "$program" --steps \
    "$steps" --size 64 --probes 3 2>&1 >/dev/null |
    awk '/Collected/ {print $4}'
}
per_step() { # name, then environment assignments
  local name=$1
  shift
  local a b
  a=$(count 2000 "$@")
  b=$(count 4000 "$@")
  printf '%-20s %6d instructions per step\n' "$name" $(( (b - a) / 2000 ))
}
tool() { # path: both variables, so that Kokkos 3 and 4 load it
  echo "KOKKOS_TOOLS_LIBS=$1" "KOKKOS_PROFILE_LIBRARY=$1"
}
per_step "no tool" CUNUMPY_UNUSED=1
# shellcheck disable=SC2046
per_step "floor" $(tool "$build/tests/libkp_test_tool.so") \
  KP_TEST_TOOL_NO_GLOBAL_FENCING=1 KP_TEST_TOOL_OUTPUT="$work/counts.txt"
# shellcheck disable=SC2046
per_step "plugin" $(tool "$build/src/plugin/libkp_cunumpy.so") \
  CUNUMPY_DEVICE_SPACES=FakeDevice CUNUMPY_REPORT="$work/report.json"
# shellcheck disable=SC2046
per_step "plugin, no sites" $(tool "$build/src/plugin/libkp_cunumpy.so") \
  CUNUMPY_DEVICE_SPACES=FakeDevice CUNUMPY_REPORT="$work/report.json" \
  CUNUMPY_BACKTRACE=0
for peer in "$@"; do
  # shellcheck disable=SC2046
  per_step "${peer%%=*}" $(tool "${peer#*=}")
done

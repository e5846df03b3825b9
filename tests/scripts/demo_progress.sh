#!/usr/bin/env bash
# scripts/demo shows its build's progress through scripts/progress: a
# Ninja build of 25 steps with an error after the second gives a line at
# every tenth of the way and the error as it is, each line as it comes
# (not when the build ends).
#
#   tests/scripts/demo_progress.sh SOURCE_DIR
set -euo pipefail
source=$1
grep -q '^scripts/build "\$@" | scripts/progress$' "$source/scripts/demo" ||
  { echo "FAIL: scripts/demo does not show its build through scripts/progress" >&2; exit 1; }
actual=$(for step in $(seq 1 25); do
  echo "[$step/25] Building CXX object step$step.o"
  if [ "$step" = 2 ]; then echo "kernels.cpp:3: error: bad"; fi
done | "$source/scripts/progress")
expected="building: 4% (1/25)
kernels.cpp:3: error: bad
building: 12% (3/25)
building: 20% (5/25)
building: 32% (8/25)
building: 40% (10/25)
building: 52% (13/25)
building: 60% (15/25)
building: 72% (18/25)
building: 80% (20/25)
building: 92% (23/25)
building: 100% (25/25)"
if [ "$actual" != "$expected" ]; then
  echo "FAIL: scripts/progress printed:"; echo "$actual"; exit 1
fi
# The first line shows while the build still runs (Debian's mawk would
# hold it until the pipe closes).
first=$({ echo "[1/10] Building CXX object first.o"; sleep 6; } |
  "$source/scripts/progress" | timeout 3 head -n 1 || true)
if [ "$first" != "building: 10% (1/10)" ]; then
  echo "FAIL: scripts/progress showed no line within 3 s of the build's first step (got '$first')"; exit 1
fi
echo "$actual"

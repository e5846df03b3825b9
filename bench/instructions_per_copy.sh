#!/usr/bin/env bash
# Instructions per 8-byte copy, counted by valgrind's callgrind (apt-get
# install valgrind): copy_loop makes 10^5 and 2*10^5 copies, and the
# difference is divided by 10^5, so start-up and exit cancel out. Unlike a
# time, the count does not move with the machine's load. LIBRARY_DIR runs
# the same copy_loop against another build's libcunumpy (before/after).
#
#   bench/instructions_per_copy.sh [build]     # LIBRARY_DIR=<dir> optional
set -euo pipefail
build=${1:-build}
program=$build/bench/copy_loop
count() { # copies mode
  LD_LIBRARY_PATH=${LIBRARY_DIR:-} valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$program" "$1" "$2" 2>&1 >/dev/null |
    awk '/Collected/ {print $4}'
}
for mode in 0 1; do
  a=$(count 100000 $mode)
  b=$(count 200000 $mode)
  name=$([ $mode = 0 ] && echo "hooks installed, nothing counting" ||
         echo "counted, no stack capture")
  echo "$name: $(( (b - a) / 100000 )) instructions per copy"
done

#!/usr/bin/env bash
# Runs a program under cunumpy's plugin with a budget, and writes what CI
# systems show of the run: cunumpy.json (the report), cunumpy.sarif (code
# scanning) and cunumpy.xml (JUnit test results). The plugin is loaded by
# the caller's KOKKOS_TOOLS_LIBS (Kokkos 4) or KOKKOS_PROFILE_LIBRARY
# (Kokkos 3); under GitHub Actions it also annotates the lines that broke
# a rule. Exit status: 1 when the budget failed (a rule broken, events
# missing, nothing checked), 2 when the run left no report, else the
# program's.
#
#   examples/ci/check-transfers.sh CUNUMPY_REPORT_TOOL BUDGET PROGRAM [ARGUMENTS...]
set -u
report_tool=$1 budget=$2
shift 2
rm -f cunumpy.json cunumpy.sarif cunumpy.xml
CUNUMPY_BUDGET=$budget CUNUMPY_REPORT=cunumpy.json "$@"
status=$?
"$report_tool" --format sarif -o cunumpy.sarif cunumpy.json || exit 2
"$report_tool" --format junit -o cunumpy.xml cunumpy.json || exit 2
"$report_tool" --check --format summary cunumpy.json >/dev/null || exit 1
exit "$status"

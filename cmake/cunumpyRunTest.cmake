# Run by a test of cunumpy_add_test (cunumpyTest.cmake):
#
#   cmake -DNAME=<test> -DREPORTS=<dir> -DPLUGIN=<libkp_cunumpy.so>
#         -DTOOLS_VARIABLES=<names, comma-separated> [-DBUDGET=<file>]
#         -DREPORT_TOOL=<cunumpy-report>
#         -P cunumpyRunTest.cmake -- <program> [<arg>...]
#
# Runs the program with the plugin loaded and each rank's JSON report in
# REPORTS (emptied first), then cunumpy-report --check over them. Fails
# (one line saying why, then ctest shows the output) when the program fails,
# when it wrote no report, or when the check fails.

cmake_minimum_required(VERSION 3.20)

set(command)
set(after_separator FALSE)
foreach(index RANGE 1 ${CMAKE_ARGC})
  if(index EQUAL CMAKE_ARGC)
    break()
  endif()
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${index}}")
  elseif(CMAKE_ARGV${index} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "cunumpy_add_test(${NAME}): no command after '--'")
endif()

# Reports of an earlier run must not pass for this one's.
file(REMOVE_RECURSE "${REPORTS}")
file(MAKE_DIRECTORY "${REPORTS}")

# The plugin in the variables this Kokkos reads; the other one unset, as
# Kokkos 3.7 and newer stop when both are set and differ.
string(REPLACE "," ";" TOOLS_VARIABLES "${TOOLS_VARIABLES}")
foreach(variable IN ITEMS KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY)
  if(variable IN_LIST TOOLS_VARIABLES)
    set(ENV{${variable}} "${PLUGIN}")
  else()
    unset(ENV{${variable}})
  endif()
endforeach()
set(ENV{CUNUMPY_REPORT} "${REPORTS}/report-%r.json")
set(ENV{CUNUMPY_REPORT_FORMAT} "json")
if(BUDGET)
  set(ENV{CUNUMPY_BUDGET} "${BUDGET}")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE status)
file(GLOB reports "${REPORTS}/*.json")
if(NOT reports)
  string(REPLACE ";" " and " variables "${TOOLS_VARIABLES}")
  message(FATAL_ERROR
    "cunumpy_add_test(${NAME}): no report in ${REPORTS}: the plugin was not "
    "loaded into the program (it ended with status ${status}). The test set "
    "${variables}, the variable(s) of the Kokkos cunumpy was found with; a "
    "program built with another Kokkos may read another one: set "
    "CUNUMPY_KOKKOS_TOOLS_VARIABLES (KOKKOS_TOOLS_LIBS from Kokkos 3.7 on, "
    "KOKKOS_PROFILE_LIBRARY before). A launcher that does not pass the "
    "environment on to the ranks drops it too.")
endif()
execute_process(COMMAND "${REPORT_TOOL}" --check "${REPORTS}"
                RESULT_VARIABLE check)
if(NOT check EQUAL 0)
  message(FATAL_ERROR "cunumpy_add_test(${NAME}): cunumpy-report --check "
                      "failed (status ${check}): see above")
endif()
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cunumpy_add_test(${NAME}): the program ended with "
                      "status ${status}")
endif()

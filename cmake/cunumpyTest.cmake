# cunumpy_add_test: a ctest test that runs a program under the plugin and
# passes only when the plugin was loaded and every rank kept its budget.
# Included by cunumpyConfig.cmake when the plugin is installed.
#
#   cunumpy_add_test(NAME <name> COMMAND <program or target> [<arg>...]
#                    [BUDGET <rule file>] [WORKING_DIRECTORY <dir>]
#                    [ENVIRONMENT <VAR=value>...])
#
# The test runs COMMAND (a target's name first is its executable; an MPI
# launcher first runs every rank) with the plugin in the variable the found
# Kokkos reads (CUNUMPY_KOKKOS_TOOLS_VARIABLES), CUNUMPY_BUDGET=<rule file>
# and CUNUMPY_REPORT in a directory of its own, emptied before each run;
# then `cunumpy-report --check` over that directory. It fails when the
# program fails, when no report was written (the plugin was not loaded), and
# when a rank broke the budget, could not check it, ran without one, may
# have missed events or wrote no report.

include_guard(GLOBAL)

# The variables that load the plugin into the found Kokkos: Kokkos 3.7 and
# newer read KOKKOS_TOOLS_LIBS (4 and 5 warn that KOKKOS_PROFILE_LIBRARY is
# deprecated), before 3.7 only KOKKOS_PROFILE_LIBRARY; both when the version
# is not known. The test sets these and unsets the other one.
if(DEFINED Kokkos_VERSION AND Kokkos_VERSION VERSION_LESS 3.7)
  set(_cunumpy_tools_variables KOKKOS_PROFILE_LIBRARY)
elseif(DEFINED Kokkos_VERSION)
  set(_cunumpy_tools_variables KOKKOS_TOOLS_LIBS)
else()
  set(_cunumpy_tools_variables KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY)
endif()
set(CUNUMPY_KOKKOS_TOOLS_VARIABLES "${_cunumpy_tools_variables}" CACHE STRING
    "The variables cunumpy_add_test loads the plugin with (KOKKOS_TOOLS_LIBS, KOKKOS_PROFILE_LIBRARY): those the programs' Kokkos reads")
unset(_cunumpy_tools_variables)

function(cunumpy_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;BUDGET;WORKING_DIRECTORY"
                        "COMMAND;ENVIRONMENT")
  if(NOT arg_NAME OR NOT arg_COMMAND)
    message(FATAL_ERROR "cunumpy_add_test: NAME and COMMAND are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cunumpy_add_test(${arg_NAME}): unknown arguments "
                        "'${arg_UNPARSED_ARGUMENTS}'")
  endif()
  if(NOT TARGET cunumpy::kp_cunumpy)
    message(FATAL_ERROR "cunumpy_add_test(${arg_NAME}): this cunumpy has no "
                        "plugin (cunumpy::kp_cunumpy)")
  endif()
  list(POP_FRONT arg_COMMAND program)
  if(TARGET "${program}")
    set(program "$<TARGET_FILE:${program}>")
  endif()
  if(arg_BUDGET)
    get_filename_component(arg_BUDGET "${arg_BUDGET}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  get_property(report_tool GLOBAL PROPERTY CUNUMPY_REPORT_TOOL)
  string(MAKE_C_IDENTIFIER "${arg_NAME}" directory)
  string(REPLACE ";" "," variables "${CUNUMPY_KOKKOS_TOOLS_VARIABLES}")
  set(working_directory)
  if(arg_WORKING_DIRECTORY)
    set(working_directory WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}")
  endif()
  add_test(NAME "${arg_NAME}" ${working_directory}
    COMMAND "${CMAKE_COMMAND}"
      "-DNAME=${arg_NAME}"
      "-DREPORTS=${CMAKE_CURRENT_BINARY_DIR}/cunumpy_reports/${directory}"
      "-DPLUGIN=$<TARGET_FILE:cunumpy::kp_cunumpy>"
      "-DTOOLS_VARIABLES=${variables}"
      "-DBUDGET=${arg_BUDGET}"
      "-DREPORT_TOOL=${report_tool}"
      -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/cunumpyRunTest.cmake"
      -- "${program}" ${arg_COMMAND})
  if(arg_ENVIRONMENT)
    set_tests_properties("${arg_NAME}" PROPERTIES
                         ENVIRONMENT "${arg_ENVIRONMENT}")
  endif()
endfunction()

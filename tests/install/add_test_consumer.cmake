# Run by ctest: install cunumpy, then build a project of its own against the
# installed package whose tests use cunumpy_add_test on the legacy example.
# A test passes with the plugin loaded and the budget kept, and fails with a
# copy in the time loop, when a launcher drops the plugin's variable, and
# when the variable is not the one the program's Kokkos reads.
#   cmake -DBUILD_DIR= -DEXAMPLE_DIR= -DWORK_DIR= -DGENERATOR= -DKOKKOS_DIR=
#         -DCXX_COMPILER= -DKOKKOS_VERSION= -DFAKE_DEVICE=ON|OFF -P ...

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status
                  OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${step} failed (${status}):\n${output}")
  endif()
endfunction()

# Runs the consumer's test `name`; fails unless it passes (expect "pass") or
# fails (expect "fail") with `pattern` in its output.
function(expect name expect pattern)
  execute_process(
    COMMAND ${CMAKE_CTEST_COMMAND} --test-dir "${WORK_DIR}/consumer"
            -R "^${name}$" --verbose
    RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT output MATCHES "1 tests? failed|100% tests passed")
    message(FATAL_ERROR "test ${name} did not run:\n${output}")
  endif()
  if(expect STREQUAL "pass" AND NOT status EQUAL 0)
    message(FATAL_ERROR "test ${name} must pass:\n${output}")
  endif()
  if(expect STREQUAL "fail" AND status EQUAL 0)
    message(FATAL_ERROR "test ${name} must fail:\n${output}")
  endif()
  # CMake wraps a message's lines, and ctest --verbose puts the test's
  # number before each: words are compared, not lines.
  string(REGEX REPLACE "\n([0-9]+:)?" " " words "${output}")
  string(REGEX REPLACE " +" " " words "${words}")
  if(NOT words MATCHES "${pattern}")
    message(FATAL_ERROR "test ${name}: no '${pattern}' in its output:\n"
                        "${output}")
  endif()
  message(STATUS "${name}: ${expect}ed, as it must")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
run("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}"
    --prefix "${WORK_DIR}/prefix")
# A host-only Kokkos 3 has the example's fake device; without one, nothing
# can be checked and only loading is tested.
set(environment "CUNUMPY_DEVICE_SPACES=FakeDevice")
if(NOT FAKE_DEVICE)
  set(environment "CUNUMPY_ALLOW_NO_DEVICE=1")
endif()
file(WRITE "${WORK_DIR}/source/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.20)
project(budget_consumer LANGUAGES CXX)
find_package(cunumpy CONFIG REQUIRED)
enable_testing()
add_executable(legacy_app ${EXAMPLE_DIR}/legacy_app.cpp)
target_link_libraries(legacy_app PRIVATE cunumpy::headers)
set(budget ${EXAMPLE_DIR}/budget.toml)
cunumpy_add_test(NAME kept COMMAND legacy_app
                 BUDGET \${budget} ENVIRONMENT ${environment})
cunumpy_add_test(NAME copy_in_step COMMAND legacy_app --copy-in-step
                 BUDGET \${budget} ENVIRONMENT ${environment})
# A launcher that does not pass the environment on.
cunumpy_add_test(NAME launcher_drops_it
                 COMMAND env -u KOKKOS_TOOLS_LIBS -u KOKKOS_PROFILE_LIBRARY
                         $<TARGET_FILE:legacy_app>
                 BUDGET \${budget} ENVIRONMENT ${environment})
")
set(kokkos_hint)
if(KOKKOS_DIR)
  set(kokkos_hint "-DKokkos_DIR=${KOKKOS_DIR}")
endif()
run("configure the consumer" ${CMAKE_COMMAND} -S "${WORK_DIR}/source"
    -B "${WORK_DIR}/consumer" -G "${GENERATOR}"
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${kokkos_hint})
run("build the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer")

set(not_loaded "no report in [^ ]*: the plugin was not loaded")
expect(kept pass "check: passed")
if(FAKE_DEVICE)
  expect(copy_in_step fail
         "phase 'integrate': to_host is not allowed.*--check failed")
endif()
expect(launcher_drops_it fail "${not_loaded}")

# The variable the documentation set before: KOKKOS_TOOLS_LIBS, which
# Kokkos before 3.7 does not read; from 3.7 on, a name no Kokkos reads.
if(KOKKOS_VERSION VERSION_LESS 3.7)
  set(wrong KOKKOS_TOOLS_LIBS)
else()
  set(wrong KOKKOS_TOOLS_LIB)
endif()
run("configure with ${wrong}" ${CMAKE_COMMAND} -S "${WORK_DIR}/source"
    -B "${WORK_DIR}/consumer"
    -DCUNUMPY_KOKKOS_TOOLS_VARIABLES=${wrong})
expect(kept fail "${not_loaded}")

# Run by ctest: install, relocate, consume. Fails with the failing step's log.
function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status
                  OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${step} failed (${status}):\n${output}")
  endif()
  set(last_output "${output}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
run("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
foreach(file IN ITEMS include/cunumpy/cunumpy.hpp lib/cmake/cunumpy/cunumpyConfig.cmake
                      lib/cmake/cunumpy/cunumpyConfigVersion.cmake
                      lib/cmake/cunumpy/cunumpyKokkos.cmake)
  if(NOT EXISTS "${WORK_DIR}/prefix/${file}")
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()
# The package must work from any prefix.
file(RENAME "${WORK_DIR}/prefix" "${WORK_DIR}/moved")
set(kokkos_hint)
if(KOKKOS_DIR)
  set(kokkos_hint "-DKokkos_DIR=${KOKKOS_DIR}")
endif()
# The usual order in an application finds Kokkos first, then cunumpy: the
# repair of Debian's Kokkos target must apply whoever found Kokkos.
set(source_dir "${EXAMPLE_DIR}")
if(KOKKOS_FIRST)
  set(source_dir "${WORK_DIR}/kokkos_first")
  file(WRITE "${source_dir}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.20)
project(kokkos_first LANGUAGES CXX)
find_package(Kokkos REQUIRED)
find_package(cunumpy CONFIG REQUIRED)
add_executable(time_loop ${EXAMPLE_DIR}/time_loop.cpp)
target_link_libraries(time_loop PRIVATE Kokkos::kokkos cunumpy::cunumpy)
")
endif()
# A consumer of a sanitizer build is built with the same sanitizers.
set(sanitize_flags)
if(SANITIZE)
  set(sanitize_flags "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}"
                     "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()
run("configure the example" ${CMAKE_COMMAND} -S "${source_dir}" -B "${WORK_DIR}/example"
    -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/moved ${kokkos_hint} ${sanitize_flags})
run("build the example" ${CMAKE_COMMAND} --build "${WORK_DIR}/example")
file(GLOB program "${WORK_DIR}/example/time_loop")
run("run the example" "${program}" 20)
if(NOT last_output MATCHES "right way: [0-9]+ transfer\\(s\\)")
  message(FATAL_ERROR "unexpected output:\n${last_output}")
endif()
message(STATUS "${last_output}")

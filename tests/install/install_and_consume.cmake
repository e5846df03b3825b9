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
if(SOURCE_DIR)
  # A build of its own, of static libraries: what a consumer links then has
  # no libcunumpy to load, and the package must name nothing it cannot find.
  run("configure a static build" ${CMAKE_COMMAND} -S "${SOURCE_DIR}"
      -B "${WORK_DIR}/build" -G "${GENERATOR}"
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DBUILD_SHARED_LIBS=OFF
      -DCMAKE_BUILD_TYPE=Release -DCUNUMPY_BUILD_TESTS=OFF
      -DCUNUMPY_BUILD_EXAMPLES=OFF -DCUNUMPY_BUILD_BENCHMARKS=OFF
      -DCUNUMPY_BUILD_PYTHON=OFF -DCUNUMPY_ENABLE_CUPTI=OFF
      -DKokkos_DIR=${KOKKOS_DIR})
  run("build it" ${CMAKE_COMMAND} --build "${WORK_DIR}/build" --parallel 2)
  set(BUILD_DIR "${WORK_DIR}/build")
endif()
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
if(SOURCE_DIR)
  # The example, and a program that only counts: a consumer that calls no
  # conversion still gets the library that installs the hooks (without it,
  # count_transfers throws "nothing feeds the recorder").
  set(source_dir "${WORK_DIR}/static_consumer")
  file(WRITE "${source_dir}/count_only.cpp" "
#include <Kokkos_Core.hpp>
#include <cunumpy/transfer_counter.hpp>
#include <cstdio>
int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  auto scope = cunumpy::profiling::count_transfers();
  std::printf(\"count only: %d transfer(s)\\n\", int(scope.counter().total()));
}
")
  file(WRITE "${source_dir}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.20)
project(static_consumer LANGUAGES CXX)
find_package(cunumpy CONFIG REQUIRED)
add_executable(time_loop ${EXAMPLE_DIR}/time_loop.cpp)
target_link_libraries(time_loop PRIVATE cunumpy::cunumpy)
add_executable(count_only count_only.cpp)
target_link_libraries(count_only PRIVATE cunumpy::cunumpy)
")
elseif(KOKKOS_FIRST)
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
if(SOURCE_DIR)
  run("run the program that only counts" "${WORK_DIR}/example/count_only")
  if(NOT last_output MATCHES "count only: 0 transfer")
    message(FATAL_ERROR "unexpected output:\n${last_output}")
  endif()
  message(STATUS "${last_output}")
endif()

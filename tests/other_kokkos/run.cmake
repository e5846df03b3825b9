# Builds tests/programs' Kokkos programs against another Kokkos (OTHER_KOKKOS,
# a prefix) and runs them with the main build's plugin (PLUGIN), loaded
# through KOKKOS_TOOLS_LIBS as that Kokkos reads it; checks the JSON report
# with CHECK (a Python script). Fails with the failing step's output.
function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status
                  OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${step} failed (${status}):\n${output}")
  endif()
  message(STATUS "${step}:\n${output}")
endfunction()

run("configure against ${OTHER_KOKKOS}" ${CMAKE_COMMAND}
    -S ${SOURCE_DIR}/tests/other_kokkos -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${OTHER_KOKKOS} -DCUNUMPY_SOURCE_DIR=${SOURCE_DIR}
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 2)
run("check" ${PYTHON} ${SOURCE_DIR}/tests/other_kokkos/check.py
    --plugin ${PLUGIN} --programs ${WORK_DIR}/build --work ${WORK_DIR})

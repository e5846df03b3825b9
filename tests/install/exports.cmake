# libcunumpy compiled toml++ in from its headers: it neither needs a toml++
# library at run time nor exports toml++'s symbols (src/cunumpy.map), which
# another toml++ of the process could otherwise bind to.
#   cmake -DLIBRARY=<libcunumpy.so> -DNM=<nm> -DREADELF=<readelf> -P exports.cmake
execute_process(COMMAND ${READELF} -d ${LIBRARY} OUTPUT_VARIABLE dynamic
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "readelf -d ${LIBRARY} failed")
endif()
if(dynamic MATCHES "NEEDED[^\n]*toml")
  message(FATAL_ERROR "${LIBRARY} needs a toml++ library:\n${dynamic}")
endif()
execute_process(COMMAND ${NM} -D -C --defined-only ${LIBRARY}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT symbols MATCHES "cunumpy::")
  message(FATAL_ERROR "nm -D ${LIBRARY} failed or listed no cunumpy symbol")
endif()
string(REGEX MATCHALL "[^\n]*toml::[^\n]*" exported "${symbols}")
if(exported)
  list(LENGTH exported count)
  list(GET exported 0 first)
  message(FATAL_ERROR "${LIBRARY} exports ${count} toml++ symbol(s), e.g.\n"
                      "  ${first}")
endif()

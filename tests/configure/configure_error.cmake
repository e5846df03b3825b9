# Configures cunumpy with bad input and checks that CMake stops with one
# error of one line matching PATTERN (the line names what to pass).
#
#   cmake -DSOURCE_DIR=<dir> -DWORK_DIR=<dir> -DGENERATOR=<generator>
#         -DPATTERN=<regex> -P configure_error.cmake -- <cmake argument>...
set(arguments)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(index RANGE 1 ${last})
  if(after_separator)
    list(APPEND arguments "${CMAKE_ARGV${index}}")
  elseif(CMAKE_ARGV${index} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
# Only the configuration is checked: the parts that find more are off.
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}" -G "${GENERATOR}"
          -DCUNUMPY_BUILD_TESTS=OFF -DCUNUMPY_BUILD_EXAMPLES=OFF
          -DCUNUMPY_BUILD_BENCHMARKS=OFF -DCUNUMPY_BUILD_PYTHON=OFF
          ${arguments}
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(status EQUAL 0)
  message(FATAL_ERROR "the configuration succeeded; expected an error")
endif()
string(REGEX MATCHALL "CMake Error[^\n]*\n" errors "${output}")
list(LENGTH errors count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "${count} errors; expected one")
endif()
# The message: the lines after "CMake Error at ...:", up to a blank line.
string(REGEX MATCH "CMake Error[^\n]*\n(([^\n]+\n)*)" _ "${output}")
string(STRIP "${CMAKE_MATCH_1}" message)
if(message MATCHES "\n")
  message(FATAL_ERROR "the error is more than one line:\n${message}")
endif()
if(NOT message MATCHES "${PATTERN}")
  message(FATAL_ERROR "the error does not match: ${PATTERN}")
endif()

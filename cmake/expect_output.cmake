# Runs a command, prints what it wrote, and fails unless it ended with
# EXPECT_STATUS (default 0) and what it wrote matches PATTERN: ctest's
# PASS_REGULAR_EXPRESSION alone ignores the exit status, so a program whose
# own checks failed after printing the expected line would pass.
#
#   cmake -DPATTERN=<regex> [-DEXPECT_STATUS=<n>] -P expect_output.cmake
#         -- <command> [<argument>...]
set(command)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(index RANGE 1 ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${index}}")
  elseif(CMAKE_ARGV${index} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "expect_output.cmake: no command after --")
endif()
if(NOT DEFINED EXPECT_STATUS)
  set(EXPECT_STATUS 0)
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE status
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT status STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECT_STATUS}")
endif()
if(NOT output MATCHES "${PATTERN}")
  message(FATAL_ERROR "the output does not match: ${PATTERN}")
endif()

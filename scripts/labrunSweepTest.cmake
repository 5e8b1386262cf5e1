# labrun_add_sweep_test(NAME RUNNER <target> CONFIG <file.yaml> [ARGS <sweep args>...]): a CTest test that sweeps
# CONFIG with the runner on the host backend and fails on any point that is not `ok` (labrun_sweep_test.cmake).
# No GoogleTest needed. Included by labrun's package config; the script lies beside this file.
set(_labrun_sweep_test_script "${CMAKE_CURRENT_LIST_DIR}/labrun_sweep_test.cmake")

function(labrun_add_sweep_test NAME)
  cmake_parse_arguments(A "" "RUNNER;CONFIG" "ARGS" ${ARGN})
  if(NOT A_RUNNER OR NOT A_CONFIG)
    message(FATAL_ERROR "labrun_add_sweep_test(${NAME}): RUNNER and CONFIG are required")
  endif()
  add_test(NAME ${NAME}
           COMMAND ${CMAKE_COMMAND} -DRUNNER=$<TARGET_FILE:${A_RUNNER}> -DCONFIG=${A_CONFIG}
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/${NAME}.jsonl "-DARGS=${A_ARGS}" -P ${_labrun_sweep_test_script})
endfunction()

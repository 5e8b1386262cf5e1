# install_and_runner: installs labrun's build tree into a temporary prefix, builds tests/package/consumer (a
# user's project: find_package(labrun) + labrun_add_runner(... BUILTINS)) in a temporary folder outside the
# repository against only that prefix, and runs `<runner> list` and a host sweep of configs/smoke.yaml.
#
#   cmake -DBUILD_DIR=<labrun build> -DSOURCE_DIR=<labrun source> -DGENERATOR=<generator> -DEXPECT_CUDA=ON|OFF
#         [-DNVCC_DIR=<dir of nvcc>] [-DKEEP=ON] -P run.cmake
#
# EXPECT_CUDA: whether the package has CUDA (LABRUN_WITH_CUDA in its config). Without CUDA, the runner's
# configure must say it leaves consumer.cu out.
cmake_minimum_required(VERSION 3.24)
foreach(arg BUILD_DIR SOURCE_DIR GENERATOR EXPECT_CUDA)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "run.cmake: -D${arg}=... is required")
  endif()
endforeach()

function(step what)
  string(TIMESTAMP now "%s")
  math(EXPR dt "${now} - ${t0}")
  message(STATUS "[${dt} s] ${what}")
endfunction()
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(last_out "${out}${err}" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  step("${what}")
endfunction()
# Stops the test with `why` (a message naming what was checked) unless `text` holds `want`.
function(require text want why)
  string(FIND "${text}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${why}")
  endif()
endfunction()
string(TIMESTAMP t0 "%s")

# Outside the repository (a consumer inside it would see labrun's sources and git state).
if(DEFINED ENV{TMPDIR} AND IS_DIRECTORY "$ENV{TMPDIR}")
  set(tmp "$ENV{TMPDIR}")
else()
  set(tmp /tmp)
endif()
string(RANDOM LENGTH 8 ALPHABET 0123456789abcdef tag)
set(work "${tmp}/labrun-package-${tag}")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")
set(prefix "${work}/prefix")

run("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/labrun include/labrun/dtype.hpp include/labrun/point.hpp lib/liblabrun_core.a lib/liblabrun_main.a
          lib/cmake/labrun/labrunConfig.cmake lib/cmake/labrun/labrunConfigVersion.cmake
          lib/cmake/labrun/labrunTargets.cmake share/labrun/plot_report.py share/labrun/plot_history.py
          share/labrun/plot_common.py
          share/labrun/cmake/labrunRunner.cmake share/doc/labrun/LICENSE share/doc/labrun/NOTICE)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install: ${f} is missing from ${prefix}")
  endif()
endforeach()
# Nothing exported may name this machine's paths (the source tree, the build tree, the static yaml-cpp).
file(GLOB exported "${prefix}/lib/cmake/labrun/*.cmake")
foreach(f IN LISTS exported)
  file(READ "${f}" text)
  foreach(bad "${SOURCE_DIR}" "${BUILD_DIR}" "libyaml-cpp.a\"" "/usr/lib/x86_64-linux-gnu/")
    string(FIND "${text}" "${bad}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "install: ${f} names '${bad}'")
    endif()
  endforeach()
endforeach()
file(READ "${prefix}/lib/cmake/labrun/labrunConfig.cmake" config)
if(EXPECT_CUDA)
  set(want "set(LABRUN_WITH_CUDA ON)")
else()
  set(want "set(LABRUN_WITH_CUDA OFF)")
endif()
require("${config}" "${want}" "install: labrunConfig.cmake does not say ${want}")

# The consumer: configured with nothing but the prefix (and nvcc on PATH when there is one).
file(COPY "${SOURCE_DIR}/tests/package/consumer" DESTINATION "${work}")
set(consumer "${work}/consumer")
if(NVCC_DIR)
  set(ENV{PATH} "${NVCC_DIR}:$ENV{PATH}")
endif()
run("configure consumer" "${CMAKE_COMMAND}" -S "${consumer}" -B "${consumer}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
set(configure_out "${last_out}")
string(FIND "${configure_out}" "this labrun package was built without CUDA; leaving out consumer.cu" left_out)
if(NOT EXPECT_CUDA AND left_out EQUAL -1)
  message(FATAL_ERROR "configure consumer: a host-only package must leave consumer.cu out and say so:\n${configure_out}")
endif()
# A user who forgot enable_language(CUDA) against a package with CUDA: a WARNING that names the fix and nvcc (it was
# a STATUS line saying "no CUDA compiler" though nvcc was on PATH; case H19). Configured only.
if(EXPECT_CUDA)
  run("configure consumer without enable_language(CUDA)" "${CMAKE_COMMAND}" -S "${consumer}" -B
      "${consumer}/build-nocuda" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" -DCONSUMER_NO_CUDA=ON)
  foreach(want "CMake Warning" "Add enable_language(CUDA)" "nvcc is at")
    require("${last_out}" "${want}"
            "configure consumer without CUDA: labrun_add_runner must warn (${want}):\n${last_out}")
  endforeach()
  # ... and the runner says so itself: `list` names the CUDA sources it was built without.
  run("build consumer without CUDA" "${CMAKE_COMMAND}" --build "${consumer}/build-nocuda")
  run("runner without CUDA: list" "${consumer}/build-nocuda/consumer_bench" list)
  require("${last_out}" "this runner was built without its CUDA sources"
          "runner without CUDA: list must name the CUDA sources left out:\n${last_out}")
endif()
run("build consumer" "${CMAKE_COMMAND}" --build "${consumer}/build")

set(runner "${consumer}/build/consumer_bench")
foreach(f plot_report.py plot_common.py)
  if(NOT EXISTS "${consumer}/build/scripts/${f}")
    message(FATAL_ERROR "build consumer: ${f} was not copied beside the runner")
  endif()
endforeach()
run("runner list" "${runner}" list)
foreach(e masking gelu attention)
  require("${last_out}" "${e}" "runner list: the built-in ${e} is missing:\n${last_out}")
endforeach()
execute_process(COMMAND "${runner}" sweep configs/smoke.yaml --device cpu -q -o "${work}/x.jsonl"
                WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "runner sweep configs/smoke.yaml exited ${rc}\n${out}\n${err}")
endif()
step("runner sweep configs/smoke.yaml")
file(STRINGS "${work}/x.jsonl" lines)
list(LENGTH lines n)
if(n LESS 2)
  message(FATAL_ERROR "runner sweep: ${work}/x.jsonl has ${n} lines")
endif()
# The runner records the consumer's code under test, not labrun's (code_rev.cmake).
list(GET lines 0 header)
string(FIND "${header}" "\"project\":\"consumer\"" at)
if(at EQUAL -1)
  message(WARNING "runner sweep: the header does not name project consumer as the code under test")
endif()
if(NOT KEEP)
  file(REMOVE_RECURSE "${work}")
endif()
step("ok")

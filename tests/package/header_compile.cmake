# public_headers_compile.<header>: include/labrun/<HEADER> compiles alone: a .cpp that includes only it with the
# C++ compiler (-std=c++20 -fsyntax-only; .hpp only) and, when NVCC is given, a .cu that includes only it with
# nvcc -std=c++17 (every public header is usable from a user's CUDA file).
# KERNELS_INCLUDE_DIR: the folder whose labrun/kernels links to kernels/ (build/kernels_include).
#   cmake -DHEADER=<name> -DINCLUDE_DIR=<repo>/include -DKERNELS_INCLUDE_DIR=<build>/kernels_include -DCXX=<c++> [-DNVCC=<nvcc>] -DWORK=<dir> -P header_compile.cmake
cmake_minimum_required(VERSION 3.24)
file(MAKE_DIRECTORY "${WORK}")
string(MAKE_C_IDENTIFIER "${HEADER}" stem)
set(includes "")
foreach(dir IN ITEMS ${INCLUDE_DIR} ${KERNELS_INCLUDE_DIR})
  list(APPEND includes -I "${dir}")
endforeach()
if(HEADER MATCHES "\\.hpp$")
  file(WRITE "${WORK}/${stem}.cpp" "#include <labrun/${HEADER}>\n")
  execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -Wall -Wextra ${includes} "${WORK}/${stem}.cpp"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "labrun/${HEADER} does not compile alone with ${CXX} -std=c++20:\n${out}${err}")
  endif()
  message(STATUS "labrun/${HEADER}: ${CXX} -std=c++20 ok")
endif()
if(NVCC)
  file(WRITE "${WORK}/${stem}.cu" "#include <labrun/${HEADER}>\n")
  execute_process(COMMAND "${NVCC}" -std=c++17 ${includes} -c "${WORK}/${stem}.cu" -o "${WORK}/${stem}.o"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "labrun/${HEADER} does not compile alone with nvcc -std=c++17:\n${out}${err}")
  endif()
  message(STATUS "labrun/${HEADER}: nvcc -std=c++17 ok")
endif()

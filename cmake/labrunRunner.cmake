# labrun_add_runner(NAME SOURCES src... [BUILTINS] [PORTABLE [ON|OFF]])
#
# An executable NAME with every labrun command (sweep, report, diff, history, merge, slurm, validate, list, env)
# and the experiments of SOURCES (labrun/experiment.hpp); BUILTINS adds labrun's nine built-in experiments.
# Included by labrun's package config (find_package(labrun)) and by labrun's own CMakeLists.txt.
#
#  - .cu sources compile only when the CUDA language is enabled in the calling project and the package was built
#    with CUDA; otherwise they are left out (a STATUS message names them) and the runner has the host backend
#    only. They compile for the project's CMAKE_CUDA_ARCHITECTURES (90 when the project set none) with the static
#    CUDA runtime, the one labrun::cuda links. A source named *_sm90a.cu is built for sm_90a too (with LABRUN_SM90A
#    defined) where those include 90: Hopper-only code (wgmma, TMA; docs/kernels.md).
#  - PORTABLE (default ON; PORTABLE OFF turns it off) links libstdc++ and libgcc statically, as the labrun binary
#    is, so the runner can be copied to a GPU machine that has only libc (scripts/gpu_pack.sh).
#  - labrun's plot scripts are copied into a scripts/ folder beside the runner (report and history find them).
#  - The revision of the code under test (the calling project's repository: its commit and dirty flag) is
#    captured at every build by code_rev.cmake into NAME_code_rev.cpp, linked into the runner.
include_guard(GLOBAL)

if(NOT DEFINED LABRUN_CODE_REV_SCRIPT)
  if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/code_rev.cmake")               # installed: share/labrun/cmake/
    set(LABRUN_CODE_REV_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/code_rev.cmake")
  else()                                                              # labrun's source tree: cmake/ beside scripts/
    set(LABRUN_CODE_REV_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/../scripts/code_rev.cmake")
  endif()
endif()

# labrun_sm90a_sources(ARCHS SOURCE...): a *_sm90a.cu source holds Hopper-only code (labrun/kernels/wgmma.cuh, the
# contract in docs/kernels.md). Where ARCHS (a CUDA_ARCHITECTURES list) includes 90, such a source is also built for
# sm_90a, with LABRUN_SM90A defined (the driver loads that image on a 9.0 device); where it includes 90a, the whole
# target is sm_90a code and the source only gets the define. Source properties: call from the directory that owns
# the target. Used by labrun_add_runner and by labrun's own experiments.
function(labrun_sm90a_sources archs)
  set(options)
  if("90" IN_LIST archs OR "90-real" IN_LIST archs)
    set(options "--generate-code=arch=compute_90a,code=sm_90a")
  elseif(NOT ("90a" IN_LIST archs OR "90a-real" IN_LIST archs))
    return()
  endif()
  foreach(source IN LISTS ARGN)
    if(source MATCHES "_sm90a\\.cu$")
      set_source_files_properties(${source} PROPERTIES COMPILE_OPTIONS "${options}" COMPILE_DEFINITIONS LABRUN_SM90A)
    endif()
  endforeach()
endfunction()

function(labrun_add_runner NAME)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "BUILTINS" "PORTABLE" "SOURCES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "labrun_add_runner(${NAME}): unknown arguments ${ARG_UNPARSED_ARGUMENTS} "
                        "(labrun_add_runner(NAME SOURCES src... [BUILTINS] [PORTABLE [ON|OFF]]))")
  endif()
  if(NOT ARG_SOURCES AND NOT ARG_BUILTINS)
    message(FATAL_ERROR "labrun_add_runner(${NAME}): give SOURCES (your experiments), BUILTINS, or both")
  endif()
  set(portable ON)
  if(DEFINED ARG_PORTABLE AND NOT ARG_PORTABLE)
    set(portable OFF)
  endif()

  set(package_cuda OFF)
  if(TARGET labrun::cuda)
    set(package_cuda ON)
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(cuda OFF)
  if(package_cuda AND "CUDA" IN_LIST languages)
    set(cuda ON)
  endif()

  set(sources "")
  set(left_out "")
  set(has_cu OFF)
  foreach(src IN LISTS ARG_SOURCES)
    if(src MATCHES "\\.cu$")
      if(cuda)
        list(APPEND sources "${src}")
        set(has_cu ON)
      else()
        list(APPEND left_out "${src}")
      endif()
    else()
      list(APPEND sources "${src}")
    endif()
  endforeach()
  if(left_out)
    list(JOIN left_out " " names)
    if(NOT package_cuda)
      # A host-only labrun package (built with LABRUN_WITH_CUDA OFF): nothing this project can change.
      message(WARNING "labrun_add_runner(${NAME}): this labrun package was built without CUDA; leaving out "
                      "${names} (host backend only)")
    else()
      # The package has CUDA but this project did not enable the language: say the fix and where nvcc is.
      find_program(labrun_nvcc nvcc HINTS "$ENV{CUDA_HOME}/bin" /usr/local/cuda/bin)
      if(labrun_nvcc)
        set(where "nvcc is at ${labrun_nvcc}")
      else()
        set(where "no nvcc found on PATH or in /usr/local/cuda/bin: set CMAKE_CUDA_COMPILER")
      endif()
      message(WARNING "labrun_add_runner(${NAME}): CUDA is not enabled in this project, so ${names} "
                      "will not be built and the runner has the host backend only. Add enable_language(CUDA) "
                      "before labrun_add_runner (or LANGUAGES CXX CUDA in project()); ${where}.")
    endif()
  endif()

  if(left_out)
    # The runner says which CUDA sources it was built without (`list`, `sweep`): src/main.cpp reads this symbol.
    set(left_out_source "${CMAKE_CURRENT_BINARY_DIR}/${NAME}_left_out_cuda.cpp")
    file(GENERATE OUTPUT "${left_out_source}"
         CONTENT "extern \"C\" const char* const labrun_runner_left_out_cuda = \"${names}\";\n")
    list(APPEND sources "${left_out_source}")
  endif()
  add_executable(${NAME} ${sources})
  set_target_properties(${NAME} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_link_libraries(${NAME} PRIVATE labrun::main)
  if(ARG_BUILTINS)
    target_link_libraries(${NAME} PRIVATE labrun::experiments)
    if(package_cuda)
      target_link_libraries(${NAME} PRIVATE labrun::experiments_cuda)
    endif()
  endif()
  if(package_cuda)
    target_link_libraries(${NAME} PRIVATE labrun::cuda)
  endif()
  if(has_cu)
    # The project's architectures; CMake fills CMAKE_CUDA_ARCHITECTURES with nvcc's default (sm_75 for CUDA 13)
    # when the project set none, which is not what a runner for an H100/H200 wants: then 90.
    set(archs "${CMAKE_CUDA_ARCHITECTURES}")
    if(NOT archs)
      set(archs 90)
    elseif("${archs}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}" AND "$ENV{CUDAARCHS}" STREQUAL "")
      # Not a normal variable of the project, not from the environment: the cache entry is the user's
      # (-DCMAKE_CUDA_ARCHITECTURES=..., "specified on the command line") or CMake's detected default.
      get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
      if(help STREQUAL "CUDA architectures" OR
         (DEFINED CMAKE_CUDA_ARCHITECTURES_DEFAULT AND "${archs}" STREQUAL "${CMAKE_CUDA_ARCHITECTURES_DEFAULT}"))
        set(archs 90)
      endif()
    endif()
    set_target_properties(${NAME} PROPERTIES CUDA_ARCHITECTURES "${archs}" CUDA_STANDARD 17
                                             CUDA_STANDARD_REQUIRED ON CUDA_RUNTIME_LIBRARY Static)
    target_compile_options(${NAME} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
    labrun_sm90a_sources("${archs}" ${ARG_SOURCES})
  endif()
  if(portable)
    target_link_options(${NAME} PRIVATE -static-libstdc++ -static-libgcc)
  endif()

  # labrun report/history draw their plots with plot_report.py/plot_history.py, looked for in a scripts/ folder
  # beside the running executable or above it: copied there from the installed package, with plot_common.py, which
  # both import from their own folder.
  if(DEFINED LABRUN_SHARE_DIR AND EXISTS "${LABRUN_SHARE_DIR}/plot_report.py")
    add_custom_command(TARGET ${NAME} POST_BUILD
      COMMAND "${CMAKE_COMMAND}" -E make_directory "$<TARGET_FILE_DIR:${NAME}>/scripts"
      COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${LABRUN_SHARE_DIR}/plot_report.py"
              "${LABRUN_SHARE_DIR}/plot_history.py" "${LABRUN_SHARE_DIR}/plot_common.py"
              "$<TARGET_FILE_DIR:${NAME}>/scripts/"
      VERBATIM)
  endif()

  # The code under test: the calling project's commit and dirty flag, recaptured at every build.
  if(EXISTS "${LABRUN_CODE_REV_SCRIPT}")
    set(rev_cpp "${CMAKE_CURRENT_BINARY_DIR}/${NAME}_code_rev.cpp")
    add_custom_target(${NAME}_code_rev
      COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}" "-DPROJECT=${PROJECT_NAME}"
              "-DOUTPUT=${rev_cpp}" -P "${LABRUN_CODE_REV_SCRIPT}"
      BYPRODUCTS "${rev_cpp}"
      COMMENT "${NAME}: revision of ${PROJECT_NAME}"
      VERBATIM)
    target_sources(${NAME} PRIVATE "${rev_cpp}")
    add_dependencies(${NAME} ${NAME}_code_rev)
  endif()
endfunction()

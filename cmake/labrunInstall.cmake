# Install rules and the CMake package (find_package(labrun CONFIG)): included by CMakeLists.txt.
#
#   <prefix>/bin/labrun
#   <prefix>/include/labrun/*.hpp, *.cuh              public headers
#   <prefix>/lib/liblabrun_{core,cuda,main}.a         static libraries
#   <prefix>/lib/labrun/objects/...                   the built-in experiments' objects (OBJECT libraries)
#   <prefix>/lib/cmake/labrun/                        labrunConfig.cmake, labrunConfigVersion.cmake,
#                                                     labrunTargets.cmake (namespace labrun::)
#   <prefix>/share/labrun/plot_report.py, plot_history.py, plot_common.py (what the two import)
#   <prefix>/share/labrun/cmake/                      labrunRunner.cmake (labrun_add_runner), code_rev.cmake,
#                                                     labrunSweepTest.cmake, labrun_sweep_test.cmake
#   <prefix>/share/doc/labrun/LICENSE, NOTICE         the Apache License 2.0 and the copyright notice
# Exported targets carry no path of this machine: the static yaml-cpp of a portable build is found again by the
# config on the user's machine (labrun::yaml_cpp).
include(CMakePackageConfigHelpers)

set(LABRUN_INSTALL_CMAKEDIR lib/cmake/labrun)
set(LABRUN_INSTALL_SHAREDIR share/labrun)
set(LABRUN_INSTALL_DOCDIR share/doc/labrun)

install(TARGETS labrun RUNTIME DESTINATION bin)
install(TARGETS ${LABRUN_EXPORTED_TARGETS} EXPORT labrunTargets
        ARCHIVE DESTINATION lib
        OBJECTS DESTINATION lib/labrun/objects)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/labrun DESTINATION include
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/kernels/ DESTINATION include/labrun/kernels
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/NOTICE DESTINATION ${LABRUN_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/scripts/plot_report.py ${CMAKE_SOURCE_DIR}/scripts/plot_history.py
              ${CMAKE_SOURCE_DIR}/scripts/plot_common.py ${CMAKE_SOURCE_DIR}/scripts/labrun_view.js
        DESTINATION ${LABRUN_INSTALL_SHAREDIR})
# The HTML views' charting library (docs/html.md): Debian's libjs-chart.js, copied into the install so an installed
# labrun writes pages that hold it wherever the package is not installed.
find_file(LABRUN_CHART_JS chart.min.js PATHS /usr/share/javascript/chart.js NO_DEFAULT_PATH)
if(LABRUN_CHART_JS)
  install(FILES ${LABRUN_CHART_JS} DESTINATION ${LABRUN_INSTALL_SHAREDIR})
else()
  message(STATUS "chart.min.js not found (Debian: libjs-chart.js): the HTML views will have no charts")
endif()

set(LABRUN_HELPER_SCRIPTS ${CMAKE_SOURCE_DIR}/cmake/labrunRunner.cmake)
foreach(script code_rev.cmake labrunSweepTest.cmake labrun_sweep_test.cmake)
  if(EXISTS ${CMAKE_SOURCE_DIR}/scripts/${script})
    list(APPEND LABRUN_HELPER_SCRIPTS ${CMAKE_SOURCE_DIR}/scripts/${script})
  endif()
endforeach()
install(FILES ${LABRUN_HELPER_SCRIPTS} DESTINATION ${LABRUN_INSTALL_SHAREDIR}/cmake)

install(EXPORT labrunTargets NAMESPACE labrun:: DESTINATION ${LABRUN_INSTALL_CMAKEDIR})
set(LABRUN_WITH_CUDA ${LABRUN_CUDA})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/labrunConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/labrunConfig.cmake
                              INSTALL_DESTINATION ${LABRUN_INSTALL_CMAKEDIR}
                              PATH_VARS LABRUN_INSTALL_SHAREDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/labrunConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/labrunConfig.cmake ${CMAKE_BINARY_DIR}/package/labrunConfigVersion.cmake
        DESTINATION ${LABRUN_INSTALL_CMAKEDIR})

# In this tree: labrun_add_runner() against the labrun:: aliases (and labrun_add_sweep_test() when present).
include(${CMAKE_SOURCE_DIR}/cmake/labrunRunner.cmake)
if(EXISTS ${CMAKE_SOURCE_DIR}/scripts/labrunSweepTest.cmake)
  include(${CMAKE_SOURCE_DIR}/scripts/labrunSweepTest.cmake)
endif()

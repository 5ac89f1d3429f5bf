# Installation: the public headers, the component libraries, the CLI, and a CMake package
# (opscopeConfig.cmake, its version file and the exported targets) so another project can write
#
#   find_package(opscope 0.1 REQUIRED)                    # or: COMPONENTS profiler tensor ...
#   target_link_libraries(app PRIVATE opscope::opscope)   # or: opscope::profiler, ...
#
# Targets: opscope::opscope (everything) and one per component, in layer order: opscope::trace,
# opscope::profiler, opscope::tensor, opscope::device_cpu, opscope::device_neuron,
# opscope::compile, opscope::analysis, opscope::job, opscope::job_mpi, opscope::explorer. The same
# names work inside this build.
# Install components: Development (headers, libraries, CMake package) and Runtime (the CLI,
# installed by tools/CMakeLists.txt).
include(CMakePackageConfigHelpers)

get_property(_opscope_components GLOBAL PROPERTY OPSCOPE_COMPONENT_TARGETS)

# opscope::opscope: every component (the CLI target is already called `opscope`).
add_library(opscope_all INTERFACE)
add_library(opscope::opscope ALIAS opscope_all)
set_target_properties(opscope_all PROPERTIES EXPORT_NAME opscope)
target_link_libraries(opscope_all INTERFACE ${_opscope_components})

set(OPSCOPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/opscope)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/opscope
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development
  FILES_MATCHING PATTERN "*.h")
install(TARGETS ${_opscope_components} opscope_all EXPORT opscopeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(EXPORT opscopeTargets NAMESPACE opscope::
  DESTINATION ${OPSCOPE_INSTALL_CMAKEDIR} COMPONENT Development)

list(TRANSFORM _opscope_components REPLACE "^opscope_" "" OUTPUT_VARIABLE OPSCOPE_CONFIG_COMPONENTS)
list(JOIN OPSCOPE_CONFIG_COMPONENTS " " OPSCOPE_CONFIG_COMPONENTS)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/opscopeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/opscopeConfig.cmake
  INSTALL_DESTINATION ${OPSCOPE_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/opscopeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/opscopeConfig.cmake
              ${PROJECT_BINARY_DIR}/opscopeConfigVersion.cmake
  DESTINATION ${OPSCOPE_INSTALL_CMAKEDIR} COMPONENT Development)

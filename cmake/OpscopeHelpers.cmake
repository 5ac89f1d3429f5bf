# Helpers shared by every component's CMakeLists.txt.
#
#   opscope_library(NAME opscope_<component> SOURCES a.cc b.cc DEPS other_lib ...)
#       -> static library, also opscope::<component>; installed and exported (cmake/OpscopeInstall.cmake)
#   opscope_test(NAME name SOURCES a_test.cc DEPS lib ...)   -> GoogleTest binary, registered with CTest
#   opscope_bench(NAME name SOURCES a_bench.cc DEPS lib ...) -> Google Benchmark or plain program in bench/
#
# Sources are always listed by name (no globbing) so a new file is a visible build change.

# A component of the library. Its public headers are include/opscope/*.h (installed as
# <prefix>/include/opscope); src/ is private to the library's own sources.
function(opscope_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  string(REGEX REPLACE "^opscope_" "" component ${ARG_NAME})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  add_library(opscope::${component} ALIAS ${ARG_NAME})
  set_target_properties(${ARG_NAME} PROPERTIES EXPORT_NAME ${component})
  target_include_directories(${ARG_NAME}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  target_compile_options(${ARG_NAME} PRIVATE ${OPSCOPE_WARNINGS})
  set_property(GLOBAL APPEND PROPERTY OPSCOPE_COMPONENT_TARGETS ${ARG_NAME})
endfunction()

# Tests may include public headers and the internal headers docs/architecture.md lists for them
# (tools/check_includes.py enforces which). ctest gives them OPSCOPE_SOURCE_DIR,
# OPSCOPE_BINARY_DIR and OPSCOPE_FIXTURES_DIR (the shared fixture traces) in the environment.
# Their main() is tests/gtest_main.cc: a run whose every test was skipped exits 77, which ctest
# reports as skipped; a failed SetUpTestSuite is a failure (ctest's default, a "[  SKIPPED ]"
# pattern, read it as a skip).
function(opscope_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT TARGET opscope_gtest_main)
    add_library(opscope_gtest_main STATIC ${PROJECT_SOURCE_DIR}/tests/gtest_main.cc)
    target_link_libraries(opscope_gtest_main PUBLIC GTest::gtest)
    target_compile_options(opscope_gtest_main PRIVATE ${OPSCOPE_WARNINGS})
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  # src/ for the internal headers a bench times; the root for the benches' own bench/*.h.
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest opscope_gtest_main)
  target_compile_options(${ARG_NAME} PRIVATE ${OPSCOPE_WARNINGS})
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DISCOVERY_TIMEOUT 60)
  # gtest_discover_tests splits a list-valued PROPERTIES argument into separate properties, so
  # the environment is set by a file ctest reads after the discovered tests.
  set(env "OPSCOPE_SOURCE_DIR=${PROJECT_SOURCE_DIR}" "OPSCOPE_BINARY_DIR=${PROJECT_BINARY_DIR}"
          "OPSCOPE_FIXTURES_DIR=${OPSCOPE_FIXTURES_DIR}")
  set(env_file ${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_environment.cmake)
  file(WRITE ${env_file} "if(${ARG_NAME}_TESTS)\n"
       "  set_tests_properties(\${${ARG_NAME}_TESTS} PROPERTIES ENVIRONMENT [==[${env}]==]\n"
       "                       SKIP_REGULAR_EXPRESSION \"\" SKIP_RETURN_CODE 77)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${env_file})
endfunction()

function(opscope_bench)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  if(NOT OPSCOPE_BUILD_BENCH)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  # src/ for the internal headers a bench times; the root for the benches' own bench/*.h.
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  target_compile_options(${ARG_NAME} PRIVATE ${OPSCOPE_WARNINGS})
endfunction()

# Helpers shared by every component's CMakeLists.txt.
#
#   opscope_library(NAME name SOURCES a.cc b.cc DEPS other_lib ...)
#   opscope_test(NAME name SOURCES a_test.cc DEPS lib ...)   -> GoogleTest binary, registered with CTest
#   opscope_bench(NAME name SOURCES a_bench.cc DEPS lib ...) -> Google Benchmark or plain program in bench/
#
# Sources are always listed by name (no globbing) so a new file is a visible build change.

function(opscope_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                         PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  target_compile_options(${ARG_NAME} PRIVATE ${OPSCOPE_WARNINGS})
endfunction()

function(opscope_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_options(${ARG_NAME} PRIVATE ${OPSCOPE_WARNINGS})
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES ENVIRONMENT "OPSCOPE_SOURCE_DIR=${PROJECT_SOURCE_DIR};OPSCOPE_BINARY_DIR=${PROJECT_BINARY_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()

function(opscope_bench)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  if(NOT OPSCOPE_BUILD_BENCH)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  target_compile_options(${ARG_NAME} PRIVATE ${OPSCOPE_WARNINGS})
endfunction()

# Helpers that give every Arbiter target the same warnings and include root.
set(ARBITER_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Woverloaded-virtual -Wimplicit-fallthrough)
# GCC 12 reports overlapping copies that cannot happen in inlined std::string concatenations
# ("literal" + std::to_string(i)) at -O2 (GCC bugs 105329 and 105651), depending on how much
# else the translation unit inlines: a false positive that -Werror would turn into a failed build.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND ARBITER_WARNINGS -Wno-restrict)
endif()
if(ARBITER_WERROR)
  list(APPEND ARBITER_WARNINGS -Werror)
endif()

# arbiter_library(NAME SRCS ... DEPS ...): a static library `arbiter_<NAME>` with alias
# `arbiter::<NAME>`, whose include root is src/ ("arbiter/model/quantity.h").
function(arbiter_library NAME)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(arbiter_${NAME} STATIC ${ARG_SRCS})
  add_library(arbiter::${NAME} ALIAS arbiter_${NAME})
  target_include_directories(arbiter_${NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(arbiter_${NAME} PRIVATE ${ARBITER_WARNINGS})
  target_link_libraries(arbiter_${NAME} PUBLIC ${ARG_DEPS})
endfunction()

# arbiter_test(NAME SRCS ... DEPS ...): a GoogleTest binary registered with CTest.
function(arbiter_test NAME)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${NAME} ${ARG_SRCS})
  target_compile_options(${NAME} PRIVATE ${ARBITER_WARNINGS})
  target_link_libraries(${NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  set_target_properties(${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_compile_definitions(${NAME} PRIVATE
    ARBITER_SOURCE_DIR_DEFAULT="${PROJECT_SOURCE_DIR}"
    ARBITER_BINARY_DEFAULT="${CMAKE_BINARY_DIR}/bin/arbiter")
  gtest_discover_tests(${NAME} TEST_PREFIX "${NAME}." DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60)
endfunction()

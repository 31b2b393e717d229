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

# The linker: mold, else gold, else the toolchain's default (ld.bfd). Linking is most of an
# incremental build (every test binary relinks when a library changes): mold links the largest
# test binary in a third of ld.bfd's time (docs/ci.md).
set(ARBITER_LINKER "auto" CACHE STRING "Linker: auto (mold, gold, default), mold, gold, bfd or default")
set_property(CACHE ARBITER_LINKER PROPERTY STRINGS auto mold gold bfd default)
if(ARBITER_LINKER STREQUAL "auto")
  include(CheckCXXSourceCompiles)
  set(_arbiter_linker default)
  foreach(candidate mold gold)
    set(CMAKE_REQUIRED_LINK_OPTIONS -fuse-ld=${candidate})
    check_cxx_source_compiles("int main() { return 0; }" ARBITER_LINKER_${candidate}_WORKS)
    unset(CMAKE_REQUIRED_LINK_OPTIONS)
    if(ARBITER_LINKER_${candidate}_WORKS)
      set(_arbiter_linker ${candidate})
      break()
    endif()
  endforeach()
else()
  set(_arbiter_linker ${ARBITER_LINKER})
endif()
if(NOT _arbiter_linker STREQUAL "default")
  add_link_options(-fuse-ld=${_arbiter_linker})
endif()
message(STATUS "linker: ${_arbiter_linker}")

# Unity builds: a target's sources are compiled in batches of up to 8, each batch one
# translation unit, so the headers they share (nlohmann-json, GoogleTest, the model) are parsed
# and their inline functions compiled and described in debug information once per batch instead
# of once per file: half the build's time (docs/ci.md). Names private to a source file must then
# be unique within its target (an anonymous namespace is shared by the batch). A target whose
# files are edited one at a time (the scheduler plugins) opts out with NO_UNITY, so that touching
# one recompiles one. ARBITER_UNITY=OFF compiles every file alone.
option(ARBITER_UNITY "Compile each target's sources in unity batches" ON)
function(arbiter_unity TARGET)
  set_target_properties(${TARGET} PROPERTIES UNITY_BUILD ${ARBITER_UNITY} UNITY_BUILD_BATCH_SIZE 8)
endfunction()

# arbiter_library(NAME [NO_UNITY] SRCS ... DEPS ...): a static library `arbiter_<NAME>` with alias
# `arbiter::<NAME>`, whose include root is src/ ("arbiter/model/quantity.h").
function(arbiter_library NAME)
  cmake_parse_arguments(ARG "NO_UNITY" "" "SRCS;DEPS" ${ARGN})
  add_library(arbiter_${NAME} STATIC ${ARG_SRCS})
  if(NOT ARG_NO_UNITY)
    arbiter_unity(arbiter_${NAME})
  endif()
  add_library(arbiter::${NAME} ALIAS arbiter_${NAME})
  target_include_directories(arbiter_${NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(arbiter_${NAME} PRIVATE ${ARBITER_WARNINGS})
  target_link_libraries(arbiter_${NAME} PUBLIC ${ARG_DEPS})
endfunction()

# GCC's variable tracking (-fvar-tracking, -fvar-tracking-assignments) follows every variable
# through registers in optimised code so that a debugger can print it at any instruction. It is
# 44% of a -O2 -g compile (api's first unity batch: 48.6 s of CPU with it, 27.3 s without;
# docs/ci.md). Without it the debug information is still full (types, scopes, every variable and
# argument, every frame of a backtrace); a variable that lives in a register is more often shown
# as optimised out. ARBITER_VAR_TRACKING=ON restores it; a Debug build does not need it.
option(ARBITER_VAR_TRACKING "Track variables through registers in optimised debug information (GCC)" OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT ARBITER_VAR_TRACKING)
  add_compile_options(-fno-var-tracking)
endif()

# Arbiter's own sources carry line tables only (-g1) in the build types that ask for debug
# information: every frame of a backtrace and of a profile with its function, file and line,
# stepping by line in gdb, and a quarter to a third cheaper to compile than -g (sched/cycle's
# batch 15.7 s -> 12.0 s, controllers' 42.7 s -> 29.7 s; docs/ci.md). What -g adds (types,
# scopes, variables, most of them shown as optimised out at -O2 without variable tracking) is
# for a debugging session: ARBITER_DEBUG_INFO=full.
set(ARBITER_DEBUG_INFO "lines" CACHE STRING "Debug information of Arbiter's sources: lines (-g1) or full (-g)")
set_property(CACHE ARBITER_DEBUG_INFO PROPERTY STRINGS lines full)
if(ARBITER_DEBUG_INFO STREQUAL "lines")
  if(CMAKE_BUILD_TYPE MATCHES "^(RelWithDebInfo|Debug)$")
    add_compile_options(-g1)
  endif()
elseif(NOT ARBITER_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "ARBITER_DEBUG_INFO must be lines or full, not '${ARBITER_DEBUG_INFO}'")
endif()

# Test sources carry line tables only (-g1) whatever ARBITER_DEBUG_INFO says: enough for a
# failure's backtrace, a sanitizer's report and stepping by line in gdb (docs/ci.md).
# ARBITER_TEST_DEBUG_INFO=full gives them -g.
set(ARBITER_TEST_DEBUG_INFO "lines" CACHE STRING "Debug information of test sources: lines (-g1) or full (-g)")
set_property(CACHE ARBITER_TEST_DEBUG_INFO PROPERTY STRINGS lines full)
set(ARBITER_TEST_OPTIONS ${ARBITER_WARNINGS})
if(ARBITER_TEST_DEBUG_INFO STREQUAL "lines")
  list(APPEND ARBITER_TEST_OPTIONS -g1)
elseif(ARBITER_TEST_DEBUG_INFO STREQUAL "full")
  list(APPEND ARBITER_TEST_OPTIONS -g)
else()
  message(FATAL_ERROR "ARBITER_TEST_DEBUG_INFO must be lines or full, not '${ARBITER_TEST_DEBUG_INFO}'")
endif()
# Test sources are optimised for debugging (-Og): they are assertions and fixtures around the
# libraries, which keep the build type's optimisation and are what the tests exercise. -Og
# compiles a test batch in half of -O2's time (api_test: 32.2 s -> 17.6 s of CPU).
# ARBITER_TEST_OPTIMIZE=build gives them the build type's level.
set(ARBITER_TEST_OPTIMIZE "debug" CACHE STRING "Optimisation of test sources: debug (-Og) or build (the build type's)")
set_property(CACHE ARBITER_TEST_OPTIMIZE PROPERTY STRINGS debug build)
if(ARBITER_TEST_OPTIMIZE STREQUAL "debug")
  list(APPEND ARBITER_TEST_OPTIONS -Og)
elseif(NOT ARBITER_TEST_OPTIMIZE STREQUAL "build")
  message(FATAL_ERROR "ARBITER_TEST_OPTIMIZE must be debug or build, not '${ARBITER_TEST_OPTIMIZE}'")
endif()

# How a test binary's tests are registered with CTest. 0 (the default): one CTest test per
# GoogleTest test (gtest_discover_tests), so that `ctest -R` picks single tests and a failure is
# named by the test alone. N: the binary is registered as N CTest tests, each running a shard of
# its tests in one process. The sanitizer tree uses shards (scripts/test.sh): an instrumented
# process takes 0.2-0.5 s to start and exit (shadow memory, the leak check), which was 40% of
# that tree's test time with a process per test (docs/ci.md).
set(ARBITER_TEST_SHARDS 0 CACHE STRING "Register each test binary as this many GoogleTest shards (0: one CTest test per test)")
if(NOT ARBITER_TEST_SHARDS MATCHES "^[0-9]+$")
  message(FATAL_ERROR "ARBITER_TEST_SHARDS must be a whole number, not '${ARBITER_TEST_SHARDS}'")
endif()

# arbiter_test(NAME SRCS ... DEPS ...): a GoogleTest binary registered with CTest.
function(arbiter_test NAME)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${NAME} ${ARG_SRCS})
  arbiter_unity(${NAME})
  target_compile_options(${NAME} PRIVATE ${ARBITER_TEST_OPTIONS})
  target_link_libraries(${NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  set_target_properties(${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_compile_definitions(${NAME} PRIVATE
    ARBITER_SOURCE_DIR_DEFAULT="${PROJECT_SOURCE_DIR}"
    ARBITER_BINARY_DEFAULT="${CMAKE_BINARY_DIR}/bin/arbiter")
  if(ARBITER_TEST_SHARDS EQUAL 0)
    gtest_discover_tests(${NAME} TEST_PREFIX "${NAME}." DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS unit)
  else()
    # GoogleTest's own sharding: shard I runs every test whose index is I modulo the count.
    foreach(shard RANGE 1 ${ARBITER_TEST_SHARDS})
      math(EXPR index "${shard} - 1")
      add_test(NAME ${NAME}.shard-${shard}-of-${ARBITER_TEST_SHARDS} COMMAND ${NAME})
      set_tests_properties(${NAME}.shard-${shard}-of-${ARBITER_TEST_SHARDS} PROPERTIES LABELS unit
        ENVIRONMENT "GTEST_TOTAL_SHARDS=${ARBITER_TEST_SHARDS};GTEST_SHARD_INDEX=${index}")
    endforeach()
  endif()
endfunction()

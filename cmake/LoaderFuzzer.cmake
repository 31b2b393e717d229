# Builds the libFuzzer loader target in a side build with clang (g++ has no libFuzzer), and
# registers a CTest test that fuzzes the loader for a bounded time from a seed corpus of the
# shipped examples and the bad-input corpus.
include(ExternalProject)
find_program(ARBITER_CLANGXX NAMES clang++-14 clang++)
set(_fuzz_runtime "")
if(ARBITER_CLANGXX)
  execute_process(COMMAND ${ARBITER_CLANGXX} -print-file-name=libclang_rt.fuzzer-x86_64.a
    OUTPUT_VARIABLE _fuzz_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
if(NOT ARBITER_CLANGXX OR NOT EXISTS "${_fuzz_runtime}")
  message(WARNING "clang++ with libFuzzer (Debian: clang, libclang-rt-14-dev) not found: "
                  "the loader fuzz test is not built")
  return()
endif()

set(ARBITER_FUZZ_SECONDS 40 CACHE STRING "How long the loader fuzz test runs")
# With make, the side build shares the outer build's job slots ($(MAKE) hands it the jobserver);
# `cmake --build` would build it one file at a time.
if(CMAKE_GENERATOR MATCHES "Make")
  set(_fuzz_build_command $(MAKE) loader_fuzzer api_fuzzer)
else()
  set(_fuzz_build_command ${CMAKE_COMMAND} --build <BINARY_DIR> --target loader_fuzzer api_fuzzer)
endif()
# -O1 with line tables only, as libFuzzer's documentation recommends for fuzz targets: stack
# traces keep their file and line, and the build takes about half of -O2 -g's time.
ExternalProject_Add(loader_fuzzer_build
  SOURCE_DIR ${PROJECT_SOURCE_DIR}
  BINARY_DIR ${CMAKE_BINARY_DIR}/fuzz-build
  CMAKE_ARGS -DCMAKE_CXX_COMPILER=${ARBITER_CLANGXX} -DARBITER_FUZZ_ONLY=ON -DARBITER_WERROR=${ARBITER_WERROR}
             -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
             -DARBITER_LINKER=${ARBITER_LINKER}
  BUILD_COMMAND ${_fuzz_build_command}
  INSTALL_COMMAND ""
  BUILD_ALWAYS ON)

add_test(NAME LoaderFuzzer.BoundedRunFindsNoCrash
  COMMAND ${CMAKE_COMMAND}
    -DFUZZER=${CMAKE_BINARY_DIR}/fuzz-build/bin/loader_fuzzer
    -DWORK=${CMAKE_BINARY_DIR}/fuzz-corpus
    -DSEEDS=${PROJECT_SOURCE_DIR}/examples;${PROJECT_SOURCE_DIR}/tests/manifest/bad_inputs;${PROJECT_SOURCE_DIR}/fuzz/seeds
    -DSECONDS=${ARBITER_FUZZ_SECONDS}
    -P ${PROJECT_SOURCE_DIR}/cmake/RunFuzzer.cmake)
set_tests_properties(LoaderFuzzer.BoundedRunFindsNoCrash PROPERTIES TIMEOUT 600 LABELS fuzz COST ${ARBITER_FUZZ_SECONDS})

add_test(NAME ApiFuzzer.BoundedRunFindsNoCrash
  COMMAND ${CMAKE_COMMAND}
    -DFUZZER=${CMAKE_BINARY_DIR}/fuzz-build/bin/api_fuzzer
    -DWORK=${CMAKE_BINARY_DIR}/fuzz-corpus-api
    -DSEEDS=${PROJECT_SOURCE_DIR}/fuzz/api_seeds
    -DSECONDS=${ARBITER_FUZZ_SECONDS}
    -P ${PROJECT_SOURCE_DIR}/cmake/RunFuzzer.cmake)
set_tests_properties(ApiFuzzer.BoundedRunFindsNoCrash PROPERTIES TIMEOUT 600 LABELS fuzz COST ${ARBITER_FUZZ_SECONDS})

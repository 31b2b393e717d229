# Runs a libFuzzer binary for SECONDS over a working corpus seeded from the SEEDS folders.
# Fails if the fuzzer finds a crash, a leak, a timeout or undefined behaviour.
file(MAKE_DIRECTORY ${WORK})
set(_seed_dirs "")
foreach(dir ${SEEDS})
  if(EXISTS ${dir})
    list(APPEND _seed_dirs ${dir})
  endif()
endforeach()
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048 -max_len=65536
          -print_final_stats=1 -artifact_prefix=${WORK}/ ${WORK} ${_seed_dirs}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzzer ${FUZZER} failed (exit ${rc}); the crashing input is in ${WORK}")
endif()

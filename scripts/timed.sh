# Sourced by .ci/run and scripts/test.sh: one way to time a step.
#   timed NAME COMMAND...   runs COMMAND, prints its wall time and records it for timed_report
#   timed_report            prints every recorded step's time and the total since the start
# Under `set -e` a failing COMMAND ends the script before its time is recorded; a caller that
# wants the table even then runs timed_report from an EXIT trap.
timed_steps=()
timed() {
  local name="$1" start=$SECONDS
  shift
  echo "== $name =="
  "$@"
  local took=$((SECONDS - start))
  timed_steps+=("$(printf '%-44s %4d:%02d' "$name" $((took / 60)) $((took % 60)))")
  echo "== $name took $((took / 60)) min $((took % 60)) s =="
}
timed_report() {
  echo "== wall time per step =="
  printf '%s\n' "${timed_steps[@]}"
  printf '%-44s %4d:%02d\n' "total" $((SECONDS / 60)) $((SECONDS % 60))
}

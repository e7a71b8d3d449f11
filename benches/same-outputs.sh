#!/usr/bin/env bash
# Checks that two fairsim builds give the same results: a speed change to the engine must
# keep every scheduler decision, counter and trace record as it was.
#
#   bash benches/same-outputs.sh OLD_BINARY NEW_BINARY
#
# Runs nine scenarios that cover the engine's paths (seed 000's nanosleep stress with and
# without ILB_FAST, schbench, hackbench, rt-app with schedutil on rk3399, LEGACY_LB on tc2,
# netperf, util_est on a cpuset partition) with noise on, and compares their summaries,
# JSON results, schedstat files and ftrace-text traces (SAME_OUTPUTS_DIFF_LINES=N shows N
# lines of a difference, 40 by default). The only things allowed to differ are the count
# of events processed, which changes when the queue stops carrying events that were never
# going to do anything, and the JSON's features string by features that are off (a new
# feature, off by default, changes no decision); benches/same_outputs_normalize.py says
# how.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

outputs() {
  local bin=$1 out=$2
  mkdir -p "$out"
  run() {
    local name=$1
    shift
    "$bin" run "$@" --json "$out/$name.json" --schedstat "$out/$name.schedstat" \
      --trace-text "$out/$name.trace" >"$out/$name.txt" 2>/dev/null
  }
  run ns --topology spr-2s56c2t --workload nanosleep:tasks=224,sleep=1us \
    --idle-states spr,no-C6 --duration 120ms --warmup 20ms --seed 3 --trace-window 100ms..101ms
  run nsilb --topology spr-2s56c2t --workload nanosleep:tasks=224,sleep=1us \
    --features ILB_SNAPSHOT,ILB_FAST --ilb-sd-share --duration 60ms --warmup 20ms --seed 4 \
    --trace-window 50ms..51ms
  run sch --topology 2s24c2t --workload schbench:m=6,t=24,c=30ms,s=30ms --duration 400ms \
    --seed 5 --trace-window 200ms..210ms
  run hb --topology spr-2s56c2t --workload hackbench:g=4,l=300,f=28 --seed 6 \
    --trace-window 10ms..12ms
  run rt --topology rk3399 --workload rtapp:experiments/seed-003/rampup.json --duration 3s \
    --seed 42 --trace-window 400ms..500ms
  run rk --topology rk3399 --workload schbench:m=2,t=2,c=10ms,s=20ms --duration 400ms \
    --seed 7 --trace-window 100ms..120ms
  run tc2 --topology tc2 --features LEGACY_LB,LEGACY_SIS --idle-states WFI:1us:1us \
    --launch-cpu random --workload hackbench:l=50 --seed 8 --trace-window 0ms..5ms
  run np --topology 2s24c2t --workload netperf:t=TCP_RR,instances=8 --duration 100ms \
    --seed 9 --trace-window 50ms..51ms
  run ue --topology e5-2690v2 --cpuset 0-19 --util-est legacy-nofastup \
    --workload hackbench:g=2,l=200,pipe,T,cpus=0-19 --seed 10 --trace-window 0ms..3ms
  # The events count is the engine's, not the kernel's: drop it before comparing.
  sed -i '/events processed/d' "$out"/*.txt
  # The JSON drops it too, and its features string keeps only the features that are on
  # (benches/same_outputs_normalize.py says why).
  python3 benches/same_outputs_normalize.py "$out"/*.json
}

outputs "$old" "$work/old" &
outputs "$new" "$work/new"
wait
if diff -r "$work/old" "$work/new" >"$work/diff"; then
  echo "same outputs: $(ls "$work/new" | wc -l) files from 9 scenarios"
else
  head -${SAME_OUTPUTS_DIFF_LINES:-40} "$work/diff"
  echo "outputs differ" >&2
  exit 1
fi

#!/usr/bin/env bash
# How fast a run could go if the engine cost nothing: the instructions the ported kernel
# itself executes per emulated second, in steady state, and the speed that caps.
#
#   bash benches/kernel-bound.sh [FAIRSIM_BINARY] [-- RUN OPTIONS...]
#
# Without options it measures seed 000's scenario (experiments/seed-000/nanosleep.toml,
# noise off, as benches/engine.rs runs it). Needs valgrind (callgrind) and a release build.
#
# The script runs the scenario under callgrind twice, for 100 ms and for 200 ms of emulated
# time with no warm-up, and takes the difference, so that the launch cancels out. Each
# instruction is attributed to the source file it comes from after inlining: the crates
# `balance`, `pelt`, `topology` and `cpuidle` are the ported kernel, `engine` and `cli` are
# fairsim's own, and standard-library code counts for the crate of the function it was
# inlined into (a trait method's `<fairsim_balance::... as ...>` included). Standard-library
# code that the kernel crates' functions inline into engine functions counts as the
# engine's, so the kernel's figure is a lower bound.
#
# It then runs the 200 ms case natively, to get this host's instructions per second for
# this very code, and prints the speed at which the kernel's instructions alone would take
# all of a wall second.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/fairsim
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  bin=$1
  shift
fi
if [ "${1:-}" = "--" ]; then
  shift
fi
if [ $# -eq 0 ]; then
  set -- experiments/seed-000/nanosleep.toml --noise off --seed 1
fi
command -v valgrind >/dev/null || {
  echo "kernel-bound.sh: valgrind is not installed (apt-get install valgrind)" >&2
  exit 2
}
[ -x "$bin" ] || {
  echo "kernel-bound.sh: $bin is not an executable fairsim (cargo build --release)" >&2
  exit 2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Sums callgrind's exclusive counts into kernel, engine and other.
split() {
  callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
    grep -E '^ *[0-9,]+ \(' | sed 's/ ([^)]*%)  */|/' |
    awk -F'|' '
      { n = $1; gsub(",", "", n); f = $2 }
      f ~ /PROGRAM TOTALS/ { total += n; next }
      f ~ /crates\/(balance|pelt|topology|cpuidle)\// { kernel += n; next }
      f ~ /crates\/(engine|cli)\// { engine += n; next }
      f ~ /:<?fairsim_(balance|pelt|topology|cpuidle)::/ { kernel += n; next }
      f ~ /:<?fairsim(_engine)?::/ { engine += n; next }
      { other += n }
      END { printf "%.0f %.0f %.0f %.0f\n", total, kernel, engine, other }'
}

pids=()
for d in 100 200; do
  valgrind --tool=callgrind --error-exitcode=0 --callgrind-out-file="$work/cg.$d" \
    "$bin" run "$@" --duration "${d}ms" --warmup 0s >"$work/out.$d" 2>&1 &
  pids+=($!)
done
for i in 0 1; do
  if ! wait "${pids[$i]}"; then
    echo "kernel-bound.sh: the run failed: $(grep -m1 'error' "$work/out.$((100 * (i + 1)))")" >&2
    exit 2
  fi
done
start=$(date +%s.%N)
"$bin" run "$@" --duration 200ms --warmup 0s >/dev/null
wall=$(echo "$(date +%s.%N) - $start" | bc -l)

read -r t1 k1 e1 o1 < <(split "$work/cg.100")
read -r t2 k2 e2 o2 < <(split "$work/cg.200")
awk -v t1="$t1" -v k1="$k1" -v e1="$e1" -v o1="$o1" \
  -v t2="$t2" -v k2="$k2" -v e2="$e2" -v o2="$o2" -v wall="$wall" '
  BEGIN {
    t = (t2 - t1) * 10; k = (k2 - k1) * 10; e = (e2 - e1) * 10; o = (o2 - o1) * 10
    rate = t2 / wall
    printf "per emulated second, steady state (200 ms run minus 100 ms run, x10):\n"
    printf "  all instructions    %8.2f G\n", t / 1e9
    printf "  ported kernel       %8.2f G  (%.0f%%; a lower bound)\n", k / 1e9, 100 * k / t
    printf "  engine and CLI      %8.2f G  (%.0f%%)\n", e / 1e9, 100 * e / t
    printf "  other (libc, ...)   %8.2f G  (%.0f%%)\n", o / 1e9, 100 * o / t
    printf "this host: %.2f G instructions per wall second on this run (200 ms in %.2f s)\n", rate / 1e9, wall
    printf "  today:                          %.3f emulated s per wall s\n", rate / t
    printf "  with an engine that cost nothing: %.3f emulated s per wall s at most\n", rate / k
    printf "  2 emulated s per wall s needs the kernel alone to run %.1f G instructions per wall second\n", 2 * k / 1e9
  }'

#!/usr/bin/env bash
# How fast a run could go if the engine cost nothing: the instructions the ported kernel
# itself executes per emulated second and per event, in steady state, and the speed that caps.
#
#   bash benches/kernel-bound.sh [--bin FAIRSIM] [--keep DIR] [--durations A,B | --loops A,B] [-- RUN OPTIONS...]
#   bash benches/kernel-bound.sh [--bin FAIRSIM] [--keep DIR] --audit
#   bash benches/kernel-bound.sh --crates
#   bash benches/kernel-bound.sh --help
#
# Without options it measures seed 000's scenario (experiments/seed-000/nanosleep.toml,
# noise off, as benches/engine.rs runs it) between 100 ms and 200 ms of emulated time.
# FAIRSIM defaults to target/release/fairsim (or $CARGO_TARGET_DIR/release/fairsim); a
# first argument that is not an option is taken as FAIRSIM too, as before. Needs valgrind
# (callgrind), python3 and a release build.
#
# Every run is measured at two points, under callgrind, and the script takes the
# difference, so that the launch (building the machine, forking the tasks) cancels out:
#   --durations A,B  a run bounded by time: RUN OPTIONS plus `--duration A` and
#                    `--duration B` (default 100ms,200ms).
#   --loops A,B      a run bounded by its own work, such as hackbench: RUN OPTIONS with
#                    every `{L}` replaced by A, then by B, e.g.
#                      --loops 200,1000 -- --topology spr-2s56c2t \
#                        --workload 'hackbench:g=4,l={L},f=28,s=100'
# Both add `--warmup 0s`, so that the JSON's `elapsed_ns` is the whole emulated time. The
# emulated time and the events of each point come from a native run of it with `--json`
# (`elapsed_ns`, `scheduler.events`; the same run gives the same events under callgrind),
# so RUN OPTIONS must not hold `--json` themselves. Instructions per emulated second are the
# difference of instructions over the difference of emulated time, and instructions per
# event the same difference over the difference of events.
#
# Each instruction is attributed to the source file it comes from after inlining: a file
# under `crates/D/` where D is one of `kernel_crates` below is the ported kernel, any other
# `crates/D/` is fairsim's engine (engine, workloads, output, cli, plot, and whatever is split from them: the
# cost model and the charging of kernel time live in the engine crate, and the functions
# in `engine_functions` below count as the engine's wherever their code comes from). Code
# from outside the workspace (the standard library, dependencies) counts for the crate of
# the function it was inlined into, a trait method's `<fairsim_balance::... as ...>` included. What is in
# no fairsim function at all (libc's memcpy, the allocator, standard-library functions that
# were not inlined) counts as the engine's too, and the output says how much of it there
# is. Standard-library code that the kernel crates' functions inline into engine functions
# counts as the engine's, so the kernel's figure is a lower bound.
#
# It then runs the larger point natively three times, under /usr/bin/time where there is
# one, and takes the fastest run for this host's instructions per wall second on this very
# code, and the largest peak resident memory of the three; it prints the speed at which the kernel's instructions alone would take all of a wall
# second: the kernel-only cap. Today's speed is that cap times the kernel's share.
#
# It then measures the floor under any engine on this event queue: a loop that does
# nothing but pop an event, drop it if stale, count it and push its successor
# (crates/des/examples/queue_floor), with one event pending per CPU of the run and gaps
# that give the run's events per emulated second, under cachegrind at 1 M and 3 M events.
# An instruction target per emulated second over the run's events per emulated second is
# a budget per event; what the floor and the ported kernel leave of it is what all of the
# engine's own work per event may cost. The floor is built with cargo when it is missing.
#
# --keep DIR keeps the callgrind profiles there (callgrind.N.A and callgrind.N.B, N counting
# the runs measured), for callgrind_annotate or kcachegrind to say where the instructions go.
# --audit measures the three runs of docs/speed.md's table (seed 000's scenario; hackbench
# g=4 f=28 s=100 on spr-2s56c2t between 200 and 1000 loops; and seed 000's whole hackbench,
# l=200000, between 100 ms and 200 ms of emulated time) and prints the table
# as Markdown, with the commit, the date and the host. It takes several minutes.
# --crates prints which crate directories count as the kernel and which as the engine, and
# fails when a directory under crates/ is in neither list or a listed one is gone, so that a
# crate split or renamed cannot move the kernel's instructions to the engine unnoticed
# (.ci/run runs it; it needs nothing but bash).
set -euo pipefail
cd "$(dirname "$0")/.."

# The crates that port kernel code, by directory under crates/. A crate split from one of
# them belongs here; a crate of fairsim's own belongs in engine_crates. Both lists are
# checked against crates/ on every run and by `--crates`.
kernel_crates=(topology pelt balance cpuidle)
engine_crates=(engine workloads output cli plot des trace race python)
# Functions of fairsim's cost model and charging, by the last segment of their name: every
# instruction compiled into them counts as the engine's, even where its source lies in a
# kernel crate (charge_sched_work inlines the balance crate's `Sched::fold_work` and
# `clear_work`, which read and reset the work counters in place); one that a
# kernel crate holds counts as the engine's too wherever it stays a function of its own.
# The counters that kernel functions bump for the cost model are inlined into those
# functions and stay the kernel's: a few instructions per call.
engine_functions=(charge_parts charge_stretch charge_sched_work charge_migration take_work fold_work clear_work take_work_locks recycle_work_locks has_work)

usage() {
  # The header comment above is the help text.
  sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed -E 's/^# ?//'
}

die() {
  echo "kernel-bound.sh: $*" >&2
  exit 2
}

# Checks both crate lists against the directories under crates/ and prints them.
check_crates() {
  local d name unknown=() missing=()
  for d in crates/*/; do
    name=$(basename "$d")
    [ -f "$d/Cargo.toml" ] || continue
    if [[ " ${kernel_crates[*]} ${engine_crates[*]} " != *" $name "* ]]; then
      unknown+=("$name")
    fi
  done
  for name in "${kernel_crates[@]}" "${engine_crates[@]}"; do
    [ -f "crates/$name/Cargo.toml" ] || missing+=("$name")
  done
  echo "kernel crates: ${kernel_crates[*]/#/crates/}"
  echo "engine crates: ${engine_crates[*]/#/crates/} (and code outside any fairsim function)"
  echo "engine functions wherever their code comes from: ${engine_functions[*]}"
  if [ ${#unknown[@]} -gt 0 ] || [ ${#missing[@]} -gt 0 ]; then
    [ ${#unknown[@]} -eq 0 ] || echo "kernel-bound.sh: crates/${unknown[*]} in neither list; add each to kernel_crates (it ports kernel code) or engine_crates" >&2
    [ ${#missing[@]} -eq 0 ] || echo "kernel-bound.sh: crates/${missing[*]} listed but gone; update kernel_crates or engine_crates" >&2
    return 2
  fi
}

# The Rust names of the kernel crates (`fairsim-balance` -> `fairsim_balance`), joined by
# `|` for a regular expression: a function's name says which crate it belongs to.
kernel_rust_names() {
  local d out=()
  for d in "${kernel_crates[@]}"; do
    out+=("$(sed -nE 's/^name *= *"([^"]+)".*/\1/p' "crates/$d/Cargo.toml" | head -1 | tr - _)")
  done
  local IFS='|'
  echo "${out[*]}"
}

# Sums callgrind's exclusive counts of one profile into: all instructions, the kernel's,
# fairsim's own engine functions', and those in no fairsim function (libc, allocator,
# standard-library functions not inlined). callgrind_annotate prints one line per source
# file and function, `COUNT (PCT)  FILE:FUNCTION [OBJECT]`, the file being where the
# instructions' source lies after inlining, the function the one they were compiled into.
split() {
  local kdirs kfns efns
  kdirs=$(
    IFS='|'
    echo "${kernel_crates[*]}"
  )
  efns=$(
    IFS='|'
    echo "${engine_functions[*]}"
  )
  kfns=$(kernel_rust_names)
  callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
    grep -E '^ *[0-9,]+ \(' | sed 's/ ([^)]*%)  */|/' |
    awk -F'|' -v kdirs="$kdirs" -v kfns="$kfns" -v efns="$efns" '
      BEGIN {
        kdir = "(^|/)crates/(" kdirs ")/"
        anydir = "(^|/)crates/[^/]+/"
        kfn = ":<?(" kfns ")::"
        anyfn = ":<?fairsim(_[a-z0-9_]+)?::"
        efn = "::(" efns ")$"
      }
      { n = $1; gsub(",", "", n); f = $2; sub(/ \[[^]]*\]$/, "", f) }
      f ~ /PROGRAM TOTALS/ { total += n; next }
      f ~ efn { engine += n; next }
      # The file decides where it is a workspace crate; the file is what precedes the
      # first colon, and a path holds none.
      { file = f; sub(/:.*/, "", file) }
      file ~ kdir { kernel += n; next }
      file ~ anydir { engine += n; next }
      # Otherwise the function decides, by its first path segment.
      f ~ kfn { kernel += n; next }
      f ~ anyfn { engine += n; next }
      { other += n }
      END { printf "%.0f %.0f %.0f %.0f\n", total, kernel, engine, other }'
}

# Prints a JSON field of a run's --json file: $1 the file, $2 a Python subscript.
json_field() {
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval("d" + sys.argv[2]))' "$1" "$2"
}

bin=${CARGO_TARGET_DIR:-target}/release/fairsim
mode=durations
points=100ms,200ms
audit=0
keep=
runs=0
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
  bin=$1
  shift
fi
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --durations) mode=durations; points=$2; shift 2 ;;
    --loops) mode=loops; points=$2; shift 2 ;;
    --audit) audit=1; shift ;;
    --keep) keep=$2; shift 2 ;;
    --crates) check_crates; exit $? ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1'; allowed: --bin, --durations, --loops, --keep, --audit, --crates, --help, then -- RUN OPTIONS" ;;
  esac
done
run_opts=("$@")

command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"
command -v python3 >/dev/null || die "python3 is needed to read the runs' JSON"
[ -x "$bin" ] || die "$bin is not an executable fairsim (cargo build --release)"
check_crates >/dev/null || exit 2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The options of one point: $1 the point (a duration or a loop count), then RUN OPTIONS.
# Sets the array `point_opts`.
point_args() {
  local p=$1 a
  shift
  point_opts=()
  if [ "$mode" = loops ]; then
    for a in "$@"; do
      point_opts+=("${a//\{L\}/$p}")
    done
    point_opts+=(--warmup 0s)
  else
    point_opts=("$@" --duration "$p" --warmup 0s)
  fi
}

# The floor's instructions per event for $1 pending events at $2 ns mean gap: the
# difference of two runs of queue_floor under cachegrind, over the difference of events.
floor_per_event() {
  local fbin=${CARGO_TARGET_DIR:-target}/release/examples/queue_floor
  if [ ! -x "$fbin" ]; then
    cargo build --release -q -p fairsim-des --example queue_floor >&2 ||
      die "could not build the floor (cargo build --release -p fairsim-des --example queue_floor)"
  fi
  local n a b
  for n in 1000000 3000000; do
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      "$fbin" "$n" "$1" "$2" 2>"$work/floor.$n" >/dev/null || die "the floor failed: $(tail -1 "$work/floor.$n")"
  done
  a=$(sed -nE 's/.*I +refs: +([0-9,]+).*/\1/p' "$work/floor.1000000" | tr -d ,)
  b=$(sed -nE 's/.*I +refs: +([0-9,]+).*/\1/p' "$work/floor.3000000" | tr -d ,)
  [ -n "$a" ] && [ -n "$b" ] || die "cachegrind printed no instruction count for the floor"
  echo $(((b - a) / 2000000))
}

# Measures one run: $1 a label, then RUN OPTIONS; `mode` and `points` say how. Prints the
# report and leaves the figures in `row` for --audit's table.
measure() {
  local label=$1
  shift
  local pa pb
  IFS=, read -r pa pb <<<"$points"
  [ -n "$pa" ] && [ -n "$pb" ] || die "--$mode wants two points, A,B"
  if [ "$mode" = loops ]; then
    [[ " $* " == *"{L}"* ]] || die "--loops needs RUN OPTIONS with {L} where the loop count goes"
  fi
  [[ " $* " != *" --json "* ]] || die "RUN OPTIONS must not hold --json; the script adds its own"

  # Both points under callgrind at once: they are independent, and two cores halve the wait.
  local p pids=() i=0
  for p in "$pa" "$pb"; do
    point_args "$p" "$@"
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.$i" \
      "$bin" run "${point_opts[@]}" >"$work/out.$i" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  for i in 0 1; do
    wait "${pids[$i]}" || die "the run failed under callgrind: $(grep -m1 -i 'error' "$work/out.$i" || tail -1 "$work/out.$i")"
  done

  # Natively: each point with --json for its emulated time and its events, then the larger
  # point alone for the wall time and the peak memory.
  i=0
  for p in "$pa" "$pb"; do
    point_args "$p" "$@"
    "$bin" run "${point_opts[@]}" --json "$work/run.$i.json" >/dev/null 2>&1 ||
      die "the run failed: $bin run ${point_opts[*]}"
    i=$((i + 1))
  done
  local ta tb na nb wall rss=0
  ta=$(json_field "$work/run.0.json" '["elapsed_ns"]')
  tb=$(json_field "$work/run.1.json" '["elapsed_ns"]')
  na=$(json_field "$work/run.0.json" '["scheduler"]["events"]')
  nb=$(json_field "$work/run.1.json" '["scheduler"]["events"]')
  # The best of three runs: on a shared machine one run can take twice as long as the next,
  # and the fastest is the nearest to what the code costs. GNU time gives the peak resident
  # memory; the wall time comes from the clock around it, since time's own figure has only
  # two decimals.
  point_args "$pb" "$@"
  local start w timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%M' -o "$work/rss")
  wall=
  for i in 1 2 3; do
    start=$(date +%s.%N)
    "${timer[@]}" "$bin" run "${point_opts[@]}" >/dev/null 2>&1
    w=$(echo "$(date +%s.%N) - $start" | bc -l)
    if [ -z "$wall" ] || [ "$(echo "$w < $wall" | bc -l)" = 1 ]; then
      wall=$w
    fi
    if [ -f "$work/rss" ] && [ "$(tail -1 "$work/rss")" -gt "$rss" ]; then
      rss=$(tail -1 "$work/rss")
    fi
  done

  runs=$((runs + 1))
  if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp "$work/cg.0" "$keep/callgrind.$runs.$pa"
    cp "$work/cg.1" "$keep/callgrind.$runs.$pb"
  fi
  local t1 k1 e1 o1 t2 k2 e2 o2
  read -r t1 k1 e1 o1 < <(split "$work/cg.0")
  read -r t2 k2 e2 o2 < <(split "$work/cg.1")
  row=$(awk -v t1="$t1" -v k1="$k1" -v o1="$o1" -v t2="$t2" -v k2="$k2" -v o2="$o2" \
    -v ta="$ta" -v tb="$tb" -v na="$na" -v nb="$nb" -v wall="$wall" -v rss="$rss" '
    BEGIN {
      dt = (tb - ta) / 1e9; dn = nb - na
      if (dt <= 0 || dn <= 0) { print "no difference between the two points"; exit 1 }
      t = (t2 - t1) / dt; k = (k2 - k1) / dt; o = (o2 - o1) / dt; e = t - k
      rate = t2 / wall
      # One line of fields for the table, then the report.
      printf "%.2f|%.0f|%.0f|%.0f|%.1f|%.1f|%.2f|%.2f|%.3f|%.3f|%.1f|%.0f\n",
        t / 1e9, t * dt / dn, k * dt / dn, e * dt / dn, 100 * k / t, 100 * e / t,
        dn / dt / 1e6, rate / 1e9, rate / t, rate / k, 100 * k / t, rss / 1024
    }') || die "$row"
  # The floor with this run's shape: one pending event per CPU, gaps that give its events
  # per emulated second.
  local cpus gap floor
  cpus=$(json_field "$work/run.1.json" '["cpus"].__len__()')
  gap=$(awk -v c="$cpus" -v ta="$ta" -v tb="$tb" -v na="$na" -v nb="$nb" \
    'BEGIN { g = c * (tb - ta) / (nb - na); printf "%.0f", g < 1 ? 1 : g }')
  floor=$(floor_per_event "$cpus" "$gap")
  row="$row|$floor|$cpus|$gap"
  local f
  IFS='|' read -r -a f <<<"$row"
  echo "== $label"
  echo "   fairsim run ${*}"
  echo "   points: $pa and $pb ($mode): $(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.1f ms and %.1f ms", a / 1e6, b / 1e6 }') emulated, $na and $nb events"
  echo "   $(check_crates | paste -sd ';' | sed 's/;/; /g')"
  awk -v t="${f[0]}" -v ev="${f[1]}" -v kev="${f[2]}" -v eev="${f[3]}" -v ks="${f[4]}" \
    -v es="${f[5]}" -v evs="${f[6]}" -v rate="${f[7]}" -v today="${f[8]}" -v cap="${f[9]}" \
    -v rss="${f[11]}" -v o1="$o1" -v o2="$o2" -v t1="$t1" -v t2="$t2" -v wall="$wall" \
    -v floor="${f[12]}" -v cpus="${f[13]}" -v gap="${f[14]}" '
    BEGIN {
      printf "steady state, the difference of the two points:\n"
      printf "  events                  %8.2f M per emulated second\n", evs
      printf "  all instructions        %8.2f G per emulated second, %6.0f per event\n", t, ev
      printf "  ported kernel           %8.2f G (%4.1f%%; a lower bound), %6.0f per event\n", t * ks / 100, ks, kev
      printf "  engine                  %8.2f G (%4.1f%%), %6.0f per event\n", t * es / 100, es, eev
      printf "    of it outside fairsim functions (libc, allocator, std): %.1f%% of all\n", 100 * (o2 - o1) / (t2 - t1)
      printf "  the floor: a bare event loop on this queue, %d pending, %d ns mean gap: %d per event;\n", cpus, gap, floor
      printf "    the engine work beyond it: %d per event\n", eev - floor
      printf "this host: %.2f G instructions per wall second (the larger point, %.2f s wall, best of 3)\n", rate, wall
      printf "  today:                            %.3f emulated s per wall s\n", today
      printf "  with an engine that cost nothing: %.3f emulated s per wall s at most (the kernel-only cap)\n", cap
      printf "  today is %.1f%% of the kernel-only cap (kernel instructions / all)\n", ks
      printf "  2 emulated s per wall s needs the kernel alone to run %.1f G instructions per wall second\n", 2 * t * ks / 100
      if (rss > 0) printf "  peak resident memory of the larger point: %.0f MiB\n", rss
    }'
}

if [ "$audit" = 1 ]; then
  [ $# -eq 0 ] || die "--audit takes no RUN OPTIONS: it measures docs/speed.md's three runs"
  rows=()
  mode=durations points=100ms,200ms
  measure "seed 000's scenario, noise off (100 ms and 200 ms)" \
    experiments/seed-000/nanosleep.toml --noise off --seed 1
  rows+=("seed 000's scenario, noise off, 200 ms - 100 ms|$row")
  mode=loops points=200,1000
  measure "hackbench g=4 f=28 s=100, spr-2s56c2t (1000 loops and 200)" \
    --topology spr-2s56c2t --workload 'hackbench:g=4,l={L},f=28,s=100'
  rows+=("hackbench g=4 f=28 s=100, spr-2s56c2t, l=1000 - l=200|$row")
  mode=durations points=100ms,200ms
  measure "seed 000's whole hackbench, g=4 l=200000 f=28 s=100, spr-2s56c2t (100 ms and 200 ms)" \
    --topology spr-2s56c2t --workload 'hackbench:g=4,l=200000,f=28,s=100'
  rows+=("seed 000's hackbench l=200000, spr-2s56c2t, 200 ms - 100 ms|$row")
  echo
  echo "fairsim $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- crates src Cargo.toml Cargo.lock 2>/dev/null || echo ' (modified)'), $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, $(valgrind --version)"
  echo
  echo "| run | instructions per emulated s | per event (kernel/engine) | bare loop per event | ported kernel | engine | events per emulated s | host rate | today | kernel-only cap | peak RSS |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for r in "${rows[@]}"; do
    IFS='|' read -r -a f <<<"$r"
    printf '| %s | %s G | %s (%s/%s) | %s | %s%% | %s%% | %s M | %s G/s | %s emulated s/s | %s emulated s/s | %s MiB |\n' \
      "${f[0]}" "${f[1]}" "${f[2]}" "${f[3]}" "${f[4]}" "${f[13]}" "${f[5]}" "${f[6]}" "${f[7]}" "${f[8]}" \
      "${f[9]}" "${f[10]}" "${f[12]}"
  done
  exit 0
fi

if [ ${#run_opts[@]} -eq 0 ]; then
  [ "$mode" = durations ] || die "--loops needs RUN OPTIONS with {L}"
  run_opts=(experiments/seed-000/nanosleep.toml --noise off --seed 1)
fi
measure "steady state of one run" "${run_opts[@]}"

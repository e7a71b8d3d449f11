#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# collect.sh - run scheduler workloads natively on this machine and store
# their outputs and counters under data/ (overwritten) for fairsim's host
# golden tests.  See README.md.
#
#   bash collect.sh                 # everything (about 4-5 minutes on a quiet machine)
#   bash collect.sh schbench vmcost # only configurations whose name starts so
#
# Environment: PERF (default perf), WORKDIR (default: a new /tmp dir, kept
# at the end for inspection; the perf.data files are deleted after analysis
# unless KEEP_RAW=1), QUIET_TIMEOUT_S (default 60: longest wait for a quiet
# machine before a try).
#
# Needs root (perf sched record -a), gcc, python3, perf.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DATA=$HERE/data
PERF=${PERF:-perf}
export PERF
WORKDIR=${WORKDIR:-$(mktemp -d /tmp/fairsim-host.XXXXXX)}
BIN=$WORKDIR/bin
mkdir -p "$BIN" "$WORKDIR/runs" "$DATA"

ONLY=("$@")

log() { printf '[collect] %s\n' "$*" >&2; }

# ---------------------------------------------------------------- build
# Binary names are the tasks' comm names, which the harness uses to pick the
# workload's tasks out of the perf sched trace.
log "building into $BIN"
# the 2016 schbench as its header says: gcc -Wall -O0 -W schbench.c -o schbench -lpthread
gcc -Wall -O0 -W "$HERE/src/schbench-2016.c" -o "$BIN/schbench" -lpthread
gcc -O2 -Wall -W "$HERE/src/messaging.c" -o "$BIN/messaging" -lpthread
gcc -O2 -Wall -W "$HERE/src/nanosleep.c" -o "$BIN/nano_sleep"
gcc -O2 -Wall -W "$HERE/src/pingpong.c" -o "$BIN/pingpong" -lpthread
gcc -O2 -Wall -W "$HERE/src/netpingpong.c" -o "$BIN/netpingpong"
# tbench and tbench_srv are dbench 4.0's, from Debian's package (with its libpopt), unpacked
# into the work directory rather than installed.
if [ -z "${TBENCH_DIR:-}" ]; then
	TBENCH_DIR=$WORKDIR/dbench
	mkdir -p "$TBENCH_DIR"
	(cd "$TBENCH_DIR" && apt-get download dbench libpopt0 >/dev/null 2>&1 &&
		for d in ./*.deb; do dpkg-deb -x "$d" .; done) || log "tbench: no dbench package, tbench skipped"
fi
if [ -x "$TBENCH_DIR/usr/bin/tbench" ]; then
	cp "$TBENCH_DIR/usr/bin/tbench" "$TBENCH_DIR/usr/bin/tbench_srv" "$BIN/"
	export LD_LIBRARY_PATH="$TBENCH_DIR/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	TBENCH_LOAD=$TBENCH_DIR/usr/share/dbench/client.txt
fi

# ---------------------------------------------------------------- helpers
selected() {
	local name=$1 p
	[ ${#ONLY[@]} -eq 0 ] && return 0
	for p in "${ONLY[@]}"; do
		case $name in "$p"*) return 0 ;; esac
	done
	return 1
}

# run NAME KIND CONFIG_JSON -- COMMAND...
run() {
	local name=$1 kind=$2 config=$3
	shift 3
	[ "$1" = "--" ] && shift
	selected "$name" || return 0
	local keep=()
	[ "${KEEP_RAW:-0}" = 1 ] && keep=(--keep-raw)
	python3 "$HERE/harness.py" run --name "$name" --kind "$kind" \
		--bindir "$BIN" --workdir "$WORKDIR/runs" --data "$DATA" \
		--config "$config" "${keep[@]}" -- "$@"
}

T0=$(date +%s)

if [ ${#ONLY[@]} -eq 0 ]; then
	rm -f "$DATA"/*.json
	python3 "$HERE/harness.py" machine --out "$DATA/machine.json"
fi

# ---------------------------------------------------------------- schbench (2016)
# -m is accepted but ignored by this version: there are always 2 message
# threads, each with -t workers (see README).  Workers = 2*t: 2, 4, 8 on 2 CPUs.
for cs in "30000 30000" "1000 1000"; do
	set -- $cs
	c=$1 s=$2
	for mt in "1 1" "1 2" "2 4"; do
		set -- $mt
		m=$1 t=$2
		run "schbench-m$m-t$t-c$c-s$s" schbench \
			"{\"m\":$m,\"t\":$t,\"c_us\":$c,\"s_us\":$s,\"r_s\":5,\"effective_message_threads\":2,\"effective_workers\":$((2 * t)),\"threads_total\":$((2 * t + 2))}" \
			-- schbench -m "$m" -t "$t" -c "$c" -s "$s" -r 5
	done
done

# ---------------------------------------------------------------- messaging
run messaging-g1-l8000-pipe-process messaging \
	'{"groups":1,"loops":8000,"fds":20,"ipc":"pipe","mode":"process","tasks":40}' \
	-- messaging -g 1 -l 8000 -p
run messaging-g2-l4000-pipe-process messaging \
	'{"groups":2,"loops":4000,"fds":20,"ipc":"pipe","mode":"process","tasks":80}' \
	-- messaging -g 2 -l 4000 -p

# ---------------------------------------------------------------- nano_sleep
# n copies of `nano_sleep 1000` for 3 s each (-P n forks them), recording
# every iteration's actual sleep length (-r).
for n in 1 2 4; do
	run "nanosleep-n$n-ns1000" nanosleep \
		"{\"instances\":$n,\"ns\":1000,\"seconds\":3,\"timer_slack_ns\":\"inherited (50000)\",\"record\":true}" \
		-- nano_sleep -r -P "$n" 1000 3
done

# ---------------------------------------------------------------- pingpong
# K independent pairs, each running for 1 s (-d: all pairs stay busy for the
# whole run, so the rates are steady-state ones)
for k in 1 2 3; do
	run "pingpong-k$k-d1" pingpong "{\"pairs\":$k,\"seconds\":1,\"mode\":\"process\",\"pinning\":\"none\"}" \
		-- pingpong -d 1 -k "$k"
done

# ---------------------------------------------------------------- VM costs
# One nano_sleep(1000) loop pinned to CPU 0 (otherwise idle; CPU 0 because only its idle-context tracepoints are visible, see README): mean iteration
# time with the default 50 us timer slack and with PR_SET_TIMERSLACK 1 ns.
run vmcost-nanosleep-ns1000-slack50000-cpu0 nanosleep \
	'{"instances":1,"ns":1000,"seconds":3,"timer_slack_ns":50000,"cpu":0,"record":true}' \
	-- nano_sleep -r -S 50000 -c 0 1000 3
run vmcost-nanosleep-ns1000-slack1-cpu0 nanosleep \
	'{"instances":1,"ns":1000,"seconds":3,"timer_slack_ns":1,"cpu":0,"record":true}' \
	-- nano_sleep -r -S 1 -c 0 1000 3
# One ping-pong pair with both tasks on CPU 0 vs one task on each CPU.
run vmcost-pingpong-cpus0-0 pingpong '{"pairs":1,"loops":300000,"mode":"process","pinning":"0,0"}' \
	-- pingpong -l 300000 -C 0,0
run vmcost-pingpong-cpus0-1 pingpong '{"pairs":1,"loops":40000,"mode":"process","pinning":"0,1"}' \
	-- pingpong -l 40000 -C 0,1

# ---------------------------------------------------------------- loopback network
# A TCP and a UDP ping-pong (netperf's RR) on one CPU, across CPUs, and with large
# messages; UDP streams (netperf's UDP_STREAM) with small and large datagrams.
for p in tcp udp; do
	run "net-$p-rr-s1-cpus0-0" netpingpong "{\"proto\":\"$p\",\"size\":1,\"loops\":100000,\"pinning\":\"0,0\"}" \
		-- netpingpong -p "$p" -l 100000 -C 0,0
	run "net-$p-rr-s1-cpus0-1" netpingpong "{\"proto\":\"$p\",\"size\":1,\"loops\":20000,\"pinning\":\"0,1\"}" \
		-- netpingpong -p "$p" -l 20000 -C 0,1
	run "net-$p-rr-s60000-cpus0-0" netpingpong "{\"proto\":\"$p\",\"size\":60000,\"loops\":30000,\"pinning\":\"0,0\"}" \
		-- netpingpong -p "$p" -s 60000 -l 30000 -C 0,0
done
for m in 64 16384; do
	run "net-udp-stream-m$m-d1" netpingpong "{\"proto\":\"udp\",\"stream\":$m,\"seconds\":1,\"pinning\":\"none\"}" \
		-- netpingpong -p udp -m "$m" -d 1
done
# Where the stack's time goes (cpu-clock samples: this guest has no hardware events), the
# basis of the cost table's tcp_*/udp_* split: perf report --children lines kept as text.
if selected netprofile; then
	for p in tcp udp; do
		"$PERF" record -q -e cpu-clock -F 20000 -g -o "$WORKDIR/netprofile-$p.data" -- \
			"$BIN/netpingpong" -p "$p" -l 150000 -C 0,0 >/dev/null 2>&1
		"$PERF" report -i "$WORKDIR/netprofile-$p.data" --children --stdio -g none \
			--percent-limit 0.3 2>/dev/null | grep -v '^#' | grep -v '^$' >"$DATA/netprofile-$p.txt"
		[ "${KEEP_RAW:-0}" = 1 ] || rm -f "$WORKDIR/netprofile-$p.data"
	done
fi
if [ -n "${TBENCH_LOAD:-}" ]; then
	for c in 2 4; do
		run "tbench-c$c-t5" tbench "{\"clients\":$c,\"seconds\":5}" \
			-- sh -c "tbench_srv >/dev/null & s=\$!; sleep 0.3; tbench -c $TBENCH_LOAD -t 5 $c 127.0.0.1; r=\$?; kill \$s; wait \$s; exit \$r"
	done
fi

log "done in $(( $(date +%s) - T0 )) s; work files in $WORKDIR"
python3 "$HERE/summary.py" "$DATA"

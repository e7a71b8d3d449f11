#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host validation harness for fairsim: runs one workload configuration
natively, twice (under `perf stat` and under `perf sched record`), and writes
one JSON file; or describes the machine.  Driven by collect.sh; see README.md.

    harness.py machine --out data/machine.json
    harness.py run --name NAME --kind KIND --bindir DIR --workdir DIR \
                   --data DIR [--sched-args ...] -- PROGRAM ARGS...

Only the standard library is used.
"""

import argparse
import gzip
import json
import math
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import time

SCHEMA = "fairsim-host-validation/1"
PERF = os.environ.get("PERF", "perf")
USER_HZ = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count()
FOREIGN_LIMIT = 0.05          # share of NCPU x wall
MAX_TRIES = 5
QUIET_WINDOW_S = 2.0          # "quiet for 2 s" before a retry
PRECHECK_WINDOW_S = 0.5       # quick look before the first try
QUIET_TIMEOUT_S = float(os.environ.get("QUIET_TIMEOUT_S", "60"))
STAT_EVENTS = "context-switches,cpu-migrations,task-clock,duration_time"

# the comm of every workload's tasks (binaries are built under these names)
COMMS = {
    "schbench": {"schbench"},
    "messaging": {"messaging"},
    "nanosleep": {"nano_sleep"},
    "pingpong": {"pingpong"},
    "netpingpong": {"netpingpong"},
    "tbench": {"tbench", "tbench_srv"},
}


def log(msg):
    print(f"[harness] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# machine busy time
#
# The CPU time of all tasks on the machine is the root cpuacct cgroup's
# cpuacct.usage (cgroup v1, ns, exact sum_exec_runtime of every task, exited
# ones included).  /proc/stat's busy fields are tick-sampled and badly biased
# for workloads that sleep for microseconds (e.g. nano_sleep 1000: 0.07 s
# busy for 0.54 s of task CPU time), and the idle fields count the idle-context
# interrupt and wakeup work that such workloads cause; see README.

CPUACCT = "/sys/fs/cgroup/cpuacct/cpuacct.usage"


def machine_task_cpu_s():
    """Seconds of CPU time used by all tasks since boot."""
    try:
        with open(CPUACCT) as f:
            return int(f.read()) / 1e9
    except OSError:
        st = read_proc_stat()
        return st["busy"]


def read_proc_stat():
    """Seconds of busy / idle / steal time summed over all CPUs (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (10 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    # guest time is already part of user time
    return {
        "busy": (user + nice + system + irq + softirq) / USER_HZ,
        "idle": (idle + iowait) / USER_HZ,
        "steal": steal / USER_HZ,
    }


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().strip()


def wait_quiet(window, timeout=QUIET_TIMEOUT_S, limit=FOREIGN_LIMIT):
    """Poll the machine's task CPU time every 0.25 s until, over the last
    `window` seconds, it is below `limit` of NCPU x window.  Returns
    (seconds waited, reached)."""
    t_start = time.monotonic()
    hist = [(t_start, machine_task_cpu_s())]
    while True:
        time.sleep(0.25)
        now = time.monotonic()
        hist.append((now, machine_task_cpu_s()))
        # drop samples older than the window (keep one at/before its start)
        while len(hist) > 2 and hist[1][0] <= now - window:
            hist.pop(0)
        span = now - hist[0][0]
        if span >= window - 1e-3:
            busy = hist[-1][1] - hist[0][1]
            if busy <= limit * NCPU * span:
                return now - t_start, True
        if now - t_start > timeout:
            return now - t_start, False


# --------------------------------------------------------------------------
# statistics

def percentile(sorted_vals, p):
    """Nearest-rank percentile of an ascending list."""
    n = len(sorted_vals)
    if n == 0:
        return None
    rank = max(1, min(n, math.ceil(p / 100.0 * n)))
    return sorted_vals[rank - 1]


def summarize(vals_us, ndigits=3):
    vals = sorted(vals_us)
    if not vals:
        return {"samples": 0, "p50": None, "p90": None, "p99": None,
                "max": None, "mean": None}
    return {
        "samples": len(vals),
        "p50": round(percentile(vals, 50), ndigits),
        "p90": round(percentile(vals, 90), ndigits),
        "p99": round(percentile(vals, 99), ndigits),
        "max": round(vals[-1], ndigits),
        "mean": round(sum(vals) / len(vals), ndigits),
    }


# --------------------------------------------------------------------------
# tool output parsers

def parse_tool_output(kind, text):
    """Returns (metrics, percentiles_us or None)."""
    m = {}
    pct = None
    if kind == "schbench":
        pct = {}
        for mm in re.finditer(r"^\s*(\*?)(\d+\.\d+)th:\s+(\d+)\s*$", text, re.M):
            pct["p" + mm.group(2).rstrip("0").rstrip(".")] = int(mm.group(3))
        mm = re.search(r"Over=(\d+), min=(\d+), max=(\d+)", text)
        if mm:
            m["over"] = int(mm.group(1))
            m["min_us"] = int(mm.group(2))
            m["max_us"] = int(mm.group(3))
            pct["max"] = int(mm.group(3))
        m["over_50ms_lines"] = len(re.findall(r"^latency=\d+ usec", text, re.M))
        if not pct:
            pct = None
    elif kind == "messaging":
        mm = re.search(r"^Time: ([\d.]+)", text, re.M)
        if mm:
            m["time_s"] = float(mm.group(1))
    elif kind == "pingpong":
        mm = re.search(r"^Total time: ([\d.]+)", text, re.M)
        if mm:
            m["total_time_s"] = float(mm.group(1))
        mm = re.search(r"^usecs/op: ([\d.]+)", text, re.M)
        if mm:
            m["usecs_per_op"] = float(mm.group(1))
        mm = re.search(r"^ops/sec: ([\d.]+)", text, re.M)
        if mm:
            m["ops_per_sec"] = float(mm.group(1))
        pairs = re.findall(r"^pair \d+: ([\d.]+) s (\d+) round trips ([\d.]+) usecs/op", text, re.M)
        if pairs:
            m["pair_seconds"] = [float(x[0]) for x in pairs]
            m["pair_round_trips"] = [int(x[1]) for x in pairs]
            m["pair_usecs_per_op"] = [float(x[2]) for x in pairs]
            m["round_trips_total"] = sum(int(x[1]) for x in pairs)
    elif kind == "netpingpong":
        mm = re.search(r"^usecs/op: ([\d.]+)", text, re.M)
        if mm:
            m["usecs_per_op"] = float(mm.group(1))
        mm = re.search(r"^sent: (\d+) msgs (\d+) bytes  recv: (\d+) msgs (\d+) bytes", text, re.M)
        if mm:
            m["sent_msgs"], m["sent_bytes"] = int(mm.group(1)), int(mm.group(2))
            m["recv_msgs"], m["recv_bytes"] = int(mm.group(3)), int(mm.group(4))
        mm = re.search(r"^send Mbit/s: ([\d.]+)  recv Mbit/s: ([\d.]+)", text, re.M)
        if mm:
            m["send_mbit_per_s"], m["recv_mbit_per_s"] = float(mm.group(1)), float(mm.group(2))
    elif kind == "tbench":
        mm = re.search(r"^Throughput ([\d.e+]+) MB/sec\s+(\d+) clients\s+(\d+) procs\s+max_latency=([\d.]+) ms", text, re.M)
        if mm:
            m["mb_per_s"] = float(mm.group(1))
            m["clients"] = int(mm.group(2))
            m["max_latency_ms"] = float(mm.group(4))
    elif kind == "nanosleep":
        loops, iters = [], []
        for mm in re.finditer(r"loops=(\d+) elapsed_s=([\d.]+) mean_iter_us=([\d.]+)", text):
            loops.append(int(mm.group(1)))
            iters.append(float(mm.group(3)))
        mm = re.search(r"slack_ns=(\d+)", text)
        if mm:
            m["slack_ns"] = int(mm.group(1))
        if loops:
            m["instances"] = len(loops)
            m["loops_total"] = sum(loops)
            m["loops_per_instance"] = loops
            m["mean_iter_us"] = round(sum(iters) / len(iters), 3)
        recs = []
        for mm in re.finditer(r"sleep_us samples=(\d+) mean=([\d.]+) p50=([\d.]+) p90=([\d.]+) "
                              r"p99=([\d.]+) max=([\d.]+) overshoot_p50=(-?[\d.]+) overshoot_p99=(-?[\d.]+)", text):
            recs.append({"samples": int(mm.group(1)), "mean": float(mm.group(2)),
                         "p50": float(mm.group(3)), "p90": float(mm.group(4)),
                         "p99": float(mm.group(5)), "max": float(mm.group(6)),
                         "overshoot_p50": float(mm.group(7)),
                         "overshoot_p99": float(mm.group(8))})
        if recs:
            m["actual_sleep_us"] = recs if len(recs) > 1 else recs[0]
            # one instance: its own figures; several: the mean over the
            # instances of each figure (max: the largest)
            pct = {k: round(sum(r[k] for r in recs) / len(recs), 3)
                   for k in ("p50", "p90", "p99", "mean")}
            pct["max"] = max(r["max"] for r in recs)
            if len(recs) > 1:
                pct["aggregate"] = f"mean over {len(recs)} instances (max: largest)"
    return m, pct


# --------------------------------------------------------------------------
# perf stat run

def parse_perf_stat_csv(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(",")
            if len(parts) < 3:
                continue
            val, unit, ev = parts[0], parts[1], parts[2]
            try:
                num = float(val)
            except ValueError:
                num = None            # <not counted> / <not supported>
            out[ev] = (num, unit)
    return out


def measured_run(perfcmd, bindir):
    """Runs perfcmd in bindir and measures around it: wall time, the CPU time of
    perf and the workload (rusage), every task's CPU time on the machine, /proc/stat
    and the load average before. Raises when the command fails."""
    la0 = loadavg()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s0 = read_proc_stat()
    c0 = machine_task_cpu_s()
    t0 = time.monotonic()
    p = subprocess.run(perfcmd, cwd=bindir, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, PATH=bindir + ":" + os.environ["PATH"]))
    t1 = time.monotonic()
    c1 = machine_task_cpu_s()
    s1 = read_proc_stat()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{perfcmd} failed ({p.returncode}):\n{p.stdout}")
    own = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return p, la0, s0, s1, c0, c1, t0, t1, own


def run_stat(cmd, bindir, workdir, tag):
    statfile = os.path.join(workdir, f"{tag}.perfstat.csv")
    perfcmd = [PERF, "stat", "-x,", "-o", statfile, "-e", STAT_EVENTS, "--"] + cmd
    p, la0, s0, s1, c0, c1, t0, t1, own = measured_run(perfcmd, bindir)
    st = parse_perf_stat_csv(statfile)
    cs = st.get("context-switches", (None,))[0]
    mig = st.get("cpu-migrations", (None,))[0]
    tc_ms = st.get("task-clock", (None,))[0]
    dur_ns = st.get("duration_time", (None,))[0]
    wall_outer = t1 - t0
    wall = dur_ns / 1e9 if dur_ns else wall_outer
    busy = c1 - c0
    # foreign = all tasks' CPU time minus that of perf stat and the workload
    # (rusage, i.e. their sum_exec_runtime).  Not minus task-clock: on this
    # host task-clock misses several us per switch from/to idle (README).
    foreign = busy - own
    return {
        "perf_command": " ".join(shlex.quote(x) for x in perfcmd[:-len(cmd)] + ["<command>"]),
        "wall_s": round(wall, 6),
        "wall_outer_s": round(wall_outer, 6),
        "context_switches": int(cs) if cs is not None else None,
        "cpu_migrations": int(mig) if mig is not None else None,
        "task_clock_ms": tc_ms,
        "context_switches_per_s": round(cs / wall, 1) if cs is not None else None,
        "cpu_migrations_per_s": round(mig / wall, 2) if mig is not None else None,
        "cpus_utilized": round(tc_ms / 1e3 / wall, 4) if tc_ms else None,
        "perf_and_workload_cpu_s": round(own, 4),
        "cpus_utilized_rusage": round(own / wall, 4),
        "machine_task_cpu_s": round(busy, 4),
        "foreign_busy_s": round(foreign, 4),
        "foreign_cpu_share": round(foreign / (NCPU * wall_outer), 4),
        "foreign_cpu_share_vs_task_clock": round((busy - (tc_ms or 0) / 1e3) / (NCPU * wall_outer), 4),
        "procstat_busy_s": round(s1["busy"] - s0["busy"], 2),
        "steal_share": round((s1["steal"] - s0["steal"]) / (NCPU * wall_outer), 4),
        "loadavg_before": la0,
        "loadavg_after": loadavg(),
        "output": p.stdout,
    }


def run_plain(cmd, bindir):
    """The workload alone, no perf: its own printed figures, unperturbed."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    c0 = machine_task_cpu_s()
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=bindir, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, PATH=bindir + ":" + os.environ["PATH"]))
    t1 = time.monotonic()
    c1 = machine_task_cpu_s()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({p.returncode}):\n{p.stdout}")
    own = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    wall = t1 - t0
    foreign = (c1 - c0) - own
    return {
        "wall_s": round(wall, 6),
        "workload_cpu_s": round(own, 4),
        "cpus_utilized_rusage": round(own / wall, 4),
        "machine_task_cpu_s": round(c1 - c0, 4),
        "foreign_busy_s": round(foreign, 4),
        "foreign_cpu_share": round(foreign / (NCPU * wall), 4),
        "output": p.stdout,
    }


# --------------------------------------------------------------------------
# perf sched record run

RE_SCRIPT = re.compile(r"^\s*(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:(\w+):\s+(.*)$")
RE_WAKE = re.compile(r"^comm=(.*) pid=(\d+) prio=(-?\d+) target_cpu=(\d+)$")
RE_SWITCH = re.compile(r"^prev_comm=(.*) prev_pid=(\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> "
                       r"next_comm=(.*) next_pid=(\d+) next_prio=(-?\d+)$")
RE_MIGRATE = re.compile(r"^comm=(.*) pid=(\d+) prio=(-?\d+) orig_cpu=(\d+) dest_cpu=(\d+)$")
RE_RUNTIME = re.compile(r"^comm=(.*) pid=(\d+) runtime=(\d+) \[ns\]")


TRACE_CPU = 0   # the CPU whose idle-task tracepoints this kernel does emit (see README)


def analyse_script(data, comms, workdir, tag, kind=None):
    """Wakeup-to-run latency at ns resolution from `perf script`: for every
    sched_switch that switches in a workload task, the time since the first
    sched_waking/sched_wakeup_new of that task after its last switch-out
    (the definition of timehist's "sch delay", see README).

    On this host no tracepoint fires while CPU 1's idle task is current, so
    switch-ins from idle on CPU 1 (and wakeups done from CPU 1's idle/irq
    context) are missing from the trace; such wakeups yield no sample (the
    pending waking is dropped at the task's next visible sched-out).  The
    headline latency uses switch-ins on CPU 0 only, where the trace is
    complete; all visible ones and a per-CPU split are kept too."""
    cmd = [PERF, "script", "-i", data, "--ns", "-F", "tid,pid,cpu,time,event,trace"]
    errpath = os.path.join(workdir, f"{tag}.script.err")
    with open(errpath, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1 << 20)
        pending = {}
        lat_by_cpu = {}
        lat_cpu0_by_tid = {}
        runtime_by_tid = {}
        tids = set()
        counts = {"switch_in": 0, "switch_out_preempted": 0, "switch_out_sleep": 0,
                  "migrations": 0, "wakeups": 0, "events": 0, "unparsed": 0}
        idle_exit = {}        # cpu -> visible idle->task switches
        idle_entry = {}       # cpu -> visible task->idle switches
        runtime_ns = 0
        t_first = t_last = None
        oncpu = {}            # cpu -> (comm, pid, since)
        cat_ns = {"workload": 0, "perf": 0, "idle": 0, "other": 0}
        other_by_comm = {}
        tr_first = tr_last = None
        for line in p.stdout:
            mm = RE_SCRIPT.match(line)
            if not mm:
                if line.strip():
                    counts["unparsed"] += 1
                continue
            counts["events"] += 1
            t = int(mm.group(4)) * 1_000_000_000 + int(mm.group(5).ljust(9, "0")[:9])
            ev, rest = mm.group(6), mm.group(7)
            if tr_first is None:
                tr_first = t
            tr_last = t
            if ev in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
                w = RE_WAKE.match(rest)
                if not w:
                    counts["unparsed"] += 1
                    continue
                pid = int(w.group(2))
                if pid not in pending:
                    pending[pid] = t
                if w.group(1) in comms:
                    counts["wakeups"] += 1
            elif ev == "sched_switch":
                s = RE_SWITCH.match(rest)
                if not s:
                    counts["unparsed"] += 1
                    continue
                prev_comm, prev_pid, prev_state = s.group(1), int(s.group(2)), s.group(4)
                next_comm, next_pid = s.group(5), int(s.group(6))
                cpu = int(mm.group(3))
                if prev_pid == 0:
                    idle_exit[cpu] = idle_exit.get(cpu, 0) + 1
                if next_pid == 0:
                    idle_entry[cpu] = idle_entry.get(cpu, 0) + 1
                cur = oncpu.get(cpu) if cpu == TRACE_CPU else None
                if cur is not None:
                    c_comm, c_pid, since = cur
                    if c_pid == 0:
                        cat = "idle"
                    elif c_comm in comms:
                        cat = "workload"
                    elif c_comm in ("perf", "perf-exec"):
                        cat = "perf"
                    else:
                        cat = "other"
                        other_by_comm[c_comm] = other_by_comm.get(c_comm, 0) + t - since
                    cat_ns[cat] += t - since
                oncpu[cpu] = (next_comm, next_pid, t)
                pending.pop(prev_pid, None)            # sched-out resets, as timehist does
                if prev_comm in comms:
                    if prev_state.startswith("R"):
                        counts["switch_out_preempted"] += 1
                    elif prev_state[:1] not in ("X", "Z"):
                        counts["switch_out_sleep"] += 1
                if next_comm in comms:
                    counts["switch_in"] += 1
                    tids.add(next_pid)
                    if t_first is None:
                        t_first = t
                    t_last = t
                    w0 = pending.pop(next_pid, None)
                    if w0 is not None:
                        lat_by_cpu.setdefault(cpu, []).append((t - w0) / 1e3)
                        if cpu == TRACE_CPU:
                            lat_cpu0_by_tid.setdefault(next_pid, []).append((t - w0) / 1e3)
                else:
                    pending.pop(next_pid, None)
                if prev_comm in comms:
                    t_last = t
            elif ev == "sched_migrate_task":
                s = RE_MIGRATE.match(rest)
                if s and s.group(1) in comms:
                    counts["migrations"] += 1
            elif ev == "sched_stat_runtime":
                s = RE_RUNTIME.match(rest)
                if s and s.group(1) in comms:
                    runtime_ns += int(s.group(3))
                    tid = int(s.group(2))
                    runtime_by_tid[tid] = runtime_by_tid.get(tid, 0) + int(s.group(3))
        p.wait()
    with open(errpath) as f:
        errtxt = f.read()
    lost = re.findall(r"(?i)(.*lost.*)", errtxt)
    span = (t_last - t_first) / 1e9 if t_first is not None and t_last > t_first else None
    trace_span = (tr_last - tr_first) / 1e9 if tr_first is not None else 0
    top_other = sorted(other_by_comm.items(), key=lambda kv: -kv[1])[:5]
    all_lat = [x for v in lat_by_cpu.values() for x in v]
    roles = None
    if kind == "schbench" and runtime_by_tid:
        # workers spin (-c), message threads and main mostly sleep: a thread
        # is a worker if its runtime is at least a quarter of the busiest one's
        top = max(runtime_by_tid.values())
        workers = {t for t, r in runtime_by_tid.items() if r >= top / 4}
        wl = [x for t, v in lat_cpu0_by_tid.items() if t in workers for x in v]
        ol = [x for t, v in lat_cpu0_by_tid.items() if t not in workers for x in v]
        roles = {"workers": summarize(wl), "message_and_main_threads": summarize(ol),
                 "worker_threads": len(workers),
                 "rule": "worker = thread with >= 1/4 of the busiest thread's runtime; CPU 0 switch-ins"}
    return {
        "latency_us": summarize(lat_by_cpu.get(TRACE_CPU, [])),
        "latency_all_visible_us": summarize(all_lat),
        "latency_by_cpu_us": {str(c): summarize(v) for c, v in sorted(lat_by_cpu.items())},
        "latency_by_role_us": roles,
        "latency_coverage": round(len(all_lat) / counts["switch_out_sleep"], 4)
        if counts["switch_out_sleep"] else None,
        "idle_exit_switches_by_cpu": {str(c): n for c, n in sorted(idle_exit.items())},
        "idle_entry_switches_by_cpu": {str(c): n for c, n in sorted(idle_entry.items())},
        "tasks": len(tids),
        "trace_workload_span_s": round(span, 6) if span else None,
        "trace_counts": counts,
        "trace_runtime_ms": round(runtime_ns / 1e6, 3),
        "trace_switch_in_per_s": round(counts["switch_in"] / span, 1) if span else None,
        "trace_migrations_per_s": round(counts["migrations"] / span, 2) if span else None,
        "perf_script_warnings": [x.strip() for x in lost][:10],
        "trace_span_s": round(trace_span, 6),
        "trace_cpu0_time_ms": {k: round(v / 1e6, 3) for k, v in cat_ns.items()},
        "trace_cpu0_foreign_share": round(cat_ns["other"] / 1e9 / trace_span, 4) if trace_span else None,
        "trace_cpu0_foreign_top": [[c, round(v / 1e6, 3)] for c, v in top_other],
    }


RE_TIMEHIST = re.compile(r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.+?)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\S+)\s*$")


def analyse_timehist(data, comms, workdir, tag):
    """The "sch delay" column of `perf sched timehist --state` for rows of
    workload tasks whose previous row (same tid) ended in a sleep state
    (not R), or that are the task's first row (woken by wakeup_new).
    Rows on CPU 1 whose switch-in came from idle are wrong on this host (the
    switch-in is missing, so timehist measures from the previous switch on
    that CPU); the _cpu0 figures use CPU 0 rows only."""
    cmd = [PERF, "sched", "timehist", "-i", data, "--state"]
    out = os.path.join(workdir, f"{tag}.timehist.txt")
    with open(out, "w") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL, check=True)
    last_state = {}
    sch, wait_pre, sch0 = [], [], []
    rows = 0
    with open(out) as f:
        for line in f:
            mm = RE_TIMEHIST.match(line)
            if not mm:
                continue
            task = mm.group(3)
            tm = re.match(r"^(.*)\[(\d+)(?:/(\d+))?\]$", task)
            if not tm or tm.group(1) not in comms:
                continue
            rows += 1
            tid = int(tm.group(2))
            wait_ms, delay_ms, state = float(mm.group(4)), float(mm.group(5)), mm.group(7)
            prev = last_state.get(tid)
            if prev is None or not prev.startswith("R"):
                sch.append(delay_ms * 1e3)
                if int(mm.group(2)) == TRACE_CPU:
                    sch0.append(delay_ms * 1e3)
            else:
                wait_pre.append(wait_ms * 1e3)     # runqueue wait after a preemption
            last_state[tid] = state
    return {
        "latency_timehist_cpu0_us": summarize(sch0, 1),
        "latency_timehist_all_us": summarize(sch, 1),
        "preempted_wait_timehist_us": summarize(wait_pre, 1),
        "timehist_rows": rows,
        "timehist_bytes": os.path.getsize(out),
    }


def run_sched(cmd, bindir, workdir, tag, comms):
    data = os.path.join(workdir, f"{tag}.sched.data")
    _remove(data)
    perfcmd = [PERF, "sched", "record", "-o", data, "--"] + cmd
    p, la0, s0, s1, c0, c1, t0, t1, own = measured_run(perfcmd, bindir)
    wall = t1 - t0
    busy = c1 - c0
    foreign = busy - own
    perf_lines = [l for l in p.stdout.splitlines() if l.startswith("[ perf record:")]
    tool_out = "\n".join(l for l in p.stdout.splitlines() if not l.startswith("[ perf record:"))
    if tool_out:
        tool_out += "\n"
    res = {
        "perf_command": " ".join(shlex.quote(x) for x in perfcmd[:-len(cmd)] + ["<command>"]),
        "wall_outer_s": round(wall, 6),
        "perf_and_workload_cpu_s": round(own, 4),
        "machine_task_cpu_s": round(busy, 4),
        "foreign_busy_s": round(foreign, 4),
        "foreign_cpu_share": round(foreign / (NCPU * wall), 4),
        "steal_share": round((s1["steal"] - s0["steal"]) / (NCPU * wall), 4),
        "loadavg_before": la0,
        "loadavg_after": loadavg(),
        "perf_record_messages": perf_lines,
        "perf_data_bytes": os.path.getsize(data),
        "output": tool_out,
    }
    return res, data


def analyse_sched(data, workdir, tag, comms, kind=None):
    res = analyse_script(data, comms, workdir, tag, kind)
    res.update(analyse_timehist(data, comms, workdir, tag))
    return res


# --------------------------------------------------------------------------

def with_retries(label, fn):
    """Runs fn() until its foreign_cpu_share <= FOREIGN_LIMIT, at most
    MAX_TRIES times; waits for a quiet machine before each try.  Keeps the
    try with the lowest foreign share."""
    best = None
    waits = []
    for k in range(1, MAX_TRIES + 1):
        if k == 1:
            w, ok = wait_quiet(PRECHECK_WINDOW_S, timeout=PRECHECK_WINDOW_S + 0.1)
            if not ok:
                w2, ok = wait_quiet(QUIET_WINDOW_S)
                w += w2
        else:
            w, ok = wait_quiet(QUIET_WINDOW_S)
        waits.append(round(w, 2))
        r = fn(k)
        extra = r[1] if isinstance(r, tuple) else None
        res = r[0] if isinstance(r, tuple) else r
        share = res["foreign_cpu_share"]
        log(f"{label}: try {k}: foreign share {share:.3f}"
            + ("" if ok else " (machine was not quiet before the try)"))
        if best is None or share < best[0]["foreign_cpu_share"]:
            if best is not None and best[1] and best[1] != extra:
                _remove(best[1])
            best = (res, extra, k)
        elif extra and extra != best[1]:
            _remove(extra)
        if share <= FOREIGN_LIMIT:
            break
    res, extra, kept = best
    res["tries"] = k
    res["kept_try"] = kept
    res["quiet_wait_s"] = waits
    res["foreign_limit_exceeded"] = res["foreign_cpu_share"] > FOREIGN_LIMIT
    return res, extra


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def cmd_run(a):
    cmd = a.command
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        sys.exit("no command")
    sched_cmd = shlex.split(a.sched_command) if a.sched_command else cmd
    comms = COMMS[a.kind]
    os.makedirs(a.workdir, exist_ok=True)
    config = json.loads(a.config) if a.config else {}

    plain = None
    if os.environ.get("PLAIN_RUN", "1") != "0":
        log(f"{a.name}: plain: {' '.join(cmd)}")
        plain, _ = with_retries(a.name + " [plain]", lambda k: run_plain(cmd, a.bindir))
        pm, ppct = parse_tool_output(a.kind, plain["output"])
        plain["tool_metrics"] = pm
        if ppct is not None:
            plain["tool_percentiles_us"] = ppct

    log(f"{a.name}: perf stat: {' '.join(cmd)}")
    st, _ = with_retries(a.name + " [stat]",
                         lambda k: run_stat(cmd, a.bindir, a.workdir, a.name))
    metrics, pct = parse_tool_output(a.kind, st["output"])
    st["tool_metrics"] = metrics
    if pct is not None:
        st["tool_percentiles_us"] = pct

    log(f"{a.name}: perf sched record: {' '.join(sched_cmd)}")
    sc, data = with_retries(a.name + " [sched]",
                            lambda k: run_sched(sched_cmd, a.bindir, a.workdir,
                                                      f"{a.name}.try{k}", comms))
    sc.update(analyse_sched(data, a.workdir, a.name, comms, a.kind))
    if not a.keep_raw:
        _remove(data)
    sc["command_line"] = " ".join(sched_cmd)
    m2, pct2 = parse_tool_output(a.kind, sc["output"])
    sc["tool_metrics"] = m2
    if pct2 is not None:
        sc["tool_percentiles_us"] = pct2

    doc = {
        "schema": SCHEMA,
        "name": a.name,
        "workload": a.kind,
        "command_line": " ".join(cmd),
        "config": config,
        "host": {"kernel": platform.release(), "nproc": NCPU},
        "collected_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        # headline figures: from the perf stat run, latency from the sched run
        "wall_s": st["wall_s"],
        "context_switches": st["context_switches"],
        "cpu_migrations": st["cpu_migrations"],
        "task_clock_ms": st["task_clock_ms"],
        "context_switches_per_s": st["context_switches_per_s"],
        "cpu_migrations_per_s": st["cpu_migrations_per_s"],
        "cpus_utilized": st["cpus_utilized"],
        "cpus_utilized_rusage": st["cpus_utilized_rusage"],
        "foreign_cpu_share": st["foreign_cpu_share"],
        "latency_us": sc["latency_us"],
        "latency_source": "perf sched record; perf script --ns: sched_waking/sched_wakeup_new -> "
                          "sched_switch-in of the same workload task (= timehist 'sch delay', ns resolution), "
                          "switch-ins on CPU 0 only (CPU 1 idle-context tracepoints are not emitted on this host)",
    }
    if sc.get("latency_by_role_us"):
        doc["latency_workers_us"] = sc["latency_by_role_us"]["workers"]
    # the tool's own figures: from the run without perf when there is one
    src = plain if plain is not None else st
    doc["tool_figures_from"] = "plain_run" if plain is not None else "stat_run"
    doc["tool_metrics"] = src["tool_metrics"]
    if "tool_percentiles_us" in src:
        doc["tool_percentiles_us"] = src["tool_percentiles_us"]
    if plain is not None:
        doc["plain_run"] = plain
    doc["stat_run"] = st
    doc["sched_run"] = sc
    out = os.path.join(a.data, a.name + ".json")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    lat = sc["latency_us"]
    log(f"{a.name}: cs/s={st['context_switches_per_s']} mig/s={st['cpu_migrations_per_s']} "
        f"lat p50={lat['p50']} p99={lat['p99']} us (n={lat['samples']}) foreign={st['foreign_cpu_share']}"
        f"/{sc['foreign_cpu_share']}")


# --------------------------------------------------------------------------
# machine description

def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        return None


def _sh(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"<{e}>"


def cmd_machine(a):
    m = {"schema": SCHEMA, "collected_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    m["uname_r"] = platform.release()
    m["uname_v"] = _sh(["uname", "-v"])
    m["uname_m"] = platform.machine()
    m["nproc"] = int(_sh(["nproc"]))
    m["online_cpus"] = _read("/sys/devices/system/cpu/online")
    m["cpuidle"] = {
        "current_driver": _read("/sys/devices/system/cpu/cpuidle/current_driver"),
        "current_governor": _read("/sys/devices/system/cpu/cpuidle/current_governor")
        or _read("/sys/devices/system/cpu/cpuidle/current_governor_ro"),
        "states": {},
    }
    cpudir = "/sys/devices/system/cpu"
    for cpu in sorted(d for d in os.listdir(cpudir) if re.match(r"^cpu\d+$", d)):
        sd = os.path.join(cpudir, cpu, "cpuidle")
        if not os.path.isdir(sd):
            continue
        states = []
        for st in sorted(d for d in os.listdir(sd) if d.startswith("state")):
            e = {"state": st}
            for k in ("name", "desc", "latency", "residency", "disable", "usage", "time"):
                v = _read(os.path.join(sd, st, k))
                if v is not None:
                    e[k] = int(v) if re.match(r"^\d+$", v) else v
            states.append(e)
        m["cpuidle"]["states"][cpu] = states
    m["cpuidle"]["note"] = "latency/residency in us; usage/time (us) are cumulative since boot"
    params = {}
    for mod in ("haltpoll", "cpuidle_haltpoll", "cpuidle"):
        pd = f"/sys/module/{mod}/parameters"
        if os.path.isdir(pd):
            for k in sorted(os.listdir(pd)):
                params[f"{mod}.{k}"] = _read(os.path.join(pd, k))
    m["cpuidle"]["module_parameters"] = params
    topo = {}
    for cpu in sorted((d for d in os.listdir(cpudir) if re.match(r"^cpu\d+$", d)),
                      key=lambda d: int(d[3:])):
        td = os.path.join(cpudir, cpu, "topology")
        if not os.path.isdir(td):
            continue
        e = {}
        for k in ("physical_package_id", "die_id", "cluster_id", "core_id", "thread_siblings_list",
                  "core_siblings_list", "cluster_cpus_list", "die_cpus_list"):
            v = _read(os.path.join(td, k))
            if v is not None:
                e[k] = v
        caches = []
        cd = os.path.join(cpudir, cpu, "cache")
        if os.path.isdir(cd):
            for idx in sorted(d for d in os.listdir(cd) if d.startswith("index")):
                c = {k: _read(os.path.join(cd, idx, k))
                     for k in ("level", "type", "size", "shared_cpu_list")}
                caches.append(c)
        e["caches"] = caches
        cap = _read(os.path.join(cpudir, cpu, "cpu_capacity"))
        if cap is not None:
            e["cpu_capacity"] = cap
        topo[cpu] = e
    m["topology"] = topo
    m["cpufreq"] = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or "<no cpufreq>"
    m["lscpu"] = _sh(["lscpu"])
    try:
        m["lscpu_json"] = {e["field"].rstrip(":"): e["data"]
                           for e in json.loads(_sh(["lscpu", "-J"]))["lscpu"]}
    except (ValueError, KeyError):
        pass
    knobs = {}
    for k in sorted(os.listdir("/proc/sys/kernel")):
        if k.startswith("sched_") or k in ("timer_migration", "numa_balancing"):
            v = _read(f"/proc/sys/kernel/{k}")
            if v is not None:
                knobs[k] = v
    m["proc_sys_kernel_sched"] = knobs
    dbg = {}
    for base in ("/sys/kernel/debug/sched",):
        if os.path.isdir(base):
            for k in sorted(os.listdir(base)):
                p = os.path.join(base, k)
                if os.path.isfile(p):
                    try:
                        with open(p) as f:
                            dbg[k] = f.read().strip()
                    except OSError as e:
                        dbg[k] = f"<unreadable: {e.strerror}>"
    m["debugfs_sched"] = dbg or "<debugfs not mounted or empty>"
    m["timer_slack_ns_default"] = _read("/proc/self/timerslack_ns")
    m["clocksource"] = _read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    m["kernel_cmdline"] = _read("/proc/cmdline")
    m["autogroup_of_harness"] = _read("/proc/self/autogroup")
    m["cgroup_of_harness"] = _read("/proc/self/cgroup")
    dm = _sh(["dmesg"])
    m["dmesg_preempt"] = [l for l in dm.splitlines() if re.search(r"Dynamic Preempt|preempt", l, re.I)][:5]
    cfg = {}
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            for line in f:
                mm = re.match(r"^(CONFIG_(HZ|HZ_\d+|NO_HZ\w*|PREEMPT\w*|SCHED\w*|SCHEDSTATS|FAIR_GROUP_SCHED|"
                              r"CFS_BANDWIDTH|RT_GROUP_SCHED|CGROUP_SCHED|HIGH_RES_TIMERS|CPU_IDLE\w*|"
                              r"HALTPOLL_CPUIDLE|NUMA|NUMA_BALANCING|SMP|NR_CPUS|PARAVIRT\w*|KVM_GUEST|"
                              r"IRQ_TIME_ACCOUNTING|TICK_CPU_ACCOUNTING|VIRT_CPU_ACCOUNTING\w*|"
                              r"UCLAMP_TASK|CPU_FREQ_DEFAULT_GOV\w*))=(.*)$", line.strip())
                if mm:
                    cfg[mm.group(1)] = mm.group(3)
                mm = re.match(r"^# (CONFIG_(SCHEDSTATS|SCHED_CLASS_EXT|SCHED_CORE|IRQ_TIME_ACCOUNTING|"
                              r"NO_HZ_FULL|PREEMPT|PREEMPT_VOLUNTARY|PREEMPT_LAZY|PREEMPT_RT)) is not set", line.strip())
                if mm:
                    cfg[mm.group(1)] = "n"
    except OSError:
        cfg = "<no /proc/config.gz>"
    m["kernel_config"] = cfg
    m["perf_version"] = _sh([PERF, "--version"])
    m["perf_event_paranoid"] = _read("/proc/sys/kernel/perf_event_paranoid")
    m["gcc_version"] = _sh(["gcc", "--version"]).splitlines()[0]
    m["proc_schedstat"] = "present" if os.path.exists("/proc/schedstat") else "absent (CONFIG_SCHEDSTATS off)"
    m["memory_kb"] = (_read("/proc/meminfo") or "").splitlines()[0]
    m["loadavg"] = loadavg()
    with open(a.out, "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")
    log(f"wrote {a.out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    pm = sub.add_parser("machine")
    pm.add_argument("--out", required=True)
    pr = sub.add_parser("run")
    pr.add_argument("--name", required=True)
    pr.add_argument("--kind", required=True, choices=sorted(COMMS))
    pr.add_argument("--bindir", required=True)
    pr.add_argument("--workdir", required=True)
    pr.add_argument("--data", required=True)
    pr.add_argument("--config", help="JSON object describing the configuration")
    pr.add_argument("--sched-command", help="command for the perf sched record run, if different")
    pr.add_argument("--keep-raw", action="store_true", help="keep the perf.data file in --workdir")
    pr.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.what == "machine":
        cmd_machine(a)
    else:
        cmd_run(a)


if __name__ == "__main__":
    main()

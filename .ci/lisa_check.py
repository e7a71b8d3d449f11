#!/usr/bin/env python3
"""LISA reads fairsim's traces: the trace.dat of `--trace-dat` and the text of
`--trace-text-format trace-cmd-raw`.

    python3 .ci/lisa_check.py FAIRSIM_BINARY WORKDIR

Runs two traced runs (hackbench on 4 CPUs; rt-app's ramp on rk3399, which adds
cpu_frequency, sched_overutilized and fairsim's own events), then loads each trace.dat with
`lisa.trace.Trace` (LISA 3.1 reads a .dat through `trace-cmd report`) and each raw text
with `TxtTraceParser.from_txt_file`, and checks that both see every event of the run's
ftrace text, event by event: the same count per event, and the same sched_switch and
sched_wakeup rows (time to the microsecond, CPU, pids, comms, prios, numeric prev_state).

Then LISA's analyses against fairsim's own figures, for rt-app's ramp on rk3399 run to
its end (`--duration 3s`; the task exits at 2.015 s and the run stops there), traced with
`--trace-events pelt` (`analyses` below; each tolerance is stated where it is checked):
- `ana.load_tracking`: every task and CPU util, load, util_est and capacity sample equals
  the sched_pelt_se/sched_pelt_cfs/sched_util_est_*/sched_cpu_capacity lines of the run's
  ftrace text (fairsim's own record of its PELT values; the JSON holds none), to the
  microsecond the text prints.
- `ana.frequency`: each CPU's time at each frequency equals the JSON's cpufreq
  `time_in_state_ns` to the nanosecond, but for the two stretches a trace cannot show.
- `ana.idle`: each CPU's residency in each idle state equals the JSON's cpuidle `time_ns`
  once the exit latency of each exit is added (fairsim stamps `cpu_idle`'s exit at the
  wakeup, the device counts until the state's exit completes), within 1 us per CPU.
- `ana.tasks`: each task's waiting and running time are printed beside `run_delay_ns`
  and `runtime_ns`, not asserted: they do not agree (see the comment there for why).

Needs `lisa-linux` (3.1.0 with numpy<2, pyarrow<16 and nest_asyncio) and trace-cmd.
"""

import collections
import os
import subprocess
import sys
import warnings

warnings.simplefilter("ignore")

import json  # noqa: E402

from lisa.analysis.tasks import TaskState  # noqa: E402
from lisa.platforms.platinfo import PlatformInfo  # noqa: E402
from lisa.trace import Trace, TxtTraceParser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = {
    "hackbench": ["--smp", "4", "-w", "hackbench:g=1,l=50"],
    "rk3399": [
        "--topology",
        "rk3399",
        "-w",
        "rt-app " + os.path.join(ROOT, "examples/rtapp/ramp.json"),
        "--duration",
        "1s",
    ],
}
EVENTS = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "cpu_idle",
    "cpu_frequency",
    "sched_overutilized",
]
# What prev_state's letters are as the tracepoint's raw value.
STATE = {"R": 0, "R+": 256, "S": 1, "X": 16, "Z": 32}


def ftrace_events(path):
    """Each event of an ftrace text: name -> list of (us, cpu, {field: value})."""
    out = collections.defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            head, rest = line.split(": ", 1)
            name, info = rest.rstrip("\n").split(": ", 1)
            cpu = int(head[head.index("[") + 1 : head.index("]")])
            secs, frac = head.split()[-1].split(".")
            us = int(secs) * 1_000_000 + int(frac)
            fields = dict(
                kv.split("=", 1) for kv in info.replace(" ==> ", " ").split(" ") if "=" in kv
            )
            out[name].append((us, cpu, fields))
    return out


def rows(df, columns):
    """(us, cpu, columns...) of a LISA dataframe, sorted."""
    cols = [df["__cpu"].tolist()] + [df[c].tolist() for c in columns]
    out = []
    for t, cpu, *vals in zip(df.index, *cols):
        # The ftrace text rounds to the microsecond, half up.
        us = (round(t * 1_000_000_000) + 500) // 1000
        out.append((us, int(cpu)) + tuple(str(v) for v in vals))
    return sorted(out)


def expected(events, name, columns):
    out = []
    for us, cpu, f in events.get(name, []):
        vals = []
        for c in columns:
            v = f[c]
            if c == "prev_state":
                v = str(STATE[v])
            elif c == "target_cpu":
                v = str(int(v))
            vals.append(v)
        out.append((us, cpu) + tuple(vals))
    return sorted(out)


def check(name, trace, events):
    for ev in EVENTS:
        want = len(events.get(ev, []))
        if want == 0:
            continue
        got = len(trace.df_event(ev))
        if got != want:
            sys.exit(f"lisa_check: {name}: {ev}: LISA sees {got} events, the ftrace text {want}")
    switch_cols = ["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"]
    wakeup_cols = ["comm", "pid", "prio", "target_cpu"]
    for ev, cols in [("sched_switch", switch_cols), ("sched_wakeup", wakeup_cols)]:
        got = rows(trace.df_event(ev), cols)
        want = expected(events, ev, cols)
        if got != want:
            diff = next((g, w) for g, w in zip(got, want) if g != w)
            sys.exit(f"lisa_check: {name}: {ev}: LISA's rows differ from the ftrace text, first {diff}")


def main():
    fairsim, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    for name, args in RUNS.items():
        dat = os.path.join(work, f"{name}.dat")
        text = os.path.join(work, f"{name}.txt")
        raw = os.path.join(work, f"{name}.raw.txt")
        subprocess.run([fairsim, "run", *args, "--trace-dat", dat, "--trace-text", text],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([fairsim, "run", *args, "--trace-text", raw,
                        "--trace-text-format", "trace-cmd-raw"],
                       check=True, stdout=subprocess.DEVNULL)
        events = ftrace_events(text)
        check(f"{name}.dat", Trace(dat), events)
        check(f"{name}.raw.txt", Trace(raw, parser=TxtTraceParser.from_txt_file), events)
        counts = ", ".join(f"{ev} {len(events[ev])}" for ev in EVENTS if events.get(ev))
        print(f"lisa_check: {name}: trace.dat and trace-cmd-raw text: {counts}")


def fail(what):
    sys.exit(f"lisa_check: analyses: {what}")


def ns(seconds):
    """LISA's float seconds as integer ns (trace.dat times are whole ns)."""
    return round(seconds * 1_000_000_000)


def text_samples(events, name, key_fields, value):
    """(us, cpu, keys..., value) of an event's ftrace lines, sorted."""
    out = []
    for us, cpu, f in events.get(name, []):
        out.append((us, cpu) + tuple(f[k] for k in key_fields) + (int(f[value]),))
    return sorted(out)


def lisa_samples(df, key_fields, value):
    out = []
    cols = [df[k].tolist() for k in key_fields]
    for t, cpu, *rest in zip(df.index, df["cpu"].tolist(), *cols, df[value].tolist()):
        keys, v = rest[: len(key_fields)], rest[len(key_fields)]
        # The ftrace text rounds to the microsecond, half up.
        us = (ns(t) + 500) // 1000
        out.append((us, int(cpu)) + tuple(str(k) for k in keys) + (int(v),))
    return sorted(out)


def same(what, got, want):
    if len(got) != len(want):
        fail(f"{what}: LISA has {len(got)} samples, fairsim's text {len(want)}")
    if got != want:
        g, w = next((g, w) for g, w in zip(got, want) if g != w)
        fail(f"{what}: LISA's {g} where fairsim wrote {w}")
    return len(got)


def analyses(fairsim, work):
    dat = os.path.join(work, "analyses.dat")
    text = os.path.join(work, "analyses.txt")
    out = os.path.join(work, "analyses.json")
    subprocess.run([fairsim, "run", "--topology", "rk3399", "-w",
                    "rt-app " + os.path.join(ROOT, "examples/rtapp/ramp.json"),
                    "--duration", "3s", "--trace-dat", dat, "--trace-text", text,
                    "--trace-events", "pelt", "--json", out],
                   check=True, stdout=subprocess.DEVNULL)
    run = json.load(open(out, encoding="utf-8"))
    events = ftrace_events(text)
    domains = []
    for p in run["cpufreq"]["policies"]:
        lo, _, hi = p["related_cpus"].partition("-")
        domains.append(list(range(int(lo), int(hi or lo) + 1)))
    plat = PlatformInfo()
    plat.add_src("fairsim", {"freq-domains": domains})
    trace = Trace(dat, plat_info=plat)
    end = ns(trace.end)
    elapsed = run["elapsed_ns"]
    # The trace ends at its last event, the run at elapsed_ns: LISA carries each CPU's
    # last state (frequency, idle state) this much further.
    over = end - elapsed
    if not 0 <= over < 1_000_000:
        fail(f"the trace ends {over} ns after the run")
    report = []

    # Load tracking: LISA's signals are fairsim's samples, one for one.
    lt = trace.ana.load_tracking
    n = 0
    for sig in ["util", "load"]:
        n += same(f"task {sig}", lisa_samples(lt.df_tasks_signal(sig), ["pid"], sig),
                  text_samples(events, "sched_pelt_se", ["pid"], sig))
        n += same(f"CPU {sig}", lisa_samples(lt.df_cpus_signal(sig), [], sig),
                  text_samples(events, "sched_pelt_cfs", [], sig))
    n += same("task util_est", lisa_samples(lt.df_tasks_signal("enqueued"), ["pid"], "enqueued"),
              text_samples(events, "sched_util_est_se", ["pid"], "enqueued"))
    n += same("CPU util_est", lisa_samples(lt.df_cpus_signal("enqueued"), [], "enqueued"),
              text_samples(events, "sched_util_est_cfs", [], "enqueued"))
    n += same("CPU capacity", lisa_samples(lt.df_cpus_signal("capacity"), [], "capacity"),
              text_samples(events, "sched_cpu_capacity", [], "capacity"))
    report.append(f"load_tracking {n} samples equal")

    # Frequency: LISA's residency per CPU and frequency is the JSON's time_in_state_ns,
    # but (a) a CPU's signal starts at its first cpu_frequency event (no event says
    # the frequency a policy starts at; LISA 3.1 starts the signal there), so the
    # starting frequency lacks exactly that much, and (b) the last frequency runs on to
    # the trace's end, `over` ns past the run's.
    first = {}
    freq_events = trace.df_event("cpu_frequency")
    for cpu, t in zip(freq_events["cpu_id"].tolist(), freq_events.index):
        first.setdefault(int(cpu), ns(t))
    checked = 0
    for p, cpus in zip(run["cpufreq"]["policies"], domains):
        tis = {khz: t for khz, t in p["stats"]["time_in_state_ns"]}
        for cpu in cpus:
            res = trace.ana.frequency.df_cpu_frequency_residency(cpu)
            got = {int(k): ns(v) for k, v in res["total_time"].items()}
            last = int(trace.ana.frequency.df_cpu_frequency(cpu)["frequency"].iloc[-1])
            diff = {}
            for khz in set(tis) | set(got):
                d = tis.get(khz, 0) - got.get(khz, 0) + (over if khz == last else 0)
                if d:
                    diff[khz] = d
            start = first.get(cpu, 0)
            if len(diff) > 1 or (diff and list(diff.values())[0] != start):
                fail(f"frequency: CPU {cpu}: JSON minus LISA {diff}, expected only the "
                     f"starting frequency's {start} ns before the first cpu_frequency event")
            checked += len(tis)
    report.append(f"frequency {checked} CPU-frequency residencies equal (starting stretch and end accounted)")

    # Idle: the cpuidle device counts a state until its exit completes (exit latency
    # included); fairsim stamps cpu_idle's exit at the wakeup. So the JSON's time_ns is
    # LISA's residency plus one exit latency per exit (`usage`).
    worst = 0
    for c in run["cpus"]:
        cpu = c["cpu"]
        res = trace.ana.idle.df_cpu_idle_state_residency(cpu)["time"]
        table = run["cpuidle"]["tables"][run["cpuidle"]["cpu_table"][cpu]]["states"]
        idle = trace.ana.idle.df_cpu_idle(cpu)["state"]
        final = int(idle.iloc[-1]) if len(idle) else -1
        # A state the CPU is still in at the end: the device has counted its time to the
        # run's end but not yet its usage (that comes with the exit); LISA runs it on to
        # the trace's end.
        tail = end - max(ns(idle.index[-1]), elapsed) if len(idle) else 0
        for i, st in enumerate(c["cpuidle"]):
            got = ns(res.get(i, 0.0))
            exits = st["usage"]
            want = st["time_ns"] - exits * table[i]["exit_latency_ns"] + (tail if final == i else 0)
            worst = max(worst, abs(got - want))
            if abs(got - want) > 1000:
                fail(f"idle: CPU {cpu} {st['name']}: LISA {got} ns, JSON {st['time_ns']} ns "
                     f"less {exits} exits of {table[i]['exit_latency_ns']} ns")
    report.append(f"idle residency within {worst} ns per state of the JSON less exit latencies")

    # Tasks, shown and not asserted: LISA's waiting time (W from sched_wakeup to the
    # switch in, R/R+ from a preempting switch; LISA 3.1 names 6.12's preempted bit 0x100
    # TASK_WAKEKILL) and running time (A) against run_delay_ns and runtime_ns. They do not
    # agree: the engine's schedule_cpu runs the pick at the time of the event that asked
    # for it (sched_info_arrive and exec_start read that clock) and stamps sched_switch at
    # max(now, kernel_until), after the kernel work charged ahead of it (the wakeup path,
    # the idle exit, the pick), which so counts as running there and as waiting in LISA;
    # the sums of the two agree within a few us.
    waiting = [TaskState.TASK_WAKING, TaskState.TASK_RUNNING, 0x100]
    for task in run["tasks"]:
        pid = task["id"] + 1
        states = trace.ana.tasks.df_task_states(pid)
        runtime = ns(states[states.curr_state == TaskState.TASK_ACTIVE].delta.sum())
        wait = ns(states[states.curr_state.isin(waiting)].delta.sum())
        report.append(f"tasks {task['name']} (not asserted): waiting {wait} ns against "
                      f"run_delay_ns {task['run_delay_ns']}, running {runtime} ns against "
                      f"runtime_ns {task['runtime_ns']}, both {wait + runtime - task['run_delay_ns'] - task['runtime_ns']} ns apart")
    for line in report:
        print(f"lisa_check: rk3399 analyses: {line}")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[3] == "--analyses-only":
        analyses(sys.argv[1], sys.argv[2])
    else:
        main()
        analyses(sys.argv[1], sys.argv[2])

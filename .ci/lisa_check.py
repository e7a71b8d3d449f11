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
Needs `lisa-linux` (3.1.0 with numpy<2, pyarrow<16 and nest_asyncio) and trace-cmd.
"""

import collections
import os
import subprocess
import sys
import warnings

warnings.simplefilter("ignore")

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


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The "new user" sweep of issue 50, as a repeatable script.

Runs several hundred fairsim invocations a new user might type: every --help, quick
valid runs of every workload tool, every option of run/compare/sweep/race/report given a
bad value, odd scenario, plan and machine files, cgroup options, odd inputs to the
reports, output paths that cannot be written, --until rules, feature lists and kernels.
Each case declares what it expects:

  ok       exit status 0 (and no panic)
  refuse   a non-zero exit status (not a signal), stderr exactly one non-empty line once
           stripped, naming the option or field (`names`), no 'panicked' or
           'RUST_BACKTRACE'
  bounded  (the largest inputs) either of the two, within the timeout and memory cap

Findings and their severities:

  High    a panic; a timeout (10 s); a memory blow-up (killed by the 4 GiB address
          space cap, or a peak RSS over 1 GiB); death by a signal
  Medium  a `refuse` case that exited 0 (silent acceptance); an `ok` case that failed;
          two runs of a deterministic case whose --json files differ
  Low     a refusal on several lines or none; a refusal that does not name the option;
          an output path refused only after the work ran; a surprising output file

Writes one JSON line per invocation to SCRATCH/results.jsonl, prints a summary table by
category and severity with each finding's command line, and exits 1 when any High or
Medium finding is found (0 otherwise). Python 3.11, standard library only.

    python3 benches/user-path/sweep.py --fairsim target/release/fairsim --scratch /tmp/fs-sweep
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import signal
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

TIMEOUT_S = 10.0
MEM_CAP = 4 << 30          # RLIMIT_AS of every invocation
RSS_BLOWUP_KIB = 1 << 20   # a peak RSS above 1 GiB is a memory blow-up


@dataclass
class Case:
    cat: str
    argv: list[str]                 # arguments after the binary
    expect: str                     # "ok" or "refuse"
    names: str | None = None        # what a refusal should name (case-insensitive)
    stdin: bytes | None = None      # fed through a pipe; None: /dev/null
    det: bool = False               # determinism check: run twice with --json
    max_s: float | None = None      # a refusal taking longer came after the work (Low)
    check: object = None            # check(scratch) -> a Low finding's text, or None
    pre: object = None              # pre(scratch), called before each run of the case
    stdout: str | None = None       # where stdout goes (default: a file in SCRATCH/io)
    after_run: bool = False         # refused after a run: its `fairsim: emulated` line is no error
    why: str = ""                   # why the expectation is what it is, where not obvious
    findings: list = field(default_factory=list)


CASES: list[Case] = []


def ok(cat, *argv, det=False, why="", stdin=None, check=None, pre=None):
    CASES.append(Case(cat, list(argv), "ok", det=det, why=why, stdin=stdin, check=check, pre=pre))


def bounded(cat, *argv, why="", stdout=None):
    """Either outcome is right (a run, or a refusal by the memory budget), within the
    timeout and the memory cap."""
    CASES.append(Case(cat, list(argv), "bounded", why=why, stdout=stdout))


def refuse(cat, *argv, names=None, why="", stdin=None, max_s=None, stdout=None):
    CASES.append(Case(cat, list(argv), "refuse", names=names, why=why, stdin=stdin, max_s=max_s,
                      stdout=stdout))


# --------------------------------------------------------------------------------------
# Case tables

SMALL = ["--smp", "4", "--duration", "20ms"]
# A workload whose 2 s take about a second of wall time: an output path refused after the
# run shows as a late refusal.
LONG_WL = ["-w", "nanosleep:tasks=8,sleep=1us"]
HB = ["-w", "hackbench:g=1,l=10"]
KERNELS = ["6.12", "6.5", "4.16", "4.15", "4.5", "3.9"]

U64_OVER = "18446744073709551616"
U64_MAX = "18446744073709551615"
HUGE = "99999999999999999999999999"

# Standard bad values, for an option that takes a number.
EMPTY_FEATURE = ("empty words of a feature list are skipped by design (Features::parse_for), "
                 "which `--new ''` relies on; the meaning is unambiguous")
BAD_NUMBERS = ["-1", U64_OVER, HUGE, "NaN", "", "abc", "1.5", "0x10", "1e3", " 4"]
# ... and one that takes a duration with its unit.
BAD_DURATIONS = ["-1s", "5", "NaNs", "infs", "", "5m", "5min", "1.5.5s", "s", U64_OVER + "s",
                 "1e400s", "5 s s", "10sec", "--1ms", "0x10ms", "1.0000000001s"]


def help_cases():
    cat = "help"
    ok(cat, "--help")
    ok(cat, "-h")
    ok(cat, "-V")
    ok(cat, "--version")
    ok(cat, "help")
    subs = ["topology", "pelt", "run", "compare", "race", "features", "schedstat", "plot",
            "sweep", "report", "help"]
    for s in subs:
        if s == "help":
            refuse(cat, s, "--help", names="--help", why="clap's help subcommand takes no options")
            refuse(cat, s, "-h", names="-h")
        else:
            ok(cat, s, "--help")
            ok(cat, s, "-h")
        ok(cat, "help", s)
    for s in [["schedstat", "diff"], ["schedstat", "show"], ["sweep", "merge"],
              ["report", "latency"], ["report", "timehist"], ["report", "map"]]:
        ok(cat, *s, "--help")
        ok(cat, *s, "-h")
    ok(cat, "topology", "--list-presets")
    ok(cat, "features")
    for k in KERNELS:
        ok(cat, "features", "--kernel", k)
    refuse(cat, "nosuchcommand", names="nosuchcommand")
    refuse(cat, "run", "--nosuchoption", names="--nosuchoption")
    refuse(cat, "--bogus", names="--bogus")
    refuse(cat, "report", names="report",
           why="report without a subcommand: clap's usage is several lines; fairsim gives one")
    refuse(cat, "schedstat", names="schedstat")


def workload_cases(scratch):
    cat = "workload-ok"
    rt = os.path.join(scratch, "rt.json")
    forms = [
        ("schbench:m=1,t=2,c=1ms,s=1ms,r=1", "schbench -m 1 -t 2 -c 1000 -s 1000 -r 1"),
        ("schbench:version=2016,m=1,t=2,r=1", "schbench@2016 -m 1 -t 2 -r 1"),
        ("hackbench:g=1,l=10", "hackbench -g 1 -l 10"),
        ("hackbench:g=2,l=10,pipe,threads", "hackbench -g 2 -l 10 -p -T"),
        ("hackbench:g=1,l=10,pipe", "perf bench sched messaging -g 1 -l 10 -p -t"),
        ("nanosleep:tasks=4,sleep=1us", None),
        ("nanosleep:tasks=2,sleep=10us,run=5us,pin", None),
        ("sysbench-cpu:threads=2,events=10", "sysbench --test=cpu --num-threads=2 --max-requests=10 run"),
        ("sysbench-cpu:threads=2,events=0,time=10ms", "sysbench cpu --threads=2 --events=10 run"),
        ("cyclictest:t=2,i=1000,l=10,n", "cyclictest -t 2 -n -i 1000 -l 10"),
        ("cyclictest:t=2,a,n,D=1", "cyclictest -a -t 2 -n -D 1"),
        ("forkbench:scripts=1,cmds=5", None),
        ("forkbench:scripts=2,cmds=4,pipe=50", None),
        ("netperf:t=TCP_RR,l=1", "netperf -t TCP_RR -l 1"),
        ("netperf:t=UDP_STREAM,l=1,m=1024", "netperf -t UDP_STREAM -l 1 -- -m 1024"),
        ("netperf:t=TCP_STREAM,l=1", "netperf -t TCP_RR -l 1 -- -r 64,1024"),
        ("tbench:t=1,clients=2", "tbench -t 1 2"),
        ("rtapp:" + rt, "rt-app " + rt),
    ]
    for key, line in forms:
        ok(cat, "run", *SMALL, "-w", key)
        if line:
            ok(cat, "run", *SMALL, "-w", line)
    # Wrappers before a command line, and their keys.
    for w in ["taskset -c 0-1 hackbench -g 1 -l 10", "nice -n 5 hackbench -g 1 -l 10",
              "nice -n 40 hackbench -g 1 -l 10", "chrt -b 0 hackbench -g 1 -l 10",
              "chrt -i 0 hackbench -g 1 -l 10", "uclampset -m 0 -M 512 hackbench -g 1 -l 10",
              "hackbench:g=1,l=10,cpus=0-1,nice=3,policy=batch", "hackbench:g=1,l=10,mem=250",
              "hackbench:g=1,l=10,uclamp=0..512"]:
        ok(cat, "run", *SMALL, "-w", w,
           why="nice -n 40 is clamped to 19 as nice(2) clamps" if "40" in w else "")
    ok(cat, "run", *SMALL, "-w", "sudo hackbench -g 1 -l 10",
       why="a leading sudo is dropped with a note on stderr (docs/running.md); not silent")
    ok(cat, "run", *SMALL, "-w", "hackbench -g 1 -l 10 -g 2",
       why="the tool's own getopt keeps the last value of a repeated option")
    ok(cat, "run", *SMALL, "-w", "schbench -t 2 -t 3 -r 1",
       why="the tool's own getopt keeps the last value of a repeated option")
    ok(cat, "run", *SMALL, "-w", "hackbench:g=1,l=10", "-w", "nanosleep:tasks=2,sleep=1us")
    ok(cat, "run", *SMALL, "--rtapp-log", os.path.join(scratch, "rtlog"), "-w", "rtapp:" + rt)
    ok(cat, "run", "--topology", "rk3399", "--duration", "20ms", "-w", "rtapp:" + rt)
    ok(cat, "run", "--topology", "rk3399", "--duration", "20ms", "--governor", "performance", *HB)
    ok(cat, "run", "--topology", "rk3399", "--duration", "20ms", "--governor",
       "schedutil:rate_limit_us=500", *HB)
    ok(cat, "run", "--topology", "tc2", "--duration", "20ms", "-w", "sysbench-cpu:threads=2,events=5")
    ok(cat, "run", *SMALL, "--profile", *HB)
    ok(cat, "run", *SMALL, "--check-invariants", *HB)
    ok(cat, "run", *SMALL, "--check-determinism", *HB)
    ok(cat, "run", *SMALL, "--report", "latency", "--report", "map", *HB)
    ok(cat, "run", *SMALL, "--warmup", "5ms", "-w", "nanosleep:tasks=2,sleep=1us")
    ok(cat, "run", *SMALL, "--noise", "off", *HB)
    ok(cat, "run", *SMALL, "--noise", "0.2", *HB)
    ok(cat, "run", *SMALL, "--launch-cpu", "random", *HB)
    ok(cat, "run", *SMALL, "--idle-states", "C1:2us:2us,C6:100us:500us", *HB)
    ok(cat, "run", "--topology", "spr-2s56c2t", "--duration", "10ms", "--idle-states", "spr,no-C6", *HB)
    ok(cat, "run", *SMALL, "--cpuidle", "teo", *HB)
    ok(cat, "run", *SMALL, "--cpuidle", "none", *HB)
    ok(cat, "run", *SMALL, "--cost", "context_switch=2us", *HB)
    ok(cat, "run", *SMALL, "--costs", "arm-2013", *HB)
    ok(cat, "run", *SMALL, "--speed", "hackbench=0-3:512", *HB)
    ok(cat, "run", *SMALL, "--debugfs", "migration_cost_ns=0", *HB)
    ok(cat, "run", *SMALL, "--sysctl", "kernel.sched_util_clamp_min=512", *HB)
    ok(cat, "run", *SMALL, "--cpuset", "0-1", *HB)
    ok(cat, "run", "--duration", "20ms", "--smp", "sockets=2,cores=2", "--numa-distance",
       "10,21;21,10", *HB)
    ok(cat, "run", "--duration", "20ms", "--smp", "sockets=1,cores=4", "--capacity",
       "0-1:1024,2-3:512", *HB)
    ok(cat, "run", "--duration", "20ms", "--smp", "sockets=1,cores=4", "--itmt",
       "0-1:60,2-3:40", *HB)
    ok(cat, "run", "--duration", "20ms", "--smp", "sockets=1,cores=4", "--arch", "arm64",
       "--llc", "core", *HB)
    # The built-in demo, with no arguments at all.
    ok(cat, "run", why="no arguments: the built-in demo")
    # Determinism: ten ok cases, each run twice with --json to two files.
    for spec in ["hackbench:g=1,l=10", "hackbench -g 2 -l 10 -p -T",
                 "schbench -m 1 -t 2 -c 1000 -s 1000 -r 1", "nanosleep:tasks=4,sleep=1us",
                 "sysbench cpu --threads=2 --events=10 run", "cyclictest -a -t 2 -n -D 1",
                 "forkbench:scripts=1,cmds=5", "netperf -t TCP_RR -l 1", "tbench -t 1 2",
                 "rt-app " + rt]:
        ok("determinism", "run", *SMALL, "-w", spec, det=True)


def kernel_cases():
    cat = "kernel"
    for k in KERNELS:
        ok(cat, "run", *SMALL, "--kernel", k, *HB)
        ok(cat, "run", *SMALL, "--kernel", k, "-w", "schbench -m 1 -t 2 -r 1")
        ok(cat, "compare", *SMALL, "--kernel", k, *HB, "--new", "", "--seeds", "2",
           why="--new '' compares the kernel's defaults with themselves")
    ok(cat, "compare", *SMALL, *HB, "--base-kernel", "6.5", "--new-kernel", "6.12", "--new", "",
       "--seeds", "2")
    ok(cat, "race", "--smp", "2", "--duration", "50ms", "--threads", "2", "--kernel", "6.5")
    for k in ["v6.12", "4.5 ", "6.12.117"]:
        ok(cat, "run", *SMALL, "--kernel", k, *HB,
           why="Kernel::parse trims, drops a leading v and takes the release name, by design")
    for bad in ["5.0", "6", "6.12.0", "", "latest", "6.12,6.5", "linux-6.12", "6.120",
                "NaN", "-6.12", U64_OVER]:
        refuse(cat, "run", *SMALL, "--kernel", bad, *HB, names="--kernel")
    for opt in ["--base-kernel", "--new-kernel"]:
        refuse(cat, "compare", *SMALL, *HB, "--new", "", opt, "5.0", names=opt)
    refuse(cat, "features", "--kernel", "5.0", names="--kernel")
    refuse(cat, "topology", "--smp", "4", "--kernel", "5.0", names="--kernel")
    refuse(cat, "race", "--smp", "2", "--duration", "50ms", "--kernel", "4.5", names="--kernel",
           why="race ports only 6.12 and 6.5 (its --help says so)")
    refuse(cat, "race", "--smp", "2", "--duration", "50ms", "--kernel", "9.9", names="--kernel")
    refuse(cat, "run", *SMALL, "--kernel", "6.5", "--cgroup", "/a", "-w",
           "hackbench:g=1,l=10,cgroup=/a", names="--cgroup", why="task groups: 6.12 only")
    refuse(cat, "run", *SMALL, "--kernel", "4.5", "--cpuidle", "teo", *HB, names="--cpuidle",
           why="teo came in 5.1")
    refuse(cat, "run", *SMALL, "--kernel", "3.9", "--util-est", "6.12", *HB, names="util",
           why="3.9 had no util_est")


def run_option_cases(scratch):
    """Every option of run given bad values, each on an otherwise valid quick run."""
    cat = "run-options"

    def bad(opt, values, base=None, names=None, why=""):
        base = SMALL + HB if base is None else base
        for v in values:
            refuse(cat, "run", *base, opt, v, names=names or opt, why=why)

    smp_only = ["--duration", "20ms"] + HB
    bad("--topology", ["nosuch", "", "SPR-2S56C2T", "spr-2s56c2t,tc2"], base=["--duration", "20ms"] + HB)
    bad("--smp", ["0", "-1", "sockets=0", "cores=0", "threads=0", "sockets=-1", "sockets=" + U64_OVER,
                  "sockets=1,cores=" + HUGE, "sockets=1,sockets=2", "sockets=1,,cores=2",
                  "sockets=1,cores=2,", "", "bogus=2", "sockets=NaN", "cores=1.5",
                  "sockets=100000,cores=100000"], base=smp_only)
    bad("--numa-distance", ["10,21;21", "10,21;22,10", "11,21;21,11", "10,NaN;NaN,10", "", "10,21;21,10;",
                            "10,-21;-21,10", "10," + U64_OVER + ";" + U64_OVER + ",10"],
        base=["--smp", "sockets=2,cores=2", "--duration", "20ms"] + HB)
    bad("--numa-cpus", ["0-1", "0-1;1-3", "0-9;10-19", "", "0-1;;2-3", "a-b;c-d"],
        base=["--smp", "sockets=2,cores=2", "--numa-distance", "10,21;21,10", "--duration", "20ms"] + HB)
    bad("--capacity", ["0-3:0", "0-3:-1", "0-9:1024", "", "0-1:1024,", "0-3:" + U64_OVER, "0-3:NaN",
                       "0-1:1024,0-1:512"], base=["--smp", "4", "--duration", "20ms"] + HB)
    bad("--itmt", ["0-9:40", "", "0-3:" + U64_OVER, "0-3:high", "0-1:60"],
        base=["--smp", "4", "--duration", "20ms"] + HB)
    bad("--llc", ["l3", "", "die,package"], base=["--smp", "4", "--duration", "20ms"] + HB)
    bad("--arch", ["riscv", "", "X86_64", "arm"], base=["--smp", "4", "--duration", "20ms"] + HB)
    bad("--topology", ["tc2"], base=SMALL + HB, names="--topology",
        why="--topology next to --smp: both name the machine")
    bad("--numa-distance", ["10,21;21,10"], base=["--topology", "tc2", "--duration", "20ms"] + HB,
        why="an --smp modifier next to --topology")
    bad("--duration", BAD_DURATIONS + ["0s", "99999h"], base=["--smp", "4"] + HB)
    bad("--warmup", BAD_DURATIONS + ["20ms", "1h"], why="a warm-up as long as the run or longer")
    bad("--timer-slack", BAD_DURATIONS)
    bad("--seed", BAD_NUMBERS)
    bad("--hz", BAD_NUMBERS + ["0", "200", "1001", U64_MAX])
    bad("--util-est", ["bogus", "", "6.5", "legacy,off", "OFF "])
    bad("--costs", ["bogus", "", "x86", "x86-2020s,arm-2013"])
    bad("--cost", ["context_switch=2", "context_switch=-1us", "nosuch=1us", "context_switch=", "=1us",
                   "context_switch", "context_switch=NaNus", "context_switch=" + U64_OVER + "s", "",
                   "context_switch=1us,wakeup=1us"])
    bad("--speed", ["hackbench=0-3:0", "hackbench=0-3:2000", "hackbench=0-1:512", "bogus=0-3:512",
                    "", "hackbench=", "hackbench=0-3:NaN", "hackbench=0-3:-1"])
    bad("--timer-expiry", ["bogus", "", "HARD", "hard,soft"])
    bad("--launch-cpu", ["4", "-1", U64_OVER, "", "rand", "NaN", "0,1"])
    bad("--cpuidle", ["bogus", "", "ladder", "menu,teo"])
    bad("--idle-states", ["bogus", "", "C1:2us", "C1:-2us:2us", "C1:2s:2parsec", "spr,no-C9", "C1:2us:2us,",
                          "C1:2us:2us,C1:3us:3us", "C1:NaNus:2us", "C1:" + U64_OVER + "s:1us"])
    bad("--governor", ["bogus", "", "userspace:0", "userspace:-1", "userspace:" + U64_OVER,
                       "schedutil:rate_limit_us=-1", "schedutil:bogus=1", "userspace"],
        base=["--topology", "rk3399", "--duration", "20ms"] + HB)
    bad("--governor", ["performance"], why="a machine without cpufreq")
    bad("--noise", ["bogus", "", "-0.1", "1.5", "NaN", "inf", "2", "ON"])
    bad("--sysctl", ["kernel.sched_nosuch=1", "kernel.sched_util_clamp_min=2000",
                     "kernel.sched_util_clamp_min=-1", "kernel.sched_util_clamp_min=", "",
                     "sched_util_clamp_min=1", "kernel.sched_util_clamp_min=NaN",
                     "kernel.sched_util_clamp_min=" + U64_OVER, "kernel.sched_latency_ns=1000000"])
    bad("--debugfs", ["nosuch=1", "migration_cost_ns=-1", "migration_cost_ns=", "", "=1",
                      "migration_cost_ns=NaN", "migration_cost_ns=" + U64_OVER, "latency_ns=1000000",
                      "base_slice_ns=" + U64_OVER])
    bad("--schedstat-version", BAD_NUMBERS + ["14", "18", "0"])
    bad("--memory-budget", BAD_NUMBERS + ["0", "1"],
        why="a budget of 0 or 1 MiB is smaller than any run")
    bad("--trace-window", ["", "1s", "2ms..1ms", "a..b", "..", "-1ms..", "1..2", "1ms...2ms",
                           "0ms..0ms", "NaNs.."])
    bad("--report", ["bogus", "", "latency,bogus", "LATENCY"])
    bad("--cpuset", ["", "0-9", "1-0", "a", "0-1:3/2", "0-" + U64_OVER],
        names="--cpuset")
    lenient = "commas also separate the items of a CPU list, whose empty items the kernel's " \
              "bitmap_parselist skips (bitmap_find_region)"
    for opt, v, why in [
            ("--itmt", "0-3:-1", "ITMT priorities are signed ints (sched_set_itmt_core_prio)"),
            ("--itmt", "0-1:60,,2-3:40", lenient), ("--speed", "hackbench=0-3:512,", lenient),
            ("--capacity", "0-1:1024,,2-3:512", lenient), ("--cpuset", "0-1,", lenient),
            ("--llc", "socket", "an alias of package (topology's LlcScope)"),
            ("--idle-states", "C1:2:2", "bare numbers are us, as sysfs's latency (cpuidle/src/parse.rs)"),
            ("--debugfs", "base_slice_ns=0", "6.12's base_slice_ns is a plain debugfs u32, no range check"),
            ("--report", "latency,map", "a comma list by design (report::parse_reports)"),
            ("--duration", "5 s", "the unit may follow a space (des::time::parse_duration)"),
            ("--duration", "3601s", "run has no cap: hackbench ends by itself, so it is only a cap")]:
        base = ["--smp", "4"] + HB + ([] if opt == "--duration" else ["--duration", "20ms"])
        ok(cat, "run", *base, opt, v, why=why)
    for flag in ["--profile", "--check-invariants", "--check-determinism", "--progress",
                 "--schedstat-sg-scan"]:
        refuse(cat, "run", *SMALL, *HB, flag + "=yes", names=flag)
    refuse(cat, "run", *SMALL, "-w", names="--workload")
    for opt, a, b in [("--smp", "4", "8"), ("--seed", "1", "2"), ("--hz", "250", "1000"),
                      ("--kernel", "6.12", "6.5"), ("--duration", "10ms", "20ms")]:
        base = ["--smp", "4", "--duration", "20ms"] if opt not in ("--smp", "--duration") else (
            ["--duration", "20ms"] if opt == "--smp" else ["--smp", "4"])
        refuse(cat, "run", *base, *HB, opt, a, opt, b, names=opt,
               why="a single-valued option given twice: which one counts would be a guess")
    for opt, a, b in [("--debugfs", "migration_cost_ns=0", "migration_cost_ns=500000"),
                      ("--sysctl", "kernel.sched_util_clamp_min=100", "kernel.sched_util_clamp_min=200"),
                      ("--cost", "context_switch=1us", "context_switch=2us")]:
        ok(cat, "run", *SMALL, *HB, opt, a, opt, b,
           why="repeatable writes applied in order, as two sysctl -w or echo > debugfs make them")
    refuse(cat, "run", *SMALL, *HB, "extra.toml", "more", names="more")
    refuse(cat, "run", *SMALL, "-w", "", names="--workload")


def workload_bad_cases(scratch):
    cat = "workload-bad"
    for spec in ["nosuch", "nosuch:g=1", "hackbench:g=0", "hackbench:g=-1", "hackbench:g=" + U64_OVER,
                 "hackbench:g=" + HUGE, "hackbench:g=NaN", "hackbench:g=", "hackbench:=1",
                 "hackbench:g=1,l=10,g=2", "hackbench:g=1,,l=10", "hackbench:g=1,l=10,",
                 "hackbench:bogus=1", "hackbench:g=1.5", "hackbench:l=0",
                 "hackbench:g=1,pipe,socket", "hackbench:g=1,threads=2",
                 "schbench:t=0", "schbench:m=-1", "schbench:c=-1ms", "schbench:version=2099",
                 "schbench:c=1parsec", "schbench:r=" + U64_OVER,
                 "nanosleep:tasks=0", "nanosleep:sleep=-1us", "nanosleep:tasks=" + U64_OVER,
                 "nanosleep:sleep=NaNus", "nanosleep:bogus",
                 "sysbench-cpu:threads=0", "sysbench-cpu:events=-1", "sysbench-cpu:time=-1s",
                 "cyclictest:t=0,n", "cyclictest:i=0,n", "cyclictest:t=2",
                 "forkbench:scripts=0", "forkbench:work=10..1", "forkbench:dist=bogus",
                 "forkbench:pipe=101",
                 "netperf:t=SCTP_RR", "netperf:l=-1", "netperf:r=1,2,3", "netperf:instances=0",
                 "tbench:clients=0", "tbench:t=-1,clients=2",
                 "rtapp:/nonexistent.json", "rtapp:", "hackbench:g=1,cpus=9",
                 "hackbench:g=1,cpus=", "hackbench:g=1,nice=20", "hackbench:g=1,nice=-21",
                 "hackbench:g=1,policy=fifo", "hackbench:g=1,uclamp=600..500",
                 "hackbench:g=1,uclamp=0..2000", "hackbench:g=1,mem=1001", "hackbench:g=1,cgroup=/nosuch",
                 "hackbench -g 0 -l 10", "hackbench -g -1", "hackbench -F", "hackbench -g",
                 "hackbench -g NaN", "hackbench -l " + U64_OVER, "hackbench extra",
                 "schbench -p 8", "schbench -m -t 4", "schbench -t", "schbench -r -1",
                 "perf bench sched messaging -f", "perf bench sched pipe",
                 "sysbench --test=memory run", "sysbench cpu --threads=0 run", "sysbench cpu",
                 "cyclictest -t 2", "cyclictest -h 100 -n", "cyclictest -t -1 -n",
                 "netperf -t BOGUS", "netperf -l", "netperf -t TCP_RR -- -r", "tbench", "tbench -t 1",
                 "tbench -t 1 0", "rt-app", "rt-app /nonexistent.json",
                 "taskset -c 99 hackbench -g 1", "taskset hackbench -g 1", "nice -n hackbench",
                 "chrt -f 10 hackbench -g 1", "chrt -b 5 hackbench -g 1", "uclampset -m 900 -M 100 hackbench",
                 "cgexec -g cpu:/nosuch hackbench -g 1", "cgexec -g memory:/a hackbench -g 1",
                 "sudo", "sudo -u nobody hackbench -g 1", "'hackbench -g 1", "hackbench -g 1 | cat",
                 "forkbench -s 1", "stress-ng --cpu 2", "schbench@2017 -t 2"]:
        refuse(cat, "run", *SMALL, "-w", spec, names="workload")


def rtapp_cases(scratch):
    cat = "rtapp-files"
    files = {
        "empty.json": "",
        "notjson.json": "{ tasks: ",
        "notasks.json": '{"global": {"duration": 1}}',
        "emptytasks.json": '{"tasks": {}}',
        "badpolicy.json": '{"tasks": {"a": {"policy": "SCHED_FIFO", "run": 1000}}}',
        "badrun.json": '{"tasks": {"a": {"run": -5}}}',
        "unknownevent.json": '{"tasks": {"a": {"bogus": 5}}}',
        "hugeinstance.json": '{"tasks": {"a": {"instance": 100000000, "run": 1000, "sleep": 1000}}}',
        "strrun.json": '{"tasks": {"a": {"run": "fast"}}}',
        "array.json": '[1, 2, 3]',
        "overflow.json": '{"tasks": {"a": {"run": 18446744073709551616}}}',
        "nan.json": '{"tasks": {"a": {"run": NaN}}}',
    }
    for name, text in files.items():
        p = os.path.join(scratch, name)
        with open(p, "w") as f:
            f.write(text)
        refuse(cat, "run", *SMALL, "-w", "rtapp:" + p, names=name)
    ok(cat, "run", *SMALL, "-w", "rtapp:" + write(scratch, "dupkey.json",
       '{"tasks": {"a": {"run": 1000, "sleep": 1000}}, "tasks": {"b": {"run": 1000, "sleep": 1000}}}'),
       why="a repeated key: json-c keeps the last value, and fairsim says so in a note")
    ok(cat, "run", *SMALL, "-w", "rtapp:" + os.path.join(scratch, "rt-comments.json"),
       why="json-c's comments and trailing commas are accepted (docs/running.md)")
    with open(os.path.join(scratch, "rt-comments.json"), "w") as f:
        f.write('{ /* c */ "tasks": { "a": { "run": 1000, "sleep": 1000, }, }, // end\n }')
    refuse(cat, "run", *SMALL, "-w", "rtapp:/dev/zero", names="/dev/zero")
    refuse(cat, "run", *SMALL, "-w", "rtapp:" + scratch, names=scratch)


def compare_cases(scratch):
    cat = "compare-options"
    base = SMALL + HB
    ok(cat, "compare", *base, "--new", "NO_SIS_UTIL", "--seeds", "2")
    ok(cat, "compare", *base, "--new", "", "--new-debugfs", "base_slice_ns=3000000", "--seeds", "2")
    ok(cat, "compare", *base, "--new", "NO_SIS_UTIL", "--seeds", "3", "--until", "time-s:ci<50%",
       "--min-seeds", "2")
    ok(cat, "compare", *base, "--new", "NO_SIS_UTIL", "--seeds", "2", "--csv",
       os.path.join(scratch, "c.csv"), "--json", os.path.join(scratch, "c.json"))
    ok(cat, "compare", *base, "--new", "NO_SIS_UTIL", "--seeds", "2", "--cpu", "1")
    refuse(cat, "compare", *base, names="--new")
    for v in BAD_NUMBERS + ["0", "100000000"]:
        refuse(cat, "compare", *base, "--new", "", "--seeds", v, names="--seeds",
               why="--seeds 100000000 would run for days; it is refused" if v == "100000000" else "")
    for v in ["BOGUS", "sis_util", "NO_", "default,SIS_UTIL", "SIS_UTIL,BOGUS"]:
        refuse(cat, "compare", *base, "--new", v, "--seeds", "2", names="--new")
        refuse(cat, "compare", *base, "--new", "", "--base", v, "--seeds", "2", names="--base")
    for v in ["SIS_UTIL,", "SIS_UTIL,,NO_NI_RANDOM"]:
        ok(cat, "compare", *base, "--new", v, "--seeds", "2", why=EMPTY_FEATURE)
    for v in BAD_NUMBERS + ["4", "99"]:
        refuse(cat, "compare", *base, "--new", "", "--seeds", "2", "--cpu", v, names="--cpu")
    for opt in ["--base-sysctl", "--new-sysctl"]:
        for v in ["kernel.sched_nosuch=1", "", "kernel.sched_util_clamp_min=9999"]:
            refuse(cat, "compare", *base, "--new", "", "--seeds", "2", opt, v, names=opt)
    for opt in ["--base-debugfs", "--new-debugfs"]:
        for v in ["nosuch=1", "", "migration_cost_ns=-1"]:
            refuse(cat, "compare", *base, "--new", "", "--seeds", "2", opt, v, names=opt)
    for v in BAD_NUMBERS + ["0", "1", "9"]:
        refuse(cat, "compare", *base, "--new", "", "--seeds", "5", "--until", "time-s:ci<5%",
               "--min-seeds", v, names="--min-seeds")
    refuse(cat, "compare", *base, "--new", "", "--seeds", "5", "--min-seeds", "3", names="--min-seeds",
           why="--min-seeds without --until")
    for path_opt in ["--csv", "--json", "--plot"]:
        for p in (unwritable_dirs if path_opt == "--plot" else unwritable_paths)(scratch):
            refuse(cat, "compare", "--smp", "4", "--duration", "1s", *LONG_WL, "--new", "", "--seeds", "2",
                   path_opt, p, names=path_opt, max_s=late(p))


def until_cases():
    cat = "until"
    base = SMALL + HB + ["--new", "NO_SIS_UTIL", "--seeds", "3", "--min-seeds", "2"]
    ok(cat, "compare", *base, "--until", "time-s:significant")
    ok(cat, "compare", *base, "--until", "time-s:significant<0.01")
    ok(cat, "compare", *base, "--until", "time-s:ci<0.5")
    ok(cat, "compare", *base, "--until", "time-s:ci<" + U64_OVER + "%",
       why="a float above 0 is a valid width; a huge one stops at --min-seeds")
    for rule in ["x:ci<0", "time-s:ci<0", "time-s:ci<-5%", "time-s:ci<NaN", "time-s:ci<NaN%",
                 "time-s:ci<inf", "time-s:ci<1e400", "time-s:ci<5%%", "time-s:ci<", "time-s:ci>5%",
                 "time-s:significant<0", "time-s:significant<0.5", "time-s:significant<2",
                 "time-s:significant<NaN", "time-s:significant<", "time-s", "time-s:", ":ci<5%", "",
                 "bogus:significant", "time-s:bogus", "time-s:ci<5%,newidle-time-%:ci<5%",
                 "TIME-S:ci<5%", "time-s:ci<0%"]:
        refuse(cat, "compare", *base, "--until", rule, names="--until")
    for rule in ["time-s:significant", "time-s:ci<0", "bogus:ci<5%", ""]:
        refuse(cat, "sweep", "PLAN", "--until", rule, names="--until")  # PLAN: filled in later


def race_cases(scratch):
    cat = "race-options"
    base = ["--smp", "2", "--duration", "50ms", "--threads", "2"]
    ok(cat, "race", *base)
    ok(cat, "race", *base, "--pattern", "pairs", "--start", "spread")
    ok(cat, "race", *base, "--features", "default", "--features", "NO_NI_RANDOM")
    ok(cat, "race", *base, "--json", os.path.join(scratch, "race.json"), "--schedstat",
       os.path.join(scratch, "race-schedstat"))

    def bad(opt, values, names=None, why=""):
        for v in values:
            refuse(cat, "race", *base, opt, v, names=names or opt, why=why)

    bad("--tasks", BAD_NUMBERS + ["0", U64_MAX])
    bad("--threads", BAD_NUMBERS + ["0", "1,,2", "1,2,", "100000"])
    bad("--duration", BAD_DURATIONS + ["0s", "3601s"])
    bad("--run", BAD_DURATIONS)
    bad("--sleep", BAD_DURATIONS)
    bad("--watchdog", BAD_DURATIONS + ["0s"])
    bad("--pattern", ["bogus", "", "pair"])
    bad("--start", ["bogus", "", "cpu1"])
    bad("--seed", BAD_NUMBERS)
    bad("--hz", ["0", "200", "-1", ""])
    bad("--features", ["BOGUS", "ILB_FAST", "sis_util"],
        why="ILB_FAST without ILB_SNAPSHOT: its --help says it needs it")
    ok(cat, "race", *base, "--features", "", why="the kernel's defaults, as run's --features ''")
    ok(cat, "race", *base, "--features", "SIS_UTIL,", why=EMPTY_FEATURE)
    bad("--memory-budget", ["0", "-1", U64_OVER])
    bad("--schedstat-version", ["14", "0", ""])
    for opt in ["--json", "--schedstat"]:
        for p in unwritable_paths(scratch):
            refuse(cat, "race", "--smp", "2", "--threads", "2", "--duration", "1s", opt, p, names=opt,
                   max_s=late(p))
    refuse(cat, "race", *base, "--cpuset", "0", names="--cpuset")


def unwritable_paths(scratch):
    """Output files that cannot be written, even by root: a missing directory, a
    directory, a path under a file (ENOTDIR), nothing, and /dev/full (ENOSPC)."""
    return [os.path.join(scratch, "no-such-dir", "out"), scratch, "/proc/version/x", "", "/dev/full"]


def late(path):
    """The time within which a refusal of an output path shows it was checked before the
    work: none for /dev/full, which opens and fails only when written (ENOSPC)."""
    return None if path == "/dev/full" else 0.5


def unwritable_dirs(scratch):
    """Output directories that cannot be made (--plot and --rtapp-log make missing ones, as
    mkdir -p does): under a file, nothing, a file, a character device."""
    return ["/proc/version/x", "", os.path.join(scratch, "a-file"), "/dev/full"]


def output_cases(scratch):
    cat = "output-paths"
    for opt in ["--json", "--schedstat", "--trace", "--trace-text", "--plot", "--rtapp-log"]:
        for p in (unwritable_dirs if opt in ("--plot", "--rtapp-log") else unwritable_paths)(scratch):
            wl = ["-w", "rtapp:" + os.path.join(scratch, "rt.json")] if opt == "--rtapp-log" else LONG_WL
            refuse(cat, "run", "--smp", "4", "--duration", "2s", *wl, opt, p, names=opt, max_s=late(p))
    # An output path that is one of the run's own input files: writing it would destroy the
    # input (as gcc -o x.c x.c or cp a a refuse). Each case gets its own copy to lose.
    scen = 'smp = "4"\nduration = "20ms"\nworkload = ["hackbench:g=1,l=10"]\n'
    rt = ('{"global": {"duration": 1}, "tasks": {"t": {"loop": -1, "run": 2000, '
          '"timer": {"ref": "unique", "period": 16000}}}}')
    for opt in ["--json", "--schedstat", "--trace-text"]:
        v = write(scratch, f"victim-scenario{opt}.toml", scen)
        refuse(cat, "run", v, opt, v, names=v, why="the output would overwrite the scenario it runs")
        v = write(scratch, f"victim-rtapp{opt}.json", rt)
        refuse(cat, "run", *SMALL, "-w", "rtapp:" + v, opt, v, names=v,
               why="the output would overwrite the rt-app file it runs")
        v = write(scratch, f"victim-machine{opt}.toml", '[smp]\ncores = 4\n')
        refuse(cat, "run", "--duration", "20ms", *HB, "--machine", v, opt, v, names=v,
               why="the output would overwrite the machine file it reads")
    for opt in ["--json", "--csv"]:
        v = write(scratch, f"victim-compare{opt}.toml", scen)
        refuse(cat, "compare", v, "--new", "", "--seeds", "2", opt, v, names=v,
               why="the output would overwrite the scenario it compares")
    refuse(cat, "run", *SMALL, *HB, "--json", "-", names="--json",
           why="'-' would make a file named '-' where `report` reads '-' as stdin; "
               "/dev/stdout and ./- say which is meant")
    ok(cat, "run", *SMALL, *HB, "--json", "/dev/stdout", why="stdout by its /dev name")
    ok(cat, "run", *SMALL, *HB, "--plot", os.path.join(scratch, "made", "by", "plot"),
       why="--plot makes a missing directory, as mkdir -p does")
    refuse(cat, "run", *SMALL, *HB, "--json", os.path.join(scratch, "same.json"), "--schedstat",
           os.path.join(scratch, "same.json"), names="same.json",
           why="two outputs to one file: one would overwrite the other")


def cgroup_cases(scratch):
    cat = "cgroup"
    base = SMALL + ["-w", "hackbench:g=1,l=10,cgroup=/a"]
    for v in ["/a", "/a:cpu.weight=200", "/a:cpu.weight=1", "/a:cpu.weight=10000",
              "/a:cpu.weight.nice=5", "/a:cpu.idle=1", "/a:cpu.max=50000 100000", "/a:cpu.max=max",
              "/a:cpu.max=max 200000", "/a:cpu.max=50000", "/a:cpu.max=50000 100000,cpu.max.burst=1000",
              "/a:cpuset.cpus=0-1", "/a:cpu.weight=200,cpuset.cpus=2-3"]:
        ok(cat, "run", *base, "--cgroup", v)
    ok(cat, "run", *SMALL, "-w", "hackbench:g=1,l=10,cgroup=/a/b", "--cgroup", "/a/b:cpu.weight=50",
       why="missing parents are made as mkdir -p does")
    ok(cat, "run", *SMALL, "-w", "cgexec -g cpu:/a hackbench -g 1 -l 10", "--cgroup", "/a")
    for v in ["/a:cpu.weight=200,,cpu.idle=1", "/a:cpu.weight=200,", "/a:"]:
        ok(cat, "run", *base, "--cgroup", v,
           why="empty items are skipped by design (workloads::cgroups::declare_option), since "
               "cpuset.cpus=0-3,8-11 continues across commas as a cpulist, whose empty items "
               "the kernel skips")
    ok(cat, "run", *SMALL, *HB, "--cgroup", "/p:cpuset.cpus=2-3,cpuset.cpus.partition=root")
    for v in ["/a:cpu.weight=0", "/a:cpu.weight=10001", "/a:cpu.weight=-1", "/a:cpu.weight=" + U64_OVER,
              "/a:cpu.weight=NaN", "/a:cpu.weight=", "/a:cpu.weight=1.5",
              "/a:cpu.weight.nice=20", "/a:cpu.weight.nice=-21", "/a:cpu.idle=2", "/a:cpu.idle=-1",
              "/a:cpu.max=9223372036854775807 100000", "/a:cpu.max=" + U64_MAX + " 100000",
              "/a:cpu.max=" + U64_OVER, "/a:cpu.max=999 100000", "/a:cpu.max=50000 999",
              "/a:cpu.max=50000 2000000", "/a:cpu.max=fast", "/a:cpu.max=50000 100000 5",
              "/a:cpu.max=-1 100000", "/a:cpu.max=", "/a:cpu.max=50000 100000,cpu.max.burst=60000",
              "/a:cpu.max.burst=-1", "/a:cpu.uclamp.min=10", "/a:cpuset.mems=0",
              "/a:cpuset.cpus.partition=isolated", "/a:cpuset.cpus=9", "/a:cpuset.cpus=",
              "/a:cpuset.cpus=3-1", "/a:bogus=1", "a", "", "//a", "/a/../b", "/a/./b", "/", "/:cpu.weight=200",
              "/a b", "/a:cpu.weight", "/a:=5", "/a\x01"]:
        refuse(cat, "run", *base, "--cgroup", v, names="--cgroup")
    refuse(cat, "run", *base, "--cgroup", "/a:cpu.weight=100,cpu.weight=200", names="cpu.weight",
           why="one key twice in one --cgroup: the NAME:key=value rule of each key once")
    refuse(cat, "run", *SMALL, "-w", "hackbench:g=1,l=10,cgroup=/b", "--cgroup", "/a", names="/b")
    refuse(cat, "run", *SMALL, "-w", "hackbench:g=1,l=10,cgroup=a", "--cgroup", "/a", names="cgroup")
    refuse(cat, "run", *SMALL, *HB, "--cgroup", "/p:cpuset.cpus.partition=root", names="--cgroup",
           why="a root partition needs its own cpuset.cpus")
    refuse(cat, "run", *SMALL, *HB, "--cpuset", "0-1", "--cgroup",
           "/p:cpuset.cpus=1-2,cpuset.cpus.partition=root", names="cpuset")
    refuse(cat, "run", *SMALL, *HB, "--sysctl", "kernel.sched_autogroup_enabled=1", "--cgroup",
           "/autogroup-1", names="autogroup")
    many = []
    for i in range(1100):
        many += ["--cgroup", f"/g{i}"]
    refuse(cat, "run", *SMALL, *HB, *many, names="1024", why="at most 1024 groups")


def write(scratch, name, text, mode="w"):
    p = os.path.join(scratch, name)
    with open(p, mode) as f:
        f.write(text)
    return p


def scenario_cases(scratch):
    cat = "scenario"
    good = 'smp = "4"\nduration = "20ms"\nworkload = ["hackbench:g=1,l=10"]\n'
    ok(cat, "run", write(scratch, "good.toml", good))
    ok(cat, "run", write(scratch, "alias1.toml", good + 'idle_states = "C1:2us:2us"\n'))
    ok(cat, "run", write(scratch, "alias2.toml", good + 'idle-states = "C1:2us:2us"\n'),
       why="issue 50 row 8: both spellings are read")
    ok(cat, "run", write(scratch, "alias3.toml", good + 'timer-slack = "10us"\nlaunch-cpu = "1"\n'))
    ok(cat, "run", write(scratch, "tables.toml", good + '[cost]\ncontext_switch = "2us"\n[debugfs]\n'
                         'migration_cost_ns = 0\n[cgroup."/a"]\n"cpu.weight" = 200\n'))
    ok(cat, "compare", write(scratch, "good2.toml", good), "--new", "NO_SIS_UTIL", "--seeds", "2")
    ok(cat, "run", write(scratch, "override.toml", good), "--duration", "10ms",
       why="command-line options override the file")
    bad = {
        "unknown-key.toml": (good + 'bogus = 1\n', "bogus"),
        "typo-key.toml": (good + 'idle_state = "flat"\n', "idle_state"),
        "seed-str.toml": (good + 'seed = "x"\n', "seed"),
        "seed-neg.toml": (good + 'seed = -1\n', "seed"),
        "seed-float.toml": (good + 'seed = 1.5\n', "seed"),
        "seed-over.toml": (good + 'seed = 18446744073709551616\n', "seed"),
        "hz-str.toml": (good + 'hz = "fast"\n', "hz"),
        "hz-zero.toml": (good + 'hz = 0\n', "hz"),
        "workload-str.toml": ('smp = "4"\nduration = "20ms"\nworkload = "hackbench:g=1,l=10"\n', "workload"),
        "workload-bad.toml": ('smp = "4"\nduration = "20ms"\nworkload = ["hackbench:g=0"]\n', "workload"),
        "dur-bare.toml": ('smp = "4"\nduration = 20\nworkload = ["hackbench:g=1,l=10"]\n', "duration"),
        "dur-nounit.toml": ('smp = "4"\nduration = "20"\nworkload = ["hackbench:g=1,l=10"]\n', "duration"),
        "both-machines.toml": (good + 'topology = "tc2"\n', "topology"),
        "numa-nosmp.toml": ('topology = "tc2"\nnuma_distance = "10"\nworkload = ["hackbench:g=1"]\n', "numa"),
        "dupkey.toml": (good + 'seed = 1\nseed = 2\n', "seed"),
        "both-spellings.toml": (good + 'idle_states = "flat"\nidle-states = "flat"\n', "idle"),
        "syntax.toml": ('smp = "4\n', "scenario"),
        "cost-unknown.toml": (good + '[cost]\nnosuch = "1us"\n', "nosuch"),
        "cost-bare.toml": (good + '[cost]\ncontext_switch = 2\n', "context_switch"),
        "sysctl-unknown.toml": (good + '[sysctl]\n"kernel.sched_nosuch" = 1\n', "sched_nosuch"),
        "debugfs-bad.toml": (good + '[debugfs]\nmigration_cost_ns = -1\n', "migration_cost_ns"),
        "debugfs-str.toml": (good + '[debugfs]\nmigration_cost_ns = "fast"\n', "migration_cost_ns"),
        "cgroup-bad.toml": (good + '[cgroup."/a"]\n"cpu.weight" = 0\n', "cpu.weight"),
        "cgroup-path.toml": (good + '[cgroup."a"]\n"cpu.weight" = 200\n', "cgroup"),
        "cgroup-file.toml": (good + '[cgroup."/a"]\n"cpu.bogus" = 1\n', "cpu.bogus"),
        "features-bad.toml": (good + 'features = "BOGUS"\n', "BOGUS"),
        "kernel-bad.toml": (good + 'kernel = "5.0"\n', "kernel"),
        "kernel-num.toml": (good + 'kernel = 6.12\n', "kernel"),
        "json-unwritable.toml": (good + 'json = "/proc/version/x.json"\n', "json"),
        "speed-str.toml": (good + 'speed = "hackbench=0-3:512"\n', "speed"),
        "cpusets-bad.toml": (good + 'cpusets = ["0-9"]\n', "cpuset"),
        "table-key.toml": (good + '[bogus]\nx = 1\n', "bogus"),
        "nested-wrong.toml": ('[smp]\ncores = 4\n', "smp"),
        "binary.toml": ("", "binary.toml"),
    }
    for name, (text, names) in bad.items():
        if name == "binary.toml":
            p = os.path.join(scratch, name)
            with open(p, "wb") as f:
                f.write(b"\x00\x01\x02\xff\xfe")
        else:
            p = write(scratch, name, text)
        refuse(cat, "run", p, names=names)
    ok(cat, "run", write(scratch, "empty.toml", ""), "--smp", "4", "--duration", "20ms", *HB,
       why="an empty scenario sets nothing; the options give the run")
    refuse(cat, "run", "/dev/null", names="/dev/null")
    os.mkfifo(os.path.join(scratch, "scenario.fifo"))
    refuse(cat, "run", os.path.join(scratch, "scenario.fifo"), names="FIFO",
           why="a FIFO is refused before it is opened (docs/errors.md), so nothing blocks")
    refuse(cat, "run", "--duration", "20ms", *HB, "--machine", os.path.join(scratch, "scenario.fifo"),
           names="FIFO")
    refuse(cat, "run", "/dev/zero", names="/dev/zero")
    refuse(cat, "run", scratch, names=scratch)
    refuse(cat, "run", "/nonexistent.toml", names="/nonexistent.toml")
    big = os.path.join(scratch, "big.toml")
    with open(big, "w") as f:
        f.write(good)
        f.write("# " + "x" * (2 << 20) + "\n")
    refuse(cat, "run", big, names="big.toml", why="a scenario is at most 1 MiB")
    refuse(cat, "compare", os.path.join(scratch, "unknown-key.toml"), "--new", "", names="bogus")


def sweep_cases(scratch):
    cat = "sweep-plans"
    good = ('name = "t"\n[run]\nduration = "10ms"\n[axes]\n'
            'machines = [{ name = "m4", smp = "4" }]\n'
            'workloads = ["hackbench:g=1,l=10"]\nseeds = 2\n')
    gp = write(scratch, "plan-good.toml", good)
    out = lambda n: ["--out", os.path.join(scratch, "sw-" + n), "--jobs", "1"]
    ok(cat, "sweep", gp, *out("good"))
    ok(cat, "sweep", write(scratch, "plan-alias1.toml", good + 'idle_states = ["flat", "C1:2us:2us"]\n'),
       *out("alias1"))
    ok(cat, "sweep", write(scratch, "plan-alias2.toml", good + 'idle-states = ["flat", "C1:2us:2us"]\n'),
       *out("alias2"), why="issue 50 row 8: both spellings name the same option")
    ok(cat, "sweep", write(scratch, "plan-feat.toml", good + '[axes.features]\nbase = ""\nnew = "NO_SIS_UTIL"\n'),
       *out("feat"))
    ok(cat, "sweep", write(scratch, "plan-aa.toml", good + '[axes.features]\na = ""\nb = ""\n'), *out("aa"),
       why="two named sets with one list: an A/A comparison, as compare --new '' makes")
    ok(cat, "sweep", write(scratch, "plan-kern.toml", good + 'kernels = ["6.12", "4.5"]\n'), *out("kern"))
    ok(cat, "sweep", gp, "--shard", "1/2", *out("shard1"))
    ok(cat, "sweep", gp, "--shard", "2/2", *out("shard2"))
    ok(cat, "sweep", "merge", os.path.join(scratch, "sw-shard1"), os.path.join(scratch, "sw-shard2"),
       "--out", os.path.join(scratch, "sw-merged"))
    ok(cat, "sweep", write(scratch, "plan-until.toml", good.replace("seeds = 2", "seeds = 3")),
       "--until", "time-s:ci<50%", "--min-seeds", "2", *out("until"))
    bad = {
        "unknown-top": (good + 'bogus = 1\n', "bogus"),
        "unknown-run": (good.replace("[run]\n", "[run]\nbogus = 1\n"), "bogus"),
        "unknown-axis": (good + 'bogus = [1, 2]\n', "bogus"),
        "no-name": (good.replace('name = "t"\n', ""), "name"),
        "bad-name": (good.replace('name = "t"', 'name = "a/b"'), "name"),
        "empty-name": (good.replace('name = "t"', 'name = ""'), "name"),
        "name-int": (good.replace('name = "t"', 'name = 5'), "name"),
        "no-workloads": ('name = "t"\n[run]\nduration = "10ms"\n[axes]\nseeds = 2\n', "workloads"),
        "empty-workloads": (good.replace('["hackbench:g=1,l=10"]', "[]"), "workloads"),
        "dup-workloads": (good.replace('["hackbench:g=1,l=10"]', '["hackbench:g=1,l=10", "hackbench:g=1,l=10"]'), "workloads"),
        "bad-workload": (good.replace('["hackbench:g=1,l=10"]', '["hackbench:g=0"]'), "workload"),
        "workloads-str": (good.replace('["hackbench:g=1,l=10"]', '"hackbench:g=1,l=10"'), "workloads"),
        "seeds-str": (good.replace("seeds = 2", 'seeds = "three"'), "seeds"),
        "seeds-zero": (good.replace("seeds = 2", "seeds = 0"), "seeds"),
        "seeds-neg": (good.replace("seeds = 2", "seeds = -1"), "seeds"),
        "seeds-huge": (good.replace("seeds = 2", "seeds = 100000000000"), "seeds"),
        "seeds-dup": (good.replace("seeds = 2", "seeds = [1, 1]"), "seeds"),
        "seeds-empty": (good.replace("seeds = 2", "seeds = []"), "seeds"),
        "machines-int": (good.replace('[{ name = "m4", smp = "4" }]', "5"), "machines"),
        "machines-bad": (good.replace('[{ name = "m4", smp = "4" }]', '["nosuch"]'), "nosuch"),
        "machines-key": (good.replace('smp = "4" }', 'smp = "4", bogus = "x" }'), "bogus"),
        "machines-noname": (good.replace('name = "m4", ', ""), "name"),
        "machines-dup": (good.replace('[{ name = "m4", smp = "4" }]', '[{ name = "m4", smp = "4" }, { name = "m4", smp = "2" }]'), "m4"),
        "run-smp": (good.replace("[run]\n", '[run]\nsmp = "4"\n'), "smp"),
        "kernels-bad": (good + 'kernels = ["5.0"]\n', "kernel"),
        "hz-bad": (good + 'hz = [0]\n', "hz"),
        "hz-str": (good + 'hz = "250"\n', "hz"),
        "run-json": (good.replace("[run]\n", '[run]\njson = "x.json"\n'), "json"),
        "axis-trace": (good + 'trace = ["a", "b"]\n', "trace"),
        "run-dur-bare": (good.replace('duration = "10ms"', "duration = 10"), "duration"),
        "run-flag-str": (good.replace("[run]\n", '[run]\ncheck-invariants = "yes"\n'), "check-invariants"),
        "run-seed-neg": (good.replace("[run]\n", "[run]\nseed = -1\n"), "seed"),
        "features-bad": (good + '[axes.features]\na = "BOGUS"\n', "BOGUS"),
        "both-spellings": (good + 'idle_states = ["flat"]\nidle-states = ["C1:2us:2us"]\n', "idle"),
        "run-and-axis": (good.replace("[run]\n", "[run]\nhz = 250\n") + "hz = [100, 250]\n", "hz"),
        "syntax": ('name = "t\n', "plan"),
        "empty-file": ("", "name"),
        "run-topology-smp": (good.replace("[run]\n", '[run]\ntopology = "tc2"\n'), "topology"),
        "axes-workload-table": (good.replace('["hackbench:g=1,l=10"]', '[{ name = "x" }]'), "workload"),
    }
    for name, (text, names) in bad.items():
        p = write(scratch, f"plan-{name}.toml", text)
        refuse(cat, "sweep", p, *out(name), names=names)
    for v in ["0/2", "3/2", "1/0", "abc", "", "1/2/3", "-1/2", "1/" + U64_OVER, "2"]:
        refuse(cat, "sweep", gp, "--shard", v, *out("bad"), names="--shard")
    for v in BAD_NUMBERS + ["0"]:
        refuse(cat, "sweep", gp, "--jobs", v, "--out", os.path.join(scratch, "sw-bad"), names="--jobs")
    refuse(cat, "sweep", gp, "--shard", "1/2", "--until", "time-s:ci<5%", *out("bad"), names="--shard")
    refuse(cat, "sweep", gp, "--min-seeds", "2", *out("bad"), names="--min-seeds")
    refuse(cat, "sweep", gp, "--until", "time-s:ci<5%", "--min-seeds", "9", *out("bad"), names="--min-seeds")
    lp = write(scratch, "plan-long.toml", good.replace('"10ms"', '"1s"').replace(
        '"hackbench:g=1,l=10"', '"nanosleep:tasks=8,sleep=1us"'))
    for p in ["/proc/version/x", "/dev/null", os.path.join(scratch, "a-file"), ""]:
        refuse(cat, "sweep", lp, "--out", p, "--jobs", "1", names="--out", max_s=0.5)
    refuse(cat, "sweep", "/nonexistent.toml", names="/nonexistent.toml")
    refuse(cat, "sweep", "/dev/zero", names="/dev/zero")
    refuse(cat, "sweep", "merge", "--out", os.path.join(scratch, "m1"), names="DIR")
    refuse(cat, "sweep", "merge", "/nonexistent-a", "--out", os.path.join(scratch, "m2"),
           names="/nonexistent-a")
    refuse(cat, "sweep", "merge", os.path.join(scratch, "sw-shard1"), names="--out")
    refuse(cat, "sweep", "merge", os.path.join(scratch, "sw-shard1"), os.path.join(scratch, "sw-shard1"),
           "--out", os.path.join(scratch, "m3"), names="shard")
    refuse(cat, "sweep", "merge", scratch, "--out", os.path.join(scratch, "m4"), names=scratch)
    ok(cat, "sweep", os.path.join(scratch, "plan-kern.toml"), "--shard", "2/2", *out("kern-s2"))
    refuse(cat, "sweep", "merge", os.path.join(scratch, "sw-shard1"), os.path.join(scratch, "sw-kern-s2"),
           "--out", os.path.join(scratch, "m5"), names="plan", why="shards of two plans")
    refuse(cat, "sweep", gp, *out("feat"), names="--out",
           why="the directory holds another plan's points, which would mix with this plan's")
    # --until on sweep, which needs a plan: fill in the placeholders until_cases left.
    for c in CASES:
        if c.argv[:2] == ["sweep", "PLAN"]:
            c.argv[1] = gp
            c.argv += out("until-bad")
            c.cat = "until"


def machine_cases(scratch):
    cat = "machine-files"
    run = ["run", "--duration", "20ms", *HB, "--machine"]
    ok(cat, *run, write(scratch, "m-good.toml", 'name = "m"\n[smp]\nsockets = 1\ncores = 4\n'))
    ok(cat, *run, write(scratch, "m-good.json", '{"name": "m", "smp": {"sockets": 2, "cores": 2}, '
                        '"numa": {"distance": [[10, 21], [21, 10]]}}'))
    ok(cat, "topology", "--machine", os.path.join(scratch, "m-good.toml"))
    bad = {
        "m-unknown.toml": ('[smp]\ncores = 4\nbogus = 1\n', "bogus"),
        "m-unknown-top.toml": ('bogus = 1\n[smp]\ncores = 4\n', "bogus"),
        "m-nosmp.toml": ('name = "m"\n', "smp"),
        "m-cores0.toml": ('[smp]\ncores = 0\n', "cores"),
        "m-coresneg.toml": ('[smp]\ncores = -4\n', "cores"),
        "m-coresstr.toml": ('[smp]\ncores = "four"\n', "cores"),
        "m-coreshuge.toml": ('[smp]\ncores = 100000000\n', "cores"),
        "m-coresover.toml": ('[smp]\ncores = 18446744073709551616\n', "cores"),
        "m-syntax.toml": ('[smp\ncores = 4\n', "m-syntax.toml"),
        "m-dist.toml": ('[smp]\nsockets = 2\ncores = 2\n[numa]\ndistance = [[10, 21]]\n', "distance"),
        "m-distasym.toml": ('[smp]\nsockets = 2\ncores = 2\n[numa]\ndistance = [[10, 21], [20, 10]]\n', "distance"),
        "m-arch.toml": ('arch = "riscv"\n[smp]\ncores = 4\n', "arch"),
        "m-llc.toml": ('[smp]\ncores = 4\nllc = "l3"\n', "llc"),
        "m-cap.toml": ('capacity = "0-9:1024"\n[smp]\ncores = 4\n', "capacity"),
        "m-costs.toml": ('costs = "bogus"\n[smp]\ncores = 4\n', "bogus"),
        "m-idle.toml": ('idle_states = "bogus"\n[smp]\ncores = 4\n', "bogus"),
        "m-speed.toml": ('[smp]\ncores = 4\n[speed]\nbogus = "0-3:512"\n', "bogus"),
        "m-speed2.toml": ('[smp]\ncores = 4\n[speed]\nsysbench = "0-1:512"\n', "speed"),
        "m-cpufreq.toml": ('[smp]\ncores = 4\n[[cpufreq]]\ncpus = "0-3"\n', "cpufreq"),
        "m-cpufreq2.toml": ('[smp]\ncores = 4\n[[cpufreq]]\ncpus = "0-3"\ntransition_latency_ns = 1\nopps = []\n', "opps"),
        "m-empty.toml": ('', "m-empty.toml"),
        "m-bad.json": ('{"smp": {"cores": 4}', "m-bad.json"),
        "m-unknown.json": ('{"smp": {"cores": 4}, "bogus": 1}', "bogus"),
        "m-type.json": ('{"smp": {"cores": "4"}}', "cores"),
        "m-null.json": ('null', "m-null.json"),
        "m-array.json": ('[]', "m-array.json"),
        "m-empty.json": ('', "m-empty.json"),
        "gt-missing.json": ('{"guest_observed": {}}', "guest_observed"),
        "gt-bad.json": ('{"guest_observed": {"cpus": "x"}}', "guest_observed"),
        "m-ext.yaml": ('smp:\n  cores: 4\n', "m-ext.yaml"),
    }
    for name, (text, names) in bad.items():
        refuse(cat, *run, write(scratch, name, text), names=names)
        if name in ("m-unknown.toml", "m-bad.json", "m-nosmp.toml"):
            refuse(cat, "topology", "--machine", os.path.join(scratch, name), names=names)
    for p in ["/dev/null", "/dev/zero", "/nonexistent.toml", scratch]:
        refuse(cat, *run, p, names=p)
    refuse(cat, *run, os.path.join(scratch, "m-good.toml"), "--smp", "4", names="--machine")
    refuse(cat, *run, os.path.join(scratch, "m-good.toml"), "--llc", "core", names="--llc")
    # sysfs trees
    os.makedirs(os.path.join(scratch, "emptysys"), exist_ok=True)
    refuse(cat, "run", "--duration", "20ms", *HB, "--sysfs", os.path.join(scratch, "emptysys"),
           names="--sysfs")
    refuse(cat, "run", "--duration", "20ms", *HB, "--sysfs", "/nonexistent", names="/nonexistent")
    refuse(cat, "topology", "--sysfs", "/proc", names="/proc")
    refuse(cat, "topology", "--sysfs", os.path.join(scratch, "m-good.toml"), names="sysfs")


def topology_pelt_cases(scratch):
    cat = "topology-pelt"
    ok(cat, "topology", "--topology", "spr-2s56c2t", "--format", "dmesg")
    ok(cat, "topology", "--smp", "sockets=2,cores=4,threads=2", "--format", "json")
    ok(cat, "topology", "--topology", "tc2", "--format", "debugfs")
    ok(cat, "topology", "--topology", "e5-2690v2", "--cpuset", "0-19", "--format", "dmesg")
    ok(cat, "topology", "--smp", "4", "--features", "ILB_SNAPSHOT", "--relax-domain-level", "1")
    for opt, vals in [("--format", ["bogus", "", "JSON"]), ("--cpu", ["4", "-1", U64_OVER, "x"]),
                      ("--relax-domain-level", ["-2", "x", U64_OVER]),
                      ("--memory-budget", ["0", "-1"]), ("--features", ["BOGUS", "sis_util"]),
                      ("--topology", ["nosuch"]), ("--cpuset", ["0-9", ""])]:
        for v in vals:
            base = [] if opt == "--topology" else ["--smp", "4"]
            refuse(cat, "topology", *base, opt, v, names=opt)
    refuse(cat, "topology", "--smp", "sockets=64,cores=1024,threads=8", names="--smp",
           why="over CONFIG_NR_CPUS")
    ok(cat, "topology", "--smp", "4", "--relax-domain-level", "99",
       why="the kernel's relax_domain_level= takes any int (kstrtoint, no range check)")
    ok(cat, "topology", "--smp", "4", "--features", "SIS_UTIL,", why=EMPTY_FEATURE)
    ok(cat, "pelt")
    ok(cat, "pelt", "--pattern", "run=1ms,sleep=3ms", "--duration", "100ms", "--format", "csv")
    ok(cat, "pelt", "--pattern", "always", "--capacity", "446", "--freq", "0.6", "--util-est", "legacy")
    for opt, vals in [("--pattern", ["", "run=1ms", "sleep=1ms", "run=1ms,sleep=", "run=-1ms,sleep=1ms",
                                     "run=1ms,sleep=1ms,", "run=0ms,sleep=0ms", "bogus=1ms",
                                     "run=NaNms,sleep=1ms", "run=1,sleep=1"]),
                      ("--duration", BAD_DURATIONS + ["3601s", "0s"]),
                      ("--capacity", ["0", "1025", "-1", "NaN", ""]),
                      ("--freq", ["0", "1.5", "-0.5", "NaN", "inf", ""]),
                      ("--hz", ["0", "10001", "-1", ""]), ("--util-est", ["bogus", ""]),
                      ("--init", ["bogus", ""]), ("--format", ["bogus", ""])]:
        for v in vals:
            if opt == "--pattern" and v == "run=1ms":
                continue  # a single run=D is a task that never sleeps (its --help)
            refuse(cat, "pelt", opt, v, names=opt)


def feature_cases():
    cat = "features"
    ok(cat, "run", *SMALL, *HB, "--features", "default", why="issue 50 row 10: default is accepted")
    ok(cat, "run", *SMALL, *HB, "--features", "NO_SIS_UTIL,ILB_SNAPSHOT,ILB_FAST")
    ok(cat, "run", *SMALL, *HB, "--features", "")
    ok(cat, "run", *SMALL, *HB, "--kernel", "4.5", "--features", "SIS_FIRST_IDLE")
    for v in ["SIS_UTIL,", ",SIS_UTIL", "SIS_UTIL,,NI_RANDOM"]:
        ok(cat, "run", *SMALL, *HB, "--features", v, why=EMPTY_FEATURE)
    ok(cat, "run", *SMALL, *HB, "--features", "SIS_UTIL,NO_SIS_UTIL",
       why="the words are writes made in order, as echo SIS_UTIL then echo NO_SIS_UTIL > features: the last wins")
    for v in ["BOGUS", "sis_util", "NO_", "NO_NO_SIS_UTIL",
              "SIS_UTIL NI_RANDOM", "default,SIS_UTIL", "SIS_UTIL,BOGUS", "ILB_FAST", "ILB_UTIL",
              "SIS_UTIL=1"]:
        refuse(cat, "run", *SMALL, *HB, "--features", v, names="--features")
    refuse(cat, "run", *SMALL, *HB, "--kernel", "4.5", "--features", "SIS_UTIL", names="SIS_UTIL",
           why="4.5's features file has no SIS_UTIL")
    refuse(cat, "run", *SMALL, *HB, "--kernel", "3.9", "--features", "DELAY_DEQUEUE", names="DELAY_DEQUEUE")


TRACE_HEAD = """# tracer: nop
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
"""
SWITCH = ("          <idle>-0       [000] d..2.     0.000177: sched_switch: prev_comm=swapper/0 "
          "prev_pid=0 prev_prio=120 prev_state={st} ==> next_comm=hackbench next_pid=1 next_prio=120\n")


def report_cases(scratch):
    cat = "report"
    trace = os.path.join(scratch, "trace.txt")
    kinds = ["latency", "timehist", "map"]
    for k in kinds:
        ok(cat, "report", k, trace)
        refuse(cat, "report", k, "/dev/null", names="/dev/null")
        refuse(cat, "report", k, "/dev/zero", names="/dev/zero")
        refuse(cat, "report", k, os.path.join(scratch, "binary.bin"), names="binary.bin")
        ok(cat, "report", k, os.path.join(scratch, "nonewline.txt"),
           why="a valid trace whose last line has no newline is read, as perf reads it")
        refuse(cat, "report", k, os.path.join(scratch, "nonewline-big.txt"), names="nonewline-big.txt",
               why="20 MB with no newline: refused in bounded memory (issue 50 row 1)")
        refuse(cat, "report", k, os.path.join(scratch, "nuls.bin"), names="nuls.bin",
               why="a 50 MB file of NULs: refused in bounded memory (issue 50 row 1)")
        refuse(cat, "report", k, os.path.join(scratch, "qqq.txt"), names="QQQ",
               why="prev_state=QQQ is no state the kernel prints (issue 50 row 9)")
        refuse(cat, "report", k, os.path.join(scratch, "longline.txt"), names="longline.txt")
        refuse(cat, "report", k, scratch, names=scratch)
        refuse(cat, "report", k, "/nonexistent.txt", names="/nonexistent.txt")
        refuse(cat, "report", k, os.path.join(scratch, "noswitch.txt"), names="noswitch.txt")
        refuse(cat, "report", k, os.path.join(scratch, "garbage.txt"), names="garbage.txt")
        refuse(cat, "report", k, os.path.join(scratch, "perfetto.pb"), names="perfetto.pb")
        ok(cat, "report", k, stdin=b"TRACE", why="a trace piped in on stdin (no terminal)")
        ok(cat, "report", k, "-", stdin=b"TRACE")
        refuse(cat, "report", k, "-", stdin=b"", names="stdin")
        refuse(cat, "report", k, "-", stdin=b"\x00" * 100000, names="stdin")
        refuse(cat, "report", k, trace, "extra", names="extra")
    ok(cat, "report", "latency", "-p", trace)
    ok(cat, "report", "latency", "-s", "max,pid", trace)
    for v in ["avg,avg", "avg,", ",avg", "avg,,max"]:
        ok(cat, "report", "latency", "-s", v, trace,
           why="perf's setup_sorting splits the keys with strtok_r, which skips empty ones, and "
               "adds a repeated key again")
    for v in ["bogus", "AVG", "avg,bogus"]:
        refuse(cat, "report", "latency", "-s", v, trace, names="sort")
    refuse(cat, "report", "bogus", trace, names="bogus")
    fifo = os.path.join(scratch, "trace.fifo")
    os.mkfifo(fifo)

    def fifo_writer(scratch):
        with open(trace, "rb") as f:
            data = f.read()
        threading.Thread(target=lambda: open(fifo, "wb").write(data), daemon=True).start()
    ok(cat, "report", "latency", fifo, pre=fifo_writer,
       why="a FIFO with a writer, as report latency <(ssh host cat trace) gives it")
    refuse(cat, "report", "timehist", "-p", trace, names="-p")


def report_files(scratch, fairsim):
    """Files the report, schedstat and plot cases read, made in the scratch dir."""
    import subprocess
    # The trace, schedstat file and plot data the ok cases read, made by one preparing run
    # (not counted; the `setup` case makes the same again as a case of its own).
    subprocess.run([fairsim, "run", *SMALL, *HB, "--trace-text", "trace.txt", "--schedstat",
                    "schedstat.txt", "--plot", "plots"], cwd=scratch, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60, preexec_fn=limit_memory)
    if not os.path.exists(os.path.join(scratch, "trace.txt")):
        write(scratch, "trace.txt", "")
    write(scratch, "binary.bin", bytes(range(256)) * 64, mode="wb")
    with open(os.path.join(scratch, "trace.txt")) as f:
        write(scratch, "nonewline.txt", f.read().rstrip("\n"))
    with open(os.path.join(scratch, "nonewline-big.txt"), "wb") as f:
        for _ in range(20):
            f.write(b"x" * (1 << 20))
    with open(os.path.join(scratch, "nuls.bin"), "wb") as f:
        chunk = b"\x00" * (1 << 20)
        for _ in range(50):
            f.write(chunk)
    write(scratch, "qqq.txt", TRACE_HEAD + SWITCH.format(st="QQQ") * 3)
    write(scratch, "longline.txt", TRACE_HEAD + "x" * (8 << 20) + "\n")
    write(scratch, "noswitch.txt", TRACE_HEAD + "nothing here\n")
    write(scratch, "garbage.txt", "hello world\n" * 100)
    write(scratch, "perfetto.pb", b"\x0a\x10\x08\x01\x12\x0c" + bytes(200), mode="wb")
    write(scratch, "a-file", "not a directory\n")
    write(scratch, "rt.json", '{"global": {"duration": 1}, "tasks": {"small": {"loop": -1, "run": 2000, '
          '"timer": {"ref": "unique", "period": 16000}}}}')
    write(scratch, "plot-bad.json", '{"bogus": 1}')
    write(scratch, "ss-bad.txt", "version 99\ntimestamp 1\n")
    write(scratch, "ss-garbage.txt", "cpu0 a b c\n")


def schedstat_plot_cases(scratch):
    cat = "schedstat-plot"
    ss = os.path.join(scratch, "schedstat.txt")
    ok(cat, "schedstat", "show", ss)
    ok(cat, "schedstat", "diff", ss, ss)
    for f in ["/dev/null", "/dev/zero", "/nonexistent", scratch, os.path.join(scratch, "binary.bin"),
              os.path.join(scratch, "ss-bad.txt"), os.path.join(scratch, "ss-garbage.txt"),
              os.path.join(scratch, "nuls.bin")]:
        refuse(cat, "schedstat", "show", f, names=f)
        refuse(cat, "schedstat", "diff", ss, f, names=f)
    refuse(cat, "schedstat", "show", names="FILE")
    refuse(cat, "schedstat", "diff", ss, names="AFTER")
    refuse(cat, "schedstat", "diff", ss, os.path.join(scratch, "race-schedstat"), names="schedstat",
           why="two snapshots of different machines (4 CPUs, 2 CPUs)")
    pd = os.path.join(scratch, "plots", "plot-data.json")
    ok(cat, "plot", pd, "--out", os.path.join(scratch, "replot"))
    for f in ["/dev/null", "/dev/zero", "/nonexistent.json", os.path.join(scratch, "plot-bad.json"),
              os.path.join(scratch, "binary.bin"), os.path.join(scratch, "nuls.bin")]:
        refuse(cat, "plot", f, "--out", os.path.join(scratch, "replot2"), names=f)
    refuse(cat, "plot", "--criterion", "/nonexistent", "--out", os.path.join(scratch, "replot3"),
           names="/nonexistent")
    refuse(cat, "plot", pd, "--out", os.path.join(scratch, "a-file"), names="a-file")
    refuse(cat, "plot", pd, "--out", "/proc/version/x", names="/proc/version/x")
    refuse(cat, "plot", names="plot", why="nothing to draw")


def orphan_cases(scratch):
    """An option that modifies an output or a mode the command line does not ask for: the
    project refuses these (`--trace-window` without a trace, `--rtapp-log` without an
    rt-app workload, `--idle-states` with `--cpuidle none`, `--numa-cpus` without
    `--numa-distance`), since a dropped option is a silent one."""
    cat = "orphan-options"
    run = ["run", *SMALL, *HB]
    race = ["race", "--smp", "2", "--threads", "2", "--duration", "50ms"]
    for argv, names in [
            (run + ["--trace-window", "1ms..2ms"], "--trace-window"),
            (run + ["--rtapp-log", os.path.join(scratch, "rl")], "--rtapp-log"),
            (run + ["--cpuidle", "none", "--idle-states", "spr"], "--idle-states"),
            (run + ["--numa-cpus", "0-1;2-3"], "--numa-cpus"),
            (run + ["--schedstat-sg-scan"], "--schedstat-sg-scan"),
            (run + ["--schedstat-version", "15"], "--schedstat-version"),
            (race + ["--schedstat-sg-scan"], "--schedstat-sg-scan"),
            (race + ["--schedstat-version", "15"], "--schedstat-version"),
            (["topology", "--smp", "4", "--cpu", "3", "--format", "json"], "--cpu"),
            (["topology", "--smp", "4", "--cpu", "3", "--format", "dmesg"], "--cpu"),
            (["compare", *SMALL, *HB, "--new", "", "--seeds", "5", "--min-seeds", "3"], "--min-seeds"),
            (["sweep", os.path.join(scratch, "plan-good.toml"), "--min-seeds", "2", "--out",
              os.path.join(scratch, "sw-orphan")], "--min-seeds")]:
        refuse(cat, *argv, names=names, why="the option has nothing to act on")
    refuse(cat, "run", write(scratch, "orphan-version.toml", 'smp = "4"\nduration = "20ms"\n'
                              'workload = ["hackbench:g=1,l=10"]\nschedstat_version = 15\n'),
           names="schedstat_version", why="the scenario's schedstat_version without schedstat")


def stdout_cases(scratch):
    """stdout that cannot be written (/dev/full: every write fails with ENOSPC): exit
    status 4 and `writing stdout: ...` (docs/errors.md), never a silent 0."""
    cat = "stdout-full"
    trace = os.path.join(scratch, "trace.txt")
    for argv in [["run", *SMALL, *HB], ["compare", *SMALL, *HB, "--new", "", "--seeds", "2"],
                 ["report", "timehist", trace], ["report", "latency", trace], ["report", "map", trace],
                 ["topology", "--smp", "4"], ["topology", "--list-presets"], ["features"], ["pelt"],
                 ["schedstat", "show", os.path.join(scratch, "schedstat.txt")],
                 ["race", "--smp", "2", "--threads", "2", "--duration", "50ms"],
                 ["--help"], ["-V"], ["run", "--help"], ["report", "latency", "--help"], ["help", "sweep"]]:
        refuse(cat, *argv, names="stdout", stdout="/dev/full",
               why="stdout is /dev/full: the output is lost, so the exit status must say so")
        CASES[-1].after_run = argv[0] == "run"


def limit_cases(scratch):
    """The largest machines and workloads the options accept: each must run, or be refused
    by the memory budget, within the timeout and the 4 GiB cap."""
    cat = "limits"
    big = ["--smp", "8192", "--duration", "5ms"]
    ok(cat, "run", *big, *HB)
    ok(cat, "run", *big, *HB, "--json", os.path.join(scratch, "big.json"))
    ok(cat, "run", *big, *HB, "--profile", "--report", "map")
    ok(cat, "compare", *big, *HB, "--new", "", "--seeds", "2")
    ok(cat, "race", "--smp", "8192", "--duration", "100ms")
    ok(cat, "topology", "--smp", "8192")
    ok(cat, "topology", "--smp", "8192", "--format", "debugfs")
    ok(cat, "topology", "--smp", "1024", "--format", "dmesg")
    # The JSON lists every domain's span, so its size grows with CPUs^2: 614 MB at 2048
    # CPUs, 9.8 GB at 8192. It is streamed (peak RSS 28 MB at 2048 CPUs, 174 MB at 8192),
    # so memory is bounded at any size; the time is that of writing the bytes, which at
    # 8192 CPUs is past this sweep's 10 s, so the case is the 2048-CPU one.
    bounded(cat, "topology", "--smp", "sockets=2,cores=512,threads=2", "--format", "json",
            why="2048 CPUs: a 614 MB JSON streamed in bounded memory", stdout="/dev/null")
    refuse(cat, "run", *big, "-w", "nanosleep:tasks=16777216", names="budget")
    refuse(cat, "run", "--smp", "4", "-w", "hackbench:g=1048576,l=4294967296", names="budget")
    refuse(cat, "pelt", "--duration", "3600s", "--pattern", "run=1ns,sleep=1ns", names="--pattern")
    refuse(cat, "compare", *SMALL, *HB, "--new", "", "--seeds", "1000000000", names="--seeds")
    plan = write(scratch, "plan-huge.toml", 'name = "t"\n[run]\nduration = "1ms"\n[axes]\n'
                 'machines = [{ name = "m4", smp = "4" }]\nworkloads = ['
                 + ", ".join(f'"hackbench:g=1,l={i}"' for i in range(1, 1001))
                 + ']\nseeds = 10000\nhz = [100, 250, 300, 1000]\n')
    refuse(cat, "sweep", plan, "--out", os.path.join(scratch, "sw-huge"), "--jobs", "1",
           names="points")


def setup_cases(scratch):
    """Runs whose outputs the later cases read; ok cases in their own right."""
    cat = "setup"
    ok(cat, "run", *SMALL, *HB, "--trace-text", os.path.join(scratch, "setup-trace.txt"),
       "--schedstat", os.path.join(scratch, "setup-schedstat.txt"), "--plot",
       os.path.join(scratch, "setup-plots"), "--trace", os.path.join(scratch, "setup-trace.pftrace"))


def build_cases(scratch, fairsim):
    report_files(scratch, fairsim)
    setup_cases(scratch)
    help_cases()
    workload_cases(scratch)
    kernel_cases()
    run_option_cases(scratch)
    workload_bad_cases(scratch)
    rtapp_cases(scratch)
    compare_cases(scratch)
    until_cases()
    race_cases(scratch)
    output_cases(scratch)
    cgroup_cases(scratch)
    scenario_cases(scratch)
    sweep_cases(scratch)
    machine_cases(scratch)
    topology_pelt_cases(scratch)
    feature_cases()
    report_cases(scratch)
    schedstat_plot_cases(scratch)
    limit_cases(scratch)
    orphan_cases(scratch)
    stdout_cases(scratch)


# --------------------------------------------------------------------------------------
# Running


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_CAP, MEM_CAP))


def feed(fd, data):
    try:
        with os.fdopen(fd, "wb") as w:
            w.write(data)
    except (BrokenPipeError, OSError):
        pass


def invoke(fairsim, argv, scratch, stdin_data, tag, stdout_to=None):
    """Runs one invocation; returns (rc, stderr text, stdout bytes, seconds, maxrss KiB, timed_out)."""
    import subprocess

    out_path = stdout_to or os.path.join(scratch, "io", tag + ".out")
    err_path = os.path.join(scratch, "io", tag + ".err")
    env = dict(os.environ)
    env.pop("RUST_BACKTRACE", None)
    env["NO_COLOR"] = "1"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        if stdin_data is None:
            stdin = subprocess.DEVNULL
            r = None
        else:
            r, w = os.pipe()
            stdin = r
            threading.Thread(target=feed, args=(w, stdin_data), daemon=True).start()
        t0 = time.monotonic()
        p = subprocess.Popen([fairsim] + argv, stdin=stdin, stdout=out, stderr=err, cwd=scratch,
                             env=env, preexec_fn=limit_memory, start_new_session=True)
        if r is not None:
            os.close(r)
        timed_out = False
        rusage = None
        status = None
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                status, rusage = st, ru
                break
            if time.monotonic() - t0 > TIMEOUT_S:
                timed_out = True
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _, status, rusage = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
        secs = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(err_path, "rb") as f:
        stderr = f.read(1 << 20).decode("utf-8", "replace")
    stdout_head = b""
    if stdout_to is None:
        with open(out_path, "rb") as f:
            stdout_head = f.read(4096)
        os.unlink(out_path)
    os.unlink(err_path)
    return p.returncode, stderr, stdout_head, secs, rusage.ru_maxrss, timed_out


def classify(case, rc, stderr, maxrss, timed_out, secs):
    """The findings of one invocation: (severity, kind, detail)."""
    f = []
    if "panicked" in stderr or "RUST_BACKTRACE" in stderr:
        f.append(("High", "panic", first_lines(stderr)))
    if timed_out:
        f.append(("High", "timeout", f"killed after {TIMEOUT_S:.0f} s"))
    elif rc < 0 or rc in (134, 137, 139):
        mem = "memory allocation" in stderr or "out of memory" in stderr.lower()
        f.append(("High", "memory blow-up" if mem else "killed by a signal",
                  f"exit {rc}: " + first_lines(stderr)))
    if "memory allocation of" in stderr or "capacity overflow" in stderr:
        f.append(("High", "memory blow-up", first_lines(stderr)))
    if maxrss > RSS_BLOWUP_KIB:
        f.append(("High", "memory blow-up", f"peak RSS {maxrss // 1024} MiB"))
    if f:
        return f
    if case.expect == "bounded":
        # A run (exit 0) or a one-line refusal are both right.
        lines = stderr.strip().splitlines()
        if rc != 0 and len(lines) != 1:
            f.append(("Low", "multi-line refusal" if lines else "empty refusal",
                      f"exit {rc}: " + first_lines(stderr)))
    elif case.expect == "ok":
        if rc != 0:
            f.append(("Medium", "ok case failed", f"exit {rc}: " + first_lines(stderr)))
    else:
        if rc == 0:
            f.append(("Medium", "silent acceptance", "exit 0" + (": " + first_lines(stderr) if stderr.strip() else "")))
        else:
            lines = stderr.strip().splitlines()
            if case.after_run:
                lines = [l for l in lines if not l.startswith("fairsim: emulated ")]
            if not lines:
                f.append(("Low", "empty refusal", f"exit {rc}, nothing on stderr"))
            elif len(lines) > 1:
                f.append(("Low", "multi-line refusal", f"exit {rc}, {len(lines)} lines: " + first_lines(stderr)))
            elif case.names and case.names.lower() not in stderr.lower():
                f.append(("Low", "refusal does not name it",
                          f"expected '{case.names}' in: " + stderr.strip()[:300]))
            if case.max_s is not None and secs > case.max_s:
                f.append(("Low", "late refusal",
                          f"refused after {secs:.2f} s (the work ran first; a refusal before it "
                          f"takes under {case.max_s} s): " + stderr.strip()[:200]))
    return f


def first_lines(text, n=3):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    s = " | ".join(lines[:n])
    if len(lines) > n:
        s += f" | ... ({len(lines)} lines)"
    return s[:600]


def cmdline(fairsim, argv, stdin, stdout=None):
    s = shlex.join([fairsim] + argv)
    if len(s) > 400:
        s = s[:400] + f" ... ({len(argv)} arguments)"
    if stdin is not None:
        s += f"  < pipe of {len(stdin)} bytes"
    if stdout is not None:
        s += f" > {stdout}"
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fairsim", default="target/release/fairsim", help="the binary (default %(default)s)")
    ap.add_argument("--scratch", default="/tmp/fairsim-user-path",
                    help="scratch dir, emptied first (default %(default)s)")
    ap.add_argument("--out", help="results file, JSON lines (default SCRATCH/results.jsonl)")
    ap.add_argument("--only", help="run only the categories in this comma-separated list")
    ap.add_argument("--verbose", "-v", action="store_true", help="print each invocation")
    args = ap.parse_args()

    fairsim = os.path.abspath(args.fairsim)
    if not os.access(fairsim, os.X_OK):
        sys.exit(f"sweep.py: --fairsim {fairsim}: not an executable file")
    scratch = os.path.abspath(args.scratch)
    if os.path.exists(scratch):
        shutil.rmtree(scratch)
    os.makedirs(os.path.join(scratch, "io"))
    out_path = args.out or os.path.join(scratch, "results.jsonl")
    if os.path.dirname(os.path.abspath(out_path)).startswith(scratch + "/io"):
        sys.exit("sweep.py: --out inside the scratch dir's io/ is overwritten")

    build_cases(scratch, fairsim)
    only = set(args.only.split(",")) if args.only else None
    cases = [c for c in CASES if only is None or c.cat in only or c.cat == "setup"]
    trace_text = None

    t_start = time.monotonic()
    results = []
    n_inv = 0
    with open(out_path, "w") as out:
        for i, c in enumerate(cases):
            if c.stdin == b"TRACE":
                if trace_text is None:
                    with open(os.path.join(scratch, "trace.txt"), "rb") as f:
                        trace_text = f.read()
                c.stdin = trace_text
            runs = 2 if c.det else 1
            jsons = []
            for r in range(runs):
                argv = list(c.argv)
                if c.det:
                    jp = os.path.join(scratch, f"det-{i}-{r}.json")
                    argv += ["--json", jp]
                    jsons.append(jp)
                if c.pre is not None:
                    c.pre(scratch)
                rc, stderr, stdout_head, secs, maxrss, timed_out = invoke(
                    fairsim, argv, scratch, c.stdin, f"{i}-{r}", c.stdout)
                n_inv += 1
                findings = classify(c, rc, stderr, maxrss, timed_out, secs)
                line = cmdline(fairsim, argv, c.stdin, c.stdout)
                rec = {"index": i, "run": r, "category": c.cat, "expect": c.expect, "argv": argv,
                       "command": line, "exit": rc, "seconds": round(secs, 3), "maxrss_kib": maxrss,
                       "timed_out": timed_out, "stderr": stderr[:2000], "names": c.names, "why": c.why,
                       "findings": [{"severity": s, "kind": k, "detail": d} for s, k, d in findings]}
                if c.check is not None:
                    text = c.check(scratch)
                    if text:
                        findings.append(("Low", "surprising output", text))
                        rec["findings"].append({"severity": "Low", "kind": "surprising output",
                                                "detail": text})
                out.write(json.dumps(rec) + "\n")
                for s, k, d in findings:
                    c.findings.append((s, k, d, line))
                if args.verbose:
                    flag = ",".join(k for _, k, _ in findings) or "-"
                    print(f"[{n_inv:4}] {c.cat:16} {c.expect:6} exit {rc:4} {secs:6.2f}s {flag:20} {line[:150]}",
                          flush=True)
            if c.det and len(jsons) == 2 and all(os.path.exists(j) for j in jsons):
                with open(jsons[0], "rb") as a, open(jsons[1], "rb") as b:
                    same = a.read() == b.read()
                if not same:
                    c.findings.append(("Medium", "not deterministic", "--json files differ",
                                       cmdline(fairsim, c.argv, c.stdin)))
                out.write(json.dumps({"index": i, "category": c.cat, "determinism": same,
                                      "files": jsons}) + "\n")
            elif c.det:
                c.findings.append(("Medium", "not deterministic", "a --json file is missing",
                                   cmdline(fairsim, c.argv, c.stdin)))
            results.append(c)
    elapsed = time.monotonic() - t_start
    return report(results, n_inv, elapsed, out_path, fairsim)


def report(cases, n_inv, elapsed, out_path, fairsim):
    sev_order = ["High", "Medium", "Low"]
    by_cat = defaultdict(Counter)
    n_refuse = sum(1 for c in cases if c.expect == "refuse")
    for c in cases:
        by_cat[c.cat]["cases"] += 1
        by_cat[c.cat][c.expect] += 1
        for s, *_ in c.findings:
            by_cat[c.cat][s] += 1
    print(f"fairsim user-path sweep: {fairsim}")
    n_ok = sum(1 for c in cases if c.expect == "ok")
    print(f"{n_inv} invocations ({len(cases)} cases: {n_refuse} refuse, {n_ok} ok "
          f"({sum(c.det for c in cases)} of them run twice for determinism), "
          f"{len(cases) - n_refuse - n_ok} bounded) in {elapsed:.0f} s")
    print()
    print(f"{'category':18} {'cases':>5} {'ok':>4} {'refuse':>6} {'bound':>5} {'High':>5} {'Medium':>6} {'Low':>4}")
    tot = Counter()
    for cat in sorted(by_cat):
        r = by_cat[cat]
        tot.update(r)
        print(f"{cat:18} {r['cases']:5} {r['ok']:4} {r['refuse']:6} {r['bounded']:5} {r['High']:5} {r['Medium']:6} {r['Low']:4}")
    print(f"{'total':18} {tot['cases']:5} {tot['ok']:4} {tot['refuse']:6} {tot['bounded']:5} {tot['High']:5} {tot['Medium']:6} {tot['Low']:4}")
    kinds = Counter((s, k) for c in cases for s, k, _, _ in c.findings)
    if kinds:
        print()
        print("findings by kind: " + ", ".join(f"{s} {k}: {n}" for (s, k), n in
                                              sorted(kinds.items(), key=lambda x: sev_order.index(x[0][0]))))
    for sev in sev_order:
        fs = [(c, f) for c in cases for f in c.findings if f[0] == sev]
        if not fs:
            continue
        print()
        print(f"== {sev} ({len(fs)})")
        for c, (s, k, d, line) in fs:
            print(f"- [{c.cat}] {k} ({c.expect}): {d}")
            print(f"    {line}")
    print()
    print(f"results: {out_path}")
    bad = tot["High"] + tot["Medium"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

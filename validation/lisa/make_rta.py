#!/usr/bin/env python3
"""Writes the rt-app JSON files of tests/data/rtapp/lisa/ with LISA's own generator.

    python3 -m venv /tmp/rta-venv
    /tmp/rta-venv/bin/pip install lisa-linux==3.1.0 'numpy<2' 'pyarrow<16' nest_asyncio
    /tmp/rta-venv/bin/python validation/lisa/make_rta.py [OUT_DIR]

OUT_DIR defaults to tests/data/rtapp/lisa.

    /tmp/rta-venv/bin/python validation/lisa/make_rta.py --check target/debug/fairsim

writes them afresh in a scratch directory, compares them byte for byte with the committed
ones, and runs each committed file through `fairsim run --topology rk3399 --duration 1s`
(each under refused/ must fail with one `error:` line naming a key of `tasks`).

No target is needed: `RTA.from_profile(target,
profile, ...)` builds its JSON with `RTAConf.from_profile(profile, plat_info=
target.plat_info, run_dir=..., lock_pages=as_root, ...)` and only pushes the file to the
target when the workload is deployed (`RTA._setup`, on `run()` or `with wload:`). This
script calls `RTA.from_profile` on a stand-in target that carries only what it reads
before that (`plat_info`, `path`, `working_directory`): the `PlatformInfo` a LISA target
would report for fairsim's rk3399 (6 CPUs, capacities 381 and 1024, its frequency domains,
one NUMA node, kernel 6.12 with CONFIG_UCLAMP_TASK, CONFIG_CGROUP_SCHED and CONFIG_HZ=250,
an rt-app calibration inversely proportional to capacity). It writes `RTA.conf.json`, the
text `_setup` would push, after checking that `RTAConf.from_profile` gives the same.

Each file is one of LISA's ways to write a workload:
- the phase API (`RTAPhase`, `PeriodicWload`, `DutyCycleSweepPhase`, `SweepPhase`, `+`,
  properties such as `uclamp`, `cpus`, `policy`, `priority`; LISA 3.1 cannot write
  SCHED_BATCH: its PriorityProperty has no default for it and every phase's JSON asks
  for the defaults, so `policy="SCHED_BATCH"` fails with KeyError), with LISA's default
  `force_defaults=False` and with `force_defaults=True` as LISA's own test bundles write
  them (`RTATestBundle._run_rtapp`);
- the task shapes of LISA 2 kept by 3.1 (`Periodic`, `Ramp`, `Step`, `Pulse`);
- the profiles of LISA's scheduler test bundles (`get_rtapp_profile(plat_info)`), exactly
  as `RTATestBundle` writes them;
- under refused/, files fairsim refuses in one line (what LISA can write that fairsim does
  not model).
"""

import os
import posixpath
import sys
import tempfile
import types
import warnings

from devlib.target import KernelConfigTristate, KernelVersion, TypedKernelConfig
from lisa.platforms.platinfo import PlatformInfo
from lisa.version import __version__ as LISA_VERSION
from lisa.wlgen.rta import (
    DutyCycleSweepPhase,
    LockWload,
    Periodic,
    PeriodicWload,
    Pulse,
    Ramp,
    RTA,
    RTAConf,
    RTAPhase,
    RunAndSync,
    RunForTimeWload,
    RunWload,
    SleepWload,
    Step,
    SweepPhase,
    TimerWload,
    YieldWload,
)

# LISA 3.1 marks the LISA 2 task shapes deprecated (with warnings it turns into errors).
warnings.resetwarnings()
warnings.simplefilter("ignore")

CAPACITY = {0: 381, 1: 381, 2: 381, 3: 381, 4: 1024, 5: 1024}
YES = KernelConfigTristate.YES

PLAT_INFO = PlatformInfo(
    {
        "name": "rk3399",
        "abi": "arm64",
        "os": "linux",
        "cpus-count": 6,
        "numa-nodes-count": 1,
        "kernel": {
            "version": KernelVersion("6.12.0"),
            "config": TypedKernelConfig(
                {"CONFIG_UCLAMP_TASK": YES, "CONFIG_CGROUP_SCHED": YES, "CONFIG_HZ": 250}
            ),
        },
        "cpu-capacities": {"writeable": False, "orig": CAPACITY},
        # rt-app's calibration (ns per loop) is inversely proportional to capacity.
        "rtapp": {"calib": {c: round(100 * 1024 / cap) for c, cap in CAPACITY.items()}},
        "freq-domains": [[0, 1, 2, 3], [4, 5]],
        "freqs": {
            **{c: [408000, 600000, 816000, 1008000, 1200000, 1416000] for c in range(4)},
            **{
                c: [408000, 600000, 816000, 1008000, 1200000, 1416000, 1608000, 1800000]
                for c in (4, 5)
            },
        },
    }
)

# The target's working directory and the workload's run directory under it: RTA writes
# WORKDIR/lisa/wlgen/RUN_DIR as global.logdir (fairsim ignores it). RTA names the run
# directory after the date and a random UUID unless given one; a fixed one keeps the files
# the same from one run of this script to the next.
TARGET_WORKDIR = "/root"
RUN_DIR = "rta"


def periodic(dc, duration, period=16e-3, **kw):
    return RTAPhase(
        prop_wload=PeriodicWload(duty_cycle_pct=dc, period=period, duration=duration),
        **kw,
    )


def phase_api():
    """The RTAPhase API, as LISA's documentation shows it."""
    return {
        # One periodic task, and one whose sleep is a sleep (not rt-app's timer).
        "periodic": {
            "per": periodic(20, 1),
            "sleeper": RTAPhase(
                prop_wload=PeriodicWload(
                    duty_cycle_pct=30, period=10e-3, duration=1, guaranteed_time="sleep"
                )
            ),
        },
        # A duty-cycle sweep: 10% to 90% by 20, each step 200 ms of a 16 ms period.
        "sweep": {
            "sweep": DutyCycleSweepPhase(
                template=RTAPhase(),
                start=10,
                stop=90,
                step=20,
                period=16e-3,
                duration=0.2,
                duration_of="step",
            ),
        },
        # The same sweep over a total of 1 s, downwards, with the properties of the
        # template (uclamp, cpus) kept in every step.
        "sweep_props": {
            "down": DutyCycleSweepPhase(
                template=RTAPhase(prop_uclamp=(128, 768), prop_cpus=[4, 5]),
                start=60,
                stop=20,
                step=-20,
                period=20e-3,
                duration=1,
                duration_of="total",
            ),
        },
        # A sweep on another property: the phase's CPUs (rt-app's per-phase affinity).
        "cpu_sweep": {
            "hop": SweepPhase(
                template=periodic(40, 0.25),
                key="cpus",
                values=[[0], [4], [1, 2], [5]],
            ),
        },
        # Phases composed with '+' and '*', raw run/sleep workloads, and properties:
        # nice, a clamp on the whole task, and a task-wide CPU set narrowed in a phase.
        "composed": {
            "comp": (
                periodic(10, 0.2)
                + RTAPhase(prop_wload=RunWload(0.05) + SleepWload(0.05)) * 2
                + periodic(60, 0.3, prop_cpus=[4, 5])
            ).with_props(priority=5, uclamp=(200, 900)),
            "bg": periodic(5, 1, prop_policy="SCHED_IDLE"),
        },
        # LISA's workload objects in one phase (a repeated event becomes run-1), in a
        # task group, and
        # LISA 2 task options: delay_s (a sleep phase of its own) and sched_policy.
        "events": {
            "seq": RTAPhase(
                prop_wload=RunWload(0.01)
                + SleepWload(0.02)
                + RunWload(0.01)
                + RunForTimeWload(0.005)
                + TimerWload(0.05),
                prop_taskgroup="/lisa/seq",
            )
            * 10,
            "late": Ramp(
                start_pct=10, end_pct=30, delta_pct=10, time_s=0.2, period_ms=16, delay_s=0.1
            ),
            "idle": Periodic(
                duty_cycle_pct=50, duration_s=0.5, period_ms=10, sched_policy="IDLE", priority=0
            ),
        },
    }


def legacy_shapes():
    """LISA 2's task shapes, still in 3.1."""
    return {
        "ramp": {"ramp": Ramp(start_pct=10, end_pct=70, delta_pct=20, time_s=0.2, period_ms=16)},
        "step": {"step": Step(start_pct=20, end_pct=80, time_s=0.4, period_ms=16)},
        "pulse": {"pulse": Pulse(start_pct=80, end_pct=10, time_s=0.3, period_ms=16)},
        "legacy_periodic": {
            "per": Periodic(duty_cycle_pct=25, duration_s=1, period_ms=10, cpus=[4, 5]),
            "ramp_up": Ramp(start_pct=5, end_pct=95, delta_pct=30, time_s=0.25, period_ms=10),
        },
    }


def test_bundles():
    """The profiles of LISA's scheduler test bundles, as RTATestBundle writes them."""
    from lisa.tests.scheduler import eas_behaviour, misfit, util_tracking
    from lisa.tests.staging import utilclamp

    out = {}
    for mod, names in (
        (
            eas_behaviour,
            [
                "OneSmallTask",
                "ThreeSmallTasks",
                "TwoBigTasks",
                "TwoBigThreeSmall",
                "EnergyModelWakeMigration",
                "RampUp",
                "RampDown",
            ],
        ),
        (misfit, ["StaggeredFinishes"]),
        (util_tracking, ["UtilConvergence"]),
        (utilclamp, ["UtilClamp"]),
    ):
        for name in names:
            cls = getattr(mod, name)
            try:
                profile = cls.get_rtapp_profile(PLAT_INFO)
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"skip {name}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            out[f"bundle_{name}"] = profile
    return out


# LISA test bundles whose profile fairsim refuses.
REFUSED_BUNDLES = ["bundle_UtilClamp"]


def refused():
    """What LISA writes that fairsim does not model."""
    return {
        "fifo": {"rt": periodic(20, 0.5, prop_policy="SCHED_FIFO", prop_priority=50)},
        "barrier": {
            "t1": RunAndSync(barrier="b", time_s=0.1),
            "t2": RunAndSync(barrier="b", time_s=0.1),
        },
        "yield": {"y": RTAPhase(prop_wload=RunWload(0.01) + YieldWload())},
        "lock": {"lk": RTAPhase(prop_wload=LockWload("m") + RunWload(0.01) + LockWload("m", action="unlock"))},
        # A clamp that changes between phases: rt-app sets it mid-run.
        "uclamp_change": {
            "clamp": periodic(20, 0.5, prop_uclamp=(0, 256)) + periodic(20, 0.5, prop_uclamp=(512, 1024)),
        },
        "nice_change": {
            "nice": periodic(20, 0.5, prop_priority=0) + periodic(20, 0.5, prop_priority=10),
        },
    }


def write(out_dir, name, profile, quiet=False, **kw):
    # RTA.from_profile itself, on a stand-in for a target: all it reads of one before
    # the workload is deployed (_setup pushes the file) is plat_info, path and
    # working_directory (for the run directory it writes as global.logdir).
    target = types.SimpleNamespace(
        plat_info=PLAT_INFO, path=posixpath, working_directory=TARGET_WORKDIR
    )
    with tempfile.TemporaryDirectory() as res_dir:
        wload = RTA.from_profile(target, profile, res_dir=res_dir, run_dir=RUN_DIR, **kw)
    text = wload.conf.json
    # The same bytes as RTAConf.from_profile, which RTA.from_profile calls.
    conf = RTAConf.from_profile(
        profile, plat_info=PLAT_INFO, run_dir=wload.run_dir, lock_pages=False, **kw
    )
    assert text == conf.json, name
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w") as f:
        f.write(text)
    if not quiet:
        print(path)


def check(fairsim):
    """Writes the files afresh, compares them with the committed ones byte for byte,
    and runs each through `fairsim run --topology rk3399 --duration 1s`: the files run,
    the refused ones fail with one line that names a key."""
    import filecmp
    import subprocess
    import tempfile

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        write_all(tmp, quiet=True)
        for sub in ("", "refused"):
            fresh = sorted(f for f in os.listdir(os.path.join(tmp, sub)) if f.endswith(".json"))
            kept = sorted(
                f for f in os.listdir(os.path.join(DATA_DIR, sub)) if f.endswith(".json")
            )
            if fresh != kept:
                failures.append(f"{sub or '.'}: files {fresh} written, {kept} committed")
            for name in fresh:
                a, b = os.path.join(tmp, sub, name), os.path.join(DATA_DIR, sub, name)
                if os.path.exists(b) and not filecmp.cmp(a, b, shallow=False):
                    failures.append(f"{os.path.join(sub, name)}: LISA writes it differently now")
        for sub in ("", "refused"):
            for name in sorted(os.listdir(os.path.join(DATA_DIR, sub))):
                if not name.endswith(".json"):
                    continue
                path = os.path.join(DATA_DIR, sub, name)
                cmd = [fairsim, "run", "--topology", "rk3399", "-w", f"rtapp:{path}"]
                r = subprocess.run(
                    cmd + ["--duration", "1s"], capture_output=True, text=True
                )
                errors = [l for l in r.stderr.splitlines() if "error:" in l]
                if sub == "":
                    ok = r.returncode == 0
                else:
                    ok = r.returncode != 0 and len(errors) == 1 and ": tasks." in errors[0]
                label = os.path.join(sub, name)
                print(f"{'ok  ' if ok else 'FAIL'} {label}" + (f": {errors[0]}" if errors else ""))
                if not ok:
                    failures.append(f"{label}: rc {r.returncode}: {r.stderr.strip()}")
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    return 1 if failures else 0


DATA_DIR = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "rtapp", "lisa")
)


def main():
    if sys.argv[1:2] == ["--check"]:
        if len(sys.argv) != 3:
            sys.exit("usage: make_rta.py --check FAIRSIM_BINARY")
        sys.exit(check(sys.argv[2]))
    write_all(sys.argv[1] if len(sys.argv) > 1 else DATA_DIR)


def write_all(out_dir, quiet=False):
    out_dir = os.path.normpath(out_dir)
    os.makedirs(os.path.join(out_dir, "refused"), exist_ok=True)
    print(f"LISA {LISA_VERSION}", file=sys.stderr)
    for name, profile in {**phase_api(), **legacy_shapes()}.items():
        write(out_dir, name, profile, quiet=quiet)
    # LISA's own test bundles force every default into the first phase.
    forced = dict(force_defaults=True, no_force_default_keys=["taskgroup"])
    write(out_dir, "periodic_defaults", phase_api()["periodic"], quiet=quiet, **forced)
    write(out_dir, "composed_defaults", phase_api()["composed"], quiet=quiet, **forced)
    for name, profile in test_bundles().items():
        # UtilClamp's phases each set another clamp: rt-app sets them mid-run.
        where = "refused" if name in REFUSED_BUNDLES else ""
        write(os.path.join(out_dir, where), name, profile, quiet=quiet, **forced)
    for name, profile in refused().items():
        write(os.path.join(out_dir, "refused"), name, profile, quiet=quiet)


if __name__ == "__main__":
    main()

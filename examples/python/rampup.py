#!/usr/bin/env python3
# %% [markdown]
# # Seed 003's ramp-up on rk3399, from Python
#
# A task that ramps up (`examples/rtapp/ramp.json`: 16 ms periods whose work grows from
# 10% to 90% of capacity 1024 in five 400 ms steps) on the rk3399 (4 little, 2 big CPUs)
# under schedutil, with util_est off and with 6.12's util_est: seed 003's question, how
# fast the frequency and the placement follow the task's growth.
#
# Run as a script (what CI does) or open as a notebook (the `# %%` cells are jupytext's
# percent format). Needs `pip install ./crates/python` and pandas; matplotlib draws the
# plot when it is installed, LISA (`lisa-linux`) loads the trace when it is.
#
#     python3 examples/python/rampup.py [--out DIR]

# %%
import argparse
import os
import sys

import fairsim

HERE = os.path.dirname(os.path.abspath(__file__))
RAMP = os.path.join(HERE, "..", "rtapp", "ramp.json")

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--out", default="rampup-out", help="where the plot and the JSON go")
args, _ = parser.parse_known_args()
os.makedirs(args.out, exist_ok=True)

# %% [markdown]
# Two runs, each the command line's `fairsim run --topology rk3399 --governor schedutil
# --workload rtapp:examples/rtapp/ramp.json --util-est ... --duration 2100ms --seed 3`.

# %%
sides = {}
for util_est in ("off", "6.12"):
    r = fairsim.run(
        topology="rk3399",
        governor="schedutil",
        workload=[f"rtapp:{RAMP}"],
        util_est=util_est,
        duration="2100ms",
        seed=3,
        trace_dat=True,
    )
    with open(os.path.join(args.out, f"rampup-{util_est}.json"), "wb") as f:
        f.write(r.json_bytes)
    sides[util_est] = r
    print(f"util_est {util_est}: {r.json['scheduler']['migrations']} migrations, "
          f"{len(r.rtapp)} activations")

# %% [markdown]
# rt-app's activations (one row per 16 ms period), by phase: the work asked for
# (`c_duration_us`, at capacity 1024), what it took (`run_us`), the frequency and the
# share of periods on a big CPU (4 or 5).

# %%
import pandas as pd  # noqa: E402

tables = []
for util_est, r in sides.items():
    a = r.rtapp
    a["big"] = a["cpu"] >= 4
    t = a.groupby("c_duration_us").agg(
        periods=("run_us", "size"),
        run_us=("run_us", "mean"),
        freq_mhz=("freq_khz", lambda f: f.mean() / 1000),
        big_pct=("big", lambda b: 100 * b.mean()),
    )
    t.insert(0, "util_est", util_est)
    tables.append(t.reset_index())
table = pd.concat(tables, ignore_index=True)
print(table.round(1).to_string(index=False))

# The task's whole work rises with each step: with util_est the signal steps up at once
# rather than ramping over PELT's 32 ms half-life, so each phase runs at least as fast.
for util_est in sides:
    rows = table[table.util_est == util_est]
    assert list(rows.c_duration_us) == [1600, 4800, 8000, 11200, 14400], rows

# %% [markdown]
# The frequency of each period's CPU and the run time, against time.

# %%
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: no plot", file=sys.stderr)

if plt is not None:
    fig, (ax_f, ax_r) = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    for util_est, r in sides.items():
        a = r.rtapp
        ax_f.step(a.start_us / 1000, a.freq_khz / 1000, where="post", label=f"util_est {util_est}")
        ax_r.plot(a.start_us / 1000, a.run_us / 1000, ".", label=f"util_est {util_est}")
    a = sides["off"].rtapp
    ax_r.step(a.start_us / 1000, a.c_duration_us / 1000, where="post", color="grey", label="work at capacity 1024")
    ax_f.set_ylabel("frequency (MHz)")
    ax_r.set_ylabel("run time per period (ms)")
    ax_r.set_xlabel("time (ms)")
    ax_f.legend()
    ax_r.legend()
    ax_f.set_title("rt-app ramp on rk3399 under schedutil (fairsim)")
    path = os.path.join(args.out, "rampup.png")
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")

# %% [markdown]
# The same run's trace as a LISA `Trace`, when LISA is installed: its tasks analysis
# reads the trace.dat fairsim wrote.

# %%
try:
    import lisa  # noqa: F401
except ImportError:
    print("lisa-linux is not installed: no LISA trace", file=sys.stderr)
else:
    import warnings

    with warnings.catch_warnings():
        # LISA 3.1 under a newer pandas warns of deprecations at every call.
        warnings.simplefilter("ignore")
        trace = sides["6.12"].lisa_trace()
        runtime = trace.ana.tasks.df_tasks_runtime()
    print("LISA's ana.tasks runtime (s), beside fairsim's JSON (runtime_ns):")
    print(runtime)
    print(sides["6.12"].tasks[["id", "name", "runtime_ns"]].to_string(index=False))

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 003's two tables (util_est's overhead and its ramp-up) next to fairsim's.

Usage:
  table.py overhead SWEEP-DIR
  table.py rampup RUN-JSON...   (one `fairsim run --json` file per util_est form)

overhead: the posting's completion-time statistics of `perf bench sched messaging
--pipe --thread --group 8 --loop 5000` (120 runs, before and after the series) in its
own columns (count, mean, std, min, 50%, 95%, 99%, max, as pandas' describe prints them),
and fairsim's over the sweep's seeds, with the change of the mean and of the 99th
percentile, Welch's t of the means, and the share of busy CPU time fairsim charged to
util_est and to PELT's updates.

rampup: for each util_est form, the periodic task's activations after the first (which
starts from a new task's initial utilization): the CPU frequency when the activation's
wakeup had been handled (the frequency in effect 1 ms after it) and when its run ended,
the activation's completion time (rt-app's `end - start`: from the timer's expiry to
the end of the run), rt-app's slack, and the energy estimate of the whole run.
"""
import json
import math
import statistics
import sys
from pathlib import Path

# The posting's table: completion time of one hackbench iteration, in seconds.
SEED_COLUMNS = ["count", "mean", "std", "min", "50%", "95%", "99%", "max"]
SEED_ROWS = {
    "before": [120.0, 11.010342, 0.375753, 10.104, 11.046, 11.54155, 11.69629, 11.751],
    "after": [120.0, 11.041117, 0.375429, 10.015, 11.072, 11.59070, 11.67720, 11.692],
}
# fairsim's util_est form for each of the posting's kernels.
FORMS = {"before": "off", "after": "legacy-nofastup"}


def quantile(xs, q):
    """pandas' default quantile: linear interpolation between the closest ranks."""
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def describe(xs):
    std = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return [float(len(xs)), statistics.fmean(xs), std, min(xs), quantile(xs, 0.5),
            quantile(xs, 0.95), quantile(xs, 0.99), max(xs)]


def row(label, vals):
    cells = [f"{vals[0]:6.1f}"] + [f"{v:10.6f}" for v in vals[1:]]
    return f"{label:<16}" + " ".join(cells)


def welch_t(a, b):
    va = statistics.variance(a) / len(a) if len(a) > 1 else 0.0
    vb = statistics.variance(b) / len(b) if len(b) > 1 else 0.0
    se = math.sqrt(va + vb)
    return (statistics.fmean(b) - statistics.fmean(a)) / se if se > 0 else float("nan")


def overhead(sweep):
    samples = {}
    shares = {}
    for p in sorted((Path(sweep) / "points").glob("*.json")):
        pt = json.loads(p.read_text())
        c = dict(pt["coordinates"])
        m = {x["name"]: x["value"] for x in pt["metrics"]}
        form = c.get("util-est")
        if "time-s" not in m or form is None:
            continue
        samples.setdefault(form, []).append(m["time-s"])
        for k in ("perf-util_est-%", "perf-update_load_avg-%"):
            shares.setdefault((form, k), []).append(m.get(k, float("nan")))
    missing = [f for f in FORMS.values() if f not in samples]
    if missing:
        sys.exit(f"table.py: {sweep}: no points with util-est = {', '.join(missing)}")
    print("Seed 003: perf bench sched messaging --pipe --thread --group 8 --loop 5000,")
    print("one socket of a Xeon E5-2690 v2 (10 cores, 20 CPUs), fixed frequency.")
    print("Completion time of one iteration, seconds.\n")
    print(f"{'':<16}" + " ".join(f"{c:>10}" if i else f"{c:>6}" for i, c in enumerate(SEED_COLUMNS)))
    for k in ("before", "after"):
        print(row(f"posting {k}", SEED_ROWS[k]))
    for k in ("before", "after"):
        print(row(f"fairsim {k}", describe(samples[FORMS[k]])))
    b, a = SEED_ROWS["before"], SEED_ROWS["after"]
    print()
    print(f"posting: after vs before {100 * (a[1] / b[1] - 1):+.1f}% on mean, "
          f"{100 * (a[6] / b[6] - 1):+.1f}% on 99% percentile")
    fb, fa = describe(samples[FORMS["before"]]), describe(samples[FORMS["after"]])
    t = welch_t(samples[FORMS["before"]], samples[FORMS["after"]])
    print(f"fairsim: after vs before {100 * (fa[1] / fb[1] - 1):+.2f}% on mean, "
          f"{100 * (fa[6] / fb[6] - 1):+.2f}% on 99% percentile; Welch t = {t:+.2f} "
          f"over {len(samples[FORMS['before']])} + {len(samples[FORMS['after']])} seeds")
    print("\nfairsim's charged load tracking, share of busy CPU time (mean over seeds):")
    for k in ("before", "after"):
        f = FORMS[k]
        ue = statistics.fmean(shares[(f, "perf-util_est-%")])
        pelt = statistics.fmean(shares[(f, "perf-update_load_avg-%")])
        print(f"  {k:<7} ({f:<15}) util_est {ue:.4f}%   update_load_avg {pelt:.3f}%")


def freq_at(transitions, policy, t_ns):
    """The frequency of `policy` in effect at `t_ns`, from the run's timeline."""
    f = None
    for at, pol, khz in transitions:
        if pol != policy:
            continue
        if at > t_ns:
            break
        f = khz
    return f


def rampup(paths):
    print("Seed 003's ramp-up: a task that runs 40 ms of work (at 1.8 GHz) every 400 ms,")
    print("pinned to an A72 of rk3399, schedutil. Per activation after the first: the")
    print("frequency 1 ms after the wakeup and when the run ended, the completion time")
    print("(wakeup to end of run), rt-app's slack; medians over the activations.\n")
    print(f"{'util_est':<16}{'acts':>5}{'MHz@wake+1ms':>14}{'MHz@end':>9}"
          f"{'done ms':>9}{'slack ms':>10}{'energy mJ':>11}")
    for p in paths:
        d = json.loads(Path(p).read_text())
        form = d.get("util_est", "?")
        if isinstance(form, dict):
            form = form.get("form", "?")
        cf = d.get("cpufreq") or {}
        trans = cf.get("timeline", {}).get("transitions", [])
        policy = 1
        acts = []
        for w in d["workloads"]:
            for th in w.get("results", {}).get("threads", []):
                acts.extend(th.get("activations", []))
        if not acts:
            sys.exit(f"table.py: {p}: no per-activation records (a fairsim without them?)")
        acts = acts[1:]
        wake = [freq_at(trans, policy, a["start_us"] * 1000 + 1_000_000) for a in acts]
        # rt-app's pass starts when the woken thread begins it; its run ends `run` later.
        end = [freq_at(trans, policy, (a["start_us"] + a["run_us"]) * 1000 - 1) for a in acts]
        # From the timer's expiry to the end of the run: the period less the slack.
        done = [a["c_period_us"] - a["slack_us"] for a in acts]
        slack = [a["slack_us"] for a in acts]
        energy = cf.get("energy_uj")

        def med(xs, scale):
            xs = [x for x in xs if x is not None]
            return f"{statistics.median(xs) / scale:.0f}" if xs else "-"
        e = f"{energy / 1000:.0f}" if energy is not None else "-"
        print(f"{form:<16}{len(acts):>5}{med(wake, 1000):>14}{med(end, 1000):>9}"
              f"{statistics.median(done) / 1000:>9.1f}{statistics.median(slack) / 1000:>10.1f}{e:>11}")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("overhead", "rampup"):
        sys.exit(__doc__.split("\n\n")[1])
    if sys.argv[1] == "overhead":
        overhead(sys.argv[2])
    else:
        rampup(sys.argv[2:])


if __name__ == "__main__":
    main()

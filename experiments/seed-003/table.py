#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 003's tables (util_est's overhead and its ramp-up) next to fairsim's, ending with
the summary line.

Usage: table.py OUT-DIR   (what `run` wrote: the sweeps overhead/ (--kernel 4.16) and
                           overhead-612/ (today's 6.12 reference), and rampup/)

overhead: the posting's completion-time statistics of `perf bench sched messaging
--pipe --thread --group 8 --loop 5000` (120 runs, before and after the series) in its
own columns (count, mean, std, min, 50%, 95%, 99%, max, as pandas' describe prints them),
and fairsim's over the sweeps' seeds, with Welch's t of the means and the share of busy
CPU time fairsim charged to util_est and to PELT's updates.

rampup (not a posting figure, not counted): per kernel and util_est form, the periodic
task's activations after the first: the CPU frequency 1 ms after the wakeup and when its
run ended, the activation's completion time (timer expiry to end of run), rt-app's slack,
and the energy estimate of the whole run. A kernel the binary refused to run there is
listed with its error.

The headline comparisons: the change of the mean, the median and the 99th percentile of
the completion time, before -> after, on --kernel 4.16.
"""
import json
import math
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare import (Comparison, print_comparisons, quantile, quantile_se,  # noqa: E402
                     mean_se)

SEED_COLUMNS = ["count", "mean", "std", "min", "50%", "95%", "99%", "max"]
SEED_ROWS = {
    "before": [120.0, 11.010342, 0.375753, 10.104, 11.046, 11.54155, 11.69629, 11.751],
    "after": [120.0, 11.041117, 0.375429, 10.015, 11.072, 11.59070, 11.67720, 11.692],
}
# (label, column index, quantile or None for the mean)
HEADLINE = [("mean completion time (s)", 1, None), ("median (50%) (s)", 4, 0.5),
            ("99th percentile (s)", 6, 0.99)]
NOISE_POSTING = [
    "posting: 120 runs per kernel with the std it prints (0.3758, 0.3754 s); se of the mean "
    "= std / sqrt(120), of a q-quantile = std sqrt(q (1 - q) / 120) / phi(z_q) (normal "
    "theory); fairsim's quantiles use the same formula over its seeds"]


def describe(xs):
    std = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return [float(len(xs)), statistics.fmean(xs), std, min(xs), quantile(xs, 0.5),
            quantile(xs, 0.95), quantile(xs, 0.99), max(xs)]


def row(label, vals):
    cells = [f"{vals[0]:6.1f}"] + [f"{v:10.6f}" for v in vals[1:]]
    return f"{label:<22}" + " ".join(cells)


def welch_t(a, b):
    va = statistics.variance(a) / len(a) if len(a) > 1 else 0.0
    vb = statistics.variance(b) / len(b) if len(b) > 1 else 0.0
    se = math.sqrt(va + vb)
    return (statistics.fmean(b) - statistics.fmean(a)) / se if se > 0 else float("nan")


def sweep(d, coord, axis):
    """time-s and the load-tracking shares per side ('before'/'after') of a sweep, and
    time-s per side by seed (the sweep runs the same seeds on both sides: the scoring rule
    pairs them)."""
    samples, shares, by_seed = {}, {}, {}
    for p in sorted((Path(d) / "points").glob("*.json")) if Path(d).is_dir() else []:
        pt = json.loads(p.read_text())
        c = dict(pt["coordinates"])
        m = {x["name"]: x["value"] for x in pt["metrics"]}
        side = axis.get(c.get(coord))
        if "time-s" not in m or side is None:
            continue
        samples.setdefault(side, []).append(m["time-s"])
        by_seed.setdefault(side, {})[c.get("seeds")] = m["time-s"]
        for k in ("perf-util_est-%", "perf-update_load_avg-%"):
            shares.setdefault((side, k), []).append(m.get(k, float("nan")))
    return samples, shares, by_seed


def fs_figure(xs, q):
    """fairsim's figure over its seeds and its se: the mean, or the q-quantile."""
    if not xs:
        return None, None
    if q is None:
        return mean_se(xs)
    s = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return quantile(xs, q), quantile_se(s, len(xs), q)


def post_se(side, q):
    s, n = SEED_ROWS[side][2], int(SEED_ROWS[side][0])
    return s / math.sqrt(n) if q is None else quantile_se(s, n, q)


def overhead(out):
    era, era_sh, era_seeds = sweep(out / "overhead", "features",
                                   {"before": "before", "after": "after"})
    ref, ref_sh, _ = sweep(out / "overhead-612", "util-est", {"off": "before", "legacy-nofastup": "after"})
    if not era.get("before") or not era.get("after"):
        sys.exit(f"table.py: {out}/overhead: no before/after points")
    print("Seed 003: perf bench sched messaging --pipe --thread --group 8 --loop 5000,")
    print("one socket of a Xeon E5-2690 v2 (10 cores, 20 CPUs), fixed frequency.")
    print("Completion time of one iteration, seconds. fairsim: --kernel 4.16 without and with")
    print("UTIL_EST; 6.12 (reference, not counted): --util-est off / legacy-nofastup.\n")
    print(f"{'':<22}" + " ".join(f"{c:>10}" if i else f"{c:>6}" for i, c in enumerate(SEED_COLUMNS)))
    for k in ("before", "after"):
        print(row(f"posting {k}", SEED_ROWS[k]))
    for k in ("before", "after"):
        print(row(f"fairsim 4.16 {k}", describe(era[k])))
    for k in ("before", "after"):
        if ref.get(k):
            print(row(f"fairsim 6.12 {k}", describe(ref[k])))
    b, a = SEED_ROWS["before"], SEED_ROWS["after"]
    print()
    print(f"posting: after vs before {100 * (a[1] / b[1] - 1):+.1f}% on mean, "
          f"{100 * (a[6] / b[6] - 1):+.1f}% on 99% percentile")
    for label, s in (("4.16", era), ("6.12", ref)):
        if not s.get("before") or not s.get("after"):
            continue
        fb, fa = describe(s["before"]), describe(s["after"])
        t = welch_t(s["before"], s["after"])
        print(f"fairsim {label}: after vs before {100 * (fa[1] / fb[1] - 1):+.2f}% on mean, "
              f"{100 * (fa[6] / fb[6] - 1):+.2f}% on 99% percentile; Welch t = {t:+.2f} over "
              f"{len(s['before'])} + {len(s['after'])} seeds")
    print("\nfairsim's charged load tracking, share of busy CPU time (mean over seeds):")
    for label, sh in (("4.16", era_sh), ("6.12", ref_sh)):
        for k in ("before", "after"):
            if (k, "perf-util_est-%") not in sh:
                continue
            ue = statistics.fmean(sh[(k, "perf-util_est-%")])
            pelt = statistics.fmean(sh[(k, "perf-update_load_avg-%")])
            print(f"  {label} {k:<7} util_est {ue:.4f}%   update_load_avg {pelt:.3f}%")
    print()
    return era, ref, era_seeds


def freq_at(transitions, policy, t_ns):
    f = None
    for at, pol, khz in transitions:
        if pol != policy:
            continue
        if at > t_ns:
            break
        f = khz
    return f


def rampup(d):
    names = ["4.16-before", "4.16-after", "6.12-off", "6.12-legacy-nofastup", "6.12-6.12"]
    if not d.is_dir():
        return
    print("Ramp-up (not a posting figure, not counted): a task that runs 40 ms of work (at")
    print("1.8 GHz) every 400 ms, pinned to an A72 of rk3399, schedutil. Per activation after")
    print("the first: the frequency 1 ms after the wakeup and when the run ended, the")
    print("completion time (wakeup to end of run), rt-app's slack; medians over activations.\n")
    print(f"{'kernel-util_est':<22}{'acts':>5}{'MHz@wake+1ms':>14}{'MHz@end':>9}"
          f"{'done ms':>9}{'slack ms':>10}{'energy mJ':>11}")
    for name in names:
        refused = d / f"{name}.refused"
        p = d / f"{name}.json"
        if refused.exists():
            print(f"{name:<22}not run: {refused.read_text().strip()}")
            continue
        if not p.exists():
            continue
        doc = json.loads(p.read_text())
        cf = doc.get("cpufreq") or {}
        trans = cf.get("timeline", {}).get("transitions", [])
        acts = []
        for w in doc["workloads"]:
            for th in w.get("results", {}).get("threads", []):
                acts.extend(th.get("activations", []))
        acts = acts[1:]
        if not acts:
            print(f"{name:<22}no activations recorded")
            continue
        wake = [freq_at(trans, 1, a["start_us"] * 1000 + 1_000_000) for a in acts]
        end = [freq_at(trans, 1, (a["start_us"] + a["run_us"]) * 1000 - 1) for a in acts]
        done = [a["c_period_us"] - a["slack_us"] for a in acts]
        slack = [a["slack_us"] for a in acts]
        energy = cf.get("energy_uj")

        def med(xs, scale):
            xs = [x for x in xs if x is not None]
            return f"{statistics.median(xs) / scale:.0f}" if xs else "-"
        e = f"{energy / 1000:.0f}" if energy is not None else "-"
        print(f"{name:<22}{len(acts):>5}{med(wake, 1000):>14}{med(end, 1000):>9}"
              f"{statistics.median(done) / 1000:>9.1f}{statistics.median(slack) / 1000:>10.1f}{e:>11}")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    out = Path(sys.argv[1])
    era, ref, era_seeds = overhead(out)
    rampup(out / "rampup")
    comps, extra = [], []
    for label, col, q in HEADLINE:
        fb, sb = fs_figure(era["before"], q)
        fa, sa = fs_figure(era["after"], q)
        # The mean is paired by seed; a quantile of the seeds' distribution has no
        # per-seed value and keeps its normal-theory se.
        pairs = (era_seeds["before"], era_seeds["after"]) if q is None else None
        comps.append(Comparison(label, SEED_ROWS["before"][col], SEED_ROWS["after"][col],
                                fb, fa, post_se=(post_se("before", q), post_se("after", q)),
                                fs_se=(sb, sa), fs_seeds=pairs))
        rb, _ = fs_figure(ref.get("before", []), q)
        ra, _ = fs_figure(ref.get("after", []), q)
        extra.append(["-" if rb is None or ra is None else
                      f"{rb:.4f} -> {ra:.4f} ({100 * (ra - rb) / rb:+.2f}%)"])
    print_comparisons(f"seed 003 headline: hackbench completion time, --kernel 4.16 "
                      f"NO_UTIL_EST -> UTIL_EST; fairsim over {len(era['before'])} seeds",
                      comps, NOISE_POSTING, extra_heads=["6.12 off -> legacy-nofastup"],
                      extra_cells=extra)


if __name__ == "__main__":
    main()

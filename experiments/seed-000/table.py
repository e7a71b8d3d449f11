#!/usr/bin/env python3
"""Prints seed 000's cpu8 schedstat lines and perf lines next to fairsim's.

Reads the `--json` files `run` wrote (KERNEL-SEED.json) and prints, per figure, the
posting's value for each kernel, fairsim's mean and standard deviation over the seeds,
and the direction of the change from the base kernel on both sides ('!' where they
differ). Counts are scaled to the posting's 5 s interval.
"""

import glob
import json
import math
import os
import sys

# The posting's figures (000_6528b624d129f86d.txt): cpu8's `schedstat.py -i 5 -c 8`
# deltas for the base and ILB_FAST kernels, and the perf lines (children %, self %) of
# all three. ILB_UTIL's mail gives only perf lines.
SEED = {
    "base": {
        "d0.newidle.lb_count": 837, "d0.newidle.lb_balanced": 836,
        "d1.newidle.lb_count": 822, "d1.newidle.lb_balanced": 732,
        "d1.newidle.lb_failed": 90, "d1.newidle.lb_nobusyg": 497,
        "d1.newidle.lb_nobusyq": 235, "d1.newidle.lb_sg_scan": 45210,
        "d1.newidle.sg_scan_per_lb": 45210 / 822,
        "d1.newidle.success_pct": 100.0 * (822 - 732) / 822,
        "d1.idle.lb_count": 41, "d1.ttwu_wake_remote": 626,
        "d2.newidle.lb_count": 655, "d2.newidle.lb_balanced": 635,
        "ttwu_count": 89392, "ttwu_local": 88766, "sched_goidle": 89390,
        "perf.newidle_balance.children": 9.38, "perf.newidle_balance.self": 0.45,
        "perf.update_sd_lb_stats.children": 6.84, "perf.update_sd_lb_stats.self": 5.32,
    },
    "ilb_fast": {
        "d0.newidle.lb_count": 1545, "d0.newidle.lb_balanced": 1536,
        "d1.newidle.lb_count": 1496, "d1.newidle.lb_balanced": 1196,
        "d1.newidle.lb_failed": 296, "d1.newidle.lb_nobusyg": 1182,
        "d1.newidle.lb_nobusyq": 14, "d1.newidle.lb_sg_scan": 30127,
        "d1.newidle.sg_scan_per_lb": 30127 / 1496,
        "d1.newidle.success_pct": 100.0 * (1496 - 1196) / 1496,
        "d1.idle.lb_count": 45, "d1.ttwu_wake_remote": 2688,
        "d2.newidle.lb_count": 904, "d2.newidle.lb_balanced": 898,
        "ttwu_count": 90880, "ttwu_local": 88192, "sched_goidle": 90853,
        "perf.newidle_balance.children": 2.95, "perf.newidle_balance.self": 0.38,
        "perf.update_sd_lb_stats.children": 2.00, "perf.update_sd_lb_stats.self": 1.51,
    },
    "ilb_util": {
        "perf.newidle_balance.children": 3.35, "perf.newidle_balance.self": 0.38,
        "perf.update_sd_lb_stats.children": 2.30, "perf.update_sd_lb_stats.self": 1.81,
    },
}
KERNELS = ["base", "ilb_fast", "ilb_util"]
CPU = 8
INTERVAL_NS = 5_000_000_000


def figures(doc):
    """The figures of one run, for cpu8, counts scaled to 5 s."""
    scale = INTERVAL_NS / max(1, doc["elapsed_ns"])
    cpu = doc["cpus"][CPU]
    out = {}
    for d in cpu["domains"]:
        k = d["domain"]
        for idle, tag in (("CPU_NEWLY_IDLE", "newidle"), ("CPU_IDLE", "idle")):
            lb = d["lb"][idle]
            for f in ("lb_count", "lb_balanced", "lb_failed", "lb_nobusyg", "lb_nobusyq",
                      "lb_sg_scan"):
                out[f"d{k}.{tag}.{f}"] = lb[f] * scale
            if tag == "newidle" and lb["lb_count"] > 0:
                out[f"d{k}.newidle.sg_scan_per_lb"] = lb["lb_sg_scan"] / lb["lb_count"]
                out[f"d{k}.newidle.success_pct"] = (
                    100.0 * (lb["lb_count"] - lb["lb_balanced"]) / lb["lb_count"])
        out[f"d{k}.ttwu_wake_remote"] = d["ttwu_wake_remote"] * scale
    for f in ("ttwu_count", "ttwu_local", "sched_goidle"):
        out[f] = cpu[f] * scale
    # perf's shares are of sampled cycles; idle CPUs halt in C1 and are not sampled, so
    # fairsim's counterpart is the share of busy time.
    lines = {l["symbol"]: l for l in doc["profile"]["lines"]}
    for sym, name in (("sched_balance_newidle", "newidle_balance"),
                      ("update_sd_lb_stats", "update_sd_lb_stats")):
        l = lines.get(sym, {"children_busy_pct": 0.0, "self_busy_pct": 0.0,
                            "children_pct": 0.0})
        out[f"perf.{name}.children"] = l["children_busy_pct"]
        out[f"perf.{name}.self"] = l["self_busy_pct"]
        out[f"perf.{name}.children_of_all"] = l.get("children_pct", 0.0)
    # update_sg_lb_stats is inlined into update_sd_lb_stats in the posting's build: its
    # self time is that function's self time there.
    sg = lines.get("update_sg_lb_stats", {"self_busy_pct": 0.0})
    out["perf.update_sd_lb_stats.self"] += sg["self_busy_pct"]
    return out


def stats(values):
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd


def direction(a, b, rel=0.02):
    if a is None or b is None:
        return " "
    if abs(b - a) <= rel * max(abs(a), abs(b), 1e-9):
        return "="
    return "+" if b > a else "-"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/experiments/seed-000"
    runs = {k: [] for k in KERNELS}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        kernel = os.path.basename(path).rsplit("-", 1)[0]
        if kernel in runs:
            with open(path) as f:
                runs[kernel].append(figures(json.load(f)))
    if not runs["base"]:
        sys.exit(f"table.py: no base runs in {out}")
    nseeds = len(runs["base"])
    names = list(SEED["base"].keys()) + ["perf.newidle_balance.children_of_all"]
    print(f"seed 000 on spr-2s56c2t, cpu{CPU}, counts per 5 s; fairsim: mean (sd) over "
          f"{nseeds} seeds")
    print("perf lines: the posting's % of sampled cycles; fairsim's % of busy CPU time "
          "(all CPUs); 'children_of_all' is the share of all CPU time")
    head = f"{'figure':36}"
    for k in KERNELS:
        head += f" | {k + ' seed':>10} {k + ' fairsim':>20}"
    head += " | base->fast seed/fairsim | base->util seed/fairsim"
    print(head)
    print("-" * len(head))
    for name in names:
        row = f"{name:36}"
        means = {}
        for k in KERNELS:
            s = SEED[k].get(name)
            vals = [r[name] for r in runs[k] if name in r]
            if vals:
                m, sd = stats(vals)
                means[k] = m
                fs = f"{m:.1f} ({sd:.1f})"
            else:
                means[k] = None
                fs = "-"
            ss = "-" if s is None else f"{s:.1f}"
            row += f" | {ss:>10} {fs:>20}"
        for k in ("ilb_fast", "ilb_util"):
            sd_ = direction(SEED["base"].get(name), SEED[k].get(name))
            fd = direction(means["base"], means[k])
            mark = "!" if sd_ not in (" ", fd) else " "
            row += f" | {sd_:>10} / {fd:<1} {mark:<8}"
        print(row)
    print("\ndirection: + rises, - falls, = within 2%, blank: the posting gives no figure; "
          "! marks a figure whose direction differs")


if __name__ == "__main__":
    main()

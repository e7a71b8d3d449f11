#!/usr/bin/env python3
"""Prints seed 001's schbench percentile tables next to fairsim's.

Reads the `--json` files `run` wrote (KERNEL-SEED.json) and prints schbench's own
"Latency percentiles (usec)" layout: per row, the posting's mainline (Linux 4.5) value
and fairsim's LEGACY_SIS, the posting's patched value and fairsim's
LEGACY_SIS,SIS_FIRST_IDLE, then fairsim's 6.12 wakeup path; fairsim's figures are the
mean and standard deviation over the seeds. The direction of the change from mainline to
the patch is shown for both. Below, where the idle CPUs slept (time share per idle
state) and what a wakeup paid, which is where p50 comes from.
"""

import glob
import json
import math
import os
import sys

# The posting's tables (001_c8bc339f0081e7d8.txt): mainline 4.5 ("numbers like this are
# typical") and the patch.
ROWS = ["50.0", "75.0", "90.0", "95.0", "99.0", "99.5", "99.9"]
SEED = {
    "legacy_sis": {"50.0": 50, "75.0": 63, "90.0": 76, "95.0": 85, "99.0": 4680,
                   "99.5": 10192, "99.9": 10928, "min": 0, "max": 21816},
    "first_idle": {"50.0": 50, "75.0": 62, "90.0": 73, "95.0": 79, "99.0": 99,
                   "99.5": 761, "99.9": 10160, "min": 0, "max": 14659},
}
KERNELS = ["legacy_sis", "first_idle", "v6.12"]
LABEL = {"legacy_sis": "LEGACY_SIS", "first_idle": "+SIS_FIRST_IDLE", "v6.12": "6.12"}


def figures(doc):
    r = doc["workloads"][0]["results"]
    out = {p: r.get(f"wakeup_latency_pct{p}", 0) for p in ROWS}
    out["min"] = r.get("wakeup_latency_min", 0)
    out["max"] = r.get("wakeup_latency_max", 0)
    out["samples"] = r.get("samples", 0)
    # Time share of each idle state over all CPUs, and wakeups per exit-latency class.
    shares = {}
    elapsed = max(1, doc["elapsed_ns"])
    for cpu in doc["cpus"]:
        for st in cpu.get("cpuidle", []):
            shares[st["name"]] = shares.get(st["name"], 0.0) + st["time_ns"]
    ncpu = max(1, len(doc["cpus"]))
    out["idle"] = {k: 100.0 * v / (elapsed * ncpu) for k, v in shares.items()}
    out["governor"] = doc.get("cpuidle", {}).get("governor", "?")
    secs = elapsed / 1e9
    out["migrations_s"] = doc["scheduler"]["migrations"] / secs
    # Run delay of the workers: time spent runnable but waiting for a CPU, which is
    # what a wakeup onto a busy CPU adds.
    workers = [t for t in doc["tasks"] if "-w" in t["name"]]
    out["worker_run_delay_ms"] = sum(t["run_delay_ns"] for t in workers) / 1e6
    return out


def stats(values):
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd


def direction(a, b, rel=0.05):
    if a is None or b is None:
        return " "
    if abs(b - a) <= rel * max(abs(a), abs(b), 1e-9):
        return "="
    return "+" if b > a else "-"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/experiments/seed-001"
    runs = {k: [] for k in KERNELS}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        kernel = os.path.basename(path).rsplit("-", 1)[0]
        if kernel in runs:
            with open(path) as f:
                runs[kernel].append(figures(json.load(f)))
    if not runs["legacy_sis"] or not runs["first_idle"]:
        sys.exit(f"table.py: no LEGACY_SIS or SIS_FIRST_IDLE runs in {out}")
    nseeds = len(runs["legacy_sis"])
    print("seed 001: schbench -c 30000 -s 30000 -m 6 -t 24 -r 30 (the 2016 binary: 2 message "
          "threads x 24 workers) on 2s24c2t (96 CPUs)")
    print(f"fairsim: mean (sd) over {nseeds} seeds; posting: mainline = Linux 4.5, "
          "patch = its select_idle_sibling change")
    head = (f"{'Latency percentiles (usec)':28} | {'4.5 seed':>9} {'LEGACY_SIS':>17} | "
            f"{'patch seed':>10} {'+SIS_FIRST_IDLE':>17} | {'6.12':>17} | mainline->patch seed/fairsim")
    print(head)
    print("-" * len(head))

    def cell(k, name):
        vals = [r[name] for r in runs[k]]
        if not vals:
            return None, "-"
        m, sd = stats(vals)
        return m, f"{m:.0f} ({sd:.0f})"

    for name in ROWS + ["min", "max"]:
        if name in ROWS:
            label = f"\t{'*' if name == '99.0' else ''}{float(name):2.4f}th:"
        else:
            label = f"\t{name}="
        m_old, c_old = cell("legacy_sis", name)
        m_new, c_new = cell("first_idle", name)
        _, c_612 = cell("v6.12", name)
        sd_ = direction(SEED["legacy_sis"][name], SEED["first_idle"][name])
        fd = direction(m_old, m_new)
        mark = "!" if sd_ != fd else " "
        print(f"{label.expandtabs(8):28} | {SEED['legacy_sis'][name]:>9} {c_old:>17} | "
              f"{SEED['first_idle'][name]:>10} {c_new:>17} | {c_612:>17} | {sd_:>6} / {fd} {mark}")
    print("\ndirection: + rises, - falls, = within 5%; ! marks a row whose direction differs")
    print("\nwhere idle CPUs slept (% of all CPU time, mean over seeds; governor "
          f"{runs['legacy_sis'][0]['governor']}):")
    for k in KERNELS:
        if not runs[k]:
            continue
        names = sorted({n for r in runs[k] for n in r["idle"]},
                       key=lambda n: list(runs[k][0]["idle"]).index(n)
                       if n in runs[k][0]["idle"] else 99)
        parts = [f"{n} {stats([r['idle'].get(n, 0.0) for r in runs[k]])[0]:.1f}"
                 for n in names]
        samples = stats([r["samples"] for r in runs[k]])[0]
        migr = stats([r["migrations_s"] for r in runs[k]])[0]
        delay = stats([r["worker_run_delay_ms"] for r in runs[k]])[0]
        print(f"  {LABEL[k]:16} {', '.join(parts)}; {samples:.0f} latency samples per run; "
              f"{migr:.1f} migrations/s; workers waited {delay:.1f} ms in all for a CPU")


if __name__ == "__main__":
    main()

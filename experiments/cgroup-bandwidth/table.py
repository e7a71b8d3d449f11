"""Prints the cgroup-bandwidth experiment's table from the runs' --json files.

Usage: table.py OUT NAME...   (NAME: each run's name, OUT/NAME.json its result)

Per run: the group's CPU use (usage over the window, in CPUs), cpu.stat's periods and the
share of them that found a runqueue throttled, the throttled time per period (summed over
the group's runqueues, as cpu.stat's throttled_usec is), and schbench's wakeup latency
percentiles and maximum (us).
"""

import json
import sys


def main():
    out, names = sys.argv[1], sys.argv[2:]
    head = (
        f"{'run':<18} {'cpu.max':>14} {'burst':>6} {'CPUs':>5} {'periods':>7} "
        f"{'thr%':>5} {'thr-ms/p':>8} {'p50':>5} {'p99':>6} {'p99.9':>6} {'max':>6}"
    )
    print(head)
    print("-" * len(head))
    for name in names:
        with open(f"{out}/{name}.json") as f:
            d = json.load(f)
        window_s = (d["duration_ns"] - d["warmup_ns"]) / 1e9
        g = next(c for c in d["cgroups"] if c["path"] == "/svc")
        r = d["workloads"][0]["results"]
        periods = g["nr_periods"] or 0
        thr = 100.0 * g["nr_throttled"] / periods if periods else 0.0
        thr_ms = g["throttled_usec"] / 1000 / periods if periods else 0.0
        print(
            f"{name:<18} {g['cpu.max']:>14} {g['cpu.max.burst'] // 1000:>5}m "
            f"{g['usage_usec'] / 1e6 / window_s:>5.2f} {periods:>7} {thr:>5.1f} "
            f"{thr_ms:>8.1f} {r['wakeup_latency_pct50.0']:>5} "
            f"{r['wakeup_latency_pct99.0']:>6} {r['wakeup_latency_pct99.9']:>6} "
            f"{r['wakeup_latency_max']:>6}"
        )


if __name__ == "__main__":
    main()

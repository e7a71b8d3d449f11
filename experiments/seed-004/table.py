#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 004's hackbench-process-pipes table next to fairsim's, from a sweep's point files.

Usage: table.py SWEEP-DIR

For each group count: the posting's Amean (seconds) for 4.15.0 without and with the
SD_NUMA patch and its gain (positive = faster with the patch), then fairsim's Amean over
the sweep's seeds for LEGACY_FIND_IDLEST,NO_FIND_IDLEST_NUMA (before) and
LEGACY_FIND_IDLEST (after), its gain, and the after-kernel's t statistic so that a gain
inside the noise shows as such.
"""
import json
import math
import sys
from pathlib import Path

# The posting's hackbench-process-pipes rows (seed 004): groups -> (before, after) Amean s.
SEED = {
    1: (1.0973, 0.9393), 4: (1.3427, 1.3730), 7: (1.4233, 1.6670), 12: (3.0250, 3.3013),
    21: (9.0860, 9.5343), 30: (14.6547, 13.2433), 48: (22.5447, 20.4303),
    79: (29.2010, 26.7853), 110: (36.7443, 35.8453), 141: (45.8533, 42.6223),
    172: (55.1317, 50.6473), 203: (64.4420, 58.3957), 234: (73.2293, 67.1047),
    265: (80.5220, 75.7330), 296: (88.7567, 82.1533),
}


def main():
    d = Path(sys.argv[1])
    samples = {}
    for p in sorted((d / "points").glob("*.json")):
        pt = json.loads(p.read_text())
        coords = dict(pt["coordinates"])
        spec = pt["workloads"][0]["workload"]
        groups = int(spec.split("g=")[1].split(",")[0])
        t = next(m["value"] for m in pt["metrics"] if m["name"] == "time-s")
        samples.setdefault((groups, coords["features"]), []).append(t)
    mean = lambda v: sum(v) / len(v)
    def sd(v):
        m = mean(v)
        return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    print("hackbench-process-pipes: Amean seconds; gain = (before - after) / before, positive = faster with the patch")
    print(f"{'groups':>6}  {'seed before':>11} {'seed after':>10} {'gain':>8}   "
          f"{'fairsim before':>14} {'fairsim after':>13} {'gain':>8} {'t':>6}  direction")
    for groups in sorted({g for g, _ in samples}):
        b, a = samples.get((groups, "before"), []), samples.get((groups, "after"), [])
        if not b or not a:
            continue
        sb, sa = SEED.get(groups, (float("nan"), float("nan")))
        mb, ma = mean(b), mean(a)
        se = math.sqrt(sd(b) ** 2 / len(b) + sd(a) ** 2 / len(a))
        t = (mb - ma) / se if se > 0 else float("inf")
        same = (sb - sa) * (mb - ma) > 0
        print(f"{groups:>6}  {sb:>11.4f} {sa:>10.4f} {(sb - sa) / sb * 100:>7.2f}%   "
              f"{mb:>14.4f} {ma:>13.4f} {(mb - ma) / mb * 100:>7.2f}% {t:>6.1f}  "
              f"{'same' if same else '!'}")


if __name__ == "__main__":
    main()

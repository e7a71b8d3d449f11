#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 000's netperf and tbench tables next to fairsim's, from a `network.toml` sweep.

Usage: network_table.py SWEEP-DIR

The posting gives each case as the compared kernel's throughput change against its base
(ILB_SNAPSHOT + NO_ILB_UTIL), in percent, with the runs' std%: once for ILB_UTIL (patch
5/7) and once for ILB_FAST (patch 7/7). fairsim's columns are the same ratios from its
own runs: netperf's Hmean transactions per second over the instances (the posting sums
or averages; the ratio is what compares), tbench's MB/sec. With one seed per point there
is no std%; a change smaller than the posting's std% is inside its noise either way.
"""
import json
import sys
from pathlib import Path

# case -> (ILB_UTIL compare%, its std%, ILB_FAST compare%, its std%), the posting's rows.
SEED = {
    ("tcprr", 56): (-3.96, 2.17, +4.25, 5.15), ("tcprr", 112): (-0.82, 2.24, +0.96, 2.84),
    ("tcprr", 168): (-0.03, 2.31, -0.04, 2.11), ("tcprr", 224): (+0.01, 2.12, -0.03, 1.76),
    ("tcprr", 280): (+56.56, 56.91, -7.59, 62.46), ("tcprr", 336): (+0.27, 17.90, -0.45, 19.81),
    ("tcprr", 392): (+0.13, 29.09, -0.09, 30.85), ("tcprr", 448): (-18.82, 45.93, -0.28, 39.71),
    ("udprr", 56): (-0.31, 7.89, -0.31, 2.08), ("udprr", 112): (-0.50, 15.19, +3.58, 3.22),
    ("udprr", 168): (+0.37, 10.30, -0.08, 11.77), ("udprr", 224): (+0.25, 12.88, -0.04, 14.03),
    ("udprr", 280): (-0.57, 15.34, +0.35, 16.83), ("udprr", 336): (+0.01, 24.68, +1.38, 22.57),
    ("udprr", 392): (+2.65, 33.89, -0.91, 33.89), ("udprr", 448): (+0.81, 41.28, +0.70, 44.18),
    ("tbench", 56): (-0.09, 2.05, +1.51, 2.20), ("tbench", 112): (-0.88, 0.10, +1.15, 0.29),
    ("tbench", 168): (+62.92, 54.57, -37.92, 0.02), ("tbench", 224): (+234.30, 1.81, -43.18, 0.01),
    ("tbench", 280): (-0.11, 0.21, +0.33, 0.08), ("tbench", 336): (-0.17, 0.08, +0.40, 0.17),
    ("tbench", 392): (-0.09, 0.18, +0.49, 0.14), ("tbench", 448): (-0.53, 0.55, +0.01, 0.24),
}
METRIC = {"tcprr": "Hmean-per-s", "udprr": "Hmean-per-s", "tbench": "Throughput-MB/s"}


def main():
    d = Path(sys.argv[1])
    vals = {}
    for p in sorted((d / "points").glob("*.json")):
        pt = json.loads(p.read_text())
        c = dict(pt["coordinates"])
        case, n = c["workloads"].split("-")
        m = {x["name"]: x["value"] for x in pt["metrics"]}
        if METRIC[case] in m:
            vals.setdefault((case, int(n)), {}).setdefault(c["features"], []).append(m[METRIC[case]])
    mean = lambda v: sum(v) / len(v)
    print("seed 000 network tables: throughput change against base (ILB_SNAPSHOT, NO_ILB_UTIL), %")
    print(f"{'case':<8} {'load':>5}  {'base':>12}  {'seed util%':>10} {'(std%)':>8} {'fairsim util%':>13}"
          f"  {'seed fast%':>10} {'(std%)':>8} {'fairsim fast%':>13}")
    for key in sorted(vals):
        k = vals[key]
        if "base" not in k:
            continue
        b = mean(k["base"])
        ch = lambda f: (mean(k[f]) - b) / b * 100 if f in k and b > 0 else float("nan")
        su, sus, sf, sfs = SEED.get(key, (float("nan"),) * 4)
        print(f"{key[0]:<8} {key[1]:>5}  {b:>12.1f}  {su:>+10.2f} {f'({sus:.2f})':>8} {ch('ilb-util'):>+13.2f}"
              f"  {sf:>+10.2f} {f'({sfs:.2f})':>8} {ch('ilb-fast'):>+13.2f}")


if __name__ == "__main__":
    main()

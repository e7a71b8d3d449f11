#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 004's hackbench-process-pipes table next to fairsim's, from a sweep's point files.

Usage: table.py HACKBENCH-SWEEP-DIR [GITSUITE-SWEEP-DIR [NETPERF-SWEEP-DIR]]

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


# The posting's git-suite rows (seed 004): Elapsed over its iterations and the
# User/System/Elapsed block summed over them, seconds.
SEED_GIT = {
    "Elapsed min": (1706.06, 1435.94), "Elapsed mean": (1709.53, 1436.98),
    "Elapsed max": (1711.59, 1438.01), "User": (5434.12, 5188.41),
    "System": (4878.77, 3467.09),
}


def points(d):
    """(coordinates, metrics by name) of every point file under sweep directory d."""
    for p in sorted((Path(d) / "points").glob("*.json")):
        pt = json.loads(p.read_text())
        yield dict(pt["coordinates"]), {m["name"]: m["value"] for m in pt["metrics"]}


def gitsuite(d):
    """The git suite's rows: Elapsed min/mean/max, User, System, then fairsim's own
    explanation columns (share of task time off the home node, moves across nodes)."""
    runs = {"before": [], "after": []}
    for c, m in points(d):
        runs[c["features"]].append(m)
    if not runs["before"] or not runs["after"]:
        return
    def col(k, name):
        v = [m[name] for m in runs[k]]
        return {"min": min(v), "mean": sum(v) / len(v), "max": max(v)}
    print("git test suite (forkbench): seconds; gain = (before - after) / before, positive = faster with the patch")
    print(f"{'':<14} {'seed before':>11} {'seed after':>10} {'gain':>8}   "
          f"{'fairsim before':>14} {'fairsim after':>13} {'gain':>8}  direction")
    rows = [("Elapsed min", "Elapsed-s", "min"), ("Elapsed mean", "Elapsed-s", "mean"),
            ("Elapsed max", "Elapsed-s", "max"), ("User", "User-s", "mean"),
            ("System", "System-s", "mean")]
    for label, name, agg in rows:
        sb, sa = SEED_GIT[label]
        fb, fa = col("before", name)[agg], col("after", name)[agg]
        same = (sb - sa) * (fb - fa) > 0
        print(f"{label:<14} {sb:>11.2f} {sa:>10.2f} {(sb - sa) / sb * 100:>7.2f}%   "
              f"{fb:>14.4f} {fa:>13.4f} {(fb - fa) / fb * 100:>7.2f}%  {'same' if same else '!'}")
    for label, name in [("off-node %", "off-node-%"), ("node moves/s", "node-moves/s")]:
        fb, fa = col("before", name)["mean"], col("after", name)["mean"]
        print(f"{label:<14} {'':>11} {'':>10} {'':>8}   {fb:>14.2f} {fa:>13.2f}")
    print()


# The posting's netperf rows (seed 004, mmtests netperf-udp): send size -> Hmean Mbit/s
# (send before, send after, recv before, recv after).
SEED_NET = {
    64: (349.09, 354.67, 349.09, 354.67), 128: (699.16, 702.91, 699.16, 702.91),
    256: (1316.34, 1350.07, 1316.34, 1350.07), 1024: (5063.99, 5124.38, 5063.99, 5124.38),
    2048: (9705.19, 9687.44, 9705.16, 9687.43), 3312: (14359.48, 14577.64, 14359.42, 14577.59),
    4096: (16324.20, 16393.62, 16323.98, 16393.55), 8192: (26112.61, 26877.26, 26111.85, 26876.96),
    16384: (37208.44, 38683.43, 37206.99, 38682.41),
}


def netperf(d):
    """The UDP_STREAM rows: Hmean send and recv Mbit/s per send size, both kernels."""
    runs = {}
    for c, m in points(d):
        size = int(c["workloads"].split("-")[1])
        runs.setdefault((size, c["features"]), []).append(m)
    if not runs:
        return
    hm = lambda v: len(v) / sum(1 / x for x in v) if all(x > 0 for x in v) else 0.0
    print("netperf-udp (UDP_STREAM): Hmean Mbit/s over seeds; gain = (after - before) / before, positive = faster with the patch")
    print(f"{'':<11} {'seed before':>11} {'seed after':>10} {'gain':>7}   "
          f"{'fairsim before':>14} {'fairsim after':>13} {'gain':>7}  direction  node-moves/s b/a")
    for size in sorted({s for s, _ in runs}):
        b, a = runs.get((size, "before"), []), runs.get((size, "after"), [])
        if not b or not a:
            continue
        for k, (key, (sb, sa)) in enumerate([("Hmean-send-Mbit/s", SEED_NET[size][:2]),
                                            ("Hmean-recv-Mbit/s", SEED_NET[size][2:])]):
            fb, fa = hm([m[key] for m in b]), hm([m[key] for m in a])
            same = (sa - sb) * (fa - fb) > 0
            mv = lambda r: sum(m.get("node-moves/s", 0) for m in r) / len(r)
            extra = f"  {mv(b):>6.1f}/{mv(a):<6.1f}" if k == 0 else ""
            print(f"{('send-' if k == 0 else 'recv-') + str(size):<11} {sb:>11.2f} {sa:>10.2f} "
                  f"{(sa - sb) / sb * 100:>6.2f}%   {fb:>14.2f} {fa:>13.2f} "
                  f"{(fa - fb) / max(fb, 1e-9) * 100:>6.2f}%  {'same' if same else '!':<9}{extra}")
    print()


def main():
    if len(sys.argv) > 3:
        netperf(sys.argv[3])
    if len(sys.argv) > 2:
        gitsuite(sys.argv[2])
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

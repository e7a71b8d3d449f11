#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed 004's tables next to fairsim's, ending with the summary line.

Usage: table.py OUT-DIR   (what `run` wrote: the sweeps hackbench/, gitsuite/, netperf/
                           on --kernel 4.15 and their -612 references)

First the posting's hackbench-process-pipes and netperf-udp tables row by row (fairsim's
change beside each, not counted), then the headline: the git suite's Elapsed table and
its User/System/Elapsed block, the automatic NUMA balancing table (not produced: fairsim
does not model automatic NUMA balancing), and the hackbench and netperf tables each as
one figure (the geometric mean over the rows fairsim ran, the posting's restricted to
the same rows). Today's 6.12 runs are a reference column, never counted.
"""
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare import Comparison, mean_se, print_comparisons, sd, sd_se  # noqa: E402

# The posting's hackbench-process-pipes rows: groups -> (before, after) Amean s.
HACKBENCH = {
    1: (1.0973, 0.9393), 4: (1.3427, 1.3730), 7: (1.4233, 1.6670), 12: (3.0250, 3.3013),
    21: (9.0860, 9.5343), 30: (14.6547, 13.2433), 48: (22.5447, 20.4303),
    79: (29.2010, 26.7853), 110: (36.7443, 35.8453), 141: (45.8533, 42.6223),
    172: (55.1317, 50.6473), 203: (64.4420, 58.3957), 234: (73.2293, 67.1047),
    265: (80.5220, 75.7330), 296: (88.7567, 82.1533),
}
# The posting's git-suite tables: Elapsed over its iterations, then User/System/Elapsed
# summed over them (6 iterations: 10259.06 / 1709.53).
GIT_ITER = 6
GIT = {
    "Elapsed min": (1706.06, 1435.94), "Elapsed mean": (1709.53, 1436.98),
    "Elapsed stddev": (2.16, 1.01), "Elapsed coeffvar": (0.13, 0.07),
    "Elapsed max": (1711.59, 1438.01), "User": (5434.12, 5188.41),
    "System": (4878.77, 3467.09), "Elapsed": (10259.06, 8624.21),
}
# Rows of the git block that are one measurement (name -> (group, representative)): the
# Elapsed min, mean, max and total are one sample's location (the total is 6 times the
# mean; the posting's spread, 0.13%, is a hundredth of its change, so min and max move
# with the mean), counted once by the mean; the stddev and the coeffvar are its spread
# (the coeffvar is the stddev over the mean), counted once by the stddev. User and System
# are other counters and count on their own.
GIT_GROUPS = {
    "Elapsed min": ("git Elapsed", False), "Elapsed mean": ("git Elapsed", True),
    "Elapsed max": ("git Elapsed", False), "Elapsed": ("git Elapsed", False),
    "Elapsed stddev": ("git Elapsed spread", True),
    "Elapsed coeffvar": ("git Elapsed spread", False),
}
# The posting's automatic NUMA balancing counters (netperf runs).
AUTONUMA = {
    "NUMA base PTE updates": (4620, 1473), "NUMA huge PMD updates": (0, 0),
    "NUMA page range updates": (4620, 1473), "NUMA hint faults": (4301, 1383),
    "NUMA hint local faults": (1309, 451), "NUMA hint local percent": (30, 32),
    "NUMA pages migrated": (1335, 491), "AutoNUMA cost %": (21, 6),
}
# Page range updates are base PTE updates plus 512 per huge PMD update, of which there
# are none: one measurement, counted once by the base PTE updates.
AUTONUMA_GROUPS = {
    "NUMA base PTE updates": ("NUMA PTE updates", True),
    "NUMA page range updates": ("NUMA PTE updates", False),
}
# The posting's netperf-udp rows: size -> (send before, send after, recv before, recv after).
NETPERF = {
    64: (349.09, 354.67, 349.09, 354.67), 128: (699.16, 702.91, 699.16, 702.91),
    256: (1316.34, 1350.07, 1316.34, 1350.07), 1024: (5063.99, 5124.38, 5063.99, 5124.38),
    2048: (9705.19, 9687.44, 9705.16, 9687.43), 3312: (14359.48, 14577.64, 14359.42, 14577.59),
    4096: (16324.20, 16393.62, 16323.98, 16393.55), 8192: (26112.61, 26877.26, 26111.85, 26876.96),
    16384: (37208.44, 38683.43, 37206.99, 38682.41),
}
NOISE_POSTING = [
    "posting, git suite: its Elapsed stddev over 6 iterations (2.16, 1.01 s) gives the se of "
    "the mean (s/sqrt(6)), of min and max (s, one run's spread), of the stddev and coeffvar "
    "(x/sqrt(2 (6 - 1))) and of the Elapsed total (s sqrt(6)); User and System have none",
    "posting, hackbench and netperf (mmtests Amean/Hmean without stddev) and the NUMA "
    "counters: no noise given: every change counts as outside noise",
]


def points(d):
    for p in sorted(glob.glob(os.path.join(d, "points", "*.json"))):
        with open(p) as f:
            pt = json.load(f)
        c = dict(pt["coordinates"])
        c["seed"] = c.get("seeds")
        yield c, {m["name"]: m["value"] for m in pt["metrics"]}, pt


def by_side(d):
    """{side: {seed: metrics}} per workload name."""
    out = {}
    for c, m, _ in points(d):
        out.setdefault(c["workloads"], {}).setdefault(c["features"], {})[c["seed"]] = m
    return out


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def git_figures(d):
    """fairsim's git-suite figures per side, each (value, se): the seeds stand for the
    posting's iterations."""
    runs = by_side(d).get("gitsuite", {})
    out = {}
    for side, seeds in runs.items():
        ms = list(seeds.values())
        # The per-seed values behind the figures that are a mean or a sum over seeds:
        # both kernels run the same seeds, so the scoring rule pairs them by seed.
        out[(side, "seeds")] = {
            "Elapsed mean": {s: m["Elapsed-s"] for s, m in seeds.items()},
            "Elapsed": {s: m["Elapsed-s"] for s, m in seeds.items()},
            "User": {s: m["User-s"] for s, m in seeds.items()},
            "System": {s: m["System-s"] for s, m in seeds.items()},
        }
        el = [m["Elapsed-s"] for m in ms]
        n = len(el)
        s = sd(el)
        mean = sum(el) / n
        f = {
            "Elapsed min": (min(el), s if n > 1 else None),
            "Elapsed mean": mean_se(el),
            "Elapsed stddev": (s, sd_se(s, n)),
            "Elapsed coeffvar": (100 * s / mean, sd_se(100 * s / mean, n)),
            "Elapsed max": (max(el), s if n > 1 else None),
            "Elapsed": (sum(el), s * math.sqrt(n) if n > 1 else None),
        }
        us = [m["User-s"] for m in ms]
        sy = [m["System-s"] for m in ms]
        f["User"] = (sum(us), sd(us) * math.sqrt(n) if n > 1 else None)
        f["System"] = (sum(sy), sd(sy) * math.sqrt(n) if n > 1 else None)
        f["off-node %"] = (mean_se([m.get("off-node-%", 0.0) for m in ms])[0], None)
        f["node moves/s"] = (mean_se([m.get("node-moves/s", 0.0) for m in ms])[0], None)
        out[side] = f
    return out


def table_gmean(runs, metric, rows):
    """Per side: (gmean over rows of the mean over seeds, se from the per-seed gmeans),
    and under (side, "seeds") the per-seed gmeans, which the scoring rule pairs by seed."""
    out = {}
    for side in ("before", "after"):
        per_seed = {}
        for r in rows:
            for seed, m in runs.get(r, {}).get(side, {}).items():
                if m.get(metric):
                    per_seed.setdefault(seed, []).append(m[metric])
        full = [v for v in per_seed.values() if len(v) == len(rows)]
        if not full:
            continue
        means = [sum(runs[r][side][s][metric] for s in runs[r][side]) / len(runs[r][side])
                 for r in rows]
        _, se = mean_se([gmean(v) for v in full])
        out[side] = (gmean(means), se)
        out[(side, "seeds")] = {s: gmean(v) for s, v in per_seed.items() if len(v) == len(rows)}
    return out


def rows_table(title, runs, metric, post, names, lower_is_better):
    """The posting's rows and fairsim's change beside each; returns the rows fairsim ran."""
    ran = []
    tally = [0, 0, 0]
    print(title)
    print(f"{'row':<12} | {'posting before':>14} {'after':>10} {'change':>8} | "
          f"{'fairsim before':>14} {'after':>10} {'change':>8} | dir  2x")
    for key, label in names:
        r = runs.get(key, {})
        if not r.get("before") or not r.get("after") or label not in post:
            continue
        ran.append(key)
        pb, pa = post[label]
        fb, sb = mean_se([m[metric] for m in r["before"].values() if metric in m])
        fa, sa = mean_se([m[metric] for m in r["after"].values() if metric in m])
        if fb is None or fa is None:
            continue
        pairs = tuple({s: m[metric] for s, m in r[side].items() if metric in m}
                      for side in ("before", "after"))
        c = Comparison(str(label), pb, pa, fb, fa, fs_se=(sb, sa), fs_seeds=pairs)
        tally[0] += 1
        tally[1] += c.same_direction()
        tally[2] += c.within_2x()
        ch = lambda b, a: f"{100 * (a - b) / b:+.2f}%" if b else "-"
        print(f"{str(label):<12} | {pb:>14.4f} {pa:>10.4f} {ch(pb, pa):>8} | {fb:>14.4f} "
              f"{fa:>10.4f} {ch(fb, fa):>8}{'~' if c.fs_inside() else ' '}| "
              f"{c.mark():<4} {'2x' if c.within_2x() else ''}")
    better = "lower" if lower_is_better else "higher"
    print(f"(not in the summary: {tally[0]} rows, {tally[1]} same direction, {tally[2]} within "
          f"2x; {better} is better; ~ fairsim's change inside its noise)\n")
    return ran


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/experiments/seed-004"
    hb = by_side(os.path.join(out, "hackbench"))
    hb612 = by_side(os.path.join(out, "hackbench-612"))
    np_ = by_side(os.path.join(out, "netperf"))
    np612 = by_side(os.path.join(out, "netperf-612"))
    git = git_figures(os.path.join(out, "gitsuite"))
    git612 = git_figures(os.path.join(out, "gitsuite-612"))
    if "before" not in git or "after" not in git:
        sys.exit(f"table.py: no git-suite points in {out}/gitsuite")
    nseeds = len(next(iter(hb.values()), {}).get("before", {})) if hb else 0

    print("seed 004 on 2n-2s16c2t (2 x 16 x 2, SLIT 10/21), --kernel 4.15: NO_FIND_IDLEST_NUMA"
          " (before) -> FIND_IDLEST_NUMA (after)\n")
    hb_names = [(f"g{g:03d}", g) for g in sorted(HACKBENCH)]
    hb_ran = rows_table(f"hackbench-process-pipes: Amean seconds (fairsim: mean over {nseeds} "
                        f"seeds)", hb, "time-s", HACKBENCH, hb_names, True)
    send = {s: v[:2] for s, v in NETPERF.items()}
    recv = {s: v[2:] for s, v in NETPERF.items()}
    np_names = [(f"send-{s:05d}", s) for s in sorted(NETPERF)]
    np_ran = rows_table("netperf-udp send: Hmean Mbit/s", np_, "Hmean-send-Mbit/s", send,
                        np_names, False)
    rows_table("netperf-udp recv: Hmean Mbit/s", np_, "Hmean-recv-Mbit/s", recv, np_names, False)
    print("git suite, fairsim's counters (mean over seeds): share of task time off its home "
          "node, moves across nodes")
    for side in ("before", "after"):
        print(f"  {side:<6} off-node {git[side]['off-node %'][0]:.2f}%   node moves/s "
              f"{git[side]['node moves/s'][0]:.2f}")
    print()

    comps, extra = [], []
    for name, (pb, pa) in GIT.items():
        (fb, sb), (fa, sa) = git["before"][name], git["after"][name]
        s_b, s_a = GIT["Elapsed stddev"]
        pse = {
            "Elapsed min": (s_b, s_a), "Elapsed max": (s_b, s_a),
            "Elapsed mean": (s_b / math.sqrt(GIT_ITER), s_a / math.sqrt(GIT_ITER)),
            "Elapsed stddev": (sd_se(s_b, GIT_ITER), sd_se(s_a, GIT_ITER)),
            "Elapsed coeffvar": (sd_se(pb, GIT_ITER), sd_se(pa, GIT_ITER)),
            "Elapsed": (s_b * math.sqrt(GIT_ITER), s_a * math.sqrt(GIT_ITER)),
        }.get(name, (None, None))
        pairs = None
        if name in git["before", "seeds"]:
            pairs = (git["before", "seeds"][name], git["after", "seeds"][name])
        group, rep = GIT_GROUPS.get(name, (None, False))
        comps.append(Comparison(f"git {name}", pb, pa, fb, fa, post_se=pse, fs_se=(sb, sa),
                                fs_seeds=pairs, group=group, group_rep=rep))
        if "before" in git612 and "after" in git612:
            b6, a6 = git612["before"][name][0], git612["after"][name][0]
            extra.append([f"{b6:.4g} -> {a6:.4g}"])
        else:
            extra.append(["-"])
    for name, (pb, pa) in AUTONUMA.items():
        group, rep = AUTONUMA_GROUPS.get(name, (None, False))
        comps.append(Comparison(name, pb, pa, why="" if name != "AutoNUMA cost %" else
                                "the NUMA rows: fairsim does not model automatic NUMA "
                                "balancing (no NUMA hinting faults or page migration)",
                                group=group, group_rep=rep))
        extra.append(["-"])
    for label, runs, ref, metric, post, names, ran in (
            ("hackbench Amean, gmean over groups", hb, hb612, "time-s", HACKBENCH, hb_names,
             hb_ran),
            ("netperf send Hmean, gmean over sizes", np_, np612, "Hmean-send-Mbit/s", send,
             np_names, np_ran)):
        keys = [k for k, _ in names if k in ran]
        labels = [l for k, l in names if k in ran]
        if not keys:
            comps.append(Comparison(label, 1.0, 1.0, why="no rows ran"))
            extra.append(["-"])
            continue
        pb = gmean([post[l][0] for l in labels])
        pa = gmean([post[l][1] for l in labels])
        f = table_gmean(runs, metric, keys)
        fb, sb = f.get("before", (None, None))
        fa, sa = f.get("after", (None, None))
        what = "all 15 groups" if len(keys) == len(HACKBENCH) else f"groups {labels}"
        if metric != "time-s":
            what = "all 9 sizes" if len(keys) == len(NETPERF) else f"sizes {labels}"
        pairs = (f.get(("before", "seeds"), {}), f.get(("after", "seeds"), {}))
        comps.append(Comparison(label, pb, pa, fb, fa, fs_se=(sb, sa), why=f"over {what}",
                                fs_seeds=pairs))
        r = table_gmean(ref, metric, keys)
        extra.append([f"{r['before'][0]:.4g} -> {r['after'][0]:.4g}"
                      if "before" in r and "after" in r else "-"])
    print_comparisons("seed 004 headline: the git suite (fairsim: forkbench, its seeds as the "
                      "posting's iterations, User/System/Elapsed summed over them), the "
                      "AutoNUMA counters,\nand the hackbench and netperf tables as one figure "
                      "each; --kernel 4.15", comps, NOISE_POSTING,
                      extra_heads=["6.12 LEGACY_FIND_IDLEST before -> after"], extra_cells=extra)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""experiments/eas: the table of `run`, from fairsim's --json files.

Usage: table.py WORKLOAD_DIR RUN_DIR [MACHINE]   (MACHINE names the table; rk3399 if absent)

For each workload, with EAS and without: the share of the tasks' time on big CPUs (and,
on a machine with three capacity classes such as gs101, on the middle class), how long a
growing task took to leave the LITTLE CPUs (the smallest capacity) once its utilization
stopped fitting there, fairsim's active energy (busy time at each OPP times its power),
and the cheapest active energy the same energy model allows for the same work.

The cheapest placement is computed here, independently of fairsim's code: for each
stretch of time in which every task's utilization u (rt-app's run / period, in units of
capacity 1024) is constant, every assignment of tasks to CPUs that keeps each CPU's
summed utilization within its capacity is costed with the energy model of the run's
--json (`cpufreq.policies[].opps`: performance, power): a policy runs at the lowest OPP
whose performance covers schedutil's request for its busiest CPU (1.25 x its
utilization, the top OPP if none does; OPPs marked inefficient are skipped when the
policy has any, as schedutil skips them), and its CPUs draw that OPP's power for
u / performance of the time, so the policy's active power is power / performance x the
sum of its CPUs' utilizations. The least of these powers times the stretch's length,
summed over stretches, is the figure.
"""
import itertools
import json
import sys
from pathlib import Path

WORKLOADS = ["one-small", "four-small", "two-big", "mix", "ramp-up", "ramp-down", "small-to-big"]
HEADROOM_NUM, HEADROOM_DEN = 5, 4  # schedutil's map_util_perf: util + util / 4


def phases_of(rtapp):
    """Per task, its phases as (utilization, seconds)."""
    tasks = {}
    for name, t in rtapp["tasks"].items():
        out = []
        for ph in t["phases"].values():
            period = ph["timer"]["period"]
            out.append((ph["run"] * 1024 / period, ph["loop"] * period / 1e6))
        tasks[name] = out
    return tasks


def stretches(tasks):
    """Stretches of constant utilization: (seconds, [u per task])."""
    bounds = set()
    for phases in tasks.values():
        t = 0.0
        for _, secs in phases:
            t += secs
            bounds.add(round(t, 9))
    edges = [0.0] + sorted(bounds)
    out = []
    for a, b in zip(edges, edges[1:]):
        mid = (a + b) / 2
        us = []
        for phases in tasks.values():
            t, u = 0.0, 0.0
            for util, secs in phases:
                if t <= mid < t + secs:
                    u = util
                t += secs
            us.append(u)
        out.append((b - a, us))
    return out


def cheapest_power_uw(us, cpus, policies):
    """The least active power (uW) of any placement of utilizations `us` on `cpus`."""
    best = None
    for placement in itertools.product(range(len(cpus)), repeat=len(us)):
        load = [0.0] * len(cpus)
        for u, c in zip(us, placement):
            load[c] += u
        if any(load[c] > cpus[c]["capacity"] for c in range(len(cpus))):
            continue
        power = 0.0
        for pol in policies:
            members = [c for c in range(len(cpus)) if cpus[c]["policy"] == pol["index"]]
            total = sum(load[c] for c in members)
            if total == 0:
                continue
            need = max(load[c] for c in members) * HEADROOM_NUM / HEADROOM_DEN
            opps = pol["opps"]
            skip = any(o["inefficient"] for o in opps)
            chosen = opps[-1]
            for o in opps:
                if o["performance"] >= need and not (skip and o["inefficient"]):
                    chosen = o
                    break
            power += chosen["power_uw"] / chosen["performance"] * total
        if best is None or power < best:
            best = power
    return best


def machine_of(doc):
    """The CPUs (cpu, policy, capacity) and policies of the run. A CPU's capacity is its
    policy's top performance state: the energy model's performance at the highest
    frequency is the CPU's capacity (`em_init_performance`)."""
    cpus = []
    policies = []
    for i, pol in enumerate(doc["cpufreq"]["policies"]):
        policies.append({"index": i, "opps": pol["opps"]})
        cap = max(o["performance"] for o in pol["opps"])
        for entry in pol["cpus"]:
            cpus.append({"cpu": entry["cpu"], "policy": i, "capacity": cap})
    cpus.sort(key=lambda c: c["cpu"])
    return cpus, policies


def reach_big_ms(doc, big, little):
    """For a task whose utilization grows past a LITTLE CPU's fit (capacity `little`, the
    machine's smallest), ms from the first activation of that phase to its first
    activation on a CPU of `big` (every CPU above the smallest capacity)."""
    for wl in doc["workloads"]:
        for th in wl.get("results", {}).get("threads", []):
            acts = th["activations"]
            for i, a in enumerate(acts):
                u = a["c_duration_us"] * 1024 / a["c_period_us"]
                prev = acts[i - 1]["c_duration_us"] * 1024 / acts[i - 1]["c_period_us"] if i else 0
                if u * 1280 >= little * 1024 and prev * 1280 < little * 1024 and i > 0:
                    for b in acts[i:]:
                        if b["cpu"] in big:
                            return (b["start_us"] - a["start_us"]) / 1000
                    return None
    return None


def main():
    here, out = Path(sys.argv[1]), Path(sys.argv[2])
    machine = sys.argv[3] if len(sys.argv) > 3 else "rk3399"
    rows = []
    three_classes = False
    for w in WORKLOADS:
        rtapp = json.loads((here / f"{w}.json").read_text())
        tasks = phases_of(rtapp)
        for eas in (1, 0):
            doc = json.loads((out / f"{w}-{eas}.json").read_text())
            cpus, policies = machine_of(doc)
            classes = sorted({c["capacity"] for c in cpus})
            # A machine with a middle class (gs101) gets a column for it; rk3399's two
            # classes keep the table as it was.
            three_classes = len(classes) > 2
            little = classes[0]
            mid = set(classes[1:-1])
            above_little = {c["cpu"] for c in cpus if c["capacity"] > little}
            total = sum(ns for t in doc["tasks"] for _, ns in t.get("capacity_ns", []))
            on_big = sum(ns for t in doc["tasks"] for cap, ns in t.get("capacity_ns", []) if cap == 1024)
            on_mid = sum(ns for t in doc["tasks"] for cap, ns in t.get("capacity_ns", []) if cap in mid)
            energy_mj = doc["cpufreq"]["energy_uj"] / 1000
            cheapest_mj = sum(
                secs * cheapest_power_uw(us, cpus, policies) for secs, us in stretches(tasks)
            ) / 1000
            reach = reach_big_ms(doc, above_little, little)
            eas_doc = doc["cpufreq"]["eas"]
            rows.append((w, "on" if eas else "off", 100 * on_mid / max(total, 1),
                         100 * on_big / max(total, 1), reach, energy_mj, cheapest_mj,
                         eas_doc["feec_placed"],
                         100 * eas_doc["overutilized_ns"] / doc["elapsed_ns"]))
    print(f"EAS on {machine}, Linux 6.12.117, schedutil, 2 s per workload; energy is active energy")
    print("(busy time x OPP power); 'cheapest' is the least the same energy model allows for the")
    print("same work (computed by table.py from the tasks' utilizations, see its docstring).")
    if three_classes:
        print("'on mid' and 'on big' are the shares of the tasks' time on the middle class and on")
        print("the capacity-1024 class; 'off LITTLE ms' is how long a growing task took to leave")
        print("the smallest class once it no longer fit there.")
    print()
    mid_head = f" {'on mid':>7}" if three_classes else ""
    reach_head, rw = ("off LITTLE ms", 13) if three_classes else ("to big ms", 9)
    print(f"{'workload':<13} {'EAS':<4}{mid_head} {'on big':>7} {reach_head:>{rw}} {'energy mJ':>10} "
          f"{'cheapest mJ':>12} {'x cheapest':>10} {'EAS wakeups':>11} {'overutil':>8}")
    for w, eas, mid, big, reach, e, c, placed, ou in rows:
        r = "-" if reach is None else f"{reach:.1f}"
        mid_col = f" {mid:>6.1f}%" if three_classes else ""
        print(f"{w:<13} {eas:<4}{mid_col} {big:>6.1f}% {r:>{rw}} {e:>10.1f} {c:>12.1f} {e / c:>10.2f} "
              f"{placed:>11} {ou:>7.1f}%")


if __name__ == "__main__":
    main()
